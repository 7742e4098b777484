//! One conformance suite for every `Store` implementation. The embedded store
//! runs it, and the ScyllaDB store runs it against a live CQL database: the
//! cluster `SCYLLA_NODES` names (`make test-scylla`), else an Apache
//! Cassandra node started for this binary with ScyllaDB's limits
//! (tests/common/cql.rs); each test in a keyspace of its own that is dropped
//! afterwards. Other stores add a factory and one `store_suite!` line.

use std::any::Any;

use engram::config::ScyllaConfig;
use engram::model::*;
use engram::salience::SalienceState;
use engram::store::{EmbeddedStore, ScyllaStore, Store, StoreError, Write, WriteBatch};

mod common;

/// A store under test plus whatever must live as long as it (e.g. a temp dir).
pub struct Handle {
    pub store: Box<dyn Store>,
    _guard: Box<dyn Any>,
}

fn embedded() -> Handle {
    let dir = tempfile::tempdir().unwrap();
    let store = EmbeddedStore::open(dir.path()).unwrap();
    Handle {
        store: Box::new(store),
        _guard: Box::new(dir),
    }
}

/// The live database's settings for a fresh keyspace: the cluster
/// `SCYLLA_NODES` names, else the Apache Cassandra node this binary starts
/// (tests/common/cql.rs). Never skipped.
fn scylla_config() -> ScyllaConfig {
    ScyllaConfig {
        // Small enough that the big-flush test takes the split path and the
        // 5,000-memory cycle goes through the journal in many batches.
        max_batch_bytes: 64 * 1024,
        ..common::cql::node().fresh_keyspace()
    }
}

/// Drops the test keyspace when the test ends.
struct Keyspace(ScyllaConfig);

impl Drop for Keyspace {
    fn drop(&mut self) {
        if let Err(error) = engram::store::drop_keyspace(&self.0, common::runtime().handle()) {
            eprintln!("could not drop test keyspace {}: {error}", self.0.keyspace);
        }
    }
}

fn scylla() -> Handle {
    let config = scylla_config();
    engram::store::migrate(&config, common::runtime().handle(), Box::new(|| {})).unwrap();
    let store = ScyllaStore::connect(&config, common::runtime().handle().clone()).unwrap();
    Handle {
        store: Box::new(store),
        _guard: Box::new(Keyspace(config)),
    }
}

fn memory(user: &str, id: &str, created_at: Millis) -> Memory {
    Memory {
        user_id: user.into(),
        id: id.into(),
        kind: MemoryKind::Episodic,
        category: Some("fact".into()),
        tags: vec!["a".into(), "b".into()],
        content: format!("memory {id} of {user}"),
        importance: 0.25,
        source: Some("chat".into()),
        content_hash: engram::text::content_hash(id),
        embedding: Some(vec![0.5, -0.25, 1.0e-7, f32::MIN_POSITIVE]),
        status: MemoryStatus::Active,
        salience: SalienceState::new(created_at),
        merged_from: vec!["x".into()],
        derived_from: vec![],
        last_run_id: Some("run".into()),
        updated_at: None,
    }
}

fn link(user: &str, from: &str, to: &str, link_type: LinkType) -> Link {
    Link {
        user_id: user.into(),
        from_id: from.into(),
        to_id: to.into(),
        link_type,
        confidence: 0.9,
        reason: "because".into(),
        created_at: 5,
        run_id: Some("run".into()),
    }
}

fn commit(store: &dyn Store, writes: Vec<Write>) -> Result<(), StoreError> {
    store.commit(&WriteBatch { writes })
}

pub fn memories_round_trip_every_field(store: &dyn Store) {
    let mut m = memory("u1", "m1", 1_000);
    m.salience.record_access(2_000);
    m.salience.record_access(3_000);
    m.salience.record_access(4_000);
    m.status = MemoryStatus::Superseded;
    m.kind = MemoryKind::Procedural;
    commit(store, vec![Write::PutMemory(m.clone())]).unwrap();
    assert_eq!(store.memory("u1", "m1").unwrap(), Some(m.clone()));
    assert_eq!(store.memory("u1", "missing").unwrap(), None);
    assert_eq!(store.memory("u2", "m1").unwrap(), None, "ids are per user");
    let mut no_embedding = memory("u1", "m2", 1_000);
    no_embedding.embedding = None;
    no_embedding.category = None;
    commit(store, vec![Write::PutMemory(no_embedding.clone())]).unwrap();
    assert_eq!(store.memory("u1", "m2").unwrap(), Some(no_embedding));
}

pub fn memories_are_ordered_by_creation_then_id(store: &dyn Store) {
    let writes = [("c", 5), ("a", 9), ("b", 5), ("d", 1)]
        .into_iter()
        .map(|(id, t)| Write::PutMemory(memory("u1", id, t)))
        .collect();
    commit(store, writes).unwrap();
    commit(store, vec![Write::PutMemory(memory("u2", "z", 0))]).unwrap();
    let ids: Vec<_> = store
        .memories("u1")
        .unwrap()
        .into_iter()
        .map(|m| m.id)
        .collect();
    assert_eq!(ids, ["d", "b", "c", "a"]);
    assert_eq!(store.users().unwrap(), ["u1", "u2"]);
}

pub fn put_memory_is_an_upsert(store: &dyn Store) {
    let mut m = memory("u1", "m1", 10);
    commit(store, vec![Write::PutMemory(m.clone())]).unwrap();
    m.content = "changed".into();
    m.tags = vec![];
    commit(
        store,
        vec![Write::PutMemory(m.clone()), Write::PutMemory(m.clone())],
    )
    .unwrap();
    assert_eq!(store.memories("u1").unwrap(), vec![m]);
}

pub fn put_salience_changes_only_salience(store: &dyn Store) {
    let m = memory("u1", "m1", 10);
    commit(store, vec![Write::PutMemory(m.clone())]).unwrap();
    let mut salience = m.salience.clone();
    salience.record_access(20);
    commit(
        store,
        vec![Write::PutSalience {
            user_id: "u1".into(),
            memory_id: "m1".into(),
            salience: salience.clone(),
        }],
    )
    .unwrap();
    let stored = store.memory("u1", "m1").unwrap().unwrap();
    assert_eq!(stored.salience, salience);
    assert_eq!(
        Memory {
            salience: m.salience.clone(),
            ..stored
        },
        m
    );
}

/// A status write changes the status and the run that set it, and nothing
/// else of the memory; one for a memory that is not there fails the batch.
pub fn put_status_changes_only_the_status(store: &dyn Store) {
    let m = memory("u1", "m1", 10);
    commit(store, vec![Write::PutMemory(m.clone())]).unwrap();
    commit(
        store,
        vec![Write::PutStatus {
            user_id: "u1".into(),
            memory_id: "m1".into(),
            status: MemoryStatus::Archived,
            last_run_id: Some("run-2".into()),
        }],
    )
    .unwrap();
    let stored = store.memory("u1", "m1").unwrap().unwrap();
    assert_eq!(
        stored,
        Memory {
            status: MemoryStatus::Archived,
            last_run_id: Some("run-2".into()),
            ..m.clone()
        }
    );
    let before = engram::store::dump(store).unwrap();
    let missing = commit(
        store,
        vec![
            Write::PutStatus {
                user_id: "u1".into(),
                memory_id: "m1".into(),
                status: MemoryStatus::Active,
                last_run_id: None,
            },
            Write::PutStatus {
                user_id: "u1".into(),
                memory_id: "ghost".into(),
                status: MemoryStatus::Archived,
                last_run_id: None,
            },
        ],
    );
    assert!(
        matches!(missing, Err(StoreError::MissingMemory { .. })),
        "{missing:?}"
    );
    assert_eq!(engram::store::dump(store).unwrap(), before);
    assert_eq!(store.memory("u1", "ghost").unwrap(), None);
}

pub fn a_failing_batch_changes_nothing(store: &dyn Store) {
    commit(store, vec![Write::PutMemory(memory("u1", "keep", 1))]).unwrap();
    let before = engram::store::dump(store).unwrap();
    let result = commit(
        store,
        vec![
            Write::PutMemory(memory("u1", "new", 2)),
            Write::PutLink(link("u1", "keep", "new", LinkType::Related)),
            Write::PutUserState(UserState::new("u1")),
            Write::PutSalience {
                user_id: "u1".into(),
                memory_id: "ghost".into(),
                salience: SalienceState::new(3),
            },
        ],
    );
    assert!(
        matches!(result, Err(StoreError::MissingMemory { .. })),
        "{result:?}"
    );
    assert_eq!(
        engram::store::dump(store).unwrap(),
        before,
        "nothing of the batch is visible"
    );
}

pub fn links_are_reachable_from_both_ends(store: &dyn Store) {
    commit(
        store,
        vec![
            Write::PutLink(link("u1", "a", "b", LinkType::Supersedes)),
            Write::PutLink(link("u1", "c", "a", LinkType::Contradicts)),
            Write::PutLink(link("u1", "a", "b", LinkType::Related)),
            Write::PutLink(link("u2", "a", "b", LinkType::Related)),
        ],
    )
    .unwrap();
    let mut of_a: Vec<_> = store
        .links_of("u1", "a")
        .unwrap()
        .into_iter()
        .map(|l| (l.from_id, l.to_id, l.link_type))
        .collect();
    of_a.sort();
    let mut expected = vec![
        ("a".to_owned(), "b".to_owned(), LinkType::Supersedes),
        ("a".to_owned(), "b".to_owned(), LinkType::Related),
        ("c".to_owned(), "a".to_owned(), LinkType::Contradicts),
    ];
    expected.sort();
    assert_eq!(of_a, expected);
    assert_eq!(
        store.links_of("u1", "b").unwrap().len(),
        2,
        "incoming links too"
    );
    assert_eq!(store.links("u1").unwrap().len(), 3);
    assert_eq!(
        store.links("u2").unwrap(),
        vec![link("u2", "a", "b", LinkType::Related)]
    );
    commit(
        store,
        vec![Write::DeleteLink {
            user_id: "u1".into(),
            from_id: "a".into(),
            to_id: "b".into(),
            link_type: LinkType::Supersedes,
        }],
    )
    .unwrap();
    assert_eq!(store.links_of("u1", "b").unwrap().len(), 1);
    assert!(
        store
            .links_of("u1", "a")
            .unwrap()
            .iter()
            .all(|l| l.link_type != LinkType::Supersedes)
    );
}

pub fn user_state_and_watermarks_round_trip(store: &dyn Store) {
    assert_eq!(store.user_state("u1").unwrap(), None);
    let mut state = UserState::new("u1");
    state.mark_applied("memory.created/0", 41);
    state.mark_applied("memory.created/0", 7);
    state.mark_applied("memory.accessed/3", 9);
    state.new_since_cycle = 12;
    state.last_cycle_at = Some(99);
    state.last_run_id = Some("run-1".into());
    state.duplicate_candidates = 3;
    state.cycle = CycleState {
        tokens: 1234,
        tier: Tier::Selective,
        changed_since: Some(77),
        pending_runs: vec![PendingRun {
            run_id: "run-2".into(),
            trigger: engram::event::TriggerReason::Threshold,
            mode: engram::event::RunMode::Execute,
            now: 100,
        }],
    };
    state.parked_reads = vec![ParkedRead {
        read: engram::event::MemoryAccessed {
            event_id: "read-1".into(),
            user_id: "u1".into(),
            memory_id: "not-yet".into(),
            accessed_at: chrono::DateTime::from_timestamp_millis(1_234).unwrap(),
            context: Some("a question".into()),
        },
        stream: "memory.accessed".into(),
        partition: Some(3),
        offset: 9,
        parked_at: 1_500,
        parked_wall_at: Some(2_000),
    }];
    commit(store, vec![Write::PutUserState(state.clone())]).unwrap();
    let stored = store.user_state("u1").unwrap().unwrap();
    assert_eq!(stored, state);
    assert!(stored.already_applied("memory.created/0", 41));
    assert!(!stored.already_applied("memory.created/0", 42));
    assert!(!stored.already_applied("memory.created/1", 0));
    state.applied_offsets.remove("memory.accessed/3");
    commit(store, vec![Write::PutUserState(state.clone())]).unwrap();
    assert_eq!(
        store.user_state("u1").unwrap().unwrap(),
        state,
        "a put replaces the watermarks"
    );
    assert_eq!(store.users().unwrap(), ["u1"]);
}

pub fn run_reports_round_trip_in_time_order(store: &dyn Store) {
    let report = |run: &str, t| RunReport {
        user_id: "u1".into(),
        run_id: run.into(),
        started_at: t,
        report: serde_json::json!({ "run_id": run, "counts": { "archived": 1 } }),
    };
    commit(
        store,
        vec![
            Write::PutRunReport(report("r2", 20)),
            Write::PutRunReport(report("r1", 10)),
        ],
    )
    .unwrap();
    assert_eq!(
        store.run_report("u1", "r1").unwrap(),
        Some(report("r1", 10))
    );
    assert_eq!(store.run_report("u2", "r1").unwrap(), None);
    let runs: Vec<_> = store
        .run_reports("u1")
        .unwrap()
        .into_iter()
        .map(|r| r.run_id)
        .collect();
    assert_eq!(runs, ["r1", "r2"]);
    assert_eq!(store.find_run_report("r2").unwrap(), Some(report("r2", 20)));
    assert_eq!(store.find_run_report("r3").unwrap(), None);
}

pub fn delete_memory_removes_it_and_its_links(store: &dyn Store) {
    commit(
        store,
        vec![
            Write::PutMemory(memory("u1", "m1", 1)),
            Write::PutMemory(memory("u1", "m2", 2)),
            Write::PutMemory(memory("u1", "m3", 3)),
            Write::PutLink(link("u1", "m1", "m2", LinkType::Related)),
            Write::PutLink(link("u1", "m3", "m1", LinkType::SplitFrom)),
            Write::PutLink(link("u1", "m2", "m3", LinkType::Related)),
        ],
    )
    .unwrap();
    commit(
        store,
        vec![Write::DeleteMemory {
            user_id: "u1".into(),
            memory_id: "m1".into(),
        }],
    )
    .unwrap();
    assert_eq!(store.memory("u1", "m1").unwrap(), None);
    let ids: Vec<_> = store
        .memories("u1")
        .unwrap()
        .into_iter()
        .map(|m| m.id)
        .collect();
    assert_eq!(ids, ["m2", "m3"]);
    let links = store.links("u1").unwrap();
    assert_eq!(links, vec![link("u1", "m2", "m3", LinkType::Related)]);
}

/// Erasure removes every row of the user, whatever kind, leaves the
/// others, keeps the latest erasure time, and lets later writes of the
/// same batch start the user afresh.
pub fn erase_user_removes_every_row_and_keeps_a_tombstone(store: &dyn Store) {
    let mut state = UserState::new("u1");
    state.mark_applied("memory.created/3", 9);
    state.cycle.changed_since = Some(1);
    let mut edited = memory("u1", "m1", 1);
    edited.updated_at = Some(7);
    let report = RunReport {
        user_id: "u1".into(),
        run_id: "run-u1".into(),
        started_at: 5,
        report: serde_json::json!({"actions": ["secret words"]}),
    };
    commit(
        store,
        vec![
            Write::PutMemory(edited.clone()),
            Write::PutMemory(memory("u1", "m2", 2)),
            Write::PutLink(link("u1", "m1", "m2", LinkType::Related)),
            Write::PutUserState(state),
            Write::PutRunReport(report),
            Write::PutMemory(memory("u2", "m1", 1)),
            Write::PutUserState(UserState::new("u2")),
        ],
    )
    .unwrap();
    assert_eq!(
        store.memory("u1", "m1").unwrap(),
        Some(edited),
        "update time round trip"
    );
    assert_eq!(store.erased_at("u1").unwrap(), None);
    assert_eq!(
        store.waiting_users(&["memory.created/3".into()]).unwrap(),
        ["u1"]
    );
    let mut back = memory("u1", "m9", 50);
    back.content_hash = "h-new".into();
    commit(
        store,
        vec![
            Write::EraseUser {
                user_id: "u1".into(),
                erased_at: 40,
            },
            Write::PutMemory(back.clone()),
        ],
    )
    .unwrap();
    assert_eq!(
        store.memories("u1").unwrap(),
        vec![back],
        "only what came after"
    );
    assert!(store.links("u1").unwrap().is_empty());
    assert!(store.run_reports("u1").unwrap().is_empty());
    assert_eq!(store.find_run_report("run-u1").unwrap(), None);
    assert_eq!(store.user_state("u1").unwrap(), None);
    assert!(
        store
            .waiting_users(&["memory.created/3".into()])
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        store
            .embedding_for_hash("u1", &engram::text::content_hash("m1"))
            .unwrap(),
        None
    );
    assert_eq!(store.erased_at("u1").unwrap(), Some(40));
    assert_eq!(
        store.users().unwrap(),
        ["u1", "u2"],
        "u1 is back with m9 only"
    );
    assert!(
        store.memory("u2", "m1").unwrap().is_some(),
        "other users stay"
    );
    // A second erasure of the user: everything goes again, the tombstone
    // keeps the latest time.
    commit(
        store,
        vec![Write::EraseUser {
            user_id: "u1".into(),
            erased_at: 60,
        }],
    )
    .unwrap();
    assert!(store.memories("u1").unwrap().is_empty());
    assert_eq!(store.users().unwrap(), ["u2"]);
    assert_eq!(store.erased_at("u1").unwrap(), Some(60));
    assert_eq!(store.erased_at("never-seen").unwrap(), None);
}

/// The hash entry of a memory's old text goes when its text changes.
pub fn a_forgotten_hash_no_longer_finds_the_memory(store: &dyn Store) {
    let mut m = memory("u1", "m1", 1);
    m.content_hash = "old".into();
    commit(store, vec![Write::PutMemory(m.clone())]).unwrap();
    assert!(store.embedding_for_hash("u1", "old").unwrap().is_some());
    m.content_hash = "new".into();
    commit(
        store,
        vec![
            Write::PutMemory(m),
            Write::ForgetHash {
                user_id: "u1".into(),
                memory_id: "m1".into(),
                content_hash: "old".into(),
            },
        ],
    )
    .unwrap();
    assert_eq!(store.embedding_for_hash("u1", "old").unwrap(), None);
    assert!(store.embedding_for_hash("u1", "new").unwrap().is_some());
}

pub fn embeddings_are_found_by_user_and_content_hash(store: &dyn Store) {
    let mut with_vector = memory("u1", "m1", 1_000);
    with_vector.content_hash = "h1".into();
    with_vector.embedding = Some(vec![0.6, 0.8]);
    let mut without_vector = memory("u1", "m2", 2_000);
    without_vector.content_hash = "h2".into();
    without_vector.embedding = None;
    commit(
        store,
        vec![
            Write::PutMemory(with_vector),
            Write::PutMemory(without_vector),
        ],
    )
    .unwrap();
    assert_eq!(
        store.embedding_for_hash("u1", "h1").unwrap(),
        Some(vec![0.6, 0.8])
    );
    assert_eq!(
        store.embedding_for_hash("u1", "h2").unwrap(),
        None,
        "no vector yet"
    );
    assert_eq!(
        store.embedding_for_hash("u2", "h1").unwrap(),
        None,
        "other users' vectors are not shared"
    );
    assert_eq!(store.embedding_for_hash("u1", "h3").unwrap(), None);
}

pub fn memories_are_read_by_id_in_one_call(store: &dyn Store) {
    commit(
        store,
        vec![
            Write::PutMemory(memory("u1", "a", 1)),
            Write::PutMemory(memory("u1", "b", 2)),
            Write::PutMemory(memory("u2", "a", 3)),
        ],
    )
    .unwrap();
    let mut found = store.memories_by_id("u1", &["b", "a", "ghost"]).unwrap();
    found.sort_by(|x, y| x.id.cmp(&y.id));
    assert_eq!(
        found,
        vec![memory("u1", "a", 1), memory("u1", "b", 2)],
        "only the user's own, only those that exist"
    );
    assert!(store.memories_by_id("u1", &[]).unwrap().is_empty());
    let mut saliences = store.saliences_by_id("u1", &["b", "a", "ghost"]).unwrap();
    saliences.sort_by(|x, y| x.0.cmp(&y.0));
    assert_eq!(
        saliences,
        vec![
            ("a".to_owned(), memory("u1", "a", 1).salience),
            ("b".to_owned(), memory("u1", "b", 2).salience)
        ]
    );
}

pub fn salience_writes_are_what_later_reads_see(store: &dyn Store) {
    commit(store, vec![Write::PutMemory(memory("u1", "a", 1))]).unwrap();
    let mut salience = memory("u1", "a", 1).salience;
    salience.record_access(5_000);
    commit(
        store,
        vec![Write::PutSalience {
            user_id: "u1".to_owned(),
            memory_id: "a".to_owned(),
            salience: salience.clone(),
        }],
    )
    .unwrap();
    assert_eq!(store.memory("u1", "a").unwrap().unwrap().salience, salience);
    assert_eq!(store.memories("u1").unwrap()[0].salience, salience);
    assert_eq!(store.saliences_by_id("u1", &["a"]).unwrap()[0].1, salience);
}

/// A watermark moves only with the effects it marks: a failed flush leaves
/// both where they were, so the replay of those events applies them once.
pub fn watermarks_move_only_with_their_effects(store: &dyn Store) {
    let m = memory("u1", "m1", 1_000);
    let mut read_once = m.salience.clone();
    read_once.record_access(2_000);
    let mut state = UserState::new("u1");
    state.mark_applied("memory.accessed/0", 10);
    commit(
        store,
        vec![
            Write::PutMemory(m.clone()),
            Write::PutSalience {
                user_id: "u1".into(),
                memory_id: "m1".into(),
                salience: read_once.clone(),
            },
            Write::PutUserState(state.clone()),
        ],
    )
    .unwrap();
    let mut read_twice = read_once.clone();
    read_twice.record_access(3_000);
    let mut later = state.clone();
    later.mark_applied("memory.accessed/0", 11);
    let failed = commit(
        store,
        vec![
            Write::PutSalience {
                user_id: "u1".into(),
                memory_id: "m1".into(),
                salience: read_twice.clone(),
            },
            Write::PutUserState(later.clone()),
            Write::PutSalience {
                user_id: "u1".into(),
                memory_id: "ghost".into(),
                salience: SalienceState::new(1),
            },
        ],
    );
    assert!(failed.is_err());
    let stored = store.user_state("u1").unwrap().unwrap();
    assert!(stored.already_applied("memory.accessed/0", 10));
    assert!(
        !stored.already_applied("memory.accessed/0", 11),
        "offset 11 is replayed"
    );
    assert_eq!(
        store.memory("u1", "m1").unwrap().unwrap().salience,
        read_once
    );
    // The replay lands, and a second replay of it is recognised as one.
    commit(
        store,
        vec![
            Write::PutSalience {
                user_id: "u1".into(),
                memory_id: "m1".into(),
                salience: read_twice.clone(),
            },
            Write::PutUserState(later),
        ],
    )
    .unwrap();
    let stored = store.user_state("u1").unwrap().unwrap();
    assert!(stored.already_applied("memory.accessed/0", 11));
    assert_eq!(
        store.memory("u1", "m1").unwrap().unwrap().salience,
        read_twice
    );
}

/// Within one batch, later writes win over earlier ones on the same key,
/// deletes included.
pub fn writes_in_a_batch_apply_in_order(store: &dyn Store) {
    let mut renamed = memory("u1", "m1", 1);
    renamed.content = "second version".into();
    commit(
        store,
        vec![
            Write::PutMemory(memory("u1", "m1", 1)),
            Write::PutMemory(renamed.clone()),
            Write::PutMemory(memory("u1", "m2", 2)),
            Write::PutLink(link("u1", "m1", "m2", LinkType::Related)),
            Write::DeleteMemory {
                user_id: "u1".into(),
                memory_id: "m2".into(),
            },
            Write::PutMemory(memory("u1", "m2", 2)),
            Write::PutLink(link("u1", "m2", "m1", LinkType::Supersedes)),
            Write::DeleteLink {
                user_id: "u1".into(),
                from_id: "m2".into(),
                to_id: "m1".into(),
                link_type: LinkType::Supersedes,
            },
            Write::PutLink(link("u1", "m2", "m1", LinkType::Supersedes)),
        ],
    )
    .unwrap();
    assert_eq!(store.memory("u1", "m1").unwrap(), Some(renamed));
    assert_eq!(
        store.memory("u1", "m2").unwrap(),
        Some(memory("u1", "m2", 2))
    );
    assert_eq!(
        store.links("u1").unwrap(),
        vec![link("u1", "m2", "m1", LinkType::Supersedes)],
        "the link deleted with m2 stays deleted; the one put after the delete stays"
    );
}

/// Every link is found from both of its ends, and from neither once gone,
/// whether it went by itself or with one of its memories.
pub fn links_stay_symmetric_through_every_change(store: &dyn Store) {
    let check = |store: &dyn Store| {
        let links = store.links("u1").unwrap();
        for l in &links {
            assert!(
                store.links_of("u1", &l.from_id).unwrap().contains(l),
                "{l:?} from its source"
            );
            assert!(
                store.links_of("u1", &l.to_id).unwrap().contains(l),
                "{l:?} from its target"
            );
        }
        for id in ["a", "b", "c", "d"] {
            for l in store.links_of("u1", id).unwrap() {
                assert!(links.contains(&l), "{l:?} is only reachable one way");
            }
        }
        links.len()
    };
    let memories = ["a", "b", "c", "d"].map(|id| Write::PutMemory(memory("u1", id, 1)));
    commit(store, memories.to_vec()).unwrap();
    commit(
        store,
        vec![
            Write::PutLink(link("u1", "a", "b", LinkType::Related)),
            Write::PutLink(link("u1", "b", "c", LinkType::Supersedes)),
            Write::PutLink(link("u1", "c", "a", LinkType::Contradicts)),
            Write::PutLink(link("u1", "d", "a", LinkType::InstanceOf)),
            Write::PutLink(link("u1", "a", "d", LinkType::Consolidates)),
        ],
    )
    .unwrap();
    assert_eq!(check(store), 5);
    commit(
        store,
        vec![Write::DeleteLink {
            user_id: "u1".into(),
            from_id: "b".into(),
            to_id: "c".into(),
            link_type: LinkType::Supersedes,
        }],
    )
    .unwrap();
    assert_eq!(check(store), 4);
    commit(
        store,
        vec![Write::DeleteMemory {
            user_id: "u1".into(),
            memory_id: "a".into(),
        }],
    )
    .unwrap();
    assert_eq!(check(store), 0, "every link touched a");
}

/// One flush bigger than a single database batch is still all-or-nothing
/// per user, and reads back whole.
pub fn a_big_flush_lands_whole(store: &dyn Store) {
    let vector: Vec<f32> = (0..384).map(|i| (i as f32 / 384.0) - 0.5).collect();
    let mut writes: Vec<Write> = (0..2_000)
        .map(|i| {
            let mut m = memory("u1", &format!("m{i:05}"), i);
            m.embedding = Some(vector.clone());
            m.content = format!("{} {}", "long content ".repeat(20), i);
            Write::PutMemory(m)
        })
        .collect();
    let mut state = UserState::new("u1");
    state.mark_applied("memory.created/0", 1_999);
    state.new_since_cycle = 2_000;
    writes.push(Write::PutUserState(state.clone()));
    writes.push(Write::PutLink(link(
        "u1",
        "m00000",
        "m01999",
        LinkType::Related,
    )));
    commit(store, writes.clone()).unwrap();
    assert_eq!(store.memories("u1").unwrap().len(), 2_000);
    assert_eq!(store.user_state("u1").unwrap(), Some(state));
    assert_eq!(store.links_of("u1", "m01999").unwrap().len(), 1);
    // The same flush again (a replay) changes nothing.
    let before = engram::store::dump(store).unwrap();
    commit(store, writes).unwrap();
    assert_eq!(engram::store::dump(store).unwrap(), before);
}

/// A cycle that archives 5,000 stored memories (every row an update, with
/// its vector and a large run report) lands whole: on ScyllaDB it is far
/// above `max_batch_bytes` and goes through the journal in many batches.
pub fn a_cycle_that_archives_5000_memories_lands_whole(store: &dyn Store) {
    const COUNT: usize = 5_000;
    let vector: Vec<f32> = (0..384).map(|i| (i as f32 / 384.0) - 0.5).collect();
    let created: Vec<Memory> = (0..COUNT)
        .map(|i| {
            let mut m = memory("u1", &format!("m{i:05}"), i as Millis);
            m.embedding = Some(vector.clone());
            m
        })
        .collect();
    for chunk in created.chunks(500) {
        commit(store, chunk.iter().cloned().map(Write::PutMemory).collect()).unwrap();
    }
    let mut writes: Vec<Write> = created
        .iter()
        .map(|m| {
            let mut archived = m.clone();
            archived.status = MemoryStatus::Archived;
            archived.last_run_id = Some("run-archive".into());
            archived.merged_from = vec!["x".into(), "y".into()];
            Write::PutMemory(archived)
        })
        .collect();
    let changes: Vec<serde_json::Value> = created
        .iter()
        .map(|m| serde_json::json!({ "memory_id": m.id, "status": ["active", "archived"] }))
        .collect();
    let report = RunReport {
        user_id: "u1".into(),
        run_id: "run-archive".into(),
        started_at: 10_000,
        report: serde_json::json!({ "memory_changes": changes }),
    };
    let mut state = UserState::new("u1");
    state.mark_applied("memory.created/0", 4_999);
    state.last_run_id = Some("run-archive".into());
    writes.push(Write::PutRunReport(report.clone()));
    writes.push(Write::PutUserState(state.clone()));
    commit(store, writes.clone()).unwrap();

    let stored = store.memories("u1").unwrap();
    assert_eq!(stored.len(), COUNT);
    assert!(stored.iter().all(|m| m.status == MemoryStatus::Archived
        && m.merged_from == ["x", "y"]
        && m.embedding.as_deref() == Some(vector.as_slice())));
    assert_eq!(store.user_state("u1").unwrap(), Some(state));
    assert_eq!(store.run_report("u1", "run-archive").unwrap(), Some(report));
    // The same commit again (a retry after an error) changes nothing, lists
    // included.
    let before = engram::store::dump(store).unwrap();
    commit(store, writes).unwrap();
    assert_eq!(engram::store::dump(store).unwrap(), before);
}

/// A user with 100,000 memories (with vectors of the model's size) is written
/// in flushes and read back whole and in order; reads by id and salience
/// updates stay per memory.
pub fn a_user_with_100k_memories(store: &dyn Store) {
    const COUNT: usize = 100_000;
    let vector: Vec<f32> = (0..384).map(|i| ((i * 7) % 13) as f32 / 13.0).collect();
    for start in (0..COUNT).step_by(5_000) {
        let writes = (start..start + 5_000)
            .map(|i| {
                let mut m = memory("big", &format!("m{i:06}"), (COUNT - i) as Millis);
                m.embedding = Some(vector.clone());
                Write::PutMemory(m)
            })
            .collect();
        commit(store, writes).unwrap();
    }
    let all = store.memories("big").unwrap();
    assert_eq!(all.len(), COUNT);
    // Created-at runs backwards through the ids.
    assert_eq!(all[0].id, format!("m{:06}", COUNT - 1));
    assert_eq!(all[COUNT - 1].id, "m000000");
    assert!(
        all.windows(2)
            .all(|w| w[0].created_at() <= w[1].created_at())
    );
    assert!(
        all.iter()
            .all(|m| m.embedding.as_deref() == Some(&vector[..]))
    );
    let ids: Vec<String> = (0..COUNT).step_by(97).map(|i| format!("m{i:06}")).collect();
    let id_refs: Vec<&str> = ids.iter().map(String::as_str).collect();
    assert_eq!(
        store.memories_by_id("big", &id_refs).unwrap().len(),
        ids.len()
    );
    let reads: Vec<Write> = ids
        .iter()
        .map(|id| {
            let mut salience = store.memory("big", id).unwrap().unwrap().salience;
            salience.record_access(1_000_000);
            Write::PutSalience {
                user_id: "big".into(),
                memory_id: id.clone(),
                salience,
            }
        })
        .collect();
    commit(store, reads).unwrap();
    let read = store.saliences_by_id("big", &id_refs).unwrap();
    assert_eq!(read.len(), ids.len());
    let fresh = memory("big", "m", 0).salience.access_count();
    assert!(read.iter().all(|(_, s)| s.access_count() == fresh + 1));
    assert_eq!(store.users().unwrap(), ["big"]);
}

/// The users a partition's worker picks up are those of its sources whose
/// last stored state waits (a cycle queued, a change not consolidated,
/// reads parked), and only those, as their states change.
pub fn waiting_users_follow_the_stored_state(store: &dyn Store) {
    let state = |user: &str, sources: &[&str], changed: Option<Millis>| {
        let mut state = UserState::new(user);
        for source in sources {
            state.mark_applied(source, 1);
        }
        state.cycle.changed_since = changed;
        Write::PutUserState(state)
    };
    commit(
        store,
        vec![
            state("a", &["created/0", "accessed/0"], Some(5)),
            state("b", &["created/0"], None),
            state("c", &["created/1"], Some(5)),
            state("d", &["accessed/0"], Some(7)),
        ],
    )
    .unwrap();
    let sources = |names: &[&str]| names.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let partition_0 = sources(&["created/0", "accessed/0"]);
    assert_eq!(store.waiting_users(&partition_0).unwrap(), ["a", "d"]);
    assert_eq!(
        store.waiting_users(&sources(&["created/1"])).unwrap(),
        ["c"]
    );
    assert!(
        store
            .waiting_users(&sources(&["created/2"]))
            .unwrap()
            .is_empty()
    );

    // "a" is consolidated, "b" gets a change and a queued run.
    let mut queued = UserState::new("b");
    queued.mark_applied("created/0", 2);
    queued.cycle.pending_runs.push(PendingRun {
        run_id: "r1".into(),
        trigger: engram::event::TriggerReason::Manual,
        mode: engram::event::RunMode::Execute,
        now: 9,
    });
    commit(
        store,
        vec![
            state("a", &["created/0", "accessed/0"], None),
            Write::PutUserState(queued),
        ],
    )
    .unwrap();
    assert_eq!(store.waiting_users(&partition_0).unwrap(), ["b", "d"]);

    // Parked reads keep a user waiting too.
    let mut parked = UserState::new("d");
    parked.mark_applied("accessed/0", 3);
    parked.parked_reads.push(ParkedRead {
        read: engram::event::MemoryAccessed {
            event_id: "e1".into(),
            user_id: "d".into(),
            memory_id: "m-later".into(),
            accessed_at: chrono::DateTime::from_timestamp_millis(8).unwrap(),
            context: None,
        },
        stream: "accessed".into(),
        partition: Some(0),
        offset: 3,
        parked_at: 8,
        parked_wall_at: None,
    });
    commit(store, vec![Write::PutUserState(parked)]).unwrap();
    assert_eq!(store.waiting_users(&partition_0).unwrap(), ["b", "d"]);
}

/// A user's state with 1,000 parked reads, each with a 1 KiB context
/// (1.3 MB of state, more than a CQL batch may hold), lands in the same
/// commit as the user's memories and reads back whole.
pub fn a_state_with_1000_parked_reads_of_1kib_lands_whole(store: &dyn Store) {
    let mut state = UserState::new("p");
    state.mark_applied("memory.accessed/0", 999);
    for i in 0..1_000 {
        state.parked_reads.push(ParkedRead {
            read: engram::event::MemoryAccessed {
                event_id: format!("read-{i}").into(),
                user_id: "p".into(),
                memory_id: format!("later-{i}").into(),
                accessed_at: chrono::DateTime::from_timestamp_millis(i).unwrap(),
                context: Some(format!("{i:04} {}", "context ".repeat(127))),
            },
            stream: "memory.accessed".into(),
            partition: Some(0),
            offset: i,
            parked_at: i,
            parked_wall_at: Some(i),
        });
    }
    let mut writes: Vec<Write> = (0..20)
        .map(|i| Write::PutMemory(memory("p", &format!("m{i:02}"), i)))
        .collect();
    writes.push(Write::PutUserState(state.clone()));
    commit(store, writes).unwrap();
    assert_eq!(store.user_state("p").unwrap(), Some(state));
    assert_eq!(store.memories("p").unwrap().len(), 20);
    assert_eq!(
        store
            .waiting_users(&["memory.accessed/0".to_owned()])
            .unwrap(),
        ["p"]
    );
}

/// A fused canonical text of 64 KiB (twice what an input memory may hold)
/// with its long `merged_from` list lands with the rest of its cycle.
pub fn a_fused_text_of_64_kib_lands_whole(store: &dyn Store) {
    let mut members: Vec<Memory> = (0..200)
        .map(|i| memory("f", &format!("m{i:03}"), i))
        .collect();
    let mut canonical = memory("f", "canonical", 1_000);
    canonical.content = "Ada works on the compiler; ".repeat(64 * 1024 / 27 + 1);
    canonical.content.truncate(64 * 1024);
    canonical.merged_from = members.iter().map(|m| m.id.clone()).collect();
    let mut writes = vec![Write::PutMemory(canonical.clone())];
    for member in &mut members {
        member.status = MemoryStatus::Superseded;
        writes.push(Write::PutMemory(member.clone()));
        writes.push(Write::PutLink(link(
            "f",
            &member.id,
            "canonical",
            LinkType::Related,
        )));
    }
    commit(store, writes).unwrap();
    assert_eq!(store.memory("f", "canonical").unwrap(), Some(canonical));
    assert_eq!(store.memories("f").unwrap().len(), 201);
    assert_eq!(store.links_of("f", "canonical").unwrap().len(), 200);
}

/// 10,000+ users of one stream start waiting, stop, and start and stop
/// again (every state write touches the waiting index): the users left
/// waiting are found, and the index does not become a heap of tombstones
/// that a read at assignment cannot get through.
pub fn waiting_users_of_10000_users_under_churn(store: &dyn Store) {
    const USERS: usize = 12_000;
    let source = "memory.created/0".to_owned();
    let state = |user: usize, waiting: bool| {
        let mut state = UserState::new(&format!("user-{user:05}"));
        state.mark_applied(&source, user as i64);
        if waiting {
            state.new_since_cycle = 1;
            state.cycle.changed_since = Some(1);
        }
        Write::PutUserState(state)
    };
    for round in [true, false, true, false] {
        for start in (0..USERS).step_by(1_000) {
            let writes = (start..start + 1_000).map(|u| state(u, round)).collect();
            commit(store, writes).unwrap();
        }
    }
    // A few are left waiting.
    let still: Vec<Write> = (0..USERS).step_by(1_000).map(|u| state(u, true)).collect();
    commit(store, still).unwrap();
    let expected: Vec<String> = (0..USERS)
        .step_by(1_000)
        .map(|u| format!("user-{u:05}"))
        .collect();
    assert_eq!(
        store.waiting_users(std::slice::from_ref(&source)).unwrap(),
        expected
    );
}

pub fn empty_batch_is_fine(store: &dyn Store) {
    commit(store, vec![]).unwrap();
    assert!(store.users().unwrap().is_empty());
}

macro_rules! store_suite {
    ($module:ident, $factory:expr) => {
        mod $module {
            use super::*;
            fn run(test: fn(&dyn Store)) {
                let handle = $factory;
                test(handle.store.as_ref());
            }
            #[test]
            fn memories_round_trip_every_field() {
                run(super::memories_round_trip_every_field)
            }
            #[test]
            fn memories_are_ordered_by_creation_then_id() {
                run(super::memories_are_ordered_by_creation_then_id)
            }
            #[test]
            fn put_memory_is_an_upsert() {
                run(super::put_memory_is_an_upsert)
            }
            #[test]
            fn put_salience_changes_only_salience() {
                run(super::put_salience_changes_only_salience)
            }
            #[test]
            fn put_status_changes_only_the_status() {
                run(super::put_status_changes_only_the_status)
            }
            #[test]
            fn a_failing_batch_changes_nothing() {
                run(super::a_failing_batch_changes_nothing)
            }
            #[test]
            fn links_are_reachable_from_both_ends() {
                run(super::links_are_reachable_from_both_ends)
            }
            #[test]
            fn user_state_and_watermarks_round_trip() {
                run(super::user_state_and_watermarks_round_trip)
            }
            #[test]
            fn run_reports_round_trip_in_time_order() {
                run(super::run_reports_round_trip_in_time_order)
            }
            #[test]
            fn embeddings_are_found_by_user_and_content_hash() {
                run(super::embeddings_are_found_by_user_and_content_hash)
            }
            #[test]
            fn delete_memory_removes_it_and_its_links() {
                run(super::delete_memory_removes_it_and_its_links)
            }
            #[test]
            fn erase_user_removes_every_row_and_keeps_a_tombstone() {
                run(super::erase_user_removes_every_row_and_keeps_a_tombstone)
            }
            #[test]
            fn a_forgotten_hash_no_longer_finds_the_memory() {
                run(super::a_forgotten_hash_no_longer_finds_the_memory)
            }
            #[test]
            fn memories_are_read_by_id_in_one_call() {
                run(super::memories_are_read_by_id_in_one_call)
            }
            #[test]
            fn salience_writes_are_what_later_reads_see() {
                run(super::salience_writes_are_what_later_reads_see)
            }
            #[test]
            fn waiting_users_follow_the_stored_state() {
                run(super::waiting_users_follow_the_stored_state)
            }
            #[test]
            fn empty_batch_is_fine() {
                run(super::empty_batch_is_fine)
            }
            #[test]
            fn watermarks_move_only_with_their_effects() {
                run(super::watermarks_move_only_with_their_effects)
            }
            #[test]
            fn writes_in_a_batch_apply_in_order() {
                run(super::writes_in_a_batch_apply_in_order)
            }
            #[test]
            fn links_stay_symmetric_through_every_change() {
                run(super::links_stay_symmetric_through_every_change)
            }
            #[test]
            fn a_big_flush_lands_whole() {
                run(super::a_big_flush_lands_whole)
            }
            #[test]
            fn a_cycle_that_archives_5000_memories_lands_whole() {
                run(super::a_cycle_that_archives_5000_memories_lands_whole)
            }
            #[test]
            fn a_state_with_1000_parked_reads_of_1kib_lands_whole() {
                run(super::a_state_with_1000_parked_reads_of_1kib_lands_whole)
            }
            #[test]
            fn a_fused_text_of_64_kib_lands_whole() {
                run(super::a_fused_text_of_64_kib_lands_whole)
            }
            #[test]
            fn waiting_users_of_10000_users_under_churn() {
                run(super::waiting_users_of_10000_users_under_churn)
            }
            #[test]
            fn a_user_with_100k_memories() {
                run(super::a_user_with_100k_memories)
            }
        }
    };
}

store_suite!(embedded_store, embedded());
store_suite!(scylla_store, scylla());

#[test]
fn scylla_migrate_is_idempotent_and_connect_needs_it() {
    let config = scylla_config();
    let keyspace = Keyspace(config.clone());
    let error = ScyllaStore::connect(&config, common::runtime().handle().clone())
        .err()
        .expect("no keyspace yet");
    assert!(error.to_string().contains(&config.keyspace), "{error}");
    let first =
        engram::store::migrate(&config, common::runtime().handle(), Box::new(|| {})).unwrap();
    let every: Vec<i32> = (1..=engram::store::schema::latest_version()).collect();
    assert_eq!(first.applied, every);
    let again =
        engram::store::migrate(&config, common::runtime().handle(), Box::new(|| {})).unwrap();
    assert!(again.applied.is_empty(), "{again:?}");
    assert_eq!(again.version, first.version);
    ScyllaStore::connect(&config, common::runtime().handle().clone()).unwrap();
    drop(keyspace);
}

#[test]
fn embedded_store_survives_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let before = {
        let store = EmbeddedStore::open(dir.path()).unwrap();
        let mut state = UserState::new("u1");
        state.mark_applied("s", 3);
        commit(
            &store,
            vec![
                Write::PutMemory(memory("u1", "m1", 1)),
                Write::PutLink(link("u1", "m1", "m2", LinkType::Related)),
                Write::PutUserState(state),
            ],
        )
        .unwrap();
        engram::store::dump(&store).unwrap()
    };
    let reopened = EmbeddedStore::open(dir.path()).unwrap();
    assert_eq!(engram::store::dump(&reopened).unwrap(), before);
    assert_eq!(reopened.memories("u1").unwrap().len(), 1);
}

#[test]
fn embedded_store_reports_an_unusable_directory() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("not-a-dir");
    std::fs::write(&file, b"x").unwrap();
    let error = EmbeddedStore::open(&file).err().unwrap();
    assert!(error.to_string().contains("not-a-dir"), "{error}");
}

#[test]
fn embedded_store_opened_by_several_at_once_is_migrated_once() {
    // Two engram processes on one directory start together (tests/kafka.rs
    // runs two instances): each must open it, none may apply a step twice.
    for _ in 0..5 {
        let dir = tempfile::tempdir().unwrap();
        let openers: Vec<_> = (0..4)
            .map(|_| {
                let path = dir.path().to_path_buf();
                std::thread::spawn(move || EmbeddedStore::open(&path).map(|_| ()))
            })
            .collect();
        for opener in openers {
            opener.join().unwrap().unwrap();
        }
    }
}
