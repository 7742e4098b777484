//! Embedded-mode output: events as JSON lines to a file or stdout.

use std::io::{self, Write};

use crate::event::{Event, EventCodec};

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
