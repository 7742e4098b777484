//! Dead letters: the record a rejected input becomes, bounded whatever the
//! input was, and written before the commit that moves past it.

use chrono::DateTime;

use super::PipelineError;
use crate::emit::OutputSink;
use crate::event::{DEAD_LETTER_ORIGINAL_MAX, DeadLetter, Event};
use crate::ids::derived_id;
use crate::model::Millis;
use crate::source::SourceRecord;
use crate::text::sha256_hex;

/// Writes the dead letters of records before position `upto`, in input
/// order, and makes sure they are out before the caller commits.
pub(super) fn emit_dead_letters(
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
pub(super) fn dead_letter_without_content(
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
