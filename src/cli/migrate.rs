//! `engram migrate`: create or upgrade the ScyllaDB keyspace and tables.

use std::io::{self, Write};

use anyhow::Result;

use engram::config::Config;
use engram::progress;
use engram::store::{self, EmbeddedStore};

/// Applies the ScyllaDB schema (the embedded store migrates itself on open).
pub fn run(config: &Config) -> Result<()> {
    let mut out = io::stdout().lock();
    if !config.scylla.enabled() {
        let store = EmbeddedStore::open(&config.state.dir)?;
        writeln!(
            out,
            "embedded store {} is at the current schema",
            store.path().display()
        )?;
        return Ok(());
    }
    let bar = progress::items(
        store::schema::statement_count() as u64,
        "statements",
        "migrating",
    );
    let step = bar.clone();
    let runtime = crate::app::runtime()?.handle();
    let outcome = store::migrate(&config.scylla, runtime, Box::new(move || step.inc(1)));
    bar.finish_and_clear();
    let outcome = outcome?;
    if outcome.applied.is_empty() {
        writeln!(
            out,
            "keyspace {} is at schema version {}; nothing to apply",
            config.scylla.keyspace, outcome.version
        )?;
    } else {
        writeln!(
            out,
            "keyspace {}: applied schema version(s) {:?}; now at {}",
            config.scylla.keyspace, outcome.applied, outcome.version
        )?;
    }
    Ok(())
}
