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

use super::Lexicon;
use super::wordnet::Word;
use std::borrow::Cow;

/// Whether `word` is in `list` (words separated by spaces, `_` inside a
/// phrase).
pub(super) fn listed(list: &str, word: &str) -> bool {
    list.split_whitespace()
        .any(|entry| entry == word || (entry.contains('_') && entry.replace('_', " ") == word))
}

/// Function words: they carry no fact of their own, so a hunk of only
/// these is not a difference.
const FUNCTION_WORDS: &str = "a an the this that these those there here it its is are was were be been being am do \
     does did doing has have had having will should can \
     of to in on at by for with from as into onto and or but if then than so \
     which who whom whose what he she they them his her hers their theirs we us our you \
     your i me my him himself herself themselves itself one s some any just also too very \
     while about each";

/// Auxiliaries and copulas: the first one ends the subject.
const AUXILIARIES: &str = "is are was were am be been has have had do does did will would can could should may \
     might must shall";

/// Auxiliaries and copulas that carry tense: a clause of its own has one.
const FINITE_AUXILIARIES: &str = "is are was were am has have had do does did will would can could should \
     may might must shall";

/// The verb of possession.
const HAVE: &str = "have";
const COPULAS: &str = "is are was were am be been being";

const ARTICLES: &str = "a an the";

/// Whether the token is an auxiliary, a copula or a conjunction: a word
/// that joins a phrase to the sentence rather than opening it.
pub fn joins(t: &Token) -> bool {
    listed(AUXILIARIES, &t.word)
        || listed(COPULAS, &t.word)
        || listed(CONJUNCTIONS, &t.word)
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
    listed(FINITE_AUXILIARIES, t.word.as_str()) || negated_auxiliary(t)
}

/// Words that place a time relative to now ("`last` year", "`this`
/// week", "`next` Monday").
const TIME_DEICTICS: &str = "this last next past previous coming following";

/// A past form: of "be", "have", "do" or "used to", or an inflected verb
/// ending neither in "-ing" nor in "-s" ("worked", "taught"; also a
/// participle, "married", which both sides of a relation share).
fn past_form(t: &Token) -> bool {
    listed("was were had did used", &t.word)
        || (t.info.inflected_verb
            && !t.word.ends_with("ing")
            && !t.word.ends_with('s')
            && !listed("are am", &t.word))
}

/// Words before a time that make it recur ("`every` Monday").
const RECURRING: &str = "every each";

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
const PREFERENCE_VERBS: &str = "prefer favor favour choose";

/// Subject pronouns whose present-tense verb is its bare form.
const PLAIN_VERB_SUBJECTS: &str = "i we you they";

/// Auxiliaries followed by a verb's bare form ("will `visit`", "does
/// `speak`").
const BARE_VERB_AUXILIARIES: &str = "do does did will would can could shall should may might must";

/// Pronouns as the object of a verb ("told `him` to stop").
const OBJECT_PRONOUNS: &str = "me you him her it us them";

/// Negations that also stand for the argument they deny ("Nobody is
/// swimming" / "A man is swimming").
const NEGATIVE_PRONOUNS: &str = "nobody nothing none no_one noone";

/// Quantifiers that flip against a negative determiner.
const QUANTIFIERS: &str = "all every each some many most several always everyone everybody everything someone \
     somebody something";

const NUMBER_WORDS: &str = "zero one two three four five six seven eight nine ten eleven twelve thirteen \
     fourteen fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty \
     seventy eighty ninety hundred thousand million billion dozen once twice";

/// The value a cardinal number word spells, so that "eight" and "8" are
/// one value; multipliers ("million") stay words, as they do after digits.
fn spelled_number(word: &str) -> Option<u32> {
    const UNITS: [&str; 20] = [
        "zero",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
    ];
    const TENS: [&str; 8] = [
        "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
    ];
    if let Some(k) = UNITS.iter().position(|u| *u == word) {
        return u32::try_from(k).ok();
    }
    if let Some(k) = TENS.iter().position(|t| *t == word) {
        return u32::try_from(k * 10 + 20).ok();
    }
    // "twice" and "third" count something else than "two" and "three".
    (word == "dozen").then_some(12)
}

/// The rank an ordinal spells or writes: "third" and "3rd" are one rank.
fn ordinal_rank(word: &str) -> Option<u32> {
    const SPELLED: [&str; 12] = [
        "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth",
        "tenth", "eleventh", "twelfth",
    ];
    if let Some(k) = SPELLED.iter().position(|w| *w == word) {
        return u32::try_from(k + 1).ok();
    }
    let digits = word
        .strip_suffix("st")
        .or_else(|| word.strip_suffix("nd"))
        .or_else(|| word.strip_suffix("rd"))
        .or_else(|| word.strip_suffix("th"))?;
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The lemma that marks an ordinal as a day of the month: the number it
/// ranks ([`tokens`] adds it).
fn day_lemma(rank: u32) -> String {
    rank.to_string()
}

/// The day an ordinal names, where [`tokens`] read it as a day of the
/// month ("March `3rd`": 3).
fn day_of_month(token: &Token) -> Option<u32> {
    ordinal_rank(&token.word).filter(|&rank| token.info.lemmas.contains(&day_lemma(rank)))
}

/// A rank as digits write it: 3 is "3rd", 11 "11th".
fn ordinal_written(rank: u32) -> String {
    let suffix = match (rank % 100, rank % 10) {
        (11..=13, _) => "th",
        (_, 1) => "st",
        (_, 2) => "nd",
        (_, 3) => "rd",
        _ => "th",
    };
    format!("{rank}{suffix}")
}

/// The value digits write: "37,000" is 37000, ".20" is 0.20.
fn number_value(digits: &str) -> String {
    let value = digits.replace(',', "");
    match value.strip_prefix('.') {
        Some(fraction) => format!("0.{fraction}"),
        None => value,
    }
}

/// The numbers of a hunk as values: digits as written, spelled numbers as
/// digits, "fifty seven" as 57.
fn number_values(tokens: &[&Token]) -> Vec<String> {
    let mut values: Vec<String> = Vec::new();
    // The last value, when it was a spelled multiple of ten ("fifty").
    let mut tens: Option<u32> = None;
    for token in tokens.iter().filter(|t| t.role == Role::Number) {
        if let Some((_, time)) = clock(&token.word) {
            values.push(time);
            tens = None;
            continue;
        }
        if let Some(unit_at) = joined_unit(&token.word) {
            values.push(number_value(&token.word[..unit_at]));
            tens = None;
            continue;
        }
        match (tens.take(), spelled_number(&token.word)) {
            (Some(tens), Some(unit)) if (1..10).contains(&unit) => {
                values.pop();
                values.push((tens + unit).to_string());
            }
            (_, Some(value)) => {
                values.push(value.to_string());
                tens = (value >= 20 && value % 10 == 0).then_some(value);
            }
            (_, None) => values.push(match (day_of_month(token), ordinal_rank(&token.word)) {
                (Some(day), _) => day.to_string(),
                (None, Some(rank)) => ordinal_written(rank),
                (None, None) => number_value(&token.word),
            }),
        }
    }
    values
}

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
    /// Lemmas (with a class value's canonical spelling) and senses.
    info: Word,
}

impl Token {
    fn pair(&self) -> (&str, &Word) {
        (&self.word, &self.info)
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

    /// Whether the two tokens say the same: one lemma, one class value or
    /// WordNet synonyms.
    pub fn same_meaning(&self, other: &Token, lexicon: &Lexicon) -> bool {
        self.shares_lemma(other) || lexicon.synonyms(self.pair(), other.pair())
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
    let governed = before.is_some_and(|p| p.word == "to" || listed(AUXILIARIES, &p.word));
    let assigned = tokens[..k]
        .iter()
        .rev()
        .find(|p| !listed(ARTICLES, &p.word))
        .is_some_and(|p| listed(COPULAS, &p.word));
    (governed && t.info.is_verb()) || assigned
}

/// The antonym pairs that the words right after a copula in `words`
/// (normalised) are in as written ("is `single`": "married" / "single"; not
/// the verb of "is `laughing`"): two texts that share one assign opposite
/// values of one attribute, which the model scores as low as a negation.
pub fn predicate_opposites(words: &[String], lexicon: &Lexicon) -> Vec<(String, String)> {
    let mut pairs: Vec<(String, String)> = words
        .windows(2)
        .filter(|pair| listed(COPULAS, &pair[0]) || listed(CHANGE_COPULAS, &pair[0]))
        .flat_map(|pair| lexicon.opposed_pairs(&pair[1]))
        .collect();
    pairs.sort();
    pairs.dedup();
    pairs
}

/// Copulas of becoming, in the past: what they assign holds from then on
/// ("got married", "became ill").
const CHANGE_COPULAS: &str = "became got grew";

/// Where `tokens` enter a state in the past that holds now: a
/// [`CHANGE_COPULAS`] right before an adjective or a participle ("User
/// `got` married"; not "got `a` job", "got up", nor "never got married").
fn became(tokens: &[Token]) -> Option<usize> {
    (1..tokens.len().saturating_sub(1)).find(|&k| {
        let state = &tokens[k + 1];
        listed(CHANGE_COPULAS, &tokens[k].word)
            && state.role == Role::Content
            && (!plain_noun(state) || state.info.modifies())
            // "got up", "grew up": a verb with its particle.
            && !listed(PARTICLES, &state.word)
            && !is_preposition(&state.word)
            && !governed(tokens, k)
    })
}

/// Where `tokens` enter, by a past verb of their own, the state opposed to
/// the one `other` states after a copula: the verb is also an adjective
/// WordNet opposes to that state ("User `divorced` Anna" / "User is
/// married to Anna"), so the state holds from then on, as after
/// [`became`]. Only a verb whose object the other text names too: "The
/// shop `closed` early" may be a day's closing, and an activity in
/// progress is no state ("The team lost" / "The team is winning").
fn entered_opposite(tokens: &[Token], other: &[Token], lexicon: &Lexicon) -> Option<usize> {
    let k = frame(tokens)?.at?;
    let verb = &tokens[k];
    let state_opposed = |w: &[Token]| {
        listed("is are am", &w[0].word)
            && w[1].role == Role::Content
            && !w[1].word.ends_with("ing")
            && lexicon.wordnet_antonyms(&verb.info, &w[1].info)
    };
    let object_shared = tokens
        .get(k + 1)
        .is_some_and(|object| object.is_content() && other.iter().any(|o| o.shares_lemma(object)));
    (verb.role == Role::Content
        && object_shared
        && verb.info.inflected_verb
        && past_form(verb)
        && verb.info.modifies()
        && other.windows(2).any(state_opposed))
    .then_some(k)
}

/// `side` with the copula of becoming it enters a state by ([`became`])
/// read as a copula: a function word, as "is" is, so "got married" /
/// "is single" leaves no detail beside the two states.
fn as_copula(side: Cow<'_, [Token]>, became: Option<usize>) -> Cow<'_, [Token]> {
    match became {
        Some(at) => {
            let mut side = side.into_owned();
            side[at].role = Role::Function;
            Cow::Owned(side)
        }
        None => side,
    }
}

/// How `text` denies, by the negations [`tokens`] would find in it.
pub fn denial(text: &str, lexicon: &Lexicon) -> Denial {
    let original: Vec<&str> = crate::text::word_spans(text)
        .map(|(a, b)| &text[a..b])
        .collect();
    let words = lowercase(&original);
    (0..words.len())
        .filter_map(|at| {
            let length = lexicon.negation_at(&words[at..])?;
            let negation = words[at..at + length].join(" ");
            let of_existence = at >= 2
                && words[at - 2] == "there"
                && listed("is are was were", &words[at - 1])
                && negation == "no";
            Some(if listed(NEGATIVE_PRONOUNS, &negation) {
                Denial::Pronoun
            } else if of_existence {
                Denial::Existence
            } else {
                Denial::Negation
            })
        })
        .max()
        .unwrap_or_else(|| {
            if lexicon.change_marker_in(&words).is_some() {
                Denial::Change
            } else {
                Denial::None
            }
        })
}

/// How a text denies, in the order of how far it lowers the similarity
/// the model gives it against the statement it denies.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Denial {
    #[default]
    None,
    /// A stated change ("moved to London", "now uses Vim") denies the
    /// value it replaces in other words than the statement it changes
    /// ("lives in Paris").
    Change,
    /// "not", "no", "never", …
    Negation,
    /// "There is no …", "There are no …": the denial of existence is
    /// worded far from the statement it denies ("There is no man eating
    /// food" / "A man is eating a pizza": 0.43).
    Existence,
    /// "nobody", "no one", "nothing": the pronoun stands for the referent,
    /// so the denying text lacks the noun the other names.
    Pronoun,
}

/// "non" joined by a hyphen to the word it denies ("non-smoker"), also
/// where a line break left a space after the hyphen ("non- operative").
fn non_prefix(text: &str, spans: &[(usize, usize)], words: &[String], at: usize) -> bool {
    words[at] == "non"
        && spans
            .get(at + 1)
            .is_some_and(|next| text[spans[at].1..next.0].trim_end() == "-")
}

/// Whether word `at` is written against a slash ("she/her", "and/or"):
/// a word named as one of several values, not used in the sentence.
fn slashed(text: &str, spans: &[(usize, usize)], at: usize) -> bool {
    let before = at
        .checked_sub(1)
        .map_or("", |k| &text[spans[k].1..spans[at].0]);
    let after = spans
        .get(at + 1)
        .map_or("", |next| &text[spans[at].1..next.0]);
    before == "/" || after == "/"
}

/// The digits of `words` from `at` on that read as one number: groups
/// joined by a decimal point or a thousands separator ("6.32", "37,000",
/// "1,234.5"), with no space between, and a leading decimal point
/// (".20"). Its span, the index of its last word and its role: a number,
/// or a word when the groups run into letters ("1.4bn", a number again
/// where the letters are a unit: [`joined_unit`]). `None` for a single
/// group of digits.
fn number_at(
    text: &str,
    spans: &[(usize, usize)],
    words: &[String],
    at: usize,
) -> Option<((usize, usize), usize, Role)> {
    let digits = |word: &str| !word.is_empty() && word.chars().all(|c| c.is_ascii_digit());
    if !digits(&words[at]) {
        return None;
    }
    let gap = |end: usize| &text[spans[end].1..spans.get(end + 1).map_or(text.len(), |s| s.0)];
    let mut end = at;
    while end + 1 < words.len() {
        let joined = match gap(end) {
            "." => true,
            "," => words[end + 1].len() == 3,
            _ => false,
        };
        if !joined {
            break;
        }
        end += 1;
        if !digits(&words[end]) {
            return Some(((spans[at].0, spans[end].1), end, Role::Content));
        }
    }
    let before = &text[..spans[at].0];
    let leading_point = before.ends_with('.')
        && !before[..before.len() - 1]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '.');
    let start = spans[at].0 - usize::from(leading_point);
    (end > at || leading_point).then_some(((start, spans[end].1), end, Role::Number))
}

/// A time of day at the start of `text` ("3pm", "6:30 p.m.", "18:30",
/// "7 am", "6 in the morning", "10 at night", "6 o'clock"; a bare number
/// is none): its length in bytes and its value,
/// "HH:MM" on the 24-hour clock, or "~H:MM" where the half of the day is
/// unsaid ("6:30" is 6:30 or 18:30).
fn clock(text: &str) -> Option<(usize, String)> {
    let digits = |from: usize| text[from..].bytes().take_while(u8::is_ascii_digit).count();
    let hour_len = digits(0);
    if !(1..=2).contains(&hour_len) {
        return None;
    }
    let hour: u16 = text[..hour_len].parse().ok()?;
    let mut at = hour_len;
    let mut minutes = None;
    if text[at..].starts_with(':') && digits(at + 1) == 2 {
        minutes = Some(text[at + 1..at + 3].parse::<u16>().ok()?);
        at += 3;
    }
    // The length of `written` where `text` opens with it, spaces before it
    // allowed, as a whole word.
    let opens_with = |text: &str, written: &str| {
        let spaced = text.trim_start_matches(' ');
        let after = spaced.get(..written.len())?;
        let ends = !spaced[written.len()..]
            .chars()
            .next()
            .is_some_and(char::is_alphanumeric);
        (after.eq_ignore_ascii_case(written) && ends)
            .then(|| text.len() - spaced.len() + written.len())
    };
    let o_clock = ["o'clock", "o’clock", "oclock"]
        .into_iter()
        .find_map(|written| opens_with(&text[at..], written));
    at += o_clock.unwrap_or(0);
    let rest = &text[at..];
    // The half of the day, as the hour reads in it: 'a' the morning's, 'p'
    // the afternoon's, 'n' the night's (late evening or small hours).
    let half = [
        ("am", 'a'),
        ("a.m.", 'a'),
        ("a.m", 'a'),
        ("pm", 'p'),
        ("p.m.", 'p'),
        ("p.m", 'p'),
        ("in the morning", 'a'),
        ("in the afternoon", 'p'),
        ("in the evening", 'p'),
        ("at night", 'n'),
    ]
    .into_iter()
    .find_map(|(written, half)| opens_with(rest, written).map(|len| (len, half)));
    let ends_here = !rest.chars().next().is_some_and(char::is_alphanumeric);
    let minutes_value = minutes.unwrap_or(0);
    if minutes_value >= 60 {
        return None;
    }
    match half {
        Some((len, half)) if (1..=12).contains(&hour) => {
            let hour = match half {
                'p' => hour % 12 + 12,
                'n' if (6..12).contains(&hour) => hour + 12,
                _ => hour % 12,
            };
            Some((at + len, format!("{hour:02}:{minutes_value:02}")))
        }
        None if (minutes.is_some() || o_clock.is_some()) && ends_here && hour < 24 => {
            let value = if (1..=12).contains(&hour) {
                format!("~{hour}:{minutes_value:02}")
            } else {
                format!("{hour:02}:{minutes_value:02}")
            };
            Some((at, value))
        }
        _ => None,
    }
}

/// An email address or a URL at the start of `text` ("alex@example.com",
/// "https://example.com/a", "www.example.com", "github.com/acme"): its
/// length in bytes, up to the next space, without the punctuation that
/// closes a sentence or a bracket after it.
fn address(text: &str) -> Option<usize> {
    let chunk = text.split(char::is_whitespace).next().unwrap_or("");
    let chunk = chunk.trim_end_matches(['.', ',', ';', ':', '!', '?', ')', ']', '>', '"', '\'']);
    let url = ["http://", "https://", "www."].iter().any(|scheme| {
        chunk.len() > scheme.len()
            && chunk
                .get(..scheme.len())
                .is_some_and(|start| start.eq_ignore_ascii_case(scheme))
    });
    let email = chunk.split_once('@').is_some_and(|(user, domain)| {
        !user.is_empty()
            && domain
                .split_once('.')
                .is_some_and(|(host, tld)| !host.is_empty() && !tld.is_empty())
    });
    // A host and a path without a scheme: a dotted host whose last label
    // is letters ("github.com/acme").
    let path = chunk.split_once('/').is_some_and(|(host, path)| {
        !path.is_empty()
            && host.rsplit_once('.').is_some_and(|(name, tld)| {
                !name.is_empty()
                    && !name.ends_with('.')
                    && tld.len() >= 2
                    && tld.chars().all(|c| c.is_ascii_alphabetic())
            })
    });
    (url || email || path).then_some(chunk.len())
}

/// Whether two values name one time of day: equal, or one leaves the half
/// of the day unsaid ("~6:30" / "18:30"), or one is a bare hour ("at `7`"
/// / "at `7 pm`").
fn same_time(a: &str, b: &str) -> bool {
    let parse = |v: &str| -> Option<(bool, u16, u16)> {
        let (unsaid, v) = v.strip_prefix('~').map_or((false, v), |v| (true, v));
        match v.split_once(':') {
            Some((h, m)) => Some((unsaid, h.parse().ok()?, m.parse().ok()?)),
            // A bare hour says no half of the day and no minutes.
            None => Some((true, v.parse().ok().filter(|h| (1..=12).contains(h))?, 0)),
        }
    };
    let (Some(x), Some(y)) = (parse(a), parse(b)) else {
        return false;
    };
    if !a.contains(':') && !b.contains(':') {
        return false;
    }
    let twelve = |(_, h, m): (bool, u16, u16)| (h % 12, m);
    if x.0 || y.0 {
        twelve(x) == twelve(y)
    } else {
        (x.1, x.2) == (y.1, y.2)
    }
}

/// Units written straight after a number ("5km", "16GB", "the 1990s"):
/// SI and customary measures and data sizes. Not the multipliers ("$1.4bn"
/// is "$1.4 billion", "11M" may be millions or metres) nor single letters
/// that also name other things ("5G", "4K").
const JOINED_UNITS: &str = "km cm mm mi ft yd kg mg lb lbs oz kb mb gb tb hz khz mhz ghz mph \
     kph kmh ml hr hrs min mins s sec secs ms kw kwh mw mah";

/// Where the unit starts in a number written into its unit ("5km",
/// "1.5kg"), if `word` is one: digits, with a decimal point or thousands
/// separators, then a unit of [`JOINED_UNITS`].
fn joined_unit(word: &str) -> Option<usize> {
    let at = word.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == ','))?;
    let number = &word[..at];
    let starts_and_ends_with_digit = number.starts_with(|c: char| c.is_ascii_digit())
        && number.ends_with(|c: char| c.is_ascii_digit());
    (starts_and_ends_with_digit && listed(JOINED_UNITS, &word[at..].to_lowercase())).then_some(at)
}

fn lowercase(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_lowercase()).collect()
}

/// Whether the word after `before` opens a sentence or a quotation: it
/// follows an opening quotation mark, a colon, or a full stop after a
/// lowercase word ("failed. The"; not the abbreviations "U.S. Airways",
/// "Mr. Smith").
fn opens_sentence(before: &str) -> bool {
    let before = before.trim_end();
    if before.ends_with(['"', '\u{201c}', ':']) {
        return true;
    }
    let Some(sentence) = before.strip_suffix(['.', '!', '?']) else {
        return false;
    };
    let last_word = sentence.rsplit(char::is_whitespace).next().unwrap_or("");
    last_word.chars().count() > 1
        && last_word
            .chars()
            .all(|c| c.is_lowercase() || c.is_ascii_digit() || c == '\'')
}

/// A text as tokens, ready to align.
pub fn tokens(text: &str, lexicon: &Lexicon) -> Vec<Token> {
    let spans: Vec<(usize, usize)> = crate::text::word_spans(text).collect();
    let original: Vec<&str> = spans.iter().map(|&(a, b)| &text[a..b]).collect();
    let words = lowercase(&original);
    let mut out = Vec::with_capacity(words.len());
    // An opening existential "There is / are" only introduces what follows:
    // "There is no dog running" states what "No dog is running" does, and
    // left in, its copula aligns with the other text's and strands the
    // negation away from the argument it denies.
    let existential = words.len() > 2
        && words[0] == "there"
        && listed(COPULAS, words[1].as_str())
        && lexicon.negation_at(&words[1..]).is_none();
    let mut at = if existential { 2 } else { 0 };
    while at < words.len() {
        // "non-binding" is "nonbinding", one word as WordNet spells it,
        // and the opposite of "binding" (see [`non_prefixed`]).
        if non_prefix(text, &spans, &words, at) {
            let word = format!("non{}", words[at + 1]);
            out.push(Token {
                money: false,
                info: lexicon.word(&word),
                word,
                role: Role::Content,
                span: (spans[at].0, spans[at + 1].1),
            });
            at += 2;
            continue;
        }
        // An address is one value, not the words its punctuation parts:
        // "alex.b@example.com" holds every word of "alex@example.com".
        if let Some(len) = address(&text[spans[at].0..]) {
            let span = (spans[at].0, spans[at].0 + len);
            let end = spans.iter().rposition(|s| s.1 <= span.1).unwrap_or(at);
            let word = text[span.0..span.1].to_lowercase();
            out.push(Token {
                money: false,
                info: Word::plain(&word),
                word,
                role: Role::Name,
                span,
            });
            at = end + 1;
            continue;
        }
        if let Some((len, value)) = clock(&text[spans[at].0..]) {
            let span = (spans[at].0, spans[at].0 + len);
            let end = spans.iter().rposition(|s| s.1 <= span.1).unwrap_or(at);
            let word = text[span.0..span.1].to_lowercase();
            let mut info = Word::plain(&word);
            info.lemmas.push(value);
            out.push(Token {
                money: false,
                info,
                word,
                role: Role::Number,
                span,
            });
            at = end + 1;
            continue;
        }
        let number = number_at(text, &spans, &words, at);
        // A number run into its unit is a number measured in that unit
        // ("5km" / "10 km" are two distances). It stays one word, so it
        // aligns with no bare number: "5km" is not "5".
        let joined = match number {
            Some((span, end, Role::Content)) => Some((span, end)),
            None => Some((spans[at], at)),
            Some(_) => None,
        }
        .filter(|(span, _)| joined_unit(&text[span.0..span.1]).is_some());
        if let Some((span, end)) = joined {
            let word = text[span.0..span.1].to_lowercase();
            out.push(Token {
                money: false,
                info: Word::plain(&word),
                word,
                role: Role::Number,
                span,
            });
            at = end + 1;
            continue;
        }
        if let Some((span, end, role)) = number {
            let word = text[span.0..span.1].to_lowercase();
            let mut info = Word::plain(&word);
            // ".20" and "0.20", "37,000" and "37000" are one value.
            if role == Role::Number {
                info.lemmas.push(number_value(&word));
            }
            out.push(Token {
                money: role == Role::Number && after_currency_sign(&text[..span.0]),
                info,
                word,
                role,
                span,
            });
            at = end + 1;
            continue;
        }
        if let Some(len) = lexicon.negation_at(&words[at..]) {
            let word = words[at..at + len].join(" ");
            out.push(Token {
                money: false,
                info: Word::plain(&word),
                word,
                role: Role::Negation,
                span: (spans[at].0, spans[at + len - 1].1),
            });
            at += len;
            continue;
        }
        // "dairy-free" names the absence of dairy: one word of its own, not
        // the stem it denies.
        if at + 1 < words.len() && words[at + 1] == "free" && hyphen_before(text, &spans, at + 1) {
            let word = format!("{}-free", words[at]);
            out.push(Token {
                money: false,
                info: Word::plain(&word),
                word,
                role: Role::Content,
                span: (spans[at].0, spans[at + 1].1),
            });
            at += 2;
            continue;
        }
        // A hyphenated compound WordNet lists is one word: a
        // "mother-in-law" is no mother "in law".
        if let Some((end, info)) = hyphenated_compound(text, &spans, &words, at, lexicon) {
            out.push(Token {
                money: false,
                info,
                word: words[at..=end].join("-"),
                role: Role::Content,
                span: (spans[at].0, spans[end].1),
            });
            at = end + 1;
            continue;
        }
        let word = &words[at];
        let spelled = original[at];
        let capitalised = spelled.chars().next().is_some_and(char::is_uppercase);
        let inner_capital = spelled.chars().skip(1).any(char::is_uppercase);
        // A sentence or a quotation capitalises its first word whatever it
        // is: "said, "The …"" opens on the article, not on a name.
        let role = if word.chars().all(|c| c.is_ascii_digit())
            || listed(NUMBER_WORDS, word.as_str())
            || ordinal_rank(word).is_some()
        {
            Role::Number
        } else if listed(FUNCTION_WORDS, word.as_str())
            && (!capitalised || at == 0 || opens_sentence(&text[..spans[at].0]))
            // "she/her" names pronouns: two values a merge must keep.
            && !slashed(text, &spans, at)
        {
            Role::Function
        } else if lexicon.is_value(word)
            && (capitalised || inner_capital || !lexicon.is_common_word(word))
            || (capitalised && at > 0)
            || inner_capital
        {
            Role::Name
        } else {
            Role::Content
        };
        let mut info = lexicon.word(word);
        if lexicon.is_value(word) {
            info.lemmas.push(lexicon.canonical(word).to_owned());
        }
        if let Some(value) = spelled_number(word) {
            info.lemmas.push(value.to_string());
        }
        if let Some(rank) = ordinal_rank(word) {
            info.lemmas.push(ordinal_written(rank));
        }
        out.push(Token {
            money: role == Role::Number && after_currency_sign(&text[..spans[at].0]),
            word: word.clone(),
            role,
            span: spans[at],
            info,
        });
        at += 1;
    }
    // A word after a determiner is a noun (or an adjective before one),
    // not a verb, except after "that", which also opens a clause ("that
    // `runs`"), and a participle after a clitic "s", which may be "is"
    // ("it's `raining`").
    for k in 1..out.len() {
        let before = out[k - 1].word.as_str();
        if out[k].role == Role::Content
            && after_determiner(&out, k)
            && before != "that"
            && !(before == "s" && out[k].word.ends_with("ing"))
        {
            out[k].info.as_noun();
        }
    }
    // An ordinal beside a named month or day is a day of the month, the
    // number it ranks ("March `3rd`", "the `3rd` of March", "Friday the
    // `13th`"), not a place in a series ("the `3rd` week", "Tuesday, the
    // `second` day").
    let named_time =
        |t: Option<&Token>| t.is_some_and(|t| t.role == Role::Name && lexicon.names_time(&t.info));
    for k in 0..out.len() {
        let Some(rank) = ordinal_rank(&out[k].word) else {
            continue;
        };
        let before = k.checked_sub(1).map(|p| &out[p]);
        let before_the = k
            .checked_sub(2)
            .filter(|&p| out[p + 1].word == "the")
            .map(|p| &out[p]);
        if out.get(k + 1).is_some_and(Token::is_content) {
            continue;
        }
        let of_after = out.get(k + 1).is_some_and(|t| t.word == "of");
        if named_time(before) || named_time(before_the) || (of_after && named_time(out.get(k + 2)))
        {
            out[k].info.lemmas.push(day_lemma(rank));
        }
    }
    exception_as_restriction(out, lexicon)
}

/// Whether word `k` is joined to the word before it by a hyphen alone.
fn hyphen_before(text: &str, spans: &[(usize, usize)], k: usize) -> bool {
    &text[spans[k - 1].1..spans[k].0] == "-"
}

/// The last word of the longest hyphenated compound opening at `at` that
/// WordNet lists, as written or inflected ("mother-in-law",
/// "brothers-in-law"), of at most four words joined through a function
/// word: split there, its words read as a detail ("`in law`") of a thing it
/// is not. Compounds of content words ("half-century", "law-breaker")
/// align word by word with their open spellings. With what WordNet says
/// of the compound.
fn hyphenated_compound(
    text: &str,
    spans: &[(usize, usize)],
    words: &[String],
    at: usize,
    lexicon: &Lexicon,
) -> Option<(usize, Word)> {
    let joined = (at + 1..spans.len().min(at + 4))
        .take_while(|&k| hyphen_before(text, spans, k))
        .last()?;
    (at + 2..=joined).rev().find_map(|end| {
        if !words[at + 1..end]
            .iter()
            .any(|w| listed(FUNCTION_WORDS, w.as_str()))
        {
            return None;
        }
        let compound = words[at..=end].join("-");
        let info = lexicon.word(&compound);
        (lexicon.is_common_word(&compound) || info.lemmas.iter().any(|l| *l != compound))
            .then_some((end, info))
    })
}

/// A cheap bound before aligning: whether `a` and `b` share enough
/// content lemmas that their alignment could be a contradiction. A conflict
/// replaces at most a few words a side; the more specific side may add up
/// to half its words. Without a shared lemma, a word of one naming a kind
/// of the other's ("I have a `car`" / "I do not have a `vehicle`") is the
/// shared thing, looked up only then.
pub fn may_conflict(a: &[Token], b: &[Token], lexicon: &Lexicon) -> bool {
    let unshared = |mine: &[Token], theirs: &[Token]| {
        let content = mine.iter().filter(|t| t.is_content()).count();
        let alone = mine
            .iter()
            .filter(|t| t.is_content() && !theirs.iter().any(|o| o.shares_lemma(t)))
            .count();
        (content, alone)
    };
    let ((ca, ua), (cb, ub)) = (unshared(a, b), unshared(b, a));
    let shared = ca - ua;
    let bounded = ua.min(ub) <= 3 && ua <= ca / 2 + 3 && ub <= cb / 2 + 3;
    let one_thing = || {
        a.iter().filter(|t| t.is_content()).any(|t| {
            b.iter().filter(|o| o.is_content()).any(|o| {
                lexicon.related(t.pair(), o.pair())
                    || lexicon.within(&t.info, &o.info)
                    || lexicon.within(&o.info, &t.info)
            })
        })
    };
    bounded && (shared >= 1 || one_thing())
}

/// Conjunctions that may join two clauses.
const CONJUNCTIONS: &str = "and but while whereas";

/// The clauses of a text's tokens: split at a conjunction when both sides
/// have an auxiliary or copula of their own ("There is no clown singing |
/// and | people are not dancing"), or where it joins two predicates of one
/// subject, which then opens the second ("A man is drinking orange juice |
/// and walking" asserts "A man is walking"), unless a negation before it
/// may deny the pair. One text asserts each of its clauses, so one clause
/// can contradict another text.
pub fn clauses(tokens: &[Token]) -> Vec<Cow<'_, [Token]>> {
    fn with_subject<'t>(shared: Option<&[Token]>, clause: &'t [Token]) -> Cow<'t, [Token]> {
        match shared {
            None => Cow::Borrowed(clause),
            Some(prefix) => Cow::Owned(prefix.iter().chain(clause).cloned().collect()),
        }
    }
    let mut out = Vec::new();
    let mut start = 0;
    // The subject (and tense) a predicate of its own shares with the
    // clause before it: "Oscar hates running | but loves cycling" asserts
    // "Oscar loves cycling".
    let mut shared: Option<Vec<Token>> = None;
    for k in 0..tokens.len() {
        if k <= start || !listed(CONJUNCTIONS, tokens[k].word.as_str()) {
            continue;
        }
        // A short subject of its own, then a finite auxiliary: "and `the
        // sun is` setting", not "and running her business `to be` …".
        let own_clause = tokens
            .iter()
            .enumerate()
            .skip(k + 2)
            .take(4)
            .take_while(|(_, t)| !listed(CONJUNCTIONS, t.word.as_str()))
            .any(|(_, t)| finite(t));
        // And a predicate before it, in the same clause: not "a big brown
        // `and` white dog is …", nor "said that he `and` his film are …".
        let before = &tokens[start..k];
        let own_start = before
            .iter()
            .rposition(|t| listed(CLAUSE_BREAKS, t.word.as_str()))
            .map_or(0, |p| p + 1);
        // A name is no predicate, however WordNet may read it: "Computer
        // `Associates`, EMC and Veritas are …" is one subject.
        let predicate_at = before[own_start..]
            .iter()
            .position(|t| finite(t) || (t.info.inflected_verb && t.role != Role::Name))
            .map(|p| start + own_start + p);
        let Some(predicate_at) = predicate_at else {
            continue;
        };
        if own_clause {
            out.push(with_subject(shared.as_deref(), &tokens[start..k]));
            shared = None;
            start = k + 1;
            continue;
        }
        // A predicate of its own after the conjunction, sharing the
        // subject: a verb ("but `loves` cycling"), an auxiliary ("and `is
        // not` putting"), or after a copula a word with a complement ("is
        // closed on Sundays but `open on Mondays`"); not a second object
        // ("wearing a jacket `and a hat`") or a second adjective ("brown
        // `and white`").
        let Some(first) = tokens.get(k + 1) else {
            continue;
        };
        let conjunct_content = tokens[k + 1..]
            .iter()
            .take_while(|t| !listed(CONJUNCTIONS, t.word.as_str()))
            .filter(|t| t.is_content())
            .count();
        let tense_end = (predicate_at..k)
            .find(|&p| {
                !listed(FINITE_AUXILIARIES, tokens[p].word.as_str())
                    && !listed(COPULAS, tokens[p].word.as_str())
            })
            .unwrap_or(k);
        let copular = tokens[predicate_at..tense_end]
            .iter()
            .any(|t| listed(COPULAS, t.word.as_str()));
        let own_tense = finite(first);
        // A negation before it may scope over both predicates ("There is
        // no man standing … and holding poles" denies the pair, not each).
        let negated_before = tokens[start + own_start..k]
            .iter()
            .any(|t| t.role == Role::Negation);
        // A gerund continues a progressive ("is drinking … and walking");
        // elsewhere it is a second object ("finds starting and running
        // her business to be a ride").
        let verb = first.info.inflected_verb
            && first.is_content()
            && (copular || !first.word.ends_with("ing"));
        let predicate = own_tense
            || (!negated_before
                && (verb
                    || (copular
                        && first.is_content()
                        && first.role != Role::Number
                        && conjunct_content >= 2)));
        if !predicate {
            continue;
        }
        out.push(with_subject(shared.as_deref(), &tokens[start..k]));
        let subject = &tokens[start + own_start..predicate_at];
        let tense = if own_tense {
            &[][..]
        } else {
            &tokens[predicate_at..tense_end]
        };
        shared = Some(
            shared
                .as_deref()
                .filter(|_| own_start == 0)
                .map_or_else(Vec::new, |s| s.to_vec())
                .into_iter()
                .chain(subject.iter().cloned())
                .chain(tense.iter().cloned())
                .collect(),
        );
        start = k + 1;
    }
    if start < tokens.len() {
        out.push(with_subject(shared.as_deref(), &tokens[start..]));
    }
    out
}

/// When `a` or `b` joins clauses ("… and there is no man standing in the
/// background"), the first alignment of one clause with the whole other
/// text that is a contradiction: a text asserts each of its clauses. Not
/// clause with clause: two texts' unrelated clauses ("eight-year-old
/// children" / "a 4-year-old boy") would then pass as one slot.
pub fn clause_conflict(a: &[Token], b: &[Token], lexicon: &Lexicon) -> Option<Comparison> {
    let (of_a, of_b) = (clauses(a), clauses(b));
    // Predicates sharing a subject ("sitting by a cart and dropping a
    // sign") are compared only with a text of one clause: against another
    // such text, one predicate would face both of the other's and pass
    // the second as a detail ("standing by a cart and holding a sign").
    let shares_subject = |of: &[Cow<'_, [Token]>]| of.iter().any(|c| matches!(c, Cow::Owned(_)));
    let split = |of: &[Cow<'_, [Token]>], other: &[Cow<'_, [Token]>]| {
        of.len() > 1 && (!shares_subject(of) || other.len() == 1)
    };
    let with_b = of_a
        .iter()
        .filter(|_| split(&of_a, &of_b))
        .map(|x| (x.as_ref(), b));
    let with_a = of_b
        .iter()
        .filter(|_| split(&of_b, &of_a))
        .map(|y| (a, y.as_ref()));
    with_b
        .chain(with_a)
        .filter(|(x, y)| may_conflict(x, y, lexicon))
        .map(|(x, y)| compare(x, y, lexicon))
        .find(Comparison::contradicts)
}

/// Words that end a clause: a passive's agent does not run past them.
const CLAUSE_BREAKS: &str = "and or but while which who that whose where when because";

/// [`tokens`] with a passive clause in active order: "The potato isn't
/// being peeled by a woman" aligns as "a woman isn't being peeled the
/// potato", so a change of voice neither moves the arguments nor leaves the
/// agent a detail of its own. Spans still point into the text.
pub fn statement(text: &str, lexicon: &Lexicon) -> Vec<Token> {
    let tokens = tokens(text, lexicon);
    match active_order(&tokens) {
        Some(order) => {
            let mut slots: Vec<Option<Token>> = tokens.into_iter().map(Some).collect();
            order.into_iter().filter_map(|k| slots[k].take()).collect()
        }
        None => tokens,
    }
}

/// A denial with an exception in its clause affirms the exception and
/// nothing else: "doesn't drink coffee `except` on weekends" says "does
/// drink coffee `only` on weekends", "eats nothing `except` rice" says
/// "eats `only` rice". Read as two denials, it clashed with the very fact
/// it states. An "except" with no denial before it stays one ("all fruit
/// except bananas").
fn exception_as_restriction(mut tokens: Vec<Token>, lexicon: &Lexicon) -> Vec<Token> {
    let mut k = 0;
    while k < tokens.len() {
        let exception = tokens[k].role == Role::Negation && tokens[k].word == "except";
        let denial = exception
            .then(|| {
                tokens[..k]
                    .iter()
                    .rposition(|t| t.role == Role::Negation || listed(CLAUSE_BREAKS, &t.word))
            })
            .flatten()
            .filter(|&j| tokens[j].role == Role::Negation && tokens[j].word != "except");
        let Some(j) = denial else {
            k += 1;
            continue;
        };
        tokens[k].word = "only".to_owned();
        tokens[k].info = lexicon.word("only");
        tokens[k].role = Role::Content;
        // "doesn't" leaves its auxiliary ("does"); "nothing", "never" leave
        // nothing.
        if negated_auxiliary(&tokens[j]) {
            let base = negated_base(&tokens[j]).to_owned();
            tokens[j].info = Word::plain(&base);
            tokens[j].word = base;
            tokens[j].role = Role::Function;
        } else {
            tokens.remove(j);
            k -= 1;
        }
        k += 1;
    }
    tokens
}

/// The token order that puts the first passive clause ("[subject] is
/// (being) [participle] … by [agent]") in active order: agent, auxiliaries,
/// participle, subject, the rest. `None` when there is no such clause.
fn active_order(tokens: &[Token]) -> Option<Vec<usize>> {
    let by = tokens.iter().position(|t| t.word == "by")?;
    let auxiliary = |t: &Token| {
        listed(COPULAS, t.word.as_str())
            || listed(FINITE_AUXILIARIES, t.word.as_str())
            || (t.role == Role::Negation && t.word == "not")
            || negated_auxiliary(t)
    };
    // A form of "be", negated or not: "has peeled" is active.
    let be = |t: &Token| {
        listed(COPULAS, t.word.as_str())
            || t.word == "not"
            || (negated_auxiliary(t)
                && ["is", "are", "was", "were"]
                    .iter()
                    .any(|b| t.word.starts_with(b)))
    };
    // The participle follows "being" ("is being cut"), or a copula when it
    // is an inflected verb ("was peeled"); an "-ing" form is active.
    let participle = (1..by).rev().find(|&v| {
        let (word, before) = (&tokens[v], &tokens[v - 1]);
        word.role == Role::Content
            && !word.word.ends_with("ing")
            && (before.word == "being" || (be(before) && word.info.inflected_verb))
    })?;
    // At most a short complement between participle and agent ("cut into
    // pieces by"), with no verb of its own.
    let complement = &tokens[participle + 1..by];
    if complement.len() > 4 || complement.iter().any(auxiliary) {
        return None;
    }
    let mut first_auxiliary = participle;
    while first_auxiliary > 0 && auxiliary(&tokens[first_auxiliary - 1]) {
        first_auxiliary -= 1;
    }
    // A passive clause carries tense ("was peeled", "had been approved");
    // "without being stopped" is a phrase inside another clause.
    if !tokens[first_auxiliary..participle]
        .iter()
        .any(|t| listed(FINITE_AUXILIARIES, t.word.as_str()) || negated_auxiliary(t))
    {
        return None;
    }
    // The subject starts after a clause break or a verb in the past that
    // reports it ("said | the marriage was not set up by force").
    let clause_start = tokens[..first_auxiliary]
        .iter()
        .rposition(|t| {
            listed(CLAUSE_BREAKS, t.word.as_str())
                || (t.info.inflected_verb && !t.word.ends_with('s') && !t.word.ends_with("ing"))
        })
        .map_or(0, |k| k + 1);
    let agent_end = (by + 1..tokens.len())
        .find(|&k| listed(CLAUSE_BREAKS, tokens[k].word.as_str()))
        .unwrap_or(tokens.len());
    if clause_start == first_auxiliary || agent_end == by + 1 {
        return None;
    }
    Some(
        (0..clause_start)
            .chain(by + 1..agent_end)
            .chain(first_auxiliary..=participle)
            .chain(clause_start..first_auxiliary)
            .chain(participle + 1..by)
            .chain(agent_end..tokens.len())
            .collect(),
    )
}

/// A conflict between the two texts, with the words that make it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    /// `negation`, `quantifier`, `antonym`, `value` or `order`.
    pub kind: &'static str,
    pub detail: String,
    /// Which side carries the negation (negation and quantifier only).
    negated_side: Option<usize>,
    /// The aligned word a negation bears on, when it names one.
    denied: Option<String>,
}

impl Conflict {
    /// Two words that cannot both hold, and why: "`up` ↔ `down`
    /// (antonyms)", "`5` ↔ `7` (numbers)".
    fn opposed(kind: &'static str, first: &str, second: &str, why: &str) -> Self {
        Conflict {
            kind,
            detail: format!("`{first}` ↔ `{second}` ({why})"),
            negated_side: None,
            denied: None,
        }
    }
}

/// What two texts' alignment says.
#[derive(Debug, Clone, Default)]
pub struct Comparison {
    pub conflicts: Vec<Conflict>,
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
    /// The main verb, aligned, in the past on one side and in the present
    /// or the future on the other ("Tom `worked` for Google" / "Tom
    /// `works` for Google", "will `visit` Tokyo" / "`visited` Tokyo"): two
    /// times of one state or event, and a merge would keep one and lose
    /// the other. Not a verb of telling ("Byrne `said`" / "Byrne
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
}

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

/// Words before a noun: a verb form right after one is a noun ("the
/// `kids`", "Tom's `cats`").
const DETERMINERS: &str =
    "a an the this that these those his her their my our your its some any each every no s";

/// Whether token `k` of `tokens` follows a determiner: a noun, not a verb.
fn after_determiner(tokens: &[Token], k: usize) -> bool {
    k.checked_sub(1)
        .is_some_and(|p| listed(DETERMINERS, &tokens[p].word))
}

/// The tense an auxiliary or copula carries; none for a modal other than
/// "will" and "shall" ("won't" is "wo" before its "n't").
fn auxiliary_tense(word: &str) -> Option<Tense> {
    match word {
        "is" | "are" | "am" | "has" | "have" | "do" | "does" => Some(Tense::Present),
        "was" | "were" | "had" | "did" => Some(Tense::Past),
        "will" | "shall" | "wo" | "sha" => Some(Tense::Future),
        _ => None,
    }
}

/// The [`Frame`] of `tokens`: their first finite auxiliary (a modal other
/// than "will" tells no tense, nor does a present perfect, which spans the
/// past), or else their first inflected verb that follows no determiner
/// and precedes no finite auxiliary. `None` when neither is found, or a
/// gerund or a form of "be" comes first.
fn frame(tokens: &[Token]) -> Option<Frame> {
    for (k, t) in tokens.iter().enumerate() {
        let auxiliary = if negated_auxiliary(t) {
            Some(negated_base(t))
        } else {
            listed(FINITE_AUXILIARIES, &t.word).then_some(t.word.as_str())
        };
        if let Some(auxiliary) = auxiliary {
            // A present perfect spans the past up to now: "has never been
            // to Japan" denies "visited Japan last year".
            let participle = tokens[k + 1..]
                .iter()
                .find(|n| n.role != Role::Negation)
                .is_some_and(|n| {
                    n.word == "been" || (n.info.inflected_verb && !n.word.ends_with("ing"))
                });
            if listed("has have", auxiliary) && participle {
                return None;
            }
            // "had" as the verb itself tells a past event like any other
            // past verb ("`had` coffee with Sarah on Monday"), not as an
            // auxiliary ("had left") nor an obligation ("had to leave").
            let had_as_verb = auxiliary == "had"
                && !participle
                && tokens.get(k + 1).is_none_or(|n| n.word != "to");
            return auxiliary_tense(auxiliary).map(|tense| Frame {
                tense,
                event: auxiliary == "did" || had_as_verb,
                // An auxiliary is placed by the verb it carries, which is
                // what the other text's verb aligns with ("will `visit`",
                // "is `visiting`" / "`visited`"); a copula or the
                // auxiliary of a passive by itself ("is" / "was moved").
                at: Some(
                    tokens[k + 1..]
                        .iter()
                        .position(Token::is_content)
                        .map(|d| k + 1 + d)
                        .filter(|&v| {
                            let verb = &tokens[v];
                            (verb.info.inflected_verb && verb.word.ends_with("ing"))
                                || (listed(BARE_VERB_AUXILIARIES, auxiliary) && verb.info.is_verb())
                        })
                        .unwrap_or(k),
                ),
            });
        }
        let verb = t.is_content() && t.info.inflected_verb && !after_determiner(tokens, k);
        // A predicate without a finite verb ("There is no boy `standing`",
        // "no milk `being` drunk") tells no tense.
        if (verb && t.word.ends_with("ing")) || listed("be being been", &t.word) {
            return None;
        }
        if verb {
            // A participle before the finite verb ("The man `surrounded` by
            // photographers is wearing …") is not it.
            if tokens[k + 1..].iter().any(finite) {
                return None;
            }
            let tense = if t.word.ends_with('s') {
                Tense::Present
            } else {
                Tense::Past
            };
            return Some(Frame {
                tense,
                event: tense == Tense::Past,
                at: Some(k),
            });
        }
    }
    None
}

impl Comparison {
    /// The texts state the same proposition and disagree about it: at least
    /// one conflict, no other fact swapped, at most one antonym or value
    /// slot, and little else different. A side that negates may add
    /// nothing (a negated specific statement does not deny the general
    /// one: "not riding a horse by a creek" / "riding a horse"); the other
    /// side may be more specific.
    pub fn contradicts(&self) -> bool {
        // The shared proposition: two aligned content words, or one when
        // nothing else differs ("The car is red" / "… blue"; "I have a
        // `car`" / "I do not have a `vehicle`" names one thing) or the
        // opposed predicate differs only by a complement.
        let aligned = self.aligned + self.generalisations + self.synonymous;
        let shared = aligned >= 2
            || (aligned == 1
                && (self.extra == self.specifics || self.opposed_predicate == Some(self.extra)));
        // A framed text does not state the shared words: "Sam `hopes` to
        // live in Paris" is compatible with "Sam does not live in Paris".
        // Nor does a side that speaks of another possession ("the user's
        // `wife's` birthday", "the user's `work` laptop").
        if self.conflicts.is_empty()
            || !self.substitutions.is_empty()
            || !shared
            || self.reframes.contains(&true)
            || self.another_possession
        {
            return false;
        }
        if let [Some(x), Some(y)] = self.frames {
            // One text in the past, the other in the present, speak of
            // different times ("Emma was unhappy with her job" / "Emma is
            // happy …"); two past events with another value are two
            // occurrences ("went to the gym on Monday" / "… on Wednesday").
            let occurrences =
                x.event && y.event && self.conflicts.iter().all(|c| c.kind == "value");
            if x.tense.apart(y.tense) || occurrences {
                return false;
            }
        }
        let slots = self
            .conflicts
            .iter()
            .filter(|c| c.negated_side.is_none() && c.kind != "antonym")
            .count()
            + usize::from(self.conflicts.iter().any(|c| c.kind == "antonym"));
        let negated: Vec<usize> = self
            .conflicts
            .iter()
            .filter_map(|c| c.negated_side)
            .collect();
        // A denial beside another relation may deny only that relation:
        // "does not live `in` London" / "lives `near` London".
        if !negated.is_empty() && !self.relations.is_empty() {
            return false;
        }
        // Values of a narrowed referent and of its plainer name may be two
        // things' values; a denial or an opposite still speaks of the one
        // named ("`no` dog" denies "a black dog"; "the `young` boy is
        // jumping `into` the pool" / "the boy … `out of` …").
        if negated.is_empty()
            && self.narrows.contains(&true)
            && self.conflicts.iter().all(|c| c.kind == "value")
        {
            return false;
        }
        // A denial beside an opposed value denies another value: "Liam is
        // not learning German" / "… learning Italian" agree, as "The car is
        // not red" / "The car is blue" do.
        if slots > 1 || (slots == 1 && !negated.is_empty()) {
            return false;
        }
        (0..2).all(|side| {
            let allowed = if negated.contains(&side) {
                // A denial may date itself: "Kevin doesn't have a car
                // anymore" denies "Kevin has a car" from now on.
                self.dating[side]
            } else if !negated.is_empty() {
                // A general denial denies every specific case ("There is
                // no puppy rolling" / "A puppy is repeatedly rolling from
                // side to side on its back"), not another thing the
                // denied noun only modifies ("did not go to college" /
                // "went to a college party").
                if self.another_thing[side] {
                    0
                } else {
                    usize::MAX
                }
            } else if self.extra[1 - side] == 0 {
                // The other side states the proposition with nothing of its
                // own; this one may say more about it ("riding a big wave
                // across dark green water" / "riding a small wave").
                usize::MAX
            } else {
                (self.content[side] / 3).max(1)
            };
            self.extra[side] <= allowed
        })
    }

    /// The texts say different things, so no merge may join them, fused
    /// or not: a conflict, a substitution, a reframing, a denial, a more
    /// general word, another relation, [another tense](Self::retensed),
    /// or a shared noun that on one side is part of the name of another
    /// thing ("a dog" / "a dog `collar`", "the president" / "the vice
    /// president").
    pub fn never_merged(&self) -> bool {
        !self.conflicts.is_empty()
            || self.another_thing.contains(&true)
            || self.reframes.contains(&true)
            || !self.substitutions.is_empty()
            || self.negation_differs
            || !self.relations.is_empty()
            || self.generalisations > 0
            || self.retensed
    }

    /// Neither text covers the other: what is [never
    /// merged](Self::never_merged), words in another order, or details on
    /// both sides. Some of these merge with a fused text
    /// ([`super::Prepared::mergeable`]).
    pub fn keeps_apart(&self) -> bool {
        self.never_merged() || self.moved > 0 || (self.extra[0] > 0 && self.extra[1] > 0)
    }

    /// Whether side `side`'s text carries every content word of the other.
    pub fn covers(&self, side: usize) -> bool {
        !self.never_merged() && self.moved == 0 && self.extra[1 - side] == 0
    }

    /// What the alignment means for the detectors, in one line;
    /// `keeps_order` says whether the shared words keep their order up to
    /// a moved block ([`super::fuse::same_order`]), which a merge needs,
    /// and `fusable` whether a fused text may join texts that each have
    /// details of their own ([`super::fuse::fusable`]).
    pub fn verdict(&self, keeps_order: bool, fusable: bool) -> String {
        let mut parts = vec![format!("{} content words aligned", self.aligned)];
        if !keeps_order {
            parts.push("the shared words trade roles".to_owned());
        }
        if !self.conflicts.is_empty() {
            parts.push(format!("conflicts: {}", self.explanation()));
        }
        for (x, y) in &self.substitutions {
            parts.push(format!("different facts: `{x}` ↔ `{y}`"));
        }
        for (x, y) in &self.relations {
            parts.push(format!("different relations: `{x}` ↔ `{y}`"));
        }
        if !self.generalised.is_empty() {
            let pairs: Vec<String> = self
                .generalised
                .iter()
                .map(|(x, y)| format!("`{x}` ↔ `{y}`"))
                .collect();
            parts.push(format!("more general words: {}", pairs.join(", ")));
        }
        for (side, which) in [(0, "first"), (1, "second")] {
            if self.reframes[side] {
                parts.push(format!("the {which} reframes the shared words"));
            }
            if self.another_thing[side] {
                parts.push(format!(
                    "the {which} speaks of another thing than a shared word"
                ));
            }
        }
        if self.negation_differs {
            parts.push("a negation that bears on no shared word".to_owned());
        }
        if self.retensed
            && let [Some(x), Some(y)] = self.frames
        {
            let (past, other) = if x.tense == Tense::Past {
                (x, y)
            } else {
                (y, x)
            };
            parts.push(format!(
                "one in the {}, the other in the {}",
                past.tense.name(),
                other.tense.name()
            ));
        }
        if self.extra != [0, 0] {
            parts.push(format!(
                "details only in the first: {}, only in the second: {}",
                self.extra[0], self.extra[1]
            ));
        }
        // As `Prepared::mergeable` decides: a block moved in one order is no
        // detail ("On Fridays the team deploys …" / "The team deploys … on
        // Fridays"), so only details decide which text covers the other.
        let decision = if self.contradicts() {
            "contradiction"
        } else if self.never_merged() || !keeps_order {
            "not a contradiction; never merged"
        } else if self.extra[0] > 0 && self.extra[1] > 0 && !fusable {
            "neither covers the other; never merged (a detail of each beside one shared word, or a denial)"
        } else if self.extra[0] > 0 && self.extra[1] > 0 {
            "neither covers the other; merged only with a fused text (`consolidation.fuse_merges`)"
        } else if self.extra == [0, 0] {
            "mergeable either way"
        } else if self.extra[1] == 0 {
            "mergeable into the first"
        } else {
            "mergeable into the second"
        };
        format!("{decision} ({})", parts.join("; "))
    }

    /// The conflicts as one readable sentence.
    pub fn explanation(&self) -> String {
        self.conflicts
            .iter()
            .map(|c| c.detail.as_str())
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// Whether `then` follows `first` after at most a space or a hyphen, no
/// punctuation between: written together ("dog collar", "brother-in-law";
/// not "a problem," Mr. Dhaliwal said).
fn written_together(first: &Token, then: &Token) -> bool {
    then.span.0 <= first.span.1 + 1
}

/// `side` with each two adjacent words that `other` writes as one word
/// joined into that word: an open and a closed compound ("per cent" /
/// "percent", "web site" / "website", "multi-year" / "multiyear") are one
/// word, not a different fact on each side.
pub fn join_compounds<'t>(side: &'t [Token], other: &[Token]) -> Cow<'t, [Token]> {
    let closed = |x: &Token, y: &Token| {
        let words = [x, y];
        if words.iter().any(|t| !t.is_content() || t.role == Role::Number)
            // Only a space or a hyphen between them.
            || !written_together(x, y)
        {
            return None;
        }
        other.iter().find(|t| {
            t.is_content()
                && t.word.len() == x.word.len() + y.word.len()
                && t.word.starts_with(&x.word)
                && t.word.ends_with(&y.word)
        })
    };
    let joins_at = |k: usize| side.get(k + 1).and_then(|next| closed(&side[k], next));
    // Most pairs have no compound: nothing is copied for them.
    let Some(first) = (0..side.len()).find(|&k| joins_at(k).is_some()) else {
        return Cow::Borrowed(side);
    };
    let mut joined: Vec<Token> = side[..first].to_vec();
    let mut k = first;
    while k < side.len() {
        if let Some(word) = joins_at(k) {
            joined.push(Token {
                span: (side[k].span.0, side[k + 1].span.1),
                ..word.clone()
            });
            k += 2;
        } else {
            joined.push(side[k].clone());
            k += 1;
        }
    }
    Cow::Owned(joined)
}

/// How much an aligned token weighs: content words and negations count
/// double, so they anchor the alignment ("encourages him `not` to give up"
/// / "… to keep pushing and `not` give up" pairs the two negations, not
/// the two "to"s).
fn anchor_weight(t: &Token) -> u32 {
    if t.is_content() || t.role == Role::Negation {
        2
    } else {
        1
    }
}

/// Aligns `a` with `b` (weighted longest common subsequence: content words
/// count double, so they anchor the alignment) and classifies every hunk.
pub fn compare(a: &[Token], b: &[Token], lexicon: &Lexicon) -> Comparison {
    let (a, b) = (join_compounds(a, b), join_compounds(b, a));
    let ends = [ending(&a, &b, lexicon), ending(&b, &a, lexicon)];
    // Where each side enters a state ([`became`]); read below only where
    // the side has no ending, so no denial has moved its words.
    let becomes = [became(&a), became(&b)];
    // Where each side's past verb leaves it in the state opposed to the
    // other's ("User `divorced` Anna" / "User is married to Anna").
    let entered = [
        entered_opposite(&a, &b, lexicon),
        entered_opposite(&b, &a, lexicon),
    ];
    let (a, b) = (as_copula(a, becomes[0]), as_copula(b, becomes[1]));
    let (a, b) = (
        as_denial(a, ends[0].as_ref()),
        as_denial(b, ends[1].as_ref()),
    );
    let (a, b) = (a.as_ref(), b.as_ref());
    let matches = |x: &Token, y: &Token| {
        x.word == y.word
            || (x.role != Role::Negation
                && y.role != Role::Negation
                && x.info.lemmas.iter().any(|l| y.info.lemmas.contains(l)))
    };
    let (n, m) = (a.len(), b.len());
    let mut table = vec![0u32; (n + 1) * (m + 1)];
    let at = |i: usize, j: usize| i * (m + 1) + j;
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            let skip = table[at(i + 1, j)].max(table[at(i, j + 1)]);
            table[at(i, j)] = if matches(&a[i], &b[j]) {
                let weight = anchor_weight(&a[i]);
                skip.max(table[at(i + 1, j + 1)] + weight)
            } else {
                skip
            };
        }
    }
    let mut comparison = Comparison {
        reframes: [reframes(a, b, lexicon), reframes(b, a, lexicon)],
        frames: [
            (a, b, &ends[0], becomes[0].or(entered[0])),
            (b, a, &ends[1], becomes[1].or(entered[1])),
        ]
        .map(|(side, other, end, becomes)| match end {
            Some(end) => Some(ending_frame(side, end.at)),
            None => frame(side).map(|found| match found.tense {
                Tense::Past if past_change(side, other, lexicon) || becomes.is_some() => Frame {
                    tense: Tense::Present,
                    event: false,
                    ..found
                },
                _ => found,
            }),
        }),
        // The verb that ends, or enters the state that replaces, what the
        // other side states: the change a newer side names.
        ending: [
            (a, &ends[0], becomes[0].or(entered[0])),
            (b, &ends[1], becomes[1].or(entered[1])),
        ]
        .map(|(side, end, becomes)| {
            end.as_ref()
                .map(|end| end.at)
                .or(becomes)
                .map(|at| side[at].word.clone())
        }),
        content: [
            a.iter().filter(|t| t.is_content()).count(),
            b.iter().filter(|t| t.is_content()).count(),
        ],
        ..Comparison::default()
    };
    let (mut i, mut j) = (0, 0);
    let (mut hunk_a, mut hunk_b) = (Vec::new(), Vec::new());
    // The aligned content word after each hunk names the predicate a
    // negation applies to: hunks remember how many words were aligned
    // before them.
    let mut aligned_words: Vec<&Token> = Vec::new();
    // The second text's word of each aligned pair, for where its form
    // matters ("`worked` at" / "`works` at").
    let mut aligned_in_second: Vec<&Token> = Vec::new();
    let mut hunks: Vec<Hunk<'_>> = Vec::new();
    while i < n || j < m {
        let aligned = i < n && j < m && matches(&a[i], &b[j]) && {
            let weight = anchor_weight(&a[i]);
            table[at(i, j)] == table[at(i + 1, j + 1)] + weight
        };
        if aligned {
            if a[i].is_content() {
                comparison.aligned += 1;
            }
            if (graded(&a[i]) || graded(&b[j])) && compares(a, i) != compares(b, j) {
                comparison
                    .substitutions
                    .push((a[i].word.clone(), b[j].word.clone()));
            }
            if !hunk_a.is_empty() || !hunk_b.is_empty() {
                hunks.push(Hunk {
                    x: std::mem::take(&mut hunk_a),
                    y: std::mem::take(&mut hunk_b),
                    before: aligned_words.len(),
                    end: [i, j],
                });
            }
            aligned_words.push(&a[i]);
            aligned_in_second.push(&b[j]);
            i += 1;
            j += 1;
        } else if i < n && (j == m || table[at(i + 1, j)] >= table[at(i, j + 1)]) {
            hunk_a.push(&a[i]);
            i += 1;
        } else {
            hunk_b.push(&b[j]);
            j += 1;
        }
    }
    if let [
        Some(Frame {
            tense: x,
            at: Some(p),
            ..
        }),
        Some(Frame {
            tense: y,
            at: Some(q),
            ..
        }),
    ] = comparison.frames
    {
        comparison.retensed = x.apart(y)
            && !lexicon.tells(&a[p].info)
            && aligned_words
                .iter()
                .zip(&aligned_in_second)
                .any(|(s, t)| std::ptr::eq(*s, &a[p]) && std::ptr::eq(*t, &b[q]));
    }
    if !hunk_a.is_empty() || !hunk_b.is_empty() {
        hunks.push(Hunk {
            x: hunk_a,
            y: hunk_b,
            before: aligned_words.len(),
            end: [n, m],
        });
    }
    let hunks = joined_lists(hunks, &aligned_words);
    // The subject is what comes before the first auxiliary or copula ("A
    // man | is slicing"), or before a negation that stands right before it
    // and so denies the predicate ("The user | no longer has a dog"); when
    // both sides have one, a hunk before it on both names another
    // referent, not another value.
    let first_auxiliary = |tokens: &[Token]| {
        let auxiliary = |t: &Token| listed(AUXILIARIES, t.word.as_str());
        tokens.iter().enumerate().position(|(k, t)| {
            auxiliary(t)
                || negated_auxiliary(t)
                || (t.role == Role::Negation && tokens.get(k + 1).is_some_and(auxiliary))
        })
    };
    let subject_ends = [first_auxiliary(a), first_auxiliary(b)];
    // An aligned participle after an aligned copula ("is `named`").
    let passive = |k: usize| {
        let verb: &Token = aligned_words[k];
        verb.is_content()
            && verb.info.inflected_verb
            && !verb.word.ends_with("ing")
            && k.checked_sub(1)
                .is_some_and(|p| listed(COPULAS, aligned_words[p].word.as_str()))
    };
    // A verb with its ending, or bare after a subject that takes the bare
    // form ("I `speak` Spanish", "we `work` as nurses") or after a modal
    // or "do" ("will `visit` Tokyo", "does `speak` French").
    let tensed_verb = |k: usize| {
        let verb: &Token = aligned_words[k];
        verb.info.inflected_verb
            || (verb.info.is_verb()
                && k.checked_sub(1).is_some_and(|s| {
                    let before = aligned_words[s].word.as_str();
                    listed(PLAIN_VERB_SUBJECTS, before) || listed(BARE_VERB_AUXILIARIES, before)
                }))
    };
    let additive = adds_a_value(a) || adds_a_value(b);
    // Under a denial "or" joins what is denied ("no man `or` dog").
    let undenied = !a.iter().chain(b).any(|t| t.role == Role::Negation);
    // Where a subject narrows ([`narrows`]), it ends at the first
    // auxiliary, or else at the finite verb ("The user's brother | lives in
    // Boston").
    let subject_bounds =
        [0, 1].map(|side| subject_ends[side].or(comparison.frames[side].and_then(|f| f.at)));
    for Hunk { x, y, before, end } in &hunks {
        let at_start = [end[0] == x.len(), end[1] == y.len()];
        let next = aligned_words[*before..]
            .iter()
            .chain(aligned_words[..*before].iter().rev())
            .find(|t| t.is_content())
            .copied();
        // A hunk opening with a name on both sides goes on with the aligned
        // names before it ("is Sarah `Connor`" / "is Sarah `Kowalski`"):
        // its place is the whole name's.
        let opens_with_name = |hunk: &[&Token]| hunk.first().is_some_and(|t| t.role == Role::Name);
        let value_at = if opens_with_name(x) && opens_with_name(y) {
            before
                - aligned_words[..*before]
                    .iter()
                    .rev()
                    .take_while(|t| t.role == Role::Name)
                    .count()
        } else {
            *before
        };
        // The aligned word the hunk depends on, past an article ("is `a`
        // nurse", "works as `a` nurse").
        let governor = aligned_words[..value_at]
            .iter()
            .rposition(|t| !listed(ARTICLES, t.word.as_str()));
        let (hunk_x, hunk_y) = (x.as_slice(), y.as_slice());
        let object_verb = value_at
            .checked_sub(1)
            .map(|k| aligned_words[k])
            .filter(|verb| {
                verb.is_content() && tensed_verb(value_at - 1) && !passive(value_at - 1)
            });
        let after_hunk = aligned_words.get(*before);
        let before_noun = after_hunk.is_some_and(|t| counting_noun(t));
        let before_name = after_hunk.is_some_and(|t| t.role == Role::Name);
        let place = Place {
            subject: (0..2).all(|side| subject_ends[side].is_some_and(|f| end[side] <= f)),
            after_copula: {
                let copula_at = |k: usize| listed(COPULAS, aligned_words[k].word.as_str());
                let article_at = |k: usize| listed(ARTICLES, aligned_words[k].word.as_str());
                value_at.checked_sub(1).is_some_and(|k| {
                    copula_at(k)
                        || ((before_noun || before_name)
                            && article_at(k)
                            && k.checked_sub(1).is_some_and(copula_at))
                })
            },
            before_noun,
            predicate_noun: governor
                .is_some_and(|k| listed(COPULAS, aligned_words[k].word.as_str()) || passive(k)),
            // Held at one time on both sides: "worked at Google" and
            // "works at Microsoft" are a career, not a clash. The tense is
            // the relation's and its auxiliaries' ("`has been` married to").
            single_valued: governor.is_some_and(|k| {
                let last_first = aligned_words[..=k]
                    .iter()
                    .rev()
                    .map(|t| (t.word.as_str(), &t.info));
                lexicon
                    .single_valued_ending(last_first)
                    .is_some_and(|length| {
                        let mut start = k + 1 - length;
                        while start > 0 && listed(AUXILIARIES, &aligned_words[start - 1].word) {
                            start -= 1;
                        }
                        (start..=k)
                            .all(|v| past_form(aligned_words[v]) == past_form(aligned_in_second[v]))
                    })
            }),
            kind_assigned: governor
                .filter(|&k| listed(COPULAS, &aligned_words[k].word))
                .and_then(|k| k.checked_sub(1))
                .map(|k| aligned_words[k])
                .filter(|t| t.role == Role::Content && t.info.is_noun()),
            role: governor.is_some_and(|k| {
                aligned_words[k].word == "as" && k.checked_sub(1).is_some_and(tensed_verb)
            }),
            object: object_verb.is_some(),
            object_of_feeling: object_verb.is_some_and(|verb| {
                lexicon.feels(&verb.info)
                    && !verb.info.lemmas.iter().any(|l| listed(PREFERENCE_VERBS, l))
            }),
            additive,
            at_start,
            before_time: aligned_words
                .get(*before)
                .is_some_and(|t| t.is_content() && names_time(t, lexicon)),
            possessor: aligned_words.get(*before).is_some_and(|t| t.word == "s"),
            after_every: value_at
                .checked_sub(1)
                .is_some_and(|k| listed(RECURRING, &aligned_words[k].word)),
            after_bound: {
                let back = |n: usize| {
                    value_at
                        .checked_sub(n)
                        .map(|k| aligned_words[k].word.as_str())
                };
                matches!(
                    (back(2), back(1)),
                    (Some("less" | "fewer" | "more" | "greater"), Some("than"))
                        | (Some("at"), Some("least" | "most"))
                        | (Some("up"), Some("to"))
                        | (_, Some("under" | "over" | "above" | "below"))
                )
            },
            has: [(hunk_x, a), (hunk_y, b)].map(|(hunk, sentence)| has_as_verb(hunk, sentence)),
            owns: [a, b].map(only_verb_is_have),
            has_anywhere: [a, b].map(has_as_its_verb),
            locative: governor.is_some_and(|k| {
                let word: &Token = aligned_words[k];
                listed(LOCATIVES, &word.word) || verb_of_presence(word, lexicon)
            }),
            of_an_indefinite: of_an_indefinite(&aligned_words, value_at, lexicon),
            wished: (0..value_at)
                .rev()
                .find(|&k| tensed_verb(k))
                .is_some_and(|k| {
                    let verb: &Token = aligned_words[k];
                    lexicon.feels(&verb.info)
                        && !verb.info.lemmas.iter().any(|l| listed(PREFERENCE_VERBS, l))
                        && aligned_words.get(k + 1).is_some_and(|t| t.word == "to")
                }),
            habitual_destination: (0..2).any(|side| {
                let (hunk, sentence) = [(hunk_x, a), (hunk_y, b)][side];
                habitual_destination(sentence, end[side] - hunk.len(), lexicon)
            }),
        };
        if let [Some(bound_a), Some(bound_b)] = subject_bounds
            && end[0] <= bound_a
            && end[1] <= bound_b
        {
            for side in 0..2 {
                let hunks = [hunk_x, hunk_y];
                let (text, bound) = [(a, bound_a), (b, bound_b)][side];
                if narrows(hunks[side], hunks[1 - side], &text[..bound], end[side]) {
                    comparison.narrows[side] = true;
                }
            }
        }
        for side in 0..2 {
            let hunks = [hunk_x, hunk_y];
            // A head the other text has elsewhere is no added noun: "a
            // camera `lens`" / "the lens of a camera".
            let has_elsewhere = hunks[side]
                .iter()
                .find(|t| t.is_content())
                .is_some_and(|head| [b, a][side].iter().any(|t| t.shares_lemma(head)));
            if hunks[1 - side].iter().all(|t| !t.is_content())
                && !has_elsewhere
                && (modifies_an_added_noun(hunks[side], [a, b][side], end[side], lexicon)
                    || attaches_to_added_object(hunks[side], [a, b][side], end[side])
                    || compounds_into_another(hunks[side], [a, b][side], end[side], lexicon))
            {
                comparison.another_thing[side] = true;
            }
            if another_possession(hunks[side], [a, b][side], end[side]) {
                comparison.another_thing[side] = true;
                comparison.another_possession = true;
            }
        }
        // Before words the other side has elsewhere leave the hunks: "with
        // other `women`" is company though "woman" is the other's subject.
        if let Some((p, q)) = alone_against_company(x, y, lexicon) {
            comparison
                .conflicts
                .push(Conflict::opposed("antonym", &p, &q, "antonyms"));
            continue;
        }
        let before_moving = content(x).len() + content(y).len();
        let (mut x, mut y) = (moved_out(x, b), moved_out(y, a));
        let mut dated = [false; 2];
        for (side, hunk) in [&x, &y].into_iter().enumerate() {
            comparison.dating[side] += hunk
                .iter()
                .filter(|t| t.is_content() && dates_a_change(t, lexicon))
                .count();
            // A time dates when an activity ended: "quit smoking `in
            // 2019`", "`two weeks ago`"; so does where a leaving went
            // ("left Berlin `for Paris`").
            let words = content(hunk);
            let went = |t: &&Token| t.role == Role::Name;
            if ends[side].as_ref().is_some_and(|end| {
                words.len() <= 3
                    && (words.iter().any(|t| names_time(t, lexicon))
                        || (end.leaves() && !words.is_empty() && words.iter().all(went)))
            }) {
                comparison.dating[side] += words.len();
                dated[side] = true;
            }
        }
        // The date of an ending is a detail of its own, not a different
        // fact beside what the other side says there ("stopped smoking
        // `last year`" / "smokes `a pack a day`").
        for (side, hunk) in [&mut x, &mut y].into_iter().enumerate() {
            if dated[side] {
                comparison.extra[side] += content(hunk).len();
                hunk.retain(|t| !t.is_content());
            }
        }
        comparison.moved += before_moving - content(&x).len() - content(&y).len();
        // Change words on both sides date both the same way ("is
        // `currently` in Paris" / "is `now` in Tokyo"): no fact of either.
        let only_change_words = |hunk: &[&Token]| {
            let words = content(hunk);
            !words.is_empty() && words.iter().all(|t| dates_a_change(t, lexicon))
        };
        if only_change_words(&x) && only_change_words(&y) {
            x.retain(|t| !t.is_content());
            y.retain(|t| !t.is_content());
        }
        // A possessive on one side only names another referent: "Dana's
        // brother is a doctor" says nothing of Dana being one, "Tom met
        // Dana's brother" nothing of meeting Dana.
        let owner = before
            .checked_sub(1)
            .map(|k| aligned_words[k])
            .filter(|t| t.is_content());
        if let Some(owner) = owner
            && let Some((side, owned)) = possessed([&x, &y], [hunk_x, hunk_y], [a, b])
            // Not a modifier of a shared noun ("the family's only `car`" /
            // "the family `car`"); a verb either side inflects is no noun
            // ("Sam's parents `live`" / "Sam `lives`"), nor is what follows
            // a verb of the other side's own ("Sam `hates` jazz").
            && (!content([&x, &y][1 - side]).is_empty()
                || (0..2).any(|s| {
                    [a, b][s]
                        .get(end[s])
                        .is_none_or(|t| !t.is_content() || t.info.inflected_verb)
                }))
        {
            let (possessive, bare) = (format!("{}'s {owned}", owner.word), owner.word.clone());
            comparison.substitutions.push(if side == 0 {
                (possessive, bare)
            } else {
                (bare, possessive)
            });
            comparison.extra[side] += content([&x, &y][side]).len();
            comparison.extra[1 - side] += content([&x, &y][1 - side]).len();
            continue;
        }
        let names_before = [
            &aligned_words[value_at..*before],
            &aligned_in_second[value_at..*before],
        ];
        // A choice is not both: "Paris `or` London" / "Paris `and`
        // London", where nothing else differs.
        let has = |side: &[&Token], word: &str| side.iter().any(|t| t.word == word);
        let choice = |x: &[&Token], y: &[&Token]| has(x, "or") && has(y, "and") && !has(y, "or");
        if undenied && content(&x).is_empty() && content(&y).is_empty() {
            if choice(&x, &y) {
                comparison
                    .relations
                    .push(("or".to_owned(), "and".to_owned()));
            } else if choice(&y, &x) {
                comparison
                    .relations
                    .push(("and".to_owned(), "or".to_owned()));
            }
        }
        classify(&x, &y, next, names_before, place, lexicon, &mut comparison);
    }
    cancel_denials_of_one_word(&mut comparison.conflicts);
    cancel_moved_denials(&mut comparison.conflicts, a, b);
    if let Some(conflict) = traded_comparison(a, b, lexicon) {
        comparison.conflicts.push(conflict);
    }
    comparison
}

/// The two sides of a comparison or a preference traded, nothing else
/// different: "prefers tea `over` coffee" / "prefers coffee `over` tea",
/// "Ann is taller `than` Ben" / "Ben is taller `than` Ann". Such a
/// relation holds one way only, so the texts state opposites, where other
/// traded roles ("from Berlin to Paris" / "from Paris to Berlin", "as tall
/// as") only keep a merge apart. Not under a negation: "Ann is not taller
/// than Ben" and "Ben is not taller than Ann" both hold at equal heights.
/// A word stating the change ("`now` prefers coffee over tea") is no
/// difference. A place relation that holds one way at a time traded is
/// the same ([`one_way_place`]: "the cat is on the dog" / "the dog is on
/// the cat"), and so is a contrast ([`contrasts`]: "likes cats but not
/// dogs" / "likes dogs but not cats").
fn traded_comparison(a: &[Token], b: &[Token], lexicon: &Lexicon) -> Option<Conflict> {
    const LONGEST: usize = 40;
    const PIVOTS: &str = "than over to rather instead of";
    let prefers_at_all = |t: &Token| t.info.lemmas.iter().any(|l| listed(PREFERENCE_VERBS, l));
    // The cheap bound first: no "than", and no preference with a pivot,
    // leaves nothing to trade (most pairs, so nothing is copied for them).
    let denials = |side: &[Token]| side.iter().filter(|t| t.role == Role::Negation).count();
    let (denied_a, denied_b) = (denials(a), denials(b));
    // Not under a negation, but for one that is a contrast's own.
    let compared = denied_a == 0
        && denied_b == 0
        && (a.iter().any(|t| t.word == "than")
            || (a.iter().any(prefers_at_all) && a.iter().any(|t| listed(PIVOTS, &t.word)))
            || a.iter().any(|t| listed(ONE_WAY_PLACES, &t.word)));
    let contrasted = denied_a == 1 && denied_b == 1;
    if a.len() > LONGEST || !(compared || contrasted) {
        return None;
    }
    let unchanged = |side| -> Vec<&Token> {
        <[Token]>::iter(side)
            .filter(|t| !lexicon.is_change_word(&t.word))
            .collect()
    };
    let (a, b) = (unchanged(a), unchanged(b));
    let n = a.len();
    if n != b.len() {
        return None;
    }
    // "its prey" / "the prey": one phrase, whatever its determiner.
    let same = |x: &Token, y: &Token| {
        x.word == y.word
            || x.shares_lemma(y)
            || (listed(DETERMINERS, &x.word) && listed(DETERMINERS, &y.word))
    };
    let same_run = |x: &[&Token], y: &[&Token]| x.iter().zip(y).all(|(p, q)| same(p, q));
    let prefix = (0..n).take_while(|&k| same(a[k], b[k])).count();
    if prefix == n {
        return None;
    }
    let suffix = (0..n - prefix)
        .take_while(|&k| same(a[n - 1 - k], b[n - 1 - k]))
        .count();
    let (lo, hi) = (prefix, n - suffix);
    let prefers = a[..lo].iter().any(|t| prefers_at_all(t));
    // A contrast's middle ends with its denial.
    let contrast_ends = a
        .iter()
        .position(|t| t.role == Role::Negation)
        .filter(|_| contrasted)
        .map(|k| k + 1);
    // a[lo..hi] is first ++ middle ++ second, b[lo..hi] second ++ middle ++
    // first.
    for i in lo + 1..hi {
        for j in i + 1..hi {
            let (first, middle, second) = (&a[lo..i], &a[i..j], &a[j..hi]);
            let (k, l) = (lo + second.len(), lo + second.len() + middle.len());
            let contrast = contrast_ends == Some(j) && contrasts(middle);
            if !contrast && !compared {
                continue;
            }
            let place = one_way_place(middle, lexicon);
            let compares = middle.iter().any(|t| t.word == "than")
                || (prefers && middle.iter().all(|t| listed(PIVOTS, &t.word)))
                || place.is_some();
            if (contrast || compares)
                && first.iter().any(|t| t.is_content())
                && second.iter().any(|t| t.is_content())
                && same_run(&b[lo..k], second)
                && same_run(&b[k..l], middle)
                && same_run(&b[l..hi], first)
            {
                let why = match place {
                    _ if contrast => "the contrasted sides traded".to_owned(),
                    Some(relation) => format!("the sides of `{relation}` traded"),
                    None => "the compared sides traded".to_owned(),
                };
                return Some(Conflict::opposed(
                    "order",
                    &words_of(&a[lo..hi]),
                    &words_of(&b[lo..hi]),
                    &why,
                ));
            }
        }
    }
    None
}

/// Whether `middle`, the words between two traded phrases, is a denial
/// that sets the second against the first ("cats `but not` dogs", "French,
/// `not` German", "tea `and never` coffee"): the text asserts one side
/// and denies the other, so traded it states the opposite.
fn contrasts(middle: &[&Token]) -> bool {
    match middle {
        [joined @ .., denial] => {
            denial.role == Role::Negation && joined.iter().all(|t| listed("but and", &t.word))
        }
        [] => false,
    }
}

/// Prepositions of a place relation that holds one way at a time: of two
/// things, only one is behind, under or on the other. "in front of" and
/// "on top of" end with the same relation in two more words.
const ONE_WAY_PLACES: &str =
    "behind under underneath beneath below above atop on onto inside front top";

/// The place relation that `middle`, the words between two traded
/// phrases, ends in, if it holds one way ([`ONE_WAY_PLACES`]) after
/// nothing else that relates, in the present (two events at other times
/// can trade places), and the verb does not take the preposition as its
/// own ("relies `on`", a verb of its own in WordNet).
fn one_way_place(middle: &[&Token], lexicon: &Lexicon) -> Option<String> {
    let end = middle
        .iter()
        .rposition(|t| !listed(DETERMINERS, &t.word))
        .map_or(0, |k| k + 1);
    let words: Vec<&str> = middle[..end].iter().map(|t| t.word.as_str()).collect();
    let relation_len = match words.as_slice() {
        [.., "in", "front", "of"] | [.., "on", "top", "of"] => 3,
        [.., last] if listed(ONE_WAY_PLACES, last) && !listed("front top", last) => 1,
        _ => return None,
    };
    let (before, relation) = middle[..end].split_at(end - relation_len);
    let particle = relation[0].word.as_str();
    let relates_before = before
        .iter()
        .any(|t| is_preposition(&t.word) || t.word == "of");
    let own_particle = before.iter().filter(|t| t.is_content()).any(|t| {
        t.info
            .lemmas
            .iter()
            .any(|l| lexicon.phrasal_verb(l, particle))
    });
    (!relates_before && !own_particle && !before.iter().any(|t| past_form(t)))
        .then(|| words[end - relation_len..].join(" "))
}

/// The other text denies the same words, the negation moved with them
/// ("The marriage was `not` set up by force, Ionescu said" / "Ionescu
/// said: the marriage was `not` set up by force"): a negation the
/// alignment left in a hunk is no conflict when every denial of its side
/// is also one of the other side's.
fn cancel_moved_denials(conflicts: &mut Vec<Conflict>, a: &[Token], b: &[Token]) {
    if conflicts.iter().all(|c| c.negated_side.is_none()) {
        return;
    }
    let runs = [denied_runs(a), denied_runs(b)];
    let made_by_other = |side: usize| {
        let mut other = runs[1 - side].clone();
        !runs[side].is_empty()
            && runs[side].iter().all(|run| {
                let found = other.iter().position(|o| o == run);
                found.map(|k| other.swap_remove(k)).is_some()
            })
    };
    let moved = [made_by_other(0), made_by_other(1)];
    conflicts.retain(|c| c.negated_side.is_none_or(|side| !moved[side]));
}

/// What each negation of `tokens` bears on: the run of content words
/// from the first one after it ("`not` set up", "`no` affiliation or …"),
/// as lemmas ("Deans" and "Dean's" are one). A "nor" before its
/// auxiliary puts the subject between ("nor was Dean `asked`"): the run
/// starts at the verb.
fn denied_runs(tokens: &[Token]) -> Vec<Vec<&str>> {
    tokens
        .iter()
        .enumerate()
        .filter(|(_, t)| t.role == Role::Negation)
        .map(|(k, negation)| {
            let after = &tokens[k + 1..];
            let inverted = listed("nor neither", &negation.word)
                && after.first().is_some_and(|t| listed(AUXILIARIES, &t.word));
            let from = after
                .iter()
                .skip(1)
                .position(|t| t.info.inflected_verb)
                .filter(|_| inverted)
                .map_or(0, |k| k + 1);
            after[from..]
                .iter()
                .skip_while(|t| !t.is_content())
                // A possessive "s" does not end the run: "Dean's opponents".
                .take_while(|t| t.is_content() || t.word == "s")
                .filter(|t| t.is_content())
                .map(|t| {
                    t.info
                        .lemmas
                        .first()
                        .map_or(t.word.as_str(), String::as_str)
                })
                .collect()
        })
        .collect()
}

/// Two denials of one aligned word, one a side, say the same: "does `not`
/// have a state death penalty" / "has `no` state death penalty" puts each
/// negation in a hunk of its own around "have", yet both deny "state".
fn cancel_denials_of_one_word(conflicts: &mut Vec<Conflict>) {
    fn denial(c: &Conflict, side: usize) -> Option<&str> {
        (c.kind == "negation" && c.negated_side == Some(side))
            .then_some(c.denied.as_deref())
            .flatten()
    }
    while let Some((i, j)) = conflicts.iter().enumerate().find_map(|(i, c)| {
        let word = denial(c, 0)?;
        let j = conflicts.iter().position(|o| denial(o, 1) == Some(word))?;
        Some((i, j))
    }) {
        let (first, second) = (i.max(j), i.min(j));
        conflicts.remove(first);
        conflicts.remove(second);
    }
}

/// Where `text` ends the activity `other` states, and in how many words:
/// a verb of its own that WordNet knows as ending an activity ("stopped",
/// "quit", "gave up"), right before a gerund of a verb `other` states
/// ("Sam `quit` smoking" / "Sam smokes", "Sam is smoking"; not "Sam
/// enjoys smoking"). Not a verb that is only wanted, possible or denied
/// ("wants to quit", "might stop", "never stopped"), nor one in progress
/// ("is quitting").
fn ending(text: &[Token], other: &[Token], lexicon: &Lexicon) -> Option<Ending> {
    let stated_by_other = |gerund: &Token| {
        gerund.word.ends_with("ing")
            && gerund.info.inflected_verb
            && other.iter().enumerate().any(|(k, o)| {
                let progressive = o.word == gerund.word
                    && k.checked_sub(1)
                        .is_some_and(|p| listed(COPULAS, &other[p].word));
                o.is_content()
                    && o.shares_lemma(gerund)
                    && (progressive || (o.word != gerund.word && !o.word.ends_with("ing")))
            })
    };
    (2..text.len())
        .filter(|&g| stated_by_other(&text[g]))
        .find_map(|g| {
            let ends = |t: &Token| t.role == Role::Content && !t.word.ends_with("ing");
            let (at, len) = if ends(&text[g - 1]) && lexicon.ends_activity(&text[g - 1].info) {
                (g - 1, 1)
            } else {
                // A verb with its particle: "gave up", "left off".
                let (verb, particle) = (&text[g - 2], &text[g - 1]);
                let phrasal =
                    ends(verb)
                        && verb.info.lemmas.iter().any(|l| {
                            lexicon.phrase_ends_activity(&format!("{l} {}", particle.word))
                        });
                if !phrasal {
                    return None;
                }
                (g - 2, 2)
            };
            (at > 0 && !governed(text, at)).then(|| Ending::of_words(at, len))
        })
        .or_else(|| used_to(text, other).map(|(at, len)| Ending::of_words(at, len)))
        .or_else(|| leaving(text, other, lexicon))
}

/// Where a text ends what the other states ([`ending`]), read as a denial
/// of it.
#[derive(Debug, Clone)]
struct Ending {
    /// The first of its words.
    at: usize,
    /// How many words it replaces.
    len: usize,
    /// How many of those, from `at`, are the denial itself ("gave up",
    /// "left"; not "his job at" in "quit his job at").
    denial: usize,
    /// What the other text states that the denial restates after it
    /// ("left Stripe" denies "works `at`" Stripe).
    restates: Vec<Token>,
}

impl Ending {
    /// Whether it leaves what the other text places ([`leaving`]).
    fn leaves(&self) -> bool {
        !self.restates.is_empty()
    }

    /// Words that are all the denial ("quit", "gave up", "used to").
    fn of_words(at: usize, len: usize) -> Self {
        Ending {
            at,
            len,
            denial: len,
            restates: Vec::new(),
        }
    }
}

/// Prepositions that place a presence: "works `at` Stripe", "lives `in`
/// Berlin", "works `for` Acme".
const PRESENCE_PREPOSITIONS: &str = "at in for";

/// Where `text` ends a presence `other` states now ([`presences`]), read
/// as a denial that restates the other's verb (and preposition), so it
/// aligns with them. A past verb, not only wanted, possible or denied
/// ("wants to leave", "never sold"), nor a passive ("was left"), whose
/// object is the whole of what `other` places or has ("left Stripe's
/// office" leaves an office, "lost his iPhone charger" a charger):
/// WordNet's leaving ([`Lexicon::leaves`]) for a place or an association
/// ("User `left` Stripe" / "User works at Stripe", "`quit his job at`
/// Stripe", "`resigned from` Acme" / "works for Acme"), its parting
/// ([`Lexicon::parts_with`]) for what one has ("`sold` his Honda Civic" /
/// "has a Honda Civic", "`gave away` his piano", "`lost` his iPhone").
fn leaving(text: &[Token], other: &[Token], lexicon: &Lexicon) -> Option<Ending> {
    let presences = presences(other);
    if presences.is_empty() {
        return None;
    }
    (1..text.len()).find_map(|at| {
        let verb = &text[at];
        // A bare form after a subject that takes an "-s" in the present
        // is a past too: "Sam `quit` Acme" (not "the kids leave").
        let subject = &text[at - 1];
        let singular = match subject.role {
            Role::Name => true,
            Role::Content => subject.info.lemmas.contains(&subject.word),
            _ => listed("he she it", &subject.word),
        };
        let past = (verb.info.inflected_verb && past_form(verb))
            || (!verb.info.inflected_verb && singular);
        if verb.role != Role::Content
            || !past
            || listed(COPULAS, &subject.word)
            || governed(text, at)
        {
            return None;
        }
        // With its particle: "dropped out of" MIT, "gave away" a piano.
        let phrasal = |ends: &dyn Fn(&str) -> bool| {
            text.get(at + 1).filter(|t| {
                listed(PARTICLES, &t.word)
                    && verb
                        .info
                        .lemmas
                        .iter()
                        .any(|l| ends(&format!("{l} {}", t.word)))
            })
        };
        presences.iter().find_map(|presence| {
            let particle = match presence.preposition {
                Some(_) => phrasal(&|p| lexicon.phrase_leaves(p)),
                None => phrasal(&|p| lexicon.phrase_parts_with(p)),
            };
            let single = match presence.preposition {
                Some(_) => lexicon.leaves(&verb.info),
                None => lexicon.parts_with(&verb.info),
            };
            if particle.is_none() && !single {
                return None;
            }
            let denial = 1 + usize::from(particle.is_some());
            let after = at
                + denial
                + usize::from(
                    text.get(at + denial)
                        .is_some_and(|t| listed("from of", &t.word)),
                );
            let object = past_determiners(text, after);
            presence
                .ended_at(text, object, other, lexicon)
                .map(|start| {
                    let mut restates = vec![other[presence.verb].clone()];
                    restates.extend(presence.preposition.map(|p| other[p].clone()));
                    Ending {
                        at,
                        len: start - at,
                        denial,
                        restates,
                    }
                })
        })
    })
}

/// What a text states it is at or has now ([`presences`]).
struct Presence {
    /// Its verb: "works", "is", "has".
    verb: usize,
    /// The preposition that places it ("at"); none for what it has.
    preposition: Option<usize>,
    /// What it places or has.
    object: std::ops::Range<usize>,
}

impl Presence {
    /// Where the words of `text` from `object` on name the whole of what
    /// this presence in `other` places or has, if they do: past "his job
    /// at" (a noun for its verb, then its preposition: "quit `his job at`
    /// Stripe"). A named place or employer left for good ends living or
    /// working there; leaving for a while ("for a week", "for lunch"), at
    /// some hour ("early") or an unnamed place ("left the hospital after
    /// her shift") is a day's event. Leaving ends being somewhere ("is at
    /// the office") however it reads, and parting ends having one's own
    /// thing.
    fn ended_at(
        &self,
        text: &[Token],
        object: usize,
        other: &[Token],
        lexicon: &Lexicon,
    ) -> Option<usize> {
        let verb = &other[self.verb];
        let start = match (&text[object.min(text.len())..], self.preposition) {
            ([noun, preposition, ..], Some(p))
                if noun.info.is_noun()
                    && preposition.word == other[p].word
                    && (noun.shares_lemma(verb) || lexicon.is_a(&noun.info, &verb.info)) =>
            {
                past_determiners(text, object + 2)
            }
            _ => object,
        };
        let placed = &other[self.object.clone()];
        let rest = &text[start.min(text.len())..];
        let whole = rest.len() >= placed.len()
            && rest.iter().zip(placed).all(|(x, y)| x.shares_lemma(y))
            && rest.get(placed.len()).is_none_or(|next| {
                // Not a noun the object only modifies ("Stripe's office",
                // "the Stripe office"); a time is no object ("left Berlin
                // last year").
                let compounds = next.word == "s"
                    || next.role == Role::Name
                    || (plain_noun(next) && !next.info.modifies());
                !compounds || names_time(next, lexicon)
            });
        // One's own thing, not one of a kind ("sold `his` car", "sold
        // `the` Tesla"; a dealer "sold `a` car").
        let own = || {
            placed.first().is_some_and(|t| t.role == Role::Name)
                || object.checked_sub(1).is_some_and(|d| {
                    listed(DETERMINERS, &text[d].word)
                        && !listed(INDEFINITE_ARTICLES, &text[d].word)
                })
        };
        let for_good = || {
            (self.preposition.is_none() && own())
                || listed(COPULAS, &verb.word)
                || (placed.first().is_some_and(|t| t.role == Role::Name)
                    && only_dated(&rest[placed.len()..], lexicon))
        };
        (whole && for_good()).then_some(start)
    }
}

/// Whether the rest of a clause after what it says says only when: times,
/// numbers and function words ("last year", "in 2019", "two years ago"),
/// or a named place it went to ("for Paris"); up to the next clause.
fn only_dated(rest: &[Token], lexicon: &Lexicon) -> bool {
    let clause = rest
        .iter()
        .take_while(|t| !listed(CLAUSE_BREAKS, &t.word) && t.word != "then");
    let mut after_for = false;
    for t in clause {
        if after_for && !listed(DETERMINERS, &t.word) {
            // "for" a named place is where it went; for anything else, a
            // while or a purpose ("for a week", "for lunch").
            if t.role != Role::Name {
                return false;
            }
            after_for = false;
            continue;
        }
        if t.word == "for" {
            after_for = true;
            continue;
        }
        let dates = !t.is_content()
            || t.role == Role::Number
            || t.word == "ago"
            || listed(TIME_DEICTICS, &t.word)
            || names_time(t, lexicon);
        if !dates && t.role != Role::Name {
            return false;
        }
    }
    !after_for
}

/// Where the words from `from` on go on past their determiners ("`the`
/// office", "`his` job"), not past a possessive's "s" or a "no".
fn past_determiners(tokens: &[Token], from: usize) -> usize {
    from + tokens
        .get(from..)
        .unwrap_or_default()
        .iter()
        .take_while(|t| t.word != "s" && t.word != "no" && listed(DETERMINERS, &t.word))
        .count()
}

/// Where `other` states a presence now: a present copula or a verb in
/// the present ("is", "works", "lives"; "is working") with a
/// [`PRESENCE_PREPOSITIONS`] right after it, or a present "has" or
/// "owns"; then, after any determiner, a name, or a noun with the nouns
/// that compound with it ("the coffee shop").
fn presences(other: &[Token]) -> Vec<Presence> {
    (1..other.len().saturating_sub(1))
        .filter_map(|v| {
            let verb = &other[v];
            let after_plain_subject = listed(PLAIN_VERB_SUBJECTS, &other[v - 1].word);
            let present = listed("is are am", &verb.word)
                || (verb.role == Role::Content
                    && verb.info.is_verb()
                    && !past_form(verb)
                    && ((verb.info.inflected_verb && verb.word.ends_with('s'))
                        || (verb.word.ends_with("ing")
                            && listed("is are am", &other[v - 1].word))
                        || after_plain_subject));
            let has = verb.word == "has"
                || (verb.word == "have" && after_plain_subject)
                || (present && verb.info.lemmas.iter().any(|l| l == "own"));
            let preposition = if has {
                None
            } else if present && listed(PRESENCE_PREPOSITIONS, &other[v + 1].word) {
                Some(v + 1)
            } else {
                return None;
            };
            let start = past_determiners(other, preposition.map_or(v + 1, |p| p + 1));
            let first = other.get(start)?;
            let len = match first.role {
                Role::Name => other[start..]
                    .iter()
                    .take_while(|t| t.role == Role::Name)
                    .count(),
                // Not a verb after "has" ("has lived").
                Role::Content if preposition.is_some() || start > v + 1 || !past_form(first) => {
                    1 + other[start + 1..]
                        .iter()
                        .take_while(|t| plain_noun(t))
                        .count()
                }
                _ => return None,
            };
            Some(Presence {
                verb: v,
                preposition,
                object: start..start + len,
            })
        })
        .collect()
}

/// Whether the verb at `at` is only wanted, possible or denied: a
/// negation, "to" or a modal in the two words before it.
fn governed(text: &[Token], at: usize) -> bool {
    text[at.saturating_sub(2)..at]
        .iter()
        .any(|t| t.role == Role::Negation || t.word == "to" || modal_or_future(&t.word))
}

/// Words before "used to" that make it being accustomed ("is used to
/// it", "got used to waking") or a passive ("was used to cut").
const USED_AS_ADJECTIVE_AFTER: &str = "get gets got gotten getting become becomes became becoming";

/// Where `text` says that what `other` states now is over, and in how
/// many words: "used to" right before the bare verb of a present one in
/// `other` ("Lisa `used to` live in Madrid" / "Lisa lives in Madrid",
/// "used to be a teacher" / "is a teacher", "used to have" / "has"), an
/// ending like "quit". Not a past statement ("lived"), nor being
/// accustomed or a passive ("is used to waking", "was used to cut").
fn used_to(text: &[Token], other: &[Token]) -> Option<(usize, usize)> {
    let at = (1..text.len().saturating_sub(2)).find(|&k| {
        text[k].word == "used"
            && text[k + 1].word == "to"
            && written_together(&text[k], &text[k + 1])
            && written_together(&text[k + 1], &text[k + 2])
    })?;
    let before = &text[at - 1].word;
    if listed(AUXILIARIES, before) || listed(USED_AS_ADJECTIVE_AFTER, before) || governed(text, at)
    {
        return None;
    }
    let verb = &text[at + 2];
    let bare = !verb.info.inflected_verb && (listed("be have", &verb.word) || verb.info.is_verb());
    let after_plain_subject = |k: usize| {
        k.checked_sub(1)
            .is_some_and(|p| listed(PLAIN_VERB_SUBJECTS, &other[p].word))
    };
    let stated_now = |(k, o): (usize, &Token)| match verb.word.as_str() {
        "be" => listed("is are am", &o.word),
        // Possession, not the perfect's auxiliary ("has lived").
        "have" => {
            (o.word == "has" || (o.word == "have" && after_plain_subject(k)))
                && other.get(k + 1).is_none_or(|n| !n.info.inflected_verb)
        }
        _ => {
            o.is_content()
                && o.shares_lemma(verb)
                && ((o.word != verb.word && o.word.ends_with('s'))
                    || (o.word == verb.word && after_plain_subject(k))
                    || (o.word.ends_with("ing")
                        && k.checked_sub(1)
                            .is_some_and(|p| listed("is are am", &other[p].word))))
        }
    };
    (bare && other.iter().enumerate().any(stated_now)).then_some((at, 2))
}

/// A content word that is a noun and no verb form ("party", not
/// "riding").
fn plain_noun(t: &Token) -> bool {
    t.is_content() && t.info.is_noun() && !t.info.inflected_verb
}

/// Whether `hunk`, words of `subject` ending before `end`, narrows what
/// the subject names beyond `other`, the other side's words there: it has
/// more content words, and one of them, a noun or a comparative or
/// superlative (no number or name), is written right before a noun of the
/// subject, its own or the shared one after it ("the `team` meeting", "the
/// `older` brother", "the `dentist` appointment" / "the meeting"). A plain
/// adjective only describes what it names ("the `old` laptop").
fn narrows(hunk: &[&Token], other: &[&Token], subject: &[Token], end: usize) -> bool {
    content(hunk).len() > content(other).len()
        && hunk.iter().enumerate().any(|(k, t)| {
            // Only a noun of the subject: "The user `now` | works" narrows
            // nothing.
            let next = hunk.get(k + 1).copied().or_else(|| subject.get(end));
            t.role == Role::Content
                && (!t.info.modifies() || selects(t))
                && next.is_some_and(|noun| {
                    noun.role == Role::Content && noun.info.is_noun() && written_together(t, noun)
                })
        })
}

/// Whether `t` is a comparative or superlative, also one WordNet lists as
/// a word of its own ("older", "elder" beside "old"): it picks one of
/// several.
fn selects(t: &Token) -> bool {
    (t.word.ends_with("er") || t.word.ends_with("est"))
        && t.info.lemmas.iter().any(|lemma| *lemma != t.word)
}

/// Adverbial particles that are nouns too ("down", "back").
const PARTICLES: &str = "up down out away back";

/// Whether `hunk`, words of `text` only it has, ending before `end`, makes
/// what an owner owns another thing: an owner of its own between them
/// ("the user's `wife's` birthday" is the wife's, where "Microsoft's
/// Windows" only says whose "Windows" is), or a noun that narrows it to a
/// kind ("the user's `work` laptop", beside a laptop of one's own; an
/// adjective only describes it: "the user's `old` laptop").
fn another_possession(hunk: &[&Token], text: &[Token], end: usize) -> bool {
    let clitic = |k: usize| text.get(k).is_some_and(|t| t.word == "s");
    let start = end - hunk.len();
    let narrowing = start > 0
        && clitic(start - 1)
        && !hunk.is_empty()
        && hunk
            .iter()
            .all(|t| t.role == Role::Content && plain_noun(t) && !t.info.modifies())
        && text.get(end).is_some_and(plain_noun);
    narrowing
        || (start..end).any(|k| text[k].is_content() && k > 0 && clitic(k - 1) && clitic(k + 1))
}

/// Whether `hunk`, words of `text` only it has, ending before `end`, adds
/// the noun that the shared noun right before it only modifies: "a
/// `college` party", "a `dog` collar", "plays `football` video games". The
/// shared noun opens its phrase (after a determiner or a verb) and has no
/// adjective sense ("a `blue` leotard" is blue).
fn modifies_an_added_noun(hunk: &[&Token], text: &[Token], end: usize, lexicon: &Lexicon) -> bool {
    let Some(k) = (end - hunk.len()).checked_sub(1) else {
        return false;
    };
    let shared = &text[k];
    let noun = |t: &Token| plain_noun(t) && !t.info.modifies();
    // A compound is written as one: the head follows the shared noun after
    // one space, no comma or quotation mark ("a problem," Mr. Dhaliwal
    // said). A preposition, a particle or an ordinal opens a phrase of its
    // own ("walking the dog `down` the street", "the staff `first`
    // focused"), and so does a word followed by "of" ("a day `full of`
    // sun"), whatever noun senses they have.
    let Some(head) = hunk.first().filter(|t| {
        plain_noun(t)
            && t.role == Role::Content
            && !names_time(t, lexicon)
            && !listed(PLAIN_VERB_SUBJECTS, &t.word)
            && written_together(shared, t)
            && !is_preposition(&t.word)
            && !listed(PARTICLES, &t.word)
            && ordinal_rank(&t.word).is_none()
            && hunk.get(1).is_none_or(|next| next.word != "of")
    }) else {
        return false;
    };
    let Some(opener) = k.checked_sub(1).map(|d| &text[d]) else {
        return false;
    };
    // After a determiner, two nouns are one phrase ("a teacher
    // assistant", though "assistant" is an adjective too); after a verb
    // the second may be an adverb ("plays tennis `well`").
    let head_of_phrase = if listed(DETERMINERS, opener.word.as_str()) {
        !head.word.ends_with("ly")
    } else {
        opener.is_content() && opener.info.inflected_verb && noun(head)
    };
    // The compound goes on with a shared noun, its real head: "the Oracle
    // `takeover` offer" is an offer. A plural before a word is its subject
    // ("interactions `come` into play"), where a modifier is singular.
    let last = hunk[hunk.len() - 1];
    let goes_on = plain_noun(last)
        && text
            .get(end)
            .is_some_and(|next| plain_noun(next) && written_together(last, next));
    let singular = shared.info.lemmas.is_empty() || shared.info.lemmas.contains(&shared.word);
    noun(shared)
        && singular
        && head_of_phrase
        && !goes_on
        && !names_the_modifier(shared, head, lexicon)
        && !lexicon.is_a(&shared.info, &head.info)
}

/// Whether `t` is the comparative or superlative of an adjective
/// ("taller", "biggest"; not "better", a verb too). Against the positive
/// it is another predicate: "is taller than his brother" neither states
/// nor denies "is tall".
fn graded(t: &Token) -> bool {
    t.is_content()
        && (t.word.ends_with("er") || t.word.ends_with("est"))
        && !t.info.lemmas.is_empty()
        && !t.info.lemmas.contains(&t.word)
}

/// Words that make the adjective after them a comparison ("`more`
/// strict", "`as` hot as").
const DEGREE_WORDS: &str = "more most less least as";

/// Whether the word at `k` compares: a comparative or superlative, or
/// after a degree word ("stricter" and "more strict" both compare).
fn compares(text: &[Token], k: usize) -> bool {
    graded(&text[k])
        || k.checked_sub(1)
            .is_some_and(|p| listed(DEGREE_WORDS, text[p].word.as_str()))
}

/// Prepositions that attach a phrase to the noun before them ("the
/// popcorn `at` the movie"); not "of", whose phrase is often what the
/// noun measures ("a bowl `of` cereal" is cereal).
const ATTACHING_PREPOSITIONS: &str = "at in on from for with by about during";

/// Whether `hunk`, words of `text` only it has, ending before `end`, is an
/// object it adds between a verb and the shared noun, which is then only
/// in a phrase attached to that object: "enjoyed `the popcorn at` the
/// movie" did not enjoy the movie.
fn attaches_to_added_object(hunk: &[&Token], text: &[Token], end: usize) -> bool {
    let start = end - hunk.len();
    let verb = text[..start]
        .iter()
        .rev()
        .find(|t| !listed(ARTICLES, t.word.as_str()));
    let noun_at = hunk.iter().position(|t| plain_noun(t));
    let preposition_at = hunk
        .iter()
        .rposition(|t| listed(ATTACHING_PREPOSITIONS, t.word.as_str()));
    let (Some(noun_at), Some(preposition_at)) = (noun_at, preposition_at) else {
        return false;
    };
    verb.is_some_and(|v| v.is_content() && v.info.inflected_verb)
        && noun_at < preposition_at
        && hunk[preposition_at + 1..]
            .iter()
            .all(|t| listed(DETERMINERS, t.word.as_str()))
        && text.get(end).is_some_and(plain_noun)
}

/// Whether `hunk`, words of `text` only it has, ending before `end`, makes
/// with a shared noun beside it a compound WordNet lists as no kind of
/// that noun in any sense. Before it, a noun: a "`vice` president" is no
/// president, a "`water` gun" no gun, where "`cooking` oil" is oil; not an
/// adjective, which modifies its noun whatever idiom WordNet lists ("cold
/// water" is disparagement, "black cat" a marten). After it, the whole
/// hunk: a "brother`-in-law`" is no brother.
fn compounds_into_another(hunk: &[&Token], text: &[Token], end: usize, lexicon: &Lexicon) -> bool {
    // A name's senses in WordNet are rarely the one meant ("the
    // Solomons" / "Solomon Islands": King Solomon).
    let names_another = |words: &[&Token], noun: &Token| {
        noun.role == Role::Content
            && words.windows(2).all(|w| written_together(w[0], w[1]))
            && std::iter::once(&noun.word)
                .chain(&noun.info.lemmas)
                .any(|lemma| {
                    let spelled = |joint: &str| {
                        words
                            .iter()
                            .map(|t| {
                                if t.word == noun.word {
                                    lemma.as_str()
                                } else {
                                    &t.word
                                }
                            })
                            .collect::<Vec<_>>()
                            .join(joint)
                    };
                    [" ", "-"]
                        .iter()
                        .any(|joint| lexicon.compound_names_another(&spelled(joint), lemma))
                })
    };
    let before = hunk
        .last()
        .zip(text.get(end))
        .is_some_and(|(modifier, noun)| {
            plain_noun(noun)
                && plain_noun(modifier)
                && !modifier.info.modifies()
                && names_another(&[modifier, noun], noun)
        });
    let after = (end - hunk.len())
        .checked_sub(1)
        .map(|k| &text[k])
        .filter(|noun| plain_noun(noun) && (1..=3).contains(&hunk.len()))
        .is_some_and(|noun| {
            let words: Vec<&Token> = std::iter::once(noun).chain(hunk.iter().copied()).collect();
            names_another(&words, noun)
        });
    before || after
}

/// Whether the compound of `modifier` and `head` is one WordNet lists as
/// the modifier itself or a kind of it ("panda bear" is a panda; a "dog
/// collar" is no dog).
fn names_the_modifier(modifier: &Token, head: &Token, lexicon: &Lexicon) -> bool {
    head.info.lemmas.iter().any(|lemma| {
        let phrase = format!("{} {lemma}", modifier.word);
        let compound = lexicon.word(&phrase);
        lexicon.is_common_word(&phrase)
            && (lexicon.synonyms((&phrase, &compound), modifier.pair())
                || lexicon.is_a(&compound, &modifier.info))
    })
}

/// Whether `t` names a time: a noun of times ("year", "March") or a year
/// ("2019").
fn names_time(t: &Token, lexicon: &Lexicon) -> bool {
    (is_year(&t.word) && !t.money) || (t.role != Role::Number && lexicon.names_time(&t.info))
}

/// `side` with its [`Ending`] as one negation, then what it restates.
fn as_denial<'t>(side: Cow<'t, [Token]>, end: Option<&Ending>) -> Cow<'t, [Token]> {
    let Some(end) = end else {
        return side;
    };
    let mut side = side.into_owned();
    let (at, len) = (end.at, end.len);
    let words: Vec<String> = side[at..at + end.denial]
        .iter()
        .map(|t| t.word.clone())
        .collect();
    let word = words.join(" ");
    let span = (side[at].span.0, side[at + len - 1].span.1);
    let denial = Token {
        money: false,
        info: Word::plain(&word),
        span,
        word,
        role: Role::Negation,
    };
    // Restated words stand where the replaced ones stood.
    let restated = end.restates.iter().map(|t| Token { span, ..t.clone() });
    side.splice(at..at + len, std::iter::once(denial).chain(restated));
    Cow::Owned(side)
}

/// Whether `tokens` state a change made in the past to what `other`
/// states now: a change marker opened by a past verb `other` lacks ("was
/// `moved to` Thursday" / "is on Tuesday", "`switched to` Postgres" /
/// "uses MySQL"). The new value holds from then on, so both speak of now.
/// Where `other` has the verb, both speak of the change itself ("moved to
/// Berlin" / "is moving to Berlin next month": done, or planned; "moved
/// to Denver in January" / "… in August": two moves).
fn past_change(tokens: &[Token], other: &[Token], lexicon: &Lexicon) -> bool {
    change_verbs(tokens, lexicon).any(|verb| !other.iter().any(|o| o.shares_lemma(verb)))
}

/// The past verbs of `tokens` that open a change marker ("`switched` to",
/// "was `moved` to").
fn change_verbs<'t, T: std::borrow::Borrow<Token>>(
    tokens: &'t [T],
    lexicon: &'t Lexicon,
) -> impl Iterator<Item = &'t Token> + 't {
    (0..tokens.len()).filter_map(move |k| {
        let verb = tokens[k].borrow();
        (verb.info.inflected_verb
            && past_form(verb)
            && lexicon
                .opens_with_change_marker(tokens[k..].iter().map(|t| t.borrow().word.as_str())))
        .then_some(verb)
    })
}

/// The [`Frame`] of a text that ends an activity at `at`: the state that
/// follows, now ("quit smoking", "has stopped eating meat"), or then after
/// a past auxiliary ("had quit smoking").
fn ending_frame(tokens: &[Token], at: usize) -> Frame {
    let past = tokens[..at]
        .iter()
        .rev()
        .find(|t| finite(t))
        .is_some_and(|t| auxiliary_tense(&t.word) == Some(Tense::Past));
    Frame {
        tense: if past { Tense::Past } else { Tense::Present },
        event: false,
        at: None,
    }
}

/// The side whose hunk (`moved`: without the words that moved; `original`:
/// with them) is a possessive's clitic and a noun the other text lacks
/// ("`s brother`" after "Dana"), when the other side's hunk is empty or
/// says what the owner does instead ("Sam's sister `likes` jazz" / "Sam
/// `hates` jazz"), and that noun phrase.
fn possessed(
    moved: [&[&Token]; 2],
    original: [&[&Token]; 2],
    texts: [&[Token]; 2],
) -> Option<(usize, String)> {
    (0..2).find_map(|side| {
        let other = 1 - side;
        match original[side] {
            [clitic, owned, ..]
                if clitic.word == "s"
                    && owned.is_content()
                    && !moved_out(&[owned], texts[other]).is_empty()
                    // Before an adjective "'s" is "is" ("Sam's happy" /
                    // "Sam is sad"), so the owned word must be a noun.
                    && moved[other].first().is_none_or(|t| {
                        owned.info.is_noun() && !listed(AUXILIARIES, t.word.as_str())
                    }) =>
            {
                // The noun phrase, up to a verb of its own ("Sam's
                // husband | loves").
                let phrase: Vec<&Token> = std::iter::once(*owned)
                    .chain(
                        original[side][2..]
                            .iter()
                            .copied()
                            .take_while(|t| t.is_content() && !t.info.inflected_verb),
                    )
                    .collect();
                Some((side, words_of(&phrase)))
            }
            _ => None,
        }
    })
}

/// Modal auxiliaries: what they govern is possible, wanted or owed, not
/// stated.
const MODALS: &str = "might may could would must should ought";

/// A modal, or an auxiliary of the future or of ability ("will", "can").
fn modal_or_future(word: &str) -> bool {
    listed(MODALS, word) || listed("will can shall", word)
}

/// Whether words of `text` that `other` lacks change what the shared words
/// say, rather than add to it: a modal ("Kai `might` get a new job"), an
/// obligation ("Kai `has to` work"), a verb of its own governing a shared
/// one ("Carl `wants to` quit", "Lisa `used to` live" / "Lisa lived",
/// "Jill `stopped` eating"), but not "go" before an activity ("`goes`
/// running"), or one of the lexicon's framing words
/// ("Sam `believes` the earth is flat", "`If` it rains").
fn reframes(text: &[Token], other: &[Token], lexicon: &Lexicon) -> bool {
    let shared =
        |t: &Token| t.is_content() && other.iter().any(|o| o.is_content() && o.shares_lemma(t));
    let own = |t: &Token| t.is_content() && !shared(t);
    // What `other` has, looked up once: a modal or the future, a modal of
    // possibility, an obligation. The month ("in May") is a name, no modal.
    let other_has =
        |modal: &dyn Fn(&str) -> bool| other.iter().any(|o| o.role != Role::Name && modal(&o.word));
    let other_modal = other_has(&modal_or_future);
    let other_possible = other_has(&|w| listed("might may could", w));
    let other_obliged = (0..other.len()).any(|o| obliged(other, o));
    text.iter().enumerate().any(|(k, t)| {
        let (next, after) = (text.get(k + 1), text.get(k + 2));
        // "would" / "will", "could" / "should": one modal for another is
        // tense or tone; a modal against none is not the fact, and a
        // possibility is not a plan ("may move" / "will move").
        let only_possible = listed("might may", &t.word) && !other_possible;
        let modal = t.role != Role::Name
            && ((listed(MODALS, t.word.as_str()) && !other_modal) || only_possible);
        // A gerund the other text has as a finite verb ("stopped `eating`"
        // / "`eats`"), not the same word ("wore `matching` outfits").
        let gerund_of_other = |n: &Token| {
            n.word.ends_with("ing")
                && other
                    .iter()
                    .any(|o| o.is_content() && o.shares_lemma(n) && o.word != n.word)
        };
        // "go" before a gerund is the activity itself ("goes running" /
        // "runs"); before "to" it is a plan ("is going to run").
        let goes = t.info.lemmas.iter().any(|l| l == "go");
        // Right after it, with no punctuation between: "agreed, saying"
        // reports, it does not govern.
        let adjacent = next.is_some_and(|n| written_together(t, n));
        // Past an object pronoun: "told `him` to stop".
        let (next, after) = match next {
            Some(n)
                if listed(OBJECT_PRONOUNS, &n.word) && after.is_some_and(|a| a.word == "to") =>
            {
                (after, text.get(k + 3))
            }
            _ => (next, after),
        };
        // An infinitive, not a phrase "to" opens ("moved to `Paris`",
        // "engaged to `Sam`").
        let infinitive = |a: &Token| shared(a) && a.role != Role::Name && a.info.is_verb();
        let governs = own(t)
            && t.info.inflected_verb
            && adjacent
            && next.is_some_and(|n| {
                (n.word == "to" && after.is_some_and(infinitive)) || (gerund_of_other(n) && !goes)
            });
        let obligation = obliged(text, k) && after.is_some_and(&shared) && !other_obliged;
        let framing = t.role != Role::Name
            && lexicon.is_framing(&t.word, &t.info)
            && !other.iter().any(|o| o.word == t.word || o.shares_lemma(t));
        modal || governs || obligation || framing
    })
}

/// Whether word `k` of `text` opens an obligation, a modal in three words:
/// "`has to` work".
fn obliged(text: &[Token], k: usize) -> bool {
    listed("has have", &text[k].word)
        && text
            .get(k + 1)
            .is_some_and(|n| n.word == "to" && written_together(&text[k], n))
}

/// A hunk without its content words that the other text has elsewhere:
/// those moved ("walking in body paint in front of a crowd" / "walking in
/// front of a crowd in body paint"), they did not change.
fn moved_out<'t>(hunk: &[&'t Token], other: &[Token]) -> Vec<&'t Token> {
    hunk.iter()
        .copied()
        .filter(|t| {
            !t.is_content()
                || !other.iter().any(|o| {
                    o.is_content() && o.info.lemmas.iter().any(|l| t.info.lemmas.contains(l))
                })
        })
        .collect()
}

fn words_of(tokens: &[&Token]) -> String {
    tokens
        .iter()
        .map(|t| t.word.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The tokens' lemmas, so that the rule file's "add" / "remove" also
/// finds "adding" / "removed".
fn lemmas_of(tokens: &[&Token]) -> String {
    tokens
        .iter()
        .flat_map(|t| t.info.lemmas.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join(" ")
}

fn content<'t>(side: &[&'t Token]) -> Vec<&'t Token> {
    side.iter().copied().filter(|t| t.is_content()).collect()
}

/// A run of unaligned words on each side.
struct Hunk<'t> {
    x: Vec<&'t Token>,
    y: Vec<&'t Token>,
    /// How many words were aligned before it.
    before: usize,
    /// The index after it on each side.
    end: [usize; 2],
}

/// Hunks of numbers on both sides joined by an aligned "and" are one list
/// in one slot: "are `5` and `8`" / "are `6` and `9`" is one other value,
/// as "is `4`" / "is `5`" is, not two slots that might each be another
/// fact. An "or" restates in other units ("fell $2.28, or 7 percent").
fn joined_lists<'t>(hunks: Vec<Hunk<'t>>, aligned: &[&Token]) -> Vec<Hunk<'t>> {
    let numbers = |side: &[&Token]| !side.is_empty() && side.iter().all(|t| t.role == Role::Number);
    let mut out: Vec<Hunk<'t>> = Vec::with_capacity(hunks.len());
    for hunk in hunks {
        if let Some(last) = out.last_mut()
            && numbers(&last.x)
            && numbers(&last.y)
            && numbers(&hunk.x)
            && numbers(&hunk.y)
            && hunk.before == last.before + 1
            && aligned[last.before].word == "and"
        {
            last.x.extend(hunk.x);
            last.y.extend(hunk.y);
            last.end = hunk.end;
            continue;
        }
        out.push(hunk);
    }
    out
}

/// Where a hunk sits in the sentences.
#[derive(Debug, Clone, Copy)]
struct Place<'t> {
    /// Before the first auxiliary or copula on both sides.
    subject: bool,
    /// Right after an aligned copula ("is `red`"), or between its article
    /// and the aligned noun it assigns ("is a `red` sedan").
    after_copula: bool,
    /// Right before an aligned noun: what the hunk's last number counts
    /// ("`2000` dollars").
    before_noun: bool,
    /// After an aligned copula or passive participle and at most an
    /// article ("is the `winner`", "is named `Rex`"): what the subject is.
    predicate_noun: bool,
    /// After aligned words ending with a relation held with one value at
    /// a time ("works `at`", "married `to`"), and at most an article.
    single_valued: bool,
    /// The aligned noun a copula's subject ends with, where the hunk is
    /// what the copula assigns, past at most an article ("favorite `sport`
    /// is tennis", "favorite `dog` is the beagle"): the kind of thing the
    /// value names.
    kind_assigned: Option<&'t Token>,
    /// Right after an aligned active verb: its direct object ("speaks
    /// `Spanish`"), not a passive participle's complement ("is named
    /// `Lily`") nor a preposition's ("lives in `Rome`").
    object: bool,
    /// That object is one of a verb of feeling, which one holds toward
    /// many things at once ("likes `Rust`", "loves", "hates"); not of a
    /// preference ("prefers"), which ranks one above the rest.
    object_of_feeling: bool,
    /// A side adds its value to another it leaves implied ("Bob `also`
    /// likes Go", "… Go `too`", "… `as well`"): the values hold side by
    /// side.
    additive: bool,
    /// After an aligned "as" that follows an aligned verb, and at most an
    /// article: the role the verb is done in ("works as a `nurse`").
    role: bool,
    /// Starts each side's sentence (a determiner: "`No` dog is …").
    at_start: [bool; 2],
    /// Right before an aligned time word ("`last` year" / "`this` year").
    before_time: bool,
    /// Right after an aligned "every" or "each" ("swims `every` Monday").
    after_every: bool,
    /// Right after an aligned bound ("less than", "at least", "up to",
    /// "over"): each side's number is one end of a range, and two ranges
    /// bounded the same way overlap.
    after_bound: bool,
    /// Right before an aligned possessive "s": whose the next word is ("is
    /// `Sarah`'s manager"), not a value the predicate assigns.
    possessor: bool,
    /// Each side's hunk has "have" as its verb, not as an auxiliary
    /// ("`has` a bike", not "`has` sold", "`has` been", "`has` to").
    has: [bool; 2],
    /// Each side's sentence has "have" as its only verb ("the user `has`
    /// a dog").
    owns: [bool; 2],
    /// Each side's sentence has "have" as one of its verbs.
    has_anywhere: [bool; 2],
    /// After an aligned preposition of being in or going to a place, or a
    /// verb of presence, and at most an article ("lives `in` Berlin",
    /// "`visited` Tokyo"): being there is being in what it lies within.
    locative: bool,
    /// In a phrase about a referent an indefinite article brings in ("has
    /// `a` meeting at 3pm", [`of_an_indefinite`]).
    of_an_indefinite: bool,
    /// Under a verb of feeling that takes an infinitive ("`wants` to
    /// visit Norway", "would `love` to live in Paris"): one wishes for
    /// many things at once. Not a preference ("prefers to use"), which
    /// ranks one above the rest.
    wished: bool,
    /// On either side, where a verb of going in the simple present takes
    /// its destination ("travels `to` Chicago", "I fly `to` Denver"): a
    /// habit, and one goes to many places.
    habitual_destination: bool,
}

/// Prepositions of where one goes: "travels `to` Chicago".
const DESTINATIONS: &str = "to into toward towards";

/// Whether what starts at `start` in `tokens` is where a verb of going in
/// the simple present takes its subject ("travels to | Chicago", "we
/// often fly to | Denver", "commutes into the | city"). Not a change
/// ("moves to | Boston": the verb of "moved to"), a trip under way ("is
/// flying to | Tokyo") nor one told in the past ("flew to | Tokyo": two
/// occurrences, see [`Comparison::contradicts`]).
fn habitual_destination(tokens: &[Token], start: usize, lexicon: &Lexicon) -> bool {
    let mut k = start;
    if k > 0 && listed(ARTICLES, &tokens[k - 1].word) {
        k -= 1;
    }
    let Some(verb_at) = k
        .checked_sub(2)
        .filter(|&v| listed(DESTINATIONS, &tokens[v + 1].word))
    else {
        return false;
    };
    let verb = &tokens[verb_at];
    let before = verb_at.checked_sub(1).map(|p| &tokens[p]);
    // The simple present: the verb's "-s" ("travels"), or its bare form
    // after a subject that takes it ("I fly"); never after an auxiliary
    // ("will fly", "does not fly").
    let simple_present = ((verb.info.inflected_verb && verb.word.ends_with('s'))
        || (verb.info.is_verb() && before.is_some_and(|t| listed(PLAIN_VERB_SUBJECTS, &t.word))))
        && before.is_none_or(|t| !listed(AUXILIARIES, &t.word) && !negated_auxiliary(t));
    verb.is_content()
        && simple_present
        && lexicon.means_motion(&verb.info)
        && !lexicon.is_change_verb(&verb.info)
}

/// Articles that bring in one of possibly many: "`a` trip", "`some`
/// friends".
const INDEFINITE_ARTICLES: &str = "a an another some";

/// Words that open a relative clause: "a sister `who` lives in Ohio".
const RELATIVE_PRONOUNS: &str = "who that which";

/// Whether the value right after `aligned[..value_at]` qualifies a referent
/// an indefinite article brings in: "has `a` meeting at | 3pm", "is
/// planning `a` trip to | Italy", "has `a` sister who lives in | Ohio",
/// "has `an` exam on May | 3". Another meeting, trip or sister may have
/// the other value, so the two values are two things, not a clash ("has a
/// meeting at 5pm" as well); a definite referent has one ("the meeting is
/// at 3pm", "Sam's trip to Italy"). Not where the phrase is itself the
/// value of a relation held with one at a time ("works at a startup in |
/// Berlin", "married to a doctor from | Ohio").
fn of_an_indefinite(aligned: &[&Token], value_at: usize, lexicon: &Lexicon) -> bool {
    // The preposition of a phrase ending at `end`, past the phrase's name
    // words and article ("on May | 3", "with the | …").
    let preposition = |end: usize| {
        let mut k = end;
        while k > 0 && (aligned[k - 1].role == Role::Name || listed(ARTICLES, &aligned[k - 1].word))
        {
            k -= 1;
        }
        k.checked_sub(1)
            .filter(|&p| is_preposition(&aligned[p].word))
    };
    let content = |at: usize| aligned[at].role == Role::Content;
    let indefinite = |at: usize| listed(INDEFINITE_ARTICLES, &aligned[at].word);
    // The indefinite article of the referent a phrase opening at `k`
    // qualifies: its noun right before, with at most one word before that
    // ("a dentist appointment"; after the article even "meeting" is a
    // noun), or a relative clause's verb between ("a sister who `lives`").
    let article_before = |mut k: usize| {
        if k >= 2
            && aligned[k - 1].is_content()
            && aligned[k - 1].info.is_verb()
            && listed(RELATIVE_PRONOUNS, &aligned[k - 2].word)
        {
            k -= 2;
        }
        match k {
            k if k >= 2 && content(k - 1) && indefinite(k - 2) => Some(k - 2),
            k if k >= 3 && content(k - 1) && content(k - 2) && indefinite(k - 3) => Some(k - 3),
            _ => None,
        }
    };
    let Some(k) = preposition(value_at) else {
        return false;
    };
    // Or past another phrase of the same referent ("a meeting `with Tom`
    // at | 3pm", "`with the team`").
    let object = k - usize::from(k > 0 && content(k - 1));
    let Some(article) = article_before(k).or_else(|| {
        preposition(object)
            .filter(|&p| p + 1 < k)
            .and_then(article_before)
    }) else {
        return false;
    };
    let before_article = aligned[..article]
        .iter()
        .rev()
        .map(|t| (t.word.as_str(), &t.info));
    lexicon.single_valued_ending(before_article).is_none()
}

/// Whether `text` adds what it says to something it leaves implied: an
/// "also" or "additionally", or a "too" or "as well" closing it ("likes
/// Go `too`"; before an adjective "too" is a degree: "too hot").
fn adds_a_value(text: &[Token]) -> bool {
    let last = text.len().saturating_sub(1);
    text.iter().enumerate().any(|(k, t)| match t.word.as_str() {
        "also" | "additionally" => true,
        "too" => k == last,
        "well" => k == last && k > 0 && text[k - 1].word == "as",
        _ => false,
    })
}

/// Prepositions of being in or going to a place, or coming from it.
const LOCATIVES: &str = "in at to into inside within from";

/// The opposed words of a hunk, if any: the rule file's antonyms, on the
/// words or their lemmas, or WordNet's, also of a hyphenated word whose
/// head `next` both sides share ("`part`-time" / "`full`-time").
fn antonym_in(
    x: &[&Token],
    y: &[&Token],
    next: Option<&Token>,
    place: Place<'_>,
    lexicon: &Lexicon,
) -> Option<(String, String)> {
    lexicon
        .antonym_across(&words_of(x), &words_of(y))
        .or_else(|| lexicon.antonym_across(&lemmas_of(x), &lemmas_of(y)))
        .or_else(|| {
            // People opposed as arguments are two people ("spanking a
            // man" / "… a woman"); after a copula, two values of one ("is
            // the winner" / "… the loser"). Other opposed nouns fill one
            // slot ("at day" / "at night").
            x.iter().find_map(|p| {
                y.iter()
                    .find(|q| {
                        lexicon.wordnet_antonyms(&p.info, &q.info)
                            && (place.predicate_noun
                                || !lexicon.wordnet_opposed_people(&p.info, &q.info))
                    })
                    .map(|q| (p.word.clone(), q.word.clone()))
            })
        })
        .or_else(|| {
            x.iter().find_map(|p| {
                y.iter()
                    .find(|q| non_prefixed(p, q) || non_prefixed(q, p))
                    .map(|q| (p.word.clone(), q.word.clone()))
            })
        })
        .or_else(|| {
            let (next, [p], [q]) = (next?, x, y) else {
                return None;
            };
            let attached = |t: &Token| t.is_content() && written_together(t, next);
            if !attached(p) || !attached(q) {
                return None;
            }
            let (wp, wq) = (
                format!("{}-{}", p.word, next.word),
                format!("{}-{}", q.word, next.word),
            );
            lexicon
                .wordnet_antonyms(&lexicon.word(&wp), &lexicon.word(&wq))
                .then_some((wp, wq))
        })
}

/// Whether `prefixed` is `word` with "non" before it ("nonsmoker" /
/// "smokers", "nonstop" / "stops"): its opposite, whether WordNet lists
/// the pair or not.
fn non_prefixed(prefixed: &Token, word: &Token) -> bool {
    let forms = |t: &Token| -> Vec<String> {
        std::iter::once(&t.word)
            .chain(&t.info.lemmas)
            .map(|w| w.replace(['_', ' ', '-'], ""))
            .collect()
    };
    // Asked of every word pair in a hunk without another antonym: a pair
    // with no "non" word in it costs no allocation.
    let starts_with_non = std::iter::once(&prefixed.word)
        .chain(&prefixed.info.lemmas)
        .any(|w| w.starts_with("non"));
    if !starts_with_non || !prefixed.is_content() || !word.is_content() {
        return false;
    }
    let stems: Vec<String> = forms(prefixed)
        .iter()
        .filter_map(|f| f.strip_prefix("non").map(str::to_owned))
        .filter(|stem| stem.len() > 2)
        .collect();
    !stems.is_empty() && forms(word).iter().any(|f| stems.contains(f))
}

fn classify<'t>(
    x: &[&'t Token],
    y: &[&'t Token],
    next: Option<&Token>,
    names_before: [&[&Token]; 2],
    place: Place<'_>,
    lexicon: &Lexicon,
    comparison: &mut Comparison,
) {
    let (cx, cy) = (content(x), content(y));
    // Two deictic modifiers of one time ("`last` year" / "`this` year")
    // name two times: whatever else the texts share, they speak of
    // different occasions.
    let deictic = |side: &[&Token]| {
        !side.is_empty()
            && side.iter().all(|t| {
                listed(TIME_DEICTICS, t.word.as_str()) || listed(ARTICLES, t.word.as_str())
            })
            && side.iter().any(|t| listed(TIME_DEICTICS, t.word.as_str()))
    };
    if place.before_time && deictic(x) && deictic(y) && words_of(x) != words_of(y) {
        comparison.extra[0] += cx.len();
        comparison.extra[1] += cy.len();
        comparison.substitutions.push((words_of(x), words_of(y)));
        return;
    }
    // One number spelled in words on one side and in digits on the other
    // ("twenty-eight" / "28"): the same value. Two numbers in digits with
    // one value are two things ("1990" / "1990s").
    let only_numbers = |side: &[&Token]| side.iter().all(|t| t.role == Role::Number);
    let spelled = |side: &[&Token]| side.iter().any(|t| spelled_number(&t.word).is_some());
    if !cx.is_empty()
        && !cy.is_empty()
        && only_numbers(&cx)
        && only_numbers(&cy)
        && (spelled(&cx) || spelled(&cy))
        && number_values(&cx) == number_values(&cy)
    {
        comparison.synonymous += 1;
        return;
    }
    // A change verb with its "to" against the other side's verb in the
    // present, before what both go on to ("`uses` a MacBook" / "`switched
    // to` a ThinkPad", where the shared article splits the verb from the
    // value): the change restates the relation, as it does in one hunk
    // with the value, and says more: the older verb is its general word.
    // A merge would lose that it changed (or, merged the other way, the
    // older verb), so the two stay apart when the values agree.
    if next.is_some() {
        let present_verb = |t: &Token| t.role == Role::Content && t.info.is_verb() && !past_form(t);
        for (side, changing, stating) in [(0, x, &cy), (1, y, &cx)] {
            let changed = content(changing);
            let restated = match (changed.as_slice(), stating.as_slice()) {
                ([change], [verb])
                    if present_verb(verb)
                        && changing.last().is_some_and(|t| t.word == "to")
                        && change_verbs(changing, lexicon).next().is_some() =>
                {
                    Some((verb.word.clone(), change.word.clone()))
                }
                _ => None,
            };
            if let Some((general, specific)) = restated {
                comparison.generalisations += 1;
                comparison.generalised.push(if side == 1 {
                    (general, specific)
                } else {
                    (specific, general)
                });
                return;
            }
        }
    }
    // Antonyms first ("always" / "never" is an antonym, not a negation),
    // when they are what the hunk is about: at most one other content word
    // a side.
    let antonym = antonym_in(x, y, next, place, lexicon);
    if let Some((p, q)) = antonym {
        let others = |side: &[&'t Token], phrase: &str| -> Vec<&'t Token> {
            side.iter()
                .copied()
                .filter(|t| {
                    // "part-time" is "part" and "time".
                    t.is_content()
                        && !phrase
                            .split([' ', '-'])
                            .any(|w| w == t.word || t.info.lemmas.iter().any(|l| l == w))
                })
                .collect()
        };
        let (wx, wy) = (others(&cx, &p), others(&cy, &q));
        let (ox, oy) = (wx.len(), wy.len());
        // Opposed words about different things are two facts: "lives
        // `near` the sea" / "lives `far` from her parents". A verb beside
        // its particle is one phrase ("taking `off`" / "putting `on`").
        let thing = |t: &Token| {
            t.role == Role::Name
                || (t.role == Role::Content && t.info.is_noun() && !t.word.ends_with("ing"))
        };
        let other_things =
            |t: &Token, o: &Token| thing(t) && thing(o) && !lexicon.related(t.pair(), o.pair());
        if let ([t], [o]) = (wx.as_slice(), wy.as_slice())
            && other_things(t, o)
        {
            comparison.extra[0] += cx.len();
            comparison.extra[1] += cy.len();
            comparison
                .substitutions
                .push((words_of(&cx), words_of(&cy)));
            return;
        }
        // Opening both sides and followed by their predicate ("`no woman`
        // playing" / "`a man` is playing"), the hunk is a subject too; an
        // imperative's verb ("`Enable` two-factor …") is not.
        let opening_subject = place.at_start == [true, true]
            && next.is_some_and(|t| t.info.inflected_verb || t.word.ends_with("ing"));
        if ox <= 1 && oy <= 1 && !place.subject && !opening_subject {
            comparison.extra[0] += ox;
            comparison.extra[1] += oy;
            // A negated antonym states the same ("is `not open`" / "is
            // `closed`"): the two sides agree here, though in other words,
            // so this is neither a conflict nor a merge.
            let negations_besides = |side: &[&Token], phrase: &str| {
                side.iter()
                    .filter(|t| t.role == Role::Negation && !phrase.split(' ').any(|w| w == t.word))
                    .count()
            };
            if negations_besides(x, &p) % 2 != negations_besides(y, &q) % 2 {
                comparison.synonymous += 1;
                comparison.negation_differs = true;
                return;
            }
            // Beside the bare antonym, a complement that only names who or
            // where ("married to `Ana`", "employed at `Acme`") leaves the
            // predicate whole; a common noun narrows it ("unhappy with her
            // `job`", "short of `money`") or is what the antonym qualifies
            // ("a new `employee`").
            comparison.opposed_predicate = ((ox == 0 || oy == 0)
                && wx.iter().chain(&wy).all(|t| t.role == Role::Name))
            .then_some([ox, oy]);
            comparison
                .conflicts
                .push(Conflict::opposed("antonym", &p, &q, "antonyms"));
            return;
        }
    }
    // Another preposition relates the shared words another way: "flew
    // `to` Paris" / "… `from` Paris".
    if let Some(relations) = other_relations(x, y) {
        comparison.relations.push(relations);
    }
    let negations = |side: &[&Token]| side.iter().filter(|t| t.role == Role::Negation).count();
    let (nx, ny) = (negations(x), negations(y));
    if nx != ny {
        let (side, negating, other, other_content) = if nx > ny {
            (0, x, y, &cy)
        } else {
            (1, y, x, &cx)
        };
        let negation = negating
            .iter()
            .find(|t| t.role == Role::Negation)
            .map_or("", |t| t.word.as_str());
        // A denied presence ("was not `at` the meeting", "has never been
        // `to` Japan") denies a verb of being or going there ("attended",
        // "visited"), not another relation to the place ("organised the
        // meeting", "loves Japan").
        let presence = negating.iter().any(|t| listed(COPULAS, &t.word))
            && negating.iter().any(|t| is_preposition(&t.word))
            && !other.iter().any(|t| is_preposition(&t.word));
        // A place within the denied one is in it, where both sides speak of
        // being there ("has never been to `Japan`" / "visited `Tokyo`";
        // not "loves Tokyo").
        let there = place.locative
            || (negating.iter().any(|t| listed(LOCATIVES, &t.word))
                && other_content.iter().any(|o| verb_of_presence(o, lexicon)));
        let names = |t: &Token, o: &Token| {
            lexicon.synonyms(t.pair(), o.pair())
                || lexicon.is_a(&o.info, &t.info)
                || (there && lexicon.within(&o.info, &t.info))
        };
        // The negating side's words that name what the other side says, in
        // the same or more general terms ("no `woman`" / "a lady"; "does
        // not `own`" / "has"), are the denied argument, not a fact of its
        // own: a general denial denies every specific case.
        let negating_content = content(negating);
        // What an exception is taken from is no fact of its own: "all
        // `fruit` except bananas" denies the bananas the other text has.
        let excepted_from = |t: &Token| {
            negation == "except"
                && next
                    .is_some_and(|n| listed(QUANTIFIERS, &t.word) || lexicon.is_a(&n.info, &t.info))
        };
        let own_content = negating_content
            .iter()
            .filter(|t| {
                let names_other = other_content.iter().any(|o| names(t, o));
                let says_has = possessive(other) && means_have(t, lexicon);
                !names_other && !says_has && !excepted_from(t)
            })
            .count();
        let pronoun = listed(NEGATIVE_PRONOUNS, negation);
        // The negation must bear on aligned words: a negated clause of its
        // own ("when there are no tournaments") is a detail, not a denial.
        // Inside the subject only a leading determiner denies ("`No` dog is
        // running"); "a man with `no` shirt" is another referent.
        let denies = !place.subject || place.at_start[side];
        // A denied possession ("has `no` car") does not deny another verb
        // of the thing ("`rents` a car"), only a synonym ("owns a car").
        let possession = possessive(negating) && !negating.iter().any(|t| t.word == "been");
        let other_relation = presence
            && other_content
                .iter()
                .any(|t| t.info.inflected_verb && !lexicon.means_presence(&t.info));
        let other_predicate =
            other_relation || (possession && verb_besides_having(other_content, lexicon).is_some());
        // The other side's words the denial names are the denied argument
        // the two share ("a `car`" / "not … a `vehicle`"; "`visited`" /
        // "has never been to"), not details.
        let named = other_content
            .iter()
            .filter(|o| {
                negating_content.iter().any(|t| names(t, o))
                    || (presence && verb_of_presence(o, lexicon))
            })
            .count();
        if denies && own_content == 0 && !other_predicate && (!pronoun || other_content.len() <= 2)
        {
            let quantifier = other.iter().find(|t| listed(QUANTIFIERS, t.word.as_str()));
            // What is denied: the word the negation stands before in the
            // hunk ("is not `cutting`" / "is slicing", "does not `have`"),
            // or the aligned word after the hunk.
            let scope = negating
                .iter()
                .rposition(|t| t.role == Role::Negation)
                .map_or(&[][..], |k| &negating[k + 1..]);
            let shown = scope
                .iter()
                .find(|t| !listed(ARTICLES, &t.word))
                .filter(|t| t.is_content() || listed(POSSESSIVE_VERBS, &t.word))
                .or_else(|| {
                    scope
                        .iter()
                        .find(|t| t.is_content() && other_content.iter().any(|o| names(t, o)))
                })
                .copied()
                .or(next);
            let target = match (pronoun, shown) {
                (true, _) | (_, None) => String::new(),
                (false, Some(shown)) => format!(" `{}`", shown.word),
            };
            let which = if side == 0 { "first" } else { "second" };
            let conflict = match quantifier {
                Some(q) => Conflict {
                    kind: "quantifier",
                    detail: format!("`{}` ↔ `{negation}` (quantifiers)", q.word),
                    negated_side: Some(side),
                    denied: None,
                },
                None => Conflict {
                    kind: "negation",
                    detail: format!("`{negation}` negates{target} in the {which} only"),
                    negated_side: Some(side),
                    denied: next.filter(|_| !pronoun).map(|t| t.word.clone()),
                },
            };
            comparison.conflicts.push(conflict);
            // What a pronoun replaced is the denied argument, aligned with
            // it ("`Nobody` is typing" / "`Someone` is typing on a keyboard"),
            // not a detail.
            if !pronoun {
                comparison.extra[1 - side] += other_content.len() - named;
                comparison.generalisations += named;
            } else if !other_content.is_empty() {
                comparison.aligned += 1;
            }
            return;
        }
        comparison.negation_differs = true;
    }
    if cx.is_empty() && cy.is_empty() {
        return;
    }
    // A value added beside another ("now `also` uses Rust") changes no
    // slot, whatever change word dates it.
    for p in &cx {
        for q in &cy {
            let (vp, vq) = (lexicon.canonical(&p.word), lexicon.canonical(&q.word));
            if !place.additive
                && p.role == Role::Name
                && q.role == Role::Name
                && vp != vq
                && let (Some(class), Some(other)) =
                    (lexicon.class_of(&p.word), lexicon.class_of(&q.word))
                && class == other
            {
                comparison
                    .class_changes
                    .push((class.to_owned(), vp.to_owned(), vq.to_owned()));
            }
        }
    }
    if cx.is_empty() || cy.is_empty() {
        // Having a thing and doing something with it are two predicates,
        // though "has" is no content word: "`has` a bike" / "`sold` his
        // bike" (and the sale may be the older fact), not "sold" as a
        // detail beside a shared "bike".
        comparison.extra[0] += cx.len();
        comparison.extra[1] += cy.len();
        // So are having it and what befell it ("`has` a dentist
        // appointment" / "the dentist appointment `was cancelled`"), where
        // only one text has it, and having it and being something toward
        // it ("`has` a cat" / "`is allergic` to cats").
        let (having, doing) = if cx.is_empty() { (0, &cy) } else { (1, &cx) };
        if (place.has[having] || (place.owns[having] && !place.has_anywhere[1 - having]))
            && let Some(verb) = verb_besides_having(doing, lexicon)
                .or_else(|| predicate_adjective([x, y][1 - having]))
        {
            let has = [x, y][having]
                .iter()
                .find(|t| listed(POSSESSIVE_VERBS, &t.word))
                .map_or(HAVE, |t| t.word.as_str());
            comparison.substitutions.push(if having == 0 {
                (has.to_owned(), verb.word.clone())
            } else {
                (verb.word.clone(), has.to_owned())
            });
        }
        return;
    }
    // A time the value has held since or until ("in Berlin `since 2015`")
    // dates it and leaves the slot to the value. The change words that
    // date it ("is `now` blue") and the "years old" that restates what
    // the other side's bare number is are no details of their own.
    let (dated_x, dated_y) = (
        without_change_words(&cx, lexicon),
        without_change_words(&cy, lexicon),
    );
    let (vx, vy) = (
        value_before_its_details(without_time_span(dated_x, lexicon), x, lexicon),
        value_before_its_details(without_time_span(dated_y, lexicon), y, lexicon),
    );
    let (vx, vy, restating) = {
        let (ax, ay) = (
            without_age_unit(vx, vy, lexicon),
            without_age_unit(vy, vx, lexicon),
        );
        (
            ax,
            ay,
            [
                cx.len() - dated_x.len() + vx.len() - ax.len(),
                cy.len() - dated_y.len() + vy.len() - ay.len(),
            ],
        )
    };
    // A change verb before a value ("`switched to` Firefox") says it took
    // the place of another: against a verb the other side states now with
    // the value as its object ("uses Chrome"), the two values fill one
    // slot. Not a past verb ("visited Chicago" / "moved to Boston"), one of
    // feeling ("likes Chrome": one may still), nor one through a
    // preposition ("banks `with` Chase"), where the rule file's relations
    // decide ("lives in").
    let present_object = |stating: &[&Token]| {
        stating.iter().enumerate().any(|(k, t)| {
            t.role == Role::Content
                && t.info.is_verb()
                && !past_form(t)
                && !lexicon.feels(&t.info)
                && !stating[k + 1..].iter().any(|u| is_preposition(&u.word))
        })
    };
    let place = Place {
        single_valued: place.single_valued
            || (!place.object_of_feeling
                && ((change_verbs(x, lexicon).next().is_some() && present_object(y))
                    || (change_verbs(y, lexicon).next().is_some() && present_object(x)))),
        ..place
    };
    // A value and at most one other word a side ("5 minutes" / "20
    // minutes" aligns the unit; "lives in New York" / "moved to Boston":
    // a name of several words is one value; "in Rome once" / "supports
    // Jon and believes" is not one slot). A negated value is not the
    // other value ("is `not red`" / "is `blue`"): another fact, not a
    // conflict.
    if !place.subject
        && !place.additive
        && !place.of_an_indefinite
        && !place.wished
        && nx == ny
        && words_with_names_as_one(vx) <= 2
        && words_with_names_as_one(vy) <= 2
        && let Some((conflict, words)) = compound_value(vx, vy, place, lexicon)
            .map(|c| (c, [2, 2]))
            .or_else(|| different_value(vx, vy, names_before, place, lexicon))
    {
        let mut extra = [
            vx.len().saturating_sub(words[0]),
            vy.len().saturating_sub(words[1]),
        ];
        // A change verb before the new value ("`switched to` Vim", "`moved
        // to` London") says the other side's relation holds it now: it
        // restates that side's verb ("uses", "lives in") or copula ("is
        // on"), and neither is a detail of its own. What dates or follows
        // the value is ("moved to London `with her family`").
        let restated = |changing: &[&Token], side: usize| {
            extra[side] == 1
                && (extra[1 - side] == 0
                    || [&cx, &cy][1 - side]
                        .iter()
                        .any(|t| t.role == Role::Content && t.info.is_verb()))
                && change_verbs(changing, lexicon).next().is_some()
        };
        if restated(x, 0) || restated(y, 1) {
            extra = [0, 0];
            comparison.synonymous += 1;
        }
        comparison.extra[0] += extra[0] + (cx.len() - vx.len() - restating[0]);
        comparison.extra[1] += extra[1] + (cy.len() - vy.len() - restating[1]);
        comparison.conflicts.push(conflict);
        return;
    }
    // Each content word pairs off with a synonym on the other side, or is
    // the general word of a more specific one there ("person" / "man": the
    // specific side keeps it as a detail), or is left: a substitution or a
    // detail.
    let mut left: [Vec<String>; 2] = Default::default();
    // A place is the general word of a place within it ("Germany" /
    // "Berlin") where the texts speak of being there.
    let within =
        |part: &Token, whole: &Token| place.locative && lexicon.within(&part.info, &whole.info);
    for (side, (mine, theirs)) in [(&cx, &cy), (&cy, &cx)].into_iter().enumerate() {
        for t in mine {
            // What the other side says is absent is no general word of
            // what it has: "`alcohol`" / "`alcohol-free` beer".
            let absent = format!("{}-free", t.word);
            if theirs.iter().any(|o| o.word == absent) {
                left[side].push(t.word.clone());
                continue;
            }
            if theirs.iter().any(|o| lexicon.synonyms(t.pair(), o.pair())) {
                // Counted once, from the first side.
                if side == 0 {
                    comparison.synonymous += 1;
                }
                continue;
            }
            if let Some(specific) = theirs
                .iter()
                .find(|o| lexicon.is_a(&o.info, &t.info) || within(o, t))
            {
                comparison.generalisations += 1;
                let (general, specific) = (t.word.clone(), specific.word.clone());
                let pair = if side == 0 {
                    (general, specific)
                } else {
                    (specific, general)
                };
                // A hunk may be classified again as part of a clause.
                if !comparison.generalised.contains(&pair) {
                    comparison.generalised.push(pair);
                }
                continue;
            }
            if theirs
                .iter()
                .any(|o| lexicon.is_a(&t.info, &o.info) || within(t, o))
            {
                comparison.specifics[side] += 1;
            }
            left[side].push(t.word.clone());
        }
    }
    let [ux, uy] = left;
    comparison.extra[0] += ux.len();
    comparison.extra[1] += uy.len();
    if !ux.is_empty() && !uy.is_empty() {
        comparison.substitutions.push((ux.join(" "), uy.join(" ")));
    }
}

/// "alone" on one side and "with" someone on the other ("lives `alone`"
/// / "lives `with her parents`"): alone is with nobody. Not "with" a
/// thing ("with a cat", "with an umbrella"), nor under a negation.
fn alone_against_company(
    x: &[&Token],
    y: &[&Token],
    lexicon: &Lexicon,
) -> Option<(String, String)> {
    let alone = |side: &[&Token]| {
        let words = content(side);
        words.len() == 1 && listed("alone solo unaccompanied", &words[0].word)
    };
    let company = |side: &[&Token]| {
        side.iter().position(|t| t.word == "with").is_some_and(|k| {
            side[k + 1..]
                .iter()
                .any(|t| t.role == Role::Name || lexicon.first_names_person(&t.info))
        })
    };
    if [x, y]
        .iter()
        .any(|side| side.iter().any(|t| t.role == Role::Negation))
    {
        return None;
    }
    (alone(x) && company(y) || alone(y) && company(x)).then(|| (words_of(x), words_of(y)))
}

/// Whether `t` is a change word of its own ("now", "recently"), not the
/// verb of a change marker ("switched"): it dates what its text says.
fn dates_a_change(t: &Token, lexicon: &Lexicon) -> bool {
    !t.info.inflected_verb && lexicon.is_change_word(&t.word)
}

/// `content` without the change words that open or close it ("`now`
/// green", "green `now`"): they say since when the value holds, not what
/// it is, and are counted as dating the text. A change word alone is
/// left as it is.
fn without_change_words<'c, 't>(content: &'c [&'t Token], lexicon: &Lexicon) -> &'c [&'t Token] {
    let changes = |t: &&&Token| dates_a_change(t, lexicon);
    let start = content.iter().take_while(changes).count();
    let end = content.len() - content[start..].iter().rev().take_while(changes).count();
    if start < end {
        &content[start..end]
    } else {
        content
    }
}

/// `content` without the "years old" of an age ("30 `years old`") where
/// `other` is a number alone, or after a change verb ("is 31", "turned
/// 31"): a bare number a person is, or turns, is an age in years.
fn without_age_unit<'c, 't>(
    content: &'c [&'t Token],
    other: &[&Token],
    lexicon: &Lexicon,
) -> &'c [&'t Token] {
    let bare = match other {
        [number] => number.role == Role::Number,
        [_, number] => number.role == Role::Number && change_verbs(other, lexicon).next().is_some(),
        _ => false,
    };
    match content {
        [number, years, old]
            if bare
                && number.role == Role::Number
                && listed("year years", &years.word)
                && old.word == "old" =>
        {
            &content[..1]
        }
        _ => content,
    }
}

/// `content` without a closing span of time: "since", "until" or "till"
/// and then only times ("`since 2015`", "`until March`").
fn without_time_span<'c, 't>(content: &'c [&'t Token], lexicon: &Lexicon) -> &'c [&'t Token] {
    let opens = content
        .iter()
        .rposition(|t| listed("since until till", &t.word));
    match opens {
        Some(k)
            if k > 0
                && k + 1 < content.len()
                && content[k + 1..].iter().all(|t| names_time(t, lexicon)) =>
        {
            &content[..k]
        }
        _ => content,
    }
}

/// `content` (the content words of `hunk`) up to its first name, without
/// what is said after the name: a phrase it heads ("Denver `with two
/// cats`", "moved to Denver `with her family`") or the place it lies in
/// ("Denver, `Colorado`"). Those tell more about the value; the slot is
/// the name's. Anything else is returned whole.
fn value_before_its_details<'c, 't>(
    content: &'c [&'t Token],
    hunk: &[&'t Token],
    lexicon: &Lexicon,
) -> &'c [&'t Token] {
    let Some(start) = content.iter().position(|t| t.role == Role::Name) else {
        return content;
    };
    let run = content[start..]
        .iter()
        .enumerate()
        .take_while(|&(k, t)| {
            t.role == Role::Name && (k == 0 || written_together(content[start + k - 1], t))
        })
        .count();
    let end = start + run;
    if end == content.len() {
        return content;
    }
    let last = content[end - 1];
    let after = hunk
        .iter()
        .position(|t| std::ptr::eq(*t, last))
        .and_then(|k| hunk.get(k + 1));
    let heads_a_phrase = after.is_some_and(|t| is_preposition(&t.word));
    let next = content[end];
    let lies_in = next.role == Role::Name
        && !written_together(last, next)
        && lexicon.within(&last.info, &next.info);
    if heads_a_phrase || lies_in {
        &content[..end]
    } else {
        content
    }
}

/// Prepositions that relate a verb or noun to what follows: place,
/// direction, time, company, purpose, opposition. Not "of", "as", "than"
/// or "like", which build a phrase rather than relate one.
const PREPOSITIONS: &str = "about above across after against along among around at before \
     behind below beneath beside between beyond by during for from in inside into near off on \
     onto outside over past since through to toward towards under underneath until upon with \
     within without";

/// Whether `word` is one of the [`PREPOSITIONS`].
pub(super) fn is_preposition(word: &str) -> bool {
    listed(PREPOSITIONS, word)
}

/// Prepositions that name one relation in other words: where or when
/// ("in" / "on" / "at": "lying `on` a bed" / "`in` bed", "`at` the beach"
/// / "`on` the beach", "running `in` the snow" / "`through` the snow"), a
/// direction ("to" / "towards"), a source ("jumping `off` a dock" /
/// "`from` a dock"), a span ("`between` 1993 and 2002" / "`from` 1993 to
/// 2002"), nearness ("by" / "near"), a topic ("a fight `about` music" /
/// "`over` music").
const ONE_RELATION: [&str; 6] = [
    "in inside within into at on upon onto during through",
    "to toward towards into onto",
    "off from between",
    "by beside near",
    "around about",
    "about over",
];

/// The prepositions of two hunks when they are all the hunks' content,
/// both have one and no preposition of one names a relation of the
/// other. A hunk with other words is a detail or another fact already.
fn other_relations(x: &[&Token], y: &[&Token]) -> Option<(String, String)> {
    if x.iter()
        .chain(y)
        .any(|t| t.is_content() && !is_preposition(&t.word))
    {
        return None;
    }
    // The relations a hunk names; "been to" a place is having been in it
    // ("hasn't been `to` Japan" / "was `in` Japan").
    fn relations<'t>(side: &[&'t Token]) -> Vec<&'t str> {
        side.iter()
            .enumerate()
            .filter(|(_, t)| is_preposition(&t.word))
            .map(|(k, t)| {
                match (
                    k.checked_sub(1).map(|p| side[p].word.as_str()),
                    t.word.as_str(),
                ) {
                    (Some("been"), "to") => "in",
                    (_, word) => word,
                }
            })
            .collect()
    }
    let same =
        |p: &str, q: &str| p == q || ONE_RELATION.iter().any(|r| listed(r, p) && listed(r, q));
    let (px, py) = (relations(x), relations(y));
    if px.is_empty() || py.is_empty() || px.iter().any(|p| py.iter().any(|q| same(p, q))) {
        return None;
    }
    let phrase = |side: &[&Token]| {
        let kept: Vec<&Token> = side
            .iter()
            .copied()
            .filter(|t| is_preposition(&t.word))
            .collect();
        words_of(&kept)
    };
    Some((phrase(x), phrase(y)))
}

/// Forms of "have" that state a possession when no participle follows.
const POSSESSIVE_VERBS: &str = "has have had";

/// Adverbs that may stand between an auxiliary and its participle ("has
/// `already` won"), besides those in "-ly" and negations.
const MID_ADVERBS: &str = "already just also still ever yet since even only";

/// Whether `hunk`, a run of `sentence`'s tokens, has a form of "have"
/// as its verb: past any adverb, followed by neither a participle, "been"
/// nor "to" ("`has` a bike", not "`has` recently sold").
fn has_as_verb(hunk: &[&Token], sentence: &[Token]) -> bool {
    hunk.iter().any(|t| {
        listed(POSSESSIVE_VERBS, &t.word)
            && sentence
                .iter()
                .position(|s| std::ptr::eq(s, *t))
                .and_then(|k| {
                    sentence[k + 1..].iter().find(|n| {
                        n.role != Role::Negation
                            && !n.word.ends_with("ly")
                            && !listed(MID_ADVERBS, &n.word)
                    })
                })
                .is_none_or(|n| !n.info.inflected_verb && !listed("been to", &n.word))
    })
}

/// Whether `sentence` has a form of "have" as a verb of its own
/// ([`has_as_verb`]).
fn has_as_its_verb(sentence: &[Token]) -> bool {
    has_as_verb(&sentence.iter().collect::<Vec<_>>(), sentence)
}

/// Whether `sentence` has "have" as its verb ([`has_as_verb`]) and no
/// other: every other content word with a verb sense follows a
/// determiner ("The user has `a` meeting").
fn only_verb_is_have(sentence: &[Token]) -> bool {
    has_as_its_verb(sentence)
        && sentence.iter().enumerate().all(|(k, t)| {
            listed(POSSESSIVE_VERBS, &t.word)
                || !t.is_content()
                || !t.info.is_verb()
                || after_determiner(sentence, k)
        })
}

/// Whether a side has a form of "have" of its own.
fn possessive(side: &[&Token]) -> bool {
    side.iter().any(|t| listed(POSSESSIVE_VERBS, &t.word))
}

/// A verb form of going or being somewhere ("`visited` Tokyo", "`lives`
/// in Berlin"), as a denied "been to" denies it.
fn verb_of_presence(t: &Token, lexicon: &Lexicon) -> bool {
    t.info.inflected_verb && lexicon.means_presence(&t.info)
}

/// A verb whose first sense is a sense of "have" ("owns", "features")
/// says what a "has" says.
fn means_have(t: &Token, lexicon: &Lexicon) -> bool {
    lexicon.first_means(&t.info, HAVE)
}

/// A finite verb among `content` that says something else than "have"
/// ("`rents` a car", "`sold` his bike"; not "owns", nor a kind of having:
/// "possesses").
fn verb_besides_having<'t>(content: &[&'t Token], lexicon: &Lexicon) -> Option<&'t Token> {
    let have = lexicon.word(HAVE);
    content.iter().copied().find(|t| {
        t.info.inflected_verb
            && !lexicon.related(t.pair(), (HAVE, &have))
            && !means_have(t, lexicon)
    })
}

/// An adjective right after a copula in `hunk`: what the subject is ("is
/// `allergic` to cats", "is `proud` of"), another predicate than having.
fn predicate_adjective<'t>(hunk: &[&'t Token]) -> Option<&'t Token> {
    hunk.windows(2)
        .find(|pair| {
            let word = pair[1];
            listed(COPULAS, &pair[0].word)
                && word.is_content()
                && !word.info.is_noun()
                && word.info.modifies()
        })
        .map(|pair| pair[1])
}

/// How many words `side` has, a run of names written together counted
/// as one ("New York").
fn words_with_names_as_one(side: &[&Token]) -> usize {
    side.iter()
        .enumerate()
        .filter(|&(k, t)| {
            k == 0
                || t.role != Role::Name
                || side[k - 1].role != Role::Name
                || !written_together(side[k - 1], t)
        })
        .count()
}

/// The one name a side of a hunk gives: a name, or adjacent names with
/// only a space or a hyphen between them, read as one ("Sarah Connor",
/// "New York", "Goldman Sachs"). Not initials ("U.S.", "J. K."): their
/// letters name nothing a word could be compared with. With the number of
/// words it takes.
fn one_name<'t>(side: &[&'t Token], lexicon: &Lexicon) -> Option<(Cow<'t, Token>, usize)> {
    let first = side.iter().position(|t| t.role == Role::Name)?;
    let run = side[first..]
        .iter()
        .take_while(|t| t.role == Role::Name)
        .count();
    let names = &side[first..first + run];
    if side[first + run..].iter().any(|t| t.role == Role::Name) {
        return None;
    }
    if let [name] = names {
        return Some((Cow::Borrowed(*name), 1));
    }
    let adjacent = names.windows(2).all(|w| written_together(w[0], w[1]));
    if !adjacent || names.iter().any(|t| t.word.chars().count() == 1) {
        return None;
    }
    let word = words_of(names);
    let name = Token {
        money: false,
        info: lexicon.word(&word),
        role: Role::Name,
        span: (names[0].span.0, names[run - 1].span.1),
        word,
    };
    Some((Cow::Owned(name), run))
}

/// What two different names both are, when they can fill one slot: values
/// of one lexicon class, words of one WordNet class ("Monday" /
/// "Tuesday"), or two one-word proper names WordNet does not know that
/// are not spellings of one name ("Muqtada" / "Moqtada", "Tim" /
/// "Timothy"); after a copula or a relation held with one value at a time
/// (`predicate`: "married to `Tom`"), any two names that are not spellings
/// of one, full names too.
fn name_slot(p: &Token, q: &Token, predicate: bool, lexicon: &Lexicon) -> Option<String> {
    let (a, b) = (lexicon.canonical(&p.word), lexicon.canonical(&q.word));
    // Two names of one thing are one value ("Holland" / "the
    // Netherlands").
    if a == b || lexicon.synonyms(p.pair(), q.pair()) {
        return None;
    }
    // An address is exact: another character is another mailbox or page,
    // never a spelling of one.
    if address(a).is_some() && address(b).is_some() {
        return Some("addresses".to_owned());
    }
    if let (Some(x), Some(y)) = (lexicon.class_of(&p.word), lexicon.class_of(&q.word)) {
        return (x == y).then(|| x.to_owned());
    }
    match (lexicon.is_common_word(a), lexicon.is_common_word(b)) {
        (true, true) => lexicon
            .wordnet_class(&p.info, &q.info)
            .or_else(|| predicate.then(|| "names".to_owned())),
        // A full name WordNet does not know names a person or a company,
        // whom one may meet, work with or have lunch with many of: one
        // slot only where a copula or a single-valued relation assigns it.
        (false, false)
            if !spelling_variants(a, b) && (predicate || !(a.contains(' ') || b.contains(' '))) =>
        {
            Some("names".to_owned())
        }
        // What a copula assigns, two names fill one slot even where
        // WordNet knows one as a common word ("is Priya" / "is Tom"). Not
        // elsewhere: "diagnosed with CJD" / "… with vCJD" spell one name.
        _ if predicate && !spelling_variants(a, b) => Some("names".to_owned()),
        _ => None,
    }
}

/// Two spellings of one name: one begins the other, or they differ by at
/// most one edit in five letters (spaces and a possessive "s" ignored).
fn spelling_variants(a: &str, b: &str) -> bool {
    let squash = |w: &str| -> Vec<char> {
        let w: String = w.chars().filter(|c| !c.is_whitespace()).collect();
        w.strip_suffix('s')
            .map_or(w.clone(), str::to_owned)
            .chars()
            .collect()
    };
    let (a, b) = (squash(a), squash(b));
    if a.starts_with(&b) || b.starts_with(&a) {
        return true;
    }
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut current = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitute = previous[j] + usize::from(ca != cb);
            current.push(substitute.min(previous[j + 1] + 1).min(current[j] + 1));
        }
        previous = current;
    }
    previous[b.len()] * 5 <= a.len().max(b.len())
}

/// Whether two hunks' numbers are the same values, the less precise of
/// each pair maybe the other rounded ("6.3" / "6.32", "5" / "5.2").
fn same_values(x: &[String], y: &[String]) -> bool {
    fn decimals(value: &str) -> usize {
        value
            .split_once('.')
            .map_or(0, |(_, fraction)| fraction.len())
    }
    fn rounds(coarse: &str, fine: &str) -> bool {
        let places = decimals(coarse);
        if places >= decimals(fine) {
            return false;
        }
        let (Ok(a), Ok(b)) = (coarse.parse::<f64>(), fine.parse::<f64>()) else {
            return false;
        };
        let half_step = 0.5 * 10f64.powi(-i32::try_from(places).unwrap_or(i32::MAX));
        (a - b).abs() <= half_step * (1.0 + 1e-9)
    }
    x.len() == y.len()
        && x.iter()
            .zip(y)
            .all(|(a, b)| a == b || same_time(a, b) || rounds(a, b) || rounds(b, a))
}

/// Whether `before` ends with a currency sign: the number after it is an
/// amount of money.
fn after_currency_sign(before: &str) -> bool {
    before.ends_with(['$', '€', '£', '¥'])
}

/// Whether `word` reads as a year ("2019").
fn is_year(word: &str) -> bool {
    word.len() == 4 && word.parse::<u16>().is_ok_and(|y| (1900..2100).contains(&y))
}

/// Whether `t` is a noun a number right before it may count or measure in
/// ("2000 `people`", "90 `miles`").
fn counting_noun(t: &Token) -> bool {
    t.role == Role::Content && t.info.is_noun() && !t.info.inflected_verb
}

/// Whether the numbers of two hunks count the same thing the same way: an
/// ordinal ranks ("their `third` straight week") where a cardinal counts
/// ("`three` straight weeks"), and a number beside another unit measures
/// in it ("90 `miles`" / "150 `kilometres`"). `unit_after`: the hunks
/// are followed by a noun their last numbers count in ("2000 `dollars`").
fn counts_alike<'t>(x: &[&'t Token], y: &[&'t Token], unit_after: bool, lexicon: &Lexicon) -> bool {
    // Which ways a hunk's numbers count: cardinal, ordinal, how often, or
    // not at all: a year dates ("by September `2006`") where "`70` seats"
    // or "$54.9 `million`" count, unless a unit follows it ("2000 people")
    // or a currency sign comes before it ("$2000"), and a time of day
    // tells the hour ("at `3:30 p.m.`").
    let ways = |side: &[&Token]| -> [bool; 5] {
        let ordinal = |word: &str| ordinal_rank(word).is_some();
        let often = |word: &str| listed("once twice", word);
        let mut ways = [false; 5];
        for (k, t) in side.iter().enumerate() {
            if t.role != Role::Number {
                continue;
            }
            let way = if clock(&t.word).is_some() {
                4
            } else if ordinal(&t.word) && day_of_month(t).is_none() {
                1
            } else if often(&t.word) {
                2
            } else if is_year(&t.word)
                && !t.money
                && !side.get(k + 1).map_or(unit_after, |t| counting_noun(t))
            {
                3
            } else {
                0
            };
            ways[way] = true;
        }
        ways
    };
    // Each number's unit: the noun after it, or the unit it is written
    // into ("5`km`").
    let units = |side: &[&'t Token]| -> Vec<Cow<'t, Token>> {
        let mut found = Vec::new();
        for (k, t) in side.iter().enumerate() {
            if t.role != Role::Number {
                continue;
            }
            if let Some(unit_at) = joined_unit(&t.word) {
                let word = t.word[unit_at..].to_owned();
                found.push(Cow::Owned(Token {
                    money: false,
                    info: lexicon.word(&word),
                    word,
                    role: Role::Content,
                    span: t.span,
                }));
            } else if let Some(next) = side.get(k + 1).filter(|n| counting_noun(n)) {
                found.push(Cow::Borrowed(*next));
            }
        }
        found
    };
    let other_units = match (units(x).as_slice(), units(y).as_slice()) {
        ([p], [q]) => !p.same_meaning(q, lexicon),
        _ => false,
    };
    ways(x) == ways(y) && !other_units
}

/// A number beside a value of one slot on each side is one value, a date:
/// "March 3" / "June 12" differ in both parts, which is one conflict and
/// leaves neither month a detail of its side's own.
fn compound_value<'t>(
    x: &[&'t Token],
    y: &[&'t Token],
    place: Place<'_>,
    lexicon: &Lexicon,
) -> Option<Conflict> {
    let number_and_word = |side: &[&'t Token]| -> Option<(&'t Token, &'t Token)> {
        let [a, b] = side else { return None };
        let numeric = |t: &Token| t.role == Role::Number;
        match (numeric(a), numeric(b)) {
            (true, false) => Some((*a, *b)),
            (false, true) => Some((*b, *a)),
            _ => None,
        }
    };
    let ((nx, wx), (ny, wy)) = (number_and_word(x)?, number_and_word(y)?);
    let (numbers, _) = different_value(&[nx], &[ny], [&[], &[]], place, lexicon)?;
    let (words, _) = different_value(&[wx], &[wy], [&[], &[]], place, lexicon)?;
    Some(Conflict {
        kind: "value",
        detail: format!(
            "`{}` ↔ `{}` (each part differs: {}; {})",
            words_of(x),
            words_of(y),
            words.detail,
            numbers.detail
        ),
        negated_side: None,
        denied: None,
    })
}

/// One slot holding two different values: both sides of a short hunk name
/// a number, a name or a class member, and they differ. With the words of
/// each side the value takes (a full name all of its own).
fn different_value<'t>(
    x: &[&'t Token],
    y: &[&'t Token],
    names_before: [&[&'t Token]; 2],
    place: Place<'_>,
    lexicon: &Lexicon,
) -> Option<(Conflict, [usize; 2])> {
    if x.len() > 3 || y.len() > 3 {
        return None;
    }
    let numbers = (number_values(x), number_values(y));
    if !place.after_bound
        && !numbers.0.is_empty()
        && !numbers.1.is_empty()
        && !same_values(&numbers.0, &numbers.1)
        && counts_alike(x, y, place.before_noun, lexicon)
    {
        let clock_times = numbers.0.iter().chain(&numbers.1).any(|v| v.contains(':'));
        return Some((
            Conflict::opposed(
                "value",
                &numbers.0.join(" "),
                &numbers.1.join(" "),
                if clock_times {
                    "times of day"
                } else {
                    "numbers"
                },
            ),
            [1, 1],
        ));
    }
    // A name the hunk goes on with is compared whole ("San `Francisco`" /
    // "San `Diego`"), or by its own part where the whole is no one name
    // ("Dr. `Patel`").
    let whole_names = || {
        let whole = |before: &[&'t Token], side: &[&'t Token]| -> Vec<&'t Token> {
            before.iter().chain(side).copied().collect()
        };
        let (p, in_x) = one_name(&whole(names_before[0], x), lexicon)?;
        let (q, in_y) = one_name(&whole(names_before[1], y), lexicon)?;
        Some((
            p,
            q,
            [
                in_x.saturating_sub(names_before[0].len()),
                in_y.saturating_sub(names_before[1].len()),
            ],
        ))
    };
    // Both sides continue a name or neither does (the aligned names are
    // pairs).
    let names = if names_before[0].is_empty() {
        None
    } else {
        whole_names()
    }
    .or_else(|| {
        one_name(x, lexicon)
            .zip(one_name(y, lexicon))
            .map(|((p, in_x), (q, in_y))| (p, q, [in_x, in_y]))
    });
    // Two names a verb takes as its object are two facts: one speaks
    // Spanish and French, visits Paris and Rome. A time after it dates the
    // verb ("announced `Tuesday`"), and the rule file's classes and
    // single-valued relations are slots by declaration ("uses
    // `PostgreSQL`" / "uses `MySQL`", "married `Tom`"): one slot, though
    // not after a verb of feeling ("likes `Rust`" / "likes `Go`"). A
    // possessor is no value ("is `Sarah`'s manager"), nor is a time that
    // recurs ("on `Tuesdays`" / "on `Thursdays`": a habit on both).
    if let Some((p, q, words)) = names
        && !place.possessor
        && !place.habitual_destination
        && !recurs(&p, place.after_every, lexicon)
        && !recurs(&q, place.after_every, lexicon)
        && (!place.object
            || place.single_valued
            || names_time(&p, lexicon)
            || (lexicon.class_of(&p.word).is_some() && !place.object_of_feeling))
        && let Some(what) = name_slot(&p, &q, place.predicate_noun || place.single_valued, lexicon)
    {
        return Some((
            Conflict::opposed(
                "value",
                lexicon.canonical(&p.word),
                lexicon.canonical(&q.word),
                &what,
            ),
            words,
        ));
    }
    // A role is one slot: one works as a nurse or as a teacher, unless
    // one role is a kind of the other ("cook" / "chef"). A role of two
    // words is one by its last ("a software `engineer`", "a line `cook`").
    let role_head = |side: &[&'t Token]| -> Option<&'t Token> {
        (side.len() <= 2).then(|| side.last().copied()).flatten()
    };
    if place.role
        && let (Some(p), Some(q)) = (role_head(x), role_head(y))
        && lexicon.names_person(&p.info)
        && lexicon.names_person(&q.info)
        && !lexicon.related(p.pair(), q.pair())
    {
        return Some((
            Conflict::opposed("value", &words_of(x), &words_of(y), "roles"),
            [x.len(), y.len()],
        ));
    }
    // A class member is a value only where a copula or a single-valued
    // relation assigns it ("the car is red" / "… is blue", "… is a red
    // sedan" / "… a blue sedan", "prefers tea" / "prefers coffee");
    // elsewhere ("cutting a potato" / "… a tomato") it names another
    // thing.
    if let ([p], [q]) = (x, y)
        && (place.after_copula || place.single_valued)
        && !p.info.inflected_verb
        && !q.info.inflected_verb
        && p.role == Role::Content
        && q.role == Role::Content
        && let Some(class) = lexicon.wordnet_class(&p.info, &q.info)
    {
        return Some((
            Conflict::opposed(
                "value",
                &p.word,
                &q.word,
                &format!("both a kind of {class}"),
            ),
            [1, 1],
        ));
    }
    // What a copula assigns to a kind of thing is one thing of that kind
    // ("favorite sport is tennis" / "… is golf"), however far below it the
    // two lie in WordNet.
    if let ([p], [q]) = (x, y)
        && let Some(kind) = place.kind_assigned
        && !p.info.inflected_verb
        && !q.info.inflected_verb
        && p.role == Role::Content
        && q.role == Role::Content
        && lexicon.is_a(&p.info, &kind.info)
        && lexicon.is_a(&q.info, &kind.info)
        && !lexicon.related(p.pair(), q.pair())
    {
        return Some((
            Conflict::opposed(
                "value",
                &p.word,
                &q.word,
                &format!("both a kind of {}", kind.word),
            ),
            [1, 1],
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::testing::lexicon;

    /// The time of day `text` opens with: the words read and the value.
    fn clock_read(text: &str) -> Option<(&str, String)> {
        clock(text).map(|(len, v)| (&text[..len], v))
    }

    fn comparison(a: &str, b: &str) -> Comparison {
        let lexicon = lexicon();
        compare(&tokens(a, &lexicon), &tokens(b, &lexicon), &lexicon)
    }

    #[test]
    fn function_words_alone_make_no_difference() {
        let found = comparison("The API is fast", "An API is fast");
        assert!(found.conflicts.is_empty() && found.substitutions.is_empty());
        assert_eq!(found.extra, [0, 0]);
        assert!(found.covers(0) && found.covers(1));
    }

    #[test]
    fn a_quotation_or_sentence_opens_on_function_words_not_names() {
        // "The" opening a quotation or a sentence is the article, not a
        // name; mid-sentence, a capitalised word is still read as a name.
        let lexicon = lexicon();
        let role = |text: &str, at: usize| tokens(text, &lexicon)[at].role;
        assert_eq!(role("He said, \"The talks failed.\"", 2), Role::Function);
        assert_eq!(role("Talks began. The talks failed", 2), Role::Function);
        assert_eq!(role("He said: It failed", 2), Role::Function);
        assert_eq!(role("Rain fell on Reading", 3), Role::Name);
        // The full stop of an abbreviation ends no sentence.
        assert_eq!(role("They flew U.S. Airways", 3), Role::Name);
        assert_eq!(role("They met The Who", 2), Role::Name);
    }

    #[test]
    fn a_time_of_day_is_read_on_the_24_hour_clock_however_written() {
        assert_eq!(clock_read("3pm sharp"), Some(("3pm", "15:00".to_owned())));
        assert_eq!(
            clock_read("6:30 p.m. on"),
            Some(("6:30 p.m.", "18:30".to_owned()))
        );
        assert_eq!(clock_read("12 am"), Some(("12 am", "00:00".to_owned())));
        assert_eq!(clock_read("18:30"), Some(("18:30", "18:30".to_owned())));
        // The half of the day unsaid.
        assert_eq!(clock_read("6:30,"), Some(("6:30", "~6:30".to_owned())));
        assert!(same_time("~6:30", "18:30") && same_time("7", "19:00"));
        assert!(!same_time("18:00", "06:00") && !same_time("7", "8"));
        // Not a time of day: a bare number, an hour past 12 with "pm",
        // minutes past 59, a word that goes on.
        for text in ["6 people", "13 pm", "6:75", "6 amps", "2019"] {
            assert_eq!(clock_read(text), None, "{text}");
        }
    }

    #[test]
    fn an_address_is_read_whole_without_the_punctuation_closing_it() {
        fn value(text: &str) -> Option<&str> {
            address(text).map(|len| &text[..len])
        }
        assert_eq!(value("alex.b@example.com."), Some("alex.b@example.com"));
        assert_eq!(
            value("https://example.com/a?b=1), then"),
            Some("https://example.com/a?b=1")
        );
        assert_eq!(value("www.example.org/docs"), Some("www.example.org/docs"));
        // A host and a path need no scheme.
        assert_eq!(
            value("github.com/acme/engram-old,"),
            Some("github.com/acme/engram-old")
        );
        // Not an address: no domain, a bare scheme, a word.
        for text in [
            "alex@localhost",
            "https:// x",
            "e.g. this",
            "user@.com",
            "and/or",
            "1.5/2",
            "vs./versus",
        ] {
            assert_eq!(value(text), None, "{text}");
        }
        let tokens = tokens("Write to alex.b@example.com today", &lexicon());
        let words: Vec<&str> = tokens.iter().map(|t| t.word.as_str()).collect();
        assert_eq!(words, ["write", "to", "alex.b@example.com", "today"]);
    }

    #[test]
    fn the_half_of_the_day_may_be_said_in_words() {
        assert_eq!(
            clock_read("6 in the morning."),
            Some(("6 in the morning", "06:00".to_owned()))
        );
        assert_eq!(
            clock_read("7:30 in the Evening"),
            Some(("7:30 in the Evening", "19:30".to_owned()))
        );
        assert_eq!(
            clock_read("3 in the afternoon"),
            Some(("3 in the afternoon", "15:00".to_owned()))
        );
        // Late at night is the evening's; small hours are the morning's.
        assert_eq!(
            clock_read("10 at night"),
            Some(("10 at night", "22:00".to_owned()))
        );
        assert_eq!(
            clock_read("12 at night"),
            Some(("12 at night", "00:00".to_owned()))
        );
        assert_eq!(
            clock_read("2 at night"),
            Some(("2 at night", "02:00".to_owned()))
        );
        // "o'clock" makes a bare hour a time whose half is unsaid.
        assert_eq!(
            clock_read("6 o'clock"),
            Some(("6 o'clock", "~6:00".to_owned()))
        );
        assert_eq!(
            clock_read("6 o'clock in the morning"),
            Some(("6 o'clock in the morning", "06:00".to_owned()))
        );
        // A count of something in the morning is no time.
        assert_eq!(clock_read("6 in the mornings"), None);
        assert_eq!(clock_read("13 in the morning"), None);
    }

    #[test]
    fn digits_joined_by_a_point_or_a_thousands_separator_are_one_number() {
        let lexicon = lexicon();
        fn roles(found: &[Token]) -> Vec<(&str, Role)> {
            found.iter().map(|t| (t.word.as_str(), t.role)).collect()
        }
        let found = tokens("About 37,000 at .20 for $6.32, or $1.4bn, 3, 4", &lexicon);
        assert_eq!(
            roles(&found),
            [
                ("about", Role::Function),
                ("37,000", Role::Number),
                ("at", Role::Function),
                (".20", Role::Number),
                ("for", Role::Function),
                ("6.32", Role::Number),
                ("or", Role::Function),
                ("1.4bn", Role::Content),
                ("3", Role::Number),
                ("4", Role::Number),
            ]
        );
        let values = number_values(&found.iter().collect::<Vec<_>>());
        assert_eq!(values, ["37000", "0.20", "6.32", "3", "4"]);
        // A number run into a unit is a number, the unit aside.
        let measured = tokens("5km, 16GB, 1.5kg, 5G", &lexicon);
        assert_eq!(
            roles(&measured),
            [
                ("5km", Role::Number),
                ("16gb", Role::Number),
                ("1.5kg", Role::Number),
                ("5g", Role::Name)
            ]
        );
        assert_eq!(
            number_values(&measured.iter().collect::<Vec<_>>()),
            ["5", "16", "1.5"]
        );
        assert!(same_values(&["6.3".into()], &["6.32".into()]));
        assert!(same_values(&["5".into()], &["5.2".into()]));
        assert!(!same_values(&["6.3".into()], &["6.8".into()]));
        assert!(!same_values(&["38.28".into()], &["38.30".into()]));
    }

    #[test]
    fn an_open_and_a_closed_compound_are_one_word() {
        for (open, closed) in [
            ("Profits rose 5 per cent", "Profits rose 5 percent"),
            (
                "She signed a multi-year contract",
                "She signed a multiyear contract",
            ),
            ("The web site is down", "The website is down"),
        ] {
            for found in [comparison(open, closed), comparison(closed, open)] {
                assert!(found.substitutions.is_empty(), "{open} / {closed}");
                assert_eq!(found.extra, [0, 0], "{open} / {closed}");
            }
        }
    }

    #[test]
    fn a_detail_on_one_side_lets_the_detailed_text_cover_the_other() {
        let found = comparison("Deploys run on Fridays", "Deploys run on Fridays at noon");
        assert_eq!(found.extra, [0, 1]);
        assert!(found.covers(1) && !found.covers(0));
        assert!(!found.keeps_apart());
        let both = comparison(
            "Deploys run on Fridays at noon",
            "Deploys run nightly on Fridays",
        );
        assert!(both.keeps_apart(), "details on both sides: neither covers");
    }

    #[test]
    fn a_swapped_content_word_is_a_substitution_not_a_conflict() {
        let found = comparison("The user lives in Berlin", "The user works in Berlin");
        assert_eq!(found.substitutions, vec![("lives".into(), "works".into())]);
        assert!(!found.contradicts() && found.keeps_apart());
    }

    #[test]
    fn a_negated_antonym_says_the_same_as_the_antonym() {
        let agree = comparison(
            "The store is not open on Sundays",
            "The store is closed on Sundays",
        );
        assert!(agree.conflicts.is_empty(), "{agree:?}");
        assert!(!agree.contradicts() && agree.keeps_apart());
        let doubled = comparison("The door is open", "The door is not closed");
        assert!(doubled.conflicts.is_empty() && !doubled.contradicts());
        // "never" is the antonym itself, not a negation beside it.
        let opposed = comparison("Jo always walks to work", "Jo never walks to work");
        assert!(opposed.contradicts(), "{opposed:?}");
        assert!(
            comparison(
                "The store is open on Sundays",
                "The store is closed on Sundays"
            )
            .contradicts()
        );
    }

    #[test]
    fn a_denial_beside_another_value_denies_that_value_only() {
        let other = comparison("The meeting is not at 3 pm", "The meeting is at 5 pm");
        assert!(!other.contradicts(), "{other:?}");
        assert!(comparison("The meeting is at 3 pm", "The meeting is at 5 pm").contradicts());
        assert!(comparison("The meeting is not at 5 pm", "The meeting is at 5 pm").contradicts());
    }

    #[test]
    fn predicates_sharing_a_subject_are_each_asserted() {
        let lexicon = lexicon();
        let split = |text: &str| -> Vec<String> {
            clauses(&tokens(text, &lexicon))
                .iter()
                .map(|c| {
                    c.iter()
                        .map(|t| t.word.as_str())
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .collect()
        };
        // (A verb after the conjunction, "but loves cycling", needs
        // WordNet's verb forms: tests/consolidation.rs.)
        assert_eq!(
            split("Jo is not at home and is cooking"),
            ["jo is not at home", "jo is cooking"]
        );
        assert_eq!(
            split("The shop is closed on Sundays but open on Mondays"),
            [
                "the shop is closed on sundays",
                "the shop is open on mondays"
            ]
        );
        // A second object, a second adjective, and a denial of the pair
        // are one predicate.
        for one in [
            "The man is wearing a jacket and a hat",
            "The dog is brown and white",
            "There is no man standing near the water and holding fishing poles",
        ] {
            assert_eq!(split(one).len(), 1, "{one}");
        }
        let found = clause_conflict(
            &tokens(
                "The shop is closed on Sundays but open on Mondays",
                &lexicon,
            ),
            &tokens("The shop is open on Sundays", &lexicon),
            &lexicon,
        );
        assert!(found.is_some_and(|c| c.explanation().contains("`closed` ↔ `open`")));
    }

    #[test]
    fn a_denial_may_date_itself_but_add_nothing_else() {
        let dated = comparison("Kevin does not have a car anymore", "Kevin has a car");
        assert!(dated.contradicts(), "{dated:?}");
        assert_eq!(dated.dating, [1, 0]);
        let detailed = comparison("Kevin does not have a red car", "Kevin has a car");
        assert!(!detailed.contradicts(), "{detailed:?}");
    }

    #[test]
    fn a_past_and_a_present_statement_do_not_clash() {
        let times = comparison(
            "Emma was not happy with her job",
            "Emma is happy with her job",
        );
        assert_eq!(times.conflicts.len(), 1, "{times:?}");
        assert!(!times.contradicts());
        let denied = comparison("Tom did not call on Monday", "Tom did call on Monday");
        assert!(denied.contradicts(), "{denied:?}");
        let occurrences = comparison("Tom did call on Monday", "Tom did call on Friday");
        assert!(!occurrences.contradicts(), "{occurrences:?}");
        // A present perfect reaches into the past.
        let perfect = comparison("Lena hasn't been to Japan", "Lena was in Japan");
        assert!(perfect.contradicts(), "{perfect:?}");
    }

    #[test]
    fn a_possessive_on_one_side_names_another_referent() {
        for (owned, owner) in [
            ("Dana's brother is a doctor", "Dana is a doctor"),
            (
                "Tom met Dana's brother at the party",
                "Tom met Dana at the party",
            ),
        ] {
            let found = comparison(owned, owner);
            assert!(!found.covers(0) && !found.contradicts(), "{found:?}");
            assert_eq!(
                found.substitutions,
                [("dana's brother".to_owned(), "dana".to_owned())]
            );
        }
        let denied = comparison("Dana's brother is a doctor", "Dana is not a doctor");
        assert!(!denied.contradicts(), "{denied:?}");
        // A possessive before a shared noun only modifies it.
        let modifier = comparison("The family's old car is red", "The family car is red");
        assert!(modifier.substitutions.is_empty(), "{modifier:?}");
        // "'s" for "is" is no possessive.
        let short = comparison("Dana's a doctor", "Dana is a doctor");
        assert!(short.covers(0) && short.covers(1), "{short:?}");
    }

    #[test]
    fn negations_anchor_the_alignment_like_content_words() {
        // Both texts deny giving up; the "to"s must not pair off instead.
        let both = comparison(
            "Gina encourages him not to give up",
            "Gina encourages Jon to keep pushing for his dreams and not give up",
        );
        assert!(both.conflicts.is_empty(), "{both:?}");
        assert!(!both.contradicts());
        let one = comparison(
            "He is considered a witness",
            "He is not considered a witness",
        );
        assert!(one.contradicts(), "{one:?}");
    }

    #[test]
    fn words_that_reframe_the_shared_ones_keep_a_text_from_covering_the_other() {
        for (framed, plain) in [
            ("Kai might get a new job", "Kai got a new job"),
            ("Carl could quit his job", "Carl quit his job"),
        ] {
            let found = comparison(framed, plain);
            assert!(
                !found.covers(0) && found.keeps_apart(),
                "{framed:?}: {found:?}"
            );
        }
        // A detail that only adds is still covered.
        let detail = comparison("Dana is a doctor in Berlin", "Dana is a doctor");
        assert!(detail.covers(0), "{detail:?}");
        // One modal for another is tense or tone.
        let detail = comparison("He said he would resign", "He said he will resign");
        assert!(detail.covers(0), "{detail:?}");
    }

    #[test]
    fn negation_must_bear_on_an_aligned_predicate() {
        let denied = comparison("The user is using Redis", "The user is not using Redis");
        assert!(denied.contradicts(), "{denied:?}");
        assert!(denied.explanation().contains("`not` negates `using`"));
        // A clause of its own with a negation is a detail.
        let clause = comparison(
            "The user is using Redis",
            "The user is using Redis when there are no outages",
        );
        assert!(
            !clause.contradicts() && clause.conflicts.is_empty(),
            "{clause:?}"
        );
    }

    #[test]
    fn a_negated_specific_statement_does_not_deny_the_general_one() {
        let found = comparison(
            "The user rides a horse",
            "The user does not ride a horse near the lake",
        );
        assert!(!found.contradicts(), "{found:?}");
        assert!(found.keeps_apart());
    }

    #[test]
    fn a_general_denial_denies_every_specific_case() {
        let found = comparison(
            "The user does not ride a horse",
            "The user rides a horse near the lake every Sunday with friends",
        );
        assert!(found.contradicts(), "{found:?}");
    }

    #[test]
    fn a_different_referent_in_the_subject_is_not_a_contradiction() {
        let found = comparison("Alice is using Redis", "Bob is using Redis");
        assert!(!found.contradicts(), "{found:?}");
        assert!(found.keeps_apart());
    }

    #[test]
    fn values_in_one_slot_conflict_and_name_their_class() {
        let found = comparison(
            "The service stores sessions in Redis",
            "The service stores sessions in Memcached",
        );
        assert!(found.contradicts(), "{found:?}");
        assert_eq!(found.explanation(), "`redis` ↔ `memcached` (cache)");
        let numbers = comparison("The deploy takes 5 minutes", "The deploy takes 20 minutes");
        assert_eq!(numbers.explanation(), "`5` ↔ `20` (numbers)");
    }

    #[test]
    fn a_number_spelled_in_words_or_written_in_digits_is_one_value() {
        let same = comparison(
            "The user is 28 years old",
            "The user is twenty-eight years old",
        );
        assert!(same.covers(0) && same.covers(1), "{same:?}");
        let other = comparison(
            "The user is 28 years old",
            "The user is twenty-nine years old",
        );
        assert!(other.contradicts(), "{other:?}");
        assert_eq!(other.explanation(), "`28` ↔ `29` (numbers)");
        // A decade is no year.
        let decade = comparison("It was built in 1990", "It was built in the 1990s");
        assert!(!decade.covers(0) && !decade.covers(1), "{decade:?}");
    }

    #[test]
    fn ordinals_spelled_or_written_are_one_rank_and_two_ranks_conflict() {
        let grades = comparison(
            "The user's daughter is in third grade",
            "The user's daughter is in fifth grade",
        );
        assert!(grades.contradicts(), "{grades:?}");
        assert_eq!(grades.explanation(), "`3rd` ↔ `5th` (numbers)");
        let same = comparison(
            "The user's office is on the 11th floor",
            "The user's office is on the eleventh floor",
        );
        assert!(same.covers(0) && same.covers(1), "{same:?}");
        // A rank is not a count: "the third week" / "three weeks".
        let counted = comparison("It is the third week", "It is three weeks");
        assert!(!counted.contradicts(), "{counted:?}");
        assert_eq!(ordinal_written(1), "1st");
        assert_eq!(ordinal_written(12), "12th");
        assert_eq!(ordinal_written(22), "22nd");
        assert_eq!(ordinal_rank("3rd"), Some(3));
        assert_eq!(ordinal_rank("rd"), None);
        assert_eq!(ordinal_rank("north"), None);
    }

    #[test]
    fn the_sides_of_a_comparison_or_a_preference_traded_are_the_opposite_statement() {
        for (first, second) in [
            (
                "The user prefers tea over coffee",
                "The user prefers coffee over tea",
            ),
            ("Ann is taller than Ben", "Ben is taller than Ann"),
            (
                "I prefer email to phone calls",
                "I prefer phone calls to email",
            ),
            // A place relation that holds one way at a time.
            (
                "A cheetah is running behind its prey",
                "A prey is running behind the cheetah",
            ),
        ] {
            let found = comparison(first, second);
            assert!(found.contradicts(), "{first:?} / {second:?}: {found:?}");
        }
        // Other traded roles keep a merge apart but state no opposite: a
        // symmetric comparison, a route; nor do two denials.
        for (first, second) in [
            ("Ann is as tall as Ben", "Ben is as tall as Ann"),
            (
                "The user drove from Berlin to Paris",
                "The user drove from Paris to Berlin",
            ),
            ("Ann is not taller than Ben", "Ben is not taller than Ann"),
        ] {
            let found = comparison(first, second);
            assert!(!found.contradicts(), "{first:?} / {second:?}: {found:?}");
            assert!(found.keeps_apart(), "{first:?} / {second:?}: {found:?}");
        }
    }

    #[test]
    fn moved_words_are_no_detail_but_keep_a_merge_apart() {
        let found = comparison(
            "On Fridays the team deploys the API",
            "The team deploys the API on Fridays",
        );
        assert_eq!(found.extra, [0, 0], "{found:?}");
        assert!(found.moved > 0);
        let roles = comparison("A fish is hunting a turtle", "A turtle is hunting a fish");
        assert!(
            roles.keeps_apart(),
            "swapped roles are another fact: {roles:?}"
        );
    }
}
