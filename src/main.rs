//! The `engram` command line.

use std::fs::File;
use std::io::{self, BufReader, BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand};
use tracing::{info, warn};

use engram::clock::Clock;
use engram::config::{Config, LogConfig, Override};
use engram::cycle::{CycleReport, CycleRequest, CycleSettings, derived_id, run_cycle};
use engram::detect::WordNet;
use engram::embed::{EMBEDDING_DIM, Embedder, LocalEmbedder, inspect_model};
use engram::emit::JsonLinesSink;
use engram::event::EventCodec;
use engram::event::{RunMode, TriggerReason};
use engram::http::{self, Health, HttpState};
use engram::index::UserIndexes;
use engram::inspect::neighbourhood;
use engram::kafka;
use engram::metrics::{MeteredEmbedder, MeteredSink, MeteredStore, Metrics};
use engram::pipeline::Pipeline;
use engram::plan::RuleSet;
use engram::progress;
use engram::rewrite::ChatRewriter;
use engram::source::LineSource;
use engram::store::{self, EmbeddedStore, ScyllaStore, Store};

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
    /// Print the cosine similarity of every pair of texts, as the model
    /// scores them (for choosing thresholds), and what their alignment
    /// says: a contradiction and why, or whether a merge would lose a fact.
    Similarity {
        /// Two or more texts.
        #[arg(required = true, num_args = 2..)]
        texts: Vec<String>,
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
    /// Restore every memory and link a run changed, and remove what it created.
    Undo { run_id: String },
    /// Render a user's memories and a run (the latest, or --run) as one
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
struct ConsolidateArgs {
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
struct ReportArgs {
    /// The user (default with --run: the run's user).
    #[arg(long, required_unless_present = "run")]
    user: Option<String>,
    /// The run to show (default: the user's latest).
    #[arg(long)]
    run: Option<String>,
    /// The memory at the centre of the link graph (default: the most linked).
    #[arg(long)]
    memory: Option<String>,
    /// Where to write the page.
    #[arg(long)]
    html: PathBuf,
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
        Command::Migrate => migrate(&config),
        Command::Report(args) => html_report(&config, &args),
        Command::Similarity { texts } => similarity(&config, &texts),
        Command::Consolidate(args) => consolidate(&config, &args),
        Command::Inspect {
            user,
            memory,
            links,
            depth,
        } => inspect(&config, &user, memory.as_deref(), links.then_some(depth)),
        Command::Undo { run_id } => undo(&config, &run_id),
        Command::Run(_) if config.uses_broker() => run_service(&config),
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
        .with_writer(io::stderr)
        // Its report of a failed log write goes to stderr with `eprintln!`,
        // which panics when stderr is the file that failed (a full disk):
        // losing log lines must not take a partition worker down with it.
        .log_internal_errors(false);
    if json {
        builder.json().init();
    } else {
        builder.init();
    }
    Ok(())
}

/// ScyllaDB when `scylla.nodes` is set, else the embedded store.
fn open_store(config: &Config) -> Result<Box<dyn Store>> {
    if config.scylla.enabled() {
        return Ok(Box::new(ScyllaStore::connect(&config.scylla)?));
    }
    Ok(Box::new(EmbeddedStore::open(&config.state.dir)?))
}

fn html_report(config: &Config, args: &ReportArgs) -> Result<()> {
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
    println!("report written to {}", args.html.display());
    Ok(())
}

/// Applies the ScyllaDB schema (the embedded store migrates itself on open).
fn migrate(config: &Config) -> Result<()> {
    if !config.scylla.enabled() {
        let store = EmbeddedStore::open(&config.state.dir)?;
        println!(
            "embedded store {} is at the current schema",
            store.path().display()
        );
        return Ok(());
    }
    let bar = progress::items(
        store::schema::statement_count() as u64,
        "statements",
        "migrating",
    );
    let step = bar.clone();
    let outcome = store::migrate(&config.scylla, Box::new(move || step.inc(1)));
    bar.finish_and_clear();
    let outcome = outcome?;
    if outcome.applied.is_empty() {
        println!(
            "keyspace {} is at schema version {}; nothing to apply",
            config.scylla.keyspace, outcome.version
        );
    } else {
        println!(
            "keyspace {}: applied schema version(s) {:?}; now at {}",
            config.scylla.keyspace, outcome.applied, outcome.version
        );
    }
    Ok(())
}

fn dump(config: &Config, user: Option<&str>) -> Result<()> {
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

/// Service mode: a member of the consumer group until SIGTERM or SIGINT.
fn run_service(config: &Config) -> Result<()> {
    let settings = cycle_settings(config)?;
    let metrics = Arc::new(Metrics::new()?);
    let embedder: Option<Arc<dyn Embedder>> = if config.embedding.enabled {
        let embedder = LocalEmbedder::load(&config.embedding)?;
        info!(model = %config.embedding.model_dir.display(), "embedding model loaded");
        Some(Arc::new(MeteredEmbedder::new(
            Arc::new(embedder),
            Arc::clone(&metrics),
        )))
    } else {
        info!("embedding.enabled = false: only platform-supplied embeddings are used");
        None
    };
    let store: Arc<dyn Store> = Arc::new(MeteredStore::new(
        Arc::from(open_store(config)?),
        Arc::clone(&metrics),
    ));
    let shutdown = Arc::new(AtomicBool::new(false));
    watch_signals(Arc::clone(&shutdown))?;
    info!(
        brokers = %config.kafka.brokers,
        group = %config.kafka.group_id,
        state = %config.state.dir.display(),
        "engram service starting"
    );
    let parts = kafka::ServiceParts {
        store,
        settings,
        embedder,
        metrics,
        http_bind: config.http.bind_for(true),
    };
    kafka::run(config, parts, shutdown)?;
    Ok(())
}

/// Sets `shutdown` on the first SIGTERM or SIGINT; a second one exits at once.
/// SIGXFSZ (a write past the file-size limit) is caught so that the write
/// fails like a full disk, which the workers retry, instead of killing the
/// process.
fn watch_signals(shutdown: Arc<AtomicBool>) -> Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    // Registered before returning, so no early signal is missed.
    let (mut term, mut int, mut file_size) = {
        let _context = runtime.enter();
        (
            signal(SignalKind::terminate())?,
            signal(SignalKind::interrupt())?,
            signal(SignalKind::from_raw(libc::SIGXFSZ))?,
        )
    };
    std::thread::Builder::new()
        .name("engram-signals".to_owned())
        .spawn(move || {
            runtime.block_on(async move {
                loop {
                    tokio::select! {
                        _ = term.recv() => {}
                        _ = int.recv() => {}
                        _ = file_size.recv() => {
                            warn!("a write went past the file-size limit (RLIMIT_FSIZE) and failed");
                            continue;
                        }
                    }
                    if shutdown.swap(true, Ordering::SeqCst) {
                        eprintln!("engram: second signal, exiting without finishing");
                        std::process::exit(130);
                    }
                    info!("shutdown requested: finishing in-flight batches");
                }
            })
        })?;
    Ok(())
}

fn run_embedded(config: &Config) -> Result<()> {
    let codec = EventCodec::new(config.limits)?;
    // Rules and model first: bad rules or a missing runtime should fail
    // before anything is created.
    let settings = cycle_settings(config)?;
    let metrics = Arc::new(Metrics::new()?);
    let embedder = if config.embedding.enabled {
        let loading = std::time::Instant::now();
        let embedder = LocalEmbedder::load(&config.embedding)?;
        info!(
            model = %config.embedding.model_dir.display(),
            load_ms = loading.elapsed().as_millis() as u64,
            "embedding model loaded"
        );
        Some(MeteredEmbedder::new(
            Arc::new(embedder),
            Arc::clone(&metrics),
        ))
    } else {
        info!("embedding.enabled = false: only platform-supplied embeddings are used");
        None
    };
    let store: Arc<dyn Store> = Arc::new(MeteredStore::new(
        Arc::from(open_store(config)?),
        Arc::clone(&metrics),
    ));
    // Off unless http.embedded: a file run is usually short and local.
    let _http_runtime = match config.http.bind_for(false) {
        Some(bind) => {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .thread_name("engram-http")
                .enable_all()
                .build()?;
            let state = HttpState {
                metrics: Arc::clone(&metrics),
                health: Arc::new(Health::embedded()),
                store: Arc::clone(&store),
                requests: None,
                report_wait: std::time::Duration::ZERO,
                max_id_bytes: config.limits.max_id_bytes,
                token: config.http.required_token(),
            };
            http::spawn(&bind, state, runtime.handle())?;
            Some(runtime)
        }
        None => None,
    };
    let input_path = config.input.path.as_str();
    let mut reading = None;
    let (reader, default_stream): (Box<dyn io::BufRead>, String) = if input_path == "-" {
        (Box::new(io::stdin().lock()), "stdin".to_owned())
    } else {
        let file =
            File::open(input_path).with_context(|| format!("cannot open input {input_path}"))?;
        let absolute = Path::new(input_path)
            .canonicalize()
            .with_context(|| format!("cannot resolve input {input_path}"))?;
        let size = file.metadata().map(|m| m.len()).unwrap_or(0);
        let bar = progress::bytes(size, "reading events");
        reading = Some(bar.clone());
        (
            Box::new(BufReader::new(bar.wrap_read(file))),
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
    let mut sink = MeteredSink::new(
        JsonLinesSink::new(&codec, events, dead_letters),
        Arc::clone(&metrics),
    );
    let clock = Clock::new(config.pipeline.clock, true);
    info!(
        input = %stream,
        state = %config.state.dir.display(),
        stream_time = clock.is_stream_time(),
        "engram run started"
    );
    let started = std::time::Instant::now();
    let mut pipeline = Pipeline::new(
        &codec,
        store.as_ref(),
        settings,
        config.pipeline.batch_size,
        clock,
    );
    if let Some(embedder) = &embedder {
        pipeline = pipeline.with_embedder(
            embedder,
            &config.embedding,
            UserIndexes::new(EMBEDDING_DIM, config.index.clone()),
        );
    }
    let summary = pipeline.run(&mut source, &mut sink)?;
    if let Some(bar) = reading {
        bar.finish_and_clear();
    }
    metrics.record_summary(&summary);
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

fn consolidate(config: &Config, args: &ConsolidateArgs) -> Result<()> {
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
        let request = CycleRequest {
            user_id: user.to_owned(),
            run_id: derived_id(&[
                user,
                "cli",
                &now.to_string(),
                &previous,
                &format!("{mode:?}"),
            ]),
            trigger: TriggerReason::Manual,
            mode,
            now,
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
                println!(
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
            });
            bar.inc(1);
        }
        bar.finish_and_clear();
        println!("{} users consolidated", users.len());
        return Ok(());
    };
    let report = run(user)?;
    print_report(&report);
    if let Some(path) = &args.report {
        let json = serde_json::to_string_pretty(&report)?;
        std::fs::write(path, json + "\n")
            .with_context(|| format!("cannot write report {}", path.display()))?;
        println!("report written to {}", path.display());
    }
    Ok(())
}

fn print_report(report: &CycleReport) {
    let mode = match report.mode {
        RunMode::DryRun => "dry run: nothing was changed",
        RunMode::Execute => "executed",
    };
    println!("run {} for user {} ({mode})", report.run_id, report.user_id);
    println!(
        "  tier {:?}: {} of {} tokens; duplicate threshold {:.2}, archive threshold {:.2}",
        report.tier,
        report.tokens,
        report.token_budget,
        report.thresholds.duplicate_threshold,
        report.thresholds.archive_threshold
    );
    let c = &report.counts;
    println!(
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
    );
    for action in &report.actions {
        println!(
            "  - {} [{}] {} (score {:.4})",
            action.action_type.as_str(),
            action.rule_id,
            action.target_ids.join(", "),
            action.score
        );
        for reason in &action.reasons {
            println!("      {reason}");
        }
    }
    for skipped in &report.skipped {
        println!(
            "  · skipped {:?} {}: {}",
            skipped.detection,
            skipped.target_ids.join(", "),
            skipped.reason
        );
    }
    for warning in &report.warnings {
        println!("  ! {warning}");
    }
    println!("  config hash {}", report.config_hash);
}

fn inspect(config: &Config, user: &str, memory: Option<&str>, depth: Option<usize>) -> Result<()> {
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
            println!("{}", line(m));
        }
        println!("{} memories", memories.len());
        return Ok(());
    };
    let Some(found) = neighbourhood(store.as_ref(), user, memory_id, depth.unwrap_or(0))? else {
        bail!("user {user} has no memory {memory_id}");
    };
    for (distance, m) in &found.memories {
        println!("{}{}", "  ".repeat(*distance), line(m));
    }
    if depth.is_some() {
        println!("links:");
        for l in &found.links {
            println!(
                "  {} --{}--> {}  confidence {:.2}  {}",
                l.from_id,
                l.link_type.as_str(),
                l.to_id,
                l.confidence,
                l.reason
            );
        }
        println!(
            "{} memories, {} links, {} dead links removed",
            found.memories.len(),
            found.links.len(),
            found.dead_links_removed
        );
    }
    Ok(())
}

fn undo(config: &Config, run_id: &str) -> Result<()> {
    let store = open_store(config)?;
    let summary = engram::undo::undo(
        store.as_ref(),
        run_id,
        chrono::Utc::now().timestamp_millis(),
    )?;
    if summary.already_undone {
        println!("run {run_id} was already undone; nothing changed");
    } else {
        println!(
            "run {run_id} of user {} undone: {} memories restored, {} removed, {} links restored, {} removed",
            summary.user_id,
            summary.restored_memories,
            summary.removed_memories,
            summary.restored_links,
            summary.removed_links
        );
    }
    Ok(())
}

/// The consolidation settings: config, rules (checked now, so a bad rules
/// file stops start-up) and the optional pattern rewriter.
fn cycle_settings(config: &Config) -> Result<CycleSettings> {
    let rules = RuleSet::load(&config.consolidation.rules_path)?;
    let mut settings = CycleSettings::new(config.consolidation.clone(), config.salience, rules);
    if !config.consolidation.wordnet_dir.is_empty() {
        let wordnet = WordNet::load(std::path::Path::new(&config.consolidation.wordnet_dir))?;
        settings = settings.with_wordnet(Arc::new(wordnet));
    }
    if let Some(rewriter) = ChatRewriter::from_config(&config.consolidation) {
        settings.rewriter = Some(Arc::new(rewriter));
    }
    Ok(settings)
}

fn similarity(config: &Config, texts: &[String]) -> Result<()> {
    let embedder = LocalEmbedder::load(&config.embedding)?;
    let lexicon = cycle_settings(config)?.lexicon;
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let vectors = embedder.embed(&refs, config.embedding.sub_batch)?;
    let tokens: Vec<_> = refs
        .iter()
        .map(|t| engram::detect::align::tokens(t, &lexicon))
        .collect();
    for (i, first) in vectors.iter().enumerate() {
        for (j, second) in vectors.iter().enumerate().skip(i + 1) {
            println!(
                "{:.4}  {:?}  {:?}",
                engram::embed::dot(first, second),
                texts[i],
                texts[j]
            );
            let comparison = engram::detect::align::compare(&tokens[i], &tokens[j], &lexicon);
            println!("        {}", comparison.verdict());
        }
    }
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

fn open_output(path: &str) -> Result<Box<dyn Write>> {
    if path == "-" {
        return Ok(Box::new(BufWriter::new(io::stdout())));
    }
    let file = File::create(path).with_context(|| format!("cannot create output {path}"))?;
    Ok(Box::new(BufWriter::new(file)))
}
