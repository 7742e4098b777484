//! Embedded mode end to end: source → decode → state → cycle → emit, with
//! batched, atomic commits and dead letters for bad input.

use std::collections::BTreeMap;
use std::fmt;
use std::io::{self, BufRead};

use chrono::DateTime;
use thiserror::Error;

use crate::clock::Clock;
use crate::cycle::{CycleSettings, derived_id};
use crate::embed::{
    EmbedCounts, EmbedError, Embedder, EmbeddingConfig, IngestEmbedError, SubBatch, embed_created,
};
use crate::emit::JsonLinesSink;
use crate::event::{DeadLetter, DecodeError, Event, EventCodec};
use crate::index::UserIndexes;
use crate::model::Millis;
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
            settings,
            batch_size: batch_size.max(1),
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
        let mut batch = StateBatch::new(self.store, &self.settings);
        if let Some(embedding) = &mut self.embedding {
            batch = batch.with_indexes(&mut embedding.indexes);
        }
        for (record, event) in &decoded {
            self.clock.observe(event.occurred_at().timestamp_millis());
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
        }
        summary.near_duplicates = batch.near_duplicates();
        if !batch.is_empty() {
            let committed = batch.commit();
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
        }
        // In input order, whichever stage rejected them.
        dead_letters.sort_by_key(|(offset, _)| *offset);
        for (_, event) in &dead_letters {
            sink.emit(event).map_err(PipelineError::Output)?;
        }
        sink.flush().map_err(PipelineError::Output)?;
        Ok((done, summary))
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
