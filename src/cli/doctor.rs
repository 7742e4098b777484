//! `engram doctor`: what engram finds (runtime, model, store, broker); exits non-zero on any problem.

use std::io::{self, Write};

use anyhow::{Result, bail};

use engram::config::Config;
use engram::embed::inspect_model;
use engram::kafka;
use engram::store::{self, EmbeddedStore, ScyllaStore};

pub fn run(config: &Config) -> Result<()> {
    let mut out = io::stdout().lock();
    let mut problems = Vec::new();
    writeln!(out, "engram {}", env!("CARGO_PKG_VERSION"))?;
    writeln!(out)?;
    writeln!(out, "embedding (enabled = {})", config.embedding.enabled)?;
    let report = inspect_model(&config.embedding);
    writeln!(
        out,
        "  runtime library   {}",
        absolute(&report.runtime_library)
    )?;
    writeln!(
        out,
        "  runtime version   {}",
        report
            .runtime_version
            .as_deref()
            .unwrap_or("unknown (no VERSION file beside it)")
    )?;
    writeln!(out, "  model directory   {}", absolute(&report.model_dir))?;
    for (file, digest) in &report.files {
        match digest {
            Ok(sha256) => writeln!(out, "    {file:<24} sha256 {sha256}")?,
            Err(reason) => writeln!(out, "    {file:<24} MISSING ({reason})")?,
        }
    }
    match report.dimension {
        Some(dimension) => writeln!(out, "  dimension         {dimension}")?,
        None => writeln!(out, "  dimension         unknown (the model did not load)")?,
    }
    if config.embedding.enabled {
        problems.extend(report.problems);
    }
    writeln!(out)?;
    writeln!(out, "state store")?;
    if !config.scylla.enabled() {
        let dir = &config.state.dir;
        if !dir.exists() {
            // Opening would create it; the doctor only looks.
            writeln!(
                out,
                "  embedded          {} (not created yet; `engram run` creates it)",
                absolute(&dir.display().to_string())
            )?;
        } else {
            match EmbeddedStore::open(dir) {
                Ok(store) => writeln!(
                    out,
                    "  embedded          {} (ok)",
                    absolute(&store.path().display().to_string())
                )?,
                Err(error) => {
                    writeln!(out, "  embedded          {}", dir.display())?;
                    problems.push(error.to_string());
                }
            }
        }
    } else {
        writeln!(
            out,
            "  scylla            {} keyspace {} ({})",
            config.scylla.nodes, config.scylla.keyspace, config.scylla.consistency
        )?;
        match ScyllaStore::connect(&config.scylla, crate::app::runtime()?.handle().clone()) {
            Ok(_) => writeln!(
                out,
                "  schema            version {} (ok)",
                store::schema::latest_version()
            )?,
            Err(error) => problems.push(error.to_string()),
        }
    }
    writeln!(out)?;
    writeln!(out, "input")?;
    if config.uses_broker() {
        writeln!(out, "  kafka             {}", config.kafka.brokers)?;
        writeln!(out, "  group             {}", config.kafka.group_id)?;
        match kafka::Topics::from_config(&config.kafka) {
            Ok(topics) => writeln!(out, "  input topics      {}", topics.inputs().join(", "))?,
            Err(error) => problems.push(error.to_string()),
        }
    } else {
        writeln!(
            out,
            "  embedded mode     {} (no broker configured)",
            config.input.path
        )?;
    }
    writeln!(out)?;
    if problems.is_empty() {
        writeln!(out, "no problems found")?;
        return Ok(());
    }
    writeln!(out, "problems:")?;
    for problem in &problems {
        writeln!(out, "  - {problem}")?;
    }
    bail!("{} problem(s) found", problems.len())
}

/// A path made absolute for display (it may not exist).
fn absolute(path: &str) -> String {
    std::path::absolute(path).map_or_else(|_| path.to_owned(), |p| p.display().to_string())
}
