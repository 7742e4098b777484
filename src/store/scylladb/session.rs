//! Connecting: waiting on the process's runtime, the session (contact points,
//! consistency, token-aware routing, TLS) and which driver errors are worth
//! another attempt.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use scylla::client::execution_profile::ExecutionProfile;
use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use scylla::errors::{DbError, ExecutionError, RequestAttemptError};
use scylla::policies::load_balancing::DefaultPolicy;
use scylla::statement::Consistency;
use tokio::runtime::Handle;

use super::super::StoreError;
use super::schema;
use crate::config::ScyllaConfig;

pub(super) fn open_error(config: &ScyllaConfig, reason: impl std::fmt::Display) -> StoreError {
    StoreError::Open {
        path: format!("scylla://{}/{}", config.nodes, config.keyspace),
        reason: reason.to_string(),
    }
}

/// Runs `future` on the process's runtime and waits for it. Spawning
/// (rather than `Handle::block_on`) works from any thread that is not one of
/// the runtime's async workers, in a `block_on` or a `spawn_blocking` too;
/// the store's callers (partition workers, commands, the HTTP handlers'
/// `spawn_blocking`) are such threads.
pub(super) fn wait<T: Send + 'static>(
    runtime: &Handle,
    future: impl Future<Output = Result<T, StoreError>> + Send + 'static,
) -> Result<T, StoreError> {
    futures::executor::block_on(runtime.spawn(future))
        .map_err(|e| StoreError::unavailable("a store task", e))?
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

pub(super) async fn session(
    config: &ScyllaConfig,
    use_keyspace: bool,
) -> Result<Session, StoreError> {
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
        .request_timeout(Some(config.request_timeout.max(Duration::from_millis(1))))
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

/// Whether a failed request may succeed if sent again: timeouts, too few
/// replicas, overload, lost connections. Every statement engram sends is
/// idempotent (explicit timestamps), so resending is safe.
pub(super) fn transient(error: &ExecutionError) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
