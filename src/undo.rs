//! `engram undo RUN_ID`: puts back what a run changed, as its report
//! recorded it before the run, and removes the memories it created. Only
//! fields that still hold what the run wrote go back (reads and platform
//! edits made since stay), and a run whose memories a later executed run
//! changed is refused until that run is undone. One transaction; undoing
//! twice changes nothing the second time. Either way the undo is described
//! by a `consolidation.undone` event for the caller to publish (the same
//! event, same id, the second time, so a publish that failed can be
//! repeated). A text put back (a fused merge's canonical, a joined
//! pattern) gets its vector again when an embedder is given
//! ([`undo_with`]); without one it stays without a vector, so later cycles
//! compare it by exact text only.

use std::collections::{BTreeMap, BTreeSet};

use thiserror::Error;

use crate::cycle::{CycleError, CycleReport};
use crate::embed::{Embedder, SubBatch, embed_bucketed};
use crate::event::ConsolidationUndone;
use crate::model::{Memory, Millis, UserState};
use crate::plan::usage;
use crate::store::{Store, StoreError, Write, WriteBatch};

#[derive(Debug, Error)]
pub enum UndoError {
    #[error("no run with id {0}")]
    UnknownRun(String),
    #[error("run {0} was a dry run: it changed nothing")]
    DryRun(String),
    /// Later executed runs built on what this one did: undoing it alone
    /// would silently reverse them too.
    #[error("run {run_id} cannot be undone before the later runs that changed its memories: {}", later.iter().map(|(run, ids)| format!("{run} ({})", ids.join(", "))).collect::<Vec<_>>().join("; "))]
    LaterRuns {
        run_id: String,
        /// (later run id, the memory ids both runs changed)
        later: Vec<(String, Vec<String>)>,
    },
    #[error(transparent)]
    Report(#[from] CycleError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What an undo did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UndoSummary {
    pub user_id: String,
    pub restored_memories: usize,
    pub removed_memories: usize,
    pub restored_links: usize,
    pub removed_links: usize,
    /// The run had been undone before; nothing was changed.
    pub already_undone: bool,
    /// Texts put back that have no vector (no embedder, or it failed).
    pub without_vector: usize,
    /// The event that tells consumers (`None` only in a default value).
    pub event: Option<ConsolidationUndone>,
}

/// The `consolidation.undone` event of a run undone at `undone_at`: built
/// from the run's report alone, so repeating the undo repeats it exactly.
fn undone_event(report: &CycleReport, undone_at: Millis) -> ConsolidationUndone {
    let mut restored: Vec<String> = report
        .memory_changes
        .iter()
        .map(|change| change.memory_id.clone())
        .filter(|id| !report.created_ids.contains(id))
        .collect();
    restored.sort();
    restored.dedup();
    ConsolidationUndone {
        event_id: format!("{}/undone", report.run_id),
        user_id: report.user_id.clone(),
        run_id: report.run_id.clone(),
        restored_memory_ids: restored,
        removed_memory_ids: report.created_ids.clone(),
        undone_at: chrono::DateTime::from_timestamp_millis(undone_at).unwrap_or_default(),
    }
}

pub fn undo(store: &dyn Store, run_id: &str, now: Millis) -> Result<UndoSummary, UndoError> {
    undo_with(store, run_id, now, None)
}

/// [`undo`], embedding every text it puts back with `embedder`.
pub fn undo_with(
    store: &dyn Store,
    run_id: &str,
    now: Millis,
    embedder: Option<(&dyn Embedder, SubBatch)>,
) -> Result<UndoSummary, UndoError> {
    let stored = store
        .find_run_report(run_id)?
        .ok_or_else(|| UndoError::UnknownRun(run_id.to_owned()))?;
    let mut report = CycleReport::from_stored(&stored)?;
    if !report.executed {
        return Err(UndoError::DryRun(run_id.to_owned()));
    }
    let mut summary = UndoSummary {
        user_id: report.user_id.clone(),
        ..UndoSummary::default()
    };
    if let Some(undone_at) = report.undone_at {
        summary.already_undone = true;
        summary.event = Some(undone_event(&report, undone_at));
        return Ok(summary);
    }
    let user = &report.user_id;
    refuse_after_later_runs(store, &report, stored.started_at)?;
    let mut batch = WriteBatch::default();
    // Memories the platform deleted since the run stay deleted: nothing
    // put back may name them (a link, a merged_from entry).
    let named: Vec<&str> = report
        .link_changes
        .iter()
        .filter_map(|change| change.before.as_ref())
        .flat_map(|link| [link.from_id.as_str(), link.to_id.as_str()])
        .chain(report.memory_changes.iter().flat_map(|change| {
            change
                .before
                .merged_from
                .iter()
                .chain(&change.before.derived_from)
                .map(String::as_str)
        }))
        .collect::<BTreeSet<&str>>()
        .into_iter()
        .collect();
    let existing: BTreeSet<String> = store
        .memories_by_id(user, &named)?
        .into_iter()
        .map(|m| m.id)
        .collect();
    let created: BTreeSet<&String> = report.created_ids.iter().collect();
    let exists = |id: &String| existing.contains(id) && !created.contains(id);
    let mut restored = Vec::new();
    for change in &report.memory_changes {
        if let Some(stored) = store.memory(user, &change.memory_id)? {
            let mut memory = stored.clone();
            if change.before.restore_unchanged(&change.after, &mut memory) == 0 {
                continue;
            }
            memory.merged_from.retain(|id| exists(id));
            memory.derived_from.retain(|id| exists(id));
            restored.push((stored, memory));
        }
    }
    summary.without_vector = embed_restored(&mut restored, embedder);
    for (stored, memory) in &restored {
        batch.push(Write::memory_update(stored, memory));
        summary.restored_memories += 1;
    }
    for id in &report.created_ids {
        batch.push(Write::DeleteMemory {
            user_id: user.clone(),
            memory_id: id.clone(),
        });
        summary.removed_memories += 1;
    }
    for change in report.link_changes.iter().rev() {
        match (&change.before, &change.after) {
            (Some(before), _) if exists(&before.from_id) && exists(&before.to_id) => {
                batch.push(Write::PutLink(before.clone()));
                summary.restored_links += 1;
            }
            // A link of a memory deleted since: its reason may quote it.
            (Some(_), _) => {}
            (None, Some(after)) => {
                batch.push(Write::DeleteLink {
                    user_id: after.user_id.clone(),
                    from_id: after.from_id.clone(),
                    to_id: after.to_id.clone(),
                    link_type: after.link_type,
                });
                summary.removed_links += 1;
            }
            (None, None) => {}
        }
    }
    if let Some(state) = recount_tokens(store, &report, &restored)? {
        batch.push(Write::PutUserState(state));
    }
    report.undone_at = Some(now);
    batch.push(Write::PutRunReport(report.to_stored(stored.started_at)));
    store.commit(&batch)?;
    summary.event = Some(undone_event(&report, now));
    Ok(summary)
}

/// The user's state with its token count taken from the memories as the
/// undo leaves them: texts it brings back count again, so the next memory
/// re-derives the tier (and the capacity trigger) from the truth. `engram
/// undo` refuses to run beside a service, so no worker writes it meanwhile.
fn recount_tokens(
    store: &dyn Store,
    report: &CycleReport,
    restored: &[(Memory, Memory)],
) -> Result<Option<UserState>, StoreError> {
    let Some(mut state) = store.user_state(&report.user_id)? else {
        return Ok(None);
    };
    let mut memories: BTreeMap<String, Memory> = store
        .memories(&report.user_id)?
        .into_iter()
        .map(|memory| (memory.id.clone(), memory))
        .collect();
    for (_, memory) in restored {
        memories.insert(memory.id.clone(), memory.clone());
    }
    for id in &report.created_ids {
        memories.remove(id);
    }
    state.cycle.tokens = usage(memories.values());
    Ok(Some(state))
}

/// Gives the restored memories whose text came back without a vector one;
/// returns how many are left without.
fn embed_restored(
    restored: &mut [(Memory, Memory)],
    embedder: Option<(&dyn Embedder, SubBatch)>,
) -> usize {
    let missing: Vec<usize> = (0..restored.len())
        .filter(|&k| restored[k].1.embedding.is_none() && restored[k].0.embedding.is_some())
        .collect();
    let Some((embedder, shape)) = embedder.filter(|_| !missing.is_empty()) else {
        return missing.len();
    };
    let texts: Vec<&str> = missing
        .iter()
        .map(|&k| restored[k].1.content.as_str())
        .collect();
    match embed_bucketed(embedder, &texts, shape) {
        Ok(vectors) => {
            for (&k, vector) in missing.iter().zip(vectors) {
                restored[k].1.embedding = Some(vector);
            }
            0
        }
        Err(_) => missing.len(),
    }
}

/// Errs when an executed, not undone run that started after this one
/// changed or created any memory this one changed or created.
fn refuse_after_later_runs(
    store: &dyn Store,
    report: &CycleReport,
    started_at: Millis,
) -> Result<(), UndoError> {
    let touched = |report: &CycleReport| -> BTreeSet<String> {
        report
            .memory_changes
            .iter()
            .map(|change| change.memory_id.clone())
            .chain(report.created_ids.iter().cloned())
            .collect()
    };
    let ours = touched(report);
    let mut later = Vec::new();
    for stored in store.run_reports(&report.user_id)? {
        if stored.run_id == report.run_id || stored.started_at <= started_at {
            continue;
        }
        let other = CycleReport::from_stored(&stored)?;
        if !other.executed || other.undone_at.is_some() {
            continue;
        }
        let shared: Vec<String> = touched(&other).intersection(&ours).cloned().collect();
        if !shared.is_empty() {
            later.push((stored.run_id, shared));
        }
    }
    if later.is_empty() {
        return Ok(());
    }
    Err(UndoError::LaterRuns {
        run_id: report.run_id.clone(),
        later,
    })
}
