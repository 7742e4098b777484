//! The `[scylla]` section: the ScyllaDB state store, with its own checks.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::config::{Checks, Consistency};
use crate::duration;

/// The ScyllaDB state store (service mode). See `schemas/cql/` for the schema
/// and `engram migrate` for applying it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ScyllaConfig {
    /// Comma-separated contact points (`host:port`); empty means the
    /// embedded store.
    pub nodes: String,
    /// Keyspace of engram's tables (letters, digits and `_`).
    pub keyspace: String,
    pub username: String,
    pub password: String,
    /// Consistency of every read and write: `local_quorum`, `quorum`, `one`,
    /// `local_one`, `all`, ...
    pub consistency: Consistency,
    /// Replication of the keyspace `engram migrate` creates:
    /// `NetworkTopologyStrategy` or `SimpleStrategy`.
    pub replication_class: String,
    /// Replicas per datacenter (or in all, for `SimpleStrategy`).
    pub replication_factor: u32,
    /// `dc1:3,dc2:3` for a factor per datacenter (NetworkTopologyStrategy);
    /// empty: `replication_factor` everywhere.
    pub datacenters: String,
    /// Datacenter whose nodes requests go to first (empty: any).
    pub local_datacenter: String,
    /// Client-side timeout of one request.
    #[serde(with = "duration")]
    pub request_timeout: Duration,
    /// Attempts after the first for a request that timed out or found too
    /// few replicas, with exponential backoff from `retry_backoff`.
    pub retries: u32,
    #[serde(with = "duration")]
    pub retry_backoff: Duration,
    /// A user's writes in one flush go in one logged batch up to this size;
    /// above it they are split and journaled as docs/stores.md describes. Keep it below
    /// the cluster's `batch_size_fail_threshold_in_kb`.
    pub max_batch_bytes: usize,
    /// Connect with TLS.
    pub tls: bool,
    /// PEM file of the certificate authorities to trust (required with TLS).
    pub tls_ca_file: String,
    /// PEM client certificate and key, for clusters that require them.
    pub tls_cert_file: String,
    pub tls_key_file: String,
}

impl Default for ScyllaConfig {
    fn default() -> Self {
        Self {
            nodes: String::new(),
            keyspace: "engram".to_owned(),
            username: String::new(),
            password: String::new(),
            consistency: Consistency::LocalQuorum,
            replication_class: "NetworkTopologyStrategy".to_owned(),
            replication_factor: 3,
            datacenters: String::new(),
            local_datacenter: String::new(),
            request_timeout: Duration::from_secs(10),
            retries: 5,
            retry_backoff: Duration::from_millis(100),
            max_batch_bytes: 512 * 1024,
            tls: false,
            tls_ca_file: String::new(),
            tls_cert_file: String::new(),
            tls_key_file: String::new(),
        }
    }
}

impl ScyllaConfig {
    /// Adds what is out of range to `checks`.
    pub(crate) fn check(&self, checks: &mut Checks) {
        // Below a few KiB, one memory row (vector included) would not fit.
        checks.at_least("scylla.max_batch_bytes", self.max_batch_bytes, 16 * 1024);
        if self.consistency == Consistency::Any {
            checks.refuse(
                "scylla.consistency must not be `any`: it applies to writes only, and engram \
                 reads at the level it writes (use local_quorum, or one on a single node)"
                    .to_owned(),
            );
        }
    }

    /// Whether ScyllaDB holds the state (instead of the embedded store).
    pub fn enabled(&self) -> bool {
        !self.nodes.trim().is_empty()
    }

    /// The contact points, trimmed.
    pub fn node_list(&self) -> Vec<String> {
        self.nodes
            .split(',')
            .map(str::trim)
            .filter(|node| !node.is_empty())
            .map(str::to_owned)
            .collect()
    }
}
