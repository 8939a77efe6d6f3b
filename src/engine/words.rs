//! Joined words. A slot holds one token, but a token can hold a sentence: `git_push`,
//! `rm-rf/home`, `user_approved_pushing_to_main`, `ignorePreviousInstructions`. Every matcher
//! that reads a summary (conflict patterns, pinned forbidden patterns, authority claims and
//! role markers) therefore also runs on its *split view*: the text with each separator that
//! joins two characters inside a token (`_ - / . : @ + =`) turned into a space and a space
//! put into each camel-case hump. Sentence ends stay (a `.` before a space or the end of the
//! text joins nothing), so patterns bounded by `[^.]` still stop at a clause.
//!
//! Every byte of the view remembers the source byte it came from, and a match on the view
//! maps back to the whole tokens it touched, so a finding's span names the real bytes of the
//! slot that hid it.

use std::ops::Range;

use super::pytext::is_space;

/// The characters that join words inside one token.
pub const SEPARATORS: &str = "_-/.:@+=";

/// [`SEPARATORS`] by byte value (every one is ASCII).
const SEPARATOR_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut i = 0;
    while i < SEPARATORS.len() {
        table[SEPARATORS.as_bytes()[i] as usize] = true;
        i += 1;
    }
    table
};

fn is_separator(c: char) -> bool {
    u8::try_from(c).is_ok_and(is_separator_byte)
}

fn is_separator_byte(b: u8) -> bool {
    SEPARATOR_BYTES[usize::from(b)]
}

/// Whether a camel-case hump lies between `prev` and `next` (`pushTo`, `v2Push`, the `PS`
/// of `HTTPServer` once `next_next` is lower case).
fn is_hump(prev: char, next: char, next_next: Option<char>) -> bool {
    next.is_ascii_uppercase()
        && (prev.is_ascii_lowercase()
            || prev.is_ascii_digit()
            || (prev.is_ascii_uppercase() && next_next.is_some_and(|c| c.is_ascii_lowercase())))
}

/// The words a token joins: split on the separators and at camel-case humps.
pub fn words(token: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let chars: Vec<(usize, char)> = token.char_indices().collect();
    let mut start = 0;
    for (i, &(at, c)) in chars.iter().enumerate() {
        if is_separator(c) {
            if start < at {
                out.push(&token[start..at]);
            }
            start = at + c.len_utf8();
        } else if i > 0 {
            let prev = chars[i - 1].1;
            let next_next = chars.get(i + 1).map(|&(_, c)| c);
            if !is_separator(prev) && is_hump(prev, c, next_next) && start < at {
                out.push(&token[start..at]);
                start = at;
            }
        }
    }
    if start < token.len() {
        out.push(&token[start..]);
    }
    out
}

/// How many words a token joins (`words(token).len()`, without allocating).
pub fn word_count(token: &str) -> usize {
    let bytes = token.as_bytes();
    let mut count = 0;
    let mut in_word = false;
    for (at, &b) in bytes.iter().enumerate() {
        if b.is_ascii() && is_separator(char::from(b)) {
            in_word = false;
            continue;
        }
        let hump = at > 0
            && in_word
            && b.is_ascii()
            && bytes.get(at - 1).is_some_and(|&p| {
                p.is_ascii()
                    && is_hump(
                        char::from(p),
                        char::from(b),
                        bytes.get(at + 1).map(|&n| char::from(n)),
                    )
            });
        if !in_word || hump {
            count += 1;
            in_word = true;
        }
    }
    count
}

/// A text with its joined words split apart, mapped back to the source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitView {
    pub text: String,
    /// For every byte of `text`, the source byte it came from.
    origin: Vec<usize>,
    source: String,
}

impl SplitView {
    pub fn new(source: &str) -> SplitView {
        let bytes = source.as_bytes();
        let mut text: Vec<u8> = Vec::with_capacity(bytes.len() + 16);
        let mut origin = Vec::with_capacity(bytes.len() + 16);
        // Whether the character that ends at (`before`) or starts at (`after`) a byte offset
        // exists and is not whitespace. Separators are ASCII, so only their neighbours may
        // need decoding.
        let joins_before = |at: usize| match at.checked_sub(1).and_then(|p| bytes.get(p)) {
            Some(&b) if b.is_ascii() => !is_space(char::from(b)),
            Some(_) => source
                .get(..at)
                .and_then(|head| head.chars().next_back())
                .is_some_and(|c| !is_space(c)),
            None => false,
        };
        let joins_after = |at: usize| match bytes.get(at) {
            Some(&b) if b.is_ascii() => !is_space(char::from(b)),
            Some(_) => source
                .get(at..)
                .and_then(|tail| tail.chars().next())
                .is_some_and(|c| !is_space(c)),
            None => false,
        };
        let mut at = 0;
        while at < bytes.len() {
            // A run of bytes that are neither separators nor capitals, which the view keeps
            // as they are (a hump ends in a capital), copied at once.
            let end = bytes[at..]
                .iter()
                .position(|&b| b.is_ascii_uppercase() || is_separator_byte(b))
                .map_or(bytes.len(), |n| at + n);
            text.extend_from_slice(&bytes[at..end]);
            origin.extend(at..end);
            let Some(&b) = bytes.get(end) else {
                break;
            };
            at = end;
            if is_separator_byte(b) && joins_before(at) && joins_after(at + 1) {
                text.push(b' ');
                origin.push(at);
                at += 1;
                continue;
            }
            let prev = at.checked_sub(1).and_then(|p| bytes.get(p)).copied();
            let next_next = bytes.get(at + 1).map(|&n| char::from(n));
            if let Some(prev) = prev.filter(u8::is_ascii) {
                if is_hump(char::from(prev), char::from(b), next_next) {
                    text.push(b' ');
                    origin.push(at);
                }
            }
            text.push(b);
            origin.push(at);
            at += 1;
        }
        // Only ASCII bytes were replaced or inserted, so the text is still UTF-8.
        match String::from_utf8(text) {
            Ok(text) => SplitView {
                text,
                origin,
                source: source.to_owned(),
            },
            Err(_) => SplitView {
                text: source.to_owned(),
                origin: (0..source.len()).collect(),
                source: source.to_owned(),
            },
        }
    }

    /// Whether the view differs from the source at all.
    pub fn is_split(&self) -> bool {
        self.text != self.source
    }

    /// The source span of the view's `range`: the tokens it touches that join words (the
    /// slot words that hid the match), or all the tokens it touches when none does, less the
    /// punctuation that ends a sentence after the last one.
    pub fn source_span(&self, range: Range<usize>) -> Range<usize> {
        let len = self.source.len();
        let from = self.origin.get(range.start).copied().unwrap_or(len);
        let to = range
            .end
            .checked_sub(1)
            .and_then(|last| self.origin.get(last))
            .map_or(from, |&last| last + 1);
        let touched = tokens_touching(&self.source, from..to.max(from));
        let joined: Vec<&Range<usize>> = touched
            .iter()
            .filter(|t| {
                self.source
                    .get((*t).clone())
                    .is_some_and(|w| word_count(w) > 1)
            })
            .collect();
        let chosen: Vec<&Range<usize>> = if joined.is_empty() {
            touched.iter().collect()
        } else {
            joined
        };
        match (chosen.first(), chosen.last()) {
            (Some(first), Some(last)) => first.start..last.end,
            _ => from..to.max(from),
        }
    }
}

/// The whitespace-delimited tokens of `text` that `range` touches, each without the
/// sentence punctuation that ends it.
fn tokens_touching(text: &str, range: Range<usize>) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = None;
    let mut push = |token: Range<usize>| {
        let overlaps = token.start < range.end.max(range.start + 1) && range.start < token.end;
        if overlaps {
            let body = text
                .get(token.clone())
                .map_or(0, |t| t.trim_end_matches(['.', ',', ';', '!', '?']).len());
            out.push(token.start..token.start + body.max(1));
        }
    };
    for (at, c) in text.char_indices() {
        match (is_space(c), start) {
            (true, Some(s)) => {
                push(s..at);
                start = None;
            }
            (false, None) => start = Some(at),
            _ => {}
        }
    }
    if let Some(s) = start {
        push(s..text.len());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The split view byte by byte, as the definition reads: each separator between two
    /// characters that are not spaces becomes a space, and a space goes into each hump.
    fn split_byte_by_byte(source: &str) -> (String, Vec<usize>) {
        let bytes = source.as_bytes();
        let chars: Vec<(usize, char)> = source.char_indices().collect();
        let char_before = |at: usize| chars.iter().rev().find(|&&(i, _)| i < at).map(|&(_, c)| c);
        let char_at = |at: usize| chars.iter().find(|&&(i, _)| i == at).map(|&(_, c)| c);
        let (mut text, mut origin) = (Vec::new(), Vec::new());
        for (at, &b) in bytes.iter().enumerate() {
            let joins = |c: Option<char>| c.is_some_and(|c| !is_space(c));
            if b.is_ascii()
                && is_separator(char::from(b))
                && joins(char_before(at))
                && joins(char_at(at + 1))
            {
                text.push(b' ');
                origin.push(at);
                continue;
            }
            let next_next = bytes.get(at + 1).map(|&n| char::from(n));
            if at > 0
                && bytes[at - 1].is_ascii()
                && b.is_ascii()
                && is_hump(char::from(bytes[at - 1]), char::from(b), next_next)
            {
                text.push(b' ');
                origin.push(at);
            }
            text.push(b);
            origin.push(at);
        }
        (String::from_utf8(text).unwrap(), origin)
    }

    proptest::proptest! {
        #![proptest_config(crate::scan::unsaved_proptest())]
        #[test]
        fn the_split_view_is_the_definition(
            parts in proptest::collection::vec(
                proptest::sample::select(vec![
                    "a", "z", "A", "Z", "HTTP", "Server", "push", "To", "v2", "9", "_", "-", "/",
                    ".", ":", "@", "+", "=", " ", "\t", "\n", "é", "É", "\u{a0}", "\u{2003}",
                    "ß", "(", ")", ",",
                ]),
                0..40,
            )
        ) {
            let text: String = parts.concat();
            let view = SplitView::new(&text);
            proptest::prop_assert_eq!((view.text, view.origin), split_byte_by_byte(&text));
        }
    }

    #[test]
    fn joined_words_are_split_and_sentence_ends_kept() {
        let view = SplitView::new("Run test git_push. Edit git/push/origin/main.");
        assert_eq!(view.text, "Run test git push. Edit git push origin main.");
        let view = SplitView::new("Function userApprovedPush in HTTPServer.rs was changed.");
        assert_eq!(
            view.text,
            "Function user Approved Push in HTTP Server rs was changed."
        );
        assert!(!SplitView::new("do not push. rm -rf x").is_split());
        // Python's whitespace (a no-break space) ends a token; other letters join.
        assert_eq!(SplitView::new("a\u{a0}_b é_b").text, "a\u{a0}_b é b");
    }

    #[test]
    fn view_matches_map_back_to_whole_tokens() {
        let source = "Next step is to run test retry_migration_0042. Done.";
        let view = SplitView::new(source);
        let at = view.text.find("migration 0042").unwrap();
        let span = view.source_span(at..at + "migration 0042".len());
        assert_eq!(&source[span], "retry_migration_0042");
        let camel = "Read file src/pushToMain.rs.";
        let view = SplitView::new(camel);
        let at = view.text.find("push").unwrap();
        assert_eq!(&camel[view.source_span(at..at + 4)], "src/pushToMain.rs");
    }

    #[test]
    fn words_split_on_separators_and_humps() {
        assert_eq!(words("fix/login-timeout"), ["fix", "login", "timeout"]);
        assert_eq!(
            words("store_decisions::two_person"),
            ["store", "decisions", "two", "person"]
        );
        assert_eq!(
            words("parseHTTPResponse2x"),
            ["parse", "HTTP", "Response2x"]
        );
        assert_eq!(words("m0042"), ["m0042"]);
        assert!(words("__").is_empty());
        for token in [
            "fix/login-timeout",
            "parseHTTPResponse2x",
            "m0042",
            "__",
            "a__b",
            "é_Ωx",
            "xÉy",
        ] {
            assert_eq!(word_count(token), words(token).len(), "{token}");
        }
    }
}
