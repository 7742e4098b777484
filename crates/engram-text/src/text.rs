//! Text normalisation shared by hashing and the detectors.

use sha2::{Digest, Sha256};

/// Lowercase, punctuation removed, whitespace collapsed to single spaces.
/// Letters and digits of every script are kept; everything else separates words.
pub fn normalise(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
    {
        if !out.is_empty() {
            out.push(' ');
        }
        out.extend(word.chars().flat_map(char::to_lowercase));
    }
    out
}

/// Hex SHA-256 of the normalised text: equal for texts that differ only in
/// case, punctuation and spacing.
pub fn content_hash(text: &str) -> String {
    sha256_hex(normalise(text).as_bytes())
}

/// Hex SHA-256 of bytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// Tags as stored: trimmed, lowercase, non-empty, sorted, unique.
pub fn normalise_tags<'a>(tags: impl IntoIterator<Item = &'a String>) -> Vec<String> {
    let mut out: Vec<String> = tags
        .into_iter()
        .map(|tag| tag.trim().to_lowercase())
        .filter(|tag| !tag.is_empty())
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The words of a text in their original case, split exactly as
/// [`normalise`] splits them.
pub fn words(text: &str) -> Vec<&str> {
    word_spans(text)
        .map(|(start, end)| &text[start..end])
        .collect()
}

/// The byte ranges of [`words`] in `text`.
pub fn word_spans(text: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut start = None;
    text.char_indices()
        .chain(std::iter::once((text.len(), ' ')))
        .filter_map(move |(at, c)| match (c.is_alphanumeric(), start) {
            (true, None) => {
                start = Some(at);
                None
            }
            (false, Some(from)) => {
                start = None;
                Some((from, at))
            }
            _ => None,
        })
}

/// Whitespace collapsed and trimmed; case and punctuation kept (for texts
/// engram writes itself, such as pattern memories).
pub fn tidy(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Words after which a full stop does not end a sentence.
const ABBREVIATIONS: [&str; 12] = [
    "e.g", "i.e", "etc", "vs", "mr", "mrs", "ms", "dr", "prof", "approx", "no", "cf",
];

/// Splits prose into sentences: a `.`, `!` or `?` ends one when whitespace
/// and an uppercase letter or digit follow, unless it closes a known
/// abbreviation or a single letter ("J. Smith"). Sentences are tidied.
pub fn sentences(text: &str) -> Vec<String> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut out = Vec::new();
    let mut start = 0;
    for (i, &(at, c)) in chars.iter().enumerate() {
        if !matches!(c, '.' | '!' | '?') {
            continue;
        }
        let Some(&(_, gap)) = chars.get(i + 1) else {
            continue;
        };
        let next = chars[i + 1..].iter().find(|(_, ch)| !ch.is_whitespace());
        let starts_sentence = next.is_some_and(|(_, ch)| ch.is_uppercase() || ch.is_ascii_digit());
        if !gap.is_whitespace() || !starts_sentence {
            continue;
        }
        let before = &text[start..at];
        let last_word = before
            .rsplit(|ch: char| ch.is_whitespace() || ch == '(')
            .next()
            .unwrap_or("")
            .to_lowercase();
        if c == '.'
            && (ABBREVIATIONS.contains(&last_word.as_str())
                || last_word.chars().count() == 1 && last_word.chars().all(char::is_alphabetic))
        {
            continue;
        }
        let end = at + c.len_utf8();
        out.push(tidy(&text[start..end]));
        start = end;
    }
    let rest = tidy(&text[start..]);
    if !rest.is_empty() {
        out.push(rest);
    }
    out.retain(|s| !s.is_empty());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_split_on_terminal_punctuation_only() {
        let text = "The build uses Bazel. Tests run on CI, e.g. GitHub Actions. \
                    Deploys need approval from Dr. Smith! Version 2.5 is current? Yes.";
        assert_eq!(
            sentences(text),
            vec![
                "The build uses Bazel.",
                "Tests run on CI, e.g. GitHub Actions.",
                "Deploys need approval from Dr. Smith!",
                "Version 2.5 is current?",
                "Yes.",
            ]
        );
        assert_eq!(
            sentences("one line without a stop"),
            vec!["one line without a stop"]
        );
        assert!(sentences("   ").is_empty());
    }

    #[test]
    fn words_keep_case_and_split_like_normalise() {
        assert_eq!(
            words("Project uses PostgreSQL 16."),
            vec!["Project", "uses", "PostgreSQL", "16"]
        );
        assert_eq!(words("don't"), vec!["don", "t"]);
    }

    #[test]
    fn normalise_ignores_case_punctuation_and_spacing() {
        assert_eq!(normalise("  The API   is RESTful!! "), "the api is restful");
        assert_eq!(normalise("user's e-mail: A@B.io"), "user s e mail a b io");
        assert_eq!(normalise("Ünïcode ÄÖ"), "ünïcode äö");
        assert_eq!(normalise("...!"), "");
    }

    #[test]
    fn content_hash_equal_for_equivalent_text() {
        assert_eq!(
            content_hash("Uses Postgres."),
            content_hash("uses   postgres")
        );
        assert_ne!(content_hash("Uses Postgres"), content_hash("Uses MySQL"));
        assert_eq!(content_hash("x").len(), 64);
    }

    #[test]
    fn tags_are_lowercase_sorted_unique() {
        let tags = vec![" Rust ".to_owned(), "db".into(), "rust".into(), "".into()];
        assert_eq!(normalise_tags(&tags), vec!["db", "rust"]);
    }
}
