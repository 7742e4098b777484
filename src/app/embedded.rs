//! Embedded mode: events from a file or stdin through the pipeline into the
//! embedded store (or ScyllaDB), outputs as JSON lines.

use std::fs::{File, OpenOptions};
use std::io::{self, BufReader, BufWriter, Write};
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use tracing::{info, warn};

use engram::clock::Clock;
use engram::config::Config;
use engram::embed::EMBEDDING_DIM;
use engram::emit::JsonLinesSink;
use engram::event::EventCodec;
use engram::http::Health;
use engram::index::UserIndexes;
use engram::metrics::{MeteredSink, Metrics};
use engram::pipeline::Pipeline;
use engram::progress;
use engram::source::LineSource;

use super::HttpParts;

pub fn run(config: &Config) -> Result<()> {
    let codec = EventCodec::new(config.limits)?;
    // Rules and model first: bad rules or a missing runtime should fail
    // before anything is created.
    let settings = super::cycle_settings(config)?;
    let metrics = Arc::new(Metrics::new()?);
    let embedder = super::metered_embedder(config, &metrics)?;
    let store = super::metered_store(config, &metrics)?;
    // Off unless http.embedded: a file run is usually short and local.
    if let Some(bind) = config.http.bind_for(false) {
        let parts = HttpParts {
            metrics: Arc::clone(&metrics),
            health: Arc::new(Health::embedded()),
            store: Arc::clone(&store),
            requests: None,
        };
        super::serve_http(config, &bind, parts, super::runtime()?.handle())?;
    }
    let input_path = config.input.path.as_str();
    let mut reading = None;
    let (reader, default_stream): (Box<dyn io::BufRead>, String) = if input_path == "-" {
        // Replays are recognised per stream id: every piped stream is a new
        // one, and under one shared id a second day's input would be
        // skipped line by line as "already applied".
        if config.input.source_id.is_empty() {
            bail!(
                "reading stdin needs --source-id (input.source_id): a name for this stream, \
                 different for each new input, the same when replaying one"
            );
        }
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
    let mut reader = reader;
    check_stream_start(&config.state.dir, &stream, reader.as_mut())?;
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
            embedder.as_ref(),
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

/// Output files are appended to, never truncated: after a crash, the events
/// of inputs already applied are not produced again, so what the first run
/// wrote must stay.
pub(crate) fn open_output(path: &str) -> Result<Box<dyn Write>> {
    if path == "-" {
        return Ok(Box::new(BufWriter::new(io::stdout())));
    }
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("cannot open output {path}"))?;
    // Devices and pipes (`/dev/null`, a FIFO) have no disk to reach.
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return Ok(Box::new(BufWriter::new(file)));
    }
    let torn = cut_torn_line(path).with_context(|| format!("cannot repair output {path}"))?;
    if torn > 0 {
        // Its events were not committed (the sink is flushed before the
        // state commit): this run writes them again, whole.
        warn!(
            output = path,
            bytes = torn,
            "the output ended in a torn line (a run stopped mid-write); cut it"
        );
        eprintln!("output {path}: cut a torn last line of {torn} bytes");
    }
    Ok(Box::new(DurableFile(BufWriter::new(file))))
}

/// Cuts an output file back to its last complete line; how many bytes of
/// a torn one it removed.
fn cut_torn_line(path: &str) -> io::Result<u64> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = OpenOptions::new().read(true).write(true).open(path)?;
    let length = file.metadata()?.len();
    let mut end = length;
    let mut chunk = vec![0u8; 64 * 1024];
    // Backwards, a chunk at a time, to the last newline.
    while end > 0 {
        let start = end.saturating_sub(chunk.len() as u64);
        let window = &mut chunk[..(end - start) as usize];
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(window)?;
        if let Some(at) = window.iter().rposition(|&byte| byte == b'\n') {
            end = start + at as u64 + 1;
            break;
        }
        end = start;
    }
    if end < length {
        file.set_len(end)?;
        file.sync_data()?;
    }
    Ok(length - end)
}

/// A buffered file whose `flush` also reaches the disk. The pipeline
/// flushes its sink before the state commit that covers the events, so a
/// crash (or power loss) after the commit cannot lose them.
struct DurableFile(BufWriter<File>);

impl Write for DurableFile {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0.write(bytes)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()?;
        self.0.get_ref().sync_data()
    }
}

/// Where the first record of every embedded stream is remembered.
const STREAMS_FILE: &str = "streams.json";

/// Replays are recognised by stream id and offset, so a stream id must always
/// name the same input: refuses input whose first record (its first 8 KiB at
/// most) differs from the one the stream started with, and remembers the
/// first record of a new stream. Reads nothing out of `reader`.
fn check_stream_start(state_dir: &Path, stream: &str, reader: &mut dyn io::BufRead) -> Result<()> {
    let buffered = reader.fill_buf().context("cannot read the input")?;
    let first = buffered
        .iter()
        .position(|&byte| byte == b'\n')
        .map_or(buffered, |end| &buffered[..end]);
    if first.is_empty() {
        return Ok(());
    }
    let fingerprint = engram::text::sha256_hex(first);
    let path = state_dir.join(STREAMS_FILE);
    let mut known: std::collections::BTreeMap<String, String> = match std::fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .with_context(|| format!("{} is not a JSON map of stream ids", path.display()))?,
        Err(error) if error.kind() == io::ErrorKind::NotFound => Default::default(),
        Err(error) => return Err(error).with_context(|| format!("cannot read {}", path.display())),
    };
    match known.get(stream) {
        Some(seen) if *seen == fingerprint => Ok(()),
        Some(_) => bail!(
            "stream `{stream}` started with another first record: this is different input, and \
             its lines would be skipped as already applied. Give it its own --source-id \
             (input.source_id)"
        ),
        None => {
            known.insert(stream.to_owned(), fingerprint);
            std::fs::create_dir_all(state_dir)
                .with_context(|| format!("cannot create {}", state_dir.display()))?;
            std::fs::write(&path, serde_json::to_vec_pretty(&known)?)
                .with_context(|| format!("cannot write {}", path.display()))
        }
    }
}
