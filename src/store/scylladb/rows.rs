//! Rows as the driver reads them, and the model values made from them.

use std::collections::{BTreeMap, HashMap};

use scylla::DeserializeRow;

use super::super::{StoreError, embedding_from_bytes, read_bookkeeping};
use super::corrupt;
use crate::model::{Link, LinkType, Memory, MemoryKind, MemoryStatus, RunReport, UserState};
use crate::salience::SalienceState;

#[derive(DeserializeRow)]
pub(super) struct MemoryRow {
    id: String,
    kind: String,
    category: Option<String>,
    tags: Option<Vec<String>>,
    tags_frozen: Option<Vec<String>>,
    content: Option<String>,
    importance: f64,
    source: Option<String>,
    content_hash: String,
    embedding: Option<Vec<u8>>,
    status: String,
    merged_from: Option<Vec<String>>,
    merged_from_frozen: Option<Vec<String>>,
    derived_from: Option<Vec<String>>,
    derived_from_frozen: Option<Vec<String>>,
    last_run_id: Option<String>,
    updated_at: Option<i64>,
}

/// A list as the row holds it: the frozen column (schema version 2) when it
/// is set, the column written before that version otherwise.
fn list<T>(frozen: Option<Vec<T>>, before: Option<Vec<T>>) -> Vec<T> {
    frozen.or(before).unwrap_or_default()
}

#[derive(DeserializeRow)]
pub(super) struct SalienceRow {
    id: String,
    created_at: i64,
    recent_accesses: Option<Vec<i64>>,
    recent_accesses_frozen: Option<Vec<i64>>,
    reads: i64,
    read_offset_sum: i64,
}

impl SalienceRow {
    pub(super) fn into_salience(self) -> (String, SalienceState) {
        let state = SalienceState::from_parts(
            self.created_at,
            list(self.recent_accesses_frozen, self.recent_accesses),
            self.reads.max(0) as u64,
            self.read_offset_sum,
        );
        (self.id, state)
    }
}

#[derive(DeserializeRow)]
pub(super) struct LinkRow {
    from_id: String,
    to_id: String,
    link_type: String,
    confidence: f64,
    reason: Option<String>,
    created_at: i64,
    run_id: Option<String>,
}

#[derive(DeserializeRow)]
pub(super) struct UserStateRow {
    applied_offsets: Option<BTreeMap<String, i64>>,
    /// `None` in a row that holds only a journal's seal (a new user's first
    /// commit, before it is rolled forward).
    new_since_cycle: Option<i64>,
    last_cycle_at: Option<i64>,
    last_run_id: Option<String>,
    duplicate_candidates: Option<i64>,
    cycle: Option<String>,
    journal_id: Option<i64>,
    journal_batches: Option<i32>,
    journal_sealed_at: Option<i64>,
}

/// A sealed journal that a read of the user's state must apply first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Seal {
    pub(super) journal_id: i64,
    pub(super) batches: i32,
    /// The seal's write timestamp: clearing at one more removes this seal
    /// and no later one.
    pub(super) sealed_at: i64,
}

impl UserStateRow {
    pub(super) fn seal(&self) -> Option<Seal> {
        Some(Seal {
            journal_id: self.journal_id?,
            batches: self.journal_batches?,
            sealed_at: self.journal_sealed_at?,
        })
    }
}

#[derive(DeserializeRow)]
pub(super) struct ReportRow {
    run_id: String,
    started_at: i64,
    report: String,
}

pub(super) fn embedding_from_blob(bytes: Option<Vec<u8>>) -> Result<Option<Vec<f32>>, StoreError> {
    bytes
        .map(|bytes| embedding_from_bytes(&bytes))
        .transpose()
        .map_err(|reason| corrupt("memories.embedding", reason))
}

pub(super) fn memory_from_rows(
    user_id: &str,
    row: MemoryRow,
    salience: SalienceState,
) -> Result<Memory, StoreError> {
    Ok(Memory {
        user_id: user_id.to_owned(),
        kind: MemoryKind::parse(&row.kind).ok_or_else(|| corrupt("memories.kind", &row.kind))?,
        status: MemoryStatus::parse(&row.status)
            .ok_or_else(|| corrupt("memories.status", &row.status))?,
        id: row.id,
        category: row.category,
        tags: list(row.tags_frozen, row.tags),
        content: row.content.unwrap_or_default(),
        importance: row.importance,
        source: row.source,
        content_hash: row.content_hash,
        embedding: embedding_from_blob(row.embedding)?,
        salience,
        merged_from: list(row.merged_from_frozen, row.merged_from),
        derived_from: list(row.derived_from_frozen, row.derived_from),
        last_run_id: row.last_run_id,
        updated_at: row.updated_at,
    })
}

pub(super) fn link_from_row(user_id: &str, row: LinkRow) -> Result<Link, StoreError> {
    Ok(Link {
        user_id: user_id.to_owned(),
        link_type: LinkType::parse(&row.link_type)
            .ok_or_else(|| corrupt("links.link_type", &row.link_type))?,
        from_id: row.from_id,
        to_id: row.to_id,
        confidence: row.confidence,
        reason: row.reason.unwrap_or_default(),
        created_at: row.created_at,
        run_id: row.run_id,
    })
}

pub(super) fn report_from_row(user_id: &str, row: ReportRow) -> Result<RunReport, StoreError> {
    Ok(RunReport {
        user_id: user_id.to_owned(),
        report: serde_json::from_str(&row.report).map_err(|e| corrupt("run_reports.report", e))?,
        run_id: row.run_id,
        started_at: row.started_at,
    })
}

/// Sorts links as the trait promises and drops duplicates (a link read from
/// both tables).
pub(super) fn sort_links(links: &mut Vec<Link>) {
    links.sort_by(|a, b| {
        (&a.from_id, &a.to_id, a.link_type.as_str()).cmp(&(
            &b.from_id,
            &b.to_id,
            b.link_type.as_str(),
        ))
    });
    links.dedup_by(|a, b| {
        a.from_id == b.from_id && a.to_id == b.to_id && a.link_type == b.link_type
    });
}

/// Memories whose salience row exists, with that salience.
pub(super) fn join(
    user_id: &str,
    rows: Vec<MemoryRow>,
    mut saliences: HashMap<String, SalienceState>,
) -> Result<Vec<Memory>, StoreError> {
    rows.into_iter()
        .filter_map(|row| {
            let salience = saliences.remove(&row.id)?;
            Some(memory_from_rows(user_id, row, salience))
        })
        .collect()
}

/// The user's state, `None` when the row holds no state (only a seal).
pub(super) fn user_state_from_row(
    user_id: &str,
    row: UserStateRow,
) -> Result<Option<UserState>, StoreError> {
    let Some(new_since_cycle) = row.new_since_cycle else {
        return Ok(None);
    };
    let mut state = UserState {
        user_id: user_id.to_owned(),
        applied_offsets: row.applied_offsets.unwrap_or_default(),
        new_since_cycle: new_since_cycle.max(0) as u64,
        last_cycle_at: row.last_cycle_at,
        last_run_id: row.last_run_id,
        duplicate_candidates: row.duplicate_candidates.unwrap_or(0).max(0) as u64,
        ..UserState::default()
    };
    if let Some(text) = row.cycle {
        read_bookkeeping(&mut state, &text).map_err(|e| corrupt("user_state.cycle", e))?;
    }
    Ok(Some(state))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::embedding_bytes;

    #[test]
    fn embeddings_round_trip_as_little_endian_f32() {
        let vector = vec![0.25_f32, -1.5, 3.0e-7];
        let blob = embedding_bytes(&Some(vector.clone())).unwrap();
        assert_eq!(blob.len(), 12);
        assert_eq!(&blob[..4], &0.25_f32.to_le_bytes());
        assert_eq!(embedding_from_blob(Some(blob)).unwrap(), Some(vector));
        assert!(embedding_from_blob(Some(vec![0; 5])).is_err());
    }
}
