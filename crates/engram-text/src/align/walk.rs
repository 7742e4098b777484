//! The alignment itself: the two texts' shared words, found as a weighted
//! longest common subsequence, and the runs of unaligned words (hunks)
//! between them.

use super::classify::compares;
use super::*;

/// How much an aligned token weighs: content words and negations count
/// double, so they anchor the alignment ("encourages him `not` to give up"
/// / "… to keep pushing and `not` give up" pairs the two negations, not
/// the two "to"s).
pub(super) fn anchor_weight(t: &Token) -> u32 {
    if t.is_content() || t.role == Role::Negation {
        2
    } else {
        1
    }
}

/// A run of unaligned words on each side.
pub(super) struct Unaligned<'t> {
    pub(super) x: Vec<&'t Token>,
    pub(super) y: Vec<&'t Token>,
    /// How many words were aligned before it.
    pub(super) before: usize,
    /// The index after it on each side.
    pub(super) end: [usize; 2],
}

/// Two texts aligned.
pub(super) struct Walk<'t> {
    /// The aligned words as the first text writes them: the aligned
    /// content word after a hunk names the predicate a negation in it
    /// applies to, so hunks remember how many words were aligned before
    /// them.
    pub(super) aligned_words: Vec<&'t Token>,
    /// The second text's word of each aligned pair, for where its form
    /// matters ("`worked` at" / "`works` at").
    pub(super) aligned_in_second: Vec<&'t Token>,
    /// The hunks, in order, with lists of numbers joined.
    pub(super) hunks: Vec<Unaligned<'t>>,
    /// Content words aligned.
    pub(super) content_aligned: usize,
    /// Aligned graded words that compare on one side only ("`older`" /
    /// "old" beside "than"): other facts.
    pub(super) graded: Vec<(String, String)>,
}

/// Aligns `a` with `b`: a weighted longest common subsequence, where
/// content words and negations count double, so they anchor it.
pub(super) fn walk<'t>(a: &'t [Token], b: &'t [Token]) -> Walk<'t> {
    let matches = |x: &Token, y: &Token| {
        x.word == y.word
            || (x.role != Role::Negation
                && y.role != Role::Negation
                && x.info.lemmas.iter().any(|l| y.info.lemmas.contains(l)))
    };
    let (n, m) = (a.len(), b.len());
    let mut table = vec![0u32; (n + 1) * (m + 1)];
    let at = |i: usize, j: usize| i * (m + 1) + j;
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            let skip = table[at(i + 1, j)].max(table[at(i, j + 1)]);
            table[at(i, j)] = if matches(&a[i], &b[j]) {
                let weight = anchor_weight(&a[i]);
                skip.max(table[at(i + 1, j + 1)] + weight)
            } else {
                skip
            };
        }
    }
    let mut content_aligned = 0;
    let mut graded = Vec::new();
    let (mut i, mut j) = (0, 0);
    let (mut hunk_a, mut hunk_b) = (Vec::new(), Vec::new());
    // The aligned content word after each hunk names the predicate a
    // negation applies to: hunks remember how many words were aligned
    // before them.
    let mut aligned_words: Vec<&'t Token> = Vec::new();
    // The second text's word of each aligned pair, for where its form
    // matters ("`worked` at" / "`works` at").
    let mut aligned_in_second: Vec<&'t Token> = Vec::new();
    let mut hunks: Vec<Unaligned<'t>> = Vec::new();
    while i < n || j < m {
        let aligned = i < n && j < m && matches(&a[i], &b[j]) && {
            let weight = anchor_weight(&a[i]);
            table[at(i, j)] == table[at(i + 1, j + 1)] + weight
        };
        if aligned {
            if a[i].is_content() {
                content_aligned += 1;
            }
            if (a[i].is_graded() || b[j].is_graded()) && compares(a, i) != compares(b, j) {
                graded.push((a[i].word.clone(), b[j].word.clone()));
            }
            if !hunk_a.is_empty() || !hunk_b.is_empty() {
                hunks.push(Unaligned {
                    x: std::mem::take(&mut hunk_a),
                    y: std::mem::take(&mut hunk_b),
                    before: aligned_words.len(),
                    end: [i, j],
                });
            }
            aligned_words.push(&a[i]);
            aligned_in_second.push(&b[j]);
            i += 1;
            j += 1;
        } else if i < n && (j == m || table[at(i + 1, j)] >= table[at(i, j + 1)]) {
            hunk_a.push(&a[i]);
            i += 1;
        } else {
            hunk_b.push(&b[j]);
            j += 1;
        }
    }
    if !hunk_a.is_empty() || !hunk_b.is_empty() {
        hunks.push(Unaligned {
            x: hunk_a,
            y: hunk_b,
            before: aligned_words.len(),
            end: [n, m],
        });
    }
    Walk {
        hunks: joined_lists(hunks, &aligned_words),
        aligned_words,
        aligned_in_second,
        content_aligned,
        graded,
    }
}

/// Hunks of numbers on both sides joined by an aligned "and" are one list
/// in one slot: "are `5` and `8`" / "are `6` and `9`" is one other value,
/// as "is `4`" / "is `5`" is, not two slots that might each be another
/// fact. An "or" restates in other units ("fell $2.28, or 7 percent").
pub(super) fn joined_lists<'t>(
    hunks: Vec<Unaligned<'t>>,
    aligned: &[&Token],
) -> Vec<Unaligned<'t>> {
    let numbers = |side: &[&Token]| !side.is_empty() && side.iter().all(|t| t.role == Role::Number);
    let mut out: Vec<Unaligned<'t>> = Vec::with_capacity(hunks.len());
    for hunk in hunks {
        if let Some(last) = out.last_mut()
            && numbers(&last.x)
            && numbers(&last.y)
            && numbers(&hunk.x)
            && numbers(&hunk.y)
            && hunk.before == last.before + 1
            && aligned[last.before].word == "and"
        {
            last.x.extend(hunk.x);
            last.y.extend(hunk.y);
            last.end = hunk.end;
            continue;
        }
        out.push(hunk);
    }
    out
}
