//! A scanner for the one JSON shape most input events have: a flat object
//! whose values are strings without escapes, or `null`.
//!
//! Reads are most of a stream, and each is such an object of about 130
//! bytes. `serde_json` spent about 2,900 instructions on one (matching each
//! key through a visitor, copying each string into its own allocation); this
//! scanner borrows every value from the input instead. It answers `None` for
//! anything outside the shape (an escape, a number, a nested value, a
//! repeated key of interest, trailing text), and the caller then decodes the
//! event the general way, which gives the exact result or error.

/// A value the scanner reads: a string as written (no escapes) or `null`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Flat<'a> {
    Str(&'a str),
    Null,
}

/// The values of the wanted keys in a flat object, each in the slot that
/// `slot_of` gives its key (`None`: the key is absent). Other keys are
/// skipped, as a derived `Deserialize` skips unknown fields, provided their
/// values are in the shape too. `None` for any text outside the shape, and
/// for a wanted key given twice (a derived `Deserialize` refuses that).
pub(super) fn flat_object<'a, const N: usize>(
    text: &'a str,
    slot_of: impl Fn(&str) -> Option<usize>,
) -> Option<[Option<Flat<'a>>; N]> {
    let bytes = text.as_bytes();
    // Escapes and control characters are left to serde (in strings, and
    // tabs or line breaks between tokens). Checked over the whole text at
    // once, they leave each string's closing quote to find.
    if has_escape_or_control(bytes) {
        return None;
    }
    let mut values = [None; N];
    let mut at = skip_space(bytes, 0);
    if bytes.get(at) != Some(&b'{') {
        return None;
    }
    at = skip_space(bytes, at + 1);
    if bytes.get(at) == Some(&b'}') {
        at += 1;
    } else {
        loop {
            let (key, after_key) = plain_string(text, at)?;
            at = skip_space(bytes, after_key);
            if bytes.get(at) != Some(&b':') {
                return None;
            }
            at = skip_space(bytes, at + 1);
            let (value, after_value) = if bytes[at..].starts_with(b"null") {
                (Flat::Null, at + 4)
            } else {
                let (value, after) = plain_string(text, at)?;
                (Flat::Str(value), after)
            };
            if let Some(slot) = slot_of(key) {
                if values.get(slot)?.is_some() {
                    return None;
                }
                values[slot] = Some(value);
            }
            at = skip_space(bytes, after_value);
            match bytes.get(at) {
                Some(b',') => at = skip_space(bytes, at + 1),
                Some(b'}') => {
                    at += 1;
                    break;
                }
                _ => return None,
            }
        }
    }
    (skip_space(bytes, at) == bytes.len()).then_some(values)
}

/// A string value read by [`in_layout`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Plain<'a> {
    pub(super) text: &'a str,
    /// Whether every byte is printable ASCII other than a space
    /// (`0x21..=0x7e`), as an id's check wants them, and there is one at
    /// least: found on the way, so that check has no second pass to make.
    pub(super) visible: bool,
}

/// The string values of an object written in one exact layout: `parts`
/// are the text around the values, each value a plain string (no escape or
/// control character) between two parts (the first part ends with the
/// value's opening quote, each next one starts with its closing quote).
/// `None` for any other text, which [`flat_object`] then reads.
///
/// Most producers write an event's keys in one order without spaces
/// (engram's own encoder does, in its schema's order): matched as literal
/// text, such a read costs a few comparisons per key instead of a scan of
/// each key and its separators. Only the values' bytes are scanned, once,
/// eight a step: for their closing quote, for what would make them not
/// plain, and for what an id's check or UTF-8's needs to know. The parts
/// are ASCII, so bytes whose values are valid UTF-8 are valid as a whole.
pub(super) fn in_layout<'a, const N: usize, const P: usize>(
    bytes: &'a [u8],
    parts: &[&str; P],
) -> Option<[Plain<'a>; N]> {
    debug_assert_eq!(P, N + 1, "a part before, between and after the values");
    let (head, rest) = parts.split_first()?;
    if !bytes.starts_with(head.as_bytes()) {
        return None;
    }
    let mut at = head.len();
    let mut values = [Plain {
        text: "",
        visible: false,
    }; N];
    for (value, part) in values.iter_mut().zip(rest) {
        let scan = scan_value(bytes.get(at..)?)?;
        let raw = bytes.get(at..at + scan.end)?;
        let text = if scan.ascii {
            // SAFETY: every byte of `raw` is below 0x80 (`scan_value`
            // looked at each), and ASCII is UTF-8.
            unsafe { std::str::from_utf8_unchecked(raw) }
        } else {
            std::str::from_utf8(raw).ok()?
        };
        *value = Plain {
            text,
            visible: scan.visible && !raw.is_empty(),
        };
        at += scan.end;
        if !bytes[at..].starts_with(part.as_bytes()) {
            return None;
        }
        at += part.len();
    }
    (at == bytes.len()).then_some(values)
}

/// What one pass over a string value's bytes found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ValueScan {
    /// The position of its closing quote.
    end: usize,
    /// Every byte before it below 0x80.
    ascii: bool,
    /// Every byte before it in `0x21..=0x7e`.
    visible: bool,
}

/// The closing quote of the string that starts at `bytes[0]` (after its
/// opening quote), with what its bytes are; `None` where a backslash or a
/// control character comes first, or no quote comes.
///
/// Ids and times are visible ASCII: eight bytes a step look for the first
/// byte that is not, or is a quote or a backslash. Where that is the
/// closing quote the value is settled; anything else (a space, a letter
/// beyond ASCII, a short last stretch) is read a byte at a time.
fn scan_value(bytes: &[u8]) -> Option<ValueScan> {
    let mut at = 0;
    for chunk in bytes.chunks_exact(8) {
        let word = word_of(chunk);
        let below_visible = word.wrapping_sub(each(0x21)) & !word & HIGHS;
        // 0x7f and above: no carry crosses a byte, so every flag is exact.
        let above_visible = ((word & !HIGHS).wrapping_add(ONES) | word) & HIGHS;
        let special = below_visible
            | above_visible
            | zero_bytes(word ^ each(b'"'))
            | zero_bytes(word ^ each(b'\\'));
        if special != 0 {
            let k = first_flagged(special);
            if chunk[k] == b'"' {
                return Some(ValueScan {
                    end: at + k,
                    ascii: true,
                    visible: true,
                });
            }
            break;
        }
        at += 8;
    }
    // `bytes[..at]` are visible ASCII.
    let rest = scan_value_bytewise(&bytes[at..])?;
    Some(ValueScan {
        end: at + rest.end,
        ..rest
    })
}

/// [`scan_value`], one byte at a time.
fn scan_value_bytewise(bytes: &[u8]) -> Option<ValueScan> {
    let end = bytes
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
        .filter(|&end| bytes[end] == b'"')?;
    let value = &bytes[..end];
    Some(ValueScan {
        end,
        ascii: value.is_ascii(),
        visible: value.iter().all(|b| (0x21..=0x7e).contains(b)),
    })
}

/// JSON's whitespace only (space, tab, line feed, carriage return).
fn skip_space(bytes: &[u8], mut at: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = bytes.get(at) {
        at += 1;
    }
    at
}

/// The string that starts at `at` (its opening quote) and the position after
/// its closing quote, in a text without escapes or control characters.
fn plain_string(text: &str, at: usize) -> Option<(&str, usize)> {
    let bytes = text.as_bytes();
    if bytes.get(at) != Some(&b'"') {
        return None;
    }
    let start = at + 1;
    let end = start + first_quote(bytes.get(start..)?)?;
    // Quotes are ASCII, so both ends are character boundaries.
    Some((text.get(start..end)?, end + 1))
}

/// The position of the first `"` in `bytes`, eight bytes a step. The
/// strings of an event are short (ids, a time): a vectorised search paid
/// more to start than it saved, about 40 instructions a string.
fn first_quote(bytes: &[u8]) -> Option<usize> {
    let mut words = bytes.chunks_exact(8);
    let mut at = 0;
    for chunk in &mut words {
        let quotes = zero_bytes(word_of(chunk) ^ each(b'"'));
        if quotes != 0 {
            return Some(at + first_flagged(quotes));
        }
        at += 8;
    }
    let tail = words.remainder();
    tail.iter().position(|&b| b == b'"').map(|k| at + k)
}

// Eight bytes at a time: a comparison flags each byte in its high bit. The
// lowest flag of `zero_bytes` (and of the `x - each(n) & !x` tests built
// like it) is exact, since a borrow only flags bytes after a true one, and
// only the lowest is ever read.
const ONES: u64 = each(0x01);
const HIGHS: u64 = each(0x80);

/// `byte` in each of a word's eight bytes.
const fn each(byte: u8) -> u64 {
    u64::from_le_bytes([byte; 8])
}

/// Eight bytes as a little-endian word (byte `k` in bits `8k..8k + 8`).
fn word_of(chunk: &[u8]) -> u64 {
    let mut eight = [0; 8];
    eight.copy_from_slice(chunk);
    u64::from_le_bytes(eight)
}

/// The zero bytes of `word`, each flagged in its high bit.
fn zero_bytes(word: u64) -> u64 {
    word.wrapping_sub(ONES) & !word & HIGHS
}

/// The byte of the lowest flag.
fn first_flagged(flags: u64) -> usize {
    (flags.trailing_zeros() / 8) as usize
}

/// Whether `bytes` hold a backslash or a control character (below 0x20).
fn has_escape_or_control(bytes: &[u8]) -> bool {
    // Without an early exit the loop is vectorised, sixteen bytes or more
    // a step; an event is read whole anyway.
    bytes
        .iter()
        .fold(false, |found, &b| found | (b == b'\\') | (b < 0x20))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde::Deserialize;
    use std::borrow::Cow;

    const KEYS: [&str; 3] = ["a", "b", "c"];

    fn flat(text: &str) -> Option<[Option<Flat<'_>>; 3]> {
        flat_object(text, |key| KEYS.iter().position(|k| *k == key))
    }

    /// What a derived `Deserialize` makes of the same text.
    #[derive(Deserialize, Debug)]
    struct Derived<'a> {
        #[serde(borrow, default)]
        a: Option<Cow<'a, str>>,
        #[serde(borrow, default)]
        b: Option<Cow<'a, str>>,
        #[serde(borrow, default)]
        c: Option<Cow<'a, str>>,
    }

    fn as_text(value: Option<Flat<'_>>) -> Option<&str> {
        match value? {
            Flat::Str(text) => Some(text),
            Flat::Null => None,
        }
    }

    #[test]
    fn reads_a_flat_object_and_skips_other_keys() {
        let object = r#" { "b" : "two" ,"x":"skipped", "a":null,"c":"é \u"}"#;
        assert_eq!(flat(object), None, "an escape is left to serde");
        let object = r#" { "b" : "two" ,"x":"skipped", "a":null,"c":"é"} "#;
        assert_eq!(
            flat(object),
            Some([
                Some(Flat::Null),
                Some(Flat::Str("two")),
                Some(Flat::Str("é"))
            ])
        );
        assert_eq!(flat("{}"), Some([None, None, None]));
    }

    #[test]
    fn leaves_every_other_shape_to_the_general_decoder() {
        for text in [
            r#"{"a":"1","a":"2"}"#,
            r#"{"a":1}"#,
            r#"{"a":"1",}"#,
            r#"{"a":"1"} x"#,
            r#"{"a":"1""#,
            r#"{"a" "1"}"#,
            r#"{"x":[1]}"#,
            r#"{"a":"tab	inside"}"#,
            r#"["a"]"#,
            r#"{"a":nul}"#,
            "",
        ] {
            assert_eq!(flat(text), None, "{text}");
        }
    }

    const LAYOUT: [&str; 3] = [r#"{"a":""#, r#"","b":""#, r#""}"#];

    fn layout_values(text: &[u8]) -> Option<[&str; 2]> {
        in_layout::<2, 3>(text, &LAYOUT).map(|values| values.map(|value| value.text))
    }

    #[test]
    fn reads_values_in_an_exact_layout_and_nothing_else() {
        let values = |text: &'static str| layout_values(text.as_bytes());
        assert_eq!(values(r#"{"a":"one","b":"é two"}"#), Some(["one", "é two"]));
        assert_eq!(values(r#"{"a":"","b":""}"#), Some(["", ""]));
        assert_eq!(
            layout_values(b"{\"a\":\"\xc3\",\"b\":\"two\"}"),
            None,
            "a value that is not UTF-8"
        );
        let visible = |text: &str| {
            in_layout::<2, 3>(text.as_bytes(), &LAYOUT).map(|values| values.map(|v| v.visible))
        };
        assert_eq!(visible(r#"{"a":"u-1!~","b":"é"}"#), Some([true, false]));
        assert_eq!(visible(r#"{"a":"a b","b":""}"#), Some([false, false]));
        assert_eq!(
            visible("{\"a\":\"del\x7f\",\"b\":\"x\"}"),
            Some([false, true])
        );
        for text in [
            r#"{"a":"one", "b":"two"}"#,
            r#"{"b":"two","a":"one"}"#,
            r#"{"a":"one","b":"two"} "#,
            r#"{"a":"one","b":"two","c":"3"}"#,
            r#"{"a":"o\"ne","b":"two"}"#,
            r#"{"a":"one","b":"tab	here"}"#,
            r#"{"a":null,"b":"two"}"#,
            r#"{"a":"one","b":"two""#,
            r#"{"a":"one"#,
            "",
        ] {
            assert_eq!(values(text), None, "{text}");
        }
    }

    #[test]
    fn finds_the_first_quote_wherever_it_stands() {
        for len in 0..40 {
            for quote in 0..=len {
                // Every other byte value around it, the borrow's edge cases
                // (0x21, 0x23 and 0x00 beside the quote) included.
                for fill in [0x00, 0x01, b'"' - 1, b'"' + 1, b'a', 0x80, 0xa2, 0xff] {
                    let mut bytes = vec![fill; len];
                    if quote < len {
                        bytes[quote] = b'"';
                        // A second quote later changes nothing.
                        if quote + 3 < len {
                            bytes[quote + 3] = b'"';
                        }
                    }
                    let expected = bytes.iter().position(|&b| b == b'"');
                    assert_eq!(first_quote(&bytes), expected, "{bytes:?}");
                }
            }
        }
    }

    #[test]
    fn scans_a_value_as_a_byte_at_a_time_would() {
        // Every byte value the comparisons border on, before, at and after
        // the end, and a borrow's neighbours beside each.
        let fills = [
            0x00,
            0x1f,
            0x20,
            0x21,
            b'"' - 1,
            b'"',
            b'"' + 1,
            b'\\' - 1,
            b'\\',
            b'\\' + 1,
            b'a',
            0x7e,
            0x7f,
            0x80,
            0xa2,
            0xff,
        ];
        for len in 0..20 {
            for at in 0..len {
                for &odd in &fills {
                    for &fill in &[b'a', 0x21, 0x7e, 0xc3] {
                        let mut bytes = vec![fill; len];
                        bytes[at] = odd;
                        if at + 2 < len {
                            bytes[at + 2] = b'"';
                        }
                        assert_eq!(scan_value(&bytes), scan_value_bytewise(&bytes), "{bytes:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn finds_a_backslash_or_control_character_anywhere() {
        for stop in (0..0x20).chain([b'\\']) {
            for at in 0..19 {
                for fill in [b'a', b'\\' - 1, b'\\' + 1, 0x20, 0x7f, 0x80, 0xff] {
                    let mut text = [fill; 19];
                    text[at] = stop;
                    assert!(has_escape_or_control(&text), "{text:?}");
                }
            }
        }
        assert!(!has_escape_or_control(
            b"{\"user_id\":\"u-1\",\"x\":\"\xc3\xa9\x7f\"}"
        ));
    }

    /// Whether the scanner answered for `text`; an error where its answer
    /// differs from a derived `Deserialize`'s.
    fn same_as_serde(text: &str) -> Result<bool, TestCaseError> {
        let Some(values) = flat(text) else {
            return Ok(false);
        };
        let derived: Derived<'_> = serde_json::from_str(text)
            .map_err(|e| TestCaseError::fail(format!("{text}: serde refused: {e}")))?;
        prop_assert_eq!(as_text(values[0]), derived.a.as_deref(), "{}", text);
        prop_assert_eq!(as_text(values[1]), derived.b.as_deref(), "{}", text);
        prop_assert_eq!(as_text(values[2]), derived.c.as_deref(), "{}", text);
        // The exact layout is one of the scanner's shapes: where it answers,
        // it reads what the scanner and serde read.
        if let Some([a, b]) = layout_values(text.as_bytes()) {
            prop_assert_eq!(Some(a), derived.a.as_deref(), "{}", text);
            prop_assert_eq!(Some(b), derived.b.as_deref(), "{}", text);
            prop_assert_eq!(derived.c.as_deref(), None, "{}", text);
        }
        Ok(true)
    }

    proptest! {
        /// On any text built from the pieces of such objects, the scanner
        /// either steps aside or agrees with a derived `Deserialize`.
        #[test]
        fn agrees_with_serde_wherever_it_answers(
            pieces in prop::collection::vec(
                prop::sample::select(vec![
                    "{", "}", ",", ":", " ", "\n", "\"a\"", "\"b\"", "\"c\"", "\"x\"",
                    "\"v\"", "\"é\"", "\"\"", "null", "1", "\"\\n\"", "[", "]", "\"\t\"",
                ]),
                0..24,
            )
        ) {
            same_as_serde(&pieces.concat())?;
        }

        /// The same on whole objects, most of them in the shape: repeated
        /// keys, skipped keys and values of every kind.
        #[test]
        fn agrees_with_serde_on_objects(
            fields in prop::collection::vec(
                (
                    prop::sample::select(vec!["\"a\"", "\"b\"", "\"c\"", "\"x\"", "\"\\u0061\""]),
                    prop::sample::select(vec![
                        "\"v\"", "\"é ü\"", "\"\"", "null", "1", "true", "\"\\\"\"", "[\"v\"]",
                        "{\"a\":\"v\"}", "\"\u{7f}\"", "\"\t\"",
                        "\"a value longer than two words of bytes\"",
                        "\"0123456789abcdef\\\"x\"", "\"0123456789\tabcdef\"",
                        "\"2026-01-02T03:04:05.678Z\"",
                    ]),
                    prop::sample::select(vec!["", " ", "\n\t", "\r"]),
                ),
                0..6,
            )
        ) {
            let body: Vec<String> = fields
                .iter()
                .map(|(key, value, space)| format!("{space}{key}{space}:{space}{value}{space}"))
                .collect();
            let text = format!("{{{}}}", body.join(","));
            if !same_as_serde(&text)? {
                // Stepping aside is allowed; on plain objects it must not.
                let plain = fields.iter().all(|(key, value, space)| {
                    !key.contains('\\')
                        && space.chars().all(|c| c == ' ')
                        && (value.starts_with('"') && !value.contains('\\') && !value.contains('\t')
                            || *value == "null")
                });
                let repeated = KEYS.iter().any(|k| {
                    fields.iter().filter(|(key, _, _)| key.trim_matches('"') == *k).count() > 1
                });
                prop_assert!(!plain || repeated, "{} was left to serde", text);
            }
        }
    }
}
