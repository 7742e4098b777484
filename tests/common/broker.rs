//! A real Kafka-protocol broker for tests (`tansu`, fetched by `make models`
//! into the project cache), engram service processes, and small clients.

#![allow(dead_code)]

use std::collections::{BTreeMap, HashMap};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
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

/// A broker on a free 127.0.0.1 port, killed on drop.
pub struct Broker {
    child: Child,
    pub address: String,
    /// One client per group for offset queries: a client per query costs
    /// threads and connections, and polling with them starved the engram
    /// processes under test of CPU.
    offset_readers: Mutex<HashMap<String, BaseConsumer>>,
    /// What the test's own clients need beyond the address (TLS, SASL).
    client_settings: Vec<(String, String)>,
}

impl Broker {
    pub fn start() -> Broker {
        let port = free_port();
        Self::start_advertising(port, port)
    }

    /// A broker that every client reaches through a [`Relay`], which can cut
    /// it off and bring it back; the broker advertises the relay's address.
    pub fn start_behind_relay() -> (Broker, Relay) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let relay_port = listener.local_addr().unwrap().port();
        let broker_port = free_port();
        let broker = Self::start_advertising(broker_port, relay_port);
        let relay = Relay::spawn(listener, format!("127.0.0.1:{broker_port}"));
        (broker, relay)
    }

    fn start_advertising(port: u16, advertised: u16) -> Broker {
        Self::start_behind(port, advertised, Vec::new(), &[])
    }

    /// A broker listening in plaintext on `port` that advertises `advertised`
    /// (where a relay or TLS terminator forwards to it); the test's clients
    /// use `client_settings`, and `broker_args` go to tansu.
    pub fn start_behind(
        port: u16,
        advertised: u16,
        client_settings: Vec<(String, String)>,
        broker_args: &[&str],
    ) -> Broker {
        let binary = super::cache().join("bin/tansu");
        assert!(
            binary.exists(),
            "{} is missing (run `make models`)",
            binary.display()
        );
        let child = Command::new(binary)
            .args([
                "broker",
                "--listener-url",
                &format!("tcp://127.0.0.1:{port}"),
                "--advertised-listener-url",
                &format!("tcp://127.0.0.1:{advertised}"),
            ])
            .args(["--storage-engine", "memory://tansu/"])
            .args(broker_args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let listening = format!("127.0.0.1:{port}");
        poll_until(Duration::from_secs(20), Duration::from_millis(20), || {
            TcpStream::connect(&listening)
                .map(drop)
                .map_err(|_| "the broker did not start".to_owned())
        });
        Broker {
            child,
            address: format!("127.0.0.1:{advertised}"),
            offset_readers: Mutex::new(HashMap::new()),
            client_settings,
        }
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
            // tansu answers each produce request a linger interval late and
            // batches get one message each: 5 ms linger made 5,000 messages
            // take 30 s, none takes 2 s.
            .set("linger.ms", "0")
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

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A TCP relay in front of the broker. Cutting it closes every connection
/// and closes new ones at once, which clients see as the broker going down;
/// tansu itself cannot be stopped and restarted (its storage is memory).
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
        for send in sends {
            let delivery = send.await.unwrap_or_else(|(e, _)| panic!("produce: {e}"));
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
        let mut command = Command::new(env!("CARGO_BIN_EXE_engram"));
        command
            .arg("--state")
            .arg(state)
            .arg("run")
            .env("ENGRAM_KAFKA_BROKERS", &broker.address)
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

    /// The partitions of the latest assignment, once there is one.
    pub fn assigned(&self) -> Option<Vec<i64>> {
        self.log_lines()
            .iter()
            .rev()
            .find(|line| line["fields"]["message"] == "partitions assigned")
            .and_then(|line| {
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
