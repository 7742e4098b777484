//! The composition root: everything engram is made of is built here, once,
//! and handed to the mode that runs it. [`embedded`] runs a file or stdin
//! through the pipeline; [`service`] joins a consumer group. Both share the
//! pieces below: the logging, the store, the embedder, the consolidation
//! settings, the one Tokio runtime and the HTTP endpoint.

pub mod embedded;
pub mod service;

use std::io::{self, IsTerminal};
use std::sync::{Arc, OnceLock};

use anyhow::{Context, Result};
use tokio::runtime::Runtime;
use tracing::info;

use engram::config::{Config, LogConfig, LogFormat};
use engram::cycle::CycleSettings;
use engram::detect::WordNet;
use engram::embed::{Embedder, LocalEmbedder};
use engram::emit::RequestSink;
use engram::event::EventCodec;
use engram::http::{self, Health, HttpState};
use engram::kafka::{OutputProducer, Topics};
use engram::metrics::{MeteredEmbedder, MeteredStore, Metrics};
use engram::plan::RuleSet;
use engram::rewrite::ChatRewriter;
use engram::store::{EmbeddedStore, ScyllaStore, Store};

pub fn init_logging(log: &LogConfig) -> Result<()> {
    let filter = tracing_subscriber::EnvFilter::try_new(&log.level)
        .with_context(|| format!("invalid log.level `{}`", log.level))?;
    let json = match log.format {
        LogFormat::Json => true,
        LogFormat::Human => false,
        LogFormat::Auto => !io::stderr().is_terminal(),
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

/// ScyllaDB when `scylla.nodes` is set (its requests run on [`runtime`]),
/// else the embedded store.
pub fn open_store(config: &Config) -> Result<Box<dyn Store>> {
    if config.scylla.enabled() {
        let runtime = runtime()?.handle().clone();
        return Ok(Box::new(ScyllaStore::connect(&config.scylla, runtime)?));
    }
    Ok(Box::new(EmbeddedStore::open(&config.state.dir)?))
}

/// Refuses a command that writes users' state directly (`undo`) while a
/// service instance may own them: with a broker configured, while engram's
/// consumer group has members. The service is
/// then the users' only writer; its stream is the way in.
pub fn refuse_while_a_service_runs(config: &Config, what: &str) -> Result<()> {
    if !config.uses_broker() {
        return Ok(());
    }
    let members = engram::kafka::group_members(&config.kafka, std::time::Duration::from_secs(10))?;
    if members > 0 {
        anyhow::bail!(
            "{what} writes users' state directly, but consumer group `{}` on {} has {members} \
             member(s): a running engram service owns these users. Send a \
             consolidation.requested event (or POST /users/{{id}}/consolidate?execute=true) \
             instead, or stop the service first",
            config.kafka.group_id,
            config.kafka.brokers
        );
    }
    Ok(())
}

/// A producer for a command that publishes to a running deployment's
/// topics (`consolidate --execute`, `undo`).
pub fn command_producer(config: &Config) -> Result<OutputProducer> {
    Ok(OutputProducer::new(
        &config.kafka,
        EventCodec::new(config.limits)?,
        Topics::from_config(&config.kafka)?,
        config.kafka.output_format,
        Arc::new(Metrics::new()?),
    )?)
}

/// The store as the running modes use it: measured.
pub fn metered_store(config: &Config, metrics: &Arc<Metrics>) -> Result<Arc<dyn Store>> {
    Ok(Arc::new(MeteredStore::new(
        Arc::from(open_store(config)?),
        Arc::clone(metrics),
    )))
}

/// The local model, measured; `None` when `embedding.enabled = false`.
pub fn metered_embedder(
    config: &Config,
    metrics: &Arc<Metrics>,
) -> Result<Option<Arc<dyn Embedder>>> {
    if !config.embedding.enabled {
        info!("embedding.enabled = false: only platform-supplied embeddings are used");
        return Ok(None);
    }
    let loading = std::time::Instant::now();
    let embedder = LocalEmbedder::load(&config.embedding)?;
    info!(
        model = %config.embedding.model_dir.display(),
        load_ms = loading.elapsed().as_millis() as u64,
        "embedding model loaded"
    );
    Ok(Some(Arc::new(MeteredEmbedder::new(
        Arc::new(embedder),
        Arc::clone(metrics),
    ))))
}

/// The consolidation settings: config, rules (checked now, so a bad rules
/// file stops start-up), WordNet and the optional pattern rewriter.
pub fn cycle_settings(config: &Config) -> Result<CycleSettings> {
    let rules = RuleSet::load(&config.consolidation.rules_path)?;
    let mut settings = CycleSettings::new(config.consolidation.clone(), config.salience, rules);
    if !config.consolidation.wordnet_dir.is_empty() {
        let wordnet = WordNet::load(std::path::Path::new(&config.consolidation.wordnet_dir))?;
        settings = settings.with_wordnet(Arc::new(wordnet));
    }
    if let Some(rewriter) = ChatRewriter::from_config(&config.consolidation.rewrite) {
        settings.rewriter = Some(Arc::new(rewriter));
    }
    Ok(settings)
}

/// The one Tokio runtime of a process, built when first asked for: broker
/// I/O, the HTTP endpoint, the embedding batcher, signals and the ScyllaDB
/// driver. Its async workers only run tasks; synchronous code that waits on
/// it (the store's calls, `block_on`) runs on other threads: partition
/// workers, the command's main thread, `spawn_blocking`.
pub fn runtime() -> Result<&'static Runtime> {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    if let Some(runtime) = RUNTIME.get() {
        return Ok(runtime);
    }
    let built = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("engram-io")
        .build()
        .context("cannot start the runtime")?;
    Ok(RUNTIME.get_or_init(|| built))
}

/// Serves `/healthz`, `/readyz`, `/metrics` and the API on `runtime`.
/// `requests`: where `POST /users/{id}/consolidate` sends its request
/// (service mode); without it the route answers that there is no stream.
pub fn serve_http(
    config: &Config,
    bind: &str,
    parts: HttpParts,
    runtime: &tokio::runtime::Handle,
) -> Result<()> {
    let report_wait = if parts.requests.is_some() {
        std::time::Duration::from_secs(30)
    } else {
        std::time::Duration::ZERO
    };
    let state = HttpState {
        metrics: parts.metrics,
        health: parts.health,
        store: parts.store,
        requests: parts.requests,
        report_wait,
        max_id_bytes: config.limits.max_id_bytes,
        token: config.http.required_token(),
        salience: config.salience,
    };
    http::spawn(bind, state, runtime)?;
    Ok(())
}

/// What the HTTP endpoint reads and where it sends requests.
pub struct HttpParts {
    pub metrics: Arc<Metrics>,
    pub health: Arc<Health>,
    pub store: Arc<dyn Store>,
    pub requests: Option<Arc<dyn RequestSink>>,
}
