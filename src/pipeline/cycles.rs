//! The cycles a pipeline runs between events: pending runs of the users a
//! batch triggered, and scheduled runs as stream time reaches them.

use std::sync::Arc;

use super::summary::count;
use super::{Pipeline, PipelineError, RunSummary};
use crate::config::ConsolidationConfig;
use crate::cycle::{CycleRequest, confirm_run, run_cycle_unconfirmed};
use crate::emit::OutputSink;
use crate::event::{RunMode, TriggerReason};
use crate::model::{Millis, PendingRun};
use crate::schedule::Schedule;
use crate::trigger::{self, automatic_run};

impl Pipeline<'_> {
    /// Runs the scheduled cycles due by the clock's "now" (the service's
    /// timer; with input flowing they also run between events), and ages
    /// out parked reads. `caught_up` says the caller has read all of its
    /// input there is: with the wall clock, parked reads then age by it too,
    /// as nothing earlier is left to read.
    /// After an error, as [`Pipeline::process`]: recover, then call again.
    pub fn run_due(
        &mut self,
        caught_up: bool,
        sink: &mut dyn OutputSink,
    ) -> Result<RunSummary, PipelineError> {
        self.forgetting_a_failure(|pipeline| pipeline.run_due_cycles(caught_up, sink))
    }

    fn run_due_cycles(
        &mut self,
        caught_up: bool,
        sink: &mut dyn OutputSink,
    ) -> Result<RunSummary, PipelineError> {
        let mut summary = RunSummary::default();
        // Stream time stands still between events; before the first one it
        // is unknown, and the wall clock would run every cycle early.
        let Some(now) = self.clock.known_now() else {
            return Ok(summary);
        };
        if self.schedule.next_due(now).is_some() {
            self.run_scheduled(now, sink, &mut summary)?;
            sink.flush().map_err(PipelineError::Output)?;
        }
        self.expire_parked_reads(caught_up, sink, &mut summary)?;
        Ok(summary)
    }

    /// Runs a user's pending cycles, oldest first, each in its own
    /// transaction. A run leaves the pending list only once its events are
    /// out, so a crash in between runs it again (re-emitting its report).
    pub(super) fn run_pending(
        &mut self,
        user_id: &str,
        sink: &mut dyn OutputSink,
        summary: &mut RunSummary,
    ) -> Result<(), PipelineError> {
        match self.store.user_state(user_id)? {
            Some(state) => self.run_runs(user_id, state.cycle.pending_runs, sink, summary),
            None => Ok(()),
        }
    }

    /// Runs these pending runs of a user, in order (see [`Self::run_pending`]).
    pub(super) fn run_runs(
        &mut self,
        user_id: &str,
        runs: Vec<PendingRun>,
        sink: &mut dyn OutputSink,
        summary: &mut RunSummary,
    ) -> Result<(), PipelineError> {
        for PendingRun {
            run_id,
            trigger,
            mode,
            now,
        } in runs
        {
            let request = CycleRequest {
                user_id: user_id.to_owned(),
                run_id,
                trigger,
                mode,
                now,
            };
            let embedder = self
                .embedding
                .as_ref()
                .map(|e| (e.texts.embedder, e.texts.sub_batch));
            let permit = self.cycle_limit.as_ref().and_then(|limit| {
                limit
                    .runtime
                    .block_on(Arc::clone(&limit.permits).acquire_owned())
                    .ok()
            });
            // The cycle writes the user's saliences (a merge absorbs its
            // members' reads): the next batch reads them from the store.
            if let Some(carried) = &mut self.carried {
                carried.forget_user(user_id);
            }
            let output = run_cycle_unconfirmed(self.store, &request, &self.settings, embedder)?;
            drop(permit);
            if let Some(embedding) = &mut self.embedding
                && mode == RunMode::Execute
            {
                // Statuses changed and memories were added: reload on next use.
                embedding.indexes.forget(user_id);
            }
            count(&mut summary.cycles, trigger_name(trigger));
            if output.fresh && output.report.executed {
                for action in &output.report.actions {
                    count(&mut summary.actions, action.action_type.as_str());
                }
            }
            for event in &output.events {
                sink.emit(event).map_err(PipelineError::Output)?;
                summary.outputs += 1;
            }
            sink.flush().map_err(PipelineError::Output)?;
            confirm_run(self.store, &request)?;
        }
        Ok(())
    }

    /// Runs every scheduled cycle due at or before `now`, earliest first,
    /// each with "now" at its due time.
    pub(super) fn run_scheduled(
        &mut self,
        now: Millis,
        sink: &mut dyn OutputSink,
        summary: &mut RunSummary,
    ) -> Result<(), PipelineError> {
        while let Some((due, user_id)) = self.schedule.next_due(now) {
            let Some(mut state) = self.store.user_state(&user_id)? else {
                self.schedule.remove(&user_id);
                continue;
            };
            let previous = state.last_run_id.clone().unwrap_or_default();
            let run = automatic_run(&user_id, TriggerReason::Schedule, due, &previous);
            trigger::queue(&mut state, run);
            let mut batch = crate::store::WriteBatch::default();
            batch.push(crate::store::Write::PutUserState(state));
            self.store.commit(&batch)?;
            self.run_pending(&user_id, sink, summary)?;
            self.refresh_schedule(&user_id)?;
            if self.schedule.next_due(now) == Some((due, user_id.clone())) {
                // Not cleared by its cycle; never loop on it.
                self.schedule.remove(&user_id);
            }
        }
        Ok(())
    }

    /// Re-reads a user's schedule from the store.
    pub(super) fn refresh_schedule(&mut self, user_id: &str) -> Result<(), PipelineError> {
        match self.store.user_state(user_id)? {
            Some(state) => self.schedule.update(&state),
            None => self.schedule.remove(user_id),
        }
        Ok(())
    }
}

/// An empty schedule as the consolidation settings configure it.
pub(super) fn schedule(consolidation: &ConsolidationConfig) -> Schedule {
    Schedule::new(
        consolidation.trigger.schedule_interval,
        consolidation.trigger.schedule_jitter,
    )
}

fn trigger_name(trigger: TriggerReason) -> &'static str {
    match trigger {
        TriggerReason::Threshold => "threshold",
        TriggerReason::Schedule => "schedule",
        TriggerReason::Manual => "manual",
        TriggerReason::Capacity => "capacity",
    }
}
