//! `engram migrate`: the keyspace and the schema versions of `schemas/cql/`.

use std::collections::BTreeMap;
use std::ops::ControlFlow;

use scylla::client::session::Session;
use scylla::response::PagingState;

use tokio::runtime::Handle;
use tracing::info;

use super::super::StoreError;
use super::schema::Backfill;
use super::session::{open_error, session, wait};
use super::{backend, corrupt, now_micros, schema};
use crate::config::ScyllaConfig;

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
    runtime: &Handle,
    on_statement: Box<dyn Fn() + Send>,
) -> Result<MigrateOutcome, StoreError> {
    let keyspace = schema::keyspace_statements(config).map_err(|e| open_error(config, e))?;
    let config = config.clone();
    wait(runtime, async move {
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
                let exists = match schema::added_column(&statement) {
                    Some((table, column)) => {
                        column_exists(&session, &config.keyspace, table, column).await?
                    }
                    None => false,
                };
                if !exists {
                    ddl(statement).await?;
                }
                on_statement();
            }
            if let Some(backfill) = migration.backfill {
                run_backfill(&session, backfill).await?;
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
    })
}

/// Fills in what a new schema version needs from the rows already stored.
async fn run_backfill(session: &Session, backfill: Backfill) -> Result<(), StoreError> {
    match backfill {
        Backfill::WaitingUsers => {
            info!("indexing stored users by input stream");
            let insert = session
                .prepare(
                    "INSERT INTO waiting_users_by_bucket (source, bucket, user_id) \
                     VALUES (?, ?, ?)",
                )
                .await
                .map_err(|e| backend("prepare", e))?;
            let what = "SELECT user_id, applied_offsets FROM user_state";
            let mut paging = PagingState::start();
            loop {
                let (result, next) = session
                    .query_single_page(what, (), paging)
                    .await
                    .map_err(|e| backend(what, e))?;
                let page = result.into_rows_result().map_err(|e| corrupt(what, e))?;
                type StateRow = (String, Option<BTreeMap<String, i64>>);
                for row in page.rows::<StateRow>().map_err(|e| corrupt(what, e))? {
                    let (user_id, offsets) = row.map_err(|e| corrupt(what, e))?;
                    for source in offsets.unwrap_or_default().keys() {
                        session
                            .execute_unpaged(
                                &insert,
                                (source, schema::waiting_bucket(&user_id), &user_id),
                            )
                            .await
                            .map_err(|e| backend("indexing a waiting user", e))?;
                    }
                }
                match next.into_paging_control_flow() {
                    ControlFlow::Continue(state) => paging = state,
                    ControlFlow::Break(()) => return Ok(()),
                }
            }
        }
    }
}

/// Drops the keyspace and everything in it: test teardown, and nothing
/// engram does on its own.
pub fn drop_keyspace(config: &ScyllaConfig, runtime: &Handle) -> Result<(), StoreError> {
    schema::check_keyspace(&config.keyspace).map_err(|e| open_error(config, e))?;
    let config = config.clone();
    wait(runtime, async move {
        let session = session(&config, false).await?;
        let statement = format!("DROP KEYSPACE IF EXISTS {}", config.keyspace);
        session
            .query_unpaged(statement.as_str(), &[])
            .await
            .map_err(|e| backend(&statement, e))?;
        Ok(())
    })
}

/// Whether a migration interrupted after an `ALTER TABLE ... ADD` already
/// added the column.
async fn column_exists(
    session: &Session,
    keyspace: &str,
    table: &str,
    column: &str,
) -> Result<bool, StoreError> {
    let result = session
        .query_unpaged(
            "SELECT column_name FROM system_schema.columns \
             WHERE keyspace_name = ? AND table_name = ? AND column_name = ?",
            (keyspace, table, column),
        )
        .await
        .map_err(|e| backend("reading system_schema.columns", e))?;
    let rows = result
        .into_rows_result()
        .map_err(|e| corrupt("system_schema.columns", e))?;
    Ok(rows.rows_num() > 0)
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
