//! Seeds the decoder fuzz corpus (`fuzz/corpus/<target>/`) from the sample
//! events in `examples/events.jsonl`: every consolidation request and a
//! spread of the other inputs, as JSON lines and Avro single objects, plus
//! the sample's lines that engram rejects (JSON only).
//!
//! `cargo run --example fuzz_corpus -- fuzz/corpus`

use std::path::PathBuf;

use engram::event::{Event, EventCodec, EventType, Limits};

const SAMPLE: &str = include_str!("events.jsonl");
/// Seeds per input type and format: enough shapes, a quick corpus.
const PER_TYPE: usize = 24;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = PathBuf::from(std::env::args().nth(1).unwrap_or("fuzz/corpus".to_owned()));
    let codec = EventCodec::new(Limits::default())?;
    let lines: Vec<&str> = SAMPLE.lines().collect();
    let types = [
        (EventType::MemoryCreated, "memory_created"),
        (EventType::MemoryAccessed, "memory_accessed"),
        (EventType::ConsolidationRequested, "consolidation_requested"),
    ];
    let mut rejected = Vec::new();
    for (event_type, name) in types {
        let of_type: Vec<(&str, Event)> = lines
            .iter()
            .filter_map(|line| match codec.decode_json(line.as_bytes()) {
                Ok(event) => Some((*line, event)),
                Err(_) => {
                    rejected.push(*line);
                    None
                }
            })
            .filter(|(_, event)| event.event_type() == event_type)
            .collect();
        let step = of_type.len().div_ceil(PER_TYPE).max(1);
        for format in ["json", "avro"] {
            let dir = out.join(format!("{format}_{name}"));
            std::fs::create_dir_all(&dir)?;
            for (n, (line, event)) in of_type.iter().step_by(step).enumerate() {
                let bytes = match format {
                    "json" => line.as_bytes().to_vec(),
                    _ => codec.encode_avro(event)?,
                };
                std::fs::write(dir.join(format!("sample-{n:03}")), bytes)?;
            }
        }
    }
    rejected.sort_unstable();
    rejected.dedup();
    for (_, name) in types {
        let dir = out.join(format!("json_{name}"));
        for (n, line) in rejected.iter().enumerate() {
            std::fs::write(dir.join(format!("rejected-{n:03}")), line)?;
        }
    }
    println!("corpus written to {}", out.display());
    Ok(())
}
