//! Secrets split into fragments. A summary written in a controlled language puts each value in
//! its own slot, so an attacker can cut a key into pieces (an RSA key body over ten `read file`
//! clauses, an AWS secret over two) or put a key's name in one clause and its value in the
//! next. Each piece alone is nothing; the scan of a field therefore also scans joined views of
//! it, built from its fragments: the words that hold only what a slot value may hold (letters,
//! digits, `_ . / @ + = : ~ % -`) and are not plain words, plus the words that name a secret
//! (`password`, `token`) where they end a clause, each cut free of sentence punctuation and
//! quotes around it. Fragments are neighbours when only plain words (at most [`MAX_GAP`]
//! bytes, no blank line) stand between them; code and markup (quotes or brackets inside a
//! word, `=`, `;`, bare punctuation) end a run, so `name = "value"` is never re-read.
//!
//! The glued view concatenates neighbouring fragments, so split pieces become one token again;
//! a fragment that reads as a name, or a URL, is glued to nothing there (the pieces of a secret
//! are random). The paired view puts a `|` between fragments, which the rules read as a
//! separator, so a key name in one fragment is the context of the whole value in the next
//! (`aws_secret_access_key` then `<key>`); the named view glues what the glued view glues and
//! puts the `|` around names only. Random text reads as a name now and then, so the loose view
//! glues whole runs, names included, and keeps only matches over two fragments that do not.
//!
//! What the views find is mapped back to the bytes of every fragment it covers, one match per
//! fragment, so a mask over the reported spans hides every piece. Only secrets are taken from
//! the views, which are scanned with the secret rules alone (joined numbers make phone numbers
//! and ids of nothing); only matches the joining made (in the glued views they cover two
//! fragments and do not merely run on past a whole token the ordinary scan found; in the
//! paired views they start the fragment after the one naming it); and no piece a secret the
//! ordinary scan found covers. Fields over [`MAX_JOINED_BYTES`] get the ordinary scan only.

use std::ops::Range;

use super::names;
use super::{RawMatch, Scanner};

/// Fields larger than this are not joined.
pub(super) const MAX_JOINED_BYTES: usize = 256 << 10;

/// The most bytes between two fragments of one run.
const MAX_GAP: usize = 64;

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

/// One fragment in a view: where it stands in the view and in the field.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Piece {
    view: Range<usize>,
    text: Range<usize>,
    /// Whether a `|` stands right before it: the fragment before names it.
    after_bar: bool,
    /// Whether the fragment reads as a name (see `views`).
    name: bool,
}

/// A joined view of a field and where each of its fragments came from.
#[derive(Debug, Default)]
struct View {
    text: String,
    pieces: Vec<Piece>,
    /// No `|` at all: the glued view.
    glued: bool,
    /// The loose view: whole runs glued, names included.
    loose: bool,
}

impl View {
    fn push(&mut self, field: &str, fragment: &Range<usize>, bar: bool, name: bool) {
        if bar {
            self.text.push('|');
        }
        let start = self.text.len();
        self.text.push_str(&field[fragment.clone()]);
        self.pieces.push(Piece {
            view: start..self.text.len(),
            text: fragment.clone(),
            after_bar: bar,
            name,
        });
    }

    /// How many fragments that do not read as names `span` covers.
    fn random_pieces(&self, span: &Range<usize>) -> usize {
        self.pieces
            .iter()
            .filter(|p| !p.name && p.view.start < span.end && span.start < p.view.end)
            .count()
    }

    /// Whether `span` starts the fragment after a `|`: its context came from the one before.
    fn starts_after_a_bar(&self, span: &Range<usize>) -> bool {
        self.pieces
            .iter()
            .any(|p| p.after_bar && p.view.start == span.start)
    }

    /// The field's byte ranges under `span` of the view, one per fragment it covers.
    fn map(&self, span: &Range<usize>) -> Vec<Range<usize>> {
        self.pieces
            .iter()
            .filter(|p| p.view.start < span.end && span.start < p.view.end)
            .map(|p| {
                let from = span.start.max(p.view.start) - p.view.start;
                let to = span.end.min(p.view.end) - p.view.start;
                p.text.start + from..p.text.start + to
            })
            .collect()
    }
}

/// What a word of the field that is not plain is to the views (plain words, as the words of
/// a clause template are, stand between fragments and are passed over).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Word {
    /// A word that may hold a value or a key name.
    Fragment,
    /// Code or markup (quotes or brackets inside, a code span's backticks, `=`, `$`, `;`, bare
    /// punctuation): it ends a run, so that `name = "value"` is never re-read as a name and
    /// its value.
    Break,
}

/// The bytes a slot value may hold (paths, identifiers, numbers, commits, base64), but `=`,
/// which a fragment holds only as base64 padding (see [`base64_padded`]).
static SLOT_BYTE: [bool; 256] = slot_bytes();

const fn slot_bytes() -> [bool; 256] {
    let mut table = [false; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        table[i] = b.is_ascii_alphanumeric()
            || matches!(
                b,
                b'_' | b'.' | b'/' | b'@' | b'+' | b':' | b'~' | b'%' | b'-'
            );
        i += 1;
    }
    table
}

/// The words of `text` that are fragments or breaks, in order, with their byte ranges (cut
/// free of the sentence punctuation and quotes around them).
#[cfg(test)]
fn words(text: &str) -> Vec<(Word, Range<usize>)> {
    let mut out = Vec::new();
    for_each_kind(text, |kind, range| out.push((kind, range)));
    out
}

/// Calls `f` with each word of `text` that is a fragment or a break, in order (see [`words`]).
fn for_each_kind(text: &str, mut f: impl FnMut(Word, Range<usize>)) {
    for_each_word(text, |start, word, lower_tail| {
        // Most words are plain: letters, capitalised at most at the start, with nothing to trim.
        let b = word.as_bytes();
        if b.len() < 24
            && b.first().is_some_and(u8::is_ascii_alphabetic)
            && (lower_tail || b.iter().skip(1).all(u8::is_ascii_lowercase))
            && !secret_word(word)
        {
            return;
        }
        // The quotes, brackets and sentence punctuation trimmed are ASCII, so the cuts fall
        // on character boundaries.
        let lead = b
            .iter()
            .take_while(|c| matches!(c, b'(' | b'"' | b'\''))
            .count();
        let trail = b[lead..]
            .iter()
            .rev()
            .take_while(|c| {
                matches!(
                    c,
                    b'.' | b',' | b';' | b':' | b'!' | b'?' | b')' | b'"' | b'\''
                )
            })
            .count();
        let end = b.len() - trail;
        let Some(trimmed) = word.get(lead..end).filter(|t| !t.is_empty()) else {
            f(Word::Break, start..start + word.len());
            return;
        };
        // A secret's name standing alone is a key name only where it ends a clause or labels
        // what follows (`The current branch is password.`, `token:`), not inside a sentence.
        let secret = secret_word(trimmed);
        let ends_clause = matches!(b.get(end), Some(b'.' | b':'));
        if !secret && plain_word(trimmed) || secret && !ends_clause {
            return;
        }
        let t = trimmed.as_bytes();
        let slot_value =
            t.iter().all(|&c| SLOT_BYTE[usize::from(c)]) && t.iter().any(u8::is_ascii_alphanumeric);
        let kind = if slot_value || base64_padded(trimmed) {
            Word::Fragment
        } else {
            Word::Break
        };
        f(kind, start + lead..start + end);
    });
}

/// What [`for_each_word`] tells of a byte: ASCII whitespace (`u8::is_ascii_whitespace`), a
/// lower-case ASCII letter, any other ASCII byte, or a byte of a multi-byte character.
const SPACE: u8 = 1;
const LOWER: u8 = 2;
const OTHER: u8 = 4;
const WIDE: u8 = 8;

static BYTE_CLASS: [u8; 256] = byte_classes();

const fn byte_classes() -> [u8; 256] {
    let mut table = [OTHER; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        table[i] = if b.is_ascii_whitespace() {
            SPACE
        } else if b.is_ascii_lowercase() {
            LOWER
        } else if b.is_ascii() {
            OTHER
        } else {
            WIDE
        };
        i += 1;
    }
    table
}

/// Calls `f` with the start and text of each non-empty word of `text`, words being split on
/// whitespace, and whether every byte of the word after its first is a lower-case ASCII
/// letter (`false` when not known). ASCII whitespace (`u8::is_ascii_whitespace`) is found
/// byte by byte; a word with other bytes is split again on Unicode whitespace, so the words
/// are those of `text.split(char::is_whitespace)`, except that a word of ASCII bytes alone is
/// not split at a vertical tab (U+000B), which only `char::is_whitespace` counts.
fn for_each_word(text: &str, mut f: impl FnMut(usize, &str, bool)) {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if BYTE_CLASS[usize::from(b[i])] == SPACE {
            i += 1;
            continue;
        }
        let at = i;
        let mut tail = 0;
        i += 1;
        while let Some(&c) = b.get(i) {
            let class = BYTE_CLASS[usize::from(c)];
            if class == SPACE {
                break;
            }
            tail |= class;
            i += 1;
        }
        // ASCII whitespace, and the ends of the text, are character boundaries.
        let Some(word) = text.get(at..i) else {
            continue;
        };
        if b[at].is_ascii() && tail & WIDE == 0 {
            f(at, word, tail & !LOWER == 0);
            continue;
        }
        let mut from = at;
        for part in word.split(char::is_whitespace) {
            if !part.is_empty() {
                f(from, part, false);
            }
            from += part.len()
                + text[from + part.len()..]
                    .chars()
                    .next()
                    .map_or(0, char::len_utf8);
        }
    }
}

/// Eight or more bytes with ASCII letters and digits among them.
fn mixed(fragment: &str) -> bool {
    let b = fragment.as_bytes();
    b.len() >= 8 && b.iter().any(u8::is_ascii_alphabetic) && b.iter().any(u8::is_ascii_digit)
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

fn secret_word(word: &str) -> bool {
    (3..=11).contains(&word.len()) && SECRET_WORDS.iter().any(|w| w.eq_ignore_ascii_case(word))
}

/// Runs of neighbouring fragments: no break, no blank line and at most [`MAX_GAP`] bytes of
/// plain words between one and the next.
fn runs(text: &str) -> Vec<Vec<Range<usize>>> {
    let mut runs: Vec<Vec<Range<usize>>> = Vec::new();
    let mut run: Vec<Range<usize>> = Vec::new();
    for_each_kind(text, |kind, range| {
        let near = run.last().is_some_and(|last: &Range<usize>| {
            let gap = &text[last.end..range.start];
            gap.len() <= MAX_GAP && !gap.as_bytes().windows(2).any(|w| w == b"\n\n")
        });
        if kind == Word::Break || !near {
            if run.len() >= 2 {
                runs.push(std::mem::take(&mut run));
            }
            run.clear();
        }
        if kind == Word::Fragment {
            run.push(range);
        }
    });
    if run.len() >= 2 {
        runs.push(run);
    }
    runs
}

/// The glued, paired and named views of `text`, or none when no two fragments are neighbours.
fn views(text: &str) -> Vec<View> {
    // One word (no whitespace at all) holds at most one fragment: no run, no view.
    if text.len() > MAX_JOINED_BYTES || !text.contains(char::is_whitespace) {
        return Vec::new();
    }
    views_of(text)
}

fn views_of(text: &str) -> Vec<View> {
    // The pieces of a secret are random, so a fragment that reads as a name (a key name, a
    // number, `fix-refund-rounding`) or is a URL is glued to nothing: a token's pattern would
    // run on into it or start inside it, and a URL would take the next fragment for its
    // user-info.
    let apart = |f: &Range<usize>| {
        let fragment = &text[f.clone()];
        names::name_like(fragment) || fragment.contains("://")
    };
    let mut glued = View {
        glued: true,
        ..View::default()
    };
    let mut loose = View {
        glued: true,
        loose: true,
        ..View::default()
    };
    let (mut paired, mut named) = (View::default(), View::default());
    let mut named_differs = false;
    for run in runs(text) {
        let names: Vec<bool> = run.iter().map(&apart).collect();
        let mut glues = false;
        let mut from = 0;
        while from < run.len() {
            let to = (from..run.len()).find(|&i| names[i]).unwrap_or(run.len());
            if let Some(part) = run.get(from..to).filter(|p| p.len() >= 2) {
                for fragment in part {
                    glued.push(text, fragment, false, false);
                }
                glued.text.push('\n');
                glues = true;
            }
            from = to + 1;
        }
        let has_names = names.contains(&true);
        named_differs |= glues && has_names;
        for (i, fragment) in run.iter().enumerate() {
            let name = names.get(i).copied().unwrap_or(false);
            paired.push(text, fragment, i > 0, name);
            let after_name = i > 0 && names.get(i - 1).copied().unwrap_or(false);
            named.push(text, fragment, i > 0 && (name || after_name), name);
        }
        paired.text.push('\n');
        named.text.push('\n');
        // Random text reads as a name now and then (`dfjic0XJC8OpgwOdw13`), which would keep
        // a piece of a secret from its neighbours: the loose view glues such runs whole, and
        // counts as random only pieces of eight or more letters and digits mixed (not dates,
        // times, offsets or numbers, which glued to an id would make one of nothing).
        let random: Vec<bool> = run
            .iter()
            .zip(&names)
            .map(|(f, &name)| !name && mixed(&text[f.clone()]))
            .collect();
        if has_names && random.iter().filter(|&&r| r).count() >= 2 {
            for (fragment, &r) in run.iter().zip(&random) {
                loose.push(text, fragment, false, !r);
            }
            loose.text.push('\n');
        }
    }
    // The named view glues what the glued view glues and puts a `|` around names, so a value
    // split in pieces is read whole after its key name; it is needed only where a run holds
    // both a name and pieces to glue.
    let mut out = vec![glued, paired];
    if named_differs {
        out.push(named);
    }
    out.push(loose);
    out.into_iter().filter(|v| !v.pieces.is_empty()).collect()
}

/// The joined views of a field, each with the secrets the secret rules find in it, before
/// [`Scanner::keep_joined`] keeps those the joining made.
#[derive(Debug, Default)]
pub(super) struct Joined {
    views: Vec<(View, Vec<RawMatch>)>,
}

impl Joined {
    pub(super) fn is_empty(&self) -> bool {
        self.views.is_empty()
    }
}

impl Scanner {
    /// The joined views of `text` and the secrets in each. This needs nothing of the ordinary
    /// scan, so it can run beside it.
    pub(super) fn scan_views(&self, text: &str) -> Joined {
        let views = views(text);
        if views.is_empty() {
            return Joined::default();
        }
        let scanner = self.secrets_only();
        let views = views
            .into_iter()
            .map(|view| {
                let mut found = scanner.scan_raw(&view.text, true);
                found.retain(|m| self.rules[m.rule].category.is_secret());
                (view, found)
            })
            .collect();
        Joined { views }
    }

    /// Secrets in the joined views, one match per fragment they cover, except the pieces a
    /// secret that `found` (the ordinary scan's matches) holds already covers.
    pub(super) fn keep_joined(&self, joined: Joined, found: &[RawMatch]) -> Vec<RawMatch> {
        let secret = |rule: usize| self.rules[rule].category.is_secret();
        let mut out: Vec<RawMatch> = Vec::new();
        for (view, matches) in joined.views {
            for m in matches {
                let ranges = view.map(&m.span);
                // Joined text must have helped: in the glued view the match covers pieces of two
                // fragments, in the others it starts the fragment after a key name; and it does
                // not merely run on past a whole token the ordinary scan found (a token's
                // pattern takes whatever random text is glued after it).
                let whole_token = |first: &Range<usize>| {
                    self.rules[m.rule]
                        .compiled()
                        .is_ok_and(|c| c.glued.is_some())
                        && found.iter().any(|f| {
                            f.rule == m.rule
                                && f.span.start <= first.start
                                && first.end <= f.span.end
                        })
                };
                let helped = if view.loose {
                    view.random_pieces(&m.span) >= 2
                } else if view.glued {
                    ranges.len() >= 2
                } else {
                    view.starts_after_a_bar(&m.span)
                };
                if !helped || ranges.len() >= 2 && ranges.first().is_some_and(whole_token) {
                    continue;
                }
                for span in ranges {
                    let known = found.iter().chain(out.iter()).any(|f| {
                        secret(f.rule) && f.span.start < span.end && span.start < f.span.end
                    });
                    if !known {
                        out.push(RawMatch {
                            rule: m.rule,
                            span,
                            confidence: m.confidence,
                        });
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fragments_are_the_words_that_are_not_plain() {
        let text =
            "Read file src/a.rs.\nThe current branch is fix_Ab3. (Token: \"x9\") a token `Ab9`";
        let fragments: Vec<&str> = words(text)
            .into_iter()
            .filter(|(k, _)| *k == Word::Fragment)
            .map(|(_, r)| &text[r])
            .collect();
        assert_eq!(fragments, vec!["src/a.rs", "fix_Ab3", "Token", "x9"]);
    }

    #[test]
    fn code_breaks_runs() {
        let runs_of = |text: &str| -> Vec<Vec<String>> {
            runs(text)
                .into_iter()
                .map(|run| run.into_iter().map(|r| text[r].to_owned()).collect())
                .collect()
        };
        assert!(runs_of("api_key = \"Ab3xYz9Q\"").is_empty());
        assert!(runs_of("<add key=\"ClearTextPassword\" value=\"x9\" />").is_empty());
        assert!(runs_of("Ldap password ---- H7IKC85R#@4$").is_empty());
        assert_eq!(
            runs_of("The current branch is password. Read file Xk9mP2qLz7==."),
            vec![vec!["password".to_owned(), "Xk9mP2qLz7==".to_owned()]]
        );
    }

    #[test]
    fn views_join_neighbouring_fragments_and_map_back_to_each() {
        let text = "Read file MIIEo9x. Read file q2KxAQz9.\n\nRead file zz9.";
        let views = views(text);
        assert_eq!(views.len(), 2);
        assert_eq!(views[0].text, "MIIEo9xq2KxAQz9\n");
        assert_eq!(views[1].text, "MIIEo9x|q2KxAQz9\n");
        // A span over both pieces maps to both fragments, not the words between them.
        assert_eq!(views[0].map(&(3..9)), vec![13..17, 29..31]);
        assert_eq!(views[1].map(&(3..10)), vec![13..17, 29..31]);
    }

    #[test]
    fn fragments_that_read_as_names_are_glued_to_nothing() {
        let text = "Committed 3f9c2ab on branch fix-refund-rounding. Read file MIIEo9x. \
                    Read file q2KxAQz9. Test ParseConfig passed.";
        let views = views(text);
        // No loose view: of the pieces only `q2KxAQz9` is eight mixed letters and digits.
        assert_eq!(views.len(), 3);
        assert_eq!(views[0].text, "MIIEo9xq2KxAQz9\n");
        assert_eq!(
            views[1].text,
            "3f9c2ab|fix-refund-rounding|MIIEo9x|q2KxAQz9|ParseConfig\n"
        );
        assert_eq!(
            views[2].text,
            "3f9c2ab|fix-refund-rounding|MIIEo9xq2KxAQz9|ParseConfig\n"
        );
        let after_name = views[2].pieces.iter().position(|p| p.view.start == 28);
        assert_eq!(after_name, Some(2), "the glued pieces start after the name");
        assert!(views[2].starts_after_a_bar(&(28..40)));
        assert!(!views[2].starts_after_a_bar(&(35..40)));
    }

    #[test]
    fn dates_and_offsets_glued_to_an_id_are_not_random_pieces() {
        let text =
            "Arn: arn:aws:kms:us-east-2:324320755747:key/54348bc1-6e3b-4cda-8b18-c6033ca7d328\n\
                    CreationDate: 2019-07-12 18:23:13 +0000 UTC";
        let found = crate::scan::Scanner::builtin()
            .map(|s| s.scan_text("f", text))
            .unwrap_or_default();
        let secrets: Vec<_> = found.iter().filter(|f| f.category.is_secret()).collect();
        assert!(secrets.is_empty(), "{secrets:?}");
    }

    #[test]
    fn a_piece_that_reads_as_a_name_by_chance_is_still_glued_in_the_loose_view() {
        let text = "Created file sk-proj-Qk7PKwLBg42. Created file dfjic0XJC8OpgwOdw13. \
                    Created file dLNShpbRCxcgZ6ExUU.";
        assert!(names::name_like("dfjic0XJC8OpgwOdw13"));
        let loose = views(text).into_iter().find(|v| v.loose);
        let glued = loose.as_ref().map(|v| v.text.as_str());
        assert_eq!(
            glued,
            Some("sk-proj-Qk7PKwLBg42dfjic0XJC8OpgwOdw13dLNShpbRCxcgZ6ExUU\n")
        );
        // The piece that reads as a name is not counted as random; the other two are.
        let counted = loose.map(|v| v.random_pieces(&(0..56)));
        assert_eq!(counted, Some(2));
    }

    #[test]
    fn a_text_without_whitespace_makes_no_view_even_when_looked_at_whole() {
        for text in [
            "MIIEo9xq2KxAQz9",
            "Read.file.MIIEo9x.q2KxAQz9",
            "password:Xk9mP2qLz7==",
            "sk-proj-Qk7PKwLBg42,dfjic0XJC8OpgwOdw13;dLNShpbRCxcgZ6ExUU",
            "é-MIIEo9x|q2KxAQz9",
        ] {
            assert!(views(text).is_empty(), "{text}");
            assert!(views_of(text).is_empty(), "{text}");
        }
        // Whitespace only `char::is_whitespace` knows still splits.
        assert_eq!(views("Read file MIIEo9x.\u{2003}q2KxAQz9.").len(), 2);
    }

    #[test]
    fn words_are_split_on_whitespace_but_an_ascii_word_not_at_a_vertical_tab() {
        let words = |text: &str| {
            let mut out = Vec::new();
            for_each_word(text, |at, w, _| out.push((at, w.to_owned())));
            out
        };
        assert_eq!(
            words("a\tb\u{2003}c é\u{a0}d"),
            vec![
                (0, "a".into()),
                (2, "b".into()),
                (6, "c".into()),
                (8, "é".into()),
                (12, "d".into())
            ]
        );
        assert_eq!(
            words("a\x0bb c"),
            vec![(0, "a\x0bb".into()), (4, "c".into())]
        );
    }

    #[test]
    fn a_lone_fragment_makes_no_view() {
        assert!(views("SAFETY-SECRETS").is_empty());
        assert!(views("deny(secret_disclosure)").is_empty());
        let far = format!("a1 {} b2", "word ".repeat(20));
        assert!(views(&far).is_empty());
    }

    /// The classification read straight from its definition: split on whitespace, trim with
    /// `str` patterns, test each byte.
    fn words_by_definition(text: &str) -> Vec<(Word, Range<usize>)> {
        let mut out = Vec::new();
        for_each_word(text, |start, word, _| {
            let lead = word.len() - word.trim_start_matches(['(', '"', '\'']).len();
            let trimmed =
                word[lead..].trim_end_matches(['.', ',', ';', ':', '!', '?', ')', '"', '\'']);
            if trimmed.is_empty() {
                out.push((Word::Break, start..start + word.len()));
                return;
            }
            let secret = secret_word(trimmed);
            let ends_clause = word[lead + trimmed.len()..].starts_with(['.', ':']);
            if !secret && plain_word(trimmed) || secret && !ends_clause {
                return;
            }
            let slot = |b: u8| b.is_ascii_alphanumeric() || b"_./@+=:~%-".contains(&b);
            let kind = if trimmed.bytes().all(slot)
                && trimmed.bytes().any(|b| b.is_ascii_alphanumeric())
                && !trimmed.contains('=')
                || base64_padded(trimmed)
            {
                Word::Fragment
            } else {
                Word::Break
            };
            out.push((kind, start + lead..start + lead + trimmed.len()));
        });
        out
    }

    proptest::proptest! {
        #![proptest_config(crate::scan::unsaved_proptest())]
        #[test]
        fn words_are_classified_as_defined(
            parts in proptest::collection::vec(
                proptest::sample::select(vec![
                    "a", "Z", "q", "Token", "password", "key", "KEY", "abcdefghijklmnopqrstuvwxyz",
                    "7", "x9", "(", ")", "\"", "'", ".", ",", ";", ":", "!", "?", "=", "==", "_",
                    "/", "@", "+", "~", "%", "-", "`", "$", " ", " ", "\n", "\t", "\r", "\x0b",
                    "\x0c", "é", "\u{2003}", "\u{a0}", "Ä", "b64Zm9vYmFy",
                ]),
                0..40,
            )
        ) {
            let text: String = parts.concat();
            proptest::prop_assert_eq!(words(&text), words_by_definition(&text));
            let mut flags = Vec::new();
            for_each_word(&text, |_, word, lower_tail| flags.push((word.to_owned(), lower_tail)));
            for (word, lower_tail) in flags {
                if lower_tail {
                    proptest::prop_assert!(word.bytes().skip(1).all(|b| b.is_ascii_lowercase()));
                }
            }
        }
    }
}
