//! Capacity tiers: how hard consolidation works for a user, by how much of
//! the user's token budget (characters / 4 over active memories) is used.
//!
//! | tier | budget used | duplicate threshold | archive threshold |
//! |---|---|---|---|
//! | gentle | < `selective_at` (30 %) | `duplicate_threshold` | `archive_threshold` |
//! | selective | < `aggressive_at` (50 %) | `selective_duplicate_threshold` | `selective_archive_threshold` |
//! | aggressive | above | `aggressive_duplicate_threshold` | `aggressive_archive_threshold` |
//!
//! A lower duplicate threshold merges looser paraphrases (topic-level
//! merges); a higher archive threshold lets more faded memories go.

use crate::config::ConsolidationConfig;
use crate::detect::{DetectSettings, PairSearch};
use crate::model::Memory;
pub use crate::model::Tier;
use crate::salience::SalienceParams;

/// Estimated tokens of a text.
pub fn tokens(content: &str) -> u64 {
    content.chars().count() as u64 / 4
}

/// Estimated tokens of a user's active memories.
pub fn usage<'a>(memories: impl IntoIterator<Item = &'a Memory>) -> u64 {
    memories
        .into_iter()
        .filter(|m| m.status == crate::model::MemoryStatus::Active)
        .map(|m| tokens(&m.content))
        .sum()
}

impl Tier {
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Gentle => "gentle",
            Tier::Selective => "selective",
            Tier::Aggressive => "aggressive",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        [Tier::Gentle, Tier::Selective, Tier::Aggressive]
            .into_iter()
            .find(|t| t.as_str() == text)
    }

    /// The tier for `tokens` used of the budget.
    pub fn for_usage(tokens: u64, config: &ConsolidationConfig) -> Self {
        let share = tokens as f64 / config.token_budget.max(1) as f64;
        if share >= config.aggressive_at {
            Tier::Aggressive
        } else if share >= config.selective_at {
            Tier::Selective
        } else {
            Tier::Gentle
        }
    }

    /// The detectors' thresholds in this tier.
    pub fn detect_settings(
        self,
        config: &ConsolidationConfig,
        salience: &SalienceParams,
    ) -> DetectSettings {
        let (duplicate_threshold, archive_threshold) = match self {
            Tier::Gentle => (config.duplicate_threshold, config.archive_threshold),
            Tier::Selective => (
                config.selective_duplicate_threshold,
                config.selective_archive_threshold,
            ),
            Tier::Aggressive => (
                config.aggressive_duplicate_threshold,
                config.aggressive_archive_threshold,
            ),
        };
        DetectSettings {
            duplicate_threshold,
            contradiction_min_similarity: config.contradiction_min_similarity,
            change_min_similarity: config.change_min_similarity,
            pattern_similarity: config.pattern_similarity,
            pattern_min_size: config.pattern_min_size,
            lookback_days: config.lookback_days,
            archive_threshold,
            max_age_days: config.max_age_days,
            verbose_min_chars: config.verbose_min_chars,
            verbose_min_age_days: config.verbose_min_age_days,
            verbose_min_accesses: config.verbose_min_accesses,
            pair_search: PairSearch {
                exact_pairs_up_to: config.exact_pairs_up_to,
                pair_probes: config.pair_probes,
            },
            salience: *salience,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiers_follow_the_budget_share() {
        let config = ConsolidationConfig {
            token_budget: 1000,
            ..ConsolidationConfig::default()
        };
        assert_eq!(Tier::for_usage(299, &config), Tier::Gentle);
        assert_eq!(Tier::for_usage(300, &config), Tier::Selective);
        assert_eq!(Tier::for_usage(500, &config), Tier::Aggressive);
        let salience = SalienceParams::default();
        let gentle = Tier::Gentle.detect_settings(&config, &salience);
        let aggressive = Tier::Aggressive.detect_settings(&config, &salience);
        assert!(aggressive.duplicate_threshold < gentle.duplicate_threshold);
        assert!(aggressive.archive_threshold > gentle.archive_threshold);
    }
}
