//! One partition's worker: a thread that applies the partition's events in
//! order through the [`Pipeline`], in micro-batches, and records the
//! offsets that are durable (state committed, outputs delivered).
//!
//! A worker owns partition `p` of every input topic: input topics are
//! co-partitioned by `user_id` (the range assignor gives partition `p` of
//! each topic to the same member), so one user's events have one writer.
//!
//! It reads its partitions' own librdkafka queues, so back-pressure is
//! per partition and free: a busy worker stops taking messages, librdkafka
//! stops prefetching that partition at `queued.min.messages`, and other
//! partitions go on. Nothing is paused, so nothing prefetched is dropped and
//! fetched again.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rdkafka::Message;
use rdkafka::consumer::ConsumerContext;
use rdkafka::consumer::base_consumer::PartitionQueue;
use rdkafka::message::OwnedMessage;

use super::Shared;
use super::produce::KafkaSink;
use crate::clock::Clock;
use crate::embed::EMBEDDING_DIM;
use crate::error::Chain;
use crate::index::UserIndexes;
use crate::metrics::MeteredSink;
use crate::pipeline::{Owned, Pipeline, PipelineError, RunSummary};
use crate::source::SourceRecord;

/// Longest sleep between looks at the stop flag and the stray-message inbox.
const WAIT_SLICE: Duration = Duration::from_millis(50);

/// Set by librdkafka when one of the worker's queues becomes non-empty.
#[derive(Default)]
struct Wake {
    ready: Mutex<bool>,
    signal: Condvar,
}

impl Wake {
    fn notify(&self) {
        *self.ready.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.signal.notify_one();
    }

    /// Waits up to `limit` for a notification, and consumes it.
    fn wait(&self, limit: Duration) {
        let mut ready = self.ready.lock().unwrap_or_else(|e| e.into_inner());
        if !*ready {
            ready = self
                .signal
                .wait_timeout(ready, limit)
                .map(|(guard, _)| guard)
                .unwrap_or_else(|e| e.into_inner().0);
        }
        *ready = false;
    }
}

/// The consumer's handle on a running worker.
pub struct WorkerHandle {
    /// Messages of this partition that the consumer's main queue returned
    /// (fetched before the partition's queue was split off).
    inbox: Sender<OwnedMessage>,
    wake: Arc<Wake>,
    stop: Arc<AtomicBool>,
    thread: JoinHandle<()>,
}

impl WorkerHandle {
    /// Starts the worker of `partition` for the given input topics, reading
    /// their partition queues.
    pub fn spawn<C: ConsumerContext + 'static>(
        partition: i32,
        topics: Vec<String>,
        mut queues: Vec<PartitionQueue<C>>,
        shared: Arc<Shared>,
    ) -> std::io::Result<Self> {
        let (inbox, strays) = channel();
        let stop = Arc::new(AtomicBool::new(false));
        let wake = Arc::new(Wake::default());
        for queue in &mut queues {
            let wake = Arc::clone(&wake);
            queue.set_nonempty_callback(move || wake.notify());
        }
        let worker = Worker {
            partition,
            topics,
            shared,
            queues,
            strays,
            wake: Arc::clone(&wake),
            stop: Arc::clone(&stop),
        };
        let thread = std::thread::Builder::new()
            .name(format!("engram-p{partition}"))
            .spawn(move || worker.run())?;
        Ok(Self {
            inbox,
            wake,
            stop,
            thread,
        })
    }

    /// Hands over a message the main queue returned; the worker takes these
    /// before its partition queues, which only hold later offsets.
    pub fn hand_over(&self, message: OwnedMessage) {
        if self.inbox.send(message).is_ok() {
            self.wake.notify();
        }
    }

    /// Asks the worker to finish the batch it holds and waits for it.
    /// Messages it has not taken yet are dropped: their offsets are not
    /// committed, so the partition's next owner reads them again.
    pub fn stop(self) {
        self.stop.store(true, Ordering::Relaxed);
        self.wake.notify();
        drop(self.inbox);
        if self.thread.join().is_err() {
            tracing::error!("a partition worker panicked");
        }
    }
}

/// Generic over the consumer's context only so that it does not depend on
/// the group code that starts it.
struct Worker<C: ConsumerContext> {
    partition: i32,
    topics: Vec<String>,
    shared: Arc<Shared>,
    queues: Vec<PartitionQueue<C>>,
    strays: Receiver<OwnedMessage>,
    wake: Arc<Wake>,
    stop: Arc<AtomicBool>,
}

enum Collected {
    Records(Vec<OwnedMessage>),
    Idle,
    Stopped,
}

impl<C: ConsumerContext> Worker<C> {
    fn run(self) {
        let shared = Arc::clone(&self.shared);
        let clock = Clock::new(shared.clock_mode, false);
        let mut pipeline = Pipeline::new(
            &shared.codec,
            shared.store.as_ref(),
            shared.settings.clone(),
            usize::MAX,
            clock,
        )
        .with_decoding(shared.decoding.clone())
        .with_cycle_limit(Arc::clone(&shared.cycles), shared.runtime.clone());
        if let Some(embedder) = &shared.embedder {
            let indexes = UserIndexes::new(EMBEDDING_DIM, shared.index_config.clone());
            pipeline = pipeline.with_embedder(embedder.as_ref(), &shared.embedding_config, indexes);
            if let Some(batcher) = &shared.batcher {
                pipeline = pipeline.with_batcher(batcher.clone(), shared.runtime.clone());
            }
        }
        let mut sink = MeteredSink::new(
            KafkaSink::new(&shared.producer, shared.runtime.clone(), &self.stop),
            Arc::clone(&shared.metrics),
        );
        // Cycles a crash left unfinished, and the schedule of this
        // partition's users, before any new event; the same after a failure.
        let owned = Owned::Partition {
            streams: self.topics.clone(),
            partition: self.partition,
        };
        let resumed = self.retry("resuming the partition's users", |_| {
            pipeline.recover(&owned, &mut sink)
        });
        if resumed.is_none() {
            return;
        }
        tracing::info!(partition = self.partition, "partition worker started");
        loop {
            match self.collect() {
                Collected::Stopped => break,
                Collected::Idle => {
                    self.retry("running scheduled cycles", |after_failure| {
                        if after_failure {
                            pipeline.recover(&owned, &mut sink)?;
                        }
                        pipeline.run_due(&mut sink)
                    });
                }
                Collected::Records(messages) => {
                    let records: Vec<SourceRecord> = messages.iter().map(to_record).collect();
                    let next_offsets = next_offsets(&messages);
                    let processed = self.retry("applying a batch", |after_failure| {
                        if after_failure {
                            pipeline.recover(&owned, &mut sink)?;
                        }
                        pipeline.process(records.clone(), &mut sink)
                    });
                    let Some(summary) = processed else {
                        break;
                    };
                    self.shared.metrics.record_summary(&summary);
                    for (topic, offset) in next_offsets {
                        self.shared.offsets.insert((topic, self.partition), offset);
                    }
                }
            }
        }
        tracing::info!(partition = self.partition, "partition worker stopped");
    }

    /// Waits for the first message, then gathers more until the batch is
    /// full or the flush interval has passed since the first.
    fn collect(&self) -> Collected {
        let config = &self.shared.config;
        let idle = Duration::from_millis(config.schedule_check_ms.max(10));
        let limit = config.flush_max_events.max(1);
        let mut batch = Vec::new();
        let waiting_since = Instant::now();
        loop {
            if self.stop.load(Ordering::Relaxed) {
                return Collected::Stopped;
            }
            self.take(&mut batch, limit);
            if !batch.is_empty() {
                break;
            }
            let waited = waiting_since.elapsed();
            if waited >= idle {
                return Collected::Idle;
            }
            self.wake.wait((idle - waited).min(WAIT_SLICE));
        }
        let deadline = Instant::now() + Duration::from_millis(config.flush_interval_ms);
        while batch.len() < limit && !self.stop.load(Ordering::Relaxed) {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            self.wake.wait(left.min(WAIT_SLICE));
            self.take(&mut batch, limit);
        }
        Collected::Records(batch)
    }

    /// Moves what is waiting (strays first: they precede the queues) into
    /// `batch`, up to `limit`, without blocking.
    fn take(&self, batch: &mut Vec<OwnedMessage>, limit: usize) {
        let before = batch.len();
        while batch.len() < limit {
            match self.strays.try_recv() {
                Ok(message) => batch.push(message),
                Err(_) => break,
            }
        }
        for queue in &self.queues {
            while batch.len() < limit {
                match queue.poll(Duration::ZERO) {
                    Some(Ok(message)) => batch.push(message.detach()),
                    Some(Err(error)) => {
                        tracing::warn!(partition = self.partition, %error, "consumer error")
                    }
                    None => break,
                }
            }
        }
        for message in &batch[before..] {
            self.shared
                .metrics
                .consumed
                .with_label_values(&[message.topic()])
                .inc();
        }
    }

    /// Runs `step` until it succeeds, with backoff, logging each failure;
    /// `None` when the worker was stopped first. An error that retrying
    /// cannot fix stops the partition until the worker is stopped. The step
    /// is told whether an attempt failed before it. Steps are idempotent:
    /// what a failed attempt committed is skipped by the watermarks next time.
    fn retry(
        &self,
        what: &str,
        mut step: impl FnMut(bool) -> Result<RunSummary, PipelineError>,
    ) -> Option<RunSummary> {
        let mut backoff = Duration::from_millis(100);
        let health = &self.shared.health;
        let mut failed = false;
        loop {
            match step(failed) {
                Ok(summary) => {
                    if failed {
                        health.set_failing(self.partition, None);
                        tracing::info!(partition = self.partition, "{what} succeeded again");
                    }
                    return Some(summary);
                }
                Err(error) if !error.is_transient() => {
                    // The same step fails the same way every time: stop here
                    // with the reason on /readyz rather than spin. Nothing
                    // past this batch is committed; a new owner of the
                    // partition (after a fix and a restart) takes it up.
                    let reason = format!("stopped, {what} failed for good: {}", Chain(&error));
                    tracing::error!(partition = self.partition, "{reason}");
                    health.set_failing(self.partition, Some(reason));
                    self.shared.metrics.batch_failures.inc();
                    self.shared.metrics.partitions_stopped.inc();
                    while !self.stop.load(Ordering::Relaxed) {
                        std::thread::sleep(Duration::from_millis(50));
                    }
                    health.set_failing(self.partition, None);
                    return None;
                }
                Err(error) => {
                    // Not ready until it goes through: the offsets of this
                    // partition stand still meanwhile.
                    let reason = format!("{what}: {}", Chain(&error));
                    tracing::error!(
                        partition = self.partition,
                        "{reason}; retrying in {} ms",
                        backoff.as_millis()
                    );
                    health.set_failing(self.partition, Some(reason));
                    failed = true;
                    self.shared.metrics.batch_failures.inc();
                }
            }
            let until = Instant::now() + backoff;
            while Instant::now() < until {
                if self.stop.load(Ordering::Relaxed) {
                    health.set_failing(self.partition, None);
                    return None;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            backoff = (backoff * 2).min(Duration::from_secs(10));
        }
    }
}

fn to_record(message: &OwnedMessage) -> SourceRecord {
    SourceRecord {
        stream: message.topic().to_owned(),
        partition: Some(message.partition()),
        offset: message.offset(),
        payload: message.payload().map(<[u8]>::to_vec).unwrap_or_default(),
        oversize: None,
    }
}

/// The offset to commit per topic once the batch is durable: one past the
/// last message.
fn next_offsets(messages: &[OwnedMessage]) -> BTreeMap<String, i64> {
    let mut next = BTreeMap::new();
    for message in messages {
        let entry = next.entry(message.topic().to_owned()).or_insert(0);
        *entry = (*entry).max(message.offset() + 1);
    }
    next
}
