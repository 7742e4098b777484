//! What a platform's deletion or edit of a memory does to what engram built
//! from it: a fused canonical is rebuilt from its own text and the current
//! texts of its other members, a pattern whose text holds a word its other
//! episodes do not is removed (the next cycle extracts it again from what
//! is left), and stored run reports lose every word only the deleted
//! memory said. Pure: the state layer loads and writes.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::detect::Lexicon;
use crate::detect::align;
use crate::detect::fuse;
use crate::model::Memory;

/// What stands in for a word that only a deleted memory said.
pub const REDACTED: &str = "[deleted]";

/// The fewest episodes a pattern stands on.
const MIN_EPISODES: usize = 2;

/// What becomes of a memory engram built from a source that changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rebuilt {
    /// Nothing in its text came from the source alone.
    Unchanged,
    /// Its new text.
    Text(String),
    /// Nothing of its own is left.
    Removed,
}

/// The words of a text, lower-cased: runs of letters and digits.
pub fn words(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// `built` after its source `source_id` was deleted (`source_now` `None`)
/// or got the text `source_now`. `others` holds the current texts of the
/// other memories it was built from (those that still exist).
pub fn rebuild(
    built: &Memory,
    source_id: &str,
    source_now: Option<&str>,
    others: &BTreeMap<String, String>,
    lexicon: &Lexicon,
) -> Rebuilt {
    let mut sources: Vec<&str> = others.values().map(String::as_str).collect();
    sources.extend(source_now);
    if built.derived_from.iter().any(|id| id == source_id) {
        return rebuild_pattern(built, &sources);
    }
    // Its own text, without the details fusion appended.
    let base = fuse::without_additions(&built.content);
    let rebuilt =
        fuse::fuse(&base, sources.iter().copied(), lexicon).unwrap_or_else(|| base.clone());
    if rebuilt == built.content {
        return Rebuilt::Unchanged;
    }
    // A deleted member that added nothing of its own leaves the text as it
    // is (rebuilding could only reorder its details).
    if source_now.is_none() {
        let kept: BTreeSet<String> = sources
            .iter()
            .flat_map(|text| words(text))
            .chain(words(&base))
            .collect();
        if words(&built.content).is_subset(&kept) {
            return Rebuilt::Unchanged;
        }
    }
    Rebuilt::Text(rebuilt)
}

/// A pattern keeps its text while every word of it (before the count and
/// dates) is still said by its episodes, and two of them are left.
fn rebuild_pattern(pattern: &Memory, episodes: &[&str]) -> Rebuilt {
    if episodes.len() < MIN_EPISODES {
        return Rebuilt::Removed;
    }
    let core = pattern
        .content
        .rsplit_once(" (")
        .map_or(pattern.content.as_str(), |(core, _)| core);
    let said: BTreeSet<String> = episodes.iter().flat_map(|text| words(text)).collect();
    if words(core).is_subset(&said) {
        Rebuilt::Unchanged
    } else {
        Rebuilt::Removed
    }
}

/// The content words of `deleted` that none of `kept` holds: what only the
/// deleted memory said, and what a stored report must no longer hold.
pub fn own_words<'a>(
    deleted: &str,
    kept: impl IntoIterator<Item = &'a str>,
    lexicon: &Lexicon,
) -> BTreeSet<String> {
    let kept: BTreeSet<String> = kept.into_iter().flat_map(words).collect();
    align::tokens(deleted, lexicon)
        .iter()
        .filter(|token| token.is_content())
        .flat_map(|token| words(&token.word))
        .filter(|word| !kept.contains(word))
        .collect()
}

/// Takes a deleted memory out of a stored report: every string that is its
/// whole text becomes [`REDACTED`], and so does every one of `own` (its own
/// words) wherever it appears. Whether anything changed.
pub fn scrub(report: &mut Value, deleted_text: &str, own: &BTreeSet<String>) -> bool {
    match report {
        Value::String(text) => {
            let scrubbed = if text.trim() == deleted_text.trim() {
                REDACTED.to_owned()
            } else {
                redact_words(text, own)
            };
            let changed = scrubbed != *text;
            *text = scrubbed;
            changed
        }
        Value::Array(items) => items.iter_mut().fold(false, |changed, item| {
            scrub(item, deleted_text, own) | changed
        }),
        Value::Object(fields) => fields.values_mut().fold(false, |changed, item| {
            scrub(item, deleted_text, own) | changed
        }),
        _ => false,
    }
}

/// `text` with each word of `own` replaced, the rest as it was.
fn redact_words(text: &str, own: &BTreeSet<String>) -> String {
    if own.is_empty() {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if own.contains(&word.to_lowercase()) {
            out.push_str(REDACTED);
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for c in text.chars() {
        if c.is_alphanumeric() {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lexicon() -> Lexicon {
        Lexicon::new(&crate::plan::RuleSet::default_rules().lexicon)
    }

    fn memory(id: &str, content: &str) -> Memory {
        Memory {
            user_id: "u".into(),
            id: id.into(),
            kind: crate::model::MemoryKind::Semantic,
            category: None,
            tags: Vec::new(),
            content: content.into(),
            importance: 0.5,
            source: None,
            content_hash: crate::text::content_hash(content),
            embedding: None,
            status: crate::model::MemoryStatus::Active,
            salience: crate::salience::SalienceState::new(0),
            merged_from: Vec::new(),
            derived_from: Vec::new(),
            last_run_id: None,
            updated_at: None,
        }
    }

    #[test]
    fn a_canonical_loses_the_details_only_the_deleted_member_gave() {
        let lexicon = lexicon();
        let base = "Gina opened her dance studio downtown.";
        let fused = fuse::fuse(
            base,
            [
                "In March, Gina opened her dance studio.",
                "Gina opened her zorblax dance studio.",
            ],
            &lexicon,
        )
        .unwrap();
        assert!(
            fused.contains("zorblax") && fused.contains("March"),
            "{fused}"
        );
        let mut canonical = memory("c", &fused);
        canonical.merged_from = vec!["m1".into(), "m2".into()];
        let others = BTreeMap::from([(
            "m1".to_owned(),
            "In March, Gina opened her dance studio.".to_owned(),
        )]);
        let Rebuilt::Text(text) = rebuild(&canonical, "m2", None, &others, &lexicon) else {
            panic!("the canonical must be rebuilt");
        };
        assert!(!text.contains("zorblax"), "{text}");
        assert!(
            text.contains("March") && text.starts_with("Gina opened"),
            "{text}"
        );
        // Without any member left it is its own text again.
        let Rebuilt::Text(alone) = rebuild(&canonical, "m2", None, &BTreeMap::new(), &lexicon)
        else {
            panic!("the canonical must be rebuilt");
        };
        assert_eq!(alone, base);
    }

    #[test]
    fn a_member_that_added_nothing_leaves_the_canonical_as_it_is() {
        let lexicon = lexicon();
        let mut canonical = memory(
            "c",
            "Gina opened her dance studio downtown (also: In March).",
        );
        canonical.merged_from = vec!["m1".into(), "m2".into()];
        let others = BTreeMap::from([(
            "m1".to_owned(),
            "In March, Gina opened her dance studio.".to_owned(),
        )]);
        assert_eq!(
            rebuild(&canonical, "m2", None, &others, &lexicon),
            Rebuilt::Unchanged
        );
    }

    #[test]
    fn an_edited_member_gives_the_canonical_its_new_words() {
        let lexicon = lexicon();
        let mut canonical = memory("c", "The user drinks tea (also: green).");
        canonical.merged_from = vec!["m1".into()];
        let rebuilt = rebuild(
            &canonical,
            "m1",
            Some("The user drinks tea with honey."),
            &BTreeMap::new(),
            &lexicon,
        );
        let Rebuilt::Text(text) = rebuilt else {
            panic!("{rebuilt:?}");
        };
        assert!(text.contains("honey") && !text.contains("green"), "{text}");
    }

    #[test]
    fn a_pattern_holding_a_word_only_the_deleted_episode_said_is_removed() {
        let mut pattern = memory(
            "p",
            "ran the zorblax tests … (3 times, 1 May 2026 – 3 May 2026)",
        );
        pattern.derived_from = vec!["e1".into(), "e2".into(), "e3".into()];
        let others = BTreeMap::from([
            ("e1".to_owned(), "ran the zorblax tests".to_owned()),
            ("e2".to_owned(), "ran the zorblax tests again".to_owned()),
        ]);
        let lexicon = lexicon();
        assert_eq!(
            rebuild(&pattern, "e3", None, &others, &lexicon),
            Rebuilt::Unchanged
        );
        let one = BTreeMap::from([("e1".to_owned(), "ran the zorblax tests".to_owned())]);
        assert_eq!(
            rebuild(&pattern, "e3", None, &one, &lexicon),
            Rebuilt::Removed
        );
        let without = BTreeMap::from([
            ("e1".to_owned(), "ran the tests".to_owned()),
            ("e2".to_owned(), "ran the tests again".to_owned()),
        ]);
        assert_eq!(
            rebuild(&pattern, "e3", None, &without, &lexicon),
            Rebuilt::Removed
        );
    }

    #[test]
    fn a_report_keeps_no_word_only_the_deleted_memory_said() {
        let lexicon = lexicon();
        let deleted = "The user moved to Quixotown.";
        let own = own_words(deleted, ["The user lives in Lisbon."], &lexicon);
        assert_eq!(
            own,
            BTreeSet::from(["moved".to_owned(), "quixotown".to_owned()])
        );
        let mut report = serde_json::json!({
            "contradictions": [{"explanation": "lisbon ↔ quixotown", "signals": ["moved to"]}],
            "memory_changes": [{"before": {"content": "The user moved to Quixotown."}}],
            "counts": {"merged": 1},
        });
        assert!(scrub(&mut report, deleted, &own));
        let text = report.to_string();
        assert!(!text.to_lowercase().contains("quixotown"), "{text}");
        assert!(text.contains("lisbon ↔ [deleted]"), "{text}");
        assert!(text.contains("\"[deleted]\""), "{text}");
        assert!(
            !scrub(&mut report, deleted, &own),
            "a second pass changes nothing"
        );
    }
}
