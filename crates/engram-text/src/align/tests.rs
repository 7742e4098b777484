use super::*;
use super::{classify::*, clauses::*, compare::*, tokens::*};
use crate::testing::lexicon;

/// The time of day `text` opens with: the words read and the value.
fn clock_read(text: &str) -> Option<(&str, String)> {
    clock(text).map(|(len, v)| (&text[..len], v))
}

fn comparison(a: &str, b: &str) -> Comparison {
    let lexicon = lexicon();
    compare(&tokens(a, &lexicon), &tokens(b, &lexicon), &lexicon)
}

#[test]
fn function_words_alone_make_no_difference() {
    let found = comparison("The API is fast", "An API is fast");
    assert!(found.conflicts.is_empty() && found.substitutions.is_empty());
    assert_eq!(found.extra, [0, 0]);
    assert!(found.covers(0) && found.covers(1));
}

#[test]
fn a_quotation_or_sentence_opens_on_function_words_not_names() {
    // "The" opening a quotation or a sentence is the article, not a
    // name; mid-sentence, a capitalised word is still read as a name.
    let lexicon = lexicon();
    let role = |text: &str, at: usize| tokens(text, &lexicon)[at].role;
    assert_eq!(role("He said, \"The talks failed.\"", 2), Role::Function);
    assert_eq!(role("Talks began. The talks failed", 2), Role::Function);
    assert_eq!(role("He said: It failed", 2), Role::Function);
    assert_eq!(role("Rain fell on Reading", 3), Role::Name);
    // The full stop of an abbreviation ends no sentence.
    assert_eq!(role("They flew U.S. Airways", 3), Role::Name);
    assert_eq!(role("They met The Who", 2), Role::Name);
}

#[test]
fn a_time_of_day_is_read_on_the_24_hour_clock_however_written() {
    assert_eq!(clock_read("3pm sharp"), Some(("3pm", "15:00".to_owned())));
    assert_eq!(
        clock_read("6:30 p.m. on"),
        Some(("6:30 p.m.", "18:30".to_owned()))
    );
    assert_eq!(clock_read("12 am"), Some(("12 am", "00:00".to_owned())));
    assert_eq!(clock_read("18:30"), Some(("18:30", "18:30".to_owned())));
    // The half of the day unsaid.
    assert_eq!(clock_read("6:30,"), Some(("6:30", "~6:30".to_owned())));
    assert!(same_time("~6:30", "18:30") && same_time("7", "19:00"));
    assert!(!same_time("18:00", "06:00") && !same_time("7", "8"));
    // Not a time of day: a bare number, an hour past 12 with "pm",
    // minutes past 59, a word that goes on.
    for text in ["6 people", "13 pm", "6:75", "6 amps", "2019"] {
        assert_eq!(clock_read(text), None, "{text}");
    }
}

#[test]
fn an_address_is_read_whole_without_the_punctuation_closing_it() {
    fn value(text: &str) -> Option<&str> {
        address(text).map(|len| &text[..len])
    }
    assert_eq!(value("alex.b@example.com."), Some("alex.b@example.com"));
    assert_eq!(
        value("https://example.com/a?b=1), then"),
        Some("https://example.com/a?b=1")
    );
    assert_eq!(value("www.example.org/docs"), Some("www.example.org/docs"));
    // A host and a path need no scheme.
    assert_eq!(
        value("github.com/acme/engram-old,"),
        Some("github.com/acme/engram-old")
    );
    // Not an address: no domain, a bare scheme, a word.
    for text in [
        "alex@localhost",
        "https:// x",
        "e.g. this",
        "user@.com",
        "and/or",
        "1.5/2",
        "vs./versus",
    ] {
        assert_eq!(value(text), None, "{text}");
    }
    let tokens = tokens("Write to alex.b@example.com today", &lexicon());
    let words: Vec<&str> = tokens.iter().map(|t| t.word.as_str()).collect();
    assert_eq!(words, ["write", "to", "alex.b@example.com", "today"]);
}

#[test]
fn the_half_of_the_day_may_be_said_in_words() {
    assert_eq!(
        clock_read("6 in the morning."),
        Some(("6 in the morning", "06:00".to_owned()))
    );
    assert_eq!(
        clock_read("7:30 in the Evening"),
        Some(("7:30 in the Evening", "19:30".to_owned()))
    );
    assert_eq!(
        clock_read("3 in the afternoon"),
        Some(("3 in the afternoon", "15:00".to_owned()))
    );
    // Late at night is the evening's; small hours are the morning's.
    assert_eq!(
        clock_read("10 at night"),
        Some(("10 at night", "22:00".to_owned()))
    );
    assert_eq!(
        clock_read("12 at night"),
        Some(("12 at night", "00:00".to_owned()))
    );
    assert_eq!(
        clock_read("2 at night"),
        Some(("2 at night", "02:00".to_owned()))
    );
    // "o'clock" makes a bare hour a time whose half is unsaid.
    assert_eq!(
        clock_read("6 o'clock"),
        Some(("6 o'clock", "~6:00".to_owned()))
    );
    assert_eq!(
        clock_read("6 o'clock in the morning"),
        Some(("6 o'clock in the morning", "06:00".to_owned()))
    );
    // A count of something in the morning is no time.
    assert_eq!(clock_read("6 in the mornings"), None);
    assert_eq!(clock_read("13 in the morning"), None);
}

#[test]
fn digits_joined_by_a_point_or_a_thousands_separator_are_one_number() {
    let lexicon = lexicon();
    fn roles(found: &[Token]) -> Vec<(&str, Role)> {
        found.iter().map(|t| (t.word.as_str(), t.role)).collect()
    }
    let found = tokens("About 37,000 at .20 for $6.32, or $1.4bn, 3, 4", &lexicon);
    assert_eq!(
        roles(&found),
        [
            ("about", Role::Function),
            ("37,000", Role::Number),
            ("at", Role::Function),
            (".20", Role::Number),
            ("for", Role::Function),
            ("6.32", Role::Number),
            ("or", Role::Function),
            ("1.4bn", Role::Content),
            ("3", Role::Number),
            ("4", Role::Number),
        ]
    );
    let values = number_values(&found.iter().collect::<Vec<_>>());
    assert_eq!(values, ["37000", "0.20", "6.32", "3", "4"]);
    // A number run into a unit is a number, the unit aside.
    let measured = tokens("5km, 16GB, 1.5kg, 5G", &lexicon);
    assert_eq!(
        roles(&measured),
        [
            ("5km", Role::Number),
            ("16gb", Role::Number),
            ("1.5kg", Role::Number),
            ("5g", Role::Name)
        ]
    );
    assert_eq!(
        number_values(&measured.iter().collect::<Vec<_>>()),
        ["5", "16", "1.5"]
    );
    assert!(same_values(&["6.3".into()], &["6.32".into()]));
    assert!(same_values(&["5".into()], &["5.2".into()]));
    assert!(!same_values(&["6.3".into()], &["6.8".into()]));
    assert!(!same_values(&["38.28".into()], &["38.30".into()]));
}

#[test]
fn an_open_and_a_closed_compound_are_one_word() {
    for (open, closed) in [
        ("Profits rose 5 per cent", "Profits rose 5 percent"),
        (
            "She signed a multi-year contract",
            "She signed a multiyear contract",
        ),
        ("The web site is down", "The website is down"),
    ] {
        for found in [comparison(open, closed), comparison(closed, open)] {
            assert!(found.substitutions.is_empty(), "{open} / {closed}");
            assert_eq!(found.extra, [0, 0], "{open} / {closed}");
        }
    }
}

#[test]
fn a_detail_on_one_side_lets_the_detailed_text_cover_the_other() {
    let found = comparison("Deploys run on Fridays", "Deploys run on Fridays at noon");
    assert_eq!(found.extra, [0, 1]);
    assert!(found.covers(1) && !found.covers(0));
    assert!(!found.keeps_apart());
    let both = comparison(
        "Deploys run on Fridays at noon",
        "Deploys run nightly on Fridays",
    );
    assert!(both.keeps_apart(), "details on both sides: neither covers");
}

#[test]
fn a_swapped_content_word_is_a_substitution_not_a_conflict() {
    let found = comparison("The user lives in Berlin", "The user works in Berlin");
    assert_eq!(found.substitutions, vec![("lives".into(), "works".into())]);
    assert!(!found.contradicts() && found.keeps_apart());
}

#[test]
fn a_negated_antonym_says_the_same_as_the_antonym() {
    let agree = comparison(
        "The store is not open on Sundays",
        "The store is closed on Sundays",
    );
    assert!(agree.conflicts.is_empty(), "{agree:?}");
    assert!(!agree.contradicts() && agree.keeps_apart());
    let doubled = comparison("The door is open", "The door is not closed");
    assert!(doubled.conflicts.is_empty() && !doubled.contradicts());
    // "never" is the antonym itself, not a negation beside it.
    let opposed = comparison("Jo always walks to work", "Jo never walks to work");
    assert!(opposed.contradicts(), "{opposed:?}");
    assert!(
        comparison(
            "The store is open on Sundays",
            "The store is closed on Sundays"
        )
        .contradicts()
    );
}

#[test]
fn a_denial_beside_another_value_denies_that_value_only() {
    let other = comparison("The meeting is not at 3 pm", "The meeting is at 5 pm");
    assert!(!other.contradicts(), "{other:?}");
    assert!(comparison("The meeting is at 3 pm", "The meeting is at 5 pm").contradicts());
    assert!(comparison("The meeting is not at 5 pm", "The meeting is at 5 pm").contradicts());
}

#[test]
fn predicates_sharing_a_subject_are_each_asserted() {
    let lexicon = lexicon();
    let split = |text: &str| -> Vec<String> {
        clauses(&tokens(text, &lexicon))
            .iter()
            .map(|c| {
                c.iter()
                    .map(|t| t.word.as_str())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect()
    };
    // (A verb after the conjunction, "but loves cycling", needs
    // WordNet's verb forms: tests/consolidation.rs.)
    assert_eq!(
        split("Jo is not at home and is cooking"),
        ["jo is not at home", "jo is cooking"]
    );
    assert_eq!(
        split("The shop is closed on Sundays but open on Mondays"),
        [
            "the shop is closed on sundays",
            "the shop is open on mondays"
        ]
    );
    // A second object, a second adjective, and a denial of the pair
    // are one predicate.
    for one in [
        "The man is wearing a jacket and a hat",
        "The dog is brown and white",
        "There is no man standing near the water and holding fishing poles",
    ] {
        assert_eq!(split(one).len(), 1, "{one}");
    }
    let found = clause_conflict(
        &tokens(
            "The shop is closed on Sundays but open on Mondays",
            &lexicon,
        ),
        &tokens("The shop is open on Sundays", &lexicon),
        &lexicon,
    );
    assert!(found.is_some_and(|c| c.explanation().contains("`closed` ↔ `open`")));
}

#[test]
fn a_denial_may_date_itself_but_add_nothing_else() {
    let dated = comparison("Kevin does not have a car anymore", "Kevin has a car");
    assert!(dated.contradicts(), "{dated:?}");
    assert_eq!(dated.dating, [1, 0]);
    let detailed = comparison("Kevin does not have a red car", "Kevin has a car");
    assert!(!detailed.contradicts(), "{detailed:?}");
}

#[test]
fn a_past_and_a_present_statement_do_not_clash() {
    let times = comparison(
        "Emma was not happy with her job",
        "Emma is happy with her job",
    );
    assert_eq!(times.conflicts.len(), 1, "{times:?}");
    assert!(!times.contradicts());
    let denied = comparison("Tom did not call on Monday", "Tom did call on Monday");
    assert!(denied.contradicts(), "{denied:?}");
    let occurrences = comparison("Tom did call on Monday", "Tom did call on Friday");
    assert!(!occurrences.contradicts(), "{occurrences:?}");
    // A present perfect reaches into the past.
    let perfect = comparison("Lena hasn't been to Japan", "Lena was in Japan");
    assert!(perfect.contradicts(), "{perfect:?}");
}

#[test]
fn a_possessive_on_one_side_names_another_referent() {
    for (owned, owner) in [
        ("Dana's brother is a doctor", "Dana is a doctor"),
        (
            "Tom met Dana's brother at the party",
            "Tom met Dana at the party",
        ),
    ] {
        let found = comparison(owned, owner);
        assert!(!found.covers(0) && !found.contradicts(), "{found:?}");
        assert_eq!(
            found.substitutions,
            [("dana's brother".to_owned(), "dana".to_owned())]
        );
    }
    let denied = comparison("Dana's brother is a doctor", "Dana is not a doctor");
    assert!(!denied.contradicts(), "{denied:?}");
    // A possessive before a shared noun only modifies it.
    let modifier = comparison("The family's old car is red", "The family car is red");
    assert!(modifier.substitutions.is_empty(), "{modifier:?}");
    // "'s" for "is" is no possessive.
    let short = comparison("Dana's a doctor", "Dana is a doctor");
    assert!(short.covers(0) && short.covers(1), "{short:?}");
}

#[test]
fn negations_anchor_the_alignment_like_content_words() {
    // Both texts deny giving up; the "to"s must not pair off instead.
    let both = comparison(
        "Gina encourages him not to give up",
        "Gina encourages Jon to keep pushing for his dreams and not give up",
    );
    assert!(both.conflicts.is_empty(), "{both:?}");
    assert!(!both.contradicts());
    let one = comparison(
        "He is considered a witness",
        "He is not considered a witness",
    );
    assert!(one.contradicts(), "{one:?}");
}

#[test]
fn words_that_reframe_the_shared_ones_keep_a_text_from_covering_the_other() {
    for (framed, plain) in [
        ("Kai might get a new job", "Kai got a new job"),
        ("Carl could quit his job", "Carl quit his job"),
    ] {
        let found = comparison(framed, plain);
        assert!(
            !found.covers(0) && found.keeps_apart(),
            "{framed:?}: {found:?}"
        );
    }
    // A detail that only adds is still covered.
    let detail = comparison("Dana is a doctor in Berlin", "Dana is a doctor");
    assert!(detail.covers(0), "{detail:?}");
    // One modal for another is tense or tone.
    let detail = comparison("He said he would resign", "He said he will resign");
    assert!(detail.covers(0), "{detail:?}");
}

#[test]
fn negation_must_bear_on_an_aligned_predicate() {
    let denied = comparison("The user is using Redis", "The user is not using Redis");
    assert!(denied.contradicts(), "{denied:?}");
    assert!(denied.explanation().contains("`not` negates `using`"));
    // A clause of its own with a negation is a detail.
    let clause = comparison(
        "The user is using Redis",
        "The user is using Redis when there are no outages",
    );
    assert!(
        !clause.contradicts() && clause.conflicts.is_empty(),
        "{clause:?}"
    );
}

#[test]
fn a_negated_specific_statement_does_not_deny_the_general_one() {
    let found = comparison(
        "The user rides a horse",
        "The user does not ride a horse near the lake",
    );
    assert!(!found.contradicts(), "{found:?}");
    assert!(found.keeps_apart());
}

#[test]
fn a_general_denial_denies_every_specific_case() {
    let found = comparison(
        "The user does not ride a horse",
        "The user rides a horse near the lake every Sunday with friends",
    );
    assert!(found.contradicts(), "{found:?}");
}

#[test]
fn a_different_referent_in_the_subject_is_not_a_contradiction() {
    let found = comparison("Alice is using Redis", "Bob is using Redis");
    assert!(!found.contradicts(), "{found:?}");
    assert!(found.keeps_apart());
}

#[test]
fn values_in_one_slot_conflict_and_name_their_class() {
    let found = comparison(
        "The service stores sessions in Redis",
        "The service stores sessions in Memcached",
    );
    assert!(found.contradicts(), "{found:?}");
    assert_eq!(found.explanation(), "`redis` ↔ `memcached` (cache)");
    let numbers = comparison("The deploy takes 5 minutes", "The deploy takes 20 minutes");
    assert_eq!(numbers.explanation(), "`5` ↔ `20` (numbers)");
}

#[test]
fn a_number_spelled_in_words_or_written_in_digits_is_one_value() {
    let same = comparison(
        "The user is 28 years old",
        "The user is twenty-eight years old",
    );
    assert!(same.covers(0) && same.covers(1), "{same:?}");
    let other = comparison(
        "The user is 28 years old",
        "The user is twenty-nine years old",
    );
    assert!(other.contradicts(), "{other:?}");
    assert_eq!(other.explanation(), "`28` ↔ `29` (numbers)");
    // A decade is no year.
    let decade = comparison("It was built in 1990", "It was built in the 1990s");
    assert!(!decade.covers(0) && !decade.covers(1), "{decade:?}");
}

#[test]
fn a_count_of_occasions_is_one_value_however_written() {
    // "twice" is "two times", and two counts of one thing conflict.
    let same = comparison(
        "The user has been to Lisbon twice",
        "The user has been to Lisbon two times",
    );
    assert!(same.covers(0) && same.covers(1), "{same:?}");
    let other = comparison(
        "The user has been to Lisbon twice",
        "The user has been to Lisbon three times",
    );
    assert!(other.contradicts(), "{other:?}");
    assert_eq!(other.explanation(), "`2 times` ↔ `3 times` (numbers)");
    let weekly = comparison(
        "The user swims 3 times a week",
        "The user swims twice a week",
    );
    assert!(weekly.contradicts(), "{weekly:?}");
    let once = comparison("The user met Ana once", "The user met Ana twice");
    assert_eq!(once.explanation(), "`1 time` ↔ `2 times` (numbers)");
    // A count of occasions is not a count of things: "two cats" is no
    // "twice", and "times" with no number before it is a word of its own.
    let things = comparison("The user fed two cats", "The user fed the cats twice");
    assert!(!things.contradicts(), "{things:?}");
    let lexicon = lexicon();
    let words = |text: &str| -> Vec<String> {
        tokens(text, &lexicon).into_iter().map(|t| t.word).collect()
    };
    assert_eq!(words("hard times"), ["hard", "times"]);
    assert_eq!(words("it rang 10 times"), ["it", "rang", "10 times"]);
}

#[test]
fn ordinals_spelled_or_written_are_one_rank_and_two_ranks_conflict() {
    let grades = comparison(
        "The user's daughter is in third grade",
        "The user's daughter is in fifth grade",
    );
    assert!(grades.contradicts(), "{grades:?}");
    assert_eq!(grades.explanation(), "`3rd` ↔ `5th` (numbers)");
    let same = comparison(
        "The user's office is on the 11th floor",
        "The user's office is on the eleventh floor",
    );
    assert!(same.covers(0) && same.covers(1), "{same:?}");
    // A rank is not a count: "the third week" / "three weeks".
    let counted = comparison("It is the third week", "It is three weeks");
    assert!(!counted.contradicts(), "{counted:?}");
    assert_eq!(ordinal_written(1), "1st");
    assert_eq!(ordinal_written(12), "12th");
    assert_eq!(ordinal_written(22), "22nd");
    assert_eq!(ordinal_rank("3rd"), Some(3));
    assert_eq!(ordinal_rank("rd"), None);
    assert_eq!(ordinal_rank("north"), None);
}

#[test]
fn the_sides_of_a_comparison_or_a_preference_traded_are_the_opposite_statement() {
    for (first, second) in [
        (
            "The user prefers tea over coffee",
            "The user prefers coffee over tea",
        ),
        ("Ann is taller than Ben", "Ben is taller than Ann"),
        (
            "I prefer email to phone calls",
            "I prefer phone calls to email",
        ),
        // A place relation that holds one way at a time.
        (
            "A cheetah is running behind its prey",
            "A prey is running behind the cheetah",
        ),
    ] {
        let found = comparison(first, second);
        assert!(found.contradicts(), "{first:?} / {second:?}: {found:?}");
    }
    // Other traded roles keep a merge apart but state no opposite: a
    // symmetric comparison, a route; nor do two denials.
    for (first, second) in [
        ("Ann is as tall as Ben", "Ben is as tall as Ann"),
        (
            "The user drove from Berlin to Paris",
            "The user drove from Paris to Berlin",
        ),
        ("Ann is not taller than Ben", "Ben is not taller than Ann"),
    ] {
        let found = comparison(first, second);
        assert!(!found.contradicts(), "{first:?} / {second:?}: {found:?}");
        assert!(found.keeps_apart(), "{first:?} / {second:?}: {found:?}");
    }
}

#[test]
fn moved_words_are_no_detail_but_keep_a_merge_apart() {
    let found = comparison(
        "On Fridays the team deploys the API",
        "The team deploys the API on Fridays",
    );
    assert_eq!(found.extra, [0, 0], "{found:?}");
    assert!(found.moved > 0);
    let roles = comparison("A fish is hunting a turtle", "A turtle is hunting a fish");
    assert!(
        roles.keeps_apart(),
        "swapped roles are another fact: {roles:?}"
    );
}

#[test]
fn a_denial_names_the_word_it_stands_before_though_that_word_moved() {
    // The denied verb is also in the other text, elsewhere: the alignment
    // moves it out of the negation's hunk, and the explanation named the
    // aligned word after the hunk ("`not` negates `scarf`") instead.
    let lexicon = lexicon();
    let denial = |a: &str, b: &str| {
        let found = compare(&statement(a, &lexicon), &statement(b, &lexicon), &lexicon);
        found
            .conflicts
            .iter()
            .map(|c| c.detail.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        denial(
            "Ana wears glasses and a red scarf and cycles to work",
            "Ana cycles to work with a red scarf and does not wear glasses"
        ),
        ["`not` negates `wear` in the second only"]
    );
    assert_eq!(
        denial(
            "Ana cycles to work and is not wearing a helmet",
            "Ana is wearing a helmet and cycles to work"
        ),
        ["`not` negates `wearing` in the first only"]
    );
}

#[test]
fn a_preference_is_read_without_the_alternative_the_other_text_chose() {
    let lexicon = lexicon();
    let read = |text: &str, other: &str| {
        let (text, other) = (tokens(text, &lexicon), tokens(other, &lexicon));
        without_rejected_alternative(&text, &other)
            .iter()
            .map(|t| t.word.clone())
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(
        read(
            "User prefers dark mode over light mode",
            "User prefers light mode"
        ),
        "user prefers dark mode"
    );
    assert_eq!(
        read(
            "Ana prefers tea rather than coffee in the morning",
            "Ana prefers coffee"
        ),
        "ana prefers tea in the morning"
    );
    // The other text has the choice too, or not the alternative: as said.
    assert_eq!(
        read("User prefers coffee over tea", "User prefers coffee"),
        "user prefers coffee over tea"
    );
    // After an infinitive, "to" says where, not what is rejected.
    assert_eq!(
        read("User prefers to travel to Japan", "User prefers Japan"),
        "user prefers to travel to japan"
    );
}

#[test]
fn a_date_set_aside_from_a_change_is_still_its_sides_detail() {
    // Against an undated text the change's closing date is left out of
    // the alignment, yet counted: a merge goes into the dated text.
    let found = comparison("User moved to Seattle in 2023", "User moved to Seattle");
    assert!(found.conflicts.is_empty(), "{:?}", found.conflicts);
    assert_eq!(found.extra, [1, 0]);
    assert_eq!(found.content[0], found.content[1] + 1);
    // Dated on both sides, the dates stay and are compared.
    let found = comparison(
        "User moved to Seattle in 2023",
        "User moved to Seattle in 2021",
    );
    assert!(!found.conflicts.is_empty());
}

/// Runs a file of `first<TAB>second<TAB>verdict` cases (`cases/*.tsv`)
/// through the alignment, each pair in both orders (a verdict may not
/// depend on which text is older); every case that fails is named.
fn run_cases(file: &str, cases: &str) {
    let mut failures = Vec::new();
    for (line, case) in cases.lines().enumerate() {
        if case.trim().is_empty() || case.starts_with('#') {
            continue;
        }
        let [first, second, expected] = case.split('\t').collect::<Vec<_>>()[..] else {
            panic!("{file}:{}: not first<TAB>second<TAB>verdict", line + 1);
        };
        for (a, b) in [(first, second), (second, first)] {
            let found = comparison(a, b);
            let verdict = if found.contradicts() {
                "conflict"
            } else if found.covers(0) || found.covers(1) {
                "covers"
            } else {
                "apart"
            };
            if verdict != expected {
                failures.push(format!(
                    "{file}:{}: {a} / {b}: {verdict}, not {expected}",
                    line + 1
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn opposite_relations_are_conflicts_whatever_else_the_texts_share() {
    run_cases(
        "opposite_relations.tsv",
        include_str!("cases/opposite_relations.tsv"),
    );
}

#[test]
fn closed_class_words_of_one_meaning_are_one_fact() {
    run_cases(
        "closed_class_synonyms.tsv",
        include_str!("cases/closed_class_synonyms.tsv"),
    );
}

/// `sentence` repeated until the text is `words` words long or longer.
fn long_text(sentence: &str, words: usize) -> String {
    let per = sentence.split_whitespace().count();
    vec![sentence; words.div_ceil(per)].join(" ")
}

#[test]
fn texts_longer_than_the_rules_read_are_kept_apart_unless_word_for_word_the_same() {
    // A document is no one statement, and aligning costs the product of
    // the two lengths: past MAX_COMPARED_WORDS the rules read neither.
    let lexicon = lexicon();
    let long = long_text(
        "The cat sat on the mat near the door.",
        MAX_COMPARED_WORDS + 1,
    );
    let denied = long.replacen("The cat sat", "The cat never sat", 1);
    let added = format!("{long} It was asleep.");
    for (a, b) in [(&long, &denied), (&long, &added), (&denied, &long)] {
        let (a, b) = (tokens(a, &lexicon), tokens(b, &lexicon));
        assert!(a.len().max(b.len()) > MAX_COMPARED_WORDS);
        let found = compare(&a, &b, &lexicon);
        assert!(!found.contradicts(), "{}", found.verdict(true, false));
        assert!(found.never_merged() && found.keeps_apart());
        assert!(
            found
                .verdict(true, false)
                .contains("too long to compare word by word"),
            "{}",
            found.verdict(true, false)
        );
        assert!(!may_conflict(&a, &b, &lexicon));
        assert!(clause_conflict(&a, &b, &lexicon).is_none());
    }
    // The same words, however many, are the same text: they may merge.
    let (a, b) = (tokens(&long, &lexicon), tokens(&long, &lexicon));
    let same = compare(&a, &b, &lexicon);
    assert!(same.covers(0) && same.covers(1) && !same.contradicts());
    // Within the limit, the rules read the whole: a denial contradicts.
    let short = long_text("The cat sat on the mat.", MAX_COMPARED_WORDS / 2);
    let short_denied = short.replacen("The cat sat", "The cat never sat", 1);
    assert!(tokens(&short_denied, &lexicon).len() <= MAX_COMPARED_WORDS);
    let found = comparison(&short, &short_denied);
    assert!(found.contradicts(), "{}", found.verdict(true, false));
}
