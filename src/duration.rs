//! Durations as the configuration writes them: whole numbers with a unit (`500ms`,
//! `10s`, `5m`, `1h`, `1d`, or a sum such as `1h30m`), so no key carries
//! its unit in its name and no value is read in the wrong one.

use std::time::Duration;

use serde::{Deserialize, Deserializer, Serializer};

/// What a duration value must look like, for error messages.
pub const EXPECTED: &str = "a duration with a unit, such as 500ms, 10s, 5m, 1h or 1d";

/// Units, largest first, in milliseconds.
const UNITS: [(&str, u64); 5] = [
    ("d", 86_400_000),
    ("h", 3_600_000),
    ("m", 60_000),
    ("s", 1_000),
    ("ms", 1),
];

/// Reads a duration as [`EXPECTED`] says; `0` alone is zero.
pub fn parse(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err(format!("an empty value is not {EXPECTED}"));
    }
    if text == "0" {
        return Ok(Duration::ZERO);
    }
    let invalid = || format!("`{text}` is not {EXPECTED}");
    let mut rest = text;
    let mut millis: u64 = 0;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let number: u64 = rest[..digits].parse().map_err(|_| invalid())?;
        rest = &rest[digits..];
        let letters = rest
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(rest.len());
        let unit = UNITS
            .iter()
            .find(|(name, _)| *name == &rest[..letters])
            .ok_or_else(invalid)?;
        rest = &rest[letters..];
        millis = number
            .checked_mul(unit.1)
            .and_then(|part| millis.checked_add(part))
            .ok_or_else(invalid)?;
    }
    Ok(Duration::from_millis(millis))
}

/// A duration in the largest unit that states it exactly (`86400000` ms:
/// `1d`), as `engram config` prints it.
pub fn format(duration: Duration) -> String {
    let millis = u64::try_from(duration.as_millis()).unwrap_or(u64::MAX);
    if millis == 0 {
        return "0s".to_owned();
    }
    UNITS
        .iter()
        .find(|(_, size)| millis.is_multiple_of(*size))
        .map_or_else(
            || format!("{millis}ms"),
            |(name, size)| format!("{}{name}", millis / size),
        )
}

/// A duration in whole milliseconds, as the pipeline's clock counts
/// (saturating: a configured span never wraps into the past).
pub fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

/// `#[serde(with = "crate::duration")]`: a duration field as text.
pub fn serialize<S: Serializer>(duration: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&format(*duration))
}

pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Duration, D::Error> {
    let text = String::deserialize(deserializer)?;
    parse(&text).map_err(serde::de::Error::custom)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_and_sums_read_and_print_back() {
        for (text, millis) in [
            ("500ms", 500),
            ("10s", 10_000),
            ("5m", 300_000),
            ("1h30m", 5_400_000),
            ("1d", 86_400_000),
            ("0", 0),
        ] {
            assert_eq!(parse(text), Ok(Duration::from_millis(millis)), "{text}");
        }
        assert_eq!(format(Duration::from_millis(86_400_000)), "1d");
        assert_eq!(format(Duration::from_millis(5_400_000)), "90m");
        assert_eq!(format(Duration::from_millis(1_500)), "1500ms");
        assert_eq!(format(Duration::ZERO), "0s");
    }

    #[test]
    fn a_number_without_its_unit_is_refused() {
        for text in ["500", "10 s", "1.5s", "-1s", "1w", "ms", ""] {
            let error = parse(text).unwrap_err();
            assert!(error.contains("a duration with a unit"), "{text}: {error}");
        }
    }
}
