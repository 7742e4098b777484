//! Where a hunk sits in the sentences ([`Place`]), and the word tests the
//! hunk rules of [`super::rules`] ask: what a side adds, which value a
//! slot holds, whether two words are opposed.

use super::*;
use super::{changes::*, place::Place, tokens::*};
use crate::lexicon::WholeWords;

/// Whether `hunk`, words of `subject` ending before `end`, narrows what
/// the subject names beyond `other`, the other side's words there: it has
/// more content words, and one of them, a noun or a comparative or
/// superlative (no number or name), is written right before a noun of the
/// subject, its own or the shared one after it ("the `team` meeting", "the
/// `older` brother", "the `dentist` appointment" / "the meeting"). A plain
/// adjective only describes what it names ("the `old` laptop").
pub(super) fn narrows(hunk: &[&Token], other: &[&Token], subject: &[Token], end: usize) -> bool {
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
pub(super) fn selects(t: &Token) -> bool {
    (t.word.ends_with("er") || t.word.ends_with("est"))
        && t.info.lemmas.iter().any(|lemma| *lemma != t.word)
}

/// Whether `hunk`, words of `text` only it has, ending before `end`, makes
/// what an owner owns another thing: an owner of its own between them
/// ("the user's `wife's` birthday" is the wife's, where "Microsoft's
/// Windows" only says whose "Windows" is), or a noun that narrows it to a
/// kind ("the user's `work` laptop", beside a laptop of one's own; an
/// adjective only describes it: "the user's `old` laptop").
pub(super) fn another_possession(hunk: &[&Token], text: &[Token], end: usize) -> bool {
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
pub(super) fn modifies_an_added_noun(
    hunk: &[&Token],
    text: &[Token],
    end: usize,
    lexicon: &Lexicon,
) -> bool {
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
            && !listed(&PLAIN_VERB_SUBJECTS, &t.word)
            && written_together(shared, t)
            && !is_preposition(&t.word)
            && !listed(&PARTICLES, &t.word)
            && ordinal_rank(&t.word).is_none()
            && hunk.get(1).is_none_or(|next| next.word != "of")
    }) else {
        return false;
    };
    // A word that may modify, right before a verb form, is the verb's
    // adverb: "the user `still` lives", not a "user still".
    if head.info.modifies()
        && hunk.len() == 1
        && text.get(end).is_some_and(|t| t.info.inflected_verb)
    {
        return false;
    }
    let Some(opener) = k.checked_sub(1).map(|d| &text[d]) else {
        return false;
    };
    // After a determiner, two nouns are one phrase ("a teacher
    // assistant", though "assistant" is an adjective too); after a verb
    // the second may be an adverb ("plays tennis `well`").
    let head_of_phrase = if listed(&DETERMINERS, opener.word.as_str()) {
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

/// Words that make the adjective after them a comparison ("`more`
/// strict", "`as` hot as").
pub(super) static DEGREE_WORDS: WordClass = WordClass::new("degree_words");

/// Whether the word at `k` compares: a comparative or superlative, or
/// after a degree word ("stricter" and "more strict" both compare).
pub(super) fn compares(text: &[Token], k: usize) -> bool {
    text[k].is_graded()
        || k.checked_sub(1)
            .is_some_and(|p| listed(&DEGREE_WORDS, text[p].word.as_str()))
}

/// Prepositions that attach a phrase to the noun before them ("the
/// popcorn `at` the movie"); not "of", whose phrase is often what the
/// noun measures ("a bowl `of` cereal" is cereal).
pub(super) static ATTACHING_PREPOSITIONS: WordClass = WordClass::new("attaching_prepositions");

/// Whether `hunk`, words of `text` only it has, ending before `end`, is an
/// object it adds between a verb and the shared noun, which is then only
/// in a phrase attached to that object: "enjoyed `the popcorn at` the
/// movie" did not enjoy the movie.
pub(super) fn attaches_to_added_object(hunk: &[&Token], text: &[Token], end: usize) -> bool {
    let start = end - hunk.len();
    let verb = text[..start]
        .iter()
        .rev()
        .find(|t| !listed(&ARTICLES, t.word.as_str()));
    let noun_at = hunk.iter().position(|t| plain_noun(t));
    let preposition_at = hunk
        .iter()
        .rposition(|t| listed(&ATTACHING_PREPOSITIONS, t.word.as_str()));
    let (Some(noun_at), Some(preposition_at)) = (noun_at, preposition_at) else {
        return false;
    };
    verb.is_some_and(|v| v.is_content() && v.info.inflected_verb)
        && noun_at < preposition_at
        && hunk[preposition_at + 1..]
            .iter()
            .all(|t| listed(&DETERMINERS, t.word.as_str()))
        && text.get(end).is_some_and(plain_noun)
}

/// Whether `hunk`, words of `text` only it has, ending before `end`, makes
/// with a shared noun beside it a compound WordNet lists as no kind of
/// that noun in any sense. Before it, a noun: a "`vice` president" is no
/// president, a "`water` gun" no gun, where "`cooking` oil" is oil; not an
/// adjective, which modifies its noun whatever idiom WordNet lists ("cold
/// water" is disparagement, "black cat" a marten). After it, the whole
/// hunk: a "brother`-in-law`" is no brother.
pub(super) fn compounds_into_another(
    hunk: &[&Token],
    text: &[Token],
    end: usize,
    lexicon: &Lexicon,
) -> bool {
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
pub(super) fn names_the_modifier(modifier: &Token, head: &Token, lexicon: &Lexicon) -> bool {
    head.info.lemmas.iter().any(|lemma| {
        let phrase = format!("{} {lemma}", modifier.word);
        let compound = lexicon.word(&phrase);
        lexicon.is_common_word(&phrase)
            && (lexicon.synonyms((&phrase, &compound), modifier.pair())
                || lexicon.is_a(&compound, &modifier.info))
    })
}

/// The side whose hunk (`moved`: without the words that moved; `original`:
/// with them) is a possessive's clitic and a noun the other text lacks
/// ("`s brother`" after "Dana"), when the other side's hunk is empty or
/// says what the owner does instead ("Sam's sister `likes` jazz" / "Sam
/// `hates` jazz"), and that noun phrase.
pub(super) fn possessed(
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
                        owned.info.is_noun() && !listed(&AUXILIARIES, t.word.as_str())
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

/// A hunk without its content words that the other text has elsewhere:
/// those moved ("walking in body paint in front of a crowd" / "walking in
/// front of a crowd in body paint"), they did not change. A comparative or
/// superlative moved only where the other text has it too: "the `best`
/// shops" is not carried by "goods", though WordNet gives both "good".
pub(super) fn moved_out<'t>(hunk: &[&'t Token], other: &[Token]) -> Vec<&'t Token> {
    moved_out_of_alignment(hunk, other, &[])
}

/// [`moved_out`] where a common word can only have moved to one of
/// `other`'s words outside the alignment (`aligned`, the other side's
/// aligned words): a word the alignment already pairs with one of this
/// side's stays where it is, so a second word of this side that shares
/// its lemma is another thing ("Two white `cats` are playing with a brown
/// dog" / "Two white `dogs` … with a brown dog"). A word moves into its
/// derived noun too ("is `allergic` to peanuts" / "has a peanut
/// `allergy`"). A name mentioned again
/// is the same one ("said Jim Walton, `CNN`'s president … the way `CNN`
/// collects").
pub(super) fn moved_out_of_alignment<'t>(
    hunk: &[&'t Token],
    other: &[Token],
    aligned: &[&Token],
) -> Vec<&'t Token> {
    hunk.iter()
        .copied()
        .filter(|t| {
            !t.is_content()
                || !other.iter().any(|o| {
                    o.is_content()
                        && (t.role == Role::Name || !aligned.iter().any(|a| std::ptr::eq(*a, o)))
                        && (!t.is_graded() || o.is_graded())
                        && (o.info.lemmas.iter().any(|l| t.info.lemmas.contains(l))
                            || o.info.derives(&t.info))
                })
        })
        .collect()
}

pub(super) fn words_of(tokens: &[&Token]) -> String {
    tokens
        .iter()
        .map(|t| t.word.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The tokens' lemmas, so that the rule file's "add" / "remove" also
/// finds "adding" / "removed".
pub(super) fn lemmas_of(tokens: &[&Token]) -> String {
    tokens
        .iter()
        .flat_map(|t| t.info.lemmas.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join(" ")
}

pub(super) fn content<'t>(side: &[&'t Token]) -> Vec<&'t Token> {
    side.iter().copied().filter(|t| t.is_content()).collect()
}

/// Prepositions of where one goes: "travels `to` Chicago".
pub(super) static DESTINATIONS: WordClass = WordClass::new("destinations");

/// Whether what starts at `start` in `tokens` is where a verb of going in
/// the simple present takes its destination ("travels to | Chicago", "we
/// often fly to | Denver", "commutes into the | city"). Not a change
/// ("moves to | Boston": the verb of "moved to"), a trip under way ("is
/// flying to | Tokyo") nor one told in the past ("flew to | Tokyo": two
/// occurrences, see [`Comparison::contradicts`]).
pub(super) fn habitual_destination(tokens: &[Token], start: usize, lexicon: &Lexicon) -> bool {
    let mut k = start;
    if k > 0 && listed(&ARTICLES, &tokens[k - 1].word) {
        k -= 1;
    }
    let Some(verb_at) = k
        .checked_sub(2)
        .filter(|&v| listed(&DESTINATIONS, &tokens[v + 1].word))
    else {
        return false;
    };
    let verb = &tokens[verb_at];
    let before = verb_at.checked_sub(1).map(|p| &tokens[p]);
    // The simple present: the verb's "-s" ("travels"), or its bare form
    // after a subject that takes it ("I fly"); never after an auxiliary
    // ("will fly", "does not fly").
    let simple_present = ((verb.info.inflected_verb && verb.word.ends_with('s'))
        || (verb.info.is_verb() && before.is_some_and(|t| listed(&PLAIN_VERB_SUBJECTS, &t.word))))
        && before.is_none_or(|t| !listed(&AUXILIARIES, &t.word) && !negated_auxiliary(t));
    verb.is_content()
        && simple_present
        && lexicon.means_motion(&verb.info)
        && !lexicon.is_change_verb(&verb.info)
}

/// Words that open a relative clause: "a sister `who` lives in Ohio".
pub(super) static RELATIVE_PRONOUNS: WordClass = WordClass::new("relative_pronouns");

/// Whether the value right after `aligned[..value_at]` qualifies a referent
/// an indefinite article brings in: "has `a` meeting at | 3pm", "is
/// planning `a` trip to | Italy", "has `a` sister who lives in | Ohio",
/// "has `an` exam on May | 3". Another meeting, trip or sister may have
/// the other value, so the two values are two things, not a clash ("has a
/// meeting at 5pm" as well); a definite referent has one ("the meeting is
/// at 3pm", "Sam's trip to Italy"). Not where the phrase is itself the
/// value of a relation held with one at a time ("works at a startup in |
/// Berlin", "married to a doctor from | Ohio").
pub(super) fn of_an_indefinite(aligned: &[&Token], value_at: usize, lexicon: &Lexicon) -> bool {
    // The preposition of a phrase ending at `end`, past the phrase's name
    // words and article ("on May | 3", "with the | …").
    let preposition = |end: usize| {
        let mut k = end;
        while k > 0
            && (aligned[k - 1].role == Role::Name || listed(&ARTICLES, &aligned[k - 1].word))
        {
            k -= 1;
        }
        k.checked_sub(1)
            .filter(|&p| is_preposition(&aligned[p].word))
    };
    let content = |at: usize| aligned[at].role == Role::Content;
    let indefinite = |at: usize| listed(&INDEFINITE_ARTICLES, &aligned[at].word);
    // The indefinite article of the referent a phrase opening at `k`
    // qualifies: its noun right before, with at most one word before that
    // ("a dentist appointment"; after the article even "meeting" is a
    // noun), or a relative clause's verb between ("a sister who `lives`").
    let article_before = |mut k: usize| {
        if k >= 2
            && aligned[k - 1].is_content()
            && aligned[k - 1].info.is_verb()
            && listed(&RELATIVE_PRONOUNS, &aligned[k - 2].word)
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
pub(super) fn adds_a_value(text: &[Token]) -> bool {
    let last = text.len().saturating_sub(1);
    text.iter().enumerate().any(|(k, t)| match t.word.as_str() {
        "also" | "additionally" => true,
        "too" => k == last,
        "well" => k == last && k > 0 && text[k - 1].word == "as",
        _ => false,
    })
}

/// Prepositions of being in or going to a place, or coming from it.
pub(super) static LOCATIVES: WordClass = WordClass::new("locatives");

/// Prepositions that bring in a party: a companion, an agent, a
/// beneficiary, an opponent or a topic ("with", "by", "for", "against",
/// "about").
pub(super) static PARTY_PREPOSITIONS: WordClass = WordClass::new("party_prepositions");

/// The opposed words of a hunk, if any: the rule file's antonyms, on the
/// words or their lemmas, or WordNet's, also of a hyphenated word whose
/// head `next` both sides share ("`part`-time" / "`full`-time").
pub(super) fn antonym_in(
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
        .or_else(|| opposite_relation(x, y))
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

/// Quantifiers over every member of a set ("every", "all", "each").
pub(super) static UNIVERSAL_QUANTIFIERS: WordClass = WordClass::new("universal_quantifiers");

/// Relations of place by their two poles (`en.toml`): being in, on or at
/// a thing, and being out of, off or away from it. A state holds one way at
/// a time; a journey's "to" and "from" do not exclude each other ("flew to
/// Paris" / "flew from Paris" are two flights), and stay another relation.
static OPPOSITE_RELATIONS: [(&WordClass, &WordClass); 3] = [
    (&CONTAINMENT, &CONTAINMENT_REVERSED),
    (&SUPPORT, &SUPPORT_REVERSED),
    (&PRESENCE, &PRESENCE_REVERSED),
];
pub(super) static CONTAINMENT: WordClass = WordClass::new("containment");
pub(super) static CONTAINMENT_REVERSED: WordClass = WordClass::new("containment_reversed");
pub(super) static SUPPORT: WordClass = WordClass::new("support");
pub(super) static SUPPORT_REVERSED: WordClass = WordClass::new("support_reversed");
pub(super) static PRESENCE: WordClass = WordClass::new("presence");
pub(super) static PRESENCE_REVERSED: WordClass = WordClass::new("presence_reversed");

/// One relation at its two poles across the hunks: a word of one pole on
/// one side, of the other on the other, and neither on both ("The cat is
/// `in` the box" / "… `out of` the box", "is `at` home" / "is `away from`
/// home"). Whatever else the texts share, the one says the opposite of the
/// other, so a text that holds every word of the other does not hold its
/// fact. The hunks must be the relation words alone, so both bear on the
/// shared words after them: "walking `in a yard`" / "walking `outside`"
/// places one walk twice.
pub(super) fn opposite_relation(x: &[&Token], y: &[&Token]) -> Option<(String, String)> {
    let only = |side: &[&Token], phrase: &str| {
        content(side)
            .iter()
            .all(|t| phrase.split(' ').any(|w| w == t.word))
    };
    let (wx, wy) = (words_of(x), words_of(y));
    let (wx, wy) = (WholeWords::new(&wx), WholeWords::new(&wy));
    let find = |text: &WholeWords<'_>, pole: &WordClass| {
        pole.phrases()
            .filter(|p| text.has(p))
            .max_by_key(|p| p.len())
            .map(str::to_owned)
    };
    OPPOSITE_RELATIONS.iter().find_map(|&(toward, away)| {
        for (first, second) in [(toward, away), (away, toward)] {
            if let (Some(p), Some(q), None, None) = (
                find(&wx, first),
                find(&wy, second),
                find(&wx, second),
                find(&wy, first),
            ) && only(x, &p)
                && only(y, &q)
            {
                return Some((p, q));
            }
        }
        None
    })
}

/// Whether `prefixed` is `word` with "non" before it ("nonsmoker" /
/// "smokers", "nonstop" / "stops"): its opposite, whether WordNet lists
/// the pair or not.
pub(super) fn non_prefixed(prefixed: &Token, word: &Token) -> bool {
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

/// "alone" on one side and "with" someone on the other ("lives `alone`"
/// / "lives `with her parents`"): alone is with nobody. Not "with" a
/// thing ("with a cat", "with an umbrella"), nor under a negation.
pub(super) fn alone_against_company(
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
pub(super) fn dates_a_change(t: &Token, lexicon: &Lexicon) -> bool {
    !t.info.inflected_verb && lexicon.is_change_word(&t.word)
}

/// `content` without the change words that open or close it ("`now`
/// green", "green `now`"): they say since when the value holds, not what
/// it is, and are counted as dating the text. A change word alone is
/// left as it is.
pub(super) fn without_change_words<'c, 't>(
    content: &'c [&'t Token],
    lexicon: &Lexicon,
) -> &'c [&'t Token] {
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
pub(super) fn without_age_unit<'c, 't>(
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

/// `content` (the content words of `hunk`) without a closing date ("turned
/// 5 `in June`") where the `other` side's hunk dates nothing: it says when
/// this side's value came to be, not what it is. Where both sides are
/// dated, the dates may tell two events apart ("rose 5 percent in June" /
/// "rose 7 percent in May"), so both stay.
pub(super) fn without_closing_date<'c, 't>(
    content: &'c [&'t Token],
    hunk: &[&Token],
    other: &[&Token],
    lexicon: &Lexicon,
) -> &'c [&'t Token] {
    let dates = content
        .iter()
        .rev()
        .take_while(|t| names_time(t, lexicon))
        .count();
    let start = content.len() - dates;
    if dates == 0 || start == 0 || other.iter().any(|t| names_time(t, lexicon)) {
        return content;
    }
    let opened_by_preposition = hunk
        .iter()
        .position(|t| std::ptr::eq(*t, content[start]))
        .and_then(|k| k.checked_sub(1))
        .is_some_and(|k| listed(&DATE_PREPOSITIONS, &hunk[k].word));
    if opened_by_preposition {
        &content[..start]
    } else {
        content
    }
}

/// `content` without a closing span of time: "since", "until" or "till"
/// and then only times ("`since 2015`", "`until March`").
pub(super) fn without_time_span<'c, 't>(
    content: &'c [&'t Token],
    lexicon: &Lexicon,
) -> &'c [&'t Token] {
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
/// ("Denver, `Colorado`"), or the role it is held in ("Chrome `as their
/// browser`"). Those tell more about the value; the slot is the name's.
/// Anything else is returned whole.
pub(super) fn value_before_its_details<'c, 't>(
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
    // "as" is left out of the prepositions elsewhere: before a noun it
    // often is the predicate itself ("works `as` a nurse").
    let heads_a_phrase = after.is_some_and(|t| is_preposition(&t.word) || t.word == "as");
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

/// Prepositions that name one relation in other words: where or when
/// ("in" / "on" / "at": "lying `on` a bed" / "`in` bed", "`at` the beach"
/// / "`on` the beach", "running `in` the snow" / "`through` the snow"), a
/// direction ("to" / "towards"), a source ("jumping `off` a dock" /
/// "`from` a dock"), a span ("`between` 1993 and 2002" / "`from` 1993 to
/// 2002"), nearness ("by" / "near"), a topic ("a fight `about` music" /
/// "`over` music").
pub(super) const ONE_RELATION: [&str; 6] = [
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
pub(super) fn other_relations(x: &[&Token], y: &[&Token]) -> Option<(String, String)> {
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
        |p: &str, q: &str| p == q || ONE_RELATION.iter().any(|r| listed(*r, p) && listed(*r, q));
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
pub(super) static POSSESSIVE_VERBS: WordClass = WordClass::new("possessive_verbs");

/// Adverbs that may stand between an auxiliary and its participle ("has
/// `already` won"), besides those in "-ly" and negations.
pub(super) static MID_ADVERBS: WordClass = WordClass::new("mid_adverbs");

/// Whether `hunk`, a run of `sentence`'s tokens, has a form of "have"
/// as its verb: past any adverb, followed by neither a participle, "been"
/// nor "to" ("`has` a bike", not "`has` recently sold").
pub(super) fn has_as_verb(hunk: &[&Token], sentence: &[Token]) -> bool {
    hunk.iter().any(|t| {
        listed(&POSSESSIVE_VERBS, &t.word)
            && sentence
                .iter()
                .position(|s| std::ptr::eq(s, *t))
                .and_then(|k| {
                    sentence[k + 1..].iter().find(|n| {
                        n.role != Role::Negation
                            && !n.word.ends_with("ly")
                            && !listed(&MID_ADVERBS, &n.word)
                    })
                })
                .is_none_or(|n| !n.info.inflected_verb && !listed("been to", &n.word))
    })
}

/// Whether `sentence` has a form of "have" as a verb of its own
/// ([`has_as_verb`]).
pub(super) fn has_as_its_verb(sentence: &[Token]) -> bool {
    has_as_verb(&sentence.iter().collect::<Vec<_>>(), sentence)
}

/// Whether `sentence` has "have" as its verb ([`has_as_verb`]) and no
/// other: every other content word with a verb sense follows a
/// determiner ("The user has `a` meeting").
pub(super) fn only_verb_is_have(sentence: &[Token]) -> bool {
    has_as_its_verb(sentence)
        && sentence.iter().enumerate().all(|(k, t)| {
            listed(&POSSESSIVE_VERBS, &t.word)
                || !t.is_content()
                || !t.info.is_verb()
                || after_determiner(sentence, k)
        })
}

/// Whether a side has a form of "have" of its own.
pub(super) fn possessive(side: &[&Token]) -> bool {
    side.iter().any(|t| listed(&POSSESSIVE_VERBS, &t.word))
}

/// A verb form of going or being somewhere ("`visited` Tokyo", "`lives`
/// in Berlin"), as a denied "been to" denies it.
pub(super) fn verb_of_presence(t: &Token, lexicon: &Lexicon) -> bool {
    t.info.inflected_verb && lexicon.means_presence(&t.info)
}

/// A verb whose first sense is a sense of "have" ("owns", "features")
/// says what a "has" says.
pub(super) fn means_have(t: &Token, lexicon: &Lexicon) -> bool {
    lexicon.first_means(&t.info, HAVE)
}

/// A finite verb among `content` that says something else than "have"
/// ("`rents` a car", "`sold` his bike"; not "owns", nor a kind of having:
/// "possesses").
pub(super) fn verb_besides_having<'t>(
    content: &[&'t Token],
    lexicon: &Lexicon,
) -> Option<&'t Token> {
    let have = lexicon.word(HAVE);
    content.iter().copied().find(|t| {
        t.info.inflected_verb
            && !lexicon.related(t.pair(), (HAVE, &have))
            && !means_have(t, lexicon)
    })
}

/// An adjective right after a copula in `hunk`: what the subject is ("is
/// `allergic` to cats", "is `proud` of"), another predicate than having.
pub(super) fn predicate_adjective<'t>(hunk: &[&'t Token]) -> Option<&'t Token> {
    hunk.windows(2)
        .find(|pair| {
            let word = pair[1];
            listed(&COPULAS, &pair[0].word)
                && word.is_content()
                && !word.info.is_noun()
                && word.info.modifies()
        })
        .map(|pair| pair[1])
}

/// How many words `side` has, a run of names written together counted
/// as one ("New York").
pub(super) fn words_with_names_as_one(side: &[&Token]) -> usize {
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
/// "New York", "Goldman Sachs"), a title with its name ("Mr. Patel") and a
/// name with its initials ("Fontaines D.C."). Not initials alone ("U.S.",
/// "J. K."): their letters name nothing a word could be compared with.
/// With the number of words it takes.
pub(super) fn one_name<'t>(
    side: &[&'t Token],
    lexicon: &Lexicon,
) -> Option<(Cow<'t, Token>, usize)> {
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
    let adjacent = names
        .windows(2)
        .all(|w| written_together(w[0], w[1]) || titled(w[0], w[1]));
    let initial = |t: &&Token| t.word.chars().count() == 1;
    if !adjacent || names.iter().all(initial) {
        return None;
    }
    let word = words_of(names);
    let name = Token {
        opens_sentence: names[0].opens_sentence,
        money: false,
        info: lexicon.word(&word),
        role: Role::Name,
        span: (names[0].span.0, names[run - 1].span.1),
        word,
    };
    Some((Cow::Owned(name), run))
}

/// Whether `name` follows the title `title` with only its full stop
/// between ("Mr. Patel", "Dr. Kim"): one name, the title kept, since "Mr.
/// Patel" and "Mrs. Patel" are two people.
fn titled(title: &Token, name: &Token) -> bool {
    name.span.0 <= title.span.1 + 2 && listed(&TITLES, &title.word)
}

/// What two different names both are, when they can fill one slot: values
/// of one lexicon class, words of one WordNet class ("Monday" /
/// "Tuesday"), or two one-word proper names WordNet does not know that
/// are not spellings of one name ("Muqtada" / "Moqtada", "Tim" /
/// "Timothy"); after a copula or a relation held with one value at a time
/// (`predicate`: "married to `Tom`"), any two names that are not spellings
/// of one, full names too.
pub(super) fn name_slot(
    p: &Token,
    q: &Token,
    predicate: bool,
    lexicon: &Lexicon,
) -> Option<String> {
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
pub(super) fn spelling_variants(a: &str, b: &str) -> bool {
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
pub(super) fn same_values(x: &[String], y: &[String]) -> bool {
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

/// Whether `t` is a noun a number right before it may count or measure in
/// ("2000 `people`", "90 `miles`").
pub(super) fn counting_noun(t: &Token) -> bool {
    t.role == Role::Content && t.info.is_noun() && !t.info.inflected_verb
}

/// Whether the numbers of two hunks count the same thing the same way: an
/// ordinal ranks ("their `third` straight week") where a cardinal counts
/// ("`three` straight weeks"), and a number beside another unit measures
/// in it ("90 `miles`" / "150 `kilometres`"). `unit_after`: the hunks
/// are followed by a noun their last numbers count in ("2000 `dollars`").
pub(super) fn counts_alike<'t>(
    x: &[&'t Token],
    y: &[&'t Token],
    unit_after: bool,
    lexicon: &Lexicon,
) -> bool {
    // Which ways a hunk's numbers count: cardinal, ordinal, how often, or
    // not at all: a year dates ("by September `2006`") where "`70` seats"
    // or "$54.9 `million`" count, unless a unit follows it ("2000 people")
    // or a currency sign comes before it ("$2000"), and a time of day
    // tells the hour ("at `3:30 p.m.`").
    let ways = |side: &[&Token]| -> [bool; 5] {
        let ordinal = |word: &str| ordinal_rank(word).is_some();
        let often = |word: &str| occasions(word).is_some();
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
                    opens_sentence: false,
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
pub(super) fn compound_value<'t>(
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
        kind: ConflictKind::Value,
        detail: format!(
            "`{}` ↔ `{}` (each part differs: {}; {})",
            words_of(x),
            words_of(y),
            words.detail,
            numbers.detail
        ),
        negated_side: None,
        denied: None,
        rule: "",
    })
}

/// One slot holding two different values: both sides of a short hunk name
/// a number, a name or a class member, and they differ. With the words of
/// each side the value takes (a full name all of its own).
pub(super) fn different_value<'t>(
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
    let ordinals = |side: &[&Token]| side.iter().any(|t| ordinal_rank(&t.word).is_some());
    let occasions = place.among_possessions && ordinals(x) && ordinals(y);
    if !place.after_bound
        && !occasions
        && !numbers.0.is_empty()
        && !numbers.1.is_empty()
        && !same_values(&numbers.0, &numbers.1)
        && counts_alike(x, y, place.before_noun, lexicon)
    {
        let clock_times = numbers.0.iter().chain(&numbers.1).any(|v| v.contains(':'));
        return Some((
            Conflict::opposed(
                ConflictKind::Value,
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
    // possessor is no value ("is `Sarah`'s manager"), nor is a party to
    // what is done ("works with `Laura`" / "… with `Cindy`"), unless a
    // single-valued relation or a time takes it ("works for", "due by
    // `Friday`"), nor a time that recurs ("on `Tuesdays`" / "on
    // `Thursdays`": a habit on both).
    if let Some((p, q, words)) = names
        && !place.possessor
        && (!place.party || place.single_valued || names_time(&p, lexicon))
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
                ConflictKind::Value,
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
            Conflict::opposed(ConflictKind::Value, &words_of(x), &words_of(y), "roles"),
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
                ConflictKind::Value,
                &p.word,
                &q.word,
                &format!("both a kind of {class}"),
            ),
            [1, 1],
        ));
    }
    // What a copula assigns to a kind of thing is one thing of that kind
    // ("favorite sport is tennis" / "… is golf"), however far below it the
    // two lie in WordNet. One's favorite is one value at a time though
    // WordNet files neither under the kind ("favorite food is sushi" / "…
    // is ramen"; a hobby is often a gerund: "knitting" / "woodworking").
    // Not where one is a kind of the other ("pasta" / "spaghetti").
    if let ([p], [q]) = (x, y)
        && let Some(kind) = place.kind_assigned
        && p.role == Role::Content
        && q.role == Role::Content
        && !lexicon.related(p.pair(), q.pair())
    {
        let under_kind = |t: &Token| !t.info.inflected_verb && lexicon.is_a(&t.info, &kind.info);
        // A value, not an adjective that describes the favorite ("favorite
        // cafe is small" / "… is cozy").
        let favorite_value =
            |t: &Token| (!t.info.inflected_verb || t.word.ends_with("ing")) && !t.info.modifies();
        let why = if under_kind(p) && under_kind(q) {
            Some(format!("both a kind of {}", kind.word))
        } else if place.one_favorite && favorite_value(p) && favorite_value(q) {
            Some(format!("one favorite {}", kind.word))
        } else {
            None
        };
        if let Some(why) = why {
            return Some((
                Conflict::opposed(ConflictKind::Value, &p.word, &q.word, &why),
                [1, 1],
            ));
        }
    }
    None
}
