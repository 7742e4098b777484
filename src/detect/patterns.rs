//! Patterns: recurring episodes become one semantic memory.
//!
//! Active episodic memories created within the look-back window, not already
//! an instance of a pattern, are grouped by average linkage at
//! `pattern_similarity`: episodes of one habit are worded differently ("Ran
//! cargo test before committing the login change" / "Before committing, the
//! user ran the full test suite" score 0.30–0.68; each of ten such episodes
//! averages 0.42–0.64 against the others), so a topic-level grouping is
//! needed, while unrelated episodes stay below 0.26. Groups of at least
//! `pattern_min_size` become patterns. The text is the medoid's (the member
//! most similar to all others), tidied: deterministic and in the user's words.

use std::collections::BTreeSet;

use serde::Serialize;

use super::cluster::{Linkage, cluster};
use super::{DAY_MS, DetectSettings, Prepared, round4, similar_pairs};
use crate::model::{Link, LinkType, MemoryKind, Millis};
use crate::text::tidy;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PatternCluster {
    /// Episode ids in `(created_at, id)` order.
    pub members: Vec<String>,
    pub medoid_id: String,
    /// Mean pairwise cosine of the members.
    pub cohesion: f64,
    /// The deterministic text of the pattern memory.
    pub content: String,
}

pub fn detect(
    prepared: &Prepared<'_>,
    links: &[Link],
    now: Millis,
    settings: &DetectSettings,
) -> Vec<PatternCluster> {
    let already: BTreeSet<&str> = links
        .iter()
        .filter(|l| l.link_type == LinkType::InstanceOf)
        .map(|l| l.from_id.as_str())
        .collect();
    let since = now.saturating_sub(settings.lookback_days as i64 * DAY_MS);
    let episodes: Vec<usize> = prepared
        .items
        .iter()
        .enumerate()
        .filter(|(_, item)| {
            let m = item.memory;
            m.kind == MemoryKind::Episodic
                && (since..=now).contains(&m.created_at())
                && !already.contains(m.id.as_str())
        })
        .map(|(i, _)| i)
        .collect();
    let similarity = |a: usize, b: usize| prepared.similarity(episodes[a], episodes[b]);
    let local = |i: usize| episodes.binary_search(&i).unwrap_or(usize::MAX);
    let edges: Vec<(usize, usize)> = similar_pairs(
        prepared,
        &episodes,
        settings.pattern_similarity,
        settings.pair_search,
    )
    .into_iter()
    .map(|p| (local(p.first), local(p.second)))
    .collect();
    let groups = cluster(
        episodes.len(),
        edges,
        similarity,
        |_, _| false,
        settings.pattern_similarity,
        Linkage::Average,
    );
    groups
        .into_iter()
        .filter(|group| group.len() >= settings.pattern_min_size.max(2))
        .map(|group| {
            let mut total = 0.0;
            let mut pairs = 0usize;
            let mut best = (f64::NEG_INFINITY, group[0]);
            for &i in &group {
                let sum: f64 = group
                    .iter()
                    .filter(|&&j| j != i)
                    .map(|&j| similarity(i, j).unwrap_or(0.0))
                    .sum();
                total += sum;
                pairs += group.len() - 1;
                if sum > best.0 {
                    best = (sum, i);
                }
            }
            let item = |i: usize| prepared.items[episodes[i]].memory;
            PatternCluster {
                members: group.iter().map(|&i| item(i).id.clone()).collect(),
                medoid_id: item(best.1).id.clone(),
                cohesion: round4(total / pairs.max(1) as f64),
                content: tidy(&item(best.1).content),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::testing::*;

    fn episode(
        id: &str,
        content: &str,
        at: Millis,
        similarity: f64,
        axis: usize,
    ) -> crate::model::Memory {
        let mut m = memory(id, content, at, vector(similarity, axis));
        m.kind = MemoryKind::Episodic;
        m
    }

    #[test]
    fn three_similar_episodes_in_the_window_make_a_pattern() {
        let now = T0 + 3 * DAY_MS;
        let snapshot = snapshot(vec![
            episode(
                "old",
                "Ran tests before committing",
                T0 - 30 * DAY_MS,
                0.9,
                1,
            ),
            episode("a", "Ran the test suite before committing", T0, 0.8, 2),
            episode("b", "Ran  tests before the commit", T0 + 1, 0.9, 3),
            episode("c", "Tests were run before committing", T0 + 2, 0.7, 4),
            episode("x", "Had lunch at the Italian place", T0 + 3, 0.0, 5),
        ]);
        let found = detect(&Prepared::new(&snapshot), &[], now, &settings());
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(
            found[0].members,
            vec!["a", "b", "c"],
            "the 30-day-old one is outside the window"
        );
        assert_eq!(found[0].medoid_id, "b");
        assert_eq!(found[0].content, "Ran tests before the commit");
    }

    #[test]
    fn episodes_already_in_a_pattern_are_not_extracted_again() {
        let now = T0 + DAY_MS;
        let snapshot = snapshot(vec![
            episode("a", "Ran tests", T0, 0.9, 2),
            episode("b", "Ran tests again", T0 + 1, 0.9, 3),
            episode("c", "Ran the tests", T0 + 2, 0.9, 4),
        ]);
        let link = |from: &str| Link {
            user_id: "u".into(),
            from_id: from.into(),
            to_id: "p".into(),
            link_type: LinkType::InstanceOf,
            confidence: 1.0,
            reason: String::new(),
            created_at: T0,
            run_id: None,
        };
        let links = vec![link("a")];
        assert!(detect(&Prepared::new(&snapshot), &links, now, &settings()).is_empty());
    }
}
