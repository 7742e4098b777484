//! Deterministic agglomerative clustering over a similarity function.
//!
//! Clusters only ever join along pairs at or above the threshold, so the
//! work is split by the connected components of that graph first; each
//! component is then merged greedily, best pair first, ties by the lowest
//! member index. Same input, same clusters, whatever the platform.

use std::collections::BTreeMap;

/// How the similarity of two clusters is measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Linkage {
    /// The least similar pair: every member is close to every other.
    Complete,
    /// The mean over all pairs: a looser, topic-level grouping.
    Average,
}

/// Clusters items `0..n`. `similarity` gives `None` for pairs that cannot be
/// compared; `apart` marks pairs that must never share a cluster. Returns
/// clusters of two or more, members ascending, ordered by first member.
pub fn cluster(
    n: usize,
    similarity: impl Fn(usize, usize) -> Option<f64>,
    apart: impl Fn(usize, usize) -> bool,
    threshold: f64,
    linkage: Linkage,
) -> Vec<Vec<usize>> {
    let mut scores: BTreeMap<(usize, usize), f64> = BTreeMap::new();
    let mut parent: Vec<usize> = (0..n).collect();
    for i in 0..n {
        for j in i + 1..n {
            let Some(score) = similarity(i, j) else {
                continue;
            };
            if apart(i, j) {
                scores.insert((i, j), f64::NEG_INFINITY);
                continue;
            }
            scores.insert((i, j), score);
            if score >= threshold {
                let (a, b) = (root(&mut parent, i), root(&mut parent, j));
                if a != b {
                    parent[a.max(b)] = a.min(b);
                }
            }
        }
    }
    let mut components: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for i in 0..n {
        let r = root(&mut parent, i);
        components.entry(r).or_default().push(i);
    }
    let score = |i: usize, j: usize| {
        scores
            .get(&(i.min(j), i.max(j)))
            .copied()
            .unwrap_or(f64::NEG_INFINITY)
    };
    let mut out = Vec::new();
    for members in components.into_values().filter(|m| m.len() > 1) {
        out.extend(agglomerate(members, &score, threshold, linkage));
    }
    out.sort();
    out
}

fn root(parent: &mut [usize], mut i: usize) -> usize {
    while parent[i] != i {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    i
}

fn agglomerate(
    members: Vec<usize>,
    score: &impl Fn(usize, usize) -> f64,
    threshold: f64,
    linkage: Linkage,
) -> Vec<Vec<usize>> {
    let mut clusters: Vec<Vec<usize>> = members.into_iter().map(|m| vec![m]).collect();
    loop {
        let mut best: Option<(f64, usize, usize)> = None;
        for a in 0..clusters.len() {
            for b in a + 1..clusters.len() {
                let value = link(&clusters[a], &clusters[b], score, linkage);
                if value >= threshold && best.is_none_or(|(top, _, _)| value > top) {
                    best = Some((value, a, b));
                }
            }
        }
        let Some((_, a, b)) = best else {
            break;
        };
        let absorbed = clusters.remove(b);
        clusters[a].extend(absorbed);
        clusters[a].sort_unstable();
    }
    clusters.retain(|c| c.len() > 1);
    clusters
}

fn link(
    first: &[usize],
    second: &[usize],
    score: &impl Fn(usize, usize) -> f64,
    linkage: Linkage,
) -> f64 {
    let mut min = f64::INFINITY;
    let mut sum = 0.0;
    for &i in first {
        for &j in second {
            let s = score(i, j);
            if s == f64::NEG_INFINITY {
                return s;
            }
            min = min.min(s);
            sum += s;
        }
    }
    match linkage {
        Linkage::Complete => min,
        Linkage::Average => sum / (first.len() * second.len()) as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Similarities on a line: items at positions, similarity 1 − distance.
    fn on_line(positions: &[f64]) -> impl Fn(usize, usize) -> Option<f64> + '_ {
        move |i, j| Some(1.0 - (positions[i] - positions[j]).abs())
    }

    #[test]
    fn complete_linkage_keeps_every_pair_above_threshold() {
        // A chain 0.0, 0.08, 0.16: neighbours at 0.92, ends at 0.84.
        let positions = [0.0, 0.08, 0.16, 5.0];
        let clusters = cluster(4, on_line(&positions), |_, _| false, 0.9, Linkage::Complete);
        assert_eq!(clusters, vec![vec![0, 1]]);
        let average = cluster(4, on_line(&positions), |_, _| false, 0.85, Linkage::Average);
        assert_eq!(average, vec![vec![0, 1, 2]]);
    }

    #[test]
    fn apart_pairs_never_share_a_cluster() {
        let positions = [0.0, 0.01, 0.02];
        let clusters = cluster(
            3,
            on_line(&positions),
            |i, j| (i, j) == (0, 2),
            0.9,
            Linkage::Complete,
        );
        assert_eq!(clusters, vec![vec![0, 1]]);
    }

    #[test]
    fn incomparable_items_stay_alone_and_order_is_stable() {
        let clusters = cluster(
            4,
            |i, j| (i % 2 == j % 2).then_some(0.99),
            |_, _| false,
            0.9,
            Linkage::Complete,
        );
        assert_eq!(clusters, vec![vec![0, 2], vec![1, 3]]);
    }
}
