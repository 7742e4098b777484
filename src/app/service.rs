//! Service mode: a member of the consumer group until SIGTERM or SIGINT.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context, Result};
use tokio::runtime::Handle;
use tracing::{info, warn};

use engram::config::Config;
use engram::embed::{BatcherConfig, EmbedBatcher};
use engram::emit::RequestSink;
use engram::event::EventCodec;
use engram::http::Health;
use engram::kafka::{self, OutputProducer, ServiceParts, Topics};
use engram::metrics::Metrics;

use super::HttpParts;

pub fn run(config: &Config) -> Result<()> {
    let kafka_config = &config.kafka;
    let topics = Topics::from_config(kafka_config)?;
    let codec = EventCodec::new(config.limits)?;
    let settings = super::cycle_settings(config)?;
    let metrics = Arc::new(Metrics::new()?);
    let embedder = super::metered_embedder(config, &metrics)?;
    let store = super::metered_store(config, &metrics)?;
    let runtime = super::runtime()?;
    let shutdown = Arc::new(AtomicBool::new(false));
    watch_signals(Arc::clone(&shutdown), runtime.handle())?;
    info!(
        brokers = %kafka_config.brokers,
        group = %kafka_config.group_id,
        state = %config.state.dir.display(),
        "engram service starting"
    );
    // A wrong CA or password stops here with the setting to fix, instead of
    // a consumer that retries for ever.
    kafka::check_connection(kafka_config, Duration::from_secs(10))?;
    if kafka_config.create_topics {
        runtime.block_on(kafka::create_missing(kafka_config, &topics))?;
    }
    let producer = Arc::new(OutputProducer::new(
        kafka_config,
        codec.clone(),
        topics.clone(),
        kafka_config.output_format,
        Arc::clone(&metrics),
    )?);
    let health = Arc::new(Health::service());
    if let Some(bind) = config.http.bind_for(true) {
        let parts = HttpParts {
            metrics: Arc::clone(&metrics),
            health: Arc::clone(&health),
            store: Arc::clone(&store),
            requests: Some(Arc::clone(&producer) as Arc<dyn RequestSink>),
        };
        super::serve_http(config, &bind, parts, runtime.handle())?;
    }
    let batcher = embedder
        .as_ref()
        .map(|embedder| {
            let _guard = runtime.enter();
            EmbedBatcher::spawn(
                Arc::clone(embedder),
                BatcherConfig {
                    max_batch: config.embedding.max_batch,
                    max_wait: config.embedding.max_wait,
                    sub_batch: config.embedding.sub_batch(),
                    bucketing: true,
                },
            )
        })
        .transpose()
        .context("cannot start the embedding model's thread")?;
    let parts = ServiceParts {
        codec,
        store,
        settings,
        embedder,
        batcher,
        producer,
        topics,
        input_format: kafka_config.input_format.fixed(),
        metrics,
        health,
        runtime: runtime.handle().clone(),
    };
    // The runtime is the process's and ends with it: what still runs on it
    // (the HTTP endpoint, the signal watcher) has nothing left to finish.
    kafka::run(config, parts, &shutdown).map_err(Into::into)
}

/// Sets `shutdown` on the first SIGTERM or SIGINT; a second one exits at once.
/// SIGXFSZ (a write past the file-size limit) is caught so that the write
/// fails like a full disk, which the workers retry, instead of killing the
/// process.
fn watch_signals(shutdown: Arc<AtomicBool>, runtime: &Handle) -> Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    // Registered before returning, so no early signal is missed.
    let (mut term, mut int, mut file_size) = {
        let _context = runtime.enter();
        (
            signal(SignalKind::terminate())?,
            signal(SignalKind::interrupt())?,
            signal(SignalKind::from_raw(libc::SIGXFSZ))?,
        )
    };
    runtime.spawn(async move {
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
    });
    Ok(())
}
