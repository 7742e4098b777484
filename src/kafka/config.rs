//! The `[kafka]` section: the broker, the topics and how the stream is
//! consumed and committed, with its own checks.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::config::{Checks, InputFormat, OrderBy};
use crate::duration;
use crate::event::WireFormat;

/// Service mode (docs/design.md §1, §6, §8): the broker, the topics and how the
/// stream is consumed and committed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct KafkaConfig {
    /// Bootstrap servers; empty means embedded mode (file/stdin input).
    pub brokers: String,
    pub group_id: String,
    /// librdkafka's `security.protocol`: plaintext, ssl, sasl_plaintext, sasl_ssl.
    pub security_protocol: String,
    pub sasl_mechanism: String,
    pub sasl_username: String,
    pub sasl_password: String,
    pub ssl_ca_location: String,
    pub ssl_certificate_location: String,
    pub ssl_key_location: String,
    pub ssl_key_password: String,
    /// Any other librdkafka properties, `key=value` separated by commas; they
    /// apply to the consumer and the producer alike.
    pub client_properties: String,
    /// Input topics. Names may repeat: one topic can carry several input
    /// types (each message then says its type), which also orders them.
    pub topic_memory_created: String,
    pub topic_memory_accessed: String,
    pub topic_consolidation_requested: String,
    /// Platform edits, deletions and erasures: keyed by `user_id` and
    /// co-partitioned with the others like every input.
    pub topic_memory_updated: String,
    pub topic_memory_deleted: String,
    pub topic_user_erased: String,
    /// Output topics.
    pub topic_consolidation_triggered: String,
    pub topic_pattern_extracted: String,
    pub topic_contradiction_detected: String,
    pub topic_consolidation_completed: String,
    /// Written by `engram undo`, not by the service.
    pub topic_consolidation_undone: String,
    /// What engram rewrote after a deletion or edit (the deletion's
    /// confirmation), and the confirmation of a user's erasure.
    pub topic_memory_revised: String,
    pub topic_user_erasure_completed: String,
    pub topic_dlq: String,
    /// `auto` (Avro single-object encoding when a message starts with its
    /// marker, JSON otherwise), `json` or `avro`.
    pub input_format: InputFormat,
    /// `avro` or `json`.
    pub output_format: WireFormat,
    /// How engram's producer picks the partition of a keyed event it puts
    /// into the input stream (HTTP consolidation requests). It must match
    /// the platform's producers, or a user's events arrive on two
    /// partitions: `murmur2_random` is the Java and Go clients' default.
    pub partitioner: String,
    /// Create missing topics at start-up with these settings.
    pub create_topics: bool,
    pub topic_partitions: i32,
    pub topic_replication: i32,
    /// Where a new consumer group starts: earliest or latest.
    pub auto_offset_reset: String,
    #[serde(with = "duration")]
    pub session_timeout: Duration,
    #[serde(with = "duration")]
    pub heartbeat_interval: Duration,
    /// A partition's pending events are applied and made durable after this
    /// many events, this many texts to embed, or this long after the first,
    /// whichever comes first.
    pub flush_max_events: usize,
    /// Texts (creations, edits of content) in one flush: embedding is most
    /// of their cost, so a backlog of creations flushes after this many
    /// rather than after `flush_max_events` of them.
    pub flush_max_texts: usize,
    #[serde(with = "duration")]
    pub flush_interval: Duration,
    /// Durable offsets are committed to the group at this interval (and on
    /// every revoke and at shutdown).
    #[serde(with = "duration")]
    pub commit_interval: Duration,
    /// Events prefetched but not yet taken by the partition's worker; above
    /// it the client stops fetching that partition until the worker catches
    /// up (librdkafka's `queued.min.messages`).
    pub max_in_flight_per_partition: usize,
    /// Consolidation cycles running at once in this instance.
    pub max_concurrent_cycles: usize,
    /// How often each partition checks for scheduled cycles that are due.
    #[serde(with = "duration")]
    pub schedule_check: Duration,
    /// What orders one partition's records across the input topics (as
    /// Kafka Streams orders a task's co-partitioned inputs): `event_time`,
    /// the time the event states, or `timestamp`, the record's Kafka
    /// timestamp (producer or broker time).
    pub order_by: OrderBy,
    /// How long a worker holds back the other topics' records while one
    /// input topic's partition has nothing fetched and is not known to be at
    /// its end; then it goes on without it.
    #[serde(with = "duration")]
    pub max_idle: Duration,
}

impl Default for KafkaConfig {
    fn default() -> Self {
        Self {
            brokers: String::new(),
            group_id: "engram".to_owned(),
            security_protocol: "plaintext".to_owned(),
            sasl_mechanism: String::new(),
            sasl_username: String::new(),
            sasl_password: String::new(),
            ssl_ca_location: String::new(),
            ssl_certificate_location: String::new(),
            ssl_key_location: String::new(),
            ssl_key_password: String::new(),
            client_properties: String::new(),
            topic_memory_created: "memory.created".to_owned(),
            topic_memory_accessed: "memory.accessed".to_owned(),
            topic_consolidation_requested: "consolidation.requested".to_owned(),
            topic_memory_updated: "memory.updated".to_owned(),
            topic_memory_deleted: "memory.deleted".to_owned(),
            topic_user_erased: "user.erased".to_owned(),
            topic_consolidation_triggered: "consolidation.triggered".to_owned(),
            topic_pattern_extracted: "pattern.extracted".to_owned(),
            topic_contradiction_detected: "contradiction.detected".to_owned(),
            topic_consolidation_completed: "consolidation.completed".to_owned(),
            topic_consolidation_undone: "consolidation.undone".to_owned(),
            topic_memory_revised: "memory.revised".to_owned(),
            topic_user_erasure_completed: "user.erasure.completed".to_owned(),
            topic_dlq: "engram.dlq".to_owned(),
            input_format: InputFormat::Auto,
            output_format: WireFormat::Avro,
            partitioner: "murmur2_random".to_owned(),
            create_topics: false,
            topic_partitions: 6,
            topic_replication: 1,
            auto_offset_reset: "earliest".to_owned(),
            session_timeout: Duration::from_secs(10),
            heartbeat_interval: Duration::from_secs(3),
            flush_max_events: 20_000,
            flush_max_texts: 5_000,
            flush_interval: Duration::from_millis(200),
            commit_interval: Duration::from_secs(1),
            max_in_flight_per_partition: 50_000,
            max_concurrent_cycles: 1,
            schedule_check: Duration::from_secs(1),
            order_by: OrderBy::EventTime,
            max_idle: Duration::from_millis(500),
        }
    }
}

impl KafkaConfig {
    /// Adds what is out of range to `checks`; topic settings count only
    /// where `uses_broker`.
    pub(crate) fn check(&self, uses_broker: bool, checks: &mut Checks) {
        checks.at_least("kafka.flush_max_events", self.flush_max_events, 1);
        checks.at_least("kafka.flush_max_texts", self.flush_max_texts, 1);
        checks.at_least("kafka.max_concurrent_cycles", self.max_concurrent_cycles, 1);
        checks.one_of(
            "kafka.auto_offset_reset",
            &self.auto_offset_reset,
            &["earliest", "latest"],
        );
        checks.one_of(
            "kafka.security_protocol",
            &self.security_protocol.to_ascii_lowercase(),
            &["plaintext", "ssl", "sasl_plaintext", "sasl_ssl"],
        );
        checks.one_of(
            "kafka.partitioner",
            &self.partitioner,
            &[
                "murmur2_random",
                "murmur2",
                "consistent_random",
                "consistent",
                "fnv1a_random",
                "fnv1a",
                "random",
            ],
        );
        // GSSAPI (Kerberos) needs Cyrus libsasl2, which this build leaves out.
        if self
            .security_protocol
            .to_ascii_lowercase()
            .starts_with("sasl_")
        {
            checks.one_of(
                "kafka.sasl_mechanism",
                &self.sasl_mechanism.to_ascii_uppercase(),
                &["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"],
            );
        }
        if uses_broker {
            checks.at_least("kafka.topic_partitions", self.topic_partitions, 1);
            checks.at_least("kafka.topic_replication", self.topic_replication, 1);
        }
    }
}
