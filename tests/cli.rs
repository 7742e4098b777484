//! The `engram` binary as a user runs it.

use std::path::Path;
use std::process::{Command, Output};

fn engram(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_engram"));
    command.args(args).env("ENGRAM_LOG_LEVEL", "warn");
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().unwrap()
}

fn ok(output: &Output) -> String {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn sample() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/events.jsonl")
        .display()
        .to_string()
}

#[test]
fn run_twice_on_the_sample_leaves_identical_state() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state").display().to_string();
    let out = dir.path().join("out.jsonl").display().to_string();
    let first = engram(
        &[
            "run",
            "--input",
            &sample(),
            "--output",
            &out,
            "--state",
            &state,
        ],
        &[],
    );
    ok(&first);
    let summary = String::from_utf8_lossy(&first.stderr).to_string();
    assert!(summary.contains("engram run summary"), "{summary}");
    assert!(summary.contains("unknown_memory"), "{summary}");
    let outputs = std::fs::read_to_string(&out).unwrap();
    assert!(
        outputs
            .lines()
            .any(|l| l.contains("\"consolidation.completed\""))
    );
    assert_eq!(
        outputs
            .lines()
            .filter(|l| l.contains("\"engram.dlq\""))
            .count(),
        6
    );
    let dump_first = ok(&engram(&["dump", "--state", &state], &[]));
    let second = engram(
        &[
            "run",
            "--input",
            &sample(),
            "--output",
            &out,
            "--state",
            &state,
        ],
        &[],
    );
    ok(&second);
    assert!(String::from_utf8_lossy(&second.stderr).contains("applied                  0"));
    assert_eq!(ok(&engram(&["dump", "--state", &state], &[])), dump_first);
}

#[test]
fn stdin_to_stdout_with_a_separate_dead_letter_file() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("s").display().to_string();
    let dlq = dir.path().join("dlq.jsonl").display().to_string();
    let mut child = Command::new(env!("CARGO_BIN_EXE_engram"))
        .args([
            "run", "--input", "-", "--output", "-", "--dlq", &dlq, "--state", &state,
        ])
        .env("ENGRAM_LOG_LEVEL", "warn")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let input = concat!(
        r#"{"type":"memory.created","event_id":"e1","user_id":"u","memory_id":"m","kind":"episodic","content":"hi","created_at":"2026-01-01T00:00:00Z"}"#,
        "\n",
        "garbage\n",
        r#"{"type":"consolidation.requested","event_id":"r","user_id":"u","requested_at":"2026-01-01T01:00:00Z"}"#,
        "\n"
    );
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    let stdout = ok(&output);
    assert_eq!(stdout.lines().count(), 2, "{stdout}");
    assert!(stdout.contains("consolidation.triggered"));
    let dead = std::fs::read_to_string(&dlq).unwrap();
    assert_eq!(dead.lines().count(), 1);
    assert!(dead.contains("\"source_topic\":\"stdin\""));
}

#[test]
fn config_shows_precedence_and_masks_secrets() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("engram.toml");
    std::fs::write(
        &file,
        "[pipeline]\nbatch_size = 7\n[scylla]\npassword = \"from-file\"\n",
    )
    .unwrap();
    let shown = ok(&engram(
        &[
            "config",
            "--config",
            file.to_str().unwrap(),
            "--state",
            "/flag/dir",
        ],
        &[
            ("ENGRAM_STATE_DIR", "/env/dir"),
            ("ENGRAM_KAFKA_SASL_PASSWORD", "hunter2"),
        ],
    ));
    assert!(shown.contains("batch_size = 7"), "{shown}");
    assert!(shown.contains("dir = \"/flag/dir\""), "{shown}");
    assert!(
        !shown.contains("hunter2") && !shown.contains("from-file"),
        "{shown}"
    );
}

#[test]
fn bad_configuration_is_a_clear_error() {
    let output = engram(&["config"], &[("ENGRAM_PIPELINE_BATCH_SIZE", "lots")]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("ENGRAM_PIPELINE_BATCH_SIZE") && stderr.contains("integer"),
        "{stderr}"
    );
    let missing = engram(
        &[
            "run",
            "--input",
            "/no/such/file",
            "--state",
            "/tmp/engram-cli-missing",
        ],
        &[],
    );
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("/no/such/file"));
}

#[test]
fn shipped_example_config_is_valid_and_complete() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/engram.toml");
    let text = std::fs::read_to_string(&file).unwrap();
    for key in engram::config::Config::keys() {
        let (section, name) = key.split_once('.').unwrap();
        assert!(
            text.contains(&format!("[{section}]")),
            "missing section {section}"
        );
        assert!(
            text.contains(&format!("\n{name} = ")),
            "deploy/engram.toml lacks {key}"
        );
    }
    let shown = ok(&engram(
        &["config", "--config", file.to_str().unwrap()],
        &[],
    ));
    assert!(shown.contains("batch_size = 1000"));
}

#[test]
fn compose_environment_names_real_settings() {
    let compose =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docker-compose.yml"))
            .unwrap();
    let known: Vec<String> = engram::config::Config::keys()
        .iter()
        .map(|k| engram::config::Config::env_var(k))
        .collect();
    let used: Vec<&str> = compose
        .lines()
        .filter_map(|l| l.trim().split_once(':').map(|(k, _)| k))
        .filter(|k| k.starts_with("ENGRAM_"))
        .collect();
    assert!(!used.is_empty());
    for name in used {
        assert!(
            known.iter().any(|k| k == name),
            "docker-compose.yml sets unknown {name}"
        );
    }
}
