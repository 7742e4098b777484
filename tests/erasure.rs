//! Edits, deletions and erasure end to end on the embedded store, with the
//! real model: what the platform deletes is in no file of the store, no
//! stored report and no later output; an erased user's replayed input
//! brings nothing back.

mod common;

use std::io::Cursor;
use std::path::Path;

use common::*;
use engram::clock::{Clock, ClockMode};
use engram::embed::{EMBEDDING_DIM, Embedder, EmbeddingConfig};
use engram::emit::JsonLinesSink;
use engram::event::*;
use engram::index::{IndexConfig, UserIndexes};
use engram::pipeline::{Pipeline, RunSummary};
use engram::source::LineSource;
use engram::store::{EmbeddedStore, Store};
use serde_json::Value;

/// Two near-twins that fuse (the first's place joins the second's text)
/// and a third fact; each holds a word nothing else says.
const FIRST: &str = "In Quixmoor, Gina opened her dance studio";
const SECOND: &str = "Gina opened her dance studio downtown";
const THIRD: &str = "Gina keeps two bees named Vexaldo and Pim";
const FIRST_MARKER: &str = "quixmoor";
const THIRD_MARKER: &str = "vexaldo";

/// The embedded pipeline over `events` as the stream `stream`, with the
/// real model and manual cycles only.
fn run(store: &dyn Store, stream: &str, events: &[Event]) -> (RunSummary, Vec<Value>) {
    let codec = EventCodec::new(Limits::default()).unwrap();
    let mut out = Vec::new();
    let summary = {
        let mut sink = JsonLinesSink::new(&codec, Box::new(&mut out), None);
        let input = lines(events);
        let mut source = LineSource::new(Cursor::new(input.as_bytes()), stream, 1 << 20);
        let model = model();
        let mut settings = settings_with_wordnet();
        settings.consolidation.trigger.trigger_new_memories = 0;
        settings.consolidation.trigger.schedule_interval = std::time::Duration::ZERO;
        let mut pipeline = Pipeline::new(
            &codec,
            store,
            settings,
            100,
            Clock::new(ClockMode::Stream, true),
        )
        .with_embedder(
            model.as_ref() as &dyn Embedder,
            &EmbeddingConfig::default(),
            UserIndexes::new(EMBEDDING_DIM, IndexConfig::default()),
        );
        pipeline.run(&mut source, &mut sink).unwrap()
    };
    let outputs = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (summary, outputs)
}

fn consolidate(user: &str, id: &str, seconds: i64) -> Event {
    Event::ConsolidationRequested(ConsolidationRequested {
        event_id: id.into(),
        user_id: user.into(),
        requested_at: at(seconds),
        execute: Some(true),
        reason: None,
    })
}

fn deleted(user: &str, memory: &str, seconds: i64) -> Event {
    Event::MemoryDeleted(MemoryDeleted {
        event_id: format!("del-{memory}"),
        user_id: user.into(),
        memory_id: memory.into(),
        deleted_at: at(seconds),
    })
}

fn erased(user: &str, seconds: i64) -> Event {
    Event::UserErased(UserErased {
        event_id: format!("erase-{user}-{seconds}"),
        user_id: user.into(),
        erased_at: at(seconds),
    })
}

fn updated(user: &str, memory: &str, content: &str, seconds: i64) -> Event {
    Event::MemoryUpdated(MemoryUpdated {
        event_id: format!("upd-{memory}-{seconds}"),
        user_id: user.into(),
        memory_id: memory.into(),
        updated_at: at(seconds),
        content: Some(content.into()),
        importance: None,
        kind: None,
        category: None,
        tags: None,
        embedding: None,
    })
}

/// The three memories of `user`, then an executed cycle that fuses the
/// first into the second.
fn three_memories_and_a_fusing_cycle(user: &str) -> Vec<Event> {
    vec![
        Event::MemoryCreated(created(user, "first", FIRST, 0)),
        Event::MemoryCreated(created(user, "second", SECOND, 60)),
        Event::MemoryCreated(created(user, "third", THIRD, 120)),
        consolidate(user, "req-1", 86_400),
    ]
}

/// Gina's three memories and fusing cycle, and a memory of bob's.
fn gina_and_bob() -> Vec<Event> {
    let mut input = three_memories_and_a_fusing_cycle("gina");
    input.push(Event::MemoryCreated(created(
        "bob",
        "b1",
        "Bob plays the oboe",
        10,
    )));
    input
}

/// The files of the store's directory that hold `word` (any case).
fn files_holding(dir: &Path, word: &str) -> Vec<String> {
    let mut holding = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        let text = String::from_utf8_lossy(&bytes).to_lowercase();
        if text.contains(word) {
            holding.push(path.display().to_string());
        }
    }
    holding
}

fn mentions(values: &[Value], word: &str) -> Vec<String> {
    values
        .iter()
        .map(Value::to_string)
        .filter(|text| text.to_lowercase().contains(word))
        .collect()
}

#[test]
fn a_deleted_memory_leaves_no_word_of_its_own_in_the_store_its_reports_or_later_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let store = EmbeddedStore::open(dir.path()).unwrap();
    let (_, outputs) = run(&store, "day-1", &three_memories_and_a_fusing_cycle("u"));
    let canonical = store.memory("u", "second").unwrap().unwrap();
    assert!(
        canonical.content.to_lowercase().contains(FIRST_MARKER),
        "the cycle fused the first into the second: {}",
        canonical.content
    );
    assert!(
        !mentions(&outputs, FIRST_MARKER).is_empty(),
        "the fused text went out"
    );
    assert!(!files_holding(dir.path(), FIRST_MARKER).is_empty());

    let (summary, outputs) = run(
        &store,
        "day-2",
        &[
            deleted("u", "first", 90_000),
            consolidate("u", "req-2", 90_060),
        ],
    );
    assert_eq!(summary.applied["memory.deleted"], 1);
    // The confirmation names the canonical engram rewrote, with its text.
    let revised: Vec<&Value> = outputs
        .iter()
        .filter(|o| o["type"] == "memory.revised")
        .collect();
    assert_eq!(revised.len(), 1, "{outputs:?}");
    assert_eq!(revised[0]["cause"], "deleted");
    assert_eq!(revised[0]["rewritten"][0]["memory_id"], "second");
    assert_eq!(revised[0]["rewritten"][0]["content"], SECOND);
    assert!(mentions(&outputs, FIRST_MARKER).is_empty(), "{outputs:?}");

    assert!(store.memory("u", "first").unwrap().is_none());
    let canonical = store.memory("u", "second").unwrap().unwrap();
    assert_eq!(canonical.content, SECOND);
    assert!(
        canonical.merged_from.is_empty(),
        "it left the merged_from list"
    );
    assert!(
        canonical.embedding.is_some(),
        "the next cycle embedded the new text"
    );
    for report in store.run_reports("u").unwrap() {
        let text = report.report.to_string().to_lowercase();
        assert!(!text.contains(FIRST_MARKER), "{text}");
    }
    assert!(
        store
            .links("u")
            .unwrap()
            .iter()
            .all(|l| l.from_id != "first" && l.to_id != "first")
    );
    // The other memories keep their words.
    assert!(!files_holding(dir.path(), THIRD_MARKER).is_empty());
    assert_eq!(
        files_holding(dir.path(), FIRST_MARKER),
        Vec::<String>::new(),
        "no file of the store holds the deleted memory's word"
    );
}

#[test]
fn an_erased_user_is_in_no_file_and_a_replay_of_their_input_brings_nothing_back() {
    let dir = tempfile::tempdir().unwrap();
    let store = EmbeddedStore::open(dir.path()).unwrap();
    let input = gina_and_bob();
    run(&store, "day-1", &input);
    assert!(!files_holding(dir.path(), THIRD_MARKER).is_empty());

    let (summary, outputs) = run(&store, "day-2", &[erased("gina", 100_000)]);
    assert_eq!(summary.applied["user.erased"], 1);
    let confirmed: Vec<&Value> = outputs
        .iter()
        .filter(|o| o["type"] == "user.erasure.completed")
        .collect();
    assert_eq!(confirmed.len(), 1, "{outputs:?}");
    assert_eq!(store.users().unwrap(), vec!["bob".to_owned()]);
    assert!(store.memories("gina").unwrap().is_empty());
    assert!(store.run_reports("gina").unwrap().is_empty());
    assert!(store.user_state("gina").unwrap().is_none());
    assert!(store.erased_at("gina").unwrap().is_some());
    for marker in [FIRST_MARKER, THIRD_MARKER, "dance studio", "gina"] {
        assert_eq!(
            files_holding(dir.path(), marker),
            Vec::<String>::new(),
            "{marker}"
        );
    }

    // The platform replays the topic from the start: every event of the
    // user dates from before the erasure and is refused, without its text.
    let (summary, outputs) = run(&store, "replay", &input);
    assert_eq!(summary.rejected.get("erased_user"), Some(&4), "{summary}");
    assert!(store.memories("gina").unwrap().is_empty());
    assert!(store.user_state("gina").unwrap().is_none());
    assert!(mentions(&outputs, THIRD_MARKER).is_empty(), "{outputs:?}");
    assert!(mentions(&outputs, "dance").is_empty(), "{outputs:?}");
    for marker in [FIRST_MARKER, THIRD_MARKER, "gina"] {
        assert_eq!(
            files_holding(dir.path(), marker),
            Vec::<String>::new(),
            "{marker}"
        );
    }
    assert!(
        store.memory("bob", "b1").unwrap().is_some(),
        "other users stay"
    );

    // Erasing again changes nothing and confirms again; a user erased
    // unknown still gets a tombstone; later events are a new start.
    let (summary, outputs) = run(
        &store,
        "day-3",
        &[
            erased("gina", 100_000),
            erased("stranger", 100_000),
            Event::MemoryCreated(created("stranger", "s1", "An early fact", 50)),
            Event::MemoryCreated(created("gina", "new", "Gina moved to Oslo", 200_000)),
        ],
    );
    assert_eq!(summary.ignored.get("already_erased"), Some(&1), "{summary}");
    assert_eq!(summary.rejected.get("erased_user"), Some(&1), "{summary}");
    assert_eq!(
        outputs
            .iter()
            .filter(|o| o["type"] == "user.erasure.completed")
            .count(),
        2
    );
    assert!(store.memory("stranger", "s1").unwrap().is_none());
    assert_eq!(
        store.memories("gina").unwrap().len(),
        1,
        "after the erasure, a new start"
    );
    assert!(
        store
            .user_state("gina")
            .unwrap()
            .unwrap()
            .erased_at
            .is_some()
    );
}

#[test]
fn an_edit_replaces_the_text_and_vector_keeps_salience_and_rebuilds_the_fused_canonical() {
    let (_dir, store) = store();
    let mut input = three_memories_and_a_fusing_cycle("u");
    input.insert(3, Event::MemoryAccessed(accessed("u", "third", 200)));
    run(&store, "day-1", &input);
    let before = store.memory("u", "third").unwrap().unwrap();

    let (summary, outputs) = run(
        &store,
        "day-2",
        &[
            updated("u", "third", "Gina keeps three bees", 90_000),
            // Older than the edit above: skipped, never applied out of order.
            updated("u", "third", "Gina keeps no bees", 89_000),
            updated(
                "u",
                "first",
                "In Lisbon, Gina opened her dance studio",
                90_100,
            ),
            updated("u", "ghost", "Nothing", 90_200),
        ],
    );
    assert_eq!(summary.applied["memory.updated"], 2, "{summary}");
    assert_eq!(summary.ignored.get("stale_update"), Some(&1));
    assert_eq!(summary.ignored.get("unknown_memory"), Some(&1));
    let third = store.memory("u", "third").unwrap().unwrap();
    assert_eq!(third.content, "Gina keeps three bees");
    assert_eq!(third.salience, before.salience, "reads still count");
    assert_ne!(
        third.embedding, before.embedding,
        "the new text has its own vector"
    );
    let expected = model().embed(&[third.content.as_str()], 1).unwrap();
    assert_eq!(third.embedding.as_deref(), Some(expected[0].as_slice()));
    // The canonical that carried the first's old place carries the new one.
    let canonical = store.memory("u", "second").unwrap().unwrap();
    assert!(
        canonical.content.contains("Lisbon"),
        "{}",
        canonical.content
    );
    assert!(
        !canonical.content.contains("Quixmoor"),
        "{}",
        canonical.content
    );
    let revised: Vec<&Value> = outputs
        .iter()
        .filter(|o| o["type"] == "memory.revised")
        .collect();
    assert_eq!(revised.len(), 1, "{outputs:?}");
    assert_eq!(revised[0]["cause"], "updated");
    assert!(
        store.memory("u", "ghost").unwrap().is_none(),
        "no row for an unknown memory"
    );
}

/// The rows of every table of the keyspace holding `word` (any case), as
/// the database returns them: blobs read as text, so the commit journal's
/// JSON is searched too.
fn cql_rows_holding(config: &engram::config::ScyllaConfig, word: &str) -> Vec<String> {
    use scylla::client::session_builder::SessionBuilder;
    use scylla::value::{CqlValue, Row};
    fn text(value: &CqlValue) -> String {
        match value {
            CqlValue::Text(s) | CqlValue::Ascii(s) => s.clone(),
            CqlValue::Blob(bytes) => String::from_utf8_lossy(bytes).into_owned(),
            CqlValue::List(items) | CqlValue::Set(items) => {
                items.iter().map(text).collect::<Vec<_>>().join(" ")
            }
            CqlValue::Map(pairs) => pairs
                .iter()
                .map(|(k, v)| format!("{} {}", text(k), text(v)))
                .collect::<Vec<_>>()
                .join(" "),
            other => format!("{other:?}"),
        }
    }
    runtime().block_on(async {
        let mut builder = SessionBuilder::new().known_node(&config.nodes);
        if !config.username.is_empty() {
            builder = builder.user(&config.username, &config.password);
        }
        let session = builder.build().await.unwrap();
        let tables = session
            .query_unpaged(
                "SELECT table_name FROM system_schema.tables WHERE keyspace_name = ?",
                (config.keyspace.as_str(),),
            )
            .await
            .unwrap()
            .into_rows_result()
            .unwrap()
            .rows::<(String,)>()
            .unwrap()
            .map(|row| row.unwrap().0)
            .collect::<Vec<_>>();
        assert!(tables.len() >= 10, "{tables:?}");
        let mut holding = Vec::new();
        for table in tables {
            let rows = session
                .query_unpaged(format!("SELECT * FROM {}.{table}", config.keyspace), ())
                .await
                .unwrap()
                .into_rows_result()
                .unwrap();
            for row in rows.rows::<Row>().unwrap() {
                let row = row.unwrap();
                let line: Vec<String> = row.columns.iter().flatten().map(text).collect();
                let line = line.join(" | ");
                if line.to_lowercase().contains(word) {
                    holding.push(format!("{table}: {line}"));
                }
            }
        }
        holding
    })
}

#[test]
fn on_the_cql_store_a_deleted_memory_and_an_erased_user_are_in_no_row() {
    let config = common::cql::node().fresh_keyspace();
    engram::store::migrate(&config, runtime().handle(), Box::new(|| {})).unwrap();
    let store = engram::store::ScyllaStore::connect(&config, runtime().handle().clone()).unwrap();
    let input = gina_and_bob();
    run(&store, "day-1", &input);
    assert!(
        !cql_rows_holding(&config, FIRST_MARKER).is_empty(),
        "fused and reported"
    );

    let (_, outputs) = run(
        &store,
        "day-2",
        &[
            deleted("gina", "first", 90_000),
            consolidate("gina", "req-2", 90_060),
        ],
    );
    assert!(mentions(&outputs, FIRST_MARKER).is_empty(), "{outputs:?}");
    assert_eq!(
        cql_rows_holding(&config, FIRST_MARKER),
        Vec::<String>::new()
    );
    assert!(!cql_rows_holding(&config, THIRD_MARKER).is_empty());

    let (summary, _) = run(&store, "day-3", &[erased("gina", 100_000)]);
    assert_eq!(summary.applied["user.erased"], 1);
    for marker in [THIRD_MARKER, "dance studio", "gina"] {
        assert_eq!(
            cql_rows_holding(&config, marker),
            Vec::<String>::new(),
            "{marker}"
        );
    }
    assert_eq!(store.users().unwrap(), vec!["bob".to_owned()]);
    assert!(store.erased_at("gina").unwrap().is_some());

    let (summary, _) = run(&store, "replay", &input);
    assert_eq!(summary.rejected.get("erased_user"), Some(&4), "{summary}");
    for marker in [THIRD_MARKER, "gina"] {
        assert_eq!(
            cql_rows_holding(&config, marker),
            Vec::<String>::new(),
            "{marker}"
        );
    }
    assert!(
        store.memory("bob", "b1").unwrap().is_some(),
        "other users stay"
    );
    engram::store::drop_keyspace(&config, runtime().handle()).unwrap();
}

#[test]
fn undoing_a_run_after_a_deletion_never_brings_the_deleted_memory_back() {
    let (_dir, store) = store();
    run(&store, "day-1", &three_memories_and_a_fusing_cycle("u"));
    let fusing_run = store.run_reports("u").unwrap()[0].run_id.clone();
    run(&store, "day-2", &[deleted("u", "first", 90_000)]);
    engram::undo::undo(&store, &fusing_run, at(95_000).timestamp_millis()).unwrap();
    assert!(store.memory("u", "first").unwrap().is_none());
    let links = store.links("u").unwrap();
    assert!(
        links
            .iter()
            .all(|l| l.from_id != "first" && l.to_id != "first"),
        "{links:?}"
    );
    for memory in store.memories("u").unwrap() {
        assert!(
            !memory.merged_from.contains(&"first".to_owned()),
            "{memory:?}"
        );
        assert!(
            !memory.content.to_lowercase().contains(FIRST_MARKER),
            "{memory:?}"
        );
    }
}

#[test]
fn a_memory_deleted_and_created_again_in_one_batch_is_the_new_one() {
    let (_dir, store) = store();
    run(
        &store,
        "day-1",
        &[
            Event::MemoryCreated(created("u", "m1", "The user likes tea", 0)),
            Event::MemoryAccessed(accessed("u", "m1", 10)),
        ],
    );
    let mut again = created("u", "m1", "The user likes coffee", 30);
    again.event_id = "again".into();
    run(
        &store,
        "day-2",
        &[deleted("u", "m1", 20), Event::MemoryCreated(again)],
    );
    let memory = store.memory("u", "m1").unwrap().expect("created again");
    assert_eq!(memory.content, "The user likes coffee");
    assert_eq!(
        memory.salience.access_count(),
        0,
        "nothing of the deleted one"
    );
    assert_eq!(memory.created_at(), at(30).timestamp_millis());
}

#[test]
fn undoing_a_run_that_moved_a_link_off_a_deleted_memory_does_not_put_the_link_back() {
    let (_dir, store) = store();
    // r1 flags the contradiction (a link between pg and my); r2 merges my
    // into its twin and moves that link to the twin.
    run(
        &store,
        "day-1",
        &[
            Event::MemoryCreated(created("u", "pg", "Project atlas uses PostgreSQL", 0)),
            Event::MemoryCreated(created("u", "my", "Project atlas uses MySQL", 60)),
            consolidate("u", "req-1", 86_400),
            Event::MemoryCreated(created("u", "twin", "Project atlas uses MySQL.", 90_000)),
            consolidate("u", "req-2", 2 * 86_400),
        ],
    );
    let reports = store.run_reports("u").unwrap();
    let merging = reports.last().unwrap().run_id.clone();
    let moved_off_my = reports.last().unwrap().report["link_changes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["before"].to_string().contains("\"my\"") && c["after"].is_null());
    assert!(
        moved_off_my,
        "the merge moved a link off `my`: {:?}",
        reports.last()
    );
    run(&store, "day-2", &[deleted("u", "my", 3 * 86_400)]);
    engram::undo::undo(&store, &merging, at(4 * 86_400).timestamp_millis()).unwrap();
    let links = store.links("u").unwrap();
    assert!(
        links.iter().all(|l| l.from_id != "my" && l.to_id != "my"),
        "{links:?}"
    );
}

#[test]
fn a_link_a_merge_moved_to_the_canonical_loses_the_deleted_members_words() {
    use engram::model::{Link, LinkType};
    use engram::store::{Write, WriteBatch};
    let (_dir, store) = store();
    run(
        &store,
        "day-1",
        &[
            Event::MemoryCreated(created("u", "x", "Gina lives in Lisbon", 0)),
            Event::MemoryCreated(created("u", "d", FIRST, 10)),
            Event::MemoryCreated(created("u", "c", SECOND, 20)),
        ],
    );
    // As a merge of d into c leaves them: c's text fused, d superseded, and
    // the contradiction x had with d moved to c with its reason.
    let mut c = store.memory("u", "c").unwrap().unwrap();
    c.content = format!("{SECOND} (also: In Quixmoor)");
    c.merged_from = vec!["d".into()];
    let link = |from: &str, to: &str, link_type, reason: &str| {
        Write::PutLink(Link {
            user_id: "u".into(),
            from_id: from.into(),
            to_id: to.into(),
            link_type,
            confidence: 0.5,
            reason: reason.into(),
            created_at: 0,
            run_id: None,
        })
    };
    let writes = vec![
        Write::PutMemory(c),
        link(
            "x",
            "c",
            LinkType::Contradicts,
            "`lisbon` ↔ `quixmoor` (place)",
        ),
        link("c", "d", LinkType::Consolidates, "covers it"),
    ];
    store.commit(&WriteBatch { writes }).unwrap();

    run(&store, "day-2", &[deleted("u", "d", 90_000)]);
    assert_eq!(store.memory("u", "c").unwrap().unwrap().content, SECOND);
    let links = store.links("u").unwrap();
    assert_eq!(links.len(), 1, "{links:?}");
    assert_eq!(links[0].reason, "`lisbon` ↔ `[deleted]` (place)");
}
