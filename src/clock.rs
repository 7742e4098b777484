//! "Now" for consolidation decisions (docs/design.md §9): the wall clock in the
//! service, stream time (the latest event time seen) when replaying records.

use chrono::Utc;
use serde::{Deserialize, Serialize};

/// Milliseconds since the Unix epoch, UTC. Stored and compared as integers so
/// that state is exact and ordering is total.
pub type Millis = i64;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClockMode {
    /// Stream time for file/stdin input, wall clock with a broker.
    #[default]
    Auto,
    /// The latest event time seen so far.
    Stream,
    /// The machine's clock.
    Wall,
}

/// The clock of one pipeline.
#[derive(Debug, Clone)]
pub struct Clock {
    stream: bool,
    latest_event: Option<Millis>,
}

impl Clock {
    /// `replaying` says whether input is a recording (file or stdin), which is
    /// what `auto` decides by.
    pub fn new(mode: ClockMode, replaying: bool) -> Self {
        let stream = match mode {
            ClockMode::Auto => replaying,
            ClockMode::Stream => true,
            ClockMode::Wall => false,
        };
        Self {
            stream,
            latest_event: None,
        }
    }

    pub fn is_stream_time(&self) -> bool {
        self.stream
    }

    /// Advances stream time; event time never moves it backwards.
    pub fn observe(&mut self, event_time: Millis) {
        self.latest_event = Some(self.latest_event.map_or(event_time, |t| t.max(event_time)));
    }

    /// The latest event time seen, whatever the mode: how far this
    /// pipeline's input has got, which is what waiting reads age by.
    pub fn stream_now(&self) -> Option<Millis> {
        self.latest_event
    }

    /// The current time, unless this is stream time and no event was seen yet.
    pub fn known_now(&self) -> Option<Millis> {
        (!self.stream || self.latest_event.is_some()).then(|| self.now())
    }

    /// The current time. Stream time before any event falls back to the wall clock.
    pub fn now(&self) -> Millis {
        self.now_at(Self::wall())
    }

    /// [`Clock::now`] with `wall` as the wall clock's reading: one reading
    /// can serve many events applied within moments of each other.
    pub fn now_at(&self, wall: Millis) -> Millis {
        match (self.stream, self.latest_event) {
            (true, Some(latest)) => latest,
            _ => wall,
        }
    }

    /// The wall clock's reading.
    pub fn wall() -> Millis {
        Utc::now().timestamp_millis()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_time_is_the_latest_event_time() {
        let mut clock = Clock::new(ClockMode::Auto, true);
        clock.observe(5_000);
        clock.observe(3_000);
        assert_eq!(clock.now(), 5_000);
        clock.observe(9_000);
        assert_eq!(clock.now(), 9_000);
    }

    #[test]
    fn wall_clock_ignores_event_time() {
        let mut clock = Clock::new(ClockMode::Wall, true);
        clock.observe(5_000);
        assert!(clock.now() > 1_600_000_000_000);
        assert!(!Clock::new(ClockMode::Auto, false).is_stream_time());
    }
}
