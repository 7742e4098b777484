//! Supersession: a contradiction that time resolves.
//!
//! The newer memory states a change (a change marker such as "now" or
//! "switched to" that the older lacks, or a verb that ends the activity
//! the older states: "quit smoking" / "smokes"), and the older was not reinforced
//! after the newer arrived (no read at or after its creation). Then the newer
//! supersedes the older; otherwise the pair stays a flagged contradiction.

use serde::Serialize;

use super::{Item, Lexicon};

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Supersession {
    pub newer_id: String,
    pub older_id: String,
    /// The change marker the newer memory states.
    pub marker: String,
}

/// Whether `second` (the later in `(created_at, id)` order) supersedes
/// `first`; `ending` is the verb by which `second` ends what `first`
/// states, if their alignment found one.
pub fn resolve(
    first: &Item<'_>,
    second: &Item<'_>,
    ending: Option<&str>,
    lexicon: &Lexicon,
) -> Option<Supersession> {
    let (older, newer) = (first.memory, second.memory);
    if newer.created_at() <= older.created_at() {
        return None;
    }
    let marker = match ending {
        Some(verb) => verb.to_owned(),
        None => {
            let marker = lexicon.change_marker_in(&second.words)?;
            if lexicon.change_marker_in(&first.words).as_ref() == Some(&marker) {
                return None;
            }
            marker
        }
    };
    let reinforced = older.salience.last_accessed_at() >= newer.created_at();
    (!reinforced).then(|| Supersession {
        newer_id: newer.id.clone(),
        older_id: older.id.clone(),
        marker,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::Prepared;
    use crate::detect::testing::*;

    const HOUR: i64 = 3_600_000;

    fn resolved(older_read_at: Option<i64>, newer: &str) -> Option<Supersession> {
        let mut old = memory(
            "old",
            "Using Pinecone for vector search",
            T0,
            vector(1.0, 1),
        );
        if let Some(at) = older_read_at {
            old.salience.record_access(at);
        }
        let new = memory("new", newer, T0 + 10 * HOUR, vector(0.2, 2));
        let snapshot = snapshot(vec![old, new]);
        let prepared = Prepared::new(&snapshot);
        resolve(&prepared.items[0], &prepared.items[1], None, &lexicon())
    }

    #[test]
    fn a_stated_change_supersedes_an_unreinforced_memory() {
        let found = resolved(Some(T0 + HOUR), "Now using PostgreSQL with pgvector").unwrap();
        assert_eq!(
            (found.newer_id.as_str(), found.older_id.as_str()),
            ("new", "old")
        );
        assert_eq!(found.marker, "now");
    }

    #[test]
    fn reinforcement_after_the_change_keeps_both() {
        assert_eq!(
            resolved(Some(T0 + 11 * HOUR), "Now using PostgreSQL with pgvector"),
            None
        );
    }

    #[test]
    fn no_change_marker_no_supersession() {
        assert_eq!(resolved(None, "Using PostgreSQL with pgvector"), None);
    }
}
