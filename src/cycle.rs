//! The consolidation cycle of one user: load → detect → plan → report →
//! execute → emit (docs/design.md §4).
//!
//! Detect and plan are pure ([`crate::detect`], [`crate::plan`]). This module
//! does the I/O around them: it loads the user's snapshot, optionally lets
//! an endpoint rewrite pattern texts, embeds the memories the plan creates,
//! writes the report and (when executing) the plan's effects in one store
//! transaction, and builds the output events. Running the same run id twice
//! changes nothing the second time and returns the same events.

use std::borrow::Cow;
use std::sync::Arc;

use chrono::DateTime;
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::config::ConsolidationConfig;
use crate::detect::{DetectSettings, Lexicon, Snapshot, WordNet, detect};
use crate::embed::{EmbedError, Embedder, SubBatch, embed_bucketed};
use crate::event::{
    ConsolidationCompleted, ConsolidationTriggered, ContradictionDetected, Event, PatternExtracted,
    RunAction, RunCounts, RunMode, Timestamp, TriggerReason,
};
use crate::ids::derived_id;
use crate::model::{MemoryStatus, Millis, RunReport, Tier};
use crate::plan::{
    ContradictionFinding, LinkChange, MemoryChange, PatternFinding, Plan, PlanRequest,
    PlannedAction, RuleSet, Skipped, plan, usage,
};
use crate::rewrite::PatternRewriter;
use crate::salience::SalienceParams;
use crate::store::{Store, StoreError, Write, WriteBatch};
use crate::trigger;

#[derive(Debug, Error)]
pub enum CycleError {
    #[error("consolidation of user {user_id} (run {run_id}) failed and was rolled back")]
    Store {
        user_id: String,
        run_id: String,
        #[source]
        source: StoreError,
    },
    #[error("run {run_id}: stored report is unreadable: {reason}")]
    Report { run_id: String, reason: String },
}

impl CycleError {
    pub fn is_transient(&self) -> bool {
        match self {
            Self::Store { source, .. } => source.is_transient(),
            Self::Report { .. } => false,
        }
    }
}

/// Settings a cycle depends on; hashed into its report.
#[derive(Clone)]
pub struct CycleSettings {
    pub consolidation: ConsolidationConfig,
    pub salience: SalienceParams,
    pub rules: Arc<RuleSet>,
    pub lexicon: Arc<Lexicon>,
    /// Rewrites pattern texts; `None` keeps the deterministic text.
    pub rewriter: Option<Arc<dyn PatternRewriter>>,
}

impl std::fmt::Debug for CycleSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CycleSettings")
            .field("config_hash", &self.config_hash())
            .field("rewriter", &self.rewriter.is_some())
            .finish()
    }
}

impl Default for CycleSettings {
    fn default() -> Self {
        Self::new(
            ConsolidationConfig::default(),
            SalienceParams::default(),
            RuleSet::default_rules(),
        )
    }
}

impl CycleSettings {
    pub fn new(
        consolidation: ConsolidationConfig,
        salience: SalienceParams,
        rules: RuleSet,
    ) -> Self {
        Self {
            lexicon: Arc::new(Lexicon::new(&rules.lexicon)),
            rules: Arc::new(rules),
            consolidation,
            salience,
            rewriter: None,
        }
    }

    /// The same settings with WordNet behind the lexicon.
    pub fn with_wordnet(mut self, wordnet: Arc<WordNet>) -> Self {
        self.lexicon = Arc::new(Lexicon::new(&self.rules.lexicon).with_wordnet(wordnet));
        self
    }

    pub fn config_hash(&self) -> String {
        let mut digest = self.rules.digest();
        if let Some(wordnet) = self.lexicon.wordnet() {
            digest = format!("{digest}+wordnet:{}", wordnet.digest());
        }
        self.consolidation.hash(&self.salience, &digest)
    }

    /// The user's tier for `tokens` used of the budget.
    pub fn tier(&self, tokens: u64) -> Tier {
        self.consolidation.budget.tier(tokens)
    }

    /// The plain settings the detectors and the planner take in `tier`: the
    /// tier's thresholds, and the rest as configured.
    pub fn detect_settings(&self, tier: Tier) -> DetectSettings {
        let config = &self.consolidation;
        let gentle = (
            config.detect.duplicate_threshold,
            config.detect.archive_threshold,
        );
        config
            .detect
            .settings(config.budget.thresholds(tier, gentle), self.salience)
    }
}

/// What to run.
#[derive(Debug, Clone)]
pub struct CycleRequest {
    pub user_id: String,
    pub run_id: String,
    pub trigger: TriggerReason,
    pub mode: RunMode,
    /// "Now" for every time-dependent decision (stream or wall time).
    pub now: Millis,
}

/// The most of a run's actions, in bytes of JSON, that its
/// `consolidation.completed` event lists: with the rest of the event it
/// stays well under a broker's default record limit (1 MB), in JSON and in
/// Avro (which is smaller). A run that archives thousands of memories made
/// a 4 MB event that the broker refused, and it was dropped.
pub const COMPLETED_ACTIONS_MAX_BYTES: usize = 640 * 1024;

/// The stored report of a run: everything the events say, plus what undo
/// needs (the prior values of every memory and link the run changed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CycleReport {
    pub run_id: String,
    pub user_id: String,
    pub trigger: TriggerReason,
    pub mode: RunMode,
    pub config_hash: String,
    pub started_at: Timestamp,
    pub tier: Tier,
    pub tokens: u64,
    pub token_budget: u64,
    pub thresholds: DetectSettings,
    pub counts: RunCounts,
    pub actions: Vec<PlannedAction>,
    pub skipped: Vec<Skipped>,
    pub contradictions: Vec<ContradictionFinding>,
    pub patterns: Vec<PatternFinding>,
    pub created_ids: Vec<String>,
    pub memory_changes: Vec<MemoryChange>,
    pub link_changes: Vec<LinkChange>,
    pub warnings: Vec<String>,
    /// Active memories by salience decile at "now".
    pub salience_histogram: [u64; 10],
    /// Whether the plan's effects were written.
    pub executed: bool,
    /// Set by `engram undo`.
    #[serde(default)]
    pub undone_at: Option<Millis>,
}

impl CycleReport {
    pub fn from_stored(stored: &RunReport) -> Result<Self, CycleError> {
        serde_json::from_value(stored.report.clone()).map_err(|e| CycleError::Report {
            run_id: stored.run_id.clone(),
            reason: e.to_string(),
        })
    }

    pub fn to_stored(&self, now: Millis) -> RunReport {
        RunReport {
            user_id: self.user_id.clone(),
            run_id: self.run_id.clone(),
            started_at: now,
            report: serde_json::to_value(self).unwrap_or_default(),
        }
    }

    /// The run's actions as `consolidation.completed` lists them: in order,
    /// as many as fit [`COMPLETED_ACTIONS_MAX_BYTES`] of JSON; and how many
    /// did not. Counts and the stored report always cover every action.
    fn listed_actions(&self) -> (Vec<RunAction>, usize) {
        let mut listed = Vec::new();
        let mut bytes = 0;
        for action in &self.actions {
            let action = RunAction {
                action_id: action.action_id.clone(),
                action_type: action.action_type.as_str().to_owned(),
                target_ids: action.target_ids.clone(),
                canonical_id: action.canonical_id.clone(),
                new_memory_id: action.new_memory_ids.first().cloned(),
                rule_id: action.rule_id.clone(),
                score: action.score,
                reasons: action.reasons.clone(),
                canonical_content: action.canonical_content.clone(),
            };
            bytes += serde_json::to_vec(&action).map_or(usize::MAX / 2, |json| json.len() + 1);
            if bytes > COMPLETED_ACTIONS_MAX_BYTES {
                break;
            }
            listed.push(action);
        }
        let left_out = self.actions.len() - listed.len();
        (listed, left_out)
    }

    /// The output events of the run, in order: triggered, contradictions,
    /// patterns, completed. Ids derive from the run id. A dry run made no
    /// flag and no pattern memory, so it announces none: what it would do
    /// is listed in its completion, which carries the mode.
    pub fn events(&self, duration_ms: i64) -> Vec<Event> {
        let at = self.started_at;
        let id = |parts: &[&str]| {
            let mut all = vec![self.run_id.as_str()];
            all.extend_from_slice(parts);
            derived_id(&all)
        };
        let mut events = vec![Event::ConsolidationTriggered(ConsolidationTriggered {
            event_id: id(&["triggered"]),
            user_id: self.user_id.clone(),
            run_id: self.run_id.clone(),
            reason: self.trigger,
            triggered_at: at,
        })];
        let executed = self.mode == RunMode::Execute;
        let contradictions = if executed {
            &self.contradictions[..]
        } else {
            &[]
        };
        let patterns = if executed { &self.patterns[..] } else { &[] };
        for (index, c) in contradictions.iter().enumerate() {
            events.push(Event::ContradictionDetected(ContradictionDetected {
                event_id: id(&["contradiction", &index.to_string()]),
                user_id: self.user_id.clone(),
                run_id: self.run_id.clone(),
                first_memory_id: c.first_id.clone(),
                second_memory_id: c.second_id.clone(),
                confidence: c.confidence,
                signals: c.signals.clone(),
                explanation: c.explanation.clone(),
                resolution: c.resolution,
                detected_at: at,
            }));
        }
        for (index, p) in patterns.iter().enumerate() {
            events.push(Event::PatternExtracted(PatternExtracted {
                event_id: id(&["pattern", &index.to_string()]),
                user_id: self.user_id.clone(),
                run_id: self.run_id.clone(),
                pattern_memory_id: p.pattern_memory_id.clone(),
                content: p.content.clone(),
                source_memory_ids: p.source_memory_ids.clone(),
                extracted_at: at,
            }));
        }
        let (actions, left_out) = self.listed_actions();
        let mut warnings = self.warnings.clone();
        if left_out > 0 {
            warnings.push(format!(
                "{left_out} of {} actions are not listed in this event, which must fit one \
                 Kafka record; the stored run report holds them all \
                 (engram report --user {} --run {})",
                self.actions.len(),
                self.user_id,
                self.run_id
            ));
        }
        events.push(Event::ConsolidationCompleted(ConsolidationCompleted {
            event_id: id(&["completed"]),
            user_id: self.user_id.clone(),
            run_id: self.run_id.clone(),
            mode: self.mode,
            config_hash: self.config_hash.clone(),
            started_at: at,
            duration_ms,
            counts: self.counts.clone(),
            actions,
            warnings,
        }));
        events
    }
}

/// What a cycle produced.
#[derive(Debug, Clone)]
pub struct CycleOutput {
    pub report: CycleReport,
    pub events: Vec<Event>,
    /// False when the run id had already run: nothing was written again.
    pub fresh: bool,
}

/// Loads a user's snapshot: every memory in `(created_at, id)` order, and
/// every link.
pub fn load_snapshot(store: &dyn Store, user_id: &str) -> Result<Snapshot, StoreError> {
    Ok(Snapshot {
        user_id: user_id.to_owned(),
        memories: store.memories(user_id)?,
        links: store.links(user_id)?,
    })
}

/// Plans a cycle without touching the store: the pure part. The tier and
/// token count are the user's whole; the detectors see at most
/// `max_memories_per_cycle` active memories (see [`left_out`]).
pub fn plan_cycle(request: &CycleRequest, snapshot: &Snapshot, settings: &CycleSettings) -> Plan {
    let tokens = usage(&snapshot.memories);
    let tier = settings.tier(tokens);
    let detect_settings = settings.detect_settings(tier);
    let considered = match left_out(snapshot, settings.consolidation.max_memories_per_cycle) {
        0 => Cow::Borrowed(snapshot),
        waiting => Cow::Owned(without_oldest_active(snapshot, waiting)),
    };
    let detections = detect(
        &considered,
        request.now,
        &detect_settings,
        &settings.lexicon,
    );
    let mut plan = plan(
        &considered,
        &detections,
        &PlanRequest {
            run_id: &request.run_id,
            now: request.now,
            tier,
            settings: &detect_settings,
            rules: &settings.rules,
        },
    );
    plan.tokens = tokens;
    plan
}

/// How many active memories a cycle leaves out under `cap`: the oldest
/// ones, by `(created_at, id)`. They wait for a later cycle; the run report
/// says how many. A `cap` of 0 is no cap.
pub fn left_out(snapshot: &Snapshot, cap: usize) -> usize {
    if cap == 0 {
        return 0;
    }
    let active = snapshot
        .memories
        .iter()
        .filter(|m| m.status == MemoryStatus::Active)
        .count();
    active.saturating_sub(cap)
}

/// The snapshot without its `count` oldest active memories and their links.
fn without_oldest_active(snapshot: &Snapshot, count: usize) -> Snapshot {
    let mut skip = count;
    let mut dropped = std::collections::HashSet::new();
    let memories = snapshot
        .memories
        .iter()
        .filter(|m| {
            if skip > 0 && m.status == MemoryStatus::Active {
                skip -= 1;
                dropped.insert(m.id.as_str());
                return false;
            }
            true
        })
        .cloned()
        .collect();
    let links = snapshot
        .links
        .iter()
        .filter(|l| !dropped.contains(l.from_id.as_str()) && !dropped.contains(l.to_id.as_str()))
        .cloned()
        .collect();
    Snapshot {
        user_id: snapshot.user_id.clone(),
        memories,
        links,
    }
}

/// Runs one cycle: plans it, writes its report (and in execute mode its
/// effects) in one transaction, and returns its events.
pub fn run_cycle(
    store: &dyn Store,
    request: &CycleRequest,
    settings: &CycleSettings,
    embedder: Option<(&dyn Embedder, SubBatch)>,
) -> Result<CycleOutput, CycleError> {
    run(store, request, settings, embedder, true)
}

/// Like [`run_cycle`], but the run stays in the user's pending list until
/// [`confirm_run`]: a crash before its events are delivered re-runs it,
/// which re-emits the stored report's events under the same ids.
pub fn run_cycle_unconfirmed(
    store: &dyn Store,
    request: &CycleRequest,
    settings: &CycleSettings,
    embedder: Option<(&dyn Embedder, SubBatch)>,
) -> Result<CycleOutput, CycleError> {
    run(store, request, settings, embedder, false)
}

/// Removes a run whose events were delivered from the pending list.
pub fn confirm_run(store: &dyn Store, request: &CycleRequest) -> Result<(), CycleError> {
    finish_pending(store, request).map_err(|source| CycleError::Store {
        user_id: request.user_id.clone(),
        run_id: request.run_id.clone(),
        source,
    })
}

fn run(
    store: &dyn Store,
    request: &CycleRequest,
    settings: &CycleSettings,
    embedder: Option<(&dyn Embedder, SubBatch)>,
    clear_pending: bool,
) -> Result<CycleOutput, CycleError> {
    let started = std::time::Instant::now();
    let fail = |source: StoreError| CycleError::Store {
        user_id: request.user_id.clone(),
        run_id: request.run_id.clone(),
        source,
    };
    if let Some(stored) = store
        .run_report(&request.user_id, &request.run_id)
        .map_err(fail)?
    {
        let report = CycleReport::from_stored(&stored)?;
        let events = report.events(0);
        // Clear the pending entry a crash may have left behind.
        if clear_pending {
            finish_pending(store, request).map_err(fail)?;
        }
        return Ok(CycleOutput {
            report,
            events,
            fresh: false,
        });
    }
    let snapshot = load_snapshot(store, &request.user_id).map_err(fail)?;
    let mut plan = plan_cycle(request, &snapshot, settings);
    let mut warnings = Vec::new();
    if let Some(rewriter) = &settings.rewriter {
        rewrite_patterns(&mut plan, &snapshot, rewriter.as_ref(), &mut warnings);
    }
    embed_created(&mut plan, embedder, &mut warnings);
    let waiting = left_out(&snapshot, settings.consolidation.max_memories_per_cycle);
    if waiting > 0 {
        warnings.push(format!(
            "{waiting} older active memories were left for a later cycle \
             (consolidation.max_memories_per_cycle = {})",
            settings.consolidation.max_memories_per_cycle
        ));
    }
    if plan.actions.is_empty() {
        warnings.push("nothing to consolidate".to_owned());
    }
    let report = build_report(request, settings, &snapshot, &plan, warnings);
    let mut batch = WriteBatch::default();
    if request.mode == RunMode::Execute {
        plan_writes(&plan, &snapshot, &mut batch);
    }
    batch.push(Write::PutRunReport(report.to_stored(request.now)));
    let mut state = store
        .user_state(&request.user_id)
        .map_err(fail)?
        .unwrap_or_else(|| crate::model::UserState::new(&request.user_id));
    let finished_pending = clear_pending && trigger::finish(&mut state, &request.run_id);
    // A dry run changes no state but its pending entry's (a new state has
    // none): written back whole otherwise, the state would undo what the
    // user's partition committed meanwhile (`engram consolidate` runs
    // beside the service).
    let write_state = request.mode == RunMode::Execute || finished_pending;
    if request.mode == RunMode::Execute {
        state.new_since_cycle = 0;
        state.duplicate_candidates = 0;
        state.last_cycle_at = Some(request.now);
        state.cycle.changed_since = None;
        state.last_run_id = Some(request.run_id.clone());
        let after: Vec<_> = merged_view(&snapshot, &plan);
        state.cycle.tokens = usage(after.iter());
        state.cycle.tier = settings.tier(state.cycle.tokens);
    }
    if write_state {
        batch.push(Write::PutUserState(state));
    }
    store.commit(&batch).map_err(fail)?;
    if request.mode == RunMode::Execute {
        crate::faults::crash_point("cycle.executed");
    }
    let duration = started.elapsed().as_millis() as i64;
    tracing::info!(
        user_id = %request.user_id,
        run_id = %request.run_id,
        trigger = ?request.trigger,
        mode = ?request.mode,
        tier = ?report.tier,
        actions = report.actions.len(),
        merged = report.counts.duplicates_merged,
        contradictions = report.counts.contradictions_found,
        superseded = report.counts.superseded,
        patterns = report.counts.patterns_extracted,
        archived = report.counts.archived,
        split = report.counts.split,
        promoted = report.counts.promoted,
        duration_ms = duration,
        "consolidation cycle finished"
    );
    Ok(CycleOutput {
        events: report.events(duration),
        report,
        fresh: true,
    })
}

/// Removes a run from the user's pending list (after a crash left it there).
fn finish_pending(store: &dyn Store, request: &CycleRequest) -> Result<(), StoreError> {
    let Some(mut state) = store.user_state(&request.user_id)? else {
        return Ok(());
    };
    if !trigger::finish(&mut state, &request.run_id) {
        return Ok(());
    }
    let mut batch = WriteBatch::default();
    batch.push(Write::PutUserState(state));
    store.commit(&batch)
}

/// The user's memories as they will be after the plan.
fn merged_view(snapshot: &Snapshot, plan: &Plan) -> Vec<crate::model::Memory> {
    let mut memories: std::collections::BTreeMap<&str, &crate::model::Memory> = snapshot
        .memories
        .iter()
        .map(|m| (m.id.as_str(), m))
        .collect();
    for m in plan.updated.iter().chain(&plan.created) {
        memories.insert(m.id.as_str(), m);
    }
    memories.into_values().cloned().collect()
}

/// The plan's effects as store writes: a memory whose status alone
/// changes gets a status write, not its whole row again.
pub fn plan_writes(plan: &Plan, snapshot: &Snapshot, batch: &mut WriteBatch) {
    let stored: std::collections::HashMap<&str, &crate::model::Memory> = snapshot
        .memories
        .iter()
        .map(|m| (m.id.as_str(), m))
        .collect();
    for memory in &plan.updated {
        batch.push(match stored.get(memory.id.as_str()) {
            Some(before) => Write::memory_update(before, memory),
            None => Write::PutMemory(memory.clone()),
        });
    }
    for memory in &plan.created {
        batch.push(Write::PutMemory(memory.clone()));
    }
    for change in &plan.link_changes {
        match (&change.before, &change.after) {
            (_, Some(after)) => batch.push(Write::PutLink(after.clone())),
            (Some(before), None) => batch.push(Write::DeleteLink {
                user_id: before.user_id.clone(),
                from_id: before.from_id.clone(),
                to_id: before.to_id.clone(),
                link_type: before.link_type,
            }),
            (None, None) => {}
        }
    }
}

fn rewrite_patterns(
    plan: &mut Plan,
    snapshot: &Snapshot,
    rewriter: &dyn PatternRewriter,
    warnings: &mut Vec<String>,
) {
    for finding in &mut plan.patterns {
        let Some(memory) = plan
            .created
            .iter_mut()
            .find(|m| m.id == finding.pattern_memory_id)
        else {
            continue;
        };
        let episodes: Vec<String> = finding
            .source_memory_ids
            .iter()
            .filter_map(|id| snapshot.memories.iter().find(|m| &m.id == id))
            .map(|m| m.content.clone())
            .collect();
        match rewriter.rewrite(&finding.content, &episodes) {
            Ok(text) if !text.trim().is_empty() => {
                let text = crate::text::tidy(&text);
                memory.content_hash = crate::text::content_hash(&text);
                memory.content.clone_from(&text);
                memory.embedding = None;
                finding.content = text;
            }
            Ok(_) => warnings.push(format!(
                "pattern {}: the rewrite endpoint returned nothing; kept the deterministic text",
                finding.pattern_memory_id
            )),
            Err(error) => warnings.push(format!(
                "pattern {}: rewrite failed ({error}); kept the deterministic text",
                finding.pattern_memory_id
            )),
        }
    }
}

/// Gives created and changed memories without a vector one (split pieces,
/// patterns, rewritten or joined), so later cycles can compare them.
fn embed_created(
    plan: &mut Plan,
    embedder: Option<(&dyn Embedder, SubBatch)>,
    warnings: &mut Vec<String>,
) {
    let rewritten: std::collections::BTreeSet<&str> = plan
        .memory_changes
        .iter()
        .filter(|c| c.after.content.is_some())
        .map(|c| c.memory_id.as_str())
        .collect();
    let missing: Vec<(bool, usize)> = (0..plan.created.len())
        .filter(|&i| plan.created[i].embedding.is_none())
        .map(|i| (true, i))
        .chain(
            (0..plan.updated.len())
                .filter(|&i| {
                    let m = &plan.updated[i];
                    m.embedding.is_none() && rewritten.contains(m.id.as_str())
                })
                .map(|i| (false, i)),
        )
        .collect();
    if missing.is_empty() {
        return;
    }
    let Some((embedder, shape)) = embedder else {
        warnings.push(format!(
            "{} new memories have no embedding (no embedder); the next cycle with one embeds them",
            missing.len()
        ));
        return;
    };
    fn memory(plan: &mut Plan, (created, i): (bool, usize)) -> &mut crate::model::Memory {
        if created {
            &mut plan.created[i]
        } else {
            &mut plan.updated[i]
        }
    }
    let texts: Vec<String> = missing
        .iter()
        .map(|&at| memory(plan, at).content.clone())
        .collect();
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    match embed_bucketed(embedder, &texts, shape) {
        Ok(vectors) => {
            for (&at, vector) in missing.iter().zip(vectors) {
                memory(plan, at).embedding = Some(vector);
            }
        }
        Err(EmbedError::Closed) | Err(_) => warnings.push(format!(
            "{} new memories could not be embedded; they are stored without vectors",
            missing.len()
        )),
    }
}

fn build_report(
    request: &CycleRequest,
    settings: &CycleSettings,
    snapshot: &Snapshot,
    plan: &Plan,
    warnings: Vec<String>,
) -> CycleReport {
    let mut histogram = [0u64; 10];
    for memory in snapshot
        .memories
        .iter()
        .filter(|m| m.status == crate::model::MemoryStatus::Active)
    {
        let salience = memory
            .salience
            .salience(request.now, memory.importance, &settings.salience);
        histogram[((salience * 10.0) as usize).min(9)] += 1;
    }
    CycleReport {
        run_id: request.run_id.clone(),
        user_id: request.user_id.clone(),
        trigger: request.trigger,
        mode: request.mode,
        config_hash: settings.config_hash(),
        started_at: timestamp(request.now),
        tier: plan.tier,
        tokens: plan.tokens,
        token_budget: settings.consolidation.budget.token_budget,
        thresholds: plan.settings.clone(),
        counts: plan.counts.clone(),
        actions: plan.actions.clone(),
        skipped: plan.skipped.clone(),
        contradictions: plan.contradictions.clone(),
        patterns: plan.patterns.clone(),
        created_ids: plan.created_ids.clone(),
        memory_changes: plan.memory_changes.clone(),
        link_changes: plan.link_changes.clone(),
        warnings,
        salience_histogram: histogram,
        executed: request.mode == RunMode::Execute,
        undone_at: None,
    }
}

pub fn timestamp(millis: Millis) -> Timestamp {
    DateTime::from_timestamp_millis(millis).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiers_follow_the_budget_share() {
        let mut settings = CycleSettings::default();
        settings.consolidation.budget.token_budget = 1000;
        assert_eq!(settings.tier(299), Tier::Gentle);
        assert_eq!(settings.tier(300), Tier::Selective);
        assert_eq!(settings.tier(500), Tier::Aggressive);
        let gentle = settings.detect_settings(Tier::Gentle);
        let aggressive = settings.detect_settings(Tier::Aggressive);
        assert!(aggressive.duplicate_threshold < gentle.duplicate_threshold);
        assert!(aggressive.archive_threshold > gentle.archive_threshold);
    }

    /// A report of a run that archived `count` memories.
    fn archiving_report(count: usize) -> CycleReport {
        let thresholds = CycleSettings::default().detect_settings(Tier::Gentle);
        let actions: Vec<serde_json::Value> = (0..count)
            .map(|i| {
                serde_json::json!({
                    "action_id": format!("run-1/archive/{i}"),
                    "type": "archive",
                    "rule_id": "archive.faded",
                    "target_ids": [format!("memory-{i:05}")],
                    "score": 0.04,
                    "reasons": ["salience 0.04 below the archive threshold 0.10",
                                "not read in 180 days"],
                })
            })
            .collect();
        serde_json::from_value(serde_json::json!({
            "run_id": "run-1", "user_id": "u", "trigger": "manual", "mode": "execute",
            "config_hash": "h", "started_at": "2026-01-01T00:00:00Z", "tier": "gentle",
            "tokens": 0, "token_budget": 0, "thresholds": thresholds,
            "counts": RunCounts { archived: count as i64, ..RunCounts::default() },
            "actions": actions, "skipped": [], "contradictions": [], "patterns": [],
            "created_ids": [], "memory_changes": [], "link_changes": [], "warnings": [],
            "salience_histogram": [0, 0, 0, 0, 0, 0, 0, 0, 0, 0], "executed": true,
        }))
        .unwrap()
    }

    /// A run that archives thousands of memories still reports in one
    /// record the broker takes (1 MB by default): the event lists the
    /// actions that fit and says how many more the stored report holds.
    #[test]
    fn a_completed_event_of_a_huge_run_fits_one_record_and_says_what_it_left_out() {
        let codec = crate::event::EventCodec::new(crate::event::Limits::default()).unwrap();
        let events = archiving_report(20_000).events(5);
        let Some(Event::ConsolidationCompleted(completed)) = events.last() else {
            panic!("no completed event");
        };
        let json = codec.encode_json(events.last().unwrap());
        let avro = codec.encode_avro(events.last().unwrap()).unwrap();
        assert!(json.len() < 900 * 1024, "{} bytes of JSON", json.len());
        assert!(avro.len() < 900 * 1024, "{} bytes of Avro", avro.len());
        assert!(
            completed.actions.len() > 1_000,
            "{}",
            completed.actions.len()
        );
        assert_eq!(completed.counts.archived, 20_000, "the counts stay whole");
        let left = 20_000 - completed.actions.len();
        assert!(
            completed
                .warnings
                .iter()
                .any(|w| w.contains(&format!("{left} of 20000 actions"))),
            "{:?}",
            completed.warnings
        );
        // A small run lists everything and warns of nothing.
        let events = archiving_report(10).events(5);
        let Some(Event::ConsolidationCompleted(small)) = events.last() else {
            panic!("no completed event");
        };
        assert_eq!(small.actions.len(), 10);
        assert!(small.warnings.is_empty());
    }

    #[test]
    fn a_run_report_stored_before_fusion_still_reads() {
        let settings = CycleSettings::default().detect_settings(Tier::Gentle);
        let mut stored = serde_json::to_value(&settings).unwrap();
        let fields = stored.as_object_mut().unwrap();
        fields.remove("fuse_merges");
        fields.remove("fuse_max_details");
        fields.remove("pronoun_denial_min_similarity");
        let read: DetectSettings = serde_json::from_value(stored).unwrap();
        assert!(!read.fuse_merges, "those runs did not fuse");
        assert_eq!(
            read.pronoun_denial_min_similarity, 1.0,
            "nor lower the floor for pronouns below the negation floor"
        );
        assert_eq!(read.duplicate_threshold, settings.duplicate_threshold);
    }
}
