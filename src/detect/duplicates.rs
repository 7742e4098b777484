//! Duplicates: the same normalised text, or near-duplicates by cosine
//! similarity at or above the (tier-adjusted) duplicate threshold, grouped by
//! deterministic complete linkage, so every pair in a cluster clears the
//! threshold. Every pair of a cluster is also aligned ([`super::align`]): a
//! pair that conflicts ("The user prefers dark mode" / "… does not prefer
//! dark mode" score 0.97), swaps a fact ("lives in Berlin" / "works in
//! Berlin", 0.91), trades roles ("a cheetah … behind its prey" / "a prey …
//! behind the cheetah") or adds more than a few words of its own is never
//! put in one cluster ([`Prepared::mergeable`]). So a merge loses nothing:
//! some member's text covers the others' and those members are the
//! canonical's candidates, or, when each has a detail of its own, the
//! canonical's text gets the others' details appended ([`super::fuse`]).

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::cluster::{Linkage, cluster};
use super::pairs::parallel_map;
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
    /// When no member covers the others: each member's text with the
    /// other members' details appended, the text it gets as canonical.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub fused: BTreeMap<String, String>,
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
                && !prepared.mergeable(i, j, settings, lexicon))
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
    // Each cluster's texts are fused on their own, so clusters are shared
    // out over the cores.
    parallel_map(&groups, |members| {
        let mut min_similarity = 1.0f64;
        for (n, &i) in members.iter().enumerate() {
            for &j in &members[n + 1..] {
                min_similarity = min_similarity.min(prepared.similarity(i, j).unwrap_or(0.0));
            }
        }
        let hash = &items[members[0]].memory.content_hash;
        let mut covering = Vec::new();
        let mut fused = BTreeMap::new();
        for &i in members {
            // A member covers those whose details the alignment finds in
            // its text, the reading that let them merge; only the rest
            // have phrases to append.
            let uncovered: Vec<usize> = members
                .iter()
                .copied()
                .filter(|&j| {
                    items[j].memory.content_hash != items[i].memory.content_hash
                        && prepared.adds_details(j, i, lexicon)
                })
                .collect();
            match prepared.fused(i, &uncovered, lexicon) {
                None => covering.push(items[i].memory.id.clone()),
                Some(text) => {
                    fused.insert(items[i].memory.id.clone(), text);
                }
            }
        }
        if !covering.is_empty() {
            fused.clear();
        }
        DuplicateCluster {
            covering,
            fused,
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
    fn texts_longer_than_the_rules_read_merge_only_when_the_same() {
        // Past the words the rules read, one added sentence cannot be told
        // a detail from a change of fact: the two stay apart. The same
        // text, however long, is one memory.
        let long = vec!["The team ships the parser on Fridays."; 40].join(" ");
        let added = format!("{long} It was late once.");
        let found = run(vec![
            memory("a", &long, T0, vector(1.0, 1)),
            memory("b", &added, T0 + 1, vector(0.99, 2)),
        ]);
        assert!(found.is_empty(), "{found:?}");
        let found = run(vec![
            memory("a", &long, T0, vector(1.0, 1)),
            memory("b", &long, T0 + 1, vector(1.0, 1)),
        ]);
        assert_eq!(found.len(), 1);
        assert!(found[0].exact);
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
    fn a_detail_on_each_side_merges_with_a_fused_text_for_each_candidate() {
        let found = run(vec![
            memory("a", "In March Gina opened her studio", T0, vector(1.0, 1)),
            memory(
                "b",
                "Gina opened her studio downtown",
                T0 + 1,
                vector(0.95, 2),
            ),
        ]);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].covering.is_empty());
        assert_eq!(
            found[0].fused["a"],
            "In March Gina opened her studio (also: downtown)"
        );
        assert_eq!(
            found[0].fused["b"],
            "Gina opened her studio downtown (also: In March)"
        );
        let mut off = settings();
        off.fuse_merges = false;
        let snapshot = snapshot(vec![
            memory("a", "In March Gina opened her studio", T0, vector(1.0, 1)),
            memory(
                "b",
                "Gina opened her studio downtown",
                T0 + 1,
                vector(0.95, 2),
            ),
        ]);
        let prepared = Prepared::new(&snapshot);
        let close = prepared.close_pairs(&off, &lexicon());
        assert!(detect(&prepared, &close, &off, &[], &lexicon()).is_empty());
    }

    #[test]
    fn details_next_to_the_same_word_keep_a_pair_apart() {
        // "in March" and "downtown" both follow "studio": they may be two
        // values of one attribute, so nothing is fused.
        let found = run(vec![
            memory("a", "Gina opened her studio in March", T0, vector(1.0, 1)),
            memory(
                "b",
                "Gina opened her studio downtown",
                T0 + 1,
                vector(0.95, 2),
            ),
        ]);
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn negated_texts_with_a_detail_each_are_not_fused() {
        let found = run(vec![
            memory(
                "a",
                "In March Gina never opened her studio",
                T0,
                vector(1.0, 1),
            ),
            memory(
                "b",
                "Gina never opened her studio downtown",
                T0 + 1,
                vector(0.95, 2),
            ),
        ]);
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn a_member_that_carries_every_word_is_the_covering_candidate() {
        let found = run(vec![
            memory("a", "Gina opened her studio", T0, vector(1.0, 1)),
            memory(
                "b",
                "Gina opened her studio downtown in March",
                T0 + 1,
                vector(0.9, 2),
            ),
        ]);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].covering, vec!["b"]);
        assert!(found[0].fused.is_empty());
    }

    #[test]
    fn a_member_the_alignment_finds_covering_is_covering_for_the_text_too() {
        // "You" after "Priya!" opens a sentence. The alignment pairs it
        // with the other text's "you", so "a" adds nothing to "b", and "b"
        // is the canonical as written: no fused text that appends "b"'s
        // words to "a"'s.
        let found = run(vec![
            memory(
                "a",
                "Congrats, Priya! You too! Drive safely!",
                T0,
                vector(1.0, 1),
            ),
            memory(
                "b",
                "Congrats, Priya. Thank you for everything. Drive safely tonight!",
                T0 + 1,
                vector(0.9, 2),
            ),
        ]);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].covering, vec!["b"], "{found:?}");
        assert!(found[0].fused.is_empty());
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
