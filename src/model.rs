//! The data model of docs/design.md §2: memories, links, per-user state and run reports.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::salience::SalienceState;

pub use crate::clock::Millis;

/// The four kinds of memory an agent platform distinguishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryKind {
    Working,
    Episodic,
    Semantic,
    Procedural,
}

impl MemoryKind {
    pub const ALL: [MemoryKind; 4] = [
        MemoryKind::Working,
        MemoryKind::Episodic,
        MemoryKind::Semantic,
        MemoryKind::Procedural,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            MemoryKind::Working => "working",
            MemoryKind::Episodic => "episodic",
            MemoryKind::Semantic => "semantic",
            MemoryKind::Procedural => "procedural",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| kind.as_str() == text)
    }
}

/// Lifecycle status. Consolidation never hard-deletes: it archives or supersedes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryStatus {
    Active,
    Archived,
    Superseded,
}

impl MemoryStatus {
    pub const ALL: [MemoryStatus; 3] = [
        MemoryStatus::Active,
        MemoryStatus::Archived,
        MemoryStatus::Superseded,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            MemoryStatus::Active => "active",
            MemoryStatus::Archived => "archived",
            MemoryStatus::Superseded => "superseded",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|status| status.as_str() == text)
    }
}

/// One memory of one user, with the salience inputs that travel with it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Memory {
    pub user_id: String,
    pub id: String,
    pub kind: MemoryKind,
    pub category: Option<String>,
    /// Lowercase, sorted, de-duplicated.
    pub tags: Vec<String>,
    pub content: String,
    pub importance: f64,
    pub source: Option<String>,
    /// Hash of the normalised text (see [`crate::text::content_hash`]).
    pub content_hash: String,
    /// L2-normalised embedding; `None` until the embedder has run.
    pub embedding: Option<Vec<f32>>,
    pub status: MemoryStatus,
    pub salience: SalienceState,
    pub merged_from: Vec<String>,
    pub derived_from: Vec<String>,
    /// The consolidation run that last changed this memory.
    pub last_run_id: Option<String>,
    /// Event time of the platform's last `memory.updated` applied to it:
    /// an older update arriving later is skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<Millis>,
}

impl Memory {
    pub fn created_at(&self) -> Millis {
        self.salience.created_at()
    }
}

/// Typed relation between two memories of the same user.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkType {
    Supersedes,
    Contradicts,
    Consolidates,
    InstanceOf,
    SplitFrom,
    Related,
}

impl LinkType {
    pub const ALL: [LinkType; 6] = [
        LinkType::Supersedes,
        LinkType::Contradicts,
        LinkType::Consolidates,
        LinkType::InstanceOf,
        LinkType::SplitFrom,
        LinkType::Related,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            LinkType::Supersedes => "supersedes",
            LinkType::Contradicts => "contradicts",
            LinkType::Consolidates => "consolidates",
            LinkType::InstanceOf => "instance_of",
            LinkType::SplitFrom => "split_from",
            LinkType::Related => "related",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|link| link.as_str() == text)
    }
}

/// A directed, typed link. Stores keep it reachable from both ends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Link {
    pub user_id: String,
    pub from_id: String,
    pub to_id: String,
    pub link_type: LinkType,
    pub confidence: f64,
    pub reason: String,
    pub created_at: Millis,
    pub run_id: Option<String>,
}

/// Per-user bookkeeping kept with the user's memories.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UserState {
    pub user_id: String,
    /// Highest applied input offset per source stream (`topic/partition`, or
    /// the embedded source id). Events at or below it are replays and skipped.
    pub applied_offsets: BTreeMap<String, i64>,
    /// Memories created since the user's last consolidation cycle.
    pub new_since_cycle: u64,
    pub last_cycle_at: Option<Millis>,
    pub last_run_id: Option<String>,
    /// New memories since the last cycle that arrived with a near-duplicate
    /// (cosine ≥ the duplicate threshold) among the user's active memories.
    #[serde(default)]
    pub duplicate_candidates: u64,
    /// What the consolidation triggers track.
    #[serde(default)]
    pub cycle: CycleState,
    /// Reads that arrived before their memory, oldest first: applied when
    /// the memory is created, dead-lettered when they age out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parked_reads: Vec<ParkedRead>,
    /// When the user was last erased (`user.erased`), for a user who came
    /// back after it: their events from at or before it are still refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub erased_at: Option<Millis>,
}

/// A read of a memory the user does not have yet, kept with the user's state
/// (so it is as durable as the watermark that marks it applied) until the
/// memory appears.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParkedRead {
    pub read: crate::event::MemoryAccessed,
    /// Where it came from, for its dead letter if it ages out.
    pub stream: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<i32>,
    pub offset: i64,
    /// Stream time (the latest event time the pipeline had seen, or the
    /// read's own if later) when it was parked: it ages by stream time, so
    /// an outage or a backlog does not age it.
    pub parked_at: Millis,
    /// The wall clock when it was parked: once a service has read all its
    /// input, it ages by the wall clock too (absent in reads parked before
    /// this was kept: `parked_at` stands in).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parked_wall_at: Option<Millis>,
}

impl ParkedRead {
    /// What it adds to its user's stored state, in bytes: its JSON, as the
    /// state is stored (escapes included).
    pub fn stored_bytes(&self) -> usize {
        serde_json::to_vec(self).map_or(usize::MAX, |json| json.len() + 1)
    }

    /// When it was parked by the wall clock (its stream time for reads
    /// parked before that was kept).
    pub fn wall_parked_at(&self) -> Millis {
        self.parked_wall_at.unwrap_or(self.parked_at)
    }
}

/// Capacity tier of a user (see [`crate::plan::Tier`] for the rules).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    #[default]
    Gentle,
    Selective,
    Aggressive,
}

/// Per-user trigger bookkeeping, stored with the user's state.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CycleState {
    /// Estimated tokens (characters / 4) of the user's active memories.
    pub tokens: u64,
    /// The tier the user was in at its last event or cycle.
    pub tier: Tier,
    /// Time of the first event applied since the user's last executed cycle
    /// (`None`: unchanged since); the schedule trigger runs changed users only.
    pub changed_since: Option<Millis>,
    /// Cycles triggered but not yet run. Stored with the event that triggered
    /// them, so a crash in between re-runs them instead of losing them.
    pub pending_runs: Vec<PendingRun>,
}

/// A triggered cycle waiting to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingRun {
    pub run_id: String,
    pub trigger: crate::event::TriggerReason,
    pub mode: crate::event::RunMode,
    pub now: Millis,
}

impl UserState {
    pub fn new(user_id: &str) -> Self {
        Self {
            user_id: user_id.to_owned(),
            ..Self::default()
        }
    }

    /// Whether the user was erased at or after `time`: their erasure
    /// refuses an event of that time, whatever replays it.
    pub fn was_erased_after(&self, time: Millis) -> bool {
        self.erased_at.is_some_and(|erased_at| time <= erased_at)
    }

    /// Whether the event at `offset` of `source` was already applied.
    pub fn already_applied(&self, source: &str, offset: i64) -> bool {
        self.applied_offsets
            .get(source)
            .is_some_and(|&applied| offset <= applied)
    }

    /// Whether the user needs its partition's worker after a restart: a
    /// cycle queued, a change not yet consolidated, or reads waiting for
    /// their memory. The stores index such users by input stream.
    pub fn is_waiting(&self) -> bool {
        !self.cycle.pending_runs.is_empty()
            || self.cycle.changed_since.is_some()
            || !self.parked_reads.is_empty()
    }

    /// The input partition that feeds this user, as its watermarks show
    /// (`topic/partition` keys), when that is one partition other than
    /// `partition`, where an event arrives from watermark key `source`: it
    /// would be a second writer. `None` when the user is new, fed by
    /// `partition`, or (older state) by several partitions already.
    pub fn owner_other_than(&self, source: &str, partition: i32) -> Option<i32> {
        // A user already fed by this very source is fed by `partition`:
        // one lookup settles what every later event of a stream asks.
        if self.applied_offsets.contains_key(source) {
            return None;
        }
        self.owner_partition().filter(|&owner| owner != partition)
    }

    /// The one partition number the user's events have come from (their
    /// watermarks' sources, `topic/partition`); `None` for a user fed by
    /// no partition, or (after a repartitioning) by several.
    pub fn owner_partition(&self) -> Option<i32> {
        let mut owners = self
            .applied_offsets
            .keys()
            .filter_map(|source| partition_of(source));
        let owner = owners.next()?;
        if owners.any(|other| other != owner) {
            return None;
        }
        Some(owner)
    }

    /// What the user's watermarks say of the event at `offset` of
    /// `source` (a `topic/partition` key) from `partition`: whether it was
    /// applied already ([`UserState::already_applied`]), else which other
    /// partition feeds the user ([`UserState::owner_other_than`]), from one
    /// lookup of the source.
    pub fn admission(&self, source: &str, offset: i64, partition: Option<i32>) -> Admission {
        match self.applied_offsets.get(source) {
            Some(&applied) if offset <= applied => Admission::Replayed,
            Some(_) => Admission::New,
            None => match partition.and_then(|p| self.owner_partition().filter(|&o| o != p)) {
                Some(owner) => Admission::FedBy(owner),
                None => Admission::New,
            },
        }
    }

    pub fn mark_applied(&mut self, source: &str, offset: i64) {
        // The key exists after a stream's first event: no allocation per event.
        match self.applied_offsets.get_mut(source) {
            Some(applied) => *applied = (*applied).max(offset),
            None => {
                self.applied_offsets.insert(source.to_owned(), offset);
            }
        }
    }
}

/// An input event as its user's watermarks see it ([`UserState::admission`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// At or below the watermark of its source: applied before.
    Replayed,
    /// The user is fed by this other partition: applying the event would
    /// make a second writer.
    FedBy(i32),
    /// Neither.
    New,
}

/// The partition number at the end of a watermark key (`topic/partition`):
/// what follows the last slash. Every event asks, so the slash is found by
/// a step back from the end, where it is, rather than a general search.
fn partition_of(source: &str) -> Option<i32> {
    let slash = source.bytes().rposition(|b| b == b'/')?;
    source.get(slash + 1..)?.parse().ok()
}

/// The stored record of one consolidation run: what the report said, kept for
/// `report`, `undo` and the HTTP API.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    pub user_id: String,
    pub run_id: String,
    pub started_at: Millis,
    /// The full report as JSON (the `consolidation.completed` payload and more).
    pub report: serde_json::Value,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_owner_is_the_one_partition_the_watermarks_name() {
        let mut state = UserState::new("u");
        let from = |partition: i32| format!("memory.accessed/{partition}");
        assert_eq!(state.owner_other_than(&from(1), 1), None, "a new user");
        state.mark_applied("memory.created/0", 4);
        assert_eq!(state.owner_other_than(&from(0), 0), None);
        assert_eq!(state.owner_other_than(&from(1), 1), Some(0));
        state.mark_applied("memory.accessed/0", 9);
        // Its own source, known or new, and another topic of its partition.
        assert_eq!(state.owner_other_than(&from(0), 0), None);
        assert_eq!(state.owner_other_than("memory.created/0", 0), None);
        assert_eq!(state.owner_other_than("memory.deleted/0", 0), None);
        assert_eq!(state.owner_other_than(&from(1), 1), Some(0));
        // Files and stdin have no partition.
        state.mark_applied("day-1.jsonl", 3);
        assert_eq!(state.owner_other_than(&from(1), 1), Some(0));
        // State from before the check, fed by two partitions: no owner.
        state.mark_applied("memory.created/2", 1);
        assert_eq!(state.owner_other_than(&from(1), 1), None);
        assert_eq!(state.owner_other_than("memory.created/2", 2), None);
    }

    #[test]
    fn a_watermark_key_names_its_partition_as_str_parse_reads_it() {
        for key in [
            "t/0",
            "t/17",
            "a/b/3",
            "t/007",
            "/5",
            "t/+4",
            "t/-1",
            "t/",
            "t",
            "17",
            "t/9x",
            "t/99999999999",
            "t/2147483647",
            "t/2147483648",
            "t/٣",
        ] {
            let expected = key
                .rsplit_once('/')
                .and_then(|(_, n)| n.parse::<i32>().ok());
            assert_eq!(partition_of(key), expected, "{key}");
        }
    }
}
