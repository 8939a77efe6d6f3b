//! Rules that ignore ASCII case, searched in the lower-cased text. The keyword prefilter lowers
//! a field to ASCII lower case to find keywords; a rule whose regex cannot tell an ASCII letter
//! from its other case (`(?i)` throughout: every class holding a letter holds both its cases,
//! no literal holds a letter) finds the same matches, with the same groups, in that lowered
//! text as in the field. There it runs as its regex without the upper-case letters: a smaller
//! automaton, and one whose matches start with a few lower-case literals (`pass`, `token`,
//! `key`) rather than every mix of cases of them, which the regex's literal prefilter then
//! skips to; with both cases the literals are too many for a fast prefilter.

use regex_syntax::hir::{Capture, Hir, HirKind, Repetition};
use regex_syntax::hir::{Class, ClassBytes, ClassBytesRange, ClassUnicode, ClassUnicodeRange};

/// Whether no match of `hir` depends on the ASCII case of a letter it reads.
pub(super) fn ignores_case(hir: &Hir) -> bool {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => true,
        HirKind::Literal(lit) => !lit.0.iter().any(u8::is_ascii_alphabetic),
        HirKind::Class(class) => {
            let has = |b: u8| class_has(class, b);
            (b'a'..=b'z').all(|b| has(b) == has(b.to_ascii_uppercase()))
        }
        HirKind::Capture(c) => ignores_case(&c.sub),
        HirKind::Repetition(r) => ignores_case(&r.sub),
        HirKind::Concat(parts) | HirKind::Alternation(parts) => parts.iter().all(ignores_case),
    }
}

/// Whether `class` holds the byte (or the code point) `b`. A class's ranges are sorted and
/// apart, so the search stops at the first range that ends at or after `b`: a Unicode class
/// (`\w`, `[^\s]`) has hundreds of ranges, nearly all of them past ASCII.
fn class_has(class: &Class, b: u8) -> bool {
    fn holds<T: Ord + Copy>(mut ranges: impl Iterator<Item = (T, T)>, b: T) -> bool {
        ranges
            .find(|&(_, end)| end >= b)
            .is_some_and(|(start, _)| start <= b)
    }
    match class {
        Class::Bytes(c) => holds(c.ranges().iter().map(|r| (r.start(), r.end())), b),
        Class::Unicode(c) => holds(
            c.ranges().iter().map(|r| (r.start(), r.end())),
            char::from(b),
        ),
    }
}

/// `hir` without the ASCII upper-case letters: for a regex that [`ignores_case`], the regex
/// that finds the same matches in ASCII lower-cased text.
pub(super) fn without_upper_case(hir: &Hir) -> Hir {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) | HirKind::Literal(_) => hir.clone(),
        HirKind::Class(Class::Bytes(c)) => {
            let mut class = c.clone();
            class.difference(&ClassBytes::new([ClassBytesRange::new(b'A', b'Z')]));
            Hir::class(Class::Bytes(class))
        }
        HirKind::Class(Class::Unicode(c)) => {
            let mut class = c.clone();
            class.difference(&ClassUnicode::new([ClassUnicodeRange::new('A', 'Z')]));
            Hir::class(Class::Unicode(class))
        }
        HirKind::Capture(c) => Hir::capture(Capture {
            index: c.index,
            name: c.name.clone(),
            sub: Box::new(without_upper_case(&c.sub)),
        }),
        HirKind::Repetition(r) => Hir::repetition(Repetition {
            min: r.min,
            max: r.max,
            greedy: r.greedy,
            sub: Box::new(without_upper_case(&r.sub)),
        }),
        HirKind::Concat(parts) => Hir::concat(parts.iter().map(without_upper_case).collect()),
        HirKind::Alternation(alts) => {
            Hir::alternation(alts.iter().map(without_upper_case).collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::rule::engine::parse;

    #[test]
    fn a_regex_ignores_case_when_no_class_or_literal_tells_the_cases_apart() {
        for (pattern, ignores) in [
            (
                r"(?i)(?P<key>pass|token)[a-z0-9_.-]{0,30}\s*[:=]\s*(?P<secret>[^\s]{8,})",
                true,
            ),
            (r"(?i)\b(?:api|access) ?key\b", true),
            (r"[0-9_:.-]+", true),
            (r"(?i)key(?-i:X)", false),
            (r"AKIA[0-9A-Z]{16}", false),
            (r"(?i)ghp_[a-z0-9]{36}|[A-Z]", true),
            (r"(?i)ghp_|(?-i:[A-Z])", false),
        ] {
            let hir = parse(pattern, false).unwrap();
            assert_eq!(ignores_case(&hir), ignores, "{pattern}");
        }
    }

    #[test]
    fn a_class_holds_exactly_the_bytes_of_its_ranges() {
        for pattern in [
            r"[a-fK-Z0-9_]",
            r"[^\s]",
            r"\w",
            r"(?i)[k]",
            r"[^a-z]",
            r"[\x00-\x7f]",
            r"\W",
        ] {
            for unicode in [false, true] {
                let hir = parse(pattern, unicode).unwrap();
                let HirKind::Class(class) = hir.kind() else {
                    panic!("{pattern} is not a class");
                };
                for b in 0..=u8::MAX {
                    let naive = match class {
                        Class::Bytes(c) => c
                            .ranges()
                            .iter()
                            .any(|r| (r.start()..=r.end()).contains(&b)),
                        Class::Unicode(c) => c
                            .ranges()
                            .iter()
                            .any(|r| (r.start()..=r.end()).contains(&char::from(b))),
                    };
                    assert_eq!(class_has(class, b), naive, "{pattern} {unicode} {b}");
                }
            }
        }
    }

    #[test]
    fn without_upper_case_it_finds_in_lowered_text_what_the_regex_finds_in_the_text() {
        let hay = b"The API_KEY = \"Qm9vW2hvLXB5c2Fq3kLx\"; Token: Ab3-xY9 and PASS=Hunter2Prod! \xc3\x84\xff";
        let lowered = hay.to_ascii_lowercase();
        for pattern in [
            r"(?i)(?P<key>pass|token|key)[a-z0-9_.-]{0,30}\s*[:=]\s*(?P<secret>[^\s]{4,})",
            r"(?i)\b(?:api|access)[_ ]?key\b",
            r"(?i)\w+",
        ] {
            let re = regex::bytes::RegexBuilder::new(pattern)
                .unicode(false)
                .build()
                .unwrap();
            let lower = without_upper_case(&parse(pattern, false).unwrap());
            let lowered_re = regex_automata::meta::Builder::new()
                .syntax(regex_automata::util::syntax::Config::new().utf8(false))
                .build_from_hir(&lower)
                .unwrap();
            let want: Vec<Vec<Option<(usize, usize)>>> = re
                .captures_iter(hay)
                .map(|c| c.iter().map(|g| g.map(|m| (m.start(), m.end()))).collect())
                .collect();
            let got: Vec<Vec<Option<(usize, usize)>>> = lowered_re
                .captures_iter(&lowered)
                .map(|c| c.iter().map(|g| g.map(|s| (s.start, s.end))).collect())
                .collect();
            assert!(!want.is_empty(), "{pattern}");
            assert_eq!(got, want, "{pattern}");
        }
    }
}
