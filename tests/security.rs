//! engram against Apache Kafka's own secured listeners: TLS with the broker's
//! certificate verified (certificates made at test time), SASL/SCRAM-SHA-512
//! with a real user, and topics an ACL denies.

#[path = "common/broker.rs"]
mod broker;
mod common;
#[path = "common/tls.rs"]
mod tls;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use broker::{Broker, Engram, KafkaSetup, ends};
use common::*;
use engram::event::{ConsolidationRequested, Event, EventCodec, Limits};
use engram::store::{EmbeddedStore, Store};
use tls::Certificates;

const WAIT: Duration = Duration::from_secs(90);
const USER: &str = "engram";
const PASSWORD: &str = "engram-secret-1";

fn json(event: &Event) -> (String, Vec<u8>) {
    let codec = EventCodec::new(Limits::default()).unwrap();
    (
        event.user_id().unwrap().to_owned(),
        codec.encode_json(event),
    )
}

fn scram_setup() -> KafkaSetup {
    KafkaSetup {
        scram_users: vec![(USER.to_owned(), PASSWORD.to_owned())],
        ..KafkaSetup::default()
    }
}

/// A broker whose TLS listener serves `certificates`' server certificate.
fn tls_broker(certificates: &Certificates) -> Broker {
    Broker::start_with(KafkaSetup {
        tls_keystore: Some(certificates.server_pem_file.clone()),
        ..KafkaSetup::default()
    })
}

/// engram on the broker's TLS listener only (every client it makes,
/// consumer, producer and admin, goes over TLS or not at all), trusting
/// the CA in `ca_file`, with `extra` settings.
fn tls_engram(broker: &Broker, dir: &Path, ca_file: &Path, extra: &[(&str, &str)]) -> Engram {
    let ca = ca_file.display().to_string();
    let mut settings = vec![
        ("ENGRAM_KAFKA_SECURITY_PROTOCOL", "ssl"),
        ("ENGRAM_KAFKA_SSL_CA_LOCATION", ca.as_str()),
    ];
    settings.extend_from_slice(extra);
    Engram::start_at(
        broker.tls_address.as_deref().unwrap(),
        &dir.join("state"),
        dir.join("engram.log"),
        &settings,
    )
}

/// engram logging in as the SCRAM user with `password`, creating its topics.
fn scram_engram(broker: &Broker, dir: &Path, password: &str) -> Engram {
    Engram::start_at(
        broker.sasl_address.as_deref().unwrap(),
        &dir.join("state"),
        dir.join("engram.log"),
        &[
            ("ENGRAM_KAFKA_SECURITY_PROTOCOL", "sasl_plaintext"),
            ("ENGRAM_KAFKA_SASL_MECHANISM", "SCRAM-SHA-512"),
            ("ENGRAM_KAFKA_SASL_USERNAME", USER),
            ("ENGRAM_KAFKA_SASL_PASSWORD", password),
            ("ENGRAM_KAFKA_CREATE_TOPICS", "true"),
            ("ENGRAM_KAFKA_TOPIC_PARTITIONS", "2"),
            ("ENGRAM_KAFKA_OUTPUT_FORMAT", "json"),
        ],
    )
}

/// PostgreSQL vs MySQL for ada, and an executed consolidation request:
/// produced on the plaintext listener; engram must commit them all and
/// report one run with one contradiction.
fn consolidate_ada(broker: &Broker) {
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
        event_id: "req-secure".to_owned(),
        user_id: "ada".to_owned(),
        requested_at: at(10),
        // Executed: a dry run announces no contradiction it did not flag.
        execute: Some(true),
        reason: None,
    }));
    let requested_at = broker.produce("consolidation.requested", &[request]);
    let targets = BTreeMap::from([
        ("memory.created".to_owned(), ends(&created_at, 2)),
        ("consolidation.requested".to_owned(), ends(&requested_at, 2)),
    ]);
    broker.wait_committed("engram", &targets, WAIT);
    let completed = broker.read_all("consolidation.completed", 2, 1, WAIT);
    assert_eq!(completed.len(), 1, "the run's report came out");
    let contradictions = broker.read_all("contradiction.detected", 2, 1, WAIT);
    assert_eq!(contradictions.len(), 1, "PostgreSQL vs MySQL is flagged");
}

#[test]
fn engram_runs_end_to_end_over_the_brokers_tls_listener_with_its_certificate_verified() {
    let dir = tempfile::tempdir().unwrap();
    let certificates = Certificates::generate(dir.path(), "good");
    let broker = tls_broker(&certificates);
    let engram = tls_engram(
        &broker,
        dir.path(),
        &certificates.ca_file,
        &[
            ("ENGRAM_KAFKA_CREATE_TOPICS", "true"),
            ("ENGRAM_KAFKA_TOPIC_PARTITIONS", "2"),
            ("ENGRAM_KAFKA_OUTPUT_FORMAT", "json"),
        ],
    );
    engram.wait_assigned(WAIT);
    consolidate_ada(&broker);
    engram.stop();
    let store = EmbeddedStore::open(&dir.path().join("state")).unwrap();
    assert!(store.memory("ada", "pg").unwrap().is_some());
}

#[test]
fn a_broker_certificate_from_another_ca_stops_engram_naming_the_setting() {
    let dir = tempfile::tempdir().unwrap();
    let served = Certificates::generate(dir.path(), "served");
    let other = Certificates::generate(dir.path(), "other");
    let broker = tls_broker(&served);
    let engram = tls_engram(&broker, dir.path(), &other.ca_file, &[]);
    let (status, log) = engram.wait_exit(WAIT);
    assert!(!status.success(), "engram must not run on; log:\n{log}");
    assert!(log.contains("kafka.ssl_ca_location"), "{log}");
    assert!(log.contains("certificate verify failed"), "{log}");
}

#[test]
fn engram_logs_in_with_scram_sha_512_as_a_real_user_and_runs_end_to_end() {
    let dir = tempfile::tempdir().unwrap();
    let broker = Broker::start_with(scram_setup());
    let engram = scram_engram(&broker, dir.path(), PASSWORD);
    engram.wait_assigned(WAIT);
    consolidate_ada(&broker);
    engram.stop();
    let log = std::fs::read_to_string(dir.path().join("engram.log")).unwrap();
    assert!(!log.contains(PASSWORD), "the password is never logged");
}

#[test]
fn a_refused_scram_login_stops_engram_naming_the_settings() {
    let dir = tempfile::tempdir().unwrap();
    let broker = Broker::start_with(scram_setup());
    let engram = scram_engram(&broker, dir.path(), "not-the-password");
    let (status, log) = engram.wait_exit(WAIT);
    assert!(!status.success(), "engram must not run on; log:\n{log}");
    assert!(log.contains("kafka.sasl_password"), "{log}");
    assert!(
        !log.contains("not-the-password"),
        "the password is never logged"
    );
}

#[test]
fn a_topic_an_acl_denies_stops_engram_naming_the_topic_not_a_stuck_partition() {
    let dir = tempfile::tempdir().unwrap();
    let broker = Broker::start_with(KafkaSetup {
        acls: true,
        ..scram_setup()
    });
    let principal = format!("User:{USER}");
    broker.acls(&[
        "--add",
        "--allow-principal",
        &principal,
        "--operation",
        "All",
        "--topic",
        "*",
        "--group",
        "*",
        "--cluster",
    ]);
    broker.acls(&[
        "--add",
        "--deny-principal",
        &principal,
        "--operation",
        "Read",
        "--topic",
        "memory.accessed",
    ]);
    let engram = scram_engram(&broker, dir.path(), PASSWORD);
    let (status, log) = engram.wait_exit(WAIT);
    assert!(!status.success(), "engram must not run on; log:\n{log}");
    assert!(log.contains("memory.accessed"), "names the topic: {log}");
    assert!(
        log.to_lowercase().contains("authoriz"),
        "says it is an authorization failure: {log}"
    );
}
