//! Knowledge updates (`engram::detect::align::update`): which rule reads a
//! newer fact as a change of an older one, on cases kept as data
//! (`tests/cases/updates.tsv`), with the real WordNet as `engram run` has
//! it.

mod common;

use common::*;
use engram::detect::align::{statement, update, update_rules};

#[test]
fn each_update_case_is_found_by_its_rule_or_by_none() {
    let settings = settings_with_wordnet();
    let lexicon = &settings.lexicon;
    let rules: Vec<&str> = update_rules().collect();
    let mut failures = Vec::new();
    let cases = include_str!("cases/updates.tsv");
    for (line, case) in cases.lines().enumerate() {
        if case.starts_with('#') || case.trim().is_empty() {
            continue;
        }
        let [older, newer, expected] = case.split('\t').collect::<Vec<_>>()[..] else {
            panic!("updates.tsv line {}: three tab-separated fields", line + 1);
        };
        assert!(
            expected == "none" || rules.contains(&expected),
            "updates.tsv line {}: unknown rule {expected}",
            line + 1
        );
        let found = update(
            &statement(older, lexicon),
            &statement(newer, lexicon),
            lexicon,
        );
        let rule = found.as_ref().map_or("none", |u| u.rule);
        if rule != expected {
            failures.push(format!(
                "line {}: {older:?} / {newer:?}: expected {expected}, found {rule} ({})",
                line + 1,
                found.map(|u| u.detail).unwrap_or_default()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
