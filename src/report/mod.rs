//! `engram report`: self-contained HTML pages (inline CSS and SVG, no
//! scripts, nothing fetched) that show people what engram did.
//!
//! - [`history`]: a user's whole story from the store: open contradictions
//!   first, then supersessions, merges, patterns and archived memories, the
//!   run timeline and salience month by month.
//! - [`run`]: one run: what it did, its merged clusters, contradictions,
//!   patterns, and its actions with their reasons.
//! - [`current`]: what both pages show of the memories as they stand: the
//!   salience histogram, kinds by status, and the link graph.
//!
//! Rendering is pure: it draws what it is given. [`read_user`] is the one
//! place that reads the store for a page.

mod chart;
pub mod current;
pub mod history;
pub mod run;

pub use history::{HistoryPage, render_history};
pub use run::{RunPage, render_run};

use std::fmt::Write as _;

use crate::cycle::{CycleError, CycleReport};
use crate::model::{Link, Memory, Millis, RunReport};
use crate::salience::SalienceParams;
use crate::store::{Store, StoreError};

/// What a user's pages are drawn from.
pub struct UserRecords {
    pub memories: Vec<Memory>,
    pub links: Vec<Link>,
    /// Oldest first.
    pub runs: Vec<RunReport>,
}

impl UserRecords {
    pub fn is_empty(&self) -> bool {
        self.memories.is_empty() && self.runs.is_empty()
    }
}

/// Reads everything a user's pages show.
pub fn read_user(store: &dyn Store, user_id: &str) -> Result<UserRecords, StoreError> {
    let mut runs = store.run_reports(user_id)?;
    runs.sort_by(|a, b| (a.started_at, &a.run_id).cmp(&(b.started_at, &b.run_id)));
    Ok(UserRecords {
        memories: store.memories(user_id)?,
        links: store.links(user_id)?,
        runs,
    })
}

/// A stored run's page, drawn from its user's records at the run's own
/// time, so it shows salience as the run saw it.
pub fn run_page_html(
    records: &UserRecords,
    stored: &RunReport,
    salience: &SalienceParams,
    focus: Option<&str>,
    history_href: Option<&str>,
) -> Result<String, CycleError> {
    let run = CycleReport::from_stored(stored)?;
    Ok(render_run(&RunPage {
        user_id: &stored.user_id,
        run: &run,
        current: current::Current {
            memories: &records.memories,
            links: &records.links,
            focus,
            now: run.started_at.timestamp_millis(),
            salience,
        },
        history_href,
    }))
}

/// Percent-encodes everything but unreserved characters, for a query
/// value in a link between pages.
pub fn url_encode(text: &str) -> String {
    let mut encoded = String::with_capacity(text.len());
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                encoded.push(byte as char)
            }
            _ => {
                let _ = write!(encoded, "%{byte:02X}");
            }
        }
    }
    encoded
}

/// A name for a run's page that is safe as a file name and a URL path
/// segment: run ids are derived ids in practice, but ids are data.
pub fn run_page_name(run_id: &str) -> String {
    let safe: String = run_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if safe == run_id && !safe.is_empty() {
        safe
    } else {
        // Two ids that differ only in replaced characters stay apart.
        format!(
            "{safe}-{}",
            &crate::ids::derived_id(&["run page", run_id])[..8]
        )
    }
}

/// Escapes text for HTML content and attribute values.
pub fn escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&#39;"),
            c => escaped.push(c),
        }
    }
    escaped
}

/// A reason as engram writes them, escaped, with its `quoted` words shown
/// as code (the words that conflict, the marker of a change).
fn reason_html(reason: &str) -> String {
    // Part k follows the k-th backtick; parts between a pair are code, and
    // an odd last backtick stays as written.
    let paired = reason.matches('`').count() / 2 * 2;
    let mut html = String::new();
    for (k, part) in reason.split('`').enumerate() {
        if k % 2 == 1 && k < paired {
            let _ = write!(html, "<code>{}</code>", escape(part));
            continue;
        }
        if k > paired {
            html.push('`');
        }
        html.push_str(&escape(part));
    }
    html
}

/// At most `max` characters, cut at a word boundary where there is one.
fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let cut: String = text.chars().take(max.saturating_sub(1)).collect();
    let at_word = match cut.rfind(' ') {
        Some(space) if space > cut.len() / 2 => cut[..space].trim_end(),
        _ => cut.as_str(),
    };
    format!("{at_word}…")
}

/// A date as the pages show it.
fn day(at: Millis) -> String {
    chrono::DateTime::from_timestamp_millis(at)
        .map(|t| t.format("%Y-%m-%d").to_string())
        .unwrap_or_default()
}

const STYLE: &str = "
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:0;background:#f6f7f9;color:#1d2430}
header{background:#1d2430;color:#fff;padding:20px 32px}
header h1{margin:0 0 6px;font-size:22px}
header p{margin:0;color:#c7cfdb;font-size:14px}
header a{color:#c7cfdb}
main{padding:8px 32px 40px;max-width:1200px}
section{background:#fff;border:1px solid #dde2ea;border-radius:8px;padding:16px 20px;margin:18px 0}
section.review{border-color:#c01048;border-width:2px}
h2{font-size:17px;margin:0 0 12px}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{border-bottom:1px solid #e6e9ef;padding:6px 8px;text-align:left;vertical-align:top}
th{background:#f0f2f6}
code{background:#f0f2f6;border-radius:3px;padding:0 3px;font-size:12px}
.counts{display:flex;flex-wrap:wrap;gap:10px}
.count{background:#f0f2f6;border-radius:6px;padding:8px 12px;font-size:13px}
.count b{display:block;font-size:20px}
.cluster{display:flex;gap:10px;margin:10px 0;flex-wrap:wrap}
.card{flex:1 1 220px;border:1px solid #dde2ea;border-radius:6px;padding:8px 10px;font-size:13px}
.card.canonical{border-color:#2f7d4f;background:#f1faf4}
.old{color:#667085;text-decoration:line-through}
.fused{flex:1 1 100%;color:#2f7d4f;font-size:12px}
.meta{color:#667085;font-size:12px}
.signal{display:inline-block;background:#fff1e6;color:#9a4a00;border-radius:4px;padding:1px 6px;margin:2px;font-size:12px}
.empty{color:#667085;font-style:italic}
.more{color:#667085;font-size:12px;margin:8px 0 0}
svg text{font-family:system-ui,sans-serif}
";

/// The page's head and the opening of its body.
fn open_page(html: &mut String, title: &str) {
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{}</title><style>{STYLE}</style></head><body>",
        escape(title)
    );
}

fn close_page(html: &mut String) {
    html.push_str("</main></body></html>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_words_in_reasons_show_as_code_and_stay_escaped() {
        assert_eq!(
            reason_html("`mysql` ↔ `<b>` (database)"),
            "<code>mysql</code> ↔ <code>&lt;b&gt;</code> (database)"
        );
        assert_eq!(reason_html("a lone ` tick"), "a lone ` tick");
        assert_eq!(reason_html("plain"), "plain");
    }

    #[test]
    fn run_page_names_are_safe_and_distinct() {
        assert_eq!(run_page_name("9f1c-ab_2"), "9f1c-ab_2");
        let (a, b) = (run_page_name("../x"), run_page_name("._/x"));
        assert!(a.starts_with("___x-") && b.starts_with("___x-"));
        assert_ne!(a, b);
        assert!(!run_page_name("").is_empty());
    }

    #[test]
    fn url_encoding_keeps_unreserved_characters_only() {
        assert_eq!(url_encode("run-1_a.b~"), "run-1_a.b~");
        assert_eq!(url_encode("a b/../ü"), "a%20b%2F..%2F%C3%BC");
    }

    #[test]
    fn shortened_text_ends_at_a_word() {
        assert_eq!(shorten("short", 10), "short");
        assert_eq!(
            shorten("Renewed the billing-api TLS certificate", 24),
            "Renewed the billing-api…"
        );
    }
}
