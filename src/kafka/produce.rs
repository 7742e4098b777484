//! Output events to their topics: keyed by `user_id`, idempotent producer,
//! failed deliveries retried until they succeed or the partition stops.
//!
//! An idempotent producer can be fenced for good (a fatal error, or a
//! broker that fences its epoch after deliveries timed out during an
//! outage). Every later send would fail, so the producer is replaced by a
//! new one, with a new producer id, and the undelivered events are sent
//! again through it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use futures::future::{BoxFuture, join_all};
use rdkafka::ClientConfig;
use rdkafka::error::KafkaError as ClientError;
use rdkafka::producer::{FutureProducer, FutureRecord, Producer};
use rdkafka::types::RDKafkaErrorCode;
use rdkafka::util::Timeout;
use tokio::runtime::Handle;

use super::KafkaError;
use super::client::{LogContext, client_config, creation_error};
use super::topics::Topics;
use crate::config::KafkaConfig;
use crate::emit::{OutputSink, RequestSink, SinkError};
use crate::event::{ConsolidationRequested, Event, EventCodec, WireFormat};
use crate::metrics::Metrics;

/// The producer of every output topic (one per instance, shared).
pub struct OutputProducer {
    producer: RwLock<Arc<FutureProducer<LogContext>>>,
    /// To build a replacement.
    client: ClientConfig,
    codec: EventCodec,
    topics: Topics,
    format: WireFormat,
    metrics: Arc<Metrics>,
}

impl OutputProducer {
    pub fn new(
        config: &KafkaConfig,
        codec: EventCodec,
        topics: Topics,
        format: WireFormat,
        metrics: Arc<Metrics>,
    ) -> Result<Self, KafkaError> {
        let defaults = [
            // Broker-side de-duplication of retries, in order per partition.
            ("enable.idempotence", "true".to_owned()),
            ("acks", "all".to_owned()),
            ("linger.ms", "5".to_owned()),
            ("message.timeout.ms", "30000".to_owned()),
            // The platform's producers' partitioner, so a request for a
            // user lands on the partition that owns the user.
            ("partitioner", config.partitioner.clone()),
        ];
        let client = client_config(config, &defaults)?;
        let producer = create(&client)?;
        Ok(Self {
            producer: RwLock::new(Arc::new(producer)),
            client,
            codec,
            topics,
            format,
            metrics,
        })
    }

    fn current(&self) -> Arc<FutureProducer<LogContext>> {
        Arc::clone(&self.producer.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// Replaces `failed` with a new producer, unless another delivery has
    /// replaced it already.
    fn replace(&self, failed: &Arc<FutureProducer<LogContext>>, reason: &str) {
        let mut current = self.producer.write().unwrap_or_else(|e| e.into_inner());
        if !Arc::ptr_eq(&current, failed) {
            return;
        }
        match create(&self.client) {
            Ok(producer) => {
                tracing::warn!(reason, "the output producer was fenced; replaced it");
                *current = Arc::new(producer);
            }
            Err(error) => tracing::error!(%error, "cannot replace the fenced output producer"),
        }
    }

    fn encode(&self, event: &Event) -> Result<Vec<u8>, KafkaError> {
        match self.format {
            WireFormat::Json => Ok(self.codec.encode_json(event)),
            WireFormat::Avro => self.codec.encode_avro(event).map_err(KafkaError::Encode),
        }
    }

    /// Sends `events` and returns once the broker has acknowledged all of
    /// them. Failed sends are retried with backoff; when `stop` is set while
    /// some are still failing, gives up with an error (their input offsets
    /// are then not committed, so a restart produces them again).
    pub async fn deliver(&self, events: &[Event], stop: &AtomicBool) -> Result<(), KafkaError> {
        self.deliver_to(events, None, stop).await
    }

    /// [`OutputProducer::deliver`] to one `partition` of each event's topic,
    /// or where the partitioner puts it by key for `None`.
    async fn deliver_to(
        &self,
        events: &[Event],
        partition: Option<i32>,
        stop: &AtomicBool,
    ) -> Result<(), KafkaError> {
        let payloads = events
            .iter()
            .map(|event| self.encode(event))
            .collect::<Result<Vec<_>, _>>()?;
        let keys: Vec<Option<String>> = events.iter().map(message_key).collect();
        let mut pending: Vec<usize> = (0..events.len()).collect();
        let mut backoff = Duration::from_millis(100);
        loop {
            let producer = self.current();
            let mut fenced = None;
            let sends = pending.iter().map(|&i| {
                let event = &events[i];
                let mut record = FutureRecord::to(self.topics.topic(event.event_type()))
                    .payload(payloads[i].as_slice());
                if let Some(key) = &keys[i] {
                    record = record.key(key.as_str());
                }
                if let Some(partition) = partition {
                    record = record.partition(partition);
                }
                producer.send(record, Timeout::After(Duration::from_secs(10)))
            });
            let results = join_all(sends).await;
            let mut failed = Vec::new();
            let mut last_error = None;
            for (&i, result) in pending.iter().zip(results) {
                let Err((error, _)) = result else {
                    continue;
                };
                self.metrics.delivery_failures.inc();
                let topic = self.topics.topic(events[i].event_type());
                if !is_transient(&error) {
                    // Sending it again gets the same answer. Dropping it
                    // would lose it (a dead letter, a run's report) while
                    // the offsets behind it commit: stop instead.
                    self.metrics.undeliverable.inc();
                    return Err(KafkaError::Refused {
                        output: format!(
                            "event {} ({} bytes) on `{topic}`",
                            events[i].event_id(),
                            payloads[i].len()
                        ),
                        source: Box::new(error),
                    });
                }
                tracing::warn!(
                    topic,
                    event_id = events[i].event_id(),
                    %error,
                    "output delivery failed; retrying"
                );
                if is_fencing(&error) {
                    fenced = Some(error.to_string());
                }
                failed.push(i);
                last_error = Some(error);
            }
            let Some(last_error) = last_error else {
                return Ok(());
            };
            if let Some(reason) = producer
                .client()
                .fatal_error()
                .map(|(_, reason)| reason)
                .or(fenced)
            {
                self.replace(&producer, &reason);
            }
            if stop.load(Ordering::Relaxed) {
                return Err(KafkaError::Delivery {
                    undelivered: failed.len(),
                    source: last_error,
                });
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(Duration::from_secs(10));
            pending = failed;
        }
    }

    /// Waits for everything still queued in the client.
    pub fn flush(&self, timeout: Duration) {
        if let Err(error) = self.current().flush(timeout) {
            tracing::warn!(%error, "producer flush at shutdown did not finish");
        }
    }
}

fn create(client: &ClientConfig) -> Result<FutureProducer<LogContext>, KafkaError> {
    client
        .create_with_context(LogContext)
        .map_err(|e| creation_error("producer", e))
}

/// Whether a failed call may succeed if made again. Refusals of the
/// record itself or of our rights to the topic are final; timeouts, brokers
/// down, leaders moving and the like pass.
pub(super) fn is_transient(error: &ClientError) -> bool {
    !matches!(
        error.rdkafka_error_code(),
        Some(
            RDKafkaErrorCode::MessageSizeTooLarge
                | RDKafkaErrorCode::MessageBatchTooLarge
                | RDKafkaErrorCode::InvalidTimestamp
                | RDKafkaErrorCode::InvalidRequest
                | RDKafkaErrorCode::InvalidMessage
                | RDKafkaErrorCode::InvalidMessageSize
                | RDKafkaErrorCode::InvalidRecord
                | RDKafkaErrorCode::InvalidTopic
                | RDKafkaErrorCode::InvalidRequiredAcks
                | RDKafkaErrorCode::TopicAuthorizationFailed
                | RDKafkaErrorCode::ClusterAuthorizationFailed
                | RDKafkaErrorCode::TransactionalIdAuthorizationFailed
                | RDKafkaErrorCode::PolicyViolation
                | RDKafkaErrorCode::UnsupportedForMessageFormat
                | RDKafkaErrorCode::UnsupportedVersion
                | RDKafkaErrorCode::BadMessage
                | RDKafkaErrorCode::InvalidArgument
        )
    )
}

/// Errors after which this producer's id can send nothing more.
fn is_fencing(error: &ClientError) -> bool {
    matches!(
        error.rdkafka_error_code(),
        Some(RDKafkaErrorCode::ProducerFenced | RDKafkaErrorCode::InvalidProducerEpoch)
    )
}

/// Outputs are keyed by user; dead letters by their source partition, so
/// each partition's rejects stay in order.
fn message_key(event: &Event) -> Option<String> {
    match event {
        Event::DeadLetter(letter) => Some(match letter.partition {
            Some(partition) => format!("{}/{partition}", letter.source_topic),
            None => letter.source_topic.clone(),
        }),
        other => other.user_id().map(str::to_owned),
    }
}

/// The pipeline's sink in service mode: events are queued and delivered,
/// all together, when the pipeline flushes.
pub struct KafkaSink<'a> {
    producer: &'a OutputProducer,
    runtime: Handle,
    stop: &'a AtomicBool,
    queued: Vec<Event>,
}

impl<'a> KafkaSink<'a> {
    pub fn new(producer: &'a OutputProducer, runtime: Handle, stop: &'a AtomicBool) -> Self {
        Self {
            producer,
            runtime,
            stop,
            queued: Vec::new(),
        }
    }
}

impl OutputSink for KafkaSink<'_> {
    fn emit(&mut self, event: &Event) -> Result<(), SinkError> {
        self.queued.push(event.clone());
        Ok(())
    }

    fn flush(&mut self) -> Result<(), SinkError> {
        if self.queued.is_empty() {
            return Ok(());
        }
        let result = self
            .runtime
            .block_on(self.producer.deliver(&self.queued, self.stop));
        // Delivered, or to be produced again from the uncommitted input.
        self.queued.clear();
        result.map_err(sink_error)
    }
}

/// The HTTP API's requests go out like any output: retried until the broker
/// takes them (the caller bounds the wait).
impl RequestSink for OutputProducer {
    fn send(
        &self,
        request: ConsolidationRequested,
        partition: Option<i32>,
    ) -> BoxFuture<'_, Result<(), SinkError>> {
        Box::pin(async move {
            let stop = AtomicBool::new(false);
            let request = [Event::ConsolidationRequested(request)];
            self.deliver_to(&request, partition, &stop)
                .await
                .map_err(sink_error)
        })
    }
}

fn sink_error(error: KafkaError) -> SinkError {
    SinkError::Delivery {
        transient: error.is_transient(),
        source: Box::new(error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refused_records_are_final_and_outages_pass() {
        let failed = |code| ClientError::MessageProduction(code);
        for code in [
            RDKafkaErrorCode::MessageSizeTooLarge,
            RDKafkaErrorCode::InvalidRecord,
            RDKafkaErrorCode::TopicAuthorizationFailed,
        ] {
            assert!(!is_transient(&failed(code)), "{code:?}");
        }
        for code in [
            RDKafkaErrorCode::MessageTimedOut,
            RDKafkaErrorCode::AllBrokersDown,
            RDKafkaErrorCode::NotLeaderForPartition,
            RDKafkaErrorCode::QueueFull,
        ] {
            assert!(is_transient(&failed(code)), "{code:?}");
        }
        let at_stop = KafkaError::Delivery {
            undelivered: 1,
            source: failed(RDKafkaErrorCode::MessageTimedOut),
        };
        assert!(sink_error(at_stop).is_transient());
    }
}
