//! `make bench-cycle`: one user's consolidation cycle (detect + plan, the
//! pure part; no store I/O) at 1k, 10k and 100k memories, each size in a
//! fresh process so its peak RSS is its own. Then the pair search's recall
//! against exact all-pairs search on the 10k set.
//!
//! The memories are synthetic but shaped like real ones: readable templated
//! sentences across topics (some naming databases and stating changes, so
//! the contradiction and supersession paths work), a mix of kinds, ages over
//! six months and skewed read counts. Their vectors are precomputed from a
//! seeded generator with the geometry all-MiniLM-L6-v2 gives real memories
//! (unrelated ≈ 0.05, same topic ≈ 0.3, paraphrases 0.75–0.95, a share of
//! exact repeats), because embedding 100k sentences would measure the model,
//! not the cycle.

mod common;

use std::process::Command;
use std::time::Instant;

use engram::config::ConsolidationConfig;
use engram::cycle::{CycleRequest, CycleSettings, plan_cycle};
use engram::detect::{Floor, PairSearch, Prepared, Snapshot, similar_pairs};
use engram::event::{RunMode, TriggerReason};
use engram::model::{Memory, MemoryKind, MemoryStatus};
use engram::plan::RuleSet;
use engram::salience::{SalienceParams, SalienceState};
use engram::text::content_hash;

const DIM: usize = 384;
const DAY: i64 = 86_400_000;
const NOW: i64 = 1_800_000_000_000;
const SIZES: [usize; 3] = [1_000, 10_000, 100_000];

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .and_then(|v| v.parse::<usize>().ok())
    };
    if let Some(n) = arg("--cycle") {
        return cycle_child(n);
    }
    if let Some(n) = arg("--stages") {
        return stages_child(n);
    }
    if let Some(n) = arg("--recall") {
        return recall_child(n);
    }
    if !common::started_by_cargo_bench() {
        return;
    }
    let exe = std::env::current_exe().expect("own executable");
    let run = |flag: &str, n: usize| {
        let output = Command::new(&exe)
            .args([flag, &n.to_string()])
            .output()
            .expect("run the benchmark child");
        if !output.status.success() {
            panic!(
                "{flag} {n} failed: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        String::from_utf8_lossy(&output.stdout)
            .trim_end()
            .to_owned()
    };
    println!(
        "consolidation cycle benchmark (detect + plan for one user), {} cores",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    println!();
    println!(
        "{:>9} | {:>9} | {:>11} | {:>11} | {:>6} | {:>9} | {:>5} | {:>8} | {:>7} | {:>7} | {:>8}",
        "memories",
        "cycle (s)",
        "of it pairs",
        "close pairs",
        "merges",
        "supersede",
        "flags",
        "patterns",
        "archive",
        "promote",
        "peak MiB"
    );
    println!("{}", "-".repeat(117));
    for n in SIZES {
        println!("{}", run("--cycle", n));
    }
    println!();
    println!("pair search at the duplicate threshold (0.78) against exact all-pairs search:");
    println!("{}", run("--recall", 10_000));
}

/// A tiny deterministic generator (SplitMix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }

    /// A random direction (uniform noise per coordinate, normalised).
    fn direction(&mut self) -> Vec<f32> {
        normalised((0..DIM).map(|_| (self.unit() - 0.5) as f32).collect())
    }
}

fn normalised(v: Vec<f32>) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.into_iter().map(|x| x / norm).collect()
}

fn mix(parts: &[(f32, &[f32])]) -> Vec<f32> {
    let mut out = vec![0f32; DIM];
    for (weight, v) in parts {
        for (o, x) in out.iter_mut().zip(v.iter()) {
            *o += weight * x;
        }
    }
    normalised(out)
}

const SUBJECTS: &[&str] = &[
    "The billing service",
    "The search team",
    "Project atlas",
    "The mobile app",
    "The data pipeline",
    "The onboarding flow",
    "The auth gateway",
    "The reporting job",
];
const FACTS: &[&str] = &[
    "stores its sessions in",
    "keeps audit logs in",
    "reads feature flags from",
    "caches hot queries in",
    "writes nightly exports to",
];
const STORES: &[&str] = &[
    "PostgreSQL",
    "MySQL",
    "Redis",
    "SQLite",
    "MongoDB",
    "Cassandra",
    "DynamoDB",
];
const HABITS: &[&str] = &[
    "Ran the full test suite before committing",
    "Reviewed the deploy checklist before shipping",
    "Wrote a short summary after the planning meeting",
    "Checked the error budget before the release",
];
const NOTES: &[&str] = &[
    "prefers short status updates",
    "asked for the latency numbers",
    "wants reviews within a day",
    "is on call this week",
    "moved the retro to Thursday",
];

/// One user's memories: `n` of them, seeded by `n`.
fn memories(n: usize) -> Vec<Memory> {
    let mut rng = Rng(n as u64);
    let common = rng.direction();
    let topics: Vec<Vec<f32>> = (0..(n / 25).max(4)).map(|_| rng.direction()).collect();
    let habits: Vec<Vec<f32>> = HABITS.iter().map(|_| rng.direction()).collect();
    let mut out: Vec<Memory> = Vec::with_capacity(n);
    for k in 0..n {
        let created_at = NOW - (rng.unit() * 180.0 * DAY as f64) as i64;
        let topic = rng.below(topics.len());
        let roll = rng.unit();
        let (content, embedding, kind) = if roll < 0.05 && !out.is_empty() {
            // A paraphrase of an earlier memory, or (a fifth of them) a repeat.
            let base = &out[rng.below(out.len())];
            let base_vector = base.embedding.clone().unwrap_or_else(|| rng.direction());
            let share = rng.unit();
            if share < 0.2 {
                (base.content.clone(), base_vector, base.kind)
            } else if share < 0.3 {
                // A denial of an earlier statement: close, but a contradiction.
                let noise = rng.direction();
                let text = format!("It is not true that {}", base.content.to_lowercase());
                (text, mix(&[(1.0, &base_vector), (0.4, &noise)]), base.kind)
            } else {
                let target = 0.75 + 0.2 * rng.unit();
                let noise = rng.direction();
                // cos(base, mix) ≈ target for unit base and orthogonal noise.
                let w = ((1.0 - target * target).sqrt() / target) as f32;
                let text = format!("In other words: {}", base.content.to_lowercase());
                (text, mix(&[(1.0, &base_vector), (w, &noise)]), base.kind)
            }
        } else {
            let noise = rng.direction();
            let mut vector = mix(&[(0.25, &common), (0.55, &topics[topic]), (0.8, &noise)]);
            let (text, kind) = if roll < 0.30 {
                // Episodes of one habit are worded alike: pairwise ≈ 0.5.
                let habit = topic % HABITS.len();
                vector = mix(&[(0.25, &common), (0.65, &habits[habit]), (0.7, &noise)]);
                (
                    format!("{} on ticket {k}.", HABITS[habit]),
                    MemoryKind::Episodic,
                )
            } else if roll < 0.40 {
                let note = rng.pick(NOTES);
                (
                    format!("Teammate {} {note}.", topic % 97),
                    MemoryKind::Working,
                )
            } else if roll < 0.41 {
                let subject = SUBJECTS[topic % SUBJECTS.len()];
                let store = rng.pick(STORES);
                (
                    format!("{subject} now uses {store} (change {k})."),
                    MemoryKind::Semantic,
                )
            } else {
                // A third of the topics name a data store; the rest do not.
                let subject = SUBJECTS[topic % SUBJECTS.len()];
                let fact = FACTS[topic % FACTS.len()];
                let place = match topic % 3 {
                    0 => STORES[topic % STORES.len()],
                    1 => "the shared drive",
                    _ => "the team wiki",
                };
                (
                    format!("{subject} {fact} {place}, item {k}."),
                    MemoryKind::Semantic,
                )
            };
            (text, vector, kind)
        };
        let mut salience = SalienceState::new(created_at);
        // Skewed reads: most memories are read rarely, a few constantly.
        let reads = (rng.unit().powi(4) * 40.0) as usize;
        for _ in 0..reads {
            let at = created_at + (rng.unit() * (NOW - created_at) as f64) as i64;
            salience.record_access(at);
        }
        out.push(Memory {
            user_id: "bench-user".into(),
            id: format!("m{k:06}"),
            kind,
            category: None,
            tags: vec![format!("topic-{}", topic % 50)],
            content_hash: content_hash(&content),
            content,
            importance: (rng.unit() * 100.0).round() / 100.0,
            source: None,
            embedding: Some(embedding),
            status: MemoryStatus::Active,
            salience,
            merged_from: Vec::new(),
            derived_from: Vec::new(),
            last_run_id: None,
            updated_at: None,
        });
    }
    out.sort_by(|a, b| (a.created_at(), &a.id).cmp(&(b.created_at(), &b.id)));
    out
}

fn snapshot(n: usize) -> Snapshot {
    Snapshot {
        user_id: "bench-user".into(),
        memories: memories(n),
        links: Vec::new(),
    }
}

fn settings() -> CycleSettings {
    let mut consolidation = ConsolidationConfig::default();
    // Keep the thresholds of the gentle tier whatever the synthetic size.
    consolidation.budget.token_budget = u64::MAX / 4;
    CycleSettings::new(
        consolidation,
        SalienceParams::default(),
        RuleSet::default_rules(),
    )
}

fn cycle_child(n: usize) {
    let snapshot = snapshot(n);
    let settings = settings();
    let request = CycleRequest {
        user_id: "bench-user".into(),
        run_id: "bench".into(),
        trigger: TriggerReason::Manual,
        mode: RunMode::DryRun,
        now: NOW,
    };
    let detect_settings = settings.detect_settings(engram::plan::Tier::Gentle);
    let started = Instant::now();
    let prepared = Prepared::new(&snapshot);
    let close = prepared.close_pairs(&detect_settings, &settings.lexicon);
    let detect_secs = started.elapsed().as_secs_f64();
    let pairs = close.len();
    drop(prepared);
    let started = Instant::now();
    let plan = plan_cycle(&request, &snapshot, &settings);
    let cycle_secs = started.elapsed().as_secs_f64();
    // A change to the search or the rules that claims the same decisions
    // shows the same digests: every close pair with its similarity's bits,
    // the plan's actions, and the whole plan (with every memory and link it
    // changes).
    let close: Vec<(usize, usize, u64)> = close
        .iter()
        .map(|p| (p.first, p.second, p.similarity.to_bits()))
        .collect();
    let digest = |bytes: Vec<u8>| engram::text::sha256_hex(&bytes)[..16].to_owned();
    eprintln!(
        "{n}: close pairs {}, actions {}, whole plan {}",
        digest(format!("{close:?}").into_bytes()),
        digest(serde_json::to_vec(&plan.actions).unwrap_or_default()),
        digest(serde_json::to_vec(&plan).unwrap_or_default())
    );
    let count = |t: &str| {
        plan.actions
            .iter()
            .filter(|a| a.action_type.as_str() == t)
            .count()
    };
    println!(
        "{n:>9} | {cycle_secs:>9.3} | {detect_secs:>11.3} | {pairs:>11} | {:>6} | {:>9} | {:>5} | {:>8} | {:>7} | {:>7} | {:>8.0}",
        count("merge"),
        count("supersede"),
        count("flag_contradiction"),
        count("extract_pattern"),
        count("archive"),
        count("promote") + count("split"),
        common::peak_rss_mib()
    );
}

/// Time per detector, for finding where a cycle's time goes.
fn stages_child(n: usize) {
    use engram::detect::{contradictions, duplicates, patterns, stale};
    let snapshot = snapshot(n);
    let settings = settings();
    let detect_settings = settings.detect_settings(engram::plan::Tier::Gentle);
    let lexicon = &settings.lexicon;
    let rules = RuleSet::default_rules();
    let mut clock = Instant::now();
    let mut lap = |name: &str| {
        eprintln!("{name:<16} {:>8.3} s", clock.elapsed().as_secs_f64());
        clock = Instant::now();
    };
    let prepared = Prepared::new(&snapshot);
    lap("prepare");
    let close = prepared.close_pairs(&detect_settings, lexicon);
    lap("close pairs");
    let found = contradictions::detect(&prepared, &close, &detect_settings, lexicon);
    lap("contradictions");
    let dups = duplicates::detect(&prepared, &close, &detect_settings, &found, lexicon);
    lap("duplicates");
    let pats = patterns::detect(&snapshot, &prepared, NOW, &detect_settings, lexicon);
    lap("patterns");
    let stale = stale::detect(
        &prepared,
        &close,
        &snapshot.links,
        NOW,
        &detect_settings,
        lexicon,
    );
    lap("stale");
    let all = engram::detect::detect(&snapshot, NOW, &detect_settings, lexicon);
    lap("detect (all)");
    let request = engram::plan::PlanRequest {
        run_id: "bench",
        now: NOW,
        tier: engram::plan::Tier::Gentle,
        settings: &detect_settings,
        rules: &rules,
    };
    let planned = engram::plan::plan(&snapshot, &all, &request);
    lap("plan");
    eprintln!(
        "{} contradictions, {} duplicate clusters, {} patterns, {} stale ({} carried), {} actions",
        found.len(),
        dups.len(),
        pats.len(),
        all.stale.len(),
        stale.iter().filter(|s| !s.covered_by.is_empty()).count(),
        planned.actions.len()
    );
}

fn recall_child(n: usize) {
    let snapshot = snapshot(n);
    let prepared = Prepared::new(&snapshot);
    let all: Vec<usize> = (0..prepared.items.len()).collect();
    let defaults = ConsolidationConfig::default();
    let threshold = defaults.detect.duplicate_threshold;
    let started = Instant::now();
    let exact = similar_pairs(
        &prepared,
        &all,
        &Floor::uniform(threshold),
        PairSearch {
            exact_pairs_up_to: usize::MAX,
            pair_probes: 1,
        },
    );
    let exact_secs = started.elapsed().as_secs_f64();
    let mut lines = vec![format!(
        "  exact all-pairs: {} pairs in {exact_secs:.3} s",
        exact.len()
    )];
    for probes in [4, 8, 12, 16, 24] {
        let started = Instant::now();
        let blocked = similar_pairs(
            &prepared,
            &all,
            &Floor::uniform(threshold),
            PairSearch {
                exact_pairs_up_to: 0,
                pair_probes: probes,
            },
        );
        let secs = started.elapsed().as_secs_f64();
        let found = exact.iter().filter(|p| blocked.contains(p)).count();
        let default = if probes == defaults.detect.pair_probes {
            " (default)"
        } else {
            ""
        };
        lines.push(format!(
            "  blocked, {probes:>2} probes{default:<10}: recall {:.4} ({found}/{}) in {secs:.3} s",
            found as f64 / exact.len().max(1) as f64,
            exact.len()
        ));
    }
    println!("{}", lines.join("\n"));
}
