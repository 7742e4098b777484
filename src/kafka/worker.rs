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
//!
//! Across its topics a worker applies records in time order (see
//! [`TopicHeads`]), so a read does not overtake its memory's creation when
//! one topic is further behind than another (catch-up, a new group, a slow
//! producer): it decodes each queue's first records and takes the earliest,
//! holding back while a queue that is not at its end has nothing fetched,
//! for up to `kafka.max_idle`. A read that still comes first is parked
//! by the pipeline until its memory appears.

use std::collections::{BTreeMap, VecDeque};
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use prometheus::IntCounter;
use rdkafka::Message;
use rdkafka::consumer::ConsumerContext;
use rdkafka::error::KafkaError as RdKafkaError;
use rdkafka::message::OwnedMessage;
use rdkafka::types::RDKafkaErrorCode;

use super::Shared;
use super::batch_queue::BatchQueue;
use super::produce::KafkaSink;
use crate::clock::Clock;
use crate::config::OrderBy;
use crate::embed::{EMBEDDING_DIM, EmbedBatcher, brings_text, text_to_embed};
use crate::error::Chain;
use crate::event::{DecodeError, Event, EventType};
use crate::index::UserIndexes;
use crate::metrics::MeteredSink;
use crate::pipeline::{DecodedRecord, Owned, Pipeline, PipelineError, RunSummary};
use crate::source::SourceRecord;

/// Longest sleep between looks at the stop flag and the stray-message inbox.
const WAIT_SLICE: Duration = Duration::from_millis(50);

/// How many times in a row the client must fail to read the record at one
/// position before it is dead-lettered and skipped: a damaged batch fails
/// the same way every time, a passing fault does not.
const UNREADABLE_TRIES: u32 = 3;

/// What a worker may ask of the consumer about its own partition.
pub trait PartitionControl: Send + Sync {
    /// The next offset the consumer will hand over of `topic`'s partition.
    fn position(&self, topic: &str, partition: i32) -> Option<i64>;
    /// Moves the fetch position of `topic`'s partition to `offset`.
    fn seek(&self, topic: &str, partition: i32, offset: i64) -> Result<(), String>;
}

/// A record the client failed to read, and how often in a row.
struct Unreadable {
    offset: i64,
    tries: u32,
}

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
        mut queues: Vec<BatchQueue<C>>,
        shared: Arc<Shared>,
        control: Arc<dyn PartitionControl>,
    ) -> std::io::Result<Self> {
        let (inbox, strays) = channel();
        let stop = Arc::new(AtomicBool::new(false));
        let wake = Arc::new(Wake::default());
        for queue in &mut queues {
            let wake = Arc::clone(&wake);
            queue.set_nonempty_callback(move || wake.notify());
        }
        let max_idle = shared.config.max_idle;
        let consumed = topics
            .iter()
            .map(|topic| shared.metrics.consumed.with_label_values(&[topic]))
            .collect();
        let worker = Worker {
            consumed,
            partition,
            taken: vec![None; topics.len()],
            unreadable: (0..topics.len()).map(|_| None).collect(),
            control,
            topics: topics
                .iter()
                .map(|topic| Arc::from(topic.as_str()))
                .collect(),
            carried: Vec::new(),
            heads: TopicHeads::new(queues.len(), max_idle),
            payloads: Payloads::default(),
            spare: SpareBoxes::default(),
            shared,
            queues,
            strays,
            wake: Arc::clone(&wake),
            stop: Arc::clone(&stop),
        };
        let held = worker.stopped();
        let thread = std::thread::Builder::new()
            .name(format!("engram-p{partition}"))
            .spawn(move || {
                // A bug's panic stops the partition as a permanent error
                // does, where it can be seen: a thread that died quietly
                // would hold its partition unread while /readyz said ready.
                if let Err(panic) = std::panic::catch_unwind(AssertUnwindSafe(|| worker.run())) {
                    held.until_stopped(format!(
                        "stopped, its worker panicked: {}",
                        panic_text(&*panic)
                    ));
                }
            })?;
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

/// A partition stopped for good: by an error retrying cannot fix, or by a
/// panic. Nothing past its batch is committed; a new owner of the
/// partition (after a fix and a restart) takes it up.
struct Stopped {
    partition: i32,
    shared: Arc<Shared>,
    stop: Arc<AtomicBool>,
}

impl Stopped {
    /// Shows `reason` on /readyz and counts the stop, then holds the
    /// partition until the worker is asked to stop.
    fn until_stopped(self, reason: String) {
        let health = &self.shared.health;
        tracing::error!(partition = self.partition, "{reason}");
        health.set_failing(self.partition, Some(reason));
        self.shared.metrics.batch_failures.inc();
        self.shared.metrics.partitions_stopped.inc();
        while !self.stop.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(50));
        }
        health.set_failing(self.partition, None);
    }
}

/// What a panic said, where it said it with text.
fn panic_text(panic: &(dyn std::any::Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("no message")
}

/// Generic over the consumer's context only so that it does not depend on
/// the group code that starts it.
struct Worker<C: ConsumerContext> {
    partition: i32,
    /// Each record of a topic shares its name.
    topics: Vec<Arc<str>>,
    /// The input types each topic carries, as the pipeline decodes them:
    /// looked up once the pipeline exists, not for every record.
    carried: Vec<Vec<EventType>>,
    /// Each topic's `consumed` counter, looked up once: finding it by label
    /// for every record took a lock and hashed the topic name.
    consumed: Vec<IntCounter>,
    /// The offset last taken from each topic's queue.
    taken: Vec<Option<i64>>,
    /// A record of each topic the client has failed to read.
    unreadable: Vec<Option<Unreadable>>,
    control: Arc<dyn PartitionControl>,
    shared: Arc<Shared>,
    queues: Vec<BatchQueue<C>>,
    strays: Receiver<OwnedMessage>,
    heads: TopicHeads,
    payloads: Payloads,
    spare: SpareBoxes,
    wake: Arc<Wake>,
    stop: Arc<AtomicBool>,
}

enum Collected {
    #[expect(
        clippy::vec_box,
        reason = "a record moves boxed from its head to the batch (Decoded)"
    )]
    Records(Vec<Box<Decoded>>),
    Idle,
    Stopped,
}

impl<C: ConsumerContext> Worker<C> {
    /// Never inlined: profiles count a partition's work from this symbol
    /// (`callgrind --toggle-collect='engram::kafka::worker::Worker*::run'`,
    /// docs/2026-12-06-access-path-cuts.md).
    #[inline(never)]
    fn run(mut self) {
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
        .with_cycle_limit(Arc::clone(&shared.cycles), shared.runtime.clone())
        // This worker is its users' one writer: what a batch committed is
        // what the store holds for the next.
        .carrying_saliences();
        if let Some(embedder) = &shared.embedder {
            let indexes = UserIndexes::new(EMBEDDING_DIM, shared.index_config.clone());
            pipeline = pipeline.with_embedder(embedder.as_ref(), &shared.embedding_config, indexes);
            if let Some(batcher) = &shared.batcher {
                pipeline = pipeline.with_batcher(batcher.clone(), shared.runtime.clone());
            }
        }
        self.carried = self
            .topics
            .iter()
            .map(|topic| pipeline.carried_by(topic).to_vec())
            .collect();
        let stop = Arc::clone(&self.stop);
        let mut sink = MeteredSink::new(
            KafkaSink::new(&shared.producer, shared.runtime.clone(), &stop),
            Arc::clone(&shared.metrics),
        );
        // Cycles a crash left unfinished, and the schedule of this
        // partition's users, before any new event; the same after a failure.
        let owned = Owned::Partition {
            streams: self.topics.iter().map(|topic| topic.to_string()).collect(),
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
            match self.collect(&pipeline) {
                Collected::Stopped => break,
                Collected::Idle => {
                    // An idle worker holds no memory for records to come.
                    self.spare = SpareBoxes::default();
                    let caught_up = self.heads.all_at_end();
                    self.retry("running scheduled cycles", |after_failure| {
                        if after_failure {
                            pipeline.recover(&owned, &mut sink)?;
                        }
                        pipeline.run_due(caught_up, &mut sink)
                    });
                }
                Collected::Records(mut records) => {
                    let next_offsets = next_offsets(&records);
                    let processed = self.retry("applying a batch", |after_failure| {
                        if after_failure {
                            pipeline.recover(&owned, &mut sink)?;
                        }
                        pipeline.process_decoded(&mut records, &mut sink)
                    });
                    let Some(summary) = processed else {
                        break;
                    };
                    self.shared.metrics.record_summary(&summary);
                    for (topic, offset) in next_offsets {
                        self.shared.offsets.insert((topic, self.partition), offset);
                    }
                    self.spare.keep(records);
                }
            }
        }
        tracing::info!(partition = self.partition, "partition worker stopped");
    }

    /// Waits for the first record, then gathers more until the batch is
    /// full or the flush interval has passed since the first.
    fn collect(&mut self, pipeline: &Pipeline<'_>) -> Collected {
        let config = &self.shared.config;
        let idle = config.schedule_check.max(Duration::from_millis(10));
        let flush_interval = config.flush_interval;
        let mut batch = Gathering::new(config.flush_max_events, config.flush_max_texts)
            .prefetching(self.shared.batcher.clone());
        let waiting_since = Instant::now();
        loop {
            if self.stop.load(Ordering::Relaxed) {
                return Collected::Stopped;
            }
            self.take(pipeline, &mut batch);
            if !batch.records.is_empty() {
                break;
            }
            let waited = waiting_since.elapsed();
            if waited >= idle {
                return Collected::Idle;
            }
            self.wake.wait((idle - waited).min(WAIT_SLICE));
        }
        let deadline = Instant::now() + flush_interval;
        while !batch.is_full() && !self.stop.load(Ordering::Relaxed) {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            self.wake.wait(left.min(WAIT_SLICE));
            self.take(pipeline, &mut batch);
        }
        Collected::Records(batch.records)
    }

    /// Moves what may be applied now into `batch`, until it is full, in
    /// time order across the topics, without blocking. Strays join their
    /// topic's head ahead of the queue's records, which they precede.
    fn take(&mut self, pipeline: &Pipeline<'_>, batch: &mut Gathering) {
        let limit = batch.max_events;
        let order_by = self.shared.config.order_by;
        while let Ok(message) = self.strays.try_recv() {
            let topic = message.topic();
            let payload = self.payloads.copy(message.payload());
            let origin = Origin {
                partition: message.partition(),
                offset: message.offset(),
                time: message.timestamp().to_millis(),
            };
            let decoded = Box::new(decode(
                pipeline,
                Arc::from(topic),
                None,
                origin,
                payload,
                order_by,
            ));
            match self.topics.iter().position(|t| **t == *topic) {
                Some(index) => {
                    self.consumed[index].inc();
                    let offset = message.offset();
                    self.taken[index] = Some(self.taken[index].map_or(offset, |t| t.max(offset)));
                    self.heads.push_stray(index, decoded);
                }
                // Not one of this worker's topics: nothing orders it.
                None => {
                    self.shared
                        .metrics
                        .consumed
                        .with_label_values(&[topic])
                        .inc();
                    batch.push(decoded);
                }
            }
        }
        // An empty head's queue is polled once per call, and a head that runs
        // dry again: not once per record.
        for index in 0..self.queues.len() {
            if self.heads.is_empty(index) {
                self.fill(index, pipeline, limit);
            }
        }
        let now = Instant::now();
        while !batch.is_full() {
            let Some((index, record)) = self.heads.next(now) else {
                break;
            };
            batch.push(record);
            if self.heads.is_empty(index) {
                self.fill(index, pipeline, limit);
            }
        }
    }

    /// Decodes up to `limit` waiting messages of one queue into its head.
    fn fill(&mut self, index: usize, pipeline: &Pipeline<'_>, limit: usize) {
        // Out of `self` while its messages are taken: they borrow the queue.
        let queues = std::mem::take(&mut self.queues);
        if let Some(queue) = queues.get(index) {
            self.fill_from(queue, index, pipeline, limit);
        }
        self.queues = queues;
    }

    fn fill_from(
        &mut self,
        queue: &BatchQueue<C>,
        index: usize,
        pipeline: &Pipeline<'_>,
        limit: usize,
    ) {
        let order_by = self.shared.config.order_by;
        let mut left = limit;
        while left > 0 {
            let taken = queue.take(left);
            let mut records = 0;
            // The end of the partition or a skipped record ends this fill;
            // what was taken with it is applied first, as the next fill
            // would have, except after a skip: the seek fetches it again.
            let mut done = taken.len() < left.min(BatchQueue::<C>::chunk());
            for received in taken.iter() {
                match received {
                    // Decoded from the client's buffer: no copy of the whole
                    // message first.
                    Ok(message) => {
                        records += 1;
                        self.taken[index] = Some(message.offset());
                        self.unreadable[index] = None;
                        let topic = Arc::clone(&self.topics[index]);
                        let carried = Some(&self.carried[index][..]);
                        let payload = self.payloads.copy(message.payload());
                        let origin = Origin {
                            partition: message.partition(),
                            offset: message.offset(),
                            time: message.timestamp_millis(),
                        };
                        let decoded = decode(pipeline, topic, carried, origin, payload, order_by);
                        self.heads.push(index, self.spare.boxed(decoded));
                    }
                    Err(RdKafkaError::PartitionEOF(_)) => {
                        self.heads.reached_end(index);
                        done = true;
                    }
                    Err(RdKafkaError::MessageConsumption(code)) if is_unreadable(code) => {
                        done = true;
                        if let Some(skipped) = self.skip_unreadable(index, code) {
                            self.heads.push(index, skipped);
                            break;
                        }
                    }
                    Err(error) => {
                        let queue = self.topics.get(index).map(|t| (&**t, self.partition));
                        self.shared.consumer_error(&error, queue);
                    }
                }
            }
            self.consumed[index].inc_by(records);
            left = left.saturating_sub(taken.len());
            if done {
                break;
            }
        }
    }

    /// The client failed to read the next record of topic `index` (its
    /// batch is damaged), and would fail on it for ever: once it has failed
    /// [`UNREADABLE_TRIES`] times at one position, skips that record and
    /// returns its dead letter. Without a known position it stays put: the
    /// partition stands still, and nothing is committed past the record.
    fn skip_unreadable(&mut self, index: usize, code: RDKafkaErrorCode) -> Option<Box<Decoded>> {
        let topic = self.topics[index].clone();
        let partition = self.partition;
        let position = self.taken[index]
            .map(|offset| offset + 1)
            .or_else(|| self.control.position(&topic, partition));
        let Some(offset) = position else {
            tracing::warn!(
                topic = &*topic,
                partition,
                ?code,
                "cannot read a record, at an unknown offset"
            );
            return None;
        };
        let unreadable = match &mut self.unreadable[index] {
            Some(seen) if seen.offset == offset => seen,
            slot => slot.insert(Unreadable { offset, tries: 0 }),
        };
        unreadable.tries += 1;
        if unreadable.tries < UNREADABLE_TRIES {
            tracing::warn!(
                topic = &*topic,
                partition,
                offset,
                ?code,
                "cannot read a record; trying again"
            );
            return None;
        }
        if let Err(error) = self.control.seek(&topic, partition, offset + 1) {
            tracing::warn!(topic = &*topic, partition, offset, %error, "cannot skip an unreadable record");
            return None;
        }
        tracing::error!(
            topic = &*topic,
            partition,
            offset,
            ?code,
            "skipped an unreadable record"
        );
        self.unreadable[index] = None;
        self.taken[index] = Some(offset);
        let reason = format!("{} ({code:?})", RdKafkaError::MessageConsumption(code));
        Some(Box::new(Decoded {
            record: SourceRecord {
                stream: topic,
                partition: Some(partition),
                offset,
                payload: Bytes::new(),
                oversize: None,
            },
            event: Err(DecodeError::Unreadable(reason)),
            order: order_key(None, None, self.shared.config.order_by),
        }))
    }

    /// This worker's partition, to hold once stopped for good.
    fn stopped(&self) -> Stopped {
        Stopped {
            partition: self.partition,
            shared: Arc::clone(&self.shared),
            stop: Arc::clone(&self.stop),
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
                    // with the reason on /readyz rather than spin.
                    self.stopped().until_stopped(format!(
                        "stopped, {what} failed for good: {}",
                        Chain(&error)
                    ));
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

/// A record taken from a queue, decoded, with the key that orders it.
/// Held boxed from decoding to the batch's end: it passes through a head
/// and a batch, and moving 300-odd bytes at each step cost more than the
/// allocation.
#[derive(Debug, Clone)]
struct Decoded {
    record: SourceRecord,
    event: Result<Event, DecodeError>,
    order: (i64, u8),
}

impl DecodedRecord for Box<Decoded> {
    fn parts(&mut self) -> (&SourceRecord, &mut Result<Event, DecodeError>) {
        (&self.record, &mut self.event)
    }

    fn record(&self) -> &SourceRecord {
        &self.record
    }
}

/// The boxes of a done batch's records, emptied, for the next records to
/// move into. A batch holds thousands of records, more than the
/// allocator's per-thread cache: allocating each box and freeing it again
/// went to the allocator's shared bins, about 280 instructions a read.
/// A worker keeps no more than a batch reserves room for
/// ([`RESERVED_RECORDS`]), and lets them go when it idles.
#[derive(Default)]
struct SpareBoxes {
    #[expect(clippy::vec_box, reason = "the boxes themselves are what is kept")]
    boxes: Vec<Box<Decoded>>,
    /// What an emptied box holds: no payload, no event.
    empty_stream: Option<Arc<str>>,
}

impl SpareBoxes {
    fn boxed(&mut self, decoded: Decoded) -> Box<Decoded> {
        match self.boxes.pop() {
            Some(mut spare) => {
                *spare = decoded;
                spare
            }
            None => Box::new(decoded),
        }
    }

    /// Empties `records`' boxes and keeps them: what a record refers to (its
    /// payload's block, its event's ids) is freed now, as it was when its
    /// box was.
    #[expect(
        clippy::vec_box,
        reason = "the boxes themselves are what is kept (Decoded)"
    )]
    fn keep(&mut self, records: Vec<Box<Decoded>>) {
        let room = RESERVED_RECORDS.saturating_sub(self.boxes.len());
        let stream = self.empty_stream.get_or_insert_with(|| Arc::from(""));
        for mut spare in records.into_iter().take(room) {
            *spare = Decoded {
                record: SourceRecord {
                    stream: Arc::clone(stream),
                    partition: None,
                    offset: 0,
                    payload: Bytes::new(),
                    oversize: None,
                },
                event: Err(DecodeError::Undecodable(String::new())),
                order: (0, 0),
            };
            self.boxes.push(spare);
        }
    }
}

/// The most records a batch reserves room for when it starts.
const RESERVED_RECORDS: usize = 20_000;

/// A batch being gathered, and its bounds: events, and texts to embed.
struct Gathering {
    #[expect(
        clippy::vec_box,
        reason = "a record moves boxed from its head to the batch (Decoded)"
    )]
    records: Vec<Box<Decoded>>,
    texts: usize,
    max_events: usize,
    max_texts: usize,
    /// Where new texts start embedding as they are taken, while the batch
    /// still gathers (service mode with embedding on).
    prefetch: Option<EmbedBatcher>,
}

impl Gathering {
    fn new(max_events: usize, max_texts: usize) -> Self {
        Self {
            records: Vec::new(),
            texts: 0,
            max_events: max_events.max(1),
            max_texts: max_texts.max(1),
            prefetch: None,
        }
    }

    fn prefetching(mut self, batcher: Option<EmbedBatcher>) -> Self {
        self.prefetch = batcher;
        self
    }

    fn push(&mut self, decoded: Box<Decoded>) {
        if self.records.capacity() == 0 {
            // Room for a full batch once one starts (growing by doubling
            // copied each record about once more), up to the default
            // bound: a larger `flush_max_events` grows as it fills.
            self.records.reserve(self.max_events.min(RESERVED_RECORDS));
        }
        if let Ok(event) = &decoded.event
            && brings_text(event)
        {
            self.texts += 1;
            if let (Some(batcher), Some(text)) = (&self.prefetch, text_to_embed(event)) {
                batcher.prefetch(text);
            }
        }
        self.records.push(decoded);
    }

    fn is_full(&self) -> bool {
        self.records.len() >= self.max_events || self.texts >= self.max_texts
    }
}

/// `topic` is the message's own: a worker knows its queues' topics, and
/// asking the client costs a lookup and a UTF-8 check per message. So are
/// the types it `carried`, where the worker knows them. `payload` is the
/// message's, copied out of the client's buffer ([`Payloads::copy`]).
fn decode(
    pipeline: &Pipeline<'_>,
    topic: Arc<str>,
    carried: Option<&[EventType]>,
    origin: Origin,
    payload: Bytes,
    order_by: OrderBy,
) -> Decoded {
    let record = SourceRecord {
        stream: topic,
        partition: Some(origin.partition),
        offset: origin.offset,
        payload,
        oversize: None,
    };
    let event = match carried {
        Some(carried) => pipeline.decode_carrying(&record, carried),
        None => pipeline.decode(&record),
    };
    let order = order_key(event.as_ref().ok(), origin.time, order_by);
    Decoded {
        record,
        event,
        order,
    }
}

/// Where a record stands in its partition, and its timestamp.
struct Origin {
    partition: i32,
    offset: i64,
    /// The record's timestamp in milliseconds, where it has one.
    time: Option<i64>,
}

/// Where a worker copies its messages' payloads: blocks of
/// [`Payloads::BLOCK`] bytes, each record's payload a slice of one. A block
/// is freed with the last record that refers to it, at the latest when its
/// batch is done. One allocation per block, where a `Vec` per record cost
/// an allocation and a free per read.
#[derive(Default)]
struct Payloads {
    block: BytesMut,
}

impl Payloads {
    const BLOCK: usize = 256 * 1024;

    fn copy(&mut self, payload: Option<&[u8]>) -> Bytes {
        let Some(payload) = payload.filter(|p| !p.is_empty()) else {
            return Bytes::new();
        };
        if self.block.capacity() - self.block.len() < payload.len() {
            self.block = BytesMut::with_capacity(Self::BLOCK.max(payload.len()));
        }
        self.block.extend_from_slice(payload);
        self.block.split().freeze()
    }
}

/// Earlier first; at the same time a creation before anything else, so a
/// read stamped with its memory's creation time follows it, and a deletion
/// or erasure after everything else, so what came with it is applied before
/// it rather than refused after it. Records that
/// will be dead letters (undecodable, or refused for their time) and
/// records without a timestamp go first: nothing waits on them, and a
/// refused time must not hold its topic back.
fn order_key(event: Option<&Event>, record_time: Option<i64>, order_by: OrderBy) -> (i64, u8) {
    let Some(event) = event else {
        return (i64::MIN, 1);
    };
    let time = match order_by {
        OrderBy::EventTime => Some(event.occurred_at().timestamp_millis()),
        OrderBy::Timestamp => record_time,
    };
    let rank = match event {
        Event::MemoryCreated(_) => 0,
        Event::MemoryDeleted(_) | Event::UserErased(_) => 2,
        _ => 1,
    };
    (time.unwrap_or(i64::MIN), rank)
}

/// The first decoded records of each of a partition's topic queues, from
/// which records leave in time order.
struct TopicHeads {
    heads: Vec<Head>,
    max_idle: Duration,
}

#[derive(Default)]
struct Head {
    records: VecDeque<Box<Decoded>>,
    /// The queue reported the partition's end and has delivered nothing since.
    at_end: bool,
    /// Since when other topics' records wait for this empty queue.
    holding_since: Option<Instant>,
}

impl TopicHeads {
    fn new(queues: usize, max_idle: Duration) -> Self {
        Self {
            heads: (0..queues).map(|_| Head::default()).collect(),
            max_idle,
        }
    }

    fn is_empty(&self, index: usize) -> bool {
        self.heads[index].records.is_empty()
    }

    fn push(&mut self, index: usize, record: Box<Decoded>) {
        let back = self.heads[index].records.len();
        self.insert(index, back, record);
    }

    fn reached_end(&mut self, index: usize) {
        self.heads[index].at_end = true;
    }

    /// A record of the topic that the consumer's main queue returned
    /// before the partition's queue was split off: it precedes what that
    /// queue delivered, so it goes in by offset, not at the back.
    fn push_stray(&mut self, index: usize, record: Box<Decoded>) {
        let records = &self.heads[index].records;
        let offset = record.record.offset;
        let at = records
            .iter()
            .position(|queued| queued.record.offset > offset)
            .unwrap_or(records.len());
        self.insert(index, at, record);
    }

    /// A record delivered to topic `index`'s head, at `at`: the queue is no
    /// longer at its end, and nothing waits for it.
    fn insert(&mut self, index: usize, at: usize, record: Box<Decoded>) {
        let head = &mut self.heads[index];
        head.records.insert(at, record);
        head.at_end = false;
        head.holding_since = None;
    }

    /// Every queue reported its partition's end and nothing is held: all
    /// the input there is was taken.
    fn all_at_end(&self) -> bool {
        self.heads
            .iter()
            .all(|head| head.at_end && head.records.is_empty())
    }

    /// The earliest head record, unless a queue that is empty but not at
    /// its end may still deliver an earlier one and has not been waited for
    /// `max_idle` yet. Once waited for, such a queue is passed over until it
    /// delivers again.
    fn next(&mut self, now: Instant) -> Option<(usize, Box<Decoded>)> {
        let earliest = self
            .heads
            .iter()
            .enumerate()
            .filter_map(|(index, head)| Some((head.records.front()?.order, index)))
            .min()?
            .1;
        for head in &mut self.heads {
            if head.records.is_empty() && !head.at_end {
                let since = *head.holding_since.get_or_insert(now);
                if now.duration_since(since) < self.max_idle {
                    return None;
                }
            }
        }
        let record = self.heads[earliest].records.pop_front()?;
        Some((earliest, record))
    }
}

/// Errors that mean the client cannot read the record at its position
/// (a damaged or undecompressable batch), as opposed to a passing fault of
/// the connection or the broker.
fn is_unreadable(code: RDKafkaErrorCode) -> bool {
    matches!(
        code,
        RDKafkaErrorCode::BadCompression
            | RDKafkaErrorCode::BadMessage
            | RDKafkaErrorCode::InvalidMessage
            | RDKafkaErrorCode::InvalidRecord
    )
}

/// The offset to commit per topic once the batch is durable: one past the
/// last record (each topic's records are in offset order).
fn next_offsets(records: &[Box<Decoded>]) -> BTreeMap<String, i64> {
    let mut next: BTreeMap<String, i64> = BTreeMap::new();
    for decoded in records {
        let (stream, after) = (&decoded.record.stream, decoded.record.offset + 1);
        // The key is copied once per topic, not once per record.
        match next.get_mut(&**stream) {
            Some(offset) => *offset = (*offset).max(after),
            None => {
                next.insert(stream.to_string(), after.max(0));
            }
        }
    }
    next
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{MemoryAccessed, MemoryCreated};
    use crate::model::MemoryKind;
    use chrono::DateTime;

    fn record(topic: &str, offset: i64, event: Event) -> Box<Decoded> {
        let order = order_key(Some(&event), None, OrderBy::EventTime);
        Box::new(Decoded {
            record: SourceRecord {
                stream: topic.into(),
                partition: Some(0),
                offset,
                payload: Bytes::new(),
                oversize: None,
            },
            event: Ok(event),
            order,
        })
    }

    fn created(offset: i64, second: i64) -> Box<Decoded> {
        record(
            "created",
            offset,
            Event::MemoryCreated(MemoryCreated {
                event_id: format!("c{offset}"),
                user_id: "u".into(),
                memory_id: format!("m{offset}"),
                kind: MemoryKind::Semantic,
                content: "text".into(),
                created_at: DateTime::from_timestamp(second, 0).unwrap(),
                category: None,
                tags: None,
                importance: None,
                source: None,
                embedding: None,
            }),
        )
    }

    fn read(offset: i64, second: i64) -> Box<Decoded> {
        record(
            "accessed",
            offset,
            Event::MemoryAccessed(MemoryAccessed {
                event_id: format!("a{offset}").into(),
                user_id: "u".into(),
                memory_id: "m0".into(),
                accessed_at: DateTime::from_timestamp(second, 0).unwrap(),
                context: None,
            }),
        )
    }

    fn taken(heads: &mut TopicHeads, now: Instant) -> Vec<(String, i64)> {
        std::iter::from_fn(|| heads.next(now))
            .map(|(_, d)| (d.record.stream.to_string(), d.record.offset))
            .collect()
    }

    /// What leaves now, as `topic` and offset written together.
    fn taken_names(heads: &mut TopicHeads) -> Vec<String> {
        taken(heads, Instant::now())
            .iter()
            .map(|(topic, offset)| format!("{topic}{offset}"))
            .collect()
    }

    #[test]
    fn payloads_keep_their_bytes_across_blocks() {
        let mut payloads = Payloads::default();
        let large = vec![7u8; Payloads::BLOCK + 1];
        let inputs: Vec<Vec<u8>> = (0..20_000u32)
            .map(|i| format!("payload {i}").into_bytes())
            .chain([Vec::new(), large])
            .collect();
        let copies: Vec<Bytes> = inputs.iter().map(|p| payloads.copy(Some(p))).collect();
        for (input, copy) in inputs.iter().zip(&copies) {
            assert_eq!(&copy[..], &input[..]);
        }
        assert!(payloads.copy(None).is_empty());
    }

    /// A batch closes at its event bound, or sooner at its bound on texts
    /// to embed: a backlog of creations must not make a flush that embeds
    /// for minutes. Reads count only towards the event bound.
    #[test]
    fn a_batch_is_full_at_its_events_or_at_its_texts() {
        let mut batch = Gathering::new(10, 3);
        for offset in 0..5 {
            batch.push(read(offset, offset));
        }
        assert!(!batch.is_full(), "5 reads of 10 events, no texts");
        batch.push(created(5, 5));
        batch.push(created(6, 6));
        assert!(!batch.is_full(), "2 texts of 3");
        batch.push(created(7, 7));
        assert!(batch.is_full(), "3 texts of 3");

        let mut batch = Gathering::new(4, 3);
        for offset in 0..4 {
            batch.push(read(offset, offset));
        }
        assert!(batch.is_full(), "4 events of 4");
    }

    #[test]
    fn at_one_instant_a_creation_goes_first_and_a_deletion_or_erasure_last() {
        let at = DateTime::from_timestamp(5, 0).unwrap();
        let key = |event: Event| order_key(Some(&event), None, OrderBy::EventTime);
        let read = key(Event::MemoryAccessed(MemoryAccessed {
            event_id: "r".into(),
            user_id: "u".into(),
            memory_id: "m".into(),
            accessed_at: at,
            context: None,
        }));
        let deletion = key(Event::MemoryDeleted(crate::event::MemoryDeleted {
            event_id: "d".into(),
            user_id: "u".into(),
            memory_id: "m".into(),
            deleted_at: at,
        }));
        let erasure = key(Event::UserErased(crate::event::UserErased {
            event_id: "e".into(),
            user_id: "u".into(),
            erased_at: at,
        }));
        let creation = created(0, 5).order;
        assert!(creation < read && read < deletion && deletion == erasure);
        assert!(erasure < created(1, 6).order, "time first");
    }

    #[test]
    fn records_leave_in_event_time_order_across_topics() {
        let mut heads = TopicHeads::new(2, Duration::from_millis(500));
        for (offset, second) in [(0, 10), (1, 30)] {
            heads.push(0, created(offset, second));
        }
        for (offset, second) in [(0, 10), (1, 20), (2, 40)] {
            heads.push(1, read(offset, second));
        }
        heads.reached_end(0);
        heads.reached_end(1);
        // The next records of a queue are only known once fetched: the
        // creation at 10 s goes before the read at 10 s, and after the last
        // creation the reads go on since that topic is at its end.
        let names = taken_names(&mut heads);
        assert_eq!(
            names,
            [
                "created0",
                "accessed0",
                "accessed1",
                "created1",
                "accessed2"
            ]
        );
    }

    /// Strays (records the main queue returned before the split) were
    /// applied ahead of everything: a read among them overtook the earlier
    /// creation on the other topic, and was parked for nothing. They take
    /// their place among the heads instead, by offset in their topic and by
    /// time across topics.
    #[test]
    fn strays_leave_in_time_order_among_the_queues_records() {
        let mut heads = TopicHeads::new(2, Duration::from_millis(500));
        heads.push(0, created(1, 10));
        heads.push(1, read(5, 40));
        // Returned by the main queue, after the partition queue had given
        // offset 5 already.
        heads.push_stray(1, read(4, 20));
        heads.reached_end(0);
        heads.reached_end(1);
        let names = taken_names(&mut heads);
        assert_eq!(names, ["created1", "accessed4", "accessed5"]);
    }

    /// A record whose event time is refused (a creation dated 9999) is a
    /// dead letter: nothing waits on it, so it must not hold its topic's
    /// later records behind everything the other topics hold.
    #[test]
    fn an_event_refused_for_its_time_leaves_at_once() {
        use crate::clock::ClockMode;
        use crate::cycle::CycleSettings;
        use crate::event::{EventCodec, Limits};
        use crate::store::EmbeddedStore;

        let dir = tempfile::tempdir().unwrap();
        let store = EmbeddedStore::open(dir.path()).unwrap();
        let codec = EventCodec::new(Limits::default()).unwrap();
        let clock = Clock::new(ClockMode::Stream, false);
        let pipeline = Pipeline::new(&codec, &store, CycleSettings::default(), 100, clock);
        let json = r#"{"type": "memory.created", "event_id": "e0", "user_id": "u",
            "memory_id": "m-future", "kind": "semantic", "content": "text",
            "created_at": "9999-01-01T00:00:00.000Z"}"#
            .replace('\n', " ");
        let now = chrono::Utc::now().timestamp_millis();
        let origin = Origin {
            partition: 0,
            offset: 0,
            time: Some(now),
        };
        let future = decode(
            &pipeline,
            "created".into(),
            None,
            origin,
            Bytes::from(json),
            OrderBy::EventTime,
        );
        let error = future.event.as_ref().err().map(ToString::to_string);
        assert!(
            error.as_deref().is_some_and(|e| e.contains("9999")),
            "refused for its time: {error:?}"
        );

        let second = now / 1000;
        let mut heads = TopicHeads::new(2, Duration::from_millis(500));
        heads.push(0, Box::new(future));
        heads.push(0, created(1, second));
        heads.push(1, read(0, second + 1));
        heads.reached_end(0);
        heads.reached_end(1);
        let names = taken_names(&mut heads);
        assert_eq!(names, ["created0", "created1", "accessed0"]);
    }

    #[test]
    fn an_empty_queue_not_at_its_end_holds_the_others_back_up_to_max_idle() {
        let max_idle = Duration::from_millis(500);
        let mut heads = TopicHeads::new(2, max_idle);
        heads.push(1, read(0, 50));
        let start = Instant::now();
        assert!(heads.next(start).is_none(), "the creations may be earlier");
        assert!(heads.next(start + max_idle / 2).is_none());
        // Waited long enough: go on without it, and do not wait again for it
        // until it delivers.
        heads.push(1, read(1, 60));
        assert_eq!(taken(&mut heads, start + max_idle).len(), 2);
        heads.push(1, read(2, 70));
        assert_eq!(taken(&mut heads, start + max_idle).len(), 1);
        // A record on it starts a new spell: it is waited for again once empty.
        heads.push(0, created(0, 80));
        heads.push(1, read(3, 90));
        let later = start + 4 * max_idle;
        assert_eq!(taken(&mut heads, later).len(), 1, "the creation");
        assert!(heads.next(later).is_none(), "waiting for more creations");
        heads.reached_end(0);
        assert_eq!(taken(&mut heads, later).len(), 1, "at its end: no wait");
    }

    #[test]
    fn a_kept_box_lets_go_of_its_record_and_is_filled_again() {
        let mut block = bytes::BytesMut::from(&b"{ a payload }{ another }"[..]);
        let first = block.split_to(13).freeze();
        let mut spare = SpareBoxes::default();
        let mut kept = created(7, 1);
        kept.record.payload = first;
        let address = std::ptr::from_ref::<Decoded>(&kept);
        assert!(!block.try_reclaim(13), "the record holds the block's start");
        spare.keep(vec![kept]);
        // The payload's block is no longer shared with the kept box.
        assert!(block.try_reclaim(13), "the payload's bytes are freed");
        let next = *read(8, 2);
        let filled = spare.boxed(next);
        assert_eq!(
            std::ptr::from_ref::<Decoded>(&filled),
            address,
            "the same box"
        );
        assert_eq!(
            (filled.record.offset, &*filled.record.stream),
            (8, "accessed")
        );
        assert!(spare.boxes.is_empty());
        assert_eq!(spare.boxed(*read(9, 3)).record.offset, 9, "a new box");
    }

    #[test]
    fn a_new_text_goes_to_the_model_while_its_batch_still_gathers() {
        use crate::embed::recorder::Recorder;
        use crate::embed::{BatcherConfig, Embedder, SubBatch};

        let runtime = tokio::runtime::Runtime::new().unwrap();
        let model = Arc::new(Recorder::default());
        let batcher = {
            let _inside = runtime.enter();
            EmbedBatcher::spawn(
                Arc::clone(&model) as Arc<dyn Embedder>,
                BatcherConfig {
                    max_batch: 8,
                    max_wait: Duration::from_millis(1),
                    sub_batch: SubBatch::default(),
                    bucketing: true,
                },
            )
            .unwrap()
        };
        let mut batch = Gathering::new(100, 100).prefetching(Some(batcher.clone()));
        let mut supplied = created(2, 2);
        if let Ok(Event::MemoryCreated(memory)) = &mut supplied.event {
            memory.content = "brought its own vector".into();
            memory.embedding = Some(vec![0.5; EMBEDDING_DIM]);
        }
        batch.push(created(0, 1));
        batch.push(read(1, 1));
        batch.push(supplied);
        // No flush has happened; the model still gets the text.
        let waited = Instant::now();
        while model.texts().is_empty() && waited.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(
            model.texts(),
            vec!["text".to_owned()],
            "reads and supplied vectors are not embedded"
        );
        assert_eq!(batch.texts, 2);
        // The flush claims the vector instead of asking again.
        let vectors = runtime
            .block_on(batcher.embed_all(vec!["text".into()]))
            .unwrap();
        assert_eq!(vectors, vec![vec![4.0]]);
        assert_eq!(model.texts().len(), 1);
    }
}
