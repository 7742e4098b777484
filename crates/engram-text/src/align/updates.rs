//! Knowledge updates: a newer fact that states how an older one changed.
//!
//! A stated change says more than its new value: when ("in May", "after
//! the surgery"), how it is known ("A new test showed …"), what came with
//! it ("The clinic closed and …"), and the words that mark it ("now", "these
//! days", "after all"). The alignment reads all of that as other facts, so
//! the pair stays apart. The rules here read the newer text as a change of
//! the older one. Each rule is named, with its example in its doc; they are
//! tried in the order of [`RULES`], and the first that holds decides.
//!
//! Every rule needs the newer text to state a change ([`Change::read`]): a
//! change marker the older lacks, or a verb in the past, neither denied nor
//! wished, that ends, leaves, parts with or redoes something. And both
//! texts must speak of one holder, the older's first name or noun ("Nora",
//! "the user"): a change of the user's sister is no change of the user.

use super::changes::governed;
use super::classify::{DESTINATIONS, POSSESSIVE_VERBS};
use super::clauses::redone;
use super::compare::compare;
use super::*;

/// A knowledge update: the rule that found it, what it read, and the word
/// that states the change ("left", "now").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Update {
    pub rule: &'static str,
    pub detail: String,
    pub marker: String,
}

/// A rule: what it found, in words, or `None`.
type Rule = fn(&Change<'_>, &Lexicon) -> Option<String>;

/// The rules, in the order they are tried.
static RULES: [(&str, Rule); 6] = [
    ("restated_change", restated_change),
    ("ends_what_the_older_names", ends_what_the_older_names),
    ("parts_the_pair", parts_the_pair),
    ("moves_home", moves_home),
    ("switches_within_a_kind", switches_within_a_kind),
    ("now_another_way", now_another_way),
];

/// The names of the rules, in order (for documentation and tests).
pub fn update_rules() -> impl Iterator<Item = &'static str> {
    RULES.iter().map(|(name, _)| *name)
}

/// Whether `newer` states a change of what `older` states, by the first
/// rule of the table that holds.
pub fn update(older: &[Token], newer: &[Token], lexicon: &Lexicon) -> Option<Update> {
    if too_long(older, newer) {
        return None;
    }
    let change = Change::read(older, newer, lexicon)?;
    RULES.iter().find_map(|(rule, applies)| {
        applies(&change, lexicon).map(|detail| Update {
            rule,
            detail,
            marker: change.marker.clone(),
        })
    })
}

/// Words that mark a change without being one of its facts: they go from
/// the newer text before it is compared ("These days", "now", "after
/// all").
static CHANGE_ADVERBS: WordClass = WordClass::new("change_adverbs");

/// Adverbs that say a state is new ("`now` takes the train").
static NOW: WordClass = WordClass::new("now_adverbs");

/// Words that add a value beside the older one rather than replace it
/// ("`also` takes Italian lessons", "a half-brother `as well`").
static ADDITIVES: WordClass = WordClass::new("additives");

/// Prepositions that open a time by an event ("`after` the move",
/// "`since` May").
static TIME_PREPOSITIONS: WordClass = WordClass::new("time_prepositions");

/// Prepositions that open a date when a time follows ("`in` May").
static SPAN_PREPOSITIONS: WordClass = WordClass::new("span_prepositions");

/// The newer text as a change of the older one.
struct Change<'t> {
    older: &'t [Token],
    newer: &'t [Token],
    /// Where the older's holder stands in the newer text.
    holder: usize,
    /// The word that states the change.
    marker: String,
}

impl<'t> Change<'t> {
    /// `newer` as a change of `older`: `None` unless it states one and
    /// names the older's holder.
    fn read(older: &'t [Token], newer: &'t [Token], lexicon: &Lexicon) -> Option<Self> {
        // A change replaces one fact: an older text of several clauses
        // ("… and finds it calming", "… that …") says more than any one
        // change ends.
        if older.iter().any(|t| listed(&CLAUSE_BREAKS, &t.word)) {
            return None;
        }
        // Nor does it undo a past event ("lost his job", "signed with the
        // Wolves"): only a standing fact changes.
        if !standing(older) {
            return None;
        }
        let holder = older.iter().find(|t| t.is_content())?;
        // A name opening a sentence is read as a common word: compare
        // spellings and lemmas, not roles.
        let holder = newer
            .iter()
            .position(|t| t.word == holder.word || t.shares_lemma(holder))?;
        // "The user's `son`", "the user's `brother`": another person,
        // whose changes are not the holder's, unless the older speaks of
        // that person too ("Kim's dentist").
        let possessed = |text: &[Token], at: usize| -> Option<String> {
            let noun = text.get(at + 2)?;
            (text.get(at + 1)?.word == "s").then(|| noun.word.clone())
        };
        let older_holder = older.iter().position(|t| t.is_content()).unwrap_or(0);
        let another_person = possessed(newer, holder).is_some_and(|noun| {
            let n = &newer[holder + 2];
            noun != possessed(older, older_holder).unwrap_or_default()
                && !n.info.modifies()
                && lexicon.first_names_person(&n.info)
        });
        if another_person {
            return None;
        }
        let words =
            |text: &[Token]| -> Vec<String> { text.iter().map(|t| t.word.clone()).collect() };
        let marked = lexicon
            .change_marker_in(&words(newer))
            .filter(|marker| lexicon.change_marker_in(&words(older)).as_ref() != Some(marker));
        let marker = marked.or_else(|| {
            // A verb both texts state is no change between them.
            let new_verb = |&(at, _): &(usize, usize)| !states(older, &newer[at]);
            change_verb_at(newer, older, lexicon)
                .filter(new_verb)
                .map(|(at, len)| {
                    newer[at..at + len]
                        .iter()
                        .map(|t| t.word.as_str())
                        .collect::<Vec<_>>()
                        .join(" ")
                })
        })?;
        Some(Change {
            older,
            newer,
            holder,
            marker,
        })
    }

    /// The clause of the newer text about the holder: from the holder (and
    /// its article) on.
    fn clause(&self) -> &'t [Token] {
        let mut start = self.holder;
        while start > 0 && listed(&DETERMINERS, &self.newer[start - 1].word) {
            start -= 1;
        }
        &self.newer[start..]
    }
}

/// Whether `text` states a standing fact: nothing in it is in the past
/// tense. A participle after a present form of "be" or "have" is present
/// ("is engaged", "are shipped", "has been"); "was", "had", "did" and a
/// verb in the past of its own ("settled", "lost") are not.
fn standing(text: &[Token]) -> bool {
    text.iter().enumerate().all(|(k, t)| {
        if listed("was were had did", &t.word) {
            return false;
        }
        // After a determiner a word is a noun: "the flat's `rent`" is no
        // past of "rend".
        let noun = k > 0 && listed(&DETERMINERS, &text[k - 1].word);
        if noun || t.role != Role::Content || !t.info.inflected_verb || !past_form(t) {
            return true;
        }
        // The word the participle leans on, past a negation or an adverb
        // that is no content of the clause ("is not engaged").
        let before = text[..k]
            .iter()
            .rev()
            .find(|b| b.role != Role::Negation && (b.is_content() || joins(b)));
        // (A past form of either has already ended the walk above.)
        before.is_some_and(|b| listed(&COPULAS, &b.word) || listed(&POSSESSIVE_VERBS, &b.word))
    })
}

/// Where `text` has a verb of change in the past, neither denied nor
/// wished, and how many words it takes (a phrasal verb takes two): a verb
/// that ends ([`ending_verb_at`]), a change to a value ([`changes_to`]:
/// "went up to"), or the older text's verb done again ("rewrote" /
/// "writes").
fn change_verb_at(text: &[Token], older: &[Token], lexicon: &Lexicon) -> Option<(usize, usize)> {
    ending_verb_at(text, lexicon).or_else(|| {
        (1..text.len()).find_map(|at| {
            if !done(text, at) {
                return None;
            }
            if redoes(&text[at], older, lexicon).is_some() {
                return Some((at, 1));
            }
            changes_to(text, at, lexicon).map(|to| (at, to - at))
        })
    })
}

/// Where the "to" stands after a verb of change at `at` ("rose `to`",
/// "went up `to`"), if one follows it: WordNet files the verb, or the
/// phrasal verb it makes with its particle, under change, or it is a
/// change marker's verb ("moved", "switched").
fn changes_to(text: &[Token], at: usize, lexicon: &Lexicon) -> Option<usize> {
    let verb = &text[at];
    if verb.role != Role::Content {
        return None;
    }
    let phrasal = text.get(at + 1).filter(|next| {
        verb.info
            .lemmas
            .iter()
            .any(|l| lexicon.phrase_changes(&format!("{l} {}", next.word)))
    });
    let to = at + 1 + usize::from(phrasal.is_some());
    let changes =
        phrasal.is_some() || lexicon.changes(&verb.info) || lexicon.is_change_verb(&verb.info);
    (changes && text.get(to).is_some_and(|t| t.word == "to")).then_some(to)
}

/// Where `text` has a verb in the past, neither denied nor wished, that
/// ends an activity, concludes or calls off, leaves, parts with or
/// replaces ("stopped", "finished", "cancelled", "left", "sold",
/// "replaced"), or such a phrasal verb ("broke up", "called off"), and how
/// many words it takes.
fn ending_verb_at(text: &[Token], lexicon: &Lexicon) -> Option<(usize, usize)> {
    (1..text.len()).find_map(|at| {
        let verb = &text[at];
        if verb.role != Role::Content || !done(text, at) {
            return None;
        }
        if let Some(particle) = text.get(at + 1) {
            let phrasal = verb.info.lemmas.iter().any(|lemma| {
                let phrase = format!("{lemma} {}", particle.word);
                lexicon.phrase_ends_activity(&phrase)
                    || lexicon.phrase_concludes(&phrase)
                    || lexicon.phrase_separates(&phrase)
                    || lexicon.phrase_leaves(&phrase)
                    || lexicon.phrase_parts_with(&phrase)
            });
            if phrasal {
                return Some((at, 2));
            }
        }
        let ends = lexicon.ends_activity(&verb.info)
            || lexicon.concludes(&verb.info)
            || lexicon.leaves(&verb.info)
            || lexicon.parts_with(&verb.info)
            || lexicon.is_change_verb(&verb.info);
        ends.then_some((at, 1))
    })
}

/// Whether the single verb at `at` ends or gives up what follows it: a
/// verb whose most frequent sense is ending, leaving, parting, concluding
/// or replacing, or a change marker's verb right before "from" ("moved
/// from Dropbox"); not one that starts or alters ("started", "changed").
fn ends_its_object(text: &[Token], at: usize, lexicon: &Lexicon) -> bool {
    let verb = &text[at].info.in_first_verb_sense();
    lexicon.ends_activity(verb)
        || lexicon.concludes(verb)
        || lexicon.leaves(verb)
        || lexicon.parts_with(verb)
        || lexicon.replaces(verb)
        || (lexicon.is_change_verb(verb) && text.get(at + 1).is_some_and(|t| t.word == "from"))
}

/// Whether the verb at `at` is done, in the past: a past form, neither
/// denied nor wished ([`governed`]), nor a participle in the present
/// ("is being knocked off", "is moved": what happens, not what changed).
fn done(text: &[Token], at: usize) -> bool {
    let auxiliaries = text[..at].iter().rev().take_while(|t| !t.is_content());
    past_form(&text[at])
        && !governed(text, at)
        && !auxiliaries
            .into_iter()
            .any(|t| listed("is are am be being", &t.word))
}

/// The token of `older` whose verb `verb` does again ("rewrote" /
/// "writes", "rebuilt" / "builds").
fn redoes<'o>(verb: &Token, older: &'o [Token], lexicon: &Lexicon) -> Option<&'o Token> {
    if !redone(&verb.info, lexicon) {
        return None;
    }
    let again: Vec<&str> = verb
        .info
        .lemmas
        .iter()
        .filter_map(|lemma| lemma.strip_prefix("re"))
        .filter(|rest| rest.len() > 2)
        .collect();
    older.iter().find(|t| {
        t.role == Role::Content
            && t.info.inflected_verb
            && t.info.lemmas.iter().any(|l| again.contains(&l.as_str()))
    })
}

/// **restated_change**: the newer text's clause about the holder, without
/// the words that mark the change and the time that closes it, and with a
/// verb done again or a change "to" a value read as the older's verb or
/// copula, contradicts the older. "Jonah works night shifts" / "Jonah
/// switched to day shifts in March"; "The team's budget is $40,000 a year" /
/// "… went up to $55,000 a year"; "Ana is allergic to penicillin" / "A new
/// test showed Ana is not allergic to penicillin after all".
fn restated_change(change: &Change<'_>, lexicon: &Lexicon) -> Option<String> {
    let core = core(change, lexicon);
    if core.len() == change.newer.len()
        && core.iter().zip(change.newer).all(|(a, b)| a.word == b.word)
    {
        return None;
    }
    let comparison = compare(change.older, &core, lexicon);
    comparison.contradicts().then(|| {
        format!(
            "{} (read as `{}`)",
            comparison.explanation(),
            core.iter()
                .map(|t| t.word.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        )
    })
}

/// The clause of [`restated_change`].
fn core(change: &Change<'_>, lexicon: &Lexicon) -> Vec<Token> {
    let clause = change.clause();
    let mut kept: Vec<Token> = Vec::with_capacity(clause.len());
    let mut k = 0;
    while k < clause.len() {
        let marker_words = change_adverb_len(&clause[k..]);
        if marker_words > 0 {
            k += marker_words;
            continue;
        }
        let t = &clause[k];
        match redoes(t, change.older, lexicon) {
            Some(older_verb) if past_form(t) => kept.push(older_verb.clone()),
            _ => kept.push(t.clone()),
        }
        k += 1;
    }
    let kept = to_the_older_copula(kept, change.older, lexicon);
    without_closing_time(kept, change.older, lexicon)
}

/// How many words at the start of `words` are a change adverb ("now",
/// "these days", "after all"); 0 if none.
fn change_adverb_len(words: &[Token]) -> usize {
    phrase_len(&CHANGE_ADVERBS, words)
}

/// How many words at the start of `words` are a phrase of `class` (up to
/// four words, written with `_` in `en.toml`); 0 if none.
fn phrase_len(class: &WordClass, words: &[Token]) -> usize {
    (1..=4.min(words.len()))
        .rev()
        .find(|&n| {
            let phrase = words[..n]
                .iter()
                .map(|t| t.word.as_str())
                .collect::<Vec<_>>()
                .join("_");
            listed(class, &phrase)
        })
        .unwrap_or(0)
}

/// Whether `words` end with a phrase of `class`.
fn phrase_ends_at(class: &WordClass, words: &[Token]) -> bool {
    (1..=4.min(words.len())).any(|n| phrase_len(class, &words[words.len() - n..]) == n)
}

/// Whether a phrase of `class` starts anywhere in `words`.
fn has_phrase(class: &WordClass, words: &[Token]) -> bool {
    (0..words.len()).any(|k| phrase_len(class, &words[k..]) > 0)
}

/// `clause` with a change of the subject "to" a value ("The team's budget
/// `went up to` $55,000") read as the older text's copula ("is"), where the
/// older assigns its value to the same subject by one ("The team's budget
/// `is` $40,000"): the state after the change, against the state before.
/// Only a verb of change: one WordNet files under change, or a change
/// marker's ("moved", "switched").
fn to_the_older_copula(mut clause: Vec<Token>, older: &[Token], lexicon: &Lexicon) -> Vec<Token> {
    let Some(copula) = older.iter().position(|t| listed(&COPULAS, &t.word)) else {
        return clause;
    };
    let subject = |text: &[Token]| -> Vec<String> {
        text.iter()
            .filter(|t| t.is_content())
            .map(|t| t.word.clone())
            .collect()
    };
    // The same subject, as many words long, then the change.
    let at = copula;
    if clause.len() <= at + 1
        || subject(&clause[..at]) != subject(&older[..copula])
        || !past_form(&clause[at])
    {
        return clause;
    }
    if let Some(to) = changes_to(&clause, at, lexicon) {
        clause.splice(at..=to, [older[copula].clone()]);
    }
    clause
}

/// `clause` without the time that closes it, where the older text names
/// none of its words: "in May", "this year", "after the move". Not a span
/// ("for a week" bounds the change), and not the clause's content before
/// it, which holds the new value.
fn without_closing_time(clause: Vec<Token>, older: &[Token], lexicon: &Lexicon) -> Vec<Token> {
    // A date's own words: "the spring", "a year", "2019", "last"; not a
    // value of a lexicon class that WordNet also knows as a time ("Go").
    let dating = |t: &Token| {
        !t.is_content()
            || (names_time(t, lexicon) && lexicon.class_of(&t.word).is_none())
            || t.role == Role::Number
            || listed(&TIME_DEICTICS, &t.word)
    };
    let opens = |k: usize| {
        let t = &clause[k];
        let rest = &clause[k + 1..];
        let date = !rest.is_empty() && rest.iter().all(dating);
        (listed(&TIME_DEICTICS, &t.word) && rest.iter().all(dating))
            || (listed(&TIME_PREPOSITIONS, &t.word) && !rest.is_empty())
            || (listed(&SPAN_PREPOSITIONS, &t.word) && date)
    };
    let stated = |t: &Token| t.is_content() && states(older, t);
    let Some(start) = (2..clause.len()).find(|&k| {
        opens(k)
            && clause[..k].iter().skip(1).any(Token::is_content)
            && !clause[k..].iter().any(stated)
    }) else {
        return clause;
    };
    let mut clause = clause;
    clause.truncate(start);
    clause
}

/// **ends_what_the_older_names**: a verb of ending, leaving, parting or
/// replacing, or "instead of", whose object the older text names. "Nora
/// teaches at Lincoln High" / "Nora `left` Lincoln High and joined a
/// startup"; "The user drives a Toyota pickup" / "The user `sold` the
/// pickup and bought a bicycle"; "Invoices are stored in Dropbox" /
/// "Invoices now go to Box `instead of` Dropbox".
fn ends_what_the_older_names(change: &Change<'_>, lexicon: &Lexicon) -> Option<String> {
    let newer = change.newer;
    let holder = &newer[change.holder];
    let named = |t: &Token| t.is_content() && !t.shares_lemma(holder) && states(change.older, t);
    // A single verb: a phrasal one ends a pair ([`parts_the_pair`]) or
    // breaks up what it names ("broke up the crowd").
    let ending = ending_verb_at(newer, lexicon)
        .filter(|&(at, _)| at > change.holder && !states(change.older, &newer[at]))
        .filter(|&(at, len)| len == 1 && ends_its_object(newer, at, lexicon))
        .map(|(at, len)| (at, at + len))
        .into_iter()
        .chain(
            (0..newer.len().saturating_sub(2))
                .filter(|&k| newer[k].word == "instead" && newer[k + 1].word == "of")
                .map(|k| (k, k + 2)),
        );
    ending.into_iter().find_map(|(at, object_at)| {
        // "finished `a` painting", "`another` project": one more of a kind,
        // not the thing the older states.
        if newer
            .get(object_at)
            .is_some_and(|t| listed(&INDEFINITE_ARTICLES, &t.word))
        {
            return None;
        }
        let object: Vec<&Token> = newer[object_at..]
            .iter()
            .skip_while(|t| t.word == "from")
            .take_while(|t| {
                // The object ends at a clause, a phrase ("at", not "of")
                // or the next verb in the past ("lost her job, started …").
                let ends = listed(&CLAUSE_BREAKS, &t.word)
                    || (is_preposition(&t.word) && t.word != "of")
                    || listed(&TIME_DEICTICS, &t.word)
                    || (t.role == Role::Content && past_form(t));
                !ends
            })
            .filter(|t| t.is_content())
            .collect();
        // The object's head must be what the older names: "lost his iPhone
        // `charger`" loses no iPhone.
        if !object.last().is_some_and(|head| named(head)) {
            return None;
        }
        // Parting with a thing ends having it, not what one does with it
        // ("sold trucks" / "drives trucks"); a time bounds a departure
        // ("left Berlin `for a week`").
        let verb = newer[at].info.in_first_verb_sense();
        let parting_only = lexicon.parts_with(&verb)
            && !(lexicon.leaves(&verb) || lexicon.ends_activity(&verb) || lexicon.concludes(&verb));
        // The older must have the thing: by "has" or a copula, or one
        // thing it does something with ("drives a pickup" / "sold the
        // pickup"), not a kind of thing ("writes screenplays" / "sold her
        // screenplay").
        let has = |t: &Token| listed("has have own owns is are", &t.word);
        let head = object.last().copied();
        let plural = |o: &Token| o.word.ends_with('s') && !o.info.lemmas.contains(&o.word);
        let one_thing = change
            .older
            .iter()
            .any(|o| head.is_some_and(|h| o.shares_lemma(h)) && !plural(o));
        if parting_only && !one_thing && !change.older.iter().any(has) {
            return None;
        }
        // "for a week", "after her shift": a departure that ends or
        // recurs, not a change.
        let bounded = newer[object_at..].iter().enumerate().any(|(k, t)| {
            let rest = &newer[object_at + k + 1..];
            listed(&TIME_PREPOSITIONS, &t.word)
                || (t.word == "for" && rest.iter().any(|t| names_time(t, lexicon)))
        });
        if bounded {
            return None;
        }
        let ended: Vec<&Token> = object.iter().copied().filter(|t| named(t)).collect();
        // A thing the older names, not only its activity: "finished
        // `writing` her book" ends no other writing.
        let thing = ended
            .iter()
            .any(|t| !(t.info.inflected_verb && t.word.ends_with("ing")));
        let ended: Vec<&str> = ended.iter().map(|t| t.word.as_str()).collect();
        thing.then(|| {
            let verb: Vec<&str> = newer[at..object_at]
                .iter()
                .map(|t| t.word.as_str())
                .collect();
            format!(
                "`{}` ends `{}`, which the older states",
                verb.join(" "),
                ended.join(" ")
            )
        })
    })
}

/// **parts_the_pair**: a phrasal verb of separating or ending whose
/// subject joins the holder and the one the older text relates it to.
/// "Tom is dating Priscilla" / "Tom and Priscilla `broke up` last year";
/// "Rosa is engaged to Ivan" / "Rosa and Ivan `called off` the wedding".
fn parts_the_pair(change: &Change<'_>, lexicon: &Lexicon) -> Option<String> {
    let newer = change.newer;
    let (at, len) = ending_verb_at(newer, lexicon)?;
    if len != 2 || at <= change.holder {
        return None;
    }
    let subject = &newer[change.holder..at];
    let joined = subject.iter().any(|t| t.word == "and");
    let others: Vec<&Token> = subject
        .iter()
        .filter(|t| t.is_content() && !t.shares_lemma(&newer[change.holder]))
        .collect();
    let related = !others.is_empty() && others.iter().all(|t| states(change.older, t));
    (joined && related).then(|| {
        format!(
            "`{} {}` parts `{}` and `{}`",
            newer[at].word,
            newer[at + 1].word,
            newer[change.holder].word,
            others
                .iter()
                .map(|t| t.word.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        )
    })
}

/// **moves_home**: the older text says where and how the holder lives; the
/// newer moves the holder into or to a place. "Mia lives with her parents in
/// Lyon" / "Mia `moved into` a studio in Lyon".
fn moves_home(change: &Change<'_>, lexicon: &Lexicon) -> Option<String> {
    let dwells = change
        .older
        .iter()
        .position(|t| t.role == Role::Content && lexicon.dwells(&t.word))?;
    // The home must say more than its place, which a move within the
    // place ends ("lives `with her parents` in Lyon"); "lives in Chicago"
    // still holds after "moved to a bigger apartment in Chicago".
    let about_the_home = change.older[dwells + 1..]
        .iter()
        .any(|t| t.role == Role::Content && !t.names_place(lexicon));
    if !about_the_home {
        return None;
    }
    let newer = change.newer;
    let at = (change.holder + 1..newer.len().saturating_sub(1)).find(|&k| {
        let verb = &newer[k];
        verb.role == Role::Content
            && past_form(verb)
            && !governed(newer, k)
            && lexicon.means_motion(&verb.info)
            && lexicon.is_change_verb(&verb.info)
            && listed(&DESTINATIONS, &newer[k + 1].word)
            && newer[change.holder + 1..k].iter().all(|t| !t.is_content())
    })?;
    Some(format!(
        "`{} {}` a new home of `{}`",
        newer[at].word,
        newer[at + 1].word,
        newer[change.holder].word
    ))
}

/// **now_another_way**: "now" (or "these days") with another verb for the
/// same complement, nothing added beside the old: "Dev walks to the
/// office" / "Dev `now` drives to the office". Not "now also".
fn now_another_way(change: &Change<'_>, _lexicon: &Lexicon) -> Option<String> {
    let newer = change.clause();
    if !has_phrase(&NOW, newer) || has_phrase(&ADDITIVES, newer) {
        return None;
    }
    let verb_of = |text: &'_ [Token]| -> Option<usize> {
        text.iter()
            .position(|t| t.role == Role::Content && t.info.inflected_verb)
    };
    let (old_verb, new_verb) = (verb_of(change.older)?, verb_of(newer)?);
    // The older's verb right after its holder: "Tim `cycles` to work", not
    // a plural noun further on ("has a bookshelf of … `books`").
    let after_holder = change
        .older
        .iter()
        .position(|t| t.is_content())
        .and_then(|h| {
            change.older[h + 1..]
                .iter()
                .position(Token::is_content)
                .map(|d| h + 1 + d)
        });
    if after_holder != Some(old_verb) || !change.older[old_verb].info.is_verb() {
        return None;
    }
    // "`now` takes the train": the adverb says the verb is new; "… but is
    // now ready" says something else is, and "currently" only that it
    // holds.
    let marked = new_verb > 0 && phrase_ends_at(&NOW, &newer[..new_verb]);
    if !marked
        || newer[new_verb..]
            .iter()
            .any(|t| listed(&CLAUSE_BREAKS, &t.word))
    {
        return None;
    }
    let (old, new) = (&change.older[old_verb], &newer[new_verb]);
    if old.shares_lemma(new) || change.older.iter().any(|t| listed(&COPULAS, &t.word)) {
        return None;
    }
    let holder = &change.newer[change.holder];
    let shared: Vec<&str> = change.older[old_verb + 1..]
        .iter()
        .filter(|t| t.is_content() && !t.shares_lemma(holder) && states(&newer[new_verb + 1..], t))
        .map(|t| t.word.as_str())
        .collect();
    (!shared.is_empty()).then(|| {
        format!(
            "now `{}` where the older `{}`, for `{}`",
            new.word,
            old.word,
            shared.join(" ")
        )
    })
}

/// **switches_within_a_kind**: a change "to" a thing of the kind the older
/// text's object is, or of one kind with it (WordNet's kinds and classes):
/// "The user reads paperbacks" / "The user switched to audiobooks" (both
/// books), "The user drinks coffee" / "The user switched to lattes" (a
/// latte is a coffee). Not a thing of another kind: "drinks green tea" /
/// "switched to a standing desk".
fn switches_within_a_kind(change: &Change<'_>, lexicon: &Lexicon) -> Option<String> {
    let newer = change.newer;
    let (at, to) = (change.holder + 1..newer.len())
        .filter(|&k| done(newer, k))
        .find_map(|k| changes_to(newer, k, lexicon).map(|to| (k, to)))?;
    let phrase = |text: &'_ [Token]| -> Vec<Token> {
        text.iter()
            .take_while(|t| !listed(&CLAUSE_BREAKS, &t.word) && !is_preposition(&t.word))
            .filter(|t| t.role == Role::Content && t.info.is_noun())
            .cloned()
            .collect()
    };
    let new_value = phrase(&newer[to + 1..]);
    let old_verb = change
        .older
        .iter()
        .position(|t| t.role == Role::Content && t.info.inflected_verb)?;
    let old_value = phrase(&change.older[old_verb + 1..]);
    let holder = &newer[change.holder];
    old_value
        .iter()
        .filter(|o| !o.shares_lemma(holder))
        .find_map(|o| {
            let n = new_value.iter().find(|n| {
                !n.shares_lemma(o)
                    && (n.kind_of(o, lexicon)
                        || o.kind_of(n, lexicon)
                        || lexicon.wordnet_class(&o.info, &n.info).is_some())
            })?;
            Some(format!(
                "`{}` to `{}`, of one kind with `{}` the older states",
                newer[at].word, n.word, o.word
            ))
        })
}
