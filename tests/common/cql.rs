//! A live CQL database for the ScyllaDB store's tests: the cluster that
//! `SCYLLA_NODES` names (a real ScyllaDB, or any running instance), else one
//! Apache Cassandra 5.0 node started once per test binary from the jars
//! `make models` fetched, configured with ScyllaDB's limits where the two
//! differ and engram depends on them, and stopped when the binary exits.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The Cassandra release started here (scripts/jvm/cassandra/pom.xml).
pub const CASSANDRA_VERSION: &str = "5.0.6";

/// ScyllaDB's defaults for the limits engram's store runs into, written into
/// the Cassandra node's configuration so the suite fails where ScyllaDB would:
/// - a batch over 1024 KiB is refused (`batch_size_fail_threshold_in_kb`),
///   over 128 KiB warned of;
/// - a mutation over half a 32 MiB commit-log segment is refused;
/// - ScyllaDB warns of 1,000 tombstones in a read and stops a page at
///   10,000 (`query_tombstone_page_limit`); Cassandra fails such a read
///   instead, so a partition that piles up tombstones fails here rather than
///   slowing down unseen.
pub const SCYLLA_LIMITS: &str = "\
batch_size_warn_threshold: 128KiB
batch_size_fail_threshold: 1024KiB
unlogged_batch_across_partitions_warn_threshold: 10
commitlog_segment_size: 32MiB
tombstone_warn_threshold: 1000
tombstone_failure_threshold: 10000
";

/// A running node: where clients reach it, and the process when it is ours.
pub struct Node {
    pub contact_point: String,
    child: Option<Mutex<Child>>,
    dir: Option<PathBuf>,
    pub started_in: Option<Duration>,
}

impl Node {
    /// Whether this binary started the node (and so may stop it).
    pub fn is_ours(&self) -> bool {
        self.child.is_some()
    }

    /// Kills our node (SIGKILL, mid-whatever) and starts it again on the
    /// same data and port: commit-log replay, as after a crash. `None` when
    /// the node is not ours to restart.
    pub fn crash_and_restart(&self) -> Option<Duration> {
        let (child, dir) = (self.child.as_ref()?, self.dir.as_ref()?);
        let mut child = child.lock().unwrap();
        let _ = child.kill();
        let _ = child.wait();
        let started = Instant::now();
        *child = spawn(dir);
        wait_listening(&self.contact_point, &mut child, dir);
        Some(started.elapsed())
    }
}

impl Node {
    /// Settings for a keyspace of its own on this node (`engram_test_…`,
    /// one replica), with `SCYLLA_USERNAME`/`SCYLLA_PASSWORD` where a given
    /// cluster needs them.
    pub fn fresh_keyspace(&self) -> engram::config::ScyllaConfig {
        let unique = uuid::Uuid::new_v4().simple().to_string();
        engram::config::ScyllaConfig {
            nodes: self.contact_point.clone(),
            keyspace: format!("engram_test_{}", &unique[..16]),
            username: std::env::var("SCYLLA_USERNAME").unwrap_or_default(),
            password: std::env::var("SCYLLA_PASSWORD").unwrap_or_default(),
            replication_class: "SimpleStrategy".into(),
            replication_factor: 1,
            ..engram::config::ScyllaConfig::default()
        }
    }
}

/// How the node's commit log reaches the disk.
#[derive(Clone, Copy)]
enum CommitLogSync {
    /// Every 10 s, ScyllaDB's and Cassandra's default: a killed node loses
    /// the writes of the last period it acknowledged (a cluster keeps them
    /// on the other replicas).
    Periodic,
    /// Before each write is acknowledged (`commitlog_sync: batch`): what a
    /// write acknowledged by a quorum has on a cluster, on one node.
    EveryWrite,
}

/// The database for this test binary, started on first use.
pub fn node() -> &'static Node {
    static NODE: OnceLock<Node> = OnceLock::new();
    NODE.get_or_init(|| given_cluster().unwrap_or_else(|| start_cassandra(CommitLogSync::Periodic)))
}

/// Like [`node`], with every acknowledged write on disk before it is
/// acknowledged, for tests that kill the node and expect what it
/// acknowledged to be there after its restart.
pub fn node_syncing_every_write() -> &'static Node {
    static NODE: OnceLock<Node> = OnceLock::new();
    NODE.get_or_init(|| {
        given_cluster().unwrap_or_else(|| start_cassandra(CommitLogSync::EveryWrite))
    })
}

fn given_cluster() -> Option<Node> {
    let nodes = std::env::var("SCYLLA_NODES").unwrap_or_default();
    (!nodes.trim().is_empty()).then_some(Node {
        contact_point: nodes,
        child: None,
        dir: None,
        started_in: None,
    })
}

fn start_cassandra(sync: CommitLogSync) -> Node {
    remove_stale_directories();
    let dir = std::env::temp_dir().join(format!("engram-cassandra-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let [native_port, storage_port, jmx_port] = super::ports::free_ports_except(&[]);
    let data = dir.join("data");
    let config = format!(
        "cluster_name: engram-test
num_tokens: 16
partitioner: org.apache.cassandra.dht.Murmur3Partitioner
endpoint_snitch: SimpleSnitch
seed_provider:
  - class_name: org.apache.cassandra.locator.SimpleSeedProvider
    parameters:
      - seeds: \"127.0.0.1:{storage_port}\"
listen_address: 127.0.0.1
rpc_address: 127.0.0.1
storage_port: {storage_port}
native_transport_port: {native_port}
start_native_transport: true
{sync}
data_file_directories: [{data}/data]
commitlog_directory: {data}/commitlog
saved_caches_directory: {data}/saved_caches
hints_directory: {data}/hints
cdc_raw_directory: {data}/cdc
# Dropping a test keyspace need not snapshot it first.
auto_snapshot: false
{SCYLLA_LIMITS}",
        data = data.display(),
        sync = match sync {
            CommitLogSync::Periodic => "commitlog_sync: periodic\ncommitlog_sync_period: 10000ms",
            CommitLogSync::EveryWrite => "commitlog_sync: batch",
        },
    );
    std::fs::write(dir.join("cassandra.yaml"), config).unwrap();
    std::fs::write(
        dir.join("logback.xml"),
        format!(
            "<configuration><appender name=\"file\" class=\"ch.qos.logback.core.FileAppender\">\
             <file>{}</file><encoder><pattern>%-5level %date{{HH:mm:ss.SSS}} [%thread] %logger{{20}}: %msg%n</pattern>\
             </encoder></appender><root level=\"INFO\"><appender-ref ref=\"file\"/></root></configuration>",
            dir.join("system.log").display()
        ),
    )
    .unwrap();
    std::fs::write(dir.join("jmx-port"), jmx_port.to_string()).unwrap();
    let started = Instant::now();
    let mut child = spawn(&dir);
    let contact_point = format!("127.0.0.1:{native_port}");
    wait_listening(&contact_point, &mut child, &dir);
    let started_in = started.elapsed();
    if std::env::var_os("ENGRAM_TEST_VERBOSE").is_some() {
        eprintln!(
            "Apache Cassandra {CASSANDRA_VERSION} ready in {:.1} s",
            started_in.as_secs_f64()
        );
    }
    Node {
        contact_point,
        child: Some(Mutex::new(child)),
        dir: Some(dir),
        started_in: Some(started_in),
    }
}

/// The JVM options Cassandra's own `jvm17-server.options` sets for Java 17
/// (its code reaches into these JDK internals), and a small heap.
fn jvm_options(dir: &Path) -> Vec<String> {
    let mut options: Vec<String> = [
        "-Xms1g",
        "-Xmx1g",
        "-XX:+UseG1GC",
        "-XX:+ExitOnOutOfMemoryError",
        "-Djdk.attach.allowAttachSelf=true",
        "-Dcassandra-foreground=yes",
        "-Dcassandra.superuser_setup_delay_ms=0",
        "-Dcassandra.skip_wait_for_gossip_to_settle=0",
        "-Dcassandra.ring_delay_ms=0",
    ]
    .map(str::to_owned)
    .into();
    for package in [
        "java.base/java.lang",
        "java.base/java.lang.module",
        "java.base/java.lang.reflect",
        "java.base/java.io",
        "java.base/java.math",
        "java.base/java.net",
        "java.base/java.nio",
        "java.base/java.util",
        "java.base/java.util.concurrent",
        "java.base/java.util.concurrent.atomic",
        "java.base/jdk.internal.loader",
        "java.base/jdk.internal.math",
        "java.base/jdk.internal.module",
        "java.base/jdk.internal.ref",
        "java.base/jdk.internal.reflect",
        "java.base/jdk.internal.util.jar",
        "java.base/sun.nio.ch",
        "jdk.management/com.sun.management.internal",
    ] {
        options.push(format!("--add-opens={package}=ALL-UNNAMED"));
    }
    for package in [
        "java.base/jdk.internal.misc",
        "java.base/jdk.internal.ref",
        "java.base/sun.nio.ch",
        "java.management.rmi/com.sun.jmx.remote.internal.rmi",
        "java.rmi/sun.rmi.registry",
        "java.rmi/sun.rmi.server",
        "java.sql/java.sql",
    ] {
        options.push(format!("--add-exports={package}=ALL-UNNAMED"));
    }
    let jmx_port = std::fs::read_to_string(dir.join("jmx-port")).unwrap();
    options.push(format!("-Dcassandra.jmx.local.port={}", jmx_port.trim()));
    options.push(format!(
        "-Dcassandra.config=file://{}",
        dir.join("cassandra.yaml").display()
    ));
    options.push(format!(
        "-Dlogback.configurationFile={}",
        dir.join("logback.xml").display()
    ));
    options.push(format!(
        "-Dcassandra.storagedir={}",
        dir.join("data").display()
    ));
    options
}

fn spawn(dir: &Path) -> Child {
    let mut command = Command::new(super::jvm::java());
    command
        .args(jvm_options(dir))
        .args(["-cp", &super::jvm::class_path("cassandra")])
        .arg("org.apache.cassandra.service.CassandraDaemon")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join("stderr.log")).unwrap());
    super::jvm::spawn_tied_to_process(command).unwrap()
}

fn wait_listening(contact_point: &str, child: &mut Child, dir: &Path) {
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            panic!(
                "Apache Cassandra exited with {status} while starting:\n{}\n{}",
                super::jvm::log_tail(&dir.join("stderr.log"), 20),
                super::jvm::log_tail(&dir.join("system.log"), 40)
            );
        }
        if TcpStream::connect(contact_point).is_ok() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "Apache Cassandra did not start listening on {contact_point}:\n{}",
            super::jvm::log_tail(&dir.join("system.log"), 40)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The data of nodes whose test binary has exited (the node went with it).
fn remove_stale_directories() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name.strip_prefix("engram-cassandra-") else {
            continue;
        };
        if !Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}
