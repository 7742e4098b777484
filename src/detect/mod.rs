//! Detectors: what a consolidation cycle finds in one user's memories.
//!
//! Detection is pure: it reads a snapshot of the user's active memories and
//! links, takes "now" as an argument, and returns candidates with their
//! evidence. What happens to them is the planner's business ([`crate::plan`]).
//! Memories are visited in `(created_at, id)` order, so the same snapshot
//! always gives the same detections in the same order.

pub use engram_text::align;
pub mod cluster;
mod config;
pub mod contradictions;
pub mod duplicates;
pub mod fuse;
pub use engram_text::lexicon;
pub mod pairs;
pub mod patterns;
pub mod promotion;
pub mod stale;
pub mod supersession;
pub mod verbose;
pub use engram_text::wordnet;
use engram_text::words;

use std::collections::HashMap;
use std::sync::Arc;

use dashmap::DashMap;
use serde::{Deserialize, Serialize};

pub use config::DetectConfig;
pub use contradictions::{Contradiction, Signal};
pub use duplicates::DuplicateCluster;
pub use lexicon::{Lexicon, LexiconSpec};
use pairs::parallel_map;
pub use pairs::{Floor, Pair, PairSearch, similar_pairs};
pub use patterns::PatternCluster;
pub use stale::StaleMemory;
pub use supersession::Supersession;
pub use verbose::VerboseMemory;
pub use wordnet::{WordNet, WordNetError};

use crate::embed::dot;
use crate::model::{Link, Memory, MemoryStatus, Millis};
use crate::salience::SalienceParams;
use crate::text::normalise;

pub const DAY_MS: i64 = 24 * 3600 * 1000;

fn no_lower_floor() -> f64 {
    1.0
}

/// Thresholds the detectors use, after capacity-tier adjustment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DetectSettings {
    pub duplicate_threshold: f64,
    /// Details on both sides merge, the canonical's text carrying the
    /// others' ([`fuse`]). Run reports stored before fusion read as off.
    #[serde(default)]
    pub fuse_merges: bool,
    /// Most content words of its own each side of a fused pair may have.
    #[serde(default)]
    pub fuse_max_details: usize,
    pub contradiction_min_similarity: f64,
    pub negation_min_similarity: f64,
    /// Run reports stored before this floor read as without it (1.0: the
    /// negation floor applied to pronouns too).
    #[serde(default = "no_lower_floor")]
    pub pronoun_denial_min_similarity: f64,
    /// Where the later text states a change, the floor from which the
    /// knowledge-update rules ([`align::update`]) alone read the pair.
    /// Run reports stored before them read as without it (1.0).
    #[serde(default = "no_lower_floor")]
    pub update_min_similarity: f64,
    pub change_min_similarity: f64,
    pub pattern_similarity: f64,
    pub pattern_min_size: usize,
    /// How far back episodes count for patterns, in milliseconds.
    pub lookback: Millis,
    pub archive_threshold: f64,
    /// Unread this long (milliseconds), a faded memory may be archived.
    pub max_age: Millis,
    pub verbose_min_chars: usize,
    /// Age (milliseconds) from which a long memory may be split.
    pub verbose_min_age: Millis,
    pub verbose_min_accesses: u64,
    pub pair_search: PairSearch,
    pub salience: SalienceParams,
}

/// One user's memories and links as loaded for a cycle.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    pub user_id: String,
    /// Every memory of the user, ordered by `(created_at, id)`.
    pub memories: Vec<Memory>,
    pub links: Vec<Link>,
}

/// Everything the detectors found.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Detections {
    pub duplicates: Vec<DuplicateCluster>,
    pub contradictions: Vec<Contradiction>,
    pub patterns: Vec<PatternCluster>,
    pub stale: Vec<StaleMemory>,
    pub verbose: Vec<VerboseMemory>,
    /// Active memories whose kind a rule may change.
    pub promotions: Vec<String>,
}

/// An active memory prepared for comparison.
pub struct Item<'a> {
    pub memory: &'a Memory,
    /// Normalised words.
    pub words: Vec<String>,
    /// Items with equal content hashes share this number, so the pair
    /// search's hot path compares integers instead of 64-character hashes.
    text: usize,
}

/// The active memories of a snapshot, in order, with their similarity.
pub struct Prepared<'a> {
    pub items: Vec<Item<'a>>,
    /// Each item's tokens for alignment, made when first compared.
    tokens: Vec<std::sync::OnceLock<Vec<align::Token>>>,
    /// How each item's text denies, found once for all.
    denials: std::sync::OnceLock<Vec<align::Denial>>,
    /// The relation held with one value at a time each item's text states.
    relations: std::sync::OnceLock<Vec<Option<usize>>>,
    /// The antonym pairs each item's predicate after a copula is in.
    opposites: std::sync::OnceLock<Vec<Vec<(String, String)>>>,
    /// Each ordered pair's alignment, made when first asked: a cycle reads
    /// many pairs more than once (a cluster's edges, then its linkage,
    /// then which member covers which; the same pairs for contradictions).
    comparisons: DashMap<(usize, usize), Arc<align::Comparison>>,
}

impl<'a> Prepared<'a> {
    pub fn new(snapshot: &'a Snapshot) -> Self {
        let memories: Vec<&Memory> = snapshot
            .memories
            .iter()
            .filter(|m| m.status == MemoryStatus::Active && m.user_id == snapshot.user_id)
            .collect();
        // Each text is split on its own, so the texts are shared out over
        // the cores.
        let words = pairs::parallel_map(&memories, |memory| {
            normalise(&memory.content)
                .split(' ')
                .filter(|w| !w.is_empty())
                .map(str::to_owned)
                .collect::<Vec<_>>()
        });
        let mut texts: HashMap<&str, usize> = HashMap::new();
        let items = memories
            .into_iter()
            .zip(words)
            .map(|(memory, words)| {
                let next = texts.len();
                Item {
                    memory,
                    words,
                    text: *texts.entry(memory.content_hash.as_str()).or_insert(next),
                }
            })
            .collect::<Vec<_>>();
        let tokens = items.iter().map(|_| std::sync::OnceLock::new()).collect();
        Self {
            items,
            tokens,
            denials: std::sync::OnceLock::new(),
            relations: std::sync::OnceLock::new(),
            opposites: std::sync::OnceLock::new(),
            comparisons: DashMap::new(),
        }
    }

    /// `(class, value)` of every lexicon class value item `i` names as a
    /// name.
    pub fn named_values(&self, i: usize, lexicon: &Lexicon) -> Vec<(String, String)> {
        let mut found: Vec<(String, String)> = self
            .item_tokens(i, lexicon)
            .iter()
            .filter(|t| t.role == align::Role::Name)
            .filter_map(|t| {
                let class = lexicon.class_of(&t.word)?;
                Some((class.to_owned(), lexicon.canonical(&t.word).to_owned()))
            })
            .collect();
        found.sort();
        found.dedup();
        found
    }

    /// Every place item `i` names as a name ("Austin", "New York"), as
    /// written in lower case.
    pub fn named_places(&self, i: usize, lexicon: &Lexicon) -> Vec<String> {
        let mut found: Vec<String> = self
            .item_tokens(i, lexicon)
            .iter()
            .filter(|t| t.names_place(lexicon))
            .map(|t| t.word.clone())
            .collect();
        found.sort();
        found.dedup();
        found
    }

    fn item_tokens(&self, k: usize, lexicon: &Lexicon) -> &[align::Token] {
        self.tokens[k].get_or_init(|| align::statement(&self.items[k].memory.content, lexicon))
    }

    /// Whether the rules read item `k`'s text: no longer than
    /// [`align::MAX_COMPARED_WORDS`] words.
    pub fn readable(&self, k: usize, lexicon: &Lexicon) -> bool {
        self.item_tokens(k, lexicon).len() <= align::MAX_COMPARED_WORDS
    }

    /// Whether items `i` and `j` may be merged: nothing in conflict, no
    /// fact swapped for another, no relation for another ("to" / "from"),
    /// no word paired with a more general one,
    /// the shared words in one order (up to a moved block), and details on
    /// both sides only when fusing, at most `fuse_max_details` a side, each
    /// a fact of its own (a name, a number or a noun), not
    /// in one slot and without a negation (a detail changes what it denies:
    /// "never organised a camp for the diocese of Bendigo" / "never
    /// attended a camp organised by that diocese").
    pub fn mergeable(
        &self,
        i: usize,
        j: usize,
        settings: &DetectSettings,
        lexicon: &Lexicon,
    ) -> bool {
        let (a, b) = (self.item_tokens(i, lexicon), self.item_tokens(j, lexicon));
        let c = self.compare(i, j, lexicon);
        let both_sides = c.extra[0] > 0 && c.extra[1] > 0;
        let texts = [i, j].map(|k| self.items[k].memory.content.as_str());
        !c.never_merged()
            && (!both_sides
                || (settings.fuse_merges
                    && c.extra.iter().all(|&e| e <= settings.fuse_max_details)
                    && fuse::fuses(a, b, texts, lexicon)))
            && (c.moved == 0 || fuse::same_order(a, b))
    }

    /// Whether item `other` has details item `base` lacks, as the alignment
    /// counts them ([`align::compare`]): the same reading that decides
    /// whether the two may merge ([`Prepared::mergeable`]).
    pub fn adds_details(&self, other: usize, base: usize, lexicon: &Lexicon) -> bool {
        self.compare(base, other, lexicon).extra[1] > 0
    }

    /// Item `base`'s text with the phrases of `others` it lacks appended
    /// ([`fuse::fuse`]); `None` when it carries them all.
    pub fn fused(&self, base: usize, others: &[usize], lexicon: &Lexicon) -> Option<String> {
        fuse::fuse(
            &self.items[base].memory.content,
            others
                .iter()
                .map(|&k| self.items[k].memory.content.as_str()),
            lexicon,
        )
    }

    /// A cheap bound before aligning: whether items `i` and `j` share
    /// enough content lemmas that their alignment could be a
    /// contradiction ([`align::may_conflict`]).
    pub fn may_conflict(&self, i: usize, j: usize, lexicon: &Lexicon) -> bool {
        align::may_conflict(
            self.item_tokens(i, lexicon),
            self.item_tokens(j, lexicon),
            lexicon,
        )
    }

    /// [`align::clause_conflict`] of items `i` and `j`.
    pub fn clause_conflict(
        &self,
        i: usize,
        j: usize,
        lexicon: &Lexicon,
    ) -> Option<align::Comparison> {
        align::clause_conflict(
            self.item_tokens(i, lexicon),
            self.item_tokens(j, lexicon),
            lexicon,
        )
    }

    /// Whether item `j` states a change of what item `i` states
    /// ([`align::update`]).
    pub fn update(&self, i: usize, j: usize, lexicon: &Lexicon) -> Option<align::Update> {
        align::update(
            self.item_tokens(i, lexicon),
            self.item_tokens(j, lexicon),
            lexicon,
        )
    }

    /// A cheap test before aligning: whether every content word of item
    /// `covered` shares a lemma with one of item `cover` (synonyms do not
    /// count here, so coverage is only ever claimed on the same words).
    pub fn may_cover(&self, cover: usize, covered: usize, lexicon: &Lexicon) -> bool {
        let (a, b) = (
            self.item_tokens(cover, lexicon),
            self.item_tokens(covered, lexicon),
        );
        !align::too_long(a, b)
            && b.iter()
                .filter(|t| t.is_content())
                .all(|t| a.iter().any(|o| o.shares_lemma(t)))
    }

    /// The alignment of items `i` and `j` (`i` is side 0), made once.
    pub fn compare(&self, i: usize, j: usize, lexicon: &Lexicon) -> Arc<align::Comparison> {
        if let Some(known) = self.comparisons.get(&(i, j)) {
            return Arc::clone(&known);
        }
        // Aligned outside the map's lock: two cores asking for one pair at
        // once both align it, and the readings are the same.
        let made = Arc::new(align::compare(
            self.item_tokens(i, lexicon),
            self.item_tokens(j, lexicon),
            lexicon,
        ));
        Arc::clone(self.comparisons.entry((i, j)).or_insert(made).value())
    }

    /// Pairs close enough to be duplicates or contradictions. Patterns take
    /// no part: their counts and dates summarise their instances, which are
    /// compared themselves.
    pub fn close_pairs(&self, settings: &DetectSettings, lexicon: &Lexicon) -> Vec<Pair> {
        let all: Vec<usize> = (0..self.items.len())
            .filter(|&i| {
                self.items[i].memory.category.as_deref() != Some(patterns::PATTERN_CATEGORY)
            })
            .collect();
        let floor = self.negation_floor(
            settings
                .duplicate_threshold
                .min(settings.contradiction_min_similarity),
            settings,
            lexicon,
        );
        similar_pairs(self, &all, &floor, settings.pair_search)
    }

    /// `general`, lowered to `negation_min_similarity` for a pair where
    /// either text has a negation ("not", "no", "never", …), a change
    /// marker ("moved to", "now") or a past verb of leaving, ending or
    /// parting ("left", "stopped", "sold"), and to
    /// `pronoun_denial_min_similarity` where one denies with a pronoun
    /// ("nobody", "no one", "nothing") or denies existence ("There is no
    /// …"); lowered to `negation_min_similarity` too where both state one
    /// relation held with one value at a time ("works at", "lives in") or
    /// predicates on one WordNet antonym pair ("is single" / "is married").
    pub fn negation_floor(
        &self,
        general: f64,
        settings: &DetectSettings,
        lexicon: &Lexicon,
    ) -> Floor<'_> {
        // Each item's text is read on its own, so the items are shared out
        // over the cores.
        let denials = self.denials.get_or_init(|| {
            parallel_map(&self.items, |item| {
                align::denial(&item.memory.content, lexicon)
            })
        });
        let relations = self.relations.get_or_init(|| {
            parallel_map(&self.items, |item| lexicon.one_at_a_time_in(&item.words))
        });
        let opposites = self.opposites.get_or_init(|| {
            parallel_map(&self.items, |item| {
                align::predicate_opposites(&item.words, lexicon)
            })
        });
        let negation = settings.negation_min_similarity.min(general);
        Floor {
            general,
            negation,
            change: settings.update_min_similarity.min(negation),
            pronoun: settings.pronoun_denial_min_similarity.min(negation),
            denials,
            relations,
            opposites,
        }
    }

    /// Cosine similarity of two items: 1 for the same normalised text, the
    /// dot product of their unit vectors otherwise, `None` without vectors.
    pub fn similarity(&self, i: usize, j: usize) -> Option<f64> {
        let (a, b) = (&self.items[i], &self.items[j]);
        if a.text == b.text {
            return Some(1.0);
        }
        Some(f64::from(dot(
            a.memory.embedding.as_deref()?,
            b.memory.embedding.as_deref()?,
        )))
    }
}

/// Runs every detector over a snapshot at `now`.
pub fn detect(
    snapshot: &Snapshot,
    now: Millis,
    settings: &DetectSettings,
    lexicon: &Lexicon,
) -> Detections {
    let prepared = Prepared::new(snapshot);
    // Patterns read no close pairs: they are found beside the rest, so the
    // cores one stage leaves idle (sorting, grouping) do the other's work.
    std::thread::scope(|scope| {
        let patterns =
            scope.spawn(|| patterns::detect(snapshot, &prepared, now, settings, lexicon));
        let close = prepared.close_pairs(settings, lexicon);
        let contradictions = contradictions::detect(&prepared, &close, settings, lexicon);
        let duplicates = duplicates::detect(&prepared, &close, settings, &contradictions, lexicon);
        let stale = stale::detect(&prepared, &close, &snapshot.links, now, settings, lexicon);
        Detections {
            duplicates,
            contradictions,
            patterns: patterns
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            stale,
            verbose: verbose::detect(&prepared, &snapshot.links, now, settings),
            promotions: promotion::detect(&prepared),
        }
    })
}

/// Rounds a score for reports, so they read well and compare exactly.
pub fn round4(value: f64) -> f64 {
    (value * 10_000.0).round() / 10_000.0
}

#[cfg(test)]
pub(crate) mod testing {
    //! Memories with hand-made vectors for detector unit tests.

    use super::*;
    use crate::model::MemoryKind;
    use crate::salience::SalienceState;
    use crate::text::content_hash;

    pub const T0: Millis = 1_788_000_000_000;

    /// A unit vector in 384 dimensions with cosine `similarity` to axis 0
    /// (its remaining weight on axis `axis`).
    pub fn vector(similarity: f64, axis: usize) -> Vec<f32> {
        let mut v = vec![0.0f32; crate::embed::EMBEDDING_DIM];
        v[0] = similarity as f32;
        v[axis] += (1.0 - similarity * similarity).sqrt() as f32;
        v
    }

    pub fn memory(id: &str, content: &str, created_at: Millis, embedding: Vec<f32>) -> Memory {
        Memory {
            user_id: "u".into(),
            id: id.into(),
            kind: MemoryKind::Semantic,
            category: None,
            tags: Vec::new(),
            content: content.into(),
            importance: 0.5,
            source: None,
            content_hash: content_hash(content),
            embedding: Some(embedding),
            status: MemoryStatus::Active,
            salience: SalienceState::new(created_at),
            merged_from: Vec::new(),
            derived_from: Vec::new(),
            last_run_id: None,
            updated_at: None,
        }
    }

    pub fn snapshot(memories: Vec<Memory>) -> Snapshot {
        let mut memories = memories;
        memories.sort_by(|a, b| (a.created_at(), &a.id).cmp(&(b.created_at(), &b.id)));
        Snapshot {
            user_id: "u".into(),
            memories,
            links: Vec::new(),
        }
    }

    pub fn settings() -> DetectSettings {
        crate::cycle::CycleSettings::default().detect_settings(crate::model::Tier::Gentle)
    }

    pub fn lexicon() -> Lexicon {
        Lexicon::new(&crate::plan::RuleSet::default_rules().lexicon)
    }
}
