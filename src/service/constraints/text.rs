//! The text matching behind a constraint's evidence: cutting a summary or a turn into
//! sentences, the content words of a constraint (crudely stemmed, so "delete" meets
//! "deleting" and "confirm" meets "confirmation"), how similar two sentences are, and which
//! source turns share a constraint's words. Every range is a byte range of the text it was
//! cut from and lies on character boundaries. Nothing here decides a check: these are
//! read-time guesses to point a reviewer at the right sentence, and are labelled as such.

use std::collections::BTreeSet;
use std::ops::Range;

use similar::TextDiff;

use crate::engine::pytext;

/// Words that say nothing about which constraint a sentence is about.
const STOPWORDS: &[&str] = &[
    "the",
    "and",
    "for",
    "with",
    "this",
    "that",
    "then",
    "now",
    "also",
    "please",
    "them",
    "its",
    "our",
    "your",
    "all",
    "any",
    "not",
    "never",
    "without",
    "from",
    "into",
    "onto",
    "only",
    "when",
    "where",
    "what",
    "which",
    "there",
    "their",
    "they",
    "are",
    "was",
    "were",
    "has",
    "have",
    "had",
    "been",
    "being",
    "will",
    "would",
    "should",
    "could",
    "can",
    "may",
    "must",
    "you",
    "yours",
    "mine",
    "his",
    "her",
    "but",
    "nor",
    "yet",
    "too",
    "very",
    "just",
    "than",
    "user",
    "users",
    "explicit",
    "explicitly",
    "don",
    "doesn",
    "didn",
    "isn",
    "aren",
    "won",
    "let",
    "get",
    "got",
    "out",
    "over",
    "under",
    "about",
    "again",
    "still",
    "each",
    "every",
    "other",
    "some",
    "such",
    "own",
    "same",
    "who",
    "whom",
    "why",
    "how",
    "here",
    "once",
    "off",
];

/// The sentences of `text`: runs ending at a newline, or at `.`, `!` or `?` followed by
/// whitespace or the end; surrounding whitespace trimmed, empty ones dropped.
pub fn sentences(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let end = match c {
            '\n' => Some(at),
            '.' | '!' | '?' => match chars.peek() {
                None => Some(at + 1),
                Some(&(_, next)) if next.is_whitespace() => Some(at + 1),
                Some(_) => None,
            },
            _ => None,
        };
        if let Some(end) = end {
            push_trimmed(text, start..end, &mut out);
            start = end;
        }
    }
    push_trimmed(text, start..text.len(), &mut out);
    out
}

fn push_trimmed(text: &str, range: Range<usize>, out: &mut Vec<Range<usize>>) {
    let Some(piece) = text.get(range.clone()) else {
        return;
    };
    let lead = piece.len() - piece.trim_start().len();
    let trimmed = piece.trim();
    if !trimmed.is_empty() {
        let start = range.start + lead;
        out.push(start..start + trimmed.len());
    }
}

/// A sentence as the grammar compares clauses: case folded, whitespace collapsed, without
/// its final `.`.
pub fn clause_form(text: &str) -> String {
    let folded = pytext::casefold(&pytext::collapse_whitespace(text));
    folded
        .trim_end_matches(['.', '!', '?'])
        .trim_end()
        .to_owned()
}

/// How alike two sentences are, word by word, from 0 to 100: twice the words of their
/// longest common subsequence over all their words (clause forms compared; spaces are not
/// words, so long sentences do not look alike for their spaces).
pub fn similarity(a: &str, b: &str) -> u8 {
    let (a, b) = (clause_form(a), clause_form(b));
    let a: Vec<&str> = a.split(' ').filter(|w| !w.is_empty()).collect();
    let b: Vec<&str> = b.split(' ').filter(|w| !w.is_empty()).collect();
    if a.is_empty() && b.is_empty() {
        return 100;
    }
    let ratio = TextDiff::from_slices(&a, &b).ratio();
    // The ratio is within 0..=1, so this cannot truncate.
    (ratio * 100.0).round().clamp(0.0, 100.0) as u8
}

/// A word cut down to what its inflections share: `deleting`, `deleted` → `delet`;
/// `confirmation`, `confirm` → `confi`; numbers and short words stay whole.
fn stem(word: &str) -> String {
    if word.chars().all(|c| c.is_ascii_digit()) {
        return word.to_owned();
    }
    let mut w = word;
    for suffix in ["ing", "ed", "es", "s"] {
        if w.len() > suffix.len() + 2 {
            if let Some(rest) = w.strip_suffix(suffix) {
                w = rest;
                break;
            }
        }
    }
    w.chars().take(5).collect()
}

/// The content words of `text` as `(stem, byte range)`, in order: lower-cased, split at
/// anything but letters and digits, without stopwords, `extra_stopwords` and words shorter
/// than three characters (numbers of three digits or more stay: `0042` names a migration).
pub fn words(text: &str, extra_stopwords: &[String]) -> Vec<(String, Range<usize>)> {
    let mut out = Vec::new();
    let mut start = None;
    let bytes_end = text.len();
    let push = |range: Range<usize>, out: &mut Vec<(String, Range<usize>)>| {
        let Some(word) = text.get(range.clone()) else {
            return;
        };
        let lower = word.to_lowercase();
        if lower.chars().count() < 3
            || STOPWORDS.contains(&lower.as_str())
            || extra_stopwords
                .iter()
                .any(|s| s.eq_ignore_ascii_case(&lower))
        {
            return;
        }
        out.push((stem(&lower), range));
    };
    for (at, c) in text.char_indices() {
        match (c.is_alphanumeric(), start) {
            (true, None) => start = Some(at),
            (false, Some(s)) => {
                push(s..at, &mut out);
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        push(s..bytes_end, &mut out);
    }
    out
}

/// The distinct stems of `text`'s content words.
pub fn stems(text: &str, extra_stopwords: &[String]) -> BTreeSet<String> {
    words(text, extra_stopwords)
        .into_iter()
        .map(|(s, _)| s)
        .collect()
}

/// Where `text` shares words with `wanted`: the ranges of its words whose stem is wanted, and
/// how many distinct stems they cover.
pub fn shared_words(
    text: &str,
    wanted: &BTreeSet<String>,
    extra_stopwords: &[String],
) -> (Vec<Range<usize>>, usize) {
    let mut ranges = Vec::new();
    let mut seen = BTreeSet::new();
    for (stem, range) in words(text, extra_stopwords) {
        if wanted.contains(&stem) {
            seen.insert(stem);
            ranges.push(range);
        }
    }
    (ranges, seen.len())
}

/// Whether `phrase` occurs in `text` as whole words, ignoring case (`don't` in "Don't push").
pub fn has_phrase(text: &str, phrase: &str) -> bool {
    let (text, phrase) = (text.to_lowercase(), phrase.to_lowercase());
    if phrase.is_empty() {
        return false;
    }
    let boundary = |c: Option<char>| c.is_none_or(|c| !c.is_alphanumeric());
    text.match_indices(&phrase).any(|(at, _)| {
        boundary(text.get(..at).and_then(|s| s.chars().next_back()))
            && boundary(text.get(at + phrase.len()..).and_then(|s| s.chars().next()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(text: &str) -> Vec<&str> {
        sentences(text)
            .into_iter()
            .map(|r| text.get(r).unwrap_or_default())
            .collect()
    }

    #[test]
    fn sentences_end_at_stops_and_newlines_but_not_inside_paths() {
        assert_eq!(
            cut("Read file src/main.rs.\nTests pass!  Next: v4.18 ships. Done"),
            [
                "Read file src/main.rs.",
                "Tests pass!",
                "Next: v4.18 ships.",
                "Done"
            ]
        );
        assert!(cut("  \n \n").is_empty());
        assert_eq!(cut("é. ü"), ["é.", "ü"]);
    }

    #[test]
    fn stems_meet_across_inflections() {
        let a = stems("Never delete files without confirmation", &[]);
        let b = stems("ask me before deleting; confirm first", &[]);
        assert!(a.contains("delet") && b.contains("delet"));
        assert!(a.contains("confi") && b.contains("confi"));
        assert!(!a.contains("never") && !a.contains("witho"));
        assert!(stems("run 0042 again", &[]).contains("0042"));
    }

    #[test]
    fn similarity_compares_clause_forms() {
        assert_eq!(similarity("Do not push.", "do not  PUSH"), 100);
        assert_eq!(
            similarity("do not push or deploy", "do not delete files"),
            44
        );
        assert_eq!(similarity("", ""), 100);
        let clause = "do not run destructive database operations without user confirmation";
        assert!(
            similarity(clause, "Waiting for user confirmation before deleting.")
                > similarity(
                    clause,
                    "Next step is to ask the user about shipments_archive."
                ),
            "spaces do not count as shared words"
        );
    }

    #[test]
    fn phrases_match_whole_words_only() {
        assert!(has_phrase("Don't push anything", "don't"));
        assert!(has_phrase("Not yet.", "not yet"));
        assert!(!has_phrase("nothing to see", "no"));
        assert!(!has_phrase("anything", ""));
    }
}
