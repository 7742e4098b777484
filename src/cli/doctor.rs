//! `engram doctor`: what engram finds (runtime, model, store, broker); exits non-zero on any problem.

use anyhow::{Result, bail};

use engram::config::Config;
use engram::embed::inspect_model;
use engram::kafka;
use engram::store::{self, EmbeddedStore, ScyllaStore};

pub fn run(config: &Config) -> Result<()> {
    let mut problems = Vec::new();
    println!("engram {}", env!("CARGO_PKG_VERSION"));
    println!();
    println!("embedding (enabled = {})", config.embedding.enabled);
    let report = inspect_model(&config.embedding);
    println!("  runtime library   {}", absolute(&report.runtime_library));
    println!(
        "  runtime version   {}",
        report
            .runtime_version
            .as_deref()
            .unwrap_or("unknown (no VERSION file beside it)")
    );
    println!("  model directory   {}", absolute(&report.model_dir));
    for (file, digest) in &report.files {
        match digest {
            Ok(sha256) => println!("    {file:<24} sha256 {sha256}"),
            Err(reason) => println!("    {file:<24} MISSING ({reason})"),
        }
    }
    match report.dimension {
        Some(dimension) => println!("  dimension         {dimension}"),
        None => println!("  dimension         unknown (the model did not load)"),
    }
    if config.embedding.enabled {
        problems.extend(report.problems);
    }
    println!();
    println!("state store");
    if !config.scylla.enabled() {
        let dir = &config.state.dir;
        if !dir.exists() {
            // Opening would create it; the doctor only looks.
            println!(
                "  embedded          {} (not created yet; `engram run` creates it)",
                absolute(&dir.display().to_string())
            );
        } else {
            match EmbeddedStore::open(dir) {
                Ok(store) => println!(
                    "  embedded          {} (ok)",
                    absolute(&store.path().display().to_string())
                ),
                Err(error) => {
                    println!("  embedded          {}", dir.display());
                    problems.push(error.to_string());
                }
            }
        }
    } else {
        println!(
            "  scylla            {} keyspace {} ({})",
            config.scylla.nodes, config.scylla.keyspace, config.scylla.consistency
        );
        match ScyllaStore::connect(&config.scylla) {
            Ok(_) => println!(
                "  schema            version {} (ok)",
                store::schema::latest_version()
            ),
            Err(error) => problems.push(error.to_string()),
        }
    }
    println!();
    println!("input");
    if config.uses_broker() {
        println!("  kafka             {}", config.kafka.brokers);
        println!("  group             {}", config.kafka.group_id);
        match kafka::Topics::from_config(&config.kafka) {
            Ok(topics) => println!("  input topics      {}", topics.inputs().join(", ")),
            Err(error) => problems.push(error.to_string()),
        }
    } else {
        println!(
            "  embedded mode     {} (no broker configured)",
            config.input.path
        );
    }
    println!();
    if problems.is_empty() {
        println!("no problems found");
        return Ok(());
    }
    println!("problems:");
    for problem in &problems {
        println!("  - {problem}");
    }
    bail!("{} problem(s) found", problems.len())
}

/// A path made absolute for display (it may not exist).
fn absolute(path: &str) -> String {
    std::path::absolute(path).map_or_else(|_| path.to_owned(), |p| p.display().to_string())
}
