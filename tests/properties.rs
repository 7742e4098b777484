//! Properties over generated inputs (proptest): salience stays a bounded,
//! finite, monotone score; the planner is deterministic and never gives one
//! memory to two destructive actions; merges lose no memory; undo restores
//! exactly what execute changed.

mod common;

use std::collections::BTreeSet;

use engram::cycle::{CycleRequest, CycleSettings, load_snapshot, plan_cycle, run_cycle};
use engram::event::{RunMode, TriggerReason};
use engram::model::{Memory, MemoryKind, MemoryStatus};
use engram::plan::ActionType;
use engram::salience::{SalienceParams, SalienceState};
use engram::store::{Store, Write, WriteBatch};
use proptest::prelude::*;

const DAY: i64 = 24 * 3600 * 1000;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn salience_is_finite_bounded_and_monotone(
        created in 0i64..10_000 * DAY,
        reads in proptest::collection::vec(0i64..400 * DAY, 0..40),
        extra in 0i64..400 * DAY,
        later in 0i64..1_000 * DAY,
        importance in prop_oneof![0.0f64..=1.0, Just(f64::NAN), Just(f64::INFINITY), Just(-3.0), Just(7.0)],
    ) {
        let params = SalienceParams::default();
        let mut state = SalienceState::new(created);
        for offset in &reads {
            state.record_access(created + offset);
        }
        let last = reads.iter().max().map_or(created, |r| created + r);
        let now = last.max(created + extra);
        let value = state.salience(now, importance, &params);
        prop_assert!(value.is_finite(), "{value}");
        prop_assert!((0.0..=1.0).contains(&value), "{value}");
        // One more read (now) never lowers it.
        let mut read_again = state.clone();
        read_again.record_access(now);
        prop_assert!(read_again.salience(now, importance, &params) >= value - 1e-12);
        // Time alone never raises it.
        prop_assert!(state.salience(now + later, importance, &params) <= value + 1e-12);
        // Importance never lowers it.
        if importance.is_finite() && (0.0..=0.9).contains(&importance) {
            prop_assert!(state.salience(now, importance + 0.1, &params) >= value - 1e-12);
        }
    }
}

/// A generated memory: which of a few topics it is about (its vector and
/// text), how far its vector strays, and when and how it was used.
#[derive(Debug, Clone)]
struct Spec {
    topic: usize,
    noise: u64,
    wording: usize,
    negated: bool,
    kind: usize,
    age_days: i64,
    reads: usize,
    importance: f64,
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        0usize..5,
        any::<u64>(),
        0usize..3,
        any::<bool>(),
        0usize..4,
        0i64..90,
        0usize..8,
        0.0f64..=1.0,
    )
        .prop_map(
            |(topic, noise, wording, negated, kind, age_days, reads, importance)| Spec {
                topic,
                noise,
                wording,
                negated,
                kind,
                age_days,
                reads,
                importance,
            },
        )
}

const TOPICS: [(&str, &str); 5] = [
    ("the project", "PostgreSQL"),
    ("the API", "REST"),
    ("the team", "Kubernetes"),
    ("the build", "Jenkins"),
    ("the user", "dark mode"),
];

/// A unit vector near the topic's axis; `noise` picks the stray.
fn vector(topic: usize, noise: u64) -> Vec<f32> {
    let mut seed = noise | 1;
    let mut v: Vec<f32> = (0..384)
        .map(|i| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let jitter = (seed % 1000) as f32 / 1000.0 - 0.5;
            let axis = if i % 5 == topic { 1.0 } else { 0.0 };
            axis + 0.35 * jitter * ((noise % 4) as f32 / 3.0)
        })
        .collect();
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    for x in &mut v {
        *x /= norm;
    }
    v
}

const NOW: i64 = 200 * DAY;

fn memory(index: usize, spec: &Spec) -> Memory {
    let (subject, object) = TOPICS[spec.topic];
    let verb = match (spec.negated, spec.wording) {
        (true, _) => "does not use",
        (false, 0) => "uses",
        (false, 1) => "relies on",
        _ => "is built on",
    };
    let content = format!("{subject} {verb} {object}.");
    let created = NOW - spec.age_days * DAY;
    let mut salience = SalienceState::new(created);
    for read in 0..spec.reads {
        salience.record_access(created + (read as i64 + 1) * (NOW - created) / 10);
    }
    Memory {
        user_id: "u".into(),
        id: format!("m{index:03}"),
        kind: MemoryKind::ALL[spec.kind],
        category: None,
        tags: vec![],
        content_hash: engram::text::content_hash(&content),
        content,
        importance: spec.importance,
        source: None,
        embedding: Some(vector(spec.topic, spec.noise)),
        status: MemoryStatus::Active,
        salience,
        merged_from: vec![],
        derived_from: vec![],
        last_run_id: None,
        updated_at: None,
    }
}

fn request(run: &str, mode: RunMode) -> CycleRequest {
    CycleRequest {
        user_id: "u".into(),
        run_id: run.into(),
        trigger: TriggerReason::Manual,
        mode,
        now: NOW,
    }
}

const DESTRUCTIVE: [ActionType; 5] = [
    ActionType::Merge,
    ActionType::Supersede,
    ActionType::Archive,
    ActionType::Split,
    ActionType::Promote,
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn plans_are_deterministic_exclusive_lossless_and_undoable(
        specs in proptest::collection::vec(spec(), 2..32)
    ) {
        let (_dir, store) = common::store();
        let writes = specs
            .iter()
            .enumerate()
            .map(|(i, s)| Write::PutMemory(memory(i, s)))
            .collect();
        store.commit(&WriteBatch { writes }).unwrap();
        let settings = CycleSettings::default();
        let snapshot = load_snapshot(&store, "u").unwrap();

        // Deterministic: the same snapshot and request, the same plan.
        let first = plan_cycle(&request("r", RunMode::Execute), &snapshot, &settings);
        let again = plan_cycle(&request("r", RunMode::Execute), &snapshot, &settings);
        prop_assert_eq!(&first, &again);

        // Exclusive: no memory is the target of two destructive actions.
        let mut taken = BTreeSet::new();
        for action in first.actions.iter().filter(|a| DESTRUCTIVE.contains(&a.action_type)) {
            for id in &action.target_ids {
                prop_assert!(taken.insert(id.clone()), "{} in two destructive actions", id);
            }
        }

        let before_memories = store.memories("u").unwrap();
        let before_links = store.links("u").unwrap();
        let output = run_cycle(&store, &request("r", RunMode::Execute), &settings, None).unwrap();
        let after: std::collections::BTreeMap<String, Memory> = store
            .memories("u")
            .unwrap()
            .into_iter()
            .map(|m| (m.id.clone(), m))
            .collect();

        // Lossless merges: every merged memory is active or named in the
        // `merged_from` of its cluster's active canonical memory.
        for action in output.report.actions.iter().filter(|a| a.action_type == ActionType::Merge) {
            let canonical = action.canonical_id.as_ref().expect("a merge keeps one memory");
            let kept = &after[canonical];
            prop_assert_eq!(kept.status, MemoryStatus::Active);
            for id in &action.target_ids {
                prop_assert!(
                    after[id].status == MemoryStatus::Active || kept.merged_from.contains(id),
                    "{} lost in a merge into {}", id, canonical
                );
            }
        }
        // Nothing disappears: every memory is still stored.
        for memory in &before_memories {
            prop_assert!(after.contains_key(&memory.id), "{} vanished", memory.id);
        }

        // Undo restores exactly the prior memories and links.
        engram::undo::undo(&store, "r", NOW).unwrap();
        prop_assert_eq!(store.memories("u").unwrap(), before_memories);
        prop_assert_eq!(store.links("u").unwrap(), before_links);
    }
}
