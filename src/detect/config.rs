//! The detectors' section of `[consolidation]`: similarity floors, fusion,
//! patterns, archiving and long memories, and the pair search. Its keys sit
//! directly under `[consolidation]` (the section is flattened into it).
//! Similarity defaults come from measurements with all-MiniLM-L6-v2
//! (`make eval`, docs/detectors.md).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{DetectSettings, PairSearch};
use crate::config::Checks;
use crate::duration;
use crate::salience::SalienceParams;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DetectConfig {
    pub duplicate_threshold: f64,
    /// When no member of a duplicate cluster carries every other's words,
    /// the canonical's text gets the others' extra phrases appended ("…
    /// (also: told reporters)"); off: such clusters are not merged.
    pub fuse_merges: bool,
    /// Most content words of its own each side of a pair merged by fusion
    /// may have: more is another report of the same event, not the same
    /// fact (measured with `make eval`, `rules/default.toml`).
    pub fuse_max_details: usize,
    pub contradiction_min_similarity: f64,
    /// Lower nominating floor for a pair where one text has a negation or
    /// a change marker: the model scores a denial low against its
    /// statement ("There is no man driving a car" / "A man is driving a
    /// car": 0.58), and a change against the state it replaces ("lives in
    /// Paris" / "moved to London": 0.58).
    pub negation_min_similarity: f64,
    /// Lower floor still where a text denies with a pronoun ("Nobody is
    /// riding a bike" / "Two people are riding a bike": 0.42): the pronoun
    /// stands for the referent, so the denial lacks its noun; and where it
    /// denies existence ("There is no man eating food" / "A man is eating
    /// a pizza": 0.43).
    pub pronoun_denial_min_similarity: f64,
    /// Where a text states a change ("now", "switched to", "left"), the
    /// similarity from which only the knowledge-update rules read the pair
    /// against an older one: a restated fact is often worded far from the
    /// one it replaces (four of the thirty updates of `memory-pairs-dev.tsv`
    /// score 0.38 to 0.48 against it). Below `negation_min_similarity`
    /// nothing else is decided of such a pair.
    pub update_min_similarity: f64,
    pub change_min_similarity: f64,
    /// Cosine every pair of a pattern's episodes reaches (complete linkage;
    /// measured with `make eval`, docs/measurements.md).
    pub pattern_similarity: f64,
    /// Least episodes, on at least as many distinct days, for a pattern.
    pub pattern_min_size: usize,
    /// How far back a cycle looks at episodes for patterns.
    #[serde(with = "duration")]
    pub lookback: Duration,
    pub archive_threshold: f64,
    /// Archive below `archive_threshold` only when unread this long.
    #[serde(with = "duration")]
    pub max_age: Duration,
    pub verbose_min_chars: usize,
    #[serde(with = "duration")]
    pub verbose_min_age: Duration,
    pub verbose_min_accesses: u64,
    /// Up to this many memories a cycle compares every pair; above it, an
    /// inverted-file index blocks the comparisons (docs/pair-search.md).
    pub exact_pairs_up_to: usize,
    /// Lists each memory is compared with above `exact_pairs_up_to`: more
    /// finds more pairs, slower.
    pub pair_probes: usize,
}

impl Default for DetectConfig {
    fn default() -> Self {
        Self {
            duplicate_threshold: 0.78,
            fuse_merges: true,
            fuse_max_details: 3,
            contradiction_min_similarity: 0.60,
            negation_min_similarity: 0.50,
            pronoun_denial_min_similarity: 0.35,
            update_min_similarity: 0.35,
            change_min_similarity: 0.15,
            pattern_similarity: 0.50,
            pattern_min_size: 3,
            lookback: Duration::from_secs(90 * 86_400),
            archive_threshold: 0.1,
            max_age: Duration::from_secs(30 * 86_400),
            verbose_min_chars: 280,
            verbose_min_age: Duration::from_secs(14 * 86_400),
            verbose_min_accesses: 5,
            exact_pairs_up_to: 2_000,
            pair_probes: 16,
        }
    }
}

impl DetectConfig {
    /// The plain settings the detectors take, with a capacity tier's
    /// duplicate and archive thresholds.
    pub fn settings(
        &self,
        (duplicate_threshold, archive_threshold): (f64, f64),
        salience: SalienceParams,
    ) -> DetectSettings {
        DetectSettings {
            duplicate_threshold,
            fuse_merges: self.fuse_merges,
            fuse_max_details: self.fuse_max_details,
            contradiction_min_similarity: self.contradiction_min_similarity,
            negation_min_similarity: self.negation_min_similarity,
            pronoun_denial_min_similarity: self.pronoun_denial_min_similarity,
            update_min_similarity: self.update_min_similarity,
            change_min_similarity: self.change_min_similarity,
            pattern_similarity: self.pattern_similarity,
            pattern_min_size: self.pattern_min_size,
            lookback: duration::millis(self.lookback),
            archive_threshold,
            max_age: duration::millis(self.max_age),
            verbose_min_chars: self.verbose_min_chars,
            verbose_min_age: duration::millis(self.verbose_min_age),
            verbose_min_accesses: self.verbose_min_accesses,
            pair_search: PairSearch {
                exact_pairs_up_to: self.exact_pairs_up_to,
                pair_probes: self.pair_probes,
            },
            salience,
        }
    }

    pub(crate) fn check(&self, checks: &mut Checks) {
        for (key, value) in [
            ("duplicate_threshold", self.duplicate_threshold),
            (
                "contradiction_min_similarity",
                self.contradiction_min_similarity,
            ),
            ("negation_min_similarity", self.negation_min_similarity),
            (
                "pronoun_denial_min_similarity",
                self.pronoun_denial_min_similarity,
            ),
            ("update_min_similarity", self.update_min_similarity),
            ("change_min_similarity", self.change_min_similarity),
            ("pattern_similarity", self.pattern_similarity),
            ("archive_threshold", self.archive_threshold),
        ] {
            checks.unit(&format!("consolidation.{key}"), value);
        }
        checks.at_least("consolidation.pattern_min_size", self.pattern_min_size, 2);
    }
}
