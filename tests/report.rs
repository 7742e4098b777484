//! `engram report --html` and the HTTP endpoint's pages, looked at in a real
//! headless browser (Debian's `chromium`, which `make test` installs): a
//! user's history page tells the sample user's story, its run pages are
//! where its links say, every page is self-contained, renders, and logs
//! nothing to the console.

mod common;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use engram::store::{EmbeddedStore, Store};

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

/// Runs the sample into a fresh state directory.
fn sample_state(dir: &Path) -> String {
    let state = dir.join("state").display().to_string();
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/events.jsonl");
    let out = dir.join("out.jsonl").display().to_string();
    engram(&[
        "run",
        "--input",
        sample.to_str().unwrap(),
        "--output",
        &out,
        "--state",
        &state,
    ]);
    state
}

/// Nothing to fetch, nothing to run, and every link points beside the page.
fn assert_self_contained(html: &str) {
    for banned in ["<script", "<link", "src=", "http://", "https://"] {
        assert!(!html.contains(banned), "the page contains {banned}");
    }
    for href in hrefs(html) {
        assert!(
            !href.contains(':') && !href.starts_with('/'),
            "a link that leaves the page's folder: {href}"
        );
    }
}

fn hrefs(html: &str) -> Vec<String> {
    html.split("href=\"")
        .skip(1)
        .map(|rest| rest[..rest.find('"').unwrap()].replace("&amp;", "&"))
        .collect()
}

/// The section with this id, up to its end.
fn section<'h>(html: &'h str, id: &str) -> &'h str {
    let start = html
        .find(&format!("<section id=\"{id}\""))
        .unwrap_or_else(|| panic!("no section {id}"));
    let rest = &html[start..];
    &rest[..rest.find("</section>").unwrap()]
}

/// Every section of a run's page, with the run's merges and signals.
fn assert_run_page(html: &str, run_id: &str) {
    assert_self_contained(html);
    for id in [
        "salience",
        "kinds",
        "clusters",
        "contradictions",
        "patterns",
        "graph",
        "actions",
    ] {
        section(html, id);
    }
    assert!(
        html.contains("</b>active before") && html.contains("</b>active after"),
        "the run's effect on the active set"
    );
    assert!(html.contains(run_id));
}

/// Loads a page in the browser: it renders something and logs nothing.
fn assert_renders(browser: &Path, page: &Path, dir: &Path, name: &str) {
    let shot = dir.join(format!("{name}.png"));
    let log = browse(browser, page, &shot, &dir.join(format!("profile-{name}")));
    let png = std::fs::read(&shot).unwrap();
    assert_eq!(png_size(&png), (1280, 3000));
    assert!(png.len() > 20_000, "a screenshot of a blank page is small");
    assert!(
        console_lines(&log).is_empty(),
        "{name}: console messages: {:?}",
        console_lines(&log)
    );
}

#[test]
fn the_history_page_tells_the_sample_users_story_in_a_browser() {
    let dir = tempfile::tempdir().unwrap();
    let state = sample_state(dir.path());
    let page = dir.path().join("alice.html");
    engram(&[
        "report",
        "--user",
        "alice",
        "--html",
        page.to_str().unwrap(),
        "--state",
        &state,
    ]);
    let html = std::fs::read_to_string(&page).unwrap();
    assert_self_contained(&html);

    // What a person must review first comes first, and holds both texts.
    let open = section(&html, "open-contradictions");
    assert!(html.find("id=\"open-contradictions\"") < html.find("id=\"supersessions\""));
    assert!(
        open.contains("Project atlas uses MySQL for its main database.")
            && open.contains("Project atlas uses PostgreSQL for its main database."),
        "{open}"
    );
    assert!(
        open.contains("<code>mysql</code>"),
        "the words that conflict"
    );
    // The sample's move: the old text, then the new one, with a date.
    let superseded = section(&html, "supersessions");
    assert!(
        superseded.contains(
            "<td class=\"old\">The user lives in Lisbon.</td><td>The user moved to Porto.</td>"
        ),
        "{superseded}"
    );
    assert!(
        superseded.contains("<code>moved to</code>"),
        "the change marker"
    );
    let merges = section(&html, "merges");
    assert!(merges.contains("card canonical") && merges.contains("replaced"));
    let patterns = section(&html, "patterns");
    assert!(patterns.contains("Renewed the billing-api TLS certificate"));
    assert!(patterns.contains("<details>"), "a pattern's episodes");
    section(&html, "archived");
    assert!(section(&html, "salience-history").contains("<td>2026-09</td>"));
    for id in ["overview", "salience", "kinds", "graph"] {
        section(&html, id);
    }

    // One mark per run; the recent ones link to run pages that exist.
    let dump: serde_json::Value =
        serde_json::from_slice(&engram(&["dump", "--state", &state]).stdout).unwrap();
    let runs = dump["users"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["user_id"] == "alice")
        .unwrap()["runs"]
        .as_array()
        .unwrap()
        .len();
    let timeline = section(&html, "timeline");
    assert_eq!(timeline.matches("<circle").count(), runs);
    let links = hrefs(timeline);
    assert!(!links.is_empty());
    for href in &links {
        assert!(dir.path().join(href).is_file(), "{href} is not written");
    }
    let run_page = dir.path().join(&links[0]);
    let run_html = std::fs::read_to_string(&run_page).unwrap();
    let run_id = run_page.file_stem().unwrap().to_string_lossy().into_owned();
    assert_run_page(&run_html, &run_id);
    assert!(
        hrefs(&run_html).contains(&"../alice.html".to_owned()),
        "a run page links back to the history"
    );

    let Some(browser) = chromium() else {
        return;
    };
    assert_renders(&browser, &page, dir.path(), "history");
    assert_renders(&browser, &run_page, dir.path(), "run");

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
        &dir.path().join("profile-broken"),
    );
    assert!(
        console_lines(&log).iter().any(|l| l.contains("boom")),
        "{log}"
    );
}

#[test]
fn a_run_page_is_written_on_its_own_with_run() {
    let dir = tempfile::tempdir().unwrap();
    let state = sample_state(dir.path());
    let dump: serde_json::Value =
        serde_json::from_slice(&engram(&["dump", "--state", &state]).stdout).unwrap();
    let run_id = dump["users"][1]["runs"][0]["run_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let page = dir.path().join("run.html");
    engram(&[
        "report",
        "--run",
        &run_id,
        "--html",
        page.to_str().unwrap(),
        "--state",
        &state,
    ]);
    assert_run_page(&std::fs::read_to_string(&page).unwrap(), &run_id);
}

#[test]
fn the_http_endpoint_serves_the_history_and_run_pages() {
    let dir = tempfile::tempdir().unwrap();
    let state = sample_state(dir.path());
    let store: Arc<dyn Store> = Arc::new(EmbeddedStore::open(Path::new(&state)).unwrap());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let address = common::serve_embedded(store, &runtime);
    let agent = common::http();
    let get = |path: &str| {
        let mut response = agent
            .get(&format!("http://{address}{path}"))
            .call()
            .unwrap();
        let kind = response
            .headers()
            .get("content-type")
            .map(|v| v.to_str().unwrap().to_owned())
            .unwrap_or_default();
        (
            response.status().as_u16(),
            kind,
            response.body_mut().read_to_string().unwrap(),
        )
    };
    let (status, kind, html) = get("/users/bob/report.html");
    assert_eq!(status, 200);
    assert_eq!(kind, "text/html; charset=utf-8");
    assert_self_contained(&html);
    assert!(section(&html, "supersessions").contains("The user moved to Montreal."));
    let link = hrefs(section(&html, "timeline"))[0].clone();
    assert!(link.starts_with("report.html?run="), "{link}");
    let (status, _, run_html) = get(&format!("/users/bob/{link}"));
    assert_eq!(status, 200);
    let run_id = link.trim_start_matches("report.html?run=");
    assert_run_page(&run_html, run_id);
    assert!(hrefs(&run_html).contains(&"report.html".to_owned()));
    assert_eq!(get("/users/nobody/report.html").0, 404);
    assert_eq!(get("/users/bob/report.html?run=no-such-run").0, 404);
    assert_eq!(
        get(&format!("/users/alice/report.html?run={run_id}")).0,
        404,
        "bob's run"
    );
}
