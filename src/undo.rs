//! `engram undo RUN_ID`: restores every memory and link a run changed to
//! the values its report recorded before the run, and removes the memories
//! it created. One transaction; undoing twice changes nothing the second time.

use thiserror::Error;

use crate::cycle::{CycleError, CycleReport};
use crate::model::Millis;
use crate::store::{Store, StoreError, Write, WriteBatch};

#[derive(Debug, Error)]
pub enum UndoError {
    #[error("no run with id {0}")]
    UnknownRun(String),
    #[error("run {0} was a dry run: it changed nothing")]
    DryRun(String),
    #[error(transparent)]
    Report(#[from] CycleError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What an undo did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UndoSummary {
    pub user_id: String,
    pub restored_memories: usize,
    pub removed_memories: usize,
    pub restored_links: usize,
    pub removed_links: usize,
    /// The run had been undone before; nothing was changed.
    pub already_undone: bool,
}

pub fn undo(store: &dyn Store, run_id: &str, now: Millis) -> Result<UndoSummary, UndoError> {
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
    if report.undone_at.is_some() {
        summary.already_undone = true;
        return Ok(summary);
    }
    let user = &report.user_id;
    let mut batch = WriteBatch::default();
    for change in &report.memory_changes {
        // Only the fields the run changed go back; the rest (content edited
        // by the platform since, say) stays as it is now.
        if let Some(mut memory) = store.memory(user, &change.memory_id)? {
            change.before.apply_to(&mut memory);
            batch.push(Write::PutMemory(memory));
            summary.restored_memories += 1;
        }
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
            (Some(before), _) => {
                batch.push(Write::PutLink(before.clone()));
                summary.restored_links += 1;
            }
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
    report.undone_at = Some(now);
    batch.push(Write::PutRunReport(report.to_stored(stored.started_at)));
    store.commit(&batch)?;
    Ok(summary)
}
