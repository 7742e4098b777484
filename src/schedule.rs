//! The schedule trigger: when each changed user's next cycle is due.
//!
//! A user is due one interval after their last cycle (or, never cycled, one
//! interval after their first change), but never before a change since that
//! cycle. The pipeline checks the earliest due time before applying each
//! event and runs due cycles with "now" set to their due time, so where a
//! scheduled cycle falls in the stream depends only on event times, never on
//! batch boundaries or restarts.

use std::collections::{BTreeSet, HashMap};

use crate::model::{Millis, UserState};

/// Due times of every user with a change since their last cycle.
#[derive(Debug, Default)]
pub struct Schedule {
    interval: Millis,
    due: HashMap<String, Millis>,
    queue: BTreeSet<(Millis, String)>,
}

impl Schedule {
    /// `interval_secs == 0` turns the schedule off.
    pub fn new(interval_secs: u64) -> Self {
        Self {
            interval: Millis::try_from(interval_secs.saturating_mul(1000)).unwrap_or(Millis::MAX),
            ..Self::default()
        }
    }

    pub fn is_enabled(&self) -> bool {
        self.interval > 0
    }

    /// When `state`'s user is next due, if ever.
    pub fn due_at(&self, state: &UserState) -> Option<Millis> {
        if !self.is_enabled() {
            return None;
        }
        let changed = state.cycle.changed_since?;
        let after_last = state
            .last_cycle_at
            .unwrap_or(changed)
            .saturating_add(self.interval);
        Some(after_last.max(changed))
    }

    /// Records a user's current state.
    pub fn update(&mut self, state: &UserState) {
        let due = self.due_at(state);
        if self.due.get(&state.user_id).copied() == due {
            return;
        }
        if let Some(old) = self.due.remove(&state.user_id) {
            self.queue.remove(&(old, state.user_id.clone()));
        }
        if let Some(at) = due {
            self.due.insert(state.user_id.clone(), at);
            self.queue.insert((at, state.user_id.clone()));
        }
    }

    /// The earliest due user at or before `now`: `(due time, user id)`.
    pub fn next_due(&self, now: Millis) -> Option<(Millis, String)> {
        self.queue.first().filter(|(at, _)| *at <= now).cloned()
    }

    /// Forgets a user until their state is recorded again.
    pub fn remove(&mut self, user_id: &str) {
        if let Some(old) = self.due.remove(user_id) {
            self.queue.remove(&(old, user_id.to_owned()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOUR: Millis = 3_600_000;

    fn state(user: &str, last: Option<Millis>, changed: Option<Millis>) -> UserState {
        let mut state = UserState::new(user);
        state.last_cycle_at = last;
        state.cycle.changed_since = changed;
        state
    }

    #[test]
    fn due_one_interval_after_the_last_cycle_and_only_when_changed() {
        let schedule = Schedule::new(3600);
        assert_eq!(schedule.due_at(&state("u", Some(0), None)), None);
        assert_eq!(schedule.due_at(&state("u", Some(0), Some(10))), Some(HOUR));
        assert_eq!(
            schedule.due_at(&state("u", None, Some(10))),
            Some(10 + HOUR)
        );
        assert_eq!(
            schedule.due_at(&state("u", Some(0), Some(5 * HOUR))),
            Some(5 * HOUR),
            "a change long after the interval is due at once"
        );
        assert_eq!(Schedule::new(0).due_at(&state("u", Some(0), Some(1))), None);
    }

    #[test]
    fn earliest_due_first_and_updates_replace() {
        let mut schedule = Schedule::new(3600);
        schedule.update(&state("b", Some(0), Some(1)));
        schedule.update(&state("a", Some(HOUR), Some(HOUR + 1)));
        assert_eq!(schedule.next_due(HOUR - 1), None);
        assert_eq!(schedule.next_due(3 * HOUR), Some((HOUR, "b".into())));
        schedule.update(&state("b", Some(3 * HOUR), None));
        assert_eq!(schedule.next_due(3 * HOUR), Some((2 * HOUR, "a".into())));
        schedule.remove("a");
        assert_eq!(schedule.next_due(Millis::MAX), None);
    }
}
