//! Contradictions: two memories that state the same proposition and
//! cannot both hold.
//!
//! Topical similarity only nominates pairs (`contradiction_min_similarity`);
//! the decision reads their alignment ([`super::align`]): what differs must
//! be small and of a conflicting kind. Signals, each naming its words:
//!
//! * `negation`: one side negates an aligned predicate ("is `not`
//!   standing"), counted per predicate, so two negated clauses do not cancel;
//! * `quantifier`: "all" / "no", "someone" / "nobody";
//! * `antonym`: "wet" / "dry", "into" / "out of" (WordNet and the rule file);
//! * `value`: a different number, name, lexicon class value or WordNet
//!   class member ("red" / "blue") in one slot;
//! * `class_value`: a stated change ("Now using PostgreSQL with pgvector")
//!   names another value of a lexicon class in the same slot as an older
//!   memory. It counts from the lower `change_min_similarity`, since a
//!   replacement often shares few words ("Using Pinecone for vector
//!   search" scores 0.20).
//!
//! Only facts, preferences and procedures are compared: episodes record
//! events, and two different events do not contradict each other.

use serde::Serialize;

use std::collections::BTreeMap;

use crate::model::MemoryKind;

use super::align::{Comparison, Update};
use super::pairs::parallel_map;
use super::{DetectSettings, Item, Lexicon, Pair, Prepared, Supersession, round4, supersession};
use crate::embed::dot;
use crate::embed::fixed::Scale;
use crate::embed::packed::{BLOCK, Packed, pairs_of};

/// Evidence for a contradiction, kept in reports and events.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Signal {
    pub kind: &'static str,
    pub detail: String,
}

impl Signal {
    fn weight(&self) -> f64 {
        match self.kind {
            "negation" | "antonym" | "quantifier" => 0.6,
            "value" | "class_value" | "update" => 0.5,
            _ => 0.4,
        }
    }
}

/// Two memories that disagree; `first` is the older.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Contradiction {
    pub first_id: String,
    pub second_id: String,
    pub similarity: f64,
    pub signals: Vec<Signal>,
    /// 0..1: the signals' combined weight, scaled by how similar the pair is.
    pub confidence: f64,
    /// Set when time resolves it: the newer states a change.
    pub supersession: Option<Supersession>,
}

impl Contradiction {
    /// The signals as one readable sentence.
    pub fn explanation(&self) -> String {
        let details: Vec<&str> = self.signals.iter().map(|s| s.detail.as_str()).collect();
        format!("{} (cosine {:.2})", details.join("; "), self.similarity)
    }
}

pub fn detect(
    prepared: &Prepared<'_>,
    close: &[Pair],
    settings: &DetectSettings,
    lexicon: &Lexicon,
) -> Vec<Contradiction> {
    let with_updates =
        prepared.negation_floor(settings.contradiction_min_similarity, settings, lexicon);
    let floor = with_updates.without_update_floor();
    let nominated = |i: usize, j: usize, similarity: f64| similarity >= floor.of(i, j);
    let stated = stated_changes(prepared, settings, lexicon);
    // Pairs nominated only by the update floor: the update rules alone
    // read them.
    let stated_pairs: std::collections::HashSet<(usize, usize)> =
        stated.iter().map(|&(i, j, _)| (i, j)).collect();
    let updates_only = |i: usize, j: usize, similarity: f64| {
        !nominated(i, j, similarity) && !stated_pairs.contains(&(i, j))
    };
    let mut candidates: Vec<(usize, usize, f64)> = close
        .iter()
        .filter(|p| p.similarity >= with_updates.of(p.first, p.second))
        .map(|p| (p.first, p.second, p.similarity))
        .chain(stated.iter().copied())
        .collect();
    candidates.sort_by_key(|&(i, j, _)| (i, j));
    candidates.dedup_by(|a, b| (a.0, a.1) == (b.0, b.1));
    let items = &prepared.items;
    // Each pair is read on its own, so the pairs are shared out over the
    // cores; the results keep the pairs' order.
    let read = |&(i, j, similarity): &(usize, usize, f64)| {
        if similarity < settings.change_min_similarity
            || items[i].memory.content_hash == items[j].memory.content_hash
            || is_episode(&items[i])
            || is_episode(&items[j])
        {
            return None;
        }
        // A knowledge update the newer states, its signal and how time
        // resolves it.
        let updated = || {
            prepared.update(i, j, lexicon).map(|update| {
                let resolved =
                    supersession::resolve(&items[i], &items[j], Some(&update.marker), lexicon);
                (vec![update_signal(&update)], resolved)
            })
        };
        if updates_only(i, j, similarity) {
            let (signals, resolved) = updated()?;
            return Some(contradiction(
                (&items[i], &items[j]),
                similarity,
                signals,
                resolved,
                settings,
            ));
        }
        let resolve = |comparison: &Comparison| {
            let ending = comparison.ending[1].as_deref();
            supersession::resolve(&items[i], &items[j], ending, lexicon)
        };
        let whole = if prepared.may_conflict(i, j, lexicon) {
            let comparison = prepared.compare(i, j, lexicon);
            let resolved = resolve(&comparison);
            let found = signals(&comparison, resolved.is_some());
            (!found.is_empty()).then_some((found, resolved))
        } else {
            None
        };
        let (signals, resolved) = match whole {
            Some(whole) => whole,
            None => match prepared.clause_conflict(i, j, lexicon) {
                Some(clauses) => (signals(&clauses, false), resolve(&clauses)),
                None => updated()?,
            },
        };
        // A contradiction that the newer memory's stated change resolves
        // counts from `change_min_similarity` (a replacement often shares
        // few words: "Using Pinecone for vector search" / "Now using
        // PostgreSQL with pgvector" score 0.20), whether the alignment
        // reads it as a conflict or only as a class change. Only such
        // pairs are nominated below the usual floors ([`stated_changes`]).
        let stated_change = resolved.is_some() && !signals.is_empty();
        if !nominated(i, j, similarity) && !stated_change {
            return None;
        }
        Some(contradiction(
            (&items[i], &items[j]),
            similarity,
            signals,
            resolved,
            settings,
        ))
    };
    parallel_map(&candidates, read)
        .into_iter()
        .flatten()
        .collect()
}

/// A contradiction of `pair` (the older first) on `signals`, its
/// confidence their combined weight scaled by how similar the pair is.
fn contradiction(
    (first, second): (&Item<'_>, &Item<'_>),
    similarity: f64,
    signals: Vec<Signal>,
    supersession: Option<Supersession>,
    settings: &DetectSettings,
) -> Contradiction {
    let combined = 1.0 - signals.iter().map(|s| 1.0 - s.weight()).product::<f64>();
    let floor = settings.change_min_similarity;
    let closeness = ((similarity - floor) / (1.0 - floor)).clamp(0.0, 1.0);
    Contradiction {
        first_id: first.memory.id.clone(),
        second_id: second.memory.id.clone(),
        similarity: round4(similarity),
        confidence: round4(combined * (0.5 + 0.5 * closeness)),
        signals,
        supersession,
    }
}

/// The conflict signals of an aligned pair (empty: no contradiction). A
/// stated change (`states_change`: the newer memory carries a change marker)
/// also counts when it puts another value of a lexicon class in the slot
/// of the older one's.
pub fn signals(comparison: &Comparison, states_change: bool) -> Vec<Signal> {
    if comparison.contradicts() {
        return comparison
            .conflicts
            .iter()
            .map(|c| Signal {
                kind: c.kind.name(),
                detail: format!("{} (rule `{}`)", c.detail, c.rule),
            })
            .collect();
    }
    if states_change
        && comparison.aligned >= 1
        && comparison.conflicts.is_empty()
        && let Some((class, older, newer)) = comparison.class_changes.first()
    {
        return vec![Signal {
            kind: "class_value",
            detail: format!("`{older}` ↔ `{newer}` ({class}, stated change in the same slot)"),
        }];
    }
    Vec::new()
}

/// The signal of a knowledge update: the rule that found it, and what it
/// read.
fn update_signal(update: &Update) -> Signal {
    Signal {
        kind: "update",
        detail: format!("{} (rule `{}`)", update.detail, update.rule),
    }
}

/// Pairs below `contradiction_min_similarity` that may still be a stated
/// change: the later memory carries a change marker and names a value of a
/// lexicon class, and the earlier one names a different value of that class.
/// Each change statement is paired with its most similar such predecessor
/// only (at least `change_min_similarity`): "Now using PostgreSQL with
/// pgvector" replaces the one vector store it is closest to, not every
/// memory that names one. Blocked by class, so a large user is not compared
/// all-pairs. Homes are one more such class, of the places WordNet knows.
fn stated_changes(
    prepared: &Prepared<'_>,
    settings: &DetectSettings,
    lexicon: &Lexicon,
) -> Vec<(usize, usize, f64)> {
    // Only values written as names count ("Go", not "go home").
    let all: Vec<usize> = (0..prepared.items.len()).collect();
    let values: Vec<Vec<(String, String)>> = parallel_map(&all, |&i| {
        if lexicon.values_in(&prepared.items[i].words).is_empty() {
            Vec::new()
        } else {
            prepared.named_values(i, lexicon)
        }
    });
    // Per class: its members in order, each with the values it names there.
    let mut by_class: BTreeMap<&str, Vec<(usize, Vec<&str>)>> = BTreeMap::new();
    for (i, named) in values.iter().enumerate() {
        if is_episode(&prepared.items[i]) {
            continue;
        }
        for (class, value) in named {
            let members = by_class.entry(class.as_str()).or_default();
            match members.last_mut() {
                Some((last, in_class)) if *last == i => in_class.push(value.as_str()),
                _ => members.push((i, vec![value.as_str()])),
            }
        }
    }
    let mut pairs = Vec::new();
    for members in by_class.values() {
        pairs.extend(closest_predecessors(prepared, members, settings, lexicon));
    }
    // Where one lives is a slot too, whose values WordNet knows as places:
    // a move ("moved to Austin") against the homes stated before it ("lives
    // in Chicago", which the model may score 0.47 against it). Not a trip
    // ("flew to Austin"), which states no home and changes none.
    let places: Vec<Vec<String>> = parallel_map(&all, |&i| {
        let words = &prepared.items[i].words;
        let home_or_move = !is_episode(&prepared.items[i])
            && (lexicon.holds_in_one_place(words) || lexicon.change_marker_in(words).is_some());
        if home_or_move {
            prepared.named_places(i, lexicon)
        } else {
            Vec::new()
        }
    });
    let homes: Vec<(usize, Vec<&str>)> = places
        .iter()
        .enumerate()
        .filter(|(_, named)| !named.is_empty())
        .map(|(i, named)| (i, named.iter().map(String::as_str).collect()))
        .collect();
    pairs.extend(closest_predecessors(prepared, &homes, settings, lexicon));
    pairs
}

/// For each change statement among one class's `members` (in order, with
/// the values each names), its most similar earlier member naming another
/// value, ties by the earliest. Each product is first estimated from 16-bit
/// copies, eight statements against sixteen members at a time
/// ([`crate::embed::packed`]); a member gets the exact product only where its
/// estimate leaves it within reach of the floor and of the best estimate
/// (each estimate is within [`Scale::margin`] of its product), so the member
/// chosen and its similarity are those of an exact scan. A vector of another
/// length than the statements' is scored exactly.
fn closest_predecessors(
    prepared: &Prepared<'_>,
    members: &[(usize, Vec<&str>)],
    settings: &DetectSettings,
    lexicon: &Lexicon,
) -> Vec<(usize, usize, f64)> {
    let vector = |m: usize| prepared.items[members[m].0].memory.embedding.as_deref();
    let statements: Vec<usize> = (0..members.len())
        .filter(|&m| {
            vector(m).is_some()
                && lexicon
                    .change_marker_in(&prepared.items[members[m].0].words)
                    .is_some()
        })
        .collect();
    let Some(dimension) = statements
        .first()
        .and_then(|&s| vector(s))
        .map(<[f32]>::len)
    else {
        return Vec::new();
    };
    let estimated = |m: usize| vector(m).is_some_and(|v| v.len() == dimension && dimension > 0);
    let rows: Vec<usize> = (0..members.len()).filter(|&m| estimated(m)).collect();
    let others: Vec<usize> = (0..members.len()).filter(|&m| !estimated(m)).collect();
    let scale = Scale::for_vectors(rows.iter().filter_map(|&m| vector(m)));
    let row_pairs: Vec<Vec<i32>> = parallel_map(&rows, |&m| {
        vector(m).map_or_else(Vec::new, |v| pairs_of(&scale.quantize(v)))
    });
    let packed = Packed::new(&row_pairs, dimension.div_ceil(2));
    let row_of = |m: usize| rows.binary_search(&m).ok();
    let floor = scale.least_product(settings.change_min_similarity);
    let other_value = |statement: usize, earlier: usize| {
        let named = &members[statement].1;
        !members[earlier].1.iter().all(|value| named.contains(value))
    };
    let groups: Vec<&[usize]> = statements.chunks(8).collect();
    let best = parallel_map(&groups, |group| {
        // Each statement's row among the estimated, looked up once.
        let own_rows: Vec<Option<usize>> = group.iter().map(|&s| row_of(s)).collect();
        // A statement scored exactly stands in for none: its lanes are read
        // by no one.
        let eight: [&[i32]; 8] = std::array::from_fn(|k| {
            own_rows
                .get(k)
                .copied()
                .flatten()
                .or_else(|| own_rows.iter().find_map(|&row| row))
                .map_or(&[][..], |row| row_pairs[row].as_slice())
        });
        // Per statement, the members whose estimate may reach the floor.
        let mut near: Vec<Vec<(usize, i32)>> = vec![Vec::new(); group.len()];
        let last = group.last().copied().unwrap_or_default();
        let scanned = rows.partition_point(|&m| m < last);
        if eight.iter().all(|v| !v.is_empty()) {
            for block in 0..scanned.div_ceil(BLOCK) {
                let estimates = packed.products(eight, block);
                for (k, &statement) in group.iter().enumerate() {
                    if own_rows[k].is_none() {
                        continue;
                    }
                    let lanes = rows.iter().skip(block * BLOCK).take(BLOCK);
                    for (&earlier, &estimate) in lanes.zip(&estimates[k]) {
                        if earlier >= statement {
                            break;
                        }
                        if i64::from(estimate) >= floor && other_value(statement, earlier) {
                            near[k].push((earlier, estimate));
                        }
                    }
                }
            }
        }
        group
            .iter()
            .zip(near)
            .zip(&own_rows)
            .map(|((&statement, near), own_row)| {
                let v = vector(statement)?;
                let mut candidates: Vec<usize> = if own_row.is_some() {
                    let reach = near.iter().map(|&(_, e)| e).max().map_or(i64::MAX, |top| {
                        scale.within_below(top, 2.0 * scale.margin())
                    });
                    near.iter()
                        .filter(|&&(_, e)| i64::from(e) >= reach)
                        .map(|&(m, _)| m)
                        .chain(others.iter().copied().take_while(|&m| m < statement))
                        .collect()
                } else {
                    (0..statement).collect()
                };
                candidates.sort_unstable();
                let mut best: Option<(f64, usize)> = None;
                for earlier in candidates {
                    if !other_value(statement, earlier) {
                        continue;
                    }
                    let Some(other) = vector(earlier) else {
                        continue;
                    };
                    let similarity = f64::from(dot(other, v));
                    if similarity >= settings.change_min_similarity
                        && best.is_none_or(|(top, _)| similarity > top)
                    {
                        best = Some((similarity, earlier));
                    }
                }
                best
            })
            .collect::<Vec<_>>()
    });
    statements
        .iter()
        .zip(best.into_iter().flatten())
        .filter_map(|(&statement, found)| {
            let (similarity, earlier) = found?;
            Some((members[earlier].0, members[statement].0, similarity))
        })
        .collect()
}

/// Episodes record events; two events that differ ("ran the tests on
/// ticket 12" / "… on ticket 34") do not contradict each other.
fn is_episode(item: &Item<'_>) -> bool {
    item.memory.kind == MemoryKind::Episodic
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::testing::*;

    fn kinds(first: &str, second: &str) -> Vec<&'static str> {
        let snapshot = snapshot(vec![
            memory("a", first, T0, vector(1.0, 1)),
            memory("b", second, T0 + 1, vector(1.0, 1)),
        ]);
        let prepared = Prepared::new(&snapshot);
        signals(&prepared.compare(0, 1, &lexicon()), false)
            .into_iter()
            .map(|s| s.kind)
            .collect()
    }

    #[test]
    fn each_signal_on_real_sentences() {
        assert_eq!(
            kinds(
                "The user prefers dark mode",
                "The user does not prefer dark mode"
            ),
            vec!["negation"]
        );
        assert_eq!(
            kinds(
                "The user always writes tests first",
                "The user never writes tests first"
            ),
            vec!["antonym"]
        );
        assert_eq!(
            kinds("The deploy takes 5 minutes", "The deploy takes 20 minutes"),
            vec!["value"]
        );
        assert_eq!(
            kinds("Project uses PostgreSQL", "Project uses MySQL"),
            vec!["value"]
        );
        assert_eq!(
            kinds("Project uses Postgres", "Project uses PostgreSQL"),
            Vec::<&str>::new()
        );
        assert_eq!(
            kinds(
                "Enable two-factor authentication",
                "Disable two-factor authentication"
            ),
            vec!["antonym"]
        );
    }

    #[test]
    fn negations_count_per_predicate_not_by_parity() {
        assert_eq!(
            kinds(
                "The man is standing on a rock and clouds are in the sky",
                "The man is not standing on a rock and clouds are not in the sky"
            ),
            vec!["negation", "negation"]
        );
    }

    #[test]
    fn a_negated_clause_of_its_own_is_not_a_denial() {
        assert!(
            kinds(
                "Nate's main hobbies are playing video games",
                "Nate is creating gaming content for YouTube when there are no tournaments"
            )
            .is_empty()
        );
        assert!(
            kinds(
                "The user rides a horse",
                "The user rides a horse without a saddle"
            )
            .is_empty()
        );
    }

    #[test]
    fn paraphrases_and_related_facts_carry_no_signal() {
        assert!(kinds("API uses REST", "The API is RESTful").is_empty());
        assert!(kinds("We no longer use Jenkins", "Jenkins is not used anymore").is_empty());
        assert!(kinds("The user lives in Berlin", "The user works in Berlin").is_empty());
        assert!(kinds("Deploys happen on Fridays", "We deploy every Friday").is_empty());
    }

    #[test]
    fn detected_pairs_need_similarity_and_report_confidence() {
        let snapshot = snapshot(vec![
            memory("a", "Project uses PostgreSQL", T0, vector(1.0, 1)),
            memory("b", "Project uses MySQL", T0 + 1, vector(0.64, 2)),
            memory("c", "The deploy takes 5 minutes", T0 + 2, vector(0.1, 3)),
        ]);
        let prepared = Prepared::new(&snapshot);
        let close = prepared.close_pairs(&settings(), &lexicon());
        let found = detect(&prepared, &close, &settings(), &lexicon());
        assert_eq!(found.len(), 1);
        let pair = &found[0];
        assert_eq!(
            (pair.first_id.as_str(), pair.second_id.as_str()),
            ("a", "b")
        );
        assert!(pair.confidence > 0.3 && pair.confidence <= 1.0, "{pair:?}");
        assert!(
            pair.explanation()
                .contains("`postgresql` ↔ `mysql` (database)"),
            "{}",
            pair.explanation()
        );
        assert_eq!(pair.supersession, None);
    }

    /// Pairs nominated from `memories` and what the detector found in them.
    fn found_in(
        memories: Vec<crate::model::Memory>,
        settings: &DetectSettings,
    ) -> Vec<Contradiction> {
        let snapshot = snapshot(memories);
        let prepared = Prepared::new(&snapshot);
        let close = prepared.close_pairs(settings, &lexicon());
        detect(&prepared, &close, settings, &lexicon())
    }

    #[test]
    fn a_denial_is_compared_from_the_lower_negation_floor() {
        // The model scores a denial low against its statement, below the
        // 0.60 that nominates other pairs.
        let denial = || {
            vec![
                memory("a", "The man is not driving a car", T0, vector(1.0, 1)),
                memory("b", "The man is driving a car", T0 + 1, vector(0.55, 2)),
            ]
        };
        let found = found_in(denial(), &settings());
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].explanation().contains("`not` negates"));
        let mut strict = settings();
        strict.negation_min_similarity = strict.contradiction_min_similarity;
        assert!(found_in(denial(), &strict).is_empty());
        // Without a negation the usual floor holds.
        let values = |similarity: f64| {
            vec![
                memory("a", "Project uses PostgreSQL", T0, vector(1.0, 1)),
                memory("b", "Project uses MySQL", T0 + 1, vector(similarity, 2)),
            ]
        };
        assert!(found_in(values(0.55), &settings()).is_empty());
        assert_eq!(found_in(values(0.65), &settings()).len(), 1);
    }

    /// The 16-bit estimates only rule members out: on vectors with exact
    /// ties and near misses, each change statement gets the predecessor an
    /// exact scan gives it, with the same similarity, and so does one whose
    /// vector has another length.
    #[test]
    fn closest_predecessors_are_those_of_an_exact_scan() {
        let stores = ["PostgreSQL", "MySQL", "Redis"];
        let unit =
            |seed: u64| crate::embed::fixed::seeded_unit_vector(seed, crate::embed::EMBEDDING_DIM);
        let mut vectors: Vec<Vec<f32>> = Vec::new();
        for k in 0..160u64 {
            let vector = if k % 9 == 8 {
                // The same vector as three memories before: a tie.
                vectors[k as usize - 3].clone()
            } else {
                let (base, noise) = (unit(k % 5), unit(1_000 + k));
                let mixed: Vec<f32> = base.iter().zip(&noise).map(|(b, n)| b + 0.4 * n).collect();
                let norm = mixed.iter().map(|x| x * x).sum::<f32>().sqrt();
                mixed.into_iter().map(|x| x / norm).collect()
            };
            vectors.push(vector);
        }
        // One statement and one earlier member with a shorter vector.
        vectors[150].truncate(100);
        vectors[40].truncate(100);
        let memories: Vec<_> = vectors
            .iter()
            .enumerate()
            .map(|(k, vector)| {
                let store = stores[k % 3];
                let text = if k % 4 == 3 {
                    format!("The billing service now uses {store}")
                } else {
                    format!("The billing service keeps its data in {store}")
                };
                memory(&format!("m{k:03}"), &text, T0 + k as i64, vector.clone())
            })
            .collect();
        let snapshot = snapshot(memories);
        let prepared = Prepared::new(&snapshot);
        let lexicon = lexicon();
        let members: Vec<(usize, Vec<&str>)> = (0..prepared.items.len())
            .map(|i| (i, vec![stores[i % 3]]))
            .collect();
        let mut settings = settings();
        settings.change_min_similarity = 0.3;
        let found = closest_predecessors(&prepared, &members, &settings, &lexicon);
        let mut exact = Vec::new();
        for (statement, (i, named)) in members.iter().enumerate() {
            if lexicon
                .change_marker_in(&prepared.items[*i].words)
                .is_none()
            {
                continue;
            }
            let v = prepared.items[*i].memory.embedding.as_deref().unwrap();
            let mut best: Option<(f64, usize)> = None;
            for (j, values) in &members[..statement] {
                let w = prepared.items[*j].memory.embedding.as_deref().unwrap();
                let similarity = f64::from(dot(w, v));
                if values != named
                    && similarity >= settings.change_min_similarity
                    && best.is_none_or(|(top, _)| similarity > top)
                {
                    best = Some((similarity, *j));
                }
            }
            if let Some((similarity, j)) = best {
                exact.push((j, *i, similarity));
            }
        }
        assert!(exact.len() > 30, "{} statements found one", exact.len());
        assert_eq!(found, exact);
    }

    #[test]
    fn a_stated_change_is_compared_from_the_negation_floor() {
        // A change is worded unlike the state it replaces, so the model
        // scores it low against it, as it does a denial.
        let pair = |newer: &str, similarity: f64| {
            vec![
                memory("a", "The team has 5 engineers", T0, vector(1.0, 1)),
                memory("b", newer, T0 + 1, vector(similarity, 2)),
            ]
        };
        let found = found_in(pair("The team now has 7 engineers", 0.55), &settings());
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].supersession.is_some(), "{found:?}");
        assert_eq!(found[0].signals[0].kind, "value");
        // Below the negation floor only the update rules read the pair,
        // down to `update_min_similarity`, and say which rule decided.
        let found = found_in(pair("The team now has 7 engineers", 0.45), &settings());
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].signals[0].kind, "update");
        assert!(
            found[0].signals[0]
                .detail
                .contains("rule `restated_change`")
        );
        assert!(found_in(pair("The team now has 7 engineers", 0.30), &settings()).is_empty());
        assert!(found_in(pair("The team has 7 engineers", 0.55), &settings()).is_empty());
    }

    #[test]
    fn a_denying_pronoun_is_compared_from_a_lower_floor_still() {
        // "Nobody" stands for the referent the other text names, so the
        // denial has one content word fewer and the model scores it lower
        // still (0.38 for these two).
        let denial = |first: &str, similarity: f64| {
            vec![
                memory("a", first, T0, vector(1.0, 1)),
                memory(
                    "b",
                    "Two girls are playing the piano",
                    T0 + 1,
                    vector(similarity, 2),
                ),
            ]
        };
        let found = found_in(denial("Nobody is playing the piano", 0.38), &settings());
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].explanation().contains("`nobody` negates"));
        let no_one = found_in(denial("No one is playing the piano", 0.38), &settings());
        assert_eq!(no_one.len(), 1, "{no_one:?}");
        assert!(found_in(denial("Nobody is playing the piano", 0.30), &settings()).is_empty());
        // So does a denial of existence ("There are no …"), whose shape is
        // far from the statement's; a plain denial keeps the negation
        // floor.
        let existence = "There are no girls playing the piano";
        assert_eq!(found_in(denial(existence, 0.45), &settings()).len(), 1);
        assert!(found_in(denial(existence, 0.30), &settings()).is_empty());
        let plain = "The girls are not playing the piano";
        assert!(found_in(denial(plain, 0.45), &settings()).is_empty());
        assert_eq!(found_in(denial(plain, 0.55), &settings()).len(), 1);
        let mut strict = settings();
        strict.pronoun_denial_min_similarity = strict.negation_min_similarity;
        assert!(found_in(denial("Nobody is playing the piano", 0.45), &strict).is_empty());
    }
}
