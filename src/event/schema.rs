//! The Avro schemas of `schemas/*.avsc`, compiled into the binary and parsed
//! once. They are the single description of each event's wire form.

use std::collections::HashMap;

use apache_avro::Schema;
use apache_avro::rabin::Rabin;
use thiserror::Error;

use super::types::EventType;

#[derive(Debug, Error)]
#[error("schema for `{event}` does not parse: {source}")]
pub struct SchemaError {
    event: &'static str,
    #[source]
    source: Box<apache_avro::Error>,
}

fn schema_text(event: EventType) -> &'static str {
    match event {
        EventType::MemoryCreated => include_str!("../../schemas/memory.created.avsc"),
        EventType::MemoryAccessed => include_str!("../../schemas/memory.accessed.avsc"),
        EventType::MemoryUpdated => include_str!("../../schemas/memory.updated.avsc"),
        EventType::MemoryDeleted => include_str!("../../schemas/memory.deleted.avsc"),
        EventType::UserErased => include_str!("../../schemas/user.erased.avsc"),
        EventType::ConsolidationRequested => {
            include_str!("../../schemas/consolidation.requested.avsc")
        }
        EventType::ConsolidationTriggered => {
            include_str!("../../schemas/consolidation.triggered.avsc")
        }
        EventType::PatternExtracted => include_str!("../../schemas/pattern.extracted.avsc"),
        EventType::ContradictionDetected => {
            include_str!("../../schemas/contradiction.detected.avsc")
        }
        EventType::ConsolidationCompleted => {
            include_str!("../../schemas/consolidation.completed.avsc")
        }
        EventType::ConsolidationUndone => include_str!("../../schemas/consolidation.undone.avsc"),
        EventType::MemoryRevised => include_str!("../../schemas/memory.revised.avsc"),
        EventType::UserErasureCompleted => {
            include_str!("../../schemas/user.erasure.completed.avsc")
        }
        EventType::DeadLetter => include_str!("../../schemas/engram.dlq.avsc"),
    }
}

/// Parsed schemas with their CRC-64-AVRO (Rabin) fingerprints, the key of
/// Avro single-object encoding.
#[derive(Debug)]
pub struct Schemas {
    by_type: HashMap<EventType, (Schema, [u8; 8])>,
    by_fingerprint: HashMap<[u8; 8], EventType>,
}

impl Schemas {
    pub fn load() -> Result<Self, SchemaError> {
        let mut by_type = HashMap::new();
        let mut by_fingerprint = HashMap::new();
        for event in EventType::ALL {
            let schema = Schema::parse_str(schema_text(event)).map_err(|source| SchemaError {
                event: event.name(),
                source: Box::new(source),
            })?;
            let mut fingerprint = [0u8; 8];
            let bytes = schema.fingerprint::<Rabin>().bytes;
            fingerprint.copy_from_slice(&bytes[..8]);
            by_fingerprint.insert(fingerprint, event);
            by_type.insert(event, (schema, fingerprint));
        }
        Ok(Self {
            by_type,
            by_fingerprint,
        })
    }

    /// The schema of an event type. Every type has one: `load` checked.
    pub fn schema(&self, event: EventType) -> Option<&Schema> {
        self.by_type.get(&event).map(|(schema, _)| schema)
    }

    pub fn fingerprint(&self, event: EventType) -> Option<[u8; 8]> {
        self.by_type
            .get(&event)
            .map(|(_, fingerprint)| *fingerprint)
    }

    pub fn event_for_fingerprint(&self, fingerprint: &[u8; 8]) -> Option<EventType> {
        self.by_fingerprint.get(fingerprint).copied()
    }

    /// The schema text as shipped, for `engram schemas` and registries.
    pub fn text(event: EventType) -> &'static str {
        schema_text(event)
    }
}
