//! A partition's queue read many messages a call.
//!
//! rdkafka's [`PartitionQueue::poll`] returns one message a call through
//! librdkafka's event API: each message is wrapped in an event, found in
//! it, reference-counted in an `Arc` and freed with the event, and every
//! call takes the queue's lock twice and reads the clock three times. That
//! was about 1,400 instructions a message, as much as the rest of a read's
//! decoding. `rd_kafka_consume_batch_queue` (what confluent-kafka's own
//! `Consumer.consume` uses) hands over up to a chunk of messages at once and
//! moves the partition's application position once per chunk.
//!
//! The split [`PartitionQueue`] stays inside: it took the partition's queue
//! off the consumer's main queue, holds the non-empty callback, and keeps
//! the client alive for as long as this queue's own handle on it.

use std::ffi::CString;
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::Arc;

use rdkafka::bindings as rdsys;
use rdkafka::consumer::base_consumer::PartitionQueue;
use rdkafka::consumer::{BaseConsumer, Consumer, ConsumerContext};
use rdkafka::error::KafkaError;
use rdkafka::types::RDKafkaErrorCode;

/// How many messages one call takes at most: a chunk's pointers sit on the
/// stack.
const CHUNK: usize = 256;

/// One partition of one topic, split off from the consumer's queue.
pub struct BatchQueue<C: ConsumerContext> {
    /// Our own reference to the partition's queue (librdkafka counts them).
    raw: NonNull<rdsys::rd_kafka_queue_t>,
    split: PartitionQueue<C>,
}

// SAFETY: librdkafka's queues are thread-safe (each has its own lock), and
// the handle is only used through `&self` methods that librdkafka allows
// from any thread; `PartitionQueue` is `Send + Sync` for the same reason.
unsafe impl<C: ConsumerContext> Send for BatchQueue<C> {}
// SAFETY: as above.
unsafe impl<C: ConsumerContext> Sync for BatchQueue<C> {}

impl<C: ConsumerContext> BatchQueue<C> {
    /// Splits `topic`'s `partition` off the consumer's queue (`None` where
    /// the client does not know it, or the name holds a NUL).
    pub fn split(consumer: &Arc<BaseConsumer<C>>, topic: &str, partition: i32) -> Option<Self> {
        let split = consumer.split_partition_queue(topic, partition)?;
        let name = CString::new(topic).ok()?;
        // SAFETY: the client pointer is valid while `consumer` lives, and
        // the name is a NUL-terminated copy; the queue returned is ours to
        // destroy.
        let raw = unsafe {
            rdsys::rd_kafka_queue_get_partition(
                consumer.client().native_ptr(),
                name.as_ptr(),
                partition,
            )
        };
        Some(Self {
            raw: NonNull::new(raw)?,
            split,
        })
    }

    /// Calls `wake` whenever the queue becomes non-empty.
    pub fn set_nonempty_callback(&mut self, wake: impl Fn() + Send + Sync + 'static) {
        self.split.set_nonempty_callback(wake);
    }

    /// Takes up to `max` (at most a chunk) of the waiting messages, without
    /// waiting. They are freed when the [`Taken`] is dropped.
    pub fn take(&self, max: usize) -> Taken<'_> {
        let mut taken = Taken {
            messages: [std::ptr::null_mut(); CHUNK],
            count: 0,
            _queue: PhantomData,
        };
        // SAFETY: the queue is alive (`self`), and librdkafka writes at most
        // `max.min(CHUNK)` message pointers into the array.
        let count = unsafe {
            rdsys::rd_kafka_consume_batch_queue(
                self.raw.as_ptr(),
                0,
                taken.messages.as_mut_ptr(),
                max.min(CHUNK),
            )
        };
        // -1 is an error of the call itself (none is defined for a queue
        // that exists): nothing was taken.
        taken.count = usize::try_from(count).unwrap_or(0).min(CHUNK);
        taken
    }

    /// The most one [`BatchQueue::take`] returns.
    pub const fn chunk() -> usize {
        CHUNK
    }
}

impl<C: ConsumerContext> Drop for BatchQueue<C> {
    fn drop(&mut self) {
        // SAFETY: our reference, destroyed once, while the client (held by
        // `split`, dropped after this) is alive.
        unsafe { rdsys::rd_kafka_queue_destroy(self.raw.as_ptr()) }
    }
}

/// Messages taken from a [`BatchQueue`], freed on drop. They borrow the
/// queue, which keeps the client they belong to alive.
pub struct Taken<'q> {
    messages: [*mut rdsys::rd_kafka_message_t; CHUNK],
    count: usize,
    _queue: PhantomData<&'q ()>,
}

impl Taken<'_> {
    pub fn len(&self) -> usize {
        self.count
    }

    /// Each message in order: a record, or the error the client delivered
    /// in its place (the end of the partition, a record it cannot read).
    pub fn iter(&self) -> impl Iterator<Item = Result<Received<'_>, KafkaError>> {
        self.messages[..self.count].iter().map(|&message| {
            // SAFETY: librdkafka filled the first `count` slots with valid
            // messages, which live until `self` is dropped.
            let message = unsafe { &*message };
            match message.err {
                rdsys::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR => Ok(Received { message }),
                rdsys::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR__PARTITION_EOF => {
                    Err(KafkaError::PartitionEOF(message.partition))
                }
                code => Err(KafkaError::MessageConsumption(RDKafkaErrorCode::from(code))),
            }
        })
    }
}

impl Drop for Taken<'_> {
    fn drop(&mut self) {
        for &message in &self.messages[..self.count] {
            // SAFETY: each message was handed to us once and is freed once.
            unsafe { rdsys::rd_kafka_message_destroy(message) }
        }
    }
}

/// One record as the client holds it.
pub struct Received<'t> {
    message: &'t rdsys::rd_kafka_message_t,
}

impl Received<'_> {
    pub fn offset(&self) -> i64 {
        self.message.offset
    }

    pub fn partition(&self) -> i32 {
        self.message.partition
    }

    pub fn payload(&self) -> Option<&[u8]> {
        if self.message.payload.is_null() {
            return None;
        }
        // SAFETY: librdkafka's payload pointer and length describe one
        // buffer, alive while the message is.
        Some(unsafe {
            std::slice::from_raw_parts(self.message.payload.cast::<u8>(), self.message.len)
        })
    }

    /// The record's timestamp in milliseconds (`None`: not available).
    pub fn timestamp_millis(&self) -> Option<i64> {
        let mut kind = rdsys::rd_kafka_timestamp_type_t::RD_KAFKA_TIMESTAMP_NOT_AVAILABLE;
        // SAFETY: a valid message, and a place for the timestamp's type.
        let millis = unsafe { rdsys::rd_kafka_message_timestamp(self.message, &mut kind) };
        let available = kind != rdsys::rd_kafka_timestamp_type_t::RD_KAFKA_TIMESTAMP_NOT_AVAILABLE;
        (available && millis != -1).then_some(millis)
    }
}
