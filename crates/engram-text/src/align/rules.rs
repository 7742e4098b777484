//! The rules that say what one hunk is, in the order they apply.
//!
//! A hunk is a run of unaligned words on each side between aligned ones
//! ([`Hunk`]); [`Place`] says where it sits. [`RULES`] lists the rules in
//! the order [`classify`] reads a hunk with them. A rule passes (`None`),
//! notes what later rules leave standing (another relation, a negation
//! that bears on nothing shared) and lets them read on, or decides the
//! hunk, and no later rule reads it. [`Outcome::apply`] is the one place
//! that writes an outcome into the [`Comparison`], which keeps the names
//! of the rules that said something: the verdict lists them, and a
//! contradiction's reasons name the rule of each conflict.
//!
//! Each rule's test cases are data: `tests/cases/rules.tsv`, a pair with
//! the verdict and the rule that must decide it.

use super::*;
use super::{changes::*, classify::*, place::Place, tokens::*};

/// A named rule over one hunk.
pub(super) struct Rule {
    /// Named in the verdict and in a conflict's reasons.
    pub(super) name: &'static str,
    pub(super) read: fn(&Hunk<'_>, &Place<'_>, &Lexicon) -> Option<Outcome>,
}

/// The rules, in the order they read a hunk: the first to decide it wins.
pub(super) static RULES: [Rule; 12] = [
    Rule {
        name: "two_deictic_times",
        read: two_deictic_times,
    },
    Rule {
        name: "one_number_two_spellings",
        read: one_number_two_spellings,
    },
    Rule {
        name: "universal_quantifiers",
        read: universal_quantifiers,
    },
    Rule {
        name: "change_restates_verb",
        read: change_restates_verb,
    },
    Rule {
        name: "antonyms",
        read: antonyms,
    },
    Rule {
        name: "other_relation",
        read: other_relation,
    },
    Rule {
        name: "negation",
        read: negation,
    },
    Rule {
        name: "function_words_only",
        read: function_words_only,
    },
    Rule {
        name: "class_values",
        read: class_values,
    },
    Rule {
        name: "one_side_only",
        read: one_side_only,
    },
    Rule {
        name: "value_in_one_slot",
        read: value_in_one_slot,
    },
    Rule {
        name: "word_by_word",
        read: word_by_word,
    },
];

/// One hunk, as the rules read it.
pub(super) struct Hunk<'h> {
    /// The first text's words of the hunk.
    pub(super) x: &'h [&'h Token],
    /// The second text's.
    pub(super) y: &'h [&'h Token],
    /// Their content words.
    pub(super) cx: Vec<&'h Token>,
    pub(super) cy: Vec<&'h Token>,
    /// The aligned content word after the hunk, else the nearest before it:
    /// the predicate a negation in the hunk bears on.
    pub(super) next: Option<&'h Token>,
    /// Per side, the aligned names a name opening the hunk goes on from
    /// ("Sarah `Connor`").
    pub(super) names_before: [&'h [&'h Token]; 2],
    /// Negations per side.
    pub(super) negations: [usize; 2],
}

impl<'h> Hunk<'h> {
    pub(super) fn new(
        x: &'h [&'h Token],
        y: &'h [&'h Token],
        next: Option<&'h Token>,
        names_before: [&'h [&'h Token]; 2],
    ) -> Self {
        let negations = |side: &[&Token]| side.iter().filter(|t| t.role == Role::Negation).count();
        Hunk {
            x,
            y,
            cx: content(x),
            cy: content(y),
            next,
            names_before,
            negations: [negations(x), negations(y)],
        }
    }
}

/// What a rule says of a hunk: the counts and findings it adds to the
/// comparison.
#[derive(Debug, Default)]
pub(super) struct Outcome {
    /// No later rule reads the hunk.
    decides: bool,
    conflict: Option<Conflict>,
    /// Content words per side that are details or substitutions.
    extra: [usize; 2],
    /// Content words said in other words on the other side.
    synonymous: usize,
    /// Content words aligned with what replaced them (a pronoun).
    aligned: usize,
    /// Words paired with a more specific word on the other side, and the
    /// pairs, `(first side's, second side's)`.
    generalisations: usize,
    generalised: Vec<(String, String)>,
    /// Per side, the details that are such specific words.
    specifics: [usize; 2],
    substitution: Option<(String, String)>,
    relation: Option<(String, String)>,
    class_changes: Vec<(String, String, String)>,
    negation_differs: bool,
    /// For an antonym: whether it is the predicate itself
    /// ([`Comparison`]'s `opposed_predicate`).
    opposed_predicate: Option<[usize; 2]>,
}

impl Outcome {
    /// An outcome that ends the reading of the hunk.
    fn decided() -> Self {
        Outcome {
            decides: true,
            ..Outcome::default()
        }
    }

    /// Whether it adds nothing to the comparison.
    fn says_nothing(&self) -> bool {
        self.conflict.is_none()
            && self.extra == [0, 0]
            && self.synonymous == 0
            && self.aligned == 0
            && self.generalisations == 0
            && self.generalised.is_empty()
            && self.specifics == [0, 0]
            && self.substitution.is_none()
            && self.relation.is_none()
            && self.class_changes.is_empty()
            && !self.negation_differs
    }

    /// Writes the outcome of rule `rule` into `comparison`.
    fn apply(self, rule: &'static str, comparison: &mut Comparison) {
        if self.says_nothing() {
            return;
        }
        comparison.heard(rule);
        for side in 0..2 {
            comparison.extra[side] += self.extra[side];
            comparison.specifics[side] += self.specifics[side];
        }
        comparison.synonymous += self.synonymous;
        comparison.aligned += self.aligned;
        comparison.generalisations += self.generalisations;
        // A hunk may be read again as part of a clause.
        for pair in self.generalised {
            if !comparison.generalised.contains(&pair) {
                comparison.generalised.push(pair);
            }
        }
        comparison.substitutions.extend(self.substitution);
        comparison.relations.extend(self.relation);
        comparison.class_changes.extend(self.class_changes);
        comparison.negation_differs |= self.negation_differs;
        if let Some(conflict) = self.conflict {
            // The last antonym read says whether the predicate is opposed.
            if conflict.kind == ConflictKind::Antonym {
                comparison.opposed_predicate = self.opposed_predicate;
            }
            comparison.add_conflict(conflict.found_by(rule));
        }
    }
}

/// Reads `hunk` with each of [`RULES`] in turn until one decides it.
pub(super) fn classify(
    hunk: &Hunk<'_>,
    place: &Place<'_>,
    lexicon: &Lexicon,
    comparison: &mut Comparison,
) {
    for rule in &RULES {
        if let Some(outcome) = (rule.read)(hunk, place, lexicon) {
            let decides = outcome.decides;
            outcome.apply(rule.name, comparison);
            if decides {
                return;
            }
        }
    }
}

/// Two deictic modifiers of one time name two times, whatever else the
/// texts share: they speak of different occasions.
///
/// "We met `last` year" / "We met `this` year".
fn two_deictic_times(hunk: &Hunk<'_>, place: &Place<'_>, _: &Lexicon) -> Option<Outcome> {
    let deictic = |side: &[&Token]| {
        !side.is_empty()
            && side.iter().all(|t| {
                listed(&TIME_DEICTICS, t.word.as_str()) || listed(&ARTICLES, t.word.as_str())
            })
            && side.iter().any(|t| listed(&TIME_DEICTICS, t.word.as_str()))
    };
    let (x, y) = (hunk.x, hunk.y);
    (place.before_time && deictic(x) && deictic(y) && words_of(x) != words_of(y)).then(|| Outcome {
        extra: [hunk.cx.len(), hunk.cy.len()],
        substitution: Some((words_of(x), words_of(y))),
        ..Outcome::decided()
    })
}

/// One number spelled in words on one side and in digits on the other is
/// the same value. Two numbers in digits with one value are two things
/// ("1990" / "1990s").
///
/// "She is `twenty-eight`" / "She is `28`".
fn one_number_two_spellings(hunk: &Hunk<'_>, _: &Place<'_>, _: &Lexicon) -> Option<Outcome> {
    let only_numbers = |side: &[&Token]| side.iter().all(|t| t.role == Role::Number);
    let spelled = |side: &[&Token]| side.iter().any(|t| spelled_number(&t.word).is_some());
    let (cx, cy) = (&hunk.cx, &hunk.cy);
    (!cx.is_empty()
        && !cy.is_empty()
        && only_numbers(cx)
        && only_numbers(cy)
        && (spelled(cx) || spelled(cy))
        && number_values(cx) == number_values(cy))
    .then(|| Outcome {
        synonymous: 1,
        ..Outcome::decided()
    })
}

/// Words of one closed class that mean the same say one fact in other
/// words.
///
/// "on `every` flight" / "on `all` flights".
fn universal_quantifiers(hunk: &Hunk<'_>, _: &Place<'_>, _: &Lexicon) -> Option<Outcome> {
    let universal = |side: &[&Token]| {
        !side.is_empty() && side.iter().all(|t| listed(&UNIVERSAL_QUANTIFIERS, &t.word))
    };
    (universal(hunk.x) && universal(hunk.y)).then(|| Outcome {
        synonymous: 1,
        ..Outcome::decided()
    })
}

/// A change verb with its "to" against the other side's verb in the
/// present, before what both go on to, where the shared article splits
/// the verb from the value: the change restates the relation, as it does
/// in one hunk with the value, and says more, so the older verb is its
/// general word. A merge would lose that it changed (or, merged the other
/// way, the older verb), so the two stay apart when the values agree.
///
/// "`uses` a MacBook" / "`switched to` a ThinkPad".
fn change_restates_verb(hunk: &Hunk<'_>, _: &Place<'_>, lexicon: &Lexicon) -> Option<Outcome> {
    hunk.next?;
    let present_verb = |t: &Token| t.role == Role::Content && t.info.is_verb() && !past_form(t);
    [(0, hunk.x, &hunk.cy), (1, hunk.y, &hunk.cx)]
        .into_iter()
        .find_map(|(side, changing, stating)| {
            let changed = content(changing);
            let ([change], [verb]) = (changed.as_slice(), stating.as_slice()) else {
                return None;
            };
            let restated = present_verb(verb)
                && changing.last().is_some_and(|t| t.word == "to")
                && change_verbs(changing, lexicon).next().is_some();
            let (general, specific) = (verb.word.clone(), change.word.clone());
            restated.then(|| Outcome {
                generalisations: 1,
                generalised: vec![if side == 1 {
                    (general, specific)
                } else {
                    (specific, general)
                }],
                ..Outcome::decided()
            })
        })
}

/// Opposed words, when they are what the hunk is about: at most one other
/// content word a side. Antonyms come before negations ("always" /
/// "never" is an antonym, not a negation).
///
/// "The door is `open`" / "The door is `closed`".
///
/// Opposed words about different things are two facts ("lives `near` the
/// sea" / "lives `far` from her parents"), and a negated antonym states
/// the same ("is `not open`" / "is `closed`").
fn antonyms<'h>(hunk: &Hunk<'h>, place: &Place<'_>, lexicon: &Lexicon) -> Option<Outcome> {
    let (x, y, cx, cy, next) = (hunk.x, hunk.y, &hunk.cx, &hunk.cy, hunk.next);
    let (p, q) = antonym_in(x, y, next, *place, lexicon)?;
    let others = |side: &[&'h Token], phrase: &str| -> Vec<&'h Token> {
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
    let (wx, wy) = (others(cx, &p), others(cy, &q));
    let (ox, oy) = (wx.len(), wy.len());
    // A verb beside its particle is one phrase ("taking `off`" / "putting
    // `on`"): no thing.
    let thing = |t: &Token| {
        t.role == Role::Name
            || (t.role == Role::Content && t.info.is_noun() && !t.word.ends_with("ing"))
    };
    if let ([t], [o]) = (wx.as_slice(), wy.as_slice())
        && thing(t)
        && thing(o)
        && !lexicon.related(t.pair(), o.pair())
    {
        return Some(Outcome {
            extra: [cx.len(), cy.len()],
            substitution: Some((words_of(cx), words_of(cy))),
            ..Outcome::decided()
        });
    }
    // Opening both sides and followed by their predicate ("`no woman`
    // playing" / "`a man` is playing"), the hunk is a subject too; an
    // imperative's verb ("`Enable` two-factor …") is not.
    let opening_subject = place.at_start == [true, true]
        && next.is_some_and(|t| t.info.inflected_verb || t.word.ends_with("ing"));
    if ox > 1 || oy > 1 || place.subject || opening_subject {
        return None;
    }
    // The antonym may be a negation phrase itself: "`still`" / "`no
    // longer`" (WordNet's adverbs).
    let negations_besides = |side: &[&Token], phrase: &str| {
        side.iter()
            .filter(|t| {
                t.role == Role::Negation
                    && t.word != phrase
                    && !phrase.split(' ').any(|w| w == t.word)
            })
            .count()
    };
    if negations_besides(x, &p) % 2 != negations_besides(y, &q) % 2 {
        // The two sides agree here, though in other words: neither a
        // conflict nor a merge.
        return Some(Outcome {
            extra: [ox, oy],
            synonymous: 1,
            negation_differs: true,
            ..Outcome::decided()
        });
    }
    // Beside the bare antonym, a complement that only names who or where
    // ("married to `Ana`", "employed at `Acme`") leaves the predicate
    // whole; a common noun narrows it ("unhappy with her `job`", "short of
    // `money`") or is what the antonym qualifies ("a new `employee`").
    let only_names = wx.iter().chain(&wy).all(|t| t.role == Role::Name);
    Some(Outcome {
        extra: [ox, oy],
        opposed_predicate: ((ox == 0 || oy == 0) && only_names).then_some([ox, oy]),
        conflict: Some(Conflict::opposed(ConflictKind::Antonym, &p, &q, "antonyms")),
        ..Outcome::decided()
    })
}

/// Another preposition relates the shared words another way: noted, and
/// the hunk read on.
///
/// "flew `to` Paris" / "flew `from` Paris".
fn other_relation(hunk: &Hunk<'_>, _: &Place<'_>, _: &Lexicon) -> Option<Outcome> {
    other_relations(hunk.x, hunk.y).map(|relation| Outcome {
        relation: Some(relation),
        ..Outcome::default()
    })
}

/// A negation on one side only, bearing on the aligned words, denies what
/// the other side states: a conflict. Bearing on no shared word, it is
/// noted and the hunk read on.
///
/// "The man is `not` cutting a tomato" / "The man is slicing a tomato".
fn negation(hunk: &Hunk<'_>, place: &Place<'_>, lexicon: &Lexicon) -> Option<Outcome> {
    let [nx, ny] = hunk.negations;
    if nx == ny {
        return None;
    }
    let (x, y, cx, cy, next) = (hunk.x, hunk.y, &hunk.cx, &hunk.cy, hunk.next);
    let (side, negating, other, other_content) = if nx > ny {
        (0, x, y, cy)
    } else {
        (1, y, x, cx)
    };
    let negation = negating
        .iter()
        .find(|t| t.role == Role::Negation)
        .map_or("", |t| t.word.as_str());
    // A denied presence ("was not `at` the meeting", "has never been `to`
    // Japan") denies a verb of being or going there ("attended",
    // "visited"), not another relation to the place ("organised the
    // meeting", "loves Japan").
    let presence = negating.iter().any(|t| listed(&COPULAS, &t.word))
        && negating.iter().any(|t| is_preposition(&t.word))
        && !other.iter().any(|t| is_preposition(&t.word));
    // A place within the denied one is in it, where both sides speak of
    // being there ("has never been to `Japan`" / "visited `Tokyo`"; not
    // "loves Tokyo").
    let there = place.locative
        || (negating.iter().any(|t| listed(&LOCATIVES, &t.word))
            && other_content.iter().any(|o| verb_of_presence(o, lexicon)));
    let names = |t: &Token, o: &Token| {
        lexicon.synonyms(t.pair(), o.pair())
            || lexicon.is_a(&o.info, &t.info)
            || (there && lexicon.within(&o.info, &t.info))
    };
    // The negating side's words that name what the other side says, in
    // the same or more general terms ("no `woman`" / "a lady"; "does not
    // `own`" / "has"), are the denied argument, not a fact of its own: a
    // general denial denies every specific case.
    let negating_content = content(negating);
    // What an exception is taken from is no fact of its own: "all `fruit`
    // except bananas" denies the bananas the other text has.
    let excepted_from = |t: &Token| {
        negation == "except"
            && next.is_some_and(|n| listed(&QUANTIFIERS, &t.word) || lexicon.is_a(&n.info, &t.info))
    };
    let own_content = negating_content
        .iter()
        .filter(|t| {
            let names_other = other_content.iter().any(|o| names(t, o));
            let says_has = possessive(other) && means_have(t, lexicon);
            !names_other && !says_has && !excepted_from(t)
        })
        .count();
    let pronoun = listed(&NEGATIVE_PRONOUNS, negation);
    // The negation must bear on aligned words: a negated clause of its own
    // ("when there are no tournaments") is a detail, not a denial. Inside
    // the subject only a leading determiner denies ("`No` dog is
    // running"); "a man with `no` shirt" is another referent.
    let denies = !place.subject || place.at_start[side];
    // A denied possession ("has `no` car") does not deny another verb of
    // the thing ("`rents` a car"), only a synonym ("owns a car").
    let possession = possessive(negating) && !negating.iter().any(|t| t.word == "been");
    let other_relation = presence
        && other_content
            .iter()
            .any(|t| t.info.inflected_verb && !lexicon.means_presence(&t.info));
    let other_predicate =
        other_relation || (possession && verb_besides_having(other_content, lexicon).is_some());
    if !denies || own_content > 0 || other_predicate || (pronoun && other_content.len() > 2) {
        return Some(Outcome {
            negation_differs: true,
            ..Outcome::default()
        });
    }
    // The other side's words the denial names are the denied argument the
    // two share ("a `car`" / "not … a `vehicle`"; "`visited`" / "has never
    // been to"), not details.
    let named = other_content
        .iter()
        .filter(|o| {
            negating_content.iter().any(|t| names(t, o))
                || (presence && verb_of_presence(o, lexicon))
        })
        .count();
    let quantifier = other.iter().find(|t| listed(&QUANTIFIERS, t.word.as_str()));
    // What is denied: the word the negation stands before in the hunk ("is
    // not `cutting`" / "is slicing", "does not `have`"), or the aligned
    // word after the hunk.
    let scope = negating
        .iter()
        .rposition(|t| t.role == Role::Negation)
        .map_or(&[][..], |k| &negating[k + 1..]);
    let shown = scope
        .iter()
        .find(|t| !listed(&ARTICLES, &t.word))
        .filter(|t| t.is_content() || listed(&POSSESSIVE_VERBS, &t.word))
        .or_else(|| {
            scope
                .iter()
                .find(|t| t.is_content() && other_content.iter().any(|o| names(t, o)))
        })
        .copied()
        .or(place.negated_word[side])
        .or(next);
    let target = match (pronoun, shown) {
        (true, _) | (_, None) => String::new(),
        (false, Some(shown)) => format!(" `{}`", shown.word),
    };
    let which = if side == 0 { "first" } else { "second" };
    let conflict = match quantifier {
        Some(q) => Conflict {
            kind: ConflictKind::Quantifier,
            detail: format!("`{}` ↔ `{negation}` (quantifiers)", q.word),
            negated_side: Some(side),
            denied: None,
            rule: "",
        },
        None => Conflict {
            kind: ConflictKind::Negation,
            detail: format!("`{negation}` negates{target} in the {which} only"),
            negated_side: Some(side),
            denied: next.filter(|_| !pronoun).map(|t| t.word.clone()),
            rule: "",
        },
    };
    let mut outcome = Outcome {
        conflict: Some(conflict),
        ..Outcome::decided()
    };
    // What a pronoun replaced is the denied argument, aligned with it
    // ("`Nobody` is typing" / "`Someone` is typing on a keyboard"), not a
    // detail.
    if !pronoun {
        outcome.extra[1 - side] = other_content.len() - named;
        outcome.generalisations = named;
    } else if !other_content.is_empty() {
        outcome.aligned = 1;
    }
    Some(outcome)
}

/// A hunk of function words only says nothing.
///
/// "The cat is on `the` mat" / "The cat is on `a` mat".
fn function_words_only(hunk: &Hunk<'_>, _: &Place<'_>, _: &Lexicon) -> Option<Outcome> {
    (hunk.cx.is_empty() && hunk.cy.is_empty()).then(Outcome::decided)
}

/// Names of different values of one lexicon class fill one slot: noted for
/// a stated change, and the hunk read on. A value added beside another
/// changes no slot, whatever change word dates it ("now `also` uses
/// Rust").
///
/// "The team uses `Postgres`" / "The team now uses `MySQL`".
fn class_values(hunk: &Hunk<'_>, place: &Place<'_>, lexicon: &Lexicon) -> Option<Outcome> {
    if place.additive {
        return None;
    }
    let mut class_changes = Vec::new();
    for p in &hunk.cx {
        for q in &hunk.cy {
            let (vp, vq) = (lexicon.canonical(&p.word), lexicon.canonical(&q.word));
            if p.role == Role::Name
                && q.role == Role::Name
                && vp != vq
                && let (Some(class), Some(other)) =
                    (lexicon.class_of(&p.word), lexicon.class_of(&q.word))
                && class == other
            {
                class_changes.push((class.to_owned(), vp.to_owned(), vq.to_owned()));
            }
        }
    }
    Some(Outcome {
        class_changes,
        ..Outcome::default()
    })
}

/// Content words on one side only are its details. Having a thing and
/// doing something with it are two predicates, though "has" is no
/// content word, and so are having it and what befell it, or being
/// something toward it: a substitution.
///
/// "Sam `has` a bike" / "Sam `sold` his bike"; "`has` a cat" / "`is
/// allergic` to cats".
fn one_side_only(hunk: &Hunk<'_>, place: &Place<'_>, lexicon: &Lexicon) -> Option<Outcome> {
    let (x, y, cx, cy) = (hunk.x, hunk.y, &hunk.cx, &hunk.cy);
    if !cx.is_empty() && !cy.is_empty() {
        return None;
    }
    let mut outcome = Outcome {
        extra: [cx.len(), cy.len()],
        ..Outcome::decided()
    };
    let (having, doing) = if cx.is_empty() { (0, cy) } else { (1, cx) };
    if (place.has[having] || (place.owns[having] && !place.has_anywhere[1 - having]))
        && let Some(verb) =
            verb_besides_having(doing, lexicon).or_else(|| predicate_adjective([x, y][1 - having]))
    {
        let has = [x, y][having]
            .iter()
            .find(|t| listed(&POSSESSIVE_VERBS, &t.word))
            .map_or(HAVE, |t| t.word.as_str());
        outcome.substitution = Some(if having == 0 {
            (has.to_owned(), verb.word.clone())
        } else {
            (verb.word.clone(), has.to_owned())
        });
    }
    Some(outcome)
}

/// One slot, two values: a value and at most one other word a side, that
/// differ ("5 minutes" / "20 minutes" aligns the unit; a name of several
/// words is one value). Not in a subject, beside an added value, of an
/// indefinite referent, under a wish, or negated on one side ("is `not
/// red`" / "is `blue`": another fact).
///
/// "The car is `red`" / "The car is `blue`"; "lives in `New York`" /
/// "moved to `Boston`".
fn value_in_one_slot(hunk: &Hunk<'_>, place: &Place<'_>, lexicon: &Lexicon) -> Option<Outcome> {
    if place.subject
        || place.additive
        || place.of_an_indefinite
        || place.wished
        || hunk.negations[0] != hunk.negations[1]
    {
        return None;
    }
    let (x, y, cx, cy) = (hunk.x, hunk.y, &hunk.cx, &hunk.cy);
    // A time the value has held since or until ("in Berlin `since 2015`")
    // dates it and leaves the slot to the value. The change words that
    // date it ("is `now` blue") and the "years old" that restates what
    // the other side's bare number is are no details of their own.
    let (dated_x, dated_y) = (
        without_change_words(cx, lexicon),
        without_change_words(cy, lexicon),
    );
    let (undated_x, undated_y) = (
        without_closing_date(dated_x, x, y, lexicon),
        without_closing_date(dated_y, y, x, lexicon),
    );
    let (valued_x, valued_y) = (
        value_before_its_details(without_time_span(undated_x, lexicon), x, lexicon),
        value_before_its_details(without_time_span(undated_y, lexicon), y, lexicon),
    );
    let (vx, vy) = (
        without_age_unit(valued_x, valued_y, lexicon),
        without_age_unit(valued_y, valued_x, lexicon),
    );
    // A change verb before a value ("`switched to` Firefox") says it took
    // the place of another: against a verb the other side states now with
    // the value as its object ("uses Chrome"), the two values fill one
    // slot. Not a past verb ("visited Chicago" / "moved to Boston"), one
    // of feeling ("likes Chrome": one may still), nor one through a
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
        ..*place
    };
    if words_with_names_as_one(vx) > 2 || words_with_names_as_one(vy) > 2 {
        return None;
    }
    let (conflict, words) = compound_value(vx, vy, place, lexicon)
        .map(|c| (c, [2, 2]))
        .or_else(|| different_value(vx, vy, hunk.names_before, place, lexicon))?;
    let mut extra = [
        vx.len().saturating_sub(words[0]),
        vy.len().saturating_sub(words[1]),
    ];
    // A change verb before the new value ("`switched to` Vim", "`moved to`
    // London") says the other side's relation holds it now: it restates
    // that side's verb ("uses", "lives in") or copula ("is on"), and
    // neither is a detail of its own. What dates or follows the value is
    // ("moved to London `with her family`").
    let restated = |changing: &[&Token], side: usize| {
        extra[side] == 1
            && (extra[1 - side] == 0
                || [cx, cy][1 - side]
                    .iter()
                    .any(|t| t.role == Role::Content && t.info.is_verb()))
            && change_verbs(changing, lexicon).next().is_some()
    };
    let mut synonymous = 0;
    if restated(x, 0) || restated(y, 1) {
        extra = [0, 0];
        synonymous = 1;
    }
    Some(Outcome {
        extra: [
            extra[0] + (dated_x.len() - valued_x.len()),
            extra[1] + (dated_y.len() - valued_y.len()),
        ],
        synonymous,
        conflict: Some(conflict),
        ..Outcome::decided()
    })
}

/// Each content word pairs off with a synonym on the other side, or is
/// the general word of a more specific one there (the specific side keeps
/// it as a detail), or is left: a substitution where both sides have such
/// words, else a detail. Reads every hunk no other rule decided.
///
/// "A `person` is playing" / "A `man` is playing" (a more general word);
/// "Ana `lives` in Rome" / "Ana `works` in Rome" (a substitution).
fn word_by_word(hunk: &Hunk<'_>, place: &Place<'_>, lexicon: &Lexicon) -> Option<Outcome> {
    let mut outcome = Outcome::decided();
    let mut left: [Vec<String>; 2] = Default::default();
    // A place is the general word of a place within it ("Germany" /
    // "Berlin") where the texts speak of being there.
    let within =
        |part: &Token, whole: &Token| place.locative && lexicon.within(&part.info, &whole.info);
    for (side, (mine, theirs)) in [(&hunk.cx, &hunk.cy), (&hunk.cy, &hunk.cx)]
        .into_iter()
        .enumerate()
    {
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
                    outcome.synonymous += 1;
                }
                continue;
            }
            // A verb defined as this one with more said ("prefers": "like
            // better") states it: the other side's detail, no general word.
            if theirs
                .iter()
                .any(|o| lexicon.is_a(&o.info, &t.info) && lexicon.says_more_than(&o.info, &t.info))
            {
                if side == 0 {
                    outcome.synonymous += 1;
                }
                continue;
            }
            // An owner's more specific noun before the same value says
            // what the general one says ("Leo's `vehicle` is a Volvo" /
            // "Leo's `car` is …"): the specific side keeps it as a detail.
            if place.owners_noun && theirs.iter().any(|o| lexicon.is_a(&o.info, &t.info)) {
                outcome.synonymous += 1;
                continue;
            }
            if let Some(specific) = theirs
                .iter()
                .find(|o| lexicon.is_a(&o.info, &t.info) || within(o, t))
            {
                outcome.generalisations += 1;
                let (general, specific) = (t.word.clone(), specific.word.clone());
                outcome.generalised.push(if side == 0 {
                    (general, specific)
                } else {
                    (specific, general)
                });
                continue;
            }
            if theirs
                .iter()
                .any(|o| lexicon.is_a(&t.info, &o.info) || within(t, o))
            {
                outcome.specifics[side] += 1;
            }
            left[side].push(t.word.clone());
        }
    }
    let [ux, uy] = left;
    outcome.extra = [ux.len(), uy.len()];
    if !ux.is_empty() && !uy.is_empty() {
        outcome.substitution = Some((ux.join(" "), uy.join(" ")));
    }
    Some(outcome)
}
