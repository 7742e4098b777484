//! Prometheus metrics, and decorators that measure the store, the embedder
//! and the output sink from the outside, so none of them knows about metrics.
//!
//! Consolidation counters come from the `consolidation.completed` events as
//! they are emitted, and rejections from the dead letters: the metrics count
//! exactly what the audit trail says. (A replay after a crash emits a run's
//! events again with the same ids; the counters then count it twice, as a
//! consumer of the topic would see it twice.)

use std::sync::Arc;
use std::time::Instant;

use prometheus::core::Collector;
use prometheus::{
    Encoder, Histogram, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge,
    IntGaugeVec, Opts, Registry, TextEncoder,
};

use crate::embed::{EmbedError, Embedder};
use crate::emit::{OutputSink, SinkError};
use crate::event::{Event, RunMode};
use crate::model::{Link, Memory, RunReport, UserState};
use crate::pipeline::RunSummary;
use crate::salience::SalienceState;
use crate::store::{Store, StoreError, WriteBatch};

/// Every metric engram exports, registered in its own registry.
pub struct Metrics {
    registry: Registry,
    /// Records fetched from the broker, by topic.
    pub consumed: IntCounterVec,
    pub applied: IntCounterVec,
    pub replayed: IntCounter,
    /// Reads that arrived before their memory and were parked.
    pub reads_parked: IntCounter,
    /// Parked reads applied when their memory was created.
    pub reads_unparked: IntCounter,
    pub rejected: IntCounterVec,
    /// Valid events with nothing to do (an edit or deletion of an unknown
    /// memory, a stale edit, a repeated erasure), by kind.
    pub ignored: IntCounterVec,
    pub outputs: IntCounterVec,
    pub delivery_failures: IntCounter,
    /// Output events the broker refused for good (too large, not allowed);
    /// each stops its partition.
    pub undeliverable: IntCounter,
    /// Input batches (or resumptions) that failed and were retried.
    pub batch_failures: IntCounter,
    /// Partitions stopped by an error that no retry fixes.
    pub partitions_stopped: IntCounter,
    pub consumer_lag: IntGaugeVec,
    pub partitions_assigned: IntGauge,
    pub store_commit_seconds: Histogram,
    pub store_commit_failures: IntCounter,
    pub embedding_batch_texts: Histogram,
    pub embedding_batch_seconds: Histogram,
    pub cycle_seconds: HistogramVec,
    pub actions: IntCounterVec,
}

/// The action counters and the `consolidation.completed` count each comes from.
const ACTIONS: [&str; 7] = [
    "merged",
    "contradiction",
    "pattern",
    "superseded",
    "archived",
    "split",
    "promoted",
];

impl Metrics {
    pub fn new() -> Result<Self, prometheus::Error> {
        let registry = Registry::new_custom(Some("engram".into()), None)?;
        let seconds = |name: &str, help: &str, buckets: Vec<f64>| {
            Histogram::with_opts(HistogramOpts::new(name, help).buckets(buckets))
        };
        let metrics = Self {
            consumed: IntCounterVec::new(
                Opts::new("events_consumed_total", "Input records fetched, by topic"),
                &["topic"],
            )?,
            applied: IntCounterVec::new(
                Opts::new(
                    "events_applied_total",
                    "Input events applied to state, by event type",
                ),
                &["type"],
            )?,
            replayed: IntCounter::new(
                "events_replayed_total",
                "Input events skipped because their offset was already applied",
            )?,
            reads_parked: IntCounter::new(
                "reads_parked_total",
                "Reads that arrived before their memory and wait for it",
            )?,
            reads_unparked: IntCounter::new(
                "reads_unparked_total",
                "Parked reads applied when their memory was created",
            )?,
            rejected: IntCounterVec::new(
                Opts::new(
                    "events_rejected_total",
                    "Input records sent to the dead-letter topic, by source topic and reason",
                ),
                &["topic", "reason"],
            )?,
            ignored: IntCounterVec::new(
                Opts::new(
                    "events_ignored_total",
                    "Input events with nothing to do (unknown memory, stale edit, repeated \
                     erasure), by kind",
                ),
                &["kind"],
            )?,
            outputs: IntCounterVec::new(
                Opts::new("output_events_total", "Output events emitted, by type"),
                &["type"],
            )?,
            delivery_failures: IntCounter::new(
                "output_delivery_failures_total",
                "Output deliveries that failed (retried unless refused for good)",
            )?,
            undeliverable: IntCounter::new(
                "output_undeliverable_total",
                "Output events the broker refused for good (each stops its partition)",
            )?,
            batch_failures: IntCounter::new(
                "batch_failures_total",
                "Input batches (or resumptions after a failure) that failed",
            )?,
            partitions_stopped: IntCounter::new(
                "partitions_stopped_total",
                "Partitions stopped by an error that retrying cannot fix",
            )?,
            consumer_lag: IntGaugeVec::new(
                Opts::new(
                    "consumer_lag",
                    "Records between the partition's high-water mark (from fetch responses) and the next offset engram will commit",
                ),
                &["topic", "partition"],
            )?,
            partitions_assigned: IntGauge::new(
                "partitions_assigned",
                "Input partitions this instance owns",
            )?,
            store_commit_seconds: seconds(
                "store_commit_seconds",
                "Time to make one flush durable in the store",
                prometheus::exponential_buckets(0.0005, 2.0, 16)?,
            )?,
            store_commit_failures: IntCounter::new(
                "store_commit_failures_total",
                "Store flushes that failed (and were retried)",
            )?,
            embedding_batch_texts: Histogram::with_opts(
                HistogramOpts::new("embedding_batch_texts", "Texts per embedding model call")
                    .buckets(prometheus::exponential_buckets(1.0, 2.0, 10)?),
            )?,
            embedding_batch_seconds: seconds(
                "embedding_batch_seconds",
                "Time of one embedding model call",
                prometheus::exponential_buckets(0.001, 2.0, 16)?,
            )?,
            cycle_seconds: HistogramVec::new(
                HistogramOpts::new(
                    "cycle_duration_seconds",
                    "Duration of consolidation cycles, by mode",
                )
                .buckets(prometheus::exponential_buckets(0.001, 2.0, 18)?),
                &["mode"],
            )?,
            actions: IntCounterVec::new(
                Opts::new(
                    "consolidation_actions_total",
                    "What executed cycles did: merged, contradiction, pattern, superseded, archived, split, promoted",
                ),
                &["action"],
            )?,
            registry,
        };
        metrics.register()?;
        for action in ACTIONS {
            // Present from the start, at zero, so dashboards see every series.
            metrics.actions.with_label_values(&[action]);
        }
        Ok(metrics)
    }

    fn register(&self) -> Result<(), prometheus::Error> {
        let r = &self.registry;
        r.register(Box::new(self.consumed.clone()))?;
        r.register(Box::new(self.applied.clone()))?;
        r.register(Box::new(self.replayed.clone()))?;
        r.register(Box::new(self.reads_parked.clone()))?;
        r.register(Box::new(self.reads_unparked.clone()))?;
        r.register(Box::new(self.rejected.clone()))?;
        r.register(Box::new(self.ignored.clone()))?;
        r.register(Box::new(self.outputs.clone()))?;
        r.register(Box::new(self.delivery_failures.clone()))?;
        r.register(Box::new(self.undeliverable.clone()))?;
        r.register(Box::new(self.batch_failures.clone()))?;
        r.register(Box::new(self.partitions_stopped.clone()))?;
        r.register(Box::new(self.consumer_lag.clone()))?;
        r.register(Box::new(self.partitions_assigned.clone()))?;
        r.register(Box::new(self.store_commit_seconds.clone()))?;
        r.register(Box::new(self.store_commit_failures.clone()))?;
        r.register(Box::new(self.embedding_batch_texts.clone()))?;
        r.register(Box::new(self.embedding_batch_seconds.clone()))?;
        r.register(Box::new(self.cycle_seconds.clone()))?;
        r.register(Box::new(self.actions.clone()))
    }

    /// The Prometheus text exposition of every metric.
    pub fn render(&self) -> String {
        let mut buffer = Vec::new();
        if let Err(error) = TextEncoder::new().encode(&self.registry.gather(), &mut buffer) {
            tracing::warn!(%error, "cannot encode the metrics");
        }
        String::from_utf8_lossy(&buffer).into_owned()
    }

    /// Logs the running totals (periodically and at shutdown), from the same
    /// counters `/metrics` exports.
    pub fn log_totals(&self, message: &str) {
        let sum = |counters: &IntCounterVec| -> u64 {
            counters
                .collect()
                .iter()
                .flat_map(|family| family.get_metric())
                .map(|metric| metric.get_counter().get_value() as u64)
                .sum()
        };
        tracing::info!(
            consumed = sum(&self.consumed),
            applied = sum(&self.applied),
            replayed = self.replayed.get(),
            rejected = sum(&self.rejected),
            outputs = sum(&self.outputs),
            delivery_failures = self.delivery_failures.get(),
            undeliverable = self.undeliverable.get(),
            batch_failures = self.batch_failures.get(),
            partitions_stopped = self.partitions_stopped.get(),
            "{message}"
        );
    }

    /// Counts what one processed batch applied and skipped.
    pub fn record_summary(&self, summary: &RunSummary) {
        for (event_type, count) in &summary.applied {
            self.applied
                .with_label_values(&[event_type.as_str()])
                .inc_by(*count);
        }
        for (kind, count) in &summary.ignored {
            self.ignored
                .with_label_values(&[kind.as_str()])
                .inc_by(*count);
        }
        self.replayed.inc_by(summary.replayed);
        self.reads_parked.inc_by(summary.parked);
        self.reads_unparked.inc_by(summary.unparked);
    }

    /// Counts one emitted output event.
    pub fn record_output(&self, event: &Event) {
        self.outputs
            .with_label_values(&[event.event_type().name()])
            .inc();
        match event {
            Event::DeadLetter(letter) => self
                .rejected
                .with_label_values(&[letter.source_topic.as_str(), letter.error_kind.as_str()])
                .inc(),
            Event::ConsolidationCompleted(done) => {
                let mode = match done.mode {
                    RunMode::DryRun => "dry_run",
                    RunMode::Execute => "execute",
                };
                self.cycle_seconds
                    .with_label_values(&[mode])
                    .observe(done.duration_ms.max(0) as f64 / 1_000.0);
                if done.mode == RunMode::Execute {
                    let c = &done.counts;
                    let counts = [
                        c.duplicates_merged,
                        c.contradictions_found,
                        c.patterns_extracted,
                        c.superseded,
                        c.archived,
                        c.split,
                        c.promoted,
                    ];
                    for (action, count) in ACTIONS.iter().zip(counts) {
                        self.actions
                            .with_label_values(&[action])
                            .inc_by(count.max(0) as u64);
                    }
                }
            }
            _ => {}
        }
    }
}

/// An output sink that counts what passes through it.
pub struct MeteredSink<S> {
    inner: S,
    metrics: Arc<Metrics>,
}

impl<S> MeteredSink<S> {
    pub fn new(inner: S, metrics: Arc<Metrics>) -> Self {
        Self { inner, metrics }
    }
}

impl<S: OutputSink> OutputSink for MeteredSink<S> {
    fn emit(&mut self, event: &Event) -> Result<(), SinkError> {
        self.inner.emit(event)?;
        self.metrics.record_output(event);
        Ok(())
    }

    fn flush(&mut self) -> Result<(), SinkError> {
        self.inner.flush()
    }
}

/// An embedder that times its model calls and records their sizes.
pub struct MeteredEmbedder {
    inner: Arc<dyn Embedder>,
    metrics: Arc<Metrics>,
}

impl MeteredEmbedder {
    pub fn new(inner: Arc<dyn Embedder>, metrics: Arc<Metrics>) -> Self {
        Self { inner, metrics }
    }
}

impl Embedder for MeteredEmbedder {
    fn dimension(&self) -> usize {
        self.inner.dimension()
    }

    fn embed(&self, texts: &[&str], sub_batch: usize) -> Result<Vec<Vec<f32>>, EmbedError> {
        let started = Instant::now();
        let result = self.inner.embed(texts, sub_batch);
        self.metrics
            .embedding_batch_seconds
            .observe(started.elapsed().as_secs_f64());
        self.metrics
            .embedding_batch_texts
            .observe(texts.len() as f64);
        result
    }

    fn token_lengths(&self, texts: &[&str]) -> Vec<usize> {
        self.inner.token_lengths(texts)
    }
}

/// A store that times its flushes and counts the failed ones.
pub struct MeteredStore {
    inner: Arc<dyn Store>,
    metrics: Arc<Metrics>,
}

impl MeteredStore {
    pub fn new(inner: Arc<dyn Store>, metrics: Arc<Metrics>) -> Self {
        Self { inner, metrics }
    }
}

impl Store for MeteredStore {
    fn commit(&self, batch: &WriteBatch) -> Result<(), StoreError> {
        let started = Instant::now();
        let result = self.inner.commit(batch);
        match &result {
            Ok(()) => self
                .metrics
                .store_commit_seconds
                .observe(started.elapsed().as_secs_f64()),
            Err(_) => self.metrics.store_commit_failures.inc(),
        }
        result
    }

    fn ping(&self) -> Result<(), StoreError> {
        self.inner.ping()
    }

    fn memory(&self, user_id: &str, memory_id: &str) -> Result<Option<Memory>, StoreError> {
        self.inner.memory(user_id, memory_id)
    }

    fn embedding_for_hash(
        &self,
        user_id: &str,
        content_hash: &str,
    ) -> Result<Option<Vec<f32>>, StoreError> {
        self.inner.embedding_for_hash(user_id, content_hash)
    }

    fn memories_by_id(&self, user_id: &str, ids: &[&str]) -> Result<Vec<Memory>, StoreError> {
        self.inner.memories_by_id(user_id, ids)
    }

    fn saliences_by_id(
        &self,
        user_id: &str,
        ids: &[&str],
    ) -> Result<Vec<(String, SalienceState)>, StoreError> {
        self.inner.saliences_by_id(user_id, ids)
    }

    fn memories(&self, user_id: &str) -> Result<Vec<Memory>, StoreError> {
        self.inner.memories(user_id)
    }

    fn links_of(&self, user_id: &str, memory_id: &str) -> Result<Vec<Link>, StoreError> {
        self.inner.links_of(user_id, memory_id)
    }

    fn links(&self, user_id: &str) -> Result<Vec<Link>, StoreError> {
        self.inner.links(user_id)
    }

    fn user_state(&self, user_id: &str) -> Result<Option<UserState>, StoreError> {
        self.inner.user_state(user_id)
    }

    fn users(&self) -> Result<Vec<String>, StoreError> {
        self.inner.users()
    }

    fn waiting_users(&self, sources: &[String]) -> Result<Vec<String>, StoreError> {
        self.inner.waiting_users(sources)
    }

    fn run_report(&self, user_id: &str, run_id: &str) -> Result<Option<RunReport>, StoreError> {
        self.inner.run_report(user_id, run_id)
    }

    fn find_run_report(&self, run_id: &str) -> Result<Option<RunReport>, StoreError> {
        self.inner.find_run_report(run_id)
    }

    fn run_reports(&self, user_id: &str) -> Result<Vec<RunReport>, StoreError> {
        self.inner.run_reports(user_id)
    }

    fn erased_at(&self, user_id: &str) -> Result<Option<i64>, StoreError> {
        self.inner.erased_at(user_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{ConsolidationCompleted, DeadLetter, RunCounts};
    use chrono::{TimeZone, Utc};

    fn completed(mode: RunMode, merged: i64) -> Event {
        Event::ConsolidationCompleted(ConsolidationCompleted {
            event_id: "e".into(),
            user_id: "u".into(),
            run_id: "r".into(),
            mode,
            config_hash: "h".into(),
            started_at: Utc.timestamp_millis_opt(0).unwrap(),
            duration_ms: 1_500,
            counts: RunCounts {
                duplicates_merged: merged,
                archived: 2,
                ..RunCounts::default()
            },
            actions: vec![],
            warnings: vec![],
        })
    }

    #[test]
    fn executed_cycles_count_their_actions_and_dry_runs_only_their_time() {
        let metrics = Metrics::new().unwrap();
        metrics.record_output(&completed(RunMode::Execute, 3));
        metrics.record_output(&completed(RunMode::DryRun, 7));
        let text = metrics.render();
        assert!(
            text.contains("engram_consolidation_actions_total{action=\"merged\"} 3"),
            "{text}"
        );
        assert!(text.contains("engram_consolidation_actions_total{action=\"archived\"} 2"));
        assert!(text.contains("engram_consolidation_actions_total{action=\"split\"} 0"));
        assert!(text.contains("engram_cycle_duration_seconds_count{mode=\"dry_run\"} 1"));
        assert!(text.contains("engram_cycle_duration_seconds_sum{mode=\"execute\"} 1.5"));
        assert!(text.contains("engram_output_events_total{type=\"consolidation.completed\"} 2"));
    }

    #[test]
    fn dead_letters_count_as_rejections_by_topic_and_reason() {
        let metrics = Metrics::new().unwrap();
        let letter = Event::DeadLetter(DeadLetter {
            event_id: "d".into(),
            source_topic: "memory.created".into(),
            partition: Some(0),
            offset: 4,
            error_kind: "missing_field".into(),
            reason: "no user_id".into(),
            original: vec![1, 2],
            rejected_at: Utc.timestamp_millis_opt(0).unwrap(),
            original_length: None,
            original_sha256: None,
        });
        metrics.record_output(&letter);
        metrics.record_output(&letter);
        assert!(metrics.render().contains(
            "engram_events_rejected_total{reason=\"missing_field\",topic=\"memory.created\"} 2"
        ));
    }

    #[test]
    fn ignored_events_count_by_kind_without_a_user_label() {
        let metrics = Metrics::new().unwrap();
        let mut summary = RunSummary::default();
        summary.ignored.insert("stale_update".into(), 2);
        summary.ignored.insert("unknown_memory".into(), 1);
        metrics.record_summary(&summary);
        let text = metrics.render();
        assert!(
            text.contains("engram_events_ignored_total{kind=\"stale_update\"} 2"),
            "{text}"
        );
        assert!(text.contains("engram_events_ignored_total{kind=\"unknown_memory\"} 1"));
        assert!(!text.contains("user"), "no metric is labelled by user");
    }
}
