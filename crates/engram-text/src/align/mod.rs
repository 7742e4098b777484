//! Alignment of two memories' texts: which words they share (as lemmas,
//! spellings of one value, or synonyms) and what differs, hunk by hunk.
//!
//! Contradiction and merge decisions read the differences, never topical
//! similarity alone. A hunk is one run of unaligned words between aligned
//! ones. Each is classified:
//!
//! * a **conflict**: a negation of the aligned predicate on one side only
//!   (counted per hunk, so two negated clauses do not cancel), a quantifier
//!   flip ("all" / "no"), antonyms ("wet" / "dry", from WordNet and the rule
//!   file) or a different value in one slot (numbers, names, values of one
//!   lexicon class, nouns of one WordNet class such as "red" / "blue");
//! * a **substitution**: different content words that are not synonyms or
//!   inflections ("lives" / "works"): another fact, not a conflict;
//! * a **detail**: content words on one side only;
//! * nothing: function words, inflections, synonyms.
//!
//! The parts, each using only those before it and this module's word
//! lists and types (`Token`, `Conflict`, `Comparison`, `Frame`):
//! [`tokens`] reads a text into tokens; `frame` tells its tense and what
//! frames it; `changes` finds a state entered or ended and a value
//! changed; `classify` holds the word tests the hunk rules ask; `rules`
//! says what one hunk is, with named rules in a table; `walk` aligns two
//! texts (the common-subsequence walk) into hunks; `place` says where a
//! hunk sits; `compare` reads each hunk with the rules; `clauses` compares clause by clause and
//! restates a text as one statement; `verdict` reads a comparison as
//! a contradiction, a cover or neither.

use crate::Lexicon;
use crate::wordnet::Word;
use crate::words::{WordClass, Words};
use std::borrow::Cow;

mod changes;
mod classify;
mod clauses;
mod compare;
mod frame;
mod phrase;
mod place;
mod rules;
#[cfg(test)]
mod tests;
mod tokens;
mod updates;
mod verdict;
mod walk;

pub use self::clauses::{Denial, clause_conflict, clauses, denial, may_conflict, statement};
pub use self::compare::{MAX_COMPARED_WORDS, compare, join_compounds, too_long};
pub use self::phrase::recurring_phrase;
pub use self::tokens::tokens;
pub use self::updates::{Update, update, update_rules};

/// Whether `word` is in `list`: a [`WordClass`] of `en.toml`, or a few
/// words written inline (separated by spaces, `_` inside a phrase).
pub fn listed<L: Words + ?Sized>(list: &L, word: &str) -> bool {
    list.has(word)
}

/// Function words: they carry no fact of their own, so a hunk of only
/// these is not a difference.
static FUNCTION_WORDS: WordClass = WordClass::new("function_words");

/// Auxiliaries and copulas: the first one ends the subject.
static AUXILIARIES: WordClass = WordClass::new("auxiliaries");

/// Auxiliaries and copulas that carry tense: a clause of its own has one.
static FINITE_AUXILIARIES: WordClass = WordClass::new("finite_auxiliaries");

/// The verb of possession.
const HAVE: &str = "have";
/// The verb whose first sense a verb of using shares ("uses", "employs").
const USE: &str = "use";
static COPULAS: WordClass = WordClass::new("copulas");

static ARTICLES: WordClass = WordClass::new("articles");

/// Possessive determiners, and the possessive "s" ("Sam`'s`").
static POSSESSIVES: WordClass = WordClass::new("possessives");

/// Whether the token is an auxiliary, a copula or a conjunction: a word
/// that joins a phrase to the sentence rather than opening it.
pub fn joins(t: &Token) -> bool {
    listed(&AUXILIARIES, &t.word)
        || listed(&COPULAS, &t.word)
        || listed(&CONJUNCTIONS, &t.word)
        || t.word == "or"
}

/// A negated auxiliary: "isn't" ("isn t"), "isnt", "cannot".
fn negated_auxiliary(t: &Token) -> bool {
    t.role == Role::Negation
        && (t.word.ends_with(" t") || t.word.ends_with("nt") || t.word == "cannot")
}

/// The auxiliary before "n't" of a negated one ("isn t", "didnt",
/// "cannot"); any other word as it is.
fn negated_base(t: &Token) -> &str {
    if !negated_auxiliary(t) {
        return &t.word;
    }
    if t.word == "cannot" {
        return "can";
    }
    let base = t.word.strip_suffix(" t").unwrap_or(&t.word);
    let base = base
        .strip_suffix('t')
        .filter(|_| base == t.word)
        .unwrap_or(base);
    base.strip_suffix('n').unwrap_or(base)
}

/// An auxiliary or copula that carries tense, negated or not.
fn finite(t: &Token) -> bool {
    written_as(&FINITE_AUXILIARIES, t) || negated_auxiliary(t)
}

/// Whether `t` is one of the auxiliaries `list` spells, as a function
/// word: a capitalised word inside a sentence is a name, not a modal ("met
/// Nate in `May`", "Nate and `May` are friends").
fn written_as<L: Words + ?Sized>(list: &L, t: &Token) -> bool {
    t.role != Role::Name && listed(list, &t.word)
}

/// Words that place a time relative to now ("`last` year", "`this`
/// week", "`next` Monday").
static TIME_DEICTICS: WordClass = WordClass::new("time_deictics");

/// Prepositions that open a date closing a text ("moved `in` May").
static DATE_PREPOSITIONS: WordClass = WordClass::new("date_prepositions");

/// Whether `text` has a content word of `word`'s lemma: says it too.
fn states(text: &[Token], word: &Token) -> bool {
    text.iter().any(|t| t.is_content() && t.shares_lemma(word))
}

/// `text` with the tokens of `range` left out.
fn without_range(text: &[Token], range: std::ops::Range<usize>) -> Cow<'_, [Token]> {
    let mut kept = text.to_vec();
    kept.drain(range);
    Cow::Owned(kept)
}

/// Whether `subject` takes an "-s" in the present, so that a bare verb
/// form after it is a past: "Sam `quit` Acme" (not "the kids leave").
fn takes_third_person_s(subject: &Token) -> bool {
    match subject.role {
        Role::Name => true,
        Role::Content => subject.info.lemmas.contains(&subject.word),
        _ => listed("he she it", &subject.word),
    }
}

/// A past form: of "be", "have", "do" or "used to", or an inflected verb
/// ending neither in "-ing" nor in "-s" ("worked", "taught"; also a
/// participle, "married", which both sides of a relation share).
fn past_form(t: &Token) -> bool {
    past_spelling(&t.word, &t.info)
}

/// [`past_form`] of a word as written and what WordNet knows of it.
fn past_spelling(word: &str, info: &Word) -> bool {
    listed("was were had did used", word)
        || (info.inflected_verb
            && !word.ends_with("ing")
            && !word.ends_with('s')
            && !listed("are am", word))
}

/// Words that make a departure one for good: "left Berlin `for good`",
/// "… `forever`", "… `permanently`" ("good" only after "for").
static PERMANENCE: WordClass = WordClass::new("permanence");

/// Words before a time that make it recur ("`every` Monday").
static RECURRING: WordClass = WordClass::new("recurring");

/// A time that recurs, one of a habit's several occasions: written in the
/// plural ("on `Tuesdays`", "in the `evenings`") or after an aligned
/// "every" or "each". Two of them hold side by side.
fn recurs(time: &Token, after_every: bool, lexicon: &Lexicon) -> bool {
    names_time(time, lexicon)
        && (after_every
            || (time.word.ends_with('s')
                && time
                    .info
                    .lemmas
                    .iter()
                    .any(|l| *l != time.word && time.word.starts_with(l.as_str()))))
}

/// Verbs that rank one thing over another ("prefers tea `over` coffee"),
/// as lemmas.
static PREFERENCE_VERBS: WordClass = WordClass::new("preference_verbs");

/// Subject pronouns whose present-tense verb is its bare form.
static PLAIN_VERB_SUBJECTS: WordClass = WordClass::new("plain_verb_subjects");

/// Auxiliaries followed by a verb's bare form ("will `visit`", "does
/// `speak`").
static BARE_VERB_AUXILIARIES: WordClass = WordClass::new("bare_verb_auxiliaries");

/// Pronouns as the object of a verb ("told `him` to stop").
static OBJECT_PRONOUNS: WordClass = WordClass::new("object_pronouns");

/// Negations that also stand for the argument they deny ("Nobody is
/// swimming" / "A man is swimming").
static NEGATIVE_PRONOUNS: WordClass = WordClass::new("negative_pronouns");

/// Quantifiers that flip against a negative determiner.
static QUANTIFIERS: WordClass = WordClass::new("quantifiers");

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Function,
    Negation,
    Content,
    Number,
    /// A name or a lexicon class value: capitalised inside the sentence,
    /// or a known value that is not also a common word.
    Name,
}

#[derive(Debug, Clone)]
pub struct Token {
    /// Normalised (lowercase) word or phrase.
    pub word: String,
    pub role: Role,
    /// Byte range of the word (or phrase) in the text it came from.
    pub span: (usize, usize),
    /// A number written right after a currency sign ("$2000"): an
    /// amount, never a year.
    pub money: bool,
    /// The first word of its sentence: a text's first word, or one after
    /// a sentence's end ("Maria! `You` too"). A hedge or a frame bears on
    /// its own sentence only.
    pub opens_sentence: bool,
    /// Lemmas (with a class value's canonical spelling) and senses.
    info: Word,
}

impl Token {
    fn pair(&self) -> (&str, &Word) {
        (&self.word, &self.info)
    }

    /// Whether it is a name WordNet knows as a place ("Austin", "New
    /// York").
    pub fn names_place(&self, lexicon: &Lexicon) -> bool {
        self.role == Role::Name && lexicon.names_place(&self.info)
    }

    /// Whether the two tokens share a lemma.
    pub fn shares_lemma(&self, other: &Token) -> bool {
        self.info
            .lemmas
            .iter()
            .any(|l| other.info.lemmas.contains(l))
    }

    /// Whether the token is written right after an apostrophe in `text`,
    /// the text it came from: a clitic such as the "s" of "Nate's".
    pub fn follows_apostrophe(&self, text: &str) -> bool {
        text[..self.span.0].ends_with(['\'', '\u{2019}'])
    }

    pub fn is_content(&self) -> bool {
        matches!(self.role, Role::Content | Role::Number | Role::Name)
    }

    /// Whether the word is the comparative or superlative of an adjective
    /// ("taller", "biggest", and the irregular "best", "worse", lemmas of
    /// their own too). Against the positive it is another predicate: "is
    /// taller than his brother" neither states nor denies "is tall", "the
    /// best players" are more than "good players".
    pub fn is_graded(&self) -> bool {
        let degree = self.info.irregular_degree;
        self.is_content()
            && (self.word.ends_with("er") || self.word.ends_with("est") || degree)
            && !self.info.lemmas.is_empty()
            && (degree || !self.info.lemmas.contains(&self.word))
    }

    /// Whether it states a fact alone: a name, a number, or a noun that
    /// is no verb form ("studio", "March", "1995"; not "regional",
    /// "agreed" or "talking"). A content word WordNet does not know (or
    /// every word, without WordNet) may be any of these, and counts,
    /// unless it is a closed-class word of relation, which WordNet does
    /// not list: a preposition or a conjunction ("since", "until",
    /// "although") relates facts and states none.
    pub fn carries_fact(&self) -> bool {
        matches!(self.role, Role::Name | Role::Number)
            || plain_noun(self)
            || (self.role == Role::Content
                && !self.info.is_known()
                && !is_preposition(&self.word)
                && !listed(&phrase::PHRASE_ENDS, &self.word))
    }

    /// [`Token::carries_fact`] for a word that opens a sentence, where a
    /// capital says nothing: a common word there is a name only as a noun
    /// ("Appreciate it", "Great talking" state no fact; "Paris" does).
    pub fn carries_fact_opening_a_sentence(&self) -> bool {
        if self.role == Role::Name && self.info.is_known() {
            plain_noun(self)
        } else {
            self.carries_fact()
        }
    }

    /// Whether WordNet knows the word as a verb, in any of its forms.
    pub fn is_verb(&self) -> bool {
        self.info.is_verb()
    }

    /// Whether WordNet knows the word as a noun.
    pub fn is_noun(&self) -> bool {
        self.info.is_noun()
    }

    /// Whether the word is a verb written in an inflection ("wins",
    /// "pushed"; also a participle).
    pub fn is_inflected_verb(&self) -> bool {
        self.info.inflected_verb
    }

    /// Whether WordNet knows the word first as a verb of telling ("said",
    /// "admits", "told"): it reports what the rest states.
    pub fn tells(&self, lexicon: &Lexicon) -> bool {
        lexicon.tells(&self.info)
    }

    /// Whether the two tokens say the same: one lemma, one class value or
    /// WordNet synonyms.
    pub fn same_meaning(&self, other: &Token, lexicon: &Lexicon) -> bool {
        self.shares_lemma(other) || lexicon.synonyms(self.pair(), other.pair())
    }

    /// Whether WordNet has this word as a kind of `general`'s ("latte" /
    /// "coffee").
    pub fn kind_of(&self, general: &Token, lexicon: &Lexicon) -> bool {
        lexicon.is_a(&self.info, &general.info)
    }
}

/// Whether `tokens[k]` is said as a predicate: an inflected verb
/// ("worked", "values"), a verb after "to" or an auxiliary ("to `try`",
/// "will `run`"), or what a copula assigns ("was `sick`", "is a
/// `teacher`"). A noun that only names a topic ("video game
/// `tournaments`", "his `business`") is none.
pub fn predicate_at(tokens: &[Token], k: usize) -> bool {
    let Some(t) = tokens.get(k) else {
        return false;
    };
    if t.role != Role::Content {
        return false;
    }
    if t.info.inflected_verb {
        return true;
    }
    let before = tokens[..k].last();
    let governed = before.is_some_and(|p| p.word == "to" || listed(&AUXILIARIES, &p.word));
    (governed && t.info.is_verb()) || assigned_at(tokens, k)
}

/// Whether a copula, past at most an article, assigns `tokens[k]` ("was
/// `sick`", "is a `teacher`").
pub(super) fn assigned_at(tokens: &[Token], k: usize) -> bool {
    tokens[..k]
        .iter()
        .rev()
        .find(|p| !listed(&ARTICLES, &p.word))
        .is_some_and(|p| listed(&COPULAS, &p.word))
}

/// The antonym pairs that the words right after a copula in `words`
/// (normalised) are in as written ("is `single`": "married" / "single"; not
/// the verb of "is `laughing`"): two texts that share one assign opposite
/// values of one attribute, which the model scores as low as a negation.
pub fn predicate_opposites(words: &[String], lexicon: &Lexicon) -> Vec<(String, String)> {
    let mut pairs: Vec<(String, String)> = words
        .windows(2)
        .filter(|pair| listed(&COPULAS, &pair[0]) || listed(&CHANGE_COPULAS, &pair[0]))
        .flat_map(|pair| lexicon.opposed_pairs(&pair[1]))
        .collect();
    pairs.sort();
    pairs.dedup();
    pairs
}

/// A conflict between the two texts, with the words that make it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    pub kind: ConflictKind,
    pub detail: String,
    /// Which side carries the negation (negation and quantifier only).
    negated_side: Option<usize>,
    /// The aligned word a negation bears on, when it names one.
    denied: Option<String>,
    /// The rule that found it (a hunk rule of `align/rules.rs`, or a rule over the whole
    /// texts).
    pub rule: &'static str,
}

/// What kind of clash a [`Conflict`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConflictKind {
    /// One side denies what the other states.
    Negation,
    /// "all" against "no".
    Quantifier,
    /// Opposed words ("wet" / "dry").
    Antonym,
    /// Two values in one slot.
    Value,
    /// The same words with their roles traded.
    Order,
}

impl ConflictKind {
    /// Its name in events and reports.
    pub fn name(self) -> &'static str {
        match self {
            ConflictKind::Negation => "negation",
            ConflictKind::Quantifier => "quantifier",
            ConflictKind::Antonym => "antonym",
            ConflictKind::Value => "value",
            ConflictKind::Order => "order",
        }
    }
}

impl Conflict {
    /// Two words that cannot both hold, and why: "`up` ↔ `down`
    /// (antonyms)", "`5` ↔ `7` (numbers)".
    fn opposed(kind: ConflictKind, first: &str, second: &str, why: &str) -> Self {
        Conflict {
            kind,
            detail: format!("`{first}` ↔ `{second}` ({why})"),
            negated_side: None,
            denied: None,
            rule: "",
        }
    }

    /// The same conflict, as found by `rule`.
    fn found_by(self, rule: &'static str) -> Self {
        Conflict { rule, ..self }
    }
}

/// What two texts' alignment says.
#[derive(Debug, Clone, Default)]
pub struct Comparison {
    pub conflicts: Vec<Conflict>,
    /// The two texts' lengths in words, where one is longer than the
    /// rules read ([`MAX_COMPARED_WORDS`]): nothing else was read.
    pub too_long: Option<[usize; 2]>,
    /// Content words aligned with the other side.
    pub aligned: usize,
    /// Content words per side.
    pub content: [usize; 2],
    /// Content words per side in hunks that are neither conflicts nor
    /// synonyms (details and substitutions).
    pub extra: [usize; 2],
    /// Hunks with different, non-synonymous content words on both sides.
    pub substitutions: Vec<(String, String)>,
    /// Words paired with a more general word on the other side ("man" /
    /// "person"): they agree, but a merge would lose the specific one.
    pub generalisations: usize,
    /// Each general word of a hunk with the specific one it stands for
    /// (`("person", "man")`), for the verdict.
    generalised: Vec<(String, String)>,

    /// Per side, the details that are those specific words ("`car`" /
    /// "vehicle"): they name the shared thing, more precisely.
    specifics: [usize; 2],
    /// Content words paired with a synonym on the other side ("talking" /
    /// "speaking"): the same word for the shared proposition.
    pub synonymous: usize,
    /// Hunks whose prepositions relate the shared words another way
    /// ("flew `to` Paris" / "… `from` Paris"): beside a conflict they
    /// may still describe one scene ("`adding` cheese `to` the sauce" /
    /// "`removing` cheese `from` it"), but a merge would lose one.
    pub relations: Vec<(String, String)>,
    /// Content words both texts have, in another order. A contradiction
    /// may reorder; a merge may not ("a fish is hunting a turtle" / "a
    /// turtle is hunting fish").
    pub moved: usize,
    /// A negation on one side that bears on no aligned predicate: not a
    /// contradiction, but the texts do not say the same.
    pub negation_differs: bool,
    /// Per side: its own words reframe the shared ones, so it cannot stand
    /// for the other text however many of its words it carries ("Carl
    /// `wants to` quit his job", "Kai `might` get a new job").
    pub reframes: [bool; 2],
    /// Content words per side, among the details, that only date the
    /// statement: a change marker that is not a verb ("anymore", "now").
    pub dating: [usize; 2],
    /// Per side: a verb of its own that ends the activity the other text
    /// states ("Sam `quit` smoking" / "Sam smokes"), read as a denial of it
    /// from then on, so a stated change.
    pub ending: [Option<String>; 2],
    /// `(class, first value, second value)`: one hunk names different
    /// values of one lexicon class, so they fill the same slot.
    pub class_changes: Vec<(String, String, String)>,
    /// Per side: when its main verb places what it says, if it tells.
    frames: [Option<Frame>; 2],
    /// The main verb, aligned or unaligned on both sides, in the past on
    /// one side and in the present or the future on the other ("Tom
    /// `worked` for Google" / "Tom `works` for Google", "will `visit`
    /// Tokyo" / "`visited` Tokyo", "`worked` at a bakery" / "`is` employed
    /// at a bakery"): two times of one state or event, and a merge would
    /// keep one and lose the other. Not a verb of telling ("Byrne `said`" / "Byrne
    /// `says`"): when a thing was said does not change what was.
    pub retensed: bool,
    /// Per side, the words beside an antonym that is the predicate
    /// itself: one side has none, the other only names in a complement
    /// ("is `married` to Ana" / "is `divorced`", unlike "is `old`" / "is a
    /// `new` employee" or "is `happy`" / "is `unhappy` with her job").
    opposed_predicate: Option<[usize; 2]>,
    /// Per side: a shared noun only modifies a noun this side adds right
    /// after it ("a `college` party" / "college"), is only in a phrase
    /// attached to an object this side adds ("enjoyed the popcorn at the
    /// `movie`"), or makes with a word this side adds before it a compound
    /// that is no kind of it ("a vice `president`"), so what this side
    /// speaks of is another thing than the shared one.
    another_thing: [bool; 2],
    /// Per side: in the subject, a word of its own narrows the shared
    /// referent to one of a kind ("the user's `team` meeting", "the user's
    /// `older` brother", "the user's `dentist` appointment" / "… meeting"),
    /// so the other side's plainer subject may name another one, and a
    /// value each gives it is no clash ("… is on Monday" / "… on Friday").
    narrows: [bool; 2],
    /// What a shared owner owns is another thing on one side
    /// ([`another_possession`]): another owner's, or another kind.
    another_possession: bool,
    /// The rules that said something of a hunk, in the order they first
    /// did (`align/rules.rs`).
    rules: Vec<&'static str>,
    /// Read the other way round, the texts would not contradict, or not
    /// merge, as read this way ([`Comparison::settle_with`]): neither
    /// stands.
    other_order_differs: bool,
}

/// Prepositions that relate a verb or noun to what follows: place,
/// direction, time, company, purpose, opposition. Not "of", "as", "than"
/// or "like", which build a phrase rather than relate one.
static PREPOSITIONS: WordClass = WordClass::new("prepositions");

/// Whether `word` is one of the prepositions of `en.toml`: words that
/// relate a verb or noun to what follows.
pub fn is_preposition(word: &str) -> bool {
    listed(&PREPOSITIONS, word)
}

/// Words that make what they modify one's single choice ("favorite food").
static FAVORITES: WordClass = WordClass::new("favorites");

/// Copulas of one subject, that assign one value ("is", not "are").
static SINGULAR_COPULAS: WordClass = WordClass::new("singular_copulas");

/// Conjunctions that may join two clauses.
static CONJUNCTIONS: WordClass = WordClass::new("conjunctions");

/// Adverbs that may stand between a conjunction and the verb of its
/// conjunct: "left Google and `now` works at Meta".
static CONJUNCT_ADVERBS: WordClass = WordClass::new("conjunct_adverbs");

/// Whether `t` names a time: a noun of times ("year", "March") or a year
/// ("2019").
fn names_time(t: &Token, lexicon: &Lexicon) -> bool {
    // The possessive's "s" ("the user's son") is no second, which WordNet
    // also spells "s".
    (is_year(&t.word) && !t.money)
        || (t.role != Role::Number && t.word != "s" && lexicon.names_time(&t.info))
}

/// Copulas of becoming, in the past: what they assign holds from then on
/// ("got married", "became ill").
static CHANGE_COPULAS: WordClass = WordClass::new("change_copulas");

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tense {
    Present,
    Past,
    /// "will", "shall": a plan or a forecast, not what is or was.
    Future,
}

impl Tense {
    /// Whether two tenses speak of different times. A present can speak of
    /// what is planned ("is flying to Tokyo tomorrow" / "will fly …"); the
    /// past is apart from both.
    fn apart(self, other: Tense) -> bool {
        self != other && (self == Tense::Past || other == Tense::Past)
    }

    fn name(self) -> &'static str {
        match self {
            Tense::Present => "present",
            Tense::Past => "past",
            Tense::Future => "future",
        }
    }
}

/// When a text places what it says: the tense of its first finite verb or
/// auxiliary, and whether that is a verb of its own in the past ("went",
/// "did not go"): a past event, which may have happened more than once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Frame {
    tense: Tense,
    event: bool,
    /// Where the verb or auxiliary that tells the tense is, if one does.
    at: Option<usize>,
}

/// Whether `word` reads as a year ("2019").
fn is_year(word: &str) -> bool {
    word.len() == 4 && word.parse::<u16>().is_ok_and(|y| (1900..2100).contains(&y))
}

/// Whether `then` follows `first` after at most a space or a hyphen, no
/// punctuation between: written together ("dog collar", "brother-in-law";
/// not "a problem," Mr. Dhaliwal said).
fn written_together(first: &Token, then: &Token) -> bool {
    then.span.0 <= first.span.1 + 1
}

/// A content word that is a noun and no verb form ("party", not
/// "riding").
fn plain_noun(t: &Token) -> bool {
    t.is_content() && t.info.is_noun() && !t.info.inflected_verb
}

/// Courtesy and professional titles ("Mr.", "Dr."): each is one person's
/// as written, and stays with the name it precedes.
static TITLES: WordClass = WordClass::new("titles");

/// Adverbial particles that are nouns too ("down", "back").
static PARTICLES: WordClass = WordClass::new("particles");

/// Articles that bring in one of possibly many: "`a` trip", "`some`
/// friends".
static INDEFINITE_ARTICLES: WordClass = WordClass::new("indefinite_articles");

/// Whether `before` ends with a currency sign: the number after it is an
/// amount of money.
fn after_currency_sign(before: &str) -> bool {
    before.ends_with(['$', '€', '£', '¥'])
}

/// Words before a noun: a verb form right after one is a noun ("the
/// `kids`", "Tom's `cats`").
static DETERMINERS: WordClass = WordClass::new("determiners");

/// Whether token `k` of `tokens` follows a determiner: a noun, not a verb.
fn after_determiner(tokens: &[Token], k: usize) -> bool {
    k.checked_sub(1)
        .is_some_and(|p| listed(&DETERMINERS, &tokens[p].word))
}

/// Words that end a clause: a passive's agent does not run past them.
static CLAUSE_BREAKS: WordClass = WordClass::new("clause_breaks");
