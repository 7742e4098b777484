//! Converts between the JSON form of an event and its Avro value, guided by
//! the schema. Going JSON → Avro is also where the shape of a JSON event is
//! checked, so both encodings report the same typed errors.

use apache_avro::Schema;
use apache_avro::types::Value as Avro;
use chrono::{DateTime, SecondsFormat};
use serde_json::{Map, Number, Value as Json};

use super::error::DecodeError;
use super::types::{decode_base64, encode_base64};

/// Milliseconds an RFC 3339 timestamp can express (years 0000-9999): Avro's
/// `timestamp-millis` reaches far beyond, and such a time could be neither
/// written as JSON nor trusted as stream time (found by fuzzing).
const RFC3339_MILLIS: std::ops::RangeInclusive<i64> = -62_167_219_200_000..=253_402_300_799_999;

/// Builds the Avro value of `json` for `schema`. `path` names the field for errors.
pub fn json_to_avro(json: &Json, schema: &Schema, path: &str) -> Result<Avro, DecodeError> {
    let wrong = |expected: &str| DecodeError::WrongType {
        field: path.to_owned(),
        expected: expected.to_owned(),
        found: json_kind(json).to_owned(),
    };
    match schema {
        Schema::Null => match json {
            Json::Null => Ok(Avro::Null),
            _ => Err(wrong("null")),
        },
        Schema::Boolean => json
            .as_bool()
            .map(Avro::Boolean)
            .ok_or_else(|| wrong("boolean")),
        Schema::Int => json
            .as_i64()
            .and_then(|n| i32::try_from(n).ok())
            .map(Avro::Int)
            .ok_or_else(|| wrong("32-bit integer")),
        Schema::Long => json
            .as_i64()
            .map(Avro::Long)
            .ok_or_else(|| wrong("integer")),
        Schema::Float => json
            .as_f64()
            .map(|n| Avro::Float(n as f32))
            .ok_or_else(|| wrong("number")),
        Schema::Double => json
            .as_f64()
            .map(Avro::Double)
            .ok_or_else(|| wrong("number")),
        Schema::String => json
            .as_str()
            .map(|s| Avro::String(s.to_owned()))
            .ok_or_else(|| wrong("string")),
        Schema::Bytes => {
            let text = json.as_str().ok_or_else(|| wrong("base64 string"))?;
            decode_base64(text)
                .map(Avro::Bytes)
                .ok_or_else(|| DecodeError::InvalidValue {
                    field: path.to_owned(),
                    reason: "not valid base64".to_owned(),
                })
        }
        Schema::TimestampMillis => {
            let text = json
                .as_str()
                .ok_or_else(|| wrong("RFC 3339 timestamp string"))?;
            DateTime::parse_from_rfc3339(text)
                .ok()
                .map(|time| time.timestamp_millis())
                // An offset can push year 0000 or 9999 out of range.
                .filter(|millis| RFC3339_MILLIS.contains(millis))
                .map(Avro::TimestampMillis)
                .ok_or_else(|| DecodeError::BadTimestamp {
                    field: path.to_owned(),
                    value: text.to_owned(),
                })
        }
        Schema::Enum(enum_schema) => {
            let text = json.as_str().ok_or_else(|| wrong("string"))?;
            let index = enum_schema
                .symbols
                .iter()
                .position(|symbol| symbol == text)
                .ok_or_else(|| DecodeError::InvalidValue {
                    field: path.to_owned(),
                    reason: format!("`{text}` is not one of {}", enum_schema.symbols.join(", ")),
                })?;
            Ok(Avro::Enum(index as u32, text.to_owned()))
        }
        Schema::Array(array) => {
            let items = json.as_array().ok_or_else(|| wrong("array"))?;
            items
                .iter()
                .enumerate()
                .map(|(i, item)| json_to_avro(item, &array.items, &format!("{path}[{i}]")))
                .collect::<Result<_, _>>()
                .map(Avro::Array)
        }
        Schema::Union(union) => {
            let variants = union.variants();
            if json.is_null() {
                return variants
                    .iter()
                    .position(|v| matches!(v, Schema::Null))
                    .map(|i| Avro::Union(i as u32, Box::new(Avro::Null)))
                    .ok_or_else(|| DecodeError::MissingField(path.to_owned()));
            }
            let mut first_error = None;
            for (index, variant) in variants.iter().enumerate() {
                if matches!(variant, Schema::Null) {
                    continue;
                }
                match json_to_avro(json, variant, path) {
                    Ok(value) => return Ok(Avro::Union(index as u32, Box::new(value))),
                    Err(error) => {
                        first_error.get_or_insert(error);
                    }
                }
            }
            Err(first_error.unwrap_or_else(|| wrong("a union member")))
        }
        Schema::Record(record) => {
            let object = json.as_object().ok_or_else(|| wrong("object"))?;
            let mut fields = Vec::with_capacity(record.fields.len());
            for field in &record.fields {
                let field_path = if path.is_empty() {
                    field.name.clone()
                } else {
                    format!("{path}.{}", field.name)
                };
                let value = match object.get(&field.name) {
                    Some(value) => json_to_avro(value, &field.schema, &field_path)?,
                    None if is_nullable(&field.schema) => {
                        json_to_avro(&Json::Null, &field.schema, &field_path)?
                    }
                    None => return Err(DecodeError::MissingField(field_path)),
                };
                fields.push((field.name.clone(), value));
            }
            Ok(Avro::Record(fields))
        }
        other => Err(DecodeError::InvalidValue {
            field: path.to_owned(),
            reason: format!("schema type {other:?} is not used by engram events"),
        }),
    }
}

/// Builds the JSON form of an Avro value read with `schema`.
pub fn avro_to_json(value: &Avro, path: &str) -> Result<Json, DecodeError> {
    let bad = |what: &str| DecodeError::Undecodable(format!("field `{path}`: {what}"));
    Ok(match value {
        Avro::Null => Json::Null,
        Avro::Boolean(b) => Json::Bool(*b),
        Avro::Int(n) => Json::from(*n),
        Avro::Long(n) => Json::from(*n),
        Avro::Float(n) => Number::from_f64(f64::from(*n))
            .map(Json::Number)
            .ok_or_else(|| bad("float is not finite"))?,
        Avro::Double(n) => Number::from_f64(*n)
            .map(Json::Number)
            .ok_or_else(|| bad("double is not finite"))?,
        Avro::String(s) | Avro::Enum(_, s) => Json::String(s.clone()),
        Avro::Bytes(bytes) => Json::String(encode_base64(bytes)),
        Avro::TimestampMillis(millis) => RFC3339_MILLIS
            .contains(millis)
            .then(|| DateTime::from_timestamp_millis(*millis))
            .flatten()
            .map(|time| Json::String(time.to_rfc3339_opts(SecondsFormat::Millis, true)))
            .ok_or_else(|| DecodeError::BadTimestamp {
                field: path.to_owned(),
                value: format!("{millis} ms (outside years 0000-9999)"),
            })?,
        Avro::Union(_, inner) => avro_to_json(inner, path)?,
        Avro::Array(items) => Json::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, item)| avro_to_json(item, &format!("{path}[{i}]")))
                .collect::<Result<_, _>>()?,
        ),
        Avro::Record(fields) => {
            let mut object = Map::with_capacity(fields.len());
            for (name, field) in fields {
                let value = avro_to_json(field, name)?;
                // Absent optionals read back as absent, as in the JSON form.
                if !value.is_null() {
                    object.insert(name.clone(), value);
                }
            }
            Json::Object(object)
        }
        other => return Err(bad(&format!("unexpected Avro value {other:?}"))),
    })
}

fn is_nullable(schema: &Schema) -> bool {
    match schema {
        Schema::Null => true,
        Schema::Union(union) => union.variants().iter().any(|v| matches!(v, Schema::Null)),
        _ => false,
    }
}

fn json_kind(json: &Json) -> &'static str {
    match json {
        Json::Null => "null",
        Json::Bool(_) => "boolean",
        Json::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Json::Number(_) => "number",
        Json::String(_) => "string",
        Json::Array(_) => "array",
        Json::Object(_) => "object",
    }
}
