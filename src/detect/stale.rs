//! Stale: memories that have faded and that something else still carries.
//!
//! Faded: salience at "now" (from reads and importance) below the archival
//! threshold, and no read within `max_age`. A faded memory is only a
//! candidate when it is not the only active carrier of its facts: a newer
//! active memory's text covers it (every content word, nothing in conflict),
//! or it is an instance of an active pattern (the planner also accepts a
//! pattern this cycle founds).

use std::collections::HashMap;

use serde::Serialize;

use super::pairs::parallel_map;
use super::{DAY_MS, DetectSettings, Lexicon, Pair, Prepared, round4};
use crate::model::{Link, LinkType, Millis};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StaleMemory {
    pub memory_id: String,
    pub salience: f64,
    /// Days since the last read (or creation).
    pub idle_days: f64,
    /// Active memories that carry what it says: newer memories covering its
    /// text, then patterns it is an instance of. Empty: it is the only
    /// carrier (kept, unless a pattern founded this cycle takes it).
    pub covered_by: Vec<String>,
}

pub fn detect(
    prepared: &Prepared<'_>,
    close: &[Pair],
    links: &[Link],
    now: Millis,
    settings: &DetectSettings,
    lexicon: &Lexicon,
) -> Vec<StaleMemory> {
    let mut faded: Vec<Option<StaleMemory>> = prepared
        .items
        .iter()
        .map(|item| {
            let m = item.memory;
            let salience = m.salience.salience(now, m.importance, &settings.salience);
            let idle = now - m.salience.last_accessed_at();
            (salience < settings.archive_threshold && idle >= settings.max_age).then(|| {
                StaleMemory {
                    memory_id: m.id.clone(),
                    salience: round4(salience),
                    idle_days: round4(idle as f64 / DAY_MS as f64),
                    covered_by: Vec::new(),
                }
            })
        })
        .collect();
    let order = |i: usize| {
        let m = prepared.items[i].memory;
        (m.created_at(), m.id.as_str())
    };
    let mut close: Vec<(usize, usize, f64)> = close
        .iter()
        .map(|pair| {
            let (older, newer) = if order(pair.first) < order(pair.second) {
                (pair.first, pair.second)
            } else {
                (pair.second, pair.first)
            };
            (older, newer, pair.similarity)
        })
        .filter(|&(older, _, _)| faded[older].is_some())
        .collect();
    close.sort_by(|a, b| b.2.total_cmp(&a.2));
    // Each pair is read on its own, on every core; the carriers are then
    // noted in the pairs' order, most similar first.
    let covers = parallel_map(&close, |&(older, newer, _)| {
        prepared.may_cover(newer, older, lexicon)
            && prepared.compare(newer, older, lexicon).covers(0)
    });
    for (&(older, newer, _), covers) in close.iter().zip(covers) {
        if let (true, Some(stale)) = (covers, faded[older].as_mut()) {
            stale
                .covered_by
                .push(prepared.items[newer].memory.id.clone());
        }
    }
    let index: HashMap<&str, usize> = prepared
        .items
        .iter()
        .enumerate()
        .map(|(k, item)| (item.memory.id.as_str(), k))
        .collect();
    for link in links
        .iter()
        .filter(|l| l.link_type == LinkType::InstanceOf && index.contains_key(l.to_id.as_str()))
    {
        if let Some(stale) = index
            .get(link.from_id.as_str())
            .and_then(|&k| faded[k].as_mut())
        {
            stale.covered_by.push(link.to_id.clone());
        }
    }
    faded.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::testing::*;

    #[test]
    fn faded_and_unread_memories_are_stale() {
        let now = T0 + 90 * DAY_MS;
        let mut faded = memory(
            "faded",
            "The office wifi password was changed",
            T0,
            vector(1.0, 1),
        );
        faded.importance = 0.0;
        let mut important = memory(
            "important",
            "The user is allergic to peanuts",
            T0,
            vector(1.0, 2),
        );
        important.importance = 1.0;
        let mut recent = memory("recent", "Standup moved to 10am", T0, vector(1.0, 3));
        recent.importance = 0.0;
        recent.salience.record_access(now - DAY_MS);
        let snapshot = snapshot(vec![faded, important, recent]);
        let prepared = Prepared::new(&snapshot);
        let found = detect(&prepared, &[], &[], now, &settings(), &lexicon());
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].memory_id, "faded");
        assert!(found[0].salience < 0.1);
        assert_eq!(found[0].idle_days, 90.0);
        assert!(found[0].covered_by.is_empty(), "nothing else carries it");
    }
}

#[cfg(test)]
mod carriers {
    use super::*;
    use crate::detect::testing::*;

    #[test]
    fn a_faded_memory_is_covered_by_a_newer_one_that_says_all_it_says() {
        let now = T0 + 90 * DAY_MS;
        let mut old = memory(
            "old",
            "The office wifi password was changed",
            T0,
            vector(1.0, 1),
        );
        old.importance = 0.0;
        let newer = memory(
            "newer",
            "The office wifi password was changed to a longer one",
            T0 + DAY_MS,
            vector(0.9, 2),
        );
        let mut other = memory(
            "other",
            "The office printer was moved",
            T0 + DAY_MS,
            vector(0.9, 3),
        );
        other.importance = 0.0;
        let snapshot = snapshot(vec![old, newer, other]);
        let prepared = Prepared::new(&snapshot);
        let close = prepared.close_pairs(&settings(), &lexicon());
        let found = detect(&prepared, &close, &[], now, &settings(), &lexicon());
        let covered: Vec<(&str, Vec<String>)> = found
            .iter()
            .map(|s| (s.memory_id.as_str(), s.covered_by.clone()))
            .collect();
        assert!(
            covered.contains(&("old", vec!["newer".to_owned()])),
            "{covered:?}"
        );
        assert!(covered.contains(&("other", vec![])), "{covered:?}");
    }
}
