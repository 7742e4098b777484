//! WordNet as `make models` fetches it (Debian's wordnet-base): the lemmas,
//! synonyms, antonyms and classes the alignment relies on.

mod common;

use common::*;

#[test]
fn lemmas_cover_regular_and_irregular_inflections() {
    let wordnet = wordnet();
    for (form, lemma) in [
        ("running", "run"),
        ("ran", "run"),
        ("children", "child"),
        ("emptying", "empty"),
        ("women", "woman"),
        ("bigger", "big"),
    ] {
        assert!(
            wordnet.lemmas(form).contains(&lemma.to_owned()),
            "{form}: {:?}",
            wordnet.lemmas(form)
        );
    }
    assert_eq!(
        wordnet.lemmas("postgresql"),
        vec!["postgresql"],
        "unknown words stay"
    );
}

#[test]
fn antonyms_direct_and_through_similar_adjectives() {
    let wordnet = wordnet();
    for (a, b) in [
        ("wet", "dry"),
        ("up", "down"),
        ("filling", "emptying"),
        ("full", "empty"),
        ("huge", "small"),
        // A word of a head synset shares its opposition ("near, close").
        ("close", "far"),
    ] {
        assert!(
            wordnet.antonyms(a, b) && wordnet.antonyms(b, a),
            "{a} / {b}"
        );
    }
    assert!(!wordnet.antonyms("live", "work"));
}

#[test]
fn a_rare_sense_makes_no_indirect_antonym() {
    let wordnet = wordnet();
    // "white" is similar to "pure" only in its third sense ("in shining
    // white armor"); "high" is no kind of "up". SICK calls both pairs
    // neutral ("a white horse" / "a dirty horse").
    for (a, b) in [("white", "dirty"), ("high", "down"), ("white", "impure")] {
        assert!(!wordnet.antonyms(a, b), "{a} / {b}");
    }
}

#[test]
fn synonyms_use_common_senses_only() {
    let wordnet = wordnet();
    assert!(wordnet.same_or_synonym("film", "movie"));
    assert!(wordnet.same_or_synonym("television", "tv"));
    assert!(!wordnet.same_or_synonym("live", "work"));
    assert!(!wordnet.same_or_synonym("lives", "works"));
}

#[test]
fn classes_are_shared_direct_hypernyms() {
    let wordnet = wordnet();
    assert_eq!(
        wordnet.shared_class("red", "blue").as_deref(),
        Some("chromatic color")
    );
    assert_eq!(wordnet.shared_class("film", "movie"), None, "synonyms");
    assert_eq!(wordnet.shared_class("guitar", "banana"), None);
}

#[test]
fn a_missing_directory_is_a_clear_error() {
    let error = engram::detect::WordNet::load(std::path::Path::new("/nonexistent/wordnet"))
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("make models") && error.contains("wordnet_dir"),
        "{error}"
    );
}
