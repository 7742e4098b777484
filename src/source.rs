//! Embedded-mode input: events from a file or stdin, one per line, each with
//! its position so replays can be recognised.

use std::io::{self, BufRead};
use std::sync::Arc;

use bytes::Bytes;

/// One raw input record and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceRecord {
    /// The topic it came from, or the embedded source id: shared by every
    /// record of the stream (a partition's worker hands out one per topic
    /// instead of copying the name into each record).
    pub stream: Arc<str>,
    pub partition: Option<i32>,
    /// Position in the stream: the Kafka offset, or the 0-based line number.
    pub offset: i64,
    /// The record as it came; a partition worker's share one block of
    /// memory (see `kafka::worker`).
    pub payload: Bytes,
    /// Length of the original record when `payload` had to be cut short.
    pub oversize: Option<usize>,
}

impl SourceRecord {
    /// The key of the applied-offset watermark: offsets are only comparable
    /// within one partition of one topic.
    pub fn position_key(&self) -> String {
        match self.partition {
            Some(partition) => format!("{}/{partition}", self.stream),
            None => self.stream.to_string(),
        }
    }
}

/// Reads newline-delimited records without ever holding more than
/// `max_bytes` of one line: longer lines are cut (and reported as oversize).
pub struct LineSource<R> {
    reader: R,
    stream: Arc<str>,
    max_bytes: usize,
    next_line: i64,
}

impl<R: BufRead> LineSource<R> {
    pub fn new(reader: R, stream: impl Into<Arc<str>>, max_bytes: usize) -> Self {
        Self {
            reader,
            stream: stream.into(),
            max_bytes,
            next_line: 0,
        }
    }

    /// The next non-blank line, or `None` at end of input.
    pub fn next_record(&mut self) -> io::Result<Option<SourceRecord>> {
        loop {
            let offset = self.next_line;
            let Some((payload, total)) = self.read_line()? else {
                return Ok(None);
            };
            self.next_line += 1;
            if payload.iter().all(u8::is_ascii_whitespace) && total == payload.len() {
                continue;
            }
            return Ok(Some(SourceRecord {
                stream: self.stream.clone(),
                partition: None,
                offset,
                payload: payload.into(),
                oversize: (total > self.max_bytes).then_some(total),
            }));
        }
    }

    /// One line without its terminator, capped at `max_bytes`, and its full length.
    fn read_line(&mut self) -> io::Result<Option<(Vec<u8>, usize)>> {
        let mut line = Vec::new();
        let mut total = 0usize;
        let mut saw_any = false;
        loop {
            let buffer = match self.reader.fill_buf() {
                Ok(buffer) => buffer,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if buffer.is_empty() {
                return Ok(saw_any.then(|| (trim_cr(line), total)));
            }
            saw_any = true;
            let (chunk, found_newline) = match buffer.iter().position(|&b| b == b'\n') {
                Some(end) => (&buffer[..end], true),
                None => (buffer, false),
            };
            let room = self.max_bytes.saturating_sub(line.len());
            line.extend_from_slice(&chunk[..chunk.len().min(room)]);
            total += chunk.len();
            let consumed = chunk.len() + usize::from(found_newline);
            self.reader.consume(consumed);
            if found_newline {
                return Ok(Some((trim_cr(line), total)));
            }
        }
    }
}

fn trim_cr(mut line: Vec<u8>) -> Vec<u8> {
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records(input: &str, max: usize) -> Vec<SourceRecord> {
        let mut source = LineSource::new(input.as_bytes(), "test", max);
        let mut out = Vec::new();
        while let Some(record) = source.next_record().unwrap() {
            out.push(record);
        }
        out
    }

    #[test]
    fn lines_keep_their_line_numbers_and_skip_blanks() {
        let out = records("a\n\n  \nb\r\nc", 100);
        let lines: Vec<_> = out.iter().map(|r| (r.offset, r.payload.to_vec())).collect();
        assert_eq!(
            lines,
            vec![(0, b"a".to_vec()), (3, b"b".to_vec()), (4, b"c".to_vec())]
        );
    }

    #[test]
    fn long_lines_are_cut_and_flagged() {
        let out = records("0123456789\nok\n", 4);
        assert_eq!(&out[0].payload[..], b"0123");
        assert_eq!(out[0].oversize, Some(10));
        assert_eq!(&out[1].payload[..], b"ok");
        assert_eq!(out[1].oversize, None);
    }
}
