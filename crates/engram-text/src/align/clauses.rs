//! Clauses and statements: where a text's predicates start, what one
//! denies, and the statement an exception or a passive restates.

use super::*;
use super::{compare::*, tokens::*};

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
            Some(if listed(&NEGATIVE_PRONOUNS, &negation) {
                Denial::Pronoun
            } else if of_existence {
                Denial::Existence
            } else {
                Denial::Negation
            })
        })
        .max()
        .unwrap_or_else(|| {
            if lexicon.change_marker_in(&words).is_some() || ends_something(&words, lexicon) {
                Denial::Change
            } else {
                Denial::None
            }
        })
}

/// Whether `words` have a verb in the past that WordNet knows as leaving,
/// ending an activity or parting with a thing ("left Google", "stopped
/// smoking", "sold the car"), or that does a verb again ("rewrote",
/// "rebuilt"): a change stated by its verb, which the model scores as low
/// against the state it ends as a change marker's text.
fn ends_something(words: &[String], lexicon: &Lexicon) -> bool {
    words.iter().any(|w| {
        let word = lexicon.word(w);
        past_spelling(w, &word)
            && (lexicon.leaves(&word)
                || lexicon.ends_activity(&word)
                || lexicon.parts_with(&word)
                || redone(&word, lexicon))
    })
}

/// Whether `verb` is another verb done again: a lemma "re" + a verb that
/// WordNet has as a kind of that verb ("rewrite", "rebuild"; not "return",
/// "report").
pub(super) fn redone(verb: &Word, lexicon: &Lexicon) -> bool {
    verb.is_verb()
        && verb.lemmas.iter().any(|lemma| {
            lemma.strip_prefix("re").is_some_and(|rest| {
                let done = lexicon.word(rest);
                rest.len() > 2 && done.is_verb() && lexicon.is_a(verb, &done)
            })
        })
}

/// How a text denies, in the order of how far it lowers the similarity
/// the model gives it against the statement it denies.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Denial {
    #[default]
    None,
    /// A stated change ("moved to London", "now uses Vim", "left Google")
    /// denies the value it replaces in other words than the statement it
    /// changes ("lives in Paris").
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

/// A cheap bound before aligning: whether `a` and `b` share enough
/// content lemmas that their alignment could be a contradiction. A conflict
/// replaces at most a few words a side; the more specific side may add up
/// to half its words. Without a shared lemma, a word of one naming a kind
/// of the other's ("I have a `car`" / "I do not have a `vehicle`") is the
/// shared thing, looked up only then.
pub fn may_conflict(a: &[Token], b: &[Token], lexicon: &Lexicon) -> bool {
    if too_long(a, b) {
        return false;
    }
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
        if k <= start || !listed(&CONJUNCTIONS, tokens[k].word.as_str()) {
            continue;
        }
        // A short subject of its own, then a finite auxiliary: "and `the
        // sun is` setting", not "and running her business `to be` …".
        let own_clause = tokens
            .iter()
            .enumerate()
            .skip(k + 2)
            .take(4)
            .take_while(|(_, t)| !listed(&CONJUNCTIONS, t.word.as_str()))
            .any(|(_, t)| finite(t));
        // And a predicate before it, in the same clause: not "a big brown
        // `and` white dog is …", nor "said that he `and` his film are …".
        let before = &tokens[start..k];
        let own_start = before
            .iter()
            .rposition(|t| listed(&CLAUSE_BREAKS, t.word.as_str()))
            .map_or(0, |p| p + 1);
        // A name is no predicate, however WordNet may read it: "Computer
        // `Associates`, EMC and Veritas are …" is one subject.
        let clause = &before[own_start..];
        let predicate_at = clause
            .iter()
            .enumerate()
            .position(|(n, t)| {
                finite(t)
                    || (t.info.inflected_verb && t.role != Role::Name)
                    // A bare past right after a one-word subject: "Sam
                    // `quit` his job and started a company".
                    || (n == 1
                        && t.role == Role::Content
                        && t.info.is_verb()
                        && takes_third_person_s(&clause[0]))
            })
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
        let opening = k
            + 1
            + tokens[k + 1..]
                .iter()
                .take_while(|t| listed(&CONJUNCT_ADVERBS, t.word.as_str()))
                .count();
        let Some(first) = tokens.get(opening) else {
            continue;
        };
        let conjunct_content = tokens[k + 1..]
            .iter()
            .take_while(|t| !listed(&CONJUNCTIONS, t.word.as_str()))
            .filter(|t| t.is_content())
            .count();
        let tense_end = (predicate_at..k)
            .find(|&p| {
                !written_as(&FINITE_AUXILIARIES, &tokens[p])
                    && !listed(&COPULAS, tokens[p].word.as_str())
            })
            .unwrap_or(k);
        let copular = tokens[predicate_at..tense_end]
            .iter()
            .any(|t| listed(&COPULAS, t.word.as_str()));
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
    if too_long(a, b) {
        return None;
    }
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

/// The token order that puts the first passive clause ("[subject] is
/// (being) [participle] … by [agent]") in active order: agent, auxiliaries,
/// participle, subject, the rest. `None` when there is no such clause.
pub(super) fn active_order(tokens: &[Token]) -> Option<Vec<usize>> {
    let by = tokens.iter().position(|t| t.word == "by")?;
    let auxiliary = |t: &Token| {
        listed(&COPULAS, t.word.as_str())
            || written_as(&FINITE_AUXILIARIES, t)
            || (t.role == Role::Negation && t.word == "not")
            || negated_auxiliary(t)
    };
    // A form of "be", negated or not: "has peeled" is active.
    let be = |t: &Token| {
        listed(&COPULAS, t.word.as_str())
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
        .any(|t| written_as(&FINITE_AUXILIARIES, t) || negated_auxiliary(t))
    {
        return None;
    }
    // The subject starts after a clause break or a verb in the past that
    // reports it ("said | the marriage was not set up by force").
    let clause_start = tokens[..first_auxiliary]
        .iter()
        .rposition(|t| {
            listed(&CLAUSE_BREAKS, t.word.as_str())
                || (t.info.inflected_verb && !t.word.ends_with('s') && !t.word.ends_with("ing"))
        })
        .map_or(0, |k| k + 1);
    let agent_end = (by + 1..tokens.len())
        .find(|&k| listed(&CLAUSE_BREAKS, tokens[k].word.as_str()))
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
