//! The `[http]` section: the operator endpoint, with its own checks.

use serde::{Deserialize, Serialize};

use crate::config::Checks;

/// The operator endpoint: `/healthz`, `/readyz`, `/metrics` and the API.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HttpConfig {
    /// Address to listen on; empty: no endpoint.
    pub bind: String,
    /// Serve it in embedded mode too (it is on in service mode).
    pub embedded: bool,
    /// Bearer token required by every route but `/healthz` and `/readyz`;
    /// empty: none.
    pub token: String,
}

impl Default for HttpConfig {
    fn default() -> Self {
        Self {
            bind: "127.0.0.1:8080".to_owned(),
            embedded: false,
            token: String::new(),
        }
    }
}

impl HttpConfig {
    /// Adds what is out of range to `checks`; `uses_broker` says whether
    /// the service runs (where the endpoint is on by default).
    pub(crate) fn check(&self, uses_broker: bool, checks: &mut Checks) {
        // The API requests cycles and shows every user's memories.
        if let Some(bind) = self.bind_for(uses_broker)
            && !is_loopback_bind(&bind)
            && self.token.is_empty()
        {
            checks.refuse(format!(
                "http.bind `{bind}` listens beyond this machine, so it needs http.token \
                 (ENGRAM_HTTP_TOKEN), a bearer token the API will require; or bind 127.0.0.1"
            ));
        }
    }

    /// Where to listen in the given mode, if anywhere.
    pub fn bind_for(&self, service: bool) -> Option<String> {
        let enabled = (service || self.embedded) && !self.bind.trim().is_empty();
        enabled.then(|| self.bind.trim().to_owned())
    }

    /// The token the endpoint requires, if any.
    pub fn required_token(&self) -> Option<String> {
        (!self.token.is_empty()).then(|| self.token.clone())
    }
}

/// Whether `bind` (`host:port`) listens on this machine only: a loopback
/// address or `localhost`. Anything else, the unspecified `0.0.0.0` and
/// `[::]` and host names included, may be reached from elsewhere.
fn is_loopback_bind(bind: &str) -> bool {
    let host = bind.rsplit_once(':').map_or(bind, |(host, _)| host);
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|address| address.is_loopback())
}
