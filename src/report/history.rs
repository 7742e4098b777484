//! A user's whole story, from the store: what a person must review first
//! (open contradictions), what engram did over time (supersessions, merges,
//! patterns, archived memories, each with its date), every run on a
//! timeline, salience month by month, and the memories as they stand.
//!
//! Every list shows the most recent entries up to a limit and says how many
//! there are, so the page of a user with 100,000 memories stays a few
//! hundred kilobytes.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use chrono::Datelike as _;
use serde::Deserialize;

use super::chart::{self, MonthBar, RunMark};
use super::current::{Current, graph_section, kinds_section, salience_section};
use super::{UserRecords, close_page, day, escape, open_page, reason_html};
use crate::detect::patterns::PATTERN_CATEGORY;
use crate::event::{RunCounts, Timestamp, TriggerReason};
use crate::model::{Link, LinkType, Memory, MemoryStatus, Millis};
use crate::salience::SalienceParams;

/// Most recent entries a section lists by default.
pub const SECTION_LIMIT: usize = 100;
/// Most recent runs the timeline table lists (the chart marks more).
pub const TIMELINE_ROWS: usize = 20;
/// Most recent runs the timeline chart marks.
const TIMELINE_MARKS: usize = 2_000;
/// Episodes listed under one pattern.
const PATTERN_MEMBERS_SHOWN: usize = 20;

/// What the history page shows.
pub struct HistoryPage<'a> {
    pub user_id: &'a str,
    pub records: &'a UserRecords,
    /// "Now" for the salience of the memories as they stand.
    pub now: Millis,
    pub salience: &'a SalienceParams,
    /// The memory at the centre of the link graph (default: the most linked).
    pub focus: Option<&'a str>,
    /// Where a run's page is, relative to this one; `None`: no page.
    pub run_href: &'a dyn Fn(&str) -> Option<String>,
    /// Most recent entries each section lists.
    pub limit: usize,
}

/// The part of a stored run report the history needs. Reading only this
/// keeps a user with thousands of runs cheap: their changes and actions
/// are skipped, not built.
#[derive(Deserialize)]
struct RunSummary {
    run_id: String,
    trigger: TriggerReason,
    started_at: Timestamp,
    counts: RunCounts,
    salience_histogram: [u64; 10],
    executed: bool,
    #[serde(default)]
    undone_at: Option<Millis>,
}

impl RunSummary {
    fn at(&self) -> Millis {
        self.started_at.timestamp_millis()
    }

    fn decisions(&self) -> i64 {
        let c = &self.counts;
        c.duplicates_merged
            + c.contradictions_found
            + c.patterns_extracted
            + c.archived
            + c.split
            + c.promoted
    }

    /// What it did, in words.
    fn summary(&self) -> String {
        let c = &self.counts;
        let parts: Vec<String> = [
            (c.duplicates_merged, "merged"),
            (c.contradictions_found - c.superseded, "flagged"),
            (c.superseded, "superseded"),
            (c.patterns_extracted, "patterns"),
            (c.archived, "archived"),
            (c.split, "split"),
            (c.promoted, "promoted"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
        if parts.is_empty() {
            format!("{} active, nothing to do", c.memories_processed)
        } else {
            format!("{} active: {}", c.memories_processed, parts.join(", "))
        }
    }
}

/// Renders the history page.
pub fn render_history(page: &HistoryPage<'_>) -> String {
    let records = page.records;
    let by_id: HashMap<&str, &Memory> = records
        .memories
        .iter()
        .map(|m| (m.id.as_str(), m))
        .collect();
    let mut unreadable = 0;
    let runs: Vec<RunSummary> = records
        .runs
        .iter()
        .filter_map(|r| {
            let summary = RunSummary::deserialize(&r.report).ok();
            unreadable += usize::from(summary.is_none());
            summary
        })
        .collect();
    let run_at: HashMap<&str, Millis> = runs.iter().map(|r| (r.run_id.as_str(), r.at())).collect();
    let open = open_contradictions(&records.links, &by_id);
    let superseded = links_of(&records.links, LinkType::Supersedes, &by_id);
    let merges = merges(&records.links, &by_id);
    let patterns = patterns(&records.memories, &records.links, &by_id);
    let archived = archived(&records.memories, &run_at);

    let mut html = String::new();
    open_page(&mut html, &format!("engram · {} · history", page.user_id));
    header(&mut html, page, &runs);
    html.push_str("<main>");
    html.push_str("<section id=\"overview\"><h2>At a glance</h2><div class=\"counts\">");
    for (label, value) in [
        ("open contradictions", open.len()),
        ("supersessions", superseded.len()),
        ("merges", merges.len()),
        ("patterns", patterns.len()),
        ("archived", archived.len()),
        ("runs", runs.len()),
    ] {
        let _ = write!(html, "<div class=\"count\"><b>{value}</b>{label}</div>");
    }
    html.push_str("</div></section>");
    open_section(&mut html, page.run_href, page.limit, &open, &by_id);
    supersessions_section(&mut html, page.run_href, page.limit, &superseded, &by_id);
    merges_section(&mut html, page.run_href, page.limit, &merges);
    patterns_section(&mut html, page.limit, &patterns);
    archived_section(&mut html, page.limit, &archived);
    timeline_section(&mut html, page, &runs, unreadable);
    salience_history_section(&mut html, &runs);
    let current = Current {
        memories: &records.memories,
        links: &records.links,
        focus: page.focus,
        now: page.now,
        salience: page.salience,
    };
    salience_section(&mut html, &current);
    kinds_section(&mut html, &records.memories);
    graph_section(&mut html, &current, &by_id);
    close_page(&mut html);
    html
}

fn header(html: &mut String, page: &HistoryPage<'_>, runs: &[RunSummary]) {
    let memories = &page.records.memories;
    let count = |status: MemoryStatus| memories.iter().filter(|m| m.status == status).count();
    let _ = write!(
        html,
        "<header><h1>Memory of {}</h1><p>{} memories ({} active, {} superseded, {} archived) · {} links",
        escape(page.user_id),
        memories.len(),
        count(MemoryStatus::Active),
        count(MemoryStatus::Superseded),
        count(MemoryStatus::Archived),
        page.records.links.len()
    );
    match (runs.first(), runs.last()) {
        (Some(first), Some(last)) => {
            let _ = write!(
                html,
                " · {} runs from {} to {}",
                runs.len(),
                day(first.at()),
                day(last.at())
            );
        }
        _ => html.push_str(" · no consolidation run yet"),
    }
    html.push_str("</p></header>");
}

/// Opens a section and says how much of it the page shows; with nothing to
/// show, says `empty` and closes it, and answers false.
fn section_start(
    html: &mut String,
    id: &str,
    title: &str,
    total: usize,
    limit: usize,
    empty: &str,
) -> bool {
    let class = if id == "open-contradictions" && total > 0 {
        " class=\"review\""
    } else {
        ""
    };
    let _ = write!(
        html,
        "<section id=\"{id}\"{class}><h2>{title} ({total})</h2>"
    );
    if total == 0 {
        let _ = write!(html, "<p class=\"empty\">{empty}</p></section>");
        return false;
    }
    if total > limit {
        let _ = write!(
            html,
            "<p class=\"more\">Showing the {limit} most recent of {total}.</p>"
        );
    }
    true
}

/// A memory's text; the sections only list links whose ends are stored.
fn text_of<'a>(by_id: &HashMap<&str, &'a Memory>, id: &'a str) -> &'a str {
    by_id.get(id).map_or(id, |m| m.content.as_str())
}

/// A run's id, linked to its page when it has one.
fn run_link(run_href: &dyn Fn(&str) -> Option<String>, run: &str) -> String {
    let code = format!("<code>{}</code>", escape(run));
    match run_href(run) {
        Some(href) => format!("<a href=\"{}\">{code}</a>", escape(&href)),
        None => code,
    }
}

/// The run that made a change, on a line of its own.
fn run_note(run_href: &dyn Fn(&str) -> Option<String>, run_id: Option<&str>) -> String {
    run_id.map_or_else(String::new, |run| {
        format!("<div class=\"meta\">run {}</div>", run_link(run_href, run))
    })
}

/// Links of one type between two stored memories, newest first.
fn links_of<'a>(
    links: &'a [Link],
    link_type: LinkType,
    by_id: &HashMap<&str, &Memory>,
) -> Vec<&'a Link> {
    let mut found: Vec<&Link> = links
        .iter()
        .filter(|l| {
            l.link_type == link_type
                && by_id.contains_key(l.from_id.as_str())
                && by_id.contains_key(l.to_id.as_str())
        })
        .collect();
    found.sort_by(|a, b| (b.created_at, &b.from_id).cmp(&(a.created_at, &a.from_id)));
    found
}

/// Contradictions flagged between two memories that are both still active
/// (a supersession or merge since settled the others), once per pair.
fn open_contradictions<'a>(links: &'a [Link], by_id: &HashMap<&str, &Memory>) -> Vec<&'a Link> {
    // A pair is stored both ways; the older link says since when.
    let mut oldest_first = links_of(links, LinkType::Contradicts, by_id);
    oldest_first.reverse();
    let mut seen = std::collections::HashSet::new();
    let mut open: Vec<&Link> = oldest_first
        .into_iter()
        .filter(|l| {
            [&l.from_id, &l.to_id]
                .iter()
                .all(|id| by_id[id.as_str()].status == MemoryStatus::Active)
        })
        .filter(|l| {
            let (a, b) = (&l.from_id, &l.to_id);
            seen.insert(if a < b { (a, b) } else { (b, a) })
        })
        .collect();
    open.reverse();
    open
}

fn open_section(
    html: &mut String,
    run_href: &dyn Fn(&str) -> Option<String>,
    limit: usize,
    open: &[&Link],
    by_id: &HashMap<&str, &Memory>,
) {
    if !section_start(
        html,
        "open-contradictions",
        "Open contradictions: review these first",
        open.len(),
        limit,
        "None open: every contradiction found so far was settled.",
    ) {
        return;
    }
    html.push_str(
        "<p class=\"meta\">Both memories are active and say different things; engram flagged the pair and changed neither.</p>\
         <table><tr><th>one memory says</th><th>another says</th><th>what conflicts</th><th>since</th></tr>",
    );
    for link in open.iter().take(limit) {
        let _ = write!(
            html,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}{}</td></tr>",
            escape(text_of(by_id, &link.from_id)),
            escape(text_of(by_id, &link.to_id)),
            reason_html(&link.reason),
            day(link.created_at),
            run_note(run_href, link.run_id.as_deref())
        );
    }
    html.push_str("</table></section>");
}

fn supersessions_section(
    html: &mut String,
    run_href: &dyn Fn(&str) -> Option<String>,
    limit: usize,
    superseded: &[&Link],
    by_id: &HashMap<&str, &Memory>,
) {
    if !section_start(
        html,
        "supersessions",
        "Supersessions: newer facts that replaced older ones",
        superseded.len(),
        limit,
        "No fact has been replaced by a newer one.",
    ) {
        return;
    }
    html.push_str("<table><tr><th>old</th><th>new</th><th>took over on</th><th>why</th></tr>");
    for link in superseded.iter().take(limit) {
        // A supersession links the newer memory to the older one.
        let _ = write!(
            html,
            "<tr><td class=\"old\">{}</td><td>{}</td><td>{}{}</td><td>{}</td></tr>",
            escape(text_of(by_id, &link.to_id)),
            escape(text_of(by_id, &link.from_id)),
            day(link.created_at),
            run_note(run_href, link.run_id.as_deref()),
            reason_html(&link.reason)
        );
    }
    html.push_str("</table></section>");
}

/// A merge: the kept memory and the ones folded into it.
struct Merge<'a> {
    kept: &'a Memory,
    replaced: Vec<&'a Memory>,
    at: Millis,
    run_id: Option<&'a str>,
}

fn merges<'a>(links: &'a [Link], by_id: &HashMap<&str, &'a Memory>) -> Vec<Merge<'a>> {
    let mut by_kept: BTreeMap<&str, Merge<'a>> = BTreeMap::new();
    for link in links_of(links, LinkType::Consolidates, by_id)
        .into_iter()
        .rev()
    {
        let (Some(kept), Some(member)) = (
            by_id.get(link.from_id.as_str()),
            by_id.get(link.to_id.as_str()),
        ) else {
            continue;
        };
        let merge = by_kept.entry(kept.id.as_str()).or_insert_with(|| Merge {
            kept,
            replaced: Vec::new(),
            at: link.created_at,
            run_id: link.run_id.as_deref(),
        });
        merge.replaced.push(member);
        if link.created_at >= merge.at {
            merge.at = link.created_at;
            merge.run_id = link.run_id.as_deref();
        }
    }
    let mut merges: Vec<Merge<'a>> = by_kept.into_values().collect();
    merges.sort_by(|a, b| (b.at, &b.kept.id).cmp(&(a.at, &a.kept.id)));
    merges
}

fn merges_section(
    html: &mut String,
    run_href: &dyn Fn(&str) -> Option<String>,
    limit: usize,
    merges: &[Merge<'_>],
) {
    if !section_start(
        html,
        "merges",
        "Merges: restatements kept once",
        merges.len(),
        limit,
        "No duplicates merged yet.",
    ) {
        return;
    }
    for merge in merges.iter().take(limit) {
        let _ = write!(
            html,
            "<div class=\"meta\">{} · {} replaced{}</div><div class=\"cluster\">\
             <div class=\"card canonical\"><div class=\"meta\">kept{}</div>{}</div>",
            day(merge.at),
            merge.replaced.len(),
            merge
                .run_id
                .map(|run| format!(" · run {}", run_link(run_href, run)))
                .unwrap_or_default(),
            if merge.kept.status == MemoryStatus::Active {
                String::new()
            } else {
                format!(" · now {}", merge.kept.status.as_str())
            },
            escape(&merge.kept.content)
        );
        for member in &merge.replaced {
            let _ = write!(
                html,
                "<div class=\"card\"><div class=\"meta\">replaced</div>{}</div>",
                escape(&member.content)
            );
        }
        html.push_str("</div>");
    }
    html.push_str("</section>");
}

/// A pattern and the episodes it generalises.
struct Pattern<'a> {
    memory: &'a Memory,
    members: Vec<&'a Memory>,
}

fn patterns<'a>(
    memories: &'a [Memory],
    links: &[Link],
    by_id: &HashMap<&str, &'a Memory>,
) -> Vec<Pattern<'a>> {
    let mut members: HashMap<&str, Vec<&'a Memory>> = HashMap::new();
    for link in links.iter().filter(|l| l.link_type == LinkType::InstanceOf) {
        if let Some(member) = by_id.get(link.from_id.as_str()) {
            members.entry(link.to_id.as_str()).or_default().push(member);
        }
    }
    let mut patterns: Vec<Pattern<'a>> = memories
        .iter()
        .filter(|m| m.category.as_deref() == Some(PATTERN_CATEGORY))
        .map(|memory| {
            let mut members = members.remove(memory.id.as_str()).unwrap_or_default();
            members.sort_by(|a, b| (a.created_at(), &a.id).cmp(&(b.created_at(), &b.id)));
            Pattern { memory, members }
        })
        .collect();
    patterns.sort_by(|a, b| {
        (b.memory.created_at(), &b.memory.id).cmp(&(a.memory.created_at(), &a.memory.id))
    });
    patterns
}

fn patterns_section(html: &mut String, limit: usize, patterns: &[Pattern<'_>]) {
    if !section_start(
        html,
        "patterns",
        "Patterns: recurring episodes turned into one memory",
        patterns.len(),
        limit,
        "No recurring episodes found yet.",
    ) {
        return;
    }
    html.push_str(
        "<table><tr><th>pattern</th><th>episodes</th><th>first</th><th>last</th><th>found</th></tr>",
    );
    for pattern in patterns.iter().take(limit) {
        let (first, last) = match (pattern.members.first(), pattern.members.last()) {
            (Some(first), Some(last)) => (day(first.created_at()), day(last.created_at())),
            _ => (String::new(), String::new()),
        };
        let _ = write!(
            html,
            "<tr><td>{}<details><summary class=\"meta\">its episodes</summary><ul>",
            escape(&pattern.memory.content)
        );
        for member in pattern.members.iter().take(PATTERN_MEMBERS_SHOWN) {
            let _ = write!(
                html,
                "<li>{} <span class=\"meta\">{} · {}</span></li>",
                escape(&member.content),
                day(member.created_at()),
                member.status.as_str()
            );
        }
        if pattern.members.len() > PATTERN_MEMBERS_SHOWN {
            let _ = write!(
                html,
                "<li class=\"meta\">and {} more</li>",
                pattern.members.len() - PATTERN_MEMBERS_SHOWN
            );
        }
        let _ = write!(
            html,
            "</ul></details></td><td>{}</td><td>{first}</td><td>{last}</td><td>{}</td></tr>",
            pattern.members.len(),
            day(pattern.memory.created_at())
        );
    }
    html.push_str("</table></section>");
}

/// Archived memories with the run that archived them and its time.
fn archived<'a>(
    memories: &'a [Memory],
    run_at: &HashMap<&str, Millis>,
) -> Vec<(&'a Memory, Option<Millis>)> {
    let mut archived: Vec<(&Memory, Option<Millis>)> = memories
        .iter()
        .filter(|m| m.status == MemoryStatus::Archived)
        .map(|m| {
            let at = m
                .last_run_id
                .as_deref()
                .and_then(|r| run_at.get(r).copied());
            (m, at)
        })
        .collect();
    archived.sort_by(|a, b| (b.1, &b.0.id).cmp(&(a.1, &a.0.id)));
    archived
}

fn archived_section(html: &mut String, limit: usize, archived: &[(&Memory, Option<Millis>)]) {
    if !section_start(
        html,
        "archived",
        "Archived: faded memories that something else still carries",
        archived.len(),
        limit,
        "Nothing archived yet.",
    ) {
        return;
    }
    html.push_str(
        "<p class=\"meta\">An archived memory is kept, not deleted. To bring one back, undo the run that \
         archived it: <code>engram undo RUN_ID</code> restores everything that run changed (later runs \
         that built on it are undone first).</p>\
         <table><tr><th>memory</th><th>archived on</th><th>to bring it back</th></tr>",
    );
    for (memory, at) in archived.iter().take(limit) {
        let restore = memory
            .last_run_id
            .as_deref()
            .map(|run| format!("<code>engram undo {}</code>", escape(run)))
            .unwrap_or_default();
        let _ = write!(
            html,
            "<tr><td>{}</td><td>{}</td><td>{restore}</td></tr>",
            escape(&memory.content),
            at.map(day).unwrap_or_default()
        );
    }
    html.push_str("</table></section>");
}

fn timeline_section(
    html: &mut String,
    page: &HistoryPage<'_>,
    runs: &[RunSummary],
    unreadable: usize,
) {
    let _ = write!(
        html,
        "<section id=\"timeline\"><h2>Runs ({})</h2>",
        runs.len()
    );
    if unreadable > 0 {
        let _ = write!(
            html,
            "<p class=\"more\">{unreadable} stored run reports could not be read and are left out.</p>"
        );
    }
    if runs.is_empty() {
        html.push_str("<p class=\"empty\">No consolidation run yet.</p></section>");
        return;
    }
    let marked = &runs[runs.len().saturating_sub(TIMELINE_MARKS)..];
    if marked.len() < runs.len() {
        let _ = write!(
            html,
            "<p class=\"more\">The chart marks the {} most recent runs.</p>",
            marked.len()
        );
    }
    let marks: Vec<RunMark> = marked
        .iter()
        .map(|run| RunMark {
            run_id: run.run_id.clone(),
            at: run.at(),
            trigger: run.trigger,
            executed: run.executed,
            undone: run.undone_at.is_some(),
            summary: run.summary(),
            decisions: run.decisions(),
            href: (page.run_href)(&run.run_id),
        })
        .collect();
    html.push_str(
        "<p class=\"meta\">One mark per run, by what triggered it: filled when executed, a ring for a \
         dry run, grey once undone, larger for more decisions. A mark links to its run's page.</p>",
    );
    chart::timeline(html, &marks);
    let rows = TIMELINE_ROWS.min(page.limit.max(1));
    let _ = write!(
        html,
        "<table><tr><th>run</th><th>when</th><th>trigger</th><th>mode</th><th>what it did</th></tr>"
    );
    for run in runs.iter().rev().take(rows) {
        let name = match (page.run_href)(&run.run_id) {
            Some(href) => format!(
                "<a href=\"{}\"><code>{}</code></a>",
                escape(&href),
                escape(&run.run_id)
            ),
            None => format!("<code>{}</code>", escape(&run.run_id)),
        };
        let _ = write!(
            html,
            "<tr><td>{name}</td><td>{}</td><td>{}</td><td>{}{}</td><td>{}</td></tr>",
            run.started_at.format("%Y-%m-%d %H:%M"),
            chart::trigger_name(run.trigger),
            if run.executed { "executed" } else { "dry run" },
            if run.undone_at.is_some() {
                ", undone"
            } else {
                ""
            },
            escape(&run.summary())
        );
    }
    html.push_str("</table>");
    if runs.len() > rows {
        let _ = write!(
            html,
            "<p class=\"more\">The table lists the {rows} most recent of {} runs.</p>",
            runs.len()
        );
    }
    html.push_str("</section>");
}

/// Months from the first run's to the last run's, each with the salience
/// histogram its last run took of the active memories.
fn salience_history_section(html: &mut String, runs: &[RunSummary]) {
    html.push_str(
        "<section id=\"salience-history\"><h2>Active memories and their salience, month by month</h2>",
    );
    let (Some(first), Some(last)) = (runs.first(), runs.last()) else {
        html.push_str("<p class=\"empty\">No consolidation run yet.</p></section>");
        return;
    };
    let mut last_of_month: BTreeMap<(i32, u32), [u64; 10]> = BTreeMap::new();
    for run in runs {
        let at = run.started_at;
        last_of_month.insert((at.year(), at.month()), run.salience_histogram);
    }
    let mut months = Vec::new();
    let (mut year, mut month) = (first.started_at.year(), first.started_at.month());
    let end = (last.started_at.year(), last.started_at.month());
    while (year, month) <= end {
        let bands = last_of_month.get(&(year, month)).map(|deciles| {
            let mut bands = [0u64; 5];
            for (decile, count) in deciles.iter().enumerate() {
                bands[decile / 2] += count;
            }
            bands
        });
        months.push(MonthBar {
            month: format!("{year}-{month:02}"),
            bands,
        });
        (year, month) = if month == 12 {
            (year + 1, 1)
        } else {
            (year, month + 1)
        };
    }
    // Years of monthly runs would not fit across; the most recent do.
    const MONTHS_SHOWN: usize = 24;
    let shown = &months[months.len().saturating_sub(MONTHS_SHOWN)..];
    html.push_str(
        "<p class=\"meta\">Each bar is the active set as the month's last run saw it, split by salience \
         (reads, their recency, and importance).</p>",
    );
    chart::salience_by_month(html, shown);
    html.push_str("<table><tr><th>month</th><th>active</th>");
    for (label, _) in chart::BANDS {
        let _ = write!(html, "<th>salience {label}</th>");
    }
    html.push_str("</tr>");
    for month in shown {
        let _ = write!(html, "<tr><td>{}</td>", escape(&month.month));
        match month.bands {
            Some(bands) => {
                let _ = write!(html, "<td>{}</td>", bands.iter().sum::<u64>());
                for count in bands {
                    let _ = write!(html, "<td>{count}</td>");
                }
            }
            None => {
                let _ = write!(
                    html,
                    "<td colspan=\"{}\" class=\"empty\">no run this month</td>",
                    chart::BANDS.len() + 1
                );
            }
        }
        html.push_str("</tr>");
    }
    html.push_str("</table></section>");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{MemoryKind, RunReport};
    use crate::salience::SalienceState;

    const DAY: Millis = 86_400_000;
    /// 2026-09-01T00:00:00Z.
    const SEPT: Millis = 1_788_220_800_000;

    fn memory(id: &str, content: &str, status: MemoryStatus, created_at: Millis) -> Memory {
        Memory {
            user_id: "u".into(),
            id: id.into(),
            kind: MemoryKind::Semantic,
            category: None,
            tags: vec![],
            content: content.into(),
            importance: 0.5,
            source: None,
            content_hash: id.into(),
            embedding: None,
            status,
            salience: SalienceState::new(created_at),
            merged_from: vec![],
            derived_from: vec![],
            last_run_id: None,
            updated_at: None,
        }
    }

    fn link(from: &str, to: &str, link_type: LinkType, at: Millis, run: &str) -> Link {
        Link {
            user_id: "u".into(),
            from_id: from.into(),
            to_id: to.into(),
            link_type,
            confidence: 0.9,
            reason: format!("`{from}` ↔ `{to}`"),
            created_at: at,
            run_id: Some(run.into()),
        }
    }

    fn run(run_id: &str, at: Millis, active: u64) -> RunReport {
        let started = chrono::DateTime::from_timestamp_millis(at).unwrap();
        let mut histogram = [0u64; 10];
        histogram[3] = active;
        RunReport {
            user_id: "u".into(),
            run_id: run_id.into(),
            started_at: at,
            report: serde_json::json!({
                "run_id": run_id,
                "trigger": "schedule",
                "started_at": started,
                "counts": RunCounts { memories_processed: active as i64, ..RunCounts::default() },
                "salience_histogram": histogram,
                "executed": true,
            }),
        }
    }

    fn render(records: &UserRecords, limit: usize) -> String {
        let run_href = |run: &str| Some(format!("runs/{run}.html"));
        render_history(&HistoryPage {
            user_id: "u",
            records,
            now: SEPT + 90 * DAY,
            salience: &SalienceParams::default(),
            focus: None,
            run_href: &run_href,
            limit,
        })
    }

    /// The section with this id, up to the next one.
    fn section<'h>(html: &'h str, id: &str) -> &'h str {
        let start = html
            .find(&format!("<section id=\"{id}\""))
            .unwrap_or_else(|| panic!("no section {id}"));
        let rest = &html[start..];
        &rest[..rest.find("</section>").unwrap()]
    }

    #[test]
    fn a_user_without_runs_gets_a_page_with_their_text_escaped() {
        let mut target = memory("other", "plain", MemoryStatus::Active, SEPT);
        target.id = "other".into();
        let records = UserRecords {
            memories: vec![
                memory(
                    "m<1>",
                    "<script>alert('x')</script> & \"quotes\"",
                    MemoryStatus::Active,
                    SEPT,
                ),
                target,
            ],
            links: vec![link("m<1>", "other", LinkType::Related, SEPT, "r")],
            runs: vec![],
        };
        let html = render(&records, 10);
        assert!(!html.contains("<script"), "{html}");
        assert!(html.contains("&lt;script&gt;"));
        assert!(html.contains("Memory of u"));
        assert!(section(&html, "timeline").contains("No consolidation run yet"));
        assert!(section(&html, "salience-history").contains("No consolidation run yet"));
        assert!(html.contains("Centre: m&lt;1&gt; (1 links)"));
    }

    #[test]
    fn each_section_tells_its_part_of_the_story() {
        let active = MemoryStatus::Active;
        let mut faded = memory("faded", "Rotated the keys.", MemoryStatus::Archived, SEPT);
        faded.last_run_id = Some("r3".into());
        let mut pattern = memory("p", "Rotated keys … (2 times)", active, SEPT + 9 * DAY);
        pattern.category = Some(PATTERN_CATEGORY.into());
        let records = UserRecords {
            memories: vec![
                memory("a", "Uses MySQL.", active, SEPT),
                memory("b", "Uses PostgreSQL.", active, SEPT + DAY),
                memory("c", "Likes tea.", MemoryStatus::Superseded, SEPT),
                memory("d", "Likes coffee.", active, SEPT + DAY),
                memory("old", "Lives in Lisbon.", MemoryStatus::Superseded, SEPT),
                memory("new", "Moved to Porto.", active, SEPT + 20 * DAY),
                memory("kept", "Prefers Rust.", active, SEPT),
                memory(
                    "twin",
                    "Would rather use Rust.",
                    MemoryStatus::Superseded,
                    SEPT,
                ),
                memory("e1", "Rotated the keys on Monday.", active, SEPT + DAY),
                memory("e2", "Rotated the keys again.", active, SEPT + 8 * DAY),
                pattern,
                faded,
            ],
            links: vec![
                // A flagged pair is stored both ways and listed once.
                link("a", "b", LinkType::Contradicts, SEPT + 2 * DAY, "r1"),
                link("b", "a", LinkType::Contradicts, SEPT + 2 * DAY, "r1"),
                // Settled since: one side was superseded.
                link("c", "d", LinkType::Contradicts, SEPT + 2 * DAY, "r1"),
                link("new", "old", LinkType::Supersedes, SEPT + 21 * DAY, "r2"),
                link("kept", "twin", LinkType::Consolidates, SEPT + 3 * DAY, "r1"),
                link("e1", "p", LinkType::InstanceOf, SEPT + 9 * DAY, "r2"),
                link("e2", "p", LinkType::InstanceOf, SEPT + 9 * DAY, "r2"),
            ],
            runs: vec![
                run("r1", SEPT + 3 * DAY, 8),
                run("r2", SEPT + 21 * DAY, 9),
                run("r3", SEPT + 40 * DAY, 7),
            ],
        };
        let html = render(&records, 10);

        let open = section(&html, "open-contradictions");
        assert!(
            open.contains("class=\"review\""),
            "open ones are marked for review"
        );
        assert!(
            open.contains("(1)")
                && open.contains("Uses MySQL.")
                && open.contains("Uses PostgreSQL.")
        );
        assert_eq!(
            open.matches("<tr>").count(),
            2,
            "a header and one pair: {open}"
        );
        assert!(!open.contains("Likes tea."), "a settled pair is not open");
        assert!(
            open.contains("<code>a</code> ↔ <code>b</code>"),
            "the words that conflict"
        );
        assert!(open.contains("2026-09-03"), "since when");
        assert!(
            open.contains("href=\"runs/r1.html\""),
            "the run that flagged it"
        );

        let superseded = section(&html, "supersessions");
        let (old, new) = (
            superseded.find("Lives in Lisbon.").unwrap(),
            superseded.find("Moved to Porto.").unwrap(),
        );
        assert!(old < new, "the old text, then the new one");
        assert!(
            superseded.contains("2026-09-22"),
            "the day the new one took over"
        );

        let merges = section(&html, "merges");
        assert!(merges.contains("card canonical") && merges.contains("Prefers Rust."));
        assert!(
            merges.contains("Would rather use Rust."),
            "the text it replaced"
        );

        let patterns = section(&html, "patterns");
        assert!(patterns.contains("Rotated keys … (2 times)"));
        assert!(
            patterns.contains("Rotated the keys on Monday.")
                && patterns.contains("Rotated the keys again.")
        );
        assert!(
            patterns.contains("<td>2</td><td>2026-09-02</td><td>2026-09-09</td>"),
            "{patterns}"
        );

        let archived = section(&html, "archived");
        assert!(archived.contains("Rotated the keys."));
        assert!(archived.contains("2026-10-11"), "archived on the run's day");
        assert!(
            archived.contains("<code>engram undo r3</code>"),
            "how to bring it back"
        );

        let timeline = section(&html, "timeline");
        assert_eq!(timeline.matches("<circle").count(), 3, "one mark per run");
        for run in ["r1", "r2", "r3"] {
            assert!(timeline.contains(&format!("href=\"runs/{run}.html\"")));
        }
        let months = section(&html, "salience-history");
        assert!(
            months.contains("<td>2026-09</td><td>9</td>"),
            "September's last run saw 9: {months}"
        );
        assert!(months.contains("<td>2026-10</td><td>7</td>"));
    }

    #[test]
    fn a_month_without_a_run_says_so() {
        let records = UserRecords {
            memories: vec![memory("a", "A fact.", MemoryStatus::Active, SEPT)],
            links: vec![],
            runs: vec![run("r1", SEPT + DAY, 1), run("r2", SEPT + 70 * DAY, 1)],
        };
        let months = render(&records, 10);
        let months = section(&months, "salience-history");
        assert!(
            months.contains(
                "<td>2026-10</td><td colspan=\"6\" class=\"empty\">no run this month</td>"
            )
        );
        assert!(months.contains("<td>2026-11</td><td>1</td>"));
    }

    /// Issue 81's bound: a big user's page lists the most recent entries of
    /// each section, says how many there are, and stays small.
    #[test]
    fn a_user_with_100k_memories_gets_a_page_of_a_few_hundred_kilobytes() {
        let sentence =
            "The user mentioned a detail about project work on this day, at some length.";
        let mut memories = Vec::new();
        let mut links = Vec::new();
        for i in 0..100_000_i64 {
            let status = match i % 10 {
                0 | 1 => MemoryStatus::Superseded,
                2 => MemoryStatus::Archived,
                _ => MemoryStatus::Active,
            };
            let mut m = memory(
                &format!("m{i}"),
                &format!("{sentence} #{i}"),
                status,
                SEPT + i * 60_000,
            );
            if status == MemoryStatus::Archived {
                m.last_run_id = Some(format!("r{}", i % 3_000));
            }
            // A pattern every thousand memories, over the 30 before it.
            if i % 1_000 == 999 {
                m.category = Some(PATTERN_CATEGORY.into());
                for k in i - 30..i {
                    links.push(link(
                        &format!("m{k}"),
                        &format!("m{i}"),
                        LinkType::InstanceOf,
                        0,
                        "r1",
                    ));
                }
            }
            memories.push(m);
            let at = SEPT + i * 60_000 + DAY;
            match i % 10 {
                0 => links.push(link(
                    &format!("m{}", i + 3),
                    &format!("m{i}"),
                    LinkType::Consolidates,
                    at,
                    "r1",
                )),
                1 => links.push(link(
                    &format!("m{}", i + 3),
                    &format!("m{i}"),
                    LinkType::Supersedes,
                    at,
                    "r1",
                )),
                4 => {
                    links.push(link(
                        &format!("m{i}"),
                        &format!("m{}", i + 1),
                        LinkType::Contradicts,
                        at,
                        "r1",
                    ));
                    links.push(link(
                        &format!("m{}", i + 1),
                        &format!("m{i}"),
                        LinkType::Contradicts,
                        at,
                        "r1",
                    ));
                }
                _ => {}
            }
        }
        let runs = (0..3_000)
            .map(|k| run(&format!("r{k}"), SEPT + k * 3_600_000, 80_000))
            .collect();
        let records = UserRecords {
            memories,
            links,
            runs,
        };
        let html = render(&records, SECTION_LIMIT);
        for (id, total) in [
            ("open-contradictions", 10_000),
            ("supersessions", 10_000),
            ("merges", 10_000),
            ("archived", 10_000),
        ] {
            let part = section(&html, id);
            assert!(
                part.contains(&format!(
                    "Showing the {SECTION_LIMIT} most recent of {total}."
                )),
                "{id}"
            );
        }
        assert!(
            section(&html, "patterns").contains("and 10 more"),
            "30 episodes, 20 listed"
        );
        assert!(
            section(&html, "timeline").contains("The table lists the 20 most recent of 3000 runs.")
        );
        println!(
            "history page of a 100,000-memory user: {} bytes",
            html.len()
        );
        assert!(html.len() < 3 << 20, "{} bytes", html.len());
    }
}
