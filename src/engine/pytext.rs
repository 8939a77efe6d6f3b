//! Python's text semantics, exactly, for the closed-clause verifier: `str.casefold()`,
//! `str.split()` whitespace, and `re`'s `\w`/`\b`/`\s` for `str` patterns. The seed's
//! verifier normalises with these, and the reference vectors probe their corners (long s,
//! capital sharp s, dotted capital I, U+001C..U+001F and U+0085 as whitespace, combining
//! marks and vulgar fractions beside a word). Rust's own Unicode notions differ on each, so
//! the tables are generated from CPython 3.11.7 and shipped in `assets/unicode/`.
//!
//! Patterns then run unchanged on the `regex` crate: normalisation replaces the few
//! characters whose word-ness differs between Python's `re` and the `regex` crate (combining
//! marks, connector punctuation, vulgar fractions, ...) with stand-ins that agree (`ǂ` for a
//! word character, `¤` for a non-word one), so `\b`, `\w` and `\W` give Python's answers.

use std::sync::OnceLock;

struct Tables {
    /// Sorted by code point: (code point, its casefold).
    fold: Vec<(char, String)>,
    word: Vec<(u32, u32)>,
    space: Vec<(u32, u32)>,
    /// What the `regex` crate's Unicode `\w` matches.
    rust_word: Vec<(u32, u32)>,
}

/// Stand-ins for characters whose word-ness the two engines disagree on.
const WORD_STAND_IN: char = '\u{01C2}';
const NON_WORD_STAND_IN: char = '\u{00A4}';

fn rust_word_ranges() -> Vec<(u32, u32)> {
    use regex_syntax::hir::{Class, HirKind};
    match regex_syntax::parse(r"\w").map(|hir| hir.into_kind()) {
        Ok(HirKind::Class(Class::Unicode(class))) => class
            .ranges()
            .iter()
            .map(|r| (r.start() as u32, r.end() as u32))
            .collect(),
        _ => Vec::new(),
    }
}

fn tables() -> &'static Tables {
    static TABLES: OnceLock<Tables> = OnceLock::new();
    TABLES.get_or_init(|| Tables {
        fold: parse_fold(include_str!("../../assets/unicode/python-casefold.txt")),
        word: parse_ranges(include_str!("../../assets/unicode/python-word.txt")),
        space: parse_ranges(include_str!("../../assets/unicode/python-space.txt")),
        rust_word: rust_word_ranges(),
    })
}

fn data_lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
}

fn hex_char(text: &str) -> Option<char> {
    u32::from_str_radix(text, 16).ok().and_then(char::from_u32)
}

fn parse_fold(text: &str) -> Vec<(char, String)> {
    let mut out: Vec<(char, String)> = data_lines(text)
        .filter_map(|line| {
            let (from, to) = line.split_once('\t')?;
            let folded: Option<String> = to.split(' ').map(hex_char).collect();
            Some((hex_char(from)?, folded?))
        })
        .collect();
    out.sort_by_key(|(c, _)| *c);
    out
}

fn parse_ranges(text: &str) -> Vec<(u32, u32)> {
    data_lines(text)
        .filter_map(|line| {
            let (a, b) = line.split_once("..")?;
            Some((
                u32::from_str_radix(a, 16).ok()?,
                u32::from_str_radix(b, 16).ok()?,
            ))
        })
        .collect()
}

fn in_ranges(ranges: &[(u32, u32)], c: char) -> bool {
    let c = c as u32;
    ranges
        .binary_search_by(|&(lo, hi)| {
            if hi < c {
                std::cmp::Ordering::Less
            } else if lo > c {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

/// `c.isspace()` in Python: what `str.split()` splits on.
pub fn is_space(c: char) -> bool {
    match u8::try_from(c) {
        Ok(b) if b.is_ascii() => is_ascii_space(b),
        _ => in_ranges(&tables().space, c),
    }
}

/// `isspace()` of an ASCII byte: tab to carriage return, the four separators and space.
fn is_ascii_space(b: u8) -> bool {
    matches!(b, b'\t'..=b'\r' | 0x1c..=0x1f | b' ')
}

/// `re`'s `\w` for `str` patterns: `c.isalnum() or c == "_"`.
pub fn is_word(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphanumeric() || c == '_';
    }
    in_ranges(&tables().word, c)
}

/// `c`, or a stand-in with the same word-ness in Python's `re` and the `regex` crate when the
/// two disagree on `c`.
pub fn agreeing(c: char) -> char {
    if c.is_ascii() {
        return c;
    }
    let python = is_word(c);
    if python == in_ranges(&tables().rust_word, c) {
        c
    } else if python {
        WORD_STAND_IN
    } else {
        NON_WORD_STAND_IN
    }
}

/// Appends Python's `c.casefold()` to `out`.
fn push_casefold(out: &mut String, c: char) {
    if c.is_ascii() {
        out.push(c.to_ascii_lowercase());
        return;
    }
    let fold = &tables().fold;
    match fold.binary_search_by_key(&c, |(k, _)| *k) {
        Ok(index) => out.push_str(&fold[index].1),
        Err(_) => out.push(c),
    }
}

/// Python's `text.casefold()`.
pub fn casefold(text: &str) -> String {
    if text.is_ascii() {
        return text.to_ascii_lowercase();
    }
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        push_casefold(&mut out, c);
    }
    out
}

/// Appends `word`, after a space unless `out` is empty; an empty word adds nothing.
fn push_word(out: &mut String, word: &str) {
    if word.is_empty() {
        return;
    }
    if !out.is_empty() {
        out.push(' ');
    }
    out.push_str(word);
}

/// Python's `" ".join(text.split())`.
pub fn collapse_whitespace(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    if text.is_ascii() {
        // The same split, byte by byte.
        let mut start = 0;
        for (at, &b) in text.as_bytes().iter().enumerate() {
            if is_ascii_space(b) {
                push_word(&mut out, &text[start..at]);
                start = at + 1;
            }
        }
        push_word(&mut out, &text[start..]);
        return out;
    }
    for word in text.split(is_space) {
        push_word(&mut out, word);
    }
    out
}

/// `" ".join(text.casefold().split())` with disagreeing characters replaced by stand-ins
/// (see the module docs), remembering for every byte of the result the byte offset in
/// `text` it came from, so matches on the normalised text map back to the source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Normalized {
    pub text: String,
    origin: Vec<usize>,
    source_len: usize,
}

impl Normalized {
    pub fn new(source: &str) -> Normalized {
        let mut text = String::with_capacity(source.len());
        let mut origin = Vec::with_capacity(source.len());
        let mut pending_space: Option<usize> = None;
        let bytes = source.as_bytes();
        let mut at = 0;
        while at < bytes.len() {
            let byte = bytes[at];
            if byte.is_ascii() {
                // The ASCII path of the loop below, without decoding a character: a space, or
                // a run of other ASCII bytes copied and lowered at once.
                if is_ascii_space(byte) {
                    if !text.is_empty() && pending_space.is_none() {
                        pending_space = Some(at);
                    }
                    at += 1;
                    continue;
                }
                if let Some(space_at) = pending_space.take() {
                    text.push(' ');
                    origin.push(space_at);
                }
                let end = bytes[at..]
                    .iter()
                    .position(|&b| !b.is_ascii() || is_ascii_space(b))
                    .map_or(bytes.len(), |n| at + n);
                let from = text.len();
                text.push_str(&source[at..end]);
                text[from..].make_ascii_lowercase();
                origin.extend(at..end);
                at = end;
                continue;
            }
            let Some(c) = source[at..].chars().next() else {
                break;
            };
            let start = at;
            at += c.len_utf8();
            if is_space(c) {
                if !text.is_empty() && pending_space.is_none() {
                    pending_space = Some(start);
                }
                continue;
            }
            if let Some(space_at) = pending_space.take() {
                text.push(' ');
                origin.push(space_at);
            }
            let fold = &tables().fold;
            match fold.binary_search_by_key(&c, |(k, _)| *k) {
                Ok(index) => {
                    for f in fold[index].1.chars() {
                        let f = agreeing(f);
                        text.push(f);
                        origin.resize(origin.len() + f.len_utf8(), start);
                    }
                }
                Err(_) => {
                    let f = agreeing(c);
                    text.push(f);
                    origin.resize(origin.len() + f.len_utf8(), start);
                }
            }
        }
        Normalized {
            text,
            origin,
            source_len: source.len(),
        }
    }

    /// The source byte range that the normalised byte range `start..end` came from.
    pub fn source_span(&self, start: usize, end: usize) -> std::ops::Range<usize> {
        let from = self.origin.get(start).copied().unwrap_or(self.source_len);
        let to = match end.checked_sub(1).and_then(|last| self.origin.get(last)) {
            Some(&last) => self
                .origin
                .iter()
                .skip(end)
                .copied()
                .find(|&o| o > last)
                .unwrap_or(self.source_len),
            None => from,
        };
        from..to.max(from)
    }
}

/// The pattern without its lookarounds (`(?=…)`, `(?!…)`, `(?<=…)`, `(?<!…)`): it matches
/// wherever the full pattern does, so the plain `regex` crate can rule most texts out before
/// the backtracking engine that lookarounds need is run.
pub fn strip_lookarounds(pattern: &str) -> Result<String, String> {
    let mut out = String::with_capacity(pattern.len());
    let mut in_class = false;
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                out.push(c);
                if let Some(next) = chars.next() {
                    out.push(next);
                }
            }
            '(' if !in_class && is_lookaround(chars.clone()) => skip_group(&mut chars)?,
            '[' if !in_class => {
                in_class = true;
                out.push(c);
                if chars.peek() == Some(&'^') {
                    out.push('^');
                    chars.next();
                }
                if chars.peek() == Some(&']') {
                    out.push(']');
                    chars.next();
                }
            }
            ']' if in_class => {
                in_class = false;
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    Ok(out)
}

/// Whether the text after a `(` opens a lookaround: `?=`, `?!`, `?<=` or `?<!`.
fn is_lookaround(mut rest: std::iter::Peekable<std::str::Chars<'_>>) -> bool {
    if rest.next() != Some('?') {
        return false;
    }
    match rest.next() {
        Some('=' | '!') => true,
        Some('<') => matches!(rest.next(), Some('=' | '!')),
        _ => false,
    }
}

/// Skips the rest of a group whose `(` was just read, nested groups, classes and escapes
/// included.
fn skip_group(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> Result<(), String> {
    let mut depth = 1;
    let mut in_class = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '[' if !in_class => in_class = true,
            ']' if in_class => in_class = false,
            '(' if !in_class => depth += 1,
            ')' if !in_class => {
                depth -= 1;
                if depth == 0 {
                    return Ok(());
                }
            }
            _ => {}
        }
    }
    Err("unbalanced parenthesis in a lookaround".into())
}

#[cfg(test)]
mod tests {
    #[test]
    fn case_folding_is_idempotent_for_every_code_point() {
        // The clause parser relies on this to fold a clause once.
        for c in (0..=0x10ffff).filter_map(char::from_u32) {
            let once = casefold(&c.to_string());
            assert_eq!(casefold(&once), once, "U+{:04X}", c as u32);
        }
    }

    use super::*;

    #[test]
    fn casefold_matches_python() {
        assert_eq!(casefold("Straße ẞ ſ İ ΣΑΣ"), "strasse ss s i\u{307} σασ");
    }

    #[test]
    fn python_whitespace_includes_separators() {
        for c in ['\x1c', '\x1f', '\u{85}', '\u{a0}', '\u{3000}'] {
            assert!(is_space(c), "{c:?}");
        }
        assert!(!is_space('\u{200b}'));
        assert_eq!(collapse_whitespace(" a\x1f\u{85}b  c "), "a b c");
    }

    #[test]
    fn ascii_text_collapses_as_the_general_split_does() {
        let general = |text: &str| -> String {
            text.split(is_space)
                .filter(|w| !w.is_empty())
                .collect::<Vec<_>>()
                .join(" ")
        };
        // Every ASCII byte, alone, between words, doubled and at either end.
        for b in 0u8..0x80 {
            let c = char::from(b);
            for text in [
                format!("{c}"),
                format!("a{c}b"),
                format!("{c}{c}a{c}{c}b{c}{c}"),
                format!("read{c} file{c}\t x.rs{c}"),
            ] {
                assert_eq!(collapse_whitespace(&text), general(&text), "{text:?}");
            }
        }
        assert_eq!(collapse_whitespace(""), "");
        assert_eq!(collapse_whitespace(" \x0b\x1c "), "");
    }

    #[test]
    fn word_characters_follow_isalnum() {
        assert!(is_word('½'));
        assert!(!is_word('\u{301}'));
        assert!(!is_word('‿'));
        assert!(is_word('_'));
    }

    /// The normalisation character by character, as the non-ASCII path reads.
    fn by_character(source: &str) -> (String, Vec<usize>) {
        let (mut text, mut origin, mut pending) = (String::new(), Vec::new(), None);
        for (at, c) in source.char_indices() {
            if is_space(c) {
                if !text.is_empty() && pending.is_none() {
                    pending = Some(at);
                }
                continue;
            }
            if let Some(space_at) = pending.take() {
                text.push(' ');
                origin.push(space_at);
            }
            let folded = casefold(&c.to_string());
            for f in folded.chars().map(agreeing) {
                text.push(f);
                origin.resize(origin.len() + f.len_utf8(), at);
            }
        }
        (text, origin)
    }

    proptest::proptest! {
        #![proptest_config(crate::scan::unsaved_proptest())]
        #[test]
        fn normalized_runs_of_ascii_read_as_characters(
            parts in proptest::collection::vec(
                proptest::sample::select(vec![
                    "a", "Z", "Do", "NOT", "reveal", "7", ".", "(", " ", "  ", "\n", "\t", "\r",
                    "\x0b", "\x0c", "\x1c", "\x1f", "\x7f", "é", "É", "ß", "ẞ", "\u{301}",
                    "\u{2003}", "\u{a0}", "\u{85}", "ﬁ", "K", "ſ",
                ]),
                0..40,
            )
        ) {
            let text: String = parts.concat();
            let n = Normalized::new(&text);
            proptest::prop_assert_eq!((n.text, n.origin), by_character(&text));
        }
    }

    #[test]
    fn normalized_reads_ascii_bytes_as_it_reads_characters() {
        for source in [
            "",
            "   ",
            "Plain ASCII Text",
            "  Leading\tand\x0b\x1ctrailing \r\n ",
            "MiXeD Straße ÉTÉ and ASCII",
            "ASCII\u{a0}non-breaking\u{2003}em space",
            "ﬁne ǅ ſ K AB",
            "x",
            "trailing Ä",
            "run\u{e9}s of ASCII é, then\u{301}  MORE\x1fruns",
        ] {
            let n = Normalized::new(source);
            assert_eq!(
                (n.text.clone(), n.origin.clone()),
                by_character(source),
                "{source:?}"
            );
        }
    }

    #[test]
    fn normalized_maps_back_to_source() {
        let source = "  Do\tNOT   reveal ẞ.";
        let n = Normalized::new(source);
        assert_eq!(n.text, "do not reveal ss.");
        let at = n.text.find("reveal").unwrap();
        assert_eq!(&source[n.source_span(at, at + 6)], "reveal");
        let ss = n.text.find("ss").unwrap();
        assert_eq!(&source[n.source_span(ss, ss + 2)], "ẞ");
    }

    #[test]
    fn boundaries_on_normalized_text_follow_python() {
        let word = regex::Regex::new(r"\breveal\b").unwrap();
        assert!(word.is_match(&Normalized::new("reveal\u{301} it").text));
        assert!(!word.is_match(&Normalized::new("\u{bd}reveal").text));
        assert!(word.is_match(&Normalized::new("\u{203f}reveal").text));
        assert_eq!(agreeing('\u{301}'), NON_WORD_STAND_IN);
        assert_eq!(agreeing('\u{bd}'), WORD_STAND_IN);
        assert_eq!(agreeing('\u{e9}'), '\u{e9}');
        let loose = strip_lookarounds(r"(?<!not )\breveal\b(?=[a-z](?:x))").unwrap();
        assert_eq!(loose, r"\breveal\b");
    }
}
