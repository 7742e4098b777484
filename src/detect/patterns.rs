//! Patterns: the same kind of episode, recurring, becomes one semantic
//! memory.
//!
//! A recurrence is not a topic. Episodes found a pattern only when every
//! pair of them is at cosine `pattern_similarity` or more (greedy cliques),
//! they happened on at least `pattern_min_size` distinct days, and they share
//! a predicate: content words that every one of them says (lemmas or WordNet
//! synonyms), at least two of them neither names nor numbers, and one said
//! as a predicate (a verb, or what a copula assigns). An episode that
//! recurs later joins the existing pattern (same tests against its
//! instances) instead of founding another.
//!
//! The pattern's text is a sentence a person can read alone, never a copy
//! of one episode: the shared subject, the verb phrase the instances share
//! ([`recurring_phrase`]: a verb at least half of them say, in the
//! present, with its object as the most central episode words it), then
//! how often and over which dates: "Priya goes running in the park (3
//! times, 1 June 2026 – 3 June 2026)". Where no verb is shared,
//! there is no pattern. Without WordNet no word's part of speech is known:
//! the text is then the central episode's words every instance shares,
//! what varies elided ("…"). It is deterministic; the optional rewrite
//! endpoint may reword it.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::align::{Role, Token, predicate_at, recurring_phrase, tokens};
use super::pairs::parallel_map;
use super::words::WordClass;
use super::{DAY_MS, DetectSettings, Floor, Lexicon, Prepared, Snapshot, round4, similar_pairs};
use crate::embed::dot;
use crate::model::{LinkType, Memory, MemoryKind, MemoryStatus, Millis};

/// Content words of distinct lemmas (not names or numbers) every instance
/// must share.
const MIN_SHARED_WORDS: usize = 2;

/// The category of the memories patterns create.
pub const PATTERN_CATEGORY: &str = "pattern";

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PatternCluster {
    /// The pattern these episodes join; `None` founds a new one.
    pub pattern_id: Option<String>,
    /// Episodes that become instances now, in `(created_at, id)` order.
    pub members: Vec<String>,
    /// Every instance: earlier ones of the pattern and the new members.
    pub instances: Vec<String>,
    /// The most central instance; its words shape the text.
    pub medoid_id: String,
    /// Least similar pair among the instances compared.
    pub cohesion: f64,
    pub first_at: Millis,
    pub last_at: Millis,
    /// Distinct days the instances happened on.
    pub days: usize,
    /// The deterministic text of the pattern memory.
    pub content: String,
}

/// Cosine of two memories: 1 for the same text, `None` without vectors.
fn similarity(a: &Memory, b: &Memory) -> Option<f64> {
    if a.content_hash == b.content_hash {
        return Some(1.0);
    }
    Some(f64::from(dot(
        a.embedding.as_deref()?,
        b.embedding.as_deref()?,
    )))
}

/// The shared core of `members`' texts (read as `texts`, [`read`]), shaped
/// by the medoid's words, or `None` when they share no predicate.
fn core(
    members: &[&Memory],
    texts: &[Vec<Token>],
    medoid: usize,
    lexicon: &Lexicon,
) -> Option<String> {
    let own = &texts[medoid];
    let everywhere = |t: &Token| {
        texts.iter().enumerate().all(|(k, other)| {
            k == medoid
                || other.iter().any(|u| match t.role {
                    Role::Negation => u.role == Role::Negation,
                    _ => u.is_content() && t.same_meaning(u, lexicon),
                })
        })
    };
    let mut kept: Vec<bool> = own
        .iter()
        .map(|t| (t.is_content() || t.role == Role::Negation) && everywhere(t))
        .collect();
    // A predicate and what it is about, beyond the names: one shared word
    // ("pride", "LGBTQ") is a topic, not a recurring event. The first word
    // is capitalised anyway, and mostly the subject: it does not count.
    // Words of one lemma ("shoes" … "shoe") or one meaning ("values" …
    // "appreciating": both matched by one "values" elsewhere) count once.
    let mut ordinary: Vec<&Token> = Vec::new();
    for (t, _) in own
        .iter()
        .zip(&kept)
        .skip(1)
        .filter(|(t, k)| **k && t.role == Role::Content)
    {
        if !ordinary.iter().any(|o| o.same_meaning(t, lexicon)) {
            ordinary.push(t);
        }
    }
    if ordinary.len() < MIN_SHARED_WORDS {
        return None;
    }
    // What recurs is something done or undergone: a shared verb, or what
    // a copula assigns. Shared nouns alone ("Nate … video game
    // tournaments": winning one, losing one, practising for them) are a
    // topic. Without WordNet no word's part of speech is known, and the
    // shared words alone decide.
    if lexicon.wordnet().is_some() {
        if !(1..own.len()).any(|i| kept[i] && predicate_at(own, i)) {
            return None;
        }
        return recurring_phrase(texts, medoid, &members[medoid].content, lexicon);
    }
    // Function words stay where they lead into a kept word ("to the gym").
    for i in (0..own.len()).rev() {
        if own[i].role == Role::Function {
            kept[i] = kept.get(i + 1).copied().unwrap_or(false);
        }
    }
    // A clitic ("s" of "Nate's") stays only after the word it belongs to;
    // a one-letter word of its own ("a", "I") is a function word like any.
    let text = &members[medoid].content;
    for i in 1..own.len() {
        if own[i].word.chars().count() == 1
            && own[i].role != Role::Number
            && own[i].follows_apostrophe(text)
        {
            kept[i] = kept[i - 1];
        }
    }
    let mut runs: Vec<&str> = Vec::new();
    let mut i = 0;
    while i < own.len() {
        if !kept[i] {
            i += 1;
            continue;
        }
        let start = own[i].span.0;
        while i + 1 < own.len() && kept[i + 1] {
            i += 1;
        }
        runs.push(&text[start..own[i].span.1]);
        i += 1;
    }
    let mut out = runs.join(" … ");
    if !kept.first().copied().unwrap_or(true) {
        out.insert_str(0, "… ");
    }
    if !kept.last().copied().unwrap_or(true) {
        out.push_str(" …");
    }
    Some(out)
}

fn date(at: Millis) -> String {
    chrono::DateTime::from_timestamp_millis(at)
        .map(|t| t.format("%-d %B %Y").to_string())
        .unwrap_or_default()
}

/// A candidate pattern over `instances` (at least two), or `None` when they
/// are not one recurrence.
///
/// `min_similarity` and `min_days` bound every pair and the distinct days;
/// episodes joining a pattern were tested against its instances already and
/// pass none (`f64::NEG_INFINITY`, 0), as they need not be close to each other.
fn recurrence(
    pattern_id: Option<String>,
    instances: &[&Memory],
    members: Vec<String>,
    (min_similarity, min_days): (f64, usize),
    lexicon: &Lexicon,
) -> Option<PatternCluster> {
    let mut cohesion = f64::INFINITY;
    let mut best = (f64::NEG_INFINITY, 0);
    for (i, a) in instances.iter().enumerate() {
        let mut sum = 0.0;
        for (_, b) in instances.iter().enumerate().filter(|(j, _)| *j != i) {
            let s = similarity(a, b)?;
            if s < min_similarity {
                return None;
            }
            cohesion = cohesion.min(s);
            sum += s;
        }
        if sum > best.0 {
            best = (sum, i);
        }
    }
    let days: BTreeSet<i64> = instances
        .iter()
        .map(|m| m.created_at().div_euclid(DAY_MS))
        .collect();
    if days.len() < min_days.max(2) {
        return None;
    }
    let texts = read(instances, lexicon);
    let core = core(instances, &texts, best.1, lexicon)?;
    // A new pattern's text is what its episodes say; a joined one keeps
    // its text where the new one is not (see `detect`).
    if pattern_id.is_none() && !said_by_them(&core, &texts, lexicon) {
        return None;
    }
    let first_at = instances.iter().map(|m| m.created_at()).min()?;
    let last_at = instances.iter().map(|m| m.created_at()).max()?;
    let content = format!(
        "{core} ({} times, {} – {})",
        instances.len(),
        date(first_at),
        date(last_at)
    );
    Some(PatternCluster {
        pattern_id,
        members,
        instances: instances.iter().map(|m| m.id.clone()).collect(),
        medoid_id: instances[best.1].id.clone(),
        cohesion: round4(cohesion),
        first_at,
        last_at,
        days: days.len(),
        content,
    })
}

/// The recurrences inside a group of close episodes that is no single
/// recurrence: at a low floor one person's episodes on one theme are all
/// close ("submitted a screenplay to a festival", "is writing a new
/// script", "finds writing therapeutic"), and no predicate runs through
/// them all. Each verb an episode says as a predicate gathers the
/// episodes that say it too (its lemma or a WordNet synonym); the largest
/// such subgroup that is a recurrence ([`recurrence`]) whose text the
/// episodes say ([`said_by_half`]) is taken, its episodes leave the group,
/// and the rest is searched again.
fn recurrences_within(
    instances: &[&Memory],
    bounds: (f64, usize),
    lexicon: &Lexicon,
) -> Vec<PatternCluster> {
    let texts = read(instances, lexicon);
    let says = |text: &[Token], verb: &Token| {
        (0..text.len()).any(|k| verb_at(text, k) && verb.same_meaning(&text[k], lexicon))
    };
    // Who says each verb, once per distinct set of episodes.
    let mut sayers: Vec<(Vec<usize>, &Token)> = Vec::new();
    for own in &texts {
        for (i, verb) in own.iter().enumerate() {
            if !verb_at(own, i) {
                continue;
            }
            let who: Vec<usize> = (0..texts.len())
                .filter(|&k| says(&texts[k], verb))
                .collect();
            if who.len() >= bounds.1.max(2) && !sayers.iter().any(|(w, _)| *w == who) {
                sayers.push((who, verb));
            }
        }
    }
    // Largest first; ties in the episodes' order, so the result is the
    // same on every run.
    sayers.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(&b.0)));
    let mut taken = vec![false; instances.len()];
    let mut found = Vec::new();
    for (who, _) in sayers {
        let free: Vec<usize> = who.into_iter().filter(|&k| !taken[k]).collect();
        if free.len() < bounds.1.max(2) {
            continue;
        }
        let episodes: Vec<&Memory> = free.iter().map(|&k| instances[k]).collect();
        let members = episodes.iter().map(|m| m.id.clone()).collect();
        if let Some(pattern) = recurrence(None, &episodes, members, bounds, lexicon) {
            for &k in &free {
                taken[k] = true;
            }
            found.push(pattern);
        }
    }
    found
}

/// Each memory's text as tokens.
fn read(memories: &[&Memory], lexicon: &Lexicon) -> Vec<Vec<Token>> {
    memories
        .iter()
        .map(|m| tokens(&m.content, lexicon))
        .collect()
}

/// A pattern's text without its count and dates: "Priya goes running"
/// of "Priya goes running (3 times, …)".
fn sentence_of(content: &str) -> &str {
    content
        .rsplit_once(" (")
        .map_or(content, |(sentence, _)| sentence)
}

/// Whether a pattern's text reads as what its episodes say: a verb phrase
/// at least half of them say ([`said_by_half`]), or, with no verb, what a
/// copula assigns ("Nate was sick with the flu"). Without WordNet no
/// word's part of speech is known, and the text (shared words, the rest
/// elided) passes. `episodes` are the episodes read as tokens ([`read`]).
fn said_by_them(content: &str, episodes: &[Vec<Token>], lexicon: &Lexicon) -> bool {
    if lexicon.wordnet().is_none() {
        return true;
    }
    let words = tokens(sentence_of(content), lexicon);
    if (0..words.len()).any(|k| verb_at(&words, k)) {
        said_by_half(&words, episodes, lexicon)
    } else {
        (0..words.len()).any(|k| predicate_at(&words, k) && !words[k].is_verb())
    }
}

/// Whether `tokens[k]` is a verb said as a predicate ("won", "to `open`"),
/// not a verb form inside a noun phrase: after a determiner ("a `loving`
/// home") or between two content words ("an online `clothing` store").
fn verb_at(tokens: &[Token], k: usize) -> bool {
    let before = k.checked_sub(1).map(|b| &tokens[b]);
    // The first word is the subject whatever its capital says ("Nate
    // `wins` video games"), never a modifier.
    let inside_noun_phrase = before.is_some_and(|b| DETERMINERS.contains(&b.word))
        || (k >= 2
            && before.is_some_and(|b| b.role == Role::Content)
            && tokens.get(k + 1).is_some_and(|a| a.role == Role::Content));
    tokens[k].is_verb() && predicate_at(tokens, k) && !inside_noun_phrase
}

/// Words after which a verb form modifies the noun that follows.
static DETERMINERS: WordClass = WordClass::new("determiners");

/// Whether a pattern's sentence (`words`) is what at least half of its
/// episodes say: its verb phrase ends on a thing (a name, a number or a noun:
/// [`Token::carries_fact`]), and that many episodes say its verb and then
/// that word, with nothing between but function words, the text's own
/// object words and words that run straight into that word ("Jon opens a
/// dance studio": "opening a dance studio", "open his new dance studio").
/// A bare verb ("Nate finds"), a complement left hanging ("finds
/// inspiring"), or an object one episode gave ("feels a sense") or none
/// gave to that verb ("uses the basketball", from "used his contacts in
/// the basketball industry") is no recurrence.
fn said_by_half(words: &[Token], episodes: &[Vec<Token>], lexicon: &Lexicon) -> bool {
    let Some(at) = (0..words.len()).find(|&k| verb_at(words, k)) else {
        return false;
    };
    let (verb, object) = (&words[at], &words[at + 1..]);
    let Some(head) = object.last().filter(|t| t.is_content() && t.carries_fact()) else {
        return false;
    };
    let in_object = |t: &Token| object.iter().any(|o| o.is_content() && o.shares_lemma(t));
    // Words that run straight into the head describe it ("writing her
    // `second` screenplay" says "writes her screenplay"); a word followed
    // by anything else is an object of its own ("uses his `contacts` in
    // the basketball industry" does not say "uses the basketball").
    let describes_head = |text: &[Token], j: usize| {
        let run = (j..text.len())
            .take_while(|&m| {
                text[m].is_content() && !head.shares_lemma(&text[m]) && !verb_at(text, m)
            })
            .count();
        text.get(j + run).is_some_and(|t| head.shares_lemma(t))
    };
    let says = |text: &[Token], k: usize| {
        if !(verb_at(text, k) && verb.same_meaning(&text[k], lexicon)) {
            return false;
        }
        for (j, t) in text.iter().enumerate().skip(k + 1) {
            if !t.is_content() {
                continue;
            }
            // The head ends the object: a verb right after it makes the
            // thing the subject of a verb of its own ("make his studio
            // `work`").
            if head.shares_lemma(t) {
                return text
                    .get(j + 1)
                    .is_none_or(|next| next.role != Role::Content || !next.is_verb());
            }
            if !in_object(t) && !describes_head(text, j) {
                return false;
            }
        }
        false
    };
    let saying = episodes
        .iter()
        .filter(|text| (0..text.len()).any(|k| says(text, k)))
        .count();
    2 * saying >= episodes.len()
}

/// Groups in which every pair is close (complete linkage at the pairs'
/// floor), greedily: pairs best first (ties by index), two groups joining
/// only when every pair across them is among `pairs`. Near-linear in the
/// pairs for the small groups recurrences make, where agglomerating a
/// large component at a low floor is cubic in its size.
fn cliques(n: usize, mut pairs: Vec<(usize, usize, f64)>) -> Vec<Vec<usize>> {
    // Sorted neighbour lists: a pair's test is a binary search, cheaper than
    // hashing millions of pairs when episodes recur a lot.
    let mut neighbours: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &(a, b, _) in &pairs {
        if a < n && b < n {
            neighbours[a].push(b);
            neighbours[b].push(a);
        }
    }
    for list in &mut neighbours {
        list.sort_unstable();
    }
    let close = |x: usize, y: usize| neighbours[x].binary_search(&y).is_ok();
    // The order is total (ties by the pair), so an unstable sort is exact.
    pairs.sort_unstable_by(|x, y| y.2.total_cmp(&x.2).then((x.0, x.1).cmp(&(y.0, y.1))));
    let mut group: Vec<usize> = (0..n).collect();
    let mut members: Vec<Vec<usize>> = (0..n).map(|i| vec![i]).collect();
    for (a, b, _) in pairs {
        if a >= n || b >= n {
            continue;
        }
        let (ga, gb) = (group[a].min(group[b]), group[a].max(group[b]));
        if ga == gb {
            continue;
        }
        let joined = members[ga]
            .iter()
            .all(|&x| members[gb].iter().all(|&y| close(x, y)));
        if !joined {
            continue;
        }
        let moved = std::mem::take(&mut members[gb]);
        for &m in &moved {
            group[m] = ga;
        }
        members[ga].extend(moved);
    }
    let mut out: Vec<Vec<usize>> = members.into_iter().filter(|m| m.len() > 1).collect();
    for m in &mut out {
        m.sort_unstable();
    }
    out.sort();
    out
}

pub fn detect(
    snapshot: &Snapshot,
    prepared: &Prepared<'_>,
    now: Millis,
    settings: &DetectSettings,
    lexicon: &Lexicon,
) -> Vec<PatternCluster> {
    let by_id: BTreeMap<&str, &Memory> = snapshot
        .memories
        .iter()
        .filter(|m| m.user_id == snapshot.user_id)
        .map(|m| (m.id.as_str(), m))
        .collect();
    // Active patterns and their instances (archived ones included: they
    // still say what the recurrence is).
    let mut patterns: BTreeMap<&str, Vec<&Memory>> = BTreeMap::new();
    let mut already = BTreeSet::new();
    for link in snapshot
        .links
        .iter()
        .filter(|l| l.link_type == LinkType::InstanceOf)
    {
        already.insert(link.from_id.as_str());
        let (Some(pattern), Some(instance)) = (
            by_id.get(link.to_id.as_str()),
            by_id.get(link.from_id.as_str()),
        ) else {
            continue;
        };
        if pattern.status == MemoryStatus::Active {
            patterns
                .entry(pattern.id.as_str())
                .or_default()
                .push(instance);
        }
    }
    let since = now.saturating_sub(settings.lookback);
    let episodes: Vec<usize> = prepared
        .items
        .iter()
        .enumerate()
        .filter(|&(i, item)| {
            let m = item.memory;
            // A text longer than the rules read is a story, not one event
            // that recurs, and reading its words against each member's
            // costs the product of their lengths.
            m.kind == MemoryKind::Episodic
                && (since..=now).contains(&m.created_at())
                && !already.contains(m.id.as_str())
                && prepared.readable(i, lexicon)
        })
        .map(|(i, _)| i)
        .collect();
    let mut found = Vec::new();
    // Later occurrences join the pattern they recur in: each candidate
    // against the earlier instances, the best pattern by least similarity.
    let mut joining: BTreeMap<&str, Vec<&Memory>> = BTreeMap::new();
    let mut free = Vec::new();
    for &e in &episodes {
        let episode = prepared.items[e].memory;
        let best = patterns
            .iter()
            .filter_map(|(id, instances)| {
                let least = instances
                    .iter()
                    .map(|m| similarity(episode, m))
                    .try_fold(f64::INFINITY, |acc, s| s.map(|s| acc.min(s)))?;
                if least < settings.pattern_similarity {
                    return None;
                }
                let mut with: Vec<&Memory> = instances.clone();
                with.push(episode);
                core(&with, &read(&with, lexicon), with.len() - 1, lexicon).map(|_| (least, *id))
            })
            .max_by(|a, b| a.0.total_cmp(&b.0).then(b.1.cmp(a.1)));
        match best {
            Some((_, id)) => joining.entry(id).or_default().push(episode),
            None => free.push(e),
        }
    }
    for (id, new) in joining {
        let mut instances = patterns[id].clone();
        instances.extend(new.iter().copied());
        instances.sort_by(|a, b| (a.created_at(), &a.id).cmp(&(b.created_at(), &b.id)));
        instances.dedup_by(|a, b| a.id == b.id);
        let members = new.iter().map(|m| m.id.clone()).collect();
        // Joining episodes are close to every earlier instance, not
        // necessarily to each other: the text is recomputed, the test is not.
        let joined = (f64::NEG_INFINITY, 0);
        let Some(mut pattern) =
            recurrence(Some(id.to_owned()), &instances, members, joined, lexicon)
        else {
            continue;
        };
        // A new text must still be what the instances say; else the
        // pattern keeps the one it has, with the new count and dates.
        if !said_by_them(&pattern.content, &read(&instances, lexicon), lexicon)
            && let Some(earlier) = by_id.get(id)
        {
            let counted = &pattern.content[sentence_of(&pattern.content).len()..];
            pattern.content = format!("{}{counted}", sentence_of(&earlier.content));
        }
        found.push(pattern);
    }
    let local = |i: usize| free.binary_search(&i).unwrap_or(usize::MAX);
    let pairs: Vec<(usize, usize, f64)> = similar_pairs(
        prepared,
        &free,
        &Floor::uniform(settings.pattern_similarity),
        settings.pair_search,
    )
    .into_iter()
    .map(|p| (local(p.first), local(p.second), p.similarity))
    .collect();
    let groups: Vec<Vec<usize>> = cliques(free.len(), pairs)
        .into_iter()
        .filter(|group| group.len() >= settings.pattern_min_size.max(2))
        .collect();
    // Each group's text is written on its own, so the groups are shared out
    // over the cores.
    let recurrences = parallel_map(&groups, |group| {
        let instances: Vec<&Memory> = group
            .iter()
            .map(|&i| prepared.items[free[i]].memory)
            .collect();
        let members = instances.iter().map(|m| m.id.clone()).collect();
        let bounds = (settings.pattern_similarity, settings.pattern_min_size);
        match recurrence(None, &instances, members, bounds, lexicon) {
            Some(pattern) => vec![pattern],
            None => recurrences_within(&instances, bounds, lexicon),
        }
    });
    found.extend(recurrences.into_iter().flatten());
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::testing::*;
    use crate::model::Link;

    fn episode(id: &str, content: &str, day: i64, similarity: f64, axis: usize) -> Memory {
        let mut m = memory(id, content, T0 + day * DAY_MS, vector(similarity, axis));
        m.kind = MemoryKind::Episodic;
        m
    }

    fn run(snapshot: &Snapshot, now: Millis) -> Vec<PatternCluster> {
        let mut settings = settings();
        settings.lookback = 30 * DAY_MS;
        detect(
            snapshot,
            &Prepared::new(snapshot),
            now,
            &settings,
            &lexicon(),
        )
    }

    #[test]
    fn an_episode_recurring_on_three_days_becomes_a_generalised_pattern() {
        let snapshot = snapshot(vec![
            episode("old", "Ran the tests before committing", -60, 0.95, 1),
            episode(
                "a",
                "Ran the test suite before committing the login fix",
                0,
                0.95,
                2,
            ),
            episode(
                "b",
                "Ran the tests before committing the parser",
                1,
                0.95,
                3,
            ),
            episode("c", "Ran all tests before committing again", 2, 0.95, 4),
            episode("x", "Had lunch at the Italian place", 3, 0.0, 5),
        ]);
        let found = run(&snapshot, T0 + 3 * DAY_MS);
        assert_eq!(found.len(), 1, "{found:?}");
        let p = &found[0];
        assert_eq!(
            p.members,
            vec!["a", "b", "c"],
            "the 60-day-old one is outside the window"
        );
        assert_eq!(p.pattern_id, None);
        assert_eq!(p.days, 3);
        assert!(
            p.content.starts_with("Ran the test") && p.content.contains("before committing"),
            "{}",
            p.content
        );
        assert!(
            !p.content.contains("login") && !p.content.contains("parser"),
            "{}",
            p.content
        );
        assert!(
            p.content
                .ends_with("(3 times, 29 August 2026 – 31 August 2026)"),
            "{}",
            p.content
        );
        for m in &snapshot.memories {
            assert_ne!(p.content, m.content);
        }
    }

    #[test]
    fn a_pattern_text_keeps_no_article_or_punctuation_before_an_elision() {
        // "a" is a one-letter word like the "s" of "Nate's", but an article
        // that leads into an elided word says nothing.
        let snapshot = snapshot(vec![
            episode(
                "a",
                "Jon worked on his business: a dance studio",
                0,
                0.95,
                1,
            ),
            episode("b", "Jon worked on his business: a new website", 1, 0.95, 2),
            episode(
                "c",
                "Jon worked on his business: a marketing plan",
                2,
                0.95,
                3,
            ),
        ]);
        let found = run(&snapshot, T0 + 2 * DAY_MS);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0]
                .content
                .starts_with("Jon worked on his business … (3 times"),
            "{}",
            found[0].content
        );
    }

    #[test]
    fn episodes_longer_than_the_rules_read_make_no_pattern() {
        // Each recurs on its own day, but with a story around it of more
        // words than the rules read: no one event, and too long to read.
        let story = |day: &str| {
            format!(
                "Ran the tests before committing. {}",
                vec![format!("Then the {day} meeting ran long."); 60].join(" ")
            )
        };
        let long = snapshot(vec![
            episode("a", &story("Monday"), 0, 0.95, 2),
            episode("b", &story("Tuesday"), 1, 0.95, 3),
            episode("c", &story("Wednesday"), 2, 0.95, 4),
        ]);
        let prepared = Prepared::new(&long);
        assert!((0..prepared.items.len()).all(|k| !prepared.readable(k, &lexicon())));
        assert!(run(&long, T0 + 3 * DAY_MS).is_empty());
    }

    #[test]
    fn similar_episodes_on_one_day_or_without_a_shared_predicate_are_no_pattern() {
        let same_day = snapshot(vec![
            episode("a", "Ran the tests before committing", 0, 0.95, 2),
            episode("b", "Ran the tests before committing again", 0, 0.95, 3),
            episode("c", "Ran all tests before committing", 0, 0.95, 4),
        ]);
        assert!(run(&same_day, T0 + DAY_MS).is_empty());
        let topic = snapshot(vec![
            episode("a", "Gina opened her online clothing store", 0, 0.95, 2),
            episode(
                "b",
                "Gina chose new flooring for the dance studio",
                1,
                0.95,
                3,
            ),
            episode("c", "Gina met a wholesaler downtown", 2, 0.95, 4),
        ]);
        assert!(
            run(&topic, T0 + 3 * DAY_MS).is_empty(),
            "only the name is shared"
        );
    }

    #[test]
    fn a_later_occurrence_joins_the_existing_pattern() {
        let mut pattern = memory(
            "p",
            "Ran the tests before committing … (3 times)",
            T0,
            vector(0.9, 9),
        );
        pattern.category = Some(PATTERN_CATEGORY.to_owned());
        let mut snapshot = snapshot(vec![
            episode("a", "Ran the tests before committing", 0, 0.95, 2),
            episode(
                "b",
                "Ran the tests before committing the parser",
                1,
                0.95,
                3,
            ),
            episode("c", "Ran all tests before committing", 2, 0.95, 4),
            episode("d", "Ran the tests before committing the docs", 9, 0.95, 5),
            pattern,
        ]);
        snapshot.links = ["a", "b", "c"]
            .iter()
            .map(|from| Link {
                user_id: "u".into(),
                from_id: (*from).into(),
                to_id: "p".into(),
                link_type: LinkType::InstanceOf,
                confidence: 1.0,
                reason: String::new(),
                created_at: T0,
                run_id: None,
            })
            .collect();
        let found = run(&snapshot, T0 + 10 * DAY_MS);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].pattern_id.as_deref(), Some("p"));
        assert_eq!(found[0].members, vec!["d"]);
        assert_eq!(found[0].instances, vec!["a", "b", "c", "d"]);
        assert!(
            found[0].content.contains("(4 times,"),
            "{}",
            found[0].content
        );
    }
}
