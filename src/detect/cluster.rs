//! Deterministic agglomerative clustering over a similarity function.
//!
//! Clusters only ever join along pairs at or above the threshold, so the
//! work is split by the connected components of that graph first (its edges
//! come from [`super::pairs`], so large users are not compared all-pairs);
//! each component is then merged greedily, best pair first, ties by the
//! lowest member index. Same input, same clusters, whatever the platform.

use std::collections::BTreeMap;

use super::pairs::parallel_map;

/// How the similarity of two clusters is measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Linkage {
    /// The least similar pair: every member is close to every other.
    Complete,
    /// The mean over all pairs: a looser, topic-level grouping.
    Average,
}

/// Clusters items `0..n`. `edges` must hold every pair whose similarity is
/// at or above `threshold`; `similarity` scores any pair inside a component
/// (`None`: cannot be compared); `apart` marks pairs that must never share a
/// cluster. Returns clusters of two or more, members ascending, ordered by
/// first member.
pub fn cluster(
    n: usize,
    edges: impl IntoIterator<Item = (usize, usize)>,
    similarity: impl Fn(usize, usize) -> Option<f64> + Sync,
    apart: impl Fn(usize, usize) -> bool + Sync,
    threshold: f64,
    linkage: Linkage,
) -> Vec<Vec<usize>> {
    let edges: Vec<(usize, usize)> = edges
        .into_iter()
        .filter(|&(i, j)| i != j && i < n && j < n)
        .collect();
    // Whether a pair is kept apart may take reading both texts: the edges
    // are read on every core, then joined in their order.
    let kept = parallel_map(&edges, |&(i, j)| !apart(i, j));
    let mut parent: Vec<usize> = (0..n).collect();
    for (&(i, j), kept) in edges.iter().zip(kept) {
        if !kept {
            continue;
        }
        let (a, b) = (root(&mut parent, i), root(&mut parent, j));
        if a != b {
            parent[a.max(b)] = a.min(b);
        }
    }
    let mut components: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for i in 0..n {
        let r = root(&mut parent, i);
        components.entry(r).or_default().push(i);
    }
    let score = |i: usize, j: usize| {
        if apart(i, j) {
            return f64::NEG_INFINITY;
        }
        similarity(i, j).unwrap_or(f64::NEG_INFINITY)
    };
    // Components are clustered on their own, so they are shared out over
    // the cores.
    let components: Vec<Vec<usize>> = components.into_values().filter(|m| m.len() > 1).collect();
    let mut out: Vec<Vec<usize>> = parallel_map(&components, |members| {
        agglomerate(members, &score, threshold, linkage)
    })
    .into_iter()
    .flatten()
    .collect();
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

/// Greedy merging with Lance–Williams updates: the linkage between clusters
/// is kept in a matrix (a minimum for complete linkage, a sum of pair scores
/// for average), so each merge costs one row update.
fn agglomerate(
    members: &[usize],
    score: &impl Fn(usize, usize) -> f64,
    threshold: f64,
    linkage: Linkage,
) -> Vec<Vec<usize>> {
    let c = members.len();
    let mut table = vec![0.0f64; c * c];
    for a in 0..c {
        for b in a + 1..c {
            let s = score(members[a], members[b]);
            table[a * c + b] = s;
            table[b * c + a] = s;
        }
    }
    let mut clusters: Vec<Vec<usize>> = members.iter().map(|&m| vec![m]).collect();
    // Slots of the live clusters, in the order of their first member.
    let mut live: Vec<usize> = (0..c).collect();
    let value = |table: &[f64], clusters: &[Vec<usize>], a: usize, b: usize| match linkage {
        Linkage::Complete => table[a * c + b],
        Linkage::Average => table[a * c + b] / (clusters[a].len() * clusters[b].len()) as f64,
    };
    loop {
        let mut best: Option<(f64, usize, usize)> = None;
        for (x, &a) in live.iter().enumerate() {
            for &b in &live[x + 1..] {
                let v = value(&table, &clusters, a, b);
                if v >= threshold && best.is_none_or(|(top, _, _)| v > top) {
                    best = Some((v, a, b));
                }
            }
        }
        let Some((_, a, b)) = best else {
            break;
        };
        for &k in &live {
            if k == a || k == b {
                continue;
            }
            let merged = match linkage {
                Linkage::Complete => table[a * c + k].min(table[b * c + k]),
                Linkage::Average => table[a * c + k] + table[b * c + k],
            };
            table[a * c + k] = merged;
            table[k * c + a] = merged;
        }
        let absorbed = std::mem::take(&mut clusters[b]);
        clusters[a].extend(absorbed);
        clusters[a].sort_unstable();
        live.retain(|&k| k != b);
    }
    live.into_iter()
        .map(|k| std::mem::take(&mut clusters[k]))
        .filter(|cluster| cluster.len() > 1)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_pairs(n: usize) -> Vec<(usize, usize)> {
        (0..n)
            .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
            .collect()
    }

    /// Similarities on a line: items at positions, similarity 1 − distance.
    fn on_line(positions: &[f64]) -> impl Fn(usize, usize) -> Option<f64> + '_ {
        move |i, j| Some(1.0 - (positions[i] - positions[j]).abs())
    }

    #[test]
    fn complete_linkage_keeps_every_pair_above_threshold() {
        // A chain 0.0, 0.08, 0.16: neighbours at 0.92, ends at 0.84.
        let positions = [0.0, 0.08, 0.16, 5.0];
        let clusters = cluster(
            4,
            all_pairs(4),
            on_line(&positions),
            |_, _| false,
            0.9,
            Linkage::Complete,
        );
        assert_eq!(clusters, vec![vec![0, 1]]);
        let average = cluster(
            4,
            all_pairs(4),
            on_line(&positions),
            |_, _| false,
            0.85,
            Linkage::Average,
        );
        assert_eq!(average, vec![vec![0, 1, 2]]);
    }

    #[test]
    fn apart_pairs_never_share_a_cluster() {
        let positions = [0.0, 0.01, 0.02];
        let clusters = cluster(
            3,
            all_pairs(3),
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
            all_pairs(4),
            |i, j| (i % 2 == j % 2).then_some(0.99),
            |_, _| false,
            0.9,
            Linkage::Complete,
        );
        assert_eq!(clusters, vec![vec![0, 2], vec![1, 3]]);
    }
}
