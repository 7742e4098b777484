//! WordNet, the lexical resource behind alignment: lemmas (with the
//! irregular forms of its exception lists), synonyms, antonyms, word
//! classes (nouns under one direct hypernym), the verbs that end an
//! activity and the nouns that name a time.
//!
//! Read from the Princeton database files (`index.*`, `data.*`, `*.exc`)
//! that `make models` fetches from Debian's `wordnet-base` package and
//! checksums. Parsing is the only I/O; every query afterwards is pure.

use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use std::path::{Path, PathBuf};
use std::sync::RwLock;

use sha2::{Digest, Sha256};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum WordNetError {
    #[error(
        "WordNet file {path} cannot be read (run `make models`, or set \
         consolidation.wordnet_dir / ENGRAM_CONSOLIDATION_WORDNET_DIR to a WordNet 3 `dict` \
         directory): {source}"
    )]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("WordNet file {path} line {line} is malformed")]
    Malformed { path: PathBuf, line: usize },
}

/// Parts of speech, in file order.
const POS: [&str; 4] = ["noun", "verb", "adj", "adv"];
const NOUN: usize = 0;
const VERB: usize = 1;
const ADJECTIVE: usize = 2;
const ADVERB: usize = 3;
/// The lexicographer file of nouns for people (`noun.person`).
const NOUN_PERSON: &str = "18";
/// The lexicographer file of nouns for times and periods (`noun.time`).
const NOUN_TIME: &str = "28";
/// The lexicographer file of nouns for places (`noun.location`).
const NOUN_LOCATION: &str = "15";
/// The lexicographer file of natural objects (`noun.object`), where
/// continents and islands are ("Asia", "Europe").
const NOUN_OBJECT: &str = "17";
/// The lexicographer file of verbs of feeling (`verb.emotion`).
const VERB_EMOTION: &str = "37";
/// The lexicographer file of verbs of going (`verb.motion`: "travel",
/// "fly", "commute").
const VERB_MOTION: &str = "38";
/// The lexicographer files of verbs of going (`verb.motion`) and of being
/// (`verb.stative`: "attend", "stay", "live").
const VERB_PRESENCE: [&str; 2] = [VERB_MOTION, "42"];
/// The lexicographer file of verbs of telling (`verb.communication`).
const VERB_COMMUNICATION: &str = "32";
/// The lexicographer file of verbs of change (`verb.change`: "increase",
/// "switch", "go up").
const VERB_CHANGE: &str = "30";

/// How many of a word's most frequent senses count for synonymy and word
/// classes: rare senses make nearly any two words synonyms ("run" and
/// "work" share one of run's 41 verb senses).
const COMMON_SENSES: usize = 3;

/// Indefinite pronouns WordNet lacks, read as the most general word for
/// what they stand for: any thing, or any person (WordNet's "someone").
const ANY_THING: [&str; 2] = ["something", "anything"];
const ANY_PERSON: [&str; 2] = ["anyone", "anybody"];

/// A pointer of a data line: symbol, target offset, target part of speech,
/// source/target word numbers.
type Pointer<'a> = (&'a str, u32, usize, u16);

#[derive(Default)]
struct Synset {
    /// Its first word, to name a class.
    name: String,
    hypernyms: Vec<u32>,
    /// The wholes it is a part of ("Washington" of the District of
    /// Columbia, that of the United States).
    wholes: Vec<u32>,
}

/// Spellings [`WordNet::word`] remembers: a few megabytes, well above the
/// words of one user's texts.
const KNOWN_WORDS: usize = 1 << 16;

/// The WordNet database, loaded.
#[derive(Default)]
pub struct WordNet {
    /// Per part of speech: lemma → synsets, most frequent sense first.
    senses: [HashMap<String, Vec<u32>>; 4],
    synsets: Vec<Synset>,
    /// Word → the words WordNet marks as its antonyms.
    antonyms: HashMap<String, HashSet<String>>,
    /// Antonym pairs opposed only as nouns for people ("man" / "woman",
    /// "buyer" / "seller"), both ways.
    person_antonyms: HashSet<(String, String)>,
    /// Per part of speech: inflected form → base forms.
    exceptions: [HashMap<String, Vec<String>>; 4],
    /// The verb sense "put an end to a state or an activity" (discontinue,
    /// stop, cease, give up, quit, lay off): the first sense of
    /// "discontinue".
    ending: Option<u32>,
    /// The verb senses of leaving: "go away from a place" (the first
    /// sense of "leave"), "remove oneself from an association with or
    /// participation in" (above "leave office", "resign", "retire") and
    /// "move out of one's old house or office" (of "move out").
    leaving: Vec<u32>,
    /// Of those, leaving an association ("quit", "resign", "retire"),
    /// which is for good, as going away ("left the office") need not be.
    quitting: Vec<u32>,
    /// The verb senses of parting with what one has: selling ("exchange
    /// or deliver for money", the first sense of "sell"), giving ("give as
    /// a present", above "donate" and "give away") and losing ("fail to
    /// keep; cease to have", the first sense of "lose").
    parting: Vec<u32>,
    /// Of those, handing one's thing over (selling, giving), which, unlike
    /// losing ("lost the game"), has no sense of another kind.
    handing_over: Vec<u32>,
    /// The verb sense "discontinue an association or relation; go
    /// different ways" (separate, split up, break up), above "divorce".
    separating: Vec<u32>,
    /// The verb sense "win a victory over" (the first sense of "defeat"),
    /// above "beat", "trounce" and "outscore": of two sides, only one wins
    /// a given contest.
    defeating: Vec<u32>,
    /// The noun sense "color" (a visual attribute of things), under which
    /// every colour lies, with a hue or without.
    colour: Option<u32>,
    /// Noun synsets of times and periods ("year", "March", "week").
    times: HashSet<u32>,
    /// What [`WordNet::word`] found, by spelling, up to [`KNOWN_WORDS`]
    /// of them (names and numbers would otherwise grow it without end).
    known: RwLock<HashMap<String, Word>>,
    /// Noun synsets of people ("nurse", "mother", "friend").
    people: HashSet<u32>,
    /// Noun synsets of places ("Berlin", "Texas", "city").
    places: HashSet<u32>,
    /// Noun synsets of land one can be in: places and natural objects
    /// ("Asia", "Hawaii").
    lands: HashSet<u32>,
    /// Verb synsets of going or being somewhere ("visit", "attend").
    presence: HashSet<u32>,
    /// Verb synsets of going ("travel", "fly"), a part of `presence`.
    motion: HashSet<u32>,
    /// Verb synsets of telling ("say", "announce", "warn").
    telling: HashSet<u32>,
    /// Verb synsets of change ("increase", "go up", "switch").
    changing: HashSet<u32>,
    /// Verb synsets of bringing a thing to its end or calling it off
    /// ("end", "finish", "cancel", "call off").
    concluding: Vec<u32>,
    /// Verb synsets of putting one thing in another's place ("replace",
    /// "substitute", "swap").
    replacing: Vec<u32>,
    /// Verb synsets of feeling ("like", "love", "hate").
    feelings: HashSet<u32>,
    /// Noun synsets defined as another name for their hypernym ("lady":
    /// "a polite name for any woman"), with that hypernym.
    other_names: HashMap<u32, Vec<u32>>,
    /// An adjective sense → the noun senses derived from it ("allergic" →
    /// "allergy"): "is allergic to shellfish" states what "has a
    /// shellfish allergy" does.
    derived_nouns: HashMap<u32, Vec<u32>>,
    /// A word a verb sense is defined as being ("employed": "work", "be
    /// employed"; "seated": "sit") → those senses, where each is common
    /// for a word of its own: "is employed at" says "works at".
    defined_as_being: HashMap<String, Vec<u32>>,
    /// The verb a verb sense's definition opens with, where that verb is
    /// also its hypernym ("prefer": "like better"): the sense is that verb
    /// and says more.
    opened_by: HashMap<u32, String>,
    /// An adverb of manner → the adjective it is formed from, where its
    /// most frequent sense is that adjective's ("fluently" → "fluent",
    /// "quickly" → "quick"; not "hardly", which first means "barely").
    manner_of: HashMap<String, String>,
    /// Short digest of the files read, for the run's config hash.
    digest: String,
}

impl std::fmt::Debug for WordNet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WordNet")
            .field("synsets", &self.synsets.len())
            .field("antonyms", &self.antonyms.len())
            .field("digest", &self.digest)
            .finish()
    }
}

fn read(dir: &Path, name: &str, hasher: &mut Sha256) -> Result<String, WordNetError> {
    let path = dir.join(name);
    let bytes = std::fs::read(&path).map_err(|source| WordNetError::Read {
        path: path.clone(),
        source,
    })?;
    hasher.update(&bytes);
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Whether `adverb` is spelled as `adjective` with an adverb's ending:
/// "fluent" + "ly", "happy" → "happily", "simple" → "simply", "basic" →
/// "basically".
fn formed_from(adverb: &str, adjective: &str) -> bool {
    let Some(stem) = adverb.strip_suffix("ly") else {
        return false;
    };
    stem == adjective
        || stem
            .strip_suffix('i')
            .is_some_and(|s| adjective.strip_suffix('y') == Some(s))
        || adjective
            .strip_suffix("le")
            .is_some_and(|s| s == stem || format!("{s}l") == stem)
        || stem.strip_suffix("al") == Some(adjective)
}

/// A word as WordNet writes it ("ice_cream", "full(a)") in engram's
/// normalised form ("ice cream", "full").
fn lemma(word: &str) -> String {
    let word = word.split('(').next().unwrap_or(word);
    word.replace('_', " ").to_lowercase()
}

/// Registers a definition may give a word in: "a `polite` name for", "an
/// `informal` term for", "a `friendly informal` reference to".
const REGISTERS: &str = "polite informal friendly colloquial slang familiar affectionate";

/// The words a definition says the word is another name for ("a polite
/// name for any woman": `woman`; "an informal term for a youth or man":
/// `youth`, `man`), up to four.
fn named_otherwise(definition: &str) -> Option<Vec<String>> {
    let definition = definition.trim().to_lowercase();
    let mut words = definition
        .split(|c: char| !(c.is_ascii_lowercase() || c == '-'))
        .filter(|w| !w.is_empty())
        .skip_while(|w| matches!(*w, "a" | "an"))
        .peekable();
    let mut registers = 0;
    while words
        .next_if(|w| REGISTERS.split(' ').any(|r| r == *w))
        .is_some()
    {
        registers += 1;
    }
    let (Some(noun), Some(relation)) = (words.next(), words.next()) else {
        return None;
    };
    let names_another = registers > 0
        && matches!(noun, "name" | "term" | "reference")
        && matches!(relation, "for" | "to");
    names_another.then(|| {
        words
            .filter(|w| !matches!(*w, "a" | "an" | "any" | "your" | "or"))
            .take(4)
            .map(str::to_owned)
            .collect()
    })
}

/// Prepositions a definition of being may end with ("be dressed `in`",
/// "be fond `of`").
const DEFINING_PREPOSITIONS: [&str; 11] = [
    "in", "on", "at", "to", "with", "by", "of", "for", "from", "into", "about",
];

/// Openings of a definition that deny what follows.
const DENYING: [&str; 11] = [
    "not",
    "abstain from",
    "abstaining from",
    "fail to",
    "failing to",
    "refrain from",
    "lacking",
    "without",
    "devoid of",
    "unable to",
    "incapable of",
];

/// Of the [`DENYING`] openings, those a noun follows ("lacking training").
const DENYING_A_THING: [&str; 3] = ["lacking", "without", "devoid of"];

/// The word a definition denies, when that is all it says: "abstain from
/// eating", "not genuine or real", "failing to speak or communicate etc
/// when expected to" (a clause after "when", "especially" or "as" only
/// qualifies). Not "not involving heat", which denies a phrase. With the
/// parts of speech to read it in, most likely first: a noun after
/// "lacking", "without" or "devoid of" ("lacking training"), a verb or
/// an adjective otherwise.
fn denied_by_definition(definition: &str) -> Option<(String, [usize; 3])> {
    let definition = definition.trim().trim_end_matches('.').to_lowercase();
    let (opening, rest) = DENYING.iter().find_map(|opening| {
        let rest = definition.strip_prefix(opening)?.strip_prefix(' ')?;
        Some((*opening, rest))
    })?;
    let spaced = rest.replace(',', " , ");
    let mut tokens = spaced
        .split_whitespace()
        .skip_while(|w| matches!(*w, "a" | "an" | "any"));
    let is_word = |w: &str| !w.is_empty() && w.chars().all(|c| c.is_ascii_lowercase() || c == '-');
    let denied = tokens.next().filter(|w| is_word(w))?.to_owned();
    // Then only more words joined to it ("or real"), up to a qualifying
    // clause.
    let mut expects_word = false;
    for token in tokens {
        match token {
            "," | "or" | "and" => expects_word = true,
            "etc" if !expects_word => {}
            "when" | "especially" | "as" if !expects_word => break,
            word if expects_word && is_word(word) => expects_word = false,
            _ => return None,
        }
    }
    let order = if DENYING_A_THING.contains(&opening) {
        [NOUN, ADJECTIVE, VERB]
    } else {
        [VERB, ADJECTIVE, NOUN]
    };
    (!expects_word).then_some((denied, order))
}

impl WordNet {
    /// Reads the database files in `dir`.
    pub fn load(dir: &Path) -> Result<Self, WordNetError> {
        let mut hasher = Sha256::new();
        let mut wordnet = WordNet::default();
        let mut ids: HashMap<(usize, u32), u32> = HashMap::new();
        // Antonym pointers name a word of another synset by position, so
        // they are resolved once every synset's words are known.
        let mut words: Vec<Vec<String>> = Vec::new();
        let mut part_of_speech: Vec<usize> = Vec::new();
        let mut pending: Vec<(u32, usize, (usize, u32), usize)> = Vec::new();
        let mut pending_hypernyms: Vec<(u32, (usize, u32))> = Vec::new();
        let mut pending_similar: Vec<(u32, (usize, u32))> = Vec::new();
        let mut pending_wholes: Vec<(u32, (usize, u32))> = Vec::new();
        let mut pending_derived: Vec<(u32, (usize, u32))> = Vec::new();
        let mut denials: Vec<(u32, (String, [usize; 3]))> = Vec::new();
        let mut named: Vec<(u32, Vec<String>)> = Vec::new();
        // Verb senses defined as being one word, with that word.
        let mut being: Vec<(u32, String)> = Vec::new();
        // Verb senses with the verb their definition opens with.
        let mut opened: Vec<(u32, String)> = Vec::new();
        // An adverb synset's word, with the adjective word it pertains to.
        let mut pertaining: Vec<(u32, usize, (usize, u32), usize)> = Vec::new();
        for (pos, name) in POS.iter().enumerate() {
            let file = format!("data.{name}");
            let text = read(dir, &file, &mut hasher)?;
            let malformed = |line: usize| WordNetError::Malformed {
                path: dir.join(&file),
                line,
            };
            for (n, line) in text.lines().enumerate() {
                if line.starts_with(' ') || line.is_empty() {
                    continue;
                }
                let mut halves = line.split(" | ");
                let body = halves.next().unwrap_or(line);
                let definition = halves.next().and_then(|gloss| gloss.split(';').next());
                let fields: Vec<&str> = body.split(' ').collect();
                let parse = || -> Option<(u32, Vec<String>, Vec<Pointer<'_>>)> {
                    let offset: u32 = fields.first()?.parse().ok()?;
                    let count = usize::from_str_radix(fields.get(3)?, 16).ok()?;
                    let names: Vec<String> = (0..count)
                        .map(|i| fields.get(4 + 2 * i).map(|w| lemma(w)))
                        .collect::<Option<_>>()?;
                    let at = 4 + 2 * count;
                    let pointers: usize = fields.get(at)?.parse().ok()?;
                    let mut found = Vec::with_capacity(pointers);
                    for p in 0..pointers {
                        let base = at + 1 + 4 * p;
                        let target_pos = match *fields.get(base + 2)? {
                            "n" => 0,
                            "v" => 1,
                            "a" | "s" => 2,
                            "r" => 3,
                            _ => return None,
                        };
                        found.push((
                            *fields.get(base)?,
                            fields.get(base + 1)?.parse().ok()?,
                            target_pos,
                            u16::from_str_radix(fields.get(base + 3)?, 16).ok()?,
                        ));
                    }
                    Some((offset, names, found))
                };
                let (offset, names, pointers) = parse().ok_or_else(|| malformed(n + 1))?;
                let id = wordnet.synsets.len() as u32;
                ids.insert((pos, offset), id);
                if pos == NOUN && fields.get(1) == Some(&NOUN_PERSON) {
                    wordnet.people.insert(id);
                }
                if pos == NOUN && fields.get(1) == Some(&NOUN_TIME) {
                    wordnet.times.insert(id);
                }
                if pos == NOUN && fields.get(1) == Some(&NOUN_LOCATION) {
                    wordnet.places.insert(id);
                    wordnet.lands.insert(id);
                }
                if pos == NOUN && fields.get(1) == Some(&NOUN_OBJECT) {
                    wordnet.lands.insert(id);
                }
                if pos == VERB && fields.get(1) == Some(&VERB_EMOTION) {
                    wordnet.feelings.insert(id);
                }
                if pos == VERB && fields.get(1).is_some_and(|f| VERB_PRESENCE.contains(f)) {
                    wordnet.presence.insert(id);
                }
                if pos == VERB && fields.get(1) == Some(&VERB_MOTION) {
                    wordnet.motion.insert(id);
                }
                if pos == VERB && fields.get(1) == Some(&VERB_COMMUNICATION) {
                    wordnet.telling.insert(id);
                }
                if pos == VERB && fields.get(1) == Some(&VERB_CHANGE) {
                    wordnet.changing.insert(id);
                }
                wordnet.synsets.push(Synset {
                    name: names.first().cloned().unwrap_or_default(),
                    hypernyms: Vec::new(),
                    wholes: Vec::new(),
                });
                if (pos == VERB || pos == ADJECTIVE)
                    && let Some(denied) = definition.and_then(denied_by_definition)
                {
                    denials.push((id, denied));
                }
                if pos == NOUN
                    && let Some(names) = definition.and_then(named_otherwise)
                {
                    named.push((id, names));
                }
                if pos == VERB
                    && let Some(definition) = definition
                {
                    let mut words = definition.split_whitespace();
                    match (words.next(), words.next(), words.next(), words.next()) {
                        (Some("be"), Some(state), last, None)
                            if last.is_none_or(|p| DEFINING_PREPOSITIONS.contains(&p)) =>
                        {
                            being.push((id, state.to_owned()))
                        }
                        (Some(verb), Some(_), ..) => opened.push((id, verb.to_owned())),
                        _ => {}
                    }
                }
                words.push(names);
                part_of_speech.push(pos);
                for (symbol, target, target_pos, source_target) in pointers {
                    // A pointer from one word of this synset to one word of
                    // the target's (antonyms, pertainyms).
                    let word_pointer = (
                        id,
                        usize::from(source_target >> 8),
                        (target_pos, target),
                        usize::from(source_target & 0xff),
                    );
                    match symbol {
                        "@" | "@i" => pending_hypernyms.push((id, (target_pos, target))),
                        "#p" => pending_wholes.push((id, (target_pos, target))),
                        "+" if pos == ADJECTIVE && target_pos == NOUN => {
                            pending_derived.push((id, (target_pos, target)))
                        }
                        // Only a satellite's pointer to its head: a head's
                        // pointers to its satellites run the other way.
                        "&" if fields.get(2) == Some(&"s") => {
                            pending_similar.push((id, (target_pos, target)))
                        }
                        "\\" if pos == ADVERB => pertaining.push(word_pointer),
                        "!" => pending.push(word_pointer),
                        _ => {}
                    }
                }
            }
        }
        for (id, target) in pending_hypernyms {
            if let Some(&hypernym) = ids.get(&target) {
                wordnet.synsets[id as usize].hypernyms.push(hypernym);
            }
        }
        // Another name is a synonym of the hypernym its definition names
        // ("any `woman`"), not a kind of it.
        for (id, names) in named {
            let hypernyms: Vec<u32> = wordnet.synsets[id as usize]
                .hypernyms
                .iter()
                .copied()
                .filter(|h| words[*h as usize].iter().any(|w| names.contains(w)))
                .collect();
            if !hypernyms.is_empty() {
                wordnet.other_names.insert(id, hypernyms);
            }
        }
        for (id, target) in pending_derived {
            if let Some(&noun) = ids.get(&target) {
                wordnet.derived_nouns.entry(id).or_default().push(noun);
            }
        }
        for (id, target) in pending_wholes {
            if let Some(&whole) = ids.get(&target) {
                wordnet.synsets[id as usize].wholes.push(whole);
            }
        }
        // The words opposed to each synset's own words, for indirect
        // antonyms below.
        let mut opposites: HashMap<u32, Vec<(String, u32)>> = HashMap::new();
        let mut as_people: HashSet<(String, String)> = HashSet::new();
        let mut otherwise: HashSet<(String, String)> = HashSet::new();
        let mut opposed_feelings: Vec<(u32, u32)> = Vec::new();
        // The word a pointer names by its 1-based position in a synset.
        let name = |synset: u32, at: usize| words[synset as usize].get(at.wrapping_sub(1));
        for (id, source, target, target_word) in pending {
            let Some(&other) = ids.get(&target) else {
                continue;
            };
            if wordnet.feelings.contains(&id) && wordnet.feelings.contains(&other) {
                opposed_feelings.push((id, other));
            }
            if let (Some(a), Some(b)) = (name(id, source), name(other, target_word)) {
                wordnet.add_antonyms(a, b);
                opposites.entry(id).or_default().push((b.clone(), other));
                let kind = if wordnet.people.contains(&id) {
                    &mut as_people
                } else {
                    &mut otherwise
                };
                kind.insert((a.clone(), b.clone()));
                kind.insert((b.clone(), a.clone()));
            }
        }
        for (pos, name) in POS.iter().enumerate() {
            let file = format!("index.{name}");
            let text = read(dir, &file, &mut hasher)?;
            for line in text.lines().filter(|l| !l.starts_with(' ')) {
                let fields: Vec<&str> = line.split(' ').filter(|f| !f.is_empty()).collect();
                let (Some(word), Some(count)) = (
                    fields.first(),
                    fields.get(2).and_then(|c| c.parse::<usize>().ok()),
                ) else {
                    continue;
                };
                let synsets: Vec<u32> = fields[fields.len().saturating_sub(count)..]
                    .iter()
                    .filter_map(|o| o.parse().ok())
                    .filter_map(|o: u32| ids.get(&(pos, o)).copied())
                    .collect();
                wordnet.senses[pos].insert(lemma(word), synsets);
            }
            let text = read(dir, &format!("{name}.exc"), &mut hasher)?;
            for line in text.lines() {
                let mut fields = line.split(' ').filter(|f| !f.is_empty());
                if let Some(form) = fields.next() {
                    wordnet.exceptions[pos]
                        .entry(lemma(form))
                        .or_default()
                        .extend(fields.map(lemma));
                }
            }
        }
        // Indirect antonyms, each only in a sense of the word that is
        // common, as rare senses oppose nearly anything: WordNet marks an
        // opposition on one word of a synset, and the synset's other words
        // share it in any part of speech ("near, close": "close" / "far";
        // "hit, strike": "strike" / "miss"; "outside, outdoors": "outside" /
        // "indoors"), and an adjective similar to a head is opposed to the
        // head's antonym when that is the adjective's most frequent sense
        // ("huge" / "small"; "white" is similar to "pure" only in its third
        // sense, "in shining white armor"). An adjective in a rarer sense
        // is opposed where the opposite, in its own most frequent sense,
        // selects that sense: "married" means joined in matrimony, so
        // "single" beside it is "unmarried, single" (its fourth sense).
        // Not nouns or verbs, whose rare senses this would oppose to plain
        // words ("denial" / "prosecution", "tire" / "interest", "force" /
        // "push").
        let mut indirect = Vec::new();
        for (&head, opposed) in &opposites {
            let pos = part_of_speech[head as usize];
            for word in &words[head as usize] {
                let common = wordnet.ranks(pos, word, head, COMMON_SENSES);
                let kind = if wordnet.people.contains(&head) {
                    &mut as_people
                } else {
                    &mut otherwise
                };
                for (o, opposite) in opposed {
                    let selected = pos == ADJECTIVE && wordnet.ranks(ADJECTIVE, o, *opposite, 1);
                    if common || selected {
                        kind.insert((word.clone(), o.clone()));
                        kind.insert((o.clone(), word.clone()));
                        indirect.push((word.clone(), o.clone()));
                    }
                }
            }
        }
        wordnet.person_antonyms = as_people.difference(&otherwise).cloned().collect();
        for (satellite, head) in pending_similar {
            let Some(&head) = ids.get(&head) else {
                continue;
            };
            for (opposite, _) in opposites.get(&head).into_iter().flatten() {
                for word in &words[satellite as usize] {
                    if wordnet.ranks(ADJECTIVE, word, satellite, 1) {
                        indirect.push((word.clone(), opposite.clone()));
                    }
                }
            }
        }
        // A verb of feeling names its hypernym's feeling, more strongly or
        // more precisely ("adore" is to love, "hate" to dislike), so it is
        // opposed to what the hypernym is opposed to, and to that
        // opposite's own kinds: "enjoys" / "hates", "likes" / "hates".
        // Only feelings: a kind of motion is not opposed to every kind of
        // its opposite.
        let mut kinds: HashMap<u32, Vec<u32>> = HashMap::new();
        for &feeling in &wordnet.feelings {
            for &hypernym in &wordnet.synsets[feeling as usize].hypernyms {
                kinds.entry(hypernym).or_default().push(feeling);
            }
        }
        let common_words = |synset: u32| -> Vec<String> {
            words[synset as usize]
                .iter()
                .filter(|word| wordnet.ranks(VERB, word, synset, COMMON_SENSES))
                .cloned()
                .collect()
        };
        let family = |head: u32| -> Vec<String> {
            std::iter::once(head)
                .chain(kinds.get(&head).into_iter().flatten().copied())
                .flat_map(common_words)
                .collect()
        };
        for (a, b) in opposed_feelings {
            let opposite = family(b);
            for p in family(a) {
                indirect.extend(opposite.iter().map(|q| (p.clone(), q.clone())));
            }
        }
        // A verb or adjective defined as the denial of one word ("fast":
        // "abstain from eating"; "silent": "failing to speak or
        // communicate") is opposed to that word and its synonyms in its
        // first sense ("talk", "speak"), in a common sense of its own.
        // The synonyms are the words of that sense, in the first part of
        // speech the definition allows that knows the word, for which
        // the sense is common too ("see" means "experience" only rarely).
        let first_sense_words = |word: &str, order: [usize; 3]| -> Vec<String> {
            order
                .into_iter()
                .find_map(|pos| {
                    let base = wordnet.base_forms(word, pos).into_iter().next()?;
                    let first = *wordnet.senses[pos].get(&base)?.first()?;
                    let common = words[first as usize]
                        .iter()
                        .filter(|w| wordnet.ranks(pos, w, first, COMMON_SENSES))
                        .cloned();
                    Some(common.collect())
                })
                .unwrap_or_default()
        };
        for (synset, (denied, order)) in denials {
            let pos = part_of_speech[synset as usize];
            let opposed = first_sense_words(&denied, order);
            for word in &words[synset as usize] {
                if wordnet.ranks(pos, word, synset, COMMON_SENSES) {
                    indirect.extend(opposed.iter().map(|o| (word.clone(), o.clone())));
                }
            }
        }
        for (a, b) in indirect {
            wordnet.add_antonyms(&a, &b);
        }
        // A definition opening with a verb names what the sense is only
        // where WordNet also files it under that verb ("prefer": "like
        // better", a kind of liking; not "run": "move fast", whose
        // hypernym is "travel rapidly").
        wordnet.opened_by = opened
            .into_iter()
            .filter(|(id, verb)| {
                let senses = wordnet.senses[VERB].get(verb.as_str());
                wordnet.synsets[*id as usize]
                    .hypernyms
                    .iter()
                    .any(|h| senses.is_some_and(|s| s.contains(h)))
            })
            .collect();
        // A state a verb is defined as being: a participle ("employed") or
        // an adjective that is no adverb too (not "about", "asleep"), not
        // another verb's irregular past ("left": "remain", "be left"), in
        // a sense common for a word of the verb's own other than "be".
        for (id, state) in being {
            let participle = state.ends_with("ed") || state.ends_with("ing");
            let adjective = wordnet.senses[ADJECTIVE].contains_key(&state)
                && !wordnet.senses[ADVERB].contains_key(&state);
            let common = words[id as usize]
                .iter()
                .any(|w| w != "be" && wordnet.ranks(VERB, w, id, COMMON_SENSES));
            if (participle || adjective) && common && !wordnet.exceptions[VERB].contains_key(&state)
            {
                wordnet.defined_as_being.entry(state).or_default().push(id);
            }
        }
        wordnet.ending = wordnet.senses[VERB]
            .get("discontinue")
            .and_then(|senses| senses.first().copied());
        let first_verb_sense = |lemma: &str| {
            wordnet.senses[VERB]
                .get(lemma)
                .and_then(|senses| senses.first().copied())
        };
        let above_first = |lemma: &str| {
            first_verb_sense(lemma)
                .and_then(|s| wordnet.synsets[s as usize].hypernyms.first().copied())
        };
        // Of "move out", the sense that is a kind of moving (moving out of
        // one's home), not "cause to leave" ("moved out the furniture").
        let moving_house = wordnet.senses[VERB]
            .get("move")
            .cloned()
            .unwrap_or_default();
        let moving_out = wordnet.senses[VERB]
            .get("move out")
            .into_iter()
            .flatten()
            .copied()
            .filter(|&s| {
                wordnet.synsets[s as usize]
                    .hypernyms
                    .iter()
                    .any(|h| moving_house.contains(h))
            })
            .collect::<Vec<u32>>();
        wordnet.quitting = above_first("leave office").into_iter().collect();
        wordnet.leaving = first_verb_sense("leave")
            .into_iter()
            .chain(wordnet.quitting.iter().copied())
            .chain(moving_out)
            .collect();
        wordnet.separating = above_first("divorce").into_iter().collect();
        wordnet.defeating = first_verb_sense("defeat").into_iter().collect();
        // "end" in its two first senses: to have an end, and to bring one
        // about ("finish" the program is a kind of the second).
        wordnet.concluding = wordnet.senses[VERB]
            .get("end")
            .into_iter()
            .flat_map(|senses| senses.iter().take(2).copied())
            .chain(first_verb_sense("cancel"))
            .collect();
        wordnet.replacing = first_verb_sense("replace").into_iter().collect();
        wordnet.handing_over = [first_verb_sense("sell"), above_first("donate")]
            .into_iter()
            .flatten()
            .collect();
        wordnet.parting = wordnet
            .handing_over
            .iter()
            .copied()
            .chain(first_verb_sense("lose"))
            .collect();
        wordnet.colour = wordnet.senses[NOUN]
            .get("color")
            .and_then(|senses| senses.first().copied());
        wordnet.digest = hasher
            .finalize()
            .iter()
            .take(8)
            .map(|b| format!("{b:02x}"))
            .collect();
        for (id, source, target, target_word) in pertaining {
            let Some(&adjective) = ids.get(&target) else {
                continue;
            };
            let (Some(adverb), Some(base)) = (name(id, source), name(adjective, target_word))
            else {
                continue;
            };
            let first = wordnet.senses[ADVERB]
                .get(adverb)
                .and_then(|senses| senses.first());
            if first == Some(&id) && formed_from(adverb, base) {
                wordnet.manner_of.insert(adverb.clone(), base.clone());
            }
        }
        Ok(wordnet)
    }

    /// Whether `synset` is among the `within` most frequent senses of the
    /// lemma `word` as part of speech `pos`.
    fn ranks(&self, pos: usize, word: &str, synset: u32, within: usize) -> bool {
        self.senses[pos]
            .get(word)
            .is_some_and(|senses| senses.iter().take(within).any(|s| *s == synset))
    }

    fn add_antonyms(&mut self, a: &str, b: &str) {
        self.antonyms
            .entry(a.to_owned())
            .or_default()
            .insert(b.to_owned());
        self.antonyms
            .entry(b.to_owned())
            .or_default()
            .insert(a.to_owned());
    }

    /// Short digest of the database files, recorded in run reports.
    pub fn digest(&self) -> &str {
        &self.digest
    }

    /// Whether WordNet knows `word` in any part of speech.
    pub fn knows(&self, word: &str) -> bool {
        self.senses.iter().any(|s| s.contains_key(word))
    }

    /// The base forms of `word` in part of speech `pos` (WordNet's "morphy":
    /// its exception list, then the regular suffix rules), known words only.
    fn base_forms(&self, word: &str, pos: usize) -> Vec<String> {
        const RULES: [&[(&str, &str)]; 4] = [
            &[
                ("s", ""),
                ("ses", "s"),
                ("xes", "x"),
                ("zes", "z"),
                ("ches", "ch"),
                ("shes", "sh"),
                ("men", "man"),
                ("ies", "y"),
            ],
            &[
                ("s", ""),
                ("ies", "y"),
                ("es", "e"),
                ("es", ""),
                ("ed", "e"),
                ("ed", ""),
                ("ing", "e"),
                ("ing", ""),
            ],
            &[("er", ""), ("est", ""), ("er", "e"), ("est", "e")],
            &[],
        ];
        let mut found = Vec::new();
        if let Some(bases) = self.exceptions[pos].get(word) {
            found.extend(bases.iter().cloned());
        }
        if self.senses[pos].contains_key(word) {
            found.push(word.to_owned());
        }
        for (suffix, replacement) in RULES[pos] {
            if let Some(stem) = word.strip_suffix(suffix) {
                // English adds "-es" only after a hiss or an "o" ("fixes",
                // "goes"); elsewhere the "e" is the stem's ("planes" is
                // never "plan").
                if (*suffix, *replacement) == ("es", "")
                    && !["s", "x", "z", "ch", "sh", "o"]
                        .iter()
                        .any(|end| stem.ends_with(end))
                {
                    continue;
                }
                let base = format!("{stem}{replacement}");
                if !stem.is_empty() && self.senses[pos].contains_key(&base) {
                    found.push(base);
                }
            }
        }
        // "running" → "runn" → "run": a doubled final consonant.
        for suffix in ["ing", "ed", "er", "est"] {
            if let Some(stem) = word.strip_suffix(suffix) {
                let mut chars = stem.chars().rev();
                if let (Some(a), Some(b)) = (chars.next(), chars.next())
                    && a == b
                    && !"aeiou".contains(a)
                {
                    let base = &stem[..stem.len() - a.len_utf8()];
                    let pos = if suffix.starts_with('e') && suffix != "ed" {
                        2
                    } else {
                        1
                    };
                    if self.senses[pos].contains_key(base) {
                        found.push(base.to_owned());
                    }
                }
            }
        }
        found.sort();
        found.dedup();
        found
    }

    /// The adjective an adverb of manner is formed from ("fluently" →
    /// "fluent"), as WordNet relates them in the adverb's first sense.
    pub fn manner_of(&self, adverb: &str) -> Option<&str> {
        self.manner_of.get(adverb).map(String::as_str)
    }

    /// Every lemma `word` may be an inflection of, in any part of speech
    /// (the word itself when WordNet has no entry for it), and its stem
    /// without a plural "s" when WordNet does not know the stem: "bikers"
    /// is the plural of a "biker" WordNet lacks (it lists only "Bikers", a
    /// gang).
    pub fn lemmas(&self, word: &str) -> Vec<String> {
        let mut found: Vec<String> = (0..POS.len())
            .flat_map(|pos| self.base_forms(word, pos))
            .collect();
        if found.is_empty() {
            found.push(word.to_owned());
        }
        // "speaks German `fluently`" says what "speaks `fluent` German" does.
        if let Some(adjective) = self.manner_of(word) {
            found.push(adjective.to_owned());
        }
        if let Some(stem) = word.strip_suffix('s')
            && stem.len() > 2
            && !stem.ends_with('s')
            && !self.knows(stem)
        {
            found.push(stem.to_owned());
        }
        found.sort();
        found.dedup();
        found
    }

    fn common_senses(&self, word: &str, pos: usize) -> impl Iterator<Item = u32> + '_ {
        self.base_forms(word, pos)
            .into_iter()
            .flat_map(move |base| {
                self.senses[pos]
                    .get(&base)
                    .into_iter()
                    .flat_map(|s| s.iter().take(COMMON_SENSES).copied())
                    .collect::<Vec<_>>()
            })
    }

    /// What alignment needs to know of a word, looked up once: a cycle
    /// reads the same words in text after text, and cycle after cycle.
    pub fn word(&self, word: &str) -> Word {
        if let Ok(known) = self.known.read()
            && let Some(found) = known.get(word)
        {
            return found.clone();
        }
        let found = self.look_up(word);
        if let Ok(mut known) = self.known.write()
            && known.len() < KNOWN_WORDS
        {
            known.insert(word.to_owned(), found.clone());
        }
        found
    }

    /// [`WordNet::word`] without the memo.
    fn look_up(&self, word: &str) -> Word {
        if ANY_THING.contains(&word) {
            return Word {
                any_thing: true,
                ..Word::plain(word)
            };
        }
        if ANY_PERSON.contains(&word) {
            let mut someone = self.word("someone");
            someone.lemmas.push(word.to_owned());
            return someone;
        }
        let nouns: Vec<u32> = self.common_senses(word, NOUN).collect();
        let verbs: Vec<u32> = self.common_senses(word, VERB).collect();
        let mut senses: Vec<u32> = nouns
            .iter()
            .chain(&verbs)
            .copied()
            .chain((ADJECTIVE..POS.len()).flat_map(|pos| self.common_senses(word, pos)))
            .collect();
        // Another name for a word, in its most frequent sense ("lady" for
        // "woman"; not "dog", "informal term for a man" in its third).
        if let Some(names) = nouns.first().and_then(|first| self.other_names.get(first)) {
            senses.extend(names);
        }
        // The nouns derived from its most frequent adjective sense.
        let derived = self
            .common_senses(word, ADJECTIVE)
            .next()
            .and_then(|first| self.derived_nouns.get(&first))
            .cloned()
            .unwrap_or_default();
        senses.extend(&derived);
        // The verb sense a state defines ("employed": "work", "be
        // employed").
        if let Some(verbs) = self.defined_as_being.get(word) {
            senses.extend(verbs);
        }
        senses.sort_unstable();
        senses.dedup();
        Word {
            lemmas: self.lemmas(word),
            senses,
            nouns,
            verbs,
            derived,
            inflected_verb: self.base_forms(word, 1).iter().any(|base| base != word),
            irregular_degree: [ADJECTIVE, ADVERB].iter().any(|&pos| {
                self.exceptions[pos]
                    .get(word)
                    .is_some_and(|bases| bases.iter().any(|base| base != word))
            }),
            any_thing: false,
            noun: false,
        }
    }

    /// Whether the most frequent verb sense of `word` is a sense of the
    /// verb `lemma`, however rare there: "own" first means "have,
    /// possess", which is only the fourth sense of "have".
    pub fn first_means(&self, word: &Word, lemma: &str) -> bool {
        word.verbs.first().is_some_and(|first| {
            self.senses[VERB]
                .get(lemma)
                .is_some_and(|senses| senses.contains(first))
        })
    }

    /// Inflections of one lemma, or a shared common sense.
    pub fn synonyms(&self, a: &Word, b: &Word) -> bool {
        let nouns = a.noun && b.noun;
        a.lemmas.iter().any(|l| b.lemmas.contains(l))
            || a.senses
                .iter()
                .any(|s| b.senses.binary_search(s).is_ok() && !(nouns && a.verbs.contains(s)))
    }

    /// Whether some lemma of `a` and some lemma of `b` are antonyms
    /// ("wet"/"dry", "fill"/"empty", "up"/"down").
    pub fn opposite(&self, a: &Word, b: &Word) -> bool {
        a.lemmas.iter().any(|x| {
            self.antonyms
                .get(x)
                .is_some_and(|opposites| b.lemmas.iter().any(|y| opposites.contains(y)))
        })
    }

    /// Each antonym pair `word`, as written, is in, the two words in order.
    pub fn opposed_pairs(&self, word: &str) -> Vec<(String, String)> {
        let mut pairs: Vec<(String, String)> = self
            .antonyms
            .get(word)
            .into_iter()
            .flatten()
            .map(|other| {
                if word <= other.as_str() {
                    (word.to_owned(), other.clone())
                } else {
                    (other.clone(), word.to_owned())
                }
            })
            .collect();
        pairs.sort();
        pairs
    }

    /// Whether `a` and `b` are antonyms only as nouns for people ("man" /
    /// "woman"; not "up" / "down", nor "day" / "night"): as arguments they
    /// name two people, not two values of one slot.
    pub fn opposed_people(&self, a: &Word, b: &Word) -> bool {
        let pairs: Vec<(&String, &String)> = a
            .lemmas
            .iter()
            .flat_map(|x| b.lemmas.iter().map(move |y| (x, y)))
            .filter(|(x, y)| self.antonyms.get(*x).is_some_and(|o| o.contains(*y)))
            .collect();
        !pairs.is_empty()
            && pairs
                .iter()
                .all(|(x, y)| self.person_antonyms.contains(&((*x).clone(), (*y).clone())))
    }

    /// Whether the most frequent sense of the verb `specific` is defined
    /// as the verb `general` with more said ("prefer": "like better"), so
    /// that `specific` states `general`, as a hypernym alone does not ("a
    /// `man`" is a person of whom more is said, but WordNet does not say
    /// it in one word).
    pub fn says_more_than(&self, specific: &Word, general: &Word) -> bool {
        specific
            .verbs
            .first()
            .and_then(|first| self.opened_by.get(first))
            .is_some_and(|verb| general.lemmas.contains(verb))
    }

    /// Whether a common noun sense of `specific` lies at most four
    /// hypernym steps under one of `general` ("man" is a "person";
    /// "dachshund" is a "dog"), or a common verb sense under one of its
    /// verb senses ("slice" is a way to "cut"); any noun is a kind of
    /// "anything".
    pub fn kind_of(&self, specific: &Word, general: &Word) -> bool {
        if self.synonyms(specific, general) {
            return false;
        }
        if general.any_thing {
            return specific.is_noun();
        }
        [
            (&specific.nouns, &general.nouns),
            (&specific.verbs, &general.verbs),
        ]
        .into_iter()
        .any(|(specific, general)| self.under(specific, general))
    }

    /// Whether `compound` is a noun WordNet lists and none of its senses is
    /// a sense of its head noun `head` or lies at most four hypernym steps
    /// under one, however rare: a "vice president" is no president, where
    /// "cooking oil" is a vegetable oil, oil's fourth sense.
    pub fn compound_names_another(&self, compound: &str, head: &str) -> bool {
        let Some(specific) = self.senses[NOUN].get(compound) else {
            return false;
        };
        let general: Vec<u32> = self
            .base_forms(head, NOUN)
            .iter()
            .filter_map(|base| self.senses[NOUN].get(base))
            .flatten()
            .copied()
            .collect();
        !specific.iter().any(|s| general.contains(s)) && !self.under(specific, &general)
    }

    /// Whether a synset of `specific` lies at most four hypernym steps
    /// under one of `general`.
    fn under(&self, specific: &[u32], general: &[u32]) -> bool {
        if general.is_empty() {
            return false;
        }
        let mut frontier = specific.to_vec();
        for _ in 0..4 {
            frontier = frontier
                .iter()
                .flat_map(|s| self.synsets[*s as usize].hypernyms.iter().copied())
                .collect();
            if frontier.iter().any(|s| general.contains(s)) {
                return true;
            }
        }
        false
    }

    /// Whether a common verb sense of `verb` is ending an activity, or a
    /// kind of it ("stopped", "quit", "ceased").
    pub fn ends_activity(&self, verb: &Word) -> bool {
        self.one_ends(&verb.verbs)
    }

    /// Whether the most frequent verb sense of `verb` is ending an
    /// activity, or a kind of it: "quit", "discontinue"; not "stop", whose
    /// first sense is coming to a halt ("stopped the car" halted it).
    pub fn mainly_ends_activity(&self, verb: &Word) -> bool {
        verb.lemmas.iter().any(|lemma| {
            self.senses[VERB]
                .get(lemma)
                .and_then(|senses| senses.first())
                .is_some_and(|&first| self.one_ends(&[first]))
        })
    }

    /// Whether the most frequent verb sense of `verb` is winning a victory
    /// over another, or a kind of it ("beat", "defeated", "outscored"; not
    /// "won", whose first sense needs no opponent).
    pub fn mainly_defeats(&self, verb: &Word) -> bool {
        verb.verbs
            .first()
            .is_some_and(|&first| self.one_of(&[first], &self.defeating))
    }

    /// Whether a common verb sense of `verb` is leaving a place or an
    /// association, or a kind of it ("left", "quit", "resigned",
    /// "retired").
    pub fn leaves(&self, verb: &Word) -> bool {
        self.one_of(&verb.verbs, &self.leaving)
    }

    /// Whether a common verb sense of `verb` is leaving an association,
    /// or a kind of it ("quit", "resigned", "retired"; not "left").
    pub fn quits(&self, verb: &Word) -> bool {
        self.one_of(&verb.verbs, &self.quitting)
    }

    /// Whether a common verb sense of `verb` is parting with what one has,
    /// or a kind of it ("sold", "lost", "donated").
    pub fn parts_with(&self, verb: &Word) -> bool {
        self.one_of(&verb.verbs, &self.parting)
    }

    /// Whether a common verb sense of `verb` is handing one's thing over,
    /// or a kind of it ("sold", "donated"; not "lost").
    pub fn hands_over(&self, verb: &Word) -> bool {
        self.one_of(&verb.verbs, &self.handing_over)
    }

    /// Whether some sense of the phrasal verb `phrase` ("give away") is
    /// handing one's thing over, or a kind of it.
    pub fn phrase_hands_over(&self, phrase: &str) -> bool {
        self.phrase_one_of(phrase, &self.handing_over)
    }

    /// Whether some sense of the phrasal verb `phrase` ("break up", "split
    /// up") is ending a relation with someone, or a kind of it.
    pub fn phrase_separates(&self, phrase: &str) -> bool {
        self.phrase_one_of(phrase, &self.separating)
    }

    /// Whether some sense of the phrasal verb `phrase` is one of `heads` or
    /// lies under one: its particle already selects the sense.
    fn phrase_one_of(&self, phrase: &str, heads: &[u32]) -> bool {
        self.senses[VERB]
            .get(phrase)
            .is_some_and(|senses| self.one_of(senses, heads))
    }

    /// Whether one of `senses` is one of `heads` or lies under one.
    fn one_of(&self, senses: &[u32], heads: &[u32]) -> bool {
        senses.iter().any(|s| heads.contains(s)) || self.under(senses, heads)
    }

    /// Whether some sense of the phrasal verb `phrase` ("drop out") is
    /// leaving a place or an association, or a kind of it; its particle
    /// already selects the sense.
    pub fn phrase_leaves(&self, phrase: &str) -> bool {
        self.phrase_one_of(phrase, &self.leaving)
    }

    /// Whether some sense of the phrasal verb `phrase` ("give away") is
    /// parting with what one has, or a kind of it.
    pub fn phrase_parts_with(&self, phrase: &str) -> bool {
        self.phrase_one_of(phrase, &self.parting)
    }

    /// Whether a common noun sense of `word` is a place ("Austin",
    /// "Texas", "city").
    pub fn names_place(&self, word: &Word) -> bool {
        word.nouns.iter().any(|s| self.places.contains(s))
    }

    /// Whether a common verb sense of `verb` is one of going or being
    /// somewhere ("visited", "went", "attended"; not "organised").
    pub fn means_presence(&self, verb: &Word) -> bool {
        verb.verbs.iter().any(|s| self.presence.contains(s))
    }

    /// Whether a common verb sense of `verb` is one of going ("travels",
    /// "flies", "commutes"; not "lives", which is being somewhere).
    pub fn means_motion(&self, verb: &Word) -> bool {
        verb.verbs.iter().any(|s| self.motion.contains(s))
    }

    /// Whether a common verb sense of `verb` brings a thing to its end or
    /// calls it off, or is a kind of that ("finished", "ended",
    /// "cancelled").
    pub fn concludes(&self, verb: &Word) -> bool {
        self.one_of(&verb.verbs, &self.concluding)
    }

    /// Whether a common verb sense of `verb` puts one thing in another's
    /// place, or is a kind of that ("replaced", "swapped").
    pub fn replaces(&self, verb: &Word) -> bool {
        self.one_of(&verb.verbs, &self.replacing)
    }

    /// Whether some sense of the phrasal verb `phrase` ("call off") brings
    /// a thing to its end or calls it off.
    pub fn phrase_concludes(&self, phrase: &str) -> bool {
        self.phrase_one_of(phrase, &self.concluding)
    }

    /// Whether the most frequent verb sense of `verb` is one of change
    /// ("increased", "rose"; not "went", whose first sense is going).
    pub fn changes(&self, verb: &Word) -> bool {
        verb.verbs
            .first()
            .is_some_and(|s| self.changing.contains(s))
    }

    /// Whether some sense of the phrasal verb `phrase` ("go up") is one
    /// of change: its particle already selects the sense.
    pub fn phrase_changes(&self, phrase: &str) -> bool {
        self.senses[VERB]
            .get(phrase)
            .is_some_and(|senses| senses.iter().any(|s| self.changing.contains(s)))
    }

    /// Whether the most frequent verb sense of `verb` is one of telling
    /// ("said", "warns"; not "works").
    pub fn tells(&self, verb: &Word) -> bool {
        verb.verbs.first().is_some_and(|s| self.telling.contains(s))
    }

    /// Whether a common verb sense of `verb` is one of feeling ("likes",
    /// "loves", "hates").
    pub fn feels(&self, verb: &Word) -> bool {
        verb.verbs.iter().any(|s| self.feelings.contains(s))
    }

    /// Whether a common noun sense of `word` is a time or a period
    /// ("year", "March", "weeks").
    pub fn names_time(&self, word: &Word) -> bool {
        word.nouns.iter().any(|s| self.times.contains(s))
    }

    /// Whether a common noun sense of `word` names a person ("nurse",
    /// "teachers").
    pub fn names_person(&self, word: &Word) -> bool {
        word.nouns.iter().any(|s| self.people.contains(s))
    }

    /// Whether the most frequent noun sense of `word` names a person
    /// ("parents", "brother"; not "cat", a person only in a rarer sense).
    pub fn first_names_person(&self, word: &Word) -> bool {
        word.lemmas.iter().any(|lemma| {
            self.senses[NOUN]
                .get(lemma)
                .and_then(|senses| senses.first())
                .is_some_and(|s| self.people.contains(s))
        })
    }

    /// Whether some sense of the phrasal verb `phrase` ("give up", "leave
    /// off") is ending an activity, or a kind of it: its particle already
    /// selects the sense, so a rarer one counts ("give up" ends an
    /// activity in its fourth sense).
    pub fn phrase_ends_activity(&self, phrase: &str) -> bool {
        self.one_ends(self.senses[VERB].get(phrase).map_or(&[][..], Vec::as_slice))
    }

    /// Whether WordNet lists `verb` with `particle` as a verb of its own
    /// ("rely on", "count on"): the particle belongs to the verb and
    /// places nothing.
    pub fn phrasal_verb(&self, verb: &str, particle: &str) -> bool {
        self.senses[VERB].contains_key(&format!("{verb} {particle}"))
    }

    /// Whether one of the verb `senses` is ending an activity or a kind
    /// of it.
    fn one_ends(&self, senses: &[u32]) -> bool {
        self.one_of(senses, self.ending.as_slice())
    }

    /// The class two different nouns both belong to: a common sense of
    /// each sits directly under the same hypernym ("red"/"blue" under
    /// "chromatic color", "man"/"woman" under "adult"), two colours with
    /// and without a hue ("red"/"black": "color"), or for two times or two
    /// places one step further up; `None` for synonyms.
    pub fn class_of_pair(&self, a: &Word, b: &Word) -> Option<String> {
        // A place and a place within it are not two values of one class,
        // in whichever senses they would share one ("the United States" /
        // "Washington", both also governments).
        if self.synonyms(a, b) || self.part_of(a, b) || self.part_of(b, a) {
            return None;
        }
        let up = |synsets: &[u32]| -> Vec<u32> {
            synsets
                .iter()
                .flat_map(|s| self.synsets[*s as usize].hypernyms.iter().copied())
                .collect()
        };
        let shared = |of_a: &[u32], of_b: &[u32]| of_b.iter().copied().find(|p| of_a.contains(p));
        let (of_a, of_b) = (up(&a.nouns), up(&b.nouns));
        let class = shared(&of_a, &of_b)
            .or_else(|| self.colours(a, b))
            .or_else(|| {
                // Times and places are one more step apart at most: "Sunday"
                // is a rest day, "Friday" a weekday, both days of the week;
                // Berlin is a national capital, a kind of city, and Munich a
                // city. A city and its country or state stay apart.
                let places = |w: &Word| w.nouns.iter().any(|s| self.places.contains(s));
                if !(self.names_time(a) && self.names_time(b) || places(a) && places(b)) {
                    return None;
                }
                let widen = |mut of: Vec<u32>| {
                    let grandparents = up(&of);
                    of.extend(grandparents);
                    of
                };
                shared(&widen(of_a), &widen(of_b))
            });
        class.map(|p| self.synsets[p as usize].name.clone())
    }

    /// The colour sense two colours share, one with a hue and one without
    /// ("red" is a chromatic colour, "black" an achromatic one): a thing
    /// has one colour. Not a shade and its colour ("crimson" / "red").
    fn colours(&self, a: &Word, b: &Word) -> Option<u32> {
        let colour = self.colour?;
        let is_colour = |w: &Word| self.under(&w.nouns, &[colour]);
        (is_colour(a) && is_colour(b) && !self.kind_of(a, b) && !self.kind_of(b, a))
            .then_some(colour)
    }

    /// Whether a common noun sense of `part` lies within one of `whole` by
    /// at most four part-of steps ("Washington" the city is part of the
    /// District of Columbia, a part of the United States).
    pub fn part_of(&self, part: &Word, whole: &Word) -> bool {
        let mut reached: Vec<u32> = part.nouns.clone();
        let mut from = 0;
        for _ in 0..4 {
            let frontier = reached.len();
            for k in from..frontier {
                for &up in &self.synsets[reached[k] as usize].wholes {
                    if whole.nouns.contains(&up) {
                        return true;
                    }
                    if !reached.contains(&up) {
                        reached.push(up);
                    }
                }
            }
            from = frontier;
        }
        false
    }

    /// Whether `part` names a place inside the place `whole` names
    /// ("Berlin" / "Germany", "Japan" / "Asia"): being there is being in
    /// the whole. Parts of things are not (an engine is part of a car).
    pub fn within(&self, part: &Word, whole: &Word) -> bool {
        let land = |w: &Word| w.nouns.iter().any(|s| self.lands.contains(s));
        land(part) && land(whole) && self.part_of(part, whole)
    }

    /// [`WordNet::synonyms`] of two words as written.
    pub fn same_or_synonym(&self, a: &str, b: &str) -> bool {
        a == b || self.synonyms(&self.word(a), &self.word(b))
    }

    /// [`WordNet::opposite`] of two words as written.
    pub fn antonyms(&self, a: &str, b: &str) -> bool {
        self.opposite(&self.word(a), &self.word(b))
    }

    /// [`WordNet::class_of_pair`] of two words as written.
    pub fn shared_class(&self, a: &str, b: &str) -> Option<String> {
        self.class_of_pair(&self.word(a), &self.word(b))
    }
}

/// A word as WordNet knows it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Word {
    /// Lemmas it may be an inflection of (itself when unknown).
    pub lemmas: Vec<String>,
    /// Its common senses in every part of speech, sorted.
    senses: Vec<u32>,
    /// Its common noun senses.
    nouns: Vec<u32>,
    /// Its common verb senses.
    verbs: Vec<u32>,
    /// The noun senses derived from its most frequent adjective sense
    /// ("allergic": "allergy"), also among `senses`.
    derived: Vec<u32>,
    /// An inflected verb form ("riding", "rode").
    pub inflected_verb: bool,
    /// A comparative or superlative WordNet lists as an irregular form of
    /// another adjective or adverb ("best", "better" of "good" and "well";
    /// "worse"; "elder"), though also a lemma of its own.
    pub irregular_degree: bool,
    /// "something", "anything": more general than any noun.
    any_thing: bool,
    /// Read as a noun in its text ([`Word::as_noun`]).
    noun: bool,
}

impl Word {
    /// The word with only its most frequent verb sense: what a verb says
    /// before its object when nothing else selects the sense ("started a
    /// bakery" begins one, though "start" may also mean to leave).
    pub fn in_first_verb_sense(&self) -> Word {
        Word {
            verbs: self.verbs.first().copied().into_iter().collect(),
            ..self.clone()
        }
    }

    /// Reads the word as a noun, as after a determiner: two nouns are no
    /// synonyms by their verb senses ("the `mother`" / "the `father`"
    /// share only the verb sense "beget"), though a noun still is one of
    /// a verb it names ("the `chairman`" / "`chaired`"). A word with no
    /// noun sense stays as it is.
    pub fn as_noun(&mut self) {
        self.noun = !self.nouns.is_empty();
    }

    /// A word without WordNet: only its own spelling.
    pub fn plain(word: &str) -> Self {
        Word {
            lemmas: vec![word.to_owned()],
            ..Word::default()
        }
    }

    /// Whether one of the two is the noun derived from the other, an
    /// adjective ("allergy" / "allergic"): one word, in another part of
    /// speech.
    pub fn derives(&self, other: &Word) -> bool {
        self.derived.iter().any(|s| other.nouns.contains(s))
            || other.derived.iter().any(|s| self.nouns.contains(s))
    }

    /// Whether WordNet knows a common sense of it (never so without
    /// WordNet).
    pub fn is_known(&self) -> bool {
        !self.senses.is_empty()
    }

    /// Whether one of its common senses is a noun.
    pub fn is_noun(&self) -> bool {
        !self.nouns.is_empty()
    }

    /// Whether one of its common senses is a verb.
    pub fn is_verb(&self) -> bool {
        !self.verbs.is_empty()
    }

    /// Whether one of its common senses is an adjective or an adverb
    /// ("blue", "light"): neither a noun's nor a verb's.
    pub fn modifies(&self) -> bool {
        self.senses
            .iter()
            .any(|s| !self.nouns.contains(s) && !self.verbs.contains(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remembered_word_is_the_word_looked_up_and_the_memo_is_bounded() {
        let wordnet = WordNet::default();
        let first = wordnet.word("someone");
        assert_eq!(first, wordnet.look_up("someone"));
        assert_eq!(wordnet.word("someone"), first);
        for k in 0..KNOWN_WORDS + 10 {
            wordnet.word(&format!("name{k}"));
        }
        assert_eq!(
            wordnet.known.read().map(|m| m.len()).ok(),
            Some(KNOWN_WORDS)
        );
        assert_eq!(wordnet.word("name70000"), wordnet.look_up("name70000"));
    }
}
