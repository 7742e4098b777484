//! The `engram` command line.

use std::fs::File;
use std::io::{self, BufReader, BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand};
use tracing::info;

use engram::clock::Clock;
use engram::config::{Config, LogConfig, Override};
use engram::cycle::CycleSettings;
use engram::embed::{EMBEDDING_DIM, Embedder, LocalEmbedder, inspect_model};
use engram::emit::JsonLinesSink;
use engram::event::EventCodec;
use engram::index::UserIndexes;
use engram::pipeline::EmbeddedPipeline;
use engram::source::LineSource;
use engram::store::{self, EmbeddedStore, Store};

#[derive(Parser)]
#[command(
    name = "engram",
    version,
    about = "Consolidates the long-term memory of AI agents"
)]
struct Cli {
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
enum Command {
    /// Consume events and keep state; without a broker, from a file or stdin.
    Run(RunArgs),
    /// Print the effective configuration (secrets masked).
    Config,
    /// Check the embedding runtime, the model and the state store; exits
    /// non-zero if anything is wrong.
    Doctor,
    /// Print all stored state as deterministic JSON.
    Dump {
        /// Only this user.
        #[arg(long)]
        user: Option<String>,
    },
}

#[derive(Args)]
struct RunArgs {
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
    /// `auto`, `stream` or `wall`: what "now" is (DESIGN.md §9).
    #[arg(long)]
    clock: Option<String>,
}

fn main() {
    if let Err(error) = run() {
        eprintln!("engram: error: {error:#}");
        std::process::exit(1);
    }
}

fn run() -> Result<()> {
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
    init_logging(&config.log)?;
    match cli.command {
        Command::Config => {
            print!("{}", config.to_masked_toml());
            Ok(())
        }
        Command::Dump { user } => dump(&config, user.as_deref()),
        Command::Doctor => doctor(&config),
        Command::Run(_) => run_embedded(&config),
    }
}

fn init_logging(log: &LogConfig) -> Result<()> {
    let filter = tracing_subscriber::EnvFilter::try_new(&log.level)
        .with_context(|| format!("invalid log.level `{}`", log.level))?;
    let json = match log.format.as_str() {
        "json" => true,
        "human" => false,
        "auto" => !io::stderr().is_terminal(),
        other => bail!("log.format must be auto, human or json, not `{other}`"),
    };
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(io::stderr);
    if json {
        builder.json().init();
    } else {
        builder.init();
    }
    Ok(())
}

fn open_store(config: &Config) -> Result<EmbeddedStore> {
    if !config.scylla.nodes.trim().is_empty() {
        bail!(
            "the ScyllaDB store is not available in this build; unset scylla.nodes to use the embedded store"
        );
    }
    Ok(EmbeddedStore::open(&config.state.dir)?)
}

fn dump(config: &Config, user: Option<&str>) -> Result<()> {
    let store = open_store(config)?;
    let mut dumped = store::dump(&store)?;
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

fn run_embedded(config: &Config) -> Result<()> {
    if config.uses_broker() {
        bail!(
            "the Kafka processor is not available in this build; unset kafka.brokers to run on a file or stdin"
        );
    }
    let codec = EventCodec::new(config.limits)?;
    // The model first: a missing runtime should fail before anything is created.
    let embedder = if config.embedding.enabled {
        let loading = std::time::Instant::now();
        let embedder = LocalEmbedder::load(&config.embedding)?;
        info!(
            model = %config.embedding.model_dir.display(),
            load_ms = loading.elapsed().as_millis() as u64,
            "embedding model loaded"
        );
        Some(embedder)
    } else {
        info!("embedding.enabled = false: only platform-supplied embeddings are used");
        None
    };
    let store = open_store(config)?;
    let input_path = config.input.path.as_str();
    let (reader, default_stream): (Box<dyn io::BufRead>, String) = if input_path == "-" {
        (Box::new(io::stdin().lock()), "stdin".to_owned())
    } else {
        let file =
            File::open(input_path).with_context(|| format!("cannot open input {input_path}"))?;
        let absolute = Path::new(input_path)
            .canonicalize()
            .with_context(|| format!("cannot resolve input {input_path}"))?;
        (
            Box::new(BufReader::new(file)),
            format!("file:{}", absolute.display()),
        )
    };
    let stream = if config.input.source_id.is_empty() {
        default_stream
    } else {
        config.input.source_id.clone()
    };
    let mut source = LineSource::new(reader, stream.clone(), config.limits.max_event_bytes);
    let events = open_output(&config.output.path)?;
    let dead_letters = match config.output.dlq_path.as_str() {
        "" => None,
        path => Some(open_output(path)?),
    };
    let mut sink = JsonLinesSink::new(&codec, events, dead_letters);
    let settings = CycleSettings {
        consolidation: config.consolidation.clone(),
        salience: config.salience,
    };
    let clock = Clock::new(config.pipeline.clock, true);
    info!(
        input = %stream,
        state = %config.state.dir.display(),
        stream_time = clock.is_stream_time(),
        "engram run started"
    );
    let started = std::time::Instant::now();
    let mut pipeline = EmbeddedPipeline::new(
        &codec,
        &store as &dyn Store,
        settings,
        config.pipeline.batch_size,
        clock,
    );
    if let Some(embedder) = &embedder {
        pipeline = pipeline.with_embedder(
            embedder as &dyn Embedder,
            &config.embedding,
            UserIndexes::new(EMBEDDING_DIM, config.index.clone()),
        );
    }
    let summary = pipeline.run(&mut source, &mut sink)?;
    let elapsed = started.elapsed();
    info!(
        records = summary.records,
        applied = summary.applied_total(),
        replayed = summary.replayed,
        rejected = summary.rejected_total(),
        elapsed_ms = elapsed.as_millis() as u64,
        "engram run finished"
    );
    eprintln!("{summary}");
    eprintln!(
        "  elapsed           {:>8.2} s ({:.0} records/s)",
        elapsed.as_secs_f64(),
        summary.records as f64 / elapsed.as_secs_f64().max(1e-9)
    );
    Ok(())
}

fn doctor(config: &Config) -> Result<()> {
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
    if config.scylla.nodes.trim().is_empty() {
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
        println!("  scylla            {}", config.scylla.nodes);
        problems.push(
            "scylla.nodes is set, but the ScyllaDB store is not available in this build".to_owned(),
        );
    }
    println!();
    println!("input");
    if config.uses_broker() {
        println!("  kafka             {}", config.kafka.brokers);
        problems.push(
            "kafka.brokers is set, but the Kafka processor is not available in this build"
                .to_owned(),
        );
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

fn open_output(path: &str) -> Result<Box<dyn Write>> {
    if path == "-" {
        return Ok(Box::new(BufWriter::new(io::stdout())));
    }
    let file = File::create(path).with_context(|| format!("cannot create output {path}"))?;
    Ok(Box::new(BufWriter::new(file)))
}
