//! engram: deterministic, streaming consolidation of AI agents' long-term memory.
//!
//! The modules follow the pipeline: [`source`] → [`event`] (decode) →
//! [`embed`] (vectors for new memories) → [`state`] (apply to the [`store`],
//! with [`salience`] and the per-user vector [`index`]; [`revise`] rebuilds
//! what engram made from a memory the platform deleted or edited) → [`detect`] →
//! [`plan`] → [`cycle`] (report and execute; [`undo`] reverses a run) →
//! [`emit`]. [`pipeline`] wires them for embedded mode, [`kafka`] for a
//! consumer group; [`metrics`] and [`http`] are how operators watch them.

pub mod clock;
pub mod config;
pub mod cycle;
pub mod detect;
pub mod duration;
pub mod embed;
pub mod emit;
pub mod error;
pub mod event;
pub mod faults;
pub mod http;
pub mod ids;
pub mod index;
pub mod inspect;
pub mod kafka;
pub mod metrics;
pub mod model;
pub mod pipeline;
pub mod plan;
pub mod progress;
pub mod report;
pub mod revise;
pub mod rewrite;
pub mod salience;
pub mod schedule;
pub mod source;
pub mod state;
pub mod store;
pub use engram_text::text;
pub mod trigger;
pub mod undo;
