//! Soak: sustained mixed load on one engram service against a local Apache
//! Kafka broker (tests/common/broker.rs) for `SOAK_SECONDS` (default 600) at
//! `SOAK_RATE` events/s (default 1,000): 10 % memory creations (with platform embeddings, so cycles
//! merge), 89 % reads, 1 % consolidation requests, and threshold and
//! scheduled cycles all along. Memory ids come from a pool of
//! `MEMORY_POOL`, so once it is used up a creation is an upsert and the data
//! stops growing: growth after that is the process's, not the data's. Every `SOAK_SAMPLE_SECONDS` (default 30) it prints
//! events/s applied, lag, RSS (anonymous: heap and caches; file: the
//! store's memory-mapped pages, which grow with the data and the kernel can
//! reclaim) and open files. At the end it fails if anonymous RSS grew by
//! more than `MAX_RSS_GROWTH_MIB` or open files by more than `MAX_FD_GROWTH`
//! between the end of the warm-up and the end, or if any event was not
//! applied. The vector cache is capped low so that it fills during warm-up.
//! Run with `make soak`.

#[path = "../tests/common/broker.rs"]
mod broker;
mod common;

use std::process::ExitCode;
use std::time::{Duration, Instant};

use broker::{Broker, Engram, OUTPUT_TOPICS, runtime, send_all};
// The broker helpers find the project cache through the crate root.
use chrono::DateTime;
use common::cache;
use engram::event::*;
use engram::model::MemoryKind;

const INPUT: &str = "engram.input";
const PARTITIONS: i32 = 4;
const USERS: u64 = 200;
const MEMORY_POOL: u64 = 20_000;
/// Stated bounds (docs/faults-and-limits.md, "Soak").
const MAX_RSS_GROWTH_MIB: f64 = 64.0;
const MAX_FD_GROWTH: i64 = 8;
const WARM_UP: Duration = Duration::from_secs(120);

fn setting(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A deterministic unit vector near one of 12 topics.
fn vector(topic: u64, jitter: u64) -> Vec<f32> {
    let mut v: Vec<f32> = (0..384u64)
        .map(|i| {
            let base = ((i * 7 + topic * 13) % 17) as f32 - 8.0;
            let noise = (((i + 1) * (jitter + 3) * 2_654_435_761) % 1000) as f32 / 1000.0 - 0.5;
            base + noise * 2.0
        })
        .collect();
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter_mut().for_each(|x| *x /= norm);
    v
}

/// The load generator: the `n`-th event of the run.
struct Load {
    codec: EventCodec,
    created: u64,
    sent: u64,
    started_at: i64,
}

impl Load {
    fn event(&mut self, seconds: i64) -> (String, Vec<u8>) {
        let n = self.sent;
        self.sent += 1;
        let at = DateTime::from_timestamp(self.started_at + seconds, 0).unwrap_or_default();
        let event = match n % 100 {
            0 if self.created > 0 => Event::ConsolidationRequested(ConsolidationRequested {
                event_id: format!("r{n}"),
                user_id: format!("u{}", n % USERS),
                requested_at: at,
                execute: Some(true),
                reason: Some("soak".to_owned()),
            }),
            0..10 => {
                let variant = self.created;
                let m = variant % MEMORY_POOL;
                self.created += 1;
                let topic = m % 12;
                Event::MemoryCreated(MemoryCreated {
                    event_id: format!("c{variant}"),
                    user_id: format!("u{}", m % USERS),
                    memory_id: format!("m{m}"),
                    kind: if m.is_multiple_of(3) {
                        MemoryKind::Episodic
                    } else {
                        MemoryKind::Semantic
                    },
                    content: format!("Topic {topic} fact, variant {variant}."),
                    created_at: at,
                    category: None,
                    tags: None,
                    importance: None,
                    source: None,
                    embedding: Some(vector(topic, variant)),
                })
            }
            _ => {
                // A memory created earlier, of the same user as its id says.
                let m = (n * 7919) % self.created.clamp(1, MEMORY_POOL);
                Event::MemoryAccessed(MemoryAccessed {
                    event_id: format!("a{n}").into(),
                    user_id: format!("u{}", m % USERS).into(),
                    memory_id: format!("m{m}").into(),
                    accessed_at: at,
                    context: None,
                })
            }
        };
        let key = event.user_id().unwrap_or_default().to_owned();
        (key, self.codec.encode_json(&event))
    }
}

/// Anonymous and file-backed RSS in MiB, and open file descriptors, of `pid`.
fn resources(pid: u32) -> (f64, f64, i64) {
    let process = pid.to_string();
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count() as i64);
    (
        common::status_mib(&process, "RssAnon:"),
        common::status_mib(&process, "RssFile:"),
        fds,
    )
}

fn main() -> ExitCode {
    if !common::started_by_cargo_bench() {
        return ExitCode::SUCCESS;
    }
    tracing_subscriber::fmt()
        .with_env_filter("warn")
        .with_writer(std::io::stderr)
        .init();
    let seconds = setting("SOAK_SECONDS", 600);
    let rate = setting("SOAK_RATE", 1_000);
    let sample = Duration::from_secs(setting("SOAK_SAMPLE_SECONDS", 30));
    let broker = Broker::start();
    broker.create_topics(&[INPUT], PARTITIONS);
    broker.create_topics(&OUTPUT_TOPICS, PARTITIONS);
    let dir = tempfile::tempdir().expect("temp dir");
    let settings = [
        ("ENGRAM_KAFKA_GROUP_ID", "soak"),
        ("ENGRAM_KAFKA_TOPIC_MEMORY_CREATED", INPUT),
        ("ENGRAM_KAFKA_TOPIC_MEMORY_ACCESSED", INPUT),
        ("ENGRAM_KAFKA_TOPIC_CONSOLIDATION_REQUESTED", INPUT),
        ("ENGRAM_KAFKA_OUTPUT_FORMAT", "json"),
        ("ENGRAM_EMBEDDING_ENABLED", "false"),
        ("ENGRAM_LOG_LEVEL", "warn,engram::kafka::consume=info"),
        ("ENGRAM_CONSOLIDATION_SCHEDULE_INTERVAL", "1m"),
        ("ENGRAM_INDEX_MAX_CACHED_VECTORS", "2000"),
    ];
    let engram = Engram::start(
        &broker,
        &dir.path().join("state"),
        dir.path().join("soak.log"),
        &settings,
    );
    engram.wait_assigned(Duration::from_secs(120));
    println!("soak: {seconds} s at {rate} events/s, {PARTITIONS} partitions, {USERS} users");
    println!();
    println!(
        "| t (s) | produced | applied | events/s | lag | RSS anon (MiB) | RSS file (MiB) | open files |"
    );
    println!("|---|---|---|---|---|---|---|---|");

    let runtime = runtime();
    let producer = broker.producer();
    let mut load = Load {
        codec: EventCodec::new(Limits::default()).expect("schemas"),
        created: 0,
        sent: 0,
        started_at: 1_760_000_000,
    };
    let started = Instant::now();
    let committed = || -> i64 {
        broker
            .committed("soak", INPUT, PARTITIONS)
            .iter()
            .map(|&c| c.max(0))
            .sum()
    };
    let mut last = (Instant::now(), 0i64);
    let mut warm: Option<(f64, i64)> = None;
    let mut report = |produced: u64, final_row: bool| {
        let (rss, file, fds) = resources(engram.pid());
        let applied = committed();
        let now = Instant::now();
        let per_second = (applied - last.1) as f64 / now.duration_since(last.0).as_secs_f64();
        last = (now, applied);
        println!(
            "| {:.0}{} | {produced} | {applied} | {per_second:.0} | {} | {rss:.1} | {file:.1} | {fds} |",
            started.elapsed().as_secs_f64(),
            if final_row { " (drained)" } else { "" },
            produced as i64 - applied,
        );
        if warm.is_none() && started.elapsed() >= WARM_UP {
            warm = Some((rss, fds));
        }
        (rss, fds)
    };
    let mut next_sample = started + sample;
    // Bounded by time and by count: a broker that slows down shortens the
    // run's volume, never its length.
    for second in 0..seconds {
        if started.elapsed() >= Duration::from_secs(seconds) {
            break;
        }
        let tick = started + Duration::from_secs(second);
        let batch: Vec<(String, Vec<u8>)> = (0..rate).map(|_| load.event(second as i64)).collect();
        runtime.block_on(send_all(&producer, INPUT, &batch));
        if Instant::now() >= next_sample {
            report(load.sent, false);
            next_sample += sample;
        }
        if let Some(rest) = (tick + Duration::from_secs(1)).checked_duration_since(Instant::now()) {
            std::thread::sleep(rest);
        }
    }
    let deadline = Instant::now() + Duration::from_secs(300);
    while committed() < load.sent as i64 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(500));
    }
    let (rss, fds) = report(load.sent, true);
    let drained = committed() == load.sent as i64;
    let (warm_rss, warm_fds) = warm.unwrap_or((rss, fds));
    println!();
    println!(
        "anonymous RSS {warm_rss:.1} MiB after warm-up -> {rss:.1} MiB at the end (bound +{MAX_RSS_GROWTH_MIB} MiB); \
         open files {warm_fds} -> {fds} (bound +{MAX_FD_GROWTH}); every event applied: {drained}"
    );
    engram.stop();
    let ok = drained && rss - warm_rss <= MAX_RSS_GROWTH_MIB && fds - warm_fds <= MAX_FD_GROWTH;
    // Returned, not `exit`ed, so the broker is stopped on the way out.
    if ok {
        println!("soak passed");
        ExitCode::SUCCESS
    } else {
        println!("soak FAILED");
        ExitCode::FAILURE
    }
}
