//! The consolidation cycle of one user: load → detect → plan → report →
//! execute → emit (DESIGN.md §4).
//!
//! This build has no detectors yet, so a cycle plans no actions and says so
//! in its warnings; it still reports what it looked at (counts, salience
//! distribution) and produces the `consolidation.triggered` /
//! `consolidation.completed` pair with deterministic ids.

use chrono::DateTime;
use serde_json::json;
use uuid::Uuid;

use crate::config::ConsolidationConfig;
use crate::event::{
    ConsolidationCompleted, ConsolidationTriggered, Event, RunCounts, RunMode, Timestamp,
    TriggerReason,
};
use crate::model::{Memory, MemoryStatus, Millis, RunReport};
use crate::salience::SalienceParams;

/// Namespace of every id engram derives (run ids, output event ids).
const ENGRAM_NAMESPACE: Uuid = Uuid::from_u128(0x6a1c_52e4_9b0d_4f7e_8e53_0d1f_2c3b_4a59);

pub const NO_DETECTORS_WARNING: &str =
    "no consolidation detectors are enabled in this build; nothing was changed";

/// A deterministic id from its parts: the same parts always give the same id,
/// so replays produce outputs consumers can de-duplicate.
pub fn derived_id(parts: &[&str]) -> String {
    Uuid::new_v5(&ENGRAM_NAMESPACE, parts.join("\u{1f}").as_bytes()).to_string()
}

/// Settings a cycle depends on; hashed into its report.
#[derive(Debug, Clone, Default)]
pub struct CycleSettings {
    pub consolidation: ConsolidationConfig,
    pub salience: SalienceParams,
}

/// What to run.
#[derive(Debug, Clone)]
pub struct CycleRequest {
    pub user_id: String,
    pub run_id: String,
    pub trigger: TriggerReason,
    pub mode: RunMode,
    /// "Now" for every time-dependent decision (stream or wall time).
    pub now: Millis,
}

/// What a cycle produced: output events in order, and the report to store.
#[derive(Debug, Clone)]
pub struct CycleOutput {
    pub events: Vec<Event>,
    pub report: RunReport,
}

/// Runs one cycle over a user's memories.
pub fn run_cycle(
    request: &CycleRequest,
    memories: &[Memory],
    settings: &CycleSettings,
) -> CycleOutput {
    let started = std::time::Instant::now();
    let now = timestamp(request.now);
    let active: Vec<&Memory> = memories
        .iter()
        .filter(|m| m.status == MemoryStatus::Active && m.user_id == request.user_id)
        .collect();
    let mut histogram = [0u64; 10];
    for memory in &active {
        let salience = memory
            .salience
            .salience(request.now, memory.importance, &settings.salience);
        histogram[((salience * 10.0) as usize).min(9)] += 1;
    }
    let counts = RunCounts {
        memories_processed: active.len() as i64,
        ..RunCounts::default()
    };
    let config_hash = settings.consolidation.hash(&settings.salience);
    let warnings = vec![NO_DETECTORS_WARNING.to_owned()];
    let report = RunReport {
        user_id: request.user_id.clone(),
        run_id: request.run_id.clone(),
        started_at: request.now,
        report: json!({
            "run_id": request.run_id,
            "user_id": request.user_id,
            "trigger": request.trigger,
            "mode": request.mode,
            "config_hash": config_hash,
            "started_at": now,
            "counts": counts,
            "actions": [],
            "warnings": warnings,
            "salience_histogram": histogram,
        }),
    };
    let triggered = Event::ConsolidationTriggered(ConsolidationTriggered {
        event_id: derived_id(&[&request.run_id, "triggered"]),
        user_id: request.user_id.clone(),
        run_id: request.run_id.clone(),
        reason: request.trigger,
        triggered_at: now,
    });
    let completed = Event::ConsolidationCompleted(ConsolidationCompleted {
        event_id: derived_id(&[&request.run_id, "completed"]),
        user_id: request.user_id.clone(),
        run_id: request.run_id.clone(),
        mode: request.mode,
        config_hash,
        started_at: now,
        duration_ms: started.elapsed().as_millis() as i64,
        counts,
        actions: Vec::new(),
        warnings,
    });
    CycleOutput {
        events: vec![triggered, completed],
        report,
    }
}

fn timestamp(millis: Millis) -> Timestamp {
    DateTime::from_timestamp_millis(millis).unwrap_or_default()
}
