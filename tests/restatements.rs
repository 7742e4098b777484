//! Cases kept as data, with the real WordNet as `engram run` has it:
//! restatements (one fact said in other words merges, and near misses stay
//! apart, `tests/cases/restatements.tsv`), each decision rule with the
//! pairs it must decide (`tests/cases/rules.tsv`), and which details a
//! fused text may add (`tests/cases/fusions.tsv`).

mod common;

use common::*;
use engram::detect::Lexicon;
use engram::detect::align::{Comparison, compare, statement, tokens};
use engram::detect::fuse::{additions, additions_state_facts, fusable, phrase_states_fact};

/// The case lines of a cases file, split on tabs into `N` fields, with
/// their line numbers.
fn cases<const N: usize>(file: &'static str, name: &str) -> Vec<(usize, [&'static str; N])> {
    file.lines()
        .enumerate()
        .filter(|(_, case)| !case.starts_with('#') && !case.trim().is_empty())
        .map(|(line, case)| {
            let fields: [&str; N] = case
                .split('\t')
                .collect::<Vec<_>>()
                .try_into()
                .unwrap_or_else(|_| panic!("{name} line {}: {N} tab-separated fields", line + 1));
            (line + 1, fields)
        })
        .collect()
}

/// The alignment of two texts, and its verdict as `engram similarity`
/// prints it: a block moved whole is no detail ("`allergic` to peanuts" /
/// "a peanut `allergy`").
fn judged(first: &str, second: &str, lexicon: &Lexicon) -> (Comparison, &'static str) {
    let found = compare(&tokens(first, lexicon), &tokens(second, lexicon), lexicon);
    let verdict = if found.contradicts() {
        "conflict"
    } else if found.never_merged() || (found.extra[0] > 0 && found.extra[1] > 0) {
        "apart"
    } else {
        "covers"
    };
    (found, verdict)
}

#[test]
fn each_restatement_case_gets_its_verdict() {
    let settings = settings_with_wordnet();
    let lexicon = &settings.lexicon;
    let mut failures = Vec::new();
    let file = include_str!("cases/restatements.tsv");
    for (line, [first, second, expected]) in cases(file, "restatements.tsv") {
        let at = format!("line {line}");
        failures.extend(in_both_orders(&at, [first, second], expected, lexicon));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// How `texts` fail to get the verdict `expected`, read in either order.
fn in_both_orders(at: &str, texts: [&str; 2], expected: &str, lexicon: &Lexicon) -> Vec<String> {
    [texts, [texts[1], texts[0]]]
        .into_iter()
        .filter_map(|[a, b]| {
            let (found, verdict) = judged(a, b, lexicon);
            (verdict != expected).then(|| {
                format!(
                    "{at}: {a:?} / {b:?}: {verdict}, not {expected} ({})",
                    found.verdict(true, false)
                )
            })
        })
        .collect()
}

/// A verdict does not depend on which text is the older: pairs whose
/// shared words the alignment could pair one way read forwards and
/// another read backwards (`tests/cases/both_orders.tsv`), and every
/// rule case read the other way round.
#[test]
fn a_verdict_is_the_same_whichever_text_comes_first() {
    let settings = settings_with_wordnet();
    let lexicon = &settings.lexicon;
    let mut failures = Vec::new();
    let orders = cases(include_str!("cases/both_orders.tsv"), "both_orders.tsv");
    let rules = cases(include_str!("cases/rules.tsv"), "rules.tsv");
    let pairs = orders
        .iter()
        .map(|(line, [a, b, verdict])| (format!("both_orders.tsv:{line}"), *a, *b, *verdict))
        .chain(
            rules
                .iter()
                .map(|(line, [a, b, verdict, _])| (format!("rules.tsv:{line}"), *a, *b, *verdict)),
        );
    for (at, first, second, expected) in pairs {
        failures.extend(in_both_orders(&at, [first, second], expected, lexicon));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn each_rule_decides_its_cases() {
    let settings = settings_with_wordnet();
    let lexicon = &settings.lexicon;
    let mut failures = Vec::new();
    let file = include_str!("cases/rules.tsv");
    for (line, [first, second, expected, rule]) in cases(file, "rules.tsv") {
        let (found, verdict) = judged(first, second, lexicon);
        let named = if rule == "-" {
            found.rules().is_empty()
        } else {
            found.rules().contains(&rule)
        };
        if verdict != expected || !named {
            failures.push(format!(
                "line {line}: {first:?} / {second:?}: {verdict} by {:?}, not {expected} by {rule} ({})",
                found.rules(),
                found.verdict(true, false)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_fused_text_adds_only_details_that_state_facts() {
    let settings = settings_with_wordnet();
    let lexicon = &settings.lexicon;
    let mut failures = Vec::new();
    let file = include_str!("cases/fusions.tsv");
    for (line, [first, second, expected]) in cases(file, "fusions.tsv") {
        let (a, b) = (statement(first, lexicon), statement(second, lexicon));
        let found = compare(&a, &b, lexicon);
        assert!(
            found.extra[0] > 0 && found.extra[1] > 0 && !found.never_merged(),
            "line {line}: a case needs a detail on each side ({})",
            found.verdict(true, true)
        );
        assert!(
            fusable(&a, &b, lexicon),
            "line {line}: only the facts may keep a case apart"
        );
        let fused =
            additions_state_facts(&a, second, lexicon) && additions_state_facts(&b, first, lexicon);
        let verdict = if fused { "fused" } else { "apart" };
        if verdict != expected {
            failures.push(format!(
                "line {line}: {first:?} / {second:?}: {verdict}, not {expected}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn an_addition_is_a_phrase_with_its_noun_and_stops_at_a_sentence_end() {
    let settings = settings_with_wordnet();
    let lexicon = &settings.lexicon;
    let added = |base: &str, other: &str| additions(&tokens(base, lexicon), other, lexicon);
    // A modifier takes the noun it modifies, compound and all.
    assert_eq!(
        added(
            "Nate wins another video game tournament",
            "Nate wins another regional video game tournament."
        ),
        ["regional video game tournament"]
    );
    // A phrase ends with its sentence: "Appreciate it. Great talking" is
    // two, and neither states a fact of its own.
    let base = "Thanks, Maria! You too! Stay safe!";
    let other = "Thanks, Maria. Appreciate it. Great talking to you. Stay safe!";
    for phrase in added(base, other) {
        assert!(!phrase.contains(". "), "{phrase:?} crosses a sentence end");
    }
    assert!(
        !additions_state_facts(&tokens(base, lexicon), other, lexicon),
        "{:?}",
        added(base, other)
    );
    // A title's stop is no sentence end.
    assert_eq!(
        added(
            "The mayor opened the bridge",
            "Mr. Peterson, the mayor, opened the bridge"
        ),
        ["Mr. Peterson"]
    );
}

#[test]
fn a_clause_opened_by_a_preposition_or_conjunction_states_no_fact_of_its_own() {
    // WordNet lists no prepositions or conjunctions, and a word it does not
    // know may be a thing ("postgresql"). A closed-class word of relation
    // is not: "since we chatted" relates a time it does not state.
    let settings = settings_with_wordnet();
    let lexicon = &settings.lexicon;
    for clause in ["since we chatted", "until we left", "although it rained"] {
        assert!(!phrase_states_fact(clause, lexicon), "{clause:?}");
    }
    for phrase in ["since March", "until the storm", "postgresql"] {
        assert!(phrase_states_fact(phrase, lexicon), "{phrase:?}");
    }
}

#[test]
fn a_clause_with_a_subject_of_its_own_is_no_phrase_to_add() {
    // Cut from its sentence, a subject and its verb say something of their
    // own about what the pronoun stood for, which the canonical does not
    // name: "(also: it really means a lot)" is a sentence, not a detail.
    let settings = settings_with_wordnet();
    let lexicon = &settings.lexicon;
    for clause in [
        "it really means a lot",
        "He used a new chain",
        "we won the cup",
    ] {
        assert!(!phrase_states_fact(clause, lexicon), "{clause:?}");
    }
    for phrase in ["a lot of support", "told reporters", "with them in Lyon"] {
        assert!(phrase_states_fact(phrase, lexicon), "{phrase:?}");
    }
}
