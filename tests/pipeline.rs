//! The embedded pipeline end to end: idempotent replays, dead letters, stream
//! time and the consolidation request path.

mod common;
#[path = "common/spy.rs"]
mod spy;

use std::io::Cursor;

use base64::Engine as _;
use common::*;
use engram::clock::{Clock, ClockMode};
use engram::cycle::CycleSettings;
use engram::emit::JsonLinesSink;
use engram::event::*;
use engram::model::{PendingRun, UserState};
use engram::pipeline::{Pipeline, RunSummary};
use engram::source::LineSource;
use engram::store::{Store, dump};
use serde_json::Value;
use spy::Spy;

const SAMPLE: &str = include_str!("../examples/events.jsonl");

struct Run {
    summary: RunSummary,
    outputs: Vec<Value>,
}

fn run(store: &dyn Store, input: &str, batch_size: usize) -> Run {
    run_stream(store, "test-input", input, Limits::default(), batch_size)
}

/// [`run`] with each batch's saliences carried into the next, as a
/// service's partition worker runs.
fn run_carrying(store: &dyn Store, input: &str, batch_size: usize) -> Run {
    let codec = EventCodec::new(Limits::default()).unwrap();
    let mut out = Vec::new();
    let summary = {
        let mut sink = JsonLinesSink::new(&codec, Box::new(&mut out), None);
        let mut source = LineSource::new(Cursor::new(input.as_bytes()), "test-input", 1 << 20);
        let clock = Clock::new(ClockMode::Stream, true);
        let mut pipeline =
            Pipeline::new(&codec, store, CycleSettings::default(), batch_size, clock)
                .carrying_saliences();
        pipeline.run(&mut source, &mut sink).unwrap()
    };
    Run {
        summary,
        outputs: output_lines(out),
    }
}

/// An embedded run of `input` as the stream `stream`, on stream time.
fn run_stream(
    store: &dyn Store,
    stream: &str,
    input: &str,
    limits: Limits,
    batch_size: usize,
) -> Run {
    let codec = EventCodec::new(limits).unwrap();
    let mut out = Vec::new();
    let summary = {
        let mut sink = JsonLinesSink::new(&codec, Box::new(&mut out), None);
        let mut source = LineSource::new(Cursor::new(input.as_bytes()), stream, 1 << 20);
        let clock = Clock::new(ClockMode::Stream, true);
        let mut pipeline =
            Pipeline::new(&codec, store, CycleSettings::default(), batch_size, clock);
        pipeline.run(&mut source, &mut sink).unwrap()
    };
    Run {
        summary,
        outputs: output_lines(out),
    }
}

#[test]
fn replaying_the_sample_changes_nothing() {
    let (_dir, store) = store();
    let first = run(&store, SAMPLE, 500);
    let after_first = dump(&store).unwrap();
    assert!(first.summary.applied_total() > 4000, "{}", first.summary);
    let second = run(&store, SAMPLE, 500);
    assert_eq!(
        dump(&store).unwrap(),
        after_first,
        "identical state after a replay"
    );
    assert_eq!(second.summary.applied_total(), 0, "{}", second.summary);
    // The erased user's watermarks went with him: his tombstone refuses
    // his events instead (four before the erasure, the erasure again).
    let refused = second.summary.rejected.get("erased_user").unwrap_or(&0)
        + second.summary.ignored.get("already_erased").unwrap_or(&0);
    assert_eq!(refused, 5, "{}", second.summary);
    assert_eq!(
        second.summary.replayed + refused,
        first.summary.applied_total()
            + first.summary.parked
            + first.summary.rejected.get("unknown_memory").unwrap_or(&0),
        "every applied, parked or applied-and-rejected event is recognised as a replay"
    );
}

#[test]
fn crash_and_restart_gives_the_same_state_as_one_run() {
    let (_dir, uninterrupted) = store();
    run(&uninterrupted, SAMPLE, 250);
    // A "crash" after an arbitrary prefix (mid-batch, so part of the input was
    // committed and part not), then a restart from the beginning.
    for cut in [1, 777, 2500] {
        let (_dir, restarted) = store();
        let prefix: String = SAMPLE.lines().take(cut).map(|l| format!("{l}\n")).collect();
        run(&restarted, &prefix, 250);
        run(&restarted, SAMPLE, 250);
        assert_eq!(
            dump(&restarted).unwrap(),
            dump(&uninterrupted).unwrap(),
            "cut at {cut}"
        );
    }
}

#[test]
fn batch_size_does_not_change_the_result() {
    let (_a, one) = store();
    let (_b, many) = store();
    run(&one, SAMPLE, 1);
    run(&many, SAMPLE, 10_000);
    assert_eq!(dump(&one).unwrap(), dump(&many).unwrap());
}

/// Asserts that a run left the store another left and wrote its outputs,
/// but for `varying`, fields whose values may differ between them; each as
/// (store dump, outputs). A failure names the first difference.
fn assert_same_result(
    what: &str,
    got: (&Value, &[Value]),
    expected: (&Value, &[Value]),
    varying: &[&str],
) {
    assert!(
        got.0 == expected.0,
        "the store, {what}: {}",
        first_difference(got.0, expected.0, String::new())
    );
    let (outputs, expected_outputs) = (without(varying, got.1), without(varying, expected.1));
    assert!(
        outputs == expected_outputs,
        "outputs, {what}: {}",
        first_difference(&outputs, &expected_outputs, String::new())
    );
}

/// `outputs` without `fields` in any of them: figures that may vary.
fn without(fields: &[&str], outputs: &[Value]) -> Value {
    let mut outputs = outputs.to_vec();
    for output in &mut outputs {
        if let Some(object) = output.as_object_mut() {
            for field in fields {
                object.remove(*field);
            }
        }
    }
    Value::Array(outputs)
}

/// Saliences carried from batch to batch leave the store and the outputs
/// as reading them afresh does, through the sample's deletions, erasure,
/// re-creations and cycles (whose merges absorb their members' reads).
#[test]
fn carrying_saliences_between_batches_does_not_change_the_result() {
    for batch_size in [1, 25, 700] {
        let (_fresh_dir, fresh) = store();
        let expected = run(&fresh, SAMPLE, batch_size);
        let (_dir, carrying) = store();
        let got = run_carrying(&carrying, SAMPLE, batch_size);
        let (fresh_dump, carrying_dump) = (dump(&fresh).unwrap(), dump(&carrying).unwrap());
        // A run's duration is the one figure of its report that varies.
        assert_same_result(
            &format!("batches of {batch_size}"),
            (&carrying_dump, &got.outputs),
            (&fresh_dump, &expected.outputs),
            &["duration_ms"],
        );
        // Carried again over a replay: nothing changes.
        run_carrying(&carrying, SAMPLE, batch_size);
        assert!(dump(&carrying).unwrap() == fresh_dump);
    }
}

/// The reads a batch applies with one lookup each (a loaded user, a
/// salience it holds) leave the store and the outputs as reads applied one
/// batch at a time do (where no user is loaded before its event), at each
/// edge of that path: a read from before its user's erasure, of a memory
/// deleted in the batch, and beside a read parked until it ages out.
#[test]
fn reads_applied_within_a_batch_match_reads_applied_one_at_a_time() {
    let erasure = Event::UserErased(UserErased {
        event_id: "erase-1".into(),
        user_id: "erased".into(),
        erased_at: at(200),
    });
    let deletion = Event::MemoryDeleted(MemoryDeleted {
        event_id: "delete-1".into(),
        user_id: "deleting".into(),
        memory_id: "m1".into(),
        deleted_at: at(1_120),
    });
    let read =
        |user: &str, memory: &str, seconds| Event::MemoryAccessed(accessed(user, memory, seconds));
    // Committed before the reads, so the reads find saliences alone.
    let before = lines(&[
        Event::MemoryCreated(created("erased", "m1", "Ana keeps bees.", 0)),
        erasure,
        Event::MemoryCreated(created("erased", "m2", "Ana moved to Porto.", 300)),
        Event::MemoryCreated(created("parking", "m1", "Ben plays the cello.", 0)),
        Event::MemoryCreated(created("deleting", "m1", "Cy runs on Sundays.", 0)),
        Event::MemoryCreated(created("deleting", "m2", "Cy works in Lyon.", 0)),
        Event::MemoryCreated(created("plain", "m1", "Dee speaks Greek.", 0)),
    ]);
    let reads = lines(&[
        read("plain", "m1", 1_000),
        read("plain", "m1", 1_010),
        // After the erasure, then from before it: refused.
        read("erased", "m2", 1_000),
        read("erased", "m2", 150),
        read("deleting", "m1", 1_100),
        read("deleting", "m2", 1_101),
        deletion,
        read("deleting", "m1", 1_130),
        read("deleting", "m2", 1_140),
        // A read of a memory that comes too late, parked, then reads past
        // its hour: it ages out before its memory comes.
        read("parking", "ghost", 1_000),
        read("parking", "m1", 1_010),
        read("parking", "m1", 5_000),
        read("parking", "m1", 5_010),
        Event::MemoryCreated(created("parking", "ghost", "Ben tunes pianos.", 5_100)),
        read("plain", "m1", 5_120),
    ]);
    let runs = [1, 1_000].map(|batch_size| {
        let (dir, store) = store();
        run(&store, &before, 100);
        let run = run_stream(&store, "test-reads", &reads, Limits::default(), batch_size);
        (dir, dump(&store).unwrap(), run)
    });
    let [(_a, one_dump, one), (_b, many_dump, many)] = runs;
    assert_same_result(
        "one batch against batches of one",
        (&many_dump, &many.outputs),
        (&one_dump, &one.outputs),
        &[],
    );
    // The ghost's letter is stamped with the end of its read's wait, not
    // with when a batch noticed it: parked at the stream time of 1,140 s
    // (the latest event before it), it waits an hour by default.
    let ghost = one
        .outputs
        .iter()
        .find(|output| {
            output["reason"]
                .as_str()
                .is_some_and(|reason| reason.starts_with("memory ghost "))
        })
        .expect("the ghost read's dead letter");
    let rejected_at = ghost["rejected_at"].as_str().unwrap_or_default();
    assert_eq!(
        chrono::DateTime::parse_from_rfc3339(rejected_at).ok(),
        Some((at(1_140) + Limits::default().max_parked_read_age).fixed_offset()),
        "{rejected_at}"
    );
    for summary in [&many.summary, &one.summary] {
        assert_eq!(summary.rejected.get("erased_user"), Some(&1), "{summary}");
        assert_eq!(summary.replayed, 0, "{summary}");
    }
}

#[test]
fn bad_lines_go_to_the_dead_letter_output_and_the_run_goes_on() {
    let (_dir, store) = store();
    let input = format!(
        "{}not json\n{}{{\"type\":\"memory.created\",\"user_id\":\"u\"}}\n{}",
        lines(&[Event::MemoryCreated(created("u", "m1", "first", 0))]),
        lines(&[Event::MemoryAccessed(accessed("u", "ghost", 5))]),
        // An hour later: the read of "ghost" has waited for it long enough.
        lines(&[Event::MemoryAccessed(accessed("u", "m1", 3_700))]),
    );
    let result = run(&store, &input, 100);
    assert_eq!(result.summary.applied_total(), 2);
    assert_eq!(result.summary.rejected_total(), 3);
    let dlq: Vec<&Value> = result
        .outputs
        .iter()
        .filter(|o| o["type"] == "engram.dlq")
        .collect();
    let kinds: Vec<&str> = dlq
        .iter()
        .map(|d| d["error_kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["undecodable", "missing_field", "unknown_memory"]);
    assert_eq!(dlq[2]["offset"], 2, "the parked read's own position");
    assert_eq!(dlq[0]["offset"], 1);
    assert_eq!(dlq[0]["source_topic"], "test-input");
    let original = base64::engine::general_purpose::STANDARD
        .decode(dlq[0]["original"].as_str().unwrap())
        .unwrap();
    assert_eq!(original, b"not json", "original bytes are kept");
    assert!(dlq[1]["reason"].as_str().unwrap().contains("event_id"));
    let memory = store.memory("u", "m1").unwrap().unwrap();
    assert_eq!(
        memory.salience.access_count(),
        1,
        "the run went on after the bad lines"
    );
}

#[test]
fn access_to_an_unknown_user_is_rejected_as_such() {
    let (_dir, store) = store();
    let result = run(
        &store,
        &lines(&[Event::MemoryAccessed(accessed("nobody", "m", 1))]),
        10,
    );
    assert_eq!(result.summary.rejected.get("unknown_user"), Some(&1));
}

#[test]
fn reads_for_users_never_seen_leave_no_user_row() {
    let (_dir, store) = store();
    let reads: Vec<Event> = (0..5)
        .map(|i| Event::MemoryAccessed(accessed(&format!("stray-{i}"), "m", i)))
        .collect();
    let result = run(&store, &lines(&reads), 10);
    assert_eq!(result.summary.rejected.get("unknown_user"), Some(&5));
    assert_eq!(store.users().unwrap(), Vec::<String>::new());
    assert!(store.user_state("stray-0").unwrap().is_none());
}

/// A consolidation request names a user id, and anyone who can reach the
/// HTTP API or the topic can send one: for a user with no memories it
/// must not create a state row, nor claim a partition for that user.
#[test]
fn a_consolidation_request_for_an_unknown_user_is_rejected_as_such() {
    let (_dir, store) = store();
    let request = Event::ConsolidationRequested(ConsolidationRequested {
        event_id: "r".into(),
        user_id: "nobody".into(),
        requested_at: at(5),
        execute: Some(true),
        reason: None,
    });
    let result = run(&store, &lines(&[request]), 10);
    assert_eq!(result.summary.rejected.get("unknown_user"), Some(&1));
    assert!(store.user_state("nobody").unwrap().is_none());
    assert_eq!(store.users().unwrap(), Vec::<String>::new());
    let kinds = dead_letter_kinds(&result);
    assert_eq!(kinds, [("unknown_user".to_owned(), 0)]);
}

#[test]
fn re_created_memory_keeps_its_salience_and_takes_new_content() {
    let (_dir, store) = store();
    let mut again = created("u", "m1", "Uses MySQL.", 0);
    again.event_id = "second".into();
    again.content = "Uses PostgreSQL.".into();
    let input = lines(&[
        Event::MemoryCreated(created("u", "m1", "Uses MySQL.", 0)),
        Event::MemoryAccessed(accessed("u", "m1", 10)),
        Event::MemoryCreated(again),
    ]);
    run(&store, &input, 2);
    let memory = store.memory("u", "m1").unwrap().unwrap();
    assert_eq!(memory.content, "Uses PostgreSQL.");
    assert_eq!(memory.salience.access_count(), 1);
    assert_eq!(
        memory.content_hash,
        engram::text::content_hash("uses postgresql")
    );
    assert_eq!(
        store.user_state("u").unwrap().unwrap().new_since_cycle,
        1,
        "an update is not a new memory"
    );
}

#[test]
fn platform_embeddings_of_the_right_dimension_are_kept_normalised() {
    let (_dir, store) = store();
    let mut right = created("u", "m1", "a", 0);
    right.embedding = Some(vec![3.0; 384]);
    let mut wrong = created("u", "m2", "b", 0);
    wrong.embedding = Some(vec![1.0; 12]);
    run(
        &store,
        &lines(&[Event::MemoryCreated(right), Event::MemoryCreated(wrong)]),
        10,
    );
    let kept = store.memory("u", "m1").unwrap().unwrap().embedding.unwrap();
    let norm: f32 = kept.iter().map(|x| x * x).sum::<f32>().sqrt();
    assert!((norm - 1.0).abs() < 1e-5);
    assert_eq!(store.memory("u", "m2").unwrap().unwrap().embedding, None);
}

#[test]
fn consolidation_request_reports_honestly_at_stream_time() {
    let (_dir, store) = store();
    let request = |id: &str, execute| {
        Event::ConsolidationRequested(ConsolidationRequested {
            event_id: id.into(),
            user_id: "u".into(),
            requested_at: at(50),
            execute: Some(execute),
            reason: None,
        })
    };
    let input = lines(&[
        Event::MemoryCreated(created("u", "m1", "one", 0)),
        Event::MemoryCreated(created("u", "m2", "two", 10)),
        Event::MemoryAccessed(accessed("u", "m1", 80)),
        request("dry", false),
        request("real", true),
    ]);
    let result = run(&store, &input, 100);
    let types: Vec<&str> = result
        .outputs
        .iter()
        .map(|o| o["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        [
            "consolidation.triggered",
            "consolidation.completed",
            "consolidation.triggered",
            "consolidation.completed"
        ]
    );
    let completed = &result.outputs[1];
    assert_eq!(completed["mode"], "dry_run");
    assert_eq!(completed["counts"]["memories_processed"], 2);
    assert_eq!(completed["actions"].as_array().unwrap().len(), 0);
    assert_eq!(completed["warnings"][0], "nothing to consolidate");
    // Stream time: the latest event time seen (the access at +80 s), not the wall clock.
    assert_eq!(
        completed["started_at"].as_str().unwrap(),
        "2026-08-29T10:41:20Z"
    );
    assert_eq!(result.outputs[3]["mode"], "execute");
    let run_id = result.outputs[3]["run_id"].as_str().unwrap();
    let state = store.user_state("u").unwrap().unwrap();
    assert_eq!(state.last_run_id.as_deref(), Some(run_id));
    assert_eq!(state.new_since_cycle, 0);
    assert_eq!(store.run_reports("u").unwrap().len(), 2);
    // Replaying the same requests produces nothing new.
    let replay = run(&store, &input, 100);
    assert!(replay.outputs.is_empty());
}

#[test]
fn far_future_times_are_rejected_and_no_rejected_event_moves_stream_time() {
    use chrono::TimeZone;
    let (_dir, store) = store();
    let mut from_9999 = created("u", "m9", "a memory dated 9999", 1);
    from_9999.created_at = chrono::Utc.with_ymd_and_hms(9999, 1, 1, 0, 0, 0).unwrap();
    let input = lines(&[
        Event::MemoryCreated(created("u", "m1", "one", 0)),
        Event::MemoryCreated(from_9999),
        // A read of a memory that does not exist, dated later than the rest.
        Event::MemoryAccessed(accessed("u", "ghost", 1_000_000)),
        Event::ConsolidationRequested(ConsolidationRequested {
            event_id: "dry".into(),
            user_id: "u".into(),
            requested_at: at(50),
            execute: Some(false),
            reason: None,
        }),
    ]);
    let result = run(&store, &input, 100);
    assert_eq!(result.summary.rejected.get("bad_timestamp"), Some(&1));
    assert_eq!(result.summary.parked, 1, "the read waits for its memory");
    assert!(store.memory("u", "m9").unwrap().is_none());
    let completed = result
        .outputs
        .iter()
        .find(|o| o["type"] == "consolidation.completed")
        .unwrap();
    assert_eq!(
        completed["started_at"].as_str().unwrap(),
        "2026-08-29T10:40:50Z",
        "stream time is the request's, the latest accepted event: {:?}",
        result.outputs
    );
}

fn run_with_limits(store: &dyn Store, input: &str, limits: Limits) -> Run {
    run_stream(store, "test-input", input, limits, 100)
}

/// The reads waiting, with `user`'s state, for their memories.
fn parked_reads(store: &dyn Store, user: &str) -> Vec<engram::model::ParkedRead> {
    store.user_state(user).unwrap().unwrap().parked_reads
}

/// The run's dead letters, in order.
fn dead_letters(run: &Run) -> Vec<&serde_json::Value> {
    run.outputs
        .iter()
        .filter(|o| o["type"] == "engram.dlq")
        .collect()
}

/// The reason its first dead letter gives.
fn first_dead_letter_reason(run: &Run) -> &str {
    dead_letters(run)[0]["reason"].as_str().unwrap()
}

fn dead_letter_kinds(run: &Run) -> Vec<(String, i64)> {
    dead_letters(run)
        .into_iter()
        .map(|d| {
            (
                d["error_kind"].as_str().unwrap().to_owned(),
                d["offset"].as_i64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn a_read_that_overtakes_its_memory_counts_once_the_memory_is_created() {
    let (_dir, store) = store();
    // Another memory makes the user known; m2's read comes before m2.
    let input = lines(&[
        Event::MemoryCreated(created("u", "m1", "first", 0)),
        Event::MemoryAccessed(accessed("u", "m2", 20)),
        Event::MemoryAccessed(accessed("u", "m2", 25)),
        Event::MemoryCreated(created("u", "m2", "second", 10)),
    ]);
    let result = run_with_limits(&store, &input, Limits::default());
    assert_eq!(dead_letter_kinds(&result), []);
    assert_eq!(
        (result.summary.parked, result.summary.unparked),
        (2, 2),
        "{}",
        result.summary
    );
    let memory = store.memory("u", "m2").unwrap().unwrap();
    assert_eq!(memory.salience.access_count(), 2);
    assert_eq!(
        memory.salience.last_accessed_at(),
        at(25).timestamp_millis()
    );
    assert!(parked_reads(&store, "u").is_empty(), "nothing left waiting");
    // A replay changes nothing: the parked reads were marked applied.
    let before = dump(&store).unwrap();
    let again = run_with_limits(&store, &input, Limits::default());
    assert_eq!(again.summary.replayed, 4);
    assert_eq!(dump(&store).unwrap(), before);
}

#[test]
fn a_parked_read_whose_memory_never_comes_is_dead_lettered_when_it_ages_out() {
    let limits = Limits {
        max_parked_read_age: std::time::Duration::from_secs(60),
        ..Limits::default()
    };
    let (_dir, store) = store();
    let waiting = lines(&[
        Event::MemoryCreated(created("u", "m1", "first", 0)),
        Event::MemoryAccessed(accessed("u", "ghost", 10)),
    ]);
    let first = run_with_limits(&store, &waiting, limits);
    assert_eq!(dead_letter_kinds(&first), [], "still waiting");
    assert_eq!(
        parked_reads(&store, "u").len(),
        1,
        "kept with the user's state, across runs"
    );
    // Stream time moves 2 minutes on: the read has waited long enough.
    let later = format!(
        "{waiting}{}",
        lines(&[Event::MemoryCreated(created("u", "m3", "third", 130))])
    );
    let second = run_with_limits(&store, &later, limits);
    assert_eq!(
        dead_letter_kinds(&second),
        [("unknown_memory".to_owned(), 1)]
    );
    let reason = first_dead_letter_reason(&second);
    assert!(reason.contains("max_parked_read_age"), "{reason}");
    assert!(parked_reads(&store, "u").is_empty());
}

#[test]
fn reads_beyond_the_parking_limit_are_dead_lettered_at_once() {
    let limits = Limits {
        max_parked_reads_per_user: 2,
        ..Limits::default()
    };
    let (_dir, store) = store();
    let input = lines(&[
        Event::MemoryCreated(created("u", "m1", "first", 0)),
        Event::MemoryAccessed(accessed("u", "a", 1)),
        Event::MemoryAccessed(accessed("u", "b", 2)),
        Event::MemoryAccessed(accessed("u", "c", 3)),
    ]);
    let result = run_with_limits(&store, &input, limits);
    assert_eq!(
        dead_letter_kinds(&result),
        [("unknown_memory".to_owned(), 3)]
    );
    assert_eq!(result.summary.parked, 2);
}

/// Whatever an error message quotes of a bad record (a junk timestamp, an
/// unknown type of 990 KB), its dead letter fits one Kafka record: a letter
/// the broker refuses would be dropped while the record's offset commits.
#[test]
fn a_dead_letter_fits_one_record_whatever_its_reason_quotes() {
    let (_dir, store) = store();
    let junk = "9".repeat(990_000);
    let input = format!(
        "{}\n{}\n",
        format_args!(
            r#"{{"type":"memory.accessed","event_id":"e1","user_id":"u","memory_id":"m","accessed_at":"{junk}"}}"#
        ),
        format_args!(r#"{{"type":"{junk}","event_id":"e2","user_id":"u"}}"#),
    );
    let result = run_with_limits(&store, &input, Limits::default());
    let letters = dead_letters(&result);
    assert_eq!(letters.len(), 2);
    for letter in letters {
        let size = serde_json::to_vec(letter).unwrap().len();
        assert!(size < 128 * 1024, "a dead letter of {size} bytes");
        assert!(letter["reason"].as_str().unwrap().len() <= 1024, "{letter}");
        assert!(
            letter["original_length"].as_i64().unwrap() > 990_000,
            "the original is cut, its length kept"
        );
    }
}

/// Parked reads live in the user's state row: a few reads with large
/// contexts must not make it bigger than a CQL batch may be, whatever the
/// count limit allows.
#[test]
fn reads_beyond_the_parked_bytes_limit_are_dead_lettered_at_once() {
    let limits = Limits {
        max_parked_read_bytes_per_user: 8 * 1024,
        ..Limits::default()
    };
    let (_dir, store) = store();
    let mut events = vec![Event::MemoryCreated(created("u", "m1", "first", 0))];
    for (i, id) in ["a", "b", "c", "d"].into_iter().enumerate() {
        let mut read = accessed("u", id, 1 + i as i64);
        read.context = Some("x".repeat(3 * 1024));
        events.push(Event::MemoryAccessed(read));
    }
    let result = run_with_limits(&store, &lines(&events), limits);
    assert_eq!(result.summary.parked, 2, "two of 3 KiB fit in 8 KiB");
    // The third and fourth reads (lines 3 and 4) find no room.
    assert_eq!(
        dead_letter_kinds(&result),
        [
            ("unknown_memory".to_owned(), 3),
            ("unknown_memory".to_owned(), 4)
        ]
    );
    let reason = first_dead_letter_reason(&result);
    assert!(
        reason.contains("max_parked_read_bytes_per_user"),
        "{reason}"
    );
    let parked = parked_reads(&store, "u");
    let bytes: usize = parked.iter().map(|read| read.stored_bytes()).sum();
    assert!(bytes <= 8 * 1024, "{bytes}");
}

#[test]
fn a_partition_assignment_reads_only_the_users_waiting_on_that_partition() {
    use engram::store::{Write, WriteBatch};
    let (_dir, store) = store();
    let state = |user: &str, partition: i32, changed: bool, pending: bool| {
        let mut state = UserState::new(user);
        state.applied_offsets.insert(format!("in/{partition}"), 3);
        state.cycle.changed_since = changed.then_some(at(0).timestamp_millis());
        if pending {
            state.cycle.pending_runs.push(PendingRun {
                run_id: format!("run-{user}"),
                trigger: TriggerReason::Manual,
                mode: RunMode::DryRun,
                now: at(60).timestamp_millis(),
            });
        }
        state
    };
    let mut batch = WriteBatch::default();
    // Another partition's users, all waiting: none of them is this
    // worker's business.
    for n in 0..300 {
        batch.push(Write::PutUserState(state(
            &format!("other-{n}"),
            1,
            true,
            true,
        )));
    }
    batch.push(Write::PutUserState(state("changed", 0, true, false)));
    batch.push(Write::PutUserState(state("queued", 0, true, true)));
    batch.push(Write::PutUserState(state("settled", 0, false, false)));
    store.commit(&batch).unwrap();

    let log = Spy::new(&store);
    let codec = EventCodec::new(Limits::default()).unwrap();
    let mut out = Vec::new();
    let summary = {
        let mut sink = JsonLinesSink::new(&codec, Box::new(&mut out), None);
        let clock = Clock::new(ClockMode::Stream, true);
        let mut pipeline = Pipeline::new(&codec, &log, CycleSettings::default(), 100, clock);
        let owned = engram::pipeline::Owned::Partition {
            streams: vec!["in".to_owned()],
            partition: 0,
        };
        pipeline.recover(&owned, &mut sink).unwrap()
    };
    assert_eq!(
        summary.cycles.values().sum::<u64>(),
        1,
        "the queued run of partition 0 runs: {summary:?}"
    );
    let mut read = log.states_read.into_inner().unwrap();
    read.sort();
    read.dedup();
    assert_eq!(
        read,
        ["changed", "queued"],
        "only partition 0's waiting users are read"
    );
}

/// Runs `events` through `pipeline` as records of `stream`, partition 0,
/// from `first_offset` on, as a partition worker hands them over.
fn process_on_partition(
    pipeline: &mut Pipeline<'_>,
    sink: &mut JsonLinesSink<'_>,
    stream: &str,
    first_offset: i64,
    events: Vec<Event>,
) -> RunSummary {
    let mut records: Vec<_> = events
        .into_iter()
        .zip(first_offset..)
        .map(|(event, offset)| {
            let record = engram::source::SourceRecord {
                stream: stream.into(),
                partition: Some(0),
                offset,
                payload: Default::default(),
                oversize: None,
            };
            (record, Ok(event))
        })
        .collect();
    pipeline.process_decoded(&mut records, sink).unwrap()
}

fn partition_zero(streams: &[&str]) -> engram::pipeline::Owned {
    engram::pipeline::Owned::Partition {
        streams: streams.iter().map(|s| (*s).to_owned()).collect(),
        partition: 0,
    }
}

fn output_lines(out: Vec<u8>) -> Vec<Value> {
    String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// A resumed run reads new input (another stream): until its first
/// applicable event, stream time is unknown, and the wall clock (months
/// after these events) must not age the reads parked by the last run.
#[test]
fn a_resumed_run_does_not_age_parked_reads_by_the_wall_clock() {
    let (_dir, store) = store();
    let day = |stream: &str, events: &[Event]| {
        run_stream(&store, stream, &lines(events), Limits::default(), 100)
    };
    day(
        "day-1",
        &[
            Event::MemoryCreated(created("u", "m1", "first", 0)),
            Event::MemoryAccessed(accessed("u", "m2", 10)),
        ],
    );
    // The next day's input opens with a read that cannot apply yet.
    let second = day(
        "day-2",
        &[
            Event::MemoryAccessed(accessed("u", "m3", 20)),
            Event::MemoryCreated(created("u", "m2", "second", 30)),
        ],
    );
    assert_eq!(dead_letter_kinds(&second), [], "{:?}", second.outputs);
    let memory = store.memory("u", "m2").unwrap().unwrap();
    assert_eq!(memory.salience.access_count(), 1, "the parked read counted");
}

/// After an outage longer than `max_parked_read_age`, a restarted worker
/// must not dead-letter the reads parked before it: their memories'
/// creations wait in the backlog it has not read yet.
#[test]
fn a_restart_after_an_outage_keeps_parked_reads_until_the_backlog_is_read() {
    let limits = Limits {
        max_parked_read_age: std::time::Duration::from_secs(1),
        ..Limits::default()
    };
    let codec = EventCodec::new(limits).unwrap();
    let (_dir, store) = store();
    let owned = partition_zero(&["created", "accessed"]);
    let start = chrono::Utc::now() - chrono::Duration::hours(2);
    let at_ms = |millis: i64| start + chrono::Duration::milliseconds(millis);
    let mut first_created = created("u", "m1", "first", 0);
    first_created.created_at = at_ms(0);
    let mut early_read = accessed("u", "m2", 0);
    early_read.accessed_at = at_ms(10_000);
    let mut out = Vec::new();
    {
        let mut sink = JsonLinesSink::new(&codec, Box::new(&mut out), None);
        let clock = Clock::new(ClockMode::Wall, false);
        let mut pipeline = Pipeline::new(&codec, &store, CycleSettings::default(), 100, clock);
        pipeline.recover(&owned, &mut sink).unwrap();
        process_on_partition(
            &mut pipeline,
            &mut sink,
            "created",
            0,
            vec![Event::MemoryCreated(first_created)],
        );
        let parked = process_on_partition(
            &mut pipeline,
            &mut sink,
            "accessed",
            0,
            vec![Event::MemoryAccessed(early_read)],
        );
        assert_eq!(parked.parked, 1);
    }
    // The outage: longer than the parked reads may wait.
    std::thread::sleep(std::time::Duration::from_millis(1_200));
    let mut out = Vec::new();
    {
        let mut sink = JsonLinesSink::new(&codec, Box::new(&mut out), None);
        let clock = Clock::new(ClockMode::Wall, false);
        let mut pipeline = Pipeline::new(&codec, &store, CycleSettings::default(), 100, clock);
        pipeline.recover(&owned, &mut sink).unwrap();
        let mut late_created = created("u", "m2", "second", 0);
        late_created.created_at = at_ms(10_500);
        process_on_partition(
            &mut pipeline,
            &mut sink,
            "created",
            1,
            vec![Event::MemoryCreated(late_created)],
        );
    }
    let outputs = output_lines(out);
    assert!(
        outputs.iter().all(|o| o["type"] != "engram.dlq"),
        "{outputs:?}"
    );
    let memory = store.memory("u", "m2").unwrap().unwrap();
    assert_eq!(memory.salience.access_count(), 1, "the parked read counted");
}

/// A user with a parked read and no event since, on a partition busy with
/// other users: stream time moves on, and the read ages out by it without
/// waiting for an idle moment.
#[test]
fn parked_reads_of_quiet_users_age_out_on_a_busy_partition() {
    let limits = Limits {
        max_parked_read_age: std::time::Duration::from_secs(60),
        ..Limits::default()
    };
    let (_dir, store) = store();
    let mut events = vec![
        Event::MemoryCreated(created("u", "m1", "first", 0)),
        Event::MemoryAccessed(accessed("u", "ghost", 10)),
    ];
    for second in (20..=200).step_by(20) {
        events.push(Event::MemoryCreated(created(
            "v",
            &format!("v{second}"),
            "busy",
            second,
        )));
    }
    let result = run_with_limits(&store, &lines(&events), limits);
    assert_eq!(
        dead_letter_kinds(&result),
        [("unknown_memory".to_owned(), 1)],
        "{}",
        result.summary
    );
    assert!(parked_reads(&store, "u").is_empty());
}

/// A worker that has read all its partition holds is caught up: with the
/// wall clock, a read whose memory still has not come ages out by it, even
/// with no event since, once it has waited that long by the wall clock.
/// Events stamped long ago (a backfill) do not age it at once.
#[test]
fn a_caught_up_partition_ages_parked_reads_by_the_wall_clock() {
    let limits = Limits {
        max_parked_read_age: std::time::Duration::from_secs(1),
        ..Limits::default()
    };
    let codec = EventCodec::new(limits).unwrap();
    let (_dir, store) = store();
    let months_ago = chrono::Utc::now() - chrono::Duration::days(90);
    let mut first = created("u", "m1", "first", 0);
    first.created_at = months_ago;
    let mut read = accessed("u", "ghost", 0);
    read.accessed_at = months_ago;
    let mut out = Vec::new();
    {
        let mut sink = JsonLinesSink::new(&codec, Box::new(&mut out), None);
        let clock = Clock::new(ClockMode::Wall, false);
        let mut pipeline = Pipeline::new(&codec, &store, manual_cycles_only(), 100, clock);
        pipeline
            .recover(&partition_zero(&["in"]), &mut sink)
            .unwrap();
        process_on_partition(
            &mut pipeline,
            &mut sink,
            "in",
            0,
            vec![Event::MemoryCreated(first), Event::MemoryAccessed(read)],
        );
        let at_once = pipeline.run_due(true, &mut sink).unwrap();
        assert_eq!(at_once.rejected_total(), 0, "parked a moment ago");
        std::thread::sleep(std::time::Duration::from_millis(1_200));
        let behind = pipeline.run_due(false, &mut sink).unwrap();
        assert_eq!(behind.rejected_total(), 0, "input may still hold it");
        let caught_up = pipeline.run_due(true, &mut sink).unwrap();
        assert_eq!(caught_up.rejected_total(), 1, "{caught_up}");
    }
    let outputs = output_lines(out);
    assert_eq!(
        outputs
            .iter()
            .filter(|o| o["error_kind"] == "unknown_memory")
            .count(),
        1
    );
}
