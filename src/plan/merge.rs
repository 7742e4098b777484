//! Merge semantics (docs/design.md §4): the canonical memory is, among the
//! candidates the detector found to cover every member's content (all
//! members when it found none), the one with the highest salience (ties:
//! newest); when it covers nothing, its text becomes the fused text the
//! detector wrote for it (its own with the others' details appended), and
//! its vector is computed again; it absorbs `merged_from`, the union of
//! tags, the sum of access counts and the median importance; links of the
//! merged memories move to it (duplicates dropped, highest confidence kept);
//! the others become `superseded`, linked from it by `consolidates`.

use std::collections::{BTreeMap, BTreeSet};

use super::{LinkKey, LinkType, MemoryStatus, Working};
use crate::salience::SalienceParams;
use crate::text::content_hash;

/// Merges `members` (at least two, all active) into the most salient of
/// `candidates` (members too), giving it its `fused` text if it has one,
/// and returns the canonical id.
pub(super) fn merge(
    w: &mut Working<'_>,
    members: &[String],
    candidates: &[String],
    fused: &BTreeMap<String, String>,
    similarity: f64,
    params: &SalienceParams,
) -> String {
    let now = w.request.now;
    let ranked = candidates
        .iter()
        .filter_map(|id| w.memories.get(id))
        .max_by(|a, b| {
            let sa = a.salience.salience(now, a.importance, params);
            let sb = b.salience.salience(now, b.importance, params);
            sa.total_cmp(&sb)
                .then(a.created_at().cmp(&b.created_at()))
                .then(a.id.cmp(&b.id))
        });
    let Some(canonical_id) = ranked.map(|m| m.id.clone()) else {
        return members[0].clone();
    };
    let others: Vec<String> = members
        .iter()
        .filter(|id| **id != canonical_id)
        .cloned()
        .collect();
    let mut importances: Vec<f64> = members
        .iter()
        .filter_map(|id| w.memories.get(id).map(|m| m.importance))
        .collect();
    let importance = median(&mut importances);
    let absorbed: Vec<_> = others
        .iter()
        .filter_map(|id| w.memories.get(id).cloned())
        .collect();
    if let Some(canonical) = w.touch(&canonical_id) {
        for other in &absorbed {
            canonical.merged_from.push(other.id.clone());
            canonical
                .merged_from
                .extend(other.merged_from.iter().cloned());
            canonical.tags.extend(other.tags.iter().cloned());
            canonical.salience.absorb(&other.salience);
        }
        canonical.merged_from.sort();
        canonical.merged_from.dedup();
        canonical.tags.sort();
        canonical.tags.dedup();
        canonical.importance = importance;
        if let Some(text) = fused.get(&canonical_id) {
            canonical.content.clone_from(text);
            canonical.content_hash = content_hash(text);
            // Its vector follows its text; the cycle embeds it again.
            canonical.embedding = None;
        }
    }
    move_links(w, &others, &canonical_id);
    for other in &others {
        if let Some(memory) = w.touch(other) {
            memory.status = MemoryStatus::Superseded;
        }
        let reason = format!("merged duplicate (least similar pair cosine {similarity:.4})");
        w.link(
            &canonical_id,
            other,
            LinkType::Consolidates,
            similarity,
            reason,
        );
    }
    canonical_id
}

/// Re-points every link touching a merged memory at the canonical one.
fn move_links(w: &mut Working<'_>, others: &[String], canonical: &str) {
    // In key order, as a scan of every link would meet them.
    let moving: BTreeSet<LinkKey> = others
        .iter()
        .filter_map(|id| w.links_at.get(id))
        .flatten()
        .cloned()
        .collect();
    for key in moving {
        let Some(mut moved) = w.take_link(&key) else {
            continue;
        };
        for end in [&mut moved.from_id, &mut moved.to_id] {
            if others.contains(end) {
                *end = canonical.to_owned();
            }
        }
        if moved.from_id != moved.to_id {
            w.put_link(moved);
        }
    }
}

/// The median (mean of the middle two for an even count); 0.5 when empty.
pub(super) fn median(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return 0.5;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len() % 2 == 1 {
        values[mid]
    } else {
        (values[mid - 1] + values[mid]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::super::{PlanRequest, RuleSet, plan};
    use crate::detect::detect;
    use crate::detect::testing::*;
    use crate::model::{Link, LinkType, Tier};

    fn link(from: &str, to: &str, link_type: LinkType) -> Link {
        Link {
            user_id: "u".into(),
            from_id: from.into(),
            to_id: to.into(),
            link_type,
            confidence: 0.6,
            reason: "earlier run".into(),
            created_at: T0,
            run_id: None,
        }
    }

    #[test]
    fn links_at_merged_memories_move_to_the_canonical_and_the_rest_stay() {
        let text = "The weekly standup meeting is at 10am";
        let mut snapshot = snapshot(vec![
            memory("old", text, T0, vector(1.0, 1)),
            memory("twin", text, T0 + 1, vector(1.0, 1)),
            memory("new", text, T0 + 2, vector(1.0, 1)),
            memory("a", "Lunch is served at noon", T0 + 3, vector(0.0, 2)),
            memory("b", "The office closes at six", T0 + 4, vector(0.0, 3)),
        ]);
        snapshot.links = vec![
            link("a", "old", LinkType::Related),
            link("twin", "b", LinkType::Related),
            link("a", "b", LinkType::Related),
        ];
        let (settings, rules, lexicon) = (settings(), RuleSet::default_rules(), lexicon());
        let detections = detect(&snapshot, T0 + 5, &settings, &lexicon);
        let plan = plan(
            &snapshot,
            &detections,
            &PlanRequest {
                run_id: "r",
                now: T0 + 5,
                tier: Tier::Gentle,
                settings: &settings,
                rules: &rules,
            },
        );
        let merge = plan
            .actions
            .iter()
            .find(|a| a.canonical_id.is_some())
            .expect("the three twins merge");
        assert_eq!(merge.canonical_id.as_deref(), Some("new"));
        let mut after: Vec<(String, String, LinkType)> = plan
            .link_changes
            .iter()
            .filter_map(|c| c.after.as_ref())
            .map(|l| (l.from_id.clone(), l.to_id.clone(), l.link_type))
            .collect();
        after.sort();
        let pair = |from: &str, to: &str, t| (from.to_owned(), to.to_owned(), t);
        assert_eq!(
            after,
            vec![
                pair("a", "new", LinkType::Related),
                pair("new", "b", LinkType::Related),
                pair("new", "old", LinkType::Consolidates),
                pair("new", "twin", LinkType::Consolidates),
            ]
        );
        let removed: Vec<(&str, &str)> = plan
            .link_changes
            .iter()
            .filter(|c| c.after.is_none())
            .filter_map(|c| c.before.as_ref())
            .map(|l| (l.from_id.as_str(), l.to_id.as_str()))
            .collect();
        assert_eq!(removed.len(), 2, "{removed:?}");
        assert!(removed.contains(&("a", "old")) && removed.contains(&("twin", "b")));
    }
}
