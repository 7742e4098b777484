//! librdkafka client settings from engram's config, the context that routes
//! librdkafka's own log lines and errors to `tracing`, and the start-up check
//! that tells a wrong CA or password apart from a broker that is down.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use rdkafka::ClientConfig;
use rdkafka::client::ClientContext;
use rdkafka::config::RDKafkaLogLevel;
use rdkafka::consumer::{BaseConsumer, Consumer, ConsumerContext};
use rdkafka::error::KafkaError;
use rdkafka::types::RDKafkaErrorCode;

use super::KafkaError as ServiceError;
use crate::config::KafkaConfig;

/// Logs librdkafka's messages under the `librdkafka` target, so they obey
/// the same filter and format as engram's own.
#[derive(Debug, Clone, Copy, Default)]
pub struct LogContext;

impl ClientContext for LogContext {
    fn log(&self, level: RDKafkaLogLevel, facility: &str, message: &str) {
        match level {
            RDKafkaLogLevel::Emerg
            | RDKafkaLogLevel::Alert
            | RDKafkaLogLevel::Critical
            | RDKafkaLogLevel::Error => {
                tracing::error!(target: "librdkafka", facility, "{message}")
            }
            RDKafkaLogLevel::Warning => tracing::warn!(target: "librdkafka", facility, "{message}"),
            RDKafkaLogLevel::Notice | RDKafkaLogLevel::Info => {
                tracing::info!(target: "librdkafka", facility, "{message}")
            }
            RDKafkaLogLevel::Debug => tracing::debug!(target: "librdkafka", facility, "{message}"),
        }
    }

    fn error(&self, error: KafkaError, reason: &str) {
        // A partition's end is news to its worker (it stops waiting for
        // that topic), not a problem: librdkafka reports it as an error event.
        if error.rdkafka_error_code() == Some(RDKafkaErrorCode::PartitionEOF) {
            return;
        }
        tracing::warn!(target: "librdkafka", %error, "{reason}");
    }
}

/// engram's setting for each librdkafka security property it passes on.
const SECURITY_SETTINGS: [(&str, &str); 7] = [
    ("sasl.mechanism", "kafka.sasl_mechanism"),
    ("sasl.username", "kafka.sasl_username"),
    ("sasl.password", "kafka.sasl_password"),
    ("ssl.ca.location", "kafka.ssl_ca_location"),
    ("ssl.certificate.location", "kafka.ssl_certificate_location"),
    ("ssl.key.location", "kafka.ssl_key_location"),
    ("ssl.key.password", "kafka.ssl_key_password"),
];

fn security_values(config: &KafkaConfig) -> [&str; 7] {
    [
        &config.sasl_mechanism,
        &config.sasl_username,
        &config.sasl_password,
        &config.ssl_ca_location,
        &config.ssl_certificate_location,
        &config.ssl_key_location,
        &config.ssl_key_password,
    ]
}

/// Whether the protocol wraps connections in TLS.
fn uses_tls(config: &KafkaConfig) -> bool {
    config
        .security_protocol
        .to_ascii_lowercase()
        .ends_with("ssl")
}

/// Settings shared by the consumer, the producer and the admin client:
/// brokers, security (passed through as given), then the client's own
/// `defaults`, then `kafka.client_properties`, which override everything.
pub fn client_config(
    config: &KafkaConfig,
    defaults: &[(&str, String)],
) -> Result<ClientConfig, ServiceError> {
    let mut client = ClientConfig::new();
    client
        .set("bootstrap.servers", config.brokers.trim())
        .set("security.protocol", &config.security_protocol)
        .set_log_level(RDKafkaLogLevel::Info);
    for (key, value) in defaults {
        client.set(*key, value);
    }
    // OpenSSL is vendored, so its built-in CA path is not the system's:
    // without a CA file, look for the system's trust store where
    // distributions keep it (managed Kafka services use public CAs).
    if uses_tls(config) && config.ssl_ca_location.is_empty() {
        client.set("ssl.ca.location", "probe");
    }
    for ((key, _), value) in SECURITY_SETTINGS.iter().zip(security_values(config)) {
        if !value.is_empty() {
            client.set(*key, value);
        }
    }
    for (key, value) in extra_properties(&config.client_properties)? {
        client.set(key, value);
    }
    Ok(client)
}

/// A client that cannot be created names engram's setting where librdkafka
/// names its own property (e.g. a CA file that does not exist).
pub fn creation_error(what: &str, error: KafkaError) -> ServiceError {
    let text = error.to_string();
    let setting = SECURITY_SETTINGS
        .iter()
        .find(|(property, _)| text.contains(property))
        .map(|(_, setting)| format!(" (check {setting})"))
        .unwrap_or_default();
    ServiceError::client(format!("cannot create the {what}{setting}"), error)
}

/// Records the first TLS or authentication failure librdkafka reports:
/// retrying does not fix those, unlike a broker that is down.
#[derive(Debug, Default)]
struct ProbeContext {
    refused: Mutex<Option<(RDKafkaErrorCode, String)>>,
}

impl ClientContext for ProbeContext {
    fn log(&self, level: RDKafkaLogLevel, facility: &str, message: &str) {
        LogContext.log(level, facility, message);
    }

    fn error(&self, error: KafkaError, reason: &str) {
        LogContext.error(error.clone(), reason);
        let Some(code) = error.rdkafka_error_code() else {
            return;
        };
        if matches!(
            code,
            RDKafkaErrorCode::SSL
                | RDKafkaErrorCode::Authentication
                | RDKafkaErrorCode::SaslAuthenticationFailed
        ) && let Ok(mut refused) = self.refused.lock()
        {
            refused.get_or_insert_with(|| (code, reason.to_owned()));
        }
    }
}

impl ConsumerContext for ProbeContext {}

/// Connects to the brokers once before anything else starts. A TLS or SASL
/// failure is permanent and returned naming the settings to check; brokers
/// that do not answer within `wait` are only logged, since the consumer
/// keeps trying to reach them.
pub fn check_connection(config: &KafkaConfig, wait: Duration) -> Result<(), ServiceError> {
    let client: BaseConsumer<ProbeContext> = client_config(config, &[])?
        .create_with_context(ProbeContext::default())
        .map_err(|e| creation_error("connection check client", e))?;
    let deadline = Instant::now() + wait;
    loop {
        let answered = client
            .fetch_metadata(None, Duration::from_millis(500))
            .is_ok();
        // Serves the queue that carries librdkafka's error callbacks.
        let _ = client.poll(Duration::from_millis(10));
        let refused = client
            .context()
            .refused
            .lock()
            .ok()
            .and_then(|refused| refused.clone());
        if let Some((code, reason)) = refused {
            return Err(refused_error(code, &reason));
        }
        if answered {
            return Ok(());
        }
        if Instant::now() >= deadline {
            tracing::warn!(
                brokers = %config.brokers,
                "no broker answered within {wait:?}; the consumer keeps trying"
            );
            return Ok(());
        }
    }
}

/// How many members engram's consumer group (`kafka.group_id`) has now, as
/// the brokers' group listing says: a running service owns users while it
/// has any.
pub fn group_members(config: &KafkaConfig, wait: Duration) -> Result<usize, ServiceError> {
    let client: BaseConsumer<ProbeContext> = client_config(config, &[])?
        .create_with_context(ProbeContext::default())
        .map_err(|e| creation_error("group check client", e))?;
    let groups = client
        .fetch_group_list(Some(&config.group_id), wait)
        .map_err(|e| {
            ServiceError::client(
                format!(
                    "cannot tell whether group `{}` has members on {}",
                    config.group_id, config.brokers
                ),
                e,
            )
        })?;
    Ok(groups
        .groups()
        .iter()
        .filter(|group| group.name() == config.group_id)
        .map(|group| group.members().len())
        .sum())
}

fn refused_error(code: RDKafkaErrorCode, reason: &str) -> ServiceError {
    let check = match code {
        RDKafkaErrorCode::SSL
            if reason.contains("certificate verify failed")
                || reason.contains("could not be verified") =>
        {
            "kafka.ssl_ca_location (the CA that signed the broker's certificate)"
        }
        RDKafkaErrorCode::SSL => {
            "kafka.security_protocol and the kafka.ssl_* settings (CA, client certificate and key)"
        }
        _ => "kafka.sasl_mechanism, kafka.sasl_username and kafka.sasl_password",
    };
    ServiceError::Security(format!("{reason}; check {check}"))
}

/// Parses `key=value,key=value`. An item that is not `key=value` is named
/// by its place, never quoted: it may be a secret typed without its key.
fn extra_properties(text: &str) -> Result<Vec<(String, String)>, ServiceError> {
    let items: Vec<&str> = text
        .split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .collect();
    items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            let (key, value) = item.split_once('=').ok_or_else(|| {
                ServiceError::Config(format!(
                    "kafka.client_properties: item {} of {} is not key=value",
                    index + 1,
                    items.len()
                ))
            })?;
            Ok((key.trim().to_owned(), value.trim().to_owned()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn security_settings_and_extra_properties_are_passed_through() {
        let config = KafkaConfig {
            brokers: "b1:9093,b2:9093".to_owned(),
            security_protocol: "sasl_ssl".to_owned(),
            sasl_mechanism: "SCRAM-SHA-512".to_owned(),
            sasl_username: "engram".to_owned(),
            sasl_password: "secret".to_owned(),
            ssl_ca_location: "/etc/ca.pem".to_owned(),
            client_properties: "socket.keepalive.enable=true, client.rack = eu-1".to_owned(),
            ..KafkaConfig::default()
        };
        let client = client_config(&config, &[("client.rack", "x".to_owned())]).unwrap();
        assert_eq!(client.get("bootstrap.servers"), Some("b1:9093,b2:9093"));
        assert_eq!(client.get("security.protocol"), Some("sasl_ssl"));
        assert_eq!(client.get("sasl.mechanism"), Some("SCRAM-SHA-512"));
        assert_eq!(client.get("sasl.password"), Some("secret"));
        assert_eq!(client.get("ssl.ca.location"), Some("/etc/ca.pem"));
        assert_eq!(client.get("ssl.key.location"), None);
        assert_eq!(client.get("client.rack"), Some("eu-1"));
        assert_eq!(client.get("socket.keepalive.enable"), Some("true"));
    }

    #[test]
    fn the_client_library_is_built_with_tls_sasl_and_every_codec() {
        let native = ClientConfig::new().create_native_config().unwrap();
        let features = native.get("builtin.features").unwrap();
        let features: Vec<&str> = features.split(',').collect();
        for needed in [
            "ssl",
            "sasl_plain",
            "sasl_scram",
            "sasl_oauthbearer",
            "gzip",
            "snappy",
            "lz4",
            "zstd",
        ] {
            assert!(features.contains(&needed), "{needed} in {features:?}");
        }
    }

    #[test]
    fn tls_without_a_ca_file_probes_the_system_trust_store() {
        let tls = |protocol: &str, ca: &str| {
            let config = KafkaConfig {
                security_protocol: protocol.to_owned(),
                ssl_ca_location: ca.to_owned(),
                ..KafkaConfig::default()
            };
            client_config(&config, &[])
                .unwrap()
                .get("ssl.ca.location")
                .map(str::to_owned)
        };
        assert_eq!(tls("ssl", "").as_deref(), Some("probe"));
        assert_eq!(tls("SASL_SSL", "").as_deref(), Some("probe"));
        assert_eq!(tls("ssl", "/etc/ca.pem").as_deref(), Some("/etc/ca.pem"));
        assert_eq!(tls("plaintext", ""), None);
        assert_eq!(tls("sasl_plaintext", ""), None);
    }

    #[test]
    fn a_missing_ca_file_is_an_error_naming_the_setting() {
        let config = KafkaConfig {
            brokers: "127.0.0.1:9".to_owned(),
            security_protocol: "ssl".to_owned(),
            ssl_ca_location: "/nonexistent/ca.pem".to_owned(),
            ..KafkaConfig::default()
        };
        let error = check_connection(&config, Duration::from_secs(1))
            .unwrap_err()
            .to_string();
        assert!(error.contains("kafka.ssl_ca_location"), "{error}");
    }

    #[test]
    fn every_sasl_mechanism_the_config_accepts_can_build_a_client() {
        for mechanism in ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"] {
            for protocol in ["sasl_plaintext", "sasl_ssl"] {
                let config = KafkaConfig {
                    brokers: "127.0.0.1:9".to_owned(),
                    security_protocol: protocol.to_owned(),
                    sasl_mechanism: mechanism.to_owned(),
                    sasl_username: "engram".to_owned(),
                    sasl_password: "secret".to_owned(),
                    ..KafkaConfig::default()
                };
                let created: Result<BaseConsumer, _> =
                    client_config(&config, &[]).unwrap().create();
                assert!(
                    created.is_ok(),
                    "{protocol} {mechanism}: {:?}",
                    created.err()
                );
            }
        }
    }

    #[test]
    fn a_malformed_property_is_an_error_naming_its_place_not_its_text() {
        let config = KafkaConfig {
            client_properties: "acks=all,oops".to_owned(),
            ..KafkaConfig::default()
        };
        let error = client_config(&config, &[]).unwrap_err().to_string();
        assert!(error.contains("item 2 of 2"), "{error}");
        assert!(!error.contains("oops"), "the item is not quoted: {error}");
    }
}
