//! The event contract: round trips in both encodings and typed decode errors.

mod common;

use common::*;
use engram::event::*;
use serde_json::{Value, json};

fn codec() -> EventCodec {
    EventCodec::new(Limits::default()).unwrap()
}

#[test]
fn every_event_round_trips_through_json() {
    let codec = codec();
    let samples = sample_events();
    let types: std::collections::BTreeSet<_> =
        samples.iter().map(|e| e.event_type().name()).collect();
    assert_eq!(
        types.len(),
        EventType::ALL.len(),
        "samples cover every event type"
    );
    for event in samples {
        let bytes = codec.encode_json(&event);
        let line = std::str::from_utf8(&bytes).unwrap();
        assert!(!line.contains('\n'), "one event per line");
        let object: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(object["type"], event.event_type().name());
        let back = if event.event_type().is_input() {
            codec.decode_json(&bytes).unwrap()
        } else {
            codec.decode_any_json(&bytes).unwrap()
        };
        assert_eq!(back, event, "{line}");
    }
}

#[test]
fn every_event_round_trips_through_avro() {
    let codec = codec();
    for event in sample_events() {
        let bytes = codec.encode_avro(&event).unwrap();
        assert_eq!(&bytes[..2], &[0xC3, 0x01], "single-object encoding header");
        let back = if event.event_type().is_input() {
            codec.decode_avro(&bytes).unwrap()
        } else {
            codec.decode_any_avro(&bytes).unwrap()
        };
        assert_eq!(back, event);
    }
}

#[test]
fn avro_and_json_decode_to_the_same_event() {
    let codec = codec();
    for event in sample_events()
        .into_iter()
        .filter(|e| e.event_type().is_input())
    {
        let via_json = codec.decode_json(&codec.encode_json(&event)).unwrap();
        let via_avro = codec
            .decode_avro(&codec.encode_avro(&event).unwrap())
            .unwrap();
        assert_eq!(via_json, via_avro);
    }
}

#[test]
fn each_schema_has_a_distinct_fingerprint_and_parses() {
    let schemas = Schemas::load().unwrap();
    let mut seen = std::collections::HashSet::new();
    for event in EventType::ALL {
        assert!(schemas.schema(event).is_some());
        assert!(
            seen.insert(schemas.fingerprint(event).unwrap()),
            "{}",
            event.name()
        );
    }
}

fn valid_created() -> Value {
    json!({
        "type": "memory.created", "event_id": "e1", "user_id": "u1", "memory_id": "m1",
        "kind": "semantic", "content": "The user prefers tea.", "created_at": "2026-01-02T03:04:05.678Z"
    })
}

fn decode(value: &Value) -> Result<Event, DecodeError> {
    codec().decode_json(value.to_string().as_bytes())
}

fn with(mut value: Value, key: &str, field: Value) -> Value {
    value[key] = field;
    value
}

fn without(mut value: Value, key: &str) -> Value {
    value.as_object_mut().unwrap().remove(key);
    value
}

#[test]
fn minimal_valid_event_decodes_with_defaults() {
    let Event::MemoryCreated(event) = decode(&valid_created()).unwrap() else {
        panic!("wrong type");
    };
    assert_eq!(event.importance_or_default(), 0.5);
    assert_eq!(event.created_at.timestamp_millis() % 1000, 678);
    assert!(event.tags.is_none());
}

#[test]
fn typed_errors_for_bad_json_input() {
    let cases: Vec<(&[u8], &str)> = vec![
        (b"{not json", "undecodable"),
        (b"[1,2]", "undecodable"),
        (b"\xff\xfe{}", "undecodable"),
        (b"{\"type\": 5}", "wrong_type"),
        (b"{\"event_id\": \"e\"}", "missing_field"),
        (b"{\"type\": \"memory.forgotten\"}", "unknown_type"),
        (b"{\"type\": \"consolidation.completed\"}", "not_an_input"),
    ];
    for (bytes, kind) in cases {
        let error = codec().decode_json(bytes).unwrap_err();
        assert_eq!(
            error.kind(),
            kind,
            "{:?}: {error}",
            String::from_utf8_lossy(bytes)
        );
    }
}

#[test]
fn missing_required_field_is_named() {
    for field in [
        "event_id",
        "user_id",
        "memory_id",
        "kind",
        "content",
        "created_at",
    ] {
        let error = decode(&without(valid_created(), field)).unwrap_err();
        assert_eq!(error, DecodeError::MissingField(field.to_owned()));
    }
}

#[test]
fn wrong_field_type_is_named() {
    let error = decode(&with(valid_created(), "content", json!(42))).unwrap_err();
    assert!(
        matches!(&error, DecodeError::WrongType { field, .. } if field == "content"),
        "{error}"
    );
    let error = decode(&with(valid_created(), "tags", json!("not-a-list"))).unwrap_err();
    assert!(
        matches!(&error, DecodeError::WrongType { field, .. } if field == "tags"),
        "{error}"
    );
    let error = decode(&with(valid_created(), "tags", json!(["ok", 3]))).unwrap_err();
    assert!(
        matches!(&error, DecodeError::WrongType { field, .. } if field == "tags[1]"),
        "{error}"
    );
    let error = decode(&with(valid_created(), "importance", json!("high"))).unwrap_err();
    assert_eq!(error.kind(), "wrong_type");
    let error = decode(&with(valid_created(), "kind", json!("dream"))).unwrap_err();
    assert_eq!(error.kind(), "invalid_value");
}

#[test]
fn importance_outside_unit_interval_is_rejected() {
    for bad in [-0.01, 1.01, 7.0] {
        let error = decode(&with(valid_created(), "importance", json!(bad))).unwrap_err();
        assert_eq!(error, DecodeError::ImportanceOutOfRange(bad));
    }
    for good in [0.0, 1.0, 0.5] {
        decode(&with(valid_created(), "importance", json!(good))).unwrap();
    }
}

#[test]
fn content_over_the_configured_limit_is_rejected() {
    let limits = Limits {
        max_content_bytes: 10,
        ..Limits::default()
    };
    let codec = EventCodec::new(limits).unwrap();
    let ok = with(valid_created(), "content", json!("0123456789"));
    codec.decode_json(ok.to_string().as_bytes()).unwrap();
    let long = with(valid_created(), "content", json!("0123456789a"));
    let error = codec.decode_json(long.to_string().as_bytes()).unwrap_err();
    assert_eq!(
        error,
        DecodeError::ContentTooLarge {
            size: 11,
            limit: 10
        }
    );
    // The default limit is 32 KiB.
    let huge = with(valid_created(), "content", json!("x".repeat(32 * 1024 + 1)));
    assert_eq!(decode(&huge).unwrap_err().kind(), "content_too_large");
}

#[test]
fn empty_ids_are_rejected() {
    for field in ["user_id", "memory_id", "event_id"] {
        // Whitespace of any kind is empty, ASCII or not.
        for blank in ["  ", " \t\n\u{b}\u{c}\r", "\u{a0}\u{2003}"] {
            let error = decode(&with(valid_created(), field, json!(blank))).unwrap_err();
            assert_eq!(
                error,
                DecodeError::EmptyField(field.to_owned()),
                "{blank:?}"
            );
        }
    }
    // A control character that is not whitespace is not blank.
    let error = decode(&with(valid_created(), "user_id", json!("\u{1f}"))).unwrap_err();
    assert_eq!(error.kind(), "invalid_value");
    let error = decode(&with(valid_created(), "user_id", json!("a\u{0}b"))).unwrap_err();
    assert_eq!(error.kind(), "invalid_value");
}

#[test]
fn unparseable_timestamps_are_rejected() {
    for bad in [
        "yesterday",
        "2026-13-01T00:00:00Z",
        "2026-01-01 00:00:00",
        "",
    ] {
        let error = decode(&with(valid_created(), "created_at", json!(bad))).unwrap_err();
        assert_eq!(
            error,
            DecodeError::BadTimestamp {
                field: "created_at".into(),
                value: bad.into()
            }
        );
    }
    let error = decode(&with(valid_created(), "created_at", json!(1_700_000_000))).unwrap_err();
    assert_eq!(error.kind(), "wrong_type");
}

#[test]
fn oversize_events_are_rejected_before_parsing() {
    let codec = EventCodec::new(Limits {
        max_event_bytes: 100,
        ..Limits::default()
    })
    .unwrap();
    let error = codec.decode_json(&[b' '; 101]).unwrap_err();
    assert_eq!(
        error,
        DecodeError::EventTooLarge {
            size: 101,
            limit: 100
        }
    );
    assert_eq!(
        codec.decode_avro(&[0xC3; 101]).unwrap_err().kind(),
        "event_too_large"
    );
}

#[test]
fn avro_semantic_errors_match_json() {
    let codec = codec();
    let mut bad = created("u", "m", "text", 0);
    bad.importance = Some(1.5);
    let bytes = codec.encode_avro(&Event::MemoryCreated(bad)).unwrap();
    assert_eq!(
        codec.decode_avro(&bytes).unwrap_err(),
        DecodeError::ImportanceOutOfRange(1.5)
    );
    let empty_user = created("", "m", "text", 0);
    let bytes = codec
        .encode_avro(&Event::MemoryCreated(empty_user))
        .unwrap();
    assert_eq!(
        codec.decode_avro(&bytes).unwrap_err(),
        DecodeError::EmptyField("user_id".into())
    );
}

#[test]
fn broken_avro_is_undecodable_not_a_panic() {
    let codec = codec();
    let event = Event::MemoryCreated(created("u", "m", "some content", 0));
    let good = codec.encode_avro(&event).unwrap();
    for cut in 0..good.len() {
        match codec.decode_avro(&good[..cut]) {
            // apache-avro reads a union at end of input as null, so cutting
            // off only trailing absent optionals yields the same event.
            Ok(decoded) => assert_eq!(decoded, event, "cut {cut}"),
            Err(error) => {
                assert!(
                    matches!(error.kind(), "undecodable" | "unknown_type"),
                    "cut {cut}: {error}"
                )
            }
        }
    }
    let mut trailing = good.clone();
    trailing.push(0);
    assert_eq!(
        codec.decode_avro(&trailing).unwrap_err().kind(),
        "undecodable"
    );
    let mut unknown = good.clone();
    unknown[2] ^= 0xff;
    assert_eq!(
        codec.decode_avro(&unknown).unwrap_err().kind(),
        "unknown_type"
    );
    let output = codec
        .encode_avro(&sample_events().into_iter().last().unwrap())
        .unwrap();
    assert_eq!(
        codec.decode_avro(&output).unwrap_err().kind(),
        "not_an_input"
    );
}

#[test]
fn arbitrary_bytes_never_panic() {
    let codec = codec();
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for length in 0..2000usize {
        let bytes: Vec<u8> = (0..length % 200)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state as u8
            })
            .collect();
        let _ = codec.decode_json(&bytes);
        let mut avro = vec![0xC3, 0x01];
        avro.extend_from_slice(
            &codec
                .schemas()
                .fingerprint(EventType::MemoryCreated)
                .unwrap(),
        );
        avro.extend_from_slice(&bytes);
        let _ = codec.decode_avro(&avro);
    }
}

#[test]
fn broker_messages_are_typed_by_their_topic_and_detected_by_format() {
    let codec = codec();
    let accessed_only = [EventType::MemoryAccessed];
    let access = Event::MemoryAccessed(accessed("u", "m", 5));
    let mut untyped = serde_json::to_value(&access).unwrap();
    untyped.as_object_mut().unwrap().remove("type");
    // Payloads as a partition worker holds them: a read's ids are slices.
    let bytes = bytes::Bytes::from(serde_json::to_vec(&untyped).unwrap());
    assert_eq!(
        codec
            .decode_from_topic(&bytes, None, &accessed_only)
            .unwrap(),
        access,
        "a single-type topic names the type"
    );
    let shared = [EventType::MemoryCreated, EventType::MemoryAccessed];
    assert_eq!(
        codec
            .decode_from_topic(&bytes, None, &shared)
            .unwrap_err()
            .kind(),
        "missing_field",
        "a shared topic needs the type in the message"
    );
    let avro = bytes::Bytes::from(codec.encode_avro(&access).unwrap());
    assert_eq!(
        codec.decode_from_topic(&avro, None, &shared).unwrap(),
        access
    );
    assert_eq!(
        codec
            .decode_from_topic(&avro, Some(WireFormat::Json), &shared)
            .unwrap_err()
            .kind(),
        "undecodable",
        "a topic configured as JSON does not take Avro"
    );
    let created = codec.encode_json(&Event::MemoryCreated(created("u", "m", "text", 1)));
    assert_eq!(
        codec
            .decode_from_topic(&created.into(), None, &accessed_only)
            .unwrap_err()
            .kind(),
        "wrong_topic"
    );
}

/// Avro's zigzag varint encoding of a long.
fn avro_long(n: i64, out: &mut Vec<u8>) {
    let mut z = ((n << 1) ^ (n >> 63)) as u64;
    while z >= 0x80 {
        out.push((z as u8 & 0x7f) | 0x80);
        z >>= 7;
    }
    out.push(z as u8);
}

/// A `consolidation.requested` in Avro single-object encoding at `millis`.
fn request_at_millis(codec: &EventCodec, millis: i64) -> Vec<u8> {
    let valid = codec
        .encode_avro(&Event::ConsolidationRequested(ConsolidationRequested {
            event_id: "r".into(),
            user_id: "u".into(),
            requested_at: at(0),
            execute: None,
            reason: None,
        }))
        .unwrap();
    // Header (marker and fingerprint), then the fields in schema order.
    let mut bytes = valid[..10].to_vec();
    for text in ["r", "u"] {
        avro_long(text.len() as i64, &mut bytes);
        bytes.extend_from_slice(text.as_bytes());
    }
    avro_long(millis, &mut bytes);
    bytes.extend_from_slice(&[0, 0]); // execute and reason: null
    bytes
}

#[test]
fn avro_times_beyond_year_9999_are_rejected_not_accepted_unwritable() {
    // Found by the avro_consolidation_requested fuzz target: year 20519 was
    // accepted, then could not be written as JSON or Avro again.
    let codec = codec();
    let last = 253_402_300_799_999; // 9999-12-31T23:59:59.999Z
    let event = codec.decode_avro(&request_at_millis(&codec, last)).unwrap();
    assert_eq!(
        codec
            .decode_avro(&codec.encode_avro(&event).unwrap())
            .unwrap(),
        event
    );
    for millis in [last + 1, 585_369_498_601_216, -62_167_219_200_001] {
        let error = codec
            .decode_avro(&request_at_millis(&codec, millis))
            .unwrap_err();
        assert_eq!(error.kind(), "bad_timestamp", "{millis}: {error}");
    }
    // The same bound in JSON, where an offset can cross it.
    let line = br#"{"type":"consolidation.requested","event_id":"r","user_id":"u","requested_at":"0000-01-01T00:00:00+01:00"}"#;
    assert_eq!(codec.decode_json(line).unwrap_err().kind(), "bad_timestamp");
}

#[test]
fn an_update_must_change_something_and_keep_to_the_limits() {
    let limits = Limits {
        max_content_bytes: 10,
        ..Limits::default()
    };
    let codec = EventCodec::new(limits).unwrap();
    let update = |fields: Value| {
        let mut event = json!({
            "type": "memory.updated", "event_id": "e", "user_id": "u",
            "memory_id": "m", "updated_at": "2026-01-01T00:00:00Z",
        });
        for (key, value) in fields.as_object().unwrap() {
            event[key] = value.clone();
        }
        codec.decode_json(event.to_string().as_bytes())
    };
    let nothing = update(json!({})).unwrap_err();
    assert_eq!(nothing.kind(), "invalid_value", "{nothing}");
    assert!(nothing.to_string().contains("at least one of"), "{nothing}");
    update(json!({"importance": 0.2})).unwrap();
    update(json!({"content": "short"})).unwrap();
    let long = update(json!({"content": "0123456789a"})).unwrap_err();
    assert_eq!(
        long,
        DecodeError::ContentTooLarge {
            size: 11,
            limit: 10
        }
    );
    let vector_alone = update(json!({"importance": 0.2, "embedding": [0.5]})).unwrap_err();
    assert_eq!(vector_alone.kind(), "invalid_value");
    let bad = update(json!({"importance": 2.0})).unwrap_err();
    assert_eq!(bad, DecodeError::ImportanceOutOfRange(2.0));
    let erased = codec
        .decode_json(br#"{"type":"user.erased","event_id":"e","user_id":"u","erased_at":"2026-01-01T00:00:00Z"}"#)
        .unwrap();
    assert_eq!(erased.event_type(), EventType::UserErased);
}
