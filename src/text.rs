//! Text normalisation shared by hashing and (later) the detectors.

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
    let digest = Sha256::digest(normalise(text).as_bytes());
    digest.iter().map(|byte| format!("{byte:02x}")).collect()
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

#[cfg(test)]
mod tests {
    use super::*;

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
