//! Embedded mode end to end: source → decode → state → cycle → emit, with
//! batched, atomic commits and dead letters for bad input.

use std::collections::BTreeMap;
use std::fmt;
use std::io::{self, BufRead};

use chrono::DateTime;
use thiserror::Error;

use crate::clock::Clock;
use crate::cycle::{CycleError, CycleRequest, CycleSettings, derived_id, run_cycle};
use crate::embed::{
    EmbedCounts, EmbedError, Embedder, EmbeddingConfig, IngestEmbedError, SubBatch, embed_created,
};
use crate::emit::JsonLinesSink;
use crate::event::{DeadLetter, DecodeError, Event, EventCodec};
use crate::event::{RunMode, TriggerReason};
use crate::index::UserIndexes;
use crate::model::{Millis, PendingRun};
use crate::schedule::Schedule;
use crate::source::{LineSource, SourceRecord};
use crate::state::{Disposition, Position, StateBatch};
use crate::store::{Store, StoreError};

#[derive(Debug, Error)]
pub enum PipelineError {
    #[error("reading input failed: {0}")]
    Input(#[source] io::Error),
    #[error("writing output failed: {0}")]
    Output(#[source] io::Error),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Embed(#[from] EmbedError),
    #[error(transparent)]
    Cycle(#[from] CycleError),
}

impl From<IngestEmbedError> for PipelineError {
    fn from(error: IngestEmbedError) -> Self {
        match error {
            IngestEmbedError::Embed(e) => PipelineError::Embed(e),
            IngestEmbedError::Store(e) => PipelineError::Store(e),
        }
    }
}

/// What a run did, for the end-of-run summary and for tests.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunSummary {
    /// Non-blank input records read.
    pub records: u64,
    /// Applied events by type.
    pub applied: BTreeMap<String, u64>,
    /// Events skipped because an earlier run already applied them.
    pub replayed: u64,
    /// Rejected records by reason kind (all went to the dead-letter output).
    pub rejected: BTreeMap<String, u64>,
    /// Output events written (dead letters included).
    pub outputs: u64,
    /// Store transactions committed.
    pub batches: u64,
    /// Where new memories' embeddings came from.
    pub embeddings: EmbedCounts,
    /// New memories that arrived with a near-duplicate (see
    /// `UserState::duplicate_candidates`).
    pub near_duplicates: u64,
    /// Consolidation cycles run, by trigger.
    pub cycles: BTreeMap<String, u64>,
    /// What the executed cycles did, summed.
    pub actions: BTreeMap<String, u64>,
}

impl RunSummary {
    pub fn applied_total(&self) -> u64 {
        self.applied.values().sum()
    }

    pub fn rejected_total(&self) -> u64 {
        self.rejected.values().sum()
    }
}

impl fmt::Display for RunSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "engram run summary")?;
        writeln!(f, "  records read      {:>8}", self.records)?;
        writeln!(f, "  applied           {:>8}", self.applied_total())?;
        for (event_type, count) in &self.applied {
            writeln!(f, "    {event_type:<26}{count:>6}")?;
        }
        writeln!(
            f,
            "  already applied   {:>8}  (replayed input, skipped)",
            self.replayed
        )?;
        writeln!(
            f,
            "  rejected          {:>8}  (sent to the dead-letter output)",
            self.rejected_total()
        )?;
        for (kind, count) in &self.rejected {
            writeln!(f, "    {kind:<26}{count:>6}")?;
        }
        writeln!(
            f,
            "  embeddings        {:>8}  computed, {} reused by text, {} supplied",
            self.embeddings.computed, self.embeddings.reused, self.embeddings.supplied
        )?;
        writeln!(
            f,
            "  near-duplicates   {:>8}  (new memories close to an existing one)",
            self.near_duplicates
        )?;
        writeln!(
            f,
            "  cycles            {:>8}",
            self.cycles.values().sum::<u64>()
        )?;
        for (trigger, count) in &self.cycles {
            writeln!(f, "    {trigger:<26}{count:>6}")?;
        }
        for (action, count) in &self.actions {
            writeln!(f, "    action {action:<19}{count:>6}")?;
        }
        writeln!(f, "  output events     {:>8}", self.outputs)?;
        write!(f, "  store commits     {:>8}", self.batches)
    }
}

/// The embedded pipeline over one store.
pub struct EmbeddedPipeline<'a> {
    codec: &'a EventCodec,
    store: &'a dyn Store,
    settings: CycleSettings,
    batch_size: usize,
    clock: Clock,
    embedding: Option<Embedding<'a>>,
    schedule: Schedule,
}

/// The embedder and what goes with it.
struct Embedding<'a> {
    embedder: &'a dyn Embedder,
    sub_batch: SubBatch,
    max_batch: usize,
    indexes: UserIndexes,
}

impl<'a> EmbeddedPipeline<'a> {
    pub fn new(
        codec: &'a EventCodec,
        store: &'a dyn Store,
        settings: CycleSettings,
        batch_size: usize,
        clock: Clock,
    ) -> Self {
        Self {
            codec,
            store,
            batch_size: batch_size.max(1),
            schedule: Schedule::new(settings.consolidation.schedule_interval_secs),
            settings,
            clock,
            embedding: None,
        }
    }

    /// Embeds new memories with `embedder` and looks up their near-duplicates
    /// in `indexes`. Without it, only platform-supplied embeddings are kept.
    pub fn with_embedder(
        mut self,
        embedder: &'a dyn Embedder,
        config: &EmbeddingConfig,
        indexes: UserIndexes,
    ) -> Self {
        self.embedding = Some(Embedding {
            embedder,
            sub_batch: config.sub_batch(),
            max_batch: config.max_batch,
            indexes,
        });
        self
    }

    /// Runs until the end of input. Each batch is committed to the store
    /// before its outputs are written.
    pub fn run<R: BufRead>(
        &mut self,
        source: &mut LineSource<R>,
        sink: &mut JsonLinesSink<'_>,
    ) -> Result<RunSummary, PipelineError> {
        let mut summary = RunSummary::default();
        // Cycles a crash left triggered but not run come first.
        for user_id in self.store.users()? {
            self.run_pending(&user_id, sink, &mut summary)?;
            self.refresh_schedule(&user_id)?;
        }
        loop {
            let (done, batch_summary) = self.run_batch(source, sink)?;
            merge(&mut summary, batch_summary);
            if done {
                break;
            }
        }
        summary.outputs = sink.written();
        Ok(summary)
    }

    fn run_batch<R: BufRead>(
        &mut self,
        source: &mut LineSource<R>,
        sink: &mut JsonLinesSink<'_>,
    ) -> Result<(bool, RunSummary), PipelineError> {
        let mut summary = RunSummary::default();
        let (records, done) = self.read_batch(source, &mut summary)?;
        let mut dead_letters = Vec::new();
        let mut decoded = Vec::with_capacity(records.len());
        for record in records {
            match self.decode(&record) {
                Ok(event) => decoded.push((record, event)),
                Err(error) => {
                    *summary.rejected.entry(error.kind().to_owned()).or_default() += 1;
                    dead_letters.push((
                        record.offset,
                        dead_letter(&record, error.kind(), &error.to_string(), self.clock.now()),
                    ));
                }
            }
        }
        if let Some(embedding) = &self.embedding {
            let mut events: Vec<&mut Event> = decoded.iter_mut().map(|(_, event)| event).collect();
            summary.embeddings = embed_created(
                embedding.embedder,
                self.store,
                &mut events,
                embedding.sub_batch,
                embedding.max_batch,
            )?;
        }
        let mut batch = new_batch(self.store, &self.settings, &mut self.embedding);
        let mut triggered = Vec::new();
        for (record, event) in &decoded {
            self.clock.observe(event.occurred_at().timestamp_millis());
            let now = self.clock.now();
            if self.schedule.next_due(now).is_some() {
                // Commit what came before, then run the users now due.
                summary.near_duplicates += batch.near_duplicates();
                let committed = commit(batch);
                self.emit_committed(committed, sink, &mut summary)?;
                self.run_scheduled(now, sink, &mut summary)?;
                batch = new_batch(self.store, &self.settings, &mut self.embedding);
            }
            let position = Position {
                stream: record.stream.clone(),
                offset: record.offset,
            };
            match batch.apply(&position, event, self.clock.now())? {
                Disposition::Applied(event_type) => {
                    *summary
                        .applied
                        .entry(event_type.name().to_owned())
                        .or_default() += 1;
                }
                Disposition::Replayed => summary.replayed += 1,
                Disposition::Rejected { kind, reason } => {
                    *summary.rejected.entry(kind.to_owned()).or_default() += 1;
                    dead_letters.push((
                        record.offset,
                        dead_letter(record, kind, &reason, self.clock.now()),
                    ));
                }
            }
            if let Some(state) = event.user_id().and_then(|user| batch.user_state(user)) {
                self.schedule.update(state);
            }
            if batch.cycle_due() {
                // Commit up to the triggering event, then run the cycles.
                triggered.clear();
                triggered.extend(batch.triggered_users());
                summary.near_duplicates += batch.near_duplicates();
                let committed = commit(batch);
                self.emit_committed(committed, sink, &mut summary)?;
                for user_id in &triggered {
                    self.run_pending(user_id, sink, &mut summary)?;
                    self.refresh_schedule(user_id)?;
                }
                batch = new_batch(self.store, &self.settings, &mut self.embedding);
            }
        }
        summary.near_duplicates += batch.near_duplicates();
        let committed = commit(batch);
        self.emit_committed(committed, sink, &mut summary)?;
        // In input order, whichever stage rejected them.
        dead_letters.sort_by_key(|(offset, _)| *offset);
        for (_, event) in &dead_letters {
            sink.emit(event).map_err(PipelineError::Output)?;
        }
        sink.flush().map_err(PipelineError::Output)?;
        Ok((done, summary))
    }

    /// Writes a committed batch's outputs (none for an empty batch).
    fn emit_committed(
        &mut self,
        committed: Option<Result<Vec<Event>, StoreError>>,
        sink: &mut JsonLinesSink<'_>,
        summary: &mut RunSummary,
    ) -> Result<(), PipelineError> {
        let Some(committed) = committed else {
            return Ok(());
        };
        if committed.is_err()
            && let Some(embedding) = &mut self.embedding
        {
            // The indexes hold this batch's memories, which are not stored.
            embedding.indexes.clear();
        }
        for event in &committed? {
            sink.emit(event).map_err(PipelineError::Output)?;
        }
        summary.batches += 1;
        Ok(())
    }

    /// Runs a user's pending cycles, oldest first, each in its own transaction.
    fn run_pending(
        &mut self,
        user_id: &str,
        sink: &mut JsonLinesSink<'_>,
        summary: &mut RunSummary,
    ) -> Result<(), PipelineError> {
        let Some(state) = self.store.user_state(user_id)? else {
            return Ok(());
        };
        for PendingRun {
            run_id,
            trigger,
            mode,
            now,
        } in state.cycle.pending_runs
        {
            let request = CycleRequest {
                user_id: user_id.to_owned(),
                run_id,
                trigger,
                mode,
                now,
            };
            let embedder = self.embedding.as_ref().map(|e| (e.embedder, e.sub_batch));
            let output = run_cycle(self.store, &request, &self.settings, embedder)?;
            if let Some(embedding) = &mut self.embedding
                && mode == RunMode::Execute
            {
                // Statuses changed and memories were added: reload on next use.
                embedding.indexes.forget(user_id);
            }
            *summary
                .cycles
                .entry(trigger_name(trigger).to_owned())
                .or_default() += 1;
            if output.fresh && output.report.executed {
                for action in &output.report.actions {
                    *summary
                        .actions
                        .entry(action.action_type.as_str().to_owned())
                        .or_default() += 1;
                }
            }
            for event in &output.events {
                sink.emit(event).map_err(PipelineError::Output)?;
            }
        }
        Ok(())
    }

    /// Runs every scheduled cycle due at or before `now`, earliest first,
    /// each with "now" at its due time.
    fn run_scheduled(
        &mut self,
        now: Millis,
        sink: &mut JsonLinesSink<'_>,
        summary: &mut RunSummary,
    ) -> Result<(), PipelineError> {
        while let Some((due, user_id)) = self.schedule.next_due(now) {
            let Some(mut state) = self.store.user_state(&user_id)? else {
                self.schedule.remove(&user_id);
                continue;
            };
            let previous = state.last_run_id.clone().unwrap_or_default();
            state.cycle.pending_runs.push(PendingRun {
                run_id: derived_id(&[&user_id, "schedule", &due.to_string(), &previous]),
                trigger: TriggerReason::Schedule,
                mode: RunMode::Execute,
                now: due,
            });
            let mut batch = crate::store::WriteBatch::default();
            batch.push(crate::store::Write::PutUserState(state));
            self.store.commit(&batch)?;
            self.run_pending(&user_id, sink, summary)?;
            self.refresh_schedule(&user_id)?;
            if self.schedule.next_due(now) == Some((due, user_id.clone())) {
                // Not cleared by its cycle; never loop on it.
                self.schedule.remove(&user_id);
            }
        }
        Ok(())
    }

    /// Re-reads a user's schedule from the store.
    fn refresh_schedule(&mut self, user_id: &str) -> Result<(), PipelineError> {
        match self.store.user_state(user_id)? {
            Some(state) => self.schedule.update(&state),
            None => self.schedule.remove(user_id),
        }
        Ok(())
    }

    /// Reads up to a batch of records; `true` at the end of input.
    fn read_batch<R: BufRead>(
        &self,
        source: &mut LineSource<R>,
        summary: &mut RunSummary,
    ) -> Result<(Vec<SourceRecord>, bool), PipelineError> {
        let mut records = Vec::with_capacity(self.batch_size.min(4096));
        while records.len() < self.batch_size {
            let Some(record) = source.next_record().map_err(PipelineError::Input)? else {
                return Ok((records, true));
            };
            summary.records += 1;
            records.push(record);
        }
        Ok((records, false))
    }

    fn decode(&self, record: &SourceRecord) -> Result<Event, DecodeError> {
        match record.oversize {
            Some(size) => Err(DecodeError::EventTooLarge {
                size,
                limit: self.codec.limits().max_event_bytes,
            }),
            None => self.codec.decode_json(&record.payload),
        }
    }
}

/// Commits a non-empty batch.
fn commit(batch: StateBatch<'_>) -> Option<Result<Vec<Event>, StoreError>> {
    (!batch.is_empty()).then(|| batch.commit())
}

fn new_batch<'b>(
    store: &'b dyn Store,
    settings: &'b CycleSettings,
    embedding: &'b mut Option<Embedding<'_>>,
) -> StateBatch<'b> {
    let batch = StateBatch::new(store, settings);
    match embedding {
        Some(embedding) => batch.with_indexes(&mut embedding.indexes),
        None => batch,
    }
}

fn trigger_name(trigger: TriggerReason) -> &'static str {
    match trigger {
        TriggerReason::Threshold => "threshold",
        TriggerReason::Schedule => "schedule",
        TriggerReason::Manual => "manual",
        TriggerReason::Capacity => "capacity",
    }
}

fn merge(total: &mut RunSummary, part: RunSummary) {
    total.records += part.records;
    total.replayed += part.replayed;
    total.batches += part.batches;
    total.near_duplicates += part.near_duplicates;
    total.embeddings.add(part.embeddings);
    for (key, count) in part.applied {
        *total.applied.entry(key).or_default() += count;
    }
    for (key, count) in part.rejected {
        *total.rejected.entry(key).or_default() += count;
    }
    for (key, count) in part.cycles {
        *total.cycles.entry(key).or_default() += count;
    }
    for (key, count) in part.actions {
        *total.actions.entry(key).or_default() += count;
    }
}

/// The dead letter for a record; its id is derived from the record's position
/// so a replay produces the same id.
pub fn dead_letter(record: &SourceRecord, kind: &str, reason: &str, now: Millis) -> Event {
    let partition = record.partition.map(|p| p.to_string()).unwrap_or_default();
    Event::DeadLetter(DeadLetter {
        event_id: derived_id(&[
            "dlq",
            &record.stream,
            &partition,
            &record.offset.to_string(),
        ]),
        source_topic: record.stream.clone(),
        partition: record.partition,
        offset: record.offset,
        error_kind: kind.to_owned(),
        reason: reason.to_owned(),
        original: record.payload.clone(),
        rejected_at: DateTime::from_timestamp_millis(now).unwrap_or_default(),
    })
}
