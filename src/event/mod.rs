//! The event contract (docs/design.md §8): typed events, their Avro schemas, and
//! decoding/encoding in JSON lines and Avro single-object encoding.

mod avro_json;
mod codec;
mod datum;
mod error;
mod flat;
mod schema;
mod shared_str;
mod types;

pub use codec::{EventCodec, Limits, WireFormat};
pub use error::DecodeError;
pub use schema::{SchemaError, Schemas};
pub use shared_str::SharedStr;
pub use types::*;
