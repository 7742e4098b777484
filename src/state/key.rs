//! Looking memories up by `(user_id, memory_id)` without building the key.
//!
//! A batch's maps are keyed by owned [`MemoryKey`]s, and every access event
//! looks its memory up several times. Building `(String, String)` for each
//! lookup was two allocations a time; [`by`] borrows the two ids instead.

use std::borrow::Borrow;
use std::cmp::Ordering;
use std::hash::{Hash, Hasher};

/// A memory's `(user_id, memory_id)`.
pub type MemoryKey = (String, String);

/// The hasher of a batch's maps: every event looks its user and memory up
/// several times, and SipHash cost more than the rest of the lookup. Each
/// map is seeded at random, and holds at most one batch's keys.
pub type Hashed = foldhash::fast::RandomState;

/// Either form of a memory key, compared as the owned tuple compares.
pub trait KeyPair {
    fn user_id(&self) -> &str;
    fn memory_id(&self) -> &str;
}

impl KeyPair for MemoryKey {
    fn user_id(&self) -> &str {
        &self.0
    }
    fn memory_id(&self) -> &str {
        &self.1
    }
}

impl KeyPair for (&str, &str) {
    fn user_id(&self) -> &str {
        self.0
    }
    fn memory_id(&self) -> &str {
        self.1
    }
}

impl<'a> Borrow<dyn KeyPair + 'a> for MemoryKey {
    fn borrow(&self) -> &(dyn KeyPair + 'a) {
        self
    }
}

impl PartialEq for dyn KeyPair + '_ {
    fn eq(&self, other: &Self) -> bool {
        self.user_id() == other.user_id() && self.memory_id() == other.memory_id()
    }
}

impl Eq for dyn KeyPair + '_ {}

impl PartialOrd for dyn KeyPair + '_ {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

// The tuple's own order (user, then memory), as `Borrow` requires.
impl Ord for dyn KeyPair + '_ {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.user_id(), self.memory_id()).cmp(&(other.user_id(), other.memory_id()))
    }
}

// The tuple's own hash (each field as `str` hashes), as `Borrow` requires.
impl Hash for dyn KeyPair + '_ {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.user_id().hash(state);
        self.memory_id().hash(state);
    }
}

/// The borrowed form of a key, for `get`, `contains_key` and `remove`.
pub fn by<'k>(key: &'k (&'k str, &'k str)) -> &'k (dyn KeyPair + 'k) {
    key
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{BTreeMap, BTreeSet, HashMap};

    #[test]
    fn a_borrowed_key_finds_what_the_owned_key_stored() {
        let mut map = BTreeMap::new();
        for (user, memory) in [("b", "1"), ("a", "2"), ("a", "10"), ("ab", "")] {
            map.insert(
                (user.to_owned(), memory.to_owned()),
                format!("{user}/{memory}"),
            );
        }
        for (user, memory) in [("b", "1"), ("a", "2"), ("a", "10"), ("ab", "")] {
            assert_eq!(
                map.get(by(&(user, memory))),
                Some(&format!("{user}/{memory}"))
            );
        }
        assert_eq!(map.get(by(&("a", "1"))), None);
        assert_eq!(
            map.get(by(&("", "ab"))),
            None,
            "the user and memory stay apart"
        );
        let hashed: HashMap<MemoryKey, String> = map.clone().into_iter().collect();
        for (key, value) in &map {
            assert_eq!(hashed.get(by(&(&key.0, &key.1))), Some(value));
        }
        assert_eq!(hashed.get(by(&("", "ab"))), None);
        let set: BTreeSet<MemoryKey> = map.into_keys().collect();
        assert!(set.contains(by(&("ab", ""))));
        assert!(!set.contains(by(&("a", "b"))));
    }
}
