//! The `engram` binary as a user runs it.

mod common;

use std::path::Path;
use std::process::{Command, Output};

fn command(args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_engram"));
    command.args(args).env("ENGRAM_LOG_LEVEL", "warn");
    for (key, value) in env {
        command.env(key, value);
    }
    command
}

fn engram(args: &[&str], env: &[(&str, &str)]) -> Output {
    command(args, env).output().unwrap()
}

/// `engram` with `input` piped to its stdin, which is then closed. A child
/// that exits before reading (a refused run) breaks the pipe; that is
/// fine, any other write error is not.
fn engram_with_stdin(args: &[&str], env: &[(&str, &str)], input: &[u8]) -> Output {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = command(args, env)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let written = child.stdin.take().unwrap().write_all(input);
    if let Err(error) = written {
        assert_eq!(error.kind(), std::io::ErrorKind::BrokenPipe, "{error}");
    }
    child.wait_with_output().unwrap()
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

/// A run killed between two writes of an output line leaves it torn; the
/// next run must not glue its first event onto it.
#[test]
fn a_torn_last_output_line_is_cut_before_a_rerun_appends() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state").display().to_string();
    let out = dir.path().join("out.jsonl");
    let kept = r#"{"type":"engram.dlq","event_id":"kept"}"#;
    std::fs::write(&out, format!("{kept}\n{{\"type\":\"consolidation.trig")).unwrap();
    let output = engram(
        &[
            "run",
            "--input",
            &sample(),
            "--output",
            out.to_str().unwrap(),
            "--state",
            &state,
        ],
        &[],
    );
    ok(&output);
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.starts_with(&format!("{kept}\n")), "earlier lines stay");
    for line in text.lines() {
        assert!(
            serde_json::from_str::<serde_json::Value>(line).is_ok(),
            "not one JSON event: {line}"
        );
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("torn"), "the cut is reported: {stderr}");
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
    assert!(summary.contains("reads parked"), "{summary}");
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
        // The sample's bad lines, and its reads of memories never created
        // that waited their hour of stream time; the last such read is
        // still parked when the input ends.
        5
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
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("s").display().to_string();
    let dlq = dir.path().join("dlq.jsonl").display().to_string();
    let input = concat!(
        r#"{"type":"memory.created","event_id":"e1","user_id":"u","memory_id":"m","kind":"episodic","content":"hi","created_at":"2026-01-01T00:00:00Z"}"#,
        "\n",
        "garbage\n",
        r#"{"type":"consolidation.requested","event_id":"r","user_id":"u","requested_at":"2026-01-01T01:00:00Z"}"#,
        "\n"
    );
    let output = engram_with_stdin(
        &[
            "run",
            "--input",
            "-",
            "--source-id",
            "stdin",
            "--output",
            "-",
            "--dlq",
            &dlq,
            "--state",
            &state,
        ],
        &[],
        input.as_bytes(),
    );
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
fn secrets_in_client_properties_are_masked_and_errors_echo_no_values() {
    let shown = ok(&engram(
        &["config"],
        &[(
            "ENGRAM_KAFKA_CLIENT_PROPERTIES",
            "sasl.password=hunter2, sasl.oauthbearer.client.secret=oauth-s3cret,\
             ssl.keystore.password=keystore-pw,socket.keepalive.enable=true",
        )],
    ));
    for secret in ["hunter2", "oauth-s3cret", "keystore-pw"] {
        assert!(!shown.contains(secret), "{secret} shown:\n{shown}");
    }
    assert!(shown.contains("socket.keepalive.enable=true"), "{shown}");
    assert!(shown.contains("sasl.password=********"), "{shown}");

    // A file whose secret line does not parse: the error says where, and
    // shows nothing of the line.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("engram.toml");
    std::fs::write(&file, "[kafka]\nsasl_password = hunter2-unquoted\n").unwrap();
    let output = engram(&["config", "--config", file.to_str().unwrap()], &[]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("hunter2"), "{stderr}");
    assert!(stderr.contains("line 2"), "{stderr}");

    // A value in the wrong place is not echoed either.
    let output = engram(
        &["config"],
        &[("ENGRAM_PIPELINE_BATCH_SIZE", "hunter2-misplaced")],
    );
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("hunter2"), "{stderr}");
    assert!(stderr.contains("ENGRAM_PIPELINE_BATCH_SIZE"), "{stderr}");
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
    assert!(shown.contains("batch_size = 5000"));
}

fn created_line(id: &str, content: &str, at: &str) -> String {
    created_line_of("u", id, content, at)
}

fn created_line_of(user: &str, id: &str, content: &str, at: &str) -> String {
    format!(
        r#"{{"type":"memory.created","event_id":"{user}-c-{id}","user_id":"{user}","memory_id":"{id}","kind":"semantic","content":"{content}","created_at":"{at}"}}"#
    )
}

#[test]
fn consolidate_inspect_and_undo_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state").display().to_string();
    let input = dir.path().join("in.jsonl");
    let lines = [
        created_line("a", "API uses REST", "2026-08-01T10:00:00Z"),
        created_line("b", "The API is RESTful", "2026-08-01T11:00:00Z"),
        created_line("pg", "Project uses PostgreSQL", "2026-08-01T12:00:00Z"),
        created_line("my", "Project uses MySQL", "2026-08-01T13:00:00Z"),
    ];
    std::fs::write(&input, lines.join("\n") + "\n").unwrap();
    let manual_only = [
        ("ENGRAM_CONSOLIDATION_TRIGGER_NEW_MEMORIES", "0"),
        ("ENGRAM_CONSOLIDATION_SCHEDULE_INTERVAL", "0s"),
    ];
    let input = input.display().to_string();
    let out = dir.path().join("out.jsonl").display().to_string();
    ok(&engram(
        &[
            "run", "--input", &input, "--output", &out, "--state", &state,
        ],
        &manual_only,
    ));
    let memories = || {
        let store = engram::store::EmbeddedStore::open(Path::new(&state)).unwrap();
        engram::store::Store::memories(&store, "u").unwrap()
    };
    let before = memories();

    let report = dir.path().join("report.json").display().to_string();
    let now = "2026-08-02T00:00:00Z";
    let dry = ok(&engram(
        &[
            "consolidate",
            "--user",
            "u",
            "--now",
            now,
            "--report",
            &report,
            "--state",
            &state,
        ],
        &[],
    ));
    assert!(dry.contains("dry run: nothing was changed"), "{dry}");
    assert!(dry.contains("merge [merge-duplicates] a, b"), "{dry}");
    assert!(dry.contains("flag_contradiction"), "{dry}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(json["executed"], false);
    assert_eq!(json["counts"]["duplicates_merged"], 1);
    assert_eq!(memories(), before, "a dry run changes nothing");

    let executed = ok(&engram(
        &[
            "consolidate",
            "--user",
            "u",
            "--now",
            now,
            "--execute",
            "--state",
            &state,
        ],
        &[],
    ));
    let run_id = executed.split_whitespace().nth(1).unwrap().to_owned();
    assert!(executed.contains("(executed)"), "{executed}");
    assert_ne!(memories(), before);

    let shown = ok(&engram(
        &[
            "inspect", "--user", "u", "--memory", "pg", "--links", "--depth", "2", "--state",
            &state,
        ],
        &[],
    ));
    assert!(
        shown.contains("pg --contradicts--> my") && shown.contains("my --contradicts--> pg"),
        "{shown}"
    );
    assert!(shown.contains("0 dead links removed"), "{shown}");
    {
        let store = engram::store::EmbeddedStore::open(Path::new(&state)).unwrap();
        let mut batch = engram::store::WriteBatch::default();
        batch.push(engram::store::Write::PutLink(engram::model::Link {
            user_id: "u".into(),
            from_id: "pg".into(),
            to_id: "ghost".into(),
            link_type: engram::model::LinkType::Related,
            confidence: 0.5,
            reason: "points nowhere".into(),
            created_at: 0,
            run_id: None,
        }));
        engram::store::Store::commit(&store, &batch).unwrap();
    }
    let shown = ok(&engram(
        &[
            "inspect", "--user", "u", "--memory", "pg", "--links", "--state", &state,
        ],
        &[],
    ));
    assert!(shown.contains("1 dead links removed"), "{shown}");
    let shown = ok(&engram(
        &[
            "inspect", "--user", "u", "--memory", "pg", "--links", "--state", &state,
        ],
        &[],
    ));
    assert!(
        shown.contains("0 dead links removed"),
        "removed for good: {shown}"
    );
    let listing = ok(&engram(&["inspect", "--user", "u", "--state", &state], &[]));
    assert!(
        listing.contains("4 memories") && listing.contains("superseded"),
        "{listing}"
    );

    let events = dir.path().join("undone.jsonl").display().to_string();
    let undo = || {
        ok(&engram(
            &["undo", &run_id, "--state", &state, "--output", &events],
            &[],
        ))
    };
    let undone = undo();
    assert!(undone.contains("undone"), "{undone}");
    assert_eq!(memories(), before, "undo restores every memory");
    let again = undo();
    assert!(again.contains("already undone"), "{again}");
    // Each undo is published; the repeat is the same event, so a publish
    // that failed the first time can be made again.
    let published: Vec<serde_json::Value> = std::fs::read_to_string(&events)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(published.len(), 2, "{published:?}");
    assert_eq!(published[0], published[1]);
    let event = &published[0];
    assert_eq!(event["type"], "consolidation.undone");
    assert_eq!(event["run_id"], run_id.as_str());
    assert_eq!(event["event_id"], format!("{run_id}/undone"));
    assert_eq!(event["user_id"], "u");
    let restored = event["restored_memory_ids"].as_array().unwrap();
    assert!(!restored.is_empty(), "{event}");
}

#[test]
fn an_invalid_rules_file_stops_start_up_naming_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("rules.toml");
    std::fs::write(
        &rules,
        "[[rule]]\nid = \"x\"\ndetection = \"stale\"\naction = \"merge\"\n",
    )
    .unwrap();
    let state = dir.path().join("state");
    let output = engram(
        &[
            "run",
            "--input",
            "-",
            "--state",
            &state.display().to_string(),
        ],
        &[(
            "ENGRAM_CONSOLIDATION_RULES_PATH",
            &rules.display().to_string(),
        )],
    );
    assert!(!output.status.success());
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(
        error.contains("line 4") && error.contains("`action`") && error.contains("rule `x`"),
        "{error}"
    );
    assert!(
        !state.exists(),
        "nothing is created before the rules are checked"
    );
}

/// The first `lines` events of the sample, in a file of their own.
fn sample_prefix(dir: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(sample()).unwrap();
    let prefix: Vec<&str> = text.lines().take(lines).collect();
    let path = dir.join("events.jsonl");
    std::fs::write(&path, prefix.join("\n") + "\n").unwrap();
    path.display().to_string()
}

#[test]
fn logs_say_what_cycles_did_but_never_what_memories_say() {
    let dir = tempfile::tempdir().unwrap();
    let input = sample_prefix(dir.path(), 1_500);
    let state = dir.path().join("state").display().to_string();
    let out = dir.path().join("out.jsonl").display().to_string();
    let run = engram(
        &[
            "run", "--input", &input, "--output", &out, "--state", &state,
        ],
        &[("ENGRAM_LOG_LEVEL", "info"), ("ENGRAM_LOG_FORMAT", "json")],
    );
    ok(&run);
    let logs = String::from_utf8_lossy(&run.stderr);
    let cycles: Vec<serde_json::Value> = logs
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|line| line["fields"]["message"] == "consolidation cycle finished")
        .collect();
    assert!(!cycles.is_empty(), "{logs}");
    for cycle in &cycles {
        for field in ["user_id", "run_id", "duration_ms", "merged", "archived"] {
            assert!(!cycle["fields"][field].is_null(), "{field} in {cycle}");
        }
    }
    let text = std::fs::read_to_string(&input).unwrap();
    let contents: Vec<String> = text
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter_map(|event| event["content"].as_str().map(str::to_owned))
        .filter(|content| content.len() > 12)
        .collect();
    assert!(contents.len() > 100);
    for content in &contents {
        assert!(
            !logs.contains(content.as_str()),
            "memory content logged: {content}"
        );
    }
}

#[test]
fn progress_is_drawn_on_a_terminal_and_nothing_extra_when_piped() {
    let dir = tempfile::tempdir().unwrap();
    let input = sample_prefix(dir.path(), 600);
    let state = dir.path().join("state").display().to_string();
    let out = dir.path().join("out.jsonl").display().to_string();
    let run = [
        "run", "--input", &input, "--output", &out, "--state", &state,
    ];
    let piped = engram(&run, &[("ENGRAM_LOG_LEVEL", "off")]);
    ok(&piped);
    let stderr = String::from_utf8_lossy(&piped.stderr);
    assert!(
        !stderr.contains("reading events") && !stderr.contains('\r'),
        "{stderr}"
    );
    let all = engram(
        &["consolidate", "--all-users", "--state", &state],
        &[("ENGRAM_LOG_LEVEL", "off")],
    );
    let listed = ok(&all);
    assert!(listed.contains("users consolidated"), "{listed}");
    assert!(
        !listed.contains("consolidating [") && all.stderr.is_empty(),
        "{listed}"
    );
    assert!(
        listed.lines().any(|l| l.starts_with("alice: run ")),
        "{listed}"
    );

    // A terminal, through util-linux `script` (a pseudo-terminal).
    let Ok(_) = Command::new("script").arg("--version").output() else {
        eprintln!("`script` is not installed: terminal progress not checked");
        return;
    };
    let command = format!(
        "{} run --input {input} --output {out}.tty --state {state}.tty",
        env!("CARGO_BIN_EXE_engram")
    );
    let tty = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .env("ENGRAM_LOG_LEVEL", "off")
        .output()
        .unwrap();
    let drawn = String::from_utf8_lossy(&tty.stdout);
    assert!(tty.status.success(), "{drawn}");
    assert!(drawn.contains("reading events ["), "{drawn}");
    assert!(drawn.contains("ETA"), "{drawn}");
}

#[test]
fn the_http_endpoint_in_embedded_mode_requires_its_token_but_not_for_probes() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;

    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state").display().to_string();
    // stdin stays open, so the run (and its endpoint) lives until we close it.
    let mut child = Command::new(env!("CARGO_BIN_EXE_engram"))
        .args([
            "run",
            "--input",
            "-",
            "--source-id",
            "probes",
            "--output",
            "/dev/null",
            "--state",
            &state,
        ])
        .env("ENGRAM_LOG_LEVEL", "info")
        .env("ENGRAM_LOG_FORMAT", "json")
        .env("ENGRAM_HTTP_EMBEDDED", "true")
        .env("ENGRAM_HTTP_BIND", "127.0.0.1:0")
        .env("ENGRAM_HTTP_TOKEN", "s3cret")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut logs = BufReader::new(child.stderr.take().unwrap());
    let address = loop {
        let mut line = String::new();
        assert!(logs.read_line(&mut line).unwrap() > 0, "engram exited");
        let Ok(entry) = serde_json::from_str::<serde_json::Value>(&line) else {
            continue;
        };
        if let Some(address) = entry["fields"]["address"].as_str() {
            break address.to_owned();
        }
    };
    let agent = common::http();
    let status = |method: &str, path: &str, token: Option<&str>| {
        let url = format!("http://{address}{path}");
        let response = match (method, token) {
            ("GET", None) => agent.get(&url).call(),
            ("GET", Some(t)) => agent
                .get(&url)
                .header("Authorization", format!("Bearer {t}"))
                .call(),
            (_, None) => agent.post(&url).send_empty(),
            (_, Some(t)) => agent
                .post(&url)
                .header("Authorization", format!("Bearer {t}"))
                .send_empty(),
        };
        response.unwrap().status().as_u16()
    };
    assert_eq!(status("GET", "/healthz", None), 200);
    assert_eq!(
        status("GET", "/readyz", None),
        200,
        "embedded: ready with a store"
    );
    assert_eq!(status("GET", "/metrics", None), 401);
    assert_eq!(status("GET", "/metrics", Some("wrong")), 401);
    assert_eq!(status("GET", "/metrics", Some("s3cret")), 200);
    assert_eq!(status("GET", "/users/ada/report/latest", None), 401);
    assert_eq!(
        status("GET", "/users/ada/report/latest", Some("s3cret")),
        404
    );
    assert_eq!(
        status("POST", "/users/ada/consolidate", Some("s3cret")),
        409,
        "no stream to send a request into"
    );
    drop(child.stdin.take());
    assert!(child.wait().unwrap().success());
}

/// The ids of the output events in a JSON-lines file, sorted, each once.
fn output_ids(path: &str) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut ids: Vec<String> = text
        .lines()
        .map(|line| {
            let event: serde_json::Value = serde_json::from_str(line).unwrap();
            event["event_id"].as_str().unwrap().to_owned()
        })
        .collect();
    ids.sort();
    ids.dedup();
    ids
}

#[test]
#[cfg_attr(
    not(feature = "fault-injection"),
    ignore = "crash points need `--features fault-injection` (make test turns it on)"
)]
fn a_run_killed_after_a_flush_and_run_again_has_the_outputs_and_state_of_one_clean_run() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).display().to_string();
    let run = |state: &str, out: &str, env: &[(&str, &str)]| {
        let args = [
            "run",
            "--input",
            &sample(),
            "--output",
            out,
            "--state",
            state,
            "--batch-size",
            "200",
        ];
        engram(&args, env)
    };
    ok(&run(&path("clean"), &path("clean.jsonl"), &[]));
    let killed = run(
        &path("state"),
        &path("out.jsonl"),
        &[("ENGRAM_CRASH_AT", "flush.stored:3")],
    );
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(killed.status.signal(), Some(9), "killed at its crash point");
    let written_before_the_kill = output_ids(&path("out.jsonl"));
    assert!(!written_before_the_kill.is_empty());
    ok(&run(&path("state"), &path("out.jsonl"), &[]));
    let (got, clean) = (
        output_ids(&path("out.jsonl")),
        output_ids(&path("clean.jsonl")),
    );
    let missing = clean.iter().filter(|id| !got.contains(id)).count();
    let extra = got.iter().filter(|id| !clean.contains(id)).count();
    assert_eq!(
        (missing, extra),
        (0, 0),
        "the restart keeps what the first run wrote ({} events) and adds the rest",
        written_before_the_kill.len()
    );
    assert_eq!(
        ok(&engram(&["dump", "--state", &path("state")], &[])),
        ok(&engram(&["dump", "--state", &path("clean")], &[]))
    );
}

/// The same crash on ScyllaDB, after a journaled commit's seal: with
/// `scylla.max_batch_bytes` at its floor every flush of several memories
/// is journaled, and the restart's first read of each user rolls the
/// sealed commit forward. Runs when `SCYLLA_NODES` names a cluster.
#[test]
#[cfg_attr(
    not(feature = "fault-injection"),
    ignore = "crash points need `--features fault-injection` (make test turns it on)"
)]
fn a_run_killed_after_a_journal_seal_and_run_again_lands_the_journaled_commit_whole() {
    let nodes = std::env::var("SCYLLA_NODES").unwrap_or_default();
    if nodes.trim().is_empty() {
        eprintln!("skipped: SCYLLA_NODES is not set (`make test-scylla` runs it)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let unique = uuid::Uuid::new_v4().simple().to_string();
    let keyspace = |name: &str| format!("engram_crash_{}_{name}", &unique[..12]);
    let env = |keyspace: &str, crash: Option<&str>| {
        let mut env = vec![
            ("ENGRAM_SCYLLA_NODES", nodes.clone()),
            ("ENGRAM_SCYLLA_KEYSPACE", keyspace.to_owned()),
            (
                "ENGRAM_SCYLLA_REPLICATION_CLASS",
                "SimpleStrategy".to_owned(),
            ),
            ("ENGRAM_SCYLLA_REPLICATION_FACTOR", "1".to_owned()),
            ("ENGRAM_SCYLLA_MAX_BATCH_BYTES", "1024".to_owned()),
            ("ENGRAM_EMBEDDING_ENABLED", "false".to_owned()),
        ];
        if let Some(point) = crash {
            env.push(("ENGRAM_CRASH_AT", point.to_owned()));
        }
        env
    };
    let run = |keyspace: &str, out: &str, crash: Option<&str>| {
        let env = env(keyspace, crash);
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        ok(&engram(&["migrate"], &env));
        let out = dir.path().join(out).display().to_string();
        let args = [
            "run",
            "--input",
            &sample(),
            "--output",
            &out,
            "--batch-size",
            "50",
        ];
        engram(&args, &env)
    };
    let dump = |keyspace: &str| {
        let env = env(keyspace, None);
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        ok(&engram(&["dump"], &env))
    };
    let (clean, crashed) = (keyspace("clean"), keyspace("crashed"));
    ok(&run(&clean, "clean.jsonl", None));
    let killed = run(&crashed, "out.jsonl", Some("scylla.journal_sealed:2"));
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(killed.status.signal(), Some(9), "killed at its crash point");
    ok(&run(&crashed, "out.jsonl", None));
    assert_eq!(dump(&crashed), dump(&clean));
    for keyspace in [clean, crashed] {
        let config = engram::config::ScyllaConfig {
            nodes: nodes.clone(),
            keyspace,
            ..Default::default()
        };
        let _ = engram::store::drop_keyspace(&config, common::runtime().handle());
    }
}

#[test]
fn stdin_needs_a_source_id_so_that_a_second_day_piped_in_is_not_skipped_as_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state").display().to_string();
    let day = |n: u32, source: Option<&str>| {
        let mut args = vec!["run", "--input", "-", "--output", "/dev/null", "--state"];
        args.push(&state);
        if let Some(source) = source {
            args.extend(["--source-id", source]);
        }
        let line = format!(
            r#"{{"type":"memory.created","event_id":"e{n}","user_id":"u","memory_id":"m{n}","kind":"episodic","content":"day {n}","created_at":"2026-01-0{n}T00:00:00Z"}}"#
        );
        engram_with_stdin(
            &args,
            &[("ENGRAM_EMBEDDING_ENABLED", "false")],
            line.as_bytes(),
        )
    };
    let refused = day(1, None);
    assert!(!refused.status.success());
    let error = String::from_utf8_lossy(&refused.stderr);
    assert!(error.contains("--source-id"), "{error}");
    for (n, source) in [(1, "day-1"), (2, "day-2")] {
        let output = day(n, Some(source));
        let summary = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{summary}");
        assert!(summary.contains("applied                  1"), "{summary}");
    }
    // A stream id names one input: replaying it is fine, other input under
    // it is refused rather than skipped line by line.
    let replay = day(1, Some("day-1"));
    assert!(replay.status.success());
    let reused = day(2, Some("day-1"));
    assert!(!reused.status.success());
    let error = String::from_utf8_lossy(&reused.stderr);
    assert!(
        error.contains("stream `day-1` started with another first record"),
        "{error}"
    );
}

#[test]
fn similarity_explains_a_file_of_pairs_one_line_each() {
    let dir = tempfile::tempdir().unwrap();
    let pairs = dir.path().join("pairs.tsv");
    std::fs::write(
        &pairs,
        "# label\tfirst\tsecond\n\
         sand\tThe dog is running through the wet sand\tThe dog is running through the dry sand\n\
         A man is driving a car\tThere is no man driving a car\n\
         \n\
         same\tLives in Berlin\tLives in Berlin\n\
         slot\tThe user is gluten intolerant\tThe user can eat gluten\n\
         floor\tUser uses Python at work\tUser uses Java at work\n",
    )
    .unwrap();
    let out = ok(&engram(
        &["similarity", "--pairs", &pairs.display().to_string()],
        &[],
    ));
    let lines: Vec<Vec<&str>> = out.lines().map(|l| l.split('\t').collect()).collect();
    assert_eq!(lines.len(), 5, "{out}");
    // id (its own, or the line number), cosine, verdict, clause verdict,
    // what a cycle does, the update rule that found a change.
    let ids: Vec<&str> = lines.iter().map(|l| l[0]).collect();
    assert_eq!(ids, ["sand", "3", "same", "slot", "floor"]);
    for line in &lines {
        assert_eq!(line.len(), 6, "{line:?}");
        let cosine: f64 = line[1].parse().unwrap();
        assert!((0.0..=1.0001).contains(&cosine), "{line:?}");
    }
    assert!(lines[0][2].starts_with("contradiction"), "{out}");
    assert!(lines[0][2].contains("`wet` ↔ `dry` (antonyms)"), "{out}");
    assert!(lines[1][2].contains("`no` negates `man`"), "{out}");
    assert!(lines[2][2].starts_with("mergeable either way"), "{out}");
    // Details of each beside one shared word are two values of one
    // attribute: the cycle never fuses them, and the verdict says so.
    assert!(
        lines[3][2].starts_with("neither covers the other; never merged"),
        "{out}"
    );
    let decided: Vec<&str> = lines.iter().map(|l| l[4]).collect();
    assert_eq!(
        decided,
        [
            "contradiction flagged",
            "contradiction flagged",
            "merged",
            "both kept",
            "both kept"
        ]
    );
    // The alignment alone reads two languages in one slot, but the model
    // scores the pair below `contradiction_min_similarity` (0.60), so no
    // cycle compares it: the last column says what the floors make of a
    // verdict.
    assert!(lines[4][2].starts_with("contradiction"), "{out}");
    assert!(lines[4][1].parse::<f64>().unwrap() < 0.60, "{out}");

    // Texts given as arguments: the same decision, on a line of its own.
    let plain = ok(&engram(
        &["similarity", "Lives in Berlin", "Lives in Berlin"],
        &[],
    ));
    assert!(plain.contains("a cycle: merged"), "{plain}");

    // The same from stdin.
    let piped = engram_with_stdin(
        &["similarity", "--pairs", "-"],
        &[],
        &std::fs::read(&pairs).unwrap(),
    );
    assert_eq!(ok(&piped), out);

    // A line that is not a pair is an error naming it; nothing is guessed.
    std::fs::write(&pairs, "a\tb\njust one text\n").unwrap();
    let bad = engram(
        &["similarity", "--pairs", &pairs.display().to_string()],
        &[],
    );
    assert!(!bad.status.success());
    let error = String::from_utf8_lossy(&bad.stderr);
    assert!(error.contains("line 2"), "{error}");
    assert!(bad.stdout.is_empty());
}

/// Each pair as one user's two facts, consolidated by `engram run`: the
/// users whose pair was merged.
fn merged_by_a_cycle(pairs: &[(&str, &str, &str)]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let mut lines = Vec::new();
    for (user, first, second) in pairs {
        lines.push(created_line_of(user, "a", first, "2026-08-01T10:00:00Z"));
        lines.push(created_line_of(user, "b", second, "2026-08-01T10:01:00Z"));
        lines.push(format!(
            r#"{{"type":"consolidation.requested","event_id":"{user}-r","user_id":"{user}","execute":true,"requested_at":"2026-08-02T10:00:00Z"}}"#
        ));
    }
    let input = dir.path().join("in.jsonl");
    std::fs::write(&input, lines.join("\n") + "\n").unwrap();
    let state = dir.path().join("state").display().to_string();
    let out = ok(&engram(
        &[
            "run",
            "--input",
            &input.display().to_string(),
            "--output",
            "-",
            "--state",
            &state,
        ],
        &[],
    ));
    out.lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|e| e["type"] == "consolidation.completed")
        .filter(|e| e["counts"]["duplicates_merged"] == 1)
        .map(|e| e["user_id"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn similarity_says_whether_the_cycle_merges_a_pair() {
    // A phrase moved to the other end of the sentence is the same fact:
    // the cycle merges, and both the verdict and the cycle column must say
    // so rather than send a platform checking its thresholds the wrong way.
    let pairs = [
        (
            "moved",
            "On Fridays the team deploys the API",
            "The team deploys the API on Fridays",
        ),
        (
            "moved-detail",
            "On Fridays the team deploys the API",
            "Every Friday the team deploys the API to staging",
        ),
        ("same", "Lives in Berlin", "Lives in Berlin"),
        (
            "slot",
            "The user is gluten intolerant",
            "The user can eat gluten",
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pairs.tsv");
    let listed: Vec<String> = pairs
        .iter()
        .map(|(id, a, b)| format!("{id}\t{a}\t{b}"))
        .collect();
    std::fs::write(&file, listed.join("\n") + "\n").unwrap();
    let out = ok(&engram(
        &["similarity", "--pairs", &file.display().to_string()],
        &[],
    ));
    let merged = merged_by_a_cycle(&pairs);
    assert_eq!(merged, ["moved", "moved-detail", "same"], "{out}");
    for line in out.lines() {
        let fields: Vec<&str> = line.split('\t').collect();
        let cosine: f64 = fields[1].parse().unwrap();
        assert!(cosine >= 0.78, "a pair the cycle compares: {line}");
        let by_cycle = merged.iter().any(|user| user == fields[0]);
        assert_eq!(fields[2].starts_with("mergeable"), by_cycle, "{line}");
        assert_eq!(fields[4] == "merged", by_cycle, "{line}");
    }
}

#[test]
fn output_piped_into_a_reader_that_stops_early_ends_quietly() {
    use std::process::Stdio;
    // `engram similarity --pairs … | head` is how a platform skims a
    // large file of pairs: a reader that stops early is no error.
    let dir = tempfile::tempdir().unwrap();
    let pairs = dir.path().join("pairs.tsv");
    std::fs::write(&pairs, "Lives in Berlin\tWorks in Berlin\n".repeat(50)).unwrap();
    let mut child = command(
        &["similarity", "--pairs", &pairs.display().to_string()],
        &[],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    // The reader goes away before the first line is written.
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stderr.trim().is_empty(), "{stderr}");
}
