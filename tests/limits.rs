//! Bounded memory: a million reads over 100k memories of 100 users, with
//! embedding off, through `engram run`; its peak RSS comes from the kernel
//! (this binary runs no other child, so `RUSAGE_CHILDREN` is engram's).

mod common;

use std::io::{BufWriter, Read, Write};
use std::process::{Command, Stdio};

use common::*;
use engram::event::*;

const USERS: usize = 100;
const MEMORIES: usize = 100_000;
const ACCESSES: usize = 1_000_000;
/// The bound docs/faults-and-limits.md states ("Memory"): the state of 100k memories
/// lives in the store, not in the process; what stays in memory is one
/// batch, the store's page cache (64 MiB) and the schedule.
const MAX_RSS_MIB: i64 = 256;

fn input(mut out: impl Write) -> std::io::Result<()> {
    let codec = EventCodec::new(Limits::default()).expect("schemas");
    let user = |memory: usize| format!("u{}", memory % USERS);
    for m in 0..MEMORIES {
        let content = format!("Fact number {m} about topic {}.", m % 97);
        let event = created(&user(m), &format!("m{m}"), &content, m as i64);
        out.write_all(&codec.encode_json(&Event::MemoryCreated(event)))?;
        out.write_all(b"\n")?;
    }
    for i in 0..ACCESSES {
        let m = (i * 7919) % MEMORIES;
        let mut event = accessed(&user(m), &format!("m{m}"), (MEMORIES + i) as i64);
        event.event_id = format!("a{i}").into();
        out.write_all(&codec.encode_json(&Event::MemoryAccessed(event)))?;
        out.write_all(b"\n")?;
    }
    out.flush()
}

fn peak_rss_of_children_kib() -> i64 {
    // SAFETY: getrusage only writes the struct it is given.
    let usage = unsafe {
        let mut usage = std::mem::zeroed::<libc::rusage>();
        assert_eq!(libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage), 0);
        usage
    };
    usage.ru_maxrss
}

#[test]
fn a_million_reads_over_100k_memories_stay_under_the_rss_bound() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_engram"))
        .args(["run", "--input", "-", "--source-id", "reads"])
        .args(["--output", "/dev/null", "--state"])
        .arg(dir.path().join("state"))
        .env("ENGRAM_LOG_LEVEL", "warn")
        .env("ENGRAM_EMBEDDING_ENABLED", "false")
        .env("ENGRAM_CONSOLIDATION_TRIGGER_NEW_MEMORIES", "0")
        .env("ENGRAM_CONSOLIDATION_SCHEDULE_INTERVAL", "0s")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || input(BufWriter::with_capacity(1 << 20, stdin)));
    let mut stderr = String::new();
    let reader = child.stderr.take().unwrap().read_to_string(&mut stderr);
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    reader.unwrap();
    let report = String::from_utf8_lossy(&output.stdout).into_owned() + &stderr;
    assert!(output.status.success(), "{report}");
    let applied = report.lines().find_map(|line| {
        line.trim()
            .strip_prefix("applied")?
            .trim()
            .parse::<usize>()
            .ok()
    });
    assert_eq!(applied, Some(MEMORIES + ACCESSES), "{report}");
    let peak_mib = peak_rss_of_children_kib() / 1024;
    println!("peak RSS {peak_mib} MiB for {MEMORIES} memories and {ACCESSES} reads");
    assert!(
        peak_mib < MAX_RSS_MIB,
        "peak RSS {peak_mib} MiB >= {MAX_RSS_MIB} MiB"
    );
}
