//! What a run did: the counts `engram run` prints at its end and the tests
//! read.

use std::collections::BTreeMap;
use std::fmt;

use crate::embed::EmbedCounts;
use crate::event::EventType;
use crate::state::StateBatch;

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

/// Counts one event of `kind`, allocating the key only for its first.
pub(super) fn count(counts: &mut BTreeMap<String, u64>, kind: &str) {
    match counts.get_mut(kind) {
        Some(n) => *n += 1,
        None => {
            counts.insert(kind.to_owned(), 1);
        }
    }
}

/// Applied events by type, counted in an array while a batch is applied
/// (a map lookup per event was a measurable part of a read's cost), then
/// added to a summary's map.
#[derive(Default)]
pub(super) struct AppliedTally([u64; EventType::ALL.len()]);

impl AppliedTally {
    pub(super) fn add(&mut self, event_type: EventType) {
        self.0[event_type as usize] += 1;
    }

    pub(super) fn add_to(self, summary: &mut RunSummary) {
        for event_type in EventType::ALL {
            let n = self.0[event_type as usize];
            if n > 0 {
                *summary
                    .applied
                    .entry(event_type.name().to_owned())
                    .or_default() += n;
            }
        }
    }
}

/// What a batch counted on the way, before it commits.
pub(super) fn tally(batch: &StateBatch<'_>, summary: &mut RunSummary) {
    summary.near_duplicates += batch.near_duplicates();
    summary.unparked += batch.unparked();
}

pub(super) fn merge(total: &mut RunSummary, part: RunSummary) {
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
