//! The planner: detections + rules → the actions of one cycle, with their
//! exact effects on memories and links.
//!
//! Pure and deterministic: it reads the snapshot, copies only the memories
//! it changes, and takes "now" and the run id as arguments, so the same
//! state, time and config always give the same plan. Destructive actions
//! (merge, supersede, promote, archive) claim their memories: a memory
//! takes part in at most one of them per cycle. Merge, supersede and
//! promote go first; flags and patterns then only touch memories that are
//! still active; archiving comes after patterns, because an episode a
//! pattern now carries may fade away; splits come last.

mod merge;
pub mod rules;
mod tier;

use std::collections::{BTreeMap, BTreeSet, HashMap};

// Every memory a plan reads is looked up by id several times, and SipHash
// and ordered maps' comparisons cost more than the rest of the lookup;
// foldhash's maps are seeded at random as the state's are.
use foldhash::{HashMap as FastMap, HashSet as FastSet};

use serde::{Deserialize, Serialize};

pub use rules::{ActionType, Detection, Facts, Rule, RuleSet, RulesError};
pub use tier::{BudgetConfig, Tier, tokens, usage};

use crate::detect::patterns::PATTERN_CATEGORY;
use crate::detect::{Contradiction, DetectSettings, Detections, Snapshot, round4};
use crate::event::{ContradictionResolution, RunCounts};
use crate::ids::derived_id;
use crate::model::{Link, LinkType, Memory, MemoryKind, MemoryStatus, Millis};
use crate::salience::{SalienceParams, SalienceState};
use crate::text::content_hash;

/// What a plan needs besides the snapshot.
pub struct PlanRequest<'a> {
    pub run_id: &'a str,
    pub now: Millis,
    pub tier: Tier,
    pub settings: &'a DetectSettings,
    pub rules: &'a RuleSet,
}

/// One action, as reported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlannedAction {
    pub action_id: String,
    #[serde(rename = "type")]
    pub action_type: ActionType,
    pub rule_id: String,
    pub target_ids: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canonical_id: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub new_memory_ids: Vec<String>,
    pub score: f64,
    pub reasons: Vec<String>,
    /// The canonical's new text, when a merge fused the members' details
    /// into it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canonical_content: Option<String>,
}

/// A detection no rule acted on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Skipped {
    pub detection: Detection,
    pub target_ids: Vec<String>,
    pub reason: String,
}

/// The fields of a memory a cycle may change; what undo restores.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryFields {
    pub status: MemoryStatus,
    pub kind: MemoryKind,
    pub tags: Vec<String>,
    pub importance: f64,
    pub salience: SalienceState,
    pub merged_from: Vec<String>,
    pub derived_from: Vec<String>,
    pub last_run_id: Option<String>,
    /// The text, recorded only when the run changed it (a pattern that
    /// later episodes joined).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
}

impl MemoryFields {
    pub fn of(memory: &Memory) -> Self {
        Self {
            content: None,
            status: memory.status,
            kind: memory.kind,
            tags: memory.tags.clone(),
            importance: memory.importance,
            salience: memory.salience.clone(),
            merged_from: memory.merged_from.clone(),
            derived_from: memory.derived_from.clone(),
            last_run_id: memory.last_run_id.clone(),
        }
    }

    /// Puts back, from these values (before a run), each field that still
    /// holds what the run wrote (`after`); a field changed since (reads,
    /// platform edits, another run) keeps its current value. Returns how many
    /// fields were put back.
    #[allow(clippy::clone_on_copy)] // one macro for Copy and owned fields
    pub fn restore_unchanged(&self, after: &MemoryFields, memory: &mut Memory) -> usize {
        let now = MemoryFields::of(memory);
        let mut restored = 0;
        macro_rules! restore {
            ($($field:ident),*) => {$(
                if now.$field == after.$field && self.$field != now.$field {
                    memory.$field = self.$field.clone();
                    restored += 1;
                }
            )*};
        }
        restore!(
            status,
            kind,
            tags,
            importance,
            salience,
            merged_from,
            derived_from,
            last_run_id
        );
        let text_unchanged = after.content.as_deref() == Some(memory.content.as_str());
        if let Some(before) = self
            .content
            .as_ref()
            .filter(|b| text_unchanged && **b != memory.content)
        {
            memory.content.clone_from(before);
            memory.content_hash = content_hash(before);
            // The vector belonged to the other text; the next cycle that
            // changes the memory embeds it again.
            memory.embedding = None;
            restored += 1;
        }
        restored
    }
}

/// A memory the run changed: the values before and after.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryChange {
    pub memory_id: String,
    pub before: MemoryFields,
    pub after: MemoryFields,
}

/// A link the run created (`before` empty), removed (`after` empty) or changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinkChange {
    pub before: Option<Link>,
    pub after: Option<Link>,
}

/// A contradiction this run reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContradictionFinding {
    pub first_id: String,
    pub second_id: String,
    pub confidence: f64,
    pub similarity: f64,
    pub signals: Vec<String>,
    pub explanation: String,
    pub resolution: ContradictionResolution,
}

/// A pattern this run founds, or one that later episodes joined.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PatternFinding {
    pub pattern_memory_id: String,
    pub content: String,
    /// Every instance of the pattern.
    pub source_memory_ids: Vec<String>,
    /// The instances this run added (all of them when it founded the
    /// pattern).
    #[serde(default)]
    pub new_memory_ids: Vec<String>,
    /// When the first and the last instance happened.
    #[serde(default)]
    pub first_at: Option<Millis>,
    #[serde(default)]
    pub last_at: Option<Millis>,
}

/// The plan of one cycle.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    pub tier: Tier,
    pub tokens: u64,
    pub settings: DetectSettings,
    pub counts: RunCounts,
    pub actions: Vec<PlannedAction>,
    pub skipped: Vec<Skipped>,
    pub contradictions: Vec<ContradictionFinding>,
    pub patterns: Vec<PatternFinding>,
    /// New memories (patterns, split pieces), in full.
    #[serde(skip)]
    pub created: Vec<Memory>,
    /// Changed memories as they will be stored.
    #[serde(skip)]
    pub updated: Vec<Memory>,
    pub created_ids: Vec<String>,
    pub memory_changes: Vec<MemoryChange>,
    pub link_changes: Vec<LinkChange>,
}

impl Plan {
    pub fn is_empty(&self) -> bool {
        self.created.is_empty() && self.memory_changes.is_empty() && self.link_changes.is_empty()
    }
}

type LinkKey = (String, String, LinkType);

fn key(link: &Link) -> LinkKey {
    (link.from_id.clone(), link.to_id.clone(), link.link_type)
}

/// Records a link's key at both its ends.
fn index_link(links_at: &mut HashMap<String, BTreeSet<LinkKey>>, key: &LinkKey) {
    for end in [&key.0, &key.1] {
        links_at.entry(end.clone()).or_default().insert(key.clone());
    }
}

/// The user's memories as the plan sees them: the snapshot's, read in
/// place, and those the plan changed or created, copied on first change.
/// A cycle changes a few of a user's memories; copying every one (with its
/// vector) and comparing each with its original cost more than planning.
struct Memories<'s> {
    snapshot: FastMap<&'s str, &'s Memory>,
    /// Read in the order of ids when the plan is written ([`finish`]).
    changed: FastMap<String, Memory>,
}

impl<'s> Memories<'s> {
    fn of(snapshot: &'s Snapshot) -> Self {
        Memories {
            snapshot: snapshot
                .memories
                .iter()
                .filter(|m| m.user_id == snapshot.user_id)
                .map(|m| (m.id.as_str(), m))
                .collect(),
            changed: FastMap::default(),
        }
    }

    fn get(&self, id: &str) -> Option<&Memory> {
        self.changed
            .get(id)
            .or_else(|| self.snapshot.get(id).copied())
    }

    fn contains_key(&self, id: &str) -> bool {
        self.changed.contains_key(id) || self.snapshot.contains_key(id)
    }

    fn get_mut(&mut self, id: &str) -> Option<&mut Memory> {
        if !self.changed.contains_key(id) {
            let original = *self.snapshot.get(id)?;
            self.changed.insert(id.to_owned(), original.clone());
        }
        self.changed.get_mut(id)
    }

    fn insert(&mut self, memory: Memory) {
        self.changed.insert(memory.id.clone(), memory);
    }
}

/// The snapshot as the plan changes it.
struct Working<'a> {
    request: &'a PlanRequest<'a>,
    user_id: String,
    memories: Memories<'a>,
    links: BTreeMap<LinkKey, Link>,
    /// The keys of the links at each memory (either end), so a merge finds
    /// the links it re-points without scanning every link.
    links_at: HashMap<String, BTreeSet<LinkKey>>,
    claimed: FastSet<String>,
    actions: Vec<PlannedAction>,
    skipped: Vec<Skipped>,
    contradictions: Vec<ContradictionFinding>,
    patterns: Vec<PatternFinding>,
    counts: RunCounts,
}

impl Working<'_> {
    fn is_active(&self, id: &str) -> bool {
        self.memories
            .get(id)
            .is_some_and(|m| m.status == MemoryStatus::Active)
    }

    fn free(&self, ids: &[&str]) -> bool {
        ids.iter()
            .all(|id| self.is_active(id) && !self.claimed.contains(*id))
    }

    fn facts(&self, ids: &[String], similarity: Option<f64>, cluster: bool) -> Facts<'_> {
        Facts {
            similarity,
            cluster_size: cluster.then_some(ids.len()),
            members: ids.iter().filter_map(|id| self.memories.get(id)).collect(),
        }
    }

    /// The rule for a detection, or a skipped entry saying why there is none.
    fn decide(
        &mut self,
        detection: Detection,
        ids: &[String],
        similarity: Option<f64>,
        cluster: bool,
    ) -> Option<Rule> {
        let facts = self.facts(ids, similarity, cluster);
        let rule = self
            .request
            .rules
            .decide(detection, &facts, self.request.now);
        let reason = match rule {
            Some(rule) if rule.action != ActionType::Noop => return Some(rule.clone()),
            // Every active memory is a promotion candidate: one no rule
            // moves is no skipped decision.
            _ if detection == Detection::Promotion => return None,
            None => "no rule matched".to_owned(),
            Some(rule) => format!("rule `{}` says noop", rule.id),
        };
        self.skipped.push(Skipped {
            detection,
            target_ids: ids.to_vec(),
            reason,
        });
        None
    }

    fn record(
        &mut self,
        rule: &Rule,
        targets: Vec<String>,
        score: f64,
        reasons: Vec<String>,
    ) -> &mut PlannedAction {
        let index = self.actions.len();
        self.actions.push(PlannedAction {
            action_id: derived_id(&[self.request.run_id, "action", &index.to_string()]),
            action_type: rule.action,
            rule_id: rule.id.clone(),
            target_ids: targets,
            canonical_id: None,
            new_memory_ids: Vec::new(),
            canonical_content: None,
            score: round4(score),
            reasons,
        });
        &mut self.actions[index]
    }

    fn touch(&mut self, id: &str) -> Option<&mut Memory> {
        let run_id = self.request.run_id.to_owned();
        let memory = self.memories.get_mut(id)?;
        memory.last_run_id = Some(run_id);
        Some(memory)
    }

    /// Adds a link; an existing one with the same ends and type keeps the
    /// higher confidence.
    fn link(&mut self, from: &str, to: &str, link_type: LinkType, confidence: f64, reason: String) {
        let link = Link {
            user_id: self.user_id.clone(),
            from_id: from.to_owned(),
            to_id: to.to_owned(),
            link_type,
            confidence: round4(confidence),
            reason,
            created_at: self.request.now,
            run_id: Some(self.request.run_id.to_owned()),
        };
        self.put_link(link);
    }

    fn put_link(&mut self, link: Link) {
        let key = key(&link);
        match self.links.get(&key) {
            Some(existing) if existing.confidence >= link.confidence => {}
            _ => {
                index_link(&mut self.links_at, &key);
                self.links.insert(key, link);
            }
        }
    }

    /// Removes and returns the link with this key.
    fn take_link(&mut self, key: &LinkKey) -> Option<Link> {
        let link = self.links.remove(key)?;
        for end in [&link.from_id, &link.to_id] {
            if let Some(keys) = self.links_at.get_mut(end) {
                keys.remove(key);
            }
        }
        Some(link)
    }

    fn linked(&self, a: &str, b: &str, link_type: LinkType) -> bool {
        self.links
            .contains_key(&(a.to_owned(), b.to_owned(), link_type))
            || self
                .links
                .contains_key(&(b.to_owned(), a.to_owned(), link_type))
    }

    fn create(&mut self, memory: Memory) {
        self.memories.insert(memory);
    }

    fn new_memory(&self, id: String, template: &Memory, content: &str) -> Memory {
        Memory {
            user_id: self.user_id.clone(),
            id,
            kind: template.kind,
            category: template.category.clone(),
            tags: template.tags.clone(),
            content: content.to_owned(),
            importance: template.importance,
            source: Some("engram".to_owned()),
            content_hash: content_hash(content),
            embedding: None,
            status: MemoryStatus::Active,
            salience: SalienceState::new(self.request.now),
            merged_from: Vec::new(),
            derived_from: vec![template.id.clone()],
            last_run_id: Some(self.request.run_id.to_owned()),
            updated_at: None,
        }
    }
}

/// Plans one cycle over a snapshot.
pub fn plan(snapshot: &Snapshot, detections: &Detections, request: &PlanRequest<'_>) -> Plan {
    let mut w = Working {
        request,
        user_id: snapshot.user_id.clone(),
        memories: Memories::of(snapshot),
        links: snapshot
            .links
            .iter()
            .filter(|l| l.user_id == snapshot.user_id)
            .map(|l| (key(l), l.clone()))
            .collect(),
        links_at: HashMap::new(),
        claimed: FastSet::default(),
        actions: Vec::new(),
        skipped: Vec::new(),
        contradictions: Vec::new(),
        patterns: Vec::new(),
        counts: RunCounts {
            memories_processed: snapshot
                .memories
                .iter()
                .filter(|m| m.status == MemoryStatus::Active)
                .count() as i64,
            ..RunCounts::default()
        },
    };
    for key in w.links.keys() {
        index_link(&mut w.links_at, key);
    }
    let flagged = supersede(&mut w, detections);
    merge_duplicates(&mut w, detections, &request.settings.salience);
    promote(&mut w, detections);
    flag(&mut w, detections, &flagged);
    extract_patterns(&mut w, detections);
    // After patterns: an episode a pattern now carries may fade away.
    archive(&mut w, detections);
    split(&mut w, detections);
    finish(w, snapshot)
}

/// Supersessions the rules accept; returns contradictions the rules chose
/// to flag instead (with the rule that said so).
fn supersede(w: &mut Working<'_>, detections: &Detections) -> Vec<(usize, Rule)> {
    let mut flag_instead = Vec::new();
    for (index, contradiction) in detections.contradictions.iter().enumerate() {
        let Some(change) = &contradiction.supersession else {
            continue;
        };
        let ids = vec![change.older_id.clone(), change.newer_id.clone()];
        let Some(rule) = w.decide(
            Detection::Supersession,
            &ids,
            Some(contradiction.similarity),
            false,
        ) else {
            continue;
        };
        if rule.action == ActionType::FlagContradiction {
            flag_instead.push((index, rule));
            continue;
        }
        if !w.free(&[&change.older_id, &change.newer_id]) {
            continue;
        }
        let mut reasons = vec![format!(
            "the newer memory states a change (`{}`) and the older was not read since",
            change.marker
        )];
        reasons.extend(contradiction.signals.iter().map(|s| s.detail.clone()));
        if let Some(older) = w.touch(&change.older_id) {
            older.status = MemoryStatus::Superseded;
        }
        w.link(
            &change.newer_id,
            &change.older_id,
            LinkType::Supersedes,
            contradiction.confidence,
            reasons.join("; "),
        );
        w.claimed.insert(change.older_id.clone());
        w.claimed.insert(change.newer_id.clone());
        w.record(&rule, ids, contradiction.confidence, reasons);
        w.counts.superseded += 1;
        finding(w, contradiction, ContradictionResolution::Superseded);
    }
    flag_instead
}

fn finding(w: &mut Working<'_>, c: &Contradiction, resolution: ContradictionResolution) {
    w.counts.contradictions_found += 1;
    w.contradictions.push(ContradictionFinding {
        first_id: c.first_id.clone(),
        second_id: c.second_id.clone(),
        confidence: c.confidence,
        similarity: c.similarity,
        signals: c.signals.iter().map(|s| s.kind.to_owned()).collect(),
        explanation: c.explanation(),
        resolution,
    });
}

fn merge_duplicates(w: &mut Working<'_>, detections: &Detections, params: &SalienceParams) {
    for cluster in &detections.duplicates {
        let members: Vec<String> = cluster
            .members
            .iter()
            .filter(|id| w.free(&[id]))
            .cloned()
            .collect();
        if members.len() < 2 {
            continue;
        }
        // The canonical keeps every fact: it is one of the members whose
        // text covers the others' content words, when such members remain.
        let covering: Vec<String> = members
            .iter()
            .filter(|id| cluster.covering.contains(id))
            .cloned()
            .collect();
        // Without a covering member the canonical gets a fused text, which
        // carries every member's details: with a member taken by another
        // action it would carry one it does not absorb, so the cluster waits.
        if covering.is_empty() && members.len() < cluster.members.len() {
            continue;
        }
        let Some(rule) = w.decide(
            Detection::Duplicate,
            &members,
            Some(cluster.min_similarity),
            true,
        ) else {
            continue;
        };
        let candidates = if covering.is_empty() {
            &members
        } else {
            &covering
        };
        let canonical = merge::merge(
            w,
            &members,
            candidates,
            &cluster.fused,
            cluster.min_similarity,
            params,
        );
        w.claimed.extend(members.iter().cloned());
        w.counts.duplicates_merged += members.len() as i64 - 1;
        let reason = if cluster.exact {
            "identical normalised text".to_owned()
        } else {
            format!(
                "every pair at cosine ≥ {:.2} (least similar pair {:.4})",
                w.request.settings.duplicate_threshold, cluster.min_similarity
            )
        };
        let reasons = vec![
            reason,
            if let Some(text) = cluster.fused.get(&canonical) {
                format!(
                    "canonical {canonical}: highest salience, ties newest; no member carries \
                     every other's words, so its text now keeps their details: \"{text}\""
                )
            } else if covering.is_empty() {
                format!("canonical {canonical}: highest salience, ties newest")
            } else {
                format!(
                    "canonical {canonical}: its text covers every member's content words; \
                     highest salience among such members, ties newest"
                )
            },
        ];
        let fused = cluster.fused.get(&canonical).cloned();
        let action = w.record(&rule, members, cluster.min_similarity, reasons);
        action.canonical_id = Some(canonical);
        action.canonical_content = fused;
    }
}

fn archive(w: &mut Working<'_>, detections: &Detections) {
    // Patterns each memory is an instance of, this cycle's included.
    let mut patterns_of: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for link in w.links.values() {
        if link.link_type == LinkType::InstanceOf {
            patterns_of
                .entry(link.from_id.clone())
                .or_default()
                .push(link.to_id.clone());
        }
    }
    for stale in &detections.stale {
        let ids = vec![stale.memory_id.clone()];
        if !w.free(&[&stale.memory_id]) {
            continue;
        }
        // Only what another active memory still carries fades away.
        let carrier = stale
            .covered_by
            .iter()
            .find(|id| w.is_active(id))
            .cloned()
            .or_else(|| {
                patterns_of
                    .get(&stale.memory_id)?
                    .iter()
                    .find(|id| w.is_active(id))
                    .cloned()
            });
        let Some(carrier) = carrier else {
            continue;
        };
        let Some(rule) = w.decide(Detection::Stale, &ids, None, false) else {
            continue;
        };
        if let Some(memory) = w.touch(&stale.memory_id) {
            memory.status = MemoryStatus::Archived;
        }
        w.claimed.insert(stale.memory_id.clone());
        w.counts.archived += 1;
        let carried = if w
            .memories
            .get(&carrier)
            .is_some_and(|m| m.category.as_deref() == Some(PATTERN_CATEGORY))
        {
            format!("pattern {carrier} carries the recurrence")
        } else {
            format!("newer memory {carrier} says all it says")
        };
        let reasons = vec![
            format!(
                "salience {:.4} below {:.2} (reads and importance), not read for {:.1} days",
                stale.salience, w.request.settings.archive_threshold, stale.idle_days
            ),
            carried,
        ];
        w.record(&rule, ids, stale.salience, reasons);
    }
}

fn promote(w: &mut Working<'_>, detections: &Detections) {
    for id in &detections.promotions {
        if !w.free(&[id]) {
            continue;
        }
        let ids = vec![id.clone()];
        let Some(rule) = w.decide(Detection::Promotion, &ids, None, false) else {
            continue;
        };
        let Some(to_kind) = rule.to_kind else {
            continue;
        };
        let Some(memory) = w.memories.get(id) else {
            continue;
        };
        if memory.kind == to_kind {
            continue;
        }
        let reasons = vec![format!(
            "{} → {} (importance {:.2}, {} reads)",
            memory.kind.as_str(),
            to_kind.as_str(),
            memory.importance,
            memory.salience.access_count()
        )];
        let importance = memory.importance;
        if let Some(memory) = w.touch(id) {
            memory.kind = to_kind;
        }
        w.claimed.insert(id.clone());
        w.counts.promoted += 1;
        w.record(&rule, ids, importance, reasons);
    }
}

fn flag(w: &mut Working<'_>, detections: &Detections, flag_instead: &[(usize, Rule)]) {
    for (index, contradiction) in detections.contradictions.iter().enumerate() {
        let chosen = flag_instead
            .iter()
            .find(|(i, _)| *i == index)
            .map(|(_, r)| r.clone());
        if contradiction.supersession.is_some() && chosen.is_none() {
            continue;
        }
        let (a, b) = (&contradiction.first_id, &contradiction.second_id);
        if !w.is_active(a) || !w.is_active(b) || w.linked(a, b, LinkType::Contradicts) {
            continue;
        }
        let ids = vec![a.clone(), b.clone()];
        let rule = match chosen {
            Some(rule) => rule,
            None => match w.decide(
                Detection::Contradiction,
                &ids,
                Some(contradiction.similarity),
                false,
            ) {
                Some(rule) => rule,
                None => continue,
            },
        };
        let explanation = contradiction.explanation();
        w.link(
            a,
            b,
            LinkType::Contradicts,
            contradiction.confidence,
            explanation.clone(),
        );
        w.link(
            b,
            a,
            LinkType::Contradicts,
            contradiction.confidence,
            explanation.clone(),
        );
        w.touch(a);
        w.touch(b);
        w.record(&rule, ids, contradiction.confidence, vec![explanation]);
        finding(w, contradiction, ContradictionResolution::Flagged);
    }
}

fn extract_patterns(w: &mut Working<'_>, detections: &Detections) {
    for pattern in &detections.patterns {
        let members: Vec<String> = pattern
            .members
            .iter()
            .filter(|id| w.free(&[id]))
            .cloned()
            .collect();
        if members.is_empty() {
            continue;
        }
        let Some(rule) = w.decide(
            Detection::Pattern,
            &pattern.instances,
            Some(pattern.cohesion),
            true,
        ) else {
            continue;
        };
        // The medoid as the snapshot has it: the plan may have changed it.
        let Some(&medoid) = w.memories.snapshot.get(pattern.medoid_id.as_str()) else {
            continue;
        };
        let (id, reason) = match &pattern.pattern_id {
            Some(existing) => {
                let Some(memory) = w.touch(existing) else {
                    continue;
                };
                memory.content.clone_from(&pattern.content);
                memory.content_hash = content_hash(&pattern.content);
                // Its vector follows its text; the cycle embeds it again.
                memory.embedding = None;
                memory.derived_from.clone_from(&pattern.instances);
                (
                    existing.clone(),
                    format!(
                        "{} later episode(s) recur in this pattern: cosine ≥ {:.2} to every \
                         instance, sharing its predicate",
                        members.len(),
                        w.request.settings.pattern_similarity
                    ),
                )
            }
            None => {
                let id = derived_id(&[&w.user_id, "pattern", &members.join(",")]);
                if w.memories.contains_key(&id) {
                    continue;
                }
                let mut memory = w.new_memory(id.clone(), medoid, &pattern.content);
                memory.kind = MemoryKind::Semantic;
                memory.category = Some(PATTERN_CATEGORY.to_owned());
                memory.derived_from.clone_from(&pattern.instances);
                let mut tags = BTreeSet::new();
                let mut importances = Vec::new();
                for member in members.iter().filter_map(|m| w.memories.get(m)) {
                    tags.extend(member.tags.iter().cloned());
                    importances.push(member.importance);
                }
                memory.tags = tags.into_iter().collect();
                memory.importance = merge::median(&mut importances);
                w.create(memory);
                (
                    id,
                    format!(
                        "{} episodes on {} distinct days, every pair at cosine ≥ {:.2} \
                         (least {:.4}), sharing a predicate",
                        members.len(),
                        pattern.days,
                        w.request.settings.pattern_similarity,
                        pattern.cohesion
                    ),
                )
            }
        };
        for member in &members {
            w.link(
                member,
                &id,
                LinkType::InstanceOf,
                pattern.cohesion,
                reason.clone(),
            );
            w.touch(member);
        }
        w.counts.patterns_extracted += 1;
        w.patterns.push(PatternFinding {
            pattern_memory_id: id.clone(),
            content: pattern.content.clone(),
            source_memory_ids: pattern.instances.clone(),
            new_memory_ids: members.clone(),
            first_at: Some(pattern.first_at),
            last_at: Some(pattern.last_at),
        });
        let reasons = vec![
            reason,
            format!(
                "text: the words every instance shares, in the order of episode {}",
                pattern.medoid_id
            ),
        ];
        w.record(&rule, members, pattern.cohesion, reasons)
            .new_memory_ids = vec![id];
    }
}

fn split(w: &mut Working<'_>, detections: &Detections) {
    for verbose in &detections.verbose {
        let id = &verbose.memory_id;
        if !w.is_active(id) {
            continue;
        }
        let ids = vec![id.clone()];
        let Some(rule) = w.decide(Detection::Verbose, &ids, None, false) else {
            continue;
        };
        let Some(original) = w.memories.get(id).cloned() else {
            continue;
        };
        let mut pieces = Vec::new();
        for (index, sentence) in verbose.sentences.iter().enumerate() {
            let piece_id = derived_id(&[&w.user_id, "split", id, &index.to_string()]);
            if w.memories.contains_key(&piece_id) {
                continue;
            }
            let piece = w.new_memory(piece_id.clone(), &original, sentence);
            w.create(piece);
            w.link(
                &piece_id,
                id,
                LinkType::SplitFrom,
                1.0,
                format!("sentence {} of {}", index + 1, verbose.sentences.len()),
            );
            pieces.push(piece_id);
        }
        if pieces.is_empty() {
            continue;
        }
        w.touch(id);
        w.counts.split += 1;
        let reasons = vec![format!(
            "{} characters, {} reads: split into {} sentences; the original stays active",
            verbose.chars,
            verbose.access_count,
            pieces.len()
        )];
        w.record(&rule, ids, verbose.access_count as f64, reasons)
            .new_memory_ids = pieces;
    }
}

/// Turns the working copy into the plan: what was created, what changed.
fn finish(w: Working<'_>, snapshot: &Snapshot) -> Plan {
    let mut created = Vec::new();
    let mut updated = Vec::new();
    let mut memory_changes = Vec::new();
    let mut changed: Vec<(&String, &Memory)> = w.memories.changed.iter().collect();
    changed.sort_unstable_by(|a, b| a.0.cmp(b.0));
    for (id, memory) in changed {
        match w.memories.snapshot.get(id.as_str()) {
            None => created.push(memory.clone()),
            Some(before) if *before != memory => {
                let (mut was, mut now) = (MemoryFields::of(before), MemoryFields::of(memory));
                if before.content != memory.content {
                    was.content = Some(before.content.clone());
                    now.content = Some(memory.content.clone());
                }
                memory_changes.push(MemoryChange {
                    memory_id: id.clone(),
                    before: was,
                    after: now,
                });
                updated.push(memory.clone());
            }
            Some(_) => {}
        }
    }
    created.sort_by(|a, b| (a.created_at(), &a.id).cmp(&(b.created_at(), &b.id)));
    let before_links: BTreeMap<LinkKey, &Link> =
        snapshot.links.iter().map(|l| (key(l), l)).collect();
    let mut link_changes = Vec::new();
    let keys: BTreeSet<&LinkKey> = before_links.keys().chain(w.links.keys()).collect();
    for k in keys {
        let (before, after) = (before_links.get(k).copied(), w.links.get(k));
        if before != after {
            link_changes.push(LinkChange {
                before: before.cloned(),
                after: after.cloned(),
            });
        }
    }
    let mut counts = w.counts;
    counts.links_created = link_changes.iter().filter(|c| c.before.is_none()).count() as i64;
    let tokens = usage(&snapshot.memories);
    Plan {
        tier: w.request.tier,
        tokens,
        settings: w.request.settings.clone(),
        counts,
        actions: w.actions,
        skipped: w.skipped,
        contradictions: w.contradictions,
        patterns: w.patterns,
        created_ids: created.iter().map(|m| m.id.clone()).collect(),
        created,
        updated,
        memory_changes,
        link_changes,
    }
}
