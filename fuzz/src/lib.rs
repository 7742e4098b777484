//! The body every decoder fuzz target shares: one message of a topic that
//! carries one input type, in one wire format.

use std::sync::OnceLock;

use engram::event::{EventCodec, EventType, Limits, WireFormat};

fn codec() -> &'static EventCodec {
    static CODEC: OnceLock<EventCodec> = OnceLock::new();
    CODEC.get_or_init(|| EventCodec::new(Limits::default()).expect("the shipped schemas load"))
}

/// Whatever the bytes, decoding returns an event or an error (no panic, no
/// hang, no unbounded allocation); an accepted event is of the topic's
/// type, and encodes and decodes back to itself.
pub fn decode(data: &[u8], format: WireFormat, event_type: EventType) {
    let codec = codec();
    // As a partition worker holds a message: a read's ids are its slices.
    let payload = data.to_vec().into();
    let Ok(event) = codec.decode_from_topic(&payload, Some(format), &[event_type]) else {
        return;
    };
    assert_eq!(event.event_type(), event_type);
    let encoded = match format {
        WireFormat::Json => codec.encode_json(&event),
        WireFormat::Avro => codec
            .encode_avro(&event)
            .expect("an accepted event encodes"),
    };
    let decoded = codec
        .decode_from_topic(&encoded.into(), Some(format), &[event_type])
        .expect("a re-encoded event decodes");
    assert_eq!(decoded, event);
}
