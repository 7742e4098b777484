//! `engram inspect`: a user's memories, or one memory and the links around it.

use std::io::{self, Write};

use anyhow::{Result, bail};

use engram::config::Config;
use engram::inspect::neighbourhood;

use crate::app::open_store;

pub fn run(config: &Config, user: &str, memory: Option<&str>, depth: Option<usize>) -> Result<()> {
    let mut out = io::stdout().lock();
    let store = open_store(config)?;
    let now = chrono::Utc::now().timestamp_millis();
    let line = |m: &engram::model::Memory| {
        let salience = m.salience.salience(now, m.importance, &config.salience);
        let content: String = m.content.chars().take(80).collect();
        format!(
            "{}  {:<10} {:<10} salience {:.3}  reads {:>3}  {}",
            m.id,
            m.kind.as_str(),
            m.status.as_str(),
            salience,
            m.salience.access_count(),
            content
        )
    };
    let Some(memory_id) = memory else {
        let memories = store.memories(user)?;
        if memories.is_empty() {
            bail!("user {user} has no memories");
        }
        for m in &memories {
            writeln!(out, "{}", line(m))?;
        }
        writeln!(out, "{} memories", memories.len())?;
        return Ok(());
    };
    let Some(found) = neighbourhood(store.as_ref(), user, memory_id, depth.unwrap_or(0))? else {
        bail!("user {user} has no memory {memory_id}");
    };
    for (distance, m) in &found.memories {
        writeln!(out, "{}{}", "  ".repeat(*distance), line(m))?;
    }
    if depth.is_some() {
        writeln!(out, "links:")?;
        for l in &found.links {
            writeln!(
                out,
                "  {} --{}--> {}  confidence {:.2}  {}",
                l.from_id,
                l.link_type.as_str(),
                l.to_id,
                l.confidence,
                l.reason
            )?;
        }
        writeln!(
            out,
            "{} memories, {} links, {} dead links removed",
            found.memories.len(),
            found.links.len(),
            found.dead_links_removed
        )?;
    }
    Ok(())
}
