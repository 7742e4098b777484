//! Similar pairs: which memories are worth comparing, without comparing all
//! of them when a user is large.
//!
//! Up to `exact_pairs_up_to` memories every pair is scored: that is exact and,
//! at that size, cheap. Above it the vectors are blocked with an inverted-file
//! index: spherical k-means (deterministic: seeded from evenly spaced rows,
//! a fixed number of rounds on an evenly spaced sample) puts each memory in
//! the list of its nearest centroid, and each memory is compared only with
//! the lists of its `pair_probes` nearest centroids. Two near-duplicates sit
//! close to the same centroids, so they almost always meet (the benchmark
//! reports recall against exact search); the work is about
//! `2 · n · sqrt(probes · n)` dot products instead of `n² / 2`. Those
//! products are first estimated from 16-bit copies of the vectors
//! ([`crate::embed::fixed`]), and computed exactly only where the estimate
//! and its error bound leave the floor (or a nearest centroid) within
//! reach, so every pair found and every similarity is what the exact
//! products alone give.
//!
//! Memories with the same normalised text are always paired (similarity 1),
//! vector or not.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::{Deserialize, Serialize};

use super::Prepared;
use super::align::Denial;
use crate::embed::dot;
use crate::embed::fixed::{Scale, kth_largest};
use crate::embed::packed::{BLOCK, Packed, pairs_of};

/// How pairs are searched for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairSearch {
    /// Up to this many memories, every pair is compared.
    pub exact_pairs_up_to: usize,
    /// Above it, how many nearest lists each memory is compared with.
    pub pair_probes: usize,
}

/// A pair of item indices (`first < second`) and their similarity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pair {
    pub first: usize,
    pub second: usize,
    pub similarity: f64,
}

/// The similarity a pair must reach: `general`, `negation` when either
/// item has a negation, `pronoun` when either denies with a pronoun or
/// denies existence ("There is no …").
#[derive(Debug, Clone, Copy)]
pub struct Floor<'m> {
    pub general: f64,
    pub negation: f64,
    pub pronoun: f64,
    /// Where the newer states a change: from here the knowledge-update
    /// rules read the pair ([`crate::detect::align::update`]). Where only
    /// the older does, the pair gets the negation floor.
    pub change: f64,
    /// Per item index; items past its end deny nothing.
    pub denials: &'m [Denial],
    /// Per item index, the relation held with one value at a time it
    /// states ([`crate::detect::Lexicon::one_at_a_time_in`]); items past
    /// its end state none.
    pub relations: &'m [Option<usize>],
    /// Per item index, the antonym pairs its predicate after a copula is
    /// in ([`crate::detect::align::predicate_opposites`]); items past its
    /// end have none.
    pub opposites: &'m [Vec<(String, String)>],
}

impl Floor<'_> {
    /// The same floor for every pair.
    pub fn uniform(floor: f64) -> Self {
        Floor {
            general: floor,
            negation: floor,
            pronoun: floor,
            change: floor,
            denials: &[],
            relations: &[],
            opposites: &[],
        }
    }

    /// The same floor, but a stated change lowers it only as far as a
    /// negation does: where every rule, not only the update rules, reads
    /// a pair.
    pub fn without_update_floor(&self) -> Self {
        Floor {
            change: self.negation,
            ..*self
        }
    }

    /// The lowest floor any pair may have.
    fn lowest(&self) -> f64 {
        self.general
            .min(self.negation)
            .min(self.pronoun)
            .min(self.change)
    }

    /// Whether a pair at `similarity` reaches its floor: the one
    /// comparison with [`Floor::lowest`] first, as nearly every pair of a
    /// search lies below every floor and need not look up its items.
    fn admits(&self, i: usize, j: usize, similarity: f64) -> bool {
        similarity >= self.lowest() && similarity >= self.of(i, j)
    }

    /// A floor no pair with item `k` is below unless the other item's is:
    /// every pair's floor is at least the lower of its two items'. [`Floor::of`]
    /// takes the floor of the item that denies more, and lowers it to
    /// `negation` only where both items state a relation or opposites.
    fn least_with(&self, k: usize) -> f64 {
        let own = match self.denials.get(k).copied().unwrap_or_default() {
            Denial::None => self.general,
            Denial::Change => self.change.min(self.negation),
            Denial::Negation => self.negation,
            Denial::Existence | Denial::Pronoun => self.pronoun,
        };
        let relates = self.relations.get(k).copied().flatten().is_some()
            || self.opposites.get(k).is_some_and(|pairs| !pairs.is_empty());
        if relates { own.min(self.negation) } else { own }
    }

    /// The floor of the pair of items `i` and `j`, which are in `(created_at,
    /// id)` order, so the greater index is the newer memory.
    pub fn of(&self, i: usize, j: usize) -> f64 {
        let denial = |k: usize| self.denials.get(k).copied().unwrap_or_default();
        let floor = match denial(i).max(denial(j)) {
            Denial::None => self.general,
            // Only a newer text's change updates the older one: where only
            // the older states a change, no update rule reads the pair.
            Denial::Change if denial(i.max(j)) == Denial::Change => self.change,
            Denial::Change => self.negation,
            Denial::Negation => self.negation,
            Denial::Existence | Denial::Pronoun => self.pronoun,
        };
        // Two values of one relation held one at a time ("works at Google"
        // / "works at Microsoft", "lives in Rome" / "lives in Madrid") deny
        // each other, and the model scores them as low as a negation: the
        // names weigh more than the verb.
        let relation = |k: usize| self.relations.get(k).copied().flatten();
        // So do opposite values of one attribute ("is single" / "is
        // married").
        let opposites = |k: usize| self.opposites.get(k).map_or(&[][..], Vec::as_slice);
        if relation(i).is_some_and(|shared| relation(j) == Some(shared))
            || opposites(i).iter().any(|pair| opposites(j).contains(pair))
        {
            floor.min(self.negation)
        } else {
            floor
        }
    }
}

/// Lloyd rounds for the centroids: enough to settle on a sample.
const KMEANS_ROUNDS: usize = 4;
/// Sample rows per centroid used to train them.
const SAMPLE_PER_CENTROID: usize = 8;

/// Pairs among `members` (ascending item indices) with similarity at or above
/// their `floor`, ordered by `(first, second)`.
pub fn similar_pairs(
    prepared: &Prepared<'_>,
    members: &[usize],
    floor: &Floor<'_>,
    search: PairSearch,
) -> Vec<Pair> {
    // Candidate pairs with the dot product the search computed, if it did.
    let mut found: Vec<(usize, usize, Option<f32>)> = Vec::new();
    let mut by_text: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for &i in members {
        by_text
            .entry(prepared.items[i].memory.content_hash.as_str())
            .or_default()
            .push(i);
    }
    for group in by_text.values() {
        for (n, &i) in group.iter().enumerate() {
            for &j in &group[n + 1..] {
                found.push((i, j, None));
            }
        }
    }
    let dimension = members
        .iter()
        .find_map(|&i| prepared.items[i].memory.embedding.as_ref())
        .map_or(0, Vec::len);
    let with_vectors: Vec<(usize, &[f32])> = members
        .iter()
        .filter_map(|&i| {
            let v = prepared.items[i].memory.embedding.as_deref()?;
            (v.len() == dimension && dimension > 0).then_some((i, v))
        })
        .collect();
    if with_vectors.len() <= search.exact_pairs_up_to.max(1) {
        for (n, &(i, a)) in with_vectors.iter().enumerate() {
            for &(j, b) in &with_vectors[n + 1..] {
                let similarity = dot(a, b);
                if floor.admits(i, j, f64::from(similarity)) {
                    found.push((i, j, Some(similarity)));
                }
            }
        }
    } else {
        found.extend(blocked_pairs(&with_vectors, floor, search.pair_probes));
    }
    found.sort_unstable_by_key(|&(first, second, _)| (first, second));
    found.dedup_by_key(|&mut (first, second, _)| (first, second));
    found
        .into_iter()
        .filter_map(|(first, second, computed)| {
            // The search's dot product is the similarity (the same products
            // in the same order), unless the texts are equal: fetching the
            // vectors again would cost a cache miss per pair.
            let similarity = match computed {
                Some(dot) if prepared.items[first].text != prepared.items[second].text => {
                    f64::from(dot)
                }
                _ => prepared.similarity(first, second)?,
            };
            floor.admits(first, second, similarity).then_some(Pair {
                first,
                second,
                similarity,
            })
        })
        .collect()
}

/// Candidate pairs through an inverted-file index over the vectors.
fn blocked_pairs(
    rows: &[(usize, &[f32])],
    floor: &Floor<'_>,
    probes: usize,
) -> Vec<(usize, usize, Option<f32>)> {
    let n = rows.len();
    let probes = probes.clamp(1, 64);
    // Balances assigning rows to centroids (n · lists) against scanning the
    // probed lists (n · probes · n / lists).
    let lists = (((probes * n) as f64).sqrt().round() as usize).clamp(1, n);
    let dimension = rows[0].1.len();
    let centroids = train_centroids(rows, lists, dimension);
    let vectors: Vec<&[f32]> = rows.iter().map(|&(_, v)| v).collect();
    let nearest = nearest_centroids(&vectors, &centroids, probes);
    // Rows laid out list by list, so a probe scans contiguous memory; the
    // scan reads their 16-bit copies, and the exact product only where the
    // copies leave the floor within reach.
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); centroids.len()];
    for (row, near) in nearest.iter().enumerate() {
        members[near[0]].push(row);
    }
    let scale = Scale::for_vectors(vectors.iter().copied());
    let mut offsets = Vec::with_capacity(members.len() + 1);
    let mut order = Vec::with_capacity(n);
    let mut position = vec![0; n];
    for list in &members {
        offsets.push(order.len());
        for &row in list {
            position[row] = order.len();
            order.push(row);
        }
    }
    offsets.push(order.len());
    // Each core rounds its share of the lists: the rows lie scattered in
    // memory, and the reads of one core would wait on them one by one. A
    // list's rows are packed sixteen side by side for its probers to pass;
    // each row's pairs of values are kept for when it probes.
    let width = dimension.div_ceil(2);
    let rounded: Vec<(Packed, Vec<i32>)> = parallel_map(&members, |list| {
        let paired: Vec<Vec<i32>> = list
            .iter()
            .map(|&row| pairs_of(&scale.quantize(rows[row].1)))
            .collect();
        (Packed::new(&paired, width), paired.concat())
    });
    let mut packed_lists = Vec::with_capacity(rounded.len());
    let mut pairs = Vec::with_capacity(n * width);
    for (packed, list_pairs) in rounded {
        packed_lists.push(packed);
        pairs.extend(list_pairs);
    }
    let pairs_of_row = |row: usize| &pairs[position[row] * width..(position[row] + 1) * width];
    // The least product each row's pairs need: a pair whose estimate is
    // below both its rows' cannot reach its floor (`Floor::least_with`).
    let needs: Vec<i64> = rows
        .iter()
        .map(|&(i, _)| scale.least_product(floor.least_with(i)))
        .collect();
    // Lists are uneven; a row stops probing once it has scanned as many rows
    // as `probes` average lists hold (its nearest list is always scanned).
    let budget = probes * n / centroids.len();
    let mut probers: Vec<Vec<usize>> = vec![Vec::new(); centroids.len()];
    for (row, near) in nearest.iter().enumerate() {
        let mut scanned = 0;
        for &list in near {
            if scanned > 0 && scanned + members[list].len() > budget {
                break;
            }
            scanned += members[list].len();
            probers[list].push(row);
        }
    }
    // List by list, so a list's rows stay in cache while its probers pass:
    // row by row, every probe would fetch its lists from memory again.
    let list_ids: Vec<usize> = (0..centroids.len()).collect();
    let per_list = parallel_map(&list_ids, |&list| {
        let mut out = Vec::new();
        let mut consider = |prober: usize, other: usize, estimate: i32| {
            if prober == other || i64::from(estimate) < needs[prober].min(needs[other]) {
                return;
            }
            let ((i, v), (j, w)) = (rows[prober], rows[other]);
            if i64::from(estimate) < scale.least_product(floor.of(i, j)) {
                return;
            }
            let similarity = dot(w, v);
            if floor.admits(i, j, f64::from(similarity)) {
                out.push((i.min(j), i.max(j), Some(similarity)));
            }
        };
        let listed = &order[offsets[list]..offsets[list + 1]];
        let packed = &packed_lists[list];
        // Eight probers pass the list together, sixteen of its rows at a
        // time: each block is loaded once for 128 products. A short last
        // group repeats its first prober; the repeats are not read.
        for group in probers[list].chunks(8) {
            let probing: [usize; 8] = std::array::from_fn(|k| group[k % group.len()]);
            let vectors = probing.map(pairs_of_row);
            let least_need = group.iter().map(|&p| needs[p]).min().unwrap_or(i64::MIN);
            for block in 0..packed.blocks() {
                let estimates = packed.products(vectors, block);
                let others = listed.iter().skip(block * BLOCK).take(BLOCK);
                for (lane, &other) in others.enumerate() {
                    // Nearly every row is below what all the pairs need.
                    let need = least_need.min(needs[other]);
                    if estimates[..group.len()]
                        .iter()
                        .all(|lanes| i64::from(lanes[lane]) < need)
                    {
                        continue;
                    }
                    for (&prober, lanes) in group.iter().zip(&estimates) {
                        consider(prober, other, lanes[lane]);
                    }
                }
            }
        }
        out
    });
    per_list.into_iter().flatten().collect()
}

/// Spherical k-means on an evenly spaced sample, seeded from evenly spaced
/// rows: the same rows give the same centroids.
fn train_centroids(rows: &[(usize, &[f32])], lists: usize, dimension: usize) -> Vec<Vec<f32>> {
    let spaced = |count: usize| -> Vec<&[f32]> {
        let count = count.clamp(1, rows.len());
        (0..count).map(|k| rows[k * rows.len() / count].1).collect()
    };
    let mut centroids: Vec<Vec<f32>> = spaced(lists).into_iter().map(<[f32]>::to_vec).collect();
    let sample = spaced(lists * SAMPLE_PER_CENTROID);
    for _ in 0..KMEANS_ROUNDS {
        let assigned = nearest_centroids(&sample, &centroids, 1);
        let mut sums = vec![vec![0f32; dimension]; centroids.len()];
        for (v, &c) in sample.iter().zip(assigned.iter().map(|near| &near[0])) {
            for (s, x) in sums[c].iter_mut().zip(v.iter()) {
                *s += x;
            }
        }
        for (centroid, sum) in centroids.iter_mut().zip(sums) {
            let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt();
            // An empty list keeps its centroid.
            if norm > 0.0 {
                *centroid = sum.into_iter().map(|x| x / norm).collect();
            }
        }
    }
    centroids
}

/// For each vector, the indices of the `k` centroids most similar to it,
/// best first (ties by index). Every centroid is first scored from 16-bit
/// copies, sixteen centroids against eight vectors at a time
/// ([`crate::embed::packed`]); only the centroids whose estimate leaves
/// them within reach of the `k`-th best get the exact product, so the result
/// is the exact search's.
fn nearest_centroids(vectors: &[&[f32]], centroids: &[Vec<f32>], k: usize) -> Vec<Vec<usize>> {
    let scale = Scale::for_vectors(
        vectors
            .iter()
            .copied()
            .chain(centroids.iter().map(Vec::as_slice)),
    );
    let width = centroids.first().map_or(0, |c| c.len().div_ceil(2));
    let paired: Vec<Vec<i32>> = centroids
        .iter()
        .map(|c| pairs_of(&scale.quantize(c)))
        .collect();
    let packed = Packed::new(&paired, width);
    let groups: Vec<&[&[f32]]> = vectors.chunks(8).collect();
    let per_group = parallel_map(&groups, |group| {
        let own: Vec<Vec<i32>> = group.iter().map(|v| pairs_of(&scale.quantize(v))).collect();
        // A short last group repeats its first vector; the repeats' products
        // are not read.
        let eight: [&[i32]; 8] = std::array::from_fn(|k| own[k % own.len()].as_slice());
        let mut estimates: Vec<Vec<i32>> =
            vec![Vec::with_capacity(packed.blocks() * BLOCK); group.len()];
        for block in 0..packed.blocks() {
            let products = packed.products(eight, block);
            for (list, lanes) in estimates.iter_mut().zip(products) {
                list.extend_from_slice(&lanes);
            }
        }
        for list in &mut estimates {
            list.truncate(packed.rows());
        }
        let mut scratch = Vec::with_capacity(k + 1);
        group
            .iter()
            .zip(estimates)
            .map(|(v, estimates)| {
                // The k-th best exact score is at least the k-th best
                // estimate less the margin, and a centroid among the k best
                // has an estimate above that less the margin again. Scoring
                // more centroids than those changes nothing: one outside the
                // k best never enters them.
                let reach = kth_largest(&estimates, k, &mut scratch).map_or(i64::MIN, |kth| {
                    scale.within_below(kth, 2.0 * scale.margin())
                });
                let mut best = Nearest::new(k);
                for (index, (centroid, &estimate)) in centroids.iter().zip(&estimates).enumerate() {
                    if i64::from(estimate) >= reach {
                        best.consider(index, dot(v, centroid));
                    }
                }
                best.indices()
            })
            .collect::<Vec<_>>()
    });
    per_group.into_iter().flatten().collect()
}

/// The `k` best-scoring centroids seen so far, best first; of equal scores
/// the one seen first ranks first.
struct Nearest {
    k: usize,
    best: Vec<(f32, usize)>,
}

impl Nearest {
    fn new(k: usize) -> Self {
        Nearest {
            k,
            best: Vec::with_capacity(k + 1),
        }
    }

    fn consider(&mut self, index: usize, score: f32) {
        let full = self.best.len() == self.k;
        if full && self.best.last().is_some_and(|&(worst, _)| score <= worst) {
            return;
        }
        let at = self.best.partition_point(|&(s, _)| s >= score);
        self.best.insert(at, (score, index));
        self.best.truncate(self.k);
    }

    fn indices(self) -> Vec<usize> {
        self.best.into_iter().map(|(_, index)| index).collect()
    }
}

/// `f` over `items` on every core, results in input order. The items are
/// handed out in small runs as cores come free: their costs differ (a later
/// change statement scans more memories than an earlier one, one cluster is
/// larger than the rest), and fixed shares would leave a core idle while
/// the other finishes its share.
pub(super) fn parallel_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    /// Runs per core: enough to even out uneven items, few enough that
    /// handing them out costs nothing beside the work.
    const RUNS_PER_CORE: usize = 16;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    if threads == 1 || items.len() < 2 {
        return items.iter().map(&f).collect();
    }
    let run = (items.len() / (threads * RUNS_PER_CORE)).max(1);
    let next = AtomicUsize::new(0);
    let work = || {
        let mut done: Vec<(usize, Vec<R>)> = Vec::new();
        loop {
            let start = next.fetch_add(run, Ordering::Relaxed);
            if start >= items.len() {
                return done;
            }
            let end = (start + run).min(items.len());
            done.push((start, items[start..end].iter().map(&f).collect()));
        }
    };
    let mut runs: Vec<(usize, Vec<R>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads).map(|_| scope.spawn(work)).collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    runs.sort_unstable_by_key(|&(start, _)| start);
    runs.into_iter().flat_map(|(_, results)| results).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::testing::*;

    /// A deterministic pseudo-random unit vector.
    fn noise(seed: u64) -> Vec<f32> {
        crate::embed::fixed::seeded_unit_vector(seed, crate::embed::EMBEDDING_DIM)
    }

    fn near(base: &[f32], seed: u64, weight: f32) -> Vec<f32> {
        let v: Vec<f32> = base
            .iter()
            .zip(noise(seed))
            .map(|(b, n)| b + weight * n)
            .collect();
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.into_iter().map(|x| x / norm).collect()
    }

    #[test]
    fn blocked_search_finds_the_near_duplicates_exact_search_finds() {
        let mut memories = Vec::new();
        for k in 0..600u64 {
            let base = noise(k);
            memories.push(memory(
                &format!("m{k}a"),
                &format!("a{k}"),
                T0 + k as i64,
                base.clone(),
            ));
            if k % 3 == 0 {
                let twin = near(&base, 10_000 + k, 0.5);
                memories.push(memory(
                    &format!("m{k}b"),
                    &format!("b{k}"),
                    T0 + k as i64,
                    twin,
                ));
            }
        }
        let snapshot = snapshot(memories);
        let prepared = Prepared::new(&snapshot);
        let all: Vec<usize> = (0..prepared.items.len()).collect();
        let exact = PairSearch {
            exact_pairs_up_to: usize::MAX,
            pair_probes: 1,
        };
        let blocked = PairSearch {
            exact_pairs_up_to: 10,
            pair_probes: 8,
        };
        let truth = similar_pairs(&prepared, &all, &Floor::uniform(0.78), exact);
        let approx = similar_pairs(&prepared, &all, &Floor::uniform(0.78), blocked);
        assert_eq!(truth.len(), 200);
        let found = truth.iter().filter(|p| approx.contains(p)).count();
        assert!(found >= 198, "recall {found}/200");
        assert!(
            approx
                .iter()
                .all(|p| p.similarity >= 0.78 && p.first < p.second)
        );
        assert_eq!(
            approx,
            similar_pairs(&prepared, &all, &Floor::uniform(0.78), blocked)
        );
    }

    #[test]
    fn the_fixed_point_pass_keeps_every_pair_at_its_floor() {
        // Few enough rows that each probes every list, so the blocked search
        // must return what the exact one does, bit for bit, even where the
        // floor is a pair's own similarity and its estimate may fall below.
        let base = noise(1);
        let memories: Vec<_> = (0..40u64)
            .map(|k| {
                let vector = near(&base, 100 + k, 0.03 * k as f32);
                memory(
                    &format!("m{k}"),
                    &format!("text {k}"),
                    T0 + k as i64,
                    vector,
                )
            })
            .collect();
        let snapshot = snapshot(memories);
        let prepared = Prepared::new(&snapshot);
        let all: Vec<usize> = (0..prepared.items.len()).collect();
        let exact = PairSearch {
            exact_pairs_up_to: usize::MAX,
            pair_probes: 1,
        };
        let blocked = PairSearch {
            exact_pairs_up_to: 1,
            pair_probes: 64,
        };
        let every = similar_pairs(&prepared, &all, &Floor::uniform(-1.0), exact);
        assert_eq!(every.len(), 40 * 39 / 2);
        for pair in every.iter().step_by(13) {
            let floor = Floor::uniform(pair.similarity);
            let found = similar_pairs(&prepared, &all, &floor, blocked);
            assert_eq!(found, similar_pairs(&prepared, &all, &floor, exact));
            assert!(found.contains(pair));
        }
    }

    #[test]
    fn identical_text_pairs_without_vectors() {
        let mut a = memory("a", "Same words", T0, vec![]);
        let mut b = memory("b", "same words!", T0 + 1, vec![]);
        a.embedding = None;
        b.embedding = None;
        let snapshot = snapshot(vec![a, b]);
        let prepared = Prepared::new(&snapshot);
        let pairs = similar_pairs(
            &prepared,
            &[0, 1],
            &Floor::uniform(0.9),
            settings().pair_search,
        );
        assert_eq!(pairs.len(), 1);
        assert_eq!(pairs[0].similarity, 1.0);
    }

    #[test]
    fn only_a_newer_change_lowers_the_floor_to_the_update_floor() {
        // Items in time order: the older states a change, the newer too,
        // the newest none. An update rule reads a newer text's change of
        // an older one, so only pairs whose newer item states a change
        // are searched from the update floor.
        let denials = [Denial::Change, Denial::Change, Denial::None];
        let floor = Floor {
            general: 0.6,
            negation: 0.5,
            pronoun: 0.35,
            change: 0.35,
            denials: &denials,
            relations: &[],
            opposites: &[],
        };
        assert_eq!(floor.of(0, 1), 0.35);
        assert_eq!(floor.of(1, 0), 0.35);
        assert_eq!(floor.of(1, 2), 0.5);
        assert_eq!(floor.of(2, 1), 0.5);
        assert_eq!(floor.without_update_floor().of(0, 1), 0.5);
    }
}
