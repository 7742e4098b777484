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

/// Where a value sits in an event: spelled out only for an error, so a
/// valid event costs no string per field.
#[derive(Debug, Clone, Copy)]
enum FieldPath<'a> {
    Root,
    Field(&'a FieldPath<'a>, &'a str),
    Item(&'a FieldPath<'a>, usize),
}

impl std::fmt::Display for FieldPath<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FieldPath::Root => Ok(()),
            FieldPath::Field(FieldPath::Root, name) => f.write_str(name),
            FieldPath::Field(parent, name) => write!(f, "{parent}.{name}"),
            FieldPath::Item(parent, index) => write!(f, "{parent}[{index}]"),
        }
    }
}

/// Builds the Avro value of `json` for `schema`.
pub fn json_to_avro(json: &Json, schema: &Schema) -> Result<Avro, DecodeError> {
    convert::<true>(json, schema, &FieldPath::Root)
}

/// Checks `json` against `schema` exactly as [`json_to_avro`] does, without
/// building the value (decoding a JSON event needs only the check).
pub fn check_json(json: &Json, schema: &Schema) -> Result<(), DecodeError> {
    convert::<false>(json, schema, &FieldPath::Root).map(drop)
}

/// The conversion; with `BUILD` false every value is `Null` and only the
/// errors matter.
fn convert<const BUILD: bool>(
    json: &Json,
    schema: &Schema,
    path: &FieldPath<'_>,
) -> Result<Avro, DecodeError> {
    let wrong = |expected: &str| DecodeError::WrongType {
        field: path.to_string(),
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
            .map(|s| {
                if BUILD {
                    Avro::String(s.to_owned())
                } else {
                    Avro::Null
                }
            })
            .ok_or_else(|| wrong("string")),
        Schema::Bytes => {
            let text = json.as_str().ok_or_else(|| wrong("base64 string"))?;
            decode_base64(text)
                .map(|bytes| {
                    if BUILD {
                        Avro::Bytes(bytes)
                    } else {
                        Avro::Null
                    }
                })
                .ok_or_else(|| DecodeError::InvalidValue {
                    field: path.to_string(),
                    reason: "not valid base64".to_owned(),
                })
        }
        Schema::TimestampMillis => {
            let text = json
                .as_str()
                .ok_or_else(|| wrong("RFC 3339 timestamp string"))?;
            rfc3339_millis(text)
                .map(Avro::TimestampMillis)
                .ok_or_else(|| DecodeError::BadTimestamp {
                    field: path.to_string(),
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
                    field: path.to_string(),
                    reason: format!("`{text}` is not one of {}", enum_schema.symbols.join(", ")),
                })?;
            Ok(if BUILD {
                Avro::Enum(index as u32, text.to_owned())
            } else {
                Avro::Null
            })
        }
        Schema::Array(array) => {
            let items = json.as_array().ok_or_else(|| wrong("array"))?;
            let mut values = Vec::with_capacity(if BUILD { items.len() } else { 0 });
            for (i, item) in items.iter().enumerate() {
                let value = convert::<BUILD>(item, &array.items, &FieldPath::Item(path, i))?;
                if BUILD {
                    values.push(value);
                }
            }
            Ok(if BUILD {
                Avro::Array(values)
            } else {
                Avro::Null
            })
        }
        Schema::Union(union) => {
            let variants = union.variants();
            if json.is_null() {
                return variants
                    .iter()
                    .position(|v| matches!(v, Schema::Null))
                    .map(|i| Avro::Union(i as u32, Box::new(Avro::Null)))
                    .ok_or_else(|| DecodeError::MissingField(path.to_string()));
            }
            let mut first_error = None;
            for (index, variant) in variants.iter().enumerate() {
                if matches!(variant, Schema::Null) {
                    continue;
                }
                match convert::<BUILD>(json, variant, path) {
                    Ok(value) if BUILD => return Ok(Avro::Union(index as u32, Box::new(value))),
                    Ok(_) => return Ok(Avro::Null),
                    Err(error) => {
                        first_error.get_or_insert(error);
                    }
                }
            }
            Err(first_error.unwrap_or_else(|| wrong("a union member")))
        }
        Schema::Record(record) => {
            let object = json.as_object().ok_or_else(|| wrong("object"))?;
            let mut fields = Vec::with_capacity(if BUILD { record.fields.len() } else { 0 });
            for field in &record.fields {
                let field_path = FieldPath::Field(path, &field.name);
                let value = match object.get(&field.name) {
                    Some(value) => convert::<BUILD>(value, &field.schema, &field_path)?,
                    None if is_nullable(&field.schema) => {
                        convert::<BUILD>(&Json::Null, &field.schema, &field_path)?
                    }
                    None => return Err(DecodeError::MissingField(field_path.to_string())),
                };
                if BUILD {
                    fields.push((field.name.clone(), value));
                }
            }
            Ok(if BUILD {
                Avro::Record(fields)
            } else {
                Avro::Null
            })
        }
        other => Err(DecodeError::InvalidValue {
            field: path.to_string(),
            reason: format!("schema type {other:?} is not used by engram events"),
        }),
    }
}

/// An RFC 3339 timestamp as milliseconds since the epoch, as events carry
/// them (`None`: not a timestamp an event may hold).
pub fn rfc3339_millis(text: &str) -> Option<i64> {
    utc_millis(text)
        .or_else(|| {
            DateTime::parse_from_rfc3339(text)
                .ok()
                .map(|time| time.timestamp_millis())
        })
        // An offset can push year 0000 or 9999 out of range.
        .filter(|millis| RFC3339_MILLIS.contains(millis))
}

/// The shape nearly every event's time has, `2026-01-02T03:04:05.678Z`
/// (UTC, no fraction or 1 to 9 digits of it), read directly: chrono's
/// general parser was a tenth of decoding a read. `None` for any other
/// shape, and for a date or time that does not exist, which the general
/// parser then reads or refuses.
fn utc_millis(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    let shaped = b.len() >= 20
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[13] == b':'
        && b[16] == b':'
        && b[b.len() - 1] == b'Z';
    if !shaped {
        return None;
    }
    let number = |digits: &[u8]| {
        digits.iter().try_fold(0_i64, |n, &digit| {
            digit
                .is_ascii_digit()
                .then(|| n * 10 + i64::from(digit - b'0'))
        })
    };
    let year = number(&b[0..4])?;
    let month = number(&b[5..7])?;
    let day = number(&b[8..10])?;
    let hour = number(&b[11..13])?;
    let minute = number(&b[14..16])?;
    let second = number(&b[17..19])?;
    let millis = match &b[19..b.len() - 1] {
        [] => 0,
        [b'.', fraction @ ..]
            if (1..=9).contains(&fraction.len()) && fraction.iter().all(u8::is_ascii_digit) =>
        {
            // Milliseconds are the first three digits; the rest are cut.
            let first = &fraction[..fraction.len().min(3)];
            number(first)? * [100, 10, 1][first.len() - 1]
        }
        _ => return None,
    };
    // Leap seconds (:60) are left to the general parser.
    let exists = (1..=12).contains(&month)
        && (1..=days_in_month(year, month)).contains(&day)
        && hour < 24
        && minute < 60
        && second < 60;
    if !exists {
        return None;
    }
    let seconds = ((days_from_civil(year, month, day) * 24 + hour) * 60 + minute) * 60 + second;
    Some(seconds * 1000 + millis)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days from 1970-01-01 to a date of the proleptic Gregorian calendar
/// (Howard Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// A time in milliseconds since the epoch as events carry it (`None`:
/// outside what RFC 3339 can write).
pub fn event_time(millis: i64) -> Option<DateTime<chrono::Utc>> {
    RFC3339_MILLIS
        .contains(&millis)
        .then(|| DateTime::from_timestamp_millis(millis))
        .flatten()
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
        Avro::TimestampMillis(millis) => event_time(*millis)
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

#[cfg(test)]
mod tests {
    /// The direct reading of UTC times gives what chrono's parser gives,
    /// and leaves to it what it does not read: a time every 9,973 hours over
    /// years 0 to 9999, each with fractions of every length, and dates and
    /// times that do not exist.
    #[test]
    fn utc_times_read_directly_match_chrono() {
        let chrono_millis = |text: &str| {
            chrono::DateTime::parse_from_rfc3339(text)
                .ok()
                .map(|time| time.timestamp_millis())
        };
        let first = chrono::NaiveDate::from_ymd_opt(0, 1, 1).unwrap();
        let mut checked = 0;
        for step in 0..(10_000 * 366 * 24 / 9_973) {
            let time = first.and_hms_opt(0, 0, 0).unwrap()
                + chrono::TimeDelta::hours(9_973 * step)
                + chrono::TimeDelta::milliseconds(step * 7919 % 60_000);
            let whole = time.format("%Y-%m-%dT%H:%M:%S").to_string();
            let nanos = format!("{:09}", time.and_utc().timestamp_subsec_nanos());
            for digits in 0..=9 {
                let text = if digits == 0 {
                    format!("{whole}Z")
                } else {
                    format!("{whole}.{}Z", &nanos[..digits])
                };
                assert_eq!(super::utc_millis(&text), chrono_millis(&text), "{text}");
                checked += 1;
            }
        }
        assert!(checked > 80_000);
        for text in [
            "2026-02-29T00:00:00Z",
            "2024-02-30T00:00:00Z",
            "2026-13-01T00:00:00Z",
            "2026-00-01T00:00:00Z",
            "2026-04-31T00:00:00Z",
            "2026-01-01T24:00:00Z",
            "2026-01-01T23:60:00Z",
            "2026-01-01T23:59:60Z",
            "2026-01-01T23:59:59.Z",
            "2026-01-01T23:59:59.1234567890Z",
            "2026-01-01T23:59:59.12a4Z",
            "2026-01-01 23:59:59Z",
            "2026-01-01T23:59:59z",
            "2026-01-01T23:59:59+00:00",
            "+2026-01-01T23:59:59Z",
            "2026-1-01T23:59:59.0Z",
        ] {
            assert_eq!(super::utc_millis(text), None, "{text}");
            assert_eq!(
                super::rfc3339_millis(text),
                chrono_millis(text).filter(|m| super::RFC3339_MILLIS.contains(m)),
                "{text}"
            );
        }
    }

    use serde_json::json;

    use super::*;
    use crate::event::schema::Schemas;
    use crate::event::types::EventType;

    #[test]
    fn the_check_reports_exactly_what_the_conversion_reports() {
        let schemas = Schemas::load().unwrap();
        let schema = schemas.schema(EventType::MemoryCreated).unwrap();
        let valid = json!({
            "event_id": "e", "user_id": "u", "memory_id": "m", "kind": "semantic",
            "content": "text", "created_at": "2026-09-01T08:00:00.000Z",
            "tags": ["a", "b"], "importance": 0.5
        });
        let mut cases = vec![valid.clone()];
        for (field, value) in [
            ("content", Json::Null),
            ("tags", json!(["a", 5])),
            ("created_at", json!("2026-09-01 08:00:00Z")),
            ("kind", json!("dream")),
            ("importance", json!("high")),
            ("embedding", json!("not base64 or floats")),
        ] {
            let mut case = valid.clone();
            case[field] = value;
            cases.push(case);
        }
        let mut missing = valid.clone();
        missing.as_object_mut().unwrap().remove("memory_id");
        cases.push(missing);
        for case in &cases {
            let built = json_to_avro(case, schema).map(drop);
            assert_eq!(check_json(case, schema), built, "{case}");
        }
        assert!(check_json(&valid, schema).is_ok());
        assert!(matches!(
            check_json(&cases[2], schema),
            Err(DecodeError::WrongType { field, .. }) if field == "tags[1]"
        ));
        assert_eq!(
            check_json(cases.last().unwrap(), schema),
            Err(DecodeError::MissingField("memory_id".to_owned()))
        );
    }
}
