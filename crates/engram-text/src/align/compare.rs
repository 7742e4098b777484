//! Two texts compared: each read as one statement, aligned ([`walk`]),
//! each hunk placed ([`Around`]) and read with the hunk rules
//! ([`super::rules`]), then the rules over the whole texts (sides traded,
//! another doer).

use super::*;
use super::{changes::*, classify::*, frame::*, place::*, walk::*};

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

/// The longest text, in words, the rules read. A fact is a sentence or
/// a few; a longer text is a document that no one reading of its words
/// states, and the model that chose the pair has read only its first 256
/// tokens. Aligning costs the product of the two lengths: two texts of
/// 32 KiB took 3 s and 160 MiB.
pub const MAX_COMPARED_WORDS: usize = 256;

/// Whether `a` or `b` is longer than the rules read ([`MAX_COMPARED_WORDS`]).
pub fn too_long(a: &[Token], b: &[Token]) -> bool {
    a.len().max(b.len()) > MAX_COMPARED_WORDS
}

/// Aligns `a` with `b` (weighted longest common subsequence: content words
/// count double, so they anchor the alignment) and classifies every hunk.
///
/// Where shared words trade places, the alignment can pair them one way
/// read from `a` and another read from `b` ("Someone is falling `off` a
/// ladder" / "A ladder is falling `on` someone"). A verdict must not depend
/// on which text is older, so a reading that would contradict or merge is
/// read again the other way round, and stands only where both agree
/// (`Comparison::settle_with`).
pub fn compare(a: &[Token], b: &[Token], lexicon: &Lexicon) -> Comparison {
    if let Some(unread) = Comparison::unread(a, b) {
        return unread;
    }
    let mut forward = compare_in_order(a, b, lexicon);
    if forward.contradicts() || !forward.never_merged() {
        forward.settle_with(&compare_in_order(b, a, lexicon));
    }
    forward
}

/// [`compare`], reading `a` first only.
fn compare_in_order(a: &[Token], b: &[Token], lexicon: &Lexicon) -> Comparison {
    let (a, b) = (join_compounds(a, b), join_compounds(b, a));
    let (a, b) = (
        without_change_source(&a, &b, lexicon),
        without_change_source(&b, &a, lexicon),
    );
    let (a, b) = (
        without_rejected_alternative(&a, &b),
        without_rejected_alternative(&b, &a),
    );
    let ((a, dated_a), (b, dated_b)) = (
        without_change_date(&a, &b, lexicon),
        without_change_date(&b, &a, lexicon),
    );
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
            a.iter().filter(|t| t.is_content()).count() + dated_a,
            b.iter().filter(|t| t.is_content()).count() + dated_b,
        ],
        ..Comparison::default()
    };
    let Walk {
        aligned_words,
        aligned_in_second,
        hunks,
        content_aligned,
        graded,
    } = walk(a, b);
    comparison.aligned += content_aligned;
    comparison.substitutions.extend(graded);
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
        // The main verbs aligned, or neither aligned with anything: the
        // same fact in other words at another time ("`worked` at a bakery"
        // / "`is` employed at a bakery", "`has` a Volvo" / "'s car `was` a
        // Volvo").
        let aligned = |side: &[&Token], verb: &Token| side.iter().any(|t| std::ptr::eq(*t, verb));
        comparison.retensed = x.apart(y)
            && !lexicon.tells(&a[p].info)
            && (aligned_words
                .iter()
                .zip(&aligned_in_second)
                .any(|(s, t)| std::ptr::eq(*s, &a[p]) && std::ptr::eq(*t, &b[q]))
                || (!aligned(&aligned_words, &a[p]) && !aligned(&aligned_in_second, &b[q])));
    }
    // The subject is what comes before the first auxiliary or copula ("A
    // man | is slicing"), or before a negation that stands right before it
    // and so denies the predicate ("The user | no longer has a dog"); when
    // both sides have one, a hunk before it on both names another
    // referent, not another value.
    let first_auxiliary = |tokens: &[Token]| {
        let auxiliary = |t: &Token| written_as(&AUXILIARIES, t);
        tokens.iter().enumerate().position(|(k, t)| {
            auxiliary(t)
                || negated_auxiliary(t)
                || (t.role == Role::Negation && tokens.get(k + 1).is_some_and(auxiliary))
        })
    };
    let subject_ends = [first_auxiliary(a), first_auxiliary(b)];
    let additive = adds_a_value(a) || adds_a_value(b);
    // Under a denial "or" joins what is denied ("no man `or` dog").
    let undenied = !a.iter().chain(b).any(|t| t.role == Role::Negation);
    // Where a subject narrows ([`narrows`]), it ends at the first
    // auxiliary, or else at the finite verb ("The user's brother | lives in
    // Boston").
    let subject_bounds =
        [0, 1].map(|side| subject_ends[side].or(comparison.frames[side].and_then(|f| f.at)));
    for Unaligned { x, y, before, end } in &hunks {
        let next = aligned_words[*before..]
            .iter()
            .chain(aligned_words[..*before].iter().rev())
            .find(|t| t.is_content())
            .copied();
        let (hunk_x, hunk_y) = (x.as_slice(), y.as_slice());
        let around = Around {
            texts: [a, b],
            aligned: [&aligned_words, &aligned_in_second],
            hunks: [hunk_x, hunk_y],
            before: *before,
            end: *end,
            subject_ends,
            additive,
            lexicon,
        };
        let (place, value_at) = (around.place(), around.value_at());
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
            // camera `lens`" / "the lens of a camera", "a shellfish
            // `allergy`" / "`allergic` to shellfish".
            let has_elsewhere = hunks[side]
                .iter()
                .find(|t| t.is_content())
                .is_some_and(|head| {
                    [b, a][side]
                        .iter()
                        .any(|t| t.shares_lemma(head) || t.info.derives(&head.info))
                });
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
        // A pronoun of one gender where the other side has one of the
        // other, and no other word, names another person: "calls `him`" /
        // "calls `her`", "`his` brother" / "`her` brother" (but "`his wife`"
        // / "`she`" is one person).
        if content(x).is_empty()
            && content(y).is_empty()
            && let Some(pronouns) = other_gender(x, y)
        {
            comparison.substitutions.push(pronouns);
        }
        // Before words the other side has elsewhere leave the hunks: "with
        // other `women`" is company though "woman" is the other's subject.
        if let Some((p, q)) = alone_against_company(x, y, lexicon) {
            let alone = Conflict::opposed(ConflictKind::Antonym, &p, &q, "antonyms");
            comparison.add_conflict(alone.found_by("alone_against_company"));
            continue;
        }
        let before_moving = content(x).len() + content(y).len();
        // Where both sides have words here, a word the alignment already
        // paired elsewhere stands against the other side's: one slot, two
        // values ("white `cats`" / "white `dogs`", beside "a brown dog" on
        // both). Where one side has none, a word said again adds nothing
        // ("vice-president of marketing, and … vice-president of
        // purchasing" / "vice-presidents for marketing and purchasing").
        let (mut x, mut y) = if content(x).is_empty() || content(y).is_empty() {
            (moved_out(x, b), moved_out(y, a))
        } else {
            (
                moved_out_of_alignment(x, b, &aligned_in_second),
                moved_out_of_alignment(y, a, &aligned_words),
            )
        };
        let mut dated = [false; 2];
        for (side, hunk) in [&x, &y].into_iter().enumerate() {
            comparison.dating[side] += hunk
                .iter()
                .filter(|t| t.is_content() && dates_a_change(t, lexicon))
                .count();
            // A time dates when an activity ended: "quit smoking `in
            // 2019`", "`two weeks ago`"; so does where a leaving went
            // ("left Berlin `for Paris`"), or that it went for good.
            let words = content(hunk);
            let went = |t: &&Token| t.role == Role::Name || listed(&PERMANENCE, &t.word);
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
            // Unless the possessive frame restates a verb of having or
            // using: "the user's browser is Firefox" says that the user
            // uses Firefox, and what Firefox is to the user besides, a
            // detail of its own.
            if restates_possession([&x, &y][side], [&x, &y][1 - side], lexicon) {
                comparison.extra[side] += content([&x, &y][side]).len();
                continue;
            }
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
        let hunk = rules::Hunk::new(&x, &y, next, names_before);
        rules::classify(&hunk, &place, lexicon, &mut comparison);
    }
    cancel_denials_of_one_word(&mut comparison.conflicts);
    cancel_moved_denials(&mut comparison.conflicts, a, b);
    if let Some(conflict) = traded_comparison(a, b, lexicon) {
        comparison.add_conflict(conflict.found_by("traded_comparison"));
    }
    if let Some(pronouns) = other_doer(a, b) {
        comparison.substitutions.push(pronouns);
    } else if let Some((reflexive, plain)) = other_doer(b, a) {
        comparison.substitutions.push((plain, reflexive));
    }
    if let Some(clauses) = traded_pronouns(a, b) {
        comparison.substitutions.push(clauses);
    }
    // The date a change was set aside with is still its side's detail.
    comparison.extra[0] += dated_a;
    comparison.extra[1] += dated_b;
    comparison
}

/// Third-person pronouns by gender.
static MASCULINE: WordClass = WordClass::new("masculine");
static FEMININE: WordClass = WordClass::new("feminine");

/// The pronouns when hunk `x` has one of one gender only and `y` one of the
/// other only. Person may shift between direct and reported speech ("`we`
/// will" / "`they` would"), gender does not.
fn other_gender(x: &[&Token], y: &[&Token]) -> Option<(String, String)> {
    let first = |hunk: &[&Token], gender: &WordClass| {
        hunk.iter()
            .find(|t| listed(gender, &t.word))
            .map(|t| t.word.clone())
    };
    let pairs = [(&MASCULINE, &FEMININE), (&FEMININE, &MASCULINE)];
    pairs.into_iter().find_map(|(one, other)| {
        let mine = first(x, one).filter(|_| first(x, other).is_none())?;
        let theirs = first(y, other).filter(|_| first(y, one).is_none())?;
        Some((mine, theirs))
    })
}

/// Object pronouns and their reflexives.
const REFLEXIVES: [(&str, &str); 7] = [
    ("him", "himself"),
    ("her", "herself"),
    ("them", "themselves"),
    ("it", "itself"),
    ("me", "myself"),
    ("us", "ourselves"),
    ("you", "yourself"),
];

/// The reflexive and the plain pronoun when a shared word takes a
/// reflexive object in `a` ("believes in `himself`") and the plain one in
/// `b` ("believes in `him`"): the reflexive is the clause's own subject
/// and the plain pronoun someone else, so the texts speak of different
/// people in one role, a different fact as much as another name would
/// be.
fn other_doer(a: &[Token], b: &[Token]) -> Option<(String, String)> {
    (0..a.len()).find_map(|i| {
        let pronoun = object(a, i).filter(|_| a[i].is_content())?;
        let &(plain, reflexive) = REFLEXIVES.iter().find(|(_, r)| *r == pronoun)?;
        (0..b.len())
            .any(|k| b[k].is_content() && b[k].shares_lemma(&a[i]) && object(b, k) == Some(plain))
            .then(|| (reflexive.to_owned(), plain.to_owned()))
    })
}

/// The word after `text[at]`, past one preposition ("believes `in`"): the
/// verb's object when it is a pronoun. "her" before a content word is a
/// possessive ("supports her sister"), no object.
fn object(text: &[Token], at: usize) -> Option<&str> {
    let mut k = at + 1;
    if text.get(k).is_some_and(|t| is_preposition(&t.word)) {
        k += 1;
    }
    let next_is_content = text.get(k + 1).is_some_and(Token::is_content);
    text.get(k)
        .filter(|t| !(t.word == "her" && next_is_content))
        .map(|t| t.word.as_str())
}

/// Personal pronouns by referent, subject form then object form: "I" and
/// "me" are one person, "I" and "him" two.
const REFERENTS: [(&str, &str); 7] = [
    ("i", "me"),
    ("we", "us"),
    ("you", "you"),
    ("he", "him"),
    ("she", "her"),
    ("it", "it"),
    ("they", "them"),
];

/// Adverbs that may stand between a subject and its verb besides
/// auxiliaries ("she `also` invited").
static SUBJECT_ADVERBS: WordClass = WordClass::new("subject_adverbs");

/// The referent of the subject pronoun of the word at `at`: the pronoun
/// right before it, past auxiliaries and modals ("she `has` invited",
/// "they `will` call").
fn subject_referent(text: &[Token], at: usize) -> Option<usize> {
    let mut k = at.checked_sub(1)?;
    for _ in 0..3 {
        let word = text[k].word.as_str();
        if let Some(referent) = REFERENTS.iter().position(|(subject, _)| *subject == word) {
            return Some(referent);
        }
        if !listed(&AUXILIARIES, word) && !listed(&SUBJECT_ADVERBS, word) {
            return None;
        }
        k = k.checked_sub(1)?;
    }
    None
}

/// The referent of the object pronoun of the word at `at` ([`object`]).
fn object_referent(text: &[Token], at: usize) -> Option<usize> {
    let word = object(text, at)?;
    REFERENTS.iter().position(|(_, object)| *object == word)
}

/// The two clauses when one shared verb has pronouns for its doer and its
/// object in both texts, and the two have traded places: "`I` told `him`"
/// / "`He` told `me`", "`She` has invited `them`" / "`They` have invited
/// `her`". The content words keep their order, so nothing else notices;
/// yet who did it to whom is the fact. A change of perspective ("I" /
/// "you" between a user's words and an agent's) renames both people and
/// trades nothing.
fn traded_pronouns(a: &[Token], b: &[Token]) -> Option<(String, String)> {
    let roles = |text: &[Token], at: usize| {
        let doer = subject_referent(text, at)?;
        let object = object_referent(text, at)?;
        (doer != object).then_some((doer, object))
    };
    let clause = |(doer, object): (usize, usize), verb: &Token| {
        format!(
            "{} {} {}",
            REFERENTS[doer].0, verb.word, REFERENTS[object].1
        )
    };
    (0..a.len()).find_map(|i| {
        let verb = a.get(i).filter(|t| t.is_content())?;
        let (doer, object) = roles(a, i)?;
        (0..b.len()).find_map(|k| {
            let other = b
                .get(k)
                .filter(|t| t.is_content() && t.shares_lemma(verb))?;
            let traded = roles(b, k).filter(|&roles| roles == (object, doer))?;
            Some((clause((doer, object), verb), clause(traded, other)))
        })
    })
}

/// `text` without the alternative a preference of it rejects, where
/// `other` states that alternative and not the choice: "prefers dark mode
/// `over light mode`" / "prefers light mode" reads "prefers dark mode",
/// one choice against the other. Kept, the rejected alternative aligns
/// with the other's choice and leaves this choice a detail, so the two
/// read as one fact. The alternative runs from the pivot ("over", "to",
/// "rather than", "instead of") to the next preposition or clause; not
/// under a negation ("does not prefer tea over coffee").
pub(super) fn without_rejected_alternative<'t>(
    text: &'t [Token],
    other: &[Token],
) -> Cow<'t, [Token]> {
    let prefers = |t: &Token| t.info.lemmas.iter().any(|l| listed(&PREFERENCE_VERBS, l));
    let Some(verb) = text.iter().position(prefers) else {
        return Cow::Borrowed(text);
    };
    if text.iter().any(|t| t.role == Role::Negation) {
        return Cow::Borrowed(text);
    }
    let stated_by_other = |t: &Token| states(other, t);
    let clause = text[verb + 1..]
        .iter()
        .take_while(|t| !listed(&CLAUSE_BREAKS, &t.word))
        .count();
    let clause = &text[verb + 1..verb + 1 + clause];
    // After an infinitive ("prefers to travel to Japan") "to" is where,
    // not what is rejected.
    let infinitive = clause.first().is_some_and(|t| t.word == "to");
    let pivot = (1..clause.len()).find_map(|k| match clause[k].word.as_str() {
        "over" => Some((k, 1)),
        "to" if !infinitive => Some((k, 1)),
        "rather" | "instead"
            if clause
                .get(k + 1)
                .is_some_and(|t| listed("than of", &t.word)) =>
        {
            Some((k, 2))
        }
        _ => None,
    });
    let Some((at, pivot_len)) = pivot else {
        return Cow::Borrowed(text);
    };
    let chosen = &clause[..at];
    let rejected_len = clause[at + pivot_len..]
        .iter()
        .take_while(|t| !is_preposition(&t.word))
        .count();
    let rejected = &clause[at + pivot_len..at + pivot_len + rejected_len];
    let content = |run: &'t [Token]| run.iter().filter(|t| t.is_content());
    let rejected_stated =
        content(rejected).next().is_some() && content(rejected).all(stated_by_other);
    let choice_unstated = content(chosen).any(|t| !stated_by_other(t));
    if !(rejected_stated && choice_unstated) {
        return Cow::Borrowed(text);
    }
    let from = verb + 1 + at;
    without_range(text, from..from + pivot_len + rejected_len)
}

/// The two sides of a comparison or a preference traded, nothing else
/// different: "prefers tea `over` coffee" / "prefers coffee `over` tea"
/// (or `to`, `rather than`, `instead of`: a preference's pivots are one),
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
pub(super) fn traded_comparison(a: &[Token], b: &[Token], lexicon: &Lexicon) -> Option<Conflict> {
    const LONGEST: usize = 40;
    static PIVOTS: WordClass = WordClass::new("pivots");
    let prefers_at_all = |t: &Token| t.info.lemmas.iter().any(|l| listed(&PREFERENCE_VERBS, l));
    // The cheap bound first: no "than", and no preference with a pivot,
    // leaves nothing to trade (most pairs, so nothing is copied for them).
    let denials = |side: &[Token]| side.iter().filter(|t| t.role == Role::Negation).count();
    let (denied_a, denied_b) = (denials(a), denials(b));
    // Not under a negation, but for one that is a contrast's own.
    let compared = denied_a == 0
        && denied_b == 0
        && (a.iter().any(|t| t.word == "than")
            || (a.iter().any(prefers_at_all) && a.iter().any(|t| listed(&PIVOTS, &t.word)))
            || a.iter().any(|t| listed(&ONE_WAY_PLACES, &t.word))
            || a.iter().any(|t| lexicon.defeats(&t.info)));
    let contrasted = denied_a == 1 && denied_b == 1;
    if a.len() > LONGEST || !(compared || contrasted) {
        return None;
    }
    // "rather than" and "instead of" set one thing against another as
    // "over" does: read as their second word, one pivot like it.
    fn unchanged<'s>(side: &'s [Token], lexicon: &Lexicon) -> Vec<&'s Token> {
        side.iter()
            .enumerate()
            .filter(|&(k, t)| {
                let opens_pivot = listed("rather instead", &t.word)
                    && side.get(k + 1).is_some_and(|n| listed("than of", &n.word));
                !lexicon.is_change_word(&t.word) && !opens_pivot
            })
            .map(|(_, t)| t)
            .collect()
    }
    let (a, b) = (unchanged(a, lexicon), unchanged(b, lexicon));
    let n = a.len();
    if n != b.len() {
        return None;
    }
    // "its prey" / "the prey": one phrase, whatever its determiner.
    let same = |x: &Token, y: &Token| {
        x.word == y.word
            || x.shares_lemma(y)
            || (listed(&DETERMINERS, &x.word) && listed(&DETERMINERS, &y.word))
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
            // Of two sides, one wins a contest: "Arsenal `beat` Chelsea",
            // "the Hawks `have defeated the` Bears". A victory is an
            // outcome, never in progress: "a dog is `licking` a baby", "is
            // `beating` eggs" do something else.
            let undetermined = middle
                .iter()
                .rposition(|t| !listed(&DETERMINERS, &t.word))
                .map_or(&middle[..0], |k| &middle[..=k]);
            let victory = match undetermined {
                [auxiliaries @ .., verb] => {
                    lexicon.defeats(&verb.info)
                        && !verb.word.ends_with("ing")
                        && auxiliaries.iter().all(|t| listed(&AUXILIARIES, &t.word))
                }
                [] => false,
            };
            let compares = middle.iter().any(|t| t.word == "than")
                || (prefers && middle.iter().all(|t| listed(&PIVOTS, &t.word)))
                || place.is_some()
                || victory;
            // A preference's pivots are one relation, whichever each
            // text writes: "prefers tea `over` coffee" / "prefers coffee
            // `to` tea".
            let pivots = |run: &[&Token]| run.iter().all(|t| listed(&PIVOTS, &t.word));
            let same_middle =
                same_run(&b[k..l], middle) || (prefers && pivots(middle) && pivots(&b[k..l]));
            if (contrast || compares)
                && first.iter().any(|t| t.is_content())
                && second.iter().any(|t| t.is_content())
                && same_run(&b[lo..k], second)
                && same_middle
                && same_run(&b[l..hi], first)
            {
                let why = match place {
                    _ if contrast => "the contrasted sides traded".to_owned(),
                    _ if victory => "winner and loser traded".to_owned(),
                    Some(relation) => format!("the sides of `{relation}` traded"),
                    None => "the compared sides traded".to_owned(),
                };
                return Some(Conflict::opposed(
                    ConflictKind::Order,
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
pub(super) fn contrasts(middle: &[&Token]) -> bool {
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
pub(super) static ONE_WAY_PLACES: WordClass = WordClass::new("one_way_places");

/// The place relation that `middle`, the words between two traded
/// phrases, ends in, if it holds one way ([`ONE_WAY_PLACES`]) after
/// nothing else that relates, in the present (two events at other times
/// can trade places), and the verb does not take the preposition as its
/// own ("relies `on`", a verb of its own in WordNet).
pub(super) fn one_way_place(middle: &[&Token], lexicon: &Lexicon) -> Option<String> {
    let end = middle
        .iter()
        .rposition(|t| !listed(&DETERMINERS, &t.word))
        .map_or(0, |k| k + 1);
    let words: Vec<&str> = middle[..end].iter().map(|t| t.word.as_str()).collect();
    let relation_len = match words.as_slice() {
        [.., "in", "front", "of"] | [.., "on", "top", "of"] => 3,
        [.., last] if listed(&ONE_WAY_PLACES, last) && !listed("front top", last) => 1,
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

/// Whether `possessive`, an owner's noun phrase up to a copula in the
/// present ("'s browser is"; "'s car `was`" is another time), restates
/// `bare`, a verb of having or using in the present and nothing else
/// ("uses", "has", "owns"): both say what the owner has or uses, before
/// the same value.
pub(super) fn restates_possession(
    possessive: &[&Token],
    bare: &[&Token],
    lexicon: &Lexicon,
) -> bool {
    let having = |t: &Token| {
        t.info.inflected_verb
            && !past_form(t)
            && (listed(&POSSESSIVE_VERBS, &t.word)
                || means_have(t, lexicon)
                || lexicon.first_means(&t.info, USE))
    };
    matches!(content(bare).as_slice(), [verb] if having(verb))
        && bare
            .iter()
            .all(|t| t.is_content() || listed(&ARTICLES, &t.word))
        && possessive
            .last()
            .is_some_and(|t| listed(&COPULAS, &t.word) && !past_form(t))
}

/// The other text denies the same words, the negation moved with them
/// ("The marriage was `not` set up by force, Ionescu said" / "Ionescu
/// said: the marriage was `not` set up by force"): a negation the
/// alignment left in a hunk is no conflict when every denial of its side
/// is also one of the other side's.
pub(super) fn cancel_moved_denials(conflicts: &mut Vec<Conflict>, a: &[Token], b: &[Token]) {
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
pub(super) fn denied_runs(tokens: &[Token]) -> Vec<Vec<&str>> {
    tokens
        .iter()
        .enumerate()
        .filter(|(_, t)| t.role == Role::Negation)
        .map(|(k, negation)| {
            let after = &tokens[k + 1..];
            let inverted = listed("nor neither", &negation.word)
                && after.first().is_some_and(|t| listed(&AUXILIARIES, &t.word));
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
pub(super) fn cancel_denials_of_one_word(conflicts: &mut Vec<Conflict>) {
    fn denial(c: &Conflict, side: usize) -> Option<&str> {
        (c.kind == ConflictKind::Negation && c.negated_side == Some(side))
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
