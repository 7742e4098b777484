//! `engram report`: a user's history page, or one run's page, as
//! self-contained HTML files.

use std::io::{self, Write};
use std::path::Path;

use anyhow::{Context, Result, bail};

use engram::config::Config;
use engram::report::history::SECTION_LIMIT;
use engram::report::{self, HistoryPage, run_page_name, url_encode};

use super::ReportArgs;
use crate::app::open_store;

/// Most recent runs that get a page of their own beside a history page.
const RUN_PAGES: usize = 50;

pub fn run(config: &Config, args: &ReportArgs) -> Result<()> {
    let mut out = io::stdout().lock();
    let store = open_store(config)?;
    let focus = args.memory.as_deref();
    if let Some(run_id) = &args.run {
        let stored = store
            .find_run_report(run_id)?
            .with_context(|| format!("no run {run_id}"))?;
        if let Some(user) = &args.user
            && user != &stored.user_id
        {
            bail!("run {run_id} belongs to another user, not {user}");
        }
        let records = report::read_user(store.as_ref(), &stored.user_id)?;
        let html = report::run_page_html(&records, &stored, &config.salience, focus, None)?;
        write_page(&args.html, &html)?;
        writeln!(
            out,
            "report of run {run_id} written to {}",
            args.html.display()
        )?;
        return Ok(());
    }
    let user_id = args.user.clone().unwrap_or_default();
    let records = report::read_user(store.as_ref(), &user_id)?;
    if records.is_empty() {
        bail!("user {user_id} has no memories");
    }
    // The most recent runs get pages of their own beside the history page,
    // in `NAME-runs/`, which the timeline links to.
    let page_name = args
        .html
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .with_context(|| format!("{} is not a file name", args.html.display()))?;
    let runs_dir_name = format!(
        "{}-runs",
        args.html
            .file_stem()
            .map_or_else(|| page_name.clone(), |s| s.to_string_lossy().into_owned())
    );
    let runs_dir = args.html.with_file_name(&runs_dir_name);
    let with_pages: Vec<&engram::model::RunReport> =
        records.runs.iter().rev().take(RUN_PAGES).collect();
    let mut written = std::collections::HashSet::new();
    if !with_pages.is_empty() {
        std::fs::create_dir_all(&runs_dir)
            .with_context(|| format!("cannot create {}", runs_dir.display()))?;
    }
    let back = format!("../{}", url_encode(&page_name));
    for stored in with_pages {
        // A run whose report no longer reads is listed without a page.
        let Ok(html) =
            report::run_page_html(&records, stored, &config.salience, focus, Some(&back))
        else {
            continue;
        };
        write_page(
            &runs_dir.join(format!("{}.html", run_page_name(&stored.run_id))),
            &html,
        )?;
        written.insert(stored.run_id.as_str());
    }
    let dir_href = url_encode(&runs_dir_name);
    let run_href = |run: &str| {
        written
            .contains(run)
            .then(|| format!("{dir_href}/{}.html", run_page_name(run)))
    };
    let html = report::render_history(&HistoryPage {
        user_id: &user_id,
        records: &records,
        now: chrono::Utc::now().timestamp_millis(),
        salience: &config.salience,
        focus,
        run_href: &run_href,
        limit: SECTION_LIMIT,
    });
    write_page(&args.html, &html)?;
    writeln!(
        out,
        "history of {user_id} written to {} ({} run pages in {})",
        args.html.display(),
        written.len(),
        runs_dir.display()
    )?;
    Ok(())
}

fn write_page(path: &Path, html: &str) -> Result<()> {
    std::fs::write(path, html).with_context(|| format!("cannot write {}", path.display()))
}
