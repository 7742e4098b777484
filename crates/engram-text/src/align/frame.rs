//! When and how a text places what it says: its tense, and the words
//! that frame it as a wish, a plan, a duty or a possibility.

use super::*;

/// The tense an auxiliary or copula carries; none for a modal other than
/// "will" and "shall" ("won't" is "wo" before its "n't").
pub(super) fn auxiliary_tense(word: &str) -> Option<Tense> {
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
pub(super) fn frame(tokens: &[Token]) -> Option<Frame> {
    for (k, t) in tokens.iter().enumerate() {
        let auxiliary = if negated_auxiliary(t) {
            Some(negated_base(t))
        } else {
            written_as(&FINITE_AUXILIARIES, t).then_some(t.word.as_str())
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
                                || (listed(&BARE_VERB_AUXILIARIES, auxiliary)
                                    && verb.info.is_verb())
                        })
                        .unwrap_or(k),
                ),
            });
        }
        let verb = t.is_content()
            && (t.info.inflected_verb || unchanged_past(tokens, k))
            && !after_determiner(tokens, k);
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

/// Verbs of doing whose past is spelled as their base ("read", "put",
/// "beat"): WordNet lists no inflection for them.
static UNCHANGED_PASTS: WordClass = WordClass::new("unchanged_pasts");

/// Personal pronouns that can be a clause's subject.
static SUBJECT_PRONOUNS: WordClass = WordClass::new("subject_pronouns");

/// Whether token `k` is a verb [spelled as its own past](UNCHANGED_PASTS)
/// right after a subject: a name, a pronoun or a noun ("The user `read`
/// Dune", "Arsenal `beat` Chelsea"), not a noun after a determiner ("a
/// `set` of keys") or another verb ("wants to `read`").
fn unchanged_past(tokens: &[Token], k: usize) -> bool {
    let t = &tokens[k];
    let subject = |s: &Token| {
        s.role == Role::Name
            || listed(&SUBJECT_PRONOUNS, &s.word)
            || (s.is_content() && s.info.is_noun() && !s.info.is_verb())
    };
    listed(&UNCHANGED_PASTS, &t.word)
        && t.info.is_verb()
        && k.checked_sub(1).is_some_and(|p| subject(&tokens[p]))
}

/// Modal auxiliaries: what they govern is possible, wanted or owed, not
/// stated.
pub(super) static MODALS: WordClass = WordClass::new("modals");

/// A modal, or an auxiliary of the future or of ability ("will", "can").
pub(super) fn modal_or_future(word: &str) -> bool {
    listed(&MODALS, word) || listed("will can shall", word)
}

/// Whether words of `text` that `other` lacks change what the shared words
/// say, rather than add to it: a modal ("Kai `might` get a new job"), an
/// obligation ("Kai `has to` work"), a verb of its own governing a shared
/// one ("Carl `wants to` quit", "Lisa `used to` live" / "Lisa lived",
/// "Jill `stopped` eating"), but not "go" before an activity ("`goes`
/// running"), or one of the lexicon's framing words
/// ("Sam `believes` the earth is flat", "`If` it rains").
pub(super) fn reframes(text: &[Token], other: &[Token], lexicon: &Lexicon) -> bool {
    let shared = |t: &Token| t.is_content() && states(other, t);
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
            && ((listed(&MODALS, t.word.as_str()) && !other_modal) || only_possible);
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
                if listed(&OBJECT_PRONOUNS, &n.word) && after.is_some_and(|a| a.word == "to") =>
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
        // Not a framing word the other text opposes: against "often",
        // "seldom" is the fact in dispute, no hedge on it.
        let framing = t.role != Role::Name
            && lexicon.is_framing(&t.word, &t.info)
            && !other.iter().any(|o| {
                o.word == t.word
                    || o.shares_lemma(t)
                    || lexicon.wordnet_antonyms(&t.info, &o.info)
                    || lexicon.antonym_across(&t.word, &o.word).is_some()
            });
        // A hedge or a frame bears on its own sentence: "Sam moved to
        // Paris last week. `Hope` the weather is good" states the move.
        ((modal || framing) && sentence_of(text, k).iter().any(&shared)) || governs || obligation
    })
}

/// The sentence word `k` of `text` stands in ([`Token::opens_sentence`]).
fn sentence_of(text: &[Token], k: usize) -> &[Token] {
    let start = (0..=k).rev().find(|&j| text[j].opens_sentence).unwrap_or(0);
    let end = (k + 1..text.len())
        .find(|&j| text[j].opens_sentence)
        .unwrap_or(text.len());
    &text[start..end]
}

/// Whether word `k` of `text` opens an obligation, a modal in three words:
/// "`has to` work".
pub(super) fn obliged(text: &[Token], k: usize) -> bool {
    listed("has have", &text[k].word)
        && text
            .get(k + 1)
            .is_some_and(|n| n.word == "to" && written_together(&text[k], n))
}
