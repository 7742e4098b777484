//! The history page's two charts, as inline SVG: the run timeline and
//! salience month by month.

use std::fmt::Write as _;

use super::{day, escape};
use crate::event::TriggerReason;
use crate::model::Millis;

/// One run on the timeline.
pub(super) struct RunMark {
    pub run_id: String,
    pub at: Millis,
    pub trigger: TriggerReason,
    pub executed: bool,
    pub undone: bool,
    /// What it did, in words ("3 merged, 1 flagged").
    pub summary: String,
    /// Decisions it made; sizes the mark.
    pub decisions: i64,
    /// Its page, when there is one.
    pub href: Option<String>,
}

const TRIGGERS: [(TriggerReason, &str); 4] = [
    (TriggerReason::Threshold, "threshold"),
    (TriggerReason::Schedule, "schedule"),
    (TriggerReason::Manual, "manual"),
    (TriggerReason::Capacity, "capacity"),
];

pub(super) fn trigger_name(trigger: TriggerReason) -> &'static str {
    TRIGGERS
        .iter()
        .find(|(t, _)| *t == trigger)
        .map_or("unknown", |(_, name)| name)
}

/// One lane per trigger, time left to right: a filled mark for an executed
/// run, a ring for a dry run, grey once undone; bigger for more decisions.
pub(super) fn timeline(html: &mut String, marks: &[RunMark]) {
    let (Some(first), Some(last)) = (marks.first(), marks.last()) else {
        return;
    };
    let (width, left, right, lane) = (1000.0_f64, 90.0, 20.0, 34.0);
    let height = lane * TRIGGERS.len() as f64 + 36.0;
    let span = (last.at - first.at).max(1) as f64;
    let x_of = |at: Millis| left + (at - first.at) as f64 / span * (width - left - right);
    let _ = write!(
        html,
        "<svg width=\"{width}\" height=\"{height}\" role=\"img\" aria-label=\"run timeline\">"
    );
    for (index, (_, name)) in TRIGGERS.iter().enumerate() {
        let y = lane * index as f64 + lane / 2.0 + 4.0;
        let _ = write!(
            html,
            "<line x1=\"{left}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" stroke=\"#e6e9ef\"/>\
             <text x=\"0\" y=\"{}\" font-size=\"11\" fill=\"#667085\">{name}</text>",
            width - right,
            y + 4.0
        );
    }
    for mark in marks {
        let lane_index = TRIGGERS
            .iter()
            .position(|(t, _)| *t == mark.trigger)
            .unwrap_or(0);
        let y = lane * lane_index as f64 + lane / 2.0 + 4.0;
        let radius = 3.0 + (mark.decisions.max(0) as f64).sqrt().min(8.0);
        let colour = if mark.undone { "#98a2b3" } else { "#4a7bd0" };
        let fill = if mark.executed { colour } else { "none" };
        let title = format!(
            "{} · {} · {}{} · {}",
            day(mark.at),
            trigger_name(mark.trigger),
            if mark.executed { "executed" } else { "dry run" },
            if mark.undone { ", undone" } else { "" },
            mark.summary
        );
        let circle = format!(
            "<circle cx=\"{:.1}\" cy=\"{y}\" r=\"{radius:.1}\" fill=\"{fill}\" stroke=\"{colour}\" \
             stroke-width=\"1.5\" fill-opacity=\"0.7\"><title>run {}: {}</title></circle>",
            x_of(mark.at),
            escape(&mark.run_id),
            escape(&title)
        );
        match &mark.href {
            Some(href) => {
                let _ = write!(html, "<a href=\"{}\">{circle}</a>", escape(href));
            }
            None => html.push_str(&circle),
        }
    }
    let axis_y = height - 8.0;
    let _ = write!(
        html,
        "<text x=\"{left}\" y=\"{axis_y}\" font-size=\"11\" fill=\"#667085\">{}</text>\
         <text x=\"{}\" y=\"{axis_y}\" font-size=\"11\" fill=\"#667085\" text-anchor=\"end\">{}</text></svg>",
        day(first.at),
        width - right,
        day(last.at)
    );
}

/// Salience bands, low to high, with their colours.
pub(super) const BANDS: [(&str, &str); 5] = [
    ("0–0.2", "#d0d5dd"),
    ("0.2–0.4", "#a4bcfd"),
    ("0.4–0.6", "#6f8fe8"),
    ("0.6–0.8", "#4a6fd0"),
    ("0.8–1", "#1d3a8a"),
];

/// A month on the salience chart: its last run's view of the active set.
pub(super) struct MonthBar {
    /// "2026-09".
    pub month: String,
    /// Active memories by band; `None`: no run that month.
    pub bands: Option<[u64; 5]>,
}

/// A stacked bar per month: the active memories the month's last run saw,
/// split by salience band.
pub(super) fn salience_by_month(html: &mut String, months: &[MonthBar]) {
    let (bar, gap, height, top_pad) = (44.0_f64, 14.0, 180.0, 18.0);
    let width = 40.0 + months.len() as f64 * (bar + gap) + 150.0;
    let highest = months
        .iter()
        .filter_map(|m| m.bands)
        .map(|b| b.iter().sum::<u64>())
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    let _ = write!(
        html,
        "<svg width=\"{width}\" height=\"{}\" role=\"img\" aria-label=\"salience by month\">",
        height + 34.0
    );
    for (index, month) in months.iter().enumerate() {
        let x = 40.0 + index as f64 * (bar + gap);
        let _ = write!(
            html,
            "<text x=\"{:.1}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\" fill=\"#667085\">{}</text>",
            x + bar / 2.0,
            height + 16.0,
            escape(&month.month)
        );
        let Some(bands) = month.bands else {
            let _ = write!(
                html,
                "<text x=\"{:.1}\" y=\"{}\" font-size=\"10\" text-anchor=\"middle\" fill=\"#98a2b3\">no run</text>",
                x + bar / 2.0,
                height - 4.0
            );
            continue;
        };
        let total: u64 = bands.iter().sum();
        let mut y = height;
        for (count, (label, colour)) in bands.iter().zip(BANDS) {
            let h = *count as f64 / highest * (height - top_pad);
            y -= h;
            let _ = write!(
                html,
                "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{bar}\" height=\"{h:.1}\" fill=\"{colour}\">\
                 <title>{}: {count} active memories at salience {label}</title></rect>",
                escape(&month.month)
            );
        }
        let _ = write!(
            html,
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"middle\">{total}</text>",
            x + bar / 2.0,
            y - 4.0
        );
    }
    let legend_x = 40.0 + months.len() as f64 * (bar + gap) + 10.0;
    for (index, (label, colour)) in BANDS.iter().enumerate().rev() {
        let y = 20.0 + (BANDS.len() - 1 - index) as f64 * 18.0;
        let _ = write!(
            html,
            "<rect x=\"{legend_x}\" y=\"{y}\" width=\"12\" height=\"12\" fill=\"{colour}\"/>\
             <text x=\"{}\" y=\"{}\" font-size=\"11\">salience {label}</text>",
            legend_x + 18.0,
            y + 10.0
        );
    }
    html.push_str("</svg>");
}
