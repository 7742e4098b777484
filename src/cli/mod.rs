//! The `engram` command line: its arguments, how flags become configuration
//! overrides, and one module per command.

mod consolidate;
mod doctor;
mod dump;
mod inspect;
mod migrate;
mod report;
mod similarity;
mod undo;

use std::io::{self, Write};
use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Parser, Subcommand};

use engram::config::{Config, Override};

use crate::app;

#[derive(Parser)]
#[command(
    name = "engram",
    version,
    about = "Consolidates the long-term memory of AI agents"
)]
pub struct Cli {
    /// TOML configuration file (overridden by ENGRAM_* variables and flags).
    #[arg(long, global = true, env = "ENGRAM_CONFIG")]
    config: Option<PathBuf>,
    /// Directory of the embedded state store [default: ./engram-data].
    #[arg(long, global = true)]
    state: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Consume events and keep state; without a broker, from a file or stdin.
    Run(RunArgs),
    /// Print the effective configuration (secrets masked).
    Config,
    /// Check the embedding runtime, the model and the state store; exits
    /// non-zero if anything is wrong.
    Doctor,
    /// Print the cosine similarity of every pair of texts, as the model
    /// scores them (for choosing thresholds), what their alignment says (a
    /// contradiction and why, or whether a merge would lose a fact), and
    /// what a cycle under this configuration does with the two as one
    /// user's memories, the first a minute older.
    Similarity {
        /// Two or more texts.
        #[arg(required_unless_present = "pairs", num_args = 2..)]
        texts: Vec<String>,
        /// A file of pairs instead, one per line: `first<TAB>second` or
        /// `id<TAB>first<TAB>second` (`-` reads stdin). Prints one
        /// tab-separated line per pair: id, cosine, verdict, a clause's
        /// verdict when only one clause contradicts (else empty), the
        /// cycle's decision ("merged", "contradiction flagged",
        /// "contradiction, the second supersedes the first", "both kept"),
        /// and the knowledge update the second states of the first, with
        /// the rule that found it (else empty).
        #[arg(long, value_name = "FILE", conflicts_with = "texts")]
        pairs: Option<PathBuf>,
    },
    /// Run a consolidation cycle for one user now: a dry run unless
    /// --execute. Prints a summary; --report writes the full JSON report.
    Consolidate(ConsolidateArgs),
    /// List a user's memories, or show one memory and the links around it.
    Inspect {
        #[arg(long)]
        user: String,
        #[arg(long)]
        memory: Option<String>,
        /// Follow links (both ways) from --memory.
        #[arg(long)]
        links: bool,
        /// How many links away to follow.
        #[arg(long, default_value_t = 1)]
        depth: usize,
    },
    /// Restore every memory and link a run changed, and remove what it
    /// created; publishes a `consolidation.undone` event (again, with the
    /// same id, when the run was undone before).
    Undo {
        run_id: String,
        /// Without a broker: append the event to this file (JSON lines)
        /// instead of printing it.
        #[arg(long)]
        output: Option<String>,
    },
    /// Render a user's whole history (or one run, with --run) as a
    /// self-contained HTML page.
    Report(ReportArgs),
    /// Create or upgrade the ScyllaDB keyspace and tables (idempotent; run
    /// once per deployment or upgrade, before `engram run`).
    Migrate,
    /// Print all stored state as deterministic JSON.
    Dump {
        /// Only this user.
        #[arg(long)]
        user: Option<String>,
    },
}

#[derive(Args)]
pub struct ConsolidateArgs {
    /// The user to consolidate.
    #[arg(
        long,
        required_unless_present = "all_users",
        conflicts_with = "all_users"
    )]
    user: Option<String>,
    /// Every user with stored state, one after the other (with a progress
    /// bar on a terminal); prints one line per user.
    #[arg(long)]
    all_users: bool,
    /// Apply the plan (default: dry run, nothing changes).
    #[arg(long)]
    execute: bool,
    /// Write the full JSON report here.
    #[arg(long, conflicts_with = "all_users")]
    report: Option<PathBuf>,
    /// "Now" for the cycle as RFC 3339 (default: the wall clock). The same
    /// state, time and config give the same plan.
    #[arg(long)]
    now: Option<String>,
}

#[derive(Args)]
pub struct ReportArgs {
    /// The user (default with --run: the run's user).
    #[arg(long, required_unless_present = "run")]
    user: Option<String>,
    /// One run's page instead of the user's history.
    #[arg(long)]
    run: Option<String>,
    /// The memory at the centre of the link graph (default: the most linked).
    #[arg(long)]
    memory: Option<String>,
    /// Where to write the page. A history page's most recent runs get pages
    /// of their own in a folder beside it (`NAME-runs/`), which it links to.
    #[arg(long)]
    html: PathBuf,
}

#[derive(Args)]
pub struct RunArgs {
    /// Input events as JSON lines, `-` for stdin.
    #[arg(long, short)]
    input: Option<String>,
    /// Output events as JSON lines, `-` for stdout.
    #[arg(long, short)]
    output: Option<String>,
    /// Separate file for dead letters (default: with the other outputs).
    #[arg(long)]
    dlq: Option<String>,
    /// Names the input stream for replay de-duplication.
    #[arg(long)]
    source_id: Option<String>,
    /// Events per store transaction.
    #[arg(long)]
    batch_size: Option<usize>,
    /// `auto`, `stream` or `wall`: what "now" is (docs/design.md §9).
    #[arg(long)]
    clock: Option<String>,
}

/// Parses the command line, loads the configuration and runs the command.
pub fn main() -> Result<()> {
    let cli = Cli::parse();
    let mut flags = Vec::new();
    let mut flag = |key: &str, value: Option<String>| {
        if let Some(value) = value {
            flags.push(Override {
                key: key.to_owned(),
                value,
                origin: format!("flag for {key}"),
            });
        }
    };
    flag("state.dir", cli.state.map(|p| p.display().to_string()));
    if let Command::Run(args) = &cli.command {
        flag("input.path", args.input.clone());
        flag("output.path", args.output.clone());
        flag("output.dlq_path", args.dlq.clone());
        flag("input.source_id", args.source_id.clone());
        flag(
            "pipeline.batch_size",
            args.batch_size.map(|n| n.to_string()),
        );
        flag("pipeline.clock", args.clock.clone());
    }
    let config = Config::load(cli.config.as_deref(), std::env::vars(), flags)?;
    app::init_logging(&config.log)?;
    for warning in config.warnings() {
        tracing::warn!("{warning}");
    }
    match cli.command {
        Command::Config => {
            io::stdout().write_all(config.to_masked_toml().as_bytes())?;
            Ok(())
        }
        Command::Dump { user } => dump::run(&config, user.as_deref()),
        Command::Doctor => doctor::run(&config),
        Command::Migrate => migrate::run(&config),
        Command::Report(args) => report::run(&config, &args),
        Command::Similarity { texts, pairs } => match pairs {
            Some(pairs) => similarity::run_pairs(&config, &pairs),
            None => similarity::run(&config, &texts),
        },
        Command::Consolidate(args) => consolidate::run(&config, &args),
        Command::Inspect {
            user,
            memory,
            links,
            depth,
        } => inspect::run(&config, &user, memory.as_deref(), links.then_some(depth)),
        Command::Undo { run_id, output } => undo::run(&config, &run_id, output.as_deref()),
        Command::Run(_) if config.uses_broker() => app::service::run(&config),
        Command::Run(_) => app::embedded::run(&config),
    }
}
