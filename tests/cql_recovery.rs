//! The ScyllaDB store when the database itself dies mid-commit: the live
//! Apache Cassandra node (tests/common/cql.rs) is SIGKILLed while a commit's
//! journal is sealed and its batches are landing, then restarted on the
//! same data. A test binary of its own: the node goes down under it, which
//! would fail other tests sharing it. The node syncs its commit log before
//! it acknowledges a write: one node killed with the default periodic sync
//! loses what it acknowledged in the last 10 s (seen here: the seal and the
//! state row were gone after the restart), which on a cluster the other
//! replicas keep.

use std::time::{Duration, Instant};

use engram::config::ScyllaConfig;
use engram::model::*;
use engram::salience::SalienceState;
use engram::store::{ScyllaStore, Store, Write, WriteBatch};

mod common;

fn config() -> ScyllaConfig {
    ScyllaConfig {
        // Many batches: the commit below is journaled and takes a while to
        // apply, long enough to kill the node in the middle of it.
        max_batch_bytes: 16 * 1024,
        ..common::cql::node_syncing_every_write().fresh_keyspace()
    }
}

fn memory(id: usize, status: MemoryStatus) -> Memory {
    Memory {
        user_id: "u1".into(),
        id: format!("m{id:05}"),
        kind: MemoryKind::Episodic,
        category: None,
        tags: vec![],
        content: format!("memory {id}"),
        importance: 0.5,
        source: None,
        content_hash: engram::text::content_hash(&id.to_string()),
        embedding: Some(vec![0.25; 384]),
        status,
        salience: SalienceState::new(id as i64),
        merged_from: vec![],
        derived_from: vec![],
        last_run_id: None,
        updated_at: None,
    }
}

/// Whether the user's state row holds a sealed journal now.
async fn sealed(session: &scylla::client::session::Session, keyspace: &str) -> bool {
    let query = format!("SELECT journal_id FROM {keyspace}.user_state WHERE user_id = 'u1'");
    let Ok(result) = session.query_unpaged(query, ()).await else {
        return false;
    };
    let Ok(rows) = result.into_rows_result() else {
        return false;
    };
    rows.maybe_first_row::<(Option<i64>,)>()
        .ok()
        .flatten()
        .is_some_and(|(journal,)| journal.is_some())
}

#[test]
fn a_commit_cut_by_the_database_dying_lands_whole_after_its_restart() {
    const COUNT: usize = 3_000;
    let node = common::cql::node_syncing_every_write();
    if !node.is_ours() {
        eprintln!("cql_recovery: SCYLLA_NODES names a cluster this test cannot restart");
        return;
    }
    let runtime = common::runtime();
    let config = config();
    engram::store::migrate(&config, runtime.handle(), Box::new(|| {})).unwrap();
    let store = ScyllaStore::connect(&config, runtime.handle().clone()).unwrap();
    let created: Vec<Write> = (0..COUNT)
        .map(|i| Write::PutMemory(memory(i, MemoryStatus::Active)))
        .collect();
    for chunk in created.chunks(500) {
        store
            .commit(&WriteBatch {
                writes: chunk.to_vec(),
            })
            .unwrap();
    }
    let mut state = UserState::new("u1");
    state.mark_applied("memory.created/0", COUNT as i64);
    let mut archive: Vec<Write> = (0..COUNT)
        .map(|i| Write::PutMemory(memory(i, MemoryStatus::Archived)))
        .collect();
    archive.push(Write::PutUserState(state.clone()));

    // Watch for the seal from a session of our own, and kill the node as
    // soon as it is there: the journal is durable, its batches are not all.
    let watcher = runtime
        .block_on(
            scylla::client::session_builder::SessionBuilder::new()
                .known_node(&node.contact_point)
                .build(),
        )
        .unwrap();
    let committing = std::thread::spawn(move || {
        let outcome = store.commit(&WriteBatch { writes: archive });
        (store, outcome)
    });
    let deadline = Instant::now() + Duration::from_secs(120);
    while !runtime.block_on(sealed(&watcher, &config.keyspace)) {
        assert!(
            !committing.is_finished(),
            "the commit ended before its seal was seen"
        );
        assert!(Instant::now() < deadline, "no seal within 120 s");
        std::thread::sleep(Duration::from_millis(2));
    }
    drop(watcher);
    let restarted_in = node.crash_and_restart().unwrap();
    eprintln!("Cassandra restarted in {:.1} s", restarted_in.as_secs_f64());
    // The cut commit either failed (the node was gone past its retries) or
    // finished against the restarted node; neither may leave half of it.
    let (_old, outcome) = committing.join().unwrap();
    eprintln!("the cut commit returned {outcome:?}");

    let reopened = ScyllaStore::connect(&config, runtime.handle().clone()).unwrap();
    // A worker reads a user's state before anything else of the user; that
    // read rolls a sealed commit forward.
    assert_eq!(reopened.user_state("u1").unwrap(), Some(state));
    let memories = reopened.memories("u1").unwrap();
    assert_eq!(memories.len(), COUNT);
    let archived = memories
        .iter()
        .filter(|m| m.status == MemoryStatus::Archived)
        .count();
    assert_eq!(
        archived, COUNT,
        "the sealed commit was rolled forward whole"
    );
    engram::store::drop_keyspace(&config, runtime.handle()).unwrap();
}
