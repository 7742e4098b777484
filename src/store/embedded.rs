//! The embedded store: SQLite in WAL mode in a local directory.
//!
//! One connection behind a mutex: engram has a single writer per user and
//! batches its writes, so a connection pool would add nothing but contention.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, TryLockError};
use std::time::{Duration, Instant};

use rusqlite::{
    Connection, ErrorCode, OptionalExtension, Row, Transaction, TransactionBehavior, params,
};

use super::{
    Store, StoreError, Write, WriteBatch, bookkeeping_json, embedding_bytes, embedding_from_bytes,
    read_bookkeeping,
};
use crate::model::{Link, LinkType, Memory, MemoryKind, MemoryStatus, RunReport, UserState};
use crate::salience::SalienceState;

const DB_FILE: &str = "engram.sqlite";
/// Schema steps in order; a store at version `n` has run the first `n`.
/// Released steps never change: new ones are appended.
const MIGRATIONS: [&str; 6] = [
    SCHEMA_V1, SCHEMA_V2, SCHEMA_V3, SCHEMA_V4, SCHEMA_V5, SCHEMA_V6,
];
const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;
const SCHEMA_V1: &str = "
CREATE TABLE IF NOT EXISTS memories (
    user_id TEXT NOT NULL,
    id TEXT NOT NULL,
    kind TEXT NOT NULL,
    category TEXT,
    tags TEXT NOT NULL,
    content TEXT NOT NULL,
    importance REAL NOT NULL,
    source TEXT,
    content_hash TEXT NOT NULL,
    embedding BLOB,
    status TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    recent_accesses TEXT NOT NULL,
    reads INTEGER NOT NULL,
    read_offset_sum INTEGER NOT NULL,
    merged_from TEXT NOT NULL,
    derived_from TEXT NOT NULL,
    last_run_id TEXT,
    PRIMARY KEY (user_id, id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS memories_by_time ON memories (user_id, created_at, id);
CREATE TABLE IF NOT EXISTS links (
    user_id TEXT NOT NULL,
    from_id TEXT NOT NULL,
    to_id TEXT NOT NULL,
    link_type TEXT NOT NULL,
    confidence REAL NOT NULL,
    reason TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    run_id TEXT,
    PRIMARY KEY (user_id, from_id, to_id, link_type)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS links_by_target ON links (user_id, to_id);
CREATE TABLE IF NOT EXISTS user_state (
    user_id TEXT PRIMARY KEY,
    new_since_cycle INTEGER NOT NULL,
    last_cycle_at INTEGER,
    last_run_id TEXT
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS applied_offsets (
    user_id TEXT NOT NULL,
    source TEXT NOT NULL,
    applied_offset INTEGER NOT NULL,
    PRIMARY KEY (user_id, source)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS run_reports (
    user_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    started_at INTEGER NOT NULL,
    report TEXT NOT NULL,
    PRIMARY KEY (user_id, run_id)
) WITHOUT ROWID;
";
/// Embedding reuse by content hash, and ingest-time near-duplicate counts.
const SCHEMA_V2: &str = "
CREATE INDEX IF NOT EXISTS memories_by_hash ON memories (user_id, content_hash);
ALTER TABLE user_state ADD COLUMN duplicate_candidates INTEGER NOT NULL DEFAULT 0;
";
/// Trigger bookkeeping per user, and run lookup by id (for `engram undo`).
const SCHEMA_V3: &str = "
ALTER TABLE user_state ADD COLUMN cycle TEXT NOT NULL DEFAULT '{}';
CREATE INDEX IF NOT EXISTS run_reports_by_id ON run_reports (run_id);
";

/// Salience in a narrow table of its own: reads change it constantly, and
/// rewriting a whole memory row (content, vector) for each read made flushes
/// write several pages per read. `memories` keeps the values of its last
/// full write in its own columns; `memory_salience` is the truth.
const SCHEMA_V4: &str = "
CREATE TABLE IF NOT EXISTS memory_salience (
    user_id TEXT NOT NULL,
    id TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    recent_accesses TEXT NOT NULL,
    reads INTEGER NOT NULL,
    read_offset_sum INTEGER NOT NULL,
    PRIMARY KEY (user_id, id)
) WITHOUT ROWID;
INSERT OR REPLACE INTO memory_salience
    (user_id, id, created_at, recent_accesses, reads, read_offset_sum)
    SELECT user_id, id, created_at, recent_accesses, reads, read_offset_sum FROM memories;
";

/// The users waiting on each input stream, so a worker given a partition
/// reads those instead of every user. Rows from before this version count
/// as waiting until their user's state is next written.
const SCHEMA_V5: &str = "
ALTER TABLE applied_offsets ADD COLUMN waiting INTEGER NOT NULL DEFAULT 1;
CREATE INDEX IF NOT EXISTS waiting_by_source ON applied_offsets (source, user_id) WHERE waiting = 1;
";

/// Platform edits and erasure: the time of a memory's last applied
/// update (an older one arriving later is skipped), and one tombstone per
/// erased user, keyed by a hash of the id.
const SCHEMA_V6: &str = "
ALTER TABLE memories ADD COLUMN updated_at INTEGER;
CREATE TABLE IF NOT EXISTS erased_users (
    user_hash TEXT PRIMARY KEY,
    erased_at INTEGER NOT NULL
) WITHOUT ROWID;
";

const MEMORY_COLUMNS: &str = "user_id, id, kind, category, tags, content, importance, source, \
     content_hash, embedding, status, created_at, recent_accesses, reads, read_offset_sum, \
     merged_from, derived_from, last_run_id, updated_at";
/// A memory as read: its row with the salience from `memory_salience`.
const MEMORY_SELECT: &str = "SELECT m.user_id, m.id, m.kind, m.category, m.tags, m.content, \
     m.importance, m.source, m.content_hash, m.embedding, m.status, m.created_at, \
     s.recent_accesses, s.reads, s.read_offset_sum, m.merged_from, m.derived_from, m.last_run_id, \
     m.updated_at FROM memories m JOIN memory_salience s ON s.user_id = m.user_id AND s.id = m.id";
const LINK_COLUMNS: &str =
    "user_id, from_id, to_id, link_type, confidence, reason, created_at, run_id";

/// SQLite-backed [`Store`] in a directory of its own.
///
/// A pool of connections, so partition workers and cycles read side by side
/// (WAL readers do not wait for the writer) and prepare their batches
/// without queueing behind one lock; SQLite still takes one write
/// transaction at a time, each `BEGIN IMMEDIATE`, waiting its turn.
pub struct EmbeddedStore {
    path: PathBuf,
    connections: Vec<Mutex<Connection>>,
    /// Where the next search for a free connection starts.
    next: AtomicUsize,
}

/// Most connections a store opens: more than the cores gain nothing.
const MOST_CONNECTIONS: usize = 8;
/// The page cache all connections share out (64 MiB): with SQLite's 2 MiB
/// default a flush's reads went through `pread` page by page.
const CACHE_KIB: usize = 65_536;
/// How long a writer waits for another connection's write transaction.
const BUSY_WAIT: Duration = Duration::from_secs(10);

/// Brings the schema to [`SCHEMA_VERSION`], one step per transaction. Each
/// step re-reads the version under the write lock (`BEGIN IMMEDIATE`), so
/// processes opening the same new store at once migrate it once.
fn migrate(connection: &Connection) -> Result<(), String> {
    loop {
        retry_busy(|| connection.execute_batch("BEGIN IMMEDIATE")).map_err(|e| e.to_string())?;
        let step = (|| {
            let version: i64 = connection
                .query_row("PRAGMA user_version", [], |row| row.get(0))
                .map_err(|e| e.to_string())?;
            if version > SCHEMA_VERSION {
                return Err(format!(
                    "schema version {version} is newer than this engram ({SCHEMA_VERSION})"
                ));
            }
            let Some(sql) = MIGRATIONS.get(version.max(0) as usize) else {
                return Ok(false);
            };
            connection
                .execute_batch(&format!("{sql} PRAGMA user_version = {};", version + 1))
                .map_err(|e| format!("schema migration {} failed: {e}", version + 1))?;
            Ok(true)
        })();
        match step {
            Ok(more) => {
                if let Err(error) = retry_busy(|| connection.execute_batch("COMMIT")) {
                    let _ = connection.execute_batch("ROLLBACK");
                    return Err(error.to_string());
                }
                if !more {
                    return Ok(());
                }
            }
            Err(error) => {
                let _ = connection.execute_batch("ROLLBACK");
                return Err(error);
            }
        }
    }
}

/// Runs `step` again, for up to ten seconds, while SQLite answers BUSY. It
/// does so at once, without waiting, for some lock conflicts, such as
/// another connection switching the same new database to WAL.
fn retry_busy<T>(mut step: impl FnMut() -> rusqlite::Result<T>) -> rusqlite::Result<T> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match step() {
            Err(error)
                if matches!(
                    error.sqlite_error_code(),
                    Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
                ) && Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(10));
            }
            result => return result,
        }
    }
}

impl EmbeddedStore {
    /// Opens (creating if needed) the store in `dir`.
    pub fn open(dir: &Path) -> Result<Self, StoreError> {
        let open_error = |reason: String| StoreError::Open {
            path: dir.display().to_string(),
            reason,
        };
        std::fs::create_dir_all(dir).map_err(|e| open_error(e.to_string()))?;
        let path = dir.join(DB_FILE);
        let count = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .clamp(2, MOST_CONNECTIONS);
        let mut connections = Vec::with_capacity(count);
        for _ in 0..count {
            let connection = open_connection(&path, CACHE_KIB / count).map_err(open_error)?;
            if connections.is_empty() {
                migrate(&connection).map_err(open_error)?;
            }
            connections.push(Mutex::new(connection));
        }
        Ok(Self {
            path,
            connections,
            next: AtomicUsize::new(0),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A free connection of the pool, or, when every one is in use, the
    /// next in turn once it is free.
    fn connection(&self) -> MutexGuard<'_, Connection> {
        // A panic while holding a lock cannot leave SQLite inconsistent (its
        // transaction rolls back), so a poisoned lock is safe to reuse.
        let count = self.connections.len();
        let start = self.next.fetch_add(1, Ordering::Relaxed);
        for k in 0..count {
            match self.connections[(start + k) % count].try_lock() {
                Ok(guard) => return guard,
                Err(TryLockError::Poisoned(poisoned)) => return poisoned.into_inner(),
                Err(TryLockError::WouldBlock) => {}
            }
        }
        self.connections[start % count]
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// One connection of the pool, with its settings.
fn open_connection(path: &Path, cache_kib: usize) -> Result<Connection, String> {
    let connection = Connection::open(path).map_err(|e| e.to_string())?;
    // WAL lets readers run beside the writer; FULL sync makes a returned
    // commit survive power loss, which is what lets offsets be committed
    // upstream after it. Memory-mapped reads, and a larger WAL between
    // checkpoints: each flush rewrites many rows.
    retry_busy(|| {
        connection.execute_batch(&format!(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON; \
             PRAGMA secure_delete = ON; \
             PRAGMA cache_size = -{cache_kib}; PRAGMA mmap_size = 1073741824; \
             PRAGMA wal_autocheckpoint = 16384;"
        ))
    })
    .map_err(|e| e.to_string())?;
    connection
        .busy_timeout(BUSY_WAIT)
        .map_err(|e| e.to_string())?;
    // Every statement of a flush stays prepared.
    connection.set_prepared_statement_cache_capacity(64);
    Ok(connection)
}

/// SQLite's answer as a store error: busy, locked, I/O and full-disk
/// failures pass (another process, a disk that gets space back); anything
/// else (constraints, a schema that is not ours) will not.
fn backend(error: rusqlite::Error) -> StoreError {
    if let rusqlite::Error::FromSqlConversionFailure(_, _, cause) = &error {
        return StoreError::Corrupt {
            what: "a stored row".to_owned(),
            reason: cause.to_string(),
        };
    }
    let passing = matches!(
        error.sqlite_error_code(),
        Some(
            ErrorCode::DatabaseBusy
                | ErrorCode::DatabaseLocked
                | ErrorCode::SystemIoFailure
                | ErrorCode::DiskFull
                | ErrorCode::OutOfMemory
                | ErrorCode::CannotOpen
                | ErrorCode::FileLockingProtocolFailed
        )
    );
    if passing {
        StoreError::unavailable("SQLite", error)
    } else {
        StoreError::refused("a SQLite request", error)
    }
}

fn to_json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "[]".to_owned())
}

/// Runs a statement through the connection's statement cache: parsing SQL
/// again for every write was most of a flush's time.
fn cached_execute(
    tx: &Transaction<'_>,
    sql: &str,
    params: impl rusqlite::Params,
) -> rusqlite::Result<usize> {
    tx.prepare_cached(sql)?.execute(params)
}

/// One write of a batch, inside the batch's transaction.
fn apply(tx: &Transaction<'_>, write: &Write) -> Result<(), StoreError> {
    match write {
        Write::PutMemory(m) => put_memory(tx, m),
        Write::PutSalience {
            user_id,
            memory_id,
            salience,
        } => put_salience(tx, user_id, memory_id, salience),
        Write::PutStatus {
            user_id,
            memory_id,
            status,
            last_run_id,
        } => put_status(tx, user_id, memory_id, *status, last_run_id.as_deref()),
        Write::DeleteMemory { user_id, memory_id } => delete_memory(tx, user_id, memory_id),
        Write::PutLink(l) => put_link(tx, l),
        Write::DeleteLink {
            user_id,
            from_id,
            to_id,
            link_type,
        } => delete_link(tx, user_id, from_id, to_id, link_type),
        Write::PutUserState(s) => put_user_state(tx, s),
        Write::PutRunReport(r) => put_run_report(tx, r),
        Write::EraseUser { user_id, erased_at } => erase_user(tx, user_id, *erased_at),
        // The hash is a column of the memory's own row (indexed): it went
        // or changed with the row.
        Write::ForgetHash { .. } => Ok(()),
    }
}

/// Every row of a user, in every table, and the tombstone that outlives
/// them. With `secure_delete` on, the freed pages are zeroed.
fn erase_user(tx: &Transaction<'_>, user_id: &str, erased_at: i64) -> Result<(), StoreError> {
    for table in USER_TABLES {
        cached_execute(
            tx,
            &format!("DELETE FROM {table} WHERE user_id = ?1"),
            params![user_id],
        )
        .map_err(backend)?;
    }
    cached_execute(
        tx,
        "INSERT INTO erased_users (user_hash, erased_at) VALUES (?1, ?2) \
         ON CONFLICT (user_hash) DO UPDATE SET erased_at = max(erased_at, excluded.erased_at)",
        params![super::tombstone_key(user_id), erased_at],
    )
    .map_err(backend)?;
    Ok(())
}

/// Every table that holds rows of a user (keyed by `user_id`).
const USER_TABLES: [&str; 6] = [
    "memories",
    "memory_salience",
    "links",
    "user_state",
    "applied_offsets",
    "run_reports",
];

/// A memory row and its salience row, replacing both.
fn put_memory(tx: &Transaction<'_>, m: &Memory) -> Result<(), StoreError> {
    cached_execute(tx,
        &format!(
            "INSERT OR REPLACE INTO memories ({MEMORY_COLUMNS}) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)"
        ),
        params![
            m.user_id,
            m.id,
            m.kind.as_str(),
            m.category,
            to_json(&m.tags),
            m.content,
            m.importance,
            m.source,
            m.content_hash,
            embedding_bytes(&m.embedding),
            m.status.as_str(),
            m.salience.created_at(),
            to_json(&m.salience.recent()),
            m.salience.access_count() as i64,
            m.salience.read_offset_sum(),
            to_json(&m.merged_from),
            to_json(&m.derived_from),
            m.last_run_id,
            m.updated_at,
        ],
    )
    .map_err(backend)?;
    cached_execute(
        tx,
        "INSERT OR REPLACE INTO memory_salience \
         (user_id, id, created_at, recent_accesses, reads, read_offset_sum) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![
            m.user_id,
            m.id,
            m.salience.created_at(),
            to_json(&m.salience.recent()),
            m.salience.access_count() as i64,
            m.salience.read_offset_sum(),
        ],
    )
    .map_err(backend)?;
    Ok(())
}

/// New reads of an existing memory; a memory that is not there is an error.
fn put_salience(
    tx: &Transaction<'_>,
    user_id: &str,
    memory_id: &str,
    salience: &SalienceState,
) -> Result<(), StoreError> {
    let changed = cached_execute(
        tx,
        "UPDATE memory_salience SET recent_accesses = ?3, reads = ?4, read_offset_sum = ?5 \
             WHERE user_id = ?1 AND id = ?2",
        params![
            user_id,
            memory_id,
            to_json(&salience.recent()),
            salience.access_count() as i64,
            salience.read_offset_sum(),
        ],
    )
    .map_err(backend)?;
    found_memory(changed, user_id, memory_id)
}

/// An update of one memory's row that changed no row means the memory is
/// not there: the batch fails rather than write nothing.
fn found_memory(changed: usize, user_id: &str, memory_id: &str) -> Result<(), StoreError> {
    if changed == 0 {
        return Err(StoreError::MissingMemory {
            user_id: user_id.to_owned(),
            memory_id: memory_id.to_owned(),
        });
    }
    Ok(())
}

/// A new status of an existing memory; a memory that is not there is an
/// error.
fn put_status(
    tx: &Transaction<'_>,
    user_id: &str,
    memory_id: &str,
    status: MemoryStatus,
    last_run_id: Option<&str>,
) -> Result<(), StoreError> {
    let changed = cached_execute(
        tx,
        "UPDATE memories SET status = ?3, last_run_id = ?4 WHERE user_id = ?1 AND id = ?2",
        params![user_id, memory_id, status.as_str(), last_run_id],
    )
    .map_err(backend)?;
    found_memory(changed, user_id, memory_id)
}

/// A memory, its salience and every link from or to it.
fn delete_memory(tx: &Transaction<'_>, user_id: &str, memory_id: &str) -> Result<(), StoreError> {
    cached_execute(
        tx,
        "DELETE FROM links WHERE user_id = ?1 AND (from_id = ?2 OR to_id = ?2)",
        params![user_id, memory_id],
    )
    .map_err(backend)?;
    cached_execute(
        tx,
        "DELETE FROM memories WHERE user_id = ?1 AND id = ?2",
        params![user_id, memory_id],
    )
    .map_err(backend)?;
    cached_execute(
        tx,
        "DELETE FROM memory_salience WHERE user_id = ?1 AND id = ?2",
        params![user_id, memory_id],
    )
    .map_err(backend)?;
    Ok(())
}

/// One link, replacing one of the same ends and type.
fn put_link(tx: &Transaction<'_>, l: &Link) -> Result<(), StoreError> {
    cached_execute(
        tx,
        &format!(
            "INSERT OR REPLACE INTO links ({LINK_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
        ),
        params![
            l.user_id,
            l.from_id,
            l.to_id,
            l.link_type.as_str(),
            l.confidence,
            l.reason,
            l.created_at,
            l.run_id
        ],
    )
    .map_err(backend)?;
    Ok(())
}

/// One link.
fn delete_link(
    tx: &Transaction<'_>,
    user_id: &str,
    from_id: &str,
    to_id: &str,
    link_type: &LinkType,
) -> Result<(), StoreError> {
    cached_execute(
        tx,
        "DELETE FROM links WHERE user_id = ?1 AND from_id = ?2 AND to_id = ?3 AND link_type = ?4",
        params![user_id, from_id, to_id, link_type.as_str()],
    )
    .map_err(backend)?;
    Ok(())
}

/// A user's state, its applied offsets replaced as a whole.
fn put_user_state(tx: &Transaction<'_>, s: &UserState) -> Result<(), StoreError> {
    cached_execute(
        tx,
        "INSERT OR REPLACE INTO user_state \
         (user_id, new_since_cycle, last_cycle_at, last_run_id, duplicate_candidates, cycle) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![
            s.user_id,
            s.new_since_cycle as i64,
            s.last_cycle_at,
            s.last_run_id,
            s.duplicate_candidates as i64,
            bookkeeping_json(s),
        ],
    )
    .map_err(backend)?;
    cached_execute(
        tx,
        "DELETE FROM applied_offsets WHERE user_id = ?1",
        params![s.user_id],
    )
    .map_err(backend)?;
    for (source, offset) in &s.applied_offsets {
        cached_execute(
            tx,
            "INSERT INTO applied_offsets (user_id, source, applied_offset, waiting) \
             VALUES (?1, ?2, ?3, ?4)",
            params![s.user_id, source, offset, s.is_waiting()],
        )
        .map_err(backend)?;
    }
    Ok(())
}

/// A run report, replacing one of the same run.
fn put_run_report(tx: &Transaction<'_>, r: &RunReport) -> Result<(), StoreError> {
    cached_execute(
        tx,
        "INSERT OR REPLACE INTO run_reports (user_id, run_id, started_at, report) \
         VALUES (?1, ?2, ?3, ?4)",
        params![r.user_id, r.run_id, r.started_at, r.report.to_string()],
    )
    .map_err(backend)?;
    Ok(())
}

/// Reads a JSON text column, reporting which column was corrupt.
fn json_column<T: serde::de::DeserializeOwned>(
    row: &Row<'_>,
    index: usize,
    what: &str,
) -> rusqlite::Result<T> {
    let text: String = row.get(index)?;
    serde_json::from_str(&text).map_err(|e| corrupt(index, what, &e.to_string()))
}

fn corrupt(index: usize, what: &str, reason: &str) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(
        index,
        rusqlite::types::Type::Text,
        format!("{what}: {reason}").into(),
    )
}

/// Decodes an embedding column (little-endian f32s).
fn embedding_column(row: &Row<'_>, index: usize) -> rusqlite::Result<Option<Vec<f32>>> {
    let bytes: Option<Vec<u8>> = row.get(index)?;
    bytes
        .map(|bytes| embedding_from_bytes(&bytes))
        .transpose()
        .map_err(|reason| corrupt(index, "embedding", reason))
}

fn memory_from_row(row: &Row<'_>) -> rusqlite::Result<Memory> {
    let kind: String = row.get(2)?;
    let status: String = row.get(10)?;
    let embedding = embedding_column(row, 9)?;
    let created_at: i64 = row.get(11)?;
    let recent: Vec<i64> = json_column(row, 12, "recent_accesses")?;
    let reads: i64 = row.get(13)?;
    let read_offset_sum: i64 = row.get(14)?;
    Ok(Memory {
        user_id: row.get(0)?,
        id: row.get(1)?,
        kind: MemoryKind::parse(&kind).ok_or_else(|| corrupt(2, "kind", &kind))?,
        category: row.get(3)?,
        tags: json_column(row, 4, "tags")?,
        content: row.get(5)?,
        importance: row.get(6)?,
        source: row.get(7)?,
        content_hash: row.get(8)?,
        embedding,
        status: MemoryStatus::parse(&status).ok_or_else(|| corrupt(10, "status", &status))?,
        salience: SalienceState::from_parts(
            created_at,
            recent,
            reads.max(0) as u64,
            read_offset_sum,
        ),
        merged_from: json_column(row, 15, "merged_from")?,
        derived_from: json_column(row, 16, "derived_from")?,
        last_run_id: row.get(17)?,
        updated_at: row.get(18)?,
    })
}

fn link_from_row(row: &Row<'_>) -> rusqlite::Result<Link> {
    let link_type: String = row.get(3)?;
    Ok(Link {
        user_id: row.get(0)?,
        from_id: row.get(1)?,
        to_id: row.get(2)?,
        link_type: LinkType::parse(&link_type)
            .ok_or_else(|| corrupt(3, "link_type", &link_type))?,
        confidence: row.get(4)?,
        reason: row.get(5)?,
        created_at: row.get(6)?,
        run_id: row.get(7)?,
    })
}

fn report_from_row(row: &Row<'_>) -> rusqlite::Result<RunReport> {
    Ok(RunReport {
        user_id: row.get(0)?,
        run_id: row.get(1)?,
        started_at: row.get(2)?,
        report: json_column(row, 3, "report")?,
    })
}

impl Store for EmbeddedStore {
    fn commit(&self, batch: &WriteBatch) -> Result<(), StoreError> {
        if batch.is_empty() {
            return Ok(());
        }
        let mut connection = self.connection();
        // The write lock up front: a deferred transaction that read first
        // could not take it after another connection's write, and would
        // fail busy instead of waiting.
        let tx = connection
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(backend)?;
        for write in &batch.writes {
            // Dropping `tx` on error rolls the whole batch back.
            apply(&tx, write)?;
        }
        tx.commit().map_err(backend)?;
        if batch.forgets() {
            // The WAL still holds the pages as they were before: copy the
            // zeroed pages into the database and empty it, so what was
            // deleted is in no file. Readers in the way only delay it to
            // the next forgetting commit; nothing is lost meanwhile.
            if let Err(error) =
                connection.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            {
                tracing::warn!(%error, "the WAL could not be emptied after a deletion");
            }
        }
        Ok(())
    }

    fn ping(&self) -> Result<(), StoreError> {
        self.connection()
            .query_row("SELECT 1", [], |_| Ok(()))
            .map_err(backend)
    }

    fn memory(&self, user_id: &str, memory_id: &str) -> Result<Option<Memory>, StoreError> {
        let connection = self.connection();
        connection
            .prepare_cached(&format!(
                "{MEMORY_SELECT} WHERE m.user_id = ?1 AND m.id = ?2"
            ))
            .and_then(|mut statement| {
                statement
                    .query_row(params![user_id, memory_id], memory_from_row)
                    .optional()
            })
            .map_err(backend)
    }

    fn memories_by_id(&self, user_id: &str, ids: &[&str]) -> Result<Vec<Memory>, StoreError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let connection = self.connection();
        // One statement for any number of ids: they travel as a JSON array.
        let mut statement = connection
            .prepare_cached(&format!(
                "{MEMORY_SELECT} WHERE m.user_id = ?1 \
                 AND m.id IN (SELECT value FROM json_each(?2))"
            ))
            .map_err(backend)?;
        let rows = statement
            .query_map(params![user_id, to_json(&ids)], memory_from_row)
            .map_err(backend)?;
        rows.collect::<Result<_, _>>().map_err(backend)
    }

    fn saliences_by_id(
        &self,
        user_id: &str,
        ids: &[&str],
    ) -> Result<Vec<(String, SalienceState)>, StoreError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let connection = self.connection();
        let mut statement = connection
            .prepare_cached(
                "SELECT id, created_at, recent_accesses, reads, read_offset_sum \
                 FROM memory_salience WHERE user_id = ?1 \
                 AND id IN (SELECT value FROM json_each(?2))",
            )
            .map_err(backend)?;
        let rows = statement
            .query_map(params![user_id, to_json(&ids)], |row| {
                let reads: i64 = row.get(3)?;
                let salience = SalienceState::from_parts(
                    row.get(1)?,
                    json_column(row, 2, "recent_accesses")?,
                    reads.max(0) as u64,
                    row.get(4)?,
                );
                Ok((row.get(0)?, salience))
            })
            .map_err(backend)?;
        rows.collect::<Result<_, _>>().map_err(backend)
    }

    fn memories(&self, user_id: &str) -> Result<Vec<Memory>, StoreError> {
        let connection = self.connection();
        let mut statement = connection
            .prepare_cached(&format!(
                "{MEMORY_SELECT} WHERE m.user_id = ?1 ORDER BY m.created_at, m.id"
            ))
            .map_err(backend)?;
        let rows = statement
            .query_map(params![user_id], memory_from_row)
            .map_err(backend)?;
        rows.collect::<Result<_, _>>().map_err(backend)
    }

    fn links_of(&self, user_id: &str, memory_id: &str) -> Result<Vec<Link>, StoreError> {
        let connection = self.connection();
        let mut statement = connection
            .prepare_cached(&format!(
                "SELECT {LINK_COLUMNS} FROM links WHERE user_id = ?1 AND from_id = ?2 \
                 UNION SELECT {LINK_COLUMNS} FROM links WHERE user_id = ?1 AND to_id = ?2 \
                 ORDER BY from_id, to_id, link_type"
            ))
            .map_err(backend)?;
        let rows = statement
            .query_map(params![user_id, memory_id], link_from_row)
            .map_err(backend)?;
        rows.collect::<Result<_, _>>().map_err(backend)
    }

    fn links(&self, user_id: &str) -> Result<Vec<Link>, StoreError> {
        let connection = self.connection();
        let mut statement = connection
            .prepare_cached(&format!(
                "SELECT {LINK_COLUMNS} FROM links WHERE user_id = ?1 ORDER BY from_id, to_id, link_type"
            ))
            .map_err(backend)?;
        let rows = statement
            .query_map(params![user_id], link_from_row)
            .map_err(backend)?;
        rows.collect::<Result<_, _>>().map_err(backend)
    }

    fn embedding_for_hash(
        &self,
        user_id: &str,
        content_hash: &str,
    ) -> Result<Option<Vec<f32>>, StoreError> {
        let connection = self.connection();
        connection
            .prepare_cached(
                "SELECT embedding FROM memories WHERE user_id = ?1 AND content_hash = ?2 \
                 AND embedding IS NOT NULL ORDER BY id LIMIT 1",
            )
            .and_then(|mut statement| {
                statement
                    .query_row(params![user_id, content_hash], |row| {
                        embedding_column(row, 0)
                    })
                    .optional()
            })
            .map(Option::flatten)
            .map_err(backend)
    }

    fn user_state(&self, user_id: &str) -> Result<Option<UserState>, StoreError> {
        let connection = self.connection();
        let state = connection
            .prepare_cached(
                "SELECT user_id, new_since_cycle, last_cycle_at, last_run_id, duplicate_candidates, \
                 cycle FROM user_state WHERE user_id = ?1",
            )
            .and_then(|mut statement| {
                statement.query_row(params![user_id], |row| {
                    let new_since_cycle: i64 = row.get(1)?;
                    let duplicate_candidates: i64 = row.get(4)?;
                    let mut state = UserState {
                        user_id: row.get(0)?,
                        new_since_cycle: new_since_cycle.max(0) as u64,
                        last_cycle_at: row.get(2)?,
                        last_run_id: row.get(3)?,
                        duplicate_candidates: duplicate_candidates.max(0) as u64,
                        ..UserState::default()
                    };
                    let bookkeeping: String = row.get(5)?;
                    read_bookkeeping(&mut state, &bookkeeping)
                        .map_err(|e| corrupt(5, "user_state.cycle", &e.to_string()))?;
                    Ok(state)
                })
                .optional()
            })
            .map_err(backend)?;
        let Some(mut state) = state else {
            return Ok(None);
        };
        let mut statement = connection
            .prepare_cached("SELECT source, applied_offset FROM applied_offsets WHERE user_id = ?1")
            .map_err(backend)?;
        let offsets = statement
            .query_map(params![user_id], |row| Ok((row.get(0)?, row.get(1)?)))
            .map_err(backend)?;
        for offset in offsets {
            let (source, offset): (String, i64) = offset.map_err(backend)?;
            state.applied_offsets.insert(source, offset);
        }
        Ok(Some(state))
    }

    fn users(&self) -> Result<Vec<String>, StoreError> {
        let connection = self.connection();
        let mut statement = connection
            .prepare_cached(
                "SELECT user_id FROM user_state UNION SELECT DISTINCT user_id FROM memories ORDER BY 1",
            )
            .map_err(backend)?;
        let rows = statement.query_map([], |row| row.get(0)).map_err(backend)?;
        rows.collect::<Result<_, _>>().map_err(backend)
    }

    fn waiting_users(&self, sources: &[String]) -> Result<Vec<String>, StoreError> {
        let connection = self.connection();
        let mut statement = connection
            .prepare_cached("SELECT user_id FROM applied_offsets WHERE source = ?1 AND waiting = 1")
            .map_err(backend)?;
        let mut users = Vec::new();
        for source in sources {
            let rows = statement
                .query_map(params![source], |row| row.get(0))
                .map_err(backend)?;
            for user in rows {
                users.push(user.map_err(backend)?);
            }
        }
        users.sort();
        users.dedup();
        Ok(users)
    }

    fn run_report(&self, user_id: &str, run_id: &str) -> Result<Option<RunReport>, StoreError> {
        self.connection()
            .query_row(
                "SELECT user_id, run_id, started_at, report FROM run_reports WHERE user_id = ?1 AND run_id = ?2",
                params![user_id, run_id],
                report_from_row,
            )
            .optional()
            .map_err(backend)
    }

    fn find_run_report(&self, run_id: &str) -> Result<Option<RunReport>, StoreError> {
        self.connection()
            .query_row(
                "SELECT user_id, run_id, started_at, report FROM run_reports WHERE run_id = ?1 \
                 ORDER BY user_id LIMIT 1",
                params![run_id],
                report_from_row,
            )
            .optional()
            .map_err(backend)
    }

    fn erased_at(&self, user_id: &str) -> Result<Option<i64>, StoreError> {
        self.connection()
            .prepare_cached("SELECT erased_at FROM erased_users WHERE user_hash = ?1")
            .and_then(|mut statement| {
                statement
                    .query_row(params![super::tombstone_key(user_id)], |row| row.get(0))
                    .optional()
            })
            .map_err(backend)
    }

    fn run_reports(&self, user_id: &str) -> Result<Vec<RunReport>, StoreError> {
        let connection = self.connection();
        let mut statement = connection
            .prepare_cached(
                "SELECT user_id, run_id, started_at, report FROM run_reports WHERE user_id = ?1 \
                 ORDER BY started_at, run_id",
            )
            .map_err(backend)?;
        let rows = statement
            .query_map(params![user_id], report_from_row)
            .map_err(backend)?;
        rows.collect::<Result<_, _>>().map_err(backend)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readers_and_writers_do_not_wait_for_a_busy_connection() {
        let dir = tempfile::tempdir().unwrap();
        let store = std::sync::Arc::new(EmbeddedStore::open(dir.path()).unwrap());
        // One connection held, as a worker in the middle of a flush holds it:
        // another worker still reads and commits.
        let held = store.connection();
        let other = std::sync::Arc::clone(&store);
        let (done, finished) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut batch = WriteBatch::default();
            batch.push(Write::PutUserState(UserState::new("u2")));
            let committed = other.commit(&batch).is_ok();
            let read = other.user_state("u2").map(|state| state.is_some());
            let _ = done.send((committed, read.unwrap_or(false)));
        });
        let outcome = finished.recv_timeout(Duration::from_secs(20));
        drop(held);
        assert_eq!(outcome, Ok((true, true)));
        // Writers on every connection at once all land, one transaction at
        // a time.
        let writers: Vec<_> = (0..8)
            .map(|k| {
                let store = std::sync::Arc::clone(&store);
                std::thread::spawn(move || {
                    let mut batch = WriteBatch::default();
                    batch.push(Write::PutUserState(UserState::new(&format!("w{k}"))));
                    store.commit(&batch)
                })
            })
            .collect();
        for writer in writers {
            writer.join().unwrap().unwrap();
        }
        assert_eq!(store.users().unwrap().len(), 9);
    }

    #[test]
    fn a_version_1_store_is_migrated_in_place() {
        let dir = tempfile::tempdir().unwrap();
        {
            let connection = Connection::open(dir.path().join(DB_FILE)).unwrap();
            connection.execute_batch(SCHEMA_V1).unwrap();
            connection
                .execute(
                    "INSERT INTO user_state (user_id, new_since_cycle) VALUES ('u1', 4)",
                    [],
                )
                .unwrap();
            connection
                .execute(
                    "INSERT INTO applied_offsets (user_id, source, applied_offset) \
                     VALUES ('u1', 'in/0', 9)",
                    [],
                )
                .unwrap();
            connection.pragma_update(None, "user_version", 1).unwrap();
        }
        let store = EmbeddedStore::open(dir.path()).unwrap();
        let state = store.user_state("u1").unwrap().unwrap();
        assert_eq!((state.new_since_cycle, state.duplicate_candidates), (4, 0));
        // Users from before the waiting index count as waiting until their
        // state is next written: a worker checks them once rather than
        // missing a cycle they had queued.
        assert_eq!(store.waiting_users(&["in/0".to_owned()]).unwrap(), ["u1"]);
        let version: i64 = store
            .connection()
            .query_row("PRAGMA user_version", [], |row| row.get(0))
            .unwrap();
        assert_eq!(version, SCHEMA_VERSION);
        drop(store);
        // Reopening runs nothing again.
        EmbeddedStore::open(dir.path()).unwrap();
    }

    #[test]
    fn busy_and_full_disks_pass_while_refused_requests_and_bad_rows_do_not() {
        let sqlite = |code: i32| {
            backend(rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(code),
                None,
            ))
        };
        assert!(sqlite(rusqlite::ffi::SQLITE_BUSY).is_transient());
        assert!(sqlite(rusqlite::ffi::SQLITE_FULL).is_transient());
        assert!(sqlite(rusqlite::ffi::SQLITE_IOERR).is_transient());
        assert!(!sqlite(rusqlite::ffi::SQLITE_CONSTRAINT).is_transient());
        let bad_row = backend(rusqlite::Error::FromSqlConversionFailure(
            5,
            rusqlite::types::Type::Text,
            "expected a JSON list".into(),
        ));
        assert!(matches!(bad_row, StoreError::Corrupt { .. }), "{bad_row}");
        assert!(!bad_row.is_transient());
    }
}
