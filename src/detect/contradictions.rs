//! Contradictions: two memories about the same thing that disagree.
//!
//! A pair is a contradiction when it carries at least one conflict signal and
//! is similar enough to be about the same thing
//! (`contradiction_min_similarity`, measured: "Project uses PostgreSQL" /
//! "Project uses MySQL" score 0.64 with all-MiniLM-L6-v2). Signals:
//!
//! * `negation`: one side negates ("not", "never", "no longer" …) an odd
//!   number of times more than the other;
//! * `antonym`: an antonym pair split across the two ("always" / "never");
//! * `number`: both state numbers and they differ;
//! * `value`: the same sentence with one differing named value (capitalised,
//!   numeric or a known class value), at most three words each side;
//! * `class_value`: each names a different value of one class from the
//!   lexicon (databases, vector stores …).
//!
//! Only facts, preferences and procedures are compared: episodes record
//! events, and two different events do not contradict each other.
//!
//! A `class_value` pair where the newer memory states a change ("now",
//! "switched to" …) counts from the lower `change_min_similarity`: stating a
//! replacement often shares few words ("Using Pinecone for vector search" /
//! "Now using PostgreSQL with pgvector" score only 0.20).

use serde::Serialize;

use std::collections::BTreeMap;

use crate::model::MemoryKind;

use super::pairs::parallel_map;
use super::{DetectSettings, Item, Lexicon, Pair, Prepared, Supersession, round4, supersession};
use crate::embed::dot;

/// Evidence for a contradiction, kept in reports and events.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Signal {
    pub kind: &'static str,
    pub detail: String,
}

impl Signal {
    fn weight(&self) -> f64 {
        match self.kind {
            "negation" | "antonym" => 0.6,
            "value" | "class_value" => 0.5,
            _ => 0.4,
        }
    }
}

/// Two memories that disagree; `first` is the older.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Contradiction {
    pub first_id: String,
    pub second_id: String,
    pub similarity: f64,
    pub signals: Vec<Signal>,
    /// 0..1: the signals' combined weight, scaled by how similar the pair is.
    pub confidence: f64,
    /// Set when time resolves it: the newer states a change.
    pub supersession: Option<Supersession>,
}

impl Contradiction {
    /// The signals as one readable sentence.
    pub fn explanation(&self) -> String {
        let details: Vec<&str> = self.signals.iter().map(|s| s.detail.as_str()).collect();
        format!("{} (cosine {:.2})", details.join("; "), self.similarity)
    }
}

pub fn detect(
    prepared: &Prepared<'_>,
    close: &[Pair],
    settings: &DetectSettings,
    lexicon: &Lexicon,
) -> Vec<Contradiction> {
    let mut candidates: Vec<(usize, usize, f64)> = close
        .iter()
        .filter(|p| p.similarity >= settings.contradiction_min_similarity)
        .map(|p| (p.first, p.second, p.similarity))
        .chain(stated_changes(prepared, settings, lexicon))
        .collect();
    candidates.sort_by_key(|&(i, j, _)| (i, j));
    candidates.dedup_by(|a, b| (a.0, a.1) == (b.0, b.1));
    let mut found = Vec::new();
    let items = &prepared.items;
    for (i, j, similarity) in candidates {
        if similarity < settings.change_min_similarity
            || items[i].memory.content_hash == items[j].memory.content_hash
            || is_episode(&items[i])
            || is_episode(&items[j])
        {
            continue;
        }
        let signals = signals(&items[i], &items[j], lexicon);
        if signals.is_empty() {
            continue;
        }
        let resolved = supersession::resolve(&items[i], &items[j], lexicon);
        let stated_change = resolved.is_some() && signals.iter().any(|s| s.kind == "class_value");
        if similarity < settings.contradiction_min_similarity && !stated_change {
            continue;
        }
        let combined = 1.0 - signals.iter().map(|s| 1.0 - s.weight()).product::<f64>();
        let floor = settings.change_min_similarity;
        let closeness = ((similarity - floor) / (1.0 - floor)).clamp(0.0, 1.0);
        found.push(Contradiction {
            first_id: items[i].memory.id.clone(),
            second_id: items[j].memory.id.clone(),
            similarity: round4(similarity),
            confidence: round4(combined * (0.5 + 0.5 * closeness)),
            signals,
            supersession: resolved,
        });
    }
    found
}

/// Pairs below `contradiction_min_similarity` that may still be a stated
/// change: the later memory carries a change marker and names a value of a
/// lexicon class, and the earlier one names a different value of that class.
/// Each change statement is paired with its most similar such predecessor
/// only (at least `change_min_similarity`): "Now using PostgreSQL with
/// pgvector" replaces the one vector store it is closest to, not every
/// memory that names one. Blocked by class, so a large user is not compared
/// all-pairs.
fn stated_changes(
    prepared: &Prepared<'_>,
    settings: &DetectSettings,
    lexicon: &Lexicon,
) -> Vec<(usize, usize, f64)> {
    let values: Vec<Vec<(String, String)>> = prepared
        .items
        .iter()
        .map(|item| lexicon.values_in(&item.words))
        .collect();
    // Per class: its members in order, each with the values it names there.
    let mut by_class: BTreeMap<&str, Vec<(usize, Vec<&str>)>> = BTreeMap::new();
    for (i, named) in values.iter().enumerate() {
        if is_episode(&prepared.items[i]) {
            continue;
        }
        for (class, value) in named {
            let members = by_class.entry(class.as_str()).or_default();
            match members.last_mut() {
                Some((last, in_class)) if *last == i => in_class.push(value.as_str()),
                _ => members.push((i, vec![value.as_str()])),
            }
        }
    }
    let mut pairs = Vec::new();
    for members in by_class.values() {
        pairs.extend(closest_predecessors(prepared, members, settings, lexicon));
    }
    pairs
}

/// For each change statement among one class's `members` (in order, with
/// the values each names), its most similar earlier member naming another
/// value, ties by the earliest. Members are scanned in cache-sized blocks
/// against groups of statements, on every core.
fn closest_predecessors(
    prepared: &Prepared<'_>,
    members: &[(usize, Vec<&str>)],
    settings: &DetectSettings,
    lexicon: &Lexicon,
) -> Vec<(usize, usize, f64)> {
    const BLOCK: usize = 256;
    const GROUP: usize = 32;
    let vector = |m: usize| prepared.items[members[m].0].memory.embedding.as_deref();
    let statements: Vec<usize> = (0..members.len())
        .filter(|&m| {
            vector(m).is_some()
                && lexicon
                    .change_marker_in(&prepared.items[members[m].0].words)
                    .is_some()
        })
        .collect();
    let groups: Vec<&[usize]> = statements.chunks(GROUP).collect();
    let best = parallel_map(&groups, |group| {
        let mut best: Vec<Option<(f64, usize)>> = vec![None; group.len()];
        for start in (0..members.len()).step_by(BLOCK) {
            for (slot, &statement) in best.iter_mut().zip(group.iter()) {
                let Some(v) = vector(statement) else {
                    continue;
                };
                let named = &members[statement].1;
                let end = (start + BLOCK).min(statement);
                for (earlier, (_, values)) in members.iter().enumerate().take(end).skip(start) {
                    if values.iter().all(|value| named.contains(value)) {
                        continue;
                    }
                    let Some(other) = vector(earlier) else {
                        continue;
                    };
                    let similarity = f64::from(dot(other, v));
                    if similarity >= settings.change_min_similarity
                        && slot.is_none_or(|(top, _)| similarity > top)
                    {
                        *slot = Some((similarity, earlier));
                    }
                }
            }
        }
        best
    });
    statements
        .iter()
        .zip(best.into_iter().flatten())
        .filter_map(|(&statement, found)| {
            let (similarity, earlier) = found?;
            Some((members[earlier].0, members[statement].0, similarity))
        })
        .collect()
}

/// Episodes record events; two events that differ ("ran the tests on
/// ticket 12" / "… on ticket 34") do not contradict each other.
fn is_episode(item: &Item<'_>) -> bool {
    item.memory.kind == MemoryKind::Episodic
}

/// The conflict signals between two memories (empty: no conflict).
pub fn signals(first: &Item<'_>, second: &Item<'_>, lexicon: &Lexicon) -> Vec<Signal> {
    let (a, b) = (&first.words, &second.words);
    let mut signals = Vec::new();
    let (neg_a, neg_b) = (lexicon.negations_in(a), lexicon.negations_in(b));
    if neg_a.len() % 2 != neg_b.len() % 2 {
        let (side, words) = if neg_a.len() > neg_b.len() {
            ("first", &neg_a)
        } else {
            ("second", &neg_b)
        };
        signals.push(Signal {
            kind: "negation",
            detail: format!("only the {side} is negated (`{}`)", words.join("`, `")),
        });
    }
    if let Some((x, y)) = lexicon.antonym_between(a, b) {
        signals.push(Signal {
            kind: "antonym",
            detail: format!("`{x}` against `{y}`"),
        });
    }
    let (num_a, num_b) = (numbers(a), numbers(b));
    if !num_a.is_empty() && !num_b.is_empty() && num_a != num_b {
        signals.push(Signal {
            kind: "number",
            detail: format!("{} against {}", num_a.join(", "), num_b.join(", ")),
        });
    }
    if let Some((x, y)) = differing_value(first, second, lexicon) {
        signals.push(Signal {
            kind: "value",
            detail: format!("same statement with `{x}` against `{y}`"),
        });
    }
    let (val_a, val_b) = (lexicon.values_in(a), lexicon.values_in(b));
    for (class, x) in &val_a {
        let other = val_b
            .iter()
            .find(|(c, y)| c == class && y != x && !val_a.iter().any(|(_, v)| v == y));
        if let Some((_, y)) = other
            && !val_b.iter().any(|(_, v)| v == x)
        {
            signals.push(Signal {
                kind: "class_value",
                detail: format!("{class}: `{x}` against `{y}`"),
            });
            break;
        }
    }
    signals
}

fn numbers(words: &[String]) -> Vec<String> {
    let mut found: Vec<String> = words
        .iter()
        .filter(|w| w.chars().all(|c| c.is_ascii_digit()))
        .cloned()
        .collect();
    found.sort();
    found.dedup();
    found
}

/// The differing words of two sentences that are equal apart from one short
/// run of words each, when those words name a value.
fn differing_value(
    first: &Item<'_>,
    second: &Item<'_>,
    lexicon: &Lexicon,
) -> Option<(String, String)> {
    let (a, b) = (&first.words, &second.words);
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let max_suffix = a.len().min(b.len()) - prefix;
    let suffix = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take(max_suffix)
        .take_while(|(x, y)| x == y)
        .count();
    let (mid_a, mid_b) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    let shared = prefix + suffix;
    let longer = a.len().max(b.len());
    if mid_a.is_empty() || mid_b.is_empty() || mid_a.len() > 3 || mid_b.len() > 3 {
        return None;
    }
    if shared < 2 || shared * 2 < longer {
        return None;
    }
    let original_a = crate::text::words(&first.memory.content);
    let original_b = crate::text::words(&second.memory.content);
    let named = |original: &[&str], range: std::ops::Range<usize>, words: &[String]| {
        range.zip(words).any(|(at, word)| {
            let spelled = original.get(at).copied().unwrap_or("");
            let capitalised = spelled.chars().next().is_some_and(char::is_uppercase);
            let inner_capital = spelled.chars().skip(1).any(char::is_uppercase);
            (capitalised && at > 0) || inner_capital || lexicon.is_value(word)
        })
    };
    let is_number = |w: &String| w.chars().all(|c| c.is_ascii_digit());
    if mid_a.iter().all(is_number) && mid_b.iter().all(is_number) {
        return None;
    }
    let spelled = |mid: &[String]| -> Vec<String> {
        mid.iter()
            .map(|w| lexicon.canonical(w).to_owned())
            .collect()
    };
    if spelled(mid_a) == spelled(mid_b) {
        return None;
    }
    let named_a = named(&original_a, prefix..prefix + mid_a.len(), mid_a);
    let named_b = named(&original_b, prefix..prefix + mid_b.len(), mid_b);
    (named_a && named_b).then(|| (mid_a.join(" "), mid_b.join(" ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::testing::*;

    fn kinds(first: &str, second: &str) -> Vec<&'static str> {
        let snapshot = snapshot(vec![
            memory("a", first, T0, vector(1.0, 1)),
            memory("b", second, T0 + 1, vector(1.0, 1)),
        ]);
        let prepared = Prepared::new(&snapshot);
        signals(&prepared.items[0], &prepared.items[1], &lexicon())
            .into_iter()
            .map(|s| s.kind)
            .collect()
    }

    #[test]
    fn each_signal_on_real_sentences() {
        assert_eq!(
            kinds(
                "The user prefers dark mode",
                "The user does not prefer dark mode"
            ),
            vec!["negation"]
        );
        assert_eq!(
            kinds(
                "The user always writes tests first",
                "The user never writes tests first"
            ),
            vec!["negation", "antonym"]
        );
        assert_eq!(
            kinds("The deploy takes 5 minutes", "The deploy takes 20 minutes"),
            vec!["number"]
        );
        assert_eq!(
            kinds("Project uses PostgreSQL", "Project uses MySQL"),
            vec!["value", "class_value"]
        );
        assert_eq!(
            kinds("Project uses Postgres", "Project uses PostgreSQL"),
            Vec::<&str>::new()
        );
        assert_eq!(
            kinds(
                "Enable two-factor authentication",
                "Disable two-factor authentication"
            ),
            vec!["antonym"]
        );
    }

    #[test]
    fn paraphrases_and_related_facts_carry_no_signal() {
        assert!(kinds("API uses REST", "The API is RESTful").is_empty());
        assert!(kinds("We no longer use Jenkins", "Jenkins is not used anymore").is_empty());
        assert!(kinds("The user lives in Berlin", "The user works in Berlin").is_empty());
        assert!(kinds("Deploys happen on Fridays", "We deploy every Friday").is_empty());
    }

    #[test]
    fn detected_pairs_need_similarity_and_report_confidence() {
        let snapshot = snapshot(vec![
            memory("a", "Project uses PostgreSQL", T0, vector(1.0, 1)),
            memory("b", "Project uses MySQL", T0 + 1, vector(0.64, 2)),
            memory("c", "The deploy takes 5 minutes", T0 + 2, vector(0.1, 3)),
        ]);
        let prepared = Prepared::new(&snapshot);
        let close = prepared.close_pairs(&settings());
        let found = detect(&prepared, &close, &settings(), &lexicon());
        assert_eq!(found.len(), 1);
        let pair = &found[0];
        assert_eq!(
            (pair.first_id.as_str(), pair.second_id.as_str()),
            ("a", "b")
        );
        assert!(pair.confidence > 0.5 && pair.confidence <= 1.0, "{pair:?}");
        assert!(pair.explanation().contains("`postgresql` against `mysql`"));
        assert_eq!(pair.supersession, None);
    }
}
