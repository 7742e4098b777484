#![no_main]

use engram::event::{EventType, WireFormat};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    engram_fuzz::decode(data, WireFormat::Json, EventType::MemoryCreated);
});
