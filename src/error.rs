//! What the error types share: a cause kept for the chain, and the chain
//! written on one line for logs and `/readyz`.

use std::error::Error;
use std::fmt;
use std::sync::Arc;

/// The error underneath, boxed so a type can keep any backend's.
pub type Cause = Box<dyn Error + Send + Sync + 'static>;

/// A cause that is shared, for error types that are cloned to every waiter.
pub type SharedCause = Arc<dyn Error + Send + Sync + 'static>;

/// `error: its cause: that one's cause`. Error types here keep causes out of
/// their own message (the reporter walks them), so one line needs this.
pub struct Chain<'a>(pub &'a (dyn Error + 'static));

impl fmt::Display for Chain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)?;
        let mut cause = self.0.source();
        while let Some(error) = cause {
            write!(f, ": {error}")?;
            cause = error.source();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("outer")]
    struct Outer(#[source] std::io::Error);

    #[test]
    fn the_chain_names_every_cause_once() {
        let error = Outer(std::io::Error::other("inner"));
        assert_eq!(Chain(&error).to_string(), "outer: inner");
    }
}
