//! The ScyllaDB store: the schema in `schemas/cql/`, the `scylla` driver,
//! prepared statements only.
//!
//! The [`Store`] trait is synchronous (the pipeline's domain code is), so the
//! store runs its requests on the process's Tokio runtime (a [`Handle`] it is
//! given) and waits for them on the calling thread. Reads and writes use the
//! configured consistency (default `LOCAL_QUORUM`), token-aware routing, and
//! retry with exponential backoff when a request timed out, found too few
//! replicas or lost its connection. Every write carries an explicit
//! timestamp, which makes retries and replays idempotent (see [`commit`]).

mod commit;
mod config;
mod migrate;
mod rows;
pub mod schema;
mod session;
mod statements;

pub use config::ScyllaConfig;
pub use migrate::{MigrateOutcome, drop_keyspace, migrate};

use std::collections::HashMap;
use std::future::Future;
use std::ops::ControlFlow;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures::StreamExt;
use scylla::client::session::Session;
use scylla::errors::ExecutionError;
use scylla::response::PagingState;
use scylla::serialize::row::SerializeRow;
use scylla::statement::batch::{Batch, BatchType};
use scylla::statement::prepared::PreparedStatement;
use tokio::runtime::Handle;
use tracing::warn;

use self::commit::{Facts, Op};
use self::rows::{
    LinkRow, MemoryRow, ReportRow, SalienceRow, Seal, UserStateRow, join, link_from_row,
    report_from_row, sort_links, user_state_from_row,
};
use self::session::{open_error, session, transient, wait};
use self::statements::{BoundRow, Statements};
use super::{Store, StoreError, WriteBatch};
use crate::model::{Link, Memory, RunReport, UserState};
use crate::salience::SalienceState;

/// Ids per `IN (...)` list: ScyllaDB refuses more than 100 clustering keys
/// in one restriction by default.
const IN_LIST_MAX: usize = 100;
/// Users whose batches are in flight at once during one commit.
const USERS_IN_FLIGHT: usize = 16;
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// [`Store`] on a ScyllaDB (or Cassandra) cluster.
pub struct ScyllaStore {
    runtime: Handle,
    inner: Arc<Inner>,
}

struct Inner {
    session: Session,
    statements: Statements,
    retries: u32,
    backoff: Duration,
    max_batch_bytes: usize,
    /// The last write timestamp handed out (µs): timestamps only grow.
    clock: AtomicI64,
}

/// A driver error outside the request path (preparing, schema agreement,
/// migration steps): worth another try.
pub(super) fn backend(what: &str, error: impl Into<crate::error::Cause>) -> StoreError {
    StoreError::unavailable(what, error)
}

pub(super) fn corrupt(what: &str, reason: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt {
        what: what.to_owned(),
        reason: reason.to_string(),
    }
}

impl ScyllaStore {
    /// Connects to the cluster and prepares every statement. The schema must
    /// be at this engram's version (`engram migrate`). The driver's
    /// connections and every request run on `runtime`.
    pub fn connect(config: &ScyllaConfig, runtime: Handle) -> Result<Self, StoreError> {
        let owned = config.clone();
        let inner = wait(&runtime, async move { Inner::connect(&owned).await })?;
        Ok(Self {
            runtime,
            inner: Arc::new(inner),
        })
    }

    fn call<T, F, Fut>(&self, request: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(Arc<Inner>) -> Fut,
        Fut: Future<Output = Result<T, StoreError>> + Send + 'static,
    {
        wait(&self.runtime, request(Arc::clone(&self.inner)))
    }
}

pub(super) fn now_micros() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64)
}

impl Inner {
    async fn connect(config: &ScyllaConfig) -> Result<Self, StoreError> {
        let session = session(config, true).await?;
        let statements = Statements::prepare(&session).await.map_err(|e| {
            open_error(
                config,
                format!("{e} (has `engram migrate` been run against this keyspace?)"),
            )
        })?;
        let inner = Self {
            session,
            statements,
            retries: config.retries,
            backoff: config.retry_backoff.max(Duration::from_millis(1)),
            max_batch_bytes: config.max_batch_bytes.max(1024),
            clock: AtomicI64::new(0),
        };
        let versions: Vec<(i32,)> = inner.rows(&inner.statements.schema_versions, ()).await?;
        let version = versions.into_iter().map(|(v,)| v).max().unwrap_or(0);
        let wanted = schema::latest_version();
        if version < wanted {
            return Err(open_error(
                config,
                format!(
                    "the schema is at version {version}, this engram needs {wanted}: run `engram migrate`"
                ),
            ));
        }
        if version > wanted {
            return Err(open_error(
                config,
                format!("the schema is at version {version}, newer than this engram ({wanted})"),
            ));
        }
        Ok(inner)
    }

    /// Runs `request` again after transient failures, waiting longer each time.
    async fn retrying<T, F, Fut>(&self, what: &str, mut request: F) -> Result<T, StoreError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, ExecutionError>>,
    {
        let mut delay = self.backoff;
        let mut attempt = 0;
        loop {
            match request().await {
                Ok(value) => return Ok(value),
                Err(error) if attempt < self.retries && transient(&error) => {
                    attempt += 1;
                    warn!(%error, attempt, delay_ms = delay.as_millis() as u64, "{what} failed; retrying");
                    tokio::time::sleep(delay).await;
                    delay = (delay * 2).min(MAX_BACKOFF);
                }
                Err(error) if transient(&error) => {
                    return Err(StoreError::unavailable(what, error));
                }
                Err(error) => return Err(StoreError::refused(what, error)),
            }
        }
    }

    /// Every row of a query, page by page.
    async fn rows<R>(
        &self,
        statement: &PreparedStatement,
        values: impl SerializeRow + Sync,
    ) -> Result<Vec<R>, StoreError>
    where
        R: for<'frame, 'metadata> scylla::deserialize::row::DeserializeRow<'frame, 'metadata>,
    {
        let what = statement.get_statement();
        let mut rows = Vec::new();
        let mut paging = PagingState::start();
        loop {
            let (result, next) = self
                .retrying(what, || {
                    self.session
                        .execute_single_page(statement, &values, paging.clone())
                })
                .await?;
            let page = result.into_rows_result().map_err(|e| corrupt(what, e))?;
            for row in page.rows::<R>().map_err(|e| corrupt(what, e))? {
                rows.push(row.map_err(|e| corrupt(what, e))?);
            }
            match next.into_paging_control_flow() {
                ControlFlow::Continue(state) => paging = state,
                ControlFlow::Break(()) => return Ok(rows),
            }
        }
    }

    /// Rows of an `... AND id IN ?` query, in lists the cluster accepts.
    async fn rows_in<R>(
        &self,
        statement: &PreparedStatement,
        user_id: &str,
        ids: &[&str],
    ) -> Result<Vec<R>, StoreError>
    where
        R: for<'frame, 'metadata> scylla::deserialize::row::DeserializeRow<'frame, 'metadata>,
    {
        let mut rows = Vec::with_capacity(ids.len());
        for chunk in ids.chunks(IN_LIST_MAX) {
            rows.extend(self.rows::<R>(statement, (user_id, chunk.to_vec())).await?);
        }
        Ok(rows)
    }

    async fn saliences_by_id(
        &self,
        user_id: &str,
        ids: &[&str],
    ) -> Result<Vec<(String, SalienceState)>, StoreError> {
        let rows: Vec<SalienceRow> = self
            .rows_in(&self.statements.saliences_in, user_id, ids)
            .await?;
        Ok(rows.into_iter().map(SalienceRow::into_salience).collect())
    }

    async fn memories_by_id(&self, user_id: &str, ids: &[&str]) -> Result<Vec<Memory>, StoreError> {
        let mut ids = ids.to_vec();
        ids.sort_unstable();
        ids.dedup();
        let saliences: HashMap<String, SalienceState> = self
            .saliences_by_id(user_id, &ids)
            .await?
            .into_iter()
            .collect();
        // Only memories whose salience row exists are visible.
        let visible: Vec<&str> = ids
            .into_iter()
            .filter(|id| saliences.contains_key(*id))
            .collect();
        let rows: Vec<MemoryRow> = self
            .rows_in(&self.statements.memories_in, user_id, &visible)
            .await?;
        let mut memories = join(user_id, rows, saliences)?;
        memories.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(memories)
    }

    async fn memories(&self, user_id: &str) -> Result<Vec<Memory>, StoreError> {
        let saliences: Vec<SalienceRow> = self
            .rows(&self.statements.saliences_of_user, (user_id,))
            .await?;
        let saliences: HashMap<String, SalienceState> = saliences
            .into_iter()
            .map(SalienceRow::into_salience)
            .collect();
        let rows: Vec<MemoryRow> = self
            .rows(&self.statements.memories_of_user, (user_id,))
            .await?;
        let mut memories = join(user_id, rows, saliences)?;
        memories.sort_by(|a, b| (a.created_at(), &a.id).cmp(&(b.created_at(), &b.id)));
        Ok(memories)
    }

    async fn embedding_for_hash(
        &self,
        user_id: &str,
        content_hash: &str,
    ) -> Result<Option<Vec<f32>>, StoreError> {
        let ids: Vec<(String,)> = self
            .rows(&self.statements.ids_by_hash, (user_id, content_hash))
            .await?;
        let ids: Vec<&str> = ids.iter().map(|(id,)| id.as_str()).collect();
        if ids.is_empty() {
            return Ok(None);
        }
        // The index may name a memory since deleted or rewritten.
        Ok(self
            .memories_by_id(user_id, &ids)
            .await?
            .into_iter()
            .filter(|m| m.content_hash == content_hash)
            .find_map(|m| m.embedding))
    }

    async fn links_of(&self, user_id: &str, memory_id: &str) -> Result<Vec<Link>, StoreError> {
        let mut rows: Vec<LinkRow> = self
            .rows(&self.statements.links_from, (user_id, memory_id))
            .await?;
        rows.extend(
            self.rows::<LinkRow>(&self.statements.links_to, (user_id, memory_id))
                .await?,
        );
        let mut links = rows
            .into_iter()
            .map(|row| link_from_row(user_id, row))
            .collect::<Result<Vec<_>, _>>()?;
        sort_links(&mut links);
        Ok(links)
    }

    async fn links(&self, user_id: &str) -> Result<Vec<Link>, StoreError> {
        let rows: Vec<LinkRow> = self
            .rows(&self.statements.links_of_user, (user_id,))
            .await?;
        let mut links = rows
            .into_iter()
            .map(|row| link_from_row(user_id, row))
            .collect::<Result<Vec<_>, _>>()?;
        sort_links(&mut links);
        Ok(links)
    }

    /// The user's state, after applying a journaled commit whose seal it
    /// finds (a crash or error after the seal): the commit lands whole
    /// before anyone reads the user.
    async fn user_state(&self, user_id: &str) -> Result<Option<UserState>, StoreError> {
        let rows: Vec<UserStateRow> = self.rows(&self.statements.user_state, (user_id,)).await?;
        let Some(row) = rows.into_iter().next() else {
            return Ok(None);
        };
        let Some(seal) = row.seal() else {
            return user_state_from_row(user_id, row);
        };
        self.roll_forward(user_id, seal).await?;
        let rows: Vec<UserStateRow> = self.rows(&self.statements.user_state, (user_id,)).await?;
        match rows.into_iter().next() {
            Some(row) => user_state_from_row(user_id, row),
            None => Ok(None),
        }
    }

    /// Applies a sealed journal with its rows' original timestamps (so
    /// applying it twice, or beside its writer, changes nothing) and clears
    /// it. No rows left means whoever wrote it finished and removed them.
    async fn roll_forward(&self, user_id: &str, seal: Seal) -> Result<(), StoreError> {
        let mut batches: Vec<(i32, Vec<u8>)> = self
            .rows(&self.statements.journal_batches, (user_id, seal.journal_id))
            .await?;
        batches.sort_by_key(|(batch, _)| *batch);
        if !batches.is_empty() {
            let complete = batches.len() == seal.batches.max(0) as usize
                && batches.iter().enumerate().all(|(i, (b, _))| *b == i as i32);
            if !complete {
                return Err(corrupt(
                    "commit_journal",
                    format!(
                        "journal {} of user {user_id} is sealed with {} batches but {} are stored",
                        seal.journal_id,
                        seal.batches,
                        batches.len()
                    ),
                ));
            }
            warn!(
                user_id,
                journal_id = seal.journal_id,
                batches = batches.len(),
                "rolling a sealed commit forward"
            );
            for (_, bytes) in &batches {
                let entries = commit::decode_journal(bytes)?;
                let ops: Vec<Op<'_>> = entries.iter().map(commit::JournalOp::op).collect();
                self.send(&ops).await?;
            }
        }
        self.clear_journal(user_id, seal).await
    }

    async fn clear_journal(&self, user_id: &str, seal: Seal) -> Result<(), StoreError> {
        let after = seal.sealed_at + 1;
        self.retrying("clearing a journal", || {
            self.session.execute_unpaged(
                &self.statements.delete_journals_up_to,
                (after, user_id, seal.journal_id),
            )
        })
        .await?;
        self.retrying("clearing a journal's seal", || {
            self.session
                .execute_unpaged(&self.statements.clear_journal_seal, (after, user_id))
        })
        .await
        .map(drop)
    }

    async fn users(&self) -> Result<Vec<String>, StoreError> {
        let mut users: Vec<(String,)> = self.rows(&self.statements.users_with_state, ()).await?;
        users.extend(
            self.rows::<(String,)>(&self.statements.users_with_memories, ())
                .await?,
        );
        let mut users: Vec<String> = users.into_iter().map(|(user,)| user).collect();
        users.sort();
        users.dedup();
        Ok(users)
    }

    async fn waiting_users(&self, sources: &[String]) -> Result<Vec<String>, StoreError> {
        let mut users = Vec::new();
        let buckets: Vec<i32> = (0..schema::WAITING_BUCKETS).collect();
        for source in sources {
            let rows: Vec<(String,)> = self
                .rows(
                    &self.statements.waiting_users_of_source,
                    (source.as_str(), &buckets),
                )
                .await?;
            users.extend(rows.into_iter().map(|(user,)| user));
        }
        users.sort();
        users.dedup();
        Ok(users)
    }

    async fn run_report(
        &self,
        user_id: &str,
        run_id: &str,
    ) -> Result<Option<RunReport>, StoreError> {
        let rows: Vec<ReportRow> = self
            .rows(&self.statements.run_report, (user_id, run_id))
            .await?;
        rows.into_iter()
            .next()
            .map(|row| report_from_row(user_id, row))
            .transpose()
    }

    async fn find_run_report(&self, run_id: &str) -> Result<Option<RunReport>, StoreError> {
        let owners: Vec<(Option<String>,)> = self
            .rows(&self.statements.run_report_owner, (run_id,))
            .await?;
        match owners.into_iter().next() {
            Some((Some(user_id),)) => self.run_report(&user_id, run_id).await,
            _ => Ok(None),
        }
    }

    async fn erased_at(&self, user_id: &str) -> Result<Option<i64>, StoreError> {
        let rows: Vec<(Option<i64>,)> = self
            .rows(
                &self.statements.erased_at,
                (crate::store::tombstone_key(user_id),),
            )
            .await?;
        Ok(rows.into_iter().next().and_then(|(at,)| at))
    }

    async fn run_reports(&self, user_id: &str) -> Result<Vec<RunReport>, StoreError> {
        let rows: Vec<ReportRow> = self
            .rows(&self.statements.run_reports_of_user, (user_id,))
            .await?;
        let mut reports = rows
            .into_iter()
            .map(|row| report_from_row(user_id, row))
            .collect::<Result<Vec<_>, _>>()?;
        reports.sort_by(|a, b| (a.started_at, &a.run_id).cmp(&(b.started_at, &b.run_id)));
        Ok(reports)
    }

    async fn facts(&self, needs: commit::Needs) -> Result<Facts, StoreError> {
        let mut facts = Facts::default();
        for (user_id, ids) in &needs.existence {
            let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
            for (id, _) in self.saliences_by_id(user_id, &ids).await? {
                facts.existing.insert((user_id.clone(), id));
            }
        }
        for (user_id, memory_id) in needs.links_of {
            let links = self.links_of(&user_id, &memory_id).await?;
            facts.links_of.insert((user_id, memory_id), links);
        }
        for user_id in needs.erased {
            let sources = self
                .user_state(&user_id)
                .await?
                .map(|state| state.applied_offsets.into_keys().collect())
                .unwrap_or_default();
            let run_ids: Vec<(String,)> = self
                .rows(&self.statements.run_ids_of_user, (user_id.as_str(),))
                .await?;
            let run_ids = run_ids.into_iter().map(|(id,)| id).collect();
            facts.erased.insert(user_id, (sources, run_ids));
        }
        Ok(facts)
    }

    async fn commit(&self, batch: &WriteBatch) -> Result<(), StoreError> {
        let needs = commit::needs(batch, self.max_batch_bytes);
        let facts = self.facts(needs).await?;
        let first_timestamp = reserve_timestamps(&self.clock, batch.len());
        let plan = commit::plan(batch, &facts, first_timestamp, self.max_batch_bytes)?;
        let pending: Vec<_> = plan.iter().map(|user| self.commit_user(user)).collect();
        let results: Vec<Result<(), StoreError>> = futures::stream::iter(pending)
            .buffer_unordered(USERS_IN_FLIGHT)
            .collect()
            .await;
        results.into_iter().collect()
    }

    /// One user's batches: invisible rows first, then the rest at once, or,
    /// when the rest is more than one batch, through the journal.
    async fn commit_user(&self, user: &commit::UserCommit<'_>) -> Result<(), StoreError> {
        for early in &user.early {
            self.send(early).await?;
        }
        let seal = match user.is_journaled() {
            true => Some(self.write_journal(user).await?),
            false => None,
        };
        for batch in &user.last {
            self.send(batch).await?;
        }
        match seal {
            Some(seal) => self.clear_journal(user.user_id, seal).await,
            None => Ok(()),
        }
    }

    /// Writes and seals the journal of `user`'s visible batches: from here
    /// on the commit lands whole, by this call or by a roll-forward.
    async fn write_journal(&self, user: &commit::UserCommit<'_>) -> Result<Seal, StoreError> {
        let journal = commit::encode_journal(&user.last)?;
        // Journal rows, then the seal one microsecond later: the seal's
        // clearing (at its timestamp + 1) removes both.
        let journal_id = reserve_timestamps(&self.clock, 2);
        let sealed_at = journal_id + 1;
        let user_id = user.user_id;
        // Rows of journals that never got their seal (a commit that failed
        // before it) go with this one's predecessors.
        self.retrying("clearing unsealed journals", || {
            self.session.execute_unpaged(
                &self.statements.delete_journals_up_to,
                (journal_id, user_id, journal_id - 1),
            )
        })
        .await?;
        for (batch, ops) in journal.iter().enumerate() {
            let batch = batch as i32;
            self.retrying("writing the commit journal", || {
                self.session.execute_unpaged(
                    &self.statements.insert_journal_batch,
                    (user_id, journal_id, batch, ops.as_slice(), journal_id),
                )
            })
            .await?;
        }
        let batches = journal.len() as i32;
        self.retrying("sealing the commit journal", || {
            self.session.execute_unpaged(
                &self.statements.seal_journal,
                (sealed_at, journal_id, batches, user_id),
            )
        })
        .await?;
        crate::faults::crash_point("scylla.journal_sealed");
        Ok(Seal {
            journal_id,
            batches,
            sealed_at,
        })
    }

    /// Sends rows as one logged batch; a batch of one row bigger than a
    /// batch may be (a large run report) as plain statements, which the
    /// cluster's batch size limit does not apply to.
    async fn send(&self, ops: &[Op<'_>]) -> Result<(), StoreError> {
        if ops.is_empty() {
            return Ok(());
        }
        if let [op] = ops
            && op.row.size() > self.max_batch_bytes
        {
            for (statement, row) in self.statements.bind(op) {
                self.retrying("writing a large row", || {
                    self.session.execute_unpaged(statement, &row)
                })
                .await?;
            }
            return Ok(());
        }
        let mut batch = Batch::new(BatchType::Logged);
        batch.set_is_idempotent(true);
        let mut values: Vec<BoundRow<'_>> = Vec::with_capacity(ops.len() * 2);
        for op in ops {
            for (statement, row) in self.statements.bind(op) {
                batch.append_statement(statement.clone());
                values.push(row);
            }
        }
        self.retrying("writing a batch", || self.session.batch(&batch, &values))
            .await
            .map(drop)
    }
}

/// `count` consecutive write timestamps (µs) from the wall clock, later than
/// any `clock` handed out before, so this process's writes keep their order
/// even if the wall clock steps back.
fn reserve_timestamps(clock: &AtomicI64, count: usize) -> i64 {
    let count = count.max(1) as i64;
    let mut last = clock.load(Ordering::Relaxed);
    loop {
        let first = now_micros().max(last + 1);
        match clock.compare_exchange_weak(
            last,
            first + count - 1,
            Ordering::Relaxed,
            Ordering::Relaxed,
        ) {
            Ok(_) => return first,
            Err(current) => last = current,
        }
    }
}

impl Store for ScyllaStore {
    fn ping(&self) -> Result<(), StoreError> {
        self.call(|inner| async move {
            inner
                .rows::<(Option<String>,)>(&inner.statements.ping, ())
                .await
                .map(drop)
        })
    }

    fn commit(&self, batch: &WriteBatch) -> Result<(), StoreError> {
        if batch.is_empty() {
            return Ok(());
        }
        let batch = batch.clone();
        self.call(|inner| async move { inner.commit(&batch).await })
    }

    fn memory(&self, user_id: &str, memory_id: &str) -> Result<Option<Memory>, StoreError> {
        Ok(self
            .memories_by_id(user_id, &[memory_id])?
            .into_iter()
            .next())
    }

    fn embedding_for_hash(
        &self,
        user_id: &str,
        content_hash: &str,
    ) -> Result<Option<Vec<f32>>, StoreError> {
        let (user_id, content_hash) = (user_id.to_owned(), content_hash.to_owned());
        self.call(|inner| async move { inner.embedding_for_hash(&user_id, &content_hash).await })
    }

    fn memories_by_id(&self, user_id: &str, ids: &[&str]) -> Result<Vec<Memory>, StoreError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let user_id = user_id.to_owned();
        let ids: Vec<String> = ids.iter().map(|id| (*id).to_owned()).collect();
        self.call(|inner| async move {
            let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
            inner.memories_by_id(&user_id, &ids).await
        })
    }

    fn saliences_by_id(
        &self,
        user_id: &str,
        ids: &[&str],
    ) -> Result<Vec<(String, SalienceState)>, StoreError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let user_id = user_id.to_owned();
        let ids: Vec<String> = ids.iter().map(|id| (*id).to_owned()).collect();
        self.call(|inner| async move {
            let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
            inner.saliences_by_id(&user_id, &ids).await
        })
    }

    fn memories(&self, user_id: &str) -> Result<Vec<Memory>, StoreError> {
        let user_id = user_id.to_owned();
        self.call(|inner| async move { inner.memories(&user_id).await })
    }

    fn links_of(&self, user_id: &str, memory_id: &str) -> Result<Vec<Link>, StoreError> {
        let (user_id, memory_id) = (user_id.to_owned(), memory_id.to_owned());
        self.call(|inner| async move { inner.links_of(&user_id, &memory_id).await })
    }

    fn links(&self, user_id: &str) -> Result<Vec<Link>, StoreError> {
        let user_id = user_id.to_owned();
        self.call(|inner| async move { inner.links(&user_id).await })
    }

    fn user_state(&self, user_id: &str) -> Result<Option<UserState>, StoreError> {
        let user_id = user_id.to_owned();
        self.call(|inner| async move { inner.user_state(&user_id).await })
    }

    fn users(&self) -> Result<Vec<String>, StoreError> {
        self.call(|inner| async move { inner.users().await })
    }

    fn waiting_users(&self, sources: &[String]) -> Result<Vec<String>, StoreError> {
        let sources = sources.to_vec();
        self.call(|inner| async move { inner.waiting_users(&sources).await })
    }

    fn run_report(&self, user_id: &str, run_id: &str) -> Result<Option<RunReport>, StoreError> {
        let (user_id, run_id) = (user_id.to_owned(), run_id.to_owned());
        self.call(|inner| async move { inner.run_report(&user_id, &run_id).await })
    }

    fn find_run_report(&self, run_id: &str) -> Result<Option<RunReport>, StoreError> {
        let run_id = run_id.to_owned();
        self.call(|inner| async move { inner.find_run_report(&run_id).await })
    }

    fn run_reports(&self, user_id: &str) -> Result<Vec<RunReport>, StoreError> {
        let user_id = user_id.to_owned();
        self.call(|inner| async move { inner.run_reports(&user_id).await })
    }

    fn erased_at(&self, user_id: &str) -> Result<Option<i64>, StoreError> {
        let user_id = user_id.to_owned();
        self.call(|inner| async move { inner.erased_at(&user_id).await })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_timestamps_only_grow() {
        let clock = AtomicI64::new(0);
        let first = reserve_timestamps(&clock, 10);
        assert!(
            first > 1_600_000_000_000_000,
            "microseconds since the epoch"
        );
        assert!(reserve_timestamps(&clock, 1) >= first + 10);
        // A wall clock behind the last stamp (a step back) never reuses one.
        let ahead = AtomicI64::new(i64::MAX / 2);
        assert_eq!(reserve_timestamps(&ahead, 3), i64::MAX / 2 + 1);
        assert_eq!(reserve_timestamps(&ahead, 1), i64::MAX / 2 + 4);
    }
}
