//! Apache Kafka for tests (a KRaft node started from the jars `make models`
//! fetched from Maven Central into the project cache), engram service
//! processes, and small clients.

#![allow(dead_code)]

use std::collections::{BTreeMap, HashMap};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rdkafka::admin::{
    AdminClient, AdminOptions, AlterConfig, NewPartitions, NewTopic, ResourceSpecifier,
    TopicReplication,
};
use rdkafka::client::DefaultClientContext;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::producer::{FutureProducer, FutureRecord};
use rdkafka::util::Timeout;
use rdkafka::{ClientConfig, Message, Offset, TopicPartitionList};

use engram::kafka::LogContext;

/// engram's output topics under their default names.
pub const OUTPUT_TOPICS: [&str; 5] = [
    "consolidation.triggered",
    "pattern.extracted",
    "contradiction.detected",
    "consolidation.completed",
    "engram.dlq",
];

/// Calls `check` every `every` until it returns `Ok`; after `wait`, panics
/// with the last `Err`, which says what it saw.
pub fn poll_until<T>(
    wait: Duration,
    every: Duration,
    mut check: impl FnMut() -> Result<T, String>,
) -> T {
    let deadline = Instant::now() + wait;
    loop {
        match check() {
            Ok(value) => return value,
            Err(seen) => assert!(Instant::now() < deadline, "{seen}"),
        }
        std::thread::sleep(every);
    }
}

pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Runtime::new().unwrap()
}

/// What a test broker offers besides its plaintext listener.
#[derive(Clone, Debug, Default)]
pub struct KafkaSetup {
    /// SCRAM-SHA-512 users `(name, password)`, created when the broker's
    /// storage is formatted; when any, a SASL_PLAINTEXT listener is opened.
    pub scram_users: Vec<(String, String)>,
    /// A PEM file holding the broker's private key (PKCS#8) and certificate:
    /// an SSL listener is opened with it.
    pub tls_keystore: Option<PathBuf>,
    /// Enforce ACLs (Kafka's StandardAuthorizer, nothing allowed without an
    /// ACL); the test's own clients on the plaintext listener are super users.
    pub acls: bool,
    /// The port the plaintext listener advertises (a relay's), if not its own.
    pub advertised_plaintext: Option<u16>,
    /// The plaintext listener's port, if chosen beforehand (a relay's target).
    pub plaintext_port: Option<u16>,
}

/// Apache Kafka (one KRaft node in combined mode, from the jars `make models`
/// fetched) on free 127.0.0.1 ports, with its data in a temporary directory;
/// killed on drop, or when the test's thread ends.
pub struct Broker {
    child: Child,
    dir: tempfile::TempDir,
    /// The plaintext listener (or the relay in front of it).
    pub address: String,
    /// The plaintext listener's own port (not a relay's).
    plaintext_port: u16,
    /// The SASL_PLAINTEXT (SCRAM-SHA-512) listener, when the setup has users.
    pub sasl_address: Option<String>,
    /// The SSL listener, when the setup has a keystore.
    pub tls_address: Option<String>,
    /// One client per group for offset queries: a client per query costs
    /// threads and connections, and polling with them starved the engram
    /// processes under test of CPU.
    offset_readers: Mutex<HashMap<String, BaseConsumer>>,
    /// What the test's own clients need beyond the address.
    client_settings: Vec<(String, String)>,
}

/// The Kafka release the tests run against (scripts/jvm/kafka/pom.xml).
pub const KAFKA_VERSION: &str = "4.1.1";

impl Broker {
    /// The broker's JVM, for reading its CPU time.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn start() -> Broker {
        Self::start_with(KafkaSetup::default())
    }

    /// A broker that every client reaches through a [`Relay`], which can cut
    /// it off and bring it back; the broker advertises the relay's address.
    pub fn start_behind_relay() -> (Broker, Relay) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let relay_port = listener.local_addr().unwrap().port();
        // The relay serves before the broker starts: clients that learn the
        // advertised (relay) address while it starts must reach it.
        let plaintext_port = free_port();
        let relay = Relay::spawn(listener, format!("127.0.0.1:{plaintext_port}"));
        let broker = Self::start_with(KafkaSetup {
            advertised_plaintext: Some(relay_port),
            plaintext_port: Some(plaintext_port),
            ..KafkaSetup::default()
        });
        (broker, relay)
    }

    pub fn start_with(setup: KafkaSetup) -> Broker {
        let dir = tempfile::Builder::new()
            .prefix("engram-kafka-")
            .tempdir()
            .unwrap();
        // Chosen together: ports picked one at a time and released can
        // repeat, and Kafka refuses two listeners on one port.
        let given: Vec<u16> = setup.plaintext_port.into_iter().collect();
        let [plaintext, internal, controller, sasl, ssl] = free_ports_except(&given);
        let ports = Ports {
            plaintext: setup.plaintext_port.unwrap_or(plaintext),
            internal,
            controller,
            sasl: (!setup.scram_users.is_empty()).then_some(sasl),
            ssl: setup.tls_keystore.is_some().then_some(ssl),
        };
        let config = dir.path().join("server.properties");
        std::fs::write(&config, server_properties(&setup, &ports, dir.path())).unwrap();
        let log_config = dir.path().join("log4j2.properties");
        std::fs::write(
            &log_config,
            log4j_properties(&dir.path().join("server.log")),
        )
        .unwrap();
        format_storage(&config, &setup.scram_users);
        let started = Instant::now();
        let mut command = Command::new(super::common::jvm::java());
        command
            .args([
                "-Xms256m",
                "-Xmx1g",
                "-XX:+UseG1GC",
                "-XX:+ExitOnOutOfMemoryError",
            ])
            .arg("-Djava.awt.headless=true")
            .arg(format!(
                "-Dlog4j2.configurationFile={}",
                log_config.display()
            ))
            .args([
                "-cp",
                &super::common::jvm::class_path("kafka"),
                "kafka.Kafka",
            ])
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.path().join("stderr.log")).unwrap());
        let child = super::common::jvm::spawn_tied_to_thread(&mut command).unwrap();
        let mut broker = Broker {
            child,
            address: format!(
                "127.0.0.1:{}",
                setup.advertised_plaintext.unwrap_or(ports.plaintext)
            ),
            plaintext_port: ports.plaintext,
            sasl_address: ports.sasl.map(|port| format!("127.0.0.1:{port}")),
            tls_address: ports.ssl.map(|port| format!("127.0.0.1:{port}")),
            dir,
            offset_readers: Mutex::new(HashMap::new()),
            client_settings: Vec::new(),
        };
        broker.wait_ready();
        if std::env::var_os("ENGRAM_TEST_VERBOSE").is_some() {
            eprintln!(
                "Apache Kafka {KAFKA_VERSION} ready in {:.1} s",
                started.elapsed().as_secs_f64()
            );
        }
        broker
    }

    /// Until the broker answers a metadata request on its plaintext port.
    fn wait_ready(&mut self) {
        let consumer: BaseConsumer = ClientConfig::new()
            .set(
                "bootstrap.servers",
                format!("127.0.0.1:{}", self.plaintext_port),
            )
            .set("log_level", "0")
            .create()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!(
                    "Apache Kafka exited with {status} while starting:\n{}\n{}",
                    super::common::jvm::log_tail(&self.dir.path().join("stderr.log"), 20),
                    super::common::jvm::log_tail(&self.dir.path().join("server.log"), 40)
                );
            }
            let ready = consumer
                .fetch_metadata(None, Duration::from_millis(500))
                .is_ok_and(|metadata| !metadata.brokers().is_empty());
            if ready {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "Apache Kafka did not start:\n{}",
                super::common::jvm::log_tail(&self.dir.path().join("server.log"), 40)
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The broker's own log so far (for a failure message).
    pub fn log_tail(&self, lines: usize) -> String {
        super::common::jvm::log_tail(&self.dir.path().join("server.log"), lines)
    }

    /// Runs Kafka's `kafka-acls` tool against the plaintext listener with
    /// `args` (e.g. `--add --deny-principal User:engram --operation Read
    /// --topic memory.created`).
    pub fn acls(&self, args: &[&str]) {
        let output = Command::new(super::common::jvm::java())
            .args(["-Xmx256m", "-cp", &super::common::jvm::class_path("kafka")])
            .arg("org.apache.kafka.tools.AclCommand")
            .args(["--bootstrap-server", &self.address])
            .args(args)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "kafka-acls {args:?}: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }

    fn client(&self) -> ClientConfig {
        let mut config = ClientConfig::new();
        config.set("bootstrap.servers", &self.address);
        for (key, value) in &self.client_settings {
            config.set(key, value);
        }
        config
    }

    pub fn create_topics(&self, names: &[&str], partitions: i32) {
        let admin: AdminClient<DefaultClientContext> = self.client().create().unwrap();
        let topics: Vec<NewTopic<'_>> = names
            .iter()
            .map(|name| NewTopic::new(name, partitions, TopicReplication::Fixed(1)))
            .collect();
        let results = runtime()
            .block_on(admin.create_topics(&topics, &AdminOptions::new()))
            .unwrap();
        for result in results {
            result.unwrap();
        }
    }

    /// The first log segment of a topic's partition on the broker's disk.
    pub fn segment_file(&self, topic: &str, partition: i32) -> PathBuf {
        self.dir
            .path()
            .join("data")
            .join(format!("{topic}-{partition}"))
            .join("00000000000000000000.log")
    }

    /// Grows `topic` to `partitions` partitions, as an operator scaling
    /// one topic would.
    pub fn add_partitions(&self, topic: &str, partitions: usize) {
        let admin: AdminClient<DefaultClientContext> = self.client().create().unwrap();
        let growth = NewPartitions::new(topic, partitions);
        let results = runtime()
            .block_on(admin.create_partitions([&growth], &AdminOptions::new()))
            .unwrap();
        for result in results {
            result.unwrap();
        }
    }

    /// Sets a topic's `key` (e.g. `max.message.bytes`) to `value`.
    pub fn set_topic_config(&self, topic: &str, key: &str, value: &str) {
        let admin: AdminClient<DefaultClientContext> = self.client().create().unwrap();
        let change = AlterConfig::new(ResourceSpecifier::Topic(topic)).set(key, value);
        let results = runtime()
            .block_on(admin.alter_configs([&change], &AdminOptions::new()))
            .unwrap();
        for result in results {
            result.unwrap();
        }
    }

    /// Produces `(key, payload)` messages in order; returns each one's
    /// (partition, offset).
    pub fn produce(&self, topic: &str, messages: &[(String, Vec<u8>)]) -> Vec<(i32, i64)> {
        runtime().block_on(send_all(&self.producer(), topic, messages))
    }

    /// Like [`Broker::produce`], with extra producer settings such as
    /// `compression.type`.
    pub fn produce_with(
        &self,
        topic: &str,
        messages: &[(String, Vec<u8>)],
        settings: &[(&str, &str)],
    ) -> Vec<(i32, i64)> {
        runtime().block_on(send_all(&self.producer_with(settings), topic, messages))
    }

    /// An idempotent producer for [`send_all`].
    pub fn producer(&self) -> FutureProducer<LogContext> {
        self.producer_with(&[])
    }

    fn producer_with(&self, settings: &[(&str, &str)]) -> FutureProducer<LogContext> {
        let mut config = self.client();
        config
            .set("enable.idempotence", "true")
            .set("linger.ms", "5")
            // As platforms' Java and Go producers, and engram's default.
            .set("partitioner", "murmur2_random");
        for (key, value) in settings {
            config.set(*key, *value);
        }
        config.create_with_context(LogContext).unwrap()
    }

    /// Every message of a topic from the beginning, until `count` arrived or
    /// `wait` passed: (partition, offset, key, payload).
    pub fn read_all(
        &self,
        topic: &str,
        partitions: i32,
        count: usize,
        wait: Duration,
    ) -> Vec<Fetched> {
        let consumer: BaseConsumer = self
            .client()
            .set("group.id", "engram-test-reader")
            .set("enable.auto.commit", "false")
            .create()
            .unwrap();
        let mut list = TopicPartitionList::new();
        for partition in 0..partitions {
            list.add_partition_offset(topic, partition, Offset::Beginning)
                .unwrap();
        }
        consumer.assign(&list).unwrap();
        let mut out = Vec::new();
        let deadline = Instant::now() + wait;
        while out.len() < count && Instant::now() < deadline {
            if let Some(Ok(message)) = consumer.poll(Duration::from_millis(100)) {
                out.push(Fetched {
                    partition: message.partition(),
                    offset: message.offset(),
                    key: message
                        .key()
                        .map(|k| String::from_utf8_lossy(k).into_owned()),
                    payload: message.payload().unwrap_or_default().to_vec(),
                });
            }
        }
        out
    }

    /// The broker's end offset (high-water mark) per partition of `topic`.
    pub fn end_offsets(&self, topic: &str, partitions: i32) -> Vec<i64> {
        let consumer: BaseConsumer = self.client().create().unwrap();
        (0..partitions)
            .map(|partition| {
                consumer
                    .fetch_watermarks(topic, partition, Duration::from_secs(10))
                    .unwrap()
                    .1
            })
            .collect()
    }

    /// The group's committed offset per partition of `topic` (-1: none).
    pub fn committed(&self, group: &str, topic: &str, partitions: i32) -> Vec<i64> {
        let mut readers = self.offset_readers.lock().unwrap();
        let consumer = readers
            .entry(group.to_owned())
            .or_insert_with(|| self.client().set("group.id", group).create().unwrap());
        let mut list = TopicPartitionList::new();
        for partition in 0..partitions {
            list.add_partition(topic, partition);
        }
        let Ok(committed) = consumer.committed_offsets(list, Duration::from_secs(5)) else {
            return vec![-1; partitions as usize];
        };
        (0..partitions)
            .map(
                |p| match committed.find_partition(topic, p).map(|e| e.offset()) {
                    Some(Offset::Offset(offset)) => offset,
                    _ => -1,
                },
            )
            .collect()
    }

    /// Waits until the group has committed `targets` (topic → next offset
    /// per partition), panicking with what it saw after `wait`.
    pub fn wait_committed(
        &self,
        group: &str,
        targets: &BTreeMap<String, Vec<i64>>,
        wait: Duration,
    ) {
        poll_until(wait, Duration::from_millis(100), || {
            let seen: BTreeMap<String, Vec<i64>> = targets
                .iter()
                .map(|(topic, want)| {
                    (
                        topic.clone(),
                        self.committed(group, topic, want.len() as i32),
                    )
                })
                .collect();
            let done = targets.iter().all(|(topic, want)| {
                // -1 (nothing committed) is fine where nothing was produced.
                seen[topic]
                    .iter()
                    .zip(want)
                    .all(|(have, want)| (*have).max(0) >= *want)
            });
            if done {
                return Ok(());
            }
            Err(format!(
                "group {group} committed {seen:?}, expected {targets:?}"
            ))
        })
    }
}

/// The free ports of one broker's listeners.
struct Ports {
    plaintext: u16,
    internal: u16,
    controller: u16,
    sasl: Option<u16>,
    ssl: Option<u16>,
}

fn server_properties(setup: &KafkaSetup, ports: &Ports, dir: &Path) -> String {
    let advertised = setup.advertised_plaintext.unwrap_or(ports.plaintext);
    let mut listeners = vec![
        format!("PLAINTEXT://127.0.0.1:{}", ports.plaintext),
        format!("INTERNAL://127.0.0.1:{}", ports.internal),
        format!("CONTROLLER://127.0.0.1:{}", ports.controller),
    ];
    // Brokers register their advertised listeners; the relay's port stands
    // in for the plaintext one, and the broker's own traffic stays direct.
    let mut advertised_listeners = vec![
        format!("PLAINTEXT://127.0.0.1:{advertised}"),
        format!("INTERNAL://127.0.0.1:{}", ports.internal),
    ];
    for (name, port) in [("SASL_PLAINTEXT", ports.sasl), ("SSL", ports.ssl)] {
        if let Some(port) = port {
            listeners.push(format!("{name}://127.0.0.1:{port}"));
            advertised_listeners.push(format!("{name}://127.0.0.1:{port}"));
        }
    }
    let mut text = format!(
        "process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:{controller}
controller.listener.names=CONTROLLER
listeners={listeners}
advertised.listeners={advertised_listeners}
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,SSL:SSL
inter.broker.listener.name=INTERNAL
log.dirs={logs}
num.partitions=1
default.replication.factor=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=5
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=5
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
num.network.threads=2
num.io.threads=4
",
        controller = ports.controller,
        listeners = listeners.join(","),
        advertised_listeners = advertised_listeners.join(","),
        logs = dir.join("data").display(),
    );
    if ports.sasl.is_some() {
        text.push_str(
            "sasl.enabled.mechanisms=SCRAM-SHA-512
listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
",
        );
    }
    if let Some(keystore) = &setup.tls_keystore {
        text.push_str(&format!(
            "ssl.keystore.type=PEM\nssl.keystore.location={}\nssl.client.auth=none\n",
            keystore.display()
        ));
    }
    if setup.acls {
        text.push_str(
            "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
allow.everyone.if.no.acl.found=false
super.users=User:ANONYMOUS
",
        );
    }
    text
}

fn log4j_properties(file: &Path) -> String {
    format!(
        "appender.file.type = File
appender.file.name = file
appender.file.fileName = {}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
logger.kafka.name = org.apache.kafka
logger.kafka.level = WARN
logger.state.name = state.change.logger
logger.state.level = WARN
",
        file.display()
    )
}

/// Formats the broker's storage (`kafka-storage format`), creating the SCRAM
/// users; a KRaft node does not start on unformatted storage.
fn format_storage(config: &Path, scram_users: &[(String, String)]) {
    let mut command = Command::new(super::common::jvm::java());
    command
        .args(["-Xmx256m", "-XX:TieredStopAtLevel=1", "-cp"])
        .arg(super::common::jvm::class_path("kafka"))
        .args(["kafka.tools.StorageTool", "format", "--ignore-formatted"])
        .args(["--cluster-id", "ZW5ncmFtLXRlc3QtY2x1cw"])
        .arg("--config")
        .arg(config);
    for (name, password) in scram_users {
        command
            .arg("--add-scram")
            .arg(format!("SCRAM-SHA-512=[name={name},password={password}]"));
    }
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "kafka-storage format: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

impl Drop for Broker {
    fn drop(&mut self) {
        // Clients first, so none reports the broker gone.
        if let Ok(mut readers) = self.offset_readers.lock() {
            readers.clear();
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub struct Fetched {
    pub partition: i32,
    pub offset: i64,
    pub key: Option<String>,
    pub payload: Vec<u8>,
}

// Ports for the broker's listeners: one registry per test process.
pub use super::common::ports::{free_port, free_ports_except};

/// A TCP relay in front of the broker. Cutting it closes every connection
/// and closes new ones at once, which clients see as the broker going down;
/// the broker itself keeps running.
pub struct Relay {
    down: Arc<AtomicBool>,
    open: Arc<Mutex<Vec<TcpStream>>>,
}

impl Relay {
    fn spawn(listener: TcpListener, target: String) -> Relay {
        let down = Arc::new(AtomicBool::new(false));
        let open = Arc::new(Mutex::new(Vec::new()));
        let relay = Relay {
            down: Arc::clone(&down),
            open: Arc::clone(&open),
        };
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                if down.load(Ordering::SeqCst) {
                    continue;
                }
                let Ok(server) = TcpStream::connect(&target) else {
                    continue;
                };
                let (Ok(client_copy), Ok(server_copy)) = (client.try_clone(), server.try_clone())
                else {
                    continue;
                };
                {
                    let mut open = open.lock().unwrap();
                    open.extend(client.try_clone());
                    open.extend(server.try_clone());
                }
                pump(client, server_copy);
                pump(server, client_copy);
            }
        });
        relay
    }

    /// The broker is gone for every client until [`Relay::restore`].
    pub fn cut(&self) {
        self.down.store(true, Ordering::SeqCst);
        for stream in self.open.lock().unwrap().drain(..) {
            let _ = stream.shutdown(std::net::Shutdown::Both);
        }
    }

    pub fn restore(&self) {
        self.down.store(false, Ordering::SeqCst);
    }
}

/// Copies `from` into `to` on a thread until either side closes.
fn pump(mut from: TcpStream, mut to: TcpStream) {
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut from, &mut to);
        let _ = to.shutdown(std::net::Shutdown::Both);
        let _ = from.shutdown(std::net::Shutdown::Both);
    });
}

/// Sends keyed messages and waits for each; their (partition, offset).
pub async fn send_all(
    producer: &FutureProducer<LogContext>,
    topic: &str,
    messages: &[(String, Vec<u8>)],
) -> Vec<(i32, i64)> {
    send_to(producer, topic, None, messages).await
}

/// Sends keyed messages to one partition, whatever their keys say, as a
/// producer with another partitioner would; their (partition, offset).
pub fn produce_to_partition(
    broker: &Broker,
    topic: &str,
    partition: i32,
    messages: &[(String, Vec<u8>)],
) -> Vec<(i32, i64)> {
    runtime().block_on(send_to(
        &broker.producer(),
        topic,
        Some(partition),
        messages,
    ))
}

/// Sends keyed messages, each with its own record timestamp (ms), in order;
/// their (partition, offset).
pub fn produce_stamped(
    broker: &Broker,
    topic: &str,
    messages: &[(String, Vec<u8>, i64)],
) -> Vec<(i32, i64)> {
    let producer = broker.producer();
    runtime().block_on(async {
        let mut positions = Vec::with_capacity(messages.len());
        for (key, payload, timestamp) in messages {
            let record = FutureRecord::to(topic)
                .key(key)
                .payload(payload)
                .timestamp(*timestamp);
            let delivery = producer
                .send(record, Timeout::After(Duration::from_secs(30)))
                .await
                .unwrap_or_else(|(e, _)| panic!("produce: {e}"));
            positions.push((delivery.partition, delivery.offset));
        }
        positions
    })
}

/// Sends to `partition`, or where the key puts them.
async fn send_to(
    producer: &FutureProducer<LogContext>,
    topic: &str,
    partition: Option<i32>,
    messages: &[(String, Vec<u8>)],
) -> Vec<(i32, i64)> {
    let mut positions = Vec::with_capacity(messages.len());
    // In windows, so order within a partition is kept and the client queue
    // never fills.
    for window in messages.chunks(500) {
        let sends: Vec<_> = window
            .iter()
            .map(|(key, payload)| {
                let mut record = FutureRecord::to(topic).key(key).payload(payload);
                if let Some(partition) = partition {
                    record = record.partition(partition);
                }
                producer.send(record, Timeout::After(Duration::from_secs(30)))
            })
            .collect();
        // Together: a send future enqueues its record only when polled, so
        // awaiting them one by one sent one record per round trip (and per
        // linger interval).
        for delivery in futures::future::join_all(sends).await {
            let delivery = delivery.unwrap_or_else(|(e, _)| panic!("produce: {e}"));
            positions.push((delivery.partition, delivery.offset));
        }
    }
    positions
}

/// Next offset per partition after the produced positions.
pub fn ends(positions: &[(i32, i64)], partitions: i32) -> Vec<i64> {
    let mut ends = vec![0; partitions as usize];
    for &(partition, offset) in positions {
        let end = &mut ends[partition as usize];
        *end = (*end).max(offset + 1);
    }
    ends
}

/// An `engram run` service process; SIGKILLed on drop if still running.
pub struct Engram {
    child: Child,
    pub log: PathBuf,
}

impl Engram {
    /// Starts engram against `broker` with its state in `state` and the given
    /// extra `ENGRAM_*` settings; logs (JSON) go to `log`.
    pub fn start(broker: &Broker, state: &Path, log: PathBuf, settings: &[(&str, &str)]) -> Engram {
        Self::start_at(&broker.address, state, log, settings)
    }

    /// Like [`Engram::start`], on one of a broker's other listeners.
    pub fn start_at(
        brokers: &str,
        state: &Path,
        log: PathBuf,
        settings: &[(&str, &str)],
    ) -> Engram {
        let mut command = Command::new(env!("CARGO_BIN_EXE_engram"));
        command
            .arg("--state")
            .arg(state)
            .arg("run")
            .env("ENGRAM_KAFKA_BROKERS", brokers)
            .env("ENGRAM_KAFKA_SESSION_TIMEOUT", "6s")
            .env("ENGRAM_KAFKA_HEARTBEAT_INTERVAL", "1s")
            .env("ENGRAM_LOG_FORMAT", "json")
            .env("ENGRAM_LOG_LEVEL", "info")
            // Any free port: several instances run side by side.
            .env("ENGRAM_HTTP_BIND", "127.0.0.1:0")
            .env(
                "ENGRAM_EMBEDDING_MODEL_DIR",
                super::cache().join("models/all-MiniLM-L6-v2"),
            )
            .env(
                "ENGRAM_EMBEDDING_RUNTIME_LIBRARY",
                super::cache().join("onnxruntime/libonnxruntime.so"),
            )
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap());
        for (key, value) in settings {
            command.env(key, value);
        }
        Engram {
            child: command.spawn().unwrap(),
            log,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Log lines (JSON objects) so far.
    pub fn log_lines(&self) -> Vec<serde_json::Value> {
        self.log_text()
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect()
    }

    /// The latest log line with this message.
    pub fn last_logged(&self, message: &str) -> Option<serde_json::Value> {
        self.log_lines()
            .into_iter()
            .rev()
            .find(|line| line["fields"]["message"] == message)
    }

    /// The partitions of the latest assignment, once there is one.
    pub fn assigned(&self) -> Option<Vec<i64>> {
        self.last_logged("partitions assigned").and_then(|line| {
            let text = line["fields"]["partitions"].as_str()?.to_owned();
            serde_json::from_str(&text).ok()
        })
    }

    /// The address of the HTTP endpoint, once it listens.
    pub fn http_address(&self, wait: Duration) -> String {
        poll_until(wait, Duration::from_millis(50), || {
            self.log_lines()
                .iter()
                .find(|line| {
                    line["fields"]["message"]
                        .as_str()
                        .is_some_and(|m| m.starts_with("HTTP endpoint listening"))
                })
                .and_then(|line| line["fields"]["address"].as_str().map(str::to_owned))
                .ok_or_else(|| format!("no HTTP endpoint; log:\n{}", self.log_text()))
        })
    }

    pub fn wait_assigned(&self, wait: Duration) -> Vec<i64> {
        poll_until(wait, Duration::from_millis(100), || {
            self.assigned()
                .filter(|p| !p.is_empty())
                .ok_or_else(|| format!("no partitions assigned; log:\n{}", self.log_text()))
        })
    }

    /// SIGKILL: no flush, no commit, no goodbye.
    pub fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Waits for the process to end by itself; the signal that ended it.
    pub fn wait_killed(mut self, wait: Duration) -> (Option<i32>, String) {
        use std::os::unix::process::ExitStatusExt;
        let status = poll_until(wait, Duration::from_millis(20), || {
            self.child
                .try_wait()
                .unwrap()
                .ok_or_else(|| format!("engram is still running; log:\n{}", self.log_text()))
        });
        (status.signal(), self.log_text())
    }

    /// Waits for the process to end by itself: its status and its log.
    pub fn wait_exit(mut self, wait: Duration) -> (std::process::ExitStatus, String) {
        let status = poll_until(wait, Duration::from_millis(20), || {
            self.child
                .try_wait()
                .unwrap()
                .ok_or_else(|| format!("engram is still running; log:\n{}", self.log_text()))
        });
        (status, self.log_text())
    }

    /// SIGTERM, then waits for a clean exit.
    pub fn stop(mut self) {
        let pid = self.child.id().to_string();
        let status = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        assert!(status.success());
        let status = poll_until(Duration::from_secs(60), Duration::from_millis(50), || {
            self.child
                .try_wait()
                .unwrap()
                .ok_or_else(|| "engram did not stop after SIGTERM".to_owned())
        });
        assert!(
            status.success(),
            "engram exited with {status}; log:\n{}",
            self.log_text()
        );
    }
}

impl Drop for Engram {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
