//! LoCoMo dev: long two-person conversations replayed as one user per
//! speaker, each session's observations episodic memories at the session's
//! date, and one executed consolidation request per user a day after the
//! conversation's last session (threshold triggers run cycles on the way).
//!
//! Three replays: *no reads* (observations only), *with reads* (every
//! dialogue turn, in order, reads the five memories of the speaker pair
//! closest to it among those of earlier sessions, as an agent platform's
//! retrieval would), and *semantic* (the observations as semantic memories,
//! no reads: episodes are never compared for contradictions, facts are).
//! A fourth replay, *other texts*, puts the conversations' other writing
//! (event summaries and dialogue turns per speaker, session summaries per
//! conversation, sentence by sentence) through the same cycle as semantic
//! memories: texts the rules were not read against, so its flags and
//! merges show how they carry to other writing.
//! For each: evidence recall@10 before and after the
//! cycles (the question's embedding ranks the pair's active memories; a hit
//! is an evidence observation, or a memory that absorbed one by merge, in
//! the top ten), the active set, patterns and what they cover, and archived
//! evidence. Contradictions flagged, merges and patterns are listed for
//! reading.

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use engram::detect::{Lexicon, WordNet};
use engram::embed::{Embedder, LocalEmbedder, dot};
use serde_json::{Value, json};
use sha2::Digest as _;

use super::{Replay, created, iso, replay, requested, session_time};

const SECOND_MS: i64 = 1_000;
const DAY_MS: i64 = 24 * 3_600 * SECOND_MS;
const TOP: usize = 10;
const READS_PER_TURN: usize = 5;

struct Observation {
    user: String,
    id: String,
    text: String,
    at: i64,
    session_at: i64,
    dia_ids: Vec<String>,
}

struct Turn {
    dia_id: String,
    text: String,
    at: i64,
    session_at: i64,
}

struct Question {
    text: String,
    evidence: BTreeSet<String>,
}

/// A text of the conversation other than an observation: one user's
/// semantic memory in the *other texts* replay.
struct OtherText {
    user: String,
    id: String,
    text: String,
    at: i64,
}

struct Conversation {
    users: Vec<String>,
    observations: Vec<Observation>,
    other_texts: Vec<OtherText>,
    turns: Vec<Turn>,
    questions: Vec<Question>,
    last_session_at: i64,
}

fn conversations(data: &Path) -> Vec<Conversation> {
    let text = std::fs::read_to_string(data.join("locomo-dev.json")).expect("LoCoMo data");
    let raw: Vec<Value> = serde_json::from_str(&text).expect("LoCoMo JSON");
    raw.iter()
        .enumerate()
        .map(|(c, conversation)| parse(c, conversation))
        .collect()
}

fn parse(c: usize, conversation: &Value) -> Conversation {
    let dialogue = &conversation["conversation"];
    let user = |speaker: &str| format!("locomo-{c}-{}", speaker.to_lowercase());
    let mut sessions: Vec<(usize, i64)> = dialogue
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(key, value)| {
            let n = key.strip_prefix("session_")?.strip_suffix("_date_time")?;
            Some((n.parse().ok()?, session_time(value.as_str()?)?))
        })
        .collect();
    sessions.sort();
    let mut out = Conversation {
        users: ["speaker_a", "speaker_b"]
            .iter()
            .filter_map(|k| dialogue[*k].as_str().map(user))
            .collect(),
        observations: Vec::new(),
        other_texts: Vec::new(),
        turns: Vec::new(),
        questions: Vec::new(),
        last_session_at: 0,
    };
    for (n, at) in sessions {
        out.last_session_at = out.last_session_at.max(at);
        for (i, turn) in dialogue[format!("session_{n}")]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            out.turns.push(Turn {
                dia_id: turn["dia_id"].as_str().unwrap_or_default().to_owned(),
                text: turn["text"].as_str().unwrap_or_default().to_owned(),
                at: at + i as i64 * SECOND_MS,
                session_at: at,
            });
            let text = turn["text"].as_str().unwrap_or_default();
            // Greetings and one-word replies state nothing to consolidate.
            if text.split_whitespace().count() >= 4 {
                out.other_texts.push(OtherText {
                    user: format!(
                        "{}-turns",
                        user(turn["speaker"].as_str().unwrap_or_default())
                    ),
                    id: format!("s{n}-turn-{i}"),
                    text: text.to_owned(),
                    at: at + i as i64 * SECOND_MS,
                });
            }
        }
        let events = &conversation["event_summary"][format!("events_session_{n}")];
        for (speaker, items) in events.as_object().into_iter().flatten() {
            for (i, item) in items.as_array().into_iter().flatten().enumerate() {
                if let Some(text) = item.as_str().filter(|t| !t.trim().is_empty()) {
                    out.other_texts.push(OtherText {
                        user: format!("{}-events", user(speaker)),
                        id: format!("s{n}-event-{i}"),
                        text: text.to_owned(),
                        at: at + i as i64 * SECOND_MS,
                    });
                }
            }
        }
        let summary = conversation["session_summary"][format!("session_{n}_summary")]
            .as_str()
            .unwrap_or_default();
        for (i, sentence) in summary
            .split_inclusive(['.', '!', '?'])
            .map(str::trim)
            .filter(|t| t.split_whitespace().count() >= 4)
            .enumerate()
        {
            out.other_texts.push(OtherText {
                user: format!("locomo-{c}-summary"),
                id: format!("s{n}-summary-{i}"),
                text: sentence.to_owned(),
                at: at + i as i64 * SECOND_MS,
            });
        }
        let by_speaker = &conversation["observation"][format!("session_{n}_observation")];
        let mut second = 0;
        for (speaker, items) in by_speaker.as_object().into_iter().flatten() {
            for item in items.as_array().into_iter().flatten() {
                let Some(text) = item[0].as_str() else {
                    continue;
                };
                let dia_ids = match &item[1] {
                    Value::String(one) => vec![one.clone()],
                    Value::Array(many) => many
                        .iter()
                        .filter_map(|v| v.as_str().map(str::to_owned))
                        .collect(),
                    _ => Vec::new(),
                };
                out.observations.push(Observation {
                    user: user(speaker),
                    id: format!("s{n}-{second}"),
                    text: text.to_owned(),
                    at: at + second * SECOND_MS,
                    session_at: at,
                    dia_ids,
                });
                second += 1;
            }
        }
    }
    out.questions = conversation["qa"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|qa| {
            let evidence: BTreeSet<String> = qa["evidence"]
                .as_array()?
                .iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect();
            (!evidence.is_empty()).then(|| Question {
                text: qa["question"].as_str().unwrap_or_default().to_owned(),
                evidence,
            })
        })
        .collect();
    out
}

/// Every text's vector, embedded once.
struct Vectors(HashMap<String, Vec<f32>>);

impl Vectors {
    /// Embeds `texts`, reusing the vectors `cache` holds from an earlier
    /// run with the same model files.
    fn new(texts: BTreeSet<&str>, cache: &Path) -> Self {
        let config = super::common::embedding_config();
        let model = std::fs::read(config.model_dir.join("model.onnx")).unwrap_or_default();
        let stamp: String = sha2::Sha256::digest(&model)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let cached: HashMap<String, Vec<f32>> = std::fs::read(cache)
            .ok()
            .and_then(|bytes| {
                serde_json::from_slice::<(String, HashMap<String, Vec<f32>>)>(&bytes).ok()
            })
            .filter(|(s, _)| *s == stamp)
            .map(|(_, v)| v)
            .unwrap_or_default();
        if texts.iter().all(|t| cached.contains_key(*t)) {
            return Self(cached);
        }
        let embedder = LocalEmbedder::load(&config).expect("the model (make models)");
        let texts: Vec<&str> = texts.into_iter().collect();
        let mut vectors = HashMap::with_capacity(texts.len());
        for chunk in texts.chunks(256) {
            let embedded = embedder.embed(chunk, 32).expect("embed");
            for (text, vector) in chunk.iter().zip(embedded) {
                vectors.insert((*text).to_owned(), vector);
            }
        }
        if let Ok(bytes) = serde_json::to_vec(&(stamp, &vectors)) {
            let _ = std::fs::write(cache, bytes);
        }
        Self(vectors)
    }

    fn of(&self, text: &str) -> &[f32] {
        self.0.get(text).map_or(&[], Vec::as_slice)
    }
}

/// The indices of the `k` candidates closest to `query`, best first (ties:
/// earlier candidate first).
fn top<'a>(query: &[f32], candidates: impl Iterator<Item = &'a [f32]>, k: usize) -> Vec<usize> {
    let mut scored: Vec<(f32, usize)> = candidates
        .enumerate()
        .filter(|(_, v)| v.len() == query.len())
        .map(|(i, v)| (dot(query, v), i))
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.into_iter().take(k).map(|(_, i)| i).collect()
}

fn events(
    conversations: &[Conversation],
    vectors: &Vectors,
    kind: &str,
    with_reads: bool,
) -> Vec<Value> {
    let mut events = Vec::new();
    for conversation in conversations {
        for o in &conversation.observations {
            events.push(created(&o.user, &o.id, kind, &o.text, o.at));
        }
        if with_reads {
            for turn in &conversation.turns {
                let earlier: Vec<&Observation> = conversation
                    .observations
                    .iter()
                    .filter(|o| o.session_at < turn.session_at)
                    .collect();
                let read = top(
                    vectors.of(&turn.text),
                    earlier.iter().map(|o| vectors.of(&o.text)),
                    READS_PER_TURN,
                );
                for i in read {
                    let o = earlier[i];
                    events.push(json!({
                        "type": "memory.accessed",
                        "event_id": format!("{}/{}/read/{}", o.user, o.id, turn.dia_id),
                        "user_id": o.user,
                        "memory_id": o.id,
                        "accessed_at": iso(turn.at),
                        "context": "eval: retrieved for a dialogue turn",
                    }));
                }
            }
        }
        for user in &conversation.users {
            events.push(requested(user, conversation.last_session_at + DAY_MS));
        }
    }
    in_time_order(&mut events);
    events
}

/// Sorts replay events by the time each carries.
fn in_time_order(events: &mut [Value]) {
    events.sort_by_key(|e| {
        ["created_at", "accessed_at", "requested_at"]
            .iter()
            .find_map(|k| e[*k].as_str())
            .unwrap_or_default()
            .to_owned()
    });
}

/// What the replay left of one memory.
struct Stored<'a> {
    user: &'a str,
    memory: &'a Value,
}

impl Stored<'_> {
    fn id(&self) -> &str {
        self.memory["id"].as_str().unwrap_or_default()
    }

    fn ids(&self, field: &str) -> Vec<&str> {
        self.memory[field]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect()
    }

    fn vector(&self) -> Vec<f32> {
        self.memory["embedding"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_f64().map(|f| f as f32))
            .collect()
    }
}

struct Figures {
    memories: usize,
    active_after: usize,
    questions: usize,
    recall_before: usize,
    recall_after: usize,
    patterns: usize,
    covered: usize,
    verbatim_patterns: usize,
    archived: usize,
    archived_evidence: usize,
    /// Pattern texts with an ellipsis or without a verb of their episodes.
    unreadable_patterns: Vec<String>,
}

fn evaluate(
    conversations: &[Conversation],
    vectors: &Vectors,
    run: &Replay,
    listing: &mut String,
    lexicon: &Lexicon,
) -> Figures {
    let mut figures = Figures {
        memories: 0,
        active_after: 0,
        questions: 0,
        recall_before: 0,
        recall_after: 0,
        patterns: 0,
        covered: 0,
        verbatim_patterns: 0,
        archived: 0,
        archived_evidence: 0,
        unreadable_patterns: Vec::new(),
    };
    for conversation in conversations {
        let stored: Vec<Stored<'_>> = conversation
            .users
            .iter()
            .filter_map(|u| run.users.get_key_value(u))
            .flat_map(|(user, state)| {
                state["memories"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(move |memory| Stored { user, memory })
            })
            .collect();
        let active: Vec<&Stored<'_>> = stored
            .iter()
            .filter(|s| s.memory["status"] == "active")
            .collect();
        let active_vectors: Vec<Vec<f32>> = active.iter().map(|s| s.vector()).collect();
        let observation = |user: &str, id: &str| {
            conversation
                .observations
                .iter()
                .find(|o| o.user == user && o.id == id)
        };
        figures.memories += conversation.observations.len();
        figures.active_after += active.len();
        let mut evidence_ids = BTreeSet::new();
        for question in &conversation.questions {
            let evidence: BTreeSet<(&str, &str)> = conversation
                .observations
                .iter()
                .filter(|o| o.dia_ids.iter().any(|d| question.evidence.contains(d)))
                .map(|o| (o.user.as_str(), o.id.as_str()))
                .collect();
            if evidence.is_empty() {
                continue;
            }
            evidence_ids.extend(evidence.iter().copied());
            figures.questions += 1;
            let query = vectors.of(&question.text);
            let before = top(
                query,
                conversation
                    .observations
                    .iter()
                    .map(|o| vectors.of(&o.text)),
                TOP,
            );
            if before.iter().any(|&i| {
                let o = &conversation.observations[i];
                evidence.contains(&(o.user.as_str(), o.id.as_str()))
            }) {
                figures.recall_before += 1;
            }
            let after = top(query, active_vectors.iter().map(Vec::as_slice), TOP);
            if after.iter().any(|&i| {
                let s = active[i];
                evidence.contains(&(s.user, s.id()))
                    || s.ids("merged_from")
                        .iter()
                        .any(|id| evidence.contains(&(s.user, *id)))
            }) {
                figures.recall_after += 1;
            }
        }
        let mut covered = BTreeSet::new();
        for s in &stored {
            if s.memory["status"] == "archived" {
                figures.archived += 1;
                if evidence_ids.contains(&(s.user, s.id())) {
                    figures.archived_evidence += 1;
                }
            }
            if s.memory["category"] != "pattern" || s.memory["status"] != "active" {
                continue;
            }
            figures.patterns += 1;
            let text = s.memory["content"].as_str().unwrap_or_default();
            let _ = writeln!(listing, "  [{}] {text}", s.user);
            let episodes: Vec<&str> = s
                .ids("derived_from")
                .iter()
                .filter_map(|id| observation(s.user, id).map(|o| o.text.as_str()))
                .collect();
            if !readable_pattern(text, &episodes, lexicon) {
                figures.unreadable_patterns.push(text.to_owned());
            }
            for id in s.ids("derived_from") {
                covered.insert((s.user, id));
                if let Some(o) = observation(s.user, id) {
                    if o.text == text {
                        figures.verbatim_patterns += 1;
                    }
                    let _ = writeln!(listing, "    {} {}", &iso(o.at)[..10], o.text);
                }
            }
        }
        figures.covered += covered.len();
    }
    figures
}

/// Whether a pattern's text reads alone: no ellipsis, and a verb that its
/// episodes say as a verb too (issue 78).
fn readable_pattern(text: &str, episodes: &[&str], lexicon: &Lexicon) -> bool {
    use engram::detect::align::{predicate_at, tokens};
    let phrase = text.split(" (").next().unwrap_or(text);
    if phrase.contains('…') || phrase.contains("...") {
        return false;
    }
    let verbs = |text: &str| {
        let found = tokens(text, lexicon);
        (0..found.len())
            .filter(|&k| predicate_at(&found, k) && found[k].is_verb())
            .map(|k| found[k].clone())
            .collect::<Vec<_>>()
    };
    let own = verbs(phrase);
    episodes.iter().any(|episode| {
        verbs(episode)
            .iter()
            .any(|v| own.iter().any(|o| o.same_meaning(v, lexicon)))
    })
}

fn share(part: usize, whole: usize) -> String {
    format!("{:.3}", part as f64 / whole.max(1) as f64)
}

pub fn locomo(data: &Path, out: &Path, wordnet: &Arc<WordNet>) {
    let conversations = conversations(data);
    let mut texts = BTreeSet::new();
    for c in &conversations {
        texts.extend(c.observations.iter().map(|o| o.text.as_str()));
        texts.extend(c.turns.iter().map(|t| t.text.as_str()));
        texts.extend(c.questions.iter().map(|q| q.text.as_str()));
    }
    let started = std::time::Instant::now();
    std::fs::create_dir_all(out).expect("eval output directory");
    let vectors = Vectors::new(texts, &out.join("vectors.json"));
    println!();
    println!(
        "LoCoMo dev: {} conversations, {} texts embedded in {:.1} s",
        conversations.len(),
        vectors.0.len(),
        started.elapsed().as_secs_f64()
    );
    println!(
        "  replay      memories  active after (×)  recall@10 before  after   patterns  cover   \
         verbatim  archived  archived evidence  flagged (/1k)  merges"
    );
    let mut questions = 0;
    let mut fused = Vec::new();
    let mut unreadable = Vec::new();
    let lexicon = Lexicon::default().with_wordnet(Arc::clone(wordnet));
    // Episodes are merged only when identical and never compared for
    // contradictions; the same observations as semantic memories put the
    // contradiction detector and the merges to work on conversation facts.
    for (name, kind, with_reads) in [
        ("no-reads", "episodic", false),
        ("with-reads", "episodic", true),
        ("semantic", "semantic", false),
    ] {
        let dir = out.join(name);
        let run = replay(
            &dir,
            &events(&conversations, &vectors, kind, with_reads),
            &[],
        );
        let mut patterns = String::new();
        let f = evaluate(&conversations, &vectors, &run, &mut patterns, &lexicon);
        questions = f.questions;
        let flagged = run.flagged();
        let merges = run.merges();
        let count: usize = flagged.values().map(Vec::len).sum();
        println!(
            "  {name:<11} {:>8}  {:>5} ({})      {:>5} ({})     {} ({})  {:>5}     {}   {:>5}     {:>5}     {:>5}              {} ({:.2})        {}",
            f.memories,
            f.active_after,
            share(f.active_after, f.memories),
            f.recall_before,
            share(f.recall_before, f.questions),
            f.recall_after,
            share(f.recall_after, f.questions),
            f.patterns,
            share(f.covered, f.memories),
            f.verbatim_patterns,
            f.archived,
            f.archived_evidence,
            count,
            count as f64 * 1000.0 / f.memories.max(1) as f64,
            merges.values().map(Vec::len).sum::<usize>(),
        );
        write_listings(&dir, &run, &patterns);
        unreadable.push((name, f.patterns, f.unreadable_patterns));
        fused.push((name, run));
    }
    for (name, count, texts) in &unreadable {
        print_checked(
            name,
            *count,
            "pattern texts",
            "unreadable (an ellipsis, or no verb its episodes say)",
            texts,
        );
    }
    for (name, run) in &fused {
        print_fused(name, run, &lexicon);
    }
    println!(
        "  recall over the {questions} questions whose evidence turns have observations; \
         listings in {}/<replay>/",
        out.display()
    );
    other_texts(&conversations, &out.join("other-texts"), &lexicon);
    event_episodes(&conversations, &out.join("event-episodes"), &lexicon);
}

/// The *event summaries as episodes* replay: what happened to each speaker
/// in each session ("Melanie ran a charity race for mental health") as the
/// episodes patterns are read from, an executed request per speaker a day
/// after the conversation's last session. More generated texts for the
/// checks than the observations give, on texts of another kind.
fn event_episodes(conversations: &[Conversation], dir: &Path, lexicon: &Lexicon) {
    let (mut events, mut episodes) = (Vec::new(), 0);
    for conversation in conversations {
        let mut users = BTreeSet::new();
        for t in conversation
            .other_texts
            .iter()
            .filter(|t| t.user.ends_with("-events"))
        {
            events.push(created(&t.user, &t.id, "episodic", &t.text, t.at));
            users.insert(t.user.as_str());
            episodes += 1;
        }
        for user in users {
            events.push(requested(user, conversation.last_session_at + DAY_MS));
        }
    }
    in_time_order(&mut events);
    let run = replay(dir, &events, &[]);
    let mut listing = String::new();
    let (mut patterns, mut unreadable) = (0, Vec::new());
    for (user, state) in &run.users {
        for memory in state["memories"].as_array().into_iter().flatten() {
            if memory["category"] != "pattern" || memory["status"] != "active" {
                continue;
            }
            patterns += 1;
            let text = memory["content"].as_str().unwrap_or_default();
            let _ = writeln!(listing, "  [{user}] {text}");
            let sources: Vec<&str> = memory["derived_from"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(|id| run.memory_text(user, id))
                .collect();
            for source in &sources {
                let _ = writeln!(listing, "    {source}");
            }
            if !readable_pattern(text, &sources, lexicon) {
                unreadable.push(text.to_owned());
            }
        }
    }
    let _ = std::fs::write(dir.join("patterns.txt"), &listing);
    println!(
        "  event summaries as episodes: {episodes} events, {patterns} patterns; listings in {}",
        dir.display()
    );
    print_checked(
        "event summaries",
        patterns,
        "pattern texts",
        "unreadable (an ellipsis, or no verb its episodes say)",
        &unreadable,
    );
    print_fused("event summaries", &run, lexicon);
}

/// The *other texts* replay: event summaries, dialogue turns and session
/// summaries as semantic memories, an executed request per user a day
/// after the conversation's last session.
fn other_texts(conversations: &[Conversation], dir: &Path, lexicon: &Lexicon) {
    let mut events = Vec::new();
    for conversation in conversations {
        let mut users = BTreeSet::new();
        for t in &conversation.other_texts {
            events.push(created(&t.user, &t.id, "semantic", &t.text, t.at));
            users.insert(t.user.as_str());
        }
        for user in users {
            events.push(requested(user, conversation.last_session_at + DAY_MS));
        }
    }
    in_time_order(&mut events);
    let memories = conversations
        .iter()
        .map(|c| c.other_texts.len())
        .sum::<usize>();
    let run = replay(dir, &events, &[]);
    let flagged: usize = run.flagged().values().map(Vec::len).sum();
    let merges: usize = run.merges().values().map(Vec::len).sum();
    println!(
        "  other texts (event summaries, turns, session summaries as semantic memories): \
         {memories} memories, {flagged} flagged ({:.2} per 1,000), {merges} merges; listings in {}",
        flagged as f64 * 1000.0 / memories.max(1) as f64,
        dir.display()
    );
    write_listings(dir, &run, "");
    print_fused("other texts", &run, lexicon);
}

/// The additions of fused texts among a replay's merges, and those that
/// are fragments: an ellipsis, or no name, number or noun ("(also:
/// Among)", "(also: regional)").
fn fused_additions(run: &Replay, lexicon: &Lexicon) -> (usize, Vec<String>) {
    let mut count = 0;
    let mut fragments = Vec::new();
    for merged in run.merges().values() {
        for (canonical, _) in merged {
            let text = canonical["content"].as_str().unwrap_or_default();
            for addition in engram::detect::fuse::listed_additions(text) {
                count += 1;
                let ellipsis = addition.contains('…') || addition.contains("...");
                if ellipsis || !engram::detect::fuse::phrase_states_fact(addition, lexicon) {
                    fragments.push(addition.to_owned());
                }
            }
        }
    }
    (count, fragments)
}

/// One line on a replay's fused additions.
fn print_fused(name: &str, run: &Replay, lexicon: &Lexicon) {
    let (count, fragments) = fused_additions(run, lexicon);
    print_checked(
        name,
        count,
        "fused additions",
        "fragments (an ellipsis, or no name, number or noun)",
        &fragments,
    );
}

/// One line on a replay's generated texts of one kind: how many, and those
/// that failed a check, listed.
fn print_checked(name: &str, count: usize, what: &str, failed: &str, failures: &[String]) {
    println!(
        "  {name}: {count} {what}, {} {failed}{}",
        failures.len(),
        if failures.is_empty() {
            String::new()
        } else {
            format!(": {}", failures.join(" | "))
        }
    );
}

fn write_listings(dir: &Path, run: &Replay, patterns: &str) {
    let mut contradictions = String::new();
    for (user, events) in &run.flagged() {
        for event in events {
            let text =
                |field: &str| run.memory_text(user, event[field].as_str().unwrap_or_default());
            let _ = writeln!(
                contradictions,
                "  [{user}] {}\n    - {}\n    - {}",
                event["explanation"].as_str().unwrap_or_default(),
                text("first_memory_id"),
                text("second_memory_id"),
            );
        }
    }
    let mut merges = String::new();
    for (user, merged) in &run.merges() {
        for (canonical, absorbed) in merged {
            let _ = writeln!(
                merges,
                "  [{user}] keeps: {}",
                canonical["content"].as_str().unwrap_or_default()
            );
            for other in absorbed {
                let _ = writeln!(
                    merges,
                    "    absorbs: {}",
                    other["content"].as_str().unwrap_or_default()
                );
            }
        }
    }
    for (name, text) in [
        ("contradictions.txt", contradictions),
        ("merges.txt", merges),
        ("patterns.txt", patterns.to_owned()),
    ] {
        std::fs::write(dir.join(name), text).expect("write listing");
    }
}
