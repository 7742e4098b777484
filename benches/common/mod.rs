//! What the benchmarks share.

// Each benchmark uses its own subset of these.
#![allow(dead_code)]

#[path = "../../tests/common/jvm.rs"]
pub mod jvm;

#[path = "../../tests/common/cql.rs"]
pub mod cql;

#[path = "../../tests/common/ports.rs"]
pub mod ports;

/// This process's peak resident set size (VmHWM) in MiB.
pub fn peak_rss_mib() -> f64 {
    status_mib("self", "VmHWM:")
}

/// A kB field of `/proc/<process>/status` (`self` or a pid), in MiB; 0 when
/// unreadable.
pub fn status_mib(process: &str, field: &str) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{process}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

/// Whether `cargo bench` started this binary (it passes `--bench`).
/// `cargo test --all-targets` runs benchmarks too, without it: they then only
/// say how to run them, so the test suite is not slowed by measurements.
pub fn started_by_cargo_bench() -> bool {
    let bench = std::env::args().any(|a| a == "--bench");
    if !bench {
        println!("benchmark skipped: run it with `make bench` (cargo bench)");
    }
    bench
}

/// The project's cache of models, runtime and test tools (`make models`).
pub fn cache() -> std::path::PathBuf {
    std::env::var_os("ENGRAM_CACHE")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".cache/engram")
        })
}

/// The embedding settings as the binary would see them (`ENGRAM_*` variables
/// apply), with the model from the project cache unless told otherwise.
pub fn embedding_config() -> engram::embed::EmbeddingConfig {
    let cache = cache();
    let defaults = [
        (
            "ENGRAM_EMBEDDING_MODEL_DIR",
            cache.join("models/all-MiniLM-L6-v2"),
        ),
        (
            "ENGRAM_EMBEDDING_RUNTIME_LIBRARY",
            cache.join("onnxruntime/libonnxruntime.so"),
        ),
    ]
    .map(|(name, path)| (name.to_owned(), path.display().to_string()));
    // Real variables come after the defaults, so they win.
    let env = defaults.into_iter().chain(std::env::vars());
    engram::config::Config::load(None, env, Vec::new())
        .expect("configuration")
        .embedding
}

/// User + system CPU seconds a process has used (`self` or a pid).
pub fn cpu_seconds(process: &str) -> f64 {
    cpu_time(process).total()
}

/// CPU seconds a process has spent in user space and in the kernel.
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuTime {
    pub user: f64,
    pub system: f64,
}

impl CpuTime {
    pub fn total(self) -> f64 {
        self.user + self.system
    }

    /// What was spent since `earlier`.
    pub fn since(self, earlier: CpuTime) -> CpuTime {
        CpuTime {
            user: self.user - earlier.user,
            system: self.system - earlier.system,
        }
    }
}

/// A process's CPU time (`self` or a pid; `/proc/<process>/stat`, fields
/// 14 and 15, in clock ticks).
pub fn cpu_time(process: &str) -> CpuTime {
    let stat = std::fs::read_to_string(format!("/proc/{process}/stat")).unwrap_or_default();
    let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // SAFETY: sysconf only reads a system constant.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    CpuTime {
        user: ticks(11) / per_second,
        system: ticks(12) / per_second,
    }
}
