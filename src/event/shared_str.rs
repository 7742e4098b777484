//! Text that may share the memory of the record it was read from.

use std::borrow::Borrow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;

use bytes::Bytes;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// UTF-8 text held in [`Bytes`]. A read's ids are slices of its record's
/// payload ([`SharedStr::within`]): three allocations and frees a read
/// were a tenth of its cost. Built from a `String`, it takes the
/// `String`'s buffer over. Compares, orders and hashes as a `str`.
#[derive(Clone, Default)]
pub struct SharedStr(Bytes);

impl SharedStr {
    /// `text`, which lies within `payload`, as a slice of it; a copy if it
    /// does not lie there.
    pub fn within(payload: &Bytes, text: &str) -> Self {
        let inside = payload.as_ptr_range();
        let range = text.as_bytes().as_ptr_range();
        if inside.start <= range.start && range.end <= inside.end {
            Self(payload.slice_ref(text.as_bytes()))
        } else {
            Self::from(text)
        }
    }

    /// The same text in a buffer of its own: for a value kept after its
    /// record's batch, which would otherwise keep the record's whole block
    /// of payloads alive.
    pub fn detached(&self) -> Self {
        Self::from(self.as_str())
    }

    pub fn as_str(&self) -> &str {
        // SAFETY: every constructor takes its bytes from a `str` or a
        // `String`, whole, or a slice of bytes that was one.
        unsafe { std::str::from_utf8_unchecked(&self.0) }
    }
}

impl Deref for SharedStr {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for SharedStr {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl Borrow<str> for SharedStr {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl From<String> for SharedStr {
    fn from(text: String) -> Self {
        Self(Bytes::from(text.into_bytes()))
    }
}

impl From<&str> for SharedStr {
    fn from(text: &str) -> Self {
        Self(Bytes::copy_from_slice(text.as_bytes()))
    }
}

impl PartialEq for SharedStr {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for SharedStr {}

impl PartialEq<str> for SharedStr {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for SharedStr {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for SharedStr {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other
    }
}

impl PartialOrd for SharedStr {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for SharedStr {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl Hash for SharedStr {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl fmt::Debug for SharedStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for SharedStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.as_str(), f)
    }
}

impl Serialize for SharedStr {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for SharedStr {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(Self::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn a_slice_of_its_payload_reads_compares_and_hashes_as_its_text() {
        let payload = Bytes::from_static(br#"{"user_id":"u-7","memory_id":"m-42"}"#);
        let text = std::str::from_utf8(&payload).unwrap();
        let user = SharedStr::within(&payload, &text[12..15]);
        assert_eq!(user, "u-7");
        assert_eq!(user.as_str().as_ptr(), payload[12..].as_ptr(), "no copy");
        let elsewhere = SharedStr::within(&payload, "m-42");
        assert_eq!(elsewhere, SharedStr::from("m-42".to_owned()));
        let mut by_id = HashMap::new();
        by_id.insert(user.clone(), 1);
        assert_eq!(by_id.get("u-7"), Some(&1));
        let (a, b) = (SharedStr::from("a"), SharedStr::from("b"));
        assert!(a < b);
        let json = serde_json::to_string(&user).unwrap();
        assert_eq!(json, r#""u-7""#);
        assert_eq!(serde_json::from_str::<SharedStr>(&json).unwrap(), user);
        assert_eq!(format!("{user} {user:?}"), r#"u-7 "u-7""#);
        let detached = user.detached();
        assert_eq!(detached, user);
        assert_ne!(detached.as_str().as_ptr(), user.as_str().as_ptr(), "a copy");
    }
}
