//! `make eval`: the quality of consolidation decisions on labelled public
//! data, replayed through the real `engram run` (real model, default rules).
//!
//! * SICK (train + trial): each sentence pair is one user with two semantic
//!   memories a minute apart and an executed consolidation request.
//!   Contradiction precision and recall against the CONTRADICTION label, and
//!   how many contradicting pairs were merged instead.
//! * MRPC (train): the same replay. Merge precision and recall against the
//!   paraphrase label, and lossy merges: the canonical lacks a number, a name
//!   or another content word of a memory merged into it.
//! * SICK and MRPC again with each pair the other way round (the second
//!   sentence the older memory, in `out/eval/<set>-reversed/`): which memory
//!   arrives first is no part of what the texts say.
//! * LoCoMo (dev): one user per speaker per conversation, each observation an
//!   episodic memory at its session's date, replayed without and with reads,
//!   and once more as semantic memories; evidence recall@10 before and after,
//!   the active set, patterns, and every contradiction flagged with both
//!   texts (see `eval/locomo.rs`).
//!
//! * Memory pairs (`memory-pairs-dev.tsv`): short user facts written in the
//!   style platforms extract, the older first; per category (`update`: the
//!   newer must flag or supersede the older; `coexist`: both kept;
//!   `duplicate`: merged) what was caught, missed and done wrong, and
//!   every miss with the rule trace of its decision.
//!
//! The data is read from `../shared/data` (or `ENGRAM_EVAL_DATA`), never
//! copied into the repository. `EVAL_ONLY=sick,mrpc,locomo,pairs` picks
//! data sets.
//! Every decision is written to `out/eval/<set>/decisions.tsv` for reading.
//! This is a benchmark, not a test: it prints figures and fails only when a
//! replay cannot run.

mod common;
#[path = "eval/locomo.rs"]
mod locomo;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use chrono::{DateTime, NaiveDateTime, TimeZone, Utc};
use engram::detect::WordNet;
use serde_json::{Value, json};

const MINUTE_MS: i64 = 60_000;

fn main() {
    if !common::started_by_cargo_bench() {
        // `cargo test --all-targets` runs this: check the lossy checker.
        names_are_checked_whole();
        return;
    }
    let data = std::env::var_os("ENGRAM_EVAL_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data"));
    let only: Option<BTreeSet<String>> = std::env::var("EVAL_ONLY")
        .ok()
        .map(|v| v.split(',').map(|s| s.trim().to_owned()).collect());
    let wanted = |name: &str| only.as_ref().is_none_or(|o| o.contains(name));
    let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("out/eval");
    let wordnet = std::sync::Arc::new(
        WordNet::load(&common::cache().join("wordnet")).expect("WordNet (make models)"),
    );
    println!(
        "consolidation quality on {} (real model, default rules)",
        data.display()
    );
    // Each pair also the other way round: which memory came first is the
    // platform's accident, so a decision that hangs on it would not carry.
    for order in [Order::AsGiven, Order::Reversed] {
        if wanted("sick") {
            sick(&data, &out.join(order.dir("sick")), &wordnet, order);
        }
        if wanted("mrpc") {
            mrpc(&data, &out.join(order.dir("mrpc")), &wordnet, order);
        }
    }
    if wanted("locomo") {
        locomo::locomo(&data, &out.join("locomo"), &wordnet);
    }
    if wanted("pairs") {
        memory_pairs(&data, &out.join("pairs"));
    }
}

/// What a category of memory pairs expects of the older and newer fact.
fn expected(category: &str) -> Option<&'static str> {
    match category {
        "update" => Some("flagged"),
        "coexist" => Some("kept"),
        "duplicate" => Some("merged"),
        _ => None,
    }
}

fn memory_pairs(data: &Path, out: &Path) {
    let Ok(text) = std::fs::read_to_string(data.join("memory-pairs-dev.tsv")) else {
        println!(
            "\nmemory pairs: no memory-pairs-dev.tsv in {}",
            data.display()
        );
        return;
    };
    let pairs: Vec<(String, String, String)> = text
        .lines()
        .filter(|line| !line.starts_with('#'))
        .filter_map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            (fields.len() >= 3).then(|| {
                (
                    fields[0].trim().to_owned(),
                    fields[1].trim().to_owned(),
                    fields[2].trim().to_owned(),
                )
            })
        })
        .collect();
    let run = replay(out, &pair_events("pairs", &pairs), &[]);
    let flagged = run.flagged();
    let merges = run.merges();
    // (category, decision) -> pairs
    let mut counts: BTreeMap<(String, &str), usize> = BTreeMap::new();
    let mut misses = Vec::new();
    let mut decisions = String::from("pair\texpected\tdecision\tolder\tnewer\texplanation\n");
    for (id, older, newer) in &pairs {
        let category = id.split('-').next().unwrap_or_default().to_owned();
        let Some(wanted) = expected(&category) else {
            continue;
        };
        let user = format!("pairs-{id}");
        let decision = decision(&flagged, &merges, &user);
        let explanation = flagged
            .get(user.as_str())
            .map(|events| {
                let resolution = events[0]["resolution"].as_str().unwrap_or_default();
                let why = events[0]["explanation"].as_str().unwrap_or_default();
                format!("{resolution}: {why}")
            })
            .unwrap_or_default();
        let verdict = if decision == wanted {
            "caught"
        } else if decision == "kept" {
            "missed"
        } else {
            "wrong"
        };
        *counts.entry((category.clone(), verdict)).or_default() += 1;
        *counts.entry((category.clone(), "all")).or_default() += 1;
        if verdict != "caught" {
            misses.push(format!("{id} ({verdict}, {decision}): {older} / {newer}"));
        }
        let _ = writeln!(
            decisions,
            "{id}\t{wanted}\t{decision}\t{older}\t{newer}\t{explanation}"
        );
    }
    std::fs::write(out.join("decisions.tsv"), decisions).expect("write decisions");
    let count = |category: &str, verdict: &str| {
        counts
            .get(&(category.to_owned(), verdict))
            .copied()
            .unwrap_or(0)
    };
    println!();
    println!(
        "memory pairs: {} pairs, replay {:.1} s (update: flag or supersede; coexist: keep \
         both; duplicate: merge)",
        pairs.len(),
        run.seconds
    );
    println!("  | category | pairs | caught | missed | wrong |");
    println!("  |---|---|---|---|---|");
    for category in ["update", "coexist", "duplicate"] {
        println!(
            "  | {category} | {} | {} | {} | {} |",
            count(category, "all"),
            count(category, "caught"),
            count(category, "missed"),
            count(category, "wrong")
        );
    }
    for miss in &misses {
        println!("    {miss}");
    }
    println!(
        "  the rule trace of a miss: engram similarity \"OLDER\" \"NEWER\"; every decision in {}",
        out.join("decisions.tsv").display()
    );
}

/// Which sentence of a pair becomes the older memory.
#[derive(Clone, Copy, PartialEq)]
enum Order {
    /// The data's first sentence first.
    AsGiven,
    /// The second sentence first.
    Reversed,
}

impl Order {
    fn dir(self, set: &str) -> String {
        match self {
            Order::AsGiven => set.to_owned(),
            Order::Reversed => format!("{set}-reversed"),
        }
    }

    fn heading(self) -> &'static str {
        match self {
            Order::AsGiven => "",
            Order::Reversed => ", each pair in the other order (second sentence first)",
        }
    }

    /// The pair as this order replays it.
    fn arrange(self, first: &str, second: &str) -> (String, String) {
        let (a, b) = match self {
            Order::AsGiven => (first, second),
            Order::Reversed => (second, first),
        };
        (a.trim().to_owned(), b.trim().to_owned())
    }
}

/// What a replay left behind.
struct Replay {
    outputs: Vec<Value>,
    /// `engram dump` of the final state.
    users: BTreeMap<String, Value>,
    seconds: f64,
}

impl Replay {
    fn flagged(&self) -> BTreeMap<&str, Vec<&Value>> {
        let mut by_user: BTreeMap<&str, Vec<&Value>> = BTreeMap::new();
        for event in &self.outputs {
            if event["type"] == "contradiction.detected" {
                by_user
                    .entry(event["user_id"].as_str().unwrap_or_default())
                    .or_default()
                    .push(event);
            }
        }
        by_user
    }

    /// Per user: each canonical memory that absorbed others, with them.
    fn merges(&self) -> BTreeMap<&str, Vec<(&Value, Vec<&Value>)>> {
        let mut by_user = BTreeMap::new();
        for (user, state) in &self.users {
            let memories: BTreeMap<&str, &Value> = state["memories"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|m| (m["id"].as_str().unwrap_or_default(), m))
                .collect();
            let mut merges = Vec::new();
            for memory in memories.values() {
                let absorbed: Vec<&Value> = memory["merged_from"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|id| memories.get(id.as_str().unwrap_or_default()).copied())
                    .collect();
                if !absorbed.is_empty() {
                    merges.push((*memory, absorbed));
                }
            }
            if !merges.is_empty() {
                by_user.insert(user.as_str(), merges);
            }
        }
        by_user
    }

    fn memory_text<'a>(&'a self, user: &str, id: &str) -> &'a str {
        self.users
            .get(user)
            .and_then(|s| s["memories"].as_array())
            .into_iter()
            .flatten()
            .find(|m| m["id"] == id)
            .and_then(|m| m["content"].as_str())
            .unwrap_or("?")
    }
}

/// Runs `engram run` on `events` in a fresh state under `dir`, with extra
/// settings as environment variables.
fn replay(dir: &Path, events: &[Value], settings: &[(&str, String)]) -> Replay {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).expect("eval output directory");
    let input = dir.join("input.jsonl");
    let mut lines = String::new();
    for event in events {
        lines.push_str(&event.to_string());
        lines.push('\n');
    }
    std::fs::write(&input, lines).expect("write replay input");
    let state = dir.join("state");
    let outputs = dir.join("outputs.jsonl");
    // `ENGRAM_EVAL_BIN` measures another build (say, the last release) on
    // the same replay.
    let exe =
        std::env::var("ENGRAM_EVAL_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_engram").into());
    let started = std::time::Instant::now();
    let run = Command::new(&exe)
        .arg("run")
        .arg("--input")
        .arg(&input)
        .arg("--output")
        .arg(&outputs)
        .arg("--state")
        .arg(&state)
        .env("ENGRAM_LOG_LEVEL", "warn")
        .envs(settings.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .expect("start engram run");
    assert!(
        run.status.success(),
        "engram run failed: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let seconds = started.elapsed().as_secs_f64();
    let dump = Command::new(&exe)
        .arg("dump")
        .arg("--state")
        .arg(&state)
        .output()
        .expect("start engram dump");
    assert!(dump.status.success(), "engram dump failed");
    let dump: Value = serde_json::from_slice(&dump.stdout).expect("dump is JSON");
    let users = dump["users"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|u| {
            (
                u["user_id"].as_str().unwrap_or_default().to_owned(),
                u.clone(),
            )
        })
        .collect();
    let outputs = std::fs::read_to_string(&outputs)
        .expect("read outputs")
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    Replay {
        outputs,
        users,
        seconds,
    }
}

fn iso(millis: i64) -> String {
    Utc.timestamp_millis_opt(millis)
        .single()
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
        .unwrap_or_default()
}

fn created(user: &str, id: &str, kind: &str, content: &str, at: i64) -> Value {
    json!({
        "type": "memory.created",
        "event_id": format!("{user}/{id}/created"),
        "user_id": user,
        "memory_id": id,
        "kind": kind,
        "content": content,
        "created_at": iso(at),
    })
}

fn requested(user: &str, at: i64) -> Value {
    json!({
        "type": "consolidation.requested",
        "event_id": format!("{user}/requested"),
        "user_id": user,
        "requested_at": iso(at),
        "execute": true,
        "reason": "eval",
    })
}

/// The replay of sentence pairs: one user per pair, `a` then `b` a minute
/// later, then an executed request.
fn pair_events(prefix: &str, pairs: &[(String, String, String)]) -> Vec<Value> {
    let start = DateTime::parse_from_rfc3339("2026-01-05T09:00:00Z")
        .map(|t| t.timestamp_millis())
        .unwrap_or_default();
    let mut events = Vec::new();
    for (id, a, b) in pairs {
        let user = format!("{prefix}-{id}");
        events.push(created(&user, "a", "semantic", a, start));
        events.push(created(&user, "b", "semantic", b, start + MINUTE_MS));
        events.push(requested(&user, start + 2 * MINUTE_MS));
    }
    events
}

/// What became of a pair's user: a contradiction flagged, a merge, or both
/// memories kept.
fn decision<F, M>(
    flagged: &BTreeMap<&str, F>,
    merges: &BTreeMap<&str, M>,
    user: &str,
) -> &'static str {
    if flagged.contains_key(user) {
        "flagged"
    } else if merges.contains_key(user) {
        "merged"
    } else {
        "kept"
    }
}

/// The words a user's lossy merge dropped, if it had one.
fn lost_words(lossy: &[(&str, Vec<String>)], user: &str) -> Option<String> {
    lossy
        .iter()
        .find(|(u, _)| *u == user)
        .map(|(_, words)| words.join(" "))
}

fn ratio(part: usize, whole: usize) -> String {
    if whole == 0 {
        "n/a".into()
    } else {
        format!("{:.3}", part as f64 / whole as f64)
    }
}

fn sick(data: &Path, out: &Path, wordnet: &WordNet, order: Order) {
    let mut pairs = Vec::new();
    let mut labels = BTreeMap::new();
    for file in ["SICK_train.txt", "SICK_trial.txt"] {
        let text = std::fs::read_to_string(data.join(file)).expect("SICK data");
        for line in text.lines() {
            let fields: Vec<&str> = line.split('\t').collect();
            if fields.len() < 5 || fields[0] == "pair_ID" {
                continue;
            }
            let id = fields[0].trim().to_owned();
            labels.insert(id.clone(), fields[4].trim().to_owned());
            let (a, b) = order.arrange(fields[1], fields[2]);
            pairs.push((id, a, b));
        }
    }
    let run = replay(out, &pair_events("sick", &pairs), &[]);
    let flagged = run.flagged();
    let merges = run.merges();
    let lossy = lossy_merges(&merges, wordnet);
    let mut counts: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    let mut decisions =
        String::from("pair\tlabel\tdecision\tsentence_a\tsentence_b\texplanation_or_lost_words\n");
    for (id, a, b) in &pairs {
        let user = format!("sick-{id}");
        let label = labels[id].as_str();
        let explanation = flagged
            .get(user.as_str())
            .map(|events| events[0]["explanation"].as_str().unwrap_or_default());
        let decision = decision(&flagged, &merges, &user);
        *counts.entry((label, decision)).or_default() += 1;
        *counts.entry((label, "all")).or_default() += 1;
        let lost = lost_words(&lossy, &user);
        let _ = writeln!(
            decisions,
            "{id}\t{label}\t{decision}\t{a}\t{b}\t{}",
            explanation.map(str::to_owned).or(lost).unwrap_or_default()
        );
    }
    std::fs::write(out.join("decisions.tsv"), decisions).expect("write decisions");
    let count = |label: &str, decision: &str| counts.get(&(label, decision)).copied().unwrap_or(0);
    let flagged_all: usize = ["ENTAILMENT", "NEUTRAL", "CONTRADICTION"]
        .iter()
        .map(|l| count(l, "flagged"))
        .sum();
    let true_flags = count("CONTRADICTION", "flagged");
    println!();
    println!(
        "SICK{}: {} pairs ({} contradictions), replay {:.1} s",
        order.heading(),
        pairs.len(),
        count("CONTRADICTION", "all"),
        run.seconds
    );
    println!("  | label | pairs | flagged | merged | kept |");
    println!("  |---|---|---|---|---|");
    for label in ["ENTAILMENT", "NEUTRAL", "CONTRADICTION"] {
        println!(
            "  | {label} | {} | {} | {} | {} |",
            count(label, "all"),
            count(label, "flagged"),
            count(label, "merged"),
            count(label, "kept")
        );
    }
    println!(
        "  contradiction precision {} recall {}; contradicting pairs merged {}; lossy merges {}",
        ratio(true_flags, flagged_all),
        ratio(true_flags, count("CONTRADICTION", "all")),
        count("CONTRADICTION", "merged"),
        lossy.len()
    );
    for (user, words) in lossy.iter().take(3) {
        println!("    lossy {user}: canonical lacks {}", words.join(", "));
    }
}

fn mrpc(data: &Path, out: &Path, wordnet: &WordNet, order: Order) {
    let text = std::fs::read_to_string(data.join("msr_paraphrase_train.txt")).expect("MRPC data");
    let mut pairs = Vec::new();
    let mut paraphrase = BTreeMap::new();
    for (n, line) in text.trim_start_matches('\u{feff}').lines().enumerate() {
        let fields: Vec<&str> = line.split('\t').collect();
        if n == 0 || fields.len() < 5 {
            continue;
        }
        let id = n.to_string();
        paraphrase.insert(id.clone(), fields[0].trim() == "1");
        let (a, b) = order.arrange(fields[3], fields[4]);
        pairs.push((id, a, b));
    }
    let positives = paraphrase.values().filter(|p| **p).count();
    println!();
    println!(
        "MRPC{}: {} pairs ({positives} paraphrases)",
        order.heading(),
        pairs.len()
    );
    println!(
        "  | duplicate threshold | merged | precision | recall | lossy merges | \
         non-paraphrases merged losslessly | contradictions flagged | replay s |"
    );
    println!("  |---|---|---|---|---|---|---|---|");
    // The default first; `EVAL_DUPLICATE_THRESHOLDS` adds others to compare.
    let mut thresholds = vec![None];
    if let Ok(list) = std::env::var("EVAL_DUPLICATE_THRESHOLDS")
        && order == Order::AsGiven
    {
        thresholds.extend(
            list.split(',')
                .filter_map(|t| t.trim().parse::<f64>().ok())
                .map(Some),
        );
    }
    for threshold in thresholds {
        let settings: Vec<(&str, String)> = threshold
            .map(|t| vec![("ENGRAM_CONSOLIDATION_DUPLICATE_THRESHOLD", t.to_string())])
            .unwrap_or_default();
        let dir = match threshold {
            None => out.to_path_buf(),
            Some(t) => out.with_file_name(format!("mrpc-{t}")),
        };
        let run = replay(&dir, &pair_events("mrpc", &pairs), &settings);
        let merges = run.merges();
        let lossy = lossy_merges(&merges, wordnet);
        let flagged = run.flagged();
        let mut merged = 0;
        let mut true_merges = 0;
        // A non-paraphrase merged without loss: one sentence plus a detail
        // merged into the detailed one.
        let mut lossless_false = 0;
        let mut decisions =
            String::from("pair\tparaphrase\tdecision\tsentence_a\tsentence_b\tlost\n");
        for (id, a, b) in &pairs {
            let user = format!("mrpc-{id}");
            let is_merged = merges.contains_key(user.as_str());
            let is_lossy = lossy.iter().any(|(u, _)| *u == user);
            if is_merged {
                merged += 1;
                if paraphrase[id] {
                    true_merges += 1;
                } else if !is_lossy {
                    lossless_false += 1;
                }
            }
            let decision = decision(&flagged, &merges, &user);
            let lost = lost_words(&lossy, &user).unwrap_or_default();
            let _ = writeln!(
                decisions,
                "{id}\t{}\t{decision}\t{a}\t{b}\t{lost}",
                paraphrase[id]
            );
        }
        std::fs::write(dir.join("decisions.tsv"), decisions).expect("write decisions");
        println!(
            "  | {} | {merged} | {} | {} | {} | {lossless_false} | {} | {:.1} |",
            threshold.map_or("default".to_owned(), |t| t.to_string()),
            ratio(true_merges, merged),
            ratio(true_merges, positives),
            lossy.len(),
            flagged.len(),
            run.seconds
        );
        for (user, words) in lossy.iter().take(3) {
            println!("    lossy {user}: canonical lacks {}", words.join(", "));
        }
    }
}

/// Merges whose canonical lacks a content word of a memory merged into it:
/// a number or name spelled differently (an ordinal in digits is carried
/// by its number: "11th" by "11"), or another word that is not the same
/// lemma or a WordNet synonym of one of the canonical's words.
fn lossy_merges<'a>(
    merges: &BTreeMap<&'a str, Vec<(&Value, Vec<&Value>)>>,
    wordnet: &WordNet,
) -> Vec<(&'a str, Vec<String>)> {
    let mut lossy = Vec::new();
    for (user, merged) in merges {
        for (canonical, absorbed) in merged {
            // Every word of the canonical may carry a merged one's ("told"
            // by "said"), not only its content words.
            let kept: Vec<(String, bool)> =
                engram::text::words(canonical["content"].as_str().unwrap_or_default())
                    .into_iter()
                    .map(|w| (w.to_lowercase(), false))
                    .collect();
            let mut lost = BTreeSet::new();
            for other in absorbed {
                let text = other["content"].as_str().unwrap_or_default();
                // Two words the canonical writes as one ("per cent" /
                // "percent") are carried by it.
                let words: Vec<String> = engram::text::words(text)
                    .iter()
                    .map(|w| w.to_lowercase())
                    .collect();
                let mut compounded: BTreeSet<&str> = words
                    .windows(2)
                    .filter(|w| kept.iter().any(|(k, _)| *k == format!("{}{}", w[0], w[1])))
                    .flat_map(|w| [w[0].as_str(), w[1].as_str()])
                    .collect();
                // A number in digits carries the same number spelled out,
                // and the other way round: "57" / "Fifty-seven".
                let kept_words: Vec<String> = kept.iter().map(|(k, _)| k.clone()).collect();
                let kept_numbers: BTreeSet<u32> = numbers(&kept_words)
                    .into_iter()
                    .map(|(value, _)| value)
                    .collect();
                for (value, at) in numbers(&words) {
                    if kept_numbers.contains(&value) {
                        compounded.extend(at.map(|k| words[k].as_str()));
                    }
                }
                for (word, literal) in content_words(text) {
                    if !compounded.contains(word.as_str())
                        && !carries(&kept, &word, literal, wordnet)
                    {
                        lost.insert(word);
                    }
                }
                let canonical_text = canonical["content"].as_str().unwrap_or_default();
                for (spelled, parts) in names_joined_by_of(text) {
                    if !name_carried(canonical_text, &parts) {
                        lost.insert(spelled.to_owned());
                    }
                }
            }
            if !lost.is_empty() {
                lossy.push((*user, lost.into_iter().collect()));
            }
        }
    }
    lossy
}

/// The numbers a text's words write, in digits or spelled out up to
/// ninety-nine ("57", "seven", "fifty seven"), each with its words.
fn numbers(words: &[String]) -> Vec<(u32, std::ops::Range<usize>)> {
    const UNITS: [&str; 20] = [
        "zero",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
    ];
    const TENS: [&str; 8] = [
        "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
    ];
    let unit = |w: &str| UNITS.iter().position(|u| *u == w);
    let mut found = Vec::new();
    let mut k = 0;
    while k < words.len() {
        let word = words[k].as_str();
        if let Ok(value) = word.parse::<u32>() {
            found.push((value, k..k + 1));
        } else if let Some(ten) = TENS.iter().position(|t| *t == word) {
            let tens = 20 + 10 * ten as u32;
            match words
                .get(k + 1)
                .and_then(|w| unit(w))
                .filter(|&u| (1..10).contains(&u))
            {
                Some(u) => {
                    found.push((tens + u as u32, k..k + 2));
                    k += 1;
                }
                None => found.push((tens, k..k + 1)),
            }
        } else if let Some(u) = unit(word) {
            found.push((u as u32, k..k + 1));
        }
        k += 1;
    }
    found
}

/// A common English stopword list (NLTK's, with contractions split as
/// engram splits them), independent of the detectors' own.
const FUNCTION_WORDS: &str = "i me my myself we our ours ourselves you your yours yourself \
    yourselves he him his himself she her hers herself it its itself they them their theirs \
    themselves what which who whom this that these those am is are was were be been being have \
    has had having do does did doing a an the and but if or because as until while of at by for \
    with about against between into through during before after above below to from up down in \
    out on off over under again further then once here there when where why how all any both \
    each few more most other some such no nor not only own same so than too very s t can will \
    just don should now d ll m o re ve y ain aren couldn didn doesn hadn hasn haven isn ma \
    mightn mustn needn shan shouldn wasn weren won wouldn also said says";

/// The names of a text whose capitalised parts an "of" (or "of the")
/// joins ("Supreme Court of Appeal", "News of the World"), each as its
/// parts' words. Each word of such a name may be carried on its own ("an
/// appeal", "the News") while the name is not, so these are checked whole.
/// A sentence's first word is not a name's part by its capital alone ("None
/// of Dean's opponents").
fn names_joined_by_of(text: &str) -> Vec<(&str, Vec<Vec<&str>>)> {
    let function: BTreeSet<&str> = FUNCTION_WORDS.split_whitespace().collect();
    let spans: Vec<(usize, usize)> = engram::text::word_spans(text).collect();
    let word = |k: usize| &text[spans[k].0..spans[k].1];
    let capitalised = |k: usize| {
        word(k).chars().next().is_some_and(char::is_uppercase)
            && !function.contains(word(k).to_lowercase().as_str())
    };
    // Nothing that ends a phrase between words `a` and `b`.
    let joined = |a: usize, b: usize| {
        let gap = &text[spans[a].1..spans[b].0];
        !gap.contains([
            ',', ';', ':', '(', ')', '[', ']', '"', '\u{2014}', '\u{201c}', '\u{201d}',
        ]) && !gap.contains("--")
            && !gap.contains(" - ")
    };
    let mut names = Vec::new();
    let mut at = 0;
    while at < spans.len() {
        if !capitalised(at) {
            at += 1;
            continue;
        }
        let mut parts = vec![vec![at]];
        let mut last = at;
        loop {
            if last + 1 < spans.len() && capitalised(last + 1) && joined(last, last + 1) {
                last += 1;
                if let Some(part) = parts.last_mut() {
                    part.push(last);
                }
                continue;
            }
            let of = last + 1;
            if of >= spans.len() || word(of) != "of" {
                break;
            }
            let next = if of + 1 < spans.len() && word(of + 1) == "the" {
                of + 2
            } else {
                of + 1
            };
            if next >= spans.len() || !capitalised(next) || !joined(last, next) {
                break;
            }
            if parts == [vec![0]] {
                parts = vec![vec![next]];
            } else {
                parts.push(vec![next]);
            }
            last = next;
        }
        if parts.len() >= 2 {
            let spelled = &text[spans[parts[0][0]].0..spans[last].1];
            names.push((
                spelled,
                parts
                    .into_iter()
                    .map(|part| part.into_iter().map(word).collect())
                    .collect(),
            ));
        }
        at = last + 1;
    }
    names
}

/// Whether `canonical` carries a name [`names_joined_by_of`] found: the
/// whole name (its parts in order with "of" between, any "the" aside), or,
/// when its first part is a full name of its own ("Jon Sohn of Friends of
/// the Earth"), that part and the rest, each spelled with its capitals.
fn name_carried(canonical: &str, parts: &[Vec<&str>]) -> bool {
    let words = engram::text::words(canonical);
    let has = |sequence: &[String], exact: bool| {
        let same = |a: &str, b: &String| {
            if exact {
                a == b
            } else {
                a.eq_ignore_ascii_case(b)
            }
        };
        let text: Vec<&str> = words
            .iter()
            .copied()
            .filter(|w| exact || !w.eq_ignore_ascii_case("the"))
            .collect();
        text.windows(sequence.len())
            .any(|window| window.iter().zip(sequence).all(|(a, b)| same(a, b)))
    };
    let spelled = |part: &[&str]| part.iter().map(|w| (*w).to_owned()).collect::<Vec<_>>();
    match parts {
        [] => true,
        [only] => has(&spelled(only), true),
        [first, rest @ ..] => {
            let whole: Vec<String> = parts
                .iter()
                .enumerate()
                .flat_map(|(k, part)| {
                    (k > 0)
                        .then(|| "of".to_owned())
                        .into_iter()
                        .chain(spelled(part))
                })
                .collect();
            has(&whole, false)
                || (first.len() >= 2 && has(&spelled(first), true) && name_carried(canonical, rest))
        }
    }
}

/// What `cargo test` checks of the lossy checker's names: a name joined
/// by "of" counts whole, and a person's name before one stands alone.
fn names_are_checked_whole() {
    let lost = |canonical: &str, absorbed: &str| -> Vec<String> {
        names_joined_by_of(absorbed)
            .into_iter()
            .filter(|(_, parts)| !name_carried(canonical, parts))
            .map(|(spelled, _)| spelled.to_owned())
            .collect()
    };
    let absorbed = "Ana may appeal to the High Court of Appeal";
    assert_eq!(
        lost("Ana may appeal (also: the High Court)", absorbed),
        ["High Court of Appeal"]
    );
    assert!(lost("Ana may appeal (also: the High Court of Appeal)", absorbed).is_empty());
    assert_eq!(
        lost(
            "Ana spoke (also: the Museum; the Moving Image)",
            "Ana spoke at the Museum of the Moving Image"
        ),
        ["Museum of the Moving Image"]
    );
    assert!(
        lost(
            "Ana Ruiz, who works for Friends of the Earth, spoke",
            "Ana Ruiz of Friends of the Earth spoke"
        )
        .is_empty()
    );
    assert!(names_joined_by_of("None of Ana's friends came").is_empty());
    assert!(names_joined_by_of("Ana met the mayor of Lyon").is_empty());
    let words = |text: &str| -> Vec<String> {
        engram::text::words(text)
            .iter()
            .map(|w| w.to_lowercase())
            .collect()
    };
    let values =
        |text: &str| -> Vec<u32> { numbers(&words(text)).into_iter().map(|(v, _)| v).collect() };
    assert_eq!(values("Fifty-seven senators, 24 of them"), [57, 24]);
    assert_eq!(values("seven or ninety, then twenty one"), [7, 90, 21]);
    assert!(values("Ana went home").is_empty());
}

/// Lowercase content words of a text, each with whether it must match
/// literally (numbers and capitalised names).
fn content_words(text: &str) -> Vec<(String, bool)> {
    let function: BTreeSet<&str> = FUNCTION_WORDS.split_whitespace().collect();
    engram::text::words(text)
        .into_iter()
        .enumerate()
        .filter_map(|(at, word)| {
            let lower = word.to_lowercase();
            if function.contains(lower.as_str()) {
                return None;
            }
            let literal = word.chars().any(|c| c.is_ascii_digit())
                || (at > 0 && word.chars().next().is_some_and(char::is_uppercase));
            Some((lower, literal))
        })
        .collect()
}

/// Whether `kept` carries `word`: the same word (a name also with or
/// without a possessive "s": "Alaskas" / "Alaska's", or an apostrophe), a
/// negation by any negation, a verb by one WordNet defines as it with
/// more said, a verb of having or using by a possessive, or, for a word
/// WordNet knows, one of its lemmas or a synonym (a derived noun or a
/// verb defined as being included: "allergy" / "allergic", "works" /
/// "employed").
fn carries(kept: &[(String, bool)], word: &str, literal: bool, wordnet: &WordNet) -> bool {
    // A negation is carried by any negation: "does not have" says "without".
    const NEGATIONS: [&str; 7] = ["not", "no", "never", "without", "none", "nothing", "nobody"];
    if NEGATIONS.contains(&word) && kept.iter().any(|(k, _)| NEGATIONS.contains(&k.as_str())) {
        return true;
    }
    // The same word typed without its apostrophe: "dont" / "don't", which
    // splits as "don" "t".
    if kept
        .windows(2)
        .any(|w| format!("{}{}", w[0].0, w[1].0) == word)
    {
        return true;
    }
    // A day written as an ordinal keeps its number, either way round:
    // "September the 11th" is "September 11".
    fn digits(w: &str) -> Option<&str> {
        ["st", "nd", "rd", "th"]
            .iter()
            .find_map(|suffix| w.strip_suffix(suffix))
            .filter(|d| !d.is_empty() && d.chars().all(|c| c.is_ascii_digit()))
    }
    // A verb defined as the absorbed one with more said carries it:
    // "prefer" is "like better".
    let absorbed = wordnet.word(word);
    if kept
        .iter()
        .any(|(k, _)| wordnet.says_more_than(&wordnet.word(k), &absorbed))
    {
        return true;
    }
    // A possessive frame carries a verb of having or using: "the user's
    // browser is Firefox" says that the user uses Firefox. Not the "'s"
    // of "it's", which is "it is".
    const NOT_OWNERS: [&str; 7] = ["it", "that", "what", "he", "she", "there", "let"];
    let owner_s = |w: &[(String, bool)]| w[1].0 == "s" && !NOT_OWNERS.contains(&w[0].0.as_str());
    let possessive = kept.windows(2).any(owner_s);
    if possessive
        && ["have", "use"]
            .iter()
            .any(|verb| wordnet.first_means(&absorbed, verb))
    {
        return true;
    }
    // An owner's more specific noun, at most two words after the "'s",
    // carries the general one: "Leo's car is a Volvo" says what "Leo's
    // vehicle is a Volvo" says.
    let owned = |k: usize| kept[k.saturating_sub(3)..k].windows(2).any(owner_s);
    if (0..kept.len()).any(|k| owned(k) && wordnet.kind_of(&wordnet.word(&kept[k].0), &absorbed)) {
        return true;
    }
    kept.iter().any(|(k, _)| {
        k == word
            || digits(word) == Some(k.as_str())
            || digits(k) == Some(word)
            || word.strip_suffix('s') == Some(k.as_str())
            || k.strip_suffix('s') == Some(word)
            || ((!literal || wordnet.knows(word)) && wordnet.same_or_synonym(k, word))
    })
}

/// LoCoMo session dates read like "1:56 pm on 8 May, 2023".
fn session_time(text: &str) -> Option<i64> {
    NaiveDateTime::parse_from_str(&text.to_uppercase(), "%I:%M %p ON %d %B, %Y")
        .ok()
        .map(|t| t.and_utc().timestamp_millis())
}
