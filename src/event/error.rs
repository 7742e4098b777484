//! Why an input was rejected. Every variant maps to a stable `kind()` used in
//! dead letters and metrics.

use thiserror::Error;

#[derive(Debug, Clone, PartialEq, Error)]
pub enum DecodeError {
    #[error("undecodable input: {0}")]
    Undecodable(String),
    #[error("event of {size} bytes exceeds the limit of {limit} bytes")]
    EventTooLarge { size: usize, limit: usize },
    #[error("unknown event type `{0}`")]
    UnknownType(String),
    #[error("a `{0}` event on a topic configured for other input types")]
    WrongTopic(String),
    #[error("`{0}` is an output event; engram does not consume it")]
    NotAnInput(String),
    #[error("missing required field `{0}`")]
    MissingField(String),
    #[error("field `{field}` has the wrong type: expected {expected}, found {found}")]
    WrongType {
        field: String,
        expected: String,
        found: String,
    },
    #[error("field `{field}`: `{value}` is not an RFC 3339 timestamp")]
    BadTimestamp { field: String, value: String },
    #[error("field `{field}`: {value} is more than {skew} ahead of the wall clock")]
    FutureTimestamp {
        field: String,
        value: String,
        skew: String,
    },
    #[error("importance {0} is outside 0..=1")]
    ImportanceOutOfRange(f64),
    #[error("content of {size} bytes exceeds the limit of {limit} bytes")]
    ContentTooLarge { size: usize, limit: usize },
    #[error("field `{0}` must not be empty")]
    EmptyField(String),
    #[error("field `{field}`: {reason}")]
    InvalidValue { field: String, reason: String },
    /// The client could not read the record at all (its batch's bytes are
    /// damaged): it was skipped, and only its position is known.
    #[error("the record could not be read, and was skipped: {0}")]
    Unreadable(String),
}

impl DecodeError {
    /// Stable, machine-readable class of the error.
    pub fn kind(&self) -> &'static str {
        match self {
            DecodeError::Undecodable(_) => "undecodable",
            DecodeError::EventTooLarge { .. } => "event_too_large",
            DecodeError::UnknownType(_) => "unknown_type",
            DecodeError::WrongTopic(_) => "wrong_topic",
            DecodeError::NotAnInput(_) => "not_an_input",
            DecodeError::MissingField(_) => "missing_field",
            DecodeError::WrongType { .. } => "wrong_type",
            DecodeError::BadTimestamp { .. } | DecodeError::FutureTimestamp { .. } => {
                "bad_timestamp"
            }
            DecodeError::ImportanceOutOfRange(_) => "importance_out_of_range",
            DecodeError::ContentTooLarge { .. } => "content_too_large",
            DecodeError::EmptyField(_) => "empty_field",
            DecodeError::InvalidValue { .. } => "invalid_value",
            DecodeError::Unreadable(_) => "unreadable",
        }
    }
}
