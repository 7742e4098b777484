//! engram's text rules, with no I/O but reading WordNet once: a text as
//! tokens, two texts aligned and what their differences mean
//! ([`align`]), the words the rules know ([`Lexicon`], backed by
//! [`WordNet`]) and the closed-class words as data ([`words`]).
//!
//! The service crate (`engram`) runs these rules over its memories; this
//! crate knows nothing of memories, stores or events.

pub mod align;
pub mod lexicon;
pub mod text;
pub mod wordnet;
pub mod words;

pub use lexicon::{Lexicon, LexiconSpec};
pub use wordnet::{WordNet, WordNetError};

#[cfg(test)]
pub(crate) mod testing {
    //! What the unit tests share.

    use super::*;

    /// The lexicon of engram's shipped rules (`rules/default.toml`),
    /// without WordNet.
    pub(crate) fn lexicon() -> Lexicon {
        #[derive(serde::Deserialize)]
        struct Rules {
            lexicon: LexiconSpec,
        }
        let rules: Rules = toml::from_str(include_str!("../../../rules/default.toml"))
            .unwrap_or_else(|e| panic!("rules/default.toml: {e}"));
        Lexicon::new(&rules.lexicon)
    }
}
