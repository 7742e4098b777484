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

use crate::model::Memory;
pub use crate::model::Tier;

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
