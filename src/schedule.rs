//! The schedule trigger: when each changed user's next cycle is due.
//!
//! A user is due one interval after their last cycle (or, never cycled, one
//! interval after their first change), but never before a change since that
//! cycle. The pipeline checks the earliest due time before applying each
//! event and runs due cycles with "now" set to their due time, so where a
//! scheduled cycle falls in the stream depends only on event times, never on
//! batch boundaries or restarts.
//!
//! Each user's due time is moved by a fixed offset below the jitter, taken
//! from a hash of the user id: users who changed together (a platform's
//! nightly import) fall due spread over the jitter window, interleaved with
//! ingestion, instead of all at one stream instant.

use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

use crate::model::{Millis, UserState};

/// Due times of every user with a change since their last cycle.
#[derive(Debug, Default)]
pub struct Schedule {
    interval: Millis,
    jitter: Millis,
    due: HashMap<String, Millis>,
    queue: BTreeSet<(Millis, String)>,
}

impl Schedule {
    /// A zero `interval` turns the schedule off; the jitter is at most one
    /// interval.
    pub fn new(interval: Duration, jitter: Duration) -> Self {
        let interval = crate::duration::millis(interval);
        Self {
            interval,
            jitter: crate::duration::millis(jitter).min(interval),
            ..Self::default()
        }
    }

    /// The user's fixed offset in `[0, jitter)`: FNV-1a of the id, stable
    /// across builds and restarts (unlike the standard library's hasher).
    fn offset(&self, user_id: &str) -> Millis {
        if self.jitter <= 0 {
            return 0;
        }
        let hash = user_id
            .bytes()
            .fold(0xcbf2_9ce4_8422_2325u64, |hash, byte| {
                (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
            });
        (hash % self.jitter.unsigned_abs()) as Millis
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
            .saturating_add(self.interval)
            .saturating_add(self.offset(&state.user_id));
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

    fn secs(n: u64) -> Duration {
        Duration::from_secs(n)
    }

    const HOUR: Millis = 3_600_000;

    fn state(user: &str, last: Option<Millis>, changed: Option<Millis>) -> UserState {
        let mut state = UserState::new(user);
        state.last_cycle_at = last;
        state.cycle.changed_since = changed;
        state
    }

    #[test]
    fn due_one_interval_after_the_last_cycle_and_only_when_changed() {
        let schedule = Schedule::new(secs(3600), secs(0));
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
        assert_eq!(
            Schedule::new(secs(0), secs(0)).due_at(&state("u", Some(0), Some(1))),
            None
        );
    }

    #[test]
    fn earliest_due_first_and_updates_replace() {
        let mut schedule = Schedule::new(secs(3600), secs(0));
        schedule.update(&state("b", Some(0), Some(1)));
        schedule.update(&state("a", Some(HOUR), Some(HOUR + 1)));
        assert_eq!(schedule.next_due(HOUR - 1), None);
        assert_eq!(schedule.next_due(3 * HOUR), Some((HOUR, "b".into())));
        schedule.update(&state("b", Some(3 * HOUR), None));
        assert_eq!(schedule.next_due(3 * HOUR), Some((2 * HOUR, "a".into())));
        schedule.remove("a");
        assert_eq!(schedule.next_due(Millis::MAX), None);
    }

    #[test]
    fn due_times_spread_by_a_fixed_per_user_offset_within_the_jitter() {
        let schedule = Schedule::new(secs(24 * 3600), secs(3600));
        let due: Vec<Millis> = (0..50)
            .map(|n| {
                schedule
                    .due_at(&state(&format!("user-{n}"), Some(0), Some(1)))
                    .unwrap()
            })
            .collect();
        assert!(due.iter().all(|&at| (24 * HOUR..25 * HOUR).contains(&at)));
        let distinct: BTreeSet<Millis> = due.iter().copied().collect();
        assert!(distinct.len() >= 45, "spread: {distinct:?}");
        // The same user is always due at the same offset: where a cycle
        // falls depends only on event times and the id.
        let again = Schedule::new(secs(24 * 3600), secs(3600));
        assert_eq!(
            again.due_at(&state("user-7", Some(0), Some(1))),
            Some(due[7])
        );
        assert_eq!(
            again.due_at(&state("user-7", Some(5 * HOUR), Some(5 * HOUR + 1))),
            Some(due[7] + 5 * HOUR)
        );
        // Never more than the interval.
        let short = Schedule::new(secs(60), secs(3600));
        let at = short.due_at(&state("user-7", Some(0), Some(1))).unwrap();
        assert!((60_000..120_000).contains(&at), "{at}");
    }
}
