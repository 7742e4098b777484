//! The ScyllaDB store: the schema in `schemas/cql/`, the `scylla` driver,
//! prepared statements only.
//!
//! The [`Store`] trait is synchronous (the pipeline's domain code is), so the
//! store owns a small Tokio runtime of its own and waits for its requests from
//! any thread, inside another runtime or not. Reads and writes use the
//! configured consistency (default `LOCAL_QUORUM`), token-aware routing, and
//! retry with exponential backoff when a request timed out, found too few
//! replicas or lost its connection. Every write carries an explicit
//! timestamp, which makes retries and replays idempotent (see [`commit`]).

mod commit;
pub mod schema;

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::ops::ControlFlow;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures::StreamExt;
use scylla::DeserializeRow;
use scylla::client::execution_profile::ExecutionProfile;
use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use scylla::errors::{DbError, ExecutionError, RequestAttemptError};
use scylla::policies::load_balancing::DefaultPolicy;
use scylla::response::PagingState;
use scylla::serialize::row::SerializeRow;
use scylla::statement::Consistency;
use scylla::statement::batch::{Batch, BatchType};
use scylla::statement::prepared::PreparedStatement;
use tokio::runtime::Runtime;
use tracing::{info, warn};

use self::commit::{Facts, Op, Row};
use super::{Store, StoreError, WriteBatch, embedding_bytes, embedding_from_bytes};
use crate::config::ScyllaConfig;
use crate::model::{Link, LinkType, Memory, MemoryKind, MemoryStatus, RunReport, UserState};
use crate::salience::SalienceState;

/// Ids per `IN (...)` list: ScyllaDB refuses more than 100 clustering keys
/// in one restriction by default.
const IN_LIST_MAX: usize = 100;
/// Users whose batches are in flight at once during one commit.
const USERS_IN_FLIGHT: usize = 16;
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// [`Store`] on a ScyllaDB (or Cassandra) cluster.
pub struct ScyllaStore {
    /// `None` only while dropping.
    runtime: Option<Runtime>,
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

fn open_error(config: &ScyllaConfig, reason: impl std::fmt::Display) -> StoreError {
    StoreError::Open {
        path: format!("scylla://{}/{}", config.nodes, config.keyspace),
        reason: reason.to_string(),
    }
}

fn backend(what: &str, error: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(format!("{what}: {error}"))
}

fn corrupt(what: &str, reason: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt {
        what: what.to_owned(),
        reason: reason.to_string(),
    }
}

fn store_runtime() -> std::io::Result<Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("engram-scylla")
        .enable_all()
        .build()
}

/// Runs `future` on `runtime` and waits for it. Spawning (rather than
/// `Runtime::block_on`) works from inside another runtime too.
fn wait<T: Send + 'static>(
    runtime: &Runtime,
    future: impl Future<Output = Result<T, StoreError>> + Send + 'static,
) -> Result<T, StoreError> {
    futures::executor::block_on(runtime.spawn(future))
        .map_err(|e| StoreError::Backend(format!("store task failed: {e}")))?
}

impl ScyllaStore {
    /// Connects to the cluster and prepares every statement. The schema must
    /// be at this engram's version (`engram migrate`).
    pub fn connect(config: &ScyllaConfig) -> Result<Self, StoreError> {
        let runtime = store_runtime().map_err(|e| open_error(config, e))?;
        let owned = config.clone();
        let inner = match wait(&runtime, async move { Inner::connect(&owned).await }) {
            Ok(inner) => inner,
            Err(error) => {
                // Dropping a runtime blocks, which panics inside another one.
                runtime.shutdown_background();
                return Err(error);
            }
        };
        Ok(Self {
            runtime: Some(runtime),
            inner: Arc::new(inner),
        })
    }

    fn call<T, F, Fut>(&self, request: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(Arc<Inner>) -> Fut,
        Fut: Future<Output = Result<T, StoreError>> + Send + 'static,
    {
        let runtime = self
            .runtime
            .as_ref()
            .ok_or_else(|| StoreError::Backend("the store is closed".into()))?;
        wait(runtime, request(Arc::clone(&self.inner)))
    }
}

impl Drop for ScyllaStore {
    fn drop(&mut self) {
        // Dropping a runtime blocks, which panics inside another runtime.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// What `engram migrate` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MigrateOutcome {
    /// Versions applied now.
    pub applied: Vec<i32>,
    /// The schema version after the run.
    pub version: i32,
}

/// Creates the keyspace if needed and applies every schema version not yet
/// recorded in `schema_migrations`. Safe to run again at any time.
/// `on_statement` is called once per statement of
/// [`schema::statement_count`], applied or found already applied.
pub fn migrate(
    config: &ScyllaConfig,
    on_statement: Box<dyn Fn() + Send>,
) -> Result<MigrateOutcome, StoreError> {
    let keyspace = schema::keyspace_statements(config).map_err(|e| open_error(config, e))?;
    let runtime = store_runtime().map_err(|e| open_error(config, e))?;
    let config = config.clone();
    let outcome = wait(&runtime, async move {
        let session = session(&config, false).await?;
        let ddl = |statement: String| {
            let session = &session;
            async move {
                session
                    .query_unpaged(statement.as_str(), &[])
                    .await
                    .map_err(|e| backend(&format!("`{statement}`"), e))?;
                session
                    .await_schema_agreement()
                    .await
                    .map_err(|e| backend("schema agreement", e))?;
                Ok::<_, StoreError>(())
            }
        };
        for statement in keyspace {
            ddl(statement).await?;
            on_statement();
        }
        session
            .use_keyspace(config.keyspace.as_str(), false)
            .await
            .map_err(|e| backend("use keyspace", e))?;
        let done = applied_versions(&session).await?;
        let record = session
            .prepare(
                "INSERT INTO schema_migrations (version, description, applied_at) VALUES (?, ?, ?)",
            )
            .await
            .map_err(|e| backend("prepare", e))?;
        let mut applied = Vec::new();
        for migration in schema::MIGRATIONS {
            if done.contains(&migration.version) {
                for _ in schema::statements(migration.cql) {
                    on_statement();
                }
                continue;
            }
            info!(version = migration.version, "applying schema migration");
            for statement in schema::statements(migration.cql) {
                ddl(statement).await?;
                on_statement();
            }
            let now = scylla::value::CqlTimestamp(now_micros() / 1_000);
            session
                .execute_unpaged(&record, (migration.version, migration.description, now))
                .await
                .map_err(|e| backend("recording the migration", e))?;
            applied.push(migration.version);
        }
        Ok(MigrateOutcome {
            applied,
            version: schema::latest_version().max(done.into_iter().max().unwrap_or(0)),
        })
    });
    runtime.shutdown_background();
    outcome
}

/// Drops the keyspace and everything in it: test teardown, and nothing
/// engram does on its own.
pub fn drop_keyspace(config: &ScyllaConfig) -> Result<(), StoreError> {
    schema::check_keyspace(&config.keyspace).map_err(|e| open_error(config, e))?;
    let runtime = store_runtime().map_err(|e| open_error(config, e))?;
    let config = config.clone();
    let outcome = wait(&runtime, async move {
        let session = session(&config, false).await?;
        let statement = format!("DROP KEYSPACE IF EXISTS {}", config.keyspace);
        session
            .query_unpaged(statement.as_str(), &[])
            .await
            .map_err(|e| backend(&statement, e))?;
        Ok(())
    });
    runtime.shutdown_background();
    outcome
}

async fn applied_versions(session: &Session) -> Result<Vec<i32>, StoreError> {
    let select = session
        .prepare("SELECT version FROM schema_migrations")
        .await
        .map_err(|e| backend("reading schema_migrations", e))?;
    let result = session
        .execute_unpaged(&select, ())
        .await
        .map_err(|e| backend("reading schema_migrations", e))?;
    let rows = result
        .into_rows_result()
        .map_err(|e| corrupt("schema_migrations", e))?;
    let versions = rows
        .rows::<(i32,)>()
        .map_err(|e| corrupt("schema_migrations", e))?
        .map(|row| row.map(|(version,)| version))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| corrupt("schema_migrations", e))?;
    Ok(versions)
}

/// The driver's consistency for the configured one.
pub fn driver_consistency(consistency: crate::config::Consistency) -> Consistency {
    use crate::config::Consistency as Configured;
    match consistency {
        Configured::Any => Consistency::Any,
        Configured::One => Consistency::One,
        Configured::Two => Consistency::Two,
        Configured::Three => Consistency::Three,
        Configured::Quorum => Consistency::Quorum,
        Configured::All => Consistency::All,
        Configured::LocalQuorum => Consistency::LocalQuorum,
        Configured::EachQuorum => Consistency::EachQuorum,
        Configured::LocalOne => Consistency::LocalOne,
    }
}

/// The client TLS configuration: trusted CAs from `tls_ca_file`, and a
/// client certificate when the cluster asks for one.
pub fn tls_config(config: &ScyllaConfig) -> Result<Arc<rustls::ClientConfig>, String> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};

    if config.tls_ca_file.is_empty() {
        return Err("scylla.tls needs scylla.tls_ca_file (PEM certificate authorities)".into());
    }
    let read_certs = |path: &str| -> Result<Vec<CertificateDer<'static>>, String> {
        let certs = CertificateDer::pem_file_iter(path)
            .map_err(|e| format!("cannot read {path}: {e}"))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("{path}: {e}"))?;
        if certs.is_empty() {
            return Err(format!("{path} holds no PEM certificate"));
        }
        Ok(certs)
    };
    let mut roots = rustls::RootCertStore::empty();
    for cert in read_certs(&config.tls_ca_file)? {
        roots
            .add(cert)
            .map_err(|e| format!("{}: {e}", config.tls_ca_file))?;
    }
    let builder = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| e.to_string())?
    .with_root_certificates(roots);
    let tls = match (
        config.tls_cert_file.is_empty(),
        config.tls_key_file.is_empty(),
    ) {
        (true, true) => builder.with_no_client_auth(),
        (false, false) => {
            let key = PrivateKeyDer::from_pem_file(&config.tls_key_file)
                .map_err(|e| format!("{}: {e}", config.tls_key_file))?;
            builder
                .with_client_auth_cert(read_certs(&config.tls_cert_file)?, key)
                .map_err(|e| e.to_string())?
        }
        _ => return Err("scylla.tls_cert_file and scylla.tls_key_file go together".into()),
    };
    Ok(Arc::new(tls))
}

async fn session(config: &ScyllaConfig, use_keyspace: bool) -> Result<Session, StoreError> {
    let consistency = driver_consistency(config.consistency);
    // Token-aware: a prepared statement's partition key picks its replicas.
    let mut policy = DefaultPolicy::builder().token_aware(true);
    if !config.local_datacenter.is_empty() {
        policy = policy
            .prefer_datacenter(config.local_datacenter.clone())
            .permit_dc_failover(false);
    }
    let profile = ExecutionProfile::builder()
        .consistency(consistency)
        .load_balancing_policy(policy.build())
        .request_timeout(Some(Duration::from_millis(
            config.request_timeout_ms.max(1),
        )))
        .build()
        .into_handle();
    let mut builder = SessionBuilder::new()
        .known_nodes(config.node_list())
        .default_execution_profile_handle(profile);
    if !config.username.is_empty() {
        builder = builder.user(&config.username, &config.password);
    }
    if config.tls {
        builder = builder.tls_context(Some(tls_config(config).map_err(|e| open_error(config, e))?));
    }
    if use_keyspace {
        schema::check_keyspace(&config.keyspace).map_err(|e| open_error(config, e))?;
        builder = builder.use_keyspace(&config.keyspace, false);
    }
    builder.build().await.map_err(|e| open_error(config, e))
}

fn now_micros() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64)
}

/// Whether a failed request may succeed if sent again: timeouts, too few
/// replicas, overload, lost connections. Every statement engram sends is
/// idempotent (explicit timestamps), so resending is safe.
fn transient(error: &ExecutionError) -> bool {
    match error {
        ExecutionError::ConnectionPoolError(_) | ExecutionError::RequestTimeout(_) => true,
        ExecutionError::LastAttemptError(attempt) => match attempt {
            RequestAttemptError::DbError(db, _) => matches!(
                db,
                DbError::Unavailable { .. }
                    | DbError::Overloaded
                    | DbError::IsBootstrapping
                    | DbError::ReadTimeout { .. }
                    | DbError::WriteTimeout { .. }
                    | DbError::RateLimitReached { .. }
            ),
            RequestAttemptError::BrokenConnectionError(_)
            | RequestAttemptError::UnableToAllocStreamId => true,
            _ => false,
        },
        _ => false,
    }
}

macro_rules! statements {
    ($($name:ident = $cql:expr;)*) => {
        /// Every statement engram runs, prepared once at start-up.
        struct Statements {
            $($name: PreparedStatement,)*
        }

        impl Statements {
            async fn prepare(session: &Session) -> Result<Self, StoreError> {
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

const MEMORY_SELECT: &str = "SELECT id, kind, category, tags, content, importance, source, \
     content_hash, embedding, status, merged_from, derived_from, last_run_id FROM memories";
const SALIENCE_SELECT: &str =
    "SELECT id, created_at, recent_accesses, reads, read_offset_sum FROM memory_salience";
const LINK_COLUMNS: &str = "from_id, to_id, link_type, confidence, reason, created_at, run_id";

statements! {
    insert_memory = "INSERT INTO memories (user_id, id, kind, category, tags, content, importance, \
        source, content_hash, embedding, status, created_at, merged_from, derived_from, last_run_id) \
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) USING TIMESTAMP ?";
    insert_salience = "INSERT INTO memory_salience (user_id, id, created_at, recent_accesses, reads, \
        read_offset_sum) VALUES (?, ?, ?, ?, ?, ?) USING TIMESTAMP ?";
    insert_hash = "INSERT INTO memory_hashes (user_id, content_hash, id) VALUES (?, ?, ?) \
        USING TIMESTAMP ?";
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
        duplicate_candidates, cycle FROM user_state WHERE user_id = ?";
    users_with_state = "SELECT DISTINCT user_id FROM user_state";
    users_with_memories = "SELECT DISTINCT user_id FROM memory_salience";
    run_report = "SELECT run_id, started_at, report FROM run_reports WHERE user_id = ? AND run_id = ?";
    run_reports_of_user = "SELECT run_id, started_at, report FROM run_reports WHERE user_id = ?";
    run_report_owner = "SELECT user_id FROM run_reports_by_id WHERE run_id = ?";
    schema_versions = "SELECT version FROM schema_migrations";
    ping = "SELECT release_version FROM system.local";
}

#[derive(DeserializeRow)]
struct MemoryRow {
    id: String,
    kind: String,
    category: Option<String>,
    tags: Option<Vec<String>>,
    content: Option<String>,
    importance: f64,
    source: Option<String>,
    content_hash: String,
    embedding: Option<Vec<u8>>,
    status: String,
    merged_from: Option<Vec<String>>,
    derived_from: Option<Vec<String>>,
    last_run_id: Option<String>,
}

#[derive(DeserializeRow)]
struct SalienceRow {
    id: String,
    created_at: i64,
    recent_accesses: Option<Vec<i64>>,
    reads: i64,
    read_offset_sum: i64,
}

impl SalienceRow {
    fn into_salience(self) -> (String, SalienceState) {
        let state = SalienceState::from_parts(
            self.created_at,
            self.recent_accesses.unwrap_or_default(),
            self.reads.max(0) as u64,
            self.read_offset_sum,
        );
        (self.id, state)
    }
}

#[derive(DeserializeRow)]
struct LinkRow {
    from_id: String,
    to_id: String,
    link_type: String,
    confidence: f64,
    reason: Option<String>,
    created_at: i64,
    run_id: Option<String>,
}

#[derive(DeserializeRow)]
struct UserStateRow {
    applied_offsets: Option<BTreeMap<String, i64>>,
    new_since_cycle: i64,
    last_cycle_at: Option<i64>,
    last_run_id: Option<String>,
    duplicate_candidates: i64,
    cycle: Option<String>,
}

#[derive(DeserializeRow)]
struct ReportRow {
    run_id: String,
    started_at: i64,
    report: String,
}

fn embedding_from_blob(bytes: Option<Vec<u8>>) -> Result<Option<Vec<f32>>, StoreError> {
    bytes
        .map(|bytes| embedding_from_bytes(&bytes))
        .transpose()
        .map_err(|reason| corrupt("memories.embedding", reason))
}

fn memory_from_rows(
    user_id: &str,
    row: MemoryRow,
    salience: SalienceState,
) -> Result<Memory, StoreError> {
    Ok(Memory {
        user_id: user_id.to_owned(),
        kind: MemoryKind::parse(&row.kind).ok_or_else(|| corrupt("memories.kind", &row.kind))?,
        status: MemoryStatus::parse(&row.status)
            .ok_or_else(|| corrupt("memories.status", &row.status))?,
        id: row.id,
        category: row.category,
        tags: row.tags.unwrap_or_default(),
        content: row.content.unwrap_or_default(),
        importance: row.importance,
        source: row.source,
        content_hash: row.content_hash,
        embedding: embedding_from_blob(row.embedding)?,
        salience,
        merged_from: row.merged_from.unwrap_or_default(),
        derived_from: row.derived_from.unwrap_or_default(),
        last_run_id: row.last_run_id,
    })
}

fn link_from_row(user_id: &str, row: LinkRow) -> Result<Link, StoreError> {
    Ok(Link {
        user_id: user_id.to_owned(),
        link_type: LinkType::parse(&row.link_type)
            .ok_or_else(|| corrupt("links.link_type", &row.link_type))?,
        from_id: row.from_id,
        to_id: row.to_id,
        confidence: row.confidence,
        reason: row.reason.unwrap_or_default(),
        created_at: row.created_at,
        run_id: row.run_id,
    })
}

fn report_from_row(user_id: &str, row: ReportRow) -> Result<RunReport, StoreError> {
    Ok(RunReport {
        user_id: user_id.to_owned(),
        report: serde_json::from_str(&row.report).map_err(|e| corrupt("run_reports.report", e))?,
        run_id: row.run_id,
        started_at: row.started_at,
    })
}

fn to_json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "{}".to_owned())
}

/// Sorts links as the trait promises and drops duplicates (a link read from
/// both tables).
fn sort_links(links: &mut Vec<Link>) {
    links.sort_by(|a, b| {
        (&a.from_id, &a.to_id, a.link_type.as_str()).cmp(&(
            &b.from_id,
            &b.to_id,
            b.link_type.as_str(),
        ))
    });
    links.dedup_by(|a, b| {
        a.from_id == b.from_id && a.to_id == b.to_id && a.link_type == b.link_type
    });
}

type BoundRow<'a> = Box<dyn SerializeRow + Send + Sync + 'a>;

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
            backoff: Duration::from_millis(config.retry_backoff_ms.max(1)),
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
                Err(error) => return Err(backend(what, error)),
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

    async fn user_state(&self, user_id: &str) -> Result<Option<UserState>, StoreError> {
        let rows: Vec<UserStateRow> = self.rows(&self.statements.user_state, (user_id,)).await?;
        let Some(row) = rows.into_iter().next() else {
            return Ok(None);
        };
        let cycle = match row.cycle {
            Some(text) => {
                serde_json::from_str(&text).map_err(|e| corrupt("user_state.cycle", e))?
            }
            None => Default::default(),
        };
        Ok(Some(UserState {
            user_id: user_id.to_owned(),
            applied_offsets: row.applied_offsets.unwrap_or_default(),
            new_since_cycle: row.new_since_cycle.max(0) as u64,
            last_cycle_at: row.last_cycle_at,
            last_run_id: row.last_run_id,
            duplicate_candidates: row.duplicate_candidates.max(0) as u64,
            cycle,
        }))
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

    /// One user's batches: invisible rows first, then the rest at once.
    async fn commit_user(&self, user: &commit::UserCommit<'_>) -> Result<(), StoreError> {
        for early in &user.early {
            self.send(early).await?;
        }
        self.send(&user.last).await
    }

    /// Sends rows as one logged batch.
    async fn send(&self, ops: &[Op<'_>]) -> Result<(), StoreError> {
        if ops.is_empty() {
            return Ok(());
        }
        let mut batch = Batch::new(BatchType::Logged);
        batch.set_is_idempotent(true);
        let mut values: Vec<BoundRow<'_>> = Vec::with_capacity(ops.len() * 2);
        for op in ops {
            for (statement, row) in self.bind(op) {
                batch.append_statement(statement.clone());
                values.push(row);
            }
        }
        self.retrying("writing a batch", || self.session.batch(&batch, &values))
            .await
            .map(drop)
    }

    /// The statements and values of one row operation.
    fn bind<'a>(&'a self, op: &'a Op<'a>) -> Vec<(&'a PreparedStatement, BoundRow<'a>)> {
        let s = &self.statements;
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
                )),
            )],
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
            Row::UserState(state) => vec![(
                &s.insert_user_state,
                Box::new((
                    state.user_id.as_str(),
                    &state.applied_offsets,
                    state.new_since_cycle as i64,
                    state.last_cycle_at,
                    state.last_run_id.as_deref(),
                    state.duplicate_candidates as i64,
                    to_json(&state.cycle),
                    ts,
                )),
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

/// Memories whose salience row exists, with that salience.
fn join(
    user_id: &str,
    rows: Vec<MemoryRow>,
    mut saliences: HashMap<String, SalienceState>,
) -> Result<Vec<Memory>, StoreError> {
    rows.into_iter()
        .filter_map(|row| {
            let salience = saliences.remove(&row.id)?;
            Some(memory_from_rows(user_id, row, salience))
        })
        .collect()
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embeddings_round_trip_as_little_endian_f32() {
        let vector = vec![0.25_f32, -1.5, 3.0e-7];
        let blob = embedding_bytes(&Some(vector.clone())).unwrap();
        assert_eq!(blob.len(), 12);
        assert_eq!(&blob[..4], &0.25_f32.to_le_bytes());
        assert_eq!(embedding_from_blob(Some(blob)).unwrap(), Some(vector));
        assert!(embedding_from_blob(Some(vec![0; 5])).is_err());
    }

    #[test]
    fn tls_needs_readable_certificate_authorities() {
        let mut config = ScyllaConfig {
            tls: true,
            ..ScyllaConfig::default()
        };
        assert!(tls_config(&config).unwrap_err().contains("tls_ca_file"));
        config.tls_ca_file = "/nonexistent/ca.pem".into();
        assert!(
            tls_config(&config)
                .unwrap_err()
                .contains("/nonexistent/ca.pem")
        );
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").unwrap();
        config.tls_ca_file = empty.display().to_string();
        assert!(
            tls_config(&config)
                .unwrap_err()
                .contains("no PEM certificate")
        );
    }

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
