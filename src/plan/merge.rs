//! Merge semantics (docs/design.md §4): the canonical memory is, among the
//! candidates the detector found to cover every member's content (all
//! members when it found none), the one with the highest salience (ties:
//! newest); when it covers nothing, its text becomes the fused text the
//! detector wrote for it (its own with the others' details appended), and
//! its vector is computed again; it absorbs `merged_from`, the union of
//! tags, the sum of access counts and the median importance; links of the
//! merged memories move to it (duplicates dropped, highest confidence kept);
//! the others become `superseded`, linked from it by `consolidates`.

use std::collections::BTreeMap;

use super::{LinkType, MemoryStatus, Working, key};
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
    let moving: Vec<_> = w
        .links
        .values()
        .filter(|l| others.contains(&l.from_id) || others.contains(&l.to_id))
        .cloned()
        .collect();
    for link in moving {
        w.links.remove(&key(&link));
        let mut moved = link;
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
