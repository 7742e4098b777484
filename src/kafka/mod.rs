//! Service mode: engram as a member of a Kafka consumer group (DESIGN.md §1,
//! §6). [`consume`] polls and commits, a [`worker`] per partition runs the
//! same [`Pipeline`](crate::pipeline::Pipeline) as embedded mode, and
//! [`produce`] delivers the output events.
//!
//! Delivery is at-least-once with idempotent state: an input offset is
//! committed only after the events before it are applied in the store and
//! their outputs acknowledged by the broker; replays are skipped by the
//! per-user, per-partition watermarks stored with the state, and outputs
//! carry deterministic ids.

mod client;
mod consume;
mod produce;
mod topics;
mod worker;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use dashmap::DashMap;
use thiserror::Error;
use tokio::runtime::Handle;
use tokio::sync::Semaphore;

pub use client::LogContext;
pub use produce::{KafkaSink, OutputProducer};
pub use topics::{Topics, create_missing};

use crate::clock::ClockMode;
use crate::config::{Config, KafkaConfig};
use crate::cycle::CycleSettings;
use crate::embed::{BatcherConfig, EmbedBatcher, Embedder, EmbeddingConfig};
use crate::event::{EventCodec, WireFormat};
use crate::http::{self, Health, HttpState};
use crate::index::IndexConfig;
use crate::metrics::Metrics;
use crate::pipeline::{Decoding, RunSummary};
use crate::store::Store;

#[derive(Debug, Error)]
pub enum KafkaError {
    #[error("invalid Kafka configuration: {0}")]
    Config(String),
    #[error("Kafka client error: {0}")]
    Client(String),
    #[error("cannot encode an output event: {0}")]
    Encode(String),
    #[error("output delivery failed: {0}")]
    Delivery(String),
}

/// Running totals of one instance, logged periodically and at shutdown.
#[derive(Debug, Default)]
pub struct Stats {
    pub consumed: AtomicU64,
    pub applied: AtomicU64,
    pub replayed: AtomicU64,
    pub rejected: AtomicU64,
    pub produced: AtomicU64,
    pub delivery_failures: AtomicU64,
    /// Batches (or resumptions) that failed and were retried.
    pub failures: AtomicU64,
    pub cycles: AtomicU64,
    pub batches: AtomicU64,
}

impl Stats {
    fn add(&self, summary: &RunSummary) {
        self.applied
            .fetch_add(summary.applied_total(), Ordering::Relaxed);
        self.replayed.fetch_add(summary.replayed, Ordering::Relaxed);
        self.rejected
            .fetch_add(summary.rejected_total(), Ordering::Relaxed);
        self.cycles
            .fetch_add(summary.cycles.values().sum(), Ordering::Relaxed);
        self.batches.fetch_add(1, Ordering::Relaxed);
    }

    pub fn log(&self, message: &str) {
        let get = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        tracing::info!(
            consumed = get(&self.consumed),
            applied = get(&self.applied),
            replayed = get(&self.replayed),
            rejected = get(&self.rejected),
            produced = get(&self.produced),
            delivery_failures = get(&self.delivery_failures),
            failures = get(&self.failures),
            cycles = get(&self.cycles),
            batches = get(&self.batches),
            "{message}"
        );
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
    stats: Arc<Stats>,
    metrics: Arc<Metrics>,
    health: Arc<Health>,
}

/// The pieces of a service instance that are built outside this module.
pub struct ServiceParts {
    pub store: Arc<dyn Store>,
    pub settings: CycleSettings,
    pub embedder: Option<Arc<dyn Embedder>>,
    pub metrics: Arc<Metrics>,
    /// Where to serve `/healthz`, `/readyz`, `/metrics` and the API; `None`:
    /// nowhere.
    pub http_bind: Option<String>,
}

fn wire_format(name: &str, key: &str, auto: bool) -> Result<Option<WireFormat>, KafkaError> {
    match name {
        "json" => Ok(Some(WireFormat::Json)),
        "avro" => Ok(Some(WireFormat::Avro)),
        "auto" if auto => Ok(None),
        other => Err(KafkaError::Config(format!(
            "{key} must be {}json or avro, not `{other}`",
            if auto { "auto, " } else { "" }
        ))),
    }
}

/// Runs the service until `shutdown` is set (the binary sets it on SIGTERM
/// or SIGINT): creates topics if configured to, joins the group, processes,
/// and on the way out finishes in-flight batches, commits and leaves.
pub fn run(
    config: &Config,
    parts: ServiceParts,
    shutdown: Arc<AtomicBool>,
) -> Result<Arc<Stats>, KafkaError> {
    let kafka = &config.kafka;
    let topics = Topics::from_config(kafka)?;
    let input_format = wire_format(&kafka.input_format, "kafka.input_format", true)?;
    let output_format = wire_format(&kafka.output_format, "kafka.output_format", false)?
        .unwrap_or(WireFormat::Avro);
    let codec = EventCodec::new(config.limits)
        .map_err(|e| KafkaError::Config(format!("event schemas: {e}")))?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("engram-io")
        .build()
        .map_err(|e| KafkaError::Client(format!("cannot start the runtime: {e}")))?;
    if kafka.create_topics {
        runtime.block_on(create_missing(kafka, &topics))?;
    }
    let stats = Arc::new(Stats::default());
    let producer = Arc::new(OutputProducer::new(
        kafka,
        codec.clone(),
        topics.clone(),
        output_format,
        Arc::clone(&stats),
        Arc::clone(&parts.metrics),
    )?);
    let health = Arc::new(Health::service());
    if let Some(bind) = &parts.http_bind {
        http::spawn(
            bind,
            HttpState {
                metrics: Arc::clone(&parts.metrics),
                health: Arc::clone(&health),
                store: Arc::clone(&parts.store),
                requests: Some(Arc::clone(&producer)),
                report_wait: Duration::from_secs(30),
                max_id_bytes: config.limits.max_id_bytes,
                token: config.http.required_token(),
            },
            runtime.handle(),
        )
        .map_err(|e| KafkaError::Config(e.to_string()))?;
    }
    let batcher = parts.embedder.as_ref().map(|embedder| {
        let _guard = runtime.enter();
        EmbedBatcher::spawn(
            Arc::clone(embedder),
            BatcherConfig {
                max_batch: config.embedding.max_batch,
                max_wait: Duration::from_millis(config.embedding.max_wait_ms),
                sub_batch: config.embedding.sub_batch(),
                bucketing: true,
            },
        )
    });
    let carried: BTreeMap<_, _> = topics.carried();
    let shared = Arc::new(Shared {
        config: kafka.clone(),
        codec,
        store: parts.store,
        settings: parts.settings,
        embedding_config: config.embedding.clone(),
        index_config: config.index.clone(),
        embedder: parts.embedder,
        batcher,
        producer,
        decoding: Decoding::Topics {
            format: input_format,
            carried: Arc::new(carried),
        },
        clock_mode: config.pipeline.clock,
        topics,
        cycles: Arc::new(Semaphore::new(kafka.max_concurrent_cycles.max(1))),
        runtime: runtime.handle().clone(),
        offsets: DashMap::new(),
        stats: Arc::clone(&stats),
        metrics: parts.metrics,
        health,
    });
    consume::consume(Arc::clone(&shared), &shutdown)?;
    shared.producer.flush(Duration::from_secs(10));
    stats.log("engram service stopped");
    drop(shared);
    runtime.shutdown_timeout(Duration::from_secs(5));
    Ok(stats)
}
