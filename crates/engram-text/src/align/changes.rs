//! Changes a text states: a state entered ("became", "got married"), a
//! presence or an activity ended ("left Google", "quit smoking", "used
//! to"), a value changed ("switched to", "moved to").

use super::frame::*;
use super::*;

/// Where `tokens` enter a state in the past that holds now: a
/// [`CHANGE_COPULAS`] right before an adjective or a participle ("User
/// `got` married"; not "got `a` job", "got up", nor "never got married").
pub(super) fn became(tokens: &[Token]) -> Option<usize> {
    (1..tokens.len().saturating_sub(1)).find(|&k| {
        let state = &tokens[k + 1];
        listed(&CHANGE_COPULAS, &tokens[k].word)
            && state.role == Role::Content
            && (!plain_noun(state) || state.info.modifies())
            // "got up", "grew up": a verb with its particle.
            && !listed(&PARTICLES, &state.word)
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
pub(super) fn entered_opposite(
    tokens: &[Token],
    other: &[Token],
    lexicon: &Lexicon,
) -> Option<usize> {
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

/// `text` without the value a change it states started from, where
/// `other` states that value and not the new one: "switched `from Jira` to
/// Linear" / "uses Jira" reads "switched to Linear", the new value against
/// the old, as a change that leaves its source unsaid does. Kept, the
/// source aligns with the other's value and leaves the two verbs as the
/// only difference, two facts. A change marker's verb in the past, right
/// before "from" ("moved from Berlin to Munich", "migrated from"), not one
/// under way ("is moving from") nor denied or wished ("wants to switch").
pub(super) fn without_change_source<'t>(
    text: &'t [Token],
    other: &[Token],
    lexicon: &Lexicon,
) -> Cow<'t, [Token]> {
    let stated_by_other = |t: &Token| states(other, t);
    let source = (1..text.len().saturating_sub(3)).find_map(|at| {
        let verb = &text[at];
        // The cheap tests first: this runs on every pair a cycle compares.
        if text[at + 1].word != "from"
            || verb.role != Role::Content
            || !past_form(verb)
            || governed(text, at)
            || !lexicon.is_change_verb(&verb.info)
        {
            return None;
        }
        let clause = &text[at + 2..];
        let to = clause
            .iter()
            .take_while(|t| !listed(&CLAUSE_BREAKS, &t.word))
            .position(|t| t.word == "to")?;
        let (from, to_new) = (&clause[..to], &clause[to + 1..]);
        let new_value = to_new
            .iter()
            .take_while(|t| !listed(&CLAUSE_BREAKS, &t.word) && !is_preposition(&t.word));
        let source_words = || from.iter().filter(|t| t.is_content());
        let left = source_words().next().is_some() && source_words().all(stated_by_other);
        let new = new_value
            .filter(|t| t.is_content())
            .any(|t| !stated_by_other(t));
        (left && new).then_some((at + 1, at + 2 + to))
    });
    match source {
        Some((from, to)) => without_range(text, from..to),
        None => Cow::Borrowed(text),
    }
}

/// `text` without the date that closes a change it states ("moved to
/// Seattle `last month`", "`in May`", "`two weeks ago`", "`yesterday`"),
/// where `other` names no time, and how many content words the date had.
/// The date says when the value changed, not what it is; kept, its "in"
/// aligns with the other's "lives `in` Boston", or it joins the new value,
/// and the value fills no slot. The caller counts those words as this
/// side's details, so a merge still keeps them. Not a change denied or
/// wished ([`governed`]), nor one under way ("is moving").
pub(super) fn without_change_date<'t>(
    text: &'t [Token],
    other: &[Token],
    lexicon: &Lexicon,
) -> (Cow<'t, [Token]>, usize) {
    let unchanged = (Cow::Borrowed(text), 0);
    let dating = |t: &Token| word_of_date(t, lexicon) || listed(&ARTICLES, &t.word);
    let start = text.len() - text.iter().rev().take_while(|t| dating(t)).count();
    let date = &text[start..];
    if !date.iter().any(|t| names_time(t, lexicon)) || other.iter().any(|t| names_time(t, lexicon))
    {
        return unchanged;
    }
    let Some(verb) =
        change_verb_positions(text, lexicon).find(|&k| k < start && !governed(text, k))
    else {
        return unchanged;
    };
    // A bare date is one only after a time word of its own: "in May",
    // "last month", "two weeks ago", "yesterday"; not "turned 5".
    let opened = |k: usize| {
        let first = &text[k];
        listed(&TIME_DEICTICS, &first.word)
            || (names_time(first, lexicon) && first.role != Role::Number)
            || date.last().is_some_and(|t| t.word == "ago")
    };
    // The new value stays: the change needs a content word of its own
    // between its verb and the date. A number may be that value and not
    // the date's ("turned `30` last week").
    let keeps_a_value = |k: usize| {
        text[verb + 1..k]
            .iter()
            .any(|t| t.is_content() && !names_time(t, lexicon))
    };
    let start = match start.checked_sub(1) {
        Some(k) if listed(&DATE_PREPOSITIONS, &text[k].word) => {
            Some(k).filter(|&k| keeps_a_value(k))
        }
        _ => (start..text.len()).find(|&k| opened(k) && keeps_a_value(k)),
    };
    let Some(start) = start else {
        return unchanged;
    };
    let dated = text[start..].iter().filter(|t| t.is_content()).count();
    (without_range(text, start..text.len()), dated)
}

/// `side` with the copula of becoming it enters a state by ([`became`])
/// read as a copula: a function word, as "is" is, so "got married" /
/// "is single" leaves no detail beside the two states.
pub(super) fn as_copula(side: Cow<'_, [Token]>, became: Option<usize>) -> Cow<'_, [Token]> {
    match became {
        Some(at) => {
            let mut side = side.into_owned();
            side[at].role = Role::Function;
            Cow::Owned(side)
        }
        None => side,
    }
}

/// Where `text` ends the activity `other` states, and in how many words:
/// a verb of its own that WordNet knows as ending an activity ("stopped",
/// "quit", "gave up"), right before a gerund of a verb `other` states
/// ("Sam `quit` smoking" / "Sam smokes", "Sam is smoking"; not "Sam
/// enjoys smoking"). Not a verb that is only wanted, possible or denied
/// ("wants to quit", "might stop", "never stopped"), nor one in progress
/// ("is quitting").
pub(super) fn ending(text: &[Token], other: &[Token], lexicon: &Lexicon) -> Option<Ending> {
    let stated_by_other = |gerund: &Token| {
        gerund.word.ends_with("ing")
            && gerund.info.inflected_verb
            && other.iter().enumerate().any(|(k, o)| {
                let progressive = o.word == gerund.word
                    && k.checked_sub(1)
                        .is_some_and(|p| listed(&COPULAS, &other[p].word));
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
        .or_else(|| giving_up(text, other, lexicon))
}

/// Where a text ends what the other states ([`ending`]), read as a denial
/// of it.
#[derive(Debug, Clone)]
pub(super) struct Ending {
    /// The first of its words.
    pub(super) at: usize,
    /// How many words it replaces.
    pub(super) len: usize,
    /// How many of those, from `at`, are the denial itself ("gave up",
    /// "left"; not "his job at" in "quit his job at").
    pub(super) denial: usize,
    /// What the other text states that the denial restates after it
    /// ("left Stripe" denies "works `at`" Stripe).
    pub(super) restates: Vec<Token>,
}

impl Ending {
    /// Whether it leaves what the other text places ([`leaving`]).
    pub(super) fn leaves(&self) -> bool {
        !self.restates.is_empty()
    }

    /// Words that are all the denial ("quit", "gave up", "used to").
    pub(super) fn of_words(at: usize, len: usize) -> Self {
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
pub(super) static PRESENCE_PREPOSITIONS: WordClass = WordClass::new("presence_prepositions");

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
pub(super) fn leaving(text: &[Token], other: &[Token], lexicon: &Lexicon) -> Option<Ending> {
    let presences = presences(other);
    if presences.is_empty() {
        return None;
    }
    (1..text.len()).find_map(|at| {
        if !stated_past(text, at) {
            return None;
        }
        let verb = &text[at];
        // With its particle: "dropped out of" MIT, "gave away" a piano.
        let phrasal = |ends: &dyn Fn(&str) -> bool| particle_meaning(text, at, ends);
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
            let quits =
                particle.is_none() && presence.preposition.is_some() && lexicon.quits(&verb.info);
            presence
                .ended_at(text, object, other, quits, lexicon)
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

/// Whether the word at `at` is a past verb that `text` states of its
/// subject: not after a copula (a passive, "was left"), nor only wanted,
/// possible or denied ([`governed`]).
fn stated_past(text: &[Token], at: usize) -> bool {
    let verb = &text[at];
    let subject = &text[at - 1];
    let past = (verb.info.inflected_verb && past_form(verb))
        || (!verb.info.inflected_verb && takes_third_person_s(subject));
    verb.role == Role::Content && past && !listed(&COPULAS, &subject.word) && !governed(text, at)
}

/// The particle right after the verb at `at` with which one of the verb's
/// lemmas makes a phrasal verb that `means` says what it should ("gave
/// `away`", "dropped `out`").
fn particle_meaning<'t>(
    text: &'t [Token],
    at: usize,
    means: &dyn Fn(&str) -> bool,
) -> Option<&'t Token> {
    text.get(at + 1).filter(|t| {
        listed(&PARTICLES, &t.word)
            && text[at]
                .info
                .lemmas
                .iter()
                .any(|l| means(&format!("{l} {}", t.word)))
    })
}

/// What a text states it is at or has now ([`presences`]).
pub(super) struct Presence {
    /// Its verb: "works", "is", "has".
    pub(super) verb: usize,
    /// The preposition that places it ("at"); none for what it has.
    pub(super) preposition: Option<usize>,
    /// What it places or has.
    pub(super) object: std::ops::Range<usize>,
}

impl Presence {
    /// Where the words of `text` from `object` on name the whole of what
    /// this presence in `other` places or has, if they do: past "his job
    /// at" (a noun for its verb, then its preposition: "quit `his job at`
    /// Stripe"). A named place or employer left for good ends living or
    /// working there; leaving for a while ("for a week", "for lunch"), at
    /// some hour ("early") or an unnamed place ("left the hospital after
    /// her shift") is a day's event, but quitting one (`quits`: "quit the
    /// bakery", "resigned from the hospital") is not. Leaving ends being
    /// somewhere ("is at the office") however it reads, and parting ends
    /// having one's own thing.
    pub(super) fn ended_at(
        &self,
        text: &[Token],
        object: usize,
        other: &[Token],
        quits: bool,
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
                    listed(&DETERMINERS, &text[d].word)
                        && !listed(&INDEFINITE_ARTICLES, &text[d].word)
                })
        };
        let for_good = || {
            (self.preposition.is_none() && own())
                || listed(&COPULAS, &verb.word)
                || ((quits || placed.first().is_some_and(|t| t.role == Role::Name))
                    && only_dated(&rest[placed.len()..], lexicon))
        };
        (whole && for_good()).then_some(start)
    }
}

/// Whether `t` is a word a date is written with: a time ("May",
/// "month"), a number, a word placing it relative to now ("last") or
/// "ago".
fn word_of_date(t: &Token, lexicon: &Lexicon) -> bool {
    names_time(t, lexicon)
        || t.role == Role::Number
        || listed(&TIME_DEICTICS, &t.word)
        || t.word == "ago"
}

/// Whether the rest of a clause after what it says says only when: times,
/// numbers and function words ("last year", "in 2019", "two years ago"),
/// that it is for good ("for good", "forever"), or a named place it went
/// to ("for Paris"); up to the next clause.
pub(super) fn only_dated(rest: &[Token], lexicon: &Lexicon) -> bool {
    let clause = rest
        .iter()
        .take_while(|t| !listed(&CLAUSE_BREAKS, &t.word) && t.word != "then");
    let mut after_for = false;
    for t in clause {
        if listed(&PERMANENCE, &t.word) && (after_for || t.word != "good") {
            after_for = false;
            continue;
        }
        if after_for && !listed(&DETERMINERS, &t.word) {
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
        let dates = !t.is_content() || word_of_date(t, lexicon);
        if !dates && t.role != Role::Name {
            return false;
        }
    }
    !after_for
}

/// Where the words from `from` on go on past their determiners ("`the`
/// office", "`his` job"), not past a possessive's "s" or a "no".
pub(super) fn past_determiners(tokens: &[Token], from: usize) -> usize {
    from + tokens
        .get(from..)
        .unwrap_or_default()
        .iter()
        .take_while(|t| t.word != "s" && t.word != "no" && listed(&DETERMINERS, &t.word))
        .count()
}

/// Where `other` states a presence now: a present copula or a verb in
/// the present ("is", "works", "lives"; "is working") with a
/// [`PRESENCE_PREPOSITIONS`] right after it, or a present "has" or
/// "owns"; then, after any determiner, a name, or a noun with the nouns
/// that compound with it ("the coffee shop").
pub(super) fn presences(other: &[Token]) -> Vec<Presence> {
    (1..other.len().saturating_sub(1))
        .filter_map(|v| {
            let verb = &other[v];
            let present = stated_now(other, v);
            let has = verb.word == "has"
                || (verb.word == "have" && listed(&PLAIN_VERB_SUBJECTS, &other[v - 1].word))
                || (present && verb.info.lemmas.iter().any(|l| l == "own"));
            let preposition = if has {
                None
            } else if present && listed(&PRESENCE_PREPOSITIONS, &other[v + 1].word) {
                Some(v + 1)
            } else {
                return None;
            };
            let start = past_determiners(other, preposition.map_or(v + 1, |p| p + 1));
            let len = object_len(other, start, preposition.is_some() || start > v + 1)?;
            Some(Presence {
                verb: v,
                preposition,
                object: start..start + len,
            })
        })
        .collect()
}

/// Whether the word at `v` of `other` is a present copula or a verb in the
/// present ("is", "works", "lives"; "is working"; "they work").
fn stated_now(other: &[Token], v: usize) -> bool {
    let verb = &other[v];
    listed("is are am", &verb.word)
        || (verb.role == Role::Content
            && verb.info.is_verb()
            && !past_form(verb)
            && ((verb.info.inflected_verb && verb.word.ends_with('s'))
                || (verb.word.ends_with("ing") && listed("is are am", &other[v - 1].word))
                || listed(&PLAIN_VERB_SUBJECTS, &other[v - 1].word)))
}

/// How many words from `start` name a thing: a name, or a noun with the
/// nouns that compound with it ("the coffee shop"). A past form right after
/// the verb is no object (`placed` false: "has lived").
fn object_len(other: &[Token], start: usize, placed: bool) -> Option<usize> {
    let first = other.get(start)?;
    match first.role {
        Role::Name => Some(
            other[start..]
                .iter()
                .take_while(|t| t.role == Role::Name)
                .count(),
        ),
        Role::Content if placed || !past_form(first) => Some(
            1 + other[start + 1..]
                .iter()
                .take_while(|t| plain_noun(t))
                .count(),
        ),
        _ => None,
    }
}

/// What `other` states it does with a thing now: a present verb other than
/// a copula or having ([`presences`] has those), then, after any
/// determiner, the thing ([`object_len`]): "plays `the violin`", "uses
/// `Facebook`". As (the verb, the thing).
fn doings(other: &[Token]) -> Vec<(usize, std::ops::Range<usize>)> {
    (1..other.len().saturating_sub(1))
        .filter_map(|v| {
            let verb = &other[v];
            let having = listed("has have", &verb.word)
                || verb.info.lemmas.iter().any(|l| listed("be have own", l));
            if verb.role != Role::Content || having || !stated_now(other, v) {
                return None;
            }
            let start = past_determiners(other, v + 1);
            let thing = other.get(start)?;
            if thing.role != Role::Name && !plain_noun(thing) {
                return None;
            }
            let len = object_len(other, start, start > v + 1)?;
            Some((v, start..start + len))
        })
        .collect()
}

/// Where `text` gives up what `other` does with a thing ([`doings`]), read
/// as a denial that restates the other's verb: a past verb whose most
/// frequent sense is ending an activity ([`Lexicon::mainly_ends_activity`])
/// or a phrasal verb whose particle gives it that sense, with the whole of
/// the thing for its object and nothing after it but a date ("User `gave
/// up` the violin" / "User plays the violin", "`quit` Facebook last year" /
/// "uses Facebook"); or handing one's own thing over, which ends doing
/// anything with it ("`sold` his Honda" / "drives a Honda"; a dealer
/// "sold a Honda", and losing may be a game's: "lost the game"); or
/// parting from someone by a phrasal verb of ending a relation ("`broke up
/// with` Alex" / "is dating Alex"). Not "stopped the car", which halted
/// it, nor a giving up only wanted or denied.
fn giving_up(text: &[Token], other: &[Token], lexicon: &Lexicon) -> Option<Ending> {
    let doings = doings(other);
    if doings.is_empty() {
        return None;
    }
    (1..text.len()).find_map(|at| {
        if !stated_past(text, at) {
            return None;
        }
        let verb = &text[at];
        let with_particle =
            |means: &dyn Fn(&str) -> bool| particle_meaning(text, at, means).is_some();
        let (ends, parts, separates) = (
            with_particle(&|p| lexicon.phrase_ends_activity(p)),
            with_particle(&|p| lexicon.phrase_hands_over(p)),
            with_particle(&|p| lexicon.phrase_separates(p)),
        );
        let denial = 1 + usize::from(ends || parts || separates);
        // Parting from someone: "broke up `with` Alex".
        let from = at
            + denial
            + usize::from(separates && text.get(at + denial).is_some_and(|t| t.word == "with"));
        let object = past_determiners(text, from).min(text.len());
        // One's own thing: after "his" or "the", or a name without "a"
        // ("sold cars" is a trade).
        let own = || {
            let determiners = &text[at + denial..object];
            !determiners
                .iter()
                .any(|t| listed(&INDEFINITE_ARTICLES, &t.word))
                && (!determiners.is_empty()
                    || text.get(object).is_some_and(|t| t.role == Role::Name))
        };
        let ends_doing = if denial == 2 {
            ends || (separates
                && from > at + denial
                && text.get(object).is_some_and(|t| t.role == Role::Name))
        } else {
            lexicon.mainly_ends_activity(&verb.info)
        };
        let hands_over = own()
            && if denial == 2 {
                parts
            } else {
                lexicon.hands_over(&verb.info)
            };
        if !ends_doing && !hands_over {
            return None;
        }
        let rest = &text[object..];
        doings.iter().find_map(|(v, thing)| {
            // Handing over one thing ends doing something with that one,
            // not with a kind ("sold his truck" / "drives trucks").
            let one_thing = thing.start > v + 1 || other[thing.start].role == Role::Name;
            let thing = &other[thing.clone()];
            let whole = (ends_doing || one_thing)
                && rest.len() >= thing.len()
                && rest.iter().zip(thing).all(|(x, y)| x.shares_lemma(y))
                && only_dated(&rest[thing.len()..], lexicon);
            whole.then(|| Ending {
                at,
                len: from - at,
                denial,
                restates: vec![other[*v].clone()],
            })
        })
    })
}

/// Whether the verb at `at` is only wanted, possible or denied: a
/// negation, "to" or a modal in the two words before it.
pub(super) fn governed(text: &[Token], at: usize) -> bool {
    text[at.saturating_sub(2)..at]
        .iter()
        .any(|t| t.role == Role::Negation || t.word == "to" || modal_or_future(&t.word))
}

/// Words before "used to" that make it being accustomed ("is used to
/// it", "got used to waking") or a passive ("was used to cut").
pub(super) static USED_AS_ADJECTIVE_AFTER: WordClass = WordClass::new("used_as_adjective_after");

/// Where `text` says that what `other` states now is over, and in how
/// many words: "used to" right before the bare verb of a present one in
/// `other` ("Lisa `used to` live in Madrid" / "Lisa lives in Madrid",
/// "used to be a teacher" / "is a teacher", "used to have" / "has"), an
/// ending like "quit". Not a past statement ("lived"), nor being
/// accustomed or a passive ("is used to waking", "was used to cut").
pub(super) fn used_to(text: &[Token], other: &[Token]) -> Option<(usize, usize)> {
    let at = (1..text.len().saturating_sub(2)).find(|&k| {
        text[k].word == "used"
            && text[k + 1].word == "to"
            && written_together(&text[k], &text[k + 1])
            && written_together(&text[k + 1], &text[k + 2])
    })?;
    let before = &text[at - 1].word;
    if listed(&AUXILIARIES, before)
        || listed(&USED_AS_ADJECTIVE_AFTER, before)
        || governed(text, at)
    {
        return None;
    }
    let verb = &text[at + 2];
    let bare = !verb.info.inflected_verb && (listed("be have", &verb.word) || verb.info.is_verb());
    let after_plain_subject = |k: usize| {
        k.checked_sub(1)
            .is_some_and(|p| listed(&PLAIN_VERB_SUBJECTS, &other[p].word))
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

/// `side` with its [`Ending`] as one negation, then what it restates.
pub(super) fn as_denial<'t>(side: Cow<'t, [Token]>, end: Option<&Ending>) -> Cow<'t, [Token]> {
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
        opens_sentence: side[at].opens_sentence,
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
pub(super) fn past_change(tokens: &[Token], other: &[Token], lexicon: &Lexicon) -> bool {
    change_verbs(tokens, lexicon).any(|verb| !other.iter().any(|o| o.shares_lemma(verb)))
}

/// The past verbs of `tokens` that open a change marker ("`switched` to",
/// "was `moved` to").
pub(super) fn change_verbs<'t, T: std::borrow::Borrow<Token>>(
    tokens: &'t [T],
    lexicon: &'t Lexicon,
) -> impl Iterator<Item = &'t Token> + 't {
    change_verb_positions(tokens, lexicon).map(|k| tokens[k].borrow())
}

/// Where [`change_verbs`] stand in `tokens`.
pub(super) fn change_verb_positions<'t, T: std::borrow::Borrow<Token>>(
    tokens: &'t [T],
    lexicon: &'t Lexicon,
) -> impl Iterator<Item = usize> + 't {
    (0..tokens.len()).filter(move |&k| {
        let verb = tokens[k].borrow();
        verb.info.inflected_verb
            && past_form(verb)
            && lexicon
                .opens_with_change_marker(tokens[k..].iter().map(|t| t.borrow().word.as_str()))
    })
}

/// The [`Frame`] of a text that ends an activity at `at`: the state that
/// follows, now ("quit smoking", "has stopped eating meat"), or then after
/// a past auxiliary ("had quit smoking").
pub(super) fn ending_frame(tokens: &[Token], at: usize) -> Frame {
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
