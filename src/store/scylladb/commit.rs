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
//!   needed, and everything else (all salience rows, updates, links, reports,
//!   the user state with its watermark) goes last, in one batch. A memory is
//!   read as existing only with its salience row, so until the last batch
//!   lands the earlier rows are invisible, and a crash in between replays
//!   into the same state.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::super::{StoreError, Write, WriteBatch};
use crate::model::{Link, LinkType, Memory, RunReport, UserState};
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
}

impl Row<'_> {
    /// Roughly the bytes this row adds to a batch.
    fn size(&self) -> usize {
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
                Row::DeleteMemory { .. } | Row::DeleteLink { .. } => 0,
                Row::Link(l) => 2 * (l.reason.len() + l.from_id.len() + l.to_id.len() + 48),
                Row::UserState(s) => {
                    s.applied_offsets
                        .keys()
                        .map(|k| k.len() + 12)
                        .sum::<usize>()
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
    pub last: Vec<Op<'a>>,
}

/// What the plan needs to know from the store before it can be made.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Needs {
    /// Memories whose existence decides the plan, per user.
    pub existence: BTreeMap<String, Vec<String>>,
    /// Memories being deleted, whose stored links must go too.
    pub links_of: Vec<(String, String)>,
}

/// What the store answered.
#[derive(Debug, Default)]
pub struct Facts {
    /// `(user_id, memory_id)` of the memories asked about that exist.
    pub existing: HashSet<(String, String)>,
    /// Stored links from or to each memory being deleted.
    pub links_of: HashMap<(String, String), Vec<Link>>,
}

fn user_of(write: &Write) -> &str {
    match write {
        Write::PutMemory(m) => &m.user_id,
        Write::PutSalience { user_id, .. }
        | Write::DeleteMemory { user_id, .. }
        | Write::DeleteLink { user_id, .. } => user_id,
        Write::PutLink(l) => &l.user_id,
        Write::PutUserState(s) => &s.user_id,
        Write::PutRunReport(r) => &r.user_id,
    }
}

/// The batch's writes by user (in first-appearance order), each with its
/// index in the batch.
fn by_user(batch: &WriteBatch) -> Vec<(&str, Vec<(usize, &Write)>)> {
    let mut users: Vec<(&str, Vec<(usize, &Write)>)> = Vec::new();
    let mut position: HashMap<&str, usize> = HashMap::new();
    for (index, write) in batch.writes.iter().enumerate() {
        let user = user_of(write);
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
            Write::PutLink(l) => Row::Link(l).size(),
            Write::PutUserState(s) => Row::UserState(s).size(),
            Write::PutRunReport(r) => Row::RunReport(r).size(),
            Write::DeleteMemory { .. } | Write::DeleteLink { .. } => 64,
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
                Write::PutSalience { memory_id, .. } if !put.contains(memory_id.as_str()) => {
                    ask.push(memory_id.clone());
                }
                Write::DeleteMemory { memory_id, .. } => {
                    needs.links_of.push((user.to_owned(), memory_id.clone()));
                }
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
        let mut early = Vec::new();
        let mut last = Vec::new();
        for &(index, write) in &writes {
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
                    let exists = exists_now
                        .get(memory_id.as_str())
                        .copied()
                        .unwrap_or_else(|| existed(memory_id));
                    if !exists {
                        return Err(StoreError::MissingMemory {
                            user_id: user_id.to_owned(),
                            memory_id: memory_id.clone(),
                        });
                    }
                    last.push(op(Row::Salience {
                        user_id,
                        memory_id,
                        salience,
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
            }
        }
        commits.push(UserCommit {
            user_id,
            early: chunks(early, max_batch_bytes),
            last,
        });
    }
    Ok(commits)
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
        }
    }

    fn batch(writes: Vec<Write>) -> WriteBatch {
        WriteBatch { writes }
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
        let stamps: Vec<i64> = commits[0].last.iter().map(|op| op.timestamp).collect();
        assert_eq!(stamps, vec![100, 100, 100, 102, 104]);
        assert!(matches!(
            commits[1].last.last().unwrap().row,
            Row::UserState(_)
        ));
        assert_eq!(commits[1].last.last().unwrap().timestamp, 103);
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
        let rows: Vec<String> = commits[0]
            .last
            .iter()
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
        assert_eq!(commit.last.len(), 41 + 2 + 1 + 1);
        assert!(matches!(commit.last.last().unwrap().row, Row::UserState(_)));
        assert!(
            commit
                .last
                .iter()
                .any(|op| op.row == Row::Memory(&memories_of(&b)[40]))
        );
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
        assert_eq!(commits[0].last.len(), 4);
    }
}
