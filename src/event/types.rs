//! Rust types for every event. Their serde form is the JSON-lines form; the
//! Avro form is derived from it through the schemas in `schemas/`.

use base64::Engine as _;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::model::MemoryKind;

pub type Timestamp = DateTime<Utc>;

/// Every event type, named as its default topic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EventType {
    MemoryCreated,
    MemoryAccessed,
    ConsolidationRequested,
    ConsolidationTriggered,
    PatternExtracted,
    ContradictionDetected,
    ConsolidationCompleted,
    ConsolidationUndone,
    DeadLetter,
}

impl EventType {
    pub const ALL: [EventType; 9] = [
        EventType::MemoryCreated,
        EventType::MemoryAccessed,
        EventType::ConsolidationRequested,
        EventType::ConsolidationTriggered,
        EventType::PatternExtracted,
        EventType::ContradictionDetected,
        EventType::ConsolidationCompleted,
        EventType::ConsolidationUndone,
        EventType::DeadLetter,
    ];

    /// The `type` field in JSON and the default topic name.
    pub fn name(self) -> &'static str {
        match self {
            EventType::MemoryCreated => "memory.created",
            EventType::MemoryAccessed => "memory.accessed",
            EventType::ConsolidationRequested => "consolidation.requested",
            EventType::ConsolidationTriggered => "consolidation.triggered",
            EventType::PatternExtracted => "pattern.extracted",
            EventType::ContradictionDetected => "contradiction.detected",
            EventType::ConsolidationCompleted => "consolidation.completed",
            EventType::ConsolidationUndone => "consolidation.undone",
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
    #[serde(rename = "engram.dlq")]
    DeadLetter(DeadLetter),
}

impl Event {
    pub fn event_type(&self) -> EventType {
        match self {
            Event::MemoryCreated(_) => EventType::MemoryCreated,
            Event::MemoryAccessed(_) => EventType::MemoryAccessed,
            Event::ConsolidationRequested(_) => EventType::ConsolidationRequested,
            Event::ConsolidationTriggered(_) => EventType::ConsolidationTriggered,
            Event::PatternExtracted(_) => EventType::PatternExtracted,
            Event::ContradictionDetected(_) => EventType::ContradictionDetected,
            Event::ConsolidationCompleted(_) => EventType::ConsolidationCompleted,
            Event::ConsolidationUndone(_) => EventType::ConsolidationUndone,
            Event::DeadLetter(_) => EventType::DeadLetter,
        }
    }

    pub fn event_id(&self) -> &str {
        match self {
            Event::MemoryCreated(e) => &e.event_id,
            Event::MemoryAccessed(e) => &e.event_id,
            Event::ConsolidationRequested(e) => &e.event_id,
            Event::ConsolidationTriggered(e) => &e.event_id,
            Event::PatternExtracted(e) => &e.event_id,
            Event::ContradictionDetected(e) => &e.event_id,
            Event::ConsolidationCompleted(e) => &e.event_id,
            Event::ConsolidationUndone(e) => &e.event_id,
            Event::DeadLetter(e) => &e.event_id,
        }
    }

    /// The partitioning key. Dead letters have no user: they are keyed by
    /// their source position instead.
    pub fn user_id(&self) -> Option<&str> {
        match self {
            Event::MemoryCreated(e) => Some(&e.user_id),
            Event::MemoryAccessed(e) => Some(&e.user_id),
            Event::ConsolidationRequested(e) => Some(&e.user_id),
            Event::ConsolidationTriggered(e) => Some(&e.user_id),
            Event::PatternExtracted(e) => Some(&e.user_id),
            Event::ContradictionDetected(e) => Some(&e.user_id),
            Event::ConsolidationCompleted(e) => Some(&e.user_id),
            Event::ConsolidationUndone(e) => Some(&e.user_id),
            Event::DeadLetter(_) => None,
        }
    }

    /// The time the event is about; drives stream time (docs/design.md §9).
    pub fn occurred_at(&self) -> Timestamp {
        match self {
            Event::MemoryCreated(e) => e.created_at,
            Event::MemoryAccessed(e) => e.accessed_at,
            Event::ConsolidationRequested(e) => e.requested_at,
            Event::ConsolidationTriggered(e) => e.triggered_at,
            Event::PatternExtracted(e) => e.extracted_at,
            Event::ContradictionDetected(e) => e.detected_at,
            Event::ConsolidationCompleted(e) => e.started_at,
            Event::ConsolidationUndone(e) => e.undone_at,
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
    pub event_id: String,
    pub user_id: String,
    pub memory_id: String,
    pub accessed_at: Timestamp,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
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
