//! `engram report`: one self-contained HTML page of a user's memories and a run.

use std::io::{self, Write};

use anyhow::{Context, Result, bail};

use engram::config::Config;
use engram::cycle::CycleReport;

use super::ReportArgs;
use crate::app::open_store;

pub fn run(config: &Config, args: &ReportArgs) -> Result<()> {
    let mut out = io::stdout().lock();
    let store = open_store(config)?;
    let (user_id, stored) = match &args.run {
        Some(run_id) => {
            let stored = store
                .find_run_report(run_id)?
                .with_context(|| format!("no run {run_id}"))?;
            if let Some(user) = &args.user
                && user != &stored.user_id
            {
                bail!("run {run_id} belongs to another user, not {user}");
            }
            (stored.user_id.clone(), Some(stored))
        }
        None => {
            let user = args.user.clone().unwrap_or_default();
            let latest = store.run_reports(&user)?.pop();
            (user, latest)
        }
    };
    let run = stored.as_ref().map(CycleReport::from_stored).transpose()?;
    let memories = store.memories(&user_id)?;
    if memories.is_empty() && run.is_none() {
        bail!("user {user_id} has no memories");
    }
    let links = store.links(&user_id)?;
    // The run's own time, so a page about a run shows it as it was.
    let now = run.as_ref().map_or_else(
        || chrono::Utc::now().timestamp_millis(),
        |r| r.started_at.timestamp_millis(),
    );
    let page = engram::report::ReportPage {
        user_id: &user_id,
        memories: &memories,
        links: &links,
        run: run.as_ref(),
        focus: args.memory.as_deref(),
        now,
        salience: &config.salience,
    };
    std::fs::write(&args.html, engram::report::render_html(&page))
        .with_context(|| format!("cannot write {}", args.html.display()))?;
    writeln!(out, "report written to {}", args.html.display())?;
    Ok(())
}
