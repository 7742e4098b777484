//! The consumer: one thread polls the group (rebalances, statistics) and
//! commits the offsets the workers made durable, in batches. Each assigned
//! partition's messages are split off into queues of their own, which its
//! worker reads.
//!
//! Rebalances (eager, range assignor): on revoke, the affected workers finish
//! the batch they hold and their durable offsets are committed before the
//! partitions are released; on assign, the partitions' queues are split off
//! before anything is fetched and new workers load their users' state from
//! the store.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};
use std::time::{Duration, Instant};

use rdkafka::client::ClientContext;
use rdkafka::config::RDKafkaLogLevel;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer, ConsumerContext, Rebalance};
use rdkafka::error::{KafkaError as RdKafkaError, KafkaResult};
use rdkafka::message::OwnedMessage;
use rdkafka::statistics::Statistics;
use rdkafka::{Message, Offset, TopicPartitionList};

use super::batch_queue::BatchQueue;
use super::client::{LogContext, client_config, creation_error};
use super::topics::check_co_partitioned;
use super::worker::{PartitionControl, WorkerHandle};
use super::{KafkaError, Shared};

/// Consumer-side state the rebalance callbacks and the poll loop share.
#[derive(Default)]
struct Group {
    workers: BTreeMap<i32, WorkerHandle>,
    /// Assigned topics per partition.
    assigned: BTreeMap<i32, Vec<String>>,
    /// Offsets last committed, so unchanged ones are not sent again.
    committed: HashMap<(String, i32), i64>,
}

pub struct GroupContext {
    shared: Arc<Shared>,
    group: Mutex<Group>,
    /// The consumer that owns this context, for splitting partition queues
    /// inside the rebalance callback (weak: the consumer owns the context).
    consumer: OnceLock<Weak<BaseConsumer<GroupContext>>>,
}

impl GroupContext {
    fn group(&self) -> MutexGuard<'_, Group> {
        // A poisoned lock means a panic elsewhere; the state is still usable.
        self.group.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn assign(&self, list: &TopicPartitionList) {
        let mut group = self.group();
        for element in list.elements() {
            group
                .assigned
                .entry(element.partition())
                .or_default()
                .push(element.topic().to_owned());
        }
        let partitions: Vec<i32> = group.assigned.keys().copied().collect();
        self.set_assigned(group.assigned.len());
        for &partition in &partitions {
            if group.workers.contains_key(&partition) {
                continue;
            }
            let topics = group.assigned[&partition].clone();
            let Some(consumer) = self.consumer.get().and_then(Weak::upgrade) else {
                tracing::error!(partition, "the consumer is gone; no worker started");
                continue;
            };
            // A topic whose queue cannot be split off has no worker queue;
            // the two lists stay in step.
            let (topics, queues): (Vec<String>, Vec<BatchQueue<GroupContext>>) = topics
                .into_iter()
                .filter_map(|topic| {
                    let queue = BatchQueue::split(&consumer, &topic, partition);
                    if queue.is_none() {
                        tracing::error!(topic, partition, "cannot split off a partition queue");
                    }
                    Some((topic, queue?))
                })
                .unzip();
            let control = Arc::new(Control(Arc::downgrade(&consumer)));
            match WorkerHandle::spawn(partition, topics, queues, Arc::clone(&self.shared), control)
            {
                Ok(worker) => {
                    group.workers.insert(partition, worker);
                }
                Err(error) => {
                    tracing::error!(partition, %error, "cannot start a partition worker")
                }
            }
        }
        tracing::info!(?partitions, "partitions assigned");
    }

    /// Stops the workers of the revoked partitions and commits what they
    /// made durable.
    fn revoke(&self, consumer: &BaseConsumer<GroupContext>, list: &TopicPartitionList) {
        let partitions: BTreeSet<i32> = list.elements().iter().map(|e| e.partition()).collect();
        let stopping: Vec<WorkerHandle> = {
            let mut group = self.group();
            for partition in &partitions {
                group.assigned.remove(partition);
            }
            self.set_assigned(group.assigned.len());
            self.forget_lag(&partitions);
            partitions
                .iter()
                .filter_map(|p| group.workers.remove(p))
                .collect()
        };
        for worker in stopping {
            worker.stop();
        }
        crate::faults::crash_point("rebalance.revoking");
        self.commit(consumer, CommitMode::Sync, Some(&partitions));
        tracing::info!(?partitions, "partitions revoked");
    }

    fn set_assigned(&self, partitions: usize) {
        self.shared.health.set_partitions(partitions);
        self.shared
            .metrics
            .partitions_assigned
            .set(partitions as i64);
    }

    fn forget_lag(&self, partitions: &BTreeSet<i32>) {
        for topic in self.shared.topics.inputs() {
            for partition in partitions {
                let _ = self
                    .shared
                    .metrics
                    .consumer_lag
                    .remove_label_values(&[topic.as_str(), &partition.to_string()]);
            }
        }
    }

    /// Lag per owned partition: the high-water mark librdkafka learned from
    /// fetch responses, minus the next offset engram will commit (what it
    /// made durable; else what the group committed). Also whether a broker
    /// connection is up, for readiness.
    fn record_statistics(&self, statistics: &Statistics) {
        let up = statistics
            .brokers
            .values()
            .any(|broker| broker.state == "UP");
        self.shared.health.set_broker_up(up);
        let assigned = self.group().assigned.clone();
        for (partition, topics) in &assigned {
            for topic in topics {
                let Some(stats) = statistics
                    .topics
                    .get(topic)
                    .and_then(|t| t.partitions.get(partition))
                else {
                    continue;
                };
                if stats.hi_offset < 0 {
                    continue;
                }
                let next = self
                    .shared
                    .offsets
                    .get(&(topic.clone(), *partition))
                    .map(|offset| *offset)
                    .or((stats.committed_offset >= 0).then_some(stats.committed_offset))
                    .unwrap_or(stats.lo_offset.max(0));
                self.shared
                    .metrics
                    .consumer_lag
                    .with_label_values(&[topic.as_str(), &partition.to_string()])
                    .set((stats.hi_offset - next).max(0));
            }
        }
    }

    /// Commits the durable offsets that changed (of `only` these partitions,
    /// which are then forgotten).
    fn commit(
        &self,
        consumer: &BaseConsumer<GroupContext>,
        mode: CommitMode,
        only: Option<&BTreeSet<i32>>,
    ) {
        let mut group = self.group();
        let mut list = TopicPartitionList::new();
        let mut changed = Vec::new();
        for entry in self.shared.offsets.iter() {
            let ((topic, partition), offset) = (entry.key().clone(), *entry.value());
            if only.is_some_and(|only| !only.contains(&partition)) {
                continue;
            }
            if group.committed.get(&(topic.clone(), partition)) == Some(&offset) {
                continue;
            }
            if list
                .add_partition_offset(&topic, partition, Offset::Offset(offset))
                .is_ok()
            {
                changed.push(((topic, partition), offset));
            }
        }
        if let Some(only) = only {
            self.shared.offsets.retain(|(_, p), _| !only.contains(p));
            group.committed.retain(|(_, p), _| !only.contains(p));
        }
        if changed.is_empty() {
            return;
        }
        match consumer.commit(&list, mode) {
            Ok(()) => {
                tracing::debug!(offsets = changed.len(), "offsets committed");
                if only.is_none() {
                    group.committed.extend(changed);
                }
            }
            Err(error) => {
                tracing::warn!(%error, "offset commit failed; retrying at the next interval")
            }
        }
    }

    /// A message the main queue returned (fetched before its partition's
    /// queue was split off) goes to its worker all the same.
    fn dispatch(&self, message: OwnedMessage) {
        let group = self.group();
        if let Some(worker) = group.workers.get(&message.partition()) {
            worker.hand_over(message);
        }
        // Otherwise not ours (any more): the owner reads it from the committed offset.
    }

    fn stop_all(&self, consumer: &BaseConsumer<GroupContext>) {
        let stopping: Vec<WorkerHandle> = {
            let mut group = self.group();
            std::mem::take(&mut group.workers).into_values().collect()
        };
        for worker in stopping {
            worker.stop();
        }
        self.commit(consumer, CommitMode::Sync, None);
    }
}

impl ClientContext for GroupContext {
    fn log(&self, level: RDKafkaLogLevel, facility: &str, message: &str) {
        LogContext.log(level, facility, message);
    }

    fn error(&self, error: RdKafkaError, reason: &str) {
        if matches!(
            error.rdkafka_error_code(),
            Some(rdkafka::types::RDKafkaErrorCode::AllBrokersDown)
        ) {
            self.shared.health.set_broker_up(false);
        }
        LogContext.error(error, reason);
    }

    fn stats(&self, statistics: Statistics) {
        self.record_statistics(&statistics);
    }
}

impl ConsumerContext for GroupContext {
    fn pre_rebalance(&self, consumer: &BaseConsumer<Self>, rebalance: &Rebalance<'_>) {
        if let Rebalance::Revoke(list) = rebalance {
            self.revoke(consumer, list);
        }
    }

    fn commit_callback(&self, result: KafkaResult<()>, _offsets: &TopicPartitionList) {
        if let Err(error) = result {
            // Forget what was sent, so the next interval sends it all again.
            self.group().committed.clear();
            tracing::warn!(%error, "offset commit failed; retrying at the next interval");
        }
    }

    fn post_rebalance(&self, _consumer: &BaseConsumer<Self>, rebalance: &Rebalance<'_>) {
        match rebalance {
            Rebalance::Assign(list) => self.assign(list),
            Rebalance::Error(error) => tracing::error!(%error, "rebalance failed"),
            Rebalance::Revoke(_) => {}
        }
    }
}

/// Polls until `shutdown` is set, then stops every worker, commits and
/// leaves the group.
pub fn consume(shared: Arc<Shared>, shutdown: &AtomicBool) -> Result<(), KafkaError> {
    let config = &shared.config;
    let defaults = [
        ("group.id", config.group_id.clone()),
        // Offsets are committed by engram once durable, never automatically.
        ("enable.auto.commit", "false".to_owned()),
        ("enable.auto.offset.store", "false".to_owned()),
        ("auto.offset.reset", config.auto_offset_reset.clone()),
        (
            "session.timeout.ms",
            config.session_timeout.as_millis().to_string(),
        ),
        (
            "heartbeat.interval.ms",
            config.heartbeat_interval.as_millis().to_string(),
        ),
        // Partition p of every input topic goes to the same member.
        ("partition.assignment.strategy", "range".to_owned()),
        // A partition queue reports its end, so its worker does not hold the
        // other topics back waiting for it (see the worker's time order).
        ("enable.partition.eof", "true".to_owned()),
        // Lag (from fetch responses) and broker states for metrics and readiness.
        ("statistics.interval.ms", "5000".to_owned()),
        // Prefetched but not yet taken by its worker, per partition: the
        // in-flight bound and the point where back-pressure starts.
        (
            "queued.min.messages",
            config.max_in_flight_per_partition.max(1).to_string(),
        ),
        // How soon a full partition is looked at again: a worker drains its
        // prefetch in well under librdkafka's default second, then idles.
        ("fetch.queue.backoff.ms", "20".to_owned()),
        // Partition fetches of 1 MiB (librdkafka's default; fetch.max.bytes
        // stays at its 50 MiB). Each fetch response is read into a buffer
        // of its size, and 16 MiB ones landed in fresh memory every time:
        // about 25,000 page faults in librdkafka's thread per 600,000 reads,
        // at 2.5 µs of system time each here. At 1 MiB, engram's system time
        // per read halved and the reads were not slower (bench-kafka,
        // docs/2026-12-06-access-path-cuts.md, "Eighth look"). The larger
        // fetches had paid when a worker spent 10-50 µs a read.
        ("max.partition.fetch.bytes", (1 << 20).to_string()),
    ];
    let context = GroupContext {
        shared: Arc::clone(&shared),
        group: Mutex::new(Group::default()),
        consumer: OnceLock::new(),
    };
    let consumer: Arc<BaseConsumer<GroupContext>> = Arc::new(
        client_config(config, &defaults)?
            .create_with_context(context)
            .map_err(|e| creation_error("consumer", e))?,
    );
    let _ = consumer.context().consumer.set(Arc::downgrade(&consumer));
    let inputs = shared.topics.inputs();
    check_inputs_co_partitioned(&consumer, &inputs)?;
    let names: Vec<&str> = inputs.iter().map(String::as_str).collect();
    consumer
        .subscribe(&names)
        .map_err(|e| KafkaError::client(format!("cannot subscribe to {names:?}"), e))?;
    tracing::info!(topics = ?names, group = %config.group_id, "consuming");
    let commit_every = config.commit_interval.max(Duration::from_millis(1));
    let report_every = Duration::from_secs(30);
    let mut last_commit = Instant::now();
    let mut last_report = Instant::now();
    let mut last_partition_check = Instant::now();
    let mut stopped_for_good = None;
    while !shutdown.load(Ordering::Relaxed) {
        match consumer.poll(Duration::from_millis(100)) {
            None => {}
            Some(Ok(message)) => consumer.context().dispatch(message.detach()),
            // Ends of partitions not split off yet: their workers see their own.
            Some(Err(RdKafkaError::PartitionEOF(_))) => {}
            Some(Err(error)) => shared.consumer_error(&error, None),
        }
        if shared.denied.get().is_some() {
            break;
        }
        // An operator may grow one input topic while engram runs.
        if last_partition_check.elapsed() >= PARTITION_CHECK_EVERY {
            last_partition_check = Instant::now();
            if let Err(error) = check_inputs_co_partitioned(&consumer, &inputs) {
                tracing::error!(%error, "stopping");
                stopped_for_good = Some(error);
                break;
            }
        }
        if last_commit.elapsed() >= commit_every {
            // Asynchronous: the poll loop must not wait on the broker. The
            // result arrives in `commit_callback`.
            consumer
                .context()
                .commit(&consumer, CommitMode::Async, None);
            last_commit = Instant::now();
        }
        if last_report.elapsed() >= report_every {
            shared.metrics.log_totals("stream progress");
            last_report = Instant::now();
        }
    }
    tracing::info!("stopping: finishing in-flight batches");
    consumer.context().stop_all(&consumer);
    consumer.unsubscribe();
    if let Some(error) = stopped_for_good {
        return Err(error);
    }
    match shared.denied.get() {
        Some(reason) => Err(KafkaError::Unauthorized(reason.clone())),
        None => Ok(()),
    }
}

/// A worker's way to the consumer, for its own partitions only.
struct Control(Weak<BaseConsumer<GroupContext>>);

impl PartitionControl for Control {
    fn position(&self, topic: &str, partition: i32) -> Option<i64> {
        let consumer = self.0.upgrade()?;
        let positions = consumer.position().ok()?;
        match positions.find_partition(topic, partition)?.offset() {
            Offset::Offset(offset) => Some(offset),
            _ => None,
        }
    }

    fn seek(&self, topic: &str, partition: i32, offset: i64) -> Result<(), String> {
        let consumer = self.0.upgrade().ok_or("the consumer is gone")?;
        consumer
            .seek(
                topic,
                partition,
                Offset::Offset(offset),
                Duration::from_secs(10),
            )
            .map_err(|error| error.to_string())
    }
}

/// How often the input topics' partition counts are looked at again.
const PARTITION_CHECK_EVERY: Duration = Duration::from_secs(10);

/// Reads the input topics' partition counts from the brokers and refuses
/// counts that differ. Topics not there yet, and brokers that do not
/// answer, are passed over: the next look sees them.
fn check_inputs_co_partitioned(
    consumer: &BaseConsumer<GroupContext>,
    inputs: &[String],
) -> Result<(), KafkaError> {
    let mut counts = BTreeMap::new();
    for topic in inputs {
        // Short, and one failure ends the round: the poll loop waits on it.
        let metadata = match consumer.fetch_metadata(Some(topic), Duration::from_secs(2)) {
            Ok(metadata) => metadata,
            Err(error) => {
                tracing::debug!(topic, %error, "cannot read the topic's partition count now");
                return Ok(());
            }
        };
        for found in metadata.topics() {
            if found.name() == topic && found.error().is_none() && !found.partitions().is_empty() {
                counts.insert(topic.clone(), found.partitions().len());
            }
        }
    }
    check_co_partitioned(&counts)
}
