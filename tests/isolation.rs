//! Tenant isolation: users with the same memory ids and the same texts, and
//! user ids that look like paths or CQL, never see each other's memories in
//! detections, actions, links, reports, output events or HTTP answers, and
//! each user ends exactly as if alone in the store.

mod common;

use std::collections::BTreeSet;
use std::io::Cursor;
use std::sync::Arc;

use common::*;
use engram::clock::{Clock, ClockMode};
use engram::cycle::CycleSettings;
use engram::embed::EMBEDDING_DIM;
use engram::emit::JsonLinesSink;
use engram::event::*;
use engram::index::UserIndexes;
use engram::model::MemoryKind;
use engram::pipeline::Pipeline;
use engram::source::LineSource;
use engram::store::{EmbeddedStore, Store, dump};
use serde_json::Value;

const USERS: [&str; 4] = [
    "alice",
    "bob",
    "../carol",
    "dave'); DROP TABLE memories; --",
];

/// Texts every user holds under the same ids `m0`…: duplicates, a change
/// of fact and recurring episodes, so every detector has work.
const SHARED: [&str; 8] = [
    "The user lives in Paris.",
    "The user lives in Paris, France.",
    "The user moved to Berlin and now lives in Berlin.",
    "The user prefers tea over coffee.",
    "The user does not prefer tea over coffee.",
    "Went running in the park this morning.",
    "Went running in the park again this morning.",
    "Went running in the park early this morning.",
];

/// Ids only user `k` has; their texts repeat shared ones, so a detector
/// that looked across users would pair them with another user's memories.
fn own_id(k: usize, j: usize) -> String {
    format!("own-{k}-{j}")
}

/// Every user's events at the same instants, in time order (stream time is
/// the latest event time of the stream, whoever's event it was).
fn events(users: &[usize]) -> Vec<Event> {
    let mut events = Vec::new();
    let mut t = 0;
    for (j, text) in SHARED.iter().enumerate() {
        for &k in users {
            let mut memory = created(USERS[k], &format!("m{j}"), text, t);
            if j >= 5 {
                memory.kind = MemoryKind::Episodic;
            }
            events.push(Event::MemoryCreated(memory));
        }
        for &k in users.iter().filter(|_| j < 3) {
            let copy = created(USERS[k], &own_id(k, j), text, t + 1);
            events.push(Event::MemoryCreated(copy));
        }
        for &k in users {
            let read = accessed(USERS[k], &format!("m{j}"), t + 2);
            events.push(Event::MemoryAccessed(read));
        }
        t += 3_600;
    }
    for &k in users {
        events.push(Event::ConsolidationRequested(ConsolidationRequested {
            event_id: format!("r-{k}"),
            user_id: USERS[k].to_owned(),
            requested_at: at(t),
            execute: Some(true),
            reason: None,
        }));
    }
    events
}

fn settings() -> CycleSettings {
    let mut settings = CycleSettings::default();
    settings.consolidation.trigger.trigger_new_memories = 4;
    settings.consolidation.trigger.schedule_interval = std::time::Duration::ZERO;
    settings
}

/// Runs `users`' events through a fresh embedded store; the store and the
/// output events.
fn run(users: &[usize]) -> (tempfile::TempDir, EmbeddedStore, Vec<Value>) {
    let (dir, store) = store();
    let codec = EventCodec::new(Limits::default()).unwrap();
    let model = model();
    let mut out = Vec::new();
    {
        let mut sink = JsonLinesSink::new(&codec, Box::new(&mut out), None);
        let input = lines(&events(users));
        let mut source = LineSource::new(Cursor::new(input.as_bytes()), "test-input", 1 << 20);
        let config = model_config();
        let mut pipeline = Pipeline::new(
            &codec,
            &store,
            settings(),
            7,
            Clock::new(ClockMode::Stream, true),
        )
        .with_embedder(
            model.as_ref(),
            &config,
            UserIndexes::new(EMBEDDING_DIM, Default::default()),
        );
        pipeline.run(&mut source, &mut sink).unwrap();
    }
    let outputs = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    (dir, store, outputs)
}

fn user_dump(store: &dyn Store, user: &str) -> Value {
    dump(store).unwrap()["users"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["user_id"] == user)
        .cloned()
        .unwrap_or_else(|| panic!("{user} is in the store"))
}

/// Marks of user `k`'s data that must never appear in another user's.
fn foreign_marks(k: usize) -> Vec<String> {
    (0..USERS.len())
        .filter(|&other| other != k)
        .flat_map(|other| [format!("own-{other}-"), USERS[other].to_owned()])
        .filter(|mark| !USERS[k].contains(mark.as_str()))
        .collect()
}

fn assert_only_own(k: usize, what: &str, value: &Value) {
    let text = value.to_string();
    for mark in foreign_marks(k) {
        assert!(
            !text.contains(&mark),
            "{what} of {:?} mentions {mark:?}: {text}",
            USERS[k]
        );
    }
}

#[test]
fn users_with_the_same_ids_and_texts_never_meet() {
    let everyone: Vec<usize> = (0..USERS.len()).collect();
    let (dir, store, outputs) = run(&everyone);

    // Memories, links and run reports (with their actions, detections and
    // before/after images) of each user name only that user's memories.
    for (k, user) in USERS.iter().enumerate() {
        let mine = user_dump(&store, user);
        assert_only_own(k, "the stored state", &mine);
        let runs = mine["runs"].as_array().unwrap();
        assert!(runs.len() >= 2, "{user}: cycles ran ({})", runs.len());
        let actions: usize = runs
            .iter()
            .map(|r| r["report"]["actions"].as_array().map_or(0, Vec::len))
            .sum();
        assert!(actions > 0, "{user}: the cycles acted");
        let ids: BTreeSet<&str> = mine["memories"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|m| m["id"].as_str())
            .collect();
        for link in mine["links"].as_array().unwrap() {
            assert_eq!(link["user_id"], *user);
            for end in ["from_id", "to_id"] {
                let id = link[end].as_str().unwrap();
                assert!(
                    ids.contains(id),
                    "{user}: link to a memory it lacks: {link}"
                );
            }
        }
    }

    // Output events: each names one user and only that user's memories.
    assert!(!outputs.is_empty());
    for event in &outputs {
        let user = event["user_id"]
            .as_str()
            .expect("every output names its user");
        let k = USERS.iter().position(|u| *u == user).unwrap();
        assert_only_own(k, "an output event", event);
    }

    // Each user ends exactly as if alone.
    for (k, user) in USERS.iter().enumerate() {
        let (_alone_dir, alone, _) = run(&[k]);
        let (mut alone, mut among) = (user_dump(&alone, user), user_dump(&store, user));
        // Input positions differ by construction: other users' lines.
        for state in [&mut alone["state"], &mut among["state"]] {
            state["applied_offsets"] = Value::Null;
        }
        assert!(
            alone == among,
            "{user} ends the same alone and among others; first difference at {}",
            first_difference(&alone, &among, String::new())
        );
    }

    // User ids are data, never paths: the state directory holds the
    // database files only.
    let files: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    for file in &files {
        assert!(file.starts_with("engram.sqlite"), "unexpected file {file}");
    }
    assert!(!dir.path().parent().unwrap().join("carol").exists());

    // The HTTP API answers for the user in the path and no other.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let store: Arc<dyn Store> = Arc::new(store);
    let address = serve_embedded(store, &runtime);
    let agent = http();
    for (k, user) in USERS.iter().enumerate() {
        let url = format!("http://{address}/users/{}/report/latest", encode(user));
        let mut response = agent.get(&url).call().unwrap();
        assert_eq!(response.status().as_u16(), 200, "{url}");
        let body: Value =
            serde_json::from_str(&response.body_mut().read_to_string().unwrap()).unwrap();
        assert_eq!(body["user_id"], *user, "{url}");
        assert_only_own(k, "the latest report", &body);
    }
    let missing = format!("http://{address}/users/nobody/report/latest");
    assert_eq!(agent.get(&missing).call().unwrap().status().as_u16(), 404);
}

/// Percent-encodes everything but unreserved characters.
fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}
