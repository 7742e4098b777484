//! Per-user vector indexes for near-duplicate search.
//!
//! Small users get an exact index: one contiguous row-major matrix scanned
//! with vectorised dot products, which is exact and, below a few thousand
//! rows, as fast as any graph. Above `ann_threshold` rows an HNSW graph
//! (`instant-distance`: pure Rust, no C++ toolchain, deterministic for a
//! seed) answers queries; it is built in bulk, so rows added since the last
//! build sit in an exact delta that every query also scans, and the graph is
//! rebuilt when the delta reaches a fraction of its size.

use std::collections::HashMap;

use instant_distance::{Builder, HnswMap, Point, Search};
use serde::{Deserialize, Serialize};

use crate::embed::dot;

/// A neighbour: row id and cosine similarity.
#[derive(Debug, Clone, PartialEq)]
pub struct Neighbour {
    pub id: String,
    pub similarity: f32,
}

/// What every index answers.
pub trait VectorIndex: Send + Sync {
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Adds a unit vector under `id`.
    fn add(&mut self, id: String, vector: &[f32]);
    /// The `k` most similar rows, most similar first (ties by id).
    fn search(&self, query: &[f32], k: usize) -> Vec<Neighbour>;
}

/// Exact cosine top-k over a contiguous matrix.
#[derive(Debug, Clone, Default)]
pub struct ExactIndex {
    dimension: usize,
    ids: Vec<String>,
    rows: Vec<f32>,
}

impl ExactIndex {
    pub fn new(dimension: usize) -> Self {
        Self {
            dimension,
            ids: Vec::new(),
            rows: Vec::new(),
        }
    }
}

/// Keeps the best `k` by (similarity desc, id asc).
fn top_k(mut all: Vec<Neighbour>, k: usize) -> Vec<Neighbour> {
    all.sort_by(|a, b| {
        b.similarity
            .total_cmp(&a.similarity)
            .then_with(|| a.id.cmp(&b.id))
    });
    all.truncate(k);
    all
}

impl VectorIndex for ExactIndex {
    fn len(&self) -> usize {
        self.ids.len()
    }

    fn add(&mut self, id: String, vector: &[f32]) {
        if vector.len() != self.dimension {
            return;
        }
        self.ids.push(id);
        self.rows.extend_from_slice(vector);
    }

    fn search(&self, query: &[f32], k: usize) -> Vec<Neighbour> {
        if query.len() != self.dimension || k == 0 {
            return Vec::new();
        }
        let scored = self
            .rows
            .chunks_exact(self.dimension)
            .zip(&self.ids)
            .map(|(row, id)| Neighbour {
                id: id.clone(),
                similarity: dot(row, query),
            })
            .collect();
        top_k(scored, k)
    }
}

#[derive(Clone)]
struct UnitVector(Vec<f32>);

impl Point for UnitVector {
    fn distance(&self, other: &Self) -> f32 {
        // Cosine distance of unit vectors; clamped so rounding never goes negative.
        (1.0 - dot(&self.0, &other.0)).max(0.0)
    }
}

/// HNSW graph plus an exact delta of rows added since it was built.
pub struct HnswIndex {
    dimension: usize,
    graph: Option<HnswMap<UnitVector, String>>,
    graph_len: usize,
    delta: ExactIndex,
    ef_search: usize,
    seed: u64,
}

impl HnswIndex {
    pub fn new(dimension: usize, ef_search: usize) -> Self {
        Self {
            dimension,
            graph: None,
            graph_len: 0,
            delta: ExactIndex::new(dimension),
            ef_search,
            seed: 0x656e_6772_616d,
        }
    }

    /// Folds the delta into a freshly built graph.
    pub fn rebuild(&mut self) {
        let mut points = Vec::with_capacity(self.graph_len + self.delta.len());
        let mut values = Vec::with_capacity(points.capacity());
        if let Some(graph) = self.graph.take() {
            // `iter` yields points in id order, the order of `values`.
            for ((_, point), value) in graph.iter().zip(&graph.values) {
                points.push(point.clone());
                values.push(value.clone());
            }
        }
        let ExactIndex { ids, rows, .. } =
            std::mem::replace(&mut self.delta, ExactIndex::new(self.dimension));
        for (id, row) in ids.into_iter().zip(rows.chunks_exact(self.dimension)) {
            points.push(UnitVector(row.to_vec()));
            values.push(id);
        }
        self.graph_len = points.len();
        self.graph = Some(
            Builder::default()
                .ef_search(self.ef_search)
                .ef_construction(self.ef_search.max(100))
                .seed(self.seed)
                .build(points, values),
        );
    }
}

impl VectorIndex for HnswIndex {
    fn len(&self) -> usize {
        self.graph_len + self.delta.len()
    }

    fn add(&mut self, id: String, vector: &[f32]) {
        self.delta.add(id, vector);
        if self.delta.len() >= 1000.max(self.graph_len / 10) {
            self.rebuild();
        }
    }

    fn search(&self, query: &[f32], k: usize) -> Vec<Neighbour> {
        let mut found = self.delta.search(query, k);
        if let Some(graph) = &self.graph {
            let mut search = Search::default();
            found.extend(
                graph
                    .search(&UnitVector(query.to_vec()), &mut search)
                    .take(k.max(1))
                    .map(|item| Neighbour {
                        id: item.value.clone(),
                        similarity: 1.0 - item.distance,
                    }),
            );
        }
        top_k(found, k)
    }
}

/// Per-user vector index settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct IndexConfig {
    /// Memories above which a user's exact index becomes an HNSW graph.
    pub ann_threshold: usize,
    /// HNSW search breadth: higher finds more true neighbours, slower.
    pub ef_search: usize,
    /// Neighbours examined for each new memory at ingest.
    pub candidates: usize,
    /// Vectors one partition worker keeps in memory across its users; above
    /// it the least recently used users' indexes are dropped (and reloaded
    /// from the store when used again). Bounds memory as users grow.
    pub max_cached_vectors: usize,
}

impl Default for IndexConfig {
    fn default() -> Self {
        Self {
            ann_threshold: 5000,
            ef_search: 128,
            candidates: 5,
            max_cached_vectors: 50_000,
        }
    }
}

/// The index of one user: exact while small, HNSW above `ann_threshold`.
pub struct UserIndex {
    inner: Inner,
    ann_threshold: usize,
    ef_search: usize,
}

enum Inner {
    Exact(ExactIndex),
    Approximate(HnswIndex),
}

impl UserIndex {
    pub fn new(dimension: usize, config: &IndexConfig) -> Self {
        Self {
            inner: Inner::Exact(ExactIndex::new(dimension)),
            ann_threshold: config.ann_threshold,
            ef_search: config.ef_search,
        }
    }

    pub fn is_approximate(&self) -> bool {
        matches!(self.inner, Inner::Approximate(_))
    }
}

impl VectorIndex for UserIndex {
    fn len(&self) -> usize {
        match &self.inner {
            Inner::Exact(index) => index.len(),
            Inner::Approximate(index) => index.len(),
        }
    }

    /// Adds a row, switching to HNSW once the user outgrows `ann_threshold`.
    fn add(&mut self, id: String, vector: &[f32]) {
        match &mut self.inner {
            Inner::Exact(exact) => {
                exact.add(id, vector);
                if exact.len() > self.ann_threshold {
                    let mut hnsw = HnswIndex::new(exact.dimension, self.ef_search);
                    hnsw.delta = std::mem::take(exact);
                    hnsw.rebuild();
                    self.inner = Inner::Approximate(hnsw);
                }
            }
            Inner::Approximate(hnsw) => hnsw.add(id, vector),
        }
    }

    fn search(&self, query: &[f32], k: usize) -> Vec<Neighbour> {
        match &self.inner {
            Inner::Exact(index) => index.search(query, k),
            Inner::Approximate(index) => index.search(query, k),
        }
    }
}

/// The indexes of the users this process has touched, each loaded from the
/// store on first use and kept while `max_cached_vectors` allows (least
/// recently used first out). Whoever changes a user's memories other than by
/// adding one (an edit, a consolidation) calls [`UserIndexes::forget`], and
/// the next use reloads it.
pub struct UserIndexes {
    dimension: usize,
    config: IndexConfig,
    /// Index and the use tick it was last returned at.
    users: HashMap<String, (UserIndex, u64)>,
    tick: u64,
}

impl UserIndexes {
    pub fn new(dimension: usize, config: IndexConfig) -> Self {
        Self {
            dimension,
            config,
            users: HashMap::new(),
            tick: 0,
        }
    }

    pub fn config(&self) -> &IndexConfig {
        &self.config
    }

    /// The user's index, built from `rows` (id, unit vector) when not cached.
    pub fn get_or_load<E>(
        &mut self,
        user_id: &str,
        rows: impl FnOnce() -> Result<Vec<(String, Vec<f32>)>, E>,
    ) -> Result<&mut UserIndex, E> {
        self.tick += 1;
        if !self.users.contains_key(user_id) {
            let mut index = UserIndex::new(self.dimension, &self.config);
            for (id, vector) in rows()? {
                index.add(id, &vector);
            }
            self.evict_for(index.len(), user_id);
            self.users.insert(user_id.to_owned(), (index, self.tick));
        }
        match self.users.get_mut(user_id) {
            Some((index, used)) => {
                *used = self.tick;
                Ok(index)
            }
            None => unreachable!("inserted above"),
        }
    }

    /// Drops least recently used indexes (never `keep`'s) until `incoming`
    /// more vectors fit under the cap.
    fn evict_for(&mut self, incoming: usize, keep: &str) {
        let mut total = self.cached_vectors();
        while total + incoming > self.config.max_cached_vectors {
            let Some(oldest) = self
                .users
                .iter()
                .filter(|(id, _)| id.as_str() != keep)
                .min_by_key(|(_, (_, used))| *used)
                .map(|(id, _)| id.clone())
            else {
                break;
            };
            if let Some((index, _)) = self.users.remove(&oldest) {
                total -= index.len();
            }
        }
    }

    /// Vectors held in memory now.
    pub fn cached_vectors(&self) -> usize {
        self.users.values().map(|(index, _)| index.len()).sum()
    }

    pub fn forget(&mut self, user_id: &str) {
        self.users.remove(user_id);
    }

    /// Drops every cached index (e.g. after a failed commit).
    pub fn clear(&mut self) {
        self.users.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(ann_threshold: usize) -> IndexConfig {
        IndexConfig {
            ann_threshold,
            ..IndexConfig::default()
        }
    }

    fn unit(values: &[f32]) -> Vec<f32> {
        crate::embed::normalised(values).unwrap()
    }

    #[test]
    fn exact_index_ranks_by_cosine_then_id() {
        let mut index = ExactIndex::new(3);
        index.add("b".into(), &unit(&[1.0, 0.0, 0.0]));
        index.add("a".into(), &unit(&[1.0, 0.0, 0.0]));
        index.add("c".into(), &unit(&[0.0, 1.0, 0.0]));
        index.add("d".into(), &unit(&[1.0, 1.0, 0.0]));
        let found = index.search(&unit(&[1.0, 0.1, 0.0]), 3);
        let ids: Vec<&str> = found.iter().map(|n| n.id.as_str()).collect();
        assert_eq!(ids, ["a", "b", "d"]);
        assert!(found[0].similarity > 0.99);
        assert!(
            index.search(&[1.0, 0.0], 3).is_empty(),
            "wrong dimension finds nothing"
        );
    }

    #[test]
    fn user_index_switches_to_hnsw_and_keeps_finding_rows() {
        let mut index = UserIndex::new(2, &config(20));
        for i in 0..50 {
            let angle = i as f32 * 0.03;
            index.add(format!("m{i:02}"), &[angle.cos(), angle.sin()]);
        }
        assert!(index.is_approximate());
        assert_eq!(index.len(), 50);
        let found = index.search(&[(0.9f32).cos(), (0.9f32).sin()], 1);
        assert_eq!(found[0].id, "m30");
    }

    #[test]
    fn the_least_recently_used_users_leave_the_cache_above_its_cap() {
        let config = IndexConfig {
            max_cached_vectors: 5,
            ..IndexConfig::default()
        };
        let mut indexes = UserIndexes::new(2, config);
        let rows = |n: usize| {
            move || -> Result<_, ()> {
                Ok((0..n)
                    .map(|i| (format!("m{i}"), vec![1.0, i as f32]))
                    .collect())
            }
        };
        let loads = std::cell::Cell::new(0);
        let load = |indexes: &mut UserIndexes, user: &str| {
            indexes
                .get_or_load(user, || {
                    loads.set(loads.get() + 1);
                    rows(2)()
                })
                .map(|_| ())
        };
        load(&mut indexes, "a").unwrap();
        load(&mut indexes, "b").unwrap();
        load(&mut indexes, "a").unwrap(); // b is now the least recent
        load(&mut indexes, "c").unwrap(); // 6 > 5: b goes
        assert_eq!(indexes.cached_vectors(), 4);
        load(&mut indexes, "a").unwrap();
        assert_eq!(loads.get(), 3, "a stayed cached");
        load(&mut indexes, "b").unwrap();
        assert_eq!(loads.get(), 4, "b was evicted and reloaded");
        assert!(indexes.cached_vectors() <= 5);
    }

    #[test]
    fn rebuilding_the_graph_keeps_ids_with_their_vectors() {
        let mut index = UserIndex::new(2, &config(100));
        let total = 2500;
        for i in 0..total {
            let angle = i as f32 * std::f32::consts::PI / total as f32;
            index.add(format!("m{i}"), &[angle.cos(), angle.sin()]);
        }
        for probe in [0, 777, 1500, 2499] {
            let angle = probe as f32 * std::f32::consts::PI / total as f32;
            let found = index.search(&[angle.cos(), angle.sin()], 1);
            assert_eq!(found[0].id, format!("m{probe}"));
        }
    }
}
