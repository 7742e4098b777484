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
//! merges); a higher archive threshold lets more faded memories go. The
//! configuration maps to a tier's plain settings in `cycle::CycleSettings`,
//! so the planner never reads the configuration itself.

use serde::{Deserialize, Serialize};

use crate::config::Checks;
use crate::model::Memory;
pub use crate::model::Tier;

/// The tiers' section of `[consolidation]` (flattened into it): the budget
/// and where each tier starts, with its thresholds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BudgetConfig {
    /// Per-user budget in estimated tokens (characters / 4).
    pub token_budget: u64,
    /// Budget shares where the selective and aggressive tiers start.
    pub selective_at: f64,
    pub aggressive_at: f64,
    pub selective_duplicate_threshold: f64,
    pub aggressive_duplicate_threshold: f64,
    pub selective_archive_threshold: f64,
    pub aggressive_archive_threshold: f64,
}

impl Default for BudgetConfig {
    fn default() -> Self {
        Self {
            token_budget: 200_000,
            selective_at: 0.3,
            aggressive_at: 0.5,
            selective_duplicate_threshold: 0.75,
            aggressive_duplicate_threshold: 0.72,
            selective_archive_threshold: 0.15,
            aggressive_archive_threshold: 0.2,
        }
    }
}

impl BudgetConfig {
    /// The user's tier for `tokens` used of the budget.
    pub fn tier(&self, tokens: u64) -> Tier {
        let share = tokens as f64 / self.token_budget.max(1) as f64;
        if share >= self.aggressive_at {
            Tier::Aggressive
        } else if share >= self.selective_at {
            Tier::Selective
        } else {
            Tier::Gentle
        }
    }

    /// The duplicate and archive thresholds of `tier`; the gentle tier's
    /// are the detectors' own.
    pub fn thresholds(&self, tier: Tier, gentle: (f64, f64)) -> (f64, f64) {
        match tier {
            Tier::Gentle => gentle,
            Tier::Selective => (
                self.selective_duplicate_threshold,
                self.selective_archive_threshold,
            ),
            Tier::Aggressive => (
                self.aggressive_duplicate_threshold,
                self.aggressive_archive_threshold,
            ),
        }
    }

    pub(crate) fn check(&self, checks: &mut Checks) {
        for (key, value) in [
            ("selective_at", self.selective_at),
            ("aggressive_at", self.aggressive_at),
            (
                "selective_duplicate_threshold",
                self.selective_duplicate_threshold,
            ),
            (
                "aggressive_duplicate_threshold",
                self.aggressive_duplicate_threshold,
            ),
            (
                "selective_archive_threshold",
                self.selective_archive_threshold,
            ),
            (
                "aggressive_archive_threshold",
                self.aggressive_archive_threshold,
            ),
        ] {
            checks.unit(&format!("consolidation.{key}"), value);
        }
    }
}

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
}
