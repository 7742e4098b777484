//! Erasing one user of 100,000 memories (`user.erased` through the
//! pipeline), on the embedded store and on a live CQL database (Apache
//! Cassandra 5 with ScyllaDB's limits, tests/common/cql.rs): how long the
//! erasure takes, and that nothing of the user is left while another user
//! stays whole. `cargo bench --bench erase [-- --memories N]`.

mod common;

use std::io::Cursor;
use std::time::Instant;

use engram::clock::{Clock, ClockMode};
use engram::cycle::CycleSettings;
use engram::emit::JsonLinesSink;
use engram::event::{Event, EventCodec, Limits, UserErased};
use engram::model::{Link, LinkType, Memory, MemoryKind, MemoryStatus, RunReport, UserState};
use engram::pipeline::Pipeline;
use engram::salience::SalienceState;
use engram::source::LineSource;
use engram::store::{EmbeddedStore, ScyllaStore, Store, Write, WriteBatch};

const BIG: &str = "erase-me";
const OTHER: &str = "stays";
const CHUNK: usize = 2_000;

fn memory(user: &str, index: usize) -> Memory {
    let content = format!("Memory {index} of the user: a fact with a few words, number {index}.");
    // A deterministic unit-ish vector: what matters is its size.
    let embedding: Vec<f32> = (0..384)
        .map(|k| ((index * 31 + k * 7) % 97) as f32 / 97.0 - 0.5)
        .collect();
    Memory {
        user_id: user.into(),
        id: format!("m{index:06}"),
        kind: MemoryKind::Semantic,
        category: Some("fact".into()),
        tags: vec!["bench".into()],
        content_hash: engram::text::content_hash(&content),
        content,
        importance: 0.5,
        source: None,
        embedding: Some(embedding),
        status: MemoryStatus::Active,
        salience: SalienceState::new(index as i64 * 1_000),
        merged_from: Vec::new(),
        derived_from: Vec::new(),
        last_run_id: None,
        updated_at: None,
    }
}

/// `count` memories of `user`, a link per ten, a report per thousand and
/// the user's state, committed in chunks.
fn fill(store: &dyn Store, user: &str, count: usize) {
    let mut state = UserState::new(user);
    state.mark_applied("memory.created/0", count as i64);
    for start in (0..count).step_by(CHUNK) {
        let mut batch = WriteBatch::default();
        for index in start..(start + CHUNK).min(count) {
            batch.push(Write::PutMemory(memory(user, index)));
            if index % 10 == 9 {
                batch.push(Write::PutLink(Link {
                    user_id: user.into(),
                    from_id: format!("m{index:06}"),
                    to_id: format!("m{:06}", index - 1),
                    link_type: LinkType::Related,
                    confidence: 0.9,
                    reason: "bench".into(),
                    created_at: index as i64,
                    run_id: None,
                }));
            }
            if index % 1_000 == 999 {
                batch.push(Write::PutRunReport(RunReport {
                    user_id: user.into(),
                    run_id: format!("{user}-run-{index}"),
                    started_at: index as i64,
                    report: serde_json::json!({"actions": [format!("merged m{index:06}")]}),
                }));
            }
        }
        batch.push(Write::PutUserState(state.clone()));
        store.commit(&batch).expect("fill the store");
    }
}

/// Seconds the pipeline takes to apply one `user.erased` of `user`.
fn erase(store: &dyn Store, user: &str) -> f64 {
    let codec = EventCodec::new(Limits::default()).expect("schemas");
    let event = Event::UserErased(UserErased {
        event_id: format!("erase-{user}"),
        user_id: user.into(),
        erased_at: chrono::Utc::now(),
    });
    let mut line = codec.encode_json(&event);
    line.push(b'\n');
    let mut out = Vec::new();
    let mut sink = JsonLinesSink::new(&codec, Box::new(&mut out), None);
    let mut source = LineSource::new(Cursor::new(line), "erasures", 1 << 20);
    let mut pipeline = Pipeline::new(
        &codec,
        store,
        CycleSettings::default(),
        100,
        Clock::new(ClockMode::Stream, true),
    );
    let started = Instant::now();
    let summary = pipeline.run(&mut source, &mut sink).expect("erase");
    let seconds = started.elapsed().as_secs_f64();
    assert_eq!(summary.applied.get("user.erased"), Some(&1), "{summary}");
    seconds
}

/// Fills, erases and checks one store; prints one row.
fn measure(name: &str, store: &dyn Store, count: usize) {
    let started = Instant::now();
    fill(store, BIG, count);
    fill(store, OTHER, 100);
    let filled = started.elapsed().as_secs_f64();
    let seconds = erase(store, BIG);
    assert!(
        store.memories(BIG).expect("read").is_empty(),
        "{name}: memories left"
    );
    assert!(
        store.links(BIG).expect("read").is_empty(),
        "{name}: links left"
    );
    assert!(
        store.run_reports(BIG).expect("read").is_empty(),
        "{name}: reports left"
    );
    assert!(
        store.user_state(BIG).expect("read").is_none(),
        "{name}: state left"
    );
    assert!(
        store.erased_at(BIG).expect("read").is_some(),
        "{name}: no tombstone"
    );
    assert_eq!(
        store.memories(OTHER).expect("read").len(),
        100,
        "{name}: other user"
    );
    println!(
        "| {name} | {count} | {:.1} s | {:.3} s | {:.1} µs |",
        filled,
        seconds,
        seconds * 1e6 / count as f64
    );
}

fn main() {
    if !common::started_by_cargo_bench() {
        return;
    }
    let args: Vec<String> = std::env::args().collect();
    let count = args
        .iter()
        .position(|a| a == "--memories")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    println!("erasing one user (user.erased through the pipeline); another user stays");
    println!("| store | memories | fill | erase | per memory |");
    println!("|---|---|---|---|---|");
    let dir = tempfile::tempdir().expect("temp dir");
    let embedded = EmbeddedStore::open(dir.path()).expect("embedded store");
    measure("embedded (SQLite, secure_delete)", &embedded, count);
    drop(embedded);

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let config = common::cql::node().fresh_keyspace();
    engram::store::migrate(&config, runtime.handle(), Box::new(|| {})).expect("migrate");
    let cql = ScyllaStore::connect(&config, runtime.handle().clone()).expect("connect");
    measure("CQL (Cassandra 5.0.6, ScyllaDB limits)", &cql, count);
    drop(cql);
    let _ = engram::store::drop_keyspace(&config, runtime.handle());
}
