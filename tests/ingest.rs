//! Embeddings at ingest, with the real model: every new memory gets a vector,
//! the same text is never embedded twice for a user, and near-duplicates of a
//! new memory are found at once and counted on the user's state.

mod common;

use std::io::Cursor;

use common::*;
use engram::clock::{Clock, ClockMode};
use engram::embed::{EMBEDDING_DIM, Embedder, EmbeddingConfig};
use engram::emit::JsonLinesSink;
use engram::event::*;
use engram::index::{IndexConfig, UserIndexes};
use engram::pipeline::{Pipeline, RunSummary};
use engram::source::LineSource;
use engram::store::{Store, dump};

const SAMPLE: &str = include_str!("../examples/events.jsonl");

fn run(store: &dyn Store, input: &str, batch_size: usize) -> RunSummary {
    let codec = EventCodec::new(Limits::default()).unwrap();
    let mut out = Vec::new();
    let mut sink = JsonLinesSink::new(&codec, Box::new(&mut out), None);
    let mut source = LineSource::new(Cursor::new(input.as_bytes()), "test-input", 1 << 20);
    let clock = Clock::new(ClockMode::Stream, true);
    let model = model();
    let mut pipeline = Pipeline::new(&codec, store, manual_cycles_only(), batch_size, clock)
        .with_embedder(
            model.as_ref() as &dyn Embedder,
            &EmbeddingConfig::default(),
            UserIndexes::new(EMBEDDING_DIM, IndexConfig::default()),
        );
    pipeline.run(&mut source, &mut sink).unwrap()
}

#[test]
fn every_sample_memory_gets_a_unit_vector_and_a_replay_embeds_nothing() {
    let (_dir, store) = store();
    // Without the sample's executed consolidation requests, which reset the
    // users' candidate counts.
    let input: String = SAMPLE
        .lines()
        .filter(|line| !line.contains("\"consolidation.requested\""))
        .map(|line| format!("{line}\n"))
        .collect();
    let first = run(&store, &input, 500);
    // Every new text needs a vector: creations, and the sample's edit.
    let texts = first.applied["memory.created"] + first.applied["memory.updated"];
    let counts = first.embeddings;
    println!("{first}");
    assert_eq!(counts.computed + counts.reused + counts.supplied, texts);
    assert!(counts.computed > 0 && counts.reused > 0, "{counts:?}");
    assert!(
        first.near_duplicates > 0,
        "the sample has paraphrased duplicates"
    );
    for user in store.users().unwrap() {
        for memory in store.memories(&user).unwrap() {
            let vector = memory.embedding.expect("every memory is embedded");
            assert_eq!(vector.len(), EMBEDDING_DIM);
            let norm: f32 = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
            assert!((norm - 1.0).abs() < 1e-4);
        }
    }
    let candidates: u64 = store
        .users()
        .unwrap()
        .iter()
        .map(|u| store.user_state(u).unwrap().unwrap().duplicate_candidates)
        .sum();
    assert_eq!(candidates, first.near_duplicates);

    let before = dump(&store).unwrap();
    let replay = run(&store, &input, 500);
    assert_eq!(replay.embeddings.computed, 0, "{:?}", replay.embeddings);
    assert_eq!(replay.near_duplicates, 0);
    assert_eq!(dump(&store).unwrap(), before);
}

#[test]
fn the_same_text_is_embedded_once_per_user() {
    let (_dir, store) = store();
    let text = "The user prefers dark mode in every editor.";
    let mut events = vec![
        Event::MemoryCreated(created("u", "m1", text, 0)),
        // Same normalised text: reused within the batch.
        Event::MemoryCreated(created(
            "u",
            "m2",
            "the user prefers DARK mode in every editor. ",
            1,
        )),
        // Another user: embedded separately.
        Event::MemoryCreated(created("v", "m1", text, 2)),
    ];
    let summary = run(&store, &lines(&events), 100);
    assert_eq!(summary.embeddings.computed, 2, "{:?}", summary.embeddings);
    assert_eq!(summary.embeddings.reused, 1);
    let m1 = store.memory("u", "m1").unwrap().unwrap().embedding;
    assert_eq!(store.memory("u", "m2").unwrap().unwrap().embedding, m1);

    // A later batch with the same text reuses the stored vector (the same
    // input read again, one event longer: the replayed lines need none).
    events.push(Event::MemoryCreated(created("u", "m3", text, 3)));
    let later = run(&store, &lines(&events), 100);
    assert_eq!(later.replayed, 3);
    assert_eq!(later.embeddings.computed, 0);
    assert_eq!(later.embeddings.reused, 1);
}

#[test]
fn a_paraphrase_is_a_near_duplicate_candidate_and_an_unrelated_memory_is_not() {
    let (_dir, store) = store();
    let events = [
        created("u", "m1", "The user prefers dark mode in every tool.", 0),
        created(
            "u",
            "m2",
            "The user prefers dark mode in all of their tools.",
            10,
        ),
        created("u", "m3", "The user's cat is called Miso.", 20),
    ];
    // One event per batch: the index must carry across batches.
    let summary = run(&store, &lines(&events.map(Event::MemoryCreated)), 1);
    assert_eq!(summary.near_duplicates, 1);
    let state = store.user_state("u").unwrap().unwrap();
    assert_eq!(state.duplicate_candidates, 1);
}

#[test]
fn a_platform_embedding_of_the_right_dimension_is_used_as_given() {
    let (_dir, store) = store();
    let model = model();
    let vector = model
        .embed(&["Deploys go out on Tuesdays."], 1)
        .unwrap()
        .remove(0);
    let mut supplied = created("u", "m1", "Deploys go out on Tuesdays.", 0);
    supplied.embedding = Some(vector.iter().map(|x| x * 3.0).collect());
    let mut wrong = created("u", "m2", "Releases are cut on Mondays.", 1);
    wrong.embedding = Some(vec![1.0; 12]);
    let summary = run(
        &store,
        &lines(&[Event::MemoryCreated(supplied), Event::MemoryCreated(wrong)]),
        10,
    );
    assert_eq!(summary.embeddings.supplied, 1);
    assert_eq!(
        summary.embeddings.computed, 1,
        "the wrong dimension is recomputed"
    );
    let kept = store.memory("u", "m1").unwrap().unwrap().embedding.unwrap();
    let drift: f32 = kept
        .iter()
        .zip(&vector)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f32::max);
    assert!(drift < 1e-5, "normalised, not recomputed: {drift}");
    assert_eq!(
        store
            .memory("u", "m2")
            .unwrap()
            .unwrap()
            .embedding
            .unwrap()
            .len(),
        EMBEDDING_DIM
    );
}
