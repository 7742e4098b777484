//! Salience: how present a memory should be, from its use over time and its
//! importance (docs/design.md §3).
//!
//! The strength of a memory is the ACT-R base-level activation
//! `B(t) = ln Σ_j (t − t_j)^−d` over every presentation `t_j` (creation is the
//! first, each read is another), with decay `d = 0.5` and ages in seconds.
//! Keeping every `t_j` would make state grow with use, so we keep Petrov's
//! (2006) hybrid approximation instead: creation and the `k` most recent reads
//! exactly, plus the count of the other reads. Their contribution is
//! integrated in closed form as if they were spread evenly over an interval
//! `[a, t_k]` ending at the k-th most recent read:
//!
//! ```text
//! B ≈ ln( t_c^−d + Σ_{i≤k} t_i^−d + (n − k)·(t_a^{1−d} − t_k^{1−d}) / ((1 − d)·(t_a − t_k)) )
//! ```
//!
//! Petrov takes `a` = creation. We also keep the sum of read times (one more
//! integer) and place `a` so the interval's midpoint is the older reads' mean
//! time (never before creation). For reads spread evenly since creation this
//! is Petrov's formula; for bursts of recent reads it avoids treating them as
//! old, which cut the worst error on generated bursty histories from 1.2 to
//! 0.05 in activation.
//!
//! State is O(1) per memory, an access only appends a timestamp and bumps a
//! count, and decay needs no rewrite: salience is computed from the state and
//! "now" whenever it is needed.
//!
//! **Mapping to [0, 1].** `salience = σ((B − B₀)/s + w·(importance − 0.5))`
//! with `σ` the logistic function. `B₀` is the activation of a memory
//! presented once, `pivot` ago (default 7 days), so such a memory with neutral
//! importance (0.5) sits at exactly 0.5. `s` (default 1) sets how fast
//! salience falls with activation; `w` (default 2) lets importance shift the
//! curve by up to ±1 logit, so important memories fade later but still fade,
//! and a zero-importance memory is merely less salient, never zero. Typical
//! values for one presentation and importance 0.5: 1 hour 0.93, 1 day 0.72,
//! 30 days 0.33, 1 year 0.12.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::clock::Millis;

/// Reads kept exactly (Petrov's `k`).
pub const RECENT_KEPT: usize = 3;

/// Tunable constants of the activation and its mapping to [0, 1].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SalienceParams {
    /// ACT-R decay `d`; 0.5 is the standard value.
    pub decay: f64,
    /// Ages below this count as this, so a read at the same instant as
    /// creation (or "before" it, by clock skew) stays finite.
    #[serde(with = "crate::duration")]
    pub min_age: Duration,
    /// Age of a single presentation that maps to salience 0.5 at importance 0.5.
    #[serde(with = "crate::duration")]
    pub pivot_age: Duration,
    /// Activation units per logit.
    pub scale: f64,
    /// Logits added per unit of importance above 0.5.
    pub importance_weight: f64,
}

impl Default for SalienceParams {
    fn default() -> Self {
        Self {
            decay: 0.5,
            min_age: Duration::from_secs(1),
            pivot_age: Duration::from_secs(7 * 24 * 3600),
            scale: 1.0,
            importance_weight: 2.0,
        }
    }
}

/// The O(1) access history of one memory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SalienceState {
    created_at: Millis,
    /// The most recent reads, newest first, at most [`RECENT_KEPT`].
    recent: Vec<Millis>,
    /// Every read so far.
    reads: u64,
    /// Sum over every read of `read time − created_at`, in milliseconds
    /// (saturating; it would take ~29 million reads of a ten-year-old memory).
    read_offset_sum: i64,
}

impl SalienceState {
    /// A memory presented once, at its creation.
    pub fn new(created_at: Millis) -> Self {
        Self {
            created_at,
            recent: Vec::new(),
            reads: 0,
            read_offset_sum: 0,
        }
    }

    /// Rebuilds state from stored parts. Unsorted, early or excess recent
    /// times are normalised rather than trusted.
    pub fn from_parts(
        created_at: Millis,
        mut recent: Vec<Millis>,
        reads: u64,
        read_offset_sum: i64,
    ) -> Self {
        for time in &mut recent {
            *time = (*time).max(created_at);
        }
        recent.sort_unstable_by(|a, b| b.cmp(a));
        recent.truncate(RECENT_KEPT);
        let recent_offsets: i64 = recent.iter().map(|t| t - created_at).sum();
        Self {
            created_at,
            reads: reads.max(recent.len() as u64),
            read_offset_sum: read_offset_sum.max(recent_offsets),
            recent,
        }
    }

    pub fn created_at(&self) -> Millis {
        self.created_at
    }

    /// Recent read times, newest first.
    pub fn recent(&self) -> &[Millis] {
        &self.recent
    }

    /// Reads so far.
    pub fn access_count(&self) -> u64 {
        self.reads
    }

    pub fn read_offset_sum(&self) -> i64 {
        self.read_offset_sum
    }

    /// The latest presentation (creation if never read).
    pub fn last_accessed_at(&self) -> Millis {
        self.recent.first().copied().unwrap_or(self.created_at)
    }

    /// Records a read at `at`. A read stamped before creation (clock skew
    /// between producers) counts as a read at creation time.
    pub fn record_access(&mut self, at: Millis) {
        let at = at.max(self.created_at);
        self.reads = self.reads.saturating_add(1);
        self.read_offset_sum = self.read_offset_sum.saturating_add(at - self.created_at);
        let position = self.recent.partition_point(|&time| time >= at);
        if position < RECENT_KEPT {
            self.recent.insert(position, at);
            self.recent.truncate(RECENT_KEPT);
        }
    }

    /// Takes in the reads of a memory merged into this one: the access
    /// counts add up and the most recent reads of both are kept.
    pub fn absorb(&mut self, other: &SalienceState) {
        let mut recent = self.recent.clone();
        recent.extend_from_slice(&other.recent);
        // The other's reads measured from this memory's creation.
        let shift = other.created_at - self.created_at;
        let other_offsets = other
            .read_offset_sum
            .saturating_add(shift.saturating_mul(other.reads as i64));
        *self = Self::from_parts(
            self.created_at,
            recent,
            self.reads.saturating_add(other.reads),
            self.read_offset_sum.saturating_add(other_offsets.max(0)),
        );
    }

    /// Base-level activation `B` at `now` (see the module docs).
    pub fn activation(&self, now: Millis, params: &SalienceParams) -> f64 {
        let age = |time: f64| age_secs(now as f64 - time, params);
        let d = params.decay;
        let created = self.created_at as f64;
        let mut sum = age(created).powf(-d);
        sum += self
            .recent
            .iter()
            .map(|&t| age(t as f64).powf(-d))
            .sum::<f64>();
        let older = self.reads.saturating_sub(self.recent.len() as u64);
        if let (true, Some(&kth)) = (older > 0, self.recent.last()) {
            let recent_offsets: i64 = self.recent.iter().map(|t| t - self.created_at).sum();
            let older_mean =
                created + (self.read_offset_sum - recent_offsets) as f64 / older as f64;
            let kth = kth as f64;
            let start = (2.0 * older_mean - kth).clamp(created, kth);
            let t_k = age(kth);
            let t_a = age(start).max(t_k);
            let span = t_a - t_k;
            let per_read = if span < 1e-9 {
                t_k.powf(-d)
            } else {
                (t_a.powf(1.0 - d) - t_k.powf(1.0 - d)) / ((1.0 - d) * span)
            };
            sum += older as f64 * per_read;
        }
        sum.ln()
    }

    /// Salience in [0, 1] at `now` for a memory of the given importance.
    pub fn salience(&self, now: Millis, importance: f64, params: &SalienceParams) -> f64 {
        salience_from_activation(self.activation(now, params), importance, params)
    }
}

/// The exact activation over a full list of presentation times; what the
/// approximation stands in for. Used by tests and benchmarks.
pub fn exact_activation(presentations: &[Millis], now: Millis, params: &SalienceParams) -> f64 {
    presentations
        .iter()
        .map(|&time| age_secs((now - time) as f64, params).powf(-params.decay))
        .sum::<f64>()
        .ln()
}

/// Maps activation and importance to [0, 1] (see the module docs).
pub fn salience_from_activation(activation: f64, importance: f64, params: &SalienceParams) -> f64 {
    let pivot = -params.decay
        * params
            .pivot_age
            .as_secs_f64()
            .max(params.min_age.as_secs_f64())
            .ln();
    let importance = if importance.is_finite() {
        importance.clamp(0.0, 1.0)
    } else {
        0.5
    };
    let scale = if params.scale > 0.0 {
        params.scale
    } else {
        1.0
    };
    let logit = (activation - pivot) / scale + params.importance_weight * (importance - 0.5);
    let value = 1.0 / (1.0 + (-logit).exp());
    if value.is_nan() { 0.0 } else { value }
}

/// An age in milliseconds as seconds, never below the minimum age.
fn age_secs(age_millis: f64, params: &SalienceParams) -> f64 {
    (age_millis / 1000.0)
        .max(params.min_age.as_secs_f64())
        .max(f64::MIN_POSITIVE)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEC: Millis = 1000;
    const HOUR: Millis = 3600 * SEC;
    const DAY: Millis = 24 * HOUR;
    const T0: Millis = 1_700_000_000_000;

    fn params() -> SalienceParams {
        SalienceParams::default()
    }

    fn state_with(created: Millis, reads: &[Millis]) -> SalienceState {
        let mut state = SalienceState::new(created);
        for &read in reads {
            state.record_access(read);
        }
        state
    }

    #[test]
    fn single_presentation_matches_hand_computed_value() {
        // One presentation 100 s ago: B = ln(100^-0.5) = -0.5 ln 100 = -ln 10.
        let state = SalienceState::new(T0);
        let b = state.activation(T0 + 100 * SEC, &params());
        assert!((b + std::f64::consts::LN_10).abs() < 1e-12, "{b}");
    }

    #[test]
    fn few_presentations_are_exact() {
        // Created 400 s ago, read 100 s ago and 25 s ago:
        // B = ln(400^-.5 + 100^-.5 + 25^-.5) = ln(0.05 + 0.1 + 0.2) = ln 0.35.
        let state = state_with(T0, &[T0 + 300 * SEC, T0 + 375 * SEC]);
        let b = state.activation(T0 + 400 * SEC, &params());
        assert!((b - 0.35f64.ln()).abs() < 1e-12, "{b}");
        assert_eq!(state.access_count(), 2);
    }

    #[test]
    fn approximation_matches_hand_computed_closed_form() {
        // Created 10_000 s ago (exact: 1/100), reads at ages 900, 400, 100
        // (kept exactly) and one more at age 3600, folded into the
        // approximation: one read spread evenly over ages [900, 6300], the
        // interval whose midpoint is its own age:
        // (6300^.5 − 900^.5) / (.5 · 5400).
        let now = T0 + 10_000 * SEC;
        let reads = [
            now - 3600 * SEC,
            now - 900 * SEC,
            now - 400 * SEC,
            now - 100 * SEC,
        ];
        let state = state_with(T0, &reads);
        let folded = (6300f64.sqrt() - 30.0) / 2700.0;
        let expected = (1.0 / 100.0 + 1.0 / 30.0 + 1.0 / 20.0 + 1.0 / 10.0 + folded).ln();
        let b = state.activation(now, &params());
        assert!((b - expected).abs() < 1e-12, "{b} vs {expected}");
    }

    /// Deterministic xorshift so generated histories are reproducible.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, bound: u64) -> u64 {
            self.next() % bound.max(1)
        }
    }

    /// The stated tolerance: on generated histories (uniform, bursty and
    /// front-loaded reads over up to a year) the approximate activation stays
    /// within 0.15 of the exact log-sum, and salience within 0.03.
    #[test]
    fn approximation_stays_within_tolerance_of_exact_sum() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let p = params();
        let mut worst_b: f64 = 0.0;
        let mut worst_s: f64 = 0.0;
        for case in 0..2000 {
            let lifetime = 1 + rng.below(365 * DAY as u64) as Millis;
            let reads = rng.below(200) as usize;
            let mut times: Vec<Millis> = (0..reads)
                .map(|_| match case % 3 {
                    0 => T0 + rng.below(lifetime as u64) as Millis,
                    1 => T0 + lifetime - rng.below((lifetime / 20).max(1) as u64) as Millis,
                    _ => T0 + rng.below((lifetime / 10).max(1) as u64) as Millis,
                })
                .collect();
            let state = state_with(T0, &times);
            times.push(T0);
            let now = T0 + lifetime + rng.below(30 * DAY as u64) as Millis;
            let exact = exact_activation(&times, now, &p);
            let approx = state.activation(now, &p);
            worst_b = worst_b.max((exact - approx).abs());
            let importance = rng.below(101) as f64 / 100.0;
            let s_exact = salience_from_activation(exact, importance, &p);
            worst_s = worst_s.max((s_exact - state.salience(now, importance, &p)).abs());
        }
        println!("worst |ΔB| = {worst_b:.4}, worst |Δsalience| = {worst_s:.4}");
        assert!(worst_b < 0.15, "activation error {worst_b}");
        assert!(worst_s < 0.03, "salience error {worst_s}");
    }

    #[test]
    fn more_recent_access_gives_higher_salience() {
        let now = T0 + 30 * DAY;
        let old_read = state_with(T0, &[T0 + DAY]);
        let new_read = state_with(T0, &[T0 + 29 * DAY]);
        assert!(new_read.salience(now, 0.5, &params()) > old_read.salience(now, 0.5, &params()));
    }

    #[test]
    fn more_frequent_access_gives_higher_salience() {
        let now = T0 + 30 * DAY;
        let mut previous = SalienceState::new(T0).salience(now, 0.5, &params());
        let mut state = SalienceState::new(T0);
        for day in 1..20 {
            state.record_access(T0 + day * DAY);
            let current = state.salience(now, 0.5, &params());
            assert!(current > previous, "read {day}: {current} <= {previous}");
            previous = current;
        }
    }

    #[test]
    fn time_passing_lowers_salience() {
        let state = state_with(T0, &[T0 + HOUR, T0 + 2 * DAY]);
        let mut previous = f64::INFINITY;
        for days in [3, 7, 30, 90, 365, 3650] {
            let current = state.salience(T0 + days * DAY, 0.5, &params());
            assert!(current < previous, "day {days}");
            assert!((0.0..=1.0).contains(&current));
            previous = current;
        }
    }

    #[test]
    fn importance_raises_salience_and_zero_importance_is_not_zero() {
        let state = SalienceState::new(T0);
        let now = T0 + 30 * DAY;
        let zero = state.salience(now, 0.0, &params());
        let half = state.salience(now, 0.5, &params());
        let full = state.salience(now, 1.0, &params());
        assert!(zero > 0.0 && zero < half && half < full && full < 1.0);
    }

    #[test]
    fn pivot_and_documented_values_hold() {
        let state = SalienceState::new(T0);
        let at = |age| state.salience(T0 + age, 0.5, &params());
        assert!((at(7 * DAY) - 0.5).abs() < 1e-12);
        for (age, expected) in [
            (HOUR, 0.93),
            (DAY, 0.72),
            (30 * DAY, 0.33),
            (365 * DAY, 0.12),
        ] {
            assert!((at(age) - expected).abs() < 0.01, "{age}: {}", at(age));
        }
    }

    #[test]
    fn access_at_creation_time_is_finite() {
        let state = state_with(T0, &[T0, T0]);
        let b = state.activation(T0, &params());
        assert!(b.is_finite());
        // Three presentations, each at the minimum age of 1 s: ln 3.
        assert!((b - 3f64.ln()).abs() < 1e-12);
    }

    #[test]
    fn access_before_creation_counts_as_at_creation() {
        let skewed = state_with(T0, &[T0 - HOUR]);
        let at_creation = state_with(T0, &[T0]);
        assert_eq!(skewed, at_creation);
        assert_eq!(skewed.last_accessed_at(), T0);
        let now = T0 + DAY;
        assert!(skewed.salience(now, 0.5, &params()).is_finite());
    }

    #[test]
    fn now_before_creation_is_finite_and_bounded() {
        let state = state_with(T0, &[T0 + DAY]);
        let value = state.salience(T0 - DAY, 0.3, &params());
        assert!(value.is_finite() && (0.0..=1.0).contains(&value));
    }

    #[test]
    fn out_of_order_reads_keep_the_newest_exactly() {
        let reads = [
            T0 + 5 * DAY,
            T0 + DAY,
            T0 + 9 * DAY,
            T0 + 2 * DAY,
            T0 + 7 * DAY,
        ];
        let state = state_with(T0, &reads);
        assert_eq!(state.recent(), &[T0 + 9 * DAY, T0 + 7 * DAY, T0 + 5 * DAY]);
        assert_eq!(state.access_count(), 5);
        assert_eq!(state.read_offset_sum(), 24 * DAY);
        assert_eq!(state.last_accessed_at(), T0 + 9 * DAY);
    }

    #[test]
    fn from_parts_normalises_stored_state() {
        let state = SalienceState::from_parts(T0, vec![T0 - 5, T0 + 3, T0 + 9, T0 + 1], 2, 0);
        assert_eq!(state.recent(), &[T0 + 9, T0 + 3, T0 + 1]);
        assert_eq!(state.access_count(), 3);
        assert_eq!(state.read_offset_sum(), 13);
    }
}
