//! `engram consolidate`: one cycle for one user (or every user) now.

use std::time::{Duration, Instant};

use std::io::{self, Write};

use anyhow::{Context, Result, bail};

use engram::config::Config;
use engram::cycle::{CycleReport, CycleRequest, run_cycle};
use engram::embed::{Embedder, LocalEmbedder};
use engram::emit::RequestSink;
use engram::event::RunMode;
use engram::progress;
use engram::trigger::{command_line_run, manual_request, request_run_id};

use super::ConsolidateArgs;
use crate::app::{command_producer, cycle_settings, open_store, runtime};

pub fn run(config: &Config, args: &ConsolidateArgs) -> Result<()> {
    let mut out = io::stdout().lock();
    if args.execute && config.uses_broker() {
        return through_the_stream(config, args);
    }
    let settings = cycle_settings(config)?;
    let embedder = if config.embedding.enabled {
        Some(LocalEmbedder::load(&config.embedding)?)
    } else {
        None
    };
    let store = open_store(config)?;
    let now = match &args.now {
        Some(text) => chrono::DateTime::parse_from_rfc3339(text)
            .with_context(|| format!("--now `{text}` is not an RFC 3339 time"))?
            .timestamp_millis(),
        None => chrono::Utc::now().timestamp_millis(),
    };
    let mode = if args.execute {
        RunMode::Execute
    } else {
        RunMode::DryRun
    };
    let shape = config.embedding.sub_batch();
    let embedder = embedder.as_ref().map(|e| (e as &dyn Embedder, shape));
    let run = |user: &str| -> Result<CycleReport> {
        let state = store.user_state(user)?;
        if state.is_none() && store.memories(user)?.is_empty() {
            bail!("user {user} has no memories");
        }
        let previous = state.and_then(|s| s.last_run_id).unwrap_or_default();
        let run = command_line_run(user, mode, now, &previous);
        let request = CycleRequest {
            user_id: user.to_owned(),
            run_id: run.run_id,
            trigger: run.trigger,
            mode: run.mode,
            now: run.now,
        };
        Ok(run_cycle(store.as_ref(), &request, &settings, embedder)?.report)
    };
    let Some(user) = &args.user else {
        let users = store.users()?;
        let bar = progress::items(users.len() as u64, "users", "consolidating");
        for user in &users {
            let report = run(user)?;
            let c = &report.counts;
            bar.suspend(|| {
                writeln!(
out,
                    "{user}: run {} ({}), {} memories, {} merged, {} contradictions, {} superseded, {} patterns, {} archived",
                    report.run_id,
                    match report.mode {
                        RunMode::DryRun => "dry run",
                        RunMode::Execute => "executed",
                    },
                    c.memories_processed,
                    c.duplicates_merged,
                    c.contradictions_found,
                    c.superseded,
                    c.patterns_extracted,
                    c.archived
                )
            })?;
            bar.inc(1);
        }
        bar.finish_and_clear();
        writeln!(out, "{} users consolidated", users.len())?;
        return Ok(());
    };
    let report = run(user)?;
    print_report(&mut out, &report)?;
    if let Some(path) = &args.report {
        let json = serde_json::to_string_pretty(&report)?;
        std::fs::write(path, json + "\n")
            .with_context(|| format!("cannot write report {}", path.display()))?;
        writeln!(out, "report written to {}", path.display())?;
    }
    Ok(())
}

/// With a broker configured, an executed cycle is requested through the
/// stream, as the HTTP API does: the partition that owns the user runs it,
/// so the user keeps one writer (and the run's events go out). Waits for the
/// reports in the store the service writes to.
fn through_the_stream(config: &Config, args: &ConsolidateArgs) -> Result<()> {
    let mut out = io::stdout().lock();
    if args.now.is_some() {
        bail!("--now cannot be used with --execute against a service: it runs at its own clock");
    }
    let store = open_store(config)?;
    let users = match &args.user {
        Some(user) => vec![user.clone()],
        None => store.users()?,
    };
    let producer = command_producer(config)?;
    let runtime = runtime()?;
    let mut requested = Vec::new();
    for user in users {
        // Sent to the partition that owns the user, whatever the
        // platform's partitioner.
        let Some(state) = store.user_state(&user)? else {
            bail!("user {user} has no memories");
        };
        let owner = state.owner_partition();
        let request = manual_request(&user, true, "cli");
        let run_id = request_run_id(&request);
        let sent = runtime.block_on(async {
            tokio::time::timeout(Duration::from_secs(10), producer.send(request, owner)).await
        });
        sent.map_err(|_| anyhow::anyhow!("the broker did not take the request within 10 s"))??;
        writeln!(
            out,
            "{user}: run {run_id} requested from the service that owns the user"
        )?;
        requested.push((user, run_id));
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    for (user, run_id) in requested {
        loop {
            if let Some(stored) = store.run_report(&user, &run_id)? {
                let report: CycleReport = serde_json::from_value(stored.report)?;
                print_report(&mut out, &report)?;
                break;
            }
            if Instant::now() >= deadline {
                writeln!(
                    out,
                    "{user}: run {run_id} is not reported yet; `engram report --run {run_id} --html FILE` shows it once the service has run it"
                )?;
                break;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
    Ok(())
}

fn print_report(out: &mut impl Write, report: &CycleReport) -> io::Result<()> {
    let mode = match report.mode {
        RunMode::DryRun => "dry run: nothing was changed",
        RunMode::Execute => "executed",
    };
    writeln!(
        out,
        "run {} for user {} ({mode})",
        report.run_id, report.user_id
    )?;
    writeln!(
        out,
        "  tier {:?}: {} of {} tokens; duplicate threshold {:.2}, archive threshold {:.2}",
        report.tier,
        report.tokens,
        report.token_budget,
        report.thresholds.duplicate_threshold,
        report.thresholds.archive_threshold
    )?;
    let c = &report.counts;
    writeln!(
        out,
        "  {} memories: {} merged, {} contradictions, {} superseded, {} patterns, {} archived, {} split, {} promoted, {} links created",
        c.memories_processed,
        c.duplicates_merged,
        c.contradictions_found,
        c.superseded,
        c.patterns_extracted,
        c.archived,
        c.split,
        c.promoted,
        c.links_created
    )?;
    for action in &report.actions {
        writeln!(
            out,
            "  - {} [{}] {} (score {:.4})",
            action.action_type.as_str(),
            action.rule_id,
            action.target_ids.join(", "),
            action.score
        )?;
        for reason in &action.reasons {
            writeln!(out, "      {reason}")?;
        }
    }
    for skipped in &report.skipped {
        writeln!(
            out,
            "  · skipped {:?} {}: {}",
            skipped.detection,
            skipped.target_ids.join(", "),
            skipped.reason
        )?;
    }
    for warning in &report.warnings {
        writeln!(out, "  ! {warning}")?;
    }
    writeln!(out, "  config hash {}", report.config_hash)
}
