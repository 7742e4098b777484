//! Parked reads (reads that came before their memory): when they have
//! waited long enough, and the dead letters they become then.

use std::collections::BTreeMap;

use super::summary::count;
use super::{Pipeline, PipelineError, RunSummary, dead_letter, flush_batch, new_batch};
use crate::clock::Clock;
use crate::emit::OutputSink;
use crate::event::{Event, EventCodec};
use crate::model::{Millis, ParkedRead, UserState};
use crate::source::SourceRecord;
use crate::state::{Parking, WaitClock};

impl Pipeline<'_> {
    /// The clocks parked reads age by: stream time, how far this
    /// pipeline's input has got (unknown after a restart until an event
    /// applies, so an outage ages nothing). A wall-clock pipeline that has
    /// read all of its input there is ages them by the wall clock too.
    fn parked_reads_clock(&self, caught_up: bool) -> WaitClock {
        WaitClock {
            stream: self.clock.stream_now(),
            wall: (caught_up && !self.clock.is_stream_time()).then(|| self.clock.now()),
        }
    }

    /// Dead-letters the parked reads that waited their full time, for
    /// users with no event since to do it.
    pub(super) fn expire_parked_reads(
        &mut self,
        caught_up: bool,
        sink: &mut dyn OutputSink,
        summary: &mut RunSummary,
    ) -> Result<(), PipelineError> {
        let waits = self.parked_reads_clock(caught_up);
        if waits.is_stopped() {
            return Ok(());
        }
        let max_age = self.parking.max_age_ms;
        let due: Vec<String> = self
            .parked_since
            .iter()
            .filter(|(_, (stream, wall))| waits.waited(*stream, *wall, max_age))
            .map(|(user_id, _)| user_id.clone())
            .collect();
        if due.is_empty() {
            return Ok(());
        }
        let mut batch = new_batch(
            self.store,
            &self.settings,
            &mut self.embedding,
            self.parking,
            &mut self.carried,
        );
        let mut letters = Vec::new();
        let clock = LetterClock::of(&self.clock);
        for user_id in &due {
            batch.expire_parked(user_id, waits)?;
            letters.extend(Self::expired_letters(
                self.codec,
                self.parking,
                batch.take_expired(),
                clock,
                0,
                summary,
            ));
        }
        let states: Vec<UserState> = due
            .iter()
            .filter_map(|user_id| batch.user_state(user_id).cloned())
            .collect();
        flush_batch(
            batch,
            &mut self.carried,
            &mut letters,
            usize::MAX,
            sink,
            summary,
        )?;
        for state in &states {
            track_parked(&mut self.parked_since, state);
        }
        sink.flush().map_err(PipelineError::Output)
    }

    /// The dead letters of parked reads that aged out, placed at `index`
    /// among the batch's records.
    pub(super) fn expired_letters(
        codec: &EventCodec,
        parking: Parking,
        expired: Vec<ParkedRead>,
        clock: LetterClock,
        index: usize,
        summary: &mut RunSummary,
    ) -> Vec<(usize, Event)> {
        expired
            .into_iter()
            .map(|parked| {
                count(&mut summary.rejected, "unknown_memory");
                let rejected_at = clock.stamp(&parked, parking.max_age_ms);
                let reason = format!(
                    "memory {} was not created within {} s of the read \
                     (limits.max_parked_read_age)",
                    parked.read.memory_id,
                    parking.max_age_ms / 1_000
                );
                let record = SourceRecord {
                    stream: parked.stream.into(),
                    partition: parked.partition,
                    offset: parked.offset,
                    // The read as engram kept it, re-encoded as JSON.
                    payload: codec
                        .encode_json(&Event::MemoryAccessed(parked.read))
                        .into(),
                    oversize: None,
                };
                (
                    index,
                    dead_letter(&record, "unknown_memory", &reason, rejected_at),
                )
            })
            .collect()
    }
}

/// The time an aged-out read's dead letter is stamped with.
#[derive(Debug, Clone, Copy)]
pub(super) struct LetterClock {
    now: Millis,
    stream_time: bool,
}

impl LetterClock {
    pub(super) fn of(clock: &Clock) -> Self {
        Self {
            now: clock.now(),
            stream_time: clock.is_stream_time(),
        }
    }

    /// On stream time (a replay), the end of the read's wait, or now where
    /// that comes first (parking turned off): when a batch notices the end
    /// depends on where the batch ends, and a replay in batches of another
    /// size must write the same letter. On the wall clock, now, as every
    /// other dead letter: a service's stream time is event time, which may
    /// be long past.
    fn stamp(self, parked: &ParkedRead, max_age: Millis) -> Millis {
        if self.stream_time {
            self.now.min(parked.parked_at.saturating_add(max_age))
        } else {
            self.now
        }
    }
}

/// Remembers whether (and since when) a user has reads parked.
pub(super) fn track_parked(
    parked_since: &mut BTreeMap<String, (Millis, Millis)>,
    state: &UserState,
) {
    let reads = &state.parked_reads;
    let oldest_stream = reads.iter().map(|read| read.parked_at).min();
    let oldest_wall = reads.iter().map(ParkedRead::wall_parked_at).min();
    match oldest_stream.zip(oldest_wall) {
        Some(oldest) => parked_since.insert(state.user_id.clone(), oldest),
        None => parked_since.remove(&state.user_id),
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ClockMode;
    use crate::event::MemoryAccessed;

    fn parked_at(parked_at: Millis) -> ParkedRead {
        ParkedRead {
            read: MemoryAccessed {
                event_id: "a1".into(),
                user_id: "u1".into(),
                memory_id: "m1".into(),
                accessed_at: chrono::DateTime::from_timestamp_millis(parked_at).unwrap_or_default(),
                context: None,
            },
            stream: "reads".to_owned(),
            partition: None,
            offset: 0,
            parked_at,
            parked_wall_at: None,
        }
    }

    #[test]
    fn a_replay_stamps_the_end_of_the_wait_and_a_service_the_wall_time() {
        let hour = 3_600_000;
        let mut replay = Clock::new(ClockMode::Stream, true);
        replay.observe(5 * hour);
        let stamped = LetterClock::of(&replay).stamp(&parked_at(hour), hour);
        assert_eq!(
            stamped,
            2 * hour,
            "where the wait ended, not where it was noticed"
        );
        // A wait that ends after now (parking turned off drops every
        // parked read at once): now.
        let stamped = LetterClock::of(&replay).stamp(&parked_at(5 * hour), hour);
        assert_eq!(stamped, 5 * hour);

        let service = Clock::new(ClockMode::Wall, false);
        let before = Clock::wall();
        let stamped = LetterClock::of(&service).stamp(&parked_at(hour), hour);
        assert!(
            stamped >= before,
            "the wall time, not an event time long past"
        );
    }
}
