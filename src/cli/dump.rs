//! `engram dump`: all stored state as deterministic JSON.

use std::io::{self, Write};

use anyhow::Result;

use engram::config::Config;
use engram::store;

use crate::app::open_store;

pub fn run(config: &Config, user: Option<&str>) -> Result<()> {
    let store = open_store(config)?;
    let mut dumped = store::dump(store.as_ref())?;
    if let (Some(user), Some(users)) =
        (user, dumped.get_mut("users").and_then(|u| u.as_array_mut()))
    {
        users.retain(|entry| entry.get("user_id").and_then(|id| id.as_str()) == Some(user));
    }
    let mut out = io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, &dumped)?;
    writeln!(out)?;
    Ok(())
}
