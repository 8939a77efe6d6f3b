//! The words of a field as the joined views see them: each whitespace-separated word is a
//! fragment (what a slot value may hold), a plain word (what stands between fragments in a
//! clause) or a break (code or markup, which ends a run). Most of a field is plain words, and
//! every field the gate or `cq scan` sees passes through here, so the words are found and
//! classified in one pass over the bytes with a class table; the result is exactly that of
//! splitting on whitespace and reading each word with `str` methods (the tests keep that
//! definition and compare).

use std::ops::Range;

/// Plain words that name a secret; as fragments (at the end of a clause) they give the next
/// one a key name.
const SECRET_WORDS: &[&str] = &[
    "password",
    "passwd",
    "passphrase",
    "pwd",
    "secret",
    "token",
    "credential",
    "credentials",
    "apikey",
    "key",
];

/// What a word of the field is to the views.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Word {
    /// A word that may hold a value or a key name.
    Fragment,
    /// A plain word between fragments, as the words of a clause template are.
    Plain,
    /// Code or markup (quotes or brackets inside, a code span's backticks, `=`, `$`, `;`, bare
    /// punctuation): it ends a run, so that `name = "value"` is never re-read as a name and
    /// its value.
    Break,
}

/// Byte classes: ASCII whitespace as `u8::is_ascii_whitespace` has it, and the bytes a slot
/// value may hold (paths, identifiers, numbers, commits, base64).
const SPACE: u8 = 1;
const SLOT: u8 = 2;

const CLASSES: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        if c.is_ascii_whitespace() {
            t[b] = SPACE;
        }
        if c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'/' | b'@' | b'+' | b'=') {
            t[b] = SLOT;
        }
        if matches!(c, b':' | b'~' | b'%' | b'-') {
            t[b] = SLOT;
        }
        b += 1;
    }
    t
};

fn class(b: u8) -> u8 {
    CLASSES[usize::from(b)]
}

/// The words of `text` that are fragments or breaks, in order, with their byte ranges (cut
/// free of the sentence punctuation and quotes around them).
pub(super) fn words(text: &str) -> Vec<(Word, Range<usize>)> {
    let mut out = Vec::new();
    for_each_word(text, |start, word| {
        if let Some((kind, range)) = classify(word) {
            out.push((kind, start + range.start..start + range.end));
        }
    });
    out
}

/// What `word` is, and the part of it that counts; `None` for a plain word.
fn classify(word: &str) -> Option<(Word, Range<usize>)> {
    let b = word.as_bytes();
    // Most words are plain: letters, capitalised at most at the start, with nothing to trim.
    if b.len() < 24
        && b.first().is_some_and(u8::is_ascii_alphabetic)
        && b.iter().skip(1).all(u8::is_ascii_lowercase)
        && !secret_word(word)
    {
        return None;
    }
    // The trimmed bytes are ASCII, so trimming bytes trims the same characters.
    let lead = b
        .iter()
        .take_while(|&&c| matches!(c, b'(' | b'"' | b'\''))
        .count();
    let rest = b.get(lead..).unwrap_or_default();
    let tail = rest
        .iter()
        .rev()
        .take_while(|&&c| {
            matches!(
                c,
                b'.' | b',' | b';' | b':' | b'!' | b'?' | b')' | b'"' | b'\''
            )
        })
        .count();
    let end = lead + rest.len() - tail;
    let trimmed = match word.get(lead..end) {
        Some(t) if !t.is_empty() => t,
        _ => return Some((Word::Break, 0..word.len())),
    };
    // A secret's name standing alone is a key name only where it ends a clause or labels
    // what follows (`The current branch is password.`, `token:`), not inside a sentence.
    let secret = secret_word(trimmed);
    let ends_clause = matches!(b.get(end), Some(b'.' | b':'));
    let t = trimmed.as_bytes();
    let kind = if !secret && plain_word(trimmed) || secret && !ends_clause {
        Word::Plain
    } else if t.iter().all(|&c| class(c) == SLOT)
        && t.iter().any(u8::is_ascii_alphanumeric)
        && !t.contains(&b'=')
        || base64_padded(trimmed)
    {
        Word::Fragment
    } else {
        Word::Break
    };
    (kind != Word::Plain).then_some((kind, lead..end))
}

/// Calls `f` with the start and text of each non-empty word of `text`, words being split on
/// ASCII whitespace; a word with other bytes is split again on Unicode whitespace, so the
/// words are those of `text.split(char::is_whitespace)` (but for a vertical tab between ASCII
/// bytes, which stays inside its word).
fn for_each_word(text: &str, mut f: impl FnMut(usize, &str)) {
    let bytes = text.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        let Some(start) = bytes
            .get(at..)
            .and_then(|rest| rest.iter().position(|&b| class(b) != SPACE))
            .map(|i| at + i)
        else {
            return;
        };
        let mut end = start;
        let mut high = 0u8;
        for &b in bytes.get(start..).unwrap_or_default() {
            if class(b) == SPACE {
                break;
            }
            high |= b;
            end += 1;
        }
        at = end + 1;
        // Whitespace bytes are ASCII, so both ends are character boundaries.
        let Some(word) = text.get(start..end) else {
            continue;
        };
        if high < 0x80 {
            f(start, word);
            continue;
        }
        let mut from = start;
        for part in word.split(char::is_whitespace) {
            if !part.is_empty() {
                f(from, part);
            }
            from += part.len()
                + text
                    .get(from + part.len()..)
                    .and_then(|r| r.chars().next())
                    .map_or(0, char::len_utf8);
        }
    }
}

/// A base64 value whose only `=` are its padding (`…dQ==`).
fn base64_padded(word: &str) -> bool {
    let body = word.trim_end_matches('=');
    body.len() + 2 >= word.len()
        && body.len() >= 8
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/')
}

/// A word of letters, capitalised at most at its start (names of secrets are told apart by
/// [`secret_word`]).
fn plain_word(word: &str) -> bool {
    if word.len() >= 24 {
        return false;
    }
    if word.is_ascii() {
        let b = word.as_bytes();
        return b.first().is_some_and(u8::is_ascii_alphabetic)
            && b.iter().skip(1).all(u8::is_ascii_lowercase);
    }
    let mut chars = word.chars();
    chars.next().is_some_and(char::is_alphabetic)
        && chars.all(|c| c.is_alphabetic() && !c.is_uppercase())
}

pub(super) fn secret_word(word: &str) -> bool {
    // Every secret word starts with one of these letters: most words are out at once.
    (3..=11).contains(&word.len())
        && word.as_bytes().first().is_some_and(|b| {
            matches!(
                b.to_ascii_lowercase(),
                b'p' | b's' | b't' | b'c' | b'a' | b'k'
            )
        })
        && SECRET_WORDS.iter().any(|w| w.eq_ignore_ascii_case(word))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition the fast pass must match: split on whitespace, then `str` methods.
    fn words_by_definition(text: &str) -> Vec<(Word, Range<usize>)> {
        let mut out = Vec::new();
        let mut start = 0;
        let mut pieces: Vec<(usize, &str)> = Vec::new();
        for word in text.as_bytes().split(u8::is_ascii_whitespace) {
            let at = start;
            start += word.len() + 1;
            let Some(word) = text.get(at..at + word.len()).filter(|w| !w.is_empty()) else {
                continue;
            };
            if word.is_ascii() {
                pieces.push((at, word));
                continue;
            }
            let mut from = at;
            for part in word.split(char::is_whitespace) {
                if !part.is_empty() {
                    pieces.push((from, part));
                }
                from += part.len()
                    + text[from + part.len()..]
                        .chars()
                        .next()
                        .map_or(0, char::len_utf8);
            }
        }
        for (start, word) in pieces {
            let lead = word.len() - word.trim_start_matches(['(', '"', '\'']).len();
            let trimmed =
                word[lead..].trim_end_matches(['.', ',', ';', ':', '!', '?', ')', '"', '\'']);
            if trimmed.is_empty() {
                out.push((Word::Break, start..start + word.len()));
                continue;
            }
            let range = start + lead..start + lead + trimmed.len();
            let secret = SECRET_WORDS.iter().any(|w| w.eq_ignore_ascii_case(trimmed));
            let ends_clause = word[lead + trimmed.len()..].starts_with(['.', ':']);
            let slot = |b: u8| b.is_ascii_alphanumeric() || b"_./@+=:~%-".contains(&b);
            let kind = if !secret && plain_word(trimmed) || secret && !ends_clause {
                Word::Plain
            } else if trimmed.bytes().all(slot)
                && trimmed.bytes().any(|b| b.is_ascii_alphanumeric())
                && !trimmed.contains('=')
                || base64_padded(trimmed)
            {
                Word::Fragment
            } else {
                Word::Break
            };
            if kind != Word::Plain {
                out.push((kind, range));
            }
        }
        out
    }

    #[test]
    fn words_match_their_definition() {
        let mut next = crate::scan::test_rng(0x2545_f491_4f6c_dd1du64);
        let atoms = [
            "a",
            "Z",
            "k",
            "9",
            "0",
            " ",
            "  ",
            "\n",
            "\t",
            "\r",
            "\x0b",
            "\x0c",
            ".",
            ",",
            ";",
            ":",
            "!",
            "?",
            "(",
            ")",
            "\"",
            "'",
            "=",
            "==",
            "_",
            "/",
            "@",
            "+",
            "~",
            "%",
            "-",
            "`",
            "$",
            "[",
            "é",
            "É",
            "\u{a0}",
            "\u{2003}",
            "ß",
            "password",
            "Token",
            "KEY",
            "secret",
            "pwd",
            "apikey",
            "credentials",
            "passphrase",
            "xQ9",
            "dGVzdA",
            "abc",
            "Word",
            "ghp_",
            "AKIA",
            "\u{200b}",
            "日本",
        ];
        for _ in 0..20_000 {
            let text: String = (0..next(24)).map(|_| atoms[next(atoms.len())]).collect();
            assert_eq!(words(&text), words_by_definition(&text), "{text:?}");
        }
        let prose = "Read file src/a.rs.\nThe current branch is fix_Ab3. (Token: \"x9\") a `Ab9`";
        assert_eq!(words(prose), words_by_definition(prose));
    }
}
