//! The engine of both modes: records → decode → embed → state → cycle → emit, with
//! batched, atomic commits and dead letters for bad input.
//!
//! This module is the engine ([`Pipeline`]: batches, decoding, embedding,
//! applying, and `flush_batch`, the one way a batch is closed). Beside it:
//! `cycles` (pending and scheduled runs between events), `parked` (reads
//! that came before their memory, and when they give up), `letters` (dead
//! letters) and `summary` ([`RunSummary`]).

use std::collections::BTreeMap;
use std::io::{self, BufRead};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use thiserror::Error;
use tokio::runtime::Handle;
use tokio::sync::Semaphore;

use crate::clock::Clock;
use crate::cycle::{CycleError, CycleSettings};
use crate::embed::{
    EmbedBatcher, EmbedCounts, EmbedError, Embedder, EmbeddingConfig, MissingEmbeddings, SubBatch,
    brings_text, embed_bucketed,
};
use crate::emit::{OutputSink, SinkError};
use crate::event::{DecodeError, Event, EventCodec, EventType, WireFormat};
use crate::index::UserIndexes;
use crate::model::{Millis, UserState};
use crate::schedule::Schedule;
use crate::source::{LineSource, SourceRecord};
use crate::state::{CarriedSaliences, Disposition, Parking, Position, StateBatch};
use crate::store::{Store, StoreError};

mod cycles;
mod letters;
mod parked;
mod summary;

use cycles::schedule;
pub use letters::{DEAD_LETTER_REASON_MAX, dead_letter};
use letters::{dead_letter_without_content, emit_dead_letters};
use parked::{LetterClock, track_parked};
pub use summary::RunSummary;
use summary::{AppliedTally, count, merge, tally};

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
    /// The wall clock's last reading, for refusing events from the future
    /// (see [`Pipeline::decode`]).
    wall_read: AtomicI64,
    /// The saliences the last batch committed, for the next
    /// ([`Pipeline::carrying_saliences`]); `None`: each batch reads its own.
    carried: Option<CarriedSaliences>,
}

/// An input record and its decoded event, as the caller holds them:
/// [`Pipeline::process_decoded`] reads them in place, so a partition worker
/// hands over its batch without rebuilding it.
pub trait DecodedRecord {
    /// The record, and its event, which embedding may fill in.
    fn parts(&mut self) -> (&SourceRecord, &mut Result<Event, DecodeError>);
    fn record(&self) -> &SourceRecord;
}

impl DecodedRecord for (SourceRecord, Result<Event, DecodeError>) {
    fn parts(&mut self) -> (&SourceRecord, &mut Result<Event, DecodeError>) {
        (&self.0, &mut self.1)
    }

    fn record(&self) -> &SourceRecord {
        &self.0
    }
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
            wall_read: AtomicI64::new(i64::MIN),
            carried: None,
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

    /// Keeps the saliences each batch committed for the next one, so a
    /// memory read in consecutive batches is read from the store once. Only
    /// for a pipeline that is its users' one writer (see
    /// [`CarriedSaliences`]): a service's partition worker.
    pub fn carrying_saliences(mut self) -> Self {
        self.carried = Some(CarriedSaliences::default());
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
        let mut decoded: Vec<_> = records
            .into_iter()
            .map(|record| {
                let event = self.decode(&record);
                (record, event)
            })
            .collect();
        self.apply_decoded(&mut decoded, sink)
    }

    /// [`Pipeline::process`] for records the caller already decoded with
    /// [`Pipeline::decode`] (a partition worker decodes to order its topics).
    /// The records are lent, not given, so a failed attempt can be retried
    /// with the same ones and no copy. An attempt may leave vectors in the
    /// creations it embedded; a retry takes them as the producer's (the
    /// same vectors, counted as supplied) rather than embed them again.
    pub fn process_decoded(
        &mut self,
        records: &mut [impl DecodedRecord],
        sink: &mut dyn OutputSink,
    ) -> Result<RunSummary, PipelineError> {
        self.forgetting_a_failure(|pipeline| pipeline.apply_decoded(records, sink))
    }

    fn apply_decoded(
        &mut self,
        records: &mut [impl DecodedRecord],
        sink: &mut dyn OutputSink,
    ) -> Result<RunSummary, PipelineError> {
        let mut summary = RunSummary::default();
        // (position in the batch, dead letter)
        let mut dead_letters: Vec<(usize, Event)> = Vec::new();
        let positions = PositionKeys::of(records.iter().map(DecodedRecord::record));
        let mut decoded = Vec::with_capacity(records.len());
        for (index, held) in records.iter_mut().enumerate() {
            let (record, event) = held.parts();
            match event {
                Ok(event) => decoded.push((index, record, event)),
                Err(error) => {
                    count(&mut summary.rejected, error.kind());
                    let letter =
                        dead_letter(record, error.kind(), &error.to_string(), self.clock.now());
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
            &mut self.carried,
        );
        batch.prefetch(decoded.iter().map(|(_, _, event)| &**event))?;
        if let Some(embedder) = &text_embedder {
            // Replays and an erased user's refused events need no vector.
            let mut new_texts = Vec::new();
            for (index, record, event) in decoded.iter_mut() {
                if brings_text(event) && batch.is_new(&positions.position(*index, record), event)? {
                    new_texts.push(&mut **event);
                }
            }
            summary.embeddings = embed_new_texts(self.store, embedder, &mut new_texts)?;
        }
        let mut triggered = Vec::new();
        let mut applied = AppliedTally::default();
        // One reading of the wall clock serves the events applied between
        // cycles, which take microseconds each: a reading per event was
        // about 2% of a read's cost. Cycles take time, so it is read again
        // after them.
        let mut wall = Clock::wall();
        for (index, record, event) in &decoded {
            // Time moves with events that will be applied only: a read of a
            // memory that does not exist must not make cycles due.
            let position = positions.position(*index, record);
            if let Event::MemoryAccessed(read) = &**event {
                let (clock, schedule) = (&mut self.clock, &self.schedule);
                let applied_now = batch.apply_common_read(&position, read, || {
                    clock.observe(read.accessed_at.timestamp_millis());
                    let now = clock.now_at(wall);
                    schedule.next_due(now).is_none().then_some(now)
                });
                if let Some(common) = applied_now {
                    applied.add(EventType::MemoryAccessed);
                    // The user's parked reads are none before and after, so
                    // only a first change moves their schedule.
                    if (common.first_change || !self.parked_since.is_empty())
                        && let Some(state) = batch.user_state(&read.user_id)
                    {
                        self.schedule.update(state);
                        track_parked(&mut self.parked_since, state);
                    }
                    continue;
                }
            }
            if batch.is_applicable(&position, event)? {
                self.clock.observe(event.occurred_at().timestamp_millis());
            }
            let mut now = self.clock.now_at(wall);
            if self.schedule.next_due(now).is_some() {
                // Commit what came before, then run the users now due.
                flush_batch(
                    batch,
                    &mut self.carried,
                    &mut dead_letters,
                    *index,
                    sink,
                    &mut summary,
                )?;
                self.run_scheduled(now, sink, &mut summary)?;
                batch = new_batch(
                    self.store,
                    &self.settings,
                    &mut self.embedding,
                    self.parking,
                    &mut self.carried,
                );
                wall = Clock::wall();
                now = self.clock.now_at(wall);
            }
            match batch.apply(&position, event, now, self.clock.stream_now())? {
                Disposition::Applied(event_type) => applied.add(event_type),
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
                dead_letters.extend(Self::expired_letters(
                    self.codec,
                    self.parking,
                    expired,
                    LetterClock::of(&self.clock),
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
                flush_batch(
                    batch,
                    &mut self.carried,
                    &mut dead_letters,
                    index + 1,
                    sink,
                    &mut summary,
                )?;
                for user_id in &triggered {
                    self.run_pending(user_id, sink, &mut summary)?;
                    self.refresh_schedule(user_id)?;
                }
                batch = new_batch(
                    self.store,
                    &self.settings,
                    &mut self.embedding,
                    self.parking,
                    &mut self.carried,
                );
                wall = Clock::wall();
            }
        }
        flush_batch(
            batch,
            &mut self.carried,
            &mut dead_letters,
            usize::MAX,
            sink,
            &mut summary,
        )?;
        applied.add_to(&mut summary);
        // Users with reads parked and no event since: stream time moved on
        // for them too, and a busy partition may never be idle.
        self.expire_parked_reads(false, sink, &mut summary)?;
        sink.flush().map_err(PipelineError::Output)?;
        Ok(summary)
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
        self.decode_carrying(record, self.carried_by(&record.stream))
    }

    /// The input types topic `stream` carries (none for files and stdin,
    /// whose events name their type).
    pub fn carried_by(&self, stream: &str) -> &[EventType] {
        match &self.decoding {
            Decoding::JsonLines => &[],
            Decoding::Topics { carried, .. } => carried.get(stream).map_or(&[][..], Vec::as_slice),
        }
    }

    /// [`decode`](Self::decode) for a record of a topic that carries
    /// `carried` ([`carried_by`](Self::carried_by)): a partition worker
    /// looks its topics' types up once, not for every record.
    pub fn decode_carrying(
        &self,
        record: &SourceRecord,
        carried: &[EventType],
    ) -> Result<Event, DecodeError> {
        if let Some(size) = record.oversize {
            return Err(DecodeError::EventTooLarge {
                size,
                limit: self.codec.limits().max_event_bytes,
            });
        }
        let event = match &self.decoding {
            Decoding::JsonLines => self.codec.decode_json_payload(&record.payload),
            Decoding::Topics { format, .. } => {
                self.codec
                    .decode_from_topic(&record.payload, *format, carried)
            }
        }?;
        // The clock is read again only for an event later than the last
        // reading allows: it moves forward, so an event within the skew of
        // an earlier reading is within it now. (A reading per record was a
        // twentieth of an access event's cost.)
        let limits = self.codec.limits();
        let time = event.occurred_at().timestamp_millis();
        if !limits.is_within_skew(time, self.wall_read.load(Ordering::Relaxed)) {
            let wall_now = chrono::Utc::now().timestamp_millis();
            self.wall_read.store(wall_now, Ordering::Relaxed);
            limits.check_event_time(&event, wall_now)?;
        }
        Ok(event)
    }
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

/// The watermark keys (`topic/partition`) of a batch's records, each made
/// once per batch: a batch comes from a few streams, and a key made per
/// record was an allocation and a format on every event.
struct PositionKeys {
    keys: Vec<String>,
    /// For each record of the batch, in order, the index of its key.
    of_record: Vec<usize>,
}

impl PositionKeys {
    fn of<'r>(records: impl IntoIterator<Item = &'r SourceRecord>) -> Self {
        let mut streams: Vec<(&str, Option<i32>)> = Vec::new();
        let mut keys = Vec::new();
        let mut of_record = Vec::new();
        for record in records {
            let stream = (&*record.stream, record.partition);
            // A worker's records share their topic's name: the address
            // answers before the bytes are compared.
            let same = |known: &(&str, Option<i32>)| {
                known.1 == stream.1 && (std::ptr::eq(known.0, stream.0) || known.0 == stream.0)
            };
            let index = match streams.iter().position(same) {
                Some(index) => index,
                None => {
                    streams.push(stream);
                    keys.push(record.position_key());
                    keys.len() - 1
                }
            };
            of_record.push(index);
        }
        Self { keys, of_record }
    }

    /// Where the batch's record number `index` sits in its stream, as
    /// watermarks name it.
    fn position<'k>(&'k self, index: usize, record: &SourceRecord) -> Position<'k> {
        Position {
            stream: &self.keys[self.of_record[index]],
            offset: record.offset,
            partition: record.partition,
        }
    }
}

/// Closes a batch: counts what it tallied, writes the dead letters of the
/// records before `upto` (out before the commit moves the watermark past
/// their records), commits a non-empty batch and writes what it produced.
/// On a failed commit, [`Pipeline::process`] forgets the indexes that hold
/// the batch's memories.
///
/// Where the pipeline carries saliences, what the batch leaves goes into
/// `carried` for the next (nothing, where the commit or an output failed).
fn flush_batch(
    batch: StateBatch<'_>,
    carried: &mut Option<CarriedSaliences>,
    dead_letters: &mut Vec<(usize, Event)>,
    upto: usize,
    sink: &mut dyn OutputSink,
    summary: &mut RunSummary,
) -> Result<(), PipelineError> {
    tally(&batch, summary);
    summary.outputs += emit_dead_letters(dead_letters, upto, sink)?;
    if batch.is_empty() {
        keep_carried(carried, batch.uncommitted());
        return Ok(());
    }
    let committed = batch.commit()?;
    for event in &committed.outputs {
        sink.emit(event).map_err(PipelineError::Output)?;
        summary.outputs += 1;
    }
    summary.batches += 1;
    keep_carried(carried, committed.carried);
    Ok(())
}

/// Keeps what a batch hands on, where the pipeline carries saliences.
fn keep_carried(slot: &mut Option<CarriedSaliences>, carried: Option<CarriedSaliences>) {
    if let (Some(slot), Some(carried)) = (slot.as_mut(), carried) {
        *slot = carried;
    }
}

fn new_batch<'b>(
    store: &'b dyn Store,
    settings: &'b CycleSettings,
    embedding: &'b mut Option<Embedding<'_>>,
    parking: Parking,
    carried: &mut Option<CarriedSaliences>,
) -> StateBatch<'b> {
    let mut batch = StateBatch::new(store, settings).with_parking(parking);
    // Taken out for the batch; its flush puts back what it committed.
    if let Some(carried) = carried.as_mut() {
        batch = batch.with_carried(std::mem::take(carried));
    }
    match embedding {
        Some(embedding) => batch.with_indexes(&mut embedding.indexes),
        None => batch,
    }
}
