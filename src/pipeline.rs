//! The engine of both modes: records → decode → embed → state → cycle → emit, with
//! batched, atomic commits and dead letters for bad input.

use std::collections::BTreeMap;
use std::fmt;
use std::io::{self, BufRead};
use std::sync::Arc;

use chrono::DateTime;
use thiserror::Error;
use tokio::runtime::Handle;
use tokio::sync::Semaphore;

use crate::clock::Clock;
use crate::config::ConsolidationConfig;
use crate::cycle::{CycleError, CycleRequest, CycleSettings, confirm_run, run_cycle_unconfirmed};
use crate::embed::{
    EmbedBatcher, EmbedCounts, EmbedError, Embedder, EmbeddingConfig, MissingEmbeddings, SubBatch,
    brings_text, embed_bucketed,
};
use crate::emit::{OutputSink, SinkError};
use crate::event::{
    DEAD_LETTER_ORIGINAL_MAX, DeadLetter, DecodeError, Event, EventCodec, EventType, WireFormat,
};
use crate::event::{RunMode, TriggerReason};
use crate::ids::derived_id;
use crate::index::UserIndexes;
use crate::model::{Millis, ParkedRead, PendingRun, UserState};
use crate::schedule::Schedule;
use crate::source::{LineSource, SourceRecord};
use crate::state::{Disposition, Parking, Position, StateBatch, WaitClock};
use crate::store::{Store, StoreError};
use crate::text::sha256_hex;
use crate::trigger::{self, automatic_run};

#[derive(Debug, Error)]
pub enum PipelineError {
    #[error("reading input failed")]
    Input(#[source] io::Error),
    #[error("writing output failed")]
    Output(#[source] SinkError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Embed(#[from] EmbedError),
    #[error(transparent)]
    Cycle(#[from] CycleError),
}

impl PipelineError {
    /// Whether running the same step again may succeed; the worker retries
    /// only those and stops its partition on the others.
    pub fn is_transient(&self) -> bool {
        match self {
            Self::Input(_) => true,
            Self::Output(error) => error.is_transient(),
            Self::Store(error) => error.is_transient(),
            Self::Embed(error) => error.is_transient(),
            Self::Cycle(error) => error.is_transient(),
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
    /// Reads that arrived before their memory and now wait for it.
    pub parked: u64,
    /// Parked reads applied when their memory was created.
    pub unparked: u64,
    /// Rejected records by reason kind (all went to the dead-letter output).
    pub rejected: BTreeMap<String, u64>,
    /// Valid events with nothing to do, by kind (an edit or deletion of a
    /// memory engram does not have, a stale edit, a repeated erasure).
    pub ignored: BTreeMap<String, u64>,
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
            "  reads parked      {:>8}  (before their memory; {} applied when it came)",
            self.parked, self.unparked
        )?;
        writeln!(
            f,
            "  rejected          {:>8}  (sent to the dead-letter output)",
            self.rejected_total()
        )?;
        for (kind, count) in &self.rejected {
            writeln!(f, "    {kind:<26}{count:>6}")?;
        }
        if !self.ignored.is_empty() {
            writeln!(
                f,
                "  ignored           {:>8}  (nothing to do; counted, not dead-lettered)",
                self.ignored.values().sum::<u64>()
            )?;
            for (kind, count) in &self.ignored {
                writeln!(f, "    {kind:<26}{count:>6}")?;
            }
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

/// How records become events.
#[derive(Debug, Clone, Default)]
pub enum Decoding {
    /// One JSON object per record with a `type` field (files and stdin).
    #[default]
    JsonLines,
    /// Broker messages: the input types each topic carries, and the format
    /// (`None`: Avro when a message has the single-object marker, else JSON).
    Topics {
        format: Option<WireFormat>,
        carried: Arc<BTreeMap<String, Vec<EventType>>>,
    },
}

/// The pipeline over one store: the engine of both modes.
pub struct Pipeline<'a> {
    codec: &'a EventCodec,
    decoding: Decoding,
    store: &'a dyn Store,
    settings: CycleSettings,
    batch_size: usize,
    clock: Clock,
    embedding: Option<Embedding<'a>>,
    schedule: Schedule,
    cycle_limit: Option<CycleLimit>,
    parking: Parking,
    /// Users with parked reads, and when their oldest was parked (by
    /// stream time, and by the wall clock).
    parked_since: BTreeMap<String, (Millis, Millis)>,
}

/// The embedder and what goes with it.
struct Embedding<'a> {
    texts: TextEmbedder<'a>,
    indexes: UserIndexes,
}

/// At most this many cycles run at once across the pipelines sharing it.
struct CycleLimit {
    permits: Arc<Semaphore>,
    runtime: Handle,
}

/// The users a pipeline is the writer of, whom it picks up from the store
/// when it (re)starts.
#[derive(Debug, Clone)]
pub enum Owned {
    /// Every stored user (embedded mode: one pipeline owns the store).
    All,
    /// The users whose events came through `partition` of these input
    /// streams (service mode: one worker per partition).
    Partition {
        streams: Vec<String>,
        partition: i32,
    },
}

impl Owned {
    /// The stored state of the owned users who have a cycle pending, a
    /// change since their last cycle or reads parked (they need the
    /// schedule). Embedded mode takes every user, as before: its schedule
    /// covers them all. A partition's worker asks the store's index of
    /// waiting users, so an assignment or a retry reads its own users only.
    fn waiting_users(&self, store: &dyn Store) -> Result<Vec<UserState>, PipelineError> {
        let (candidates, sources) = match self {
            Owned::All => (store.users()?, None),
            Owned::Partition { streams, partition } => {
                let sources: Vec<String> =
                    streams.iter().map(|t| format!("{t}/{partition}")).collect();
                (store.waiting_users(&sources)?, Some(sources))
            }
        };
        let mut states = Vec::new();
        for user_id in candidates {
            let Some(state) = store.user_state(&user_id)? else {
                continue;
            };
            // The index may list a few users that no longer wait (a store
            // upgraded from before it): the state decides.
            let ours = sources.as_ref().is_none_or(|sources| {
                state.is_waiting()
                    && sources
                        .iter()
                        .any(|s| state.applied_offsets.contains_key(s))
            });
            if ours {
                states.push(state);
            }
        }
        Ok(states)
    }
}

impl<'a> Pipeline<'a> {
    pub fn new(
        codec: &'a EventCodec,
        store: &'a dyn Store,
        settings: CycleSettings,
        batch_size: usize,
        clock: Clock,
    ) -> Self {
        let wall_clock = !clock.is_stream_time();
        Self {
            codec,
            decoding: Decoding::JsonLines,
            store,
            batch_size: batch_size.max(1),
            schedule: schedule(&settings.consolidation),
            settings,
            clock,
            embedding: None,
            cycle_limit: None,
            parking: Parking::from_limits(codec.limits(), wall_clock),
            parked_since: BTreeMap::new(),
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
            texts: TextEmbedder {
                embedder,
                sub_batch: config.sub_batch(),
                max_batch: config.max_batch,
                batcher: None,
            },
            indexes,
        });
        self
    }

    /// Sends new memories' texts through a shared micro-batcher instead of
    /// calling the model directly. The pipeline then blocks on `runtime`, so
    /// it must run on a thread of its own, not on one of the runtime's.
    pub fn with_batcher(mut self, batcher: EmbedBatcher, runtime: Handle) -> Self {
        if let Some(embedding) = &mut self.embedding {
            embedding.texts.batcher = Some((batcher, runtime));
        }
        self
    }

    pub fn with_decoding(mut self, decoding: Decoding) -> Self {
        self.decoding = decoding;
        self
    }

    /// Bounds the cycles running at once across every pipeline sharing
    /// `permits` (blocking on `runtime` while waiting, as above).
    pub fn with_cycle_limit(mut self, permits: Arc<Semaphore>, runtime: Handle) -> Self {
        self.cycle_limit = Some(CycleLimit { permits, runtime });
        self
    }

    /// Runs until the end of input, `batch_size` records at a time (see
    /// [`Pipeline::process`]).
    pub fn run<R: BufRead>(
        &mut self,
        source: &mut LineSource<R>,
        sink: &mut dyn OutputSink,
    ) -> Result<RunSummary, PipelineError> {
        let mut summary = self.recover(&Owned::All, sink)?;
        loop {
            let mut part = RunSummary::default();
            let (records, done) = self.read_batch(source, &mut part)?;
            merge(&mut part, self.process(records, sink)?);
            merge(&mut summary, part);
            if done {
                break;
            }
        }
        Ok(summary)
    }

    /// The one way back to a known state, at start-up, when a partition is
    /// assigned, and after any failed step before it is tried again: picks
    /// up the users this pipeline `owns` from the store, runs the cycles a
    /// crash (or the failed step) left triggered but not finished, and learns
    /// when each is next due. (What the failed step had learnt in memory was
    /// already forgotten when it failed.)
    pub fn recover(
        &mut self,
        owned: &Owned,
        sink: &mut dyn OutputSink,
    ) -> Result<RunSummary, PipelineError> {
        let states = owned.waiting_users(self.store)?;
        let mut summary = RunSummary::default();
        for state in states {
            track_parked(&mut self.parked_since, &state);
            if state.cycle.pending_runs.is_empty() {
                self.schedule.update(&state);
                continue;
            }
            let user_id = state.user_id;
            self.run_runs(&user_id, state.cycle.pending_runs, sink, &mut summary)?;
            self.refresh_schedule(&user_id)?;
        }
        self.expire_parked_reads(false, sink, &mut summary)?;
        Ok(summary)
    }

    /// Runs the scheduled cycles due by the clock's "now" (the service's
    /// timer; with input flowing they also run between events), and ages
    /// out parked reads. `caught_up` says the caller has read all of its
    /// input there is: with the wall clock, parked reads then age by it too,
    /// as nothing earlier is left to read.
    /// After an error, as [`Pipeline::process`]: recover, then call again.
    pub fn run_due(
        &mut self,
        caught_up: bool,
        sink: &mut dyn OutputSink,
    ) -> Result<RunSummary, PipelineError> {
        self.forgetting_a_failure(|pipeline| pipeline.run_due_cycles(caught_up, sink))
    }

    fn run_due_cycles(
        &mut self,
        caught_up: bool,
        sink: &mut dyn OutputSink,
    ) -> Result<RunSummary, PipelineError> {
        let mut summary = RunSummary::default();
        // Stream time stands still between events; before the first one it
        // is unknown, and the wall clock would run every cycle early.
        let Some(now) = self.clock.known_now() else {
            return Ok(summary);
        };
        if self.schedule.next_due(now).is_some() {
            self.run_scheduled(now, sink, &mut summary)?;
            sink.flush().map_err(PipelineError::Output)?;
        }
        self.expire_parked_reads(caught_up, sink, &mut summary)?;
        Ok(summary)
    }

    /// The clocks parked reads age by: stream time, how far this
    /// pipeline's input has got (unknown after a restart until an event
    /// applies, so an outage ages nothing). A wall-clock pipeline that has
    /// read all of its input there is ages them by the wall clock too.
    fn parked_reads_clock(&self, caught_up: bool) -> WaitClock {
        WaitClock {
            stream: self.clock.stream_now(),
            wall: (caught_up && !self.clock.is_stream_time()).then(|| self.clock.now()),
        }
    }

    /// Dead-letters the parked reads that waited their full time, for
    /// users with no event since to do it.
    fn expire_parked_reads(
        &mut self,
        caught_up: bool,
        sink: &mut dyn OutputSink,
        summary: &mut RunSummary,
    ) -> Result<(), PipelineError> {
        let waits = self.parked_reads_clock(caught_up);
        if waits.is_stopped() {
            return Ok(());
        }
        let max_age = self.parking.max_age_ms;
        let due: Vec<String> = self
            .parked_since
            .iter()
            .filter(|(_, (stream, wall))| waits.waited(*stream, *wall, max_age))
            .map(|(user_id, _)| user_id.clone())
            .collect();
        if due.is_empty() {
            return Ok(());
        }
        let mut batch = new_batch(
            self.store,
            &self.settings,
            &mut self.embedding,
            self.parking,
        );
        let mut letters = Vec::new();
        let rejected_at = self.clock.now();
        for user_id in &due {
            batch.expire_parked(user_id, waits)?;
            letters.extend(Self::expired_letters(
                self.codec,
                self.parking,
                batch.take_expired(),
                rejected_at,
                0,
                summary,
            ));
        }
        let states: Vec<UserState> = due
            .iter()
            .filter_map(|user_id| batch.user_state(user_id).cloned())
            .collect();
        summary.outputs += emit_dead_letters(&mut letters, usize::MAX, sink)?;
        let committed = commit(batch);
        self.emit_committed(committed, sink, summary)?;
        for state in &states {
            track_parked(&mut self.parked_since, state);
        }
        sink.flush().map_err(PipelineError::Output)
    }

    /// The dead letters of parked reads that aged out, placed at `index`
    /// among the batch's records.
    fn expired_letters(
        codec: &EventCodec,
        parking: Parking,
        expired: Vec<ParkedRead>,
        now: Millis,
        index: usize,
        summary: &mut RunSummary,
    ) -> Vec<(usize, Event)> {
        expired
            .into_iter()
            .map(|parked| {
                count(&mut summary.rejected, "unknown_memory");
                let reason = format!(
                    "memory {} was not created within {} s of the read \
                     (limits.max_parked_read_age)",
                    parked.read.memory_id,
                    parking.max_age_ms / 1_000
                );
                let record = SourceRecord {
                    stream: parked.stream,
                    partition: parked.partition,
                    offset: parked.offset,
                    // The read as engram kept it, re-encoded as JSON.
                    payload: codec.encode_json(&Event::MemoryAccessed(parked.read)),
                    oversize: None,
                };
                (index, dead_letter(&record, "unknown_memory", &reason, now))
            })
            .collect()
    }

    /// Decodes, embeds and applies a batch of records in order, committing
    /// before each cycle and at the end. Dead letters are written, in input
    /// order, before the commit that makes their records count as applied.
    ///
    /// After an error nothing of the failed stage is stored, and the
    /// pipeline forgets what it learnt from the batch (the stream clock goes
    /// back; the schedule and vector indexes are dropped), as if it had just
    /// started: [`Pipeline::recover`] the users from the store, then process
    /// the same records again, and the outcome is that of one clean pass.
    pub fn process(
        &mut self,
        records: Vec<SourceRecord>,
        sink: &mut dyn OutputSink,
    ) -> Result<RunSummary, PipelineError> {
        self.forgetting_a_failure(|pipeline| pipeline.apply_records(records, sink))
    }

    /// Runs `attempt`; if it fails, goes back to what a fresh start would
    /// know, with the stream clock as it was before the attempt: time
    /// observed in it would run cycles before events that precede them, the
    /// schedule may name users whose cycle did run, and the vector indexes
    /// may hold memories that were never stored.
    fn forgetting_a_failure(
        &mut self,
        attempt: impl FnOnce(&mut Self) -> Result<RunSummary, PipelineError>,
    ) -> Result<RunSummary, PipelineError> {
        let clock = self.clock.clone();
        let result = attempt(self);
        if result.is_err() {
            self.clock = clock;
            self.schedule = schedule(&self.settings.consolidation);
            if let Some(embedding) = &mut self.embedding {
                embedding.indexes.clear();
            }
        }
        result
    }

    fn apply_records(
        &mut self,
        records: Vec<SourceRecord>,
        sink: &mut dyn OutputSink,
    ) -> Result<RunSummary, PipelineError> {
        let decoded = records
            .into_iter()
            .map(|record| {
                let event = self.decode(&record);
                (record, event)
            })
            .collect();
        self.apply_decoded(decoded, sink)
    }

    /// [`Pipeline::process`] for records the caller already decoded with
    /// [`Pipeline::decode`] (a partition worker decodes to order its topics).
    pub fn process_decoded(
        &mut self,
        records: Vec<(SourceRecord, Result<Event, DecodeError>)>,
        sink: &mut dyn OutputSink,
    ) -> Result<RunSummary, PipelineError> {
        self.forgetting_a_failure(|pipeline| pipeline.apply_decoded(records, sink))
    }

    fn apply_decoded(
        &mut self,
        records: Vec<(SourceRecord, Result<Event, DecodeError>)>,
        sink: &mut dyn OutputSink,
    ) -> Result<RunSummary, PipelineError> {
        let mut summary = RunSummary::default();
        // (position in the batch, dead letter)
        let mut dead_letters: Vec<(usize, Event)> = Vec::new();
        let mut decoded = Vec::with_capacity(records.len());
        for (index, (record, event)) in records.into_iter().enumerate() {
            match event {
                Ok(event) => decoded.push((index, record, event)),
                Err(error) => {
                    count(&mut summary.rejected, error.kind());
                    let letter =
                        dead_letter(&record, error.kind(), &error.to_string(), self.clock.now());
                    dead_letters.push((index, letter));
                }
            }
        }
        // A copy, so texts can be embedded while the batch holds the indexes.
        let text_embedder = self.embedding.as_ref().map(|e| e.texts.clone());
        let mut batch = new_batch(
            self.store,
            &self.settings,
            &mut self.embedding,
            self.parking,
        );
        batch.prefetch(decoded.iter().map(|(_, _, event)| event))?;
        if let Some(embedder) = &text_embedder {
            // Replays and an erased user's refused events need no vector.
            let mut new_texts = Vec::new();
            for (_, record, event) in decoded.iter_mut() {
                if brings_text(event) && batch.is_new(&position_of(record), event)? {
                    new_texts.push(event);
                }
            }
            summary.embeddings = embed_new_texts(self.store, embedder, &mut new_texts)?;
        }
        let mut triggered = Vec::new();
        for (index, record, event) in &decoded {
            // Time moves with events that will be applied only: a read of a
            // memory that does not exist must not make cycles due.
            let position = position_of(record);
            if batch.is_applicable(&position, event)? {
                self.clock.observe(event.occurred_at().timestamp_millis());
            }
            let now = self.clock.now();
            if self.schedule.next_due(now).is_some() {
                // Commit what came before, then run the users now due.
                tally(&batch, &mut summary);
                summary.outputs += emit_dead_letters(&mut dead_letters, *index, sink)?;
                let committed = commit(batch);
                self.emit_committed(committed, sink, &mut summary)?;
                self.run_scheduled(now, sink, &mut summary)?;
                batch = new_batch(
                    self.store,
                    &self.settings,
                    &mut self.embedding,
                    self.parking,
                );
            }
            match batch.apply(&position, event, self.clock.now(), self.clock.stream_now())? {
                Disposition::Applied(event_type) => count(&mut summary.applied, event_type.name()),
                Disposition::Parked => summary.parked += 1,
                Disposition::Replayed => summary.replayed += 1,
                Disposition::Rejected { kind, reason } => {
                    count(&mut summary.rejected, kind);
                    let letter = if kind == "erased_user" {
                        // What an erased user's late event says is not
                        // copied anywhere, the dead-letter topic included.
                        dead_letter_without_content(record, kind, &reason, self.clock.now())
                    } else {
                        dead_letter(record, kind, &reason, self.clock.now())
                    };
                    dead_letters.push((*index, letter));
                }
                Disposition::Ignored { kind, reason } => {
                    count(&mut summary.ignored, kind);
                    tracing::debug!(kind, %reason, "input event ignored");
                }
            }
            // Confirmations go out with the dead letters, before the commit.
            dead_letters.extend(
                batch
                    .take_notices()
                    .into_iter()
                    .map(|notice| (*index, notice)),
            );
            // Texts engram rebuilt (a deletion or edit of what they came
            // from) get their vectors before they are stored.
            let rebuilt = batch.rebuilt_without_vectors();
            if let (false, Some(embedder)) = (rebuilt.is_empty(), &text_embedder) {
                let texts = rebuilt.iter().map(|(_, text)| text.clone()).collect();
                let vectors = embedder.embed(texts)?;
                for ((key, _), vector) in rebuilt.into_iter().zip(vectors) {
                    batch.set_vector(&key, vector);
                }
            }
            let expired = batch.take_expired();
            if !expired.is_empty() {
                let now = self.clock.now();
                dead_letters.extend(Self::expired_letters(
                    self.codec,
                    self.parking,
                    expired,
                    now,
                    *index,
                    &mut summary,
                ));
            }
            if let Some(state) = event.user_id().and_then(|user| batch.user_state(user)) {
                self.schedule.update(state);
                track_parked(&mut self.parked_since, state);
            }
            if batch.cycle_due() {
                // Commit up to the triggering event, then run the cycles.
                triggered.clear();
                triggered.extend(batch.triggered_users());
                tally(&batch, &mut summary);
                summary.outputs += emit_dead_letters(&mut dead_letters, index + 1, sink)?;
                let committed = commit(batch);
                self.emit_committed(committed, sink, &mut summary)?;
                for user_id in &triggered {
                    self.run_pending(user_id, sink, &mut summary)?;
                    self.refresh_schedule(user_id)?;
                }
                batch = new_batch(
                    self.store,
                    &self.settings,
                    &mut self.embedding,
                    self.parking,
                );
            }
        }
        tally(&batch, &mut summary);
        summary.outputs += emit_dead_letters(&mut dead_letters, usize::MAX, sink)?;
        let committed = commit(batch);
        self.emit_committed(committed, sink, &mut summary)?;
        // Users with reads parked and no event since: stream time moved on
        // for them too, and a busy partition may never be idle.
        self.expire_parked_reads(false, sink, &mut summary)?;
        sink.flush().map_err(PipelineError::Output)?;
        Ok(summary)
    }

    /// Writes a committed batch's outputs (none for an empty batch).
    fn emit_committed(
        &mut self,
        committed: Option<Result<Vec<Event>, StoreError>>,
        sink: &mut dyn OutputSink,
        summary: &mut RunSummary,
    ) -> Result<(), PipelineError> {
        let Some(committed) = committed else {
            return Ok(());
        };
        // On a failed commit, `process` forgets the indexes that hold this
        // batch's memories.
        for event in &committed? {
            sink.emit(event).map_err(PipelineError::Output)?;
            summary.outputs += 1;
        }
        summary.batches += 1;
        Ok(())
    }

    /// Runs a user's pending cycles, oldest first, each in its own
    /// transaction. A run leaves the pending list only once its events are
    /// out, so a crash in between runs it again (re-emitting its report).
    fn run_pending(
        &mut self,
        user_id: &str,
        sink: &mut dyn OutputSink,
        summary: &mut RunSummary,
    ) -> Result<(), PipelineError> {
        match self.store.user_state(user_id)? {
            Some(state) => self.run_runs(user_id, state.cycle.pending_runs, sink, summary),
            None => Ok(()),
        }
    }

    /// Runs these pending runs of a user, in order (see [`Self::run_pending`]).
    fn run_runs(
        &mut self,
        user_id: &str,
        runs: Vec<PendingRun>,
        sink: &mut dyn OutputSink,
        summary: &mut RunSummary,
    ) -> Result<(), PipelineError> {
        for PendingRun {
            run_id,
            trigger,
            mode,
            now,
        } in runs
        {
            let request = CycleRequest {
                user_id: user_id.to_owned(),
                run_id,
                trigger,
                mode,
                now,
            };
            let embedder = self
                .embedding
                .as_ref()
                .map(|e| (e.texts.embedder, e.texts.sub_batch));
            let permit = self.cycle_limit.as_ref().and_then(|limit| {
                limit
                    .runtime
                    .block_on(Arc::clone(&limit.permits).acquire_owned())
                    .ok()
            });
            let output = run_cycle_unconfirmed(self.store, &request, &self.settings, embedder)?;
            drop(permit);
            if let Some(embedding) = &mut self.embedding
                && mode == RunMode::Execute
            {
                // Statuses changed and memories were added: reload on next use.
                embedding.indexes.forget(user_id);
            }
            count(&mut summary.cycles, trigger_name(trigger));
            if output.fresh && output.report.executed {
                for action in &output.report.actions {
                    count(&mut summary.actions, action.action_type.as_str());
                }
            }
            for event in &output.events {
                sink.emit(event).map_err(PipelineError::Output)?;
                summary.outputs += 1;
            }
            sink.flush().map_err(PipelineError::Output)?;
            confirm_run(self.store, &request)?;
        }
        Ok(())
    }

    /// Runs every scheduled cycle due at or before `now`, earliest first,
    /// each with "now" at its due time.
    fn run_scheduled(
        &mut self,
        now: Millis,
        sink: &mut dyn OutputSink,
        summary: &mut RunSummary,
    ) -> Result<(), PipelineError> {
        while let Some((due, user_id)) = self.schedule.next_due(now) {
            let Some(mut state) = self.store.user_state(&user_id)? else {
                self.schedule.remove(&user_id);
                continue;
            };
            let previous = state.last_run_id.clone().unwrap_or_default();
            let run = automatic_run(&user_id, TriggerReason::Schedule, due, &previous);
            trigger::queue(&mut state, run);
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

    /// A record's event, as the input's format and topic say.
    /// Decodes a record and checks its event time against the wall clock,
    /// so that a caller ordering records (a partition worker) sees at once
    /// which ones will be dead letters.
    pub fn decode(&self, record: &SourceRecord) -> Result<Event, DecodeError> {
        if let Some(size) = record.oversize {
            return Err(DecodeError::EventTooLarge {
                size,
                limit: self.codec.limits().max_event_bytes,
            });
        }
        let event = match &self.decoding {
            Decoding::JsonLines => self.codec.decode_json(&record.payload),
            Decoding::Topics { format, carried } => {
                let types = carried.get(&record.stream).map_or(&[][..], Vec::as_slice);
                self.codec
                    .decode_from_topic(&record.payload, *format, types)
            }
        }?;
        let wall_now = chrono::Utc::now().timestamp_millis();
        self.codec.limits().check_event_time(&event, wall_now)?;
        Ok(event)
    }
}

/// Writes the dead letters of records before position `upto`, in input
/// order, and makes sure they are out before the caller commits.
fn emit_dead_letters(
    dead_letters: &mut Vec<(usize, Event)>,
    upto: usize,
    sink: &mut dyn OutputSink,
) -> Result<u64, PipelineError> {
    dead_letters.sort_by_key(|(index, _)| *index);
    let ready = dead_letters.partition_point(|(index, _)| *index < upto);
    if ready == 0 {
        return Ok(0);
    }
    for (_, letter) in dead_letters.drain(..ready) {
        sink.emit(&letter).map_err(PipelineError::Output)?;
    }
    sink.flush().map_err(PipelineError::Output)?;
    Ok(ready as u64)
}

/// What embeds texts for a pipeline: the model, directly or through the
/// shared micro-batcher.
#[derive(Clone)]
struct TextEmbedder<'a> {
    embedder: &'a dyn Embedder,
    sub_batch: SubBatch,
    max_batch: usize,
    /// Shared micro-batcher: new memories of every partition are embedded
    /// together (service mode).
    batcher: Option<(EmbedBatcher, Handle)>,
}

impl TextEmbedder<'_> {
    /// Vectors of `texts`, in order.
    fn embed(&self, texts: Vec<String>) -> Result<Vec<Vec<f32>>, PipelineError> {
        Ok(match &self.batcher {
            Some((batcher, runtime)) => runtime.block_on(batcher.embed_all(texts))?,
            None => {
                let mut vectors = Vec::with_capacity(texts.len());
                for chunk in texts.chunks(self.max_batch.max(1)) {
                    let refs: Vec<&str> = chunk.iter().map(String::as_str).collect();
                    vectors.extend(embed_bucketed(self.embedder, &refs, self.sub_batch)?);
                }
                vectors
            }
        })
    }
}

/// Gives the new texts of `events` (creations, edits) their vectors: the
/// supplied one, one stored for the same text, or the model's.
fn embed_new_texts(
    store: &dyn Store,
    embedder: &TextEmbedder<'_>,
    events: &mut [&mut Event],
) -> Result<EmbedCounts, PipelineError> {
    let missing = MissingEmbeddings::find(store, events)?;
    if missing.is_empty() {
        return Ok(missing.fill(events, Vec::new()));
    }
    let vectors = embedder.embed(missing.texts())?;
    Ok(missing.fill(events, vectors))
}

/// Where a record sits in its stream, as watermarks name it.
fn position_of(record: &SourceRecord) -> Position {
    Position {
        stream: record.position_key(),
        offset: record.offset,
        partition: record.partition,
    }
}

/// Remembers whether (and since when) a user has reads parked.
fn track_parked(parked_since: &mut BTreeMap<String, (Millis, Millis)>, state: &UserState) {
    let reads = &state.parked_reads;
    let oldest_stream = reads.iter().map(|read| read.parked_at).min();
    let oldest_wall = reads.iter().map(ParkedRead::wall_parked_at).min();
    match oldest_stream.zip(oldest_wall) {
        Some(oldest) => parked_since.insert(state.user_id.clone(), oldest),
        None => parked_since.remove(&state.user_id),
    };
}

/// An empty schedule as the consolidation settings configure it.
fn schedule(consolidation: &ConsolidationConfig) -> Schedule {
    Schedule::new(
        consolidation.schedule_interval,
        consolidation.schedule_jitter,
    )
}

/// Counts one event of `kind`, allocating the key only for its first.
fn count(counts: &mut BTreeMap<String, u64>, kind: &str) {
    match counts.get_mut(kind) {
        Some(n) => *n += 1,
        None => {
            counts.insert(kind.to_owned(), 1);
        }
    }
}

/// What a batch counted on the way, before it commits.
fn tally(batch: &StateBatch<'_>, summary: &mut RunSummary) {
    summary.near_duplicates += batch.near_duplicates();
    summary.unparked += batch.unparked();
}

/// Commits a non-empty batch.
fn commit(batch: StateBatch<'_>) -> Option<Result<Vec<Event>, StoreError>> {
    (!batch.is_empty()).then(|| batch.commit())
}

fn new_batch<'b>(
    store: &'b dyn Store,
    settings: &'b CycleSettings,
    embedding: &'b mut Option<Embedding<'_>>,
    parking: Parking,
) -> StateBatch<'b> {
    let batch = StateBatch::new(store, settings).with_parking(parking);
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
    total.outputs += part.outputs;
    total.replayed += part.replayed;
    total.parked += part.parked;
    total.unparked += part.unparked;
    total.batches += part.batches;
    total.near_duplicates += part.near_duplicates;
    total.embeddings.add(part.embeddings);
    for (key, count) in part.applied {
        *total.applied.entry(key).or_default() += count;
    }
    for (key, count) in part.rejected {
        *total.rejected.entry(key).or_default() += count;
    }
    for (key, count) in part.ignored {
        *total.ignored.entry(key).or_default() += count;
    }
    for (key, count) in part.cycles {
        *total.cycles.entry(key).or_default() += count;
    }
    for (key, count) in part.actions {
        *total.actions.entry(key).or_default() += count;
    }
}

/// The most of an error message a dead letter carries. Messages quote the
/// values they refuse (a timestamp, a type): a 990 KB junk value would make
/// a letter the broker refuses, and the record would have no dead letter.
pub const DEAD_LETTER_REASON_MAX: usize = 1024;

/// The most of the error kind and the source topic a dead letter carries
/// (both are short by construction; the bound makes the letter's size
/// independent of its input).
const DEAD_LETTER_NAME_MAX: usize = 256;

/// `text` cut to at most `max` bytes at a character boundary, marked with
/// `…` and the full length when cut.
fn bounded(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let note = format!("… ({} bytes in all)", text.len());
    let mut end = max.saturating_sub(note.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{note}", &text[..end])
}

/// A dead letter that says where the record was and how long, without its
/// bytes (an erased user's late event: its content is not to be kept).
fn dead_letter_without_content(
    record: &SourceRecord,
    kind: &str,
    reason: &str,
    now: Millis,
) -> Event {
    let mut letter = dead_letter(record, kind, reason, now);
    if let Event::DeadLetter(letter) = &mut letter {
        letter.original_length = Some(record.oversize.unwrap_or(record.payload.len()) as i64);
        letter.original = Vec::new();
        letter.original_sha256 = None;
    }
    letter
}

/// The dead letter for a record; its id is derived from the record's position
/// so a replay produces the same id. Every field is bounded, so the letter
/// fits one record whatever the input was.
pub fn dead_letter(record: &SourceRecord, kind: &str, reason: &str, now: Millis) -> Event {
    let length = record.oversize.unwrap_or(record.payload.len());
    let cut = length > record.payload.len() || length > DEAD_LETTER_ORIGINAL_MAX;
    let partition = record.partition.map(|p| p.to_string()).unwrap_or_default();
    Event::DeadLetter(DeadLetter {
        event_id: derived_id(&[
            "dlq",
            &record.stream,
            &partition,
            &record.offset.to_string(),
        ]),
        source_topic: bounded(&record.stream, DEAD_LETTER_NAME_MAX),
        partition: record.partition,
        offset: record.offset,
        error_kind: bounded(kind, DEAD_LETTER_NAME_MAX),
        reason: bounded(reason, DEAD_LETTER_REASON_MAX),
        original: record.payload[..record.payload.len().min(DEAD_LETTER_ORIGINAL_MAX)].to_vec(),
        rejected_at: DateTime::from_timestamp_millis(now).unwrap_or_default(),
        original_length: cut.then_some(length as i64),
        // The source keeps only the start of an oversize line: no digest of
        // bytes engram never saw.
        original_sha256: (cut && record.oversize.is_none()).then(|| sha256_hex(&record.payload)),
    })
}
