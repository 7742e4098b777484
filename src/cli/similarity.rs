//! `engram similarity`: how the model scores pairs of texts, and what their alignment says.

use std::io::{self, BufRead, BufReader, Write};
use std::path::Path;

use anyhow::{Context, Result, bail};

use engram::config::Config;
use engram::cycle::{CycleRequest, CycleSettings, plan_cycle};
use engram::detect::align::{Token, clause_conflict, compare, statement, update};
use engram::detect::fuse::{fuses, same_order};
use engram::detect::{Lexicon, Snapshot};
use engram::embed::{LocalEmbedder, dot, embed_bucketed};
use engram::event::{RunMode, TriggerReason};
use engram::model::{Memory, MemoryKind, MemoryStatus};
use engram::salience::SalienceState;
use engram::text::content_hash;

use crate::app::cycle_settings;

/// Every pair of `texts`, each as its cosine and its alignment's verdict.
pub fn run(config: &Config, texts: &[String]) -> Result<()> {
    let mut out = io::stdout().lock();
    let embedder = LocalEmbedder::load(&config.embedding)?;
    let settings = cycle_settings(config)?;
    let lexicon = &settings.lexicon;
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let vectors = embed_bucketed(&embedder, &refs, config.embedding.sub_batch())?;
    let tokens: Vec<_> = refs.iter().map(|t| statement(t, lexicon)).collect();
    for (i, first) in vectors.iter().enumerate() {
        for (j, second) in vectors.iter().enumerate().skip(i + 1) {
            writeln!(
                out,
                "{:.4}  {:?}  {:?}",
                dot(first, second),
                texts[i],
                texts[j]
            )?;
            let (whole, clause) = verdicts([&tokens[i], &tokens[j]], [refs[i], refs[j]], lexicon);
            writeln!(out, "        {whole}")?;
            if let Some(clause) = clause {
                writeln!(out, "        one clause of each: {clause}")?;
            }
            if let Some(update) = update_trace(&tokens[i], &tokens[j], lexicon) {
                writeln!(out, "        the second updates the first: {update}")?;
            }
            let decided = cycle_decision([refs[i], refs[j]], [first, second], &settings);
            writeln!(out, "        a cycle: {decided}")?;
        }
    }
    Ok(())
}

/// A file of labelled pairs (`first<TAB>second` or `id<TAB>first<TAB>second`
/// per line; `-` reads stdin), one tab-separated line out per pair: id,
/// cosine, the alignment's verdict, a clause's verdict when one clause
/// of a text contradicts the other and the whole does not, and what a cycle
/// under this configuration does with the pair ([`cycle_decision`]). This
/// is how a platform checks thresholds and rules on its own memories.
pub fn run_pairs(config: &Config, source: &Path) -> Result<()> {
    let mut out = io::stdout().lock();
    let reader: Box<dyn BufRead> = if source == Path::new("-") {
        Box::new(BufReader::new(std::io::stdin()))
    } else {
        let file = std::fs::File::open(source)
            .with_context(|| format!("cannot open {}", source.display()))?;
        Box::new(BufReader::new(file))
    };
    let pairs = read_pairs(reader, source)?;
    let embedder = LocalEmbedder::load(&config.embedding)?;
    let settings = cycle_settings(config)?;
    let lexicon = &settings.lexicon;
    let texts: Vec<&str> = pairs
        .iter()
        .flat_map(|(_, a, b)| [a.as_str(), b.as_str()])
        .collect();
    let vectors = embed_bucketed(&embedder, &texts, config.embedding.sub_batch())?;
    for ((id, a, b), vectors) in pairs.iter().zip(vectors.chunks(2)) {
        let (a_tokens, b_tokens) = (statement(a, lexicon), statement(b, lexicon));
        let (whole, clause) = verdicts([&a_tokens, &b_tokens], [a, b], lexicon);
        let decided = cycle_decision([a, b], [&vectors[0], &vectors[1]], &settings);
        writeln!(
            out,
            "{id}\t{:.4}\t{whole}\t{}\t{decided}\t{}",
            dot(&vectors[0], &vectors[1]),
            clause.unwrap_or_default(),
            update_trace(&a_tokens, &b_tokens, lexicon).unwrap_or_default()
        )?;
    }
    Ok(())
}

/// The lines of a pairs file as (id, first, second); a line without its
/// own id is numbered. Blank lines and `#` comments are skipped.
fn read_pairs(reader: impl BufRead, source: &Path) -> Result<Vec<(String, String, String)>> {
    let mut pairs = Vec::new();
    for (n, line) in reader.lines().enumerate() {
        let line = line.with_context(|| format!("cannot read {}", source.display()))?;
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split('\t').collect();
        let (id, a, b) = match fields.as_slice() {
            [a, b] => ((n + 1).to_string(), *a, *b),
            [id, a, b] => ((*id).to_owned(), *a, *b),
            _ => bail!(
                "{} line {}: expected `first<TAB>second` or `id<TAB>first<TAB>second`, found {} \
                 tab-separated fields",
                source.display(),
                n + 1,
                fields.len()
            ),
        };
        pairs.push((id, a.to_owned(), b.to_owned()));
    }
    Ok(pairs)
}

/// The whole texts' verdict, and a clause's when it contradicts and the
/// whole does not.
fn verdicts(
    [a, b]: [&[Token]; 2],
    texts: [&str; 2],
    lexicon: &Lexicon,
) -> (String, Option<String>) {
    let whole = compare(a, b, lexicon);
    let keeps_order = whole.moved == 0 || same_order(a, b);
    let clause = (!whole.contradicts())
        .then(|| clause_conflict(a, b, lexicon))
        .flatten()
        .map(|c| c.verdict(true, true));
    // As the cycle decides (`Prepared::mergeable`).
    (
        whole.verdict(keeps_order, fuses(a, b, texts, lexicon)),
        clause,
    )
}

/// The knowledge update `b` states of `a`, if a rule finds one: what it
/// read, and the rule's name.
fn update_trace(a: &[Token], b: &[Token], lexicon: &Lexicon) -> Option<String> {
    update(a, b, lexicon).map(|u| format!("{} (rule `{}`)", u.detail, u.rule))
}

/// What a cycle under `settings` does with `texts` as one user's only two
/// semantic memories, the first written a minute before the second: the
/// planner `engram run` uses, so the similarity floors, the thresholds and
/// the rules file all apply, which the alignment's verdict alone does not.
fn cycle_decision(
    texts: [&str; 2],
    vectors: [&[f32]; 2],
    settings: &CycleSettings,
) -> &'static str {
    const MINUTE: i64 = 60_000;
    let user = "similarity";
    let memories =
        [(0, texts[0], vectors[0]), (1, texts[1], vectors[1])].map(|(i, content, vector)| Memory {
            user_id: user.to_owned(),
            id: ["first", "second"][i].to_owned(),
            kind: MemoryKind::Semantic,
            category: None,
            tags: Vec::new(),
            content: content.to_owned(),
            importance: 0.5,
            source: None,
            content_hash: content_hash(content),
            embedding: Some(vector.to_vec()),
            status: MemoryStatus::Active,
            salience: SalienceState::new(i as i64 * MINUTE),
            merged_from: Vec::new(),
            derived_from: Vec::new(),
            last_run_id: None,
            updated_at: None,
        });
    let snapshot = Snapshot {
        user_id: user.to_owned(),
        memories: memories.into(),
        links: Vec::new(),
    };
    let request = CycleRequest {
        user_id: user.to_owned(),
        run_id: user.to_owned(),
        trigger: TriggerReason::Manual,
        mode: RunMode::DryRun,
        now: 2 * MINUTE,
    };
    let counts = plan_cycle(&request, &snapshot, settings).counts;
    if counts.duplicates_merged > 0 {
        "merged"
    } else if counts.superseded > 0 {
        "contradiction, the second supersedes the first"
    } else if counts.contradictions_found > 0 {
        "contradiction flagged"
    } else {
        "both kept"
    }
}
