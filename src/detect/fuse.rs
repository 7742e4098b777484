//! Sentence fusion for merges: when no member of a duplicate cluster covers
//! the others (each side has a detail of its own: "In March, Gina opened
//! her dance studio" / "Gina opened her dance studio downtown"), the
//! canonical keeps its own text and appends what only the others said, as
//! the phrases of their text around those words ("Gina opened her dance
//! studio downtown (also: In March)"). Nothing is reworded, so nothing is
//! invented, and every content word of every member stays in the active
//! view. Which pairs may fuse is [`super::Prepared::mergeable`]'s call.

use super::Lexicon;
use super::align::{self, Role, Token};
use super::words::WordClass;

/// What the canonical's text carries of the others: a word is carried when
/// the text has the same word or a word of the same lemma, or, for a
/// common word, a synonym (a name is kept as spelled: "Roma" does not
/// carry "Gypsies").
fn carried(word: &Token, text: &[Token], lexicon: &Lexicon) -> bool {
    let literal = matches!(word.role, Role::Name | Role::Number);
    !word.is_content()
        || text.iter().any(|t| {
            t.is_content()
                && (t.word == word.word
                    // A degree says more than its positive: "the best
                    // shops" are not carried by "goods" nor "good".
                    || ((!word.is_graded() || t.is_graded())
                        && (t.shares_lemma(word) || (!literal && t.same_meaning(word, lexicon)))))
        })
}

/// The phrases of `other` (in its own order and spelling) that carry its
/// content words `base` lacks. Uncarried words at most one word apart, with
/// no punctuation between them, form one phrase, which also takes the
/// function word right before it ("`in 1995`", "`the witness`"; not an
/// auxiliary or a conjunction: "is `comfortably`"). A phrase opened by a
/// determiner also takes the shared word right after it, the noun it
/// modifies ("`A black dog`", "`a power drill`"), as does a phrase with no
/// name, number or noun of its own ("`other films`"), and a name is kept
/// whole ("`Tom Parker`", "`the Supreme Court of Appeal`").
pub fn additions(base: &[Token], other_text: &str, lexicon: &Lexicon) -> Vec<String> {
    addition_phrases(base, other_text, lexicon)
        .into_iter()
        .map(|(phrase, _)| phrase)
        .collect()
}

/// Whether every phrase [`additions`] would append states a fact of its
/// own: a name, a number or a noun ("downtown", "In March", "a satire on
/// Hollywood"). A lone modifier or verb ("regional", "agreed",
/// "comfortably") reads as a fragment once cut from its sentence, and
/// leaving it out would drop a word: such a pair is not fused.
pub fn additions_state_facts(base: &[Token], other_text: &str, lexicon: &Lexicon) -> bool {
    addition_phrases(base, other_text, lexicon)
        .iter()
        .all(|(_, states_fact)| *states_fact)
}

/// Whether `a` and `b` (with the texts they came from) may be fused into
/// one text: [`fusable`], and every phrase either side would add to the
/// other states a fact ([`additions_state_facts`]).
pub fn fuses(a: &[Token], b: &[Token], [text_a, text_b]: [&str; 2], lexicon: &Lexicon) -> bool {
    fusable(a, b, lexicon)
        && additions_state_facts(a, text_b, lexicon)
        && additions_state_facts(b, text_a, lexicon)
}

/// Whether a phrase read alone (a fused text's addition) states a fact:
/// the check [`additions_state_facts`] makes of each phrase it finds.
pub fn phrase_states_fact(phrase: &str, lexicon: &Lexicon) -> bool {
    let tokens = align::tokens(phrase, lexicon);
    let text = Phrases {
        tokens: &tokens,
        text: phrase,
    };
    !tokens.is_empty() && text.phrase_states_fact(0, tokens.len() - 1)
}

/// The phrases of [`additions`], each with whether a word of it
/// [`Token::carries_fact`].
fn addition_phrases(base: &[Token], other_text: &str, lexicon: &Lexicon) -> Vec<(String, bool)> {
    let other = align::tokens(other_text, lexicon);
    // "per cent" carries "percent" and the other way round.
    let (base, other) = (
        align::join_compounds(base, &other),
        align::join_compounds(&other, base),
    );
    let (base, other) = (base.as_ref(), other.as_ref());
    let text = Phrases {
        tokens: other,
        text: other_text,
    };
    let mut missing: Vec<usize> = (0..other.len())
        .filter(|&k| !carried(&other[k], base, lexicon))
        .collect();
    // A name joined by "of" is carried whole or not at all: "an appeal"
    // and "the Supreme Court" do not carry "the Supreme Court of Appeal".
    for (first, last) in text.names_joined_by_of() {
        if !carries_name(base, &text.name_parts(first, last)) {
            missing.extend((first..=last).filter(|&k| other[k].role == Role::Name));
        }
    }
    missing.sort_unstable();
    missing.dedup();
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for k in missing {
        match runs.last_mut() {
            Some((_, last)) if k - *last <= 2 && text.joined(*last, k) => *last = k,
            _ => runs.push((k, k)),
        }
    }
    let mut spans: Vec<(usize, usize)> = Vec::new();
    for (first, mut last) in runs {
        // A run inside the name an earlier run was extended over is that
        // name's ("the Museum of the Moving Image" adds "Moving Image"
        // once); what it goes on to past that name is its own ("Jon March
        // Gina `dance`").
        let after = spans.last().map_or(0, |&(_, end)| end + 1);
        if last < after {
            continue;
        }
        let first = first.max(after);
        // A person's name is kept whole: a given name takes the family
        // name after it ("Tom Parker", not "Tom"), and a title the name
        // after it, wherever it stands ("But Mr. Peterson" adds "Mr.
        // Peterson", not "Mr"). Another name after a function word is
        // a place or a date ("In March Gina opened …" adds "In March").
        let after_function_word =
            first > 0 && !other[first - 1].is_content() && text.joined(first - 1, first);
        let mut titled = false;
        while text.is_name(last + 1) && text.joined(last, last + 1) {
            if align::listed(&TITLES, &other[last].word) {
                titled = true;
            } else if other[last].role != Role::Name || (after_function_word && !titled) {
                break;
            }
            last += 1;
        }
        if text.name_across_of(last).is_some() {
            last = text.name_end(last);
        }
        let mut first = if after_function_word && !align::joins(&other[first - 1]) {
            first - 1
        } else {
            first
        };
        // A name's later part takes its beginning ("of Appeal" is "the
        // Supreme Court of Appeal"), and the article before it.
        if let Some(start) = text.name_start_before(first) {
            first = if start > 0 && other[start - 1].word == "the" && text.joined(start - 1, start)
            {
                start - 1
            } else {
                start
            };
        }
        // A possessive's clitic is read with its owner: "Atkinson's
        // current", not "s current".
        if first > 0 && other[first].word == "s" && other[first].follows_apostrophe(other_text) {
            first -= 1;
        }
        let noun_phrase =
            !other[first].is_content() && align::listed(&DETERMINERS, &other[first].word);
        let mut takes_noun = !(first..=last).any(|k| text.states_fact(k));
        if noun_phrase
            && other.get(last + 1).is_some_and(Token::is_content)
            && text.joined(last, last + 1)
        {
            last += 1;
            takes_noun = true;
        }
        // So does a modifier alone, the noun it modifies, compound and all:
        // "`other films`", "`regional video game tournament`", not
        // "other", which says nothing cut from its sentence.
        while takes_noun
            && last + 1 < other.len()
            && text.states_fact(last + 1)
            && text.joined(last, last + 1)
        {
            last += 1;
        }
        spans.push((first.max(after), last));
    }
    spans
        .into_iter()
        .map(|(first, last)| {
            let phrase = other_text[other[first].span.0..other[last].span.1].to_owned();
            (phrase, text.phrase_states_fact(first, last))
        })
        .collect()
}

/// A text's tokens with the text they came from: where its phrases and
/// names begin and end.
struct Phrases<'a> {
    tokens: &'a [Token],
    text: &'a str,
}

impl Phrases<'_> {
    /// Whether tokens `a` and `b` read as one phrase: nothing between them
    /// ends a clause or opens a quotation.
    fn joined(&self, a: usize, b: usize) -> bool {
        let gap = &self.text[self.tokens[a].span.1..self.tokens[b].span.0];
        !gap.contains(PHRASE_BREAKS)
            && !gap.contains("--")
            && !gap.contains(" - ")
            && !self.ends_sentence(a, b)
    }

    /// Whether a sentence ends between tokens `a` and `b`: at a full stop,
    /// unless it closes a title or an initial ("Mr. Peterson", "J. Smith").
    fn ends_sentence(&self, a: usize, b: usize) -> bool {
        let gap = &self.text[self.tokens[a].span.1..self.tokens[b].span.0];
        let abbreviated = align::listed(&TITLES, &self.tokens[a].word)
            || self.tokens[a].word.chars().count() == 1;
        gap.contains(['!', '?']) || (gap.contains('.') && !abbreviated)
    }

    /// Whether tokens `first..=last` hold a clause of their own: a subject
    /// pronoun and its verb, right after it or after one word that is
    /// neither noun nor verb ("we `won`", "it really `means`"). Cut from its
    /// sentence, such a clause says something of a referent the canonical
    /// does not name: a sentence, not a detail.
    fn holds_clause(&self, first: usize, last: usize) -> bool {
        let tokens = &self.tokens[first..=last];
        tokens.iter().enumerate().any(|(k, token)| {
            let verb_after = match &tokens[k + 1..] {
                [next, ..] if next.is_verb() => true,
                [next, then, ..] => !next.is_noun() && then.is_verb(),
                _ => false,
            };
            verb_after && align::listed(&SUBJECT_PRONOUNS, &token.word)
        })
    }

    /// Whether any of tokens `first..=last` states a fact, and they are
    /// no clause of their own ([`Phrases::holds_clause`]).
    fn phrase_states_fact(&self, first: usize, last: usize) -> bool {
        (first..=last).any(|k| self.states_fact(k)) && !self.holds_clause(first, last)
    }

    /// Whether token `k` states a fact ([`Token::carries_fact`]), read as
    /// a sentence's first word where it opens one.
    fn states_fact(&self, k: usize) -> bool {
        let token = &self.tokens[k];
        if k == 0 || self.ends_sentence(k - 1, k) {
            token.carries_fact_opening_a_sentence()
        } else {
            token.carries_fact()
        }
    }

    fn is_name(&self, k: usize) -> bool {
        self.tokens.get(k).is_some_and(|t| t.role == Role::Name)
    }

    /// The name right after `last` across an "of" (or "of the") when
    /// `last` ends a name: one name, "the High Court `of` Appeal", "the
    /// Museum `of the` Moving Image", where "the mayor of Lyon" is two.
    fn name_across_of(&self, last: usize) -> Option<usize> {
        let word = |k: usize| self.tokens.get(k).map(|t| t.word.as_str());
        if !self.is_name(last) || word(last + 1) != Some("of") || !self.joined(last, last + 1) {
            return None;
        }
        let of = last + 1;
        let before_name = if word(of + 1) == Some("the") && self.joined(of, of + 1) {
            of + 1
        } else {
            of
        };
        let name = before_name + 1;
        (self.is_name(name) && self.joined(before_name, name)).then_some(name)
    }

    /// Where a name ending at `last` goes on: its following name words,
    /// through any "of" that joins two of them.
    fn name_end(&self, mut last: usize) -> usize {
        loop {
            if self.is_name(last + 1) && self.joined(last, last + 1) {
                last += 1;
            } else if let Some(next) = self.name_across_of(last) {
                last = next;
            } else {
                return last;
            }
        }
    }

    /// The first word of the name that `of_at` (an "of", or the "the"
    /// after one) joins to a name before it, if it does.
    fn name_start_before(&self, of_at: usize) -> Option<usize> {
        let of = if self.tokens[of_at].word == "the" {
            of_at.checked_sub(1)?
        } else {
            of_at
        };
        let mut start = of.checked_sub(1)?;
        self.name_across_of(start)?;
        while start > 0 && self.is_name(start - 1) && self.joined(start - 1, start) {
            start -= 1;
        }
        Some(start)
    }

    /// The first and last tokens of each name whose parts an "of" joins.
    /// A text's capitalised first word opens the name right after it ("Ana
    /// Ruiz of …"), though on its own it is not read as a name.
    fn names_joined_by_of(&self) -> Vec<(usize, usize)> {
        let mut names = Vec::new();
        let mut k = 0;
        while k < self.tokens.len() {
            if !self.is_name(k) {
                k += 1;
                continue;
            }
            let last = self.name_end(k);
            if self.tokens[k..=last].iter().any(|t| t.word == "of") {
                let opens_name = |opening: &Token| {
                    opening.is_content()
                        && self.text[opening.span.0..opening.span.1].starts_with(char::is_uppercase)
                        && self.joined(0, 1)
                };
                let first = if k == 1 && opens_name(&self.tokens[0]) {
                    0
                } else {
                    k
                };
                names.push((first, last));
            }
            k = last + 1;
        }
        names
    }

    /// The parts "of" joins in the name from `first` to `last`, each as
    /// its words (an article between them aside).
    fn name_parts(&self, first: usize, last: usize) -> Vec<Vec<&str>> {
        let mut parts = vec![Vec::new()];
        for t in &self.tokens[first..=last] {
            match t.word.as_str() {
                "of" => parts.push(Vec::new()),
                "the" => {}
                word => {
                    if let Some(part) = parts.last_mut() {
                        part.push(word);
                    }
                }
            }
        }
        parts
    }
}

/// Whether `text` carries a name of `parts` joined by "of": the whole name,
/// or, when its first part is a full name of its own ("Ana Ruiz of Friends
/// of the Earth"), that part and the rest, each where it stands.
fn carries_name(text: &[Token], parts: &[Vec<&str>]) -> bool {
    let words: Vec<&str> = text
        .iter()
        .map(|t| t.word.as_str())
        .filter(|w| *w != "the")
        .collect();
    carries_name_in(&words, parts)
}

/// [`carries_name`] over the text's words, articles aside.
fn carries_name_in(words: &[&str], parts: &[Vec<&str>]) -> bool {
    let has = |sequence: &[&str]| {
        !sequence.is_empty() && words.windows(sequence.len()).any(|w| w == sequence)
    };
    match parts {
        [] => true,
        [only] => has(only),
        [first, rest @ ..] => {
            has(&parts.join(&"of"))
                || (first.len() >= 2 && has(first) && carries_name_in(words, rest))
        }
    }
}

/// `base` with the phrases of `others` that it does not carry appended,
/// each phrase once; `None` when it already carries them all.
pub fn fuse<'a>(
    base: &str,
    others: impl IntoIterator<Item = &'a str>,
    lexicon: &Lexicon,
) -> Option<String> {
    let mut phrases: Vec<String> = Vec::new();
    let mut carrier = align::tokens(base, lexicon);
    for other in others {
        for phrase in additions(&carrier, other, lexicon) {
            if !phrases.contains(&phrase) {
                carrier.extend(align::tokens(&phrase, lexicon));
                phrases.push(phrase);
            }
        }
    }
    if phrases.is_empty() {
        return None;
    }
    // A text fused before keeps one list: later merges add to it.
    let (body, earlier, stop) = fused_parts(base);
    if let Some(earlier) = earlier {
        phrases.splice(0..0, earlier.split("; ").map(str::to_owned));
    }
    Some(format!("{body}{ALSO}{}){stop}", phrases.join("; ")))
}

/// A text's own words, the list of details [`fuse`] appended to it
/// (`None` for a text never fused), and its closing full stop.
fn fused_parts(text: &str) -> (&str, Option<&str>, &str) {
    let trimmed = text.trim_end();
    let (body, stop) = match trimmed.strip_suffix('.') {
        Some(body) => (body, "."),
        None => (trimmed, ""),
    };
    match body
        .strip_suffix(')')
        .and_then(|b| b.rsplit_once(ALSO))
        .filter(|(_, listed)| !listed.contains(['(', ')']))
    {
        Some((own, listed)) => (own, Some(listed), stop),
        None => (body, None, stop),
    }
}

/// A fused text without the details [`fuse`] appended: the canonical's own
/// text (a text never fused comes back as it is).
pub fn without_additions(text: &str) -> String {
    match fused_parts(text) {
        (own, Some(_), stop) => format!("{own}{stop}"),
        (_, None, _) => text.to_owned(),
    }
}

/// The details [`fuse`] appended to a text, in order; none for a text
/// never fused.
pub fn listed_additions(text: &str) -> Vec<&str> {
    fused_parts(text)
        .1
        .map_or_else(Vec::new, |listed| listed.split("; ").collect())
}

/// Pronouns that are a clause's subject.
static SUBJECT_PRONOUNS: WordClass = WordClass::new("subject_pronouns");

/// Titles written before a name.
static TITLES: WordClass = WordClass::new("titles");

/// Words that open a noun phrase.
static DETERMINERS: WordClass = WordClass::new("fuse_determiners");

/// Punctuation that ends a phrase: a clause boundary, a quotation, a
/// parenthesis or bracket, or a dash (also spelled "--" or " - "). A full
/// stop is not one, since it also ends "Mr." or "U.S." inside a name; an
/// apostrophe or a hyphen stays inside a phrase.
const PHRASE_BREAKS: [char; 11] = [
    ',', ';', ':', '(', ')', '[', ']', '"', '\u{201c}', '\u{201d}', '\u{2014}',
];

/// What opens the list of merged details.
const ALSO: &str = " (also: ";

/// Whether the content words both texts share come in the same order, up
/// to one moved block ("Amrozi accused his brother … , whom he called the
/// witness" / "Referring to him as the witness, Amrozi accused …"). Two
/// words trading places around a third is another statement ("A cheetah is
/// running behind its prey" / "A prey is running behind the cheetah"), and
/// so are two blocks trading places around one preposition ("prefers email
/// `to` phone calls" / "prefers phone calls `to` email"), so a merge would
/// blur who did what.
pub fn same_order(a: &[Token], b: &[Token]) -> bool {
    let b_content: Vec<usize> = (0..b.len()).filter(|&k| b[k].is_content()).collect();
    let mut used = vec![false; b_content.len()];
    // Each shared word of `a`: its index in `a` and its rank among the
    // content words of `b`.
    let mut shared: Vec<(usize, usize)> = Vec::new();
    for (at, t) in a.iter().enumerate().filter(|(_, t)| t.is_content()) {
        if let Some(k) = (0..b_content.len()).find(|&k| !used[k] && b[b_content[k]].shares_lemma(t))
        {
            used[k] = true;
            shared.push((at, k));
        }
    }
    // Ranks: the order in `b` of the shared words, as a permutation.
    let mut sorted: Vec<usize> = shared.iter().map(|&(_, k)| k).collect();
    sorted.sort_unstable();
    let ranks: Vec<usize> = shared
        .iter()
        .filter_map(|(_, k)| sorted.binary_search(k).ok())
        .collect();
    // A shared word on the other side of "than" changed what is compared
    // with what ("Ana's sister is older than her" / "Ana is older than
    // her sister"), whatever the rest of the order. Not a bound ("more
    // than 6,000") nor "rather than", "other than".
    let than = |text: &[Token]| {
        (1..text.len()).find(|&k| {
            text[k].word == "than"
                && !align::listed("more less fewer rather other", &text[k - 1].word)
        })
    };
    if let (Some(than_a), Some(than_b)) = (than(a), than(b))
        && shared
            .iter()
            .any(|&(at, k)| (at < than_a) != (b_content[k] < than_b))
    {
        return false;
    }
    let n = ranks.len();
    let breaks = ranks.windows(2).filter(|w| w[1] != w[0] + 1).count();
    if breaks == 0 {
        return true;
    }
    // The possessive passed from one shared word to another: the words
    // traded roles around it ("Sam is `Maria's` manager" / "Maria is
    // `Sam's` manager"), where "the SIA's president" / "SIA President"
    // only says it another way.
    let owns = |text: &[Token], at: usize| text.get(at + 1).is_some_and(|t| t.word == "s");
    let (mut owns_in_a_only, mut owns_in_b_only) = (false, false);
    for &(at, k) in &shared {
        match (owns(a, at), owns(b, b_content[k])) {
            (true, false) => owns_in_a_only = true,
            (false, true) => owns_in_b_only = true,
            _ => {}
        }
    }
    if owns_in_a_only && owns_in_b_only {
        return false;
    }
    // One block moved: ranks = [0, i) ++ [j, l) ++ [i, j) ++ [l, n).
    if breaks > 3 {
        return false;
    }
    // The moved block starts where the order first breaks.
    let Some(i) = (0..n).find(|&k| ranks[k] != k) else {
        return true;
    };
    (i + 1..n).any(|j| {
        (j + 1..=n).any(|l| {
            let moved = (0..i)
                .chain(j..l)
                .chain(i..j)
                .chain(l..n)
                .eq(ranks.iter().copied());
            // Where the two blocks meet: in `a` after the block of ranks
            // [j, l), in `b` after the block of ranks [i, j).
            let in_a = (shared[i + l - j - 1].0, shared[i + l - j].0);
            let in_b = (b_content[sorted[j - 1]], b_content[sorted[j]]);
            moved && !traded_around(&a[in_a.0 + 1..in_a.1], &b[in_b.0 + 1..in_b.1])
        })
    })
}

/// Besides the prepositions, words that give the phrases on either side
/// of them their roles ("the mother `of` the bride", "taller `than`").
static ROLE_WORDS: WordClass = WordClass::new("role_words");

/// Whether the words between two blocks that traded places hold the same
/// preposition in both texts: the blocks swapped the roles it gives them
/// ("from Paris `to` Berlin" / "from Berlin `to` Paris"), where a clause
/// moved past a comma or a conjunction keeps them ("A man `and` a dog").
fn traded_around(gap_a: &[Token], gap_b: &[Token]) -> bool {
    let relating = |word: &str| align::is_preposition(word) || align::listed(&ROLE_WORDS, word);
    gap_a
        .iter()
        .any(|x| relating(&x.word) && gap_b.iter().any(|y| y.word == x.word))
}

/// Whether a fused text may join two texts that each have details the
/// other lacks: no detail of each beside one shared word
/// ([`details_in_one_slot`]), not a predicate of each (an inflected verb
/// the other lacks, other than one of telling), and no denial on either
/// side (appended to a denial, the other's details would be denied too).
pub fn fusable(a: &[Token], b: &[Token], lexicon: &Lexicon) -> bool {
    let two_predicates = own_verb(a, b, lexicon) && own_verb(b, a, lexicon);
    !details_in_one_slot(a, b, lexicon)
        && !two_predicates
        && ![a, b]
            .iter()
            .any(|side| side.iter().any(|t| t.role == Role::Negation))
}

/// Whether `text` has an inflected verb `other` does not carry: a
/// predicate of its own. Two texts that each have one say two things of
/// the shared words ("Nate's tournament `gets pushed` back" / "Nate `wins`
/// his fourth tournament"), not one thing with details. A verb of telling
/// only reports the rest ("Smith `said`" / "He `admits`").
fn own_verb(text: &[Token], other: &[Token], lexicon: &Lexicon) -> bool {
    text.iter().any(|t| {
        t.is_content() && t.is_inflected_verb() && !t.tells(lexicon) && !carried(t, other, lexicon)
    })
}

/// Whether a detail of each text sits next to the same shared word ("A
/// `blond` child" / "A child `with dark hair`"): two values of one
/// attribute, perhaps in conflict, not two facts to keep side by side.
pub fn details_in_one_slot(a: &[Token], b: &[Token], lexicon: &Lexicon) -> bool {
    let (of_a, of_b) = (
        detail_neighbours(a, b, lexicon),
        detail_neighbours(b, a, lexicon),
    );
    of_a.iter().any(|x| of_b.iter().any(|y| x.shares_lemma(y)))
}

/// The shared content words right before and after each run of `text`'s
/// details (content words `other` does not carry), function words skipped.
fn detail_neighbours<'t>(text: &'t [Token], other: &[Token], lexicon: &Lexicon) -> Vec<&'t Token> {
    let content: Vec<&Token> = text.iter().filter(|t| t.is_content()).collect();
    let shared: Vec<bool> = content.iter().map(|t| carried(t, other, lexicon)).collect();
    let mut out = Vec::new();
    for k in 0..content.len() {
        if shared[k] {
            continue;
        }
        if k > 0 && shared[k - 1] {
            out.push(content[k - 1]);
        }
        if k + 1 < content.len() && shared[k + 1] {
            out.push(content[k + 1]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::testing::lexicon;

    fn order(a: &str, b: &str) -> bool {
        let lexicon = lexicon();
        same_order(
            &align::statement(a, &lexicon),
            &align::statement(b, &lexicon),
        )
    }

    #[test]
    fn a_moved_clause_keeps_the_order_and_swapped_roles_do_not() {
        assert!(order(
            "The company said on Tuesday that profits rose",
            "Profits rose, the company said on Tuesday"
        ));
        assert!(order(
            "A man and a dog are walking",
            "A dog and a man are walking"
        ));
        assert!(!order(
            "A cheetah is quickly running behind its prey",
            "A prey is quickly running behind the cheetah"
        ));
        assert!(!order("Tom beat Jerry at chess", "Jerry beat Tom at chess"));
        assert!(!order(
            "Ana prefers email to phone calls",
            "Ana prefers phone calls to email"
        ));
        assert!(!order(
            "Ana moved from Paris to Berlin",
            "Ana moved from Berlin to Paris"
        ));
        assert!(!order("Sam is Maria's manager", "Maria is Sam's manager"));
        // Two phrases that only changed places keep their prepositions.
        assert!(order(
            "He arrived in Paris on Monday",
            "He arrived on Monday in Paris"
        ));
        assert!(order(
            "The company said on Tuesday that profits rose",
            "On Tuesday, the company said that profits rose"
        ));
    }

    #[test]
    fn the_canonical_keeps_its_words_and_appends_only_what_the_others_add() {
        let lexicon = lexicon();
        let fused = fuse(
            "The company said on Tuesday that profits rose 5 percent.",
            ["Profits rose 5 percent, the company told reporters."],
            &lexicon,
        )
        .unwrap();
        assert_eq!(
            fused,
            "The company said on Tuesday that profits rose 5 percent (also: told reporters)."
        );
        assert_eq!(
            fuse(
                "Profits rose 5 percent.",
                ["profits rose 5 percent"],
                &lexicon
            ),
            None
        );
    }

    proptest::proptest! {
        /// Whatever the words, the fused text carries every content word of
        /// every member, and the base's text comes first, unchanged.
        #[test]
        fn fusion_loses_no_word(
            base in proptest::collection::vec(0usize..WORDS.len(), 1..12),
            others in proptest::collection::vec(
                proptest::collection::vec(0usize..WORDS.len(), 1..12), 1..4),
        ) {
            let lexicon = lexicon();
            let text = |ids: &[usize]| ids.iter().map(|&k| WORDS[k]).collect::<Vec<_>>().join(" ");
            let base = text(&base);
            let others: Vec<String> = others.iter().map(|o| text(o)).collect();
            let fused = fuse(&base, others.iter().map(String::as_str), &lexicon)
                .unwrap_or_else(|| base.clone());
            proptest::prop_assert!(fused.starts_with(base.trim_end_matches('.')));
            let kept = align::tokens(&fused, &lexicon);
            for other in &others {
                for word in align::tokens(other, &lexicon) {
                    proptest::prop_assert!(
                        carried(&word, &kept, &lexicon),
                        "{:?} lost: {:?} + {:?} -> {:?}", word.word, base, others, fused
                    );
                }
            }
        }
    }

    const WORDS: [&str; 19] = [
        "Gina",
        "opened",
        "a",
        "the",
        "studio",
        "in",
        "March",
        "downtown",
        "with",
        "Jon",
        "is",
        "not",
        "dance",
        "42",
        "and",
        "friends",
        "Mr.",
        "Atkinson's",
        "[our]",
    ];

    #[test]
    fn a_phrase_reads_as_a_phrase() {
        let lexicon = lexicon();
        // A modifier takes its noun; an auxiliary is not a phrase's opening.
        assert_eq!(
            fuse(
                "A dog is running through the snow",
                ["A black dog is running through the snow"],
                &lexicon
            )
            .unwrap(),
            "A dog is running through the snow (also: A black dog)"
        );
        assert_eq!(
            fuse(
                "A boy is playing a piano",
                ["A boy is comfortably playing a piano"],
                &lexicon
            )
            .unwrap(),
            "A boy is playing a piano (also: comfortably)"
        );
    }

    #[test]
    fn a_phrase_stops_at_punctuation() {
        let lexicon = lexicon();
        // A comma ends a phrase: the word after it belongs to the next
        // clause, not to the noun phrase a determiner opened.
        assert_eq!(
            fuse(
                "Maria finds volunteering rewarding",
                ["Maria, volunteering at a homeless shelter, finds it rewarding"],
                &lexicon
            )
            .unwrap(),
            "Maria finds volunteering rewarding (also: a homeless shelter)"
        );
        assert_eq!(
            fuse(
                "The film lasted a week",
                ["The film, a satire on Hollywood, lasted a week"],
                &lexicon
            )
            .unwrap(),
            "The film lasted a week (also: a satire on Hollywood)"
        );
        // Details on both sides of a comma are two phrases.
        assert_eq!(
            fuse(
                "Profits rose",
                ["Profits rose sharply, analysts said"],
                &lexicon
            )
            .unwrap(),
            "Profits rose (also: sharply; analysts said)"
        );
    }

    #[test]
    fn a_name_stays_whole_and_a_repeated_phrase_is_added_once() {
        let lexicon = lexicon();
        assert_eq!(
            fuse(
                "Parker said the lawyers would respond",
                ["His spokesman, Tom Parker, said the lawyers would respond"],
                &lexicon
            )
            .unwrap(),
            "Parker said the lawyers would respond (also: His spokesman; Tom Parker)"
        );
        assert_eq!(
            fuse(
                "Acme and Globex led shares",
                ["Acme Inc and Globex Inc led shares"],
                &lexicon
            )
            .unwrap(),
            "Acme and Globex led shares (also: Inc)",
            "a name does not reach back to the name before it"
        );
    }

    #[test]
    fn a_name_joined_by_of_is_added_whole() {
        let lexicon = lexicon();
        // A word of the name the canonical also has elsewhere ("appeal")
        // is still part of the name: "the High Court" is another court.
        assert_eq!(
            fuse(
                "Ana may appeal against her fine",
                ["Ana may appeal against her fine at the High Court of Appeal"],
                &lexicon
            )
            .unwrap(),
            "Ana may appeal against her fine (also: the High Court of Appeal)"
        );
        // "of the" inside a name does not split it in two.
        assert_eq!(
            fuse(
                "Ana donated her notes",
                ["Ana donated her notes to the Museum of the Moving Image"],
                &lexicon
            )
            .unwrap(),
            "Ana donated her notes (also: the Museum of the Moving Image)"
        );
        // Only the name's last part is new: the name comes whole.
        assert_eq!(
            fuse(
                "Ana wrote to the Supreme Court",
                ["Ana wrote to the Supreme Court of Canada"],
                &lexicon
            )
            .unwrap(),
            "Ana wrote to the Supreme Court (also: the Supreme Court of Canada)"
        );
        // Every word of the name carried on its own is not the name: the
        // text does not cover the other, whose name it adds.
        assert_eq!(
            fuse(
                "Ana appealed to the Supreme Court",
                ["Ana appealed to the Supreme Court of Appeal"],
                &lexicon
            )
            .unwrap(),
            "Ana appealed to the Supreme Court (also: the Supreme Court of Appeal)"
        );
        assert_eq!(
            fuse(
                "Ana read the News and the World section",
                ["Ana read the News of the World"],
                &lexicon
            )
            .unwrap(),
            "Ana read the News and the World section (also: the News of the World)"
        );
        // A person's full name before "of" is a name of its own, and the
        // organisation after it another: both carried, nothing to add.
        assert_eq!(
            fuse(
                "Ana Ruiz, who works for Friends of the Earth, spoke",
                ["Ana Ruiz of Friends of the Earth spoke"],
                &lexicon
            ),
            None
        );
        // The canonical's own copy of the name leaves nothing to add, and
        // "of" between a name and a common word is no part of a name.
        assert_eq!(
            fuse(
                "Ana wrote to the Bank of England",
                ["Ana wrote to the Bank of England"],
                &lexicon
            ),
            None
        );
        assert_eq!(
            fuse("Ana met the mayor", ["Ana met the mayor of Lyon"], &lexicon).unwrap(),
            "Ana met the mayor (also: of Lyon)"
        );
    }

    #[test]
    fn a_title_keeps_its_name_and_a_possessive_its_owner() {
        let lexicon = lexicon();
        // "Mr" alone reads as a word of its own; the title belongs to the
        // name after it, whatever opens the sentence.
        assert_eq!(
            fuse(
                "Rush is the only witness",
                ["Mr. Rush is the only witness"],
                &lexicon
            )
            .unwrap(),
            "Rush is the only witness (also: Mr. Rush)"
        );
        assert_eq!(
            fuse(
                "But Peterson added that nobody objects",
                ["But Mr. Peterson added that nobody objects"],
                &lexicon
            )
            .unwrap(),
            "But Peterson added that nobody objects (also: Mr. Peterson)"
        );
        // A phrase after a possessive starts at its owner, not at the
        // clitic ("s current").
        assert_eq!(
            fuse(
                "Atkinson's salary is $361,400",
                ["Atkinson's current salary is $361,400"],
                &lexicon
            )
            .unwrap(),
            "Atkinson's salary is $361,400 (also: Atkinson's current)"
        );
    }

    #[test]
    fn a_bracket_ends_a_phrase() {
        let lexicon = lexicon();
        assert_eq!(
            fuse(
                "Ximian strengthens our ability to work with partners",
                ["Ximian strengthens our ability to work with [our] customers and partners"],
                &lexicon
            )
            .unwrap(),
            "Ximian strengthens our ability to work with partners (also: customers)"
        );
    }

    #[test]
    fn a_compound_spelled_open_or_closed_is_carried() {
        let lexicon = lexicon();
        assert_eq!(
            fuse(
                "Profits rose 5 percent",
                ["Profits rose 5 per cent"],
                &lexicon
            ),
            None
        );
        assert_eq!(
            fuse(
                "Profits rose 5 per cent",
                ["Profits rose 5 percent"],
                &lexicon
            ),
            None
        );
    }

    #[test]
    fn details_of_several_members_are_each_added_once() {
        let lexicon = lexicon();
        let fused = fuse(
            "Gina opened a dance studio",
            [
                "Gina opened a dance studio in March",
                "In March Gina opened a dance studio downtown",
            ],
            &lexicon,
        )
        .unwrap();
        assert_eq!(
            fused,
            "Gina opened a dance studio (also: in March; downtown)"
        );
        // A later merge adds to the same list.
        let again = fuse(&fused, ["Gina opened a dance studio with Jon"], &lexicon).unwrap();
        assert_eq!(
            again,
            "Gina opened a dance studio (also: in March; downtown; with Jon)"
        );
    }
}
