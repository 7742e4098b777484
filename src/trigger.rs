//! Why and when a cycle runs, and under which run id.
//!
//! A cycle is triggered by a threshold of new memories, a change of tier
//! (capacity), the schedule, or a request (an event, the HTTP API, the CLI).
//! Each trigger gets a run id derived from what triggered it, so a replay of
//! the same input triggers the same run and its outputs carry the same ids.
//! A triggered run is first queued as a [`PendingRun`] on the user's state
//! ([`queue`], with the event that triggered it, so a crash re-runs it),
//! then run, and taken off the queue ([`finish`]) in the same transaction
//! that stores its report (`cycle::run_cycle`) or, when a crash left it
//! behind, once its stored results are confirmed (`cycle::confirm_run`).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::duration;
use crate::event::{ConsolidationRequested, RunMode, TriggerReason};
use crate::ids::derived_id;
use crate::model::{Millis, PendingRun, UserState};

/// What starts a cycle without a request: the triggers' section of
/// `[consolidation]` (flattened into it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TriggerConfig {
    /// Threshold trigger: new memories since the user's last cycle.
    pub trigger_new_memories: u64,
    /// Schedule trigger: time between cycles of a changed user (0: off).
    #[serde(with = "duration")]
    pub schedule_interval: Duration,
    /// Spreads scheduled cycles: each user's due time moves by a fixed
    /// per-user offset below this (at most the interval).
    #[serde(with = "duration")]
    pub schedule_jitter: Duration,
}

impl Default for TriggerConfig {
    fn default() -> Self {
        Self {
            trigger_new_memories: 20,
            schedule_interval: Duration::from_secs(86_400),
            schedule_jitter: Duration::from_secs(3_600),
        }
    }
}

/// Queues `run` on the user's state, once per run id; whether it is new.
pub fn queue(state: &mut UserState, run: PendingRun) -> bool {
    if state
        .cycle
        .pending_runs
        .iter()
        .any(|p| p.run_id == run.run_id)
    {
        return false;
    }
    state.cycle.pending_runs.push(run);
    true
}

/// Whether a run for `trigger` is queued already.
pub fn is_queued(state: &UserState, trigger: TriggerReason) -> bool {
    state
        .cycle
        .pending_runs
        .iter()
        .any(|p| p.trigger == trigger)
}

/// Takes a run off the user's queue; whether it was there.
pub fn finish(state: &mut UserState, run_id: &str) -> bool {
    let before = state.cycle.pending_runs.len();
    state.cycle.pending_runs.retain(|p| p.run_id != run_id);
    state.cycle.pending_runs.len() != before
}

/// A run engram starts by itself (threshold, capacity, schedule): one per
/// user, reason, time and previous run.
pub fn automatic_run(
    user_id: &str,
    trigger: TriggerReason,
    now: Millis,
    previous_run: &str,
) -> PendingRun {
    let reason = match trigger {
        TriggerReason::Threshold => "threshold",
        TriggerReason::Schedule => "schedule",
        TriggerReason::Capacity => "capacity",
        TriggerReason::Manual => "manual",
    };
    PendingRun {
        run_id: derived_id(&[user_id, reason, &now.to_string(), previous_run]),
        trigger,
        mode: RunMode::Execute,
        now,
    }
}

/// The run a `consolidation.requested` event starts: derived from the user
/// and the event id, so whoever sent the request knows which report to wait
/// for, and a replayed request is the same run. It runs at the clock's
/// `now`, whatever time the request gives: a request dated up to
/// `limits.max_future_skew` ahead would otherwise compute salience hours
/// ahead, archive early, and mislead undo's check for later runs.
pub fn requested_run(event: &ConsolidationRequested, now: Millis) -> PendingRun {
    PendingRun {
        run_id: request_run_id(event),
        trigger: TriggerReason::Manual,
        mode: if event.execute.unwrap_or(false) {
            RunMode::Execute
        } else {
            RunMode::DryRun
        },
        now,
    }
}

/// A request made now from outside the stream (the HTTP API, the CLI),
/// to be put into it; `reason` says where it came from.
pub fn manual_request(user_id: &str, execute: bool, reason: &str) -> ConsolidationRequested {
    ConsolidationRequested {
        event_id: uuid::Uuid::new_v4().to_string(),
        user_id: user_id.to_owned(),
        requested_at: chrono::Utc::now(),
        execute: Some(execute),
        reason: Some(reason.to_owned()),
    }
}

/// See [`requested_run`].
pub fn request_run_id(event: &ConsolidationRequested) -> String {
    derived_id(&[&event.user_id, &event.event_id])
}

/// A run started from the command line (`engram consolidate`) at `now`.
pub fn command_line_run(
    user_id: &str,
    mode: RunMode,
    now: Millis,
    previous_run: &str,
) -> PendingRun {
    PendingRun {
        run_id: derived_id(&[
            user_id,
            "cli",
            &now.to_string(),
            previous_run,
            &format!("{mode:?}"),
        ]),
        trigger: TriggerReason::Manual,
        mode,
        now,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_trigger_gives_the_same_run_and_a_later_one_another() {
        let first = automatic_run("u", TriggerReason::Threshold, 10, "");
        assert_eq!(first, automatic_run("u", TriggerReason::Threshold, 10, ""));
        assert_ne!(
            first.run_id,
            automatic_run("u", TriggerReason::Threshold, 10, &first.run_id).run_id
        );
        assert_ne!(
            first.run_id,
            automatic_run("u", TriggerReason::Capacity, 10, "").run_id
        );
        assert_ne!(
            command_line_run("u", RunMode::DryRun, 10, "").run_id,
            command_line_run("u", RunMode::Execute, 10, "").run_id
        );
    }

    #[test]
    fn a_run_is_queued_once_and_finished_once() {
        let mut state = UserState::new("u");
        let run = automatic_run("u", TriggerReason::Threshold, 10, "");
        assert!(queue(&mut state, run.clone()));
        assert!(!queue(&mut state, run.clone()), "the same run id once");
        assert!(is_queued(&state, TriggerReason::Threshold));
        assert!(!is_queued(&state, TriggerReason::Schedule));
        assert!(finish(&mut state, &run.run_id));
        assert!(!finish(&mut state, &run.run_id));
        assert!(state.cycle.pending_runs.is_empty());
    }

    #[test]
    fn a_request_runs_under_its_derived_id_at_the_clocks_time() {
        let event = ConsolidationRequested {
            event_id: "e1".to_owned(),
            user_id: "u".to_owned(),
            requested_at: chrono::DateTime::from_timestamp_millis(5_000).unwrap_or_default(),
            execute: Some(true),
            reason: None,
        };
        let run = requested_run(&event, 9_000);
        assert_eq!(run.run_id, request_run_id(&event));
        assert_eq!((run.mode, run.now), (RunMode::Execute, 9_000));
        // Dated after the clock (a producer's clock ahead, up to the
        // accepted skew): still the clock's time.
        assert_eq!(requested_run(&event, 1_000).now, 1_000);
    }
}
