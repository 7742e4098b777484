//! Service mode: engram as a member of a Kafka consumer group (docs/design.md §1,
//! §6). `consume` polls and commits, a `worker` per partition runs the
//! same [`Pipeline`](crate::pipeline::Pipeline) as embedded mode, and
//! `produce` delivers the output events (private modules: their items are
//! documented with `cargo doc --document-private-items`).
//!
//! Delivery is at-least-once with idempotent state: an input offset is
//! committed only after the events before it are applied in the store and
//! their outputs acknowledged by the broker; replays are skipped by the
//! per-user, per-partition watermarks stored with the state, and outputs
//! carry deterministic ids.

mod batch_queue;
mod client;
mod config;
mod consume;
mod produce;
mod topics;
mod worker;

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use dashmap::DashMap;
use rdkafka::types::RDKafkaErrorCode;
use thiserror::Error;
use tokio::runtime::Handle;
use tokio::sync::Semaphore;

pub use client::{LogContext, check_connection, group_members};
pub use config::KafkaConfig;
pub use produce::{KafkaSink, OutputProducer};
pub use topics::{Topics, create_missing};

use crate::clock::ClockMode;
use crate::config::Config;
use crate::cycle::CycleSettings;
use crate::embed::{EmbedBatcher, Embedder, EmbeddingConfig};
use crate::event::{EventCodec, WireFormat};
use crate::http::Health;
use crate::index::IndexConfig;
use crate::metrics::Metrics;
use crate::pipeline::Decoding;
use crate::store::Store;

#[derive(Debug, Error)]
pub enum KafkaError {
    #[error("invalid Kafka configuration: {0}")]
    Config(String),
    /// A client call failed: creating a client, subscribing, creating topics.
    #[error("{what}")]
    Client {
        what: String,
        #[source]
        source: rdkafka::error::KafkaError,
    },
    #[error("cannot encode an output event")]
    Encode(#[source] crate::event::DecodeError),
    /// Output events still undelivered when the worker was told to stop.
    #[error("{undelivered} output events were not delivered")]
    Delivery {
        undelivered: usize,
        #[source]
        source: rdkafka::error::KafkaError,
    },
    /// The broker refused an output event for good (too large for the
    /// topic, not allowed by an ACL): the batch's offsets are not committed,
    /// since the event would otherwise be lost, and the partition stops.
    #[error("the broker refused output {output} for good")]
    Refused {
        /// `event ID (N bytes) on TOPIC`.
        output: String,
        #[source]
        source: Box<rdkafka::error::KafkaError>,
    },
    /// The brokers refused TLS or authentication: permanent, fix the config.
    #[error("the Kafka brokers refused the connection: {0}")]
    Security(String),
    /// An ACL denies engram's principal something it needs (reading an input
    /// topic, its group): permanent until the ACLs change.
    #[error("Kafka denied access: {0}")]
    Unauthorized(String),
    /// The input topics have different partition counts, so one user's
    /// events would arrive on different partition numbers: permanent until
    /// an operator gives them one count.
    #[error("the input topics are not co-partitioned: {0}")]
    NotCoPartitioned(String),
}

impl KafkaError {
    pub fn client(what: impl Into<String>, source: rdkafka::error::KafkaError) -> Self {
        Self::Client {
            what: what.into(),
            source,
        }
    }

    /// Whether the same call may succeed later.
    pub fn is_transient(&self) -> bool {
        match self {
            Self::Config(_)
            | Self::Encode(_)
            | Self::Security(_)
            | Self::Unauthorized(_)
            | Self::NotCoPartitioned(_)
            | Self::Refused { .. } => false,
            Self::Client { source, .. } | Self::Delivery { source, .. } => {
                produce::is_transient(source)
            }
        }
    }
}

/// What every partition worker shares.
pub(crate) struct Shared {
    config: KafkaConfig,
    codec: EventCodec,
    store: Arc<dyn Store>,
    settings: CycleSettings,
    embedding_config: EmbeddingConfig,
    index_config: IndexConfig,
    embedder: Option<Arc<dyn Embedder>>,
    batcher: Option<EmbedBatcher>,
    producer: Arc<OutputProducer>,
    decoding: Decoding,
    clock_mode: ClockMode,
    topics: Topics,
    /// Bounds the cycles running at once so they cannot starve ingestion.
    cycles: Arc<Semaphore>,
    runtime: Handle,
    /// Next offset to commit per (topic, partition): everything before it is
    /// durable.
    offsets: DashMap<(String, i32), i64>,
    metrics: Arc<Metrics>,
    health: Arc<Health>,
    /// Set when the brokers deny an input topic or the group by ACL: the
    /// consumer stops with this reason rather than poll a partition that
    /// can never move.
    denied: OnceLock<String>,
}

impl Shared {
    /// A consumer error (of a partition's queue, where the caller knows
    /// which): an authorization failure is recorded, and stops the consumer;
    /// anything else is logged, and librdkafka goes on trying.
    fn consumer_error(&self, error: &rdkafka::error::KafkaError, queue: Option<(&str, i32)>) {
        let topic = queue.map(|(topic, _)| topic);
        if !self.note_denied(error, topic) {
            let partition = queue.map(|(_, partition)| partition);
            tracing::warn!(topic, partition, %error, "consumer error");
        }
    }

    /// Records `error` if it is an authorization failure; whether it was.
    fn note_denied(&self, error: &rdkafka::error::KafkaError, topic: Option<&str>) -> bool {
        let Some(code) = error.rdkafka_error_code() else {
            return false;
        };
        let what = match code {
            RDKafkaErrorCode::TopicAuthorizationFailed => match topic {
                Some(topic) => format!("reading input topic `{topic}`"),
                None => format!("reading the input topics {:?}", self.topics.inputs()),
            },
            RDKafkaErrorCode::GroupAuthorizationFailed => {
                format!("joining consumer group `{}`", self.config.group_id)
            }
            RDKafkaErrorCode::ClusterAuthorizationFailed => "a cluster operation".to_owned(),
            _ => return false,
        };
        let reason = format!(
            "{what} is not authorized ({code:?}): an ACL denies engram's principal; it needs \
             Read and Describe on the input topics, Read on its group, and Write and \
             Describe on the output topics"
        );
        tracing::error!(%reason, "stopping: Kafka denied access");
        let _ = self.denied.set(reason);
        true
    }
}

/// What a service instance is made of; the application builds every part
/// (one runtime, the store, the embedder and its batcher, the producer that
/// the HTTP API shares) and this module runs the consumer group with them.
pub struct ServiceParts {
    pub codec: EventCodec,
    pub store: Arc<dyn Store>,
    pub settings: CycleSettings,
    pub embedder: Option<Arc<dyn Embedder>>,
    pub batcher: Option<EmbedBatcher>,
    pub producer: Arc<OutputProducer>,
    pub topics: Topics,
    /// `None`: each record says its format (auto-detected).
    pub input_format: Option<WireFormat>,
    pub metrics: Arc<Metrics>,
    pub health: Arc<Health>,
    /// Where the I/O runs: the producer's deliveries, cycle permits, the
    /// embedding batcher.
    pub runtime: Handle,
}

/// Runs the consumer group until `shutdown` is set (the binary sets it on
/// SIGTERM or SIGINT): joins the group, processes, and on the way out
/// finishes in-flight batches, commits and leaves. Topics are created (if
/// configured to) by the caller, before.
pub fn run(config: &Config, parts: ServiceParts, shutdown: &AtomicBool) -> Result<(), KafkaError> {
    let kafka = &config.kafka;
    let carried: BTreeMap<_, _> = parts.topics.carried();
    let shared = Arc::new(Shared {
        config: kafka.clone(),
        codec: parts.codec,
        store: parts.store,
        settings: parts.settings,
        embedding_config: config.embedding.clone(),
        index_config: config.index.clone(),
        embedder: parts.embedder,
        batcher: parts.batcher,
        producer: parts.producer,
        decoding: Decoding::Topics {
            format: parts.input_format,
            carried: Arc::new(carried),
        },
        clock_mode: config.pipeline.clock,
        topics: parts.topics,
        cycles: Arc::new(Semaphore::new(kafka.max_concurrent_cycles.max(1))),
        runtime: parts.runtime,
        offsets: DashMap::new(),
        metrics: parts.metrics,
        health: parts.health,
        denied: OnceLock::new(),
    });
    consume::consume(Arc::clone(&shared), shutdown)?;
    shared.producer.flush(Duration::from_secs(10));
    shared.metrics.log_totals("engram service stopped");
    Ok(())
}
