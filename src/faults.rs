//! Crash points for fault tests, compiled in only with the `fault-injection`
//! feature (`make test` enables it; without it every point is an empty
//! function). `ENGRAM_CRASH_AT=<point>:<n>` makes the
//! process SIGKILL itself (as `kill -9` would) the `n`-th time it passes
//! `<point>`, so a test can kill engram at an exact step instead of at a
//! lucky moment. `ENGRAM_PANIC_AT=<point>:<n>` panics there instead, as a
//! bug would. Unset, each point costs one check of a `OnceLock`.
//!
//! Points: `flush.stored` (a batch's state is durable; its outputs are not
//! delivered and its offsets not recorded), `cycle.executed` (an executed
//! cycle's changes are durable; its events are not delivered and the run is
//! still pending), `rebalance.revoking` (the revoked partitions' workers have
//! stopped; their offsets are not committed).

#[cfg(feature = "fault-injection")]
pub use injected::crash_point;

/// Without the `fault-injection` feature there are no crash points.
#[cfg(not(feature = "fault-injection"))]
#[inline(always)]
pub fn crash_point(_point: &str) {}

#[cfg(feature = "fault-injection")]
mod injected {
    use std::io::Write;
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicU64, Ordering};

    struct Plan {
        point: String,
        at_pass: u64,
        passes: AtomicU64,
    }

    impl Plan {
        fn from_variable(variable: &str) -> Option<Self> {
            let value = std::env::var(variable).ok()?;
            let (point, at_pass) = match value.split_once(':') {
                Some((point, n)) => (point, n.trim().parse().ok()?),
                None => (value.as_str(), 1),
            };
            Some(Plan {
                point: point.trim().to_owned(),
                at_pass,
                passes: AtomicU64::new(0),
            })
        }

        /// Whether this pass of `point` is the planned one.
        fn due(plan: Option<&Self>, point: &str) -> bool {
            plan.is_some_and(|plan| {
                plan.point == point
                    && plan.passes.fetch_add(1, Ordering::Relaxed) + 1 == plan.at_pass
            })
        }
    }

    static KILL: OnceLock<Option<Plan>> = OnceLock::new();
    static PANIC: OnceLock<Option<Plan>> = OnceLock::new();

    /// Dies here, or panics, if this is the planned pass of the planned point.
    pub fn crash_point(point: &str) {
        let panic = PANIC.get_or_init(|| Plan::from_variable("ENGRAM_PANIC_AT"));
        if Plan::due(panic.as_ref(), point) {
            panic!("panic point {point} reached");
        }
        let kill = KILL.get_or_init(|| Plan::from_variable("ENGRAM_CRASH_AT"));
        if !Plan::due(kill.as_ref(), point) {
            return;
        }
        // Not `eprintln!`: it panics when stderr cannot be written.
        let _ = writeln!(
            std::io::stderr(),
            "engram: crash point {point} reached; killing the process"
        );
        let _ = std::process::Command::new("kill")
            .args(["-KILL", &std::process::id().to_string()])
            .status();
        // Only if `kill` could not run: still no cleanup of any kind.
        std::process::abort();
    }
}
