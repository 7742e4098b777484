//! Starting the JVM systems the tests run against (Apache Kafka, Apache
//! Cassandra) from the jars `make models` fetched from Maven Central into the
//! project cache, as child processes that cannot outlive the test binary.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::mpsc;

/// `$JAVA_HOME/bin/java`, else `java` on the PATH.
pub fn java() -> PathBuf {
    std::env::var_os("JAVA_HOME")
        .map(|home| PathBuf::from(home).join("bin/java"))
        .filter(|java| java.exists())
        .unwrap_or_else(|| PathBuf::from("java"))
}

/// The class path of a system fetched into `<cache>/<name>/lib`.
pub fn class_path(name: &str) -> String {
    let lib = super::cache().join(name).join("lib");
    assert!(
        lib.join("..").join("SOURCE").exists(),
        "{} is missing (run `make models`)",
        lib.display()
    );
    format!("{}/*", lib.display())
}

/// Spawns `command` so that the kernel kills it when the thread that spawned
/// it ends (PR_SET_PDEATHSIG): a test's own server goes with the test's
/// thread, and nothing is left running when a test binary is killed.
pub fn spawn_tied_to_thread(command: &mut Command) -> std::io::Result<Child> {
    // SAFETY: prctl and getppid are async-signal-safe; nothing is allocated
    // between fork and exec.
    unsafe {
        command.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The parent may have gone between fork and prctl.
            if libc::getppid() == 1 {
                return Err(std::io::Error::other("the test process is gone"));
            }
            Ok(())
        });
    }
    command.spawn()
}

/// Spawns `command` from a thread that lives as long as the test binary, so
/// that a server shared by all of a binary's tests stays up until the binary
/// exits, and is killed then.
pub fn spawn_tied_to_process(mut command: Command) -> std::io::Result<Child> {
    let (sent, received) = mpsc::channel();
    std::thread::Builder::new()
        .name("shared-server".into())
        .spawn(move || {
            let _ = sent.send(spawn_tied_to_thread(&mut command));
            loop {
                std::thread::park();
            }
        })?;
    received
        .recv()
        .unwrap_or_else(|_| Err(std::io::Error::other("the spawning thread ended")))
}

/// The last `lines` lines of a log file, for a failure message.
pub fn log_tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}
