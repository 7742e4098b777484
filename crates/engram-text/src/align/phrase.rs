//! The verb phrase recurring episodes share, written as one sentence a
//! person can read alone: "Priya goes running in the park".
//!
//! The subject is the central episode's, where at least half of the
//! episodes name it too. The verb is one of the central episode's whose
//! meaning at least half of the episodes say as a verb, written in the
//! present (a habit); where there is none, what a copula assigns ("was
//! `sick`"), with the copula as the episode writes it. Its object is the
//! central episode's own words after the verb, from the first to the last
//! word at least half of the episodes say, within the verb's clause and at
//! most a few words long, so that the sentence ends on a word of its own,
//! never on a cut phrase; the function words leading to it stay, a content
//! word only one episode says does not ("makes a difference", not "makes
//! a huge difference").

use super::tokens::ordinal_rank;
use super::*;

/// Words that end a verb's phrase: the next clause or an aside begins.
pub(super) static PHRASE_ENDS: WordClass = WordClass::new("phrase_ends");

/// Subjects a verb agrees with in its plain form ("I try", "they try").
static PLAIN_SUBJECTS: WordClass = WordClass::new("plain_verb_subjects");

/// Determiners that may open the object where the episode has one ("runs
/// `the` tests").
static OBJECT_DETERMINERS: WordClass = WordClass::new("articles");

/// The longest object, in words: beyond it the object is the episode's
/// story, not what recurs.
const MAX_OBJECT_WORDS: usize = 5;

/// The shared verb phrase of texts read as `all` (at least two), shaped
/// by the words of `text`, the one read as `all[central]`, or `None` when
/// no verb is said by at least half of them.
pub fn recurring_phrase(
    all: &[Vec<Token>],
    central: usize,
    text: &str,
    lexicon: &Lexicon,
) -> Option<String> {
    let own = all.get(central)?;
    let half = |count: usize| 2 * count >= all.len();
    // How many texts say `t`'s meaning, as a verb where `as_verb`.
    let said_by = |t: &Token, as_verb: bool| {
        all.iter()
            .filter(|other| {
                other.iter().enumerate().any(|(k, u)| {
                    u.is_content() && says_same(t, u, lexicon) && (!as_verb || verb_at(other, k))
                })
            })
            .count()
    };
    // The verb most texts say (the first of equals); else what a copula
    // assigns ("was `sick`"), with the copula as written.
    let most_said = |candidates: Vec<usize>, as_verb: bool| {
        candidates
            .into_iter()
            .map(|k| (k, said_by(&own[k], as_verb)))
            .filter(|&(_, count)| half(count))
            .fold(
                None,
                |best: Option<(usize, usize)>, (k, count)| match best {
                    Some((_, most)) if most >= count => best,
                    _ => Some((k, count)),
                },
            )
            .map(|(k, _)| k)
    };
    let verbs = (0..own.len()).filter(|&k| verb_at(own, k)).collect();
    let assigned = (0..own.len())
        .filter(|&k| own[k].role == Role::Content && assigned_at(own, k))
        .collect();
    let (head, copula) = match most_said(verbs, true) {
        Some(k) => (k, None),
        None => {
            let k = most_said(assigned, false)?;
            let copula = own[..k].iter().rposition(|t| listed(&COPULAS, &t.word))?;
            (k, Some(copula))
        }
    };
    // The subject: the words before the first auxiliary or verb, where
    // half of the texts name its content words too.
    let subject_end = own
        .iter()
        .enumerate()
        .position(|(k, t)| listed(&AUXILIARIES, &t.word) || verb_at(own, k))
        .unwrap_or(0);
    let subject = &own[..subject_end];
    let shared_subject = !subject.is_empty()
        && subject
            .iter()
            .filter(|t| t.is_content())
            .all(|t| half(said_by(t, false)));
    // The object: the verb's clause, up to the next clause or aside, or
    // a time told from one episode's day ("won a tournament `last week`"),
    // which holds on none of the pattern's other dates: the dates after
    // the text say when.
    let relative_time = |k: usize| {
        listed(&TIME_DEICTICS, &own[k].word)
            && own.get(k + 1).is_some_and(|t| names_time(t, lexicon))
    };
    let clause_end = (head + 1..own.len())
        .find(|&k| {
            listed(&PHRASE_ENDS, &own[k].word)
                || punctuated_before(text, &own[k - 1], &own[k])
                || relative_time(k)
        })
        .unwrap_or(own.len());
    // What a copula assigns is the first word of the object.
    let clause = head + usize::from(copula.is_none())..clause_end;
    let shared: Vec<usize> = clause
        .clone()
        .filter(|&k| own[k].is_content() && half(said_by(&own[k], false)))
        .collect();
    let object = match (shared.first(), shared.last()) {
        (Some(&first), Some(&last)) => {
            // Within the longest object, ending on a shared word: the
            // last that names a thing where one does ("renews the TLS
            // `certificate`", not "… certificate `ahead`").
            let within = |k: &usize| *k < first + MAX_OBJECT_WORDS;
            let last = shared
                .iter()
                .copied()
                .filter(within)
                .rfind(|&k| own[k].carries_fact())
                .or_else(|| shared.iter().copied().rfind(within))
                .unwrap_or(last);
            // The function words that lead from the verb to its object
            // stay ("volunteers `at a` homeless shelter", "loses `his`
            // job"), where they are all the words there or at most two
            // words lead; a content word there is one episode's, not how
            // the episodes word it ("makes a `huge` difference"). Else a
            // determiner right before the object.
            let lead = &own[clause.start..first];
            let object = written(text, &own[first], &own[last]);
            // Function words, then only words one episode gives right
            // before the object ("her `first full` screenplay"): the
            // function words lead to it.
            let modifiers_last = lead
                .iter()
                .skip_while(|t| !t.is_content())
                .all(Token::is_content);
            if lead.iter().all(|t| !t.is_content()) {
                Some(written(text, &own[clause.start], &own[last]).to_owned())
            } else if lead.len() <= 2 || modifiers_last {
                let mut words: Vec<String> = lead
                    .iter()
                    .filter(|t| !t.is_content())
                    .map(|t| written(text, t, t).to_owned())
                    .collect();
                if let Some(article) = words.last_mut().filter(|w| listed("a an", w)) {
                    *article = indefinite_article(object).to_owned();
                }
                words.push(object.to_owned());
                Some(words.join(" "))
            } else if listed(&OBJECT_DETERMINERS, &own[first - 1].word) {
                Some(written(text, &own[first - 1], &own[last]).to_owned())
            } else {
                Some(object.to_owned())
            }
        }
        _ => None,
    };
    let plain = subject
        .last()
        .is_some_and(|t| listed(&PLAIN_SUBJECTS, &t.word))
        || own[subject_end..head]
            .iter()
            .any(|t| listed("are were", &t.word));
    let mut words = Vec::new();
    if shared_subject {
        words.push(written(text, &subject[0], &subject[subject.len() - 1]).to_owned());
    }
    words.push(match copula {
        Some(k) => written(text, &own[k], &own[k]).to_owned(),
        None => present(lemma_of(&own[head]), plain),
    });
    words.extend(object);
    let sentence = words.join(" ");
    let mut chars = sentence.chars();
    let first = chars.next()?;
    Some(first.to_uppercase().chain(chars).collect())
}

/// Whether `tokens[k]` is a verb said as a predicate ("tried", "to `try`",
/// "is `trying`"), not what a copula assigns, nor a participle that
/// describes the noun before it after the clause's verb ("pitches a script
/// `based` on a true story").
fn verb_at(tokens: &[Token], k: usize) -> bool {
    let t = &tokens[k];
    t.info.is_verb()
        && t.role == Role::Content
        && predicate_at(tokens, k)
        && (!assigned_at(tokens, k) || t.word.ends_with("ing"))
        && !describes_noun(tokens, k)
}

/// Whether `tokens[k]` is a past participle between a common noun and a
/// preposition, with a verb of the clause before them: it says what the
/// noun is, not what the subject does ("sells lamps `made` of glass").
/// Without a verb before, the word may be the predicate itself ("the team
/// `moved` to Berlin"); with an object after it, it is one ("says the
/// shelter `needed` volunteers").
fn describes_noun(tokens: &[Token], k: usize) -> bool {
    let Some(before) = k.checked_sub(1).map(|b| &tokens[b]) else {
        return false;
    };
    let word = &tokens[k].word;
    // An inflection neither of the present ("makes") nor a gerund: the
    // past, which a participle shares ("based", "made", "written").
    let past = tokens[k].is_inflected_verb() && !word.ends_with("ing") && !word.ends_with('s');
    past && before.role == Role::Content
        && before.info.is_noun()
        && tokens.get(k + 1).is_some_and(|next| !next.is_content())
        && (0..k - 1).any(|j| {
            let t = &tokens[j];
            t.info.is_verb() && t.role == Role::Content && predicate_at(tokens, j)
        })
}

/// Whether two content words say the same for a pattern: the same lemma or
/// a synonym, but an ordinal only the same rank ("first" is no "start",
/// whatever WordNet's noun senses share).
fn says_same(t: &Token, u: &Token, lexicon: &Lexicon) -> bool {
    match (ordinal_rank(&t.word), ordinal_rank(&u.word)) {
        (None, None) => t.same_meaning(u, lexicon),
        (rank, other) => rank == other,
    }
}

/// "an" before a word written with a vowel ("an `apple`"), else "a"; a
/// "u" may sound either way ("a unique", "an urgent"): "a".
fn indefinite_article(word: &str) -> &'static str {
    if word.starts_with(['a', 'e', 'i', 'o', 'A', 'E', 'I', 'O']) {
        "an"
    } else {
        "a"
    }
}

/// The words of `text` from `first` to `last`, as written.
fn written<'a>(text: &'a str, first: &'a Token, last: &'a Token) -> &'a str {
    text.get(first.span.0..last.span.1).unwrap_or(&first.word)
}

/// Whether `text` has punctuation between two adjacent tokens.
fn punctuated_before(text: &str, before: &Token, token: &Token) -> bool {
    text.get(before.span.1..token.span.0)
        .is_some_and(|between| between.contains([',', ';', ':', '.', '(', '—', '–']))
}

/// The verb's lemma: the one its inflection comes from.
fn lemma_of(verb: &Token) -> &str {
    verb.info
        .lemmas
        .iter()
        .find(|l| **l != verb.word)
        .or(verb.info.lemmas.first())
        .map_or(verb.word.as_str(), String::as_str)
}

/// The present of `lemma`: its plain form after a plain subject, else the
/// third person ("tries", "watches", "goes", "has").
fn present(lemma: &str, plain: bool) -> String {
    match (lemma, plain) {
        ("be", true) => "are".to_owned(),
        ("be", false) => "is".to_owned(),
        (_, true) => lemma.to_owned(),
        ("have", false) => "has".to_owned(),
        _ => {
            let consonant_y = lemma.ends_with('y')
                && lemma
                    .chars()
                    .rev()
                    .nth(1)
                    .is_some_and(|c| !"aeiou".contains(c));
            if consonant_y {
                format!("{}ies", &lemma[..lemma.len() - 1])
            } else if ["s", "x", "z", "ch", "sh", "o"]
                .iter()
                .any(|end| lemma.ends_with(end))
            {
                format!("{lemma}es")
            } else {
                format!("{lemma}s")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_present_of_a_verb_agrees_with_its_subject() {
        assert_eq!(present("try", false), "tries");
        assert_eq!(present("watch", false), "watches");
        assert_eq!(present("go", false), "goes");
        assert_eq!(present("play", false), "plays");
        assert_eq!(present("have", false), "has");
        assert_eq!(present("run", true), "run");
        assert_eq!(present("be", false), "is");
    }
}
