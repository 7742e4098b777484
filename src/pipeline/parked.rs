//! Parked reads (reads that came before their memory): when they have
//! waited long enough, and the dead letters they become then.

use std::collections::BTreeMap;

use super::summary::count;
use super::{Pipeline, PipelineError, RunSummary, dead_letter, flush_batch, new_batch};
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
        let rejected_at = self.clock.now();
        for user_id in &due {
            batch.expire_parked(user_id, waits)?;
            letters.extend(Self::expired_letters(
                self.codec,
                self.parking,
                batch.take_expired(),
                rejected_at,
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
        now: Millis,
        index: usize,
        summary: &mut RunSummary,
    ) -> Vec<(usize, Event)> {
        expired
            .into_iter()
            .map(|parked| {
                count(&mut summary.rejected, "unknown_memory");
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
                (index, dead_letter(&record, "unknown_memory", &reason, now))
            })
            .collect()
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
