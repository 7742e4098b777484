//! Closed-class words as data: the classes of `en.toml` (copulas,
//! determiners, prepositions, negators, deictic words and the like), each
//! parsed once into a set on first use. Open-class knowledge comes from
//! WordNet ([`super::wordnet`]).

use std::collections::HashMap;
use std::sync::{LazyLock, OnceLock};

use foldhash::HashSet;

/// The word classes, as written.
const EN: &str = include_str!("en.toml");

/// Every class of `en.toml` by name. The file is part of the build, so a
/// file that does not parse is a build defect: the tests below read it.
static CLASSES: LazyLock<HashMap<String, String>> =
    LazyLock::new(|| toml::from_str(EN).unwrap_or_default());

/// A named class of words; membership is one hash lookup.
pub struct WordClass {
    name: &'static str,
    words: OnceLock<Members>,
}

/// A class as loaded: every entry as written and with spaces for `_`, and
/// the entries in file order, phrases spelt with spaces.
struct Members {
    set: HashSet<String>,
    phrases: Vec<String>,
}

impl WordClass {
    pub const fn new(name: &'static str) -> Self {
        Self {
            name,
            words: OnceLock::new(),
        }
    }

    /// Whether `word` is in the class; a phrase written with `_` in the
    /// file matches with spaces too.
    pub fn contains(&self, word: &str) -> bool {
        self.members().set.contains(word)
    }

    /// The entries, phrases spelt with spaces ("out of").
    pub fn phrases(&self) -> impl Iterator<Item = &str> {
        self.members().phrases.iter().map(String::as_str)
    }

    fn members(&self) -> &Members {
        self.words.get_or_init(|| {
            let text = CLASSES.get(self.name).map_or("", String::as_str);
            Members {
                set: text
                    .split_whitespace()
                    .flat_map(|entry| [entry.to_owned(), entry.replace('_', " ")])
                    .collect(),
                phrases: text
                    .split_whitespace()
                    .map(|entry| entry.replace('_', " "))
                    .collect(),
            }
        })
    }
}

/// Where a list is tested: a class, or an inline list of a few words
/// (`"is are am"`) read as written.
pub trait Words {
    fn has(&self, word: &str) -> bool;
}

impl Words for WordClass {
    fn has(&self, word: &str) -> bool {
        self.contains(word)
    }
}

impl Words for str {
    fn has(&self, word: &str) -> bool {
        // An entry with `_` matches the word with spaces there, compared
        // byte by byte: rules ask this for nearly every token they read.
        let spelt_with_spaces = |entry: &str| {
            entry.len() == word.len()
                && entry
                    .bytes()
                    .zip(word.bytes())
                    .all(|(e, w)| if e == b'_' { w == b' ' } else { e == w })
        };
        self.split_ascii_whitespace()
            .any(|entry| entry == word || spelt_with_spaces(entry))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::collections::HashSet;

    #[test]
    fn the_file_parses_and_every_class_has_words() {
        let parsed: HashMap<String, String> = toml::from_str(EN).unwrap();
        assert!(parsed.len() > 40, "{} classes", parsed.len());
        for (name, words) in &parsed {
            assert!(!words.trim().is_empty(), "class {name} is empty");
            for word in words.split_whitespace() {
                assert_eq!(word, word.to_lowercase(), "class {name}: {word}");
            }
        }
    }

    /// Every class a rule names is in the file, and every class in the file
    /// is named by a rule: a misspelt name would be an empty class.
    #[test]
    fn the_classes_rules_name_are_the_classes_of_the_file() {
        let parsed: HashMap<String, String> = toml::from_str(EN).unwrap();
        let mut named = HashSet::new();
        // The rules of this crate, and those of the service's detectors.
        let mut folders = vec![
            std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/src")),
            std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../src/detect")),
        ];
        while let Some(folder) = folders.pop() {
            for entry in std::fs::read_dir(folder).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    folders.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    let code = std::fs::read_to_string(&path).unwrap();
                    for part in code.split("WordClass::new(\"").skip(1) {
                        named.insert(part[..part.find('"').unwrap()].to_owned());
                    }
                }
            }
        }
        let in_file: HashSet<String> = parsed.keys().cloned().collect();
        assert_eq!(
            named.difference(&in_file).collect::<Vec<_>>(),
            Vec::<&String>::new(),
            "named by a rule, not in en.toml"
        );
        assert_eq!(
            in_file.difference(&named).collect::<Vec<_>>(),
            Vec::<&String>::new(),
            "in en.toml, named by no rule"
        );
    }

    #[test]
    fn phrases_match_with_spaces_and_unknown_words_do_not() {
        let class = WordClass::new("negative_pronouns");
        assert!(class.contains("nobody"));
        assert!(class.contains("no one") && class.contains("no_one"));
        assert!(!class.contains("someone"));
        assert!("is are am".has("are") && !"is are am".has("be"));
        assert!("out_of in".has("out of") && "out_of in".has("out_of"));
        assert!(!"out_of in".has("out") && !"out_of".has("out  of") && !"out_of".has("out_off"));
    }
}
