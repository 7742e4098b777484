//! Where output events go: the [`OutputSink`] trait, and its embedded-mode
//! implementation writing JSON lines to a file or stdout; the
//! [`RequestSink`] through which the HTTP API sends a consolidation request
//! into the input stream. The Kafka implementations are in [`crate::kafka`].

use std::io::{self, Write};

use futures::future::BoxFuture;
use thiserror::Error;

use crate::error::Cause;
use crate::event::{ConsolidationRequested, Event, EventCodec};

#[derive(Debug, Error)]
pub enum SinkError {
    /// Writing the output file or stream failed (a full disk, a closed pipe).
    #[error("writing the output failed")]
    Io(#[from] io::Error),
    /// The transport did not take the events; `transient` says whether the
    /// same events may go through later.
    #[error("delivering the output failed")]
    Delivery {
        #[source]
        source: Cause,
        transient: bool,
    },
}

impl SinkError {
    /// Whether flushing the same events again may succeed: I/O errors pass
    /// (space comes back, a reader reconnects), delivery errors say.
    pub fn is_transient(&self) -> bool {
        match self {
            Self::Io(_) => true,
            Self::Delivery { transient, .. } => *transient,
        }
    }
}

/// Where the pipeline sends output events. The pipeline calls
/// [`OutputSink::flush`] before it makes anything durable that would stop
/// those events from being produced again after a crash.
pub trait OutputSink {
    /// Queues one event.
    fn emit(&mut self, event: &Event) -> Result<(), SinkError>;
    /// Returns once every queued event has reached its destination.
    fn flush(&mut self) -> Result<(), SinkError>;
}

/// Puts a consolidation request into the input stream, so that the worker
/// owning the user runs it in order with the user's events (service mode).
pub trait RequestSink: Send + Sync {
    /// Resolves once the broker has the request. `partition`: the one that
    /// owns the user, read from the user's watermarks; the partitioner
    /// decides for `None`.
    fn send(
        &self,
        request: ConsolidationRequested,
        partition: Option<i32>,
    ) -> BoxFuture<'_, Result<(), SinkError>>;
}

impl OutputSink for JsonLinesSink<'_> {
    fn emit(&mut self, event: &Event) -> Result<(), SinkError> {
        JsonLinesSink::emit(self, event).map_err(SinkError::from)
    }

    fn flush(&mut self) -> Result<(), SinkError> {
        JsonLinesSink::flush(self).map_err(SinkError::from)
    }
}

/// Writes output events, one JSON object per line. Dead letters can go to a
/// separate writer.
pub struct JsonLinesSink<'a> {
    codec: &'a EventCodec,
    events: Box<dyn Write + 'a>,
    dead_letters: Option<Box<dyn Write + 'a>>,
    written: u64,
}

impl<'a> JsonLinesSink<'a> {
    pub fn new(
        codec: &'a EventCodec,
        events: Box<dyn Write + 'a>,
        dead_letters: Option<Box<dyn Write + 'a>>,
    ) -> Self {
        Self {
            codec,
            events,
            dead_letters,
            written: 0,
        }
    }

    pub fn emit(&mut self, event: &Event) -> io::Result<()> {
        let writer = match (event, self.dead_letters.as_mut()) {
            (Event::DeadLetter(_), Some(dlq)) => dlq,
            _ => &mut self.events,
        };
        writer.write_all(&self.codec.encode_json(event))?;
        writer.write_all(b"\n")?;
        self.written += 1;
        Ok(())
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.events.flush()?;
        if let Some(dlq) = self.dead_letters.as_mut() {
            dlq.flush()?;
        }
        Ok(())
    }

    pub fn written(&self) -> u64 {
        self.written
    }
}
