//! Rust types for every event. Their serde form is the JSON-lines form; the
//! Avro form is derived from it through the schemas in `schemas/`.

use base64::Engine as _;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::shared_str::SharedStr;
use crate::model::MemoryKind;

pub type Timestamp = DateTime<Utc>;

/// Every event type, named as its default topic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EventType {
    MemoryCreated,
    MemoryAccessed,
    MemoryUpdated,
    MemoryDeleted,
    UserErased,
    ConsolidationRequested,
    ConsolidationTriggered,
    PatternExtracted,
    ContradictionDetected,
    ConsolidationCompleted,
    ConsolidationUndone,
    MemoryRevised,
    UserErasureCompleted,
    DeadLetter,
}

impl EventType {
    pub const ALL: [EventType; 14] = [
        EventType::MemoryCreated,
        EventType::MemoryAccessed,
        EventType::MemoryUpdated,
        EventType::MemoryDeleted,
        EventType::UserErased,
        EventType::ConsolidationRequested,
        EventType::ConsolidationTriggered,
        EventType::PatternExtracted,
        EventType::ContradictionDetected,
        EventType::ConsolidationCompleted,
        EventType::ConsolidationUndone,
        EventType::MemoryRevised,
        EventType::UserErasureCompleted,
        EventType::DeadLetter,
    ];

    /// The `type` field in JSON and the default topic name.
    pub fn name(self) -> &'static str {
        match self {
            EventType::MemoryCreated => "memory.created",
            EventType::MemoryAccessed => "memory.accessed",
            EventType::MemoryUpdated => "memory.updated",
            EventType::MemoryDeleted => "memory.deleted",
            EventType::UserErased => "user.erased",
            EventType::ConsolidationRequested => "consolidation.requested",
            EventType::ConsolidationTriggered => "consolidation.triggered",
            EventType::PatternExtracted => "pattern.extracted",
            EventType::ContradictionDetected => "contradiction.detected",
            EventType::ConsolidationCompleted => "consolidation.completed",
            EventType::ConsolidationUndone => "consolidation.undone",
            EventType::MemoryRevised => "memory.revised",
            EventType::UserErasureCompleted => "user.erasure.completed",
            EventType::DeadLetter => "engram.dlq",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|event| event.name() == name)
    }

    /// Whether engram consumes this type (the others it produces).
    pub fn is_input(self) -> bool {
        matches!(
            self,
            EventType::MemoryCreated
                | EventType::MemoryAccessed
                | EventType::MemoryUpdated
                | EventType::MemoryDeleted
                | EventType::UserErased
                | EventType::ConsolidationRequested
        )
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum Event {
    #[serde(rename = "memory.created")]
    MemoryCreated(MemoryCreated),
    #[serde(rename = "memory.accessed")]
    MemoryAccessed(MemoryAccessed),
    #[serde(rename = "memory.updated")]
    MemoryUpdated(MemoryUpdated),
    #[serde(rename = "memory.deleted")]
    MemoryDeleted(MemoryDeleted),
    #[serde(rename = "user.erased")]
    UserErased(UserErased),
    #[serde(rename = "consolidation.requested")]
    ConsolidationRequested(ConsolidationRequested),
    #[serde(rename = "consolidation.triggered")]
    ConsolidationTriggered(ConsolidationTriggered),
    #[serde(rename = "pattern.extracted")]
    PatternExtracted(PatternExtracted),
    #[serde(rename = "contradiction.detected")]
    ContradictionDetected(ContradictionDetected),
    #[serde(rename = "consolidation.completed")]
    ConsolidationCompleted(ConsolidationCompleted),
    #[serde(rename = "consolidation.undone")]
    ConsolidationUndone(ConsolidationUndone),
    #[serde(rename = "memory.revised")]
    MemoryRevised(MemoryRevised),
    #[serde(rename = "user.erasure.completed")]
    UserErasureCompleted(UserErasureCompleted),
    #[serde(rename = "engram.dlq")]
    DeadLetter(DeadLetter),
}

impl Event {
    pub fn event_type(&self) -> EventType {
        match self {
            Event::MemoryCreated(_) => EventType::MemoryCreated,
            Event::MemoryAccessed(_) => EventType::MemoryAccessed,
            Event::MemoryUpdated(_) => EventType::MemoryUpdated,
            Event::MemoryDeleted(_) => EventType::MemoryDeleted,
            Event::UserErased(_) => EventType::UserErased,
            Event::ConsolidationRequested(_) => EventType::ConsolidationRequested,
            Event::ConsolidationTriggered(_) => EventType::ConsolidationTriggered,
            Event::PatternExtracted(_) => EventType::PatternExtracted,
            Event::ContradictionDetected(_) => EventType::ContradictionDetected,
            Event::ConsolidationCompleted(_) => EventType::ConsolidationCompleted,
            Event::ConsolidationUndone(_) => EventType::ConsolidationUndone,
            Event::MemoryRevised(_) => EventType::MemoryRevised,
            Event::UserErasureCompleted(_) => EventType::UserErasureCompleted,
            Event::DeadLetter(_) => EventType::DeadLetter,
        }
    }

    pub fn event_id(&self) -> &str {
        match self {
            Event::MemoryCreated(e) => &e.event_id,
            Event::MemoryAccessed(e) => &e.event_id,
            Event::MemoryUpdated(e) => &e.event_id,
            Event::MemoryDeleted(e) => &e.event_id,
            Event::UserErased(e) => &e.event_id,
            Event::ConsolidationRequested(e) => &e.event_id,
            Event::ConsolidationTriggered(e) => &e.event_id,
            Event::PatternExtracted(e) => &e.event_id,
            Event::ContradictionDetected(e) => &e.event_id,
            Event::ConsolidationCompleted(e) => &e.event_id,
            Event::ConsolidationUndone(e) => &e.event_id,
            Event::MemoryRevised(e) => &e.event_id,
            Event::UserErasureCompleted(e) => &e.event_id,
            Event::DeadLetter(e) => &e.event_id,
        }
    }

    /// The partitioning key. Dead letters have no user: they are keyed by
    /// their source position instead.
    pub fn user_id(&self) -> Option<&str> {
        match self {
            Event::MemoryCreated(e) => Some(&e.user_id),
            Event::MemoryAccessed(e) => Some(&e.user_id),
            Event::MemoryUpdated(e) => Some(&e.user_id),
            Event::MemoryDeleted(e) => Some(&e.user_id),
            Event::UserErased(e) => Some(&e.user_id),
            Event::ConsolidationRequested(e) => Some(&e.user_id),
            Event::ConsolidationTriggered(e) => Some(&e.user_id),
            Event::PatternExtracted(e) => Some(&e.user_id),
            Event::ContradictionDetected(e) => Some(&e.user_id),
            Event::ConsolidationCompleted(e) => Some(&e.user_id),
            Event::ConsolidationUndone(e) => Some(&e.user_id),
            Event::MemoryRevised(e) => Some(&e.user_id),
            Event::UserErasureCompleted(e) => Some(&e.user_id),
            Event::DeadLetter(_) => None,
        }
    }

    /// The time the event is about; drives stream time (docs/design.md §9).
    pub fn occurred_at(&self) -> Timestamp {
        match self {
            Event::MemoryCreated(e) => e.created_at,
            Event::MemoryAccessed(e) => e.accessed_at,
            Event::MemoryUpdated(e) => e.updated_at,
            Event::MemoryDeleted(e) => e.deleted_at,
            Event::UserErased(e) => e.erased_at,
            Event::ConsolidationRequested(e) => e.requested_at,
            Event::ConsolidationTriggered(e) => e.triggered_at,
            Event::PatternExtracted(e) => e.extracted_at,
            Event::ContradictionDetected(e) => e.detected_at,
            Event::ConsolidationCompleted(e) => e.started_at,
            Event::ConsolidationUndone(e) => e.undone_at,
            Event::MemoryRevised(e) => e.revised_at,
            Event::UserErasureCompleted(e) => e.completed_at,
            Event::DeadLetter(e) => e.rejected_at,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryCreated {
    pub event_id: String,
    pub user_id: String,
    pub memory_id: String,
    pub kind: MemoryKind,
    pub content: String,
    pub created_at: Timestamp,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub importance: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embedding: Option<Vec<f32>>,
}

impl MemoryCreated {
    pub const DEFAULT_IMPORTANCE: f64 = 0.5;

    pub fn importance_or_default(&self) -> f64 {
        self.importance.unwrap_or(Self::DEFAULT_IMPORTANCE)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryAccessed {
    /// The ids of a decoded read share its record's memory.
    pub event_id: SharedStr,
    pub user_id: SharedStr,
    pub memory_id: SharedStr,
    pub accessed_at: Timestamp,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
}

impl MemoryAccessed {
    /// The read with ids of its own ([`SharedStr::detached`]): a parked
    /// read outlives its batch and must not keep its record's block of
    /// payloads alive.
    pub fn detached(&self) -> Self {
        Self {
            event_id: self.event_id.detached(),
            user_id: self.user_id.detached(),
            memory_id: self.memory_id.detached(),
            accessed_at: self.accessed_at,
            context: self.context.clone(),
        }
    }
}

/// The platform edited a memory: each field present replaces the stored
/// one; absent fields stay. engram keeps what it derived (salience, status,
/// provenance).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryUpdated {
    pub event_id: String,
    pub user_id: String,
    pub memory_id: String,
    pub updated_at: Timestamp,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub importance: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<MemoryKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embedding: Option<Vec<f32>>,
}

impl MemoryUpdated {
    /// Whether the event changes anything at all.
    pub fn changes_something(&self) -> bool {
        self.content.is_some()
            || self.importance.is_some()
            || self.kind.is_some()
            || self.category.is_some()
            || self.tags.is_some()
    }
}

/// The platform deleted a memory: engram forgets it and every word that
/// only it gave to another memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryDeleted {
    pub event_id: String,
    pub user_id: String,
    pub memory_id: String,
    pub deleted_at: Timestamp,
}

/// The platform erased a user (a right-to-be-forgotten request): engram
/// removes every row it holds of them and refuses their events from before
/// the erasure for ever after.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserErased {
    pub event_id: String,
    pub user_id: String,
    pub erased_at: Timestamp,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConsolidationRequested {
    pub event_id: String,
    pub user_id: String,
    pub requested_at: Timestamp,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execute: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TriggerReason {
    Threshold,
    Schedule,
    Manual,
    Capacity,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConsolidationTriggered {
    pub event_id: String,
    pub user_id: String,
    pub run_id: String,
    pub reason: TriggerReason,
    pub triggered_at: Timestamp,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PatternExtracted {
    pub event_id: String,
    pub user_id: String,
    pub run_id: String,
    pub pattern_memory_id: String,
    pub content: String,
    pub source_memory_ids: Vec<String>,
    pub extracted_at: Timestamp,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ContradictionResolution {
    Flagged,
    Superseded,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContradictionDetected {
    pub event_id: String,
    pub user_id: String,
    pub run_id: String,
    pub first_memory_id: String,
    pub second_memory_id: String,
    pub confidence: f64,
    pub signals: Vec<String>,
    pub explanation: String,
    pub resolution: ContradictionResolution,
    pub detected_at: Timestamp,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunMode {
    DryRun,
    Execute,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunCounts {
    pub memories_processed: i64,
    pub duplicates_merged: i64,
    pub contradictions_found: i64,
    pub superseded: i64,
    pub patterns_extracted: i64,
    pub archived: i64,
    pub split: i64,
    pub promoted: i64,
    pub links_created: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunAction {
    pub action_id: String,
    #[serde(rename = "type")]
    pub action_type: String,
    pub target_ids: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canonical_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_memory_id: Option<String>,
    pub rule_id: String,
    pub score: f64,
    pub reasons: Vec<String>,
    /// A merge that fused the members' details: the canonical's new text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canonical_content: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConsolidationCompleted {
    pub event_id: String,
    pub user_id: String,
    pub run_id: String,
    pub mode: RunMode,
    pub config_hash: String,
    pub started_at: Timestamp,
    pub duration_ms: i64,
    pub counts: RunCounts,
    pub actions: Vec<RunAction>,
    pub warnings: Vec<String>,
}

/// An executed run was undone (`engram undo`): consumers that mirrored its
/// changes put back the memories it changed and drop the ones it created.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConsolidationUndone {
    /// `<run_id>/undone`: the same undo published again has the same id.
    pub event_id: String,
    pub user_id: String,
    pub run_id: String,
    /// Memories the run changed, each back to its state before the run
    /// except fields changed since (reads and edits stay).
    pub restored_memory_ids: Vec<String>,
    /// Memories the run created (patterns, split pieces), now removed.
    pub removed_memory_ids: Vec<String>,
    pub undone_at: Timestamp,
}

/// Why engram changed or removed memories of its own making.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RevisionCause {
    /// The platform deleted the source memory (this event confirms it).
    Deleted,
    /// The platform edited the source memory's text.
    Updated,
}

/// A memory whose text engram rewrote.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RevisedText {
    pub memory_id: String,
    pub content: String,
}

/// engram changed its own memories (fused canonicals, patterns) because
/// the platform deleted or edited a memory they were built from. For a
/// deletion it is the confirmation: after it, no engram output carries
/// what only the deleted memory said.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryRevised {
    /// `<source event_id>/revised`: the same input gives the same id.
    pub event_id: String,
    pub user_id: String,
    pub memory_id: String,
    pub cause: RevisionCause,
    /// Memories whose text engram rebuilt without the source's old words.
    pub rewritten: Vec<RevisedText>,
    /// Memories engram removed (a pattern or canonical left with nothing
    /// of its own).
    pub removed_memory_ids: Vec<String>,
    pub revised_at: Timestamp,
}

/// A user's erasure is done: engram holds nothing of theirs but the
/// tombstone (a hash of the id and the erasure time).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserErasureCompleted {
    /// `<user.erased event_id>/completed`.
    pub event_id: String,
    pub user_id: String,
    pub erased_at: Timestamp,
    pub completed_at: Timestamp,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeadLetter {
    pub event_id: String,
    pub source_topic: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<i32>,
    pub offset: i64,
    /// Stable machine-readable reason class, e.g. `missing_field`.
    pub error_kind: String,
    pub reason: String,
    /// The rejected bytes, or only their first [`DEAD_LETTER_ORIGINAL_MAX`]
    /// when they were longer (a dead letter must fit in one record).
    #[serde(with = "base64_bytes")]
    pub original: Vec<u8>,
    pub rejected_at: Timestamp,
    /// The original's full length, when `original` holds only its start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original_length: Option<i64>,
    /// sha256 (hex) of the whole original, when `original` holds only its
    /// start and engram read it whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original_sha256: Option<String>,
}

/// The most of a rejected record a dead letter carries: 64 KiB, far below
/// any broker's record limit (1 MB by default) even as base64 JSON.
pub const DEAD_LETTER_ORIGINAL_MAX: usize = 64 * 1024;

/// Bytes as standard base64 in JSON (the DLQ keeps undecodable input intact).
mod base64_bytes {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&super::encode_base64(bytes))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(deserializer)?;
        super::decode_base64(&text).ok_or_else(|| serde::de::Error::custom("invalid base64"))
    }
}

/// Standard base64, as used for Avro `bytes` in the JSON form.
pub(crate) fn encode_base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

pub(crate) fn decode_base64(text: &str) -> Option<Vec<u8>> {
    base64::engine::general_purpose::STANDARD.decode(text).ok()
}
