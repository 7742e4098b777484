//! What every page shows of a user's memories as they stand: salience at
//! the page's "now", memories by kind and status, and the link graph
//! around one memory.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;

use super::{escape, shorten};
use crate::detect::patterns::PATTERN_CATEGORY;
use crate::model::{Link, LinkType, Memory, MemoryKind, MemoryStatus, Millis};
use crate::salience::SalienceParams;

/// The memories and links as they stand, and the time to judge them at.
pub struct Current<'a> {
    pub memories: &'a [Memory],
    pub links: &'a [Link],
    /// The memory at the centre of the link graph (default: the most linked).
    pub focus: Option<&'a str>,
    /// "Now" for salience.
    pub now: Millis,
    pub salience: &'a SalienceParams,
}

pub(super) fn salience_section(html: &mut String, page: &Current<'_>) {
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

pub(super) fn kinds_section(html: &mut String, memories: &[Memory]) {
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
fn focus<'a>(page: &'a Current<'_>) -> Option<&'a str> {
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

pub(super) fn graph_section(html: &mut String, page: &Current<'_>, by_id: &HashMap<&str, &Memory>) {
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
            .map_or_else(|| shorten(id, 36), |m| node_label(m))
    };
    let full = |id: &str| escape(by_id.get(id).map_or(id, |m| m.content.as_str()));
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
            "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"7\" fill=\"#4a7bd0\"><title>{}</title></circle>\
             <text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"{anchor}\">{}</text>",
            full(id),
            x + dx,
            y + 4.0,
            escape(&label(id))
        );
    }
    let _ = write!(
        html,
        "<circle cx=\"{cx}\" cy=\"{cy}\" r=\"11\" fill=\"#1d2430\"><title>{}</title></circle>\
         <text x=\"{cx}\" y=\"{:.1}\" font-size=\"12\" font-weight=\"bold\" text-anchor=\"middle\">{}</text>",
        full(centre),
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

/// A node's label: the start of its text at a word boundary. A pattern's
/// text lists shared words with ellipses and ends with its count and dates;
/// the label says what it is and how often instead ("pattern, 5 times:
/// committing the test"), and the full text is the node's tooltip.
fn node_label(memory: &Memory) -> String {
    if memory.category.as_deref() != Some(PATTERN_CATEGORY) {
        return shorten(&memory.content, 36);
    }
    let (words, count) = match memory.content.rsplit_once(" (") {
        Some((words, tail)) => (words, tail.split(',').next().unwrap_or("")),
        None => (memory.content.as_str(), ""),
    };
    let words: Vec<&str> = words.split_whitespace().filter(|w| *w != "…").collect();
    let head = if count.is_empty() {
        "pattern".to_owned()
    } else {
        format!("pattern, {count}")
    };
    shorten(&format!("{head}: {}", words.join(" ")), 44)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::salience::SalienceState;

    #[test]
    fn a_pattern_node_says_what_it_is_and_how_often() {
        let mut memory = Memory {
            user_id: "u".into(),
            id: "p".into(),
            kind: MemoryKind::Semantic,
            category: Some(PATTERN_CATEGORY.into()),
            tags: vec![],
            content: "… committing … the test … (5 times, 7 October 2026 – 12 October 2026)".into(),
            importance: 0.5,
            source: None,
            content_hash: "p".into(),
            embedding: None,
            status: MemoryStatus::Active,
            salience: SalienceState::new(0),
            merged_from: vec![],
            derived_from: vec![],
            last_run_id: None,
            updated_at: None,
        };
        assert_eq!(node_label(&memory), "pattern, 5 times: committing the test");
        memory.category = None;
        memory.content = "The user prefers dark mode in every tool they use daily.".into();
        assert_eq!(node_label(&memory), "The user prefers dark mode in…");
    }
}
