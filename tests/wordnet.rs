//! WordNet as `make models` fetches it (Debian's wordnet-base): the lemmas,
//! synonyms, antonyms and classes the alignment relies on.

mod common;

use common::*;

/// `lemma` is one of the lemmas WordNet gives `form`.
fn assert_has_lemma(wordnet: &engram::detect::WordNet, form: &str, lemma: &str) {
    assert!(
        wordnet.lemmas(form).contains(&lemma.to_owned()),
        "{form}: {:?}",
        wordnet.lemmas(form)
    );
}

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
        assert_has_lemma(&wordnet, form, lemma);
    }
    assert_eq!(
        wordnet.lemmas("postgresql"),
        vec!["postgresql"],
        "unknown words stay"
    );
    // WordNet knows only "Bikers" (a gang): the plural of a word it lacks.
    assert!(wordnet.lemmas("bikers").contains(&"biker".to_owned()));
    assert!(
        !wordnet.lemmas("news").contains(&"new".to_owned()),
        "a stem WordNet knows is another word"
    );
}

#[test]
fn an_adverb_of_manner_has_its_adjective_as_a_lemma_in_its_first_sense() {
    let wordnet = wordnet();
    for (adverb, adjective) in [
        ("fluently", "fluent"),
        ("quickly", "quick"),
        ("happily", "happy"),
        ("shrewdly", "shrewd"),
    ] {
        assert_has_lemma(&wordnet, adverb, adjective);
    }
    // "hardly" first means "barely", not "in a hard way".
    assert!(!wordnet.lemmas("hardly").contains(&"hard".to_owned()));
}

#[test]
fn a_verb_drops_es_only_after_a_hiss_or_an_o() {
    // "-es" follows s, x, z, ch, sh and o ("fixes", "goes"); elsewhere the
    // "e" is the stem's ("planes" is "plane" + "s", never "plan": that is
    // "plans").
    let wordnet = wordnet();
    for (form, lemma) in [
        ("goes", "go"),
        ("fixes", "fix"),
        ("washes", "wash"),
        ("misses", "miss"),
        ("planes", "plane"),
        ("hopes", "hope"),
    ] {
        assert!(
            wordnet.lemmas(form).contains(&lemma.to_owned()),
            "{form}: {:?}",
            wordnet.lemmas(form)
        );
    }
    for (form, not_lemma) in [("planes", "plan"), ("hopes", "hop"), ("rates", "rat")] {
        assert!(
            !wordnet.lemmas(form).contains(&not_lemma.to_owned()),
            "{form}: {:?}",
            wordnet.lemmas(form)
        );
    }
    // So "planes" frames nothing as a plan.
    let found = compare("The user prefers trains", "The user prefers planes");
    assert_eq!(
        found.reframes,
        [false, false],
        "{}",
        found.verdict(true, true)
    );
}

#[test]
fn a_verb_governs_an_infinitive_not_a_phrase_its_to_opens() {
    // "wants to visit" frames the visit; "moved to Paris" and "engaged to
    // Sam" only say where and to whom.
    for (a, b) in [
        ("The user lives in Paris", "The user moved to Paris"),
        ("User is engaged to Sam", "User married Sam"),
        ("Sam talked to Maria on Monday", "Sam met Maria on Tuesday"),
    ] {
        let found = compare(a, b);
        assert_eq!(
            found.reframes,
            [false, false],
            "{a} / {b}: {}",
            found.verdict(true, true)
        );
    }
    let found = compare("Sam visits Paris", "Sam wants to visit Paris");
    assert_eq!(
        found.reframes,
        [false, true],
        "{}",
        found.verdict(true, true)
    );
}

/// Each pair is opposed, read either way round.
fn assert_opposed_both_ways(pairs: &[(&str, &str)]) {
    let wordnet = wordnet();
    for &(a, b) in pairs {
        assert!(
            wordnet.antonyms(a, b) && wordnet.antonyms(b, a),
            "{a} / {b}"
        );
    }
}

#[test]
fn antonyms_direct_and_through_similar_adjectives() {
    assert_opposed_both_ways(&[
        ("wet", "dry"),
        ("up", "down"),
        ("filling", "emptying"),
        ("full", "empty"),
        ("huge", "small"),
        // A word of a head synset shares its opposition ("near, close").
        ("close", "far"),
    ]);
    assert!(!wordnet().antonyms("live", "work"));
}

#[test]
fn the_words_of_a_synset_share_its_antonym_in_every_part_of_speech() {
    let wordnet = wordnet();
    // WordNet marks the opposition on one word of each synset: "miss" /
    // "hit" (of "hit, strike"), "deny" / "allow" (of "allow, grant"),
    // "outdoors" / "indoors" (of "outside, outdoors"). Its synonyms in a
    // common sense share it, for verbs and adverbs as for adjectives.
    assert_opposed_both_ways(&[
        ("striking", "missing"),
        ("denying", "granting"),
        ("outside", "indoors"),
    ]);
    // And a sentence that swaps them contradicts its twin.
    assert_verdict(
        "A toy train is striking a toy car",
        "A toy train is missing a toy car",
        true,
    );
    // A word that is in the synset only in a rare sense shares nothing:
    // "go to bed" / "get up", but "retire" means going to bed only in its
    // eleventh sense.
    assert!(wordnet.antonyms("go to bed", "get up"));
    assert!(!wordnet.antonyms("retire", "get up"));
    // Nouns for people stay two people as arguments: "hubby" is in the
    // synset of "husband", whose antonym is "wife".
    assert!(wordnet.antonyms("hubby", "wife"));
    assert_verdict(
        "A dog is biting her hubby",
        "A dog is biting her wife",
        false,
    );
}

#[test]
fn a_word_whose_definition_denies_another_is_opposed_to_it() {
    let wordnet = wordnet();
    // WordNet defines "fast" as "abstain from eating", "silent" (in a
    // common sense) as "failing to speak or communicate", "blind" as
    // "unable to see": each is opposed to the word its definition denies,
    // and to that word's synonyms in its first sense ("talk", "speak").
    assert_opposed_both_ways(&[
        ("fasting", "eating"),
        ("silent", "talking"),
        ("silent", "speaking"),
        ("blind", "see"),
    ]);
    // Only a definition that denies the word alone: "nonthermal" is "not
    // involving heat", no opposite of "involve". The denied word's
    // synonyms count only where the shared sense is common for them:
    // "escape" is "fail to experience", and "see" means "experience" only
    // in a rare sense. A word after "lacking" is a noun: "new" is
    // "lacking training", no opposite of the verb "develop".
    assert!(!wordnet.antonyms("nonthermal", "involve"));
    assert!(wordnet.antonyms("escape", "experience"));
    assert!(!wordnet.antonyms("escape", "see"));
    assert!(!wordnet.antonyms("new", "develop"));
    assert_verdict("The man is eating", "The man is fasting", true);
    assert_verdict(
        "A man and a woman are talking",
        "A man and a woman are silent",
        true,
    );
}

#[test]
fn a_word_first_defined_as_another_name_for_its_hypernym_is_its_synonym() {
    let wordnet = wordnet();
    // "lady": "a polite name for any woman"; "guy": "an informal term for
    // a youth or man"; "dad": "an informal term for a father".
    for (a, b) in [("lady", "woman"), ("guy", "man"), ("dad", "father")] {
        assert!(wordnet.same_or_synonym(a, b), "{a} / {b}");
        assert!(wordnet.same_or_synonym(b, a), "{b} / {a}");
    }
    // Only in the word's first sense: "dog" is "informal term for a man"
    // in its third.
    assert!(!wordnet.same_or_synonym("dog", "man"));
    assert_verdict(
        "A woman is peeling a potato",
        "There is no lady peeling the potato",
        true,
    );
}

#[test]
fn a_feeling_is_opposed_to_what_the_feeling_it_names_is_opposed_to() {
    // "hate" is to dislike intensely, "adore" to love, "enjoy" to like:
    // each keeps its hypernym's opposite, and that opposite's kinds.
    assert_opposed_both_ways(&[
        ("likes", "hates"),
        ("enjoys", "hates"),
        ("adores", "hates"),
        ("loves", "dislikes"),
        ("enjoys", "dislikes"),
        ("loves", "loathes"),
    ]);
    assert_verdict("Sam likes jazz", "Sam hates jazz", true);
    assert_verdict("Sam enjoys hiking", "Sam dislikes hiking", true);
    // Two feelings of one side agree.
    assert!(!wordnet().antonyms("likes", "loves"));
    // Kinds of motion are not opposed through their kinds: "ride" /
    // "walk" are opposed, "boat" (a kind of riding) and "tiptoe" (a kind
    // of walking) are two ways to move.
    assert!(wordnet().antonyms("ride", "walk"));
    assert!(!wordnet().antonyms("boat", "tiptoe"));
}

#[test]
fn an_adjective_opposed_in_a_rare_sense_is_opposed_beside_the_opposite() {
    // "single" means unmarried only in its fourth sense, but beside
    // "married" (joined in matrimony, its most frequent sense) no other
    // sense of it is meant.
    assert_opposed_both_ways(&[("married", "single")]);
    assert_verdict("Bob is married", "Bob is single", true);
    assert_verdict(
        "Dana is single and lives in Rome",
        "Dana is married and lives in Rome",
        true,
    );
    // Not a noun's or verb's rare sense: "denial" is a defence in court
    // only in its fifth sense, "tire" is "bore" only in its fourth, "force"
    // is "pull" (the opposite of "push") only in its seventh.
    let wordnet = wordnet();
    for (a, b) in [
        ("force", "push"),
        ("denial", "prosecution"),
        ("tire", "interest"),
    ] {
        assert!(!wordnet.antonyms(a, b), "{a} / {b}");
    }
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
fn a_verb_s_first_sense_may_be_a_rare_sense_of_another() {
    // "own" first means "have, possess", the fourth sense of "have"; the
    // first sense of "rent" or "drive" is none of "have"'s.
    let wordnet = wordnet();
    assert!(!wordnet.same_or_synonym("owns", "has"));
    assert!(wordnet.first_means(&wordnet.word("owns"), "have"));
    assert!(wordnet.first_means(&wordnet.word("has"), "have"));
    for other in ["rents", "drives", "sells"] {
        assert!(
            !wordnet.first_means(&wordnet.word(other), "have"),
            "{other}"
        );
    }
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
    // Times may be one step further apart: a rest day and a weekday.
    assert_eq!(
        wordnet.shared_class("sunday", "friday").as_deref(),
        Some("day of the week")
    );
    assert_eq!(wordnet.shared_class("sunday", "january"), None);
    // Two places are two values; a place and one within it are not,
    // though both names also stand for governments of one kind.
    assert_eq!(
        wordnet.shared_class("new york", "los angeles").as_deref(),
        Some("city")
    );
    assert_eq!(wordnet.shared_class("united states", "washington"), None);
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

#[test]
fn verbs_have_kinds_too() {
    let wordnet = wordnet();
    let word = |w: &str| wordnet.word(w);
    for (specific, general) in [
        ("trotting", "riding"),
        ("slicing", "cutting"),
        ("dachshund", "dog"),
    ] {
        assert!(
            wordnet.kind_of(&word(specific), &word(general)),
            "{specific} is a kind of {general}"
        );
        assert!(!wordnet.kind_of(&word(general), &word(specific)));
    }
    assert!(!wordnet.kind_of(&word("playing"), &word("eating")));
}

#[test]
fn a_place_lies_within_the_larger_places_it_is_part_of() {
    let wordnet = wordnet();
    let word = |w: &str| wordnet.word(w);
    for (part, whole) in [
        ("tokyo", "japan"),
        ("berlin", "germany"),
        ("japan", "asia"),
        ("paris", "europe"),
    ] {
        assert!(
            wordnet.within(&word(part), &word(whole)),
            "{part} lies within {whole}"
        );
        assert!(!wordnet.within(&word(whole), &word(part)));
    }
    // A part of a body is no place in it.
    assert!(wordnet.part_of(&word("finger"), &word("hand")));
    assert!(!wordnet.within(&word("finger"), &word("hand")));
}

#[test]
fn verbs_of_telling_are_known_by_their_first_sense() {
    let wordnet = wordnet();
    let word = |w: &str| wordnet.word(w);
    for telling in ["said", "says", "announced", "warns"] {
        assert!(wordnet.tells(&word(telling)), "{telling}");
    }
    for other in ["works", "lived", "published"] {
        assert!(!wordnet.tells(&word(other)), "{other}");
    }
}

/// The alignment of two texts with WordNet, as the detectors see them.
fn compare(a: &str, b: &str) -> engram::detect::align::Comparison {
    use engram::detect::align;
    let lexicon = settings_with_wordnet().lexicon;
    align::compare(
        &align::statement(a, &lexicon),
        &align::statement(b, &lexicon),
        &lexicon,
    )
}

/// Asserts whether the alignment of `a` and `b` is a contradiction.
fn assert_verdict(a: &str, b: &str, contradicts: bool) {
    let found = compare(a, b);
    assert_eq!(
        found.contradicts(),
        contradicts,
        "{a} / {b}: {}",
        found.verdict(true, true)
    );
}

#[test]
fn a_passive_says_what_its_active_form_says() {
    let same = compare(
        "A woman is slicing an eggplant",
        "An eggplant is being sliced by a woman",
    );
    assert_eq!(same.moved, 0, "{}", same.verdict(true, true));
    assert!(
        same.covers(0) && same.covers(1),
        "{}",
        same.verdict(true, true)
    );
    assert_verdict(
        "One woman is peeling a potato",
        "The potato isn't being peeled by a woman",
        true,
    );
}

#[test]
fn an_antonym_in_both_subjects_names_another_referent() {
    // "no woman" says nothing about a man.
    assert_verdict(
        "There is no woman playing a guitar",
        "A man is playing a guitar",
        false,
    );
}

#[test]
fn opposed_people_as_arguments_are_two_people() {
    // Meeting a man and meeting a woman are two facts; being a winner and
    // being a loser are one in conflict. Opposed adjectives and verbs still
    // conflict as arguments' properties and predicates.
    assert_verdict(
        "A boy is spanking a man with a plastic sword",
        "A boy is spanking a woman with a plastic sword",
        false,
    );
    assert_verdict(
        "Nate met a man at the gym",
        "Nate met a woman at the gym",
        false,
    );
    assert_verdict("Jon is the winner", "Jon is the loser", true);
    assert_verdict(
        "The man is standing on a sidewalk",
        "The man is sitting on a sidewalk",
        true,
    );
    assert_verdict(
        "The dog is in shallow water",
        "The dog is in deep water",
        true,
    );
    assert_verdict(
        "A cyclist is biking in a forest at day",
        "A cyclist is biking in a forest at night",
        true,
    );
}

#[test]
fn a_pronoun_stands_for_the_argument_it_denies() {
    assert_verdict(
        "There is no one painting",
        "Someone is painting a fence",
        true,
    );
    assert_verdict(
        "The child is talking to the teacher",
        "There is no child speaking",
        true,
    );
}

#[test]
fn clauses_split_where_a_new_subject_takes_its_own_verb() {
    use engram::detect::align;
    let lexicon = settings_with_wordnet().lexicon;
    let count = |text: &str| align::clauses(&align::statement(text, &lexicon)).len();
    assert_eq!(
        count("There is no cat sleeping and the dogs are not barking"),
        2
    );
    // Two predicates of one subject: each is asserted, unless a negation
    // before them may deny the pair.
    assert_eq!(count("A man is drinking orange juice and walking"), 2);
    assert_eq!(
        count("There is no man drinking orange juice and walking"),
        1
    );
    assert_eq!(count("A big brown and white dog is lying on a jacket"), 1);
    assert_eq!(
        count("Gina finds starting and running her own business to be a ride"),
        1,
        "an infinitive is no clause of its own"
    );
    assert_eq!(
        count("Gibson said in a statement that he and his film are not anti-Semitic"),
        1,
        "\"he and his film\" is one subject: the verb before \"that\" is another clause's"
    );
}

#[test]
fn a_clause_is_compared_with_the_whole_other_text() {
    use engram::detect::align;
    let lexicon = settings_with_wordnet().lexicon;
    let conflict = |a: &str, b: &str| {
        align::clause_conflict(
            &align::statement(a, &lexicon),
            &align::statement(b, &lexicon),
            &lexicon,
        )
        .is_some()
    };
    assert!(conflict(
        "The man is standing on a mountain and the clouds are gray",
        "The man is not standing on a mountain"
    ));
    // Two unrelated clauses of the two texts are not one slot.
    assert!(!conflict(
        "Doctors had treated children of eight and he had once treated a boy of four",
        "Doctors had treated children of 8 and he had once treated a boy of 4"
    ));
}

#[test]
fn spelled_numbers_are_the_values_they_spell() {
    for (a, b) in [
        (
            "Doctors had treated eight-year-old children with anorexia",
            "Doctors had treated 8-year-old children with anorexia",
        ),
        (
            "Fifty-seven senators have signed the letter",
            "57 senators have signed the letter",
        ),
        (
            "A city of four million people",
            "A city of 4 million people",
        ),
    ] {
        assert_verdict(a, b, false);
    }
    assert_verdict(
        "The deploy takes five minutes",
        "The deploy takes 20 minutes",
        true,
    );
}

#[test]
fn a_passive_needs_a_tensed_form_of_be() {
    // "without being stopped" is a phrase inside the active clause: its
    // agent stays where it is written.
    assert_verdict(
        "Inspectors walked into a restricted area at one park without being stopped",
        "Inspectors walked into a restricted area at one park without being stopped by employees",
        false,
    );
    // A reporting verb ends the passive's subject.
    assert_verdict(
        "The marriage was not set up by force, said Vasile Ionescu",
        "Vasile Ionescu said the marriage was not set up by force",
        false,
    );
}

#[test]
fn a_negation_typed_without_its_apostrophe_is_one() {
    assert_verdict(
        "Details haven't been finalized, said Mike Nash",
        "Details havent been finalized, said Mike Nash",
        false,
    );
}

#[test]
fn a_verb_that_ends_an_activity_denies_it() {
    // WordNet's sense of ending an activity, alone or with its particle,
    // before a gerund of what the other text states.
    assert_verdict("Sam smokes", "Sam quit smoking", true);
    assert_verdict("Sam eats meat", "Sam stopped eating meat", true);
    assert_verdict("Sam smokes", "Sam gave up smoking", true);
    assert_verdict(
        "Sam drinks alcohol",
        "Sam has stopped drinking alcohol",
        true,
    );
    assert_verdict("Sam is smoking", "Sam quit smoking", true);
    // A time may date the end; another detail is another fact.
    assert_verdict("Jill eats meat", "Jill stopped eating meat last year", true);
    assert_verdict("Sam smokes", "Sam quit smoking in 2019", true);
    assert_verdict("Sam smokes", "Sam quit smoking in college", false);
    let ending = compare("Sam smokes", "Sam quit smoking");
    assert_eq!(ending.ending, [None, Some("quit".to_owned())]);
    // What follows the end holds then; a past occurrence is another time.
    assert_verdict("Sam smoked in college", "Sam quit smoking", false);
    assert_verdict("Sam had quit smoking", "Sam smokes", false);
    // Only wanted, possible or denied, it ends nothing; nor does a verb
    // that ends nothing, or a gerund the other text does not state.
    assert_verdict("Sam smokes", "Sam wants to quit smoking", false);
    assert_verdict("Sam eats meat", "Sam might stop eating meat", false);
    assert_verdict("Sam loves Ann", "Sam never stopped loving Ann", false);
    assert_verdict("Sam runs", "Sam started running", false);
    assert_verdict("Sam enjoys smoking", "Sam quit smoking", false);
    let kept = compare("Sam smokes", "Sam quit smoking");
    assert!(kept.keeps_apart() && !kept.covers(0) && !kept.covers(1));
}

#[test]
fn the_main_verb_places_a_statement_in_time() {
    // Past against present: two times, not a clash.
    assert_verdict("Nina was married", "Nina is not married", false);
    assert_verdict("Sam worked at Google", "Sam does not work at Google", false);
    // Two past events with another value are two occurrences; a past
    // state with another value (a birth year) is one fact.
    assert_verdict("Ben bought a red car", "Ben bought a blue car", false);
    assert_verdict("Ella was born in 1990", "Ella was born in 1992", true);
    // A participle or a gerund is not the finite verb: these stay in the
    // present and clash.
    assert_verdict(
        "The man surrounded by photographers is wearing a suit",
        "The man surrounded by photographers is not wearing a suit",
        true,
    );
    assert_verdict(
        "There is no boy standing in the space reserved for guests",
        "A boy is standing in the space reserved for guests",
        true,
    );
    // Nouns after a determiner are not verbs: "The kids" is no present.
    assert_verdict(
        "The kids went to school",
        "The kids did not go to school",
        true,
    );
}

#[test]
fn a_verdict_names_every_reason_a_pair_is_never_merged() {
    // A reader choosing thresholds sees why, not only that, two texts
    // stay apart.
    for (a, b, reason) in [
        (
            "A person is slicing an onion",
            "A man is slicing an onion",
            "more general words: `person` ↔ `man`",
        ),
        (
            "Sam went to the college",
            "Sam went to the college party",
            "the second speaks of another thing",
        ),
        (
            "Sam bought a car",
            "Sam bought a car without asking anyone",
            "a negation that bears on no shared word",
        ),
    ] {
        let found = compare(a, b);
        let verdict = found.verdict(true, true);
        assert!(
            verdict.starts_with("not a contradiction; never merged") && verdict.contains(reason),
            "{a} / {b}: {verdict}"
        );
    }
}

#[test]
fn a_definition_or_a_derivation_relates_words_of_one_fact() {
    let wordnet = wordnet();
    let word = |w: &str| wordnet.word(w);
    // A verb defined as being in a state ("work": "be employed"), in a
    // common sense of its own; not another verb's irregular past ("left":
    // "remain", "be left").
    assert!(wordnet.same_or_synonym("works", "employed"));
    assert!(wordnet.same_or_synonym("sit", "seated"));
    assert!(!wordnet.same_or_synonym("remains", "left"));
    // A verb defined as another with more said, where WordNet files it
    // under that verb too: "prefer" is "like better". One way only; not
    // a definition WordNet files elsewhere ("run" is "move fast …", a kind
    // of travelling rapidly), nor a kind alone ("a man" is a person).
    assert!(wordnet.says_more_than(&word("prefers"), &word("likes")));
    assert!(!wordnet.says_more_than(&word("likes"), &word("prefers")));
    assert!(!wordnet.says_more_than(&word("runs"), &word("moves")));
    assert!(!wordnet.says_more_than(&word("man"), &word("person")));
    // A noun derived from an adjective's first sense, not a country
    // from its adjective.
    assert!(word("allergic").derives(&word("allergy")));
    assert!(word("allergy").derives(&word("allergic")));
    assert!(!word("french").derives(&word("france")));
}

#[test]
fn a_capitalised_common_word_opening_a_sentence_is_no_name() {
    // After "!" or "?" a sentence opens whatever the word before it: "You"
    // after "Maria!" is the pronoun and "Stay" the verb, as "Talks began.
    // The talks …" opens on the article. A name stays a name there.
    use engram::detect::align::{Role, tokens};
    let lexicon = settings_with_wordnet().lexicon;
    let roles = |text: &str| -> Vec<(String, Role)> {
        tokens(text, &lexicon)
            .into_iter()
            .map(|t| (t.word, t.role))
            .collect()
    };
    let found = roles("Thanks, Maria! You too! Stay safe! Priya left?  Great talking");
    let role_of = |word: &str| {
        found
            .iter()
            .filter(|(w, _)| w == word)
            .map(|(_, r)| *r)
            .collect::<Vec<_>>()
    };
    assert_eq!(role_of("you"), vec![Role::Function], "{found:?}");
    assert_eq!(role_of("stay"), vec![Role::Content], "{found:?}");
    assert_eq!(role_of("great"), vec![Role::Content], "{found:?}");
    assert_eq!(role_of("maria"), vec![Role::Name], "{found:?}");
    assert_eq!(role_of("priya"), vec![Role::Name], "{found:?}");
    // Mid-sentence a capital still marks a name, and an abbreviation's
    // full stop still ends no sentence.
    assert_eq!(roles("They met at Reading")[3].1, Role::Name);
    assert_eq!(roles("They flew U.S. Airways")[3].1, Role::Name);
}

#[test]
fn a_frame_bears_on_its_own_sentence_only() {
    // "Hope" opening a sentence of its own hedges that sentence, not the
    // move stated before it; within its sentence it frames what it
    // governs.
    let apart = compare(
        "Sam moved to Paris last week. Hope the weather is good",
        "Sam moved to Paris last week",
    );
    assert_eq!(
        apart.reframes,
        [false, false],
        "{}",
        apart.verdict(true, true)
    );
    let framed = compare(
        "Sam moved to Paris last week. I hope Sam likes Paris",
        "Sam likes Paris",
    );
    assert!(framed.reframes[0], "{}", framed.verdict(true, true));
}

#[test]
fn a_pattern_object_keeps_only_the_leading_words_its_episodes_say() {
    // "huge" is one episode's of three: the pattern says what recurs,
    // "makes a difference"; function words leading to the object stay.
    use engram::detect::align::{recurring_phrase, tokens};
    let lexicon = settings_with_wordnet().lexicon;
    let phrase = |texts: &[&str]| {
        let all: Vec<_> = texts.iter().map(|t| tokens(t, &lexicon)).collect();
        recurring_phrase(&all, 0, texts[0], &lexicon)
    };
    assert_eq!(
        phrase(&[
            "John makes a huge difference",
            "John makes a difference in his community",
            "John hopes to make a difference",
        ])
        .as_deref(),
        Some("John makes a difference")
    );
    assert_eq!(
        phrase(&[
            "Maria volunteers at a homeless shelter",
            "Maria volunteers at the homeless shelter downtown",
            "Maria volunteered at a shelter",
        ])
        .as_deref(),
        Some("Maria volunteers at a homeless shelter")
    );
    // A rank is a value of its own: "first" is said where an episode says
    // "first", not wherever one "starts" something. The function words
    // that lead to the object stay, one episode's modifiers go.
    assert_eq!(
        phrase(&[
            "Lena finishes her first short novel",
            "Lena starts her second novel",
            "Lena finishes her third novel about the sea",
        ])
        .as_deref(),
        Some("Lena finishes her novel")
    );
    // A time told from one episode's day holds on none of the others:
    // the pattern's dates say when.
    assert_eq!(
        phrase(&[
            "Omar won a chess match last week",
            "Omar won a chess match last week at the club",
            "Omar won a chess match against Lee",
        ])
        .as_deref(),
        Some("Omar wins a chess match")
    );
    // A participle that describes the noun before it is no verb of the
    // subject's: what recurs here is no one thing Omar does.
    assert_eq!(
        phrase(&[
            "Omar buys a table made of oak",
            "Omar restores a chair made of oak",
            "Omar paints a desk made of oak",
        ]),
        None
    );
}

#[test]
fn a_joined_pattern_says_what_its_grown_instances_say_when_they_rank_its_object() {
    // Three novels finished, two of them a first one ("first" said by
    // half), then two more: the grown pattern says "her novel", which its
    // instances say with a rank between ("her third novel"), rather than
    // keeping "her first novel" with a count of five.
    use engram::detect::patterns::{self, PATTERN_CATEGORY};
    use engram::detect::{Prepared, Snapshot};
    use engram::model::{Link, LinkType, Memory, MemoryKind, MemoryStatus};
    use engram::salience::SalienceState;
    const DAY: i64 = 86_400_000;
    const T0: i64 = 1_788_000_000_000;
    let memory = |id: &str, content: &str, day: i64, axis: usize| {
        // Unit vectors at cosine 0.95 to one axis: every pair is close.
        let mut embedding = vec![0.0f32; engram::embed::EMBEDDING_DIM];
        embedding[0] = 0.95;
        embedding[axis] = (1.0f32 - 0.95 * 0.95).sqrt();
        Memory {
            user_id: "u".into(),
            id: id.into(),
            kind: MemoryKind::Episodic,
            category: None,
            tags: vec![],
            content_hash: engram::text::content_hash(content),
            content: content.into(),
            importance: 0.5,
            source: None,
            embedding: Some(embedding),
            status: MemoryStatus::Active,
            salience: SalienceState::new(T0 + day * DAY),
            merged_from: vec![],
            derived_from: vec![],
            last_run_id: None,
            updated_at: None,
        }
    };
    let mut pattern = memory(
        "p",
        "Lena finishes her first novel (3 times, 1 March 2026 – 3 March 2026)",
        2,
        9,
    );
    pattern.kind = MemoryKind::Semantic;
    pattern.category = Some(PATTERN_CATEGORY.to_owned());
    let mut memories = vec![
        memory("a", "Lena finishes her first novel", 0, 2),
        memory("b", "Lena finally finishes her first novel", 1, 3),
        memory("c", "Lena finishes her second novel", 2, 4),
        memory("d", "Lena finishes her third novel", 9, 5),
        memory("e", "Lena finishes her fourth novel", 10, 6),
        pattern,
    ];
    memories.sort_by(|x, y| (x.created_at(), &x.id).cmp(&(y.created_at(), &y.id)));
    let links = ["a", "b", "c"]
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
    let snapshot = Snapshot {
        user_id: "u".into(),
        memories,
        links,
    };
    let settings = settings_with_wordnet();
    let mut detect = settings.detect_settings(engram::model::Tier::Gentle);
    detect.lookback = 30 * DAY;
    let found = patterns::detect(
        &snapshot,
        &Prepared::new(&snapshot),
        T0 + 11 * DAY,
        &detect,
        &settings.lexicon,
    );
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].pattern_id.as_deref(), Some("p"));
    assert_eq!(found[0].instances, vec!["a", "b", "c", "d", "e"]);
    assert!(
        found[0]
            .content
            .starts_with("Lena finishes her novel (5 times,"),
        "{}",
        found[0].content
    );
}
