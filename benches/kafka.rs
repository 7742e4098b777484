//! Kafka throughput against one local Apache Kafka broker (KRaft, started
//! from the jars `make models` fetched; tests/common/broker.rs), in one run:
//! (a) raw consume of the access topic by an rdkafka consumer that does
//!     nothing with the messages, twice: with librdkafka's default fetch
//!     settings, and tuned as fast as the same librdkafka goes (large
//!     fetches, a deep prefetch queue, messages taken without waiting while
//!     any are queued); and by Confluent's Python client in batches
//!     (`consume(num_messages=…)`) where `confluent_kafka` is installed;
//! (b) engram applying those access events end to end (decode, state update,
//!     durable flush, offset commit);
//! (c) engram applying memory-created events end to end, embedding included,
//!     next to the raw embedding rate of the same texts, in rounds at the
//!     end, timed from the first record fetched to the last commit;
//! then the CPU time per access event of the tuned raw consumer and of
//! engram, both from assignment, by input format and partition count.
//! Run with `make bench-kafka`.

#[path = "../tests/common/broker.rs"]
mod broker;
mod common;

use std::time::{Duration, Instant};

use broker::{Broker, Engram, OUTPUT_TOPICS, ends};
// The broker helpers find the project cache through the crate root.
use chrono::{DateTime, Utc};
use common::cache;
use engram::embed::{EmbeddingConfig, LocalEmbedder, embed_bucketed};
use engram::event::*;
use engram::model::MemoryKind;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::{ClientConfig, Offset, TopicPartitionList};

const PARTITIONS: i32 = 2;
const USERS: usize = 20;
const MEMORIES: usize = 2_000;
/// Rounds of engram's creations with embedding against the raw model.
const CREATION_ROUNDS: usize = 5;
/// Access events; `ENGRAM_BENCH_ACCESSES` sets another count (producing
/// 300,000 into the local test broker takes a long time).
fn accesses() -> usize {
    std::env::var("ENGRAM_BENCH_ACCESSES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300_000)
}
const WAIT: Duration = Duration::from_secs(1_800);

fn at(seconds: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(1_760_000_000 + seconds, 0).unwrap_or_default()
}

const SUBJECTS: [&str; 10] = [
    "The deploy pipeline",
    "Our staging database",
    "The user's favourite editor",
    "The weekly report",
    "The billing service",
    "The mobile app",
    "The search index",
    "The on-call rota",
    "The design system",
    "The analytics job",
];
const PREDICATES: [&str; 10] = [
    "runs every night at two",
    "was migrated to a new cluster last week",
    "needs a review before Friday",
    "is owned by the platform team",
    "failed twice because of a timeout",
    "uses the blue colour palette",
    "should stay under one second",
    "moved to the new region",
    "is documented in the team wiki",
    "is paused during the holidays",
];

fn text(i: usize) -> String {
    format!(
        "{} {} (note {i}).",
        SUBJECTS[i % SUBJECTS.len()],
        PREDICATES[(i / SUBJECTS.len() + i) % PREDICATES.len()]
    )
}

/// How the bench writes its input events.
#[derive(Clone, Copy, PartialEq)]
enum Format {
    Json,
    Avro,
}

impl Format {
    fn name(self) -> &'static str {
        match self {
            Format::Json => "JSON",
            Format::Avro => "Avro",
        }
    }

    fn encode(self, codec: &EventCodec, event: &Event) -> Vec<u8> {
        match self {
            Format::Json => codec.encode_json(event),
            Format::Avro => codec.encode_avro(event).expect("an event the schema holds"),
        }
    }
}

fn created_events(format: Format) -> Vec<(String, Vec<u8>)> {
    let codec = EventCodec::new(Limits::default()).expect("schemas");
    (0..MEMORIES)
        .map(|i| {
            let user = format!("user-{}", i % USERS);
            let event = Event::MemoryCreated(MemoryCreated {
                event_id: format!("c-{i}"),
                user_id: user.clone(),
                memory_id: format!("m{i}"),
                kind: MemoryKind::Semantic,
                content: text(i),
                created_at: at(i as i64),
                category: None,
                tags: None,
                importance: None,
                source: None,
                embedding: None,
            });
            (user, format.encode(&codec, &event))
        })
        .collect()
}

fn access_events(count: usize, format: Format) -> Vec<(String, Vec<u8>)> {
    let codec = EventCodec::new(Limits::default()).expect("schemas");
    (0..count)
        .map(|i| {
            let memory = (i * 7919) % MEMORIES;
            let user = format!("user-{}", memory % USERS);
            let event = Event::MemoryAccessed(MemoryAccessed {
                event_id: format!("a-{i}").into(),
                user_id: user.clone().into(),
                memory_id: format!("m{memory}").into(),
                accessed_at: at((MEMORIES + i) as i64),
                context: None,
            });
            (user, format.encode(&codec, &event))
        })
        .collect()
}

/// Fetch settings of the tuned raw consumer: whole partitions per fetch
/// and a prefetch queue deep enough that the consumer never waits on it.
/// (A short `fetch.wait.max.ms` makes the local broker answer many more
/// empty fetches and slows it: 13,856 against 18,531/s with the defaults
/// at 12,000 events.)
const TUNED: &[(&str, &str)] = &[
    ("fetch.max.bytes", "104857600"),
    ("max.partition.fetch.bytes", "33554432"),
    ("queued.min.messages", "1000000"),
    ("queued.max.messages.kbytes", "2097151"),
];

/// A consumer's throughput, split at its first message: start-up (group
/// join, metadata, the first fetch) is paid once, the steady rate for every
/// event after it. Python's client is timed from its first batch, so the
/// steady rates are the ones to compare.
#[derive(Clone, Copy)]
struct Rate {
    /// Seconds from assignment to the first message (raw) or the first
    /// commit (engram).
    startup: f64,
    /// Events per second after that.
    steady: f64,
    /// Events per second from assignment, start-up included.
    overall: f64,
    /// Process CPU time (user + system) per event, in microseconds: the
    /// figure that holds from machine to machine. Both consumers' from
    /// assignment (see `raw_consume` and `engram_run`).
    cpu_us: f64,
    /// The part of `cpu_us` spent in the kernel (page faults, locks,
    /// sockets), which instruction counts of user space leave out.
    system_us: f64,
    /// Events per second from the first record fetched to the last commit:
    /// every event's whole path, without the group's start-up (engram's
    /// creation runs: the start from engram's metrics, the end from its
    /// log).
    from_first_record: Option<f64>,
}

impl Rate {
    /// `(cpu, cpu_events)`: the consuming process's CPU time and the
    /// events it was spent on.
    fn new(
        count: usize,
        started: Instant,
        first: Instant,
        before_first: usize,
        (cpu, cpu_events): (common::CpuTime, usize),
    ) -> Self {
        let total = started.elapsed().as_secs_f64();
        let after = first.elapsed().as_secs_f64();
        let events = count.saturating_sub(before_first).max(1) as f64;
        Rate {
            startup: first.duration_since(started).as_secs_f64(),
            steady: events / after.max(1e-6),
            overall: count as f64 / total,
            cpu_us: cpu.total() * 1e6 / cpu_events.max(1) as f64,
            system_us: cpu.system * 1e6 / cpu_events.max(1) as f64,
            from_first_record: None,
        }
    }
}

/// The median of engram's rate against the raw model's over the rounds, and
/// each round's ratio.
fn ratios(rounds: &[(Rate, f64)], rate: impl Fn(&Rate) -> Option<f64>) -> String {
    let listed: Vec<f64> = rounds
        .iter()
        .filter_map(|(engram, raw)| Some(rate(engram)? / raw))
        .collect();
    let mut sorted = listed.clone();
    sorted.sort_by(f64::total_cmp);
    match sorted.get(sorted.len() / 2) {
        Some(median) => {
            let each: Vec<String> = listed.iter().map(|r| format!("{r:.2}")).collect();
            format!("{median:.2} ({})", each.join(", "))
        }
        None => "not measured".to_owned(),
    }
}

/// The sum of a metric's series (every label) on an engram process's
/// metrics endpoint; 0 while it cannot be read.
fn metric_sum(address: &str, name: &str) -> f64 {
    let scrape = ureq::get(format!("http://{address}/metrics"))
        .call()
        .and_then(|mut response| response.body_mut().read_to_string());
    let Ok(scrape) = scrape else {
        return 0.0;
    };
    scrape
        .lines()
        .filter(|line| {
            line.strip_prefix(name)
                .is_some_and(|rest| rest.starts_with(['{', ' ']))
        })
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// The CPU time this process has used, to the microsecond (`getrusage`):
/// the raw consumer's run lasts a fraction of a second, where clock ticks
/// would be too coarse.
fn own_cpu_time() -> common::CpuTime {
    // SAFETY: an all-zero `rusage` is a valid value for getrusage to fill.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid, writable rusage.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return common::CpuTime::default();
    }
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    common::CpuTime {
        user: seconds(usage.ru_utime),
        system: seconds(usage.ru_stime),
    }
}

/// (a): messages/s of a consumer that only receives, with extra settings.
fn raw_consume(
    broker: &Broker,
    topic: &str,
    partitions: i32,
    count: usize,
    settings: &[(&str, &str)],
) -> Rate {
    let mut config = ClientConfig::new();
    config
        .set("bootstrap.servers", &broker.address)
        .set("group.id", "bench-raw")
        .set("enable.auto.commit", "false");
    for (key, value) in settings {
        config.set(*key, *value);
    }
    let consumer: BaseConsumer = config.create().expect("consumer");
    let mut list = TopicPartitionList::new();
    for partition in 0..partitions {
        list.add_partition_offset(topic, partition, Offset::Beginning)
            .expect("partition");
    }
    let started = Instant::now();
    let cpu_at_assigned = own_cpu_time();
    consumer.assign(&list).expect("assign");
    let mut seen = 0;
    let mut first = None;
    while seen < count {
        // Queued messages come back without a wait; only an empty queue blocks.
        if let Some(Ok(_)) = consumer.poll(Duration::from_millis(100)) {
            first.get_or_insert_with(Instant::now);
            seen += 1;
            while seen < count {
                match consumer.poll(Duration::ZERO) {
                    Some(Ok(_)) => seen += 1,
                    _ => break,
                }
            }
        }
        assert!(started.elapsed() < WAIT, "raw consumer stalled at {seen}");
    }
    // CPU from assignment, as engram's: the first fetch brings a large
    // share of the events (up to 32 MiB a partition), and the client reads
    // and parses all of it before the first message comes out of `poll`.
    let cpu = own_cpu_time().since(cpu_at_assigned);
    Rate::new(count, started, first.unwrap_or(started), 1, (cpu, count))
}

/// Messages/s of Confluent's Python client consuming `topic` in batches,
/// timed from its first batch, if the interpreter has `confluent_kafka`:
/// `ENGRAM_BENCH_PYTHON`, else the cache's `bench-venv` (`make bench-kafka`
/// installs it), else `python3`.
fn python_consume(broker: &Broker, topic: &str, count: usize) -> Option<f64> {
    const SCRIPT: &str = r#"
import sys, time
from confluent_kafka import Consumer
address, topic, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
consumer = Consumer({"bootstrap.servers": address, "group.id": "bench-python",
    "auto.offset.reset": "earliest", "enable.auto.commit": False,
    "fetch.max.bytes": 104857600, "max.partition.fetch.bytes": 33554432,
    "queued.min.messages": 1000000})
consumer.subscribe([topic])
seen, started, first = 0, None, 0
while seen < count:
    batch = consumer.consume(num_messages=10000, timeout=1.0)
    if batch and started is None:
        started, first = time.perf_counter(), len(batch)
    seen += len(batch)
print((count - first) / (time.perf_counter() - started))
"#;
    let venv = cache().join("bench-venv/bin/python");
    let python = std::env::var_os("ENGRAM_BENCH_PYTHON").unwrap_or_else(|| {
        if venv.exists() {
            venv.into_os_string()
        } else {
            "python3".into()
        }
    });
    let output = std::process::Command::new(python)
        .args(["-c", SCRIPT, &broker.address, topic, &count.to_string()])
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    String::from_utf8_lossy(&output.stdout).trim().parse().ok()
}

/// Events/s of an engram run over `count` events of `topic`, from the
/// moment partitions are assigned (and from its first commit) until every
/// offset is committed.
#[allow(clippy::too_many_arguments)]
fn engram_run(
    broker: &Broker,
    state: &std::path::Path,
    name: &str,
    topics: &Topics,
    topic: &str,
    ends: Vec<i64>,
    count: usize,
    embedding: bool,
) -> Rate {
    let log = state.with_extension(format!("{name}.log"));
    let group = format!("bench-{}", topics.prefix);
    let settings = [
        ("ENGRAM_KAFKA_GROUP_ID", group.as_str()),
        ("ENGRAM_KAFKA_TOPIC_MEMORY_CREATED", &topics.created),
        ("ENGRAM_KAFKA_TOPIC_MEMORY_ACCESSED", &topics.accessed),
        (
            "ENGRAM_KAFKA_TOPIC_CONSOLIDATION_REQUESTED",
            &topics.requested,
        ),
        ("ENGRAM_KAFKA_OUTPUT_FORMAT", "json"),
        ("ENGRAM_KAFKA_COMMIT_INTERVAL", "100ms"),
        (
            "ENGRAM_LOG_LEVEL",
            // A creation run reads the time of engram's last offset commit
            // from its log ("offsets committed" is a debug line).
            if embedding {
                "warn,engram::kafka::consume=debug,engram::http=info"
            } else {
                "warn,engram::kafka::consume=info,engram::http=info"
            },
        ),
        ("ENGRAM_HTTP_BIND", "127.0.0.1:0"),
        ("ENGRAM_CONSOLIDATION_TRIGGER_NEW_MEMORIES", "0"),
        ("ENGRAM_CONSOLIDATION_SCHEDULE_INTERVAL", "0s"),
        (
            "ENGRAM_EMBEDDING_ENABLED",
            if embedding { "true" } else { "false" },
        ),
    ];
    let engram = Engram::start(broker, state, log, &settings);
    let pid = engram.pid().to_string();
    // Only creation runs scrape the metrics: an access run's CPU is the
    // figure measured, and a scrape would add to it.
    let metrics = embedding.then(|| engram.http_address(WAIT));
    engram.wait_assigned(WAIT);
    let started = Instant::now();
    // CPU is counted from assignment over every event: from the first
    // commit on, it would leave out what the batches still open then had
    // spent (a large part of the run with 8 partitions of 5,000-event
    // flushes), and the idle wait before the first fetch costs next to none.
    let cpu_at_assigned = common::cpu_time(&pid);
    let mut first = None;
    let mut first_record = None;
    let broker_pid = broker.pid().to_string();
    let mut broker_at_first = common::CpuTime::default();
    loop {
        if let Some(address) = metrics.as_deref()
            && first_record.is_none()
            // Counted as records are taken from the client.
            && metric_sum(address, "engram_events_consumed_total") > 0.0
        {
            first_record = Some(Utc::now());
            broker_at_first = common::cpu_time(&broker_pid);
        }
        let committed = broker.committed(&group, topic, topics.partitions);
        let done: i64 = committed.iter().map(|c| (*c).max(0)).sum();
        if done > 0 && first.is_none() {
            first = Some((Instant::now(), usize::try_from(done).unwrap_or(0)));
        }
        if committed.iter().zip(&ends).all(|(have, want)| have >= want) {
            break;
        }
        assert!(
            started.elapsed() < WAIT,
            "engram stalled at {committed:?} of {ends:?}"
        );
        // Each look is a request the broker answers on the cores the model
        // needs: every 20 ms, it took 0.3-0.4 s of the broker's CPU a
        // creation round, which the raw model never shares. Once the first
        // record is in, a creation run takes its end from engram's log, so
        // it may look seldom.
        let seldom = embedding && first_record.is_some();
        std::thread::sleep(Duration::from_millis(if seldom { 200 } else { 20 }));
    }
    let cpu = common::cpu_time(&pid).since(cpu_at_assigned);
    let (first, before_first) = first.unwrap_or((started, 0));
    let mut rate = Rate::new(count, started, first, before_first, (cpu, count));
    if let (Some(at), Some(address)) = (first_record, metrics.as_deref()) {
        let last_commit = last_offset_commit(&engram).expect("engram logged its offset commits");
        let seconds = (last_commit - at).as_seconds_f64().max(1e-6);
        rate.from_first_record = Some(count as f64 / seconds);
        let model = metric_sum(address, "engram_embedding_batch_seconds_sum");
        let broker_cpu = common::cpu_time(&broker_pid).since(broker_at_first).total();
        let engram_cpu = common::cpu_time(&pid).total();
        println!(
            "  {name} ({topic}): {seconds:.2} s from the first record to the last commit, \
             {model:.2} s of it in the model's calls; the broker's CPU meanwhile \
             {broker_cpu:.2} s, engram's whole run {engram_cpu:.2} s"
        );
    }
    engram.stop();
    rate
}

/// When engram last committed offsets: the time of its last "offsets
/// committed" log line (sent asynchronously; the broker's reply follows on
/// loopback).
fn last_offset_commit(engram: &Engram) -> Option<DateTime<Utc>> {
    engram
        .last_logged("offsets committed")
        .and_then(|line| line["timestamp"].as_str()?.parse().ok())
}

/// One set of input topics, co-partitioned, under a prefix of their own.
struct Topics {
    prefix: String,
    partitions: i32,
    created: String,
    accessed: String,
    requested: String,
}

impl Topics {
    fn create(broker: &Broker, prefix: &str, partitions: i32) -> Topics {
        let name = |topic: &str| {
            if prefix.is_empty() {
                topic.to_owned()
            } else {
                format!("{prefix}.{topic}")
            }
        };
        let topics = Topics {
            prefix: if prefix.is_empty() { "default" } else { prefix }.to_owned(),
            partitions,
            created: name("memory.created"),
            accessed: name("memory.accessed"),
            requested: name("consolidation.requested"),
        };
        broker.create_topics(
            &[&topics.created, &topics.accessed, &topics.requested],
            partitions,
        );
        topics
    }
}

/// The CPU-per-event runs: every partition count for JSON, so the rate and
/// the CPU per event can be read against the partition count; Avro at the
/// two counts the issue's table names.
const SWEEP: [(Format, i32); 6] = [
    (Format::Json, 1),
    (Format::Json, 2),
    (Format::Json, 4),
    (Format::Json, 8),
    (Format::Avro, 2),
    (Format::Avro, 8),
];

/// CPU per access event: the tuned raw consumer and engram on the same
/// events, for one input format and partition count. The memories are
/// created first (without embedding: only the reads are measured).
fn cpu_per_event(
    broker: &Broker,
    dir: &std::path::Path,
    format: Format,
    partitions: i32,
    count: usize,
) -> (Rate, Rate) {
    let prefix = format!("{}-p{partitions}", format.name().to_lowercase());
    let topics = Topics::create(broker, &prefix, partitions);
    let state = dir.join(&prefix);
    let created = broker.produce(&topics.created, &created_events(format));
    engram_run(
        broker,
        &state,
        "created",
        &topics,
        &topics.created,
        ends(&created, partitions),
        MEMORIES,
        false,
    );
    let accessed = broker.produce(&topics.accessed, &access_events(count, format));
    let raw = raw_consume(broker, &topics.accessed, partitions, count, TUNED);
    let engram = engram_run(
        broker,
        &state,
        "accessed",
        &topics,
        &topics.accessed,
        ends(&accessed, partitions),
        count,
        false,
    );
    (raw, engram)
}

/// Texts/s of the model alone, in the batcher's length-bucketed calls.
fn raw_embedding(texts: &[String]) -> f64 {
    let config = EmbeddingConfig {
        model_dir: cache().join("models/all-MiniLM-L6-v2"),
        runtime_library: cache().join("onnxruntime/libonnxruntime.so"),
        ..EmbeddingConfig::default()
    };
    let model = LocalEmbedder::load(&config).expect("model (run `make models`)");
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let started = Instant::now();
    for chunk in refs.chunks(config.max_batch) {
        embed_bucketed(&model, chunk, config.sub_batch()).expect("embed");
    }
    let seconds = started.elapsed().as_secs_f64();
    println!("  the raw model: {seconds:.2} s for {} texts", texts.len());
    texts.len() as f64 / seconds
}

fn main() {
    if !common::started_by_cargo_bench() {
        return;
    }
    // Client warnings (librdkafka logs through `tracing`) go to stderr.
    tracing_subscriber::fmt()
        .with_env_filter("warn")
        .with_writer(std::io::stderr)
        .init();
    let broker = Broker::start();
    let topics = Topics::create(&broker, "", PARTITIONS);
    broker.create_topics(&OUTPUT_TOPICS, PARTITIONS);
    let dir = tempfile::tempdir().expect("temp dir");
    let state = dir.path().join("state");
    let accesses_count = accesses();

    println!(
        "producing {MEMORIES} memory.created and {accesses_count} memory.accessed events ({PARTITIONS} partitions)"
    );
    let created = created_events(Format::Json);
    let created_positions = broker.produce(&topics.created, &created);
    // The reads' memories, without embedding: creations are timed at the
    // end (below), once the broker has warmed up.
    engram_run(
        &broker,
        &state,
        "created",
        &topics,
        &topics.created,
        ends(&created_positions, PARTITIONS),
        MEMORIES,
        false,
    );

    let accesses = access_events(accesses_count, Format::Json);
    let access_positions = broker.produce(&topics.accessed, &accesses);
    println!("consuming them raw, then with engram");
    let a_default = raw_consume(&broker, &topics.accessed, PARTITIONS, accesses_count, &[]);
    let a = raw_consume(&broker, &topics.accessed, PARTITIONS, accesses_count, TUNED);
    let python = python_consume(&broker, &topics.accessed, accesses_count);
    let b = engram_run(
        &broker,
        &state,
        "accessed",
        &topics,
        &topics.accessed,
        ends(&access_positions, PARTITIONS),
        accesses_count,
        false,
    );

    println!("CPU per access event: JSON at 1, 2, 4 and 8 partitions, Avro at 2 and 8");
    let mut costs = Vec::new();
    for (format, partitions) in SWEEP {
        let (raw, engram) = cpu_per_event(&broker, dir.path(), format, partitions, accesses_count);
        costs.push((format, partitions, raw, engram));
    }

    // (c) after everything else: in a run just after the broker started,
    // its JVM used 1.16 s of CPU beside engram's embedding (0.28 s once
    // warm), and the two cores are all the model has. One run still swings
    // with whatever else the cores do: rounds, each engram's run on topics
    // of its own, then the raw model.
    println!("memory.created with embedding against the raw model, {CREATION_ROUNDS} rounds");
    let texts: Vec<String> = (0..MEMORIES).map(text).collect();
    let mut creation_rounds = Vec::new();
    for round in 1..=CREATION_ROUNDS {
        let prefix = format!("created{round}");
        let topics = Topics::create(&broker, &prefix, PARTITIONS);
        let positions = broker.produce(&topics.created, &created);
        let rate = engram_run(
            &broker,
            &dir.path().join(&prefix),
            "created",
            &topics,
            &topics.created,
            ends(&positions, PARTITIONS),
            MEMORIES,
            true,
        );
        creation_rounds.push((rate, raw_embedding(&texts)));
    }

    println!();
    println!("| measurement | start-up s | events/s after it | events/s overall |");
    println!("|---|---|---|---|");
    let row = |what: &str, rate: Rate| {
        println!(
            "| {what} | {:.2} | {:.0} | {:.0} |",
            rate.startup, rate.steady, rate.overall
        );
    };
    row(
        &format!("(a) raw consume, memory.accessed ({accesses_count}), librdkafka defaults"),
        a_default,
    );
    row(
        &format!("(a) raw consume, memory.accessed ({accesses_count}), tuned fetch"),
        a,
    );
    match python {
        Some(rate) => {
            println!("| (a) Python confluent_kafka, consume() batches | | {rate:.0} | |")
        }
        None => println!("| (a) Python confluent_kafka | not installed | | |"),
    }
    row(
        &format!("(b) engram, memory.accessed end to end ({accesses_count})"),
        b,
    );
    if let Some(&(c, embed)) = creation_rounds.first() {
        row(
            &format!("(c) engram, memory.created end to end with embedding ({MEMORIES}), round 1"),
            c,
        );
        println!("| raw embedding, same texts, round 1 | | {embed:.0} | |");
    }
    println!();
    println!(
        "b/a after start-up = {:.3} against the tuned raw consumer (target >= 0.2), {:.3} \
         against the defaults{}",
        b.steady / a.steady,
        b.steady / a_default.steady,
        python
            .map(|p| format!(", {:.3} against Python's client", b.steady / p))
            .unwrap_or_default()
    );
    // After the first commit, a run times mostly one partition's batch, and
    // the batcher has already embedded some of its texts beside the other
    // partition's; from the first record, every text's whole path counts.
    let after_first_commit = ratios(&creation_rounds, |rate| Some(rate.steady));
    let from_first_record = ratios(&creation_rounds, |rate| rate.from_first_record);
    println!(
        "c/raw embedding (target >= 0.95), median of {CREATION_ROUNDS} rounds: {} from the first \
         record fetched to the last commit, {} after the first commit",
        from_first_record, after_first_commit
    );
    println!();
    println!(
        "| input | partitions | raw msg/s | raw CPU-µs/msg (system) | engram events/s (from assignment) | engram CPU-µs/event (system) | CPU ratio (target <= 3) |"
    );
    println!("|---|---|---|---|---|---|---|");
    for &(format, partitions, raw, engram) in &costs {
        println!(
            "| {} | {partitions} | {:.0} | {:.2} ({:.2}) | {:.0} ({:.0}) | {:.2} ({:.2}) | {:.1}x |",
            format.name(),
            raw.steady,
            raw.cpu_us,
            raw.system_us,
            engram.steady,
            engram.overall,
            engram.cpu_us,
            engram.system_us,
            engram.cpu_us / raw.cpu_us.max(1e-9)
        );
    }
    let json_at = |wanted: i32| {
        costs
            .iter()
            .find(|(format, partitions, ..)| *format == Format::Json && *partitions == wanted)
            .map(|&(.., engram)| engram)
    };
    if let (Some(one), Some(eight)) = (json_at(1), json_at(8)) {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        println!();
        println!(
            "JSON, 8 partitions against 1 on {cores} cores: events/s from assignment {:.2}x \
             (target >= 3.5 on a machine with cores for the broker, the client and 8 workers; \
             after the first commit the rate leaves out what open batches had done, more of \
             it with 8); CPU per event {:.2}x (target: not above 1 beyond the run-to-run spread)",
            eight.overall / one.overall.max(1e-9),
            eight.cpu_us / one.cpu_us.max(1e-9)
        );
    }
}
