//! Decoding and encoding events: JSON lines and Avro single-object encoding.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use apache_avro::reader::datum::GenericDatumReader;
use apache_avro::writer::datum::GenericDatumWriter;
use bytes::Bytes;
use chrono::{DateTime, SubsecRound, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use super::avro_json::{avro_to_json, check_json, event_time, json_to_avro, rfc3339_millis};
use super::datum::access_datum;
use super::error::DecodeError;
use super::flat::{Flat, flat_object, in_layout};
use super::schema::{SchemaError, Schemas};
use super::shared_str::SharedStr;
use super::types::{Event, EventType, MemoryAccessed};

/// Avro single-object encoding marker (spec: `C3 01`, then the schema's
/// 8-byte little-endian CRC-64-AVRO fingerprint, then the binary datum).
const SINGLE_OBJECT_MAGIC: [u8; 2] = [0xC3, 0x01];
const HEADER_LEN: usize = 10;

/// How events are written on a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WireFormat {
    /// One JSON object per message/line with a `type` field.
    #[default]
    Json,
    /// Avro single-object encoding.
    Avro,
}

/// Input limits enforced while decoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Largest accepted encoded event, in bytes.
    pub max_event_bytes: usize,
    /// Largest accepted memory content, in bytes of UTF-8.
    pub max_content_bytes: usize,
    /// Most tags accepted on one memory.
    pub max_tags: usize,
    /// Longest accepted identifier (user, memory, event ids), in bytes.
    pub max_id_bytes: usize,
    /// How far ahead of the wall clock an event's time may be.
    /// Later times are `bad_timestamp`: one event dated 9999 would move
    /// stream time past every memory's life. Replays of the past are behind
    /// the wall clock and unaffected.
    #[serde(with = "crate::duration")]
    pub max_future_skew: Duration,
    /// Reads of a memory the user does not have yet wait (parked with the
    /// user's state) for the memory to be created: across separate topics
    /// a read can overtake its memory's creation. At most this many per
    /// user; a read beyond it is `unknown_memory` at once.
    pub max_parked_reads_per_user: usize,
    /// At most this many bytes of parked reads (ids, context, position) per
    /// user: they live in the user's state row, which must stay well under
    /// a CQL batch's limit (ScyllaDB refuses batches over 1 MiB, and the
    /// partition would stop on it for good).
    pub max_parked_read_bytes_per_user: usize,
    /// How long a parked read waits, by the pipeline's clock
    /// (stream time for files, the wall clock with a broker), before it is
    /// dead-lettered as `unknown_memory`. 0 turns parking off.
    #[serde(with = "crate::duration")]
    pub max_parked_read_age: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_event_bytes: 1024 * 1024,
            max_content_bytes: 32 * 1024,
            max_tags: 64,
            max_id_bytes: 256,
            max_future_skew: Duration::from_secs(24 * 60 * 60),
            max_parked_reads_per_user: 1_000,
            max_parked_read_bytes_per_user: 256 * 1024,
            max_parked_read_age: Duration::from_secs(60 * 60),
        }
    }
}

impl Limits {
    /// Whether an event time (milliseconds since the epoch) is at most the
    /// allowed skew after `wall_now`.
    pub fn is_within_skew(&self, time: i64, wall_now: i64) -> bool {
        time <= wall_now.saturating_add(crate::duration::millis(self.max_future_skew))
    }

    /// Refuses an event whose time is more than the allowed skew after
    /// `wall_now` (milliseconds since the epoch).
    pub fn check_event_time(&self, event: &Event, wall_now: i64) -> Result<(), DecodeError> {
        let time = event.occurred_at();
        if self.is_within_skew(time.timestamp_millis(), wall_now) {
            return Ok(());
        }
        let field = match event {
            Event::MemoryCreated(_) => "created_at",
            Event::MemoryAccessed(_) => "accessed_at",
            Event::ConsolidationRequested(_) => "requested_at",
            Event::MemoryUpdated(_) => "updated_at",
            Event::MemoryDeleted(_) => "deleted_at",
            Event::UserErased(_) => "erased_at",
            _ => "time",
        };
        Err(DecodeError::FutureTimestamp {
            field: field.to_owned(),
            value: time.to_rfc3339(),
            skew: crate::duration::format(self.max_future_skew),
        })
    }
}

/// Decodes and encodes events against the shipped schemas.
#[derive(Debug, Clone)]
pub struct EventCodec {
    schemas: Arc<Schemas>,
    limits: Limits,
}

impl EventCodec {
    pub fn new(limits: Limits) -> Result<Self, SchemaError> {
        Ok(Self {
            schemas: Arc::new(Schemas::load()?),
            limits,
        })
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    pub fn schemas(&self) -> &Schemas {
        &self.schemas
    }

    /// Decodes one input event in the given format.
    pub fn decode(&self, bytes: &[u8], format: WireFormat) -> Result<Event, DecodeError> {
        self.decode_input(Input::copied(bytes), format)
    }

    fn decode_input(&self, input: Input<'_>, format: WireFormat) -> Result<Event, DecodeError> {
        match format {
            WireFormat::Json => self.decode_json_or(input, None),
            WireFormat::Avro => self.decode_avro_input(input),
        }
    }

    /// Decodes one JSON event (one line, without its newline).
    pub fn decode_json(&self, bytes: &[u8]) -> Result<Event, DecodeError> {
        self.decode_json_or(Input::copied(bytes), None)
    }

    /// [`decode_json`](Self::decode_json) of a record's payload, which a
    /// read's ids are slices of.
    pub fn decode_json_payload(&self, payload: &Bytes) -> Result<Event, DecodeError> {
        self.decode_json_or(Input::shared(payload), None)
    }

    /// A JSON event whose `type`, when absent, is `default_type`.
    fn decode_json_or(
        &self,
        input: Input<'_>,
        default_type: Option<EventType>,
    ) -> Result<Event, DecodeError> {
        self.check_size(input.bytes)?;
        if let Some(PlainRead { read, ids_visible }) = plain_access(input, default_type) {
            if ids_visible {
                return self.validate_visible_read(read);
            }
            return self.validate(Event::MemoryAccessed(read));
        }
        self.decode_json_checked(input.bytes, default_type)
    }

    /// The general JSON decoding: a JSON value, checked against the
    /// type's Avro schema, then the typed event.
    fn decode_json_checked(
        &self,
        bytes: &[u8],
        default_type: Option<EventType>,
    ) -> Result<Event, DecodeError> {
        let text = std::str::from_utf8(bytes)
            .map_err(|e| DecodeError::Undecodable(format!("invalid UTF-8: {e}")))?;
        let mut json: Json = serde_json::from_str(text)
            .map_err(|e| DecodeError::Undecodable(format!("invalid JSON: {e}")))?;
        let object = json
            .as_object_mut()
            .ok_or_else(|| DecodeError::Undecodable("an event must be a JSON object".to_owned()))?;
        let type_name = match object.remove("type") {
            Some(Json::String(name)) => name,
            Some(other) => {
                return Err(DecodeError::WrongType {
                    field: "type".to_owned(),
                    expected: "string".to_owned(),
                    found: other.to_string(),
                });
            }
            None => match default_type {
                Some(event_type) => event_type.name().to_owned(),
                None => return Err(DecodeError::MissingField("type".to_owned())),
            },
        };
        let event_type = self.input_type(&type_name)?;
        let schema = self.schema(event_type)?;
        // Checks presence and types of every field with the Avro schema, so JSON
        // and Avro inputs fail with the same errors.
        check_json(&json, schema)?;
        self.typed(event_type, json)
    }

    /// Decodes one message of a topic that carries `carried` input types.
    /// `format` `None` detects Avro by its single-object marker. A JSON
    /// message may leave out `type` when the topic carries one type; an event
    /// of a type its topic does not carry is rejected.
    /// A read's ids are slices of `payload`.
    pub fn decode_from_topic(
        &self,
        payload: &Bytes,
        format: Option<WireFormat>,
        carried: &[EventType],
    ) -> Result<Event, DecodeError> {
        let format = format.unwrap_or(if payload.starts_with(&SINGLE_OBJECT_MAGIC) {
            WireFormat::Avro
        } else {
            WireFormat::Json
        });
        let input = Input::shared(payload);
        let event = match (format, carried) {
            (WireFormat::Json, [only]) => self.decode_json_or(input, Some(*only))?,
            _ => self.decode_input(input, format)?,
        };
        let event_type = event.event_type();
        if !carried.is_empty() && !carried.contains(&event_type) {
            return Err(DecodeError::WrongTopic(event_type.name().to_owned()));
        }
        Ok(event)
    }

    /// Decodes one Avro single-object-encoded input event.
    pub fn decode_avro(&self, bytes: &[u8]) -> Result<Event, DecodeError> {
        self.decode_avro_input(Input::copied(bytes))
    }

    fn decode_avro_input(&self, input: Input<'_>) -> Result<Event, DecodeError> {
        let bytes = input.bytes;
        self.check_size(bytes)?;
        if let Some(read) = self.direct_access(input) {
            return self.validate(Event::MemoryAccessed(read));
        }
        let (event_type, value) = self.read_single_object(bytes)?;
        if !event_type.is_input() {
            return Err(DecodeError::NotAnInput(event_type.name().to_owned()));
        }
        self.typed(event_type, avro_to_json(&value, "")?)
    }

    /// Encodes any event as one JSON line (without the newline).
    pub fn encode_json(&self, event: &Event) -> Vec<u8> {
        // Serialising these plain data types to a Vec cannot fail.
        serde_json::to_vec(event).unwrap_or_default()
    }

    /// Encodes any event in Avro single-object encoding.
    pub fn encode_avro(&self, event: &Event) -> Result<Vec<u8>, DecodeError> {
        let event_type = event.event_type();
        let schema = self.schema(event_type)?;
        let mut json = serde_json::to_value(event)
            .map_err(|e| DecodeError::Undecodable(format!("cannot serialise event: {e}")))?;
        if let Some(object) = json.as_object_mut() {
            object.remove("type");
        }
        let value = json_to_avro(&json, schema)?;
        let datum = GenericDatumWriter::builder(schema)
            .build()
            .and_then(|writer| writer.write_value_to_vec(value))
            .map_err(|e| DecodeError::Undecodable(format!("Avro encoding failed: {e}")))?;
        let mut out = Vec::with_capacity(HEADER_LEN + datum.len());
        out.extend_from_slice(&SINGLE_OBJECT_MAGIC);
        out.extend_from_slice(&self.schemas.fingerprint(event_type).unwrap_or_default());
        out.extend_from_slice(&datum);
        Ok(out)
    }

    /// Decodes any event, output events included (for tests, tools and
    /// downstream readers).
    pub fn decode_any_avro(&self, bytes: &[u8]) -> Result<Event, DecodeError> {
        let (event_type, value) = self.read_single_object(bytes)?;
        self.typed(event_type, avro_to_json(&value, "")?)
    }

    /// Decodes an output event from JSON (for tests, tools and downstream readers).
    pub fn decode_any_json(&self, bytes: &[u8]) -> Result<Event, DecodeError> {
        serde_json::from_slice(bytes).map_err(|e| DecodeError::Undecodable(e.to_string()))
    }

    /// A read in the single-object encoding of engram's own schema, read
    /// without a generic Avro value ([`access_datum`]); `None` for anything
    /// else, which the general path reads (or refuses).
    fn direct_access(&self, input: Input<'_>) -> Option<MemoryAccessed> {
        let bytes = input.bytes;
        if self.announced_type(bytes).ok()? != EventType::MemoryAccessed {
            return None;
        }
        let read = access_datum(&bytes[HEADER_LEN..])?;
        Some(MemoryAccessed {
            event_id: input.text(read.event_id),
            user_id: input.text(read.user_id),
            memory_id: input.text(read.memory_id),
            accessed_at: event_time(read.accessed_at)?,
            context: read.context.map(str::to_owned),
        })
    }

    /// The event type whose schema the single-object header announces.
    fn announced_type(&self, bytes: &[u8]) -> Result<EventType, DecodeError> {
        if bytes.len() < HEADER_LEN || bytes[..2] != SINGLE_OBJECT_MAGIC {
            return Err(DecodeError::Undecodable(
                "not Avro single-object encoding (missing C3 01 header)".to_owned(),
            ));
        }
        let mut fingerprint = [0u8; 8];
        fingerprint.copy_from_slice(&bytes[2..HEADER_LEN]);
        self.schemas
            .event_for_fingerprint(&fingerprint)
            .ok_or_else(|| {
                let hex: String = fingerprint.iter().map(|b| format!("{b:02x}")).collect();
                DecodeError::UnknownType(format!("Avro schema fingerprint {hex}"))
            })
    }

    /// Reads the single-object header and the datum it announces.
    fn read_single_object(
        &self,
        bytes: &[u8],
    ) -> Result<(EventType, apache_avro::types::Value), DecodeError> {
        let event_type = self.announced_type(bytes)?;
        let schema = self.schema(event_type)?;
        let mut datum = &bytes[HEADER_LEN..];
        let value = GenericDatumReader::builder(schema)
            .build()
            .and_then(|reader| reader.read_value(&mut datum))
            .map_err(|e| DecodeError::Undecodable(format!("invalid Avro datum: {e}")))?;
        if !datum.is_empty() {
            return Err(DecodeError::Undecodable(format!(
                "{} trailing bytes after the Avro datum",
                datum.len()
            )));
        }
        Ok((event_type, value))
    }

    fn input_type(&self, name: &str) -> Result<EventType, DecodeError> {
        let event_type =
            EventType::from_name(name).ok_or_else(|| DecodeError::UnknownType(name.to_owned()))?;
        if event_type.is_input() {
            Ok(event_type)
        } else {
            Err(DecodeError::NotAnInput(name.to_owned()))
        }
    }

    fn schema(&self, event_type: EventType) -> Result<&apache_avro::Schema, DecodeError> {
        self.schemas
            .schema(event_type)
            .ok_or_else(|| DecodeError::UnknownType(event_type.name().to_owned()))
    }

    fn check_size(&self, bytes: &[u8]) -> Result<(), DecodeError> {
        if bytes.len() > self.limits.max_event_bytes {
            return Err(DecodeError::EventTooLarge {
                size: bytes.len(),
                limit: self.limits.max_event_bytes,
            });
        }
        Ok(())
    }

    /// Builds the typed event from its checked JSON form and validates it.
    fn typed(&self, event_type: EventType, mut json: Json) -> Result<Event, DecodeError> {
        let undecodable =
            |e: serde_json::Error| DecodeError::Undecodable(format!("{}: {e}", event_type.name()));
        // Inputs go straight into their variant's struct: through the
        // tagged enum, serde would first copy every field into a buffer to
        // find the tag it is told here.
        let event = match event_type {
            EventType::MemoryCreated => {
                Event::MemoryCreated(serde_json::from_value(json).map_err(undecodable)?)
            }
            EventType::MemoryAccessed => {
                Event::MemoryAccessed(serde_json::from_value(json).map_err(undecodable)?)
            }
            EventType::ConsolidationRequested => {
                Event::ConsolidationRequested(serde_json::from_value(json).map_err(undecodable)?)
            }
            EventType::MemoryUpdated => {
                Event::MemoryUpdated(serde_json::from_value(json).map_err(undecodable)?)
            }
            EventType::MemoryDeleted => {
                Event::MemoryDeleted(serde_json::from_value(json).map_err(undecodable)?)
            }
            EventType::UserErased => {
                Event::UserErased(serde_json::from_value(json).map_err(undecodable)?)
            }
            _ => {
                if let Some(object) = json.as_object_mut() {
                    object.insert(
                        "type".to_owned(),
                        Json::String(event_type.name().to_owned()),
                    );
                }
                serde_json::from_value(json).map_err(undecodable)?
            }
        };
        self.validate(event)
    }

    /// [`EventCodec::validate`] for a read whose ids are known to be
    /// visible ASCII and not empty: all its check of them would find is
    /// their lengths.
    fn validate_visible_read(&self, mut read: MemoryAccessed) -> Result<Event, DecodeError> {
        check_id_length("event_id", &read.event_id, &self.limits)?;
        check_id_length("user_id", &read.user_id, &self.limits)?;
        check_id_length("memory_id", &read.memory_id, &self.limits)?;
        read.accessed_at = whole_millis(read.accessed_at);
        Ok(Event::MemoryAccessed(read))
    }

    /// Semantic checks the schema cannot express. Times are truncated to
    /// milliseconds, the precision of the Avro form.
    fn validate(&self, mut event: Event) -> Result<Event, DecodeError> {
        let limits = &self.limits;
        match &mut event {
            Event::MemoryCreated(e) => {
                check_id("event_id", &e.event_id, limits)?;
                check_id("user_id", &e.user_id, limits)?;
                check_id("memory_id", &e.memory_id, limits)?;
                check_memory_fields(
                    Some(&e.content),
                    e.importance,
                    e.tags.as_deref(),
                    e.embedding.as_deref(),
                    limits,
                )?;
                e.created_at = whole_millis(e.created_at);
            }
            Event::MemoryUpdated(e) => {
                check_id("event_id", &e.event_id, limits)?;
                check_id("user_id", &e.user_id, limits)?;
                check_id("memory_id", &e.memory_id, limits)?;
                if !e.changes_something() {
                    return Err(DecodeError::InvalidValue {
                        field: "content".to_owned(),
                        reason: "an update needs at least one of content, importance, kind, \
                                 category, tags"
                            .to_owned(),
                    });
                }
                check_memory_fields(
                    e.content.as_deref(),
                    e.importance,
                    e.tags.as_deref(),
                    e.embedding.as_deref(),
                    limits,
                )?;
                if e.embedding.is_some() && e.content.is_none() {
                    return Err(DecodeError::InvalidValue {
                        field: "embedding".to_owned(),
                        reason: "an embedding comes only with the content it is of".to_owned(),
                    });
                }
                e.updated_at = whole_millis(e.updated_at);
            }
            Event::MemoryDeleted(e) => {
                check_id("event_id", &e.event_id, limits)?;
                check_id("user_id", &e.user_id, limits)?;
                check_id("memory_id", &e.memory_id, limits)?;
                e.deleted_at = whole_millis(e.deleted_at);
            }
            Event::UserErased(e) => {
                check_id("event_id", &e.event_id, limits)?;
                check_id("user_id", &e.user_id, limits)?;
                e.erased_at = whole_millis(e.erased_at);
            }
            Event::MemoryAccessed(e) => {
                check_id("event_id", &e.event_id, limits)?;
                check_id("user_id", &e.user_id, limits)?;
                check_id("memory_id", &e.memory_id, limits)?;
                e.accessed_at = whole_millis(e.accessed_at);
            }
            Event::ConsolidationRequested(e) => {
                check_id("event_id", &e.event_id, limits)?;
                check_id("user_id", &e.user_id, limits)?;
                e.requested_at = whole_millis(e.requested_at);
            }
            _ => {}
        }
        Ok(event)
    }
}

/// The fields a creation or an update may carry, where present.
fn check_memory_fields(
    content: Option<&str>,
    importance: Option<f64>,
    tags: Option<&[String]>,
    embedding: Option<&[f32]>,
    limits: &Limits,
) -> Result<(), DecodeError> {
    if let Some(content) = content {
        if content.trim().is_empty() {
            return Err(DecodeError::EmptyField("content".to_owned()));
        }
        if content.len() > limits.max_content_bytes {
            return Err(DecodeError::ContentTooLarge {
                size: content.len(),
                limit: limits.max_content_bytes,
            });
        }
    }
    if let Some(importance) = importance
        && !(0.0..=1.0).contains(&importance)
    {
        return Err(DecodeError::ImportanceOutOfRange(importance));
    }
    if let Some(tags) = tags
        && tags.len() > limits.max_tags
    {
        return Err(DecodeError::InvalidValue {
            field: "tags".to_owned(),
            reason: format!(
                "{} tags exceed the limit of {}",
                tags.len(),
                limits.max_tags
            ),
        });
    }
    if let Some(embedding) = embedding
        && embedding.iter().any(|x| !x.is_finite())
    {
        return Err(DecodeError::InvalidValue {
            field: "embedding".to_owned(),
            reason: "contains a non-finite number".to_owned(),
        });
    }
    Ok(())
}

/// An event time cut to whole milliseconds, as events carry it. Most times
/// already are (a read's is built from milliseconds), and cutting one was
/// a tenth of checking a read.
fn whole_millis(time: DateTime<Utc>) -> DateTime<Utc> {
    if time.timestamp_subsec_nanos().is_multiple_of(1_000_000) {
        time
    } else {
        time.trunc_subsecs(3)
    }
}

/// Identifiers must be non-empty, bounded and free of control characters:
/// they end up in keys, logs and file names of reports.
fn check_id(field: &str, value: &str, limits: &Limits) -> Result<(), DecodeError> {
    // Most ids are printable ASCII without spaces: neither blank nor
    // holding a control character, so one pass over the bytes settles both.
    if !value.is_empty() && value.bytes().all(|b| matches!(b, 0x21..=0x7e)) {
        return check_id_length(field, value, limits);
    }
    // ASCII's whitespace (what `trim` would cut) is a space or tab to
    // carriage return; the loop stops at the first other byte.
    let ascii = value.is_ascii();
    let blank = if ascii {
        value.bytes().all(|b| matches!(b, b' ' | b'\t'..=b'\r'))
    } else {
        value.trim().is_empty()
    };
    if blank {
        return Err(DecodeError::EmptyField(field.to_owned()));
    }
    check_id_length(field, value, limits)?;
    // Control characters are C0, DEL and C1; the last exist only beyond
    // ASCII, where the bytes alone cannot tell.
    let has_control = if ascii {
        value.bytes().any(|b| b < 0x20 || b == 0x7f)
    } else {
        value.chars().any(char::is_control)
    };
    if has_control {
        return Err(DecodeError::InvalidValue {
            field: field.to_owned(),
            reason: "contains control characters".to_owned(),
        });
    }
    Ok(())
}

/// An id's length against `limits.max_id_bytes`.
fn check_id_length(field: &str, value: &str, limits: &Limits) -> Result<(), DecodeError> {
    if value.len() > limits.max_id_bytes {
        return Err(DecodeError::InvalidValue {
            field: field.to_owned(),
            reason: format!(
                "{} bytes exceed the limit of {}",
                value.len(),
                limits.max_id_bytes
            ),
        });
    }
    Ok(())
}

/// A read event as platforms send most of them, decoded straight into its
/// struct (reads are most of a stream: building a JSON value, checking it
/// against the schema and converting it was a third of an access event's
/// CPU). `None` for anything else, which takes the general path and gets
/// its exact error there; what this accepts, that path accepts the same.
fn plain_access(input: Input<'_>, default_type: Option<EventType>) -> Option<PlainRead> {
    if let Some((plain, ids_visible)) = access_in_layout(input.bytes) {
        return plain_read(input, default_type, plain, ids_visible);
    }
    // UTF-8 checked once for the whole event: from bytes, the parser checks
    // each string by itself, which cost more than the check of the whole.
    let text = std::str::from_utf8(input.bytes).ok()?;
    let plain = match scan_access(text) {
        Some(plain) => plain,
        // An escape, a repeated key, a value of another kind: serde reads
        // what the scanner leaves, as the type below declares it.
        None => serde_json::from_str::<PlainAccess<'_>>(text).ok()?,
    };
    plain_read(input, default_type, plain, false)
}

/// A read decoded by [`plain_access`]; `ids_visible`: its ids are known
/// to be printable ASCII without spaces, and not empty, so only their
/// lengths are left to check.
struct PlainRead {
    read: MemoryAccessed,
    ids_visible: bool,
}

fn plain_read(
    input: Input<'_>,
    default_type: Option<EventType>,
    plain: PlainAccess<'_>,
    ids_visible: bool,
) -> Option<PlainRead> {
    let is_access = match plain.event_type.as_deref() {
        Some(name) => name == EventType::MemoryAccessed.name(),
        None => default_type == Some(EventType::MemoryAccessed),
    };
    if !is_access {
        return None;
    }
    let accessed_at = event_time(rfc3339_millis(&plain.accessed_at)?)?;
    // A value serde had to unescape is its own; one as written is a slice
    // of the payload.
    let id = |value: Cow<'_, str>| match value {
        Cow::Borrowed(text) => input.text(text),
        Cow::Owned(text) => SharedStr::from(text),
    };
    Some(PlainRead {
        read: MemoryAccessed {
            event_id: id(plain.event_id),
            user_id: id(plain.user_id),
            memory_id: id(plain.memory_id),
            accessed_at,
            context: plain.context.map(Cow::into_owned),
        },
        ids_visible,
    })
}

/// An event's bytes, and the payload they are, where the caller holds it
/// as [`Bytes`]: a read's ids are then slices of it, not copies.
#[derive(Clone, Copy)]
struct Input<'a> {
    bytes: &'a [u8],
    shared: Option<&'a Bytes>,
}

impl<'a> Input<'a> {
    fn copied(bytes: &'a [u8]) -> Self {
        Self {
            bytes,
            shared: None,
        }
    }

    fn shared(payload: &'a Bytes) -> Self {
        Self {
            bytes: payload,
            shared: Some(payload),
        }
    }

    /// `text`, read from these bytes, as an id.
    fn text(&self, text: &str) -> SharedStr {
        match self.shared {
            Some(payload) => SharedStr::within(payload, text),
            None => SharedStr::from(text),
        }
    }
}

/// A read's fields as they are written, before any check of their values.
#[derive(Deserialize)]
struct PlainAccess<'a> {
    #[serde(rename = "type", borrow, default)]
    event_type: Option<Cow<'a, str>>,
    #[serde(borrow)]
    event_id: Cow<'a, str>,
    #[serde(borrow)]
    user_id: Cow<'a, str>,
    #[serde(borrow)]
    memory_id: Cow<'a, str>,
    #[serde(borrow)]
    accessed_at: Cow<'a, str>,
    #[serde(borrow, default)]
    context: Option<Cow<'a, str>>,
}

/// A read as engram's own encoder writes it: the schema's field order, no
/// spaces, no context; with its type, and without (a topic that carries
/// reads alone may leave it out).
const READ_LAYOUTS: [[&str; 5]; 2] = [
    [
        r#"{"type":"memory.accessed","event_id":""#,
        r#"","user_id":""#,
        r#"","memory_id":""#,
        r#"","accessed_at":""#,
        r#""}"#,
    ],
    [
        r#"{"event_id":""#,
        r#"","user_id":""#,
        r#"","memory_id":""#,
        r#"","accessed_at":""#,
        r#""}"#,
    ],
];

/// A read in one of [`READ_LAYOUTS`], and whether its three ids are
/// visible ASCII ([`Plain::visible`]).
fn access_in_layout(bytes: &[u8]) -> Option<(PlainAccess<'_>, bool)> {
    for (layout, event_type) in READ_LAYOUTS.iter().zip([Some("memory.accessed"), None]) {
        if let Some([event_id, user_id, memory_id, accessed_at]) = in_layout(bytes, layout) {
            let plain = PlainAccess {
                event_type: event_type.map(Cow::Borrowed),
                event_id: Cow::Borrowed(event_id.text),
                user_id: Cow::Borrowed(user_id.text),
                memory_id: Cow::Borrowed(memory_id.text),
                accessed_at: Cow::Borrowed(accessed_at.text),
                context: None,
            };
            let ids_visible = event_id.visible && user_id.visible && memory_id.visible;
            return Some((plain, ids_visible));
        }
    }
    None
}

/// [`PlainAccess`] from a flat object of plain strings, without serde:
/// `None` wherever serde would have to decide (see [`flat_object`]).
fn scan_access(text: &str) -> Option<PlainAccess<'_>> {
    // A `match` on the key compiles to a few word comparisons; a search
    // through a list of names cost a call to `memcmp` for each.
    let [
        event_type,
        event_id,
        user_id,
        memory_id,
        accessed_at,
        context,
    ] = flat_object(text, |key| match key {
        "type" => Some(0),
        "event_id" => Some(1),
        "user_id" => Some(2),
        "memory_id" => Some(3),
        "accessed_at" => Some(4),
        "context" => Some(5),
        _ => None,
    })?;
    // Optional fields may be null; the others must be strings, or serde
    // gives its error.
    fn optional(value: Option<Flat<'_>>) -> Option<Option<Cow<'_, str>>> {
        match value {
            Some(Flat::Str(text)) => Some(Some(Cow::Borrowed(text))),
            Some(Flat::Null) | None => Some(None),
        }
    }
    fn required(value: Option<Flat<'_>>) -> Option<Cow<'_, str>> {
        match value {
            Some(Flat::Str(text)) => Some(Cow::Borrowed(text)),
            Some(Flat::Null) | None => None,
        }
    }
    Some(PlainAccess {
        event_type: optional(event_type)?,
        event_id: required(event_id)?,
        user_id: required(user_id)?,
        memory_id: required(memory_id)?,
        accessed_at: required(accessed_at)?,
        context: optional(context)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The direct decoding of reads accepts exactly what the general path
    /// accepts and gives the same event; everything else falls through to
    /// that path and its error.
    #[test]
    fn reads_decoded_directly_match_the_general_path() {
        let codec = EventCodec::new(Limits::default()).unwrap();
        let line = |fields: &str| format!(r#"{{"type":"memory.accessed",{fields}}}"#);
        let ids = r#""event_id":"e1","user_id":"u1","memory_id":"m1""#;
        let cases = [
            line(&format!(
                r#"{ids},"accessed_at":"2026-01-02T03:04:05.678Z""#
            )),
            line(&format!(
                r#"{ids},"accessed_at":"2026-01-02T03:04:05.678912+02:00""#
            )),
            line(&format!(
                r#"{ids},"accessed_at":"2026-01-02T03:04:05Z","context":null"#
            )),
            line(&format!(
                r#"{ids},"accessed_at":"2026-01-02T03:04:05Z","context":"chat""#
            )),
            line(&format!(
                r#"{ids},"accessed_at":"2026-01-02T03:04:05Z","extra":[1,2]"#
            )),
            line(
                r#""event_id":"e\"1","user_id":"u\u00e9","memory_id":"m1","accessed_at":"2026-01-02T03:04:05Z""#,
            ),
            // RFC 3339 allows a space for the `T`; a repeated key counts
            // once, with its last value (the direct path leaves both to the
            // general one).
            line(&format!(r#"{ids},"accessed_at":"2026-01-02 03:04:05Z""#)),
            line(&format!(
                r#"{ids},"user_id":"u2","accessed_at":"2026-01-02T03:04:05Z""#
            )),
            // Refused, each with the general path's reason.
            line(&format!(
                r#"{ids},"accessed_at":"9999-12-31T23:00:00-02:00""#
            )),
            line(&format!(r#"{ids},"accessed_at":1767322245000"#)),
            line(&format!(
                r#"{ids},"accessed_at":"2026-01-02T03:04:05Z","context":7"#
            )),
            line(r#""event_id":"e1","user_id":"u1","accessed_at":"2026-01-02T03:04:05Z""#),
            line(&format!(
                r#"{ids},"accessed_at":"2026-01-02T03:04:05Z","event_id":"""#
            )),
            format!(r#"{{"type":"memory.created",{ids},"accessed_at":"2026-01-02T03:04:05Z"}}"#),
            format!(r#"{{"type":7,{ids},"accessed_at":"2026-01-02T03:04:05Z"}}"#),
            format!(r#"{{{ids},"accessed_at":"2026-01-02T03:04:05Z"}}"#),
            // engram's own layout with values its checks refuse.
            line(
                r#""event_id":"e1","user_id":"u1","memory_id":"","accessed_at":"2026-01-02T03:04:05Z""#,
            ),
            line(
                r#""event_id":"e1","user_id":"u 1","memory_id":"m1","accessed_at":"2026-13-02T03:04:05Z""#,
            ),
            line(r#""event_id":"e1","user_id":"u1","memory_id":"m1","accessed_at":"2026-01-02""#),
            // ...and with ids only the whole check reads: a space, a letter
            // beyond ASCII, DEL, a blank one, one too long (visible or not).
            line(
                r#""event_id":"e1","user_id":"u 1","memory_id":"m1","accessed_at":"2026-01-02T03:04:05Z""#,
            ),
            line(
                r#""event_id":"e1","user_id":"u1","memory_id":"mé","accessed_at":"2026-01-02T03:04:05Z""#,
            ),
            line(
                "\"event_id\":\"e1\",\"user_id\":\"u1\",\"memory_id\":\"m\u{7f}\",\"accessed_at\":\"2026-01-02T03:04:05Z\"",
            ),
            line(
                r#""event_id":"  ","user_id":"u1","memory_id":"m1","accessed_at":"2026-01-02T03:04:05Z""#,
            ),
            line(&format!(
                r#""event_id":"e1","user_id":"{}","memory_id":"m1","accessed_at":"2026-01-02T03:04:05Z""#,
                "u".repeat(257)
            )),
            line(&format!(
                r#""event_id":"e1","user_id":"u1","memory_id":"{} ","accessed_at":"2026-01-02T03:04:05Z""#,
                "m".repeat(256)
            )),
        ];
        let mut accepted = 0;
        for case in &cases {
            for default_type in [None, Some(EventType::MemoryAccessed)] {
                let payload = Bytes::from(case.clone());
                let direct = codec.decode_json_or(Input::shared(&payload), default_type);
                let general = codec
                    .decode_json_checked(case.as_bytes(), default_type)
                    .and_then(|event| codec.validate(event));
                assert_eq!(
                    direct, general,
                    "{case} (type by default: {default_type:?})"
                );
                accepted += usize::from(direct.is_ok());
            }
        }
        assert_eq!(accepted, 21, "ten reads twice, and one without its type");
    }

    #[test]
    fn avro_reads_decoded_directly_match_the_general_path() {
        let codec = EventCodec::new(Limits::default()).unwrap();
        let read = |context: Option<&str>, millis: i64| {
            Event::MemoryAccessed(MemoryAccessed {
                event_id: "e1".into(),
                user_id: "u\u{e9}".into(),
                memory_id: "m1".into(),
                accessed_at: chrono::DateTime::from_timestamp_millis(millis).unwrap(),
                context: context.map(str::to_owned),
            })
        };
        let general = |bytes: &[u8]| {
            let (event_type, value) = codec.read_single_object(bytes)?;
            codec.typed(event_type, avro_to_json(&value, "")?)
        };
        for event in [
            read(None, 1_767_322_245_678),
            read(Some("chat"), 0),
            read(Some(""), -1_000),
        ] {
            let bytes = codec.encode_avro(&event).unwrap();
            assert_eq!(codec.decode_avro(&bytes), general(&bytes));
            assert_eq!(codec.decode_avro(&bytes).unwrap(), event);
        }
        // A time RFC 3339 cannot write is refused the general way.
        let mut far = codec.encode_avro(&read(None, 0)).unwrap();
        let schema = codec.schema(EventType::MemoryAccessed).unwrap();
        let record = apache_avro::types::Value::Record(vec![
            (
                "event_id".into(),
                apache_avro::types::Value::String("e1".into()),
            ),
            (
                "user_id".into(),
                apache_avro::types::Value::String("u1".into()),
            ),
            (
                "memory_id".into(),
                apache_avro::types::Value::String("m1".into()),
            ),
            (
                "accessed_at".into(),
                apache_avro::types::Value::TimestampMillis(i64::MAX / 2),
            ),
            (
                "context".into(),
                apache_avro::types::Value::Union(0, Box::new(apache_avro::types::Value::Null)),
            ),
        ]);
        let datum = GenericDatumWriter::builder(schema)
            .build()
            .and_then(|writer| writer.write_value_to_vec(record))
            .unwrap();
        far.truncate(HEADER_LEN);
        far.extend_from_slice(&datum);
        let refused = codec.decode_avro(&far);
        assert!(
            matches!(refused, Err(DecodeError::BadTimestamp { .. })),
            "{refused:?}"
        );
        assert_eq!(refused, general(&far));
    }

    proptest::proptest! {
        /// Whatever follows a read's header, the direct reader and the
        /// general one give the same event or the same error: random
        /// bytes, and written reads cut or with a byte changed.
        #[test]
        fn avro_reads_of_any_bytes_match_the_general_path(
            tail in proptest::collection::vec(proptest::num::u8::ANY, 0..48),
            ids in proptest::collection::vec("[a-z\u{e9}-]{0,12}", 3),
            context in proptest::option::of("[a-z ]{0,8}"),
            millis in 0i64..253_402_300_799_999,
            cut in 0usize..64,
            flip in (0usize..64, proptest::num::u8::ANY),
        ) {
            let codec = EventCodec::new(Limits::default()).unwrap();
            let general = |bytes: &[u8]| {
                codec.check_size(bytes)?;
                let (event_type, value) = codec.read_single_object(bytes)?;
                codec.typed(event_type, avro_to_json(&value, "")?)
            };
            let written = codec
                .encode_avro(&Event::MemoryAccessed(MemoryAccessed {
                    event_id: ids[0].clone().into(),
                    user_id: ids[1].clone().into(),
                    memory_id: ids[2].clone().into(),
                    accessed_at: chrono::DateTime::from_timestamp_millis(millis)
                        .unwrap_or_default(),
                    context,
                }))
                .unwrap();
            let mut random = written[..HEADER_LEN].to_vec();
            random.extend_from_slice(&tail);
            let cut_short = written[..written.len().min(HEADER_LEN + cut)].to_vec();
            let mut changed = written.clone();
            let at = HEADER_LEN + flip.0 % (written.len() - HEADER_LEN);
            changed[at] = flip.1;
            for bytes in [&written, &random, &cut_short, &changed] {
                proptest::prop_assert_eq!(codec.decode_avro(bytes), general(bytes));
            }
        }
    }
}
