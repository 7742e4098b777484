//! Where a hunk sits in the sentences: [`Place`], read from the aligned
//! words around it by [`Around`].

use super::classify::*;
use super::*;

/// Where a hunk sits in the sentences.
#[derive(Debug, Clone, Copy)]
pub(super) struct Place<'t> {
    /// Before the first auxiliary or copula on both sides.
    pub(super) subject: bool,
    /// Right after an aligned copula ("is `red`"), or between its article
    /// and the aligned noun it assigns ("is a `red` sedan").
    pub(super) after_copula: bool,
    /// Right before an aligned noun: what the hunk's last number counts
    /// ("`2000` dollars").
    pub(super) before_noun: bool,
    /// After an aligned copula or passive participle and at most an
    /// article ("is the `winner`", "is named `Rex`"): what the subject is.
    pub(super) predicate_noun: bool,
    /// After aligned words ending with a relation held with one value at
    /// a time ("works `at`", "married `to`"), and at most an article.
    pub(super) single_valued: bool,
    /// The aligned noun a copula's subject ends with, where the hunk is
    /// what the copula assigns, past at most an article ("favorite `sport`
    /// is tennis", "favorite `dog` is the beagle"): the kind of thing the
    /// value names.
    pub(super) kind_assigned: Option<&'t Token>,
    /// That kind is one's favorite, in the singular ("favorite `food` is
    /// sushi"): one value at a time, whatever its kind.
    pub(super) one_favorite: bool,
    /// Right after an aligned active verb: its direct object ("speaks
    /// `Spanish`"), not a passive participle's complement ("is named
    /// `Lily`") nor a preposition's ("lives in `Rome`").
    pub(super) object: bool,
    /// That object is one of a verb of feeling, which one holds toward
    /// many things at once ("likes `Rust`", "loves", "hates"); not of a
    /// preference ("prefers"), which ranks one above the rest.
    pub(super) object_of_feeling: bool,
    /// A side adds its value to another it leaves implied ("Bob `also`
    /// likes Go", "… Go `too`", "… `as well`"): the values hold side by
    /// side.
    pub(super) additive: bool,
    /// After an aligned "as" that follows an aligned verb, and at most an
    /// article: the role the verb is done in ("works as a `nurse`").
    pub(super) role: bool,
    /// Starts each side's sentence (a determiner: "`No` dog is …").
    pub(super) at_start: [bool; 2],
    /// Right before an aligned time word ("`last` year" / "`this` year").
    pub(super) before_time: bool,
    /// Right after an aligned "every" or "each" ("swims `every` Monday").
    pub(super) after_every: bool,
    /// Right after an aligned bound ("less than", "at least", "up to",
    /// "over"): each side's number is one end of a range, and two ranges
    /// bounded the same way overlap.
    pub(super) after_bound: bool,
    /// Right before an aligned possessive "s": whose the next word is ("is
    /// `Sarah`'s manager"), not a value the predicate assigns.
    pub(super) possessor: bool,
    /// Between an aligned possessive, past at most modifiers, and an
    /// aligned copula ("Leo's `car` is a Volvo", "her favourite `sport`
    /// is tennis"): the noun names what the value is to its owner.
    pub(super) owners_noun: bool,
    /// Right after an aligned possessive that no copula assigns ("wins his
    /// `second` tournament", "Sam's `fourth` marathon", not "is his
    /// second wife"): an ordinal there counts one of the possessor's
    /// several things or occasions, and two ordinals count two of them.
    pub(super) among_possessions: bool,
    /// After an aligned preposition that brings in a party to what is
    /// done ("works `with` Laura", "a letter `from` Laura", "a gift `to`
    /// Sam"): one does it with, from or for many.
    pub(super) party: bool,
    /// Each side's hunk has "have" as its verb, not as an auxiliary
    /// ("`has` a bike", not "`has` sold", "`has` been", "`has` to").
    pub(super) has: [bool; 2],
    /// Each side's sentence has "have" as its only verb ("the user `has`
    /// a dog").
    pub(super) owns: [bool; 2],
    /// Each side's sentence has "have" as one of its verbs.
    pub(super) has_anywhere: [bool; 2],
    /// After an aligned preposition of being in or going to a place, or a
    /// verb of presence, and at most an article ("lives `in` Berlin",
    /// "`visited` Tokyo"): being there is being in what it lies within.
    pub(super) locative: bool,
    /// In a phrase about a referent an indefinite article brings in ("has
    /// `a` meeting at 3pm", [`of_an_indefinite`]).
    pub(super) of_an_indefinite: bool,
    /// Under a verb of feeling that takes an infinitive ("`wants` to
    /// visit Norway", "would `love` to live in Paris"): one wishes for
    /// many things at once. Not a preference ("prefers to use"), which
    /// ranks one above the rest.
    pub(super) wished: bool,
    /// On either side, where a verb of going in the simple present takes
    /// its destination ("travels `to` Chicago", "I fly `to` Denver"): a
    /// habit, and one goes to many places.
    pub(super) habitual_destination: bool,
    /// Per side, the first content word after the hunk's last negation as
    /// the sentence has it, before the words the other text has elsewhere
    /// leave the hunk: what a denial names when those words moved ("… and
    /// does not `wear` glasses" / "wears glasses and …").
    pub(super) negated_word: [Option<&'t Token>; 2],
}

/// What a hunk's [`Place`] is read from: the two texts, their aligned
/// words, and where the hunk lies among them.
pub(super) struct Around<'c, 't> {
    /// The two texts.
    pub(super) texts: [&'c [Token]; 2],
    /// The aligned words, as the first text and as the second writes them.
    pub(super) aligned: [&'c [&'t Token]; 2],
    /// The hunk's words on each side.
    pub(super) hunks: [&'c [&'t Token]; 2],
    /// How many words were aligned before the hunk.
    pub(super) before: usize,
    /// The index after the hunk in each text.
    pub(super) end: [usize; 2],
    /// Where each text's subject ends: its first auxiliary or copula.
    pub(super) subject_ends: [Option<usize>; 2],
    /// Either text adds a value beside another ("also").
    pub(super) additive: bool,
    pub(super) lexicon: &'c Lexicon,
}

impl<'t> Around<'_, 't> {
    /// The aligned words the hunk's value starts after: before the hunk,
    /// or before the aligned names a name opening the hunk on both sides
    /// goes on from ("is Sarah `Connor`" / "is Sarah `Kowalski`").
    pub(super) fn value_at(&self) -> usize {
        let opens_with_name = |hunk: &[&Token]| hunk.first().is_some_and(|t| t.role == Role::Name);
        if opens_with_name(self.hunks[0]) && opens_with_name(self.hunks[1]) {
            self.before
                - self.aligned[0][..self.before]
                    .iter()
                    .rev()
                    .take_while(|t| t.role == Role::Name)
                    .count()
        } else {
            self.before
        }
    }

    /// The aligned word the hunk depends on, past an article ("is `a`
    /// nurse", "works as `a` nurse").
    fn governor(&self) -> Option<usize> {
        self.aligned[0][..self.value_at()]
            .iter()
            .rposition(|t| !listed(&ARTICLES, t.word.as_str()))
    }

    /// The aligned word right after the hunk.
    fn after_hunk(&self) -> Option<&'t Token> {
        self.aligned[0].get(self.before).copied()
    }

    /// Right before an aligned noun that a number counts.
    fn before_noun(&self) -> bool {
        self.after_hunk().is_some_and(counting_noun)
    }

    fn before_name(&self) -> bool {
        self.after_hunk().is_some_and(|t| t.role == Role::Name)
    }

    /// An aligned participle after an aligned copula ("is `named`").
    fn passive(&self, k: usize) -> bool {
        let verb: &Token = self.aligned[0][k];
        verb.is_content()
            && verb.info.inflected_verb
            && !verb.word.ends_with("ing")
            && k.checked_sub(1)
                .is_some_and(|p| listed(&COPULAS, self.aligned[0][p].word.as_str()))
    }

    /// A verb with its ending, or bare after a subject that takes the bare
    /// form ("I `speak` Spanish", "we `work` as nurses") or after a modal
    /// or "do" ("will `visit` Tokyo", "does `speak` French").
    fn tensed_verb(&self, k: usize) -> bool {
        let verb: &Token = self.aligned[0][k];
        verb.info.inflected_verb
            || (verb.info.is_verb()
                && k.checked_sub(1).is_some_and(|s| {
                    let before = self.aligned[0][s].word.as_str();
                    listed(&PLAIN_VERB_SUBJECTS, before) || listed(&BARE_VERB_AUXILIARIES, before)
                }))
    }

    /// The active verb right before the hunk, whose direct object it is.
    fn object_verb(&self) -> Option<&'t Token> {
        let k = self.value_at().checked_sub(1)?;
        let verb = self.aligned[0][k];
        (verb.is_content() && self.tensed_verb(k) && !self.passive(k)).then_some(verb)
    }

    /// The hunk's place.
    pub(super) fn place(&self) -> Place<'t> {
        let object_verb = self.object_verb();
        let (value_at, governor) = (self.value_at(), self.governor());
        Place {
            subject: (0..2)
                .all(|side| self.subject_ends[side].is_some_and(|f| self.end[side] <= f)),
            after_copula: {
                let copula_at = |k: usize| listed(&COPULAS, self.aligned[0][k].word.as_str());
                let article_at = |k: usize| listed(&ARTICLES, self.aligned[0][k].word.as_str());
                value_at.checked_sub(1).is_some_and(|k| {
                    copula_at(k)
                        || ((self.before_noun() || self.before_name())
                            && article_at(k)
                            && k.checked_sub(1).is_some_and(copula_at))
                })
            },
            before_noun: self.before_noun(),
            predicate_noun: governor.is_some_and(|k| {
                listed(&COPULAS, self.aligned[0][k].word.as_str()) || self.passive(k)
            }),
            // Held at one time on both sides: "worked at Google" and
            // "works at Microsoft" are a career, not a clash. The tense is
            // the relation's and its auxiliaries' ("`has been` married to").
            single_valued: governor.is_some_and(|k| {
                let last_first = self.aligned[0][..=k]
                    .iter()
                    .rev()
                    .map(|t| (t.word.as_str(), &t.info));
                self.lexicon
                    .single_valued_ending(last_first)
                    .is_some_and(|length| {
                        let mut start = k + 1 - length;
                        while start > 0 && listed(&AUXILIARIES, &self.aligned[0][start - 1].word) {
                            start -= 1;
                        }
                        (start..=k)
                            .all(|v| past_form(self.aligned[0][v]) == past_form(self.aligned[1][v]))
                    })
            }),
            kind_assigned: governor
                .filter(|&k| listed(&COPULAS, &self.aligned[0][k].word))
                .and_then(|k| k.checked_sub(1))
                .map(|k| self.aligned[0][k])
                .filter(|t| t.role == Role::Content && t.info.is_noun()),
            one_favorite: governor
                .filter(|&k| listed(&SINGULAR_COPULAS, &self.aligned[0][k].word))
                .and_then(|k| k.checked_sub(2))
                .is_some_and(|k| {
                    let kind: &Token = self.aligned[0][k + 1];
                    listed(&FAVORITES, &self.aligned[0][k].word)
                        && kind.info.lemmas.contains(&kind.word)
                }),
            role: governor.is_some_and(|k| {
                self.aligned[0][k].word == "as"
                    && k.checked_sub(1).is_some_and(|v| self.tensed_verb(v))
            }),
            object: object_verb.is_some(),
            object_of_feeling: object_verb.is_some_and(|verb| {
                self.lexicon.feels(&verb.info)
                    && !verb
                        .info
                        .lemmas
                        .iter()
                        .any(|l| listed(&PREFERENCE_VERBS, l))
            }),
            additive: self.additive,
            at_start: [
                self.end[0] == self.hunks[0].len(),
                self.end[1] == self.hunks[1].len(),
            ],
            before_time: self.aligned[0]
                .get(self.before)
                .is_some_and(|t| t.is_content() && names_time(t, self.lexicon)),
            possessor: self.aligned[0]
                .get(self.before)
                .is_some_and(|t| t.word == "s"),
            // "from" and "to" bring in a party after a thing passed on ("a
            // letter from", "a gift to"); after a verb they may place
            // ("comes from", "moved to").
            party: governor.is_some_and(|k| {
                let word = self.aligned[0][k].word.as_str();
                listed(&PARTY_PREPOSITIONS, word)
                    || (listed("from to", word)
                        && k.checked_sub(1).is_some_and(|n| {
                            let thing: &Token = self.aligned[0][n];
                            // A verb's form may be a noun too ("thanks"):
                            // after a determiner or a preposition it is.
                            let after_determiner = n.checked_sub(1).is_some_and(|d| {
                                let word = self.aligned[0][d].word.as_str();
                                listed(&DETERMINERS, word) || is_preposition(word) || word == "of"
                            });
                            thing.role == Role::Content
                                && thing.info.is_noun()
                                && (!thing.info.inflected_verb || after_determiner)
                        }))
            }),
            owners_noun: self.after_hunk().is_some_and(|t| listed(&COPULAS, &t.word))
                && self.aligned[0][..value_at]
                    .iter()
                    .rev()
                    .find(|t| !t.is_content() || t.info.inflected_verb)
                    .is_some_and(|t| listed(&POSSESSIVES, &t.word)),
            among_possessions: value_at.checked_sub(1).is_some_and(|k| {
                listed(&POSSESSIVES, &self.aligned[0][k].word)
                    && k.checked_sub(1)
                        .is_none_or(|c| !listed(&COPULAS, &self.aligned[0][c].word))
            }),
            after_every: value_at
                .checked_sub(1)
                .is_some_and(|k| listed(&RECURRING, &self.aligned[0][k].word)),
            after_bound: {
                let back = |n: usize| {
                    value_at
                        .checked_sub(n)
                        .map(|k| self.aligned[0][k].word.as_str())
                };
                matches!(
                    (back(2), back(1)),
                    (Some("less" | "fewer" | "more" | "greater"), Some("than"))
                        | (Some("at"), Some("least" | "most"))
                        | (Some("up"), Some("to"))
                        | (_, Some("under" | "over" | "above" | "below"))
                )
            },
            has: [0, 1]
                .map(|side| (self.hunks[side], self.texts[side]))
                .map(|(hunk, sentence)| has_as_verb(hunk, sentence)),
            owns: self.texts.map(only_verb_is_have),
            has_anywhere: self.texts.map(has_as_its_verb),
            locative: governor.is_some_and(|k| {
                let word: &Token = self.aligned[0][k];
                listed(&LOCATIVES, &word.word) || verb_of_presence(word, self.lexicon)
            }),
            of_an_indefinite: of_an_indefinite(self.aligned[0], value_at, self.lexicon),
            wished: (0..value_at)
                .rev()
                .find(|&k| self.tensed_verb(k))
                .is_some_and(|k| {
                    let verb: &Token = self.aligned[0][k];
                    self.lexicon.feels(&verb.info)
                        && !verb
                            .info
                            .lemmas
                            .iter()
                            .any(|l| listed(&PREFERENCE_VERBS, l))
                        && self.aligned[0].get(k + 1).is_some_and(|t| t.word == "to")
                }),
            habitual_destination: (0..2).any(|side| {
                let (hunk, sentence) =
                    [0, 1].map(|side| (self.hunks[side], self.texts[side]))[side];
                habitual_destination(sentence, self.end[side] - hunk.len(), self.lexicon)
            }),
            negated_word: [self.hunks[0], self.hunks[1]].map(|hunk| {
                let negation = hunk.iter().rposition(|t| t.role == Role::Negation)?;
                hunk[negation + 1..]
                    .iter()
                    .find(|t| t.is_content())
                    .copied()
            }),
        }
    }
}
