//! Topic names by event type, and creating missing topics at start-up.

use std::collections::BTreeMap;
use std::time::Duration;

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::types::RDKafkaErrorCode;

use super::KafkaError;
use super::client::{LogContext, client_config, creation_error};
use crate::config::KafkaConfig;
use crate::event::EventType;

/// Refuses input topics with different partition counts (`counts`: each
/// input topic that exists, and its count). A user's events are keyed by
/// user id, and the same key goes to the same partition number only among
/// topics of one count: otherwise a user's creations and reads arrive on
/// different partitions, which engram takes for another writer.
pub fn check_co_partitioned(counts: &BTreeMap<String, usize>) -> Result<(), KafkaError> {
    let mut distinct: Vec<usize> = counts.values().copied().collect();
    distinct.sort_unstable();
    distinct.dedup();
    if distinct.len() <= 1 {
        return Ok(());
    }
    let listed: Vec<String> = counts
        .iter()
        .map(|(topic, count)| format!("`{topic}` has {count} partitions"))
        .collect();
    Err(KafkaError::NotCoPartitioned(format!(
        "{}; one user's events would arrive on different partition numbers. Give every \
         input topic the same partition count (kafka-topics.sh --alter --partitions N), \
         then start engram again",
        listed.join(", ")
    )))
}

/// Which topic each event type is read from or written to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Topics {
    by_type: BTreeMap<EventType, String>,
}

impl Topics {
    /// Input topics may be shared by several input types; output topics must
    /// be distinct from the input topics (engram would consume its own output).
    pub fn from_config(config: &KafkaConfig) -> Result<Self, KafkaError> {
        let names = [
            (EventType::MemoryCreated, &config.topic_memory_created),
            (EventType::MemoryAccessed, &config.topic_memory_accessed),
            (
                EventType::ConsolidationRequested,
                &config.topic_consolidation_requested,
            ),
            (EventType::MemoryUpdated, &config.topic_memory_updated),
            (EventType::MemoryDeleted, &config.topic_memory_deleted),
            (EventType::UserErased, &config.topic_user_erased),
            (
                EventType::ConsolidationTriggered,
                &config.topic_consolidation_triggered,
            ),
            (EventType::PatternExtracted, &config.topic_pattern_extracted),
            (
                EventType::ContradictionDetected,
                &config.topic_contradiction_detected,
            ),
            (
                EventType::ConsolidationCompleted,
                &config.topic_consolidation_completed,
            ),
            (
                EventType::ConsolidationUndone,
                &config.topic_consolidation_undone,
            ),
            (EventType::MemoryRevised, &config.topic_memory_revised),
            (
                EventType::UserErasureCompleted,
                &config.topic_user_erasure_completed,
            ),
            (EventType::DeadLetter, &config.topic_dlq),
        ];
        let mut by_type = BTreeMap::new();
        for (event_type, name) in names {
            let name = name.trim();
            if name.is_empty() {
                return Err(KafkaError::Config(format!(
                    "the topic for {} must not be empty",
                    event_type.name()
                )));
            }
            by_type.insert(event_type, name.to_owned());
        }
        let topics = Self { by_type };
        let inputs = topics.inputs();
        for (event_type, name) in &topics.by_type {
            if !event_type.is_input() && inputs.contains(name) {
                return Err(KafkaError::Config(format!(
                    "topic `{name}` is both an input and the output topic for {}",
                    event_type.name()
                )));
            }
        }
        Ok(topics)
    }

    pub fn topic(&self, event_type: EventType) -> &str {
        self.by_type.get(&event_type).map_or("", String::as_str)
    }

    /// Distinct input topics, sorted.
    pub fn inputs(&self) -> Vec<String> {
        self.carried().into_keys().collect()
    }

    /// Each input topic and the input types it carries.
    pub fn carried(&self) -> BTreeMap<String, Vec<EventType>> {
        let mut carried: BTreeMap<String, Vec<EventType>> = BTreeMap::new();
        for (event_type, name) in &self.by_type {
            if event_type.is_input() {
                carried.entry(name.clone()).or_default().push(*event_type);
            }
        }
        carried
    }

    /// Every distinct topic, sorted.
    pub fn all(&self) -> Vec<String> {
        let mut all: Vec<String> = self.by_type.values().cloned().collect();
        all.sort();
        all.dedup();
        all
    }
}

/// Creates the topics that do not exist yet; existing ones are left alone.
pub async fn create_missing(config: &KafkaConfig, topics: &Topics) -> Result<(), KafkaError> {
    let admin: AdminClient<LogContext> = client_config(config, &[])?
        .create_with_context(LogContext)
        .map_err(|e| creation_error("admin client", e))?;
    let names = topics.all();
    let new_topics: Vec<NewTopic<'_>> = names
        .iter()
        .map(|name| {
            NewTopic::new(
                name,
                config.topic_partitions,
                TopicReplication::Fixed(config.topic_replication),
            )
        })
        .collect();
    let options = AdminOptions::new().operation_timeout(Some(Duration::from_secs(30)));
    let results = admin
        .create_topics(&new_topics, &options)
        .await
        .map_err(|e| KafkaError::client("creating topics failed", e))?;
    for result in results {
        match result {
            Ok(name) => {
                tracing::info!(topic = %name, partitions = config.topic_partitions, "topic created")
            }
            Err((_, RDKafkaErrorCode::TopicAlreadyExists)) => {}
            Err((name, code)) => {
                return Err(KafkaError::client(
                    format!("cannot create topic `{name}`"),
                    rdkafka::error::KafkaError::AdminOp(code),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_topics_must_share_one_partition_count() {
        let counts = |pairs: &[(&str, usize)]| -> BTreeMap<String, usize> {
            pairs.iter().map(|(t, n)| ((*t).to_owned(), *n)).collect()
        };
        assert!(check_co_partitioned(&counts(&[("a", 4), ("b", 4)])).is_ok());
        assert!(check_co_partitioned(&counts(&[("a", 4)])).is_ok());
        assert!(check_co_partitioned(&counts(&[])).is_ok());
        let error = check_co_partitioned(&counts(&[("a", 4), ("b", 6)]))
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("`a` has 4 partitions, `b` has 6 partitions"),
            "{error}"
        );
    }

    #[test]
    fn default_topics_follow_the_event_names() {
        let topics = Topics::from_config(&KafkaConfig::default()).unwrap();
        assert_eq!(
            topics.inputs(),
            [
                "consolidation.requested",
                "memory.accessed",
                "memory.created",
                "memory.deleted",
                "memory.updated",
                "user.erased"
            ]
        );
        assert_eq!(topics.topic(EventType::DeadLetter), "engram.dlq");
        assert_eq!(
            topics.topic(EventType::ConsolidationUndone),
            "consolidation.undone"
        );
        assert_eq!(topics.all().len(), 14);
    }

    #[test]
    fn one_topic_may_carry_every_input_type() {
        let config = KafkaConfig {
            topic_memory_created: "agent.memory".to_owned(),
            topic_memory_accessed: "agent.memory".to_owned(),
            topic_consolidation_requested: "agent.memory".to_owned(),
            topic_memory_updated: "agent.memory".to_owned(),
            topic_memory_deleted: "agent.memory".to_owned(),
            topic_user_erased: "agent.memory".to_owned(),
            ..KafkaConfig::default()
        };
        let topics = Topics::from_config(&config).unwrap();
        assert_eq!(topics.inputs(), ["agent.memory"]);
        assert_eq!(topics.carried()["agent.memory"].len(), 6);
    }

    #[test]
    fn an_output_topic_may_not_be_an_input() {
        let config = KafkaConfig {
            topic_dlq: "memory.created".to_owned(),
            ..KafkaConfig::default()
        };
        let error = Topics::from_config(&config).unwrap_err().to_string();
        assert!(error.contains("both an input and the output"), "{error}");
    }
}
