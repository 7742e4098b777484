//! `engram undo`: reverse what a run changed.

use anyhow::Result;

use engram::config::Config;

use crate::app::{open_store, refuse_while_a_service_runs};

pub fn run(config: &Config, run_id: &str) -> Result<()> {
    refuse_while_a_service_runs(config, "`engram undo`")?;
    let store = open_store(config)?;
    let summary = engram::undo::undo(
        store.as_ref(),
        run_id,
        chrono::Utc::now().timestamp_millis(),
    )?;
    if summary.already_undone {
        println!("run {run_id} was already undone; nothing changed");
    } else {
        println!(
            "run {run_id} of user {} undone: {} memories restored, {} removed, {} links restored, {} removed",
            summary.user_id,
            summary.restored_memories,
            summary.removed_memories,
            summary.restored_links,
            summary.removed_links
        );
    }
    Ok(())
}
