//! The Kafka stream processor against Apache Kafka (one KRaft node per test,
//! tests/common/broker.rs) on 127.0.0.1, with engram running as child
//! processes.

#[path = "common/broker.rs"]
mod broker;
mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use broker::{Broker, Engram, OUTPUT_TOPICS, ends, poll_until};
use common::*;
use engram::event::*;
use engram::store::{EmbeddedStore, Store, Write, WriteBatch, dump};

const WAIT: Duration = Duration::from_secs(120);

fn codec() -> EventCodec {
    EventCodec::new(Limits::default()).unwrap()
}

fn encode(event: &Event, format: WireFormat) -> Vec<u8> {
    match format {
        WireFormat::Json => codec().encode_json(event),
        WireFormat::Avro => codec().encode_avro(event).unwrap(),
    }
}

fn keyed(events: &[Event], format: WireFormat) -> Vec<(String, Vec<u8>)> {
    events
        .iter()
        .map(|e| (e.user_id().unwrap().to_owned(), encode(e, format)))
        .collect()
}

fn decode_output(bytes: &[u8], format: WireFormat) -> Event {
    match format {
        WireFormat::Json => codec().decode_any_json(bytes).unwrap(),
        WireFormat::Avro => codec().decode_any_avro(bytes).unwrap(),
    }
}

fn targets(entries: &[(&str, Vec<i64>)]) -> BTreeMap<String, Vec<i64>> {
    entries
        .iter()
        .map(|(topic, ends)| ((*topic).to_owned(), ends.clone()))
        .collect()
}

/// Every output event on `topic` (waits until `count` arrived).
fn outputs(
    broker: &Broker,
    topic: &str,
    count: usize,
    format: WireFormat,
) -> Vec<(Option<String>, Event)> {
    broker
        .read_all(topic, 2, count, Duration::from_secs(30))
        .into_iter()
        .map(|m| (m.key, decode_output(&m.payload, format)))
        .collect()
}

/// The first dead letter on `engram.dlq` (JSON output).
fn first_dead_letter(broker: &Broker) -> DeadLetter {
    let letters = outputs(broker, "engram.dlq", 1, WireFormat::Json);
    match letters.into_iter().next() {
        Some((_, Event::DeadLetter(letter))) => letter,
        other => panic!("no dead letter: {other:?}"),
    }
}

/// A broker, and engram on it with `settings`, creating the default topics
/// (2 partitions each); returns once engram holds partitions.
fn engram_creating_topics(settings: &[(&str, &str)]) -> (Broker, tempfile::TempDir, Engram) {
    let broker = Broker::start();
    let dir = tempfile::tempdir().unwrap();
    let mut all = vec![
        ("ENGRAM_KAFKA_CREATE_TOPICS", "true"),
        ("ENGRAM_KAFKA_TOPIC_PARTITIONS", "2"),
    ];
    all.extend_from_slice(settings);
    let engram = Engram::start(
        &broker,
        &dir.path().join("state"),
        dir.path().join("engram.log"),
        &all,
    );
    engram.wait_assigned(WAIT);
    (broker, dir, engram)
}

/// engram on `broker` with state in `dir`, creating what topics are missing
/// with one partition, JSON output and no embedding, plus `extra`.
fn engram_on_one_partition(
    broker: &Broker,
    dir: &std::path::Path,
    extra: &[(&str, &str)],
) -> Engram {
    let mut settings = vec![
        ("ENGRAM_KAFKA_CREATE_TOPICS", "true"),
        ("ENGRAM_KAFKA_TOPIC_PARTITIONS", "1"),
        ("ENGRAM_KAFKA_OUTPUT_FORMAT", "json"),
        ("ENGRAM_EMBEDDING_ENABLED", "false"),
    ];
    settings.extend_from_slice(extra);
    Engram::start(
        broker,
        &dir.join("state"),
        dir.join("engram.log"),
        &settings,
    )
}

/// `(status, body)` of a request.
fn request(agent: &ureq::Agent, method: &str, url: &str) -> (u16, String) {
    let response = match method {
        "GET" => agent.get(url).call(),
        _ => agent.post(url).send_empty(),
    };
    let mut response = response.unwrap_or_else(|e| panic!("{method} {url}: {e}"));
    let status = response.status().as_u16();
    (status, response.body_mut().read_to_string().unwrap())
}

/// The value of a metric line (`name{labels} value`) in a scrape.
fn metric(scrape: &str, series: &str) -> Option<f64> {
    scrape
        .lines()
        .find_map(|line| line.strip_prefix(series)?.trim().parse().ok())
}

#[test]
fn a_test_broker_gets_distinct_ports_it_was_not_given() {
    // Kafka refuses two listeners on one port; a CI run once got the
    // controller's port for the plaintext listener too.
    let taken = [broker::free_port()];
    let ports: [u16; 64] = broker::free_ports_except(&taken);
    let distinct: std::collections::BTreeSet<u16> = ports.iter().copied().collect();
    assert_eq!(distinct.len(), ports.len());
    assert!(!distinct.contains(&taken[0]));
}

#[test]
fn a_test_process_never_hands_out_one_port_twice() {
    // A chosen port is free until the broker's JVM binds it; handed out
    // again meanwhile, two tests' brokers would share it.
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..2_000 {
        let port = broker::free_port();
        assert!(seen.insert(port), "port {port} handed out twice");
    }
}

#[test]
fn the_http_endpoint_serves_probes_metrics_and_consolidation() {
    let (broker, _dir, engram) = engram_creating_topics(&[
        ("ENGRAM_CONSOLIDATION_TRIGGER_NEW_MEMORIES", "1000"),
        ("ENGRAM_CONSOLIDATION_SCHEDULE_INTERVAL", "0s"),
    ]);
    let base = format!("http://{}", engram.http_address(WAIT));
    let agent = http();
    assert_eq!(
        request(&agent, "GET", &format!("{base}/healthz")),
        (200, "ok\n".into())
    );
    // Ready once librdkafka reports a broker up (statistics every 5 s).
    let ready = poll_until(WAIT, Duration::from_millis(200), || {
        let (status, body) = request(&agent, "GET", &format!("{base}/readyz"));
        (status == 200).then_some(body.clone()).ok_or(body)
    });
    assert!(ready.contains("\"ready\":true"), "{ready}");

    let texts = [
        ("pg", "Project uses PostgreSQL"),
        ("my", "Project uses MySQL"),
        ("rest", "API uses REST"),
        ("restful", "The API is RESTful"),
    ];
    let created: Vec<Event> = texts
        .iter()
        .enumerate()
        .map(|(i, (id, text))| Event::MemoryCreated(created("ada", id, text, i as i64)))
        .collect();
    let positions = broker.produce("memory.created", &keyed(&created, WireFormat::Json));
    broker.wait_committed(
        "engram",
        &targets(&[("memory.created", ends(&positions, 2))]),
        WAIT,
    );
    let scrape = request(&agent, "GET", &format!("{base}/metrics")).1;
    let value = |series: &str| {
        metric(&scrape, series).unwrap_or_else(|| panic!("no {series} in\n{scrape}"))
    };
    assert_eq!(
        value("engram_events_consumed_total{topic=\"memory.created\"}"),
        4.0
    );
    assert_eq!(
        value("engram_events_applied_total{type=\"memory.created\"}"),
        4.0
    );
    assert_eq!(value("engram_partitions_assigned"), 2.0);
    assert!(value("engram_store_commit_seconds_count") >= 1.0);
    assert_eq!(
        value("engram_embedding_batch_texts_sum"),
        4.0,
        "each text embedded once"
    );
    // Lag comes with the next statistics: zero once everything is durable.
    poll_until(WAIT, Duration::from_millis(500), || {
        let scrape = request(&agent, "GET", &format!("{base}/metrics")).1;
        scrape
            .lines()
            .any(|l| {
                l.starts_with("engram_consumer_lag{partition=") && l.contains("memory.created")
            })
            .then_some(())
            .ok_or(scrape)
    });

    // A dry run, then an execute: both through the stream, both reported.
    let (status, body) = request(&agent, "POST", &format!("{base}/users/ada/consolidate"));
    assert_eq!(status, 200, "{body}");
    let dry: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(dry["mode"], "dry_run");
    assert_eq!(dry["user_id"], "ada");
    let (status, body) = request(
        &agent,
        "POST",
        &format!("{base}/users/ada/consolidate?execute=true"),
    );
    assert_eq!(status, 200, "{body}");
    let executed: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(executed["mode"], "execute");
    let (status, body) = request(&agent, "GET", &format!("{base}/users/ada/report/latest"));
    assert_eq!(status, 200, "{body}");
    let latest: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(latest["run_id"], executed["run_id"]);
    // The report is stored before the run's events go out, and the run's
    // metrics are counted from those events as they go out: wait for them.
    let scrape = poll_until(WAIT, Duration::from_millis(100), || {
        let scrape = request(&agent, "GET", &format!("{base}/metrics")).1;
        let counted = metric(
            &scrape,
            "engram_cycle_duration_seconds_count{mode=\"execute\"}",
        )
        .is_some();
        if counted { Ok(scrape) } else { Err(scrape) }
    });
    assert_eq!(
        metric(
            &scrape,
            "engram_cycle_duration_seconds_count{mode=\"execute\"}"
        ),
        Some(1.0)
    );
    assert_eq!(
        metric(
            &scrape,
            "engram_consolidation_actions_total{action=\"contradiction\"}"
        ),
        executed["counts"]["contradictions_found"].as_f64()
    );

    assert_eq!(
        request(&agent, "GET", &format!("{base}/users/nobody/report/latest")).0,
        404
    );
    assert_eq!(
        request(
            &agent,
            "POST",
            &format!("{base}/users/ada/consolidate?execute=maybe")
        )
        .0,
        400
    );
    // A user engram has never seen: nothing to run, no row to create.
    let (status, body) = request(&agent, "POST", &format!("{base}/users/nobody/consolidate"));
    assert_eq!(status, 404, "{body}");

    // A platform whose producers use librdkafka's CRC32 partitioner puts
    // some users on another partition than engram's murmur2 would. A
    // request engram sends itself goes where the user's events are.
    let crc32 = [("partitioner", "consistent_random")];
    let murmur2 = [("partitioner", "murmur2_random")];
    broker.create_topics(&["partitioner-probe"], 2);
    let probe = |user: &str, settings: &[(&str, &str)]| {
        broker.produce_with(
            "partitioner-probe",
            &[(user.to_owned(), vec![b'x'])],
            settings,
        )[0]
        .0
    };
    let user = (0..64)
        .map(|n| format!("user-{n}"))
        .find(|user| probe(user, &crc32) != probe(user, &murmur2))
        .expect("the two partitioners differ for some user id");
    let theirs: Vec<Event> = texts
        .iter()
        .enumerate()
        .map(|(i, (id, text))| Event::MemoryCreated(common::created(&user, id, text, i as i64)))
        .collect();
    broker.produce_with("memory.created", &keyed(&theirs, WireFormat::Json), &crc32);
    broker.wait_committed(
        "engram",
        &targets(&[("memory.created", broker.end_offsets("memory.created", 2))]),
        WAIT,
    );
    let (status, body) = request(
        &agent,
        "POST",
        &format!("{base}/users/{user}/consolidate?execute=true"),
    );
    assert_eq!(status, 200, "run by the partition that owns {user}: {body}");
    let executed: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(executed["user_id"], user.as_str());
    assert_eq!(executed["mode"], "execute");
    engram.stop();
}

/// Edits, deletions and erasures arrive on topics of their own, in Avro,
/// keyed by user: each is applied in time order after the creations, the
/// deletion and the erasure are confirmed on their output topics, and the
/// erased user's earlier events produced again are refused.
#[test]
fn edits_deletions_and_erasures_come_on_their_own_topics_and_are_confirmed() {
    let format = WireFormat::Avro;
    let (broker, dir, engram) = engram_creating_topics(&[
        ("ENGRAM_KAFKA_OUTPUT_FORMAT", "avro"),
        ("ENGRAM_CONSOLIDATION_SCHEDULE_INTERVAL", "0s"),
    ]);
    let created: Vec<Event> = [
        ("ana", "m1", "Ana uses Vim"),
        ("ana", "m2", "Ana's door code is 4711"),
        ("bo", "b1", "Bo keeps bees"),
    ]
    .iter()
    .enumerate()
    .map(|(i, (user, id, text))| Event::MemoryCreated(created(user, id, text, i as i64)))
    .collect();
    let positions = broker.produce("memory.created", &keyed(&created, format));
    broker.wait_committed(
        "engram",
        &targets(&[("memory.created", ends(&positions, 2))]),
        WAIT,
    );
    let edit = Event::MemoryUpdated(MemoryUpdated {
        event_id: "edit-1".into(),
        user_id: "ana".into(),
        memory_id: "m1".into(),
        updated_at: at(10),
        content: None,
        importance: Some(0.9),
        kind: None,
        category: None,
        tags: Some(vec!["editor".into()]),
        embedding: None,
    });
    let deletion = Event::MemoryDeleted(MemoryDeleted {
        event_id: "del-1".into(),
        user_id: "ana".into(),
        memory_id: "m2".into(),
        deleted_at: at(11),
    });
    let erasure = Event::UserErased(UserErased {
        event_id: "erase-1".into(),
        user_id: "bo".into(),
        erased_at: at(12),
    });
    let sent = [
        (
            "memory.updated",
            broker.produce("memory.updated", &keyed(&[edit], format)),
        ),
        (
            "memory.deleted",
            broker.produce("memory.deleted", &keyed(&[deletion], format)),
        ),
        (
            "user.erased",
            broker.produce("user.erased", &keyed(&[erasure], format)),
        ),
    ];
    let committed: Vec<(&str, Vec<i64>)> = sent
        .iter()
        .map(|(topic, positions)| (*topic, ends(positions, 2)))
        .collect();
    broker.wait_committed("engram", &targets(&committed), WAIT);
    let revised = outputs(&broker, "memory.revised", 1, format);
    assert!(
        matches!(&revised[..], [(Some(key), Event::MemoryRevised(r))]
            if key == "ana" && r.memory_id == "m2" && r.event_id == "del-1/revised"),
        "{revised:?}"
    );
    let erased = outputs(&broker, "user.erasure.completed", 1, format);
    assert!(
        matches!(&erased[..], [(Some(key), Event::UserErasureCompleted(e))] if key == "bo"),
        "{erased:?}"
    );
    // Bo's creation produced again: older than the erasure, refused.
    let again = broker.produce("memory.created", &keyed(&created[2..], format));
    broker.wait_committed(
        "engram",
        &targets(&[("memory.created", ends(&again, 2))]),
        WAIT,
    );
    let letters = outputs(&broker, "engram.dlq", 1, format);
    assert!(
        matches!(&letters[..], [(_, Event::DeadLetter(d))]
            if d.error_kind == "erased_user" && d.original.is_empty()),
        "{letters:?}"
    );
    engram.stop();
    let store = EmbeddedStore::open(&dir.path().join("state")).unwrap();
    let m1 = store.memory("ana", "m1").unwrap().unwrap();
    assert_eq!(
        (m1.importance, m1.tags.clone()),
        (0.9, vec!["editor".to_owned()])
    );
    assert_eq!(m1.updated_at, Some(at(10).timestamp_millis()));
    assert!(store.memory("ana", "m2").unwrap().is_none());
    assert_eq!(store.users().unwrap(), vec!["ana".to_owned()]);
}

/// Memory-created events in, output events out, in either encoding.
fn events_in_become_output_events_out(format: WireFormat) {
    let name = match format {
        WireFormat::Json => "json",
        WireFormat::Avro => "avro",
    };
    let (broker, dir, engram) = engram_creating_topics(&[
        ("ENGRAM_KAFKA_OUTPUT_FORMAT", name),
        ("ENGRAM_CONSOLIDATION_TRIGGER_NEW_MEMORIES", "4"),
        ("ENGRAM_CONSOLIDATION_SCHEDULE_INTERVAL", "0s"),
    ]);
    let texts = [
        ("rest", "API uses REST"),
        ("restful", "The API is RESTful"),
        ("pg", "Project uses PostgreSQL"),
        ("my", "Project uses MySQL"),
    ];
    let created: Vec<Event> = texts
        .iter()
        .enumerate()
        .map(|(i, (id, text))| Event::MemoryCreated(created("ada", id, text, i as i64)))
        .collect();
    let positions = broker.produce("memory.created", &keyed(&created, format));
    broker.wait_committed(
        "engram",
        &targets(&[("memory.created", ends(&positions, 2))]),
        WAIT,
    );
    // Accesses only after their memories exist: the two topics are not
    // ordered with respect to each other.
    let accesses: Vec<Event> = (0..3)
        .map(|i| Event::MemoryAccessed(accessed("ada", "pg", 10 + i)))
        .collect();
    let access_positions = broker.produce("memory.accessed", &keyed(&accesses, format));
    let request = Event::ConsolidationRequested(ConsolidationRequested {
        event_id: "req-1".to_owned(),
        user_id: "ada".to_owned(),
        requested_at: at(20),
        execute: Some(false),
        reason: Some("test".to_owned()),
    });
    let request_positions = broker.produce("consolidation.requested", &keyed(&[request], format));
    broker.wait_committed(
        "engram",
        &targets(&[
            ("memory.accessed", ends(&access_positions, 2)),
            ("consolidation.requested", ends(&request_positions, 2)),
        ]),
        WAIT,
    );

    let triggered = outputs(&broker, "consolidation.triggered", 2, format);
    let reasons: BTreeSet<String> = triggered
        .iter()
        .map(|(_, e)| match e {
            Event::ConsolidationTriggered(t) => format!("{:?}", t.reason),
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    assert_eq!(
        reasons,
        BTreeSet::from(["Manual".to_owned(), "Threshold".to_owned()]),
        "threshold (4 new memories) and manual triggers"
    );
    let completed = outputs(&broker, "consolidation.completed", 2, format);
    assert_eq!(completed.len(), 2);
    let contradictions = outputs(&broker, "contradiction.detected", 1, format);
    assert!(!contradictions.is_empty(), "PostgreSQL vs MySQL is flagged");
    let all: Vec<&(Option<String>, Event)> = triggered
        .iter()
        .chain(&completed)
        .chain(&contradictions)
        .collect();
    assert!(
        all.iter().all(|(key, _)| key.as_deref() == Some("ada")),
        "outputs are keyed by user_id"
    );
    let ids: BTreeSet<&str> = all.iter().map(|(_, e)| e.event_id()).collect();
    assert_eq!(ids.len(), all.len(), "event ids are unique");

    engram.stop();
    let store = EmbeddedStore::open(&dir.path().join("state")).unwrap();
    let pg = store.memory("ada", "pg").unwrap().unwrap();
    assert_eq!(pg.salience.access_count(), 3);
    assert!(pg.embedding.is_some(), "embedded by the local model");
    assert_eq!(store.run_reports("ada").unwrap().len(), 2);
}

#[test]
fn json_events_in_become_output_events_out() {
    events_in_become_output_events_out(WireFormat::Json);
}

#[test]
fn avro_events_in_become_output_events_out() {
    events_in_become_output_events_out(WireFormat::Avro);
}

#[test]
fn poison_messages_go_to_the_dlq_and_the_stream_goes_on() {
    let (broker, dir, engram) = engram_creating_topics(&[
        ("ENGRAM_KAFKA_OUTPUT_FORMAT", "json"),
        ("ENGRAM_EMBEDDING_ENABLED", "false"),
        // The read of a memory that never comes waits a second (wall
        // clock), then is dead-lettered by the idle partition's sweep.
        ("ENGRAM_LIMITS_MAX_PARKED_READ_AGE", "1s"),
    ]);
    let good = Event::MemoryCreated(created("bo", "m1", "Bo likes tea", 0));
    let mut avro_junk = vec![0xC3, 0x01];
    avro_junk.extend_from_slice(&[7; 12]);
    let access_as_created = codec().encode_json(&Event::MemoryAccessed(accessed("bo", "m1", 1)));
    let poison: Vec<(String, Vec<u8>)> = vec![
        ("bo".to_owned(), b"\xff\xfe not even text".to_vec()),
        (
            "bo".to_owned(),
            br#"{"user_id":"bo","memory_id":"m2"}"#.to_vec(),
        ),
        ("bo".to_owned(), avro_junk),
        ("bo".to_owned(), access_as_created),
        ("bo".to_owned(), codec().encode_json(&good)),
    ];
    let positions = broker.produce("memory.created", &poison);
    let mut expected = BTreeMap::new();
    expected.insert("memory.created".to_owned(), ends(&positions, 2));
    broker.wait_committed("engram", &expected, WAIT);
    let ghost = keyed(
        &[Event::MemoryAccessed(accessed("bo", "ghost", 2))],
        WireFormat::Json,
    );
    let ghost_position = broker.produce("memory.accessed", &ghost);
    expected.insert("memory.accessed".to_owned(), ends(&ghost_position, 2));
    broker.wait_committed("engram", &expected, WAIT);

    let mut letters: Vec<(Option<String>, DeadLetter)> =
        outputs(&broker, "engram.dlq", 5, WireFormat::Json)
            .into_iter()
            .map(|(key, e)| match e {
                Event::DeadLetter(letter) => (key, letter),
                other => panic!("unexpected {other:?}"),
            })
            .collect();
    letters.sort_by_key(|(_, l)| (l.source_topic != "memory.created", l.offset));
    let kinds: Vec<&str> = letters.iter().map(|(_, l)| l.error_kind.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "undecodable",
            "missing_field",
            "unknown_type",
            "wrong_topic",
            "unknown_memory"
        ]
    );
    for ((key, letter), (_, bytes)) in letters[..4].iter().zip(&poison) {
        assert_eq!(letter.source_topic, "memory.created");
        assert_eq!(&letter.original, bytes, "original bytes kept");
        let partition = letter.partition.unwrap();
        assert_eq!(
            key.as_deref(),
            Some(format!("memory.created/{partition}").as_str())
        );
    }
    let offsets: Vec<(Option<i32>, i64)> = letters[..4]
        .iter()
        .map(|(_, l)| (l.partition, l.offset))
        .collect();
    let produced: Vec<(Option<i32>, i64)> =
        positions[..4].iter().map(|&(p, o)| (Some(p), o)).collect();
    assert_eq!(offsets, produced, "source partition and offset");
    assert_eq!(letters[4].1.source_topic, "memory.accessed");
    assert_eq!(letters[4].1.original, ghost[0].1);

    engram.stop();
    let store = EmbeddedStore::open(&dir.path().join("state")).unwrap();
    assert!(
        store.memory("bo", "m1").unwrap().is_some(),
        "the valid event after the poison was applied"
    );
}

#[test]
fn input_batches_compressed_with_every_codec_are_consumed() {
    let (broker, dir, engram) = engram_creating_topics(&[("ENGRAM_EMBEDDING_ENABLED", "false")]);
    let codecs = ["gzip", "snappy", "lz4", "zstd"];
    let mut positions = Vec::new();
    for codec in codecs {
        let user = format!("user-{codec}");
        let events: Vec<Event> = (0..40)
            .map(|i| {
                let text = format!("Memory {i} of the {codec} batch: the same words compress well");
                Event::MemoryCreated(created(&user, &format!("m{i}"), &text, i))
            })
            .collect();
        let messages = keyed(&events, WireFormat::Json);
        positions.extend(broker.produce_with(
            "memory.created",
            &messages,
            &[("compression.type", codec)],
        ));
    }
    broker.wait_committed(
        "engram",
        &targets(&[("memory.created", ends(&positions, 2))]),
        WAIT,
    );
    engram.stop();
    let store = EmbeddedStore::open(&dir.path().join("state")).unwrap();
    for codec in codecs {
        let stored = store.memories(&format!("user-{codec}")).unwrap();
        assert_eq!(stored.len(), 40, "{codec}-compressed input");
    }
}

#[test]
fn an_event_on_another_partition_than_its_users_is_dead_lettered_not_applied() {
    let (broker, dir, engram) = engram_creating_topics(&[
        ("ENGRAM_KAFKA_OUTPUT_FORMAT", "json"),
        ("ENGRAM_EMBEDDING_ENABLED", "false"),
    ]);
    let first = Event::MemoryCreated(created("wanda", "m1", "Wanda lives in Lisbon", 0));
    let stray = Event::MemoryCreated(created("wanda", "m2", "Wanda lives in Porto", 5));
    let owner = broker::produce_to_partition(
        &broker,
        "memory.created",
        0,
        &keyed(&[first], WireFormat::Json),
    );
    broker.wait_committed(
        "engram",
        &targets(&[("memory.created", ends(&owner, 2))]),
        WAIT,
    );
    let other = broker::produce_to_partition(
        &broker,
        "memory.created",
        1,
        &keyed(&[stray], WireFormat::Json),
    );
    broker.wait_committed(
        "engram",
        &targets(&[("memory.created", vec![1, other[0].1 + 1])]),
        WAIT,
    );
    let letter = first_dead_letter(&broker);
    assert_eq!(letter.error_kind, "wrong_partition");
    assert_eq!((letter.partition, letter.offset), (Some(1), other[0].1));
    engram.stop();
    let store = EmbeddedStore::open(&dir.path().join("state")).unwrap();
    assert!(
        store.memory("wanda", "m2").unwrap().is_none(),
        "no second writer"
    );
    let state = store.user_state("wanda").unwrap().unwrap();
    assert!(
        !state.applied_offsets.contains_key("memory.created/1"),
        "{:?}",
        state.applied_offsets
    );
}

/// `kafka.order_by = timestamp` takes records across topics by their Kafka
/// timestamps, whatever their events say: a read stamped before its
/// memory's creation comes first, when its user has no memory yet, and is
/// refused. By event time (or with timestamps lost) the creation would come
/// first and the read would count.
#[test]
fn records_are_taken_across_topics_by_their_kafka_timestamps_when_asked() {
    let broker = Broker::start();
    broker.create_topics(&["memory.created", "memory.accessed"], 1);
    let dir = tempfile::tempdir().unwrap();
    let stamp = chrono::Utc::now().timestamp_millis();
    let memory = Event::MemoryCreated(created("ola", "m1", "Ola keeps bees", 10));
    let read = Event::MemoryAccessed(accessed("ola", "m1", 11));
    let stamped = |event: &Event, at: i64| {
        let (key, payload) = keyed(std::slice::from_ref(event), WireFormat::Json).remove(0);
        (key, payload, at)
    };
    // Produced in event order, before engram starts: both queues are full.
    broker::produce_stamped(&broker, "memory.created", &[stamped(&memory, stamp)]);
    let read_at =
        broker::produce_stamped(&broker, "memory.accessed", &[stamped(&read, stamp - 5_000)]);
    let engram = engram_on_one_partition(
        &broker,
        dir.path(),
        &[("ENGRAM_KAFKA_ORDER_BY", "timestamp")],
    );
    let both = targets(&[("memory.created", vec![1]), ("memory.accessed", vec![1])]);
    if let Err(error) = std::panic::catch_unwind(|| broker.wait_committed("engram", &both, WAIT)) {
        panic!("{error:?}\n{}", engram.log_text());
    }
    let letter = first_dead_letter(&broker);
    assert_eq!(letter.error_kind, "unknown_user");
    assert_eq!((letter.partition, letter.offset), (Some(0), read_at[0].1));
    engram.stop();
    let store = EmbeddedStore::open(&dir.path().join("state")).unwrap();
    let memory = store
        .memory("ola", "m1")
        .unwrap()
        .expect("the creation applied");
    assert_eq!(memory.salience.access_count(), 0, "the read came first");
}

#[test]
fn an_executed_consolidation_from_the_command_line_goes_through_the_stream() {
    let (broker, dir, engram) = engram_creating_topics(&[
        ("ENGRAM_EMBEDDING_ENABLED", "false"),
        ("ENGRAM_KAFKA_OUTPUT_FORMAT", "json"),
    ]);
    let memories: Vec<Event> = [
        ("pg", "Project uses PostgreSQL"),
        ("my", "Project uses MySQL"),
    ]
    .iter()
    .enumerate()
    .map(|(i, (id, text))| Event::MemoryCreated(created("ada", id, text, i as i64)))
    .collect();
    let positions = broker.produce("memory.created", &keyed(&memories, WireFormat::Json));
    broker.wait_committed(
        "engram",
        &targets(&[("memory.created", ends(&positions, 2))]),
        WAIT,
    );
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_engram"))
        .arg("--state")
        .arg(dir.path().join("state"))
        .args(["consolidate", "--user", "ada", "--execute"])
        .env("ENGRAM_KAFKA_BROKERS", &broker.address)
        .env("ENGRAM_EMBEDDING_ENABLED", "false")
        .env("ENGRAM_LOG_LEVEL", "warn")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("requested from the service"), "{stdout}");
    assert!(
        stdout.contains("(executed)"),
        "the service ran it: {stdout}"
    );
    // The service ran it, so its events went out like any run's.
    let triggered = outputs(&broker, "consolidation.triggered", 1, WireFormat::Json);
    let manual = triggered.iter().any(|(_, event)| {
        matches!(event, Event::ConsolidationTriggered(t) if format!("{:?}", t.reason) == "Manual")
    });
    assert!(manual, "{triggered:?}");
    engram.stop();

    // Undoing it is published for consumers that mirrored the run; the
    // store is the service's, so undo waits until the group is empty.
    let run_id = stdout
        .split(": run ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .expect("the run id")
        .to_owned();
    let undone = poll_until(WAIT, Duration::from_millis(500), || {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_engram"))
            .arg("--state")
            .arg(dir.path().join("state"))
            .args(["undo", &run_id])
            .env("ENGRAM_KAFKA_BROKERS", &broker.address)
            .env("ENGRAM_KAFKA_OUTPUT_FORMAT", "json")
            .env("ENGRAM_EMBEDDING_ENABLED", "false")
            .env("ENGRAM_LOG_LEVEL", "warn")
            .output()
            .unwrap();
        let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
        match output.status.success() {
            true => Ok(text(&output.stdout)),
            false => Err(text(&output.stderr)),
        }
    });
    assert!(undone.contains("published"), "{undone}");
    let published = outputs(&broker, "consolidation.undone", 1, WireFormat::Json);
    let (key, Event::ConsolidationUndone(event)) = &published[0] else {
        panic!("{published:?}");
    };
    assert_eq!(key.as_deref(), Some("ada"));
    assert_eq!(event.run_id, run_id);
    assert_eq!(event.event_id, format!("{run_id}/undone"));
}

#[test]
fn a_2_mb_poison_message_is_dead_lettered_by_its_start_and_digest_and_the_stream_goes_on() {
    let (broker, dir, engram) = engram_creating_topics(&[
        ("ENGRAM_KAFKA_OUTPUT_FORMAT", "json"),
        ("ENGRAM_EMBEDDING_ENABLED", "false"),
    ]);
    let poison: Vec<u8> = (0..2_000_000u32).map(|i| b'a' + (i % 26) as u8).collect();
    let good = Event::MemoryCreated(created("po", "m1", "Po likes jasmine tea", 0));
    let messages = vec![
        ("po".to_owned(), poison.clone()),
        ("po".to_owned(), codec().encode_json(&good)),
    ];
    // The platform's producer and topic allow records this large; engram's
    // output producer keeps the 1 MB default.
    broker.set_topic_config("memory.created", "max.message.bytes", "4000000");
    let positions = broker.produce_with(
        "memory.created",
        &messages,
        &[("message.max.bytes", "4000000")],
    );
    broker.wait_committed(
        "engram",
        &targets(&[("memory.created", ends(&positions, 2))]),
        WAIT,
    );
    let letter = first_dead_letter(&broker);
    assert_eq!(letter.error_kind, "event_too_large");
    assert_eq!(letter.offset, positions[0].1);
    assert_eq!(letter.original_length, Some(2_000_000));
    assert_eq!(letter.original, poison[..DEAD_LETTER_ORIGINAL_MAX]);
    assert_eq!(
        letter.original_sha256.as_deref(),
        Some(engram::text::sha256_hex(&poison).as_str())
    );
    engram.stop();
    let store = EmbeddedStore::open(&dir.path().join("state")).unwrap();
    assert!(
        store.memory("po", "m1").unwrap().is_some(),
        "the next event was applied"
    );
}

/// A dead letter the broker refuses for good (here: larger than the DLQ
/// topic takes) must not be dropped while the offset of its record
/// commits: the partition stops, says why, and commits nothing past it.
#[test]
fn a_dead_letter_the_broker_refuses_stops_its_partition_instead_of_being_dropped() {
    let (broker, _dir, engram) = engram_creating_topics(&[
        ("ENGRAM_KAFKA_OUTPUT_FORMAT", "json"),
        ("ENGRAM_EMBEDDING_ENABLED", "false"),
        ("ENGRAM_KAFKA_COMMIT_INTERVAL", "100ms"),
    ]);
    broker.set_topic_config("engram.dlq", "max.message.bytes", "2000");
    let base = format!("http://{}", engram.http_address(WAIT));
    let first = Event::MemoryCreated(created("po", "m0", "Po likes green tea", 0));
    let poison: Vec<u8> = (0..6_000u32).map(|i| b'a' + (i % 26) as u8).collect();
    let after = Event::MemoryCreated(created("po", "m1", "Po likes jasmine tea", 1));
    let positions = broker.produce(
        "memory.created",
        &[
            ("po".to_owned(), codec().encode_json(&first)),
            ("po".to_owned(), poison),
            ("po".to_owned(), codec().encode_json(&after)),
        ],
    );
    let (partition, poison_offset) = positions[1];
    let (_, body) = wait_readiness(&base, |status, body| {
        status == 503 && body.contains("engram.dlq")
    });
    assert!(body.contains("refused"), "{body}");
    std::thread::sleep(Duration::from_secs(1));
    let committed = broker.committed("engram", "memory.created", 2)[partition as usize];
    assert!(
        committed <= poison_offset,
        "committed {committed}, past the poison record at {poison_offset}"
    );
    let scrape = request(&http(), "GET", &format!("{base}/metrics")).1;
    assert_eq!(
        metric(&scrape, "engram_output_undeliverable_total"),
        Some(1.0),
        "{scrape}"
    );
    engram.kill();
}

/// Deterministic unit vector near one of a few directions, so memories of the
/// same topic are near-duplicates without running the model.
fn vector(topic: usize, jitter: usize) -> Vec<f32> {
    let mut v: Vec<f32> = (0..384)
        .map(|i| {
            let base = ((i * 7 + topic * 13) % 17) as f32 - 8.0;
            let noise = (((i + 1) * (jitter + 3) * 2654435761usize) % 1000) as f32 / 1000.0 - 0.5;
            base + noise * 2.0
        })
        .collect();
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter_mut().for_each(|x| *x /= norm);
    v
}

/// Memories and reads of `users`, in time order, with platform-supplied
/// embeddings: (events, accesses per (user, memory)).
fn workload(
    users: usize,
    memories: usize,
    reads: usize,
) -> (Vec<Event>, BTreeMap<(String, String), u64>) {
    let mut events = Vec::new();
    let mut counts = BTreeMap::new();
    let mut t = 0i64;
    for m in 0..memories {
        for u in 0..users {
            let user = format!("user-{u}");
            let id = format!("m{m}");
            let topic = m % 5;
            let mut event = created(
                &user,
                &id,
                &format!("fact {topic} variant {m} of {user}"),
                t,
            );
            event.embedding = Some(vector(topic, m));
            events.push(Event::MemoryCreated(event));
            t += 60;
            for r in 0..reads {
                let read = (m * 31 + r * 17 + u) % (m + 1);
                let target = format!("m{read}");
                let mut access = accessed(&user, &target, t);
                access.event_id = format!("a-{user}-{m}-{r}").into();
                events.push(Event::MemoryAccessed(access));
                *counts.entry((user.clone(), target)).or_insert(0) += 1;
                t += 60;
            }
        }
        t += 3_600;
    }
    (events, counts)
}

const INPUT: &str = "engram.input";

/// One topic carries every input type, so each user's events stay in order.
fn single_topic_settings(group: &str) -> Vec<(&'static str, String)> {
    vec![
        ("ENGRAM_KAFKA_GROUP_ID", group.to_owned()),
        ("ENGRAM_KAFKA_TOPIC_MEMORY_CREATED", INPUT.to_owned()),
        ("ENGRAM_KAFKA_TOPIC_MEMORY_ACCESSED", INPUT.to_owned()),
        (
            "ENGRAM_KAFKA_TOPIC_CONSOLIDATION_REQUESTED",
            INPUT.to_owned(),
        ),
        ("ENGRAM_KAFKA_OUTPUT_FORMAT", "json".to_owned()),
        ("ENGRAM_EMBEDDING_ENABLED", "false".to_owned()),
        ("ENGRAM_PIPELINE_CLOCK", "stream".to_owned()),
        ("ENGRAM_KAFKA_COMMIT_INTERVAL", "100ms".to_owned()),
        ("ENGRAM_KAFKA_FLUSH_MAX_EVENTS", "50".to_owned()),
    ]
}

fn start(
    broker: &Broker,
    dir: &std::path::Path,
    name: &str,
    settings: &[(&'static str, String)],
) -> Engram {
    let settings: Vec<(&str, &str)> = settings.iter().map(|(k, v)| (*k, v.as_str())).collect();
    Engram::start(
        broker,
        &dir.join("state"),
        dir.join(format!("{name}.log")),
        &settings,
    )
}

fn create_all_topics(broker: &Broker, partitions: i32) {
    broker.create_topics(&[INPUT], partitions);
    broker.create_topics(&OUTPUT_TOPICS, 2);
}

#[test]
fn two_instances_split_the_partitions_and_one_takes_over_when_the_other_dies() {
    let broker = Broker::start();
    create_all_topics(&broker, 4);
    let dir = tempfile::tempdir().unwrap();
    let settings = single_topic_settings("pair");
    let first = start(&broker, dir.path(), "first", &settings);
    first.wait_assigned(WAIT);
    let second = start(&broker, dir.path(), "second", &settings);
    // Both members hold partitions once the group has settled.
    poll_until(WAIT, Duration::from_millis(200), || {
        let (a, b) = (first.assigned(), second.assigned());
        if let (Some(a), Some(b)) = (&a, &b)
            && a.len() + b.len() == 4
            && !a.is_empty()
            && !b.is_empty()
        {
            return Ok(());
        }
        Err(format!("group did not settle: {a:?} {b:?}"))
    });
    let (events, counts) = workload(8, 12, 3);
    let (before, after) = events.split_at(events.len() / 2);
    let mut positions = broker.produce(INPUT, &keyed(before, WireFormat::Json));
    let mut expected = BTreeMap::from([(INPUT.to_owned(), ends(&positions, 4))]);
    broker.wait_committed("pair", &expected, WAIT);

    first.kill();
    positions.extend(broker.produce(INPUT, &keyed(after, WireFormat::Json)));
    expected.insert(INPUT.to_owned(), ends(&positions, 4));
    broker.wait_committed("pair", &expected, WAIT);
    assert_eq!(
        second.assigned().map(|p| p.len()),
        Some(4),
        "the survivor took over"
    );
    second.stop();

    let store = EmbeddedStore::open(&dir.path().join("state")).unwrap();
    let mut reads = BTreeMap::new();
    let mut memories = 0;
    for user in store.users().unwrap() {
        for memory in store.memories(&user).unwrap() {
            memories += 1;
            let count = memory.salience.access_count();
            if count > 0 {
                reads.insert((user.clone(), memory.id.clone()), count);
            }
        }
    }
    assert_eq!(memories, 8 * 12, "no memory lost");
    assert_eq!(reads, counts, "every read counted exactly once");
}

/// A broker holding the workload of 6 users on `partitions` partitions of
/// the single input topic, the offsets a finished run commits, and the state
/// of an undisturbed run of it (in a group of its own).
fn workload_with_reference(
    partitions: i32,
) -> (Broker, BTreeMap<String, Vec<i64>>, serde_json::Value) {
    let broker = Broker::start();
    let (expected, reference) = reference_run(&broker, partitions);
    (broker, expected, reference)
}

/// [`workload_with_reference`] on a given broker.
fn reference_run(
    broker: &Broker,
    partitions: i32,
) -> (BTreeMap<String, Vec<i64>>, serde_json::Value) {
    create_all_topics(broker, partitions);
    let (events, _) = workload(6, 60, 4);
    let positions = broker.produce(INPUT, &keyed(&events, WireFormat::Json));
    let expected = BTreeMap::from([(INPUT.to_owned(), ends(&positions, partitions))]);
    let dir = tempfile::tempdir().unwrap();
    let engram = start(
        broker,
        dir.path(),
        "reference",
        &single_topic_settings("reference"),
    );
    broker.wait_committed("reference", &expected, WAIT);
    engram.stop();
    let store = EmbeddedStore::open(&dir.path().join("state")).unwrap();
    let runs: usize = store
        .users()
        .unwrap()
        .iter()
        .map(|u| store.run_reports(u).unwrap().len())
        .sum();
    assert!(runs > 6, "cycles ran during the stream ({runs})");
    let reference = dump(&store).unwrap();
    (expected, reference)
}

/// Waits until `group` has committed something; how many offsets.
fn wait_first_commit(broker: &Broker, group: &str, partitions: i32) -> i64 {
    poll_until(WAIT, Duration::from_millis(20), || {
        let committed: i64 = broker
            .committed(group, INPUT, partitions)
            .iter()
            .map(|&c| c.max(0))
            .sum();
        if committed > 0 {
            Ok(committed)
        } else {
            Err("nothing committed".to_owned())
        }
    })
}

fn assert_state_is(dir: &std::path::Path, reference: &serde_json::Value, after: &str) {
    let store = EmbeddedStore::open(&dir.join("state")).unwrap();
    let got = dump(&store).unwrap();
    assert!(
        got == *reference,
        "same final state after {after}; first difference at {}",
        first_difference(reference, &got, String::new())
    );
}

#[test]
fn a_crash_mid_stream_and_a_restart_end_in_the_state_of_an_uninterrupted_run() {
    let (broker, expected, reference) = workload_with_reference(2);
    let total: i64 = expected[INPUT].iter().sum();
    let dir = tempfile::tempdir().unwrap();
    let settings = single_topic_settings("crash");
    let victim = start(&broker, dir.path(), "victim", &settings);
    let committed_at_kill = wait_first_commit(&broker, "crash", 2);
    victim.kill();
    assert!(
        committed_at_kill < total,
        "killed mid-stream ({committed_at_kill} of {total} committed)"
    );
    let restarted = start(&broker, dir.path(), "restarted", &settings);
    broker.wait_committed("crash", &expected, WAIT);
    restarted.stop();
    assert_state_is(dir.path(), &reference, "a crash mid-stream");
}

/// Small batches keep engram busy with the workload for longer, so a fault
/// lands mid-stream.
fn small_batches(mut settings: Vec<(&'static str, String)>) -> Vec<(&'static str, String)> {
    settings.push(("ENGRAM_KAFKA_FLUSH_MAX_EVENTS", "5".to_owned()));
    settings
}

fn with_crash(settings: &[(&'static str, String)], point: &str) -> Vec<(&'static str, String)> {
    let mut settings = settings.to_vec();
    settings.push(("ENGRAM_CRASH_AT", point.to_owned()));
    settings
}

fn assert_killed_at(victim: Engram, point: &str) {
    let (signal, log) = victim.wait_killed(WAIT);
    assert_eq!(signal, Some(9), "killed by SIGKILL; log:\n{log}");
    assert!(
        log.contains(&format!("crash point {point} reached")),
        "died at {point}; log:\n{log}"
    );
}

/// engram is killed (SIGKILL, by its own crash point) at `point`, restarted,
/// and must end in exactly the state of an undisturbed run.
fn a_kill_at_recovers_to_the_undisturbed_state(point: &str) {
    let (broker, expected, reference) = workload_with_reference(2);
    let dir = tempfile::tempdir().unwrap();
    let settings = single_topic_settings("faults");
    let victim = start(&broker, dir.path(), "victim", &with_crash(&settings, point));
    let name = point.split(':').next().unwrap_or(point);
    assert_killed_at(victim, name);
    let restarted = start(&broker, dir.path(), "restarted", &settings);
    broker.wait_committed("faults", &expected, WAIT);
    restarted.stop();
    assert_state_is(dir.path(), &reference, &format!("a kill at {point}"));
}

#[test]
#[cfg_attr(
    not(feature = "fault-injection"),
    ignore = "crash points need `--features fault-injection` (make test turns it on)"
)]
fn a_kill_during_a_flush_recovers_to_the_undisturbed_state() {
    // The 4th batch's state is durable; its offsets are not committed.
    a_kill_at_recovers_to_the_undisturbed_state("flush.stored:4");
}

#[test]
#[cfg_attr(
    not(feature = "fault-injection"),
    ignore = "crash points need `--features fault-injection` (make test turns it on)"
)]
fn a_kill_during_a_consolidation_execute_recovers_to_the_undisturbed_state() {
    // The 2nd executed cycle's changes are durable; its events are not sent.
    a_kill_at_recovers_to_the_undisturbed_state("cycle.executed:2");
}

#[test]
#[cfg_attr(
    not(feature = "fault-injection"),
    ignore = "crash points need `--features fault-injection` (make test turns it on)"
)]
fn a_kill_during_a_rebalance_recovers_to_the_undisturbed_state() {
    let (broker, expected, reference) = workload_with_reference(4);
    let dir = tempfile::tempdir().unwrap();
    let settings = single_topic_settings("rebalance");
    let slow = small_batches(with_crash(&settings, "rebalance.revoking:1"));
    let first = start(&broker, dir.path(), "first", &slow);
    wait_first_commit(&broker, "rebalance", 4);
    // The second member's join revokes the first one's partitions: it dies
    // after its workers stopped, before their offsets are committed.
    let second = start(&broker, dir.path(), "second", &settings);
    assert_killed_at(first, "rebalance.revoking");
    broker.wait_committed("rebalance", &expected, WAIT);
    second.stop();
    assert_state_is(dir.path(), &reference, "a kill in a rebalance");
}

/// Sets the soft file-size limit (RLIMIT_FSIZE) of a running process.
fn set_file_size_limit(pid: u32, soft: &str) {
    let status = std::process::Command::new("prlimit")
        .args(["--pid", &pid.to_string(), &format!("--fsize={soft}:")])
        .status()
        .expect("prlimit (util-linux)");
    assert!(status.success(), "prlimit --fsize={soft}");
}

/// `(status, body)` of `/readyz` once `accept` takes it.
fn wait_readiness(base: &str, accept: impl Fn(u16, &str) -> bool) -> (u16, String) {
    let agent = http();
    poll_until(WAIT, Duration::from_millis(100), || {
        let (status, body) = request(&agent, "GET", &format!("{base}/readyz"));
        if accept(status, &body) {
            Ok((status, body))
        } else {
            Err(format!("/readyz answered {status} {body}"))
        }
    })
}

#[test]
fn a_store_that_refuses_writes_stops_commits_and_readiness_until_it_clears() {
    let (broker, expected, reference) = workload_with_reference(2);
    let total: i64 = expected[INPUT].iter().sum();
    let dir = tempfile::tempdir().unwrap();
    let settings = small_batches(single_topic_settings("store"));
    let engram = start(&broker, dir.path(), "store", &settings);
    let base = format!("http://{}", engram.http_address(WAIT));
    wait_first_commit(&broker, "store", 2);
    // Every write past 4 KiB of any file now fails (EFBIG), as on a full
    // disk: the database's write-ahead log cannot grow.
    set_file_size_limit(engram.pid(), "4096");
    let (_, problems) = wait_readiness(&base, |status, body| {
        status == 503 && body.contains("is failing")
    });
    assert!(problems.contains("applying a batch"), "{problems}");
    // Offsets of batches made durable before the limit may still go out.
    std::thread::sleep(Duration::from_secs(1));
    let stalled = broker.committed("store", INPUT, 2);
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(
        broker.committed("store", INPUT, 2),
        stalled,
        "no offset is committed while the store refuses writes"
    );
    assert!(
        stalled.iter().map(|&c| c.max(0)).sum::<i64>() < total,
        "the store failed mid-stream ({stalled:?} of {total})"
    );
    // The lag engram reports is what the broker says is left: its end
    // offset (a true one, from Apache Kafka) minus the committed offset.
    let ends = broker.end_offsets(INPUT, 2);
    let agent = http();
    poll_until(WAIT, Duration::from_millis(500), || {
        let scrape = request(&agent, "GET", &format!("{base}/metrics")).1;
        let lags: Vec<Option<f64>> = (0..2)
            .map(|p| {
                metric(
                    &scrape,
                    &format!("engram_consumer_lag{{partition=\"{p}\",topic=\"{INPUT}\"}}"),
                )
            })
            .collect();
        let expected: Vec<Option<f64>> = (0..2)
            .map(|p| Some((ends[p] - stalled[p].max(0)) as f64))
            .collect();
        (lags == expected)
            .then_some(())
            .ok_or(format!("lag {lags:?}, end - committed {expected:?}"))
    });
    assert!(ends.iter().sum::<i64>() > 0);
    set_file_size_limit(engram.pid(), "unlimited");
    wait_readiness(&base, |status, _| status == 200);
    broker.wait_committed("store", &expected, WAIT);
    engram.stop();
    assert_state_is(dir.path(), &reference, "the store refused writes for 4 s");
}

#[test]
fn a_corrupt_row_stops_its_partition_with_the_reason_on_readyz_instead_of_retrying() {
    let broker = Broker::start();
    broker.create_topics(
        &[
            "memory.created",
            "memory.accessed",
            "consolidation.requested",
        ],
        2,
    );
    broker.create_topics(&OUTPUT_TOPICS, 2);
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    {
        let store = EmbeddedStore::open(&state).unwrap();
        let mut batch = WriteBatch::default();
        batch.push(Write::PutUserState(engram::model::UserState::new("zed")));
        store.commit(&batch).unwrap();
    }
    let db = rusqlite::Connection::open(state.join("engram.sqlite")).unwrap();
    db.execute(
        "UPDATE user_state SET cycle = 'not json' WHERE user_id = 'zed'",
        [],
    )
    .unwrap();
    drop(db);
    let engram = Engram::start(
        &broker,
        &state,
        dir.path().join("engram.log"),
        &[("ENGRAM_EMBEDDING_ENABLED", "false")],
    );
    let base = format!("http://{}", engram.http_address(WAIT));
    engram.wait_assigned(WAIT);
    let event = Event::MemoryCreated(created("zed", "m1", "Zed likes green tea", 0));
    let positions = broker.produce("memory.created", &keyed(&[event], WireFormat::Json));
    let (_, problems) = wait_readiness(&base, |status, body| {
        status == 503 && body.contains("failed for good")
    });
    assert!(problems.contains("user_state.cycle"), "{problems}");
    assert!(problems.contains("corrupt"), "{problems}");
    // Not retried: each stopped partition failed once (resuming scans every
    // user, so both partitions meet the row), and nothing is committed.
    std::thread::sleep(Duration::from_secs(3));
    let (_, scrape) = request(&http(), "GET", &format!("{base}/metrics"));
    let stopped = metric(&scrape, "engram_partitions_stopped_total").unwrap_or(0.0);
    assert!(stopped >= 1.0, "{}", engram.log_text());
    assert_eq!(
        metric(&scrape, "engram_batch_failures_total"),
        Some(stopped),
        "{}",
        engram.log_text()
    );
    let (partition, offset) = positions[0];
    let committed = broker.committed("engram", "memory.created", 2)[partition as usize];
    assert!(
        committed <= offset,
        "committed {committed} past the stopped event"
    );
    engram.stop();
}

/// A bug that panics mid-batch (here at a fault point, after the batch's
/// state is durable) stops its partition as a permanent error does: the
/// reason on `/readyz`, counted, nothing committed past it. A restart
/// without the bug takes the batch up again.
#[test]
#[cfg_attr(
    not(feature = "fault-injection"),
    ignore = "panic points need `--features fault-injection` (make test turns it on)"
)]
fn a_panic_in_a_batch_stops_its_partition_with_the_reason_on_readyz() {
    let broker = Broker::start();
    create_all_topics(&broker, 2);
    let dir = tempfile::tempdir().unwrap();
    let settings = single_topic_settings("panic");
    let mut panicking = settings.clone();
    panicking.push(("ENGRAM_PANIC_AT", "flush.stored:1".to_owned()));
    let engram = start(&broker, dir.path(), "panicking", &panicking);
    let base = format!("http://{}", engram.http_address(WAIT));
    engram.wait_assigned(WAIT);
    let event = Event::MemoryCreated(created("zed", "m1", "Zed likes green tea", 0));
    let positions = broker.produce(INPUT, &keyed(&[event], WireFormat::Json));
    let (partition, offset) = positions[0];
    let (_, problems) = wait_readiness(&base, |status, body| {
        status == 503 && body.contains("panicked")
    });
    assert!(
        problems.contains(&format!("partition {partition} is failing")),
        "{problems}"
    );
    assert!(
        problems.contains("panic point flush.stored reached"),
        "{problems}"
    );
    let (_, scrape) = request(&http(), "GET", &format!("{base}/metrics"));
    assert_eq!(
        metric(&scrape, "engram_partitions_stopped_total"),
        Some(1.0),
        "{}",
        engram.log_text()
    );
    std::thread::sleep(Duration::from_secs(1));
    let committed = broker.committed("panic", INPUT, 2)[partition as usize];
    assert!(committed <= offset, "committed {committed} past the panic");
    // Stopping still works: the stopped worker waits for it.
    engram.stop();

    let restarted = start(&broker, dir.path(), "restarted", &settings);
    let mut expected = BTreeMap::new();
    let mut next = vec![0; 2];
    next[partition as usize] = offset + 1;
    expected.insert(INPUT.to_owned(), next);
    broker.wait_committed("panic", &expected, WAIT);
    restarted.stop();
}

#[test]
fn a_broker_outage_of_30_s_is_ridden_out_with_nothing_lost() {
    let (broker, relay) = Broker::start_behind_relay();
    let (expected, reference) = reference_run(&broker, 2);
    let total: i64 = expected[INPUT].iter().sum();
    let dir = tempfile::tempdir().unwrap();
    let settings = small_batches(single_topic_settings("outage"));
    let engram = start(&broker, dir.path(), "outage", &settings);
    let base = format!("http://{}", engram.http_address(WAIT));
    let committed = wait_first_commit(&broker, "outage", 2);
    let cut_at = std::time::Instant::now();
    relay.cut();
    assert!(committed < total, "cut mid-stream ({committed} of {total})");
    wait_readiness(&base, |status, body| {
        status == 503 && body.contains("no broker connection")
    });
    std::thread::sleep(Duration::from_secs(30).saturating_sub(cut_at.elapsed()));
    relay.restore();
    wait_readiness(&base, |status, _| status == 200);
    broker.wait_committed("outage", &expected, WAIT);
    engram.stop();
    assert_state_is(dir.path(), &reference, "a 30 s broker outage");
}

/// A platform's stream on two topics: each user's memories, one a minute,
/// and `reads` reads of each memory in the minute after its creation.
fn memories_and_their_reads(
    users: usize,
    memories: usize,
    reads: usize,
) -> (Vec<Event>, Vec<Event>) {
    let mut creations = Vec::new();
    let mut accesses = Vec::new();
    for user in 0..users {
        let user_id = format!("reader-{user}");
        for memory in 0..memories {
            let start = memory as i64 * 60;
            let text = format!("Fact number {memory} about {user_id}");
            creations.push(Event::MemoryCreated(created(
                &user_id,
                &format!("m{memory}"),
                &text,
                start,
            )));
            for read in 0..reads {
                accesses.push(Event::MemoryAccessed(accessed(
                    &user_id,
                    &format!("m{memory}"),
                    start + 1 + read as i64,
                )));
            }
        }
    }
    (creations, accesses)
}

fn assert_every_read_counted(dir: &std::path::Path, users: usize, memories: usize, reads: u64) {
    let store = EmbeddedStore::open(&dir.join("state")).unwrap();
    for user in 0..users {
        let user_id = format!("reader-{user}");
        for memory in 0..memories {
            let stored = store.memory(&user_id, &format!("m{memory}")).unwrap();
            let count = stored.map(|m| m.salience.access_count());
            assert_eq!(count, Some(reads), "{user_id} m{memory}");
        }
        let state = store.user_state(&user_id).unwrap().unwrap();
        assert!(state.parked_reads.is_empty(), "{:?}", state.parked_reads);
    }
}

fn scrape(engram: &Engram) -> String {
    let base = format!("http://{}", engram.http_address(WAIT));
    request(&http(), "GET", &format!("{base}/metrics")).1
}

#[test]
fn a_catch_up_across_topics_applies_every_read_after_its_memory() {
    let broker = Broker::start();
    let created_topic = "memory.created";
    broker.create_topics(&[created_topic, "memory.accessed"], 2);
    broker.create_topics(&OUTPUT_TOPICS, 2);
    let (creations, accesses) = memories_and_their_reads(4, 150, 20);
    // Everything is produced before engram starts, reads first: the access
    // topic holds four times as many records as the creation topic.
    let read_positions = broker.produce("memory.accessed", &keyed(&accesses, WireFormat::Json));
    let created_positions = broker.produce(created_topic, &keyed(&creations, WireFormat::Json));
    let dir = tempfile::tempdir().unwrap();
    let engram = Engram::start(
        &broker,
        &dir.path().join("state"),
        dir.path().join("engram.log"),
        &[("ENGRAM_EMBEDDING_ENABLED", "false")],
    );
    broker.wait_committed(
        "engram",
        &targets(&[
            (created_topic, ends(&created_positions, 2)),
            ("memory.accessed", ends(&read_positions, 2)),
        ]),
        WAIT,
    );
    let metrics = scrape(&engram);
    assert_eq!(
        metric(
            &metrics,
            "engram_events_applied_total{type=\"memory.accessed\"}"
        ),
        Some(accesses.len() as f64),
        "{metrics}"
    );
    assert_eq!(
        metric(&metrics, "engram_reads_parked_total"),
        Some(0.0),
        "time order alone put every read after its memory"
    );
    assert!(
        !metrics.contains("engram_events_rejected_total{"),
        "{metrics}"
    );
    let log = engram.log_text();
    assert!(
        !log.contains("PartitionEOF"),
        "a partition's end is not a warning: {log}"
    );
    engram.stop();
    assert_every_read_counted(dir.path(), 4, 150, 20);
}

#[test]
fn reads_that_overtake_a_throttled_creation_topic_wait_for_their_memories() {
    let (broker, dir, engram) = engram_creating_topics(&[("ENGRAM_EMBEDDING_ENABLED", "false")]);
    let (creations, accesses) = memories_and_their_reads(3, 60, 3);
    // Each user's first memory is there before anything else.
    let first: Vec<Event> = creations
        .iter()
        .filter(|e| matches!(e, Event::MemoryCreated(c) if c.memory_id == "m0"))
        .cloned()
        .collect();
    let mut created_positions = broker.produce("memory.created", &keyed(&first, WireFormat::Json));
    broker.wait_committed(
        "engram",
        &targets(&[("memory.created", ends(&created_positions, 2))]),
        WAIT,
    );
    // Then every read at once, and the other memories trickle in behind them.
    let read_positions = broker.produce("memory.accessed", &keyed(&accesses, WireFormat::Json));
    let rest: Vec<Event> = creations
        .iter()
        .filter(|e| !first.contains(e))
        .cloned()
        .collect();
    for chunk in rest.chunks(30) {
        std::thread::sleep(Duration::from_millis(400));
        created_positions.extend(broker.produce("memory.created", &keyed(chunk, WireFormat::Json)));
    }
    broker.wait_committed(
        "engram",
        &targets(&[
            ("memory.created", ends(&created_positions, 2)),
            ("memory.accessed", ends(&read_positions, 2)),
        ]),
        WAIT,
    );
    let metrics = scrape(&engram);
    let parked = metric(&metrics, "engram_reads_parked_total").unwrap_or_default();
    assert!(parked > 0.0, "the reads came first: {metrics}");
    assert_eq!(
        metric(&metrics, "engram_reads_unparked_total"),
        Some(parked),
        "each parked read was applied when its memory came"
    );
    assert!(
        !metrics.contains("engram_events_rejected_total{"),
        "{metrics}"
    );
    engram.stop();
    assert_every_read_counted(dir.path(), 3, 60, 3);
}

/// Settings that put engram's state in `keyspace` of the shared CQL database.
fn cql_settings(group: &str, keyspace: &str) -> Vec<(&'static str, String)> {
    let mut settings = single_topic_settings(group);
    settings.extend([
        (
            "ENGRAM_SCYLLA_NODES",
            common::cql::node().contact_point.clone(),
        ),
        ("ENGRAM_SCYLLA_KEYSPACE", keyspace.to_owned()),
        (
            "ENGRAM_SCYLLA_REPLICATION_CLASS",
            "SimpleStrategy".to_owned(),
        ),
        ("ENGRAM_SCYLLA_REPLICATION_FACTOR", "1".to_owned()),
        ("ENGRAM_KAFKA_FLUSH_MAX_EVENTS", "500".to_owned()),
    ]);
    settings
}

/// A fresh keyspace, migrated, and the store on it.
fn cql_keyspace() -> (engram::config::ScyllaConfig, engram::store::ScyllaStore) {
    let config = common::cql::node().fresh_keyspace();
    let runtime = common::runtime();
    engram::store::migrate(&config, runtime.handle(), Box::new(|| {})).unwrap();
    let store = engram::store::ScyllaStore::connect(&config, runtime.handle().clone()).unwrap();
    (config, store)
}

/// Every output event past `from` (end offsets per output topic, 2
/// partitions each): event id → the payloads it came with (without the
/// run's measured `duration_ms`, which is a timing, not a decision).
fn outputs_since(
    broker: &Broker,
    from: &BTreeMap<String, Vec<i64>>,
) -> BTreeMap<String, BTreeSet<String>> {
    let mut found: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for topic in OUTPUT_TOPICS {
        let ends = broker.end_offsets(topic, 2);
        let count: i64 = ends.iter().sum();
        for message in broker.read_all(topic, 2, count as usize, Duration::from_secs(60)) {
            if message.offset < from.get(topic).map_or(0, |o| o[message.partition as usize]) {
                continue;
            }
            let mut payload: serde_json::Value = serde_json::from_slice(&message.payload).unwrap();
            if let Some(object) = payload.as_object_mut() {
                object.remove("duration_ms");
            }
            let id = payload["event_id"].as_str().unwrap().to_owned();
            found.entry(id).or_default().insert(payload.to_string());
        }
    }
    found
}

fn output_ends(broker: &Broker) -> BTreeMap<String, Vec<i64>> {
    OUTPUT_TOPICS
        .iter()
        .map(|topic| ((*topic).to_owned(), broker.end_offsets(topic, 2)))
        .collect()
}

/// 50,000 mixed events (creations with their embeddings, reads, executed
/// consolidation requests) of 40 users on 4 partitions.
fn mixed_workload() -> Vec<Event> {
    let (events, _) = workload(40, 50, 24);
    let mut mixed = Vec::with_capacity(events.len() + 200);
    for event in events {
        let request = match &event {
            Event::MemoryCreated(created) if created.memory_id.ends_with('9') => {
                Some(ConsolidationRequested {
                    event_id: format!("req-{}-{}", created.user_id, created.memory_id),
                    user_id: created.user_id.clone(),
                    requested_at: created.created_at,
                    execute: Some(true),
                    reason: None,
                })
            }
            _ => None,
        };
        mixed.push(event);
        mixed.extend(request.map(Event::ConsolidationRequested));
    }
    mixed
}

#[test]
fn two_instances_sharing_one_cql_keyspace_survive_a_kill_and_end_as_one_clean_run() {
    let broker = Broker::start();
    create_all_topics(&broker, 4);
    let events = mixed_workload();
    assert!(events.len() >= 50_000, "{}", events.len());
    let positions = broker.produce(INPUT, &keyed(&events, WireFormat::Json));
    let expected = BTreeMap::from([(INPUT.to_owned(), ends(&positions, 4))]);
    let dir = tempfile::tempdir().unwrap();

    // One instance, undisturbed: the reference.
    let (clean_config, clean_store) = cql_keyspace();
    let clean = start(
        &broker,
        dir.path(),
        "clean",
        &cql_settings("clean", &clean_config.keyspace),
    );
    broker.wait_committed("clean", &expected, Duration::from_secs(600));
    clean.stop();
    let clean_dump = dump(&clean_store).unwrap();
    let clean_outputs = outputs_since(&broker, &BTreeMap::new());
    let after_clean = output_ends(&broker);

    // Two instances in one group on one keyspace; one is SIGKILLed
    // mid-stream and the other takes its partitions.
    let (pair_config, pair_store) = cql_keyspace();
    let settings = cql_settings("pair", &pair_config.keyspace);
    let first = start(&broker, dir.path(), "first", &settings);
    let second = start(&broker, dir.path(), "second", &settings);
    let total: i64 = expected[INPUT].iter().sum();
    let at_kill = poll_until(WAIT, Duration::from_millis(50), || {
        let committed: i64 = broker
            .committed("pair", INPUT, 4)
            .iter()
            .map(|&c| c.max(0))
            .sum();
        let both = first.assigned().is_some_and(|p| !p.is_empty())
            && second.assigned().is_some_and(|p| !p.is_empty());
        (both && committed > total / 4)
            .then_some(committed)
            .ok_or(format!("{committed} of {total} committed"))
    });
    first.kill();
    assert!(at_kill < total, "killed mid-stream ({at_kill} of {total})");
    broker.wait_committed("pair", &expected, Duration::from_secs(600));
    assert_eq!(
        second.assigned().map(|p| p.len()),
        Some(4),
        "the survivor took over"
    );
    second.stop();
    assert_eq!(
        broker.committed("pair", INPUT, 4),
        broker.end_offsets(INPUT, 4),
        "lag ends at 0"
    );

    let pair_dump = dump(&pair_store).unwrap();
    assert!(
        pair_dump == clean_dump,
        "the pair's state is the clean run's; first difference at {}",
        first_difference(&clean_dump, &pair_dump, String::new())
    );
    let pair_outputs = outputs_since(&broker, &after_clean);
    let missing: Vec<&String> = clean_outputs
        .keys()
        .filter(|id| !pair_outputs.contains_key(*id))
        .collect();
    assert!(missing.is_empty(), "output events lost: {missing:?}");
    let differing: Vec<(&String, &BTreeSet<String>)> = pair_outputs
        .iter()
        .filter(|(_, payloads)| payloads.len() > 1)
        .collect();
    assert!(differing.is_empty(), "one id, two payloads: {differing:?}");
    let runs = |outputs: &BTreeMap<String, BTreeSet<String>>| -> BTreeSet<String> {
        outputs
            .values()
            .flatten()
            .filter_map(|payload| {
                let event: serde_json::Value = serde_json::from_str(payload).ok()?;
                (event["type"] == "consolidation.completed")
                    .then(|| event["run_id"].as_str().map(str::to_owned))?
            })
            .collect()
    };
    let clean_runs = runs(&clean_outputs);
    assert!(clean_runs.len() > 40, "runs: {}", clean_runs.len());
    assert_eq!(runs(&pair_outputs), clean_runs, "no consolidation run lost");
    eprintln!(
        "two instances on one keyspace: {} events, {at_kill} committed at the kill, \
         {} output event ids, {} runs",
        events.len(),
        clean_outputs.len(),
        clean_runs.len()
    );
    for config in [clean_config, pair_config] {
        engram::store::drop_keyspace(&config, common::runtime().handle()).unwrap();
    }
}

/// Input topics are co-partitioned by user id only if they have the same
/// number of partitions: otherwise one user's creations and reads arrive
/// on different partition numbers, and a second writer or a dead letter
/// as `wrong_partition` follows. engram refuses such topics at start, and
/// stops when an operator grows one input topic while it runs.
#[test]
fn input_topics_with_different_partition_counts_are_refused() {
    let broker = Broker::start();
    let dir = tempfile::tempdir().unwrap();
    broker.create_topics(&["memory.created", "consolidation.requested"], 2);
    broker.create_topics(&["memory.accessed"], 3);
    let settings = [
        ("ENGRAM_KAFKA_CREATE_TOPICS", "true"),
        ("ENGRAM_KAFKA_TOPIC_PARTITIONS", "2"),
    ];
    // engram stops with an error naming the count that differs.
    let refused = |engram: Engram, count: &str| {
        let (status, log) = engram.wait_exit(WAIT);
        assert!(!status.success(), "{log}");
        assert!(
            log.contains("co-partitioned") && log.contains(count),
            "{log}"
        );
    };
    let engram = Engram::start(
        &broker,
        &dir.path().join("state"),
        dir.path().join("start.log"),
        &settings,
    );
    refused(engram, "`memory.accessed` has 3");

    // Same partition counts on other topics: it runs, until one grows.
    let names = ["b.created", "b.accessed", "b.requested"];
    broker.create_topics(&names, 2);
    let mut settings = settings.to_vec();
    settings.extend([
        ("ENGRAM_KAFKA_TOPIC_MEMORY_CREATED", "b.created"),
        ("ENGRAM_KAFKA_TOPIC_MEMORY_ACCESSED", "b.accessed"),
        ("ENGRAM_KAFKA_TOPIC_CONSOLIDATION_REQUESTED", "b.requested"),
    ]);
    let engram = Engram::start(
        &broker,
        &dir.path().join("state"),
        dir.path().join("grown.log"),
        &settings,
    );
    engram.wait_assigned(WAIT);
    broker.add_partitions("b.accessed", 4);
    refused(engram, "`b.accessed` has 4");
}

/// Damages the compressed records of the batch at `base_offset` in a
/// segment file (record batch format v2), leaving its header intact: the
/// broker serves it as stored, and the client cannot decompress it.
fn damage_compressed_batch(segment: &std::path::Path, base_offset: i64) {
    let mut bytes = std::fs::read(segment).unwrap();
    let mut position = 0;
    while position + 61 <= bytes.len() {
        let at = |from: usize, n: usize| bytes[position + from..position + from + n].to_vec();
        let base = i64::from_be_bytes(at(0, 8).try_into().unwrap());
        let length = i32::from_be_bytes(at(8, 4).try_into().unwrap()) as usize;
        let attributes = u16::from_be_bytes(at(21, 2).try_into().unwrap());
        let end = position + 12 + length;
        if base == base_offset {
            assert_ne!(attributes & 0x7, 0, "the batch is compressed");
            // Past the gzip header, up to its trailer: the deflate stream.
            for byte in &mut bytes[position + 61 + 12..end - 8] {
                *byte = 0xA5;
            }
            std::fs::write(segment, &bytes).unwrap();
            return;
        }
        position = end;
    }
    panic!("no batch at offset {base_offset} in {}", segment.display());
}

/// A batch the client cannot read (compressed bytes damaged on the
/// broker's disk, which Kafka serves as stored) arrives as a consumer error
/// without its records, and librdkafka moves on past it. engram must not
/// commit past it with nothing but a log line: what it could not read goes
/// to the dead-letter topic, with its offsets.
#[test]
fn a_batch_the_client_cannot_read_is_dead_lettered() {
    let broker = Broker::start();
    let dir = tempfile::tempdir().unwrap();
    broker.create_topics(
        &[
            "memory.created",
            "memory.accessed",
            "consolidation.requested",
        ],
        1,
    );
    let event = |memory: &str, second| {
        keyed(
            &[Event::MemoryCreated(created("u", memory, "text", second))],
            WireFormat::Json,
        )
    };
    broker.produce("memory.created", &event("m0", 0));
    broker.produce_with(
        "memory.created",
        &event("m1", 1),
        &[("compression.type", "gzip")],
    );
    broker.produce("memory.created", &event("m2", 2));
    damage_compressed_batch(&broker.segment_file("memory.created", 0), 1);

    let engram = engram_on_one_partition(&broker, dir.path(), &[]);
    broker.wait_committed("engram", &targets(&[("memory.created", vec![3])]), WAIT);
    let letters = broker.read_all("engram.dlq", 1, 1, Duration::from_secs(20));
    assert_eq!(letters.len(), 1, "log:\n{}", engram.log_text());
    let letter: serde_json::Value = serde_json::from_slice(&letters[0].payload).unwrap();
    assert_eq!(letter["error_kind"], "unreadable", "{letter}");
    assert_eq!(letter["offset"], 1, "{letter}");
    assert_eq!(letter["source_topic"], "memory.created", "{letter}");
    engram.stop();
}
