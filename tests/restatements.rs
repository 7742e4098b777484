//! Restatements: one fact said in other words merges, and near misses
//! stay apart, on cases kept as data (`tests/cases/restatements.tsv`),
//! with the real WordNet as `engram run` has it.

mod common;

use common::*;
use engram::detect::align::{compare, tokens};

#[test]
fn each_restatement_case_gets_its_verdict() {
    let settings = settings_with_wordnet();
    let lexicon = &settings.lexicon;
    let mut failures = Vec::new();
    for (line, case) in include_str!("cases/restatements.tsv").lines().enumerate() {
        if case.starts_with('#') || case.trim().is_empty() {
            continue;
        }
        let [first, second, expected] = case.split('\t').collect::<Vec<_>>()[..] else {
            panic!(
                "restatements.tsv line {}: three tab-separated fields",
                line + 1
            );
        };
        let found = compare(&tokens(first, lexicon), &tokens(second, lexicon), lexicon);
        // As the verdict `engram similarity` prints: a block moved whole
        // is no detail ("`allergic` to peanuts" / "a peanut `allergy`").
        let verdict = if found.contradicts() {
            "conflict"
        } else if found.never_merged() || (found.extra[0] > 0 && found.extra[1] > 0) {
            "apart"
        } else {
            "covers"
        };
        if verdict != expected {
            failures.push(format!(
                "line {}: {first:?} / {second:?}: {verdict}, not {expected} ({})",
                line + 1,
                found.verdict(true, false)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
