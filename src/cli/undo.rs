//! `engram undo`: reverse what a run changed, and say so downstream.

use std::io::{self, Write};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::{Result, anyhow};

use engram::config::Config;
use engram::embed::{Embedder, LocalEmbedder};
use engram::event::{Event, EventCodec};

use crate::app::embedded::open_output;
use crate::app::{command_producer, open_store, refuse_while_a_service_runs, runtime};

pub fn run(config: &Config, run_id: &str, output: Option<&str>) -> Result<()> {
    let mut out = io::stdout().lock();
    refuse_while_a_service_runs(config, "`engram undo`")?;
    let store = open_store(config)?;
    // Texts put back (fused merges, joined patterns) get their vectors
    // again, so later cycles compare them by similarity.
    let embedder = if config.embedding.enabled {
        Some(LocalEmbedder::load(&config.embedding)?)
    } else {
        None
    };
    let shape = config.embedding.sub_batch();
    let summary = engram::undo::undo_with(
        store.as_ref(),
        run_id,
        chrono::Utc::now().timestamp_millis(),
        embedder.as_ref().map(|e| (e as &dyn Embedder, shape)),
    )?;
    if summary.already_undone {
        writeln!(out, "run {run_id} was already undone; nothing changed")?;
    } else {
        writeln!(
            out,
            "run {run_id} of user {} undone: {} memories restored, {} removed, {} links restored, {} removed",
            summary.user_id,
            summary.restored_memories,
            summary.removed_memories,
            summary.restored_links,
            summary.removed_links
        )?;
        if summary.without_vector > 0 {
            writeln!(
                out,
                "{} restored texts have no vector (embedding off or failed): later cycles \
                 compare them by exact text only",
                summary.without_vector
            )?;
        }
    }
    match summary.event {
        Some(event) => publish(config, run_id, Event::ConsolidationUndone(event), output),
        None => Ok(()),
    }
}

/// To the broker's `consolidation.undone` topic when one is configured,
/// else to `output` or stdout. The store already holds the undo: a failed
/// publish is an error that says how to repeat it.
fn publish(config: &Config, run_id: &str, event: Event, output: Option<&str>) -> Result<()> {
    let mut out = io::stdout().lock();
    if config.uses_broker() {
        let producer = command_producer(config)?;
        let stop = AtomicBool::new(false);
        let delivered = runtime()?.block_on(async {
            tokio::time::timeout(
                Duration::from_secs(10),
                producer.deliver(std::slice::from_ref(&event), &stop),
            )
            .await
        });
        let again = || format!("run `engram undo {run_id}` again to publish it");
        delivered
            .map_err(|_| {
                anyhow!(
                    "the broker did not take the undo event within 10 s; {}",
                    again()
                )
            })?
            .map_err(|e| anyhow!("publishing the undo event failed: {e}; {}", again()))?;
        writeln!(
            out,
            "published {} to {}",
            event.event_id(),
            config.kafka.topic_consolidation_undone.trim()
        )?;
        return Ok(());
    }
    let mut line = EventCodec::new(config.limits)?.encode_json(&event);
    line.push(b'\n');
    match output {
        Some(path) => {
            let mut file = open_output(path)?;
            file.write_all(&line)?;
            file.flush()?;
        }
        None => out.write_all(&line)?,
    }
    Ok(())
}
