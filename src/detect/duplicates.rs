//! Duplicates: the same normalised text, or near-duplicates by cosine
//! similarity at or above the (tier-adjusted) duplicate threshold, grouped by
//! deterministic complete linkage, so every pair in a cluster clears the
//! threshold. Every pair of a cluster is also aligned ([`super::align`]): a
//! pair that conflicts ("The user prefers dark mode" / "… does not prefer
//! dark mode" score 0.97), swaps a fact ("lives in Berlin" / "works in
//! Berlin", 0.91) or where each side has details the other lacks is never
//! put in one cluster, so a merge loses nothing: some member's text covers
//! the others', and those members are the canonical's candidates.

use std::collections::BTreeSet;

use serde::Serialize;

use super::cluster::{Linkage, cluster};
use super::{Contradiction, DetectSettings, Lexicon, Pair, Prepared, round4};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DuplicateCluster {
    /// Member ids in `(created_at, id)` order.
    pub members: Vec<String>,
    /// The least similar pair's cosine (1 for identical text).
    pub min_similarity: f64,
    /// Every member has the same normalised text.
    pub exact: bool,
    /// Members whose text covers every other member's content words.
    pub covering: Vec<String>,
}

pub fn detect(
    prepared: &Prepared<'_>,
    close: &[Pair],
    settings: &DetectSettings,
    contradictions: &[Contradiction],
    lexicon: &Lexicon,
) -> Vec<DuplicateCluster> {
    let conflicting: BTreeSet<(&str, &str)> = contradictions
        .iter()
        .map(|c| (c.first_id.as_str(), c.second_id.as_str()))
        .collect();
    let items = &prepared.items;
    let apart = |i: usize, j: usize| {
        let (a, b) = (items[i].memory.id.as_str(), items[j].memory.id.as_str());
        conflicting.contains(&(a, b))
            || conflicting.contains(&(b, a))
            || (items[i].memory.content_hash != items[j].memory.content_hash
                && prepared.compare(i, j, lexicon).keeps_apart())
    };
    let edges = close
        .iter()
        .filter(|p| p.similarity >= settings.duplicate_threshold)
        .map(|p| (p.first, p.second));
    let groups = cluster(
        items.len(),
        edges,
        |i, j| prepared.similarity(i, j),
        apart,
        settings.duplicate_threshold,
        Linkage::Complete,
    );
    groups
        .into_iter()
        .map(|members| {
            let mut min_similarity = 1.0f64;
            for (n, &i) in members.iter().enumerate() {
                for &j in &members[n + 1..] {
                    min_similarity = min_similarity.min(prepared.similarity(i, j).unwrap_or(0.0));
                }
            }
            let hash = &items[members[0]].memory.content_hash;
            let covering = members
                .iter()
                .filter(|&&i| {
                    members.iter().all(|&j| {
                        i == j
                            || items[i].memory.content_hash == items[j].memory.content_hash
                            || prepared.compare(i, j, lexicon).covers(0)
                    })
                })
                .map(|&i| items[i].memory.id.clone())
                .collect();
            DuplicateCluster {
                covering,
                exact: members
                    .iter()
                    .all(|&i| &items[i].memory.content_hash == hash),
                members: members
                    .iter()
                    .map(|&i| items[i].memory.id.clone())
                    .collect(),
                min_similarity: round4(min_similarity),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::testing::*;
    use crate::detect::{Prepared, contradictions};

    fn run(memories: Vec<crate::model::Memory>) -> Vec<DuplicateCluster> {
        let snapshot = snapshot(memories);
        let prepared = Prepared::new(&snapshot);
        let close = prepared.close_pairs(&settings(), &lexicon());
        let found = contradictions::detect(&prepared, &close, &settings(), &lexicon());
        detect(&prepared, &close, &settings(), &found, &lexicon())
    }

    #[test]
    fn identical_text_is_an_exact_duplicate_without_vectors() {
        let mut a = memory("a", "The API is RESTful.", T0, vec![]);
        let mut b = memory("b", "the api is restful", T0 + 1, vec![]);
        a.embedding = None;
        b.embedding = None;
        let found = run(vec![a, b]);
        assert_eq!(found.len(), 1);
        assert!(found[0].exact);
        assert_eq!(found[0].members, vec!["a", "b"]);
    }

    #[test]
    fn near_duplicates_cluster_above_the_threshold_only() {
        let found = run(vec![
            memory("a", "API uses REST", T0, vector(1.0, 1)),
            memory("b", "The API is RESTful", T0 + 1, vector(0.80, 2)),
            memory("c", "Deploys happen on Fridays", T0 + 2, vector(0.10, 3)),
        ]);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].members, vec!["a", "b"]);
        assert!(!found[0].exact);
        assert!((found[0].min_similarity - 0.80).abs() < 1e-3);
    }

    #[test]
    fn contradicting_pairs_are_never_merged() {
        let found = run(vec![
            memory("a", "The user prefers dark mode", T0, vector(1.0, 1)),
            memory(
                "b",
                "The user does not prefer dark mode",
                T0 + 1,
                vector(0.99, 2),
            ),
        ]);
        assert!(found.is_empty(), "{found:?}");
    }
}
