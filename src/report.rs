//! `engram report --html`: one self-contained page (inline CSS and SVG, no
//! scripts, nothing fetched) about a user and one of their runs: salience
//! distribution, memories by kind and status, merged clusters side by side,
//! contradictions with their signals, the link graph around a memory, and
//! the run's actions with their reasons. Pure: it renders what it is given.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;

use crate::cycle::CycleReport;
use crate::model::{Link, LinkType, Memory, MemoryKind, MemoryStatus, Millis};
use crate::plan::ActionType;
use crate::salience::SalienceParams;

/// What a page shows.
pub struct ReportPage<'a> {
    pub user_id: &'a str,
    pub memories: &'a [Memory],
    pub links: &'a [Link],
    /// The run to show, if the user has one.
    pub run: Option<&'a CycleReport>,
    /// The memory at the centre of the link graph (default: the most linked).
    pub focus: Option<&'a str>,
    /// "Now" for salience.
    pub now: Millis,
    pub salience: &'a SalienceParams,
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

fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let cut: String = text.chars().take(max.saturating_sub(1)).collect();
    format!("{cut}…")
}

const STYLE: &str = "
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:0;background:#f6f7f9;color:#1d2430}
header{background:#1d2430;color:#fff;padding:20px 32px}
header h1{margin:0 0 6px;font-size:22px}
header p{margin:0;color:#c7cfdb;font-size:14px}
main{padding:8px 32px 40px;max-width:1200px}
section{background:#fff;border:1px solid #dde2ea;border-radius:8px;padding:16px 20px;margin:18px 0}
h2{font-size:17px;margin:0 0 12px}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{border-bottom:1px solid #e6e9ef;padding:6px 8px;text-align:left;vertical-align:top}
th{background:#f0f2f6}
.counts{display:flex;flex-wrap:wrap;gap:10px}
.count{background:#f0f2f6;border-radius:6px;padding:8px 12px;font-size:13px}
.count b{display:block;font-size:20px}
.cluster{display:flex;gap:10px;margin:10px 0;flex-wrap:wrap}
.card{flex:1 1 220px;border:1px solid #dde2ea;border-radius:6px;padding:8px 10px;font-size:13px}
.card.canonical{border-color:#2f7d4f;background:#f1faf4}
.fused{flex:1 1 100%;color:#2f7d4f;font-size:12px}
.meta{color:#667085;font-size:12px}
.signal{display:inline-block;background:#fff1e6;color:#9a4a00;border-radius:4px;padding:1px 6px;margin:2px;font-size:12px}
.empty{color:#667085;font-style:italic}
svg text{font-family:system-ui,sans-serif}
";

/// Renders the page.
pub fn render_html(page: &ReportPage<'_>) -> String {
    let by_id: HashMap<&str, &Memory> = page.memories.iter().map(|m| (m.id.as_str(), m)).collect();
    let mut html = String::new();
    let title = match page.run {
        Some(run) => format!("engram · {} · run {}", page.user_id, run.run_id),
        None => format!("engram · {}", page.user_id),
    };
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{}</title><style>{STYLE}</style></head><body>",
        escape(&title)
    );
    header(&mut html, page);
    html.push_str("<main>");
    if let Some(run) = page.run {
        counts(&mut html, run);
    }
    salience_section(&mut html, page);
    kinds_section(&mut html, page.memories);
    match page.run {
        Some(run) => {
            clusters_section(&mut html, run, &by_id);
            contradictions_section(&mut html, run, &by_id);
            patterns_section(&mut html, run);
        }
        None => html.push_str(
            "<section><h2>Consolidation</h2><p class=\"empty\">No consolidation run yet.</p></section>",
        ),
    }
    graph_section(&mut html, page, &by_id);
    if let Some(run) = page.run {
        actions_section(&mut html, run);
    }
    html.push_str("</main></body></html>\n");
    html
}

fn header(html: &mut String, page: &ReportPage<'_>) {
    let _ = write!(
        html,
        "<header><h1>Memory of {}</h1><p>{} memories, {} links",
        escape(page.user_id),
        page.memories.len(),
        page.links.len()
    );
    if let Some(run) = page.run {
        let _ = write!(
            html,
            " · run <code>{}</code> · {:?} {} · {} · tier {:?} ({} of {} tokens)",
            escape(&run.run_id),
            run.trigger,
            if run.executed { "executed" } else { "dry run" },
            run.started_at.format("%Y-%m-%d %H:%M:%S UTC"),
            run.tier,
            run.tokens,
            run.token_budget
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

fn salience_section(html: &mut String, page: &ReportPage<'_>) {
    let mut deciles = [0u64; 10];
    for memory in page
        .memories
        .iter()
        .filter(|m| m.status == MemoryStatus::Active)
    {
        let value = memory
            .salience
            .salience(page.now, memory.importance, page.salience);
        let bucket = ((value * 10.0).floor() as usize).min(9);
        deciles[bucket] += 1;
    }
    html.push_str("<section id=\"salience\"><h2>Salience of active memories</h2>");
    let (width, height, bar) = (520.0, 160.0, 44.0);
    let top = deciles.iter().copied().max().unwrap_or(0).max(1) as f64;
    let _ = write!(
        html,
        "<svg width=\"{width}\" height=\"{}\" role=\"img\" aria-label=\"salience histogram\">",
        height + 30.0
    );
    for (i, count) in deciles.iter().enumerate() {
        let h = (*count as f64 / top) * (height - 20.0);
        let x = 10.0 + i as f64 * (bar + 6.0);
        let _ = write!(
            html,
            "<rect x=\"{x}\" y=\"{}\" width=\"{bar}\" height=\"{h}\" fill=\"#4a7bd0\"/>\
             <text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">{count}</text>\
             <text x=\"{}\" y=\"{}\" font-size=\"10\" text-anchor=\"middle\" fill=\"#667085\">{:.1}–{:.1}</text>",
            height - h,
            x + bar / 2.0,
            height - h - 4.0,
            x + bar / 2.0,
            height + 14.0,
            i as f64 / 10.0,
            (i + 1) as f64 / 10.0
        );
    }
    html.push_str("</svg></section>");
}

fn kinds_section(html: &mut String, memories: &[Memory]) {
    let mut table: BTreeMap<(MemoryKind, MemoryStatus), usize> = BTreeMap::new();
    for memory in memories {
        *table.entry((memory.kind, memory.status)).or_default() += 1;
    }
    html.push_str(
        "<section id=\"kinds\"><h2>Memories by kind and status</h2><table><tr><th>kind</th>",
    );
    for status in MemoryStatus::ALL {
        let _ = write!(html, "<th>{}</th>", status.as_str());
    }
    html.push_str("<th>total</th></tr>");
    for kind in MemoryKind::ALL {
        let _ = write!(html, "<tr><td>{}</td>", kind.as_str());
        let mut total = 0;
        for status in MemoryStatus::ALL {
            let count = table.get(&(kind, status)).copied().unwrap_or(0);
            total += count;
            let _ = write!(html, "<td>{count}</td>");
        }
        let _ = write!(html, "<td><b>{total}</b></td></tr>");
    }
    html.push_str("</table></section>");
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
        let day = |at: Option<Millis>| {
            at.and_then(chrono::DateTime::from_timestamp_millis)
                .map(|t| t.format("%Y-%m-%d").to_string())
                .unwrap_or_default()
        };
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

fn link_colour(link_type: LinkType) -> &'static str {
    match link_type {
        LinkType::Supersedes => "#b54708",
        LinkType::Contradicts => "#c01048",
        LinkType::Consolidates => "#2f7d4f",
        LinkType::InstanceOf => "#6941c6",
        LinkType::SplitFrom => "#0e7090",
        LinkType::Related => "#667085",
    }
}

/// The memory to centre the graph on: the given one, else the most linked.
fn focus<'a>(page: &'a ReportPage<'_>) -> Option<&'a str> {
    if let Some(focus) = page.focus {
        return Some(focus);
    }
    let mut degree: BTreeMap<&str, usize> = BTreeMap::new();
    for link in page.links {
        *degree.entry(link.from_id.as_str()).or_default() += 1;
        *degree.entry(link.to_id.as_str()).or_default() += 1;
    }
    degree
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(a.0)))
        .map(|(id, _)| id)
}

fn graph_section(html: &mut String, page: &ReportPage<'_>, by_id: &HashMap<&str, &Memory>) {
    html.push_str("<section id=\"graph\"><h2>Links around a memory</h2>");
    let Some(centre) = focus(page) else {
        html.push_str("<p class=\"empty\">This user has no links.</p></section>");
        return;
    };
    const MAX_NEIGHBOURS: usize = 24;
    let around: Vec<&Link> = page
        .links
        .iter()
        .filter(|l| l.from_id == centre || l.to_id == centre)
        .collect();
    let neighbours: Vec<&str> = around
        .iter()
        .map(|l| {
            if l.from_id == centre {
                l.to_id.as_str()
            } else {
                l.from_id.as_str()
            }
        })
        .collect::<BTreeSet<_>>()
        .into_iter()
        .take(MAX_NEIGHBOURS)
        .collect();
    let label = |id: &str| {
        by_id
            .get(id)
            .map(|m| shorten(&m.content, 36))
            .unwrap_or_else(|| shorten(id, 36))
    };
    let (width, height) = (1000.0_f64, 560.0_f64);
    let (cx, cy, radius) = (width / 2.0, height / 2.0, 210.0);
    let position = |index: usize| {
        let angle = std::f64::consts::TAU * index as f64 / neighbours.len().max(1) as f64;
        (cx + radius * angle.cos(), cy + radius * angle.sin())
    };
    let _ = write!(
        html,
        "<p class=\"meta\">Centre: {} ({} links{})</p>\
         <svg width=\"{width}\" height=\"{height}\" role=\"img\" aria-label=\"link graph\">",
        escape(centre),
        around.len(),
        if neighbours.len() == MAX_NEIGHBOURS {
            ", first 24 neighbours shown"
        } else {
            ""
        }
    );
    for link in &around {
        let other = if link.from_id == centre {
            &link.to_id
        } else {
            &link.from_id
        };
        let Some(index) = neighbours.iter().position(|n| n == other) else {
            continue;
        };
        let (x, y) = position(index);
        let _ = write!(
            html,
            "<line x1=\"{cx:.1}\" y1=\"{cy:.1}\" x2=\"{x:.1}\" y2=\"{y:.1}\" stroke=\"{}\" stroke-width=\"2\"><title>{} → {}: {}</title></line>",
            link_colour(link.link_type),
            escape(&link.from_id),
            escape(&link.to_id),
            link.link_type.as_str()
        );
    }
    for (index, id) in neighbours.iter().enumerate() {
        let (x, y) = position(index);
        let anchor = if x < cx - 1.0 {
            "end"
        } else if x > cx + 1.0 {
            "start"
        } else {
            "middle"
        };
        let dx = match anchor {
            "end" => -10.0,
            "start" => 10.0,
            _ => 0.0,
        };
        let _ = write!(
            html,
            "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"7\" fill=\"#4a7bd0\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"{anchor}\">{}</text>",
            x + dx,
            y + 4.0,
            escape(&label(id))
        );
    }
    let _ = write!(
        html,
        "<circle cx=\"{cx}\" cy=\"{cy}\" r=\"11\" fill=\"#1d2430\"/>\
         <text x=\"{cx}\" y=\"{:.1}\" font-size=\"12\" font-weight=\"bold\" text-anchor=\"middle\">{}</text>",
        cy - 18.0,
        escape(&label(centre))
    );
    let mut legend_x = 10.0;
    for link_type in LinkType::ALL {
        let _ = write!(
            html,
            "<rect x=\"{legend_x}\" y=\"{}\" width=\"12\" height=\"4\" fill=\"{}\"/>\
             <text x=\"{}\" y=\"{}\" font-size=\"11\">{}</text>",
            height - 14.0,
            link_colour(link_type),
            legend_x + 16.0,
            height - 10.0,
            link_type.as_str()
        );
        legend_x += 120.0;
    }
    html.push_str("</svg></section>");
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::salience::SalienceState;

    fn memory(id: &str, content: &str) -> Memory {
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
            status: MemoryStatus::Active,
            salience: SalienceState::new(0),
            merged_from: vec![],
            derived_from: vec![],
            last_run_id: None,
        }
    }

    #[test]
    fn user_text_is_escaped_everywhere() {
        let memories = [memory("m<1>", "<script>alert('x')</script> & \"quotes\"")];
        let links = [Link {
            user_id: "u".into(),
            from_id: "m<1>".into(),
            to_id: "other".into(),
            link_type: LinkType::Related,
            confidence: 1.0,
            reason: "r".into(),
            created_at: 0,
            run_id: None,
        }];
        let page = ReportPage {
            user_id: "<u>",
            memories: &memories,
            links: &links,
            run: None,
            focus: None,
            now: 1_000,
            salience: &SalienceParams::default(),
        };
        let html = render_html(&page);
        assert!(!html.contains("<script"), "{html}");
        assert!(html.contains("&lt;script&gt;"));
        assert!(html.contains("Memory of &lt;u&gt;"));
        assert!(html.contains("No consolidation run yet"));
        assert!(html.contains("Centre: m&lt;1&gt; (1 links)"));
    }
}
