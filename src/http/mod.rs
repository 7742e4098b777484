//! The operator's HTTP endpoint: probes, metrics, and consolidation on demand.
//!
//! | route | answer |
//! |---|---|
//! | `GET /healthz` | 200 while the process runs |
//! | `GET /readyz` | 200 when the store answers and, in service mode, a broker is up, partitions are assigned and no partition's batches are failing; 503 with the reasons otherwise |
//! | `GET /metrics` | Prometheus text format |
//! | `POST /users/{id}/consolidate[?execute=true]` | runs a cycle (dry run unless `execute=true`) and returns its report |
//! | `GET /users/{id}/report/latest` | the user's most recent run report |
//! | `GET /users/{id}/report.html[?run=RUN_ID][&memory=ID]` | the user's history page, or one run's page; `memory` centres the link graph |
//!
//! With `http.token` set, every route but the two probes requires
//! `Authorization: Bearer TOKEN` (orchestrators probe without credentials).
//!
//! A consolidation request is not run here: it goes into the input stream as
//! a `consolidation.requested` event, so the partition worker that owns the
//! user runs it (one writer per user, in order with the user's events). The
//! handler then waits for the run's report to be stored; its run id is known
//! in advance (derived from the request's event id).

mod config;

pub use config::HttpConfig;

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{Path, Query, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::json;
use thiserror::Error;
use tokio::runtime::Handle;

use crate::emit::RequestSink;
use crate::metrics::Metrics;
use crate::report::{self, HistoryPage, UserRecords};
use crate::salience::SalienceParams;
use crate::store::{Store, StoreError};
use crate::trigger::{manual_request, request_run_id};

#[derive(Debug, Error)]
pub enum HttpError {
    #[error("cannot listen on {bind}: {reason}")]
    Bind { bind: String, reason: String },
}

/// What readiness depends on, updated by the consumer.
#[derive(Debug)]
pub struct Health {
    service: bool,
    broker_up: AtomicBool,
    partitions: AtomicUsize,
    /// Partitions whose worker cannot make progress (a store write or an
    /// output delivery keeps failing), with the latest error. A store that
    /// answers reads but refuses writes (full disk, quota) shows up here,
    /// not in the ping.
    failing: Mutex<BTreeMap<i32, String>>,
}

impl Health {
    /// A consumer-group member: ready once connected and assigned.
    pub fn service() -> Self {
        Self {
            service: true,
            broker_up: AtomicBool::new(false),
            partitions: AtomicUsize::new(0),
            failing: Mutex::new(BTreeMap::new()),
        }
    }

    /// Embedded mode: ready whenever the store answers.
    pub fn embedded() -> Self {
        Self {
            service: false,
            ..Self::service()
        }
    }

    pub fn set_broker_up(&self, up: bool) {
        self.broker_up.store(up, Ordering::Relaxed);
    }

    pub fn set_partitions(&self, count: usize) {
        self.partitions.store(count, Ordering::Relaxed);
    }

    /// Records that `partition`'s work keeps failing (`Some(reason)`) or
    /// goes on again (`None`).
    pub fn set_failing(&self, partition: i32, reason: Option<String>) {
        let mut failing = self.failing.lock().unwrap_or_else(|e| e.into_inner());
        match reason {
            Some(reason) => failing.insert(partition, reason),
            None => failing.remove(&partition),
        };
    }

    /// Why the instance is not ready (empty: it is), store aside.
    fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        if self.service {
            if !self.broker_up.load(Ordering::Relaxed) {
                problems.push("no broker connection".to_owned());
            }
            if self.partitions.load(Ordering::Relaxed) == 0 {
                problems.push("no partitions assigned".to_owned());
            }
            let failing = self.failing.lock().unwrap_or_else(|e| e.into_inner());
            for (partition, reason) in failing.iter() {
                problems.push(format!("partition {partition} is failing: {reason}"));
            }
        }
        problems
    }
}

/// Everything the handlers use.
pub struct HttpState {
    pub metrics: Arc<Metrics>,
    pub health: Arc<Health>,
    pub store: Arc<dyn Store>,
    /// Sends consolidation requests into the stream (service mode only).
    pub requests: Option<Arc<dyn RequestSink>>,
    /// How long `POST /users/{id}/consolidate` waits for the run's report.
    pub report_wait: Duration,
    pub max_id_bytes: usize,
    /// Bearer token the non-probe routes require; `None`: open.
    pub token: Option<String>,
    /// How the report pages judge salience.
    pub salience: SalienceParams,
}

/// Listens on `bind` and serves on `runtime` until the runtime stops.
/// Returns the address bound (the port is chosen when `bind` ends in `:0`).
pub fn spawn(bind: &str, state: HttpState, runtime: &Handle) -> Result<SocketAddr, HttpError> {
    let bind_error = |reason: String| HttpError::Bind {
        bind: bind.to_owned(),
        reason,
    };
    let listener = std::net::TcpListener::bind(bind).map_err(|e| bind_error(e.to_string()))?;
    listener
        .set_nonblocking(true)
        .map_err(|e| bind_error(e.to_string()))?;
    let address = listener
        .local_addr()
        .map_err(|e| bind_error(e.to_string()))?;
    let listener = {
        let _guard = runtime.enter();
        tokio::net::TcpListener::from_std(listener).map_err(|e| bind_error(e.to_string()))?
    };
    let app = router(Arc::new(state));
    runtime.spawn(async move {
        if let Err(error) = axum::serve(listener, app).await {
            tracing::error!(%error, "the HTTP server stopped");
        }
    });
    tracing::info!(%address, "HTTP endpoint listening (/healthz, /readyz, /metrics)");
    Ok(address)
}

fn router(state: Arc<HttpState>) -> Router {
    let guarded = Router::new()
        .route("/metrics", get(metrics))
        .route("/users/{user_id}/consolidate", post(consolidate))
        .route("/users/{user_id}/report/latest", get(latest_report))
        .route("/users/{user_id}/report.html", get(report_page))
        .route_layer(middleware::from_fn_with_state(
            Arc::clone(&state),
            require_token,
        ));
    Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(readyz))
        .merge(guarded)
        .with_state(state)
}

/// Lets a request through when no token is configured or it carries it.
async fn require_token(
    State(state): State<Arc<HttpState>>,
    request: Request,
    next: Next,
) -> Response {
    let Some(token) = &state.token else {
        return next.run(request).await;
    };
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "));
    match presented {
        Some(presented) if same_secret(presented.as_bytes(), token.as_bytes()) => {
            next.run(request).await
        }
        _ => (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
            "a bearer token is required\n",
        )
            .into_response(),
    }
}

/// Compares secrets in time independent of where they differ.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn json_response(status: StatusCode, body: serde_json::Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

fn error(status: StatusCode, message: impl Into<String>) -> Response {
    json_response(status, json!({ "error": message.into() }))
}

/// Runs a store call off the async threads (stores are synchronous).
async fn blocking<T: Send + 'static>(
    call: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, Response> {
    match tokio::task::spawn_blocking(call).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(e)) => Err(error(StatusCode::SERVICE_UNAVAILABLE, e.to_string())),
        Err(e) => Err(error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string())),
    }
}

async fn readyz(State(state): State<Arc<HttpState>>) -> Response {
    let mut problems = state.health.problems();
    let store = Arc::clone(&state.store);
    if let Err(response) = blocking(move || store.ping()).await {
        drop(response);
        problems.push("store unreachable".to_owned());
    }
    let status = if problems.is_empty() {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    json_response(
        status,
        json!({ "ready": problems.is_empty(), "problems": problems }),
    )
}

async fn metrics(State(state): State<Arc<HttpState>>) -> Response {
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        state.metrics.render(),
    )
        .into_response()
}

/// A user id as the event contract accepts it; it is only ever a bound value.
fn check_user(user_id: &str, max_bytes: usize) -> Result<(), String> {
    if user_id.is_empty() || user_id.len() > max_bytes || user_id.chars().any(char::is_control) {
        return Err(format!(
            "user id must be 1 to {max_bytes} bytes without control characters"
        ));
    }
    Ok(())
}

async fn latest_report(
    State(state): State<Arc<HttpState>>,
    Path(user_id): Path<String>,
) -> Response {
    if let Err(message) = check_user(&user_id, state.max_id_bytes) {
        return error(StatusCode::BAD_REQUEST, message);
    }
    let store = Arc::clone(&state.store);
    let user = user_id.clone();
    match blocking(move || store.run_reports(&user)).await {
        Ok(reports) => match reports.into_iter().last() {
            Some(report) => json_response(StatusCode::OK, report.report),
            None => error(
                StatusCode::NOT_FOUND,
                format!("user {user_id} has no run report"),
            ),
        },
        Err(response) => response,
    }
}

/// What a report page request comes to.
enum PageAnswer {
    Html(String),
    Missing(String),
    Unreadable(String),
}

async fn report_page(
    State(state): State<Arc<HttpState>>,
    Path(user_id): Path<String>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    if let Err(message) = check_user(&user_id, state.max_id_bytes) {
        return error(StatusCode::BAD_REQUEST, message);
    }
    let store = Arc::clone(&state.store);
    let salience = state.salience;
    let now = chrono::Utc::now().timestamp_millis();
    // Drawing a big user's page is work too: off the async threads.
    let answer = blocking(move || {
        let records = report::read_user(store.as_ref(), &user_id)?;
        Ok(page_answer(&user_id, &records, &query, &salience, now))
    })
    .await;
    match answer {
        Ok(PageAnswer::Html(html)) => (
            StatusCode::OK,
            [
                (header::CONTENT_TYPE, "text/html; charset=utf-8"),
                // The page runs nothing and fetches nothing; say so.
                (
                    header::CONTENT_SECURITY_POLICY,
                    "default-src 'none'; style-src 'unsafe-inline'",
                ),
            ],
            html,
        )
            .into_response(),
        Ok(PageAnswer::Missing(message)) => error(StatusCode::NOT_FOUND, message),
        Ok(PageAnswer::Unreadable(message)) => error(StatusCode::INTERNAL_SERVER_ERROR, message),
        Err(response) => response,
    }
}

fn page_answer(
    user_id: &str,
    records: &UserRecords,
    query: &HashMap<String, String>,
    salience: &SalienceParams,
    now: i64,
) -> PageAnswer {
    let focus = query.get("memory").map(String::as_str);
    if let Some(run_id) = query.get("run") {
        let Some(stored) = records.runs.iter().find(|r| &r.run_id == run_id) else {
            return PageAnswer::Missing(format!("user {user_id} has no run {run_id}"));
        };
        return match report::run_page_html(records, stored, salience, focus, Some("report.html")) {
            Ok(html) => PageAnswer::Html(html),
            Err(e) => PageAnswer::Unreadable(e.to_string()),
        };
    }
    if records.is_empty() {
        return PageAnswer::Missing(format!("user {user_id} has no memories"));
    }
    let run_href = |run: &str| Some(format!("report.html?run={}", report::url_encode(run)));
    PageAnswer::Html(report::render_history(&HistoryPage {
        user_id,
        records,
        now,
        salience,
        focus,
        run_href: &run_href,
        limit: report::history::SECTION_LIMIT,
    }))
}

async fn consolidate(
    State(state): State<Arc<HttpState>>,
    Path(user_id): Path<String>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    if let Err(message) = check_user(&user_id, state.max_id_bytes) {
        return error(StatusCode::BAD_REQUEST, message);
    }
    let execute = match query.get("execute").map(String::as_str) {
        None | Some("false") => false,
        Some("true") => true,
        Some(other) => {
            return error(
                StatusCode::BAD_REQUEST,
                format!("execute must be true or false, not `{other}`"),
            );
        }
    };
    let Some(producer) = state.requests.clone() else {
        return error(
            StatusCode::CONFLICT,
            "embedded mode has no stream to send the request into: use `engram consolidate`",
        );
    };
    // The partition that owns the user runs it: sent there whatever the
    // platform's partitioner, and never for a user engram does not have.
    let store = Arc::clone(&state.store);
    let user = user_id.clone();
    let owner = match blocking(move || store.user_state(&user)).await {
        Ok(Some(user_state)) => user_state.owner_partition(),
        Ok(None) => {
            return error(
                StatusCode::NOT_FOUND,
                format!("user {user_id} has no memories"),
            );
        }
        Err(response) => return response,
    };
    let request = manual_request(&user_id, execute, "http");
    let run_id = request_run_id(&request);
    let sent = tokio::time::timeout(
        Duration::from_secs(10),
        producer.send(request.clone(), owner),
    )
    .await;
    match sent {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return error(StatusCode::SERVICE_UNAVAILABLE, e.to_string()),
        Err(_) => {
            return error(
                StatusCode::SERVICE_UNAVAILABLE,
                "the broker did not take the request within 10 s",
            );
        }
    }
    // The owning partition runs it; wait for its report.
    let deadline = Instant::now() + state.report_wait;
    loop {
        let store = Arc::clone(&state.store);
        let (user, run) = (user_id.clone(), run_id.clone());
        match blocking(move || store.run_report(&user, &run)).await {
            Ok(Some(report)) => return json_response(StatusCode::OK, report.report),
            Ok(None) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Ok(None) => {
                return json_response(
                    StatusCode::ACCEPTED,
                    json!({
                        "run_id": run_id,
                        "event_id": request.event_id,
                        "status": "requested; the report is not stored yet",
                        "report": format!("/users/{user_id}/report/latest"),
                    }),
                );
            }
            Err(response) => return response,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_service_is_ready_only_when_connected_and_assigned() {
        let health = Health::service();
        assert_eq!(health.problems().len(), 2);
        health.set_broker_up(true);
        assert_eq!(health.problems(), ["no partitions assigned"]);
        health.set_partitions(3);
        assert!(health.problems().is_empty());
        health.set_failing(1, Some("store: disk full".to_owned()));
        assert_eq!(
            health.problems(),
            ["partition 1 is failing: store: disk full"]
        );
        health.set_failing(1, None);
        assert!(health.problems().is_empty());
        health.set_broker_up(false);
        assert_eq!(health.problems(), ["no broker connection"]);
        assert!(Health::embedded().problems().is_empty());
    }

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret(b"s3cret", b"s3cret"));
        assert!(!same_secret(b"s3cret", b"s3creT"));
        assert!(!same_secret(b"s3cret", b"s3cret!"));
        assert!(!same_secret(b"", b"x"));
    }

    #[test]
    fn user_ids_are_checked_before_use() {
        assert!(check_user("alice", 256).is_ok());
        assert!(check_user("", 256).is_err());
        assert!(check_user("a\nb", 256).is_err());
        assert!(check_user(&"x".repeat(257), 256).is_err());
    }
}
