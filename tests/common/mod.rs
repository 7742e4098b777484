//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod cql;
pub mod jvm;
pub mod ports;

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use chrono::{DateTime, TimeZone, Utc};
use engram::embed::{EmbeddingConfig, LocalEmbedder};
use engram::event::*;
use engram::model::MemoryKind;
use engram::store::{EmbeddedStore, Store};

pub fn at(seconds: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(1_788_000_000 + seconds, 0).unwrap()
}

pub fn created(user: &str, memory: &str, content: &str, seconds: i64) -> MemoryCreated {
    MemoryCreated {
        event_id: format!("c-{user}-{memory}"),
        user_id: user.to_owned(),
        memory_id: memory.to_owned(),
        kind: MemoryKind::Semantic,
        content: content.to_owned(),
        created_at: at(seconds),
        category: None,
        tags: None,
        importance: None,
        source: None,
        embedding: None,
    }
}

pub fn accessed(user: &str, memory: &str, seconds: i64) -> MemoryAccessed {
    MemoryAccessed {
        event_id: format!("a-{user}-{memory}-{seconds}").into(),
        user_id: user.into(),
        memory_id: memory.into(),
        accessed_at: at(seconds),
        context: None,
    }
}

/// One or more instances of every event type, with optional fields both set and unset.
pub fn sample_events() -> Vec<Event> {
    let mut full = created("alice", "m1", "Project atlas uses PostgreSQL.", 0);
    full.category = Some("fact".into());
    full.tags = Some(vec!["db".into(), "atlas".into()]);
    full.importance = Some(0.75);
    full.source = Some("chat".into());
    full.embedding = Some((0..384).map(|i| (i as f32 / 384.0) - 0.5).collect());
    full.kind = MemoryKind::Procedural;
    let mut access = accessed("alice", "m1", 60);
    access.context = Some("retrieval".into());
    vec![
        Event::MemoryCreated(full),
        Event::MemoryCreated(created("bob", "m2", "Ünïcode text ✓ and \"quotes\"", 5)),
        Event::MemoryAccessed(access),
        Event::MemoryAccessed(accessed("bob", "m2", 7)),
        Event::ConsolidationRequested(ConsolidationRequested {
            event_id: "r1".into(),
            user_id: "alice".into(),
            requested_at: at(100),
            execute: Some(true),
            reason: Some("nightly".into()),
        }),
        Event::ConsolidationRequested(ConsolidationRequested {
            event_id: "r2".into(),
            user_id: "alice".into(),
            requested_at: at(100),
            execute: None,
            reason: None,
        }),
        Event::ConsolidationTriggered(ConsolidationTriggered {
            event_id: "t1".into(),
            user_id: "alice".into(),
            run_id: "run-1".into(),
            reason: TriggerReason::Threshold,
            triggered_at: at(101),
        }),
        Event::PatternExtracted(PatternExtracted {
            event_id: "p1".into(),
            user_id: "alice".into(),
            run_id: "run-1".into(),
            pattern_memory_id: "m9".into(),
            content: "Runs the tests before committing.".into(),
            source_memory_ids: vec!["m3".into(), "m4".into(), "m5".into()],
            extracted_at: at(102),
        }),
        Event::ContradictionDetected(ContradictionDetected {
            event_id: "x1".into(),
            user_id: "alice".into(),
            run_id: "run-1".into(),
            first_memory_id: "m1".into(),
            second_memory_id: "m6".into(),
            confidence: 0.82,
            signals: vec!["differing_value:postgresql/mysql".into()],
            explanation: "same sentence, one differing named value".into(),
            resolution: ContradictionResolution::Superseded,
            detected_at: at(103),
        }),
        Event::ConsolidationCompleted(ConsolidationCompleted {
            event_id: "done1".into(),
            user_id: "alice".into(),
            run_id: "run-1".into(),
            mode: RunMode::Execute,
            config_hash: "abc123".into(),
            started_at: at(101),
            duration_ms: 42,
            counts: RunCounts {
                memories_processed: 10,
                duplicates_merged: 2,
                links_created: 3,
                ..RunCounts::default()
            },
            actions: vec![
                RunAction {
                    action_id: "run-1/0".into(),
                    action_type: "merge".into(),
                    target_ids: vec!["m1".into(), "m2".into()],
                    canonical_id: Some("m1".into()),
                    new_memory_id: None,
                    rule_id: "merge-near-duplicates".into(),
                    score: 0.97,
                    reasons: vec!["cosine 0.97 >= 0.95".into()],
                    canonical_content: Some("m1's text (also: m2's detail)".into()),
                },
                RunAction {
                    action_id: "run-1/1".into(),
                    action_type: "noop".into(),
                    target_ids: vec![],
                    canonical_id: None,
                    new_memory_id: Some("m10".into()),
                    rule_id: "r".into(),
                    score: 0.0,
                    reasons: vec![],
                    canonical_content: None,
                },
            ],
            warnings: vec!["a warning".into()],
        }),
        Event::ConsolidationUndone(ConsolidationUndone {
            event_id: "run-1/undone".into(),
            user_id: "alice".into(),
            run_id: "run-1".into(),
            restored_memory_ids: vec!["m1".into(), "m2".into()],
            removed_memory_ids: vec!["m10".into()],
            undone_at: at(104),
        }),
        Event::MemoryUpdated(MemoryUpdated {
            event_id: "u1".into(),
            user_id: "alice".into(),
            memory_id: "m1".into(),
            updated_at: at(110),
            content: Some("Project atlas uses MySQL.".into()),
            importance: Some(0.5),
            kind: Some(MemoryKind::Semantic),
            category: Some("fact".into()),
            tags: Some(vec!["db".into()]),
            embedding: Some((0..384).map(|i| (i as f32 / 384.0) - 0.25).collect()),
        }),
        Event::MemoryUpdated(MemoryUpdated {
            event_id: "u2".into(),
            user_id: "bob".into(),
            memory_id: "m2".into(),
            updated_at: at(111),
            content: None,
            importance: Some(0.9),
            kind: None,
            category: None,
            tags: None,
            embedding: None,
        }),
        Event::MemoryDeleted(MemoryDeleted {
            event_id: "x1".into(),
            user_id: "bob".into(),
            memory_id: "m2".into(),
            deleted_at: at(112),
        }),
        Event::UserErased(UserErased {
            event_id: "e1".into(),
            user_id: "carol".into(),
            erased_at: at(113),
        }),
        Event::MemoryRevised(MemoryRevised {
            event_id: "x1/revised".into(),
            user_id: "bob".into(),
            memory_id: "m2".into(),
            cause: RevisionCause::Deleted,
            rewritten: vec![RevisedText {
                memory_id: "m3".into(),
                content: "Uses Rust.".into(),
            }],
            removed_memory_ids: vec!["p1".into()],
            revised_at: at(112),
        }),
        Event::UserErasureCompleted(UserErasureCompleted {
            event_id: "e1/completed".into(),
            user_id: "carol".into(),
            erased_at: at(113),
            completed_at: at(113),
        }),
        Event::DeadLetter(DeadLetter {
            event_id: "d1".into(),
            source_topic: "memory.created".into(),
            partition: Some(3),
            offset: 1234,
            error_kind: "undecodable".into(),
            reason: "invalid JSON".into(),
            original: vec![0, 159, 146, 150, b'{'],
            rejected_at: at(104),
            original_length: Some(2_000_000),
            original_sha256: Some("ab".repeat(32)),
        }),
    ]
}

/// The project's model cache (`make models` fills it).
pub fn cache() -> PathBuf {
    std::env::var_os("ENGRAM_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".cache/engram"))
}

pub fn model_config() -> EmbeddingConfig {
    EmbeddingConfig {
        model_dir: cache().join("models/all-MiniLM-L6-v2"),
        runtime_library: cache().join("onnxruntime/libonnxruntime.so"),
        ..EmbeddingConfig::default()
    }
}

/// The real all-MiniLM-L6-v2, loaded once per test binary.
pub fn model() -> Arc<LocalEmbedder> {
    static MODEL: OnceLock<Arc<LocalEmbedder>> = OnceLock::new();
    MODEL
        .get_or_init(|| {
            Arc::new(
                LocalEmbedder::load(&model_config())
                    .unwrap_or_else(|e| panic!("{e} (run `make models`)")),
            )
        })
        .clone()
}

/// The real WordNet database (`make models`), loaded once per test binary.
/// A Tokio runtime for the tests that call the ScyllaDB store's API, as
/// the binary's one runtime serves its store.
pub fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .unwrap()
    })
}

pub fn wordnet() -> Arc<engram::detect::WordNet> {
    static WORDNET: OnceLock<Arc<engram::detect::WordNet>> = OnceLock::new();
    WORDNET
        .get_or_init(|| {
            Arc::new(
                engram::detect::WordNet::load(&cache().join("wordnet"))
                    .unwrap_or_else(|e| panic!("{e}")),
            )
        })
        .clone()
}

/// The default cycle settings with the real WordNet behind the lexicon, as
/// `engram run` has them.
pub fn settings_with_wordnet() -> engram::cycle::CycleSettings {
    engram::cycle::CycleSettings::default().with_wordnet(wordnet())
}

/// Events as JSON lines, the embedded pipeline's input.
pub fn lines(events: &[Event]) -> String {
    let codec = EventCodec::new(Limits::default()).unwrap();
    events
        .iter()
        .map(|e| String::from_utf8(codec.encode_json(e)).unwrap() + "\n")
        .collect()
}

/// A fresh embedded store in a temporary directory (kept while the guard lives).
pub fn store() -> (tempfile::TempDir, EmbeddedStore) {
    let dir = tempfile::tempdir().unwrap();
    let store = EmbeddedStore::open(dir.path()).unwrap();
    (dir, store)
}

/// Cycle settings with only manual triggers: no threshold, schedule or
/// capacity cycles.
pub fn manual_cycles_only() -> engram::cycle::CycleSettings {
    let mut settings = engram::cycle::CycleSettings::default();
    settings.consolidation.trigger.trigger_new_memories = 0;
    settings.consolidation.trigger.schedule_interval = std::time::Duration::ZERO;
    settings.consolidation.budget.token_budget = u64::MAX / 4;
    settings
}

/// An HTTP client that hands back error statuses instead of failing.
pub fn http() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into()
}

/// The path of the first value that differs between two JSON documents.
pub fn first_difference(a: &serde_json::Value, b: &serde_json::Value, path: String) -> String {
    use serde_json::Value;
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for key in keys {
                match (x.get(key), y.get(key)) {
                    (Some(p), Some(q)) if p == q => {}
                    (Some(p), Some(q)) => return first_difference(p, q, format!("{path}/{key}")),
                    _ => return format!("{path}/{key} (present on one side only)"),
                }
            }
            path
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .position(|(p, q)| p != q)
            .map_or(path.clone(), |i| {
                first_difference(&x[i], &y[i], format!("{path}/{i}"))
            }),
        _ => format!("{path}: {a} != {b}"),
    }
}

/// Serves the HTTP API of an embedded-mode instance over `store` on a free
/// loopback port (no stream, no token) until `runtime` stops.
pub fn serve_embedded(
    store: Arc<dyn Store>,
    runtime: &tokio::runtime::Runtime,
) -> std::net::SocketAddr {
    use engram::http::{self, Health, HttpState};
    http::spawn(
        "127.0.0.1:0",
        HttpState {
            metrics: Arc::new(engram::metrics::Metrics::new().unwrap()),
            health: Arc::new(Health::embedded()),
            store,
            requests: None,
            report_wait: std::time::Duration::ZERO,
            max_id_bytes: 256,
            token: None,
            salience: Default::default(),
        },
        runtime.handle(),
    )
    .unwrap()
}
