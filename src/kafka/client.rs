//! librdkafka client settings from engram's config, and the context that
//! routes librdkafka's own log lines and errors to `tracing`.

use rdkafka::ClientConfig;
use rdkafka::client::ClientContext;
use rdkafka::config::RDKafkaLogLevel;
use rdkafka::error::KafkaError;

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
        tracing::warn!(target: "librdkafka", %error, "{reason}");
    }
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
    let optional = [
        ("sasl.mechanism", &config.sasl_mechanism),
        ("sasl.username", &config.sasl_username),
        ("sasl.password", &config.sasl_password),
        ("ssl.ca.location", &config.ssl_ca_location),
        ("ssl.certificate.location", &config.ssl_certificate_location),
        ("ssl.key.location", &config.ssl_key_location),
        ("ssl.key.password", &config.ssl_key_password),
    ];
    for (key, value) in optional {
        if !value.is_empty() {
            client.set(key, value);
        }
    }
    for (key, value) in extra_properties(&config.client_properties)? {
        client.set(key, value);
    }
    Ok(client)
}

/// Parses `key=value,key=value`.
fn extra_properties(text: &str) -> Result<Vec<(String, String)>, ServiceError> {
    text.split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .map(|item| {
            let (key, value) = item.split_once('=').ok_or_else(|| {
                ServiceError::Config(format!(
                    "kafka.client_properties: `{item}` is not key=value"
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
    fn a_malformed_property_is_an_error_naming_it() {
        let config = KafkaConfig {
            client_properties: "acks=all,oops".to_owned(),
            ..KafkaConfig::default()
        };
        let error = client_config(&config, &[]).unwrap_err().to_string();
        assert!(error.contains("`oops`"), "{error}");
    }
}
