//! Tokens: words, numbers, times of day, addresses and compounds, each
//! with its role and what the lexicon knows of it.

use super::*;

pub(super) static NUMBER_WORDS: WordClass = WordClass::new("number_words");

/// The value a cardinal number word spells, so that "eight" and "8" are
/// one value; multipliers ("million") stay words, as they do after digits.
pub(super) fn spelled_number(word: &str) -> Option<u32> {
    const UNITS: [&str; 20] = [
        "zero",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
    ];
    const TENS: [&str; 8] = [
        "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
    ];
    if let Some(k) = UNITS.iter().position(|u| *u == word) {
        return u32::try_from(k).ok();
    }
    if let Some(k) = TENS.iter().position(|t| *t == word) {
        return u32::try_from(k * 10 + 20).ok();
    }
    // "twice" and "third" count something else than "two" and "three".
    (word == "dozen").then_some(12)
}

/// How many occasions a count of them says: "twice", "two times" and "2
/// times" are one count, which "two" alone (a count of things) is not.
pub(super) fn occasions(word: &str) -> Option<u32> {
    match word {
        "once" => Some(1),
        "twice" => Some(2),
        "thrice" => Some(3),
        _ => {
            let count = word.strip_suffix(" times")?;
            spelled_number(count).or_else(|| {
                count
                    .chars()
                    .all(|c| c.is_ascii_digit())
                    .then(|| count.parse().ok())
                    .flatten()
            })
        }
    }
}

/// The lemma both spellings of a count of occasions share.
fn occasions_lemma(count: u32) -> String {
    if count == 1 {
        "1 time".to_owned()
    } else {
        format!("{count} times")
    }
}

/// The rank an ordinal spells or writes: "third" and "3rd" are one rank.
pub(super) fn ordinal_rank(word: &str) -> Option<u32> {
    const SPELLED: [&str; 12] = [
        "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth",
        "tenth", "eleventh", "twelfth",
    ];
    if let Some(k) = SPELLED.iter().position(|w| *w == word) {
        return u32::try_from(k + 1).ok();
    }
    let digits = word
        .strip_suffix("st")
        .or_else(|| word.strip_suffix("nd"))
        .or_else(|| word.strip_suffix("rd"))
        .or_else(|| word.strip_suffix("th"))?;
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The lemma that marks an ordinal as a day of the month: the number it
/// ranks ([`tokens`] adds it).
pub(super) fn day_lemma(rank: u32) -> String {
    rank.to_string()
}

/// The day an ordinal names, where [`tokens`] read it as a day of the
/// month ("March `3rd`": 3).
pub(super) fn day_of_month(token: &Token) -> Option<u32> {
    ordinal_rank(&token.word).filter(|&rank| token.info.lemmas.contains(&day_lemma(rank)))
}

/// A rank as digits write it: 3 is "3rd", 11 "11th".
pub(super) fn ordinal_written(rank: u32) -> String {
    let suffix = match (rank % 100, rank % 10) {
        (11..=13, _) => "th",
        (_, 1) => "st",
        (_, 2) => "nd",
        (_, 3) => "rd",
        _ => "th",
    };
    format!("{rank}{suffix}")
}

/// The value digits write: "37,000" is 37000, ".20" is 0.20.
pub(super) fn number_value(digits: &str) -> String {
    let value = digits.replace(',', "");
    match value.strip_prefix('.') {
        Some(fraction) => format!("0.{fraction}"),
        None => value,
    }
}

/// The numbers of a hunk as values: digits as written, spelled numbers as
/// digits, "fifty seven" as 57.
pub(super) fn number_values(tokens: &[&Token]) -> Vec<String> {
    let mut values: Vec<String> = Vec::new();
    // The last value, when it was a spelled multiple of ten ("fifty").
    let mut tens: Option<u32> = None;
    for token in tokens.iter().filter(|t| t.role == Role::Number) {
        if let Some(count) = occasions(&token.word) {
            values.push(occasions_lemma(count));
            tens = None;
            continue;
        }
        if let Some((_, time)) = clock(&token.word) {
            values.push(time);
            tens = None;
            continue;
        }
        if let Some(unit_at) = joined_unit(&token.word) {
            values.push(number_value(&token.word[..unit_at]));
            tens = None;
            continue;
        }
        match (tens.take(), spelled_number(&token.word)) {
            (Some(tens), Some(unit)) if (1..10).contains(&unit) => {
                values.pop();
                values.push((tens + unit).to_string());
            }
            (_, Some(value)) => {
                values.push(value.to_string());
                tens = (value >= 20 && value % 10 == 0).then_some(value);
            }
            (_, None) => values.push(match (day_of_month(token), ordinal_rank(&token.word)) {
                (Some(day), _) => day.to_string(),
                (None, Some(rank)) => ordinal_written(rank),
                (None, None) => number_value(&token.word),
            }),
        }
    }
    values
}

/// "non" joined by a hyphen to the word it denies ("non-smoker"), also
/// where a line break left a space after the hyphen ("non- operative").
pub(super) fn non_prefix(
    text: &str,
    spans: &[(usize, usize)],
    words: &[String],
    at: usize,
) -> bool {
    words[at] == "non"
        && spans
            .get(at + 1)
            .is_some_and(|next| text[spans[at].1..next.0].trim_end() == "-")
}

/// Whether word `at` is written against a slash ("she/her", "and/or"):
/// a word named as one of several values, not used in the sentence.
pub(super) fn slashed(text: &str, spans: &[(usize, usize)], at: usize) -> bool {
    let before = at
        .checked_sub(1)
        .map_or("", |k| &text[spans[k].1..spans[at].0]);
    let after = spans
        .get(at + 1)
        .map_or("", |next| &text[spans[at].1..next.0]);
    before == "/" || after == "/"
}

/// The digits of `words` from `at` on that read as one number: groups
/// joined by a decimal point or a thousands separator ("6.32", "37,000",
/// "1,234.5"), with no space between, and a leading decimal point
/// (".20"). Its span, the index of its last word and its role: a number,
/// or a word when the groups run into letters ("1.4bn", a number again
/// where the letters are a unit: [`joined_unit`]). `None` for a single
/// group of digits.
pub(super) fn number_at(
    text: &str,
    spans: &[(usize, usize)],
    words: &[String],
    at: usize,
) -> Option<((usize, usize), usize, Role)> {
    let digits = |word: &str| !word.is_empty() && word.chars().all(|c| c.is_ascii_digit());
    if !digits(&words[at]) {
        return None;
    }
    let gap = |end: usize| &text[spans[end].1..spans.get(end + 1).map_or(text.len(), |s| s.0)];
    let mut end = at;
    while end + 1 < words.len() {
        let joined = match gap(end) {
            "." => true,
            "," => words[end + 1].len() == 3,
            _ => false,
        };
        if !joined {
            break;
        }
        end += 1;
        if !digits(&words[end]) {
            return Some(((spans[at].0, spans[end].1), end, Role::Content));
        }
    }
    let before = &text[..spans[at].0];
    let leading_point = before.ends_with('.')
        && !before[..before.len() - 1]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '.');
    let start = spans[at].0 - usize::from(leading_point);
    (end > at || leading_point).then_some(((start, spans[end].1), end, Role::Number))
}

/// A time of day at the start of `text` ("3pm", "6:30 p.m.", "18:30",
/// "7 am", "6 in the morning", "10 at night", "6 o'clock"; a bare number
/// is none): its length in bytes and its value,
/// "HH:MM" on the 24-hour clock, or "~H:MM" where the half of the day is
/// unsaid ("6:30" is 6:30 or 18:30).
pub(super) fn clock(text: &str) -> Option<(usize, String)> {
    let digits = |from: usize| text[from..].bytes().take_while(u8::is_ascii_digit).count();
    let hour_len = digits(0);
    if !(1..=2).contains(&hour_len) {
        return None;
    }
    let hour: u16 = text[..hour_len].parse().ok()?;
    let mut at = hour_len;
    let mut minutes = None;
    if text[at..].starts_with(':') && digits(at + 1) == 2 {
        minutes = Some(text[at + 1..at + 3].parse::<u16>().ok()?);
        at += 3;
    }
    // The length of `written` where `text` opens with it, spaces before it
    // allowed, as a whole word.
    let opens_with = |text: &str, written: &str| {
        let spaced = text.trim_start_matches(' ');
        let after = spaced.get(..written.len())?;
        let ends = !spaced[written.len()..]
            .chars()
            .next()
            .is_some_and(char::is_alphanumeric);
        (after.eq_ignore_ascii_case(written) && ends)
            .then(|| text.len() - spaced.len() + written.len())
    };
    let o_clock = ["o'clock", "o’clock", "oclock"]
        .into_iter()
        .find_map(|written| opens_with(&text[at..], written));
    at += o_clock.unwrap_or(0);
    let rest = &text[at..];
    // The half of the day, as the hour reads in it: 'a' the morning's, 'p'
    // the afternoon's, 'n' the night's (late evening or small hours).
    let half = [
        ("am", 'a'),
        ("a.m.", 'a'),
        ("a.m", 'a'),
        ("pm", 'p'),
        ("p.m.", 'p'),
        ("p.m", 'p'),
        ("in the morning", 'a'),
        ("in the afternoon", 'p'),
        ("in the evening", 'p'),
        ("at night", 'n'),
    ]
    .into_iter()
    .find_map(|(written, half)| opens_with(rest, written).map(|len| (len, half)));
    let ends_here = !rest.chars().next().is_some_and(char::is_alphanumeric);
    let minutes_value = minutes.unwrap_or(0);
    if minutes_value >= 60 {
        return None;
    }
    match half {
        Some((len, half)) if (1..=12).contains(&hour) => {
            let hour = match half {
                'p' => hour % 12 + 12,
                'n' if (6..12).contains(&hour) => hour + 12,
                _ => hour % 12,
            };
            Some((at + len, format!("{hour:02}:{minutes_value:02}")))
        }
        None if (minutes.is_some() || o_clock.is_some()) && ends_here && hour < 24 => {
            let value = if (1..=12).contains(&hour) {
                format!("~{hour}:{minutes_value:02}")
            } else {
                format!("{hour:02}:{minutes_value:02}")
            };
            Some((at, value))
        }
        _ => None,
    }
}

/// An email address or a URL at the start of `text` ("alex@example.com",
/// "https://example.com/a", "www.example.com", "github.com/acme"): its
/// length in bytes, up to the next space, without the punctuation that
/// closes a sentence or a bracket after it.
pub(super) fn address(text: &str) -> Option<usize> {
    let chunk = text.split(char::is_whitespace).next().unwrap_or("");
    let chunk = chunk.trim_end_matches(['.', ',', ';', ':', '!', '?', ')', ']', '>', '"', '\'']);
    let url = ["http://", "https://", "www."].iter().any(|scheme| {
        chunk.len() > scheme.len()
            && chunk
                .get(..scheme.len())
                .is_some_and(|start| start.eq_ignore_ascii_case(scheme))
    });
    let email = chunk.split_once('@').is_some_and(|(user, domain)| {
        !user.is_empty()
            && domain
                .split_once('.')
                .is_some_and(|(host, tld)| !host.is_empty() && !tld.is_empty())
    });
    // A host and a path without a scheme: a dotted host whose last label
    // is letters ("github.com/acme").
    let path = chunk.split_once('/').is_some_and(|(host, path)| {
        !path.is_empty()
            && host.rsplit_once('.').is_some_and(|(name, tld)| {
                !name.is_empty()
                    && !name.ends_with('.')
                    && tld.len() >= 2
                    && tld.chars().all(|c| c.is_ascii_alphabetic())
            })
    });
    (url || email || path).then_some(chunk.len())
}

/// Whether two values name one time of day: equal, or one leaves the half
/// of the day unsaid ("~6:30" / "18:30"), or one is a bare hour ("at `7`"
/// / "at `7 pm`").
pub(super) fn same_time(a: &str, b: &str) -> bool {
    let parse = |v: &str| -> Option<(bool, u16, u16)> {
        let (unsaid, v) = v.strip_prefix('~').map_or((false, v), |v| (true, v));
        match v.split_once(':') {
            Some((h, m)) => Some((unsaid, h.parse().ok()?, m.parse().ok()?)),
            // A bare hour says no half of the day and no minutes.
            None => Some((true, v.parse().ok().filter(|h| (1..=12).contains(h))?, 0)),
        }
    };
    let (Some(x), Some(y)) = (parse(a), parse(b)) else {
        return false;
    };
    if !a.contains(':') && !b.contains(':') {
        return false;
    }
    let twelve = |(_, h, m): (bool, u16, u16)| (h % 12, m);
    if x.0 || y.0 {
        twelve(x) == twelve(y)
    } else {
        (x.1, x.2) == (y.1, y.2)
    }
}

/// Units written straight after a number ("5km", "16GB", "the 1990s"):
/// SI and customary measures and data sizes. Not the multipliers ("$1.4bn"
/// is "$1.4 billion", "11M" may be millions or metres) nor single letters
/// that also name other things ("5G", "4K").
pub(super) static JOINED_UNITS: WordClass = WordClass::new("joined_units");

/// Where the unit starts in a number written into its unit ("5km",
/// "1.5kg"), if `word` is one: digits, with a decimal point or thousands
/// separators, then a unit of [`JOINED_UNITS`].
pub(super) fn joined_unit(word: &str) -> Option<usize> {
    let at = word.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == ','))?;
    let number = &word[..at];
    let starts_and_ends_with_digit = number.starts_with(|c: char| c.is_ascii_digit())
        && number.ends_with(|c: char| c.is_ascii_digit());
    (starts_and_ends_with_digit && listed(&JOINED_UNITS, &word[at..].to_lowercase())).then_some(at)
}

pub(super) fn lowercase(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_lowercase()).collect()
}

/// Whether the word after `before` opens a sentence or a quotation: it
/// follows an opening quotation mark, a colon, an exclamation or question
/// mark ("Maria! You"), or a full stop after a lowercase word ("failed.
/// The"; not the abbreviations "U.S. Airways", "Mr. Smith").
pub(super) fn opens_sentence(before: &str) -> bool {
    let before = before.trim_end();
    if before.ends_with(['"', '\u{201c}', ':', '!', '?']) {
        return true;
    }
    let Some(sentence) = before.strip_suffix('.') else {
        return false;
    };
    let last_word = sentence.rsplit(char::is_whitespace).next().unwrap_or("");
    last_word.chars().count() > 1
        && last_word
            .chars()
            .all(|c| c.is_lowercase() || c.is_ascii_digit() || c == '\'')
}

/// A text as tokens, ready to align.
pub fn tokens(text: &str, lexicon: &Lexicon) -> Vec<Token> {
    let spans: Vec<(usize, usize)> = crate::text::word_spans(text).collect();
    let original: Vec<&str> = spans.iter().map(|&(a, b)| &text[a..b]).collect();
    let words = lowercase(&original);
    let mut out = Vec::with_capacity(words.len());
    // An opening existential "There is / are" only introduces what follows:
    // "There is no dog running" states what "No dog is running" does, and
    // left in, its copula aligns with the other text's and strands the
    // negation away from the argument it denies.
    let existential = words.len() > 2
        && words[0] == "there"
        && listed(&COPULAS, words[1].as_str())
        && lexicon.negation_at(&words[1..]).is_none();
    let mut at = if existential { 2 } else { 0 };
    let opens_at = |at: usize| at == 0 || opens_sentence(&text[..spans[at].0]);
    while at < words.len() {
        // "non-binding" is "nonbinding", one word as WordNet spells it,
        // and the opposite of "binding" (see [`non_prefixed`]).
        if non_prefix(text, &spans, &words, at) {
            let word = format!("non{}", words[at + 1]);
            out.push(Token {
                opens_sentence: opens_at(at),
                money: false,
                info: lexicon.word(&word),
                word,
                role: Role::Content,
                span: (spans[at].0, spans[at + 1].1),
            });
            at += 2;
            continue;
        }
        // An address is one value, not the words its punctuation parts:
        // "alex.b@example.com" holds every word of "alex@example.com".
        if let Some(len) = address(&text[spans[at].0..]) {
            let span = (spans[at].0, spans[at].0 + len);
            let end = spans.iter().rposition(|s| s.1 <= span.1).unwrap_or(at);
            let word = text[span.0..span.1].to_lowercase();
            out.push(Token {
                opens_sentence: opens_at(at),
                money: false,
                info: Word::plain(&word),
                word,
                role: Role::Name,
                span,
            });
            at = end + 1;
            continue;
        }
        if let Some((len, value)) = clock(&text[spans[at].0..]) {
            let span = (spans[at].0, spans[at].0 + len);
            let end = spans.iter().rposition(|s| s.1 <= span.1).unwrap_or(at);
            let word = text[span.0..span.1].to_lowercase();
            let mut info = Word::plain(&word);
            info.lemmas.push(value);
            out.push(Token {
                opens_sentence: opens_at(at),
                money: false,
                info,
                word,
                role: Role::Number,
                span,
            });
            at = end + 1;
            continue;
        }
        // A number and "times" count occasions, one value: "two times"
        // is "twice", where "hard times" is no count.
        let followed_by_times = words.get(at + 1).is_some_and(|w| w == "times")
            && text[spans[at].1..spans[at + 1].0].trim().is_empty();
        let counted = followed_by_times.then(|| format!("{} times", words[at]));
        if let Some(counted) = counted
            && let Some(count) = occasions(&counted)
        {
            let mut info = Word::plain(&counted);
            info.lemmas.push(occasions_lemma(count));
            out.push(Token {
                opens_sentence: opens_at(at),
                money: false,
                info,
                word: counted,
                role: Role::Number,
                span: (spans[at].0, spans[at + 1].1),
            });
            at += 2;
            continue;
        }
        let number = number_at(text, &spans, &words, at);
        // A number run into its unit is a number measured in that unit
        // ("5km" / "10 km" are two distances). It stays one word, so it
        // aligns with no bare number: "5km" is not "5".
        let joined = match number {
            Some((span, end, Role::Content)) => Some((span, end)),
            None => Some((spans[at], at)),
            Some(_) => None,
        }
        .filter(|(span, _)| joined_unit(&text[span.0..span.1]).is_some());
        if let Some((span, end)) = joined {
            let word = text[span.0..span.1].to_lowercase();
            out.push(Token {
                opens_sentence: opens_at(at),
                money: false,
                info: Word::plain(&word),
                word,
                role: Role::Number,
                span,
            });
            at = end + 1;
            continue;
        }
        if let Some((span, end, role)) = number {
            let word = text[span.0..span.1].to_lowercase();
            let mut info = Word::plain(&word);
            // ".20" and "0.20", "37,000" and "37000" are one value.
            if role == Role::Number {
                info.lemmas.push(number_value(&word));
            }
            out.push(Token {
                opens_sentence: opens_at(at),
                money: role == Role::Number && after_currency_sign(&text[..span.0]),
                info,
                word,
                role,
                span,
            });
            at = end + 1;
            continue;
        }
        if let Some(len) = lexicon.negation_at(&words[at..]) {
            let word = words[at..at + len].join(" ");
            out.push(Token {
                opens_sentence: opens_at(at),
                money: false,
                info: Word::plain(&word),
                word,
                role: Role::Negation,
                span: (spans[at].0, spans[at + len - 1].1),
            });
            at += len;
            continue;
        }
        // "dairy-free" names the absence of dairy: one word of its own, not
        // the stem it denies.
        if at + 1 < words.len() && words[at + 1] == "free" && hyphen_before(text, &spans, at + 1) {
            let word = format!("{}-free", words[at]);
            out.push(Token {
                opens_sentence: opens_at(at),
                money: false,
                info: Word::plain(&word),
                word,
                role: Role::Content,
                span: (spans[at].0, spans[at + 1].1),
            });
            at += 2;
            continue;
        }
        // A hyphenated compound WordNet lists is one word: a
        // "mother-in-law" is no mother "in law".
        if let Some((end, info)) = hyphenated_compound(text, &spans, &words, at, lexicon) {
            out.push(Token {
                opens_sentence: opens_at(at),
                money: false,
                info,
                word: words[at..=end].join("-"),
                role: Role::Content,
                span: (spans[at].0, spans[end].1),
            });
            at = end + 1;
            continue;
        }
        let word = &words[at];
        let spelled = original[at];
        let capitalised = spelled.chars().next().is_some_and(char::is_uppercase);
        let inner_capital = spelled.chars().skip(1).any(char::is_uppercase);
        let opens = opens_at(at);
        // A sentence or a quotation capitalises its first word whatever it
        // is: "said, "The …"" opens on the article, not on a name.
        let role = if word.chars().all(|c| c.is_ascii_digit())
            || listed(&NUMBER_WORDS, word.as_str())
            || ordinal_rank(word).is_some()
        {
            Role::Number
        } else if listed(&FUNCTION_WORDS, word.as_str())
            && (!capitalised || opens)
            // "she/her" names pronouns: two values a merge must keep.
            && !slashed(text, &spans, at)
        {
            Role::Function
        } else if lexicon.is_value(word)
            && (capitalised || inner_capital || !lexicon.is_common_word(word))
            // A sentence capitalises its first word: there a common word
            // ("Great talking", "Stay safe") is no name.
            || (capitalised && !opens)
            || (capitalised && at > 0 && !lexicon.is_common_word(word))
            || inner_capital
        {
            Role::Name
        } else {
            Role::Content
        };
        // A title is one person's as written: "Mrs" is no plural of "Mr".
        let mut info = if listed(&TITLES, word) {
            Word::plain(word)
        } else {
            lexicon.word(word)
        };
        if lexicon.is_value(word) {
            info.lemmas.push(lexicon.canonical(word).to_owned());
        }
        if let Some(value) = spelled_number(word) {
            info.lemmas.push(value.to_string());
        }
        if let Some(count) = occasions(word) {
            info.lemmas.push(occasions_lemma(count));
        }
        if let Some(rank) = ordinal_rank(word) {
            info.lemmas.push(ordinal_written(rank));
        }
        out.push(Token {
            opens_sentence: opens,
            money: role == Role::Number && after_currency_sign(&text[..spans[at].0]),
            word: word.clone(),
            role,
            span: spans[at],
            info,
        });
        at += 1;
    }
    // A word after a determiner is a noun (or an adjective before one),
    // not a verb, except after "that", which also opens a clause ("that
    // `runs`"), and a participle after a clitic "s", which may be "is"
    // ("it's `raining`").
    for k in 1..out.len() {
        let before = out[k - 1].word.as_str();
        if out[k].role == Role::Content
            && after_determiner(&out, k)
            && before != "that"
            && !(before == "s" && out[k].word.ends_with("ing"))
        {
            out[k].info.as_noun();
        }
    }
    // An ordinal beside a named month or day is a day of the month, the
    // number it ranks ("March `3rd`", "the `3rd` of March", "Friday the
    // `13th`"), not a place in a series ("the `3rd` week", "Tuesday, the
    // `second` day").
    let named_time =
        |t: Option<&Token>| t.is_some_and(|t| t.role == Role::Name && lexicon.names_time(&t.info));
    for k in 0..out.len() {
        let Some(rank) = ordinal_rank(&out[k].word) else {
            continue;
        };
        let before = k.checked_sub(1).map(|p| &out[p]);
        let before_the = k
            .checked_sub(2)
            .filter(|&p| out[p + 1].word == "the")
            .map(|p| &out[p]);
        if out.get(k + 1).is_some_and(Token::is_content) {
            continue;
        }
        let of_after = out.get(k + 1).is_some_and(|t| t.word == "of");
        if named_time(before) || named_time(before_the) || (of_after && named_time(out.get(k + 2)))
        {
            out[k].info.lemmas.push(day_lemma(rank));
        }
    }
    exception_as_restriction(out, lexicon)
}

/// Whether word `k` is joined to the word before it by a hyphen alone.
pub(super) fn hyphen_before(text: &str, spans: &[(usize, usize)], k: usize) -> bool {
    &text[spans[k - 1].1..spans[k].0] == "-"
}

/// The last word of the longest hyphenated compound opening at `at` that
/// WordNet lists, as written or inflected ("mother-in-law",
/// "brothers-in-law"), of at most four words joined through a function
/// word: split there, its words read as a detail ("`in law`") of a thing it
/// is not. Compounds of content words ("half-century", "law-breaker")
/// align word by word with their open spellings. With what WordNet says
/// of the compound.
pub(super) fn hyphenated_compound(
    text: &str,
    spans: &[(usize, usize)],
    words: &[String],
    at: usize,
    lexicon: &Lexicon,
) -> Option<(usize, Word)> {
    let joined = (at + 1..spans.len().min(at + 4))
        .take_while(|&k| hyphen_before(text, spans, k))
        .last()?;
    (at + 2..=joined).rev().find_map(|end| {
        if !words[at + 1..end]
            .iter()
            .any(|w| listed(&FUNCTION_WORDS, w.as_str()))
        {
            return None;
        }
        let compound = words[at..=end].join("-");
        let info = lexicon.word(&compound);
        (lexicon.is_common_word(&compound) || info.lemmas.iter().any(|l| *l != compound))
            .then_some((end, info))
    })
}

/// A denial with an exception in its clause affirms the exception and
/// nothing else: "doesn't drink coffee `except` on weekends" says "does
/// drink coffee `only` on weekends", "eats nothing `except` rice" says
/// "eats `only` rice". Read as two denials, it clashed with the very fact
/// it states. An "except" with no denial before it stays one ("all fruit
/// except bananas").
pub(super) fn exception_as_restriction(mut tokens: Vec<Token>, lexicon: &Lexicon) -> Vec<Token> {
    let mut k = 0;
    while k < tokens.len() {
        let exception = tokens[k].role == Role::Negation && tokens[k].word == "except";
        let denial = exception
            .then(|| {
                tokens[..k]
                    .iter()
                    .rposition(|t| t.role == Role::Negation || listed(&CLAUSE_BREAKS, &t.word))
            })
            .flatten()
            .filter(|&j| tokens[j].role == Role::Negation && tokens[j].word != "except");
        let Some(j) = denial else {
            k += 1;
            continue;
        };
        tokens[k].word = "only".to_owned();
        tokens[k].info = lexicon.word("only");
        tokens[k].role = Role::Content;
        // "doesn't" leaves its auxiliary ("does"); "nothing", "never" leave
        // nothing.
        if negated_auxiliary(&tokens[j]) {
            let base = negated_base(&tokens[j]).to_owned();
            tokens[j].info = Word::plain(&base);
            tokens[j].word = base;
            tokens[j].role = Role::Function;
        } else {
            tokens.remove(j);
            k -= 1;
        }
        k += 1;
    }
    tokens
}
