//! `engram report --html`, looked at in a real headless browser (Debian's
//! `chromium`, which `make test` installs): the page renders, is
//! self-contained, shows every section, and logs nothing to the console.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn engram(args: &[&str]) -> Output {
    let output = Command::new(env!("CARGO_BIN_EXE_engram"))
        .args(args)
        .env("ENGRAM_LOG_LEVEL", "warn")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "engram {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// The browser, or `None` (said on the terminal) when it is not installed
/// and the caller did not require it (`make test` does).
fn chromium() -> Option<PathBuf> {
    let found = ["chromium", "chromium-browser"].iter().find_map(|name| {
        Command::new("which")
            .arg(name)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
    });
    if found.is_none() {
        assert!(
            std::env::var_os("ENGRAM_REQUIRE_BROWSER").is_none(),
            "chromium is required (ENGRAM_REQUIRE_BROWSER) but not installed"
        );
        let _ = writeln!(
            std::io::stderr(),
            "report: browser checks SKIPPED (no chromium; `make test` installs it)"
        );
    }
    found
}

/// Loads `page` in headless chromium: a screenshot at `shot`, and the
/// browser's log (console messages included).
fn browse(browser: &Path, page: &Path, shot: &Path, profile: &Path) -> String {
    let output = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--log-level=0",
            "--window-size=1280,3000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn console_lines(log: &str) -> Vec<&str> {
    log.lines().filter(|l| l.contains("CONSOLE")).collect()
}

/// Width and height from a PNG's IHDR chunk.
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    let be =
        |at: usize| u32::from_be_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
    (be(16), be(20))
}

/// The run with the most merges and at least one contradiction.
fn richest_run(state: &str) -> String {
    let dump: serde_json::Value =
        serde_json::from_slice(&engram(&["dump", "--state", state]).stdout).unwrap();
    let mut best = None;
    for user in dump["users"].as_array().unwrap() {
        for run in user["runs"].as_array().unwrap() {
            let report = &run["report"];
            let merged = report["counts"]["duplicates_merged"].as_i64().unwrap_or(0);
            let flagged = report["counts"]["contradictions_found"]
                .as_i64()
                .unwrap_or(0);
            if flagged > 0 && best.as_ref().is_none_or(|(m, _)| merged > *m) {
                best = Some((merged, run["run_id"].as_str().unwrap().to_owned()));
            }
        }
    }
    let (merged, run_id) = best.expect("a run with contradictions in the sample");
    assert!(merged > 0, "the chosen run merged duplicates");
    run_id
}

#[test]
fn the_html_report_renders_in_a_browser_with_every_section() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state").display().to_string();
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/events.jsonl");
    let out = dir.path().join("out.jsonl").display().to_string();
    engram(&[
        "run",
        "--input",
        sample.to_str().unwrap(),
        "--output",
        &out,
        "--state",
        &state,
    ]);
    let run_id = richest_run(&state);
    let page = dir.path().join("report.html");
    engram(&[
        "report",
        "--run",
        &run_id,
        "--html",
        page.to_str().unwrap(),
        "--state",
        &state,
    ]);
    let html = std::fs::read_to_string(&page).unwrap();
    // Self-contained: nothing to fetch, nothing to run.
    for banned in ["<script", "<link", "src=", "href=", "http://", "https://"] {
        assert!(!html.contains(banned), "the page contains {banned}");
    }
    for section in [
        "id=\"salience\"",
        "id=\"kinds\"",
        "id=\"clusters\"",
        "id=\"contradictions\"",
        "id=\"patterns\"",
        "id=\"graph\"",
        "id=\"actions\"",
    ] {
        assert!(html.contains(section), "no {section}");
    }
    assert!(
        html.contains("card canonical"),
        "a merged cluster with its kept memory"
    );
    assert!(html.contains("class=\"signal\""), "contradiction signals");
    assert!(
        html.contains("</b>active before") && html.contains("</b>active after"),
        "the run's effect on the active set"
    );
    assert!(html.contains("<circle"), "the link graph");
    assert!(html.contains(&run_id));

    let Some(browser) = chromium() else {
        return;
    };
    let shot = dir.path().join("report.png");
    let log = browse(&browser, &page, &shot, &dir.path().join("profile"));
    let png = std::fs::read(&shot).unwrap();
    assert_eq!(png_size(&png), (1280, 3000));
    assert!(png.len() > 20_000, "a screenshot of a blank page is small");
    assert!(
        console_lines(&log).is_empty(),
        "console messages: {:?}",
        console_lines(&log)
    );

    // The console check sees errors when there are some.
    let broken = dir.path().join("broken.html");
    std::fs::write(
        &broken,
        "<!DOCTYPE html><html><body><script>console.error('boom')</script></body></html>",
    )
    .unwrap();
    let log = browse(
        &browser,
        &broken,
        &dir.path().join("broken.png"),
        &dir.path().join("profile2"),
    );
    assert!(
        console_lines(&log).iter().any(|l| l.contains("boom")),
        "{log}"
    );
}
