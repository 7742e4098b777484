//! One run's page: what the run did to the active set, the clusters it
//! merged side by side, its contradictions with their signals, its
//! patterns, the memories as they stand, and its actions with their
//! reasons.

use std::collections::HashMap;
use std::fmt::Write as _;

use super::current::{Current, graph_section, kinds_section, salience_section};
use super::{close_page, day, escape, open_page};
use crate::cycle::CycleReport;
use crate::model::{Memory, MemoryStatus, Millis};
use crate::plan::ActionType;

/// What a run's page shows.
pub struct RunPage<'a> {
    pub user_id: &'a str,
    pub run: &'a CycleReport,
    /// The user's memories and links; "now" is the run's own time, so the
    /// page shows salience as the run saw it.
    pub current: Current<'a>,
    /// Where the user's history page is, relative to this one.
    pub history_href: Option<&'a str>,
}

/// Renders a run's page.
pub fn render_run(page: &RunPage<'_>) -> String {
    let run = page.run;
    let by_id: HashMap<&str, &Memory> = page
        .current
        .memories
        .iter()
        .map(|m| (m.id.as_str(), m))
        .collect();
    let mut html = String::new();
    open_page(
        &mut html,
        &format!("engram · {} · run {}", page.user_id, run.run_id),
    );
    header(&mut html, page);
    html.push_str("<main>");
    counts(&mut html, run);
    salience_section(&mut html, &page.current);
    kinds_section(&mut html, page.current.memories);
    clusters_section(&mut html, run, &by_id);
    contradictions_section(&mut html, run, &by_id);
    patterns_section(&mut html, run);
    graph_section(&mut html, &page.current, &by_id);
    actions_section(&mut html, run);
    close_page(&mut html);
    html
}

fn header(html: &mut String, page: &RunPage<'_>) {
    let run = page.run;
    let _ = write!(
        html,
        "<header><h1>Memory of {}</h1><p>{} memories, {} links · run <code>{}</code> · {:?} {} · {} · tier {:?} ({} of {} tokens)",
        escape(page.user_id),
        page.current.memories.len(),
        page.current.links.len(),
        escape(&run.run_id),
        run.trigger,
        if run.executed { "executed" } else { "dry run" },
        run.started_at.format("%Y-%m-%d %H:%M:%S UTC"),
        run.tier,
        run.tokens,
        run.token_budget
    );
    if run.undone_at.is_some() {
        html.push_str(" · undone");
    }
    if let Some(href) = page.history_href {
        let _ = write!(
            html,
            " · <a href=\"{}\">the user's whole history</a>",
            escape(href)
        );
    }
    html.push_str("</p></header>");
}

/// Active memories after the run: those before, less the ones it merged,
/// superseded or archived, plus the ones it created.
fn active_after(run: &CycleReport) -> i64 {
    let gone = run
        .memory_changes
        .iter()
        .filter(|c| {
            c.before.status == MemoryStatus::Active && c.after.status != MemoryStatus::Active
        })
        .count();
    run.counts.memories_processed - gone as i64 + run.created_ids.len() as i64
}

fn counts(html: &mut String, run: &CycleReport) {
    let c = &run.counts;
    html.push_str("<section><h2>What the run did</h2><div class=\"counts\">");
    for (label, value) in [
        ("active before", c.memories_processed),
        ("active after", active_after(run)),
        ("merged", c.duplicates_merged),
        ("contradictions", c.contradictions_found),
        ("superseded", c.superseded),
        ("patterns", c.patterns_extracted),
        ("archived", c.archived),
        ("split", c.split),
        ("promoted", c.promoted),
        ("links created", c.links_created),
    ] {
        let _ = write!(html, "<div class=\"count\"><b>{value}</b>{label}</div>");
    }
    html.push_str("</div></section>");
}

fn card(html: &mut String, id: &str, by_id: &HashMap<&str, &Memory>, canonical: bool) {
    let class = if canonical { "card canonical" } else { "card" };
    match by_id.get(id) {
        Some(m) => {
            let _ = write!(
                html,
                "<div class=\"{class}\"><div class=\"meta\">{}{} · {} · {}</div>{}</div>",
                if canonical { "kept · " } else { "" },
                escape(id),
                m.kind.as_str(),
                m.status.as_str(),
                escape(&m.content)
            );
        }
        None => {
            let _ = write!(
                html,
                "<div class=\"{class}\"><div class=\"meta\">{}</div><span class=\"empty\">not stored</span></div>",
                escape(id)
            );
        }
    }
}

fn clusters_section(html: &mut String, run: &CycleReport, by_id: &HashMap<&str, &Memory>) {
    html.push_str("<section id=\"clusters\"><h2>Merged clusters</h2>");
    let merges: Vec<_> = run
        .actions
        .iter()
        .filter(|a| a.action_type == ActionType::Merge)
        .collect();
    if merges.is_empty() {
        html.push_str("<p class=\"empty\">No duplicates merged in this run.</p>");
    }
    for action in merges {
        let canonical = action.canonical_id.as_deref();
        let _ = write!(
            html,
            "<div class=\"meta\">score {:.3} · rule {}</div><div class=\"cluster\">",
            action.score,
            escape(&action.rule_id)
        );
        if let Some(id) = canonical {
            card(html, id, by_id, true);
            if action.canonical_content.is_some() {
                fused_note(html, run, id);
            }
        }
        for id in action
            .target_ids
            .iter()
            .filter(|id| Some(id.as_str()) != canonical)
        {
            card(html, id, by_id, false);
        }
        html.push_str("</div>");
    }
    html.push_str("</section>");
}

/// A merge that fused the members' details rewrote the kept memory's text:
/// say so, with the text as it was before (what `engram undo` restores).
fn fused_note(html: &mut String, run: &CycleReport, canonical: &str) {
    let before = run
        .memory_changes
        .iter()
        .find(|c| c.memory_id == canonical)
        .and_then(|c| c.before.content.as_deref());
    html.push_str("<div class=\"fused\">text fused by this merge");
    if let Some(before) = before {
        let _ = write!(html, "; text before the merge: {}", escape(before));
    }
    html.push_str("</div>");
}

fn patterns_section(html: &mut String, run: &CycleReport) {
    html.push_str("<section id=\"patterns\"><h2>Patterns</h2>");
    if run.patterns.is_empty() {
        html.push_str("<p class=\"empty\">No recurring episodes in this run.</p>");
    } else {
        html.push_str(
            "<table><tr><th>pattern</th><th>occurrences</th><th>new in this run</th>\
             <th>first</th><th>last</th></tr>",
        );
        let day = |at: Option<Millis>| at.map(day).unwrap_or_default();
        for pattern in &run.patterns {
            let _ = write!(
                html,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&pattern.content),
                pattern.source_memory_ids.len(),
                pattern.new_memory_ids.len(),
                day(pattern.first_at),
                day(pattern.last_at),
            );
        }
        html.push_str("</table>");
    }
    html.push_str("</section>");
}

fn contradictions_section(html: &mut String, run: &CycleReport, by_id: &HashMap<&str, &Memory>) {
    html.push_str("<section id=\"contradictions\"><h2>Contradictions</h2>");
    if run.contradictions.is_empty() {
        html.push_str("<p class=\"empty\">No contradictions found in this run.</p>");
    } else {
        html.push_str(
            "<table><tr><th>first</th><th>second</th><th>confidence</th><th>similarity</th>\
             <th>signals</th><th>resolution</th></tr>",
        );
        for finding in &run.contradictions {
            let text = |id: &str| {
                by_id
                    .get(id)
                    .map(|m| escape(&m.content))
                    .unwrap_or_else(|| escape(id))
            };
            let signals: String = finding
                .signals
                .iter()
                .map(|s| format!("<span class=\"signal\">{}</span>", escape(s)))
                .collect();
            let _ = write!(
                html,
                "<tr><td>{}</td><td>{}</td><td>{:.2}</td><td>{:.2}</td><td>{signals}<div class=\"meta\">{}</div></td><td>{:?}</td></tr>",
                text(&finding.first_id),
                text(&finding.second_id),
                finding.confidence,
                finding.similarity,
                escape(&finding.explanation),
                finding.resolution
            );
        }
        html.push_str("</table>");
    }
    html.push_str("</section>");
}

fn actions_section(html: &mut String, run: &CycleReport) {
    html.push_str("<section id=\"actions\"><h2>Actions and their reasons</h2>");
    if run.actions.is_empty() {
        html.push_str("<p class=\"empty\">Nothing to do in this run.</p></section>");
        return;
    }
    html.push_str(
        "<table><tr><th>action</th><th>targets</th><th>rule</th><th>score</th><th>reasons</th></tr>",
    );
    for action in &run.actions {
        let reasons: Vec<String> = action.reasons.iter().map(|r| escape(r)).collect();
        let _ = write!(
            html,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.3}</td><td>{}</td></tr>",
            action.action_type.as_str(),
            escape(&action.target_ids.join(", ")),
            escape(&action.rule_id),
            action.score,
            reasons.join("<br>")
        );
    }
    html.push_str("</table></section>");
}
