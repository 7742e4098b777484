//! A reader for the Avro datum of the commonest input event, a read
//! (`schemas/memory.accessed.avsc`): three strings, a `timestamp-millis`
//! long, and a union of null and a string.
//!
//! `apache_avro` builds a generic value of each datum first (a vector of
//! named fields, each string in its own allocation), which made an Avro read
//! cost a third more CPU than a JSON one. This reader borrows the strings
//! from the datum instead. It answers `None` for anything it does not read
//! exactly as written (a malformed or overlong number, a negative or
//! overrunning length, text that is not UTF-8, another union branch,
//! trailing bytes), and the caller then reads the datum the general way,
//! which gives the exact result or error.

/// A read's fields, as the datum holds them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct AccessDatum<'a> {
    pub(super) event_id: &'a str,
    pub(super) user_id: &'a str,
    pub(super) memory_id: &'a str,
    pub(super) accessed_at: i64,
    pub(super) context: Option<&'a str>,
}

/// The fields of `datum` (the bytes after the single-object header), in
/// the schema's order.
pub(super) fn access_datum(datum: &[u8]) -> Option<AccessDatum<'_>> {
    let mut reader = Reader { datum, at: 0 };
    let read = AccessDatum {
        event_id: reader.string()?,
        user_id: reader.string()?,
        memory_id: reader.string()?,
        accessed_at: reader.long()?,
        context: match reader.long()? {
            0 => None,
            1 => Some(reader.string()?),
            _ => return None,
        },
    };
    (reader.at == datum.len()).then_some(read)
}

struct Reader<'a> {
    datum: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    /// A zig-zag varint of at most ten bytes whose value fits 64 bits.
    fn long(&mut self) -> Option<i64> {
        let mut bits: u64 = 0;
        for shift in (0..64).step_by(7) {
            let byte = *self.datum.get(self.at)?;
            self.at += 1;
            // The tenth byte holds bit 63 alone.
            if shift == 63 && byte > 1 {
                return None;
            }
            bits |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Some((bits >> 1) as i64 ^ -((bits & 1) as i64));
            }
        }
        None
    }

    /// A length, then that many bytes of UTF-8.
    fn string(&mut self) -> Option<&'a str> {
        let len = usize::try_from(self.long()?).ok()?;
        let end = self.at.checked_add(len)?;
        let text = std::str::from_utf8(self.datum.get(self.at..end)?).ok()?;
        self.at = end;
        Some(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Zig-zag varint bytes of `value`, as Avro writes them.
    fn long(value: i64) -> Vec<u8> {
        let mut bits = ((value << 1) ^ (value >> 63)) as u64;
        let mut out = Vec::new();
        loop {
            let byte = (bits & 0x7f) as u8;
            bits >>= 7;
            if bits == 0 {
                out.push(byte);
                return out;
            }
            out.push(byte | 0x80);
        }
    }

    fn string(text: &str) -> Vec<u8> {
        let mut out = long(text.len() as i64);
        out.extend_from_slice(text.as_bytes());
        out
    }

    #[test]
    fn reads_every_field_and_both_union_branches() {
        let mut datum = [string("e1"), string("u\u{e9}"), string("m1")].concat();
        datum.extend(long(-1_767_322_245_678));
        let without = [datum.clone(), long(0)].concat();
        let with = [datum, long(1), string("chat")].concat();
        let read = access_datum(&without).unwrap();
        assert_eq!(
            (read.event_id, read.user_id, read.memory_id),
            ("e1", "u\u{e9}", "m1")
        );
        assert_eq!(read.accessed_at, -1_767_322_245_678);
        assert_eq!(read.context, None);
        assert_eq!(access_datum(&with).unwrap().context, Some("chat"));
        // Anything else is left to the general reader.
        assert_eq!(access_datum(&[with.as_slice(), &[0]].concat()), None);
        assert_eq!(access_datum(&with[..with.len() - 1]), None);
        let other_branch = [&without[..without.len() - 1], &long(2)[..]].concat();
        assert_eq!(access_datum(&other_branch), None);
    }

    #[test]
    fn reads_the_extremes_of_a_long_and_refuses_what_overflows() {
        for value in [0, -1, 1, 63, -64, 64, i64::MAX, i64::MIN] {
            let mut reader = Reader {
                datum: &long(value),
                at: 0,
            };
            assert_eq!(reader.long(), Some(value), "{value}");
        }
        let overlong = [0xff; 10];
        assert_eq!(
            Reader {
                datum: &overlong,
                at: 0
            }
            .long(),
            None
        );
        let negative_length = [long(-2), b"ab".to_vec()].concat();
        assert_eq!(
            Reader {
                datum: &negative_length,
                at: 0
            }
            .string(),
            None
        );
    }
}
