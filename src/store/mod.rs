//! Where state lives: a small trait over memories, salience state, links,
//! per-user state and run reports, with two implementations: embedded
//! (SQLite, one process) and ScyllaDB (service mode).
//!
//! Writes go through [`WriteBatch`]: a batch is applied atomically, so the
//! effects of a batch of events and the offsets that mark them applied become
//! durable together (docs/design.md §6).

mod embedded;
mod scylladb;

use serde_json::json;
use thiserror::Error;

pub use embedded::EmbeddedStore;
pub use scylladb::{MigrateOutcome, ScyllaConfig, ScyllaStore, drop_keyspace, migrate, schema};

use crate::error::Cause;
use crate::model::{
    CycleState, Link, LinkType, Memory, MemoryStatus, Millis, ParkedRead, RunReport, UserState,
};
use crate::salience::SalienceState;

/// A user's bookkeeping as both stores keep it: one JSON document in the
/// user row's `cycle` column, the triggers' state with the parked reads
/// beside it, so that new bookkeeping needs no schema change.
#[derive(serde::Serialize)]
struct BookkeepingRef<'a> {
    #[serde(flatten)]
    cycle: &'a CycleState,
    #[serde(skip_serializing_if = "<[ParkedRead]>::is_empty")]
    parked_reads: &'a [ParkedRead],
    #[serde(skip_serializing_if = "Option::is_none")]
    erased_at: Option<Millis>,
}

#[derive(serde::Deserialize)]
struct Bookkeeping {
    #[serde(flatten)]
    cycle: CycleState,
    #[serde(default)]
    parked_reads: Vec<ParkedRead>,
    #[serde(default)]
    erased_at: Option<Millis>,
}

/// The `cycle` column of a user's state.
pub(crate) fn bookkeeping_json(state: &UserState) -> String {
    serde_json::to_string(&BookkeepingRef {
        cycle: &state.cycle,
        parked_reads: &state.parked_reads,
        erased_at: state.erased_at,
    })
    .unwrap_or_else(|_| "{}".to_owned())
}

/// Reads the `cycle` column back into `state`.
pub(crate) fn read_bookkeeping(state: &mut UserState, text: &str) -> Result<(), serde_json::Error> {
    let Bookkeeping {
        cycle,
        parked_reads,
        erased_at,
    } = serde_json::from_str(text)?;
    state.cycle = cycle;
    state.parked_reads = parked_reads;
    state.erased_at = erased_at;
    Ok(())
}

#[derive(Debug, Error)]
pub enum StoreError {
    #[error("cannot open the store at {path}: {reason}")]
    Open { path: String, reason: String },
    /// The backend could not serve the request now (timeout, busy, lost
    /// connection, full disk): the same request may succeed later.
    #[error("the store is unavailable ({what})")]
    Unavailable {
        what: String,
        #[source]
        source: Cause,
    },
    /// The backend refused the request itself (invalid, too large, not
    /// allowed): sending it again gets the same answer.
    #[error("the store refused {what}")]
    Refused {
        what: String,
        #[source]
        source: Cause,
    },
    #[error("stored data is corrupt ({what}): {reason}")]
    Corrupt { what: String, reason: String },
    #[error("memory {memory_id} of user {user_id} does not exist")]
    MissingMemory { user_id: String, memory_id: String },
}

impl StoreError {
    pub fn unavailable(what: impl Into<String>, source: impl Into<Cause>) -> Self {
        Self::Unavailable {
            what: what.into(),
            source: source.into(),
        }
    }

    pub fn refused(what: impl Into<String>, source: impl Into<Cause>) -> Self {
        Self::Refused {
            what: what.into(),
            source: source.into(),
        }
    }

    /// Whether retrying the same request may succeed. Corrupt rows, refused
    /// requests and missing memories come back the same every time.
    pub fn is_transient(&self) -> bool {
        matches!(self, Self::Unavailable { .. })
    }
}

/// One write. Puts are upserts by key, so applying a write twice is harmless.
#[derive(Debug, Clone, PartialEq)]
pub enum Write {
    PutMemory(Memory),
    /// Updates only the salience state of an existing memory (the cheap write
    /// an access event needs).
    PutSalience {
        user_id: String,
        memory_id: String,
        salience: SalienceState,
    },
    /// Changes only the status of an existing memory and the run that
    /// changed it (the write archiving, superseding or merging away needs:
    /// the text and vector stay as stored).
    PutStatus {
        user_id: String,
        memory_id: String,
        status: MemoryStatus,
        last_run_id: Option<String>,
    },
    /// Removes a memory and every link from or to it. Consolidation never
    /// deletes; only `engram undo` does, for memories a run created.
    DeleteMemory {
        user_id: String,
        memory_id: String,
    },
    PutLink(Link),
    DeleteLink {
        user_id: String,
        from_id: String,
        to_id: String,
        link_type: LinkType,
    },
    PutUserState(UserState),
    PutRunReport(RunReport),
    /// Removes every row of a user (memories, salience, hashes, links,
    /// state, run reports, journals, waiting-user entries) and keeps only
    /// the tombstone: the hash of the id and the latest erasure time.
    /// Writes of the same user later in the batch apply after it.
    EraseUser {
        user_id: String,
        erased_at: Millis,
    },
    /// The text-hash entry of a memory's old text (the memory was deleted
    /// or its text changed), where a store keeps one apart from the row.
    ForgetHash {
        user_id: String,
        memory_id: String,
        content_hash: String,
    },
}

/// The key a user's erasure tombstone is kept under: a hash, so the
/// tombstone does not hold the id it was asked to forget.
pub fn tombstone_key(user_id: &str) -> String {
    crate::text::sha256_hex(user_id.as_bytes())
}

/// Writes applied all together or not at all.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WriteBatch {
    pub writes: Vec<Write>,
}

impl Write {
    /// The user whose rows the write changes.
    pub fn user_id(&self) -> &str {
        match self {
            Write::PutMemory(m) => &m.user_id,
            Write::PutSalience { user_id, .. }
            | Write::PutStatus { user_id, .. }
            | Write::DeleteMemory { user_id, .. }
            | Write::DeleteLink { user_id, .. }
            | Write::EraseUser { user_id, .. }
            | Write::ForgetHash { user_id, .. } => user_id,
            Write::PutLink(l) => &l.user_id,
            Write::PutUserState(s) => &s.user_id,
            Write::PutRunReport(r) => &r.user_id,
        }
    }

    /// The write that turns the stored `before` into `after`: only the
    /// status when that (and the run that changed it) is all that differs,
    /// else the whole memory.
    pub fn memory_update(before: &Memory, after: &Memory) -> Write {
        let status_only = before.status != after.status
            && *before
                == Memory {
                    status: before.status,
                    last_run_id: before.last_run_id.clone(),
                    ..after.clone()
                };
        if status_only {
            Write::PutStatus {
                user_id: after.user_id.clone(),
                memory_id: after.id.clone(),
                status: after.status,
                last_run_id: after.last_run_id.clone(),
            }
        } else {
            Write::PutMemory(after.clone())
        }
    }
}

impl WriteBatch {
    pub fn push(&mut self, write: Write) {
        self.writes.push(write);
    }

    pub fn is_empty(&self) -> bool {
        self.writes.is_empty()
    }

    pub fn len(&self) -> usize {
        self.writes.len()
    }

    /// Whether the batch removes something a platform asked engram to
    /// forget (or that engram made and undid): stores then make sure no
    /// copy of it is left on disk beside the live rows.
    pub fn forgets(&self) -> bool {
        self.writes
            .iter()
            .any(|w| matches!(w, Write::EraseUser { .. } | Write::DeleteMemory { .. }))
    }
}

/// The state store. Implementations must make [`Store::commit`] atomic and
/// durable when it returns, and must return memories ordered by
/// `(created_at, id)` and links ordered by `(from_id, to_id, link_type)`.
pub trait Store: Send + Sync {
    fn commit(&self, batch: &WriteBatch) -> Result<(), StoreError>;

    /// Checks that the store answers (for readiness probes): cheap, reads
    /// no user data.
    fn ping(&self) -> Result<(), StoreError>;

    fn memory(&self, user_id: &str, memory_id: &str) -> Result<Option<Memory>, StoreError>;

    /// The embedding of some memory of the user whose content has this
    /// normalised hash, so the same text is never embedded twice.
    fn embedding_for_hash(
        &self,
        user_id: &str,
        content_hash: &str,
    ) -> Result<Option<Vec<f32>>, StoreError>;

    /// The user's memories with these ids (those that exist), in one read
    /// where the store can: a batch loads what its events touch this way.
    fn memories_by_id(&self, user_id: &str, ids: &[&str]) -> Result<Vec<Memory>, StoreError> {
        let mut found = Vec::with_capacity(ids.len());
        for id in ids {
            found.extend(self.memory(user_id, id)?);
        }
        Ok(found)
    }

    /// The salience of the user's memories with these ids (those that
    /// exist): all an access needs, without the rest of each memory.
    fn saliences_by_id(
        &self,
        user_id: &str,
        ids: &[&str],
    ) -> Result<Vec<(String, SalienceState)>, StoreError> {
        Ok(self
            .memories_by_id(user_id, ids)?
            .into_iter()
            .map(|m| (m.id, m.salience))
            .collect())
    }

    /// Every memory of a user, whatever its status.
    fn memories(&self, user_id: &str) -> Result<Vec<Memory>, StoreError>;

    /// Links from or to a memory.
    fn links_of(&self, user_id: &str, memory_id: &str) -> Result<Vec<Link>, StoreError>;

    /// Every link of a user.
    fn links(&self, user_id: &str) -> Result<Vec<Link>, StoreError>;

    fn user_state(&self, user_id: &str) -> Result<Option<UserState>, StoreError>;

    /// Every user with stored state, sorted.
    fn users(&self) -> Result<Vec<String>, StoreError>;

    /// The users fed by any of `sources` (keys of their applied offsets,
    /// `topic/partition`) whose stored state is waiting
    /// ([`UserState::is_waiting`]), sorted: what a worker picks up when it
    /// is given a partition, without reading every user in the store. It
    /// may hold a few more (a store upgraded from before the index counts
    /// its old users as waiting); callers check the state they load.
    fn waiting_users(&self, sources: &[String]) -> Result<Vec<String>, StoreError>;

    fn run_report(&self, user_id: &str, run_id: &str) -> Result<Option<RunReport>, StoreError>;

    /// A run report by run id alone (run ids are unique across users).
    fn find_run_report(&self, run_id: &str) -> Result<Option<RunReport>, StoreError>;

    /// A user's run reports, oldest first.
    fn run_reports(&self, user_id: &str) -> Result<Vec<RunReport>, StoreError>;

    /// When the user was erased, if ever (the latest erasure): their events
    /// from at or before it are refused.
    fn erased_at(&self, user_id: &str) -> Result<Option<Millis>, StoreError>;
}

/// An embedding as both stores keep it: little-endian f32s, the same bytes
/// in either, so both give back exactly the vectors they were given.
fn embedding_bytes(embedding: &Option<Vec<f32>>) -> Option<Vec<u8>> {
    embedding
        .as_ref()
        .map(|values| values.iter().flat_map(|x| x.to_le_bytes()).collect())
}

/// The vector of [`embedding_bytes`]; an error names what is wrong.
fn embedding_from_bytes(bytes: &[u8]) -> Result<Vec<f32>, &'static str> {
    if !bytes.len().is_multiple_of(4) {
        return Err("length is not a multiple of 4");
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

/// A deterministic dump of everything stored, user by user: two stores with
/// the same content dump to the same JSON.
pub fn dump(store: &dyn Store) -> Result<serde_json::Value, StoreError> {
    let mut users = Vec::new();
    for user_id in store.users()? {
        users.push(json!({
            "user_id": user_id,
            "state": store.user_state(&user_id)?,
            "memories": store.memories(&user_id)?,
            "links": store.links(&user_id)?,
            "runs": store.run_reports(&user_id)?,
        }));
    }
    Ok(json!({ "users": users }))
}
