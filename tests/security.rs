//! engram against a broker it reaches only through TLS (and SASL where the
//! test broker offers it): the real client, certificates made at test time.

#[path = "common/broker.rs"]
mod broker;
mod common;
#[path = "common/tls.rs"]
mod tls;

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::time::Duration;

use broker::{Broker, Engram, ends, free_port};
use common::*;
use engram::event::{ConsolidationRequested, Event, EventCodec, Limits};
use engram::store::{EmbeddedStore, Store};
use tls::{Certificates, TlsTerminator};

const WAIT: Duration = Duration::from_secs(60);

/// A broker whose only advertised endpoint is a TLS terminator using
/// `certificates`; the test's own clients verify it with their CA.
fn broker_behind_tls(certificates: &Certificates) -> (Broker, TlsTerminator) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let tls_port = listener.local_addr().unwrap().port();
    let broker_port = free_port();
    let client_settings = vec![
        ("security.protocol".to_owned(), "ssl".to_owned()),
        (
            "ssl.ca.location".to_owned(),
            certificates.ca_file.display().to_string(),
        ),
    ];
    let broker = Broker::start_behind(broker_port, tls_port, client_settings, &[]);
    let terminator =
        TlsTerminator::spawn(listener, format!("127.0.0.1:{broker_port}"), certificates);
    (broker, terminator)
}

fn json(event: &Event) -> (String, Vec<u8>) {
    let codec = EventCodec::new(Limits::default()).unwrap();
    (
        event.user_id().unwrap().to_owned(),
        codec.encode_json(event),
    )
}

#[test]
fn engram_runs_end_to_end_over_tls_with_the_broker_certificate_verified() {
    let dir = tempfile::tempdir().unwrap();
    let certificates = Certificates::generate(dir.path(), "good");
    let (broker, terminator) = broker_behind_tls(&certificates);
    let ca = certificates.ca_file.display().to_string();
    let engram = Engram::start(
        &broker,
        &dir.path().join("state"),
        dir.path().join("engram.log"),
        &[
            ("ENGRAM_KAFKA_SECURITY_PROTOCOL", "ssl"),
            ("ENGRAM_KAFKA_SSL_CA_LOCATION", &ca),
            ("ENGRAM_KAFKA_CREATE_TOPICS", "true"),
            ("ENGRAM_KAFKA_TOPIC_PARTITIONS", "2"),
            ("ENGRAM_KAFKA_OUTPUT_FORMAT", "json"),
        ],
    );
    engram.wait_assigned(WAIT);

    let memories: Vec<(String, Vec<u8>)> = [
        ("pg", "Project uses PostgreSQL"),
        ("my", "Project uses MySQL"),
    ]
    .iter()
    .enumerate()
    .map(|(i, (id, text))| json(&Event::MemoryCreated(created("ada", id, text, i as i64))))
    .collect();
    let created_at = broker.produce("memory.created", &memories);
    let request = json(&Event::ConsolidationRequested(ConsolidationRequested {
        event_id: "req-tls".to_owned(),
        user_id: "ada".to_owned(),
        requested_at: at(10),
        execute: Some(false),
        reason: None,
    }));
    let requested_at = broker.produce("consolidation.requested", &[request]);
    let targets = BTreeMap::from([
        ("memory.created".to_owned(), ends(&created_at, 2)),
        ("consolidation.requested".to_owned(), ends(&requested_at, 2)),
    ]);
    broker.wait_committed("engram", &targets, WAIT);
    let completed = broker.read_all("consolidation.completed", 2, 1, WAIT);
    assert_eq!(completed.len(), 1, "the run's report came back over TLS");
    let contradictions = broker.read_all("contradiction.detected", 2, 1, WAIT);
    assert_eq!(contradictions.len(), 1, "PostgreSQL vs MySQL is flagged");
    // Every client (the tests' and engram's consumer, producer and admin)
    // reached the broker only through the terminator.
    assert!(terminator.handshakes() >= 4, "{}", terminator.handshakes());
    engram.stop();
    let store = EmbeddedStore::open(&dir.path().join("state")).unwrap();
    assert!(store.memory("ada", "pg").unwrap().is_some());
}

#[test]
fn a_broker_certificate_from_another_ca_stops_engram_naming_the_setting() {
    let dir = tempfile::tempdir().unwrap();
    let served = Certificates::generate(dir.path(), "served");
    let other = Certificates::generate(dir.path(), "other");
    let (broker, _terminator) = broker_behind_tls(&served);
    let wrong_ca = other.ca_file.display().to_string();
    let engram = Engram::start(
        &broker,
        &dir.path().join("state"),
        dir.path().join("engram.log"),
        &[
            ("ENGRAM_KAFKA_SECURITY_PROTOCOL", "ssl"),
            ("ENGRAM_KAFKA_SSL_CA_LOCATION", &wrong_ca),
        ],
    );
    let (status, log) = engram.wait_exit(WAIT);
    assert!(!status.success(), "engram must not run on; log:\n{log}");
    assert!(log.contains("kafka.ssl_ca_location"), "{log}");
    assert!(log.contains("certificate verify failed"), "{log}");
}

/// The test broker can require SASL but, with memory storage only, cannot
/// be given a user before it does: a SCRAM login is negotiated and refused.
/// That is the path a wrong password takes on a real cluster.
#[test]
fn a_refused_scram_login_stops_engram_naming_the_settings() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let broker = Broker::start_behind(port, port, Vec::new(), &["--authentication"]);
    let engram = Engram::start(
        &broker,
        &dir.path().join("state"),
        dir.path().join("engram.log"),
        &[
            ("ENGRAM_KAFKA_SECURITY_PROTOCOL", "sasl_plaintext"),
            ("ENGRAM_KAFKA_SASL_MECHANISM", "SCRAM-SHA-512"),
            ("ENGRAM_KAFKA_SASL_USERNAME", "engram"),
            ("ENGRAM_KAFKA_SASL_PASSWORD", "not-the-password"),
        ],
    );
    let (status, log) = engram.wait_exit(WAIT);
    assert!(!status.success(), "engram must not run on; log:\n{log}");
    assert!(log.contains("kafka.sasl_password"), "{log}");
    assert!(
        !log.contains("not-the-password"),
        "the password is never logged"
    );
}
