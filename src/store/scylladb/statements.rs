//! Every CQL statement engram runs, prepared once, and the values each row
//! operation of a commit binds to them.

use scylla::client::session::Session;
use scylla::serialize::row::SerializeRow;
use scylla::statement::prepared::PreparedStatement;

use super::super::{StoreError, bookkeeping_json, embedding_bytes};
use super::backend;
use super::commit::{Op, Row};

macro_rules! statements {
    ($($name:ident = $cql:expr;)*) => {
        /// Every statement engram runs, prepared once at start-up.
        pub(super) struct Statements {
            $(pub(super) $name: PreparedStatement,)*
        }

        impl Statements {
    /// The statements and values of one row operation.
            pub(super) async fn prepare(session: &Session) -> Result<Self, StoreError> {
                Ok(Self {
                    $($name: {
                        let mut statement = session
                            .prepare($cql)
                            .await
                            .map_err(|e| backend(concat!("preparing ", stringify!($name)), e))?;
                        statement.set_is_idempotent(true);
                        statement
                    },)*
                })
            }
        }
    };
}

const MEMORY_SELECT: &str = "SELECT id, kind, category, tags, tags_frozen, content, importance, \
     source, content_hash, embedding, status, merged_from, merged_from_frozen, derived_from, \
     derived_from_frozen, last_run_id, updated_at FROM memories";
const SALIENCE_SELECT: &str = "SELECT id, created_at, recent_accesses, recent_accesses_frozen, \
     reads, read_offset_sum FROM memory_salience";
const LINK_COLUMNS: &str = "from_id, to_id, link_type, confidence, reason, created_at, run_id";

statements! {
    // The lists go to their frozen columns (version 2); the old columns are
    // written null so a row never holds two versions of a list.
    insert_memory = "INSERT INTO memories (user_id, id, kind, category, tags_frozen, content, \
        importance, source, content_hash, embedding, status, created_at, merged_from_frozen, \
        derived_from_frozen, last_run_id, tags, merged_from, derived_from) \
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, null, null, null) USING TIMESTAMP ?";
    // Apart, as the insert binds as many values as a row can take; only
    // memories the platform edited have one, and it is never unset.
    update_memory_updated_at = "UPDATE memories USING TIMESTAMP ? SET updated_at = ? \
        WHERE user_id = ? AND id = ?";
    insert_salience = "INSERT INTO memory_salience (user_id, id, created_at, \
        recent_accesses_frozen, reads, read_offset_sum, recent_accesses) \
        VALUES (?, ?, ?, ?, ?, ?, null) USING TIMESTAMP ?";
    insert_hash = "INSERT INTO memory_hashes (user_id, content_hash, id) VALUES (?, ?, ?) \
        USING TIMESTAMP ?";
    update_status = "UPDATE memories USING TIMESTAMP ? SET status = ?, last_run_id = ? \
        WHERE user_id = ? AND id = ?";
    delete_memory = "DELETE FROM memories USING TIMESTAMP ? WHERE user_id = ? AND id = ?";
    delete_salience = "DELETE FROM memory_salience USING TIMESTAMP ? WHERE user_id = ? AND id = ?";
    insert_link = "INSERT INTO links (user_id, from_id, to_id, link_type, confidence, reason, \
        created_at, run_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?) USING TIMESTAMP ?";
    insert_link_by_target = "INSERT INTO links_by_target (user_id, from_id, to_id, link_type, \
        confidence, reason, created_at, run_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?) USING TIMESTAMP ?";
    delete_link = "DELETE FROM links USING TIMESTAMP ? \
        WHERE user_id = ? AND from_id = ? AND to_id = ? AND link_type = ?";
    delete_link_by_target = "DELETE FROM links_by_target USING TIMESTAMP ? \
        WHERE user_id = ? AND from_id = ? AND to_id = ? AND link_type = ?";
    insert_user_state = "INSERT INTO user_state (user_id, applied_offsets, new_since_cycle, \
        last_cycle_at, last_run_id, duplicate_candidates, cycle) VALUES (?, ?, ?, ?, ?, ?, ?) \
        USING TIMESTAMP ?";
    insert_waiting = "INSERT INTO waiting_users_by_bucket (source, bucket, user_id) VALUES (?, ?, ?) USING TIMESTAMP ?";
    delete_waiting = "DELETE FROM waiting_users_by_bucket USING TIMESTAMP ? WHERE source = ? AND bucket = ? AND user_id = ?";
    waiting_users_of_source = "SELECT user_id FROM waiting_users_by_bucket WHERE source = ? AND bucket IN ?";
    insert_run_report = "INSERT INTO run_reports (user_id, run_id, started_at, report) \
        VALUES (?, ?, ?, ?) USING TIMESTAMP ?";
    insert_run_report_by_id = "INSERT INTO run_reports_by_id (run_id, user_id) VALUES (?, ?) \
        USING TIMESTAMP ?";
    memories_in = format!("{MEMORY_SELECT} WHERE user_id = ? AND id IN ?");
    memories_of_user = format!("{MEMORY_SELECT} WHERE user_id = ?");
    saliences_in = format!("{SALIENCE_SELECT} WHERE user_id = ? AND id IN ?");
    saliences_of_user = format!("{SALIENCE_SELECT} WHERE user_id = ?");
    ids_by_hash = "SELECT id FROM memory_hashes WHERE user_id = ? AND content_hash = ?";
    links_from = format!("SELECT {LINK_COLUMNS} FROM links WHERE user_id = ? AND from_id = ?");
    links_to = format!("SELECT {LINK_COLUMNS} FROM links_by_target WHERE user_id = ? AND to_id = ?");
    links_of_user = format!("SELECT {LINK_COLUMNS} FROM links WHERE user_id = ?");
    user_state = "SELECT applied_offsets, new_since_cycle, last_cycle_at, last_run_id, \
        duplicate_candidates, cycle, journal_id, journal_batches, \
        WRITETIME(journal_id) AS journal_sealed_at FROM user_state WHERE user_id = ?";
    insert_journal_batch = "INSERT INTO commit_journal (user_id, journal_id, part, ops) \
        VALUES (?, ?, ?, ?) USING TIMESTAMP ?";
    seal_journal = "UPDATE user_state USING TIMESTAMP ? SET journal_id = ?, journal_batches = ? \
        WHERE user_id = ?";
    journal_batches = "SELECT part, ops FROM commit_journal WHERE user_id = ? AND journal_id = ?";
    // Clearing at the seal's timestamp + 1 removes this seal and never a
    // later one, whoever clears it.
    clear_journal_seal = "DELETE journal_id, journal_batches FROM user_state USING TIMESTAMP ? \
        WHERE user_id = ?";
    delete_journals_up_to = "DELETE FROM commit_journal USING TIMESTAMP ? \
        WHERE user_id = ? AND journal_id <= ?";
    users_with_state = "SELECT DISTINCT user_id FROM user_state";
    users_with_memories = "SELECT DISTINCT user_id FROM memory_salience";
    run_report = "SELECT run_id, started_at, report FROM run_reports WHERE user_id = ? AND run_id = ?";
    run_reports_of_user = "SELECT run_id, started_at, report FROM run_reports WHERE user_id = ?";
    run_report_owner = "SELECT user_id FROM run_reports_by_id WHERE run_id = ?";
    schema_versions = "SELECT version FROM schema_migrations";
    run_ids_of_user = "SELECT run_id FROM run_reports WHERE user_id = ?";
    erased_at = "SELECT erased_at FROM erased_users WHERE user_hash = ?";
    insert_tombstone = "INSERT INTO erased_users (user_hash, erased_at) VALUES (?, ?) \
        USING TIMESTAMP ?";
    delete_hash = "DELETE FROM memory_hashes USING TIMESTAMP ? \
        WHERE user_id = ? AND content_hash = ? AND id = ?";
    erase_memories = "DELETE FROM memories USING TIMESTAMP ? WHERE user_id = ?";
    erase_saliences = "DELETE FROM memory_salience USING TIMESTAMP ? WHERE user_id = ?";
    erase_hashes = "DELETE FROM memory_hashes USING TIMESTAMP ? WHERE user_id = ?";
    erase_links = "DELETE FROM links USING TIMESTAMP ? WHERE user_id = ?";
    erase_links_by_target = "DELETE FROM links_by_target USING TIMESTAMP ? WHERE user_id = ?";
    erase_user_state = "DELETE FROM user_state USING TIMESTAMP ? WHERE user_id = ?";
    erase_run_reports = "DELETE FROM run_reports USING TIMESTAMP ? WHERE user_id = ?";
    erase_journal = "DELETE FROM commit_journal USING TIMESTAMP ? WHERE user_id = ?";
    erase_run_by_id = "DELETE FROM run_reports_by_id USING TIMESTAMP ? WHERE run_id = ?";
    // Version 3's index, no longer written, may still name the user.
    erase_waiting_v3 = "DELETE FROM waiting_users USING TIMESTAMP ? \
        WHERE source = ? AND user_id = ?";
    ping = "SELECT release_version FROM system.local";
}

pub(super) type BoundRow<'a> = Box<dyn SerializeRow + Send + Sync + 'a>;

impl Statements {
    pub(super) fn bind<'a>(&'a self, op: &'a Op<'a>) -> Vec<(&'a PreparedStatement, BoundRow<'a>)> {
        let s = self;
        let ts = op.timestamp;
        match &op.row {
            Row::Memory(m) => vec![(
                &s.insert_memory,
                Box::new((
                    m.user_id.as_str(),
                    m.id.as_str(),
                    m.kind.as_str(),
                    m.category.as_deref(),
                    &m.tags,
                    m.content.as_str(),
                    m.importance,
                    m.source.as_deref(),
                    m.content_hash.as_str(),
                    embedding_bytes(&m.embedding),
                    m.status.as_str(),
                    m.created_at(),
                    &m.merged_from,
                    &m.derived_from,
                    m.last_run_id.as_deref(),
                    ts,
                )) as BoundRow<'a>,
            )]
            .into_iter()
            .chain(m.updated_at.map(|updated_at| {
                (
                    &s.update_memory_updated_at,
                    Box::new((ts, updated_at, m.user_id.as_str(), m.id.as_str())) as BoundRow<'a>,
                )
            }))
            .collect(),
            Row::Salience {
                user_id,
                memory_id,
                salience,
            } => vec![(
                &s.insert_salience,
                Box::new((
                    *user_id,
                    *memory_id,
                    salience.created_at(),
                    salience.recent().to_vec(),
                    salience.access_count() as i64,
                    salience.read_offset_sum(),
                    ts,
                )),
            )],
            Row::ContentHash(m) => vec![(
                &s.insert_hash,
                Box::new((
                    m.user_id.as_str(),
                    m.content_hash.as_str(),
                    m.id.as_str(),
                    ts,
                )),
            )],
            Row::Status {
                user_id,
                memory_id,
                status,
                last_run_id,
            } => vec![(
                &s.update_status,
                Box::new((ts, status.as_str(), *last_run_id, *user_id, *memory_id)),
            )],
            Row::DeleteMemory { user_id, memory_id } => vec![
                (&s.delete_memory, Box::new((ts, *user_id, *memory_id))),
                (&s.delete_salience, Box::new((ts, *user_id, *memory_id))),
            ],
            Row::Link(l) => {
                let row = || {
                    Box::new((
                        l.user_id.as_str(),
                        l.from_id.as_str(),
                        l.to_id.as_str(),
                        l.link_type.as_str(),
                        l.confidence,
                        l.reason.as_str(),
                        l.created_at,
                        l.run_id.as_deref(),
                        ts,
                    ))
                };
                vec![
                    (&s.insert_link, row() as BoundRow<'a>),
                    (&s.insert_link_by_target, row()),
                ]
            }
            Row::DeleteLink {
                user_id,
                from_id,
                to_id,
                link_type,
            } => {
                let row = || {
                    Box::new((
                        ts,
                        *user_id,
                        from_id.as_str(),
                        to_id.as_str(),
                        link_type.as_str(),
                    ))
                };
                vec![
                    (&s.delete_link, row() as BoundRow<'a>),
                    (&s.delete_link_by_target, row()),
                ]
            }
            Row::UserState(state) => {
                let mut bound: Vec<(&'a PreparedStatement, BoundRow<'a>)> = vec![(
                    &s.insert_user_state,
                    Box::new((
                        state.user_id.as_str(),
                        &state.applied_offsets,
                        state.new_since_cycle as i64,
                        state.last_cycle_at,
                        state.last_run_id.as_deref(),
                        state.duplicate_candidates as i64,
                        bookkeeping_json(state),
                        ts,
                    )),
                )];
                // The index follows the state in the same batch.
                let user_id = state.user_id.as_str();
                let bucket = super::schema::waiting_bucket(user_id);
                let waiting = state.is_waiting();
                for source in state.applied_offsets.keys() {
                    let source = source.as_str();
                    bound.push(if waiting {
                        (&s.insert_waiting, Box::new((source, bucket, user_id, ts)))
                    } else {
                        (&s.delete_waiting, Box::new((ts, source, bucket, user_id)))
                    });
                }
                bound
            }
            Row::EraseUser {
                user_id,
                erased_at,
                sources,
                run_ids,
            } => {
                let user_id = *user_id;
                let mut bound: Vec<(&'a PreparedStatement, BoundRow<'a>)> = [
                    &s.erase_memories,
                    &s.erase_saliences,
                    &s.erase_hashes,
                    &s.erase_links,
                    &s.erase_links_by_target,
                    &s.erase_user_state,
                    &s.erase_run_reports,
                    &s.erase_journal,
                ]
                .into_iter()
                .map(|statement| (statement, Box::new((ts, user_id)) as BoundRow<'a>))
                .collect();
                let bucket = super::schema::waiting_bucket(user_id);
                for source in sources {
                    let source = source.as_str();
                    bound.push((&s.delete_waiting, Box::new((ts, source, bucket, user_id))));
                    bound.push((&s.erase_waiting_v3, Box::new((ts, source, user_id))));
                }
                for run_id in run_ids {
                    bound.push((&s.erase_run_by_id, Box::new((ts, run_id.as_str()))));
                }
                bound.push((
                    &s.insert_tombstone,
                    Box::new((crate::store::tombstone_key(user_id), *erased_at, ts)),
                ));
                bound
            }
            Row::ForgetHash {
                user_id,
                memory_id,
                content_hash,
            } => vec![(
                &s.delete_hash,
                Box::new((ts, *user_id, *content_hash, *memory_id)),
            )],
            Row::RunReport(report) => vec![
                (
                    &s.insert_run_report,
                    Box::new((
                        report.user_id.as_str(),
                        report.run_id.as_str(),
                        report.started_at,
                        report.report.to_string(),
                        ts,
                    )),
                ),
                (
                    &s.insert_run_report_by_id,
                    Box::new((report.run_id.as_str(), report.user_id.as_str(), ts)),
                ),
            ],
        }
    }
}
