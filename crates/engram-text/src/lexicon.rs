//! The words the contradiction and supersession detectors look for.
//!
//! Shipped in `rules/default.toml` under `[lexicon]`; a rules file may
//! replace it. Everything is matched on normalised words (see
//! [`crate::text::normalise`]), so "Don't" and "don t" are the same phrase.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use foldhash::{HashMap, HashMapExt};

use serde::{Deserialize, Serialize};

use crate::WordNet;
use crate::text::normalise;
use crate::wordnet::Word;

/// The lexicon as written in TOML.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LexiconSpec {
    pub negations: Vec<String>,
    pub antonyms: Vec<[String; 2]>,
    /// Words that state a change ("now", "switched to"); a newer text with
    /// one supersedes the older value it contradicts. `#` stands for any
    /// number in digits ("turned #").
    pub change_markers: Vec<String>,
    /// Words that frame what a text says as other than a stated fact: an
    /// attitude ("believes"), a condition ("if"), a near miss ("almost"),
    /// a modifier that denies its noun ("former"). Lemmas match their
    /// inflections.
    pub framing: Vec<String>,
    /// Relations held with one value at a time ("married to", "works
    /// for"): after one, two different names fill one slot, as after a
    /// copula. Words match their inflections ("work" matches "works").
    pub single_valued: Vec<String>,
    /// Relations held in one place at a time ("lives in", "born in"): two
    /// texts that both state one are compared as closely as two values of
    /// a single-valued relation, but their places are compared by what
    /// WordNet knows of them, so a city and its country hold together.
    pub held_in_one_place: Vec<String>,
    /// Class name → values; `a|b` are two spellings of one value.
    pub value_classes: BTreeMap<String, Vec<String>>,
}

/// The lexicon ready for matching: phrases as word sequences, values by
/// spelling.
#[derive(Debug, Clone, Default)]
pub struct Lexicon {
    negations: Phrases,
    antonyms: Vec<(String, String)>,
    change_markers: Phrases,
    framing: BTreeSet<String>,
    single_valued: Vec<Vec<String>>,
    held_in_one_place: Vec<Vec<String>>,
    /// Spelling → (class, canonical value).
    values: BTreeMap<String, (String, String)>,
    /// Lemmas, synonyms, antonyms and word classes; without it only the
    /// rule file's words and exact spellings are known.
    wordnet: Option<Arc<WordNet>>,
}

/// In a change marker, the place of any number written in digits ("turned
/// #": "turned 5", "turned 30").
const ANY_NUMBER: &str = "#";

fn phrase(text: &str) -> Vec<String> {
    text.split_whitespace()
        .flat_map(|word| match word {
            ANY_NUMBER => vec![ANY_NUMBER.to_owned()],
            _ => normalise(word)
                .split(' ')
                .filter(|w| !w.is_empty())
                .map(str::to_owned)
                .collect(),
        })
        .collect()
}

/// Whether `word` fills a phrase's place `pattern`: the same word, or any
/// number in digits where the phrase has [`ANY_NUMBER`].
fn fits(pattern: &str, word: &str) -> bool {
    pattern == word
        || (pattern == ANY_NUMBER && !word.is_empty() && word.chars().all(|c| c.is_ascii_digit()))
}

/// Whether `words` open with `phrase`, word for word.
fn opens_with<'w>(mut words: impl Iterator<Item = &'w str>, phrase: &[String]) -> bool {
    !phrase.is_empty()
        && phrase
            .iter()
            .all(|p| words.next().is_some_and(|w| fits(p, w)))
}

/// Whether `spelling` is `want` as written or an inflection of it; `word`
/// gives what WordNet knows of the spelling, asked only when the two differ.
fn is_form_of<'w>(want: &str, spelling: &str, word: impl FnOnce() -> &'w Word) -> bool {
    spelling == want || word().lemmas.iter().any(|l| l == want)
}

/// Words the changed thing may take between a change marker's verb and its
/// "to" ("changed `his phone number` to", "moved `the team meeting` to").
const CHANGED_THING_WORDS: usize = 3;

/// How many words the change marker `marker` spans where `words` open with
/// it: word for word, or a verb and its "to" with the changed thing
/// between them.
fn change_marker_span<'w>(
    words: impl Iterator<Item = &'w str> + Clone,
    marker: &[String],
) -> Option<usize> {
    if opens_with(words.clone(), marker) {
        return Some(marker.len());
    }
    let [verb, to] = marker else {
        return None;
    };
    let mut words = words;
    if to != "to" || words.next() != Some(verb.as_str()) {
        return None;
    }
    words
        .take(CHANGED_THING_WORDS + 1)
        .position(|w| w == "to")
        .map(|gap| gap + 2)
}

impl Lexicon {
    pub fn new(spec: &LexiconSpec) -> Self {
        let mut values = BTreeMap::new();
        for (class, entries) in &spec.value_classes {
            for entry in entries {
                let spellings: Vec<String> = entry.split('|').map(normalise).collect();
                let canonical = spellings.first().cloned().unwrap_or_default();
                for spelling in spellings.into_iter().filter(|s| !s.is_empty()) {
                    values.insert(spelling, (class.clone(), canonical.clone()));
                }
            }
        }
        Self {
            negations: Phrases::new(spec.negations.iter().map(|p| phrase(p)).collect()),
            antonyms: spec
                .antonyms
                .iter()
                .map(|[a, b]| (normalise(a), normalise(b)))
                .collect(),
            change_markers: Phrases::new(spec.change_markers.iter().map(|p| phrase(p)).collect()),
            framing: spec.framing.iter().map(|w| normalise(w)).collect(),
            single_valued: spec.single_valued.iter().map(|p| phrase(p)).collect(),
            held_in_one_place: spec.held_in_one_place.iter().map(|p| phrase(p)).collect(),
            values,
            wordnet: None,
        }
    }

    /// The same lexicon backed by WordNet.
    pub fn with_wordnet(mut self, wordnet: Arc<WordNet>) -> Self {
        self.wordnet = Some(wordnet);
        self
    }

    /// The WordNet behind it, if any.
    pub fn wordnet(&self) -> Option<&WordNet> {
        self.wordnet.as_deref()
    }

    /// The length in words of the longest negation phrase `words` starts
    /// with.
    pub fn negation_at(&self, words: &[String]) -> Option<usize> {
        let first = words.first()?;
        self.negations
            .opening_with(first)
            .filter(|p| words.starts_with(p))
            .map(Vec::len)
            .max()
    }

    /// What WordNet knows of `word` (only its spelling without WordNet).
    pub fn word(&self, word: &str) -> Word {
        match &self.wordnet {
            Some(wordnet) => wordnet.word(word),
            None => {
                // Without WordNet, at least a third-person "s" ("prefers" /
                // "prefer") is the same verb.
                let mut plain = Word::plain(word);
                if let Some(stem) = word.strip_suffix('s')
                    && stem.len() > 2
                    && !stem.ends_with('s')
                {
                    plain.lemmas.push(stem.to_owned());
                }
                plain
            }
        }
    }

    /// Whether WordNet knows `word` as an ordinary word ("go", "swift",
    /// "windows"), so that as a class value it counts only when written
    /// as a name.
    pub fn is_common_word(&self, word: &str) -> bool {
        self.wordnet.as_ref().is_some_and(|w| w.knows(word))
    }

    /// Same word, inflection, spelling of one value, or WordNet synonym.
    pub fn synonyms(&self, a: (&str, &Word), b: (&str, &Word)) -> bool {
        a.0 == b.0
            || (self.is_value(a.0) && self.canonical(a.0) == self.canonical(b.0))
            || a.1.lemmas.iter().any(|l| b.1.lemmas.contains(l))
            || self.wordnet.as_ref().is_some_and(|w| w.synonyms(a.1, b.1))
    }

    /// Whether `word` first means the verb `lemma` ([`WordNet::first_means`]).
    pub fn first_means(&self, word: &Word, lemma: &str) -> bool {
        self.wordnet
            .as_ref()
            .is_some_and(|w| w.first_means(word, lemma))
    }

    /// Whether the words say one thing or one names a kind of the other
    /// ("cook" / "chef"): not two different things.
    pub fn related(&self, a: (&str, &Word), b: (&str, &Word)) -> bool {
        self.synonyms(a, b) || self.is_a(a.1, b.1) || self.is_a(b.1, a.1)
    }

    /// Whether `specific` is a kind of `general` ("man" / "person").
    pub fn is_a(&self, specific: &Word, general: &Word) -> bool {
        self.wordnet
            .as_ref()
            .is_some_and(|w| w.kind_of(specific, general))
    }

    /// Whether the verb `specific` is defined as `general` with more said
    /// ([`WordNet::says_more_than`]).
    pub fn says_more_than(&self, specific: &Word, general: &Word) -> bool {
        self.wordnet
            .as_ref()
            .is_some_and(|w| w.says_more_than(specific, general))
    }

    /// Whether WordNet lists the compound as a noun that is no kind of its
    /// head ([`WordNet::compound_names_another`]).
    pub fn compound_names_another(&self, compound: &str, head: &str) -> bool {
        self.wordnet
            .as_ref()
            .is_some_and(|w| w.compound_names_another(compound, head))
    }

    /// Whether `part` is a place inside `whole` ([`WordNet::within`]).
    pub fn within(&self, part: &Word, whole: &Word) -> bool {
        self.wordnet.as_ref().is_some_and(|w| w.within(part, whole))
    }

    /// Whether WordNet marks the two words as antonyms.
    pub fn wordnet_antonyms(&self, a: &Word, b: &Word) -> bool {
        self.wordnet.as_ref().is_some_and(|w| w.opposite(a, b))
    }

    /// Each pair of WordNet antonyms `word`, as written, is in, its two
    /// words in order: "single" and "married" both give ("married",
    /// "single"); an inflection ("laughing") is in none.
    pub fn opposed_pairs(&self, word: &str) -> Vec<(String, String)> {
        self.wordnet
            .as_ref()
            .map(|w| w.opposed_pairs(word))
            .unwrap_or_default()
    }

    /// Whether `a` and `b` are WordNet antonyms only as nouns for people.
    pub fn wordnet_opposed_people(&self, a: &Word, b: &Word) -> bool {
        self.wordnet
            .as_ref()
            .is_some_and(|w| w.opposed_people(a, b))
    }

    /// Whether WordNet knows `verb` as ending an activity
    /// ([`WordNet::ends_activity`]); never without WordNet.
    pub fn ends_activity(&self, verb: &Word) -> bool {
        self.wordnet.as_ref().is_some_and(|w| w.ends_activity(verb))
    }

    /// Whether WordNet knows `verb` as handing one's thing over
    /// ([`WordNet::hands_over`]); never without WordNet.
    pub fn hands_over(&self, verb: &Word) -> bool {
        self.wordnet.as_ref().is_some_and(|w| w.hands_over(verb))
    }

    /// Whether WordNet knows the phrasal verb `phrase` as handing one's
    /// thing over ([`WordNet::phrase_hands_over`]).
    pub fn phrase_hands_over(&self, phrase: &str) -> bool {
        self.wordnet
            .as_ref()
            .is_some_and(|w| w.phrase_hands_over(phrase))
    }

    /// Whether WordNet knows the phrasal verb `phrase` as ending a relation
    /// ([`WordNet::phrase_separates`]).
    pub fn phrase_separates(&self, phrase: &str) -> bool {
        self.wordnet
            .as_ref()
            .is_some_and(|w| w.phrase_separates(phrase))
    }

    /// Whether the most frequent verb sense of `verb` ends an activity
    /// ([`WordNet::mainly_ends_activity`]); never without WordNet.
    pub fn mainly_ends_activity(&self, verb: &Word) -> bool {
        self.wordnet
            .as_ref()
            .is_some_and(|w| w.mainly_ends_activity(verb))
    }

    /// Whether WordNet's first sense of `verb` is winning a victory over
    /// another ([`WordNet::mainly_defeats`]); never without WordNet.
    pub fn defeats(&self, verb: &Word) -> bool {
        self.wordnet
            .as_ref()
            .is_some_and(|w| w.mainly_defeats(verb))
    }

    /// Whether WordNet knows `verb` as leaving a place or an association
    /// ([`WordNet::leaves`]); never without WordNet.
    pub fn leaves(&self, verb: &Word) -> bool {
        self.wordnet.as_ref().is_some_and(|w| w.leaves(verb))
    }

    /// Whether WordNet knows `verb` as leaving an association
    /// ([`WordNet::quits`]); never without WordNet.
    pub fn quits(&self, verb: &Word) -> bool {
        self.wordnet.as_ref().is_some_and(|w| w.quits(verb))
    }

    /// Whether WordNet knows `verb` as parting with what one has
    /// ([`WordNet::parts_with`]); never without WordNet.
    pub fn parts_with(&self, verb: &Word) -> bool {
        self.wordnet.as_ref().is_some_and(|w| w.parts_with(verb))
    }

    /// Whether WordNet knows the phrasal verb `phrase` as parting with
    /// what one has ([`WordNet::phrase_parts_with`]).
    pub fn phrase_parts_with(&self, phrase: &str) -> bool {
        self.wordnet
            .as_ref()
            .is_some_and(|w| w.phrase_parts_with(phrase))
    }

    /// Whether WordNet knows the phrasal verb `phrase` as leaving
    /// ([`WordNet::phrase_leaves`]).
    pub fn phrase_leaves(&self, phrase: &str) -> bool {
        self.wordnet
            .as_ref()
            .is_some_and(|w| w.phrase_leaves(phrase))
    }

    /// Whether WordNet knows `verb` as one of going or being somewhere
    /// ([`WordNet::means_presence`]); without WordNet any verb may be.
    pub fn means_presence(&self, verb: &Word) -> bool {
        self.wordnet.as_ref().is_none_or(|w| w.means_presence(verb))
    }

    /// Whether WordNet knows `word` as a place ([`WordNet::names_place`]);
    /// never without WordNet.
    pub fn names_place(&self, word: &Word) -> bool {
        self.wordnet.as_ref().is_some_and(|w| w.names_place(word))
    }

    /// Whether WordNet knows `verb` as one of going
    /// ([`WordNet::means_motion`]); never without WordNet.
    pub fn means_motion(&self, verb: &Word) -> bool {
        self.wordnet.as_ref().is_some_and(|w| w.means_motion(verb))
    }

    /// Whether `verb` is the verb of a change marker in another form
    /// ("moves" for "moved to"): going there is a change, not a trip. A
    /// marker's verb is its first word in the past ("moved", "switched"),
    /// not a gerund that opens a phrase of time ("going forward").
    pub fn is_change_verb(&self, verb: &Word) -> bool {
        self.change_markers.all.iter().any(|marker| {
            let Some(first) = marker.first() else {
                return false;
            };
            let opening = self.word(first);
            opening.inflected_verb
                && !first.ends_with("ing")
                && opening.lemmas.iter().any(|l| verb.lemmas.contains(l))
        })
    }

    /// Whether WordNet knows `verb` as bringing a thing to its end or
    /// calling it off ([`WordNet::concludes`]).
    pub fn concludes(&self, verb: &Word) -> bool {
        self.wordnet.as_ref().is_some_and(|w| w.concludes(verb))
    }

    /// Whether WordNet knows `verb` as putting one thing in another's place
    /// ([`WordNet::replaces`]).
    pub fn replaces(&self, verb: &Word) -> bool {
        self.wordnet.as_ref().is_some_and(|w| w.replaces(verb))
    }

    /// Whether WordNet knows the phrasal verb `phrase` as bringing a thing
    /// to its end or calling it off ([`WordNet::phrase_concludes`]).
    pub fn phrase_concludes(&self, phrase: &str) -> bool {
        self.wordnet
            .as_ref()
            .is_some_and(|w| w.phrase_concludes(phrase))
    }

    /// Whether WordNet knows `verb` first as one of change
    /// ([`WordNet::changes`]).
    pub fn changes(&self, verb: &Word) -> bool {
        self.wordnet.as_ref().is_some_and(|w| w.changes(verb))
    }

    /// Whether WordNet knows the phrasal verb `phrase` first as one of
    /// change ([`WordNet::phrase_changes`]).
    pub fn phrase_changes(&self, phrase: &str) -> bool {
        self.wordnet
            .as_ref()
            .is_some_and(|w| w.phrase_changes(phrase))
    }

    /// Whether WordNet knows `verb` first as one of telling
    /// ([`WordNet::tells`]).
    pub fn tells(&self, verb: &Word) -> bool {
        self.wordnet.as_ref().is_some_and(|w| w.tells(verb))
    }

    /// Whether WordNet knows `verb` as one of feeling ([`WordNet::feels`]).
    pub fn feels(&self, verb: &Word) -> bool {
        self.wordnet.as_ref().is_some_and(|w| w.feels(verb))
    }

    /// Whether WordNet knows `word` as a time or a period
    /// ([`WordNet::names_time`]).
    pub fn names_time(&self, word: &Word) -> bool {
        self.wordnet.as_ref().is_some_and(|w| w.names_time(word))
    }

    /// Whether WordNet knows `word` as a person ([`WordNet::names_person`]).
    pub fn names_person(&self, word: &Word) -> bool {
        self.wordnet.as_ref().is_some_and(|w| w.names_person(word))
    }

    /// Whether WordNet's most frequent noun sense of `word` is a person
    /// ([`WordNet::first_names_person`]).
    pub fn first_names_person(&self, word: &Word) -> bool {
        self.wordnet
            .as_ref()
            .is_some_and(|w| w.first_names_person(word))
    }

    /// Whether WordNet knows the phrasal verb `phrase` as ending an
    /// activity ([`WordNet::phrase_ends_activity`]).
    pub fn phrase_ends_activity(&self, phrase: &str) -> bool {
        self.wordnet
            .as_ref()
            .is_some_and(|w| w.phrase_ends_activity(phrase))
    }

    /// Whether WordNet lists `verb` with `particle` as a verb of its own
    /// ([`WordNet::phrasal_verb`]); never without WordNet.
    pub fn phrasal_verb(&self, verb: &str, particle: &str) -> bool {
        self.wordnet
            .as_ref()
            .is_some_and(|w| w.phrasal_verb(verb, particle))
    }

    /// The WordNet class two different nouns share, if any.
    pub fn wordnet_class(&self, a: &Word, b: &Word) -> Option<String> {
        self.wordnet.as_ref()?.class_of_pair(a, b)
    }

    /// The lexicon class of a value.
    pub fn class_of(&self, value: &str) -> Option<&str> {
        self.values.get(value).map(|(class, _)| class.as_str())
    }

    /// A rule-file antonym pair with one phrase in the words `first` and
    /// the other in `second` (and neither on both sides).
    pub fn antonym_across(&self, first: &str, second: &str) -> Option<(String, String)> {
        let (first, second) = (WholeWords::new(first), WholeWords::new(second));
        self.antonyms.iter().find_map(|(a, b)| {
            let split =
                |x: &str, y: &str| first.has(x) && second.has(y) && !first.has(y) && !second.has(x);
            if split(a, b) {
                Some((a.clone(), b.clone()))
            } else if split(b, a) {
                Some((b.clone(), a.clone()))
            } else {
                None
            }
        })
    }

    /// The first change marker in `words`, as written there ("turned 5"
    /// for "turned #").
    pub fn change_marker_in(&self, words: &[String]) -> Option<String> {
        // A marker is found where a word fills its first place; the rest
        // are not searched for, and the first in the file's order wins.
        let mut candidates: Vec<usize> = words
            .iter()
            .flat_map(|word| self.change_markers.placed_at(word))
            .collect();
        candidates.sort_unstable();
        candidates.dedup();
        candidates.into_iter().find_map(|index| {
            let marker = &self.change_markers.all[index];
            (0..words.len()).find_map(|k| {
                change_marker_span(words[k..].iter().map(String::as_str), marker)
                    .map(|span| words[k..k + span].join(" "))
            })
        })
    }

    /// Whether `words` open with a change marker ("moved to …", "turned 5
    /// …").
    pub fn opens_with_change_marker<'w>(
        &self,
        words: impl Iterator<Item = &'w str> + Clone,
    ) -> bool {
        self.change_markers
            .all
            .iter()
            .any(|marker| change_marker_span(words.clone(), marker).is_some())
    }

    /// Whether `word` alone is a change marker ("anymore", "now").
    pub fn is_change_word(&self, word: &str) -> bool {
        self.change_markers
            .all
            .iter()
            .any(|marker| marker.len() == 1 && marker[0] == word)
    }

    /// Whether `word` (spelled `spelling`) frames what its text says
    /// ([`LexiconSpec::framing`]).
    pub fn is_framing(&self, spelling: &str, word: &Word) -> bool {
        self.framing.contains(spelling) || word.lemmas.iter().any(|l| self.framing.contains(l))
    }

    /// How many words long the relation held with one value at a time
    /// ([`LexiconSpec::single_valued`]) is that ends the words given last
    /// word first (spelling and what WordNet knows), if one does.
    pub fn single_valued_ending<'w>(
        &self,
        last_first: impl Iterator<Item = (&'w str, &'w Word)> + Clone,
    ) -> Option<usize> {
        self.single_valued
            .iter()
            .find(|relation| {
                let mut words = last_first.clone();
                !relation.is_empty()
                    && relation.iter().rev().all(|want| {
                        words
                            .next()
                            .is_some_and(|(spelling, word)| is_form_of(want, spelling, || word))
                    })
            })
            .map(Vec::len)
    }

    /// Which relation held with one value at a time `words` state first,
    /// single-valued ([`LexiconSpec::single_valued`]) or held in one place
    /// ([`LexiconSpec::held_in_one_place`]), as its place in the two lists
    /// one after the other: "works at Google" and "worked at Acme" both
    /// state "work at".
    /// Each word of a relation may be written in any inflection ("prefers"
    /// states "prefer"); each word of `words` is looked up at most once.
    pub fn one_at_a_time_in(&self, words: &[String]) -> Option<usize> {
        self.first_stated(
            self.single_valued.iter().chain(&self.held_in_one_place),
            words,
        )
    }

    /// Whether `verb` is the verb of a relation held in one place ("lives"
    /// of "live in").
    pub fn dwells(&self, verb: &str) -> bool {
        self.held_in_one_place.iter().any(|relation| {
            relation.len() > 1 && {
                let words = [verb.to_owned(), relation[1].clone()];
                self.first_stated(std::iter::once(relation), &words)
                    .is_some()
            }
        })
    }

    /// Whether `words` state a relation held in one place
    /// ([`LexiconSpec::held_in_one_place`]: "lives in", "is based in").
    pub fn holds_in_one_place(&self, words: &[String]) -> bool {
        self.first_stated(self.held_in_one_place.iter(), words)
            .is_some()
    }

    /// Which of `relations` `words` state first, as its place among them.
    fn first_stated<'r>(
        &self,
        mut relations: impl Iterator<Item = &'r Vec<String>>,
        words: &[String],
    ) -> Option<usize> {
        let looked_up: Vec<std::cell::OnceCell<Word>> =
            words.iter().map(|_| std::cell::OnceCell::new()).collect();
        let fits = |want: &String, at: usize| {
            is_form_of(want, &words[at], || {
                looked_up[at].get_or_init(|| self.word(&words[at]))
            })
        };
        relations.position(|relation| {
            !relation.is_empty()
                && (relation.len()..=words.len()).any(|end| {
                    relation
                        .iter()
                        .zip(end - relation.len()..end)
                        .all(|(want, at)| fits(want, at))
                })
        })
    }

    /// `(class, value)` of every class value named in `words`.
    pub fn values_in(&self, words: &[String]) -> Vec<(String, String)> {
        let mut found: Vec<(String, String)> = words
            .iter()
            .filter_map(|w| self.values.get(w).cloned())
            .collect();
        found.sort();
        found.dedup();
        found
    }

    /// Whether `word` is a known class value.
    pub fn is_value(&self, word: &str) -> bool {
        self.values.contains_key(word)
    }

    /// The canonical spelling of a class value, or the word itself.
    pub fn canonical<'w>(&'w self, word: &'w str) -> &'w str {
        self.values
            .get(word)
            .map_or(word, |(_, canonical)| canonical)
    }
}

/// A list of phrases as word sequences, each found by its first word.
#[derive(Debug, Clone, Default)]
struct Phrases {
    /// In the file's order.
    all: Vec<Vec<String>>,
    /// First word → the indices of the phrases it opens, ascending; those
    /// opening with [`ANY_NUMBER`] under it.
    by_first: HashMap<String, Vec<usize>>,
}

impl Phrases {
    fn new(all: Vec<Vec<String>>) -> Self {
        let mut by_first: HashMap<String, Vec<usize>> = HashMap::new();
        for (index, phrase) in all.iter().enumerate() {
            if let Some(first) = phrase.first() {
                by_first.entry(first.clone()).or_default().push(index);
            }
        }
        Self { all, by_first }
    }

    /// The phrases whose first place `word` fills as written.
    fn opening_with(&self, word: &str) -> impl Iterator<Item = &Vec<String>> {
        self.indices(word).map(|&index| &self.all[index])
    }

    fn indices(&self, word: &str) -> impl Iterator<Item = &usize> {
        self.by_first.get(word).into_iter().flatten()
    }

    /// The indices of the phrases whose first place `word` fills, a number
    /// in digits filling [`ANY_NUMBER`] too ([`fits`]).
    fn placed_at(&self, word: &str) -> impl Iterator<Item = usize> {
        let any_number = (word != ANY_NUMBER && fits(ANY_NUMBER, word))
            .then(|| self.indices(ANY_NUMBER))
            .into_iter()
            .flatten();
        self.indices(word).chain(any_number).copied()
    }
}

/// A text of space-separated words, asked for many phrases.
pub(crate) struct WholeWords<'t> {
    text: &'t str,
    words: Vec<&'t str>,
}

impl<'t> WholeWords<'t> {
    pub(crate) fn new(text: &'t str) -> Self {
        Self {
            text,
            words: text.split(' ').collect(),
        }
    }

    /// [`contains_words`]: a phrase found as whole words opens with one of
    /// the text's words, so most phrases are ruled out without a search (a
    /// cycle asks for every antonym of every pair of words it compares).
    pub(crate) fn has(&self, phrase: &str) -> bool {
        let opening = phrase.split(' ').next().unwrap_or_default();
        (phrase.is_empty() || self.words.contains(&opening)) && contains_words(self.text, phrase)
    }
}

/// Whether `phrase` occurs in `text` as whole space-separated words: what
/// `" {text} ".contains(" {phrase} ")` says, without building either string
/// (a cycle asks this for every antonym pair of every compared pair).
pub(crate) fn contains_words(text: &str, phrase: &str) -> bool {
    if phrase.is_empty() {
        return text.is_empty() || text.contains("  ");
    }
    let mut from = 0;
    while let Some(found) = text[from..].find(phrase) {
        let at = from + found;
        let end = at + phrase.len();
        let starts = at == 0 || text[..at].ends_with(' ');
        let ends = end == text.len() || text[end..].starts_with(' ');
        if starts && ends {
            return true;
        }
        from = at + text[at..].chars().next().map_or(1, char::len_utf8);
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        phrase(text)
    }

    #[test]
    fn whole_words_are_found_as_padded_text_finds_them() {
        let padded = |text: &str, p: &str| format!(" {text} ").contains(&format!(" {p} "));
        let texts = [
            "",
            "in",
            "win a",
            "xab ab",
            "xab ab ab",
            "a  b",
            "café in",
            "out of it",
        ];
        let phrases = [
            "", "in", "a", "ab ab", "ab", "b", "in café", "out of", "of it", "n",
        ];
        for text in texts {
            for phrase in phrases {
                assert_eq!(
                    contains_words(text, phrase),
                    padded(text, phrase),
                    "{text:?} {phrase:?}"
                );
            }
        }
    }

    #[test]
    fn framing_words_match_their_spelling_and_inflections() {
        let lexicon = lexicon();
        for framing in ["believe", "believes", "if"] {
            assert!(
                lexicon.is_framing(framing, &lexicon.word(framing)),
                "{framing}"
            );
        }
        assert!(!lexicon.is_framing("lives", &lexicon.word("lives")));
    }

    #[test]
    fn a_single_valued_relation_ends_the_words_before_its_value() {
        let lexicon = lexicon();
        let ending = |text: &str| {
            let words: Vec<(String, Word)> = phrase(text)
                .into_iter()
                .map(|w| {
                    let word = lexicon.word(&w);
                    (w, word)
                })
                .collect();
            lexicon.single_valued_ending(words.iter().rev().map(|(s, w)| (s.as_str(), w)))
        };
        assert_eq!(ending("alice work for"), Some(2));
        assert_eq!(ending("alice work for us at"), None);
        assert_eq!(ending("for"), None);
    }

    #[test]
    fn a_text_states_a_single_valued_relation_anywhere_in_an_inflection() {
        let lexicon = lexicon();
        // Without WordNet, the third-person "s" is still the verb.
        assert_eq!(
            lexicon.one_at_a_time_in(&words("alice works for acme")),
            Some(0)
        );
        assert_eq!(lexicon.one_at_a_time_in(&words("work for")), Some(0));
        assert_eq!(
            lexicon.one_at_a_time_in(&words("alice works at acme")),
            None
        );
        assert_eq!(lexicon.one_at_a_time_in(&words("for acme")), None);
        // A relation held in one place comes after the single-valued ones.
        assert_eq!(
            lexicon.one_at_a_time_in(&words("alice lives in rome")),
            Some(1)
        );
    }

    fn lexicon() -> Lexicon {
        Lexicon::new(&LexiconSpec {
            negations: vec![
                "not".into(),
                "no".into(),
                "no longer".into(),
                "don't".into(),
            ],
            antonyms: vec![["always".into(), "never".into()]],
            change_markers: vec!["now".into(), "switched to".into(), "turned #".into()],
            framing: vec!["believe".into(), "if".into()],
            single_valued: vec!["work for".into()],
            held_in_one_place: vec!["live in".into()],
            value_classes: BTreeMap::from([(
                "database".into(),
                vec!["postgresql|postgres".into(), "mysql".into()],
            )]),
        })
    }

    #[test]
    fn a_change_marker_with_a_number_place_takes_any_number() {
        let lexicon = lexicon();
        let marker = |text: &str| lexicon.change_marker_in(&words(text));
        assert_eq!(marker("son turned 5"), Some("turned 5".to_owned()));
        assert_eq!(
            marker("maria turned 30 in may"),
            Some("turned 30".to_owned())
        );
        assert_eq!(marker("the car turned left"), None);
        assert_eq!(marker("turned five"), None);
    }

    #[test]
    fn a_change_marker_s_verb_may_take_the_changed_thing_before_its_to() {
        let lexicon = lexicon();
        let marker = |text: &str| lexicon.change_marker_in(&words(text));
        assert_eq!(
            marker("we switched our main database to mysql"),
            Some("switched our main database to".to_owned())
        );
        assert!(
            lexicon.opens_with_change_marker(["switched", "the", "db", "to", "mysql"].into_iter())
        );
        // Too far apart, or no "to" at all: no change stated.
        assert_eq!(marker("we switched off the old lights to save power"), None);
        assert_eq!(marker("we switched seats"), None);
    }

    #[test]
    fn negations_match_the_longest_phrase() {
        let lexicon = lexicon();
        assert_eq!(lexicon.negation_at(&words("don't use it")), Some(2));
        assert_eq!(lexicon.negation_at(&words("no longer ship it")), Some(2));
        assert_eq!(lexicon.negation_at(&words("not now")), Some(1));
        assert_eq!(lexicon.negation_at(&words("ship it")), None);
    }

    #[test]
    fn antonyms_need_one_side_in_each() {
        let lexicon = lexicon();
        assert_eq!(
            lexicon.antonym_across("always test", "never test"),
            Some(("always".into(), "never".into()))
        );
        assert_eq!(lexicon.antonym_across("always or never", "never"), None);
    }

    #[test]
    fn values_know_their_spellings() {
        let lexicon = lexicon();
        assert_eq!(
            lexicon.values_in(&words("Postgres and MySQL")),
            vec![
                ("database".to_owned(), "mysql".to_owned()),
                ("database".to_owned(), "postgresql".to_owned())
            ]
        );
        assert_eq!(
            lexicon.change_marker_in(&words("We switched to MySQL")),
            Some("switched to".into())
        );
    }
}
