//! How a [`WriteBatch`] becomes CQL batches: pure, so it is tested without a
//! cluster.
//!
//! - **One logged batch per user.** A flush touches many users; each user's
//!   rows share the partition key `user_id`, and a logged batch makes them
//!   all-or-nothing. Users are independent: each carries its own
//!   applied-offset watermark, so a flush that failed for one user after
//!   another succeeded replays correctly.
//! - **Order by timestamps.** All statements of a CQL batch would get the same
//!   write timestamp, and at equal timestamps a delete beats an insert
//!   whatever their order. Each write therefore gets its own timestamp, in
//!   batch order, so the batch means what the [`WriteBatch`] says.
//! - **Big flushes.** A user's rows above `max_batch_bytes` would be rejected
//!   by the cluster (`batch_size_fail_threshold_in_kb`). Then the rows of
//!   memories that did not exist before go first, in as many batches as
//!   needed: a memory is read as existing only with its salience row, so
//!   they stay invisible until the rest lands, and a crash in between
//!   replays into the same state.
//! - **Big visible changes.** Everything else (salience rows, updates of
//!   existing memories, links, reports, the user state with its watermark)
//!   is one batch when it fits. When it does not (a cycle that archives
//!   thousands of memories), it is cut into batches that each fit, with the
//!   user state and run report in the last, and journaled first
//!   ([`encode_journal`]): the store writes the batches' rows to
//!   `commit_journal`, seals the journal on the user's state row, applies
//!   the batches and clears the seal. A crash after the seal is rolled
//!   forward by the next read of the user's state, with the same write
//!   timestamps, so the change lands whole or not at all; the lists it
//!   rewrites are frozen, so applying a row twice cannot duplicate them.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::{Deserialize, Serialize};

use super::super::{StoreError, Write, WriteBatch};
use crate::model::{Link, LinkType, Memory, MemoryStatus, RunReport, UserState};
use crate::salience::SalienceState;

/// One row operation, in the order and with the timestamp it must apply.
#[derive(Debug, Clone, PartialEq)]
pub struct Op<'a> {
    /// Write time in microseconds (`USING TIMESTAMP`).
    pub timestamp: i64,
    pub row: Row<'a>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Row<'a> {
    /// The memory without its salience.
    Memory(&'a Memory),
    Salience {
        user_id: &'a str,
        memory_id: &'a str,
        salience: &'a SalienceState,
    },
    ContentHash(&'a Memory),
    /// A memory's status and the run that set it; the rest of its row stays.
    Status {
        user_id: &'a str,
        memory_id: &'a str,
        status: MemoryStatus,
        last_run_id: Option<&'a str>,
    },
    DeleteMemory {
        user_id: &'a str,
        memory_id: &'a str,
    },
    /// Written to `links` and `links_by_target`.
    Link(&'a Link),
    /// Removed from both link tables.
    DeleteLink {
        user_id: &'a str,
        from_id: String,
        to_id: String,
        link_type: LinkType,
    },
    UserState(&'a UserState),
    /// Written to `run_reports` and `run_reports_by_id`.
    RunReport(&'a RunReport),
    /// Every partition of the user in every table, the rows of other
    /// partitions that name them (their stored input sources' waiting
    /// entries, their runs by id), and the tombstone.
    EraseUser {
        user_id: &'a str,
        erased_at: i64,
        sources: Vec<String>,
        run_ids: Vec<String>,
    },
    /// One `memory_hashes` entry.
    ForgetHash {
        user_id: &'a str,
        memory_id: &'a str,
        content_hash: &'a str,
    },
}

impl Row<'_> {
    /// Roughly the bytes this row adds to a batch.
    pub(super) fn size(&self) -> usize {
        const OVERHEAD: usize = 64;
        OVERHEAD
            + match self {
                Row::Memory(m) => {
                    m.content.len()
                        + m.embedding.as_ref().map_or(0, |e| e.len() * 4)
                        + m.tags
                            .iter()
                            .chain(&m.merged_from)
                            .chain(&m.derived_from)
                            .map(|t| t.len() + 4)
                            .sum::<usize>()
                        + m.id.len()
                        + m.user_id.len()
                        + 64
                }
                Row::Salience { salience, .. } => 40 + salience.recent().len() * 8,
                Row::ContentHash(m) => m.content_hash.len() + m.id.len(),
                Row::Status {
                    memory_id,
                    last_run_id,
                    ..
                } => memory_id.len() + 16 + last_run_id.map_or(0, str::len),
                Row::DeleteMemory { .. } | Row::DeleteLink { .. } => 0,
                Row::EraseUser {
                    sources, run_ids, ..
                } => {
                    256 + sources
                        .iter()
                        .chain(run_ids)
                        .map(|id| id.len() + 32)
                        .sum::<usize>()
                }
                Row::ForgetHash { content_hash, .. } => content_hash.len(),
                Row::Link(l) => 2 * (l.reason.len() + l.from_id.len() + l.to_id.len() + 48),
                // Every byte of the row: the bookkeeping column holds the
                // parked reads, which can be most of it. The waiting-users
                // index rows go in the same batch, one per source.
                Row::UserState(s) => {
                    s.applied_offsets
                        .keys()
                        .map(|k| 2 * (k.len() + 12) + s.user_id.len() + 16)
                        .sum::<usize>()
                        + super::super::bookkeeping_json(s).len()
                        + s.last_run_id.as_ref().map_or(0, String::len)
                        + s.user_id.len()
                        + 256
                }
                Row::RunReport(r) => r.report.to_string().len() + 2 * r.run_id.len(),
            }
    }
}

/// The CQL batches of one user's writes, to run in order.
#[derive(Debug, Clone, PartialEq)]
pub struct UserCommit<'a> {
    pub user_id: &'a str,
    /// Rows of new memories, invisible until `last` lands (big flushes only).
    pub early: Vec<Vec<Op<'a>>>,
    /// Every visible row, in batches of at most `max_batch_bytes` (a row
    /// bigger than that alone), the user state and run report last. More
    /// than one batch: they are journaled before they are applied.
    pub last: Vec<Vec<Op<'a>>>,
}

impl UserCommit<'_> {
    /// Whether `last` needs the journal to land whole.
    pub fn is_journaled(&self) -> bool {
        self.last.len() > 1
    }
}

/// What the plan needs to know from the store before it can be made.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Needs {
    /// Memories whose existence decides the plan, per user.
    pub existence: BTreeMap<String, Vec<String>>,
    /// Memories being deleted, whose stored links must go too.
    pub links_of: Vec<(String, String)>,
    /// Users being erased, whose rows in other partitions must go too.
    pub erased: Vec<String>,
}

/// What the store answered.
#[derive(Debug, Default)]
pub struct Facts {
    /// `(user_id, memory_id)` of the memories asked about that exist.
    pub existing: HashSet<(String, String)>,
    /// Stored links from or to each memory being deleted.
    pub links_of: HashMap<(String, String), Vec<Link>>,
    /// Per erased user: the input sources of its stored state and its
    /// stored run ids.
    pub erased: HashMap<String, (Vec<String>, Vec<String>)>,
}

/// The batch's writes by user (in first-appearance order), each with its
/// index in the batch.
fn by_user(batch: &WriteBatch) -> Vec<(&str, Vec<(usize, &Write)>)> {
    let mut users: Vec<(&str, Vec<(usize, &Write)>)> = Vec::new();
    let mut position: HashMap<&str, usize> = HashMap::new();
    for (index, write) in batch.writes.iter().enumerate() {
        let user = write.user_id();
        let slot = *position.entry(user).or_insert_with(|| {
            users.push((user, Vec::new()));
            users.len() - 1
        });
        users[slot].1.push((index, write));
    }
    users
}

/// Rough size of a user's writes, deciding whether they need splitting.
fn estimated_size(writes: &[(usize, &Write)]) -> usize {
    writes
        .iter()
        .map(|(_, write)| match write {
            Write::PutMemory(m) => {
                Row::Memory(m).size()
                    + Row::ContentHash(m).size()
                    + 64
                    + m.salience.recent().len() * 8
            }
            Write::PutSalience { salience, .. } => 104 + salience.recent().len() * 8,
            Write::PutStatus { .. } => 128,
            Write::PutLink(l) => Row::Link(l).size(),
            Write::PutUserState(s) => Row::UserState(s).size(),
            Write::PutRunReport(r) => Row::RunReport(r).size(),
            Write::DeleteMemory { .. } | Write::DeleteLink { .. } => 64,
            Write::EraseUser { .. } => 1024,
            Write::ForgetHash { content_hash, .. } => 64 + content_hash.len(),
        })
        .sum()
}

/// The reads a plan needs: existence of memories whose salience is written
/// without the memory (an error if it is missing), existence of new
/// memories in flushes too big for one batch, and links of deleted memories.
pub fn needs(batch: &WriteBatch, max_batch_bytes: usize) -> Needs {
    let mut needs = Needs::default();
    for (user, writes) in by_user(batch) {
        let split = estimated_size(&writes) > max_batch_bytes;
        let mut put = HashSet::new();
        let mut ask = Vec::new();
        for (_, write) in &writes {
            match write {
                Write::PutMemory(m) => {
                    if split {
                        ask.push(m.id.clone());
                    }
                    put.insert(m.id.as_str());
                }
                Write::PutSalience { memory_id, .. } | Write::PutStatus { memory_id, .. }
                    if !put.contains(memory_id.as_str()) =>
                {
                    ask.push(memory_id.clone());
                }
                Write::DeleteMemory { memory_id, .. } => {
                    needs.links_of.push((user.to_owned(), memory_id.clone()));
                }
                Write::EraseUser { .. } => needs.erased.push(user.to_owned()),
                _ => {}
            }
        }
        ask.sort();
        ask.dedup();
        if !ask.is_empty() {
            needs.existence.insert(user.to_owned(), ask);
        }
    }
    needs
}

/// Plans the batch. Timestamps are `first_timestamp + index of the write`,
/// so the caller reserves `batch.len()` timestamps.
pub fn plan<'a>(
    batch: &'a WriteBatch,
    facts: &Facts,
    first_timestamp: i64,
    max_batch_bytes: usize,
) -> Result<Vec<UserCommit<'a>>, StoreError> {
    let mut commits = Vec::new();
    for (user_id, writes) in by_user(batch) {
        let split = estimated_size(&writes) > max_batch_bytes;
        let existed = |id: &str| {
            facts
                .existing
                .contains(&(user_id.to_owned(), id.to_owned()))
        };
        // What this batch has done to each memory so far: true once put,
        // false once deleted.
        let mut exists_now: HashMap<&str, bool> = HashMap::new();
        let deleted_here: HashSet<&str> = writes
            .iter()
            .filter_map(|(_, w)| match w {
                Write::DeleteMemory { memory_id, .. } => Some(memory_id.as_str()),
                _ => None,
            })
            .collect();
        // Links put earlier in this batch, for deletes of their memories.
        let mut links_put: Vec<&'a Link> = Vec::new();
        // Once the user is erased in this batch, nothing stored before exists.
        let mut erased_here = false;
        let mut early = Vec::new();
        let mut last = Vec::new();
        for &(index, write) in &writes {
            let must_exist = |memory_id: &String| {
                let exists = exists_now
                    .get(memory_id.as_str())
                    .copied()
                    .unwrap_or_else(|| !erased_here && existed(memory_id));
                if exists {
                    Ok(())
                } else {
                    Err(StoreError::MissingMemory {
                        user_id: user_id.to_owned(),
                        memory_id: memory_id.clone(),
                    })
                }
            };
            let timestamp = first_timestamp + index as i64;
            let op = |row| Op { timestamp, row };
            match write {
                Write::PutMemory(m) => {
                    let hidden_until_last =
                        split && !existed(&m.id) && !deleted_here.contains(m.id.as_str());
                    let rows = if hidden_until_last {
                        &mut early
                    } else {
                        &mut last
                    };
                    rows.push(op(Row::Memory(m)));
                    rows.push(op(Row::ContentHash(m)));
                    last.push(op(Row::Salience {
                        user_id,
                        memory_id: &m.id,
                        salience: &m.salience,
                    }));
                    exists_now.insert(&m.id, true);
                }
                Write::PutSalience {
                    memory_id,
                    salience,
                    ..
                } => {
                    must_exist(memory_id)?;
                    last.push(op(Row::Salience {
                        user_id,
                        memory_id,
                        salience,
                    }));
                }
                Write::PutStatus {
                    memory_id,
                    status,
                    last_run_id,
                    ..
                } => {
                    // An update of a missing row would create a row with
                    // a status and nothing else.
                    must_exist(memory_id)?;
                    last.push(op(Row::Status {
                        user_id,
                        memory_id,
                        status: *status,
                        last_run_id: last_run_id.as_deref(),
                    }));
                }
                Write::DeleteMemory { memory_id, .. } => {
                    let stored = facts
                        .links_of
                        .get(&(user_id.to_owned(), memory_id.clone()))
                        .into_iter()
                        .flatten();
                    let pending = links_put.iter().copied();
                    let mut doomed: Vec<(&str, &str, LinkType)> = stored
                        .chain(pending)
                        .filter(|l| &l.from_id == memory_id || &l.to_id == memory_id)
                        .map(|l| (l.from_id.as_str(), l.to_id.as_str(), l.link_type))
                        .collect();
                    doomed.sort();
                    doomed.dedup();
                    for (from_id, to_id, link_type) in doomed {
                        last.push(op(Row::DeleteLink {
                            user_id,
                            from_id: from_id.to_owned(),
                            to_id: to_id.to_owned(),
                            link_type,
                        }));
                    }
                    last.push(op(Row::DeleteMemory { user_id, memory_id }));
                    exists_now.insert(memory_id, false);
                }
                Write::PutLink(link) => {
                    links_put.push(link);
                    last.push(op(Row::Link(link)));
                }
                Write::DeleteLink {
                    from_id,
                    to_id,
                    link_type,
                    ..
                } => last.push(op(Row::DeleteLink {
                    user_id,
                    from_id: from_id.clone(),
                    to_id: to_id.clone(),
                    link_type: *link_type,
                })),
                Write::PutUserState(state) => last.push(op(Row::UserState(state))),
                Write::PutRunReport(report) => last.push(op(Row::RunReport(report))),
                Write::EraseUser { erased_at, .. } => {
                    let (sources, run_ids) = facts.erased.get(user_id).cloned().unwrap_or_default();
                    last.push(op(Row::EraseUser {
                        user_id,
                        erased_at: *erased_at,
                        sources,
                        run_ids,
                    }));
                    // Nothing of the user exists after it, whatever came before.
                    exists_now.clear();
                    links_put.clear();
                    erased_here = true;
                }
                Write::ForgetHash {
                    memory_id,
                    content_hash,
                    ..
                } => last.push(op(Row::ForgetHash {
                    user_id,
                    memory_id,
                    content_hash,
                })),
            }
        }
        // The visible effects (watermark, pending runs, the run's report)
        // go last: a reader sees them only once everything they describe
        // is in. Timestamps, not positions, decide what a row overwrites.
        let (effects, mut rest): (Vec<Op<'a>>, Vec<Op<'a>>) = last
            .into_iter()
            .partition(|op| matches!(op.row, Row::UserState(_) | Row::RunReport(_)));
        rest.extend(effects);
        commits.push(UserCommit {
            user_id,
            early: chunks(early, max_batch_bytes),
            last: chunks(rest, max_batch_bytes),
        });
    }
    Ok(commits)
}

/// A row operation as the journal stores it: owned, so a later process can
/// read it back and apply it with its original timestamp.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JournalOp {
    pub timestamp: i64,
    pub row: JournalRow,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum JournalRow {
    Memory(Memory),
    Salience {
        user_id: String,
        memory_id: String,
        salience: SalienceState,
    },
    /// The memory without its vector: the hash row needs only ids and hash.
    ContentHash(Memory),
    Status {
        user_id: String,
        memory_id: String,
        status: MemoryStatus,
        last_run_id: Option<String>,
    },
    DeleteMemory {
        user_id: String,
        memory_id: String,
    },
    Link(Link),
    DeleteLink {
        user_id: String,
        from_id: String,
        to_id: String,
        link_type: LinkType,
    },
    UserState(UserState),
    RunReport(RunReport),
    EraseUser {
        user_id: String,
        erased_at: i64,
        sources: Vec<String>,
        run_ids: Vec<String>,
    },
    ForgetHash {
        user_id: String,
        memory_id: String,
        content_hash: String,
    },
}

impl JournalOp {
    fn of(op: &Op<'_>) -> Self {
        let row = match &op.row {
            Row::Memory(m) => JournalRow::Memory((*m).clone()),
            Row::Salience {
                user_id,
                memory_id,
                salience,
            } => JournalRow::Salience {
                user_id: (*user_id).to_owned(),
                memory_id: (*memory_id).to_owned(),
                salience: (*salience).clone(),
            },
            Row::ContentHash(m) => JournalRow::ContentHash(Memory {
                embedding: None,
                ..(*m).clone()
            }),
            Row::Status {
                user_id,
                memory_id,
                status,
                last_run_id,
            } => JournalRow::Status {
                user_id: (*user_id).to_owned(),
                memory_id: (*memory_id).to_owned(),
                status: *status,
                last_run_id: last_run_id.map(str::to_owned),
            },
            Row::DeleteMemory { user_id, memory_id } => JournalRow::DeleteMemory {
                user_id: (*user_id).to_owned(),
                memory_id: (*memory_id).to_owned(),
            },
            Row::Link(l) => JournalRow::Link((*l).clone()),
            Row::DeleteLink {
                user_id,
                from_id,
                to_id,
                link_type,
            } => JournalRow::DeleteLink {
                user_id: (*user_id).to_owned(),
                from_id: from_id.clone(),
                to_id: to_id.clone(),
                link_type: *link_type,
            },
            Row::UserState(s) => JournalRow::UserState((*s).clone()),
            Row::RunReport(r) => JournalRow::RunReport((*r).clone()),
            Row::EraseUser {
                user_id,
                erased_at,
                sources,
                run_ids,
            } => JournalRow::EraseUser {
                user_id: (*user_id).to_owned(),
                erased_at: *erased_at,
                sources: sources.clone(),
                run_ids: run_ids.clone(),
            },
            Row::ForgetHash {
                user_id,
                memory_id,
                content_hash,
            } => JournalRow::ForgetHash {
                user_id: (*user_id).to_owned(),
                memory_id: (*memory_id).to_owned(),
                content_hash: (*content_hash).to_owned(),
            },
        };
        Self {
            timestamp: op.timestamp,
            row,
        }
    }

    /// The operation to apply, borrowing from the journal entry.
    pub fn op(&self) -> Op<'_> {
        let row = match &self.row {
            JournalRow::Memory(m) => Row::Memory(m),
            JournalRow::Salience {
                user_id,
                memory_id,
                salience,
            } => Row::Salience {
                user_id,
                memory_id,
                salience,
            },
            JournalRow::ContentHash(m) => Row::ContentHash(m),
            JournalRow::Status {
                user_id,
                memory_id,
                status,
                last_run_id,
            } => Row::Status {
                user_id,
                memory_id,
                status: *status,
                last_run_id: last_run_id.as_deref(),
            },
            JournalRow::DeleteMemory { user_id, memory_id } => {
                Row::DeleteMemory { user_id, memory_id }
            }
            JournalRow::Link(l) => Row::Link(l),
            JournalRow::DeleteLink {
                user_id,
                from_id,
                to_id,
                link_type,
            } => Row::DeleteLink {
                user_id,
                from_id: from_id.clone(),
                to_id: to_id.clone(),
                link_type: *link_type,
            },
            JournalRow::UserState(s) => Row::UserState(s),
            JournalRow::RunReport(r) => Row::RunReport(r),
            JournalRow::EraseUser {
                user_id,
                erased_at,
                sources,
                run_ids,
            } => Row::EraseUser {
                user_id,
                erased_at: *erased_at,
                sources: sources.clone(),
                run_ids: run_ids.clone(),
            },
            JournalRow::ForgetHash {
                user_id,
                memory_id,
                content_hash,
            } => Row::ForgetHash {
                user_id,
                memory_id,
                content_hash,
            },
        };
        Op {
            timestamp: self.timestamp,
            row,
        }
    }
}

/// The journal of a commit's visible batches: one entry per batch, to be
/// stored as one row each and applied in order.
pub fn encode_journal(batches: &[Vec<Op<'_>>]) -> Result<Vec<Vec<u8>>, StoreError> {
    batches
        .iter()
        .map(|batch| {
            let entry: Vec<JournalOp> = batch.iter().map(JournalOp::of).collect();
            serde_json::to_vec(&entry).map_err(|e| StoreError::refused("encoding the journal", e))
        })
        .collect()
}

/// One journal row back as the batch it stood for.
pub fn decode_journal(bytes: &[u8]) -> Result<Vec<JournalOp>, StoreError> {
    serde_json::from_slice(bytes).map_err(|e| super::corrupt("commit_journal.ops", e))
}

/// Splits rows into batches of at most `max_bytes` (a row bigger than that
/// goes alone).
fn chunks(ops: Vec<Op<'_>>, max_bytes: usize) -> Vec<Vec<Op<'_>>> {
    let mut batches: Vec<Vec<Op<'_>>> = Vec::new();
    let mut size = 0;
    for op in ops {
        let row_size = op.row.size();
        match batches.last_mut() {
            Some(batch) if size + row_size <= max_bytes => batch.push(op),
            _ => {
                batches.push(vec![op]);
                size = 0;
            }
        }
        size += row_size;
    }
    batches
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{MemoryKind, MemoryStatus};

    fn memory(user: &str, id: &str, content_len: usize) -> Memory {
        Memory {
            user_id: user.into(),
            id: id.into(),
            kind: MemoryKind::Episodic,
            category: None,
            tags: vec![],
            content: "x".repeat(content_len),
            importance: 0.5,
            source: None,
            content_hash: format!("h-{id}"),
            embedding: Some(vec![0.1; 384]),
            status: MemoryStatus::Active,
            salience: SalienceState::new(1_000),
            merged_from: vec![],
            derived_from: vec![],
            last_run_id: None,
            updated_at: None,
        }
    }

    fn link(user: &str, from: &str, to: &str) -> Link {
        Link {
            user_id: user.into(),
            from_id: from.into(),
            to_id: to.into(),
            link_type: LinkType::Related,
            confidence: 0.9,
            reason: "test".into(),
            created_at: 5,
            run_id: None,
        }
    }

    fn state(user: &str) -> UserState {
        UserState {
            user_id: user.into(),
            applied_offsets: [("t/0".to_owned(), 7)].into(),
            new_since_cycle: 1,
            last_cycle_at: None,
            last_run_id: None,
            duplicate_candidates: 0,
            cycle: Default::default(),
            parked_reads: Vec::new(),
            erased_at: None,
        }
    }

    fn batch(writes: Vec<Write>) -> WriteBatch {
        WriteBatch { writes }
    }

    #[test]
    fn a_status_change_is_a_small_row_of_a_memory_that_exists() {
        let status = |id: &str| Write::PutStatus {
            user_id: "u1".into(),
            memory_id: id.into(),
            status: crate::model::MemoryStatus::Archived,
            last_run_id: Some("r1".into()),
        };
        let b = batch(vec![status("old")]);
        let needs = needs(&b, 1 << 20);
        assert_eq!(needs.existence["u1"], ["old"]);
        let missing = plan(&b, &Facts::default(), 1, 1 << 20).unwrap_err();
        assert!(
            matches!(missing, StoreError::MissingMemory { .. }),
            "{missing}"
        );
        let facts = Facts {
            existing: [("u1".to_owned(), "old".to_owned())].into(),
            ..Facts::default()
        };
        let commits = plan(&b, &facts, 1, 1 << 20).unwrap();
        let row = &commits[0].last[0][0].row;
        assert!(
            matches!(
                row,
                Row::Status {
                    memory_id: "old",
                    ..
                }
            ),
            "{row:?}"
        );
        // The memory's own row is its text and vector: 5,000 of them were
        // a 10 MB batch; 5,000 status rows are a few hundred KB.
        let full = Row::Memory(&memory("u1", "old", 200)).size();
        assert!(row.size() * 10 < full, "{} vs {full}", row.size());
        // It survives the journal.
        let journal = encode_journal(&commits[0].last).unwrap();
        let back = decode_journal(&journal[0]).unwrap();
        assert_eq!(back[0].op(), commits[0].last[0][0]);
    }

    #[test]
    fn one_batch_per_user_with_timestamps_in_write_order() {
        let b = batch(vec![
            Write::PutMemory(memory("u1", "m1", 10)),
            Write::PutMemory(memory("u2", "m9", 10)),
            Write::PutLink(link("u1", "m1", "m0")),
            Write::PutUserState(state("u2")),
            Write::PutUserState(state("u1")),
        ]);
        let needs = needs(&b, 1 << 20);
        assert!(needs.existence.is_empty() && needs.links_of.is_empty());
        let commits = plan(&b, &Facts::default(), 100, 1 << 20).unwrap();
        assert_eq!(commits.len(), 2);
        assert_eq!(commits[0].user_id, "u1");
        assert!(commits[0].early.is_empty());
        assert_eq!(commits[0].last.len(), 1, "one batch");
        let stamps: Vec<i64> = visible(&commits[0]).map(|op| op.timestamp).collect();
        assert_eq!(stamps, vec![100, 100, 100, 102, 104]);
        let last = visible(&commits[1]).last().unwrap();
        assert!(matches!(last.row, Row::UserState(_)));
        assert_eq!(last.timestamp, 103);
    }

    #[test]
    fn salience_of_a_memory_neither_stored_nor_put_is_an_error() {
        let b = batch(vec![Write::PutSalience {
            user_id: "u1".into(),
            memory_id: "ghost".into(),
            salience: SalienceState::new(1),
        }]);
        assert_eq!(needs(&b, 1 << 20).existence["u1"], vec!["ghost".to_owned()]);
        let error = plan(&b, &Facts::default(), 0, 1 << 20).unwrap_err();
        assert!(matches!(error, StoreError::MissingMemory { .. }), "{error}");

        let mut facts = Facts::default();
        facts.existing.insert(("u1".into(), "ghost".into()));
        assert!(plan(&b, &facts, 0, 1 << 20).is_ok());
    }

    #[test]
    fn salience_after_a_delete_in_the_same_batch_is_an_error() {
        let b = batch(vec![
            Write::PutMemory(memory("u1", "m1", 1)),
            Write::DeleteMemory {
                user_id: "u1".into(),
                memory_id: "m1".into(),
            },
            Write::PutSalience {
                user_id: "u1".into(),
                memory_id: "m1".into(),
                salience: SalienceState::new(1),
            },
        ]);
        assert!(plan(&b, &Facts::default(), 0, 1 << 20).is_err());
    }

    #[test]
    fn deleting_a_memory_deletes_its_stored_and_pending_links_both_ways() {
        let b = batch(vec![
            Write::PutLink(link("u1", "m2", "m1")),
            Write::DeleteMemory {
                user_id: "u1".into(),
                memory_id: "m1".into(),
            },
            Write::PutLink(link("u1", "m1", "m3")),
        ]);
        assert_eq!(
            needs(&b, 1 << 20).links_of,
            vec![("u1".into(), "m1".into())]
        );
        let mut facts = Facts::default();
        facts.links_of.insert(
            ("u1".into(), "m1".into()),
            vec![link("u1", "m1", "m5"), link("u1", "m2", "m1")],
        );
        let commits = plan(&b, &facts, 10, 1 << 20).unwrap();
        let rows: Vec<String> = visible(&commits[0])
            .map(|op| match &op.row {
                Row::Link(l) => format!("{} put {}>{}", op.timestamp, l.from_id, l.to_id),
                Row::DeleteLink { from_id, to_id, .. } => {
                    format!("{} del {from_id}>{to_id}", op.timestamp)
                }
                Row::DeleteMemory { memory_id, .. } => format!("{} del {memory_id}", op.timestamp),
                other => format!("{other:?}"),
            })
            .collect();
        // The link put after the delete has a later timestamp, so it stays.
        assert_eq!(
            rows,
            vec![
                "10 put m2>m1",
                "11 del m1>m5",
                "11 del m2>m1",
                "11 del m1",
                "12 put m1>m3"
            ]
        );
    }

    #[test]
    fn a_big_flush_writes_new_memories_first_and_everything_visible_last() {
        let mut writes: Vec<Write> = (0..40)
            .map(|i| Write::PutMemory(memory("u1", &format!("new{i:02}"), 2_000)))
            .collect();
        writes.push(Write::PutMemory(memory("u1", "old", 2_000)));
        writes.push(Write::PutSalience {
            user_id: "u1".into(),
            memory_id: "old2".into(),
            salience: SalienceState::new(5),
        });
        writes.push(Write::PutUserState(state("u1")));
        let b = batch(writes);
        let max = 20_000;
        let needs = needs(&b, max);
        assert_eq!(needs.existence["u1"].len(), 42, "asks about every memory");
        let mut facts = Facts::default();
        facts.existing.insert(("u1".into(), "old".into()));
        facts.existing.insert(("u1".into(), "old2".into()));
        let commits = plan(&b, &facts, 0, max).unwrap();
        let commit = &commits[0];
        assert!(
            commit.early.len() > 1,
            "new rows split into several batches"
        );
        for early in &commit.early {
            assert!(early.iter().map(|op| op.row.size()).sum::<usize>() <= max);
            for op in early {
                match op.row {
                    Row::Memory(m) | Row::ContentHash(m) => assert!(m.id.starts_with("new")),
                    ref other => panic!("visible row {other:?} in an early batch"),
                }
            }
        }
        let early_rows: usize = commit.early.iter().map(Vec::len).sum();
        assert_eq!(early_rows, 80);
        // Last: 41 salience rows + the update of `old` (2 rows) + salience
        // of `old2` + the user state.
        assert_eq!(visible(commit).count(), 41 + 2 + 1 + 1);
        assert!(matches!(
            visible(commit).last().unwrap().row,
            Row::UserState(_)
        ));
        assert!(visible(commit).any(|op| op.row == Row::Memory(&memories_of(&b)[40])));
    }

    fn memories_of(b: &WriteBatch) -> Vec<Memory> {
        b.writes
            .iter()
            .filter_map(|w| match w {
                Write::PutMemory(m) => Some(m.clone()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_small_flush_is_one_batch_whatever_exists() {
        let b = batch(vec![
            Write::PutMemory(memory("u1", "a", 100)),
            Write::PutUserState(state("u1")),
        ]);
        assert!(needs(&b, 1 << 20).existence.is_empty());
        let commits = plan(&b, &Facts::default(), 0, 1 << 20).unwrap();
        assert!(commits[0].early.is_empty());
        assert_eq!(visible(&commits[0]).count(), 4);
        assert!(!commits[0].is_journaled());
    }

    fn visible<'c>(commit: &'c UserCommit<'_>) -> impl DoubleEndedIterator<Item = &'c Op<'c>> {
        commit.last.iter().flatten()
    }

    fn report(user: &str, run: &str, payload_bytes: usize) -> RunReport {
        RunReport {
            user_id: user.into(),
            run_id: run.into(),
            started_at: 9,
            report: serde_json::json!({ "changes": "c".repeat(payload_bytes) }),
        }
    }

    /// A cycle that archives 5,000 stored memories: every row is an update
    /// of an existing memory, which no split of new memories can shrink.
    fn archive_everything(count: usize) -> WriteBatch {
        let mut writes: Vec<Write> = (0..count)
            .map(|i| {
                let mut m = memory("u1", &format!("m{i:05}"), 200);
                m.status = MemoryStatus::Archived;
                m.merged_from = vec![format!("x{i}")];
                Write::PutMemory(m)
            })
            .collect();
        writes.push(Write::PutLink(link("u1", "m00001", "m00002")));
        writes.push(Write::PutRunReport(report("u1", "run-1", 300_000)));
        writes.push(Write::PutUserState(state("u1")));
        batch(writes)
    }

    #[test]
    fn a_big_change_to_stored_memories_is_cut_into_bounded_batches_with_its_effects_last() {
        let b = archive_everything(5_000);
        let max = 64 * 1024;
        let mut facts = Facts::default();
        for i in 0..5_000 {
            facts.existing.insert(("u1".into(), format!("m{i:05}")));
        }
        let commits = plan(&b, &facts, 1, max).unwrap();
        let commit = &commits[0];
        assert!(commit.early.is_empty(), "nothing here is new");
        assert!(commit.is_journaled());
        assert!(commit.last.len() > 100, "{} batches", commit.last.len());
        for batch in &commit.last {
            let size: usize = batch.iter().map(|op| op.row.size()).sum();
            assert!(
                size <= max || batch.len() == 1,
                "a batch of {} rows is {size} bytes",
                batch.len()
            );
        }
        // 5,000 memories (memory, hash, salience), a link, the report, the state.
        assert_eq!(visible(commit).count(), 3 * 5_000 + 3);
        let tail: Vec<&Row> = visible(commit).rev().take(2).map(|op| &op.row).collect();
        assert!(matches!(tail[0], Row::UserState(_)), "{tail:?}");
        assert!(matches!(tail[1], Row::RunReport(_)), "{tail:?}");
        // Every write keeps its own timestamp, so the order of batches
        // cannot change what the rows mean.
        let mut stamps: Vec<i64> = visible(commit)
            .filter(|op| matches!(op.row, Row::Memory(_)))
            .map(|op| op.timestamp)
            .collect();
        stamps.dedup();
        assert_eq!(stamps, (1..=5_000).collect::<Vec<i64>>());
    }

    #[test]
    fn the_journal_gives_back_every_batch_exactly() {
        let b = archive_everything(300);
        let mut facts = Facts::default();
        for i in 0..300 {
            facts.existing.insert(("u1".into(), format!("m{i:05}")));
        }
        let commits = plan(&b, &facts, 7, 32 * 1024).unwrap();
        let commit = &commits[0];
        assert!(commit.is_journaled());
        let journal = encode_journal(&commit.last).unwrap();
        assert_eq!(journal.len(), commit.last.len());
        for (bytes, batch) in journal.iter().zip(&commit.last) {
            let entries = decode_journal(bytes).unwrap();
            let ops: Vec<Op<'_>> = entries.iter().map(JournalOp::op).collect();
            assert_eq!(ops.len(), batch.len());
            for (got, want) in ops.iter().zip(batch) {
                assert_eq!(got.timestamp, want.timestamp);
                match (&got.row, &want.row) {
                    // The hash row is journaled without the vector it does not write.
                    (Row::ContentHash(g), Row::ContentHash(w)) => {
                        assert_eq!((&g.id, &g.content_hash), (&w.id, &w.content_hash));
                        assert!(g.embedding.is_none());
                    }
                    (g, w) => assert_eq!(g, w),
                }
            }
        }
        assert!(decode_journal(b"not json").is_err());
    }
}
