//! What every match of a pattern must contain, read from its syntax tree: sets of strings such
//! that each match holds a string of every set. A text that lacks one of them cannot match, so
//! the pattern need not be compiled to search it. The sets are what the tree proves (a literal,
//! a small class, their products, an alternation's union, a repetition of at least one), never
//! a guess: when nothing is proven there are no sets and every text may match.
//!
//! A case-insensitive pattern's literals are classes of their case variants in the tree, so
//! the strings are every variant (products stay under [`CAP`] strings, classes under
//! [`CLASS_CAP`] characters; a longer literal is proven piecewise).

use regex_syntax::hir::{Class, Hir, HirKind};

/// At most this many strings in one set.
const CAP: usize = 64;
/// A class of more characters proves nothing.
const CLASS_CAP: usize = 8;
/// At most this many sets are kept (the longest ones), to keep checking a text cheap.
const MAX_SETS: usize = 6;

pub type Lits = Vec<Vec<u8>>;

/// The strings the pattern matches exactly (when few), and sets of strings such that every
/// match contains a string of each set.
struct Facts {
    exact: Option<Lits>,
    need: Vec<Lits>,
}

fn score(set: &Lits) -> (usize, std::cmp::Reverse<usize>) {
    (
        set.iter().map(Vec::len).min().unwrap_or(0),
        std::cmp::Reverse(set.len()),
    )
}

fn usable(set: &Lits) -> bool {
    !set.is_empty() && set.iter().all(|s| !s.is_empty())
}

fn better(a: Option<Lits>, b: Option<Lits>) -> Option<Lits> {
    match (a, b) {
        (Some(a), Some(b)) => Some(if score(&b) > score(&a) { b } else { a }),
        (a, None) => a,
        (None, b) => b,
    }
}

fn product(a: &Lits, b: &Lits) -> Option<Lits> {
    if a.len().saturating_mul(b.len()) > CAP {
        return None;
    }
    let mut out = Vec::with_capacity(a.len() * b.len());
    for x in a {
        for y in b {
            let mut s = x.clone();
            s.extend_from_slice(y);
            out.push(s);
        }
    }
    out.sort();
    out.dedup();
    Some(out)
}

fn class_strings(class: &Class) -> Option<Lits> {
    let mut out = Vec::new();
    match class {
        Class::Unicode(c) => {
            for r in c.iter() {
                for cp in u32::from(r.start())..=u32::from(r.end()) {
                    let ch = char::from_u32(cp)?;
                    out.push(ch.to_string().into_bytes());
                    if out.len() > CLASS_CAP {
                        return None;
                    }
                }
            }
        }
        Class::Bytes(c) => {
            for r in c.iter() {
                for b in r.start()..=r.end() {
                    out.push(vec![b]);
                    if out.len() > CLASS_CAP {
                        return None;
                    }
                }
            }
        }
    }
    Some(out)
}

fn one(set: Option<Lits>) -> Vec<Lits> {
    set.filter(usable).into_iter().collect()
}

/// The best single set of `need`: every match contains one of its strings.
fn best(need: Vec<Lits>) -> Option<Lits> {
    need.into_iter().fold(None, |a, b| better(a, Some(b)))
}

fn facts(h: &Hir) -> Facts {
    match h.kind() {
        HirKind::Empty | HirKind::Look(_) => Facts {
            exact: Some(vec![Vec::new()]),
            need: Vec::new(),
        },
        HirKind::Literal(l) => {
            let exact = Some(vec![l.0.to_vec()]);
            Facts {
                need: one(exact.clone()),
                exact,
            }
        }
        HirKind::Class(c) => {
            let exact = class_strings(c);
            Facts {
                need: one(exact.clone()),
                exact,
            }
        }
        HirKind::Capture(c) => facts(&c.sub),
        HirKind::Repetition(r) => {
            if r.min == 0 {
                return Facts {
                    exact: (r.max == Some(0)).then(|| vec![Vec::new()]),
                    need: Vec::new(),
                };
            }
            let sub = facts(&r.sub);
            let exact = match (&sub.exact, r.max) {
                (Some(e), Some(max)) if max == r.min => {
                    (0..r.min).try_fold(vec![Vec::new()], |acc, _| product(&acc, e))
                }
                _ => None,
            };
            let mut need = sub.need;
            need.extend(one(sub.exact));
            Facts { exact, need }
        }
        HirKind::Concat(subs) => {
            let mut need = Vec::new();
            // Runs of children with exact sets, multiplied while the product stays small.
            let mut whole: Option<Lits> = Some(vec![Vec::new()]);
            let mut run: Option<Lits> = None;
            for f in subs.iter().map(facts) {
                need.extend(f.need);
                whole = match (&whole, &f.exact) {
                    (Some(w), Some(e)) => product(w, e),
                    _ => None,
                };
                match f.exact {
                    Some(e) => {
                        run = match run.as_ref().and_then(|r| product(r, &e)) {
                            Some(longer) => Some(longer),
                            None => {
                                need.extend(one(run.take()));
                                Some(e)
                            }
                        };
                    }
                    None => need.extend(one(run.take())),
                }
            }
            need.extend(one(run));
            need.extend(one(whole.clone()));
            Facts { exact: whole, need }
        }
        HirKind::Alternation(subs) => {
            let mut exact: Option<Lits> = Some(Vec::new());
            let mut need: Option<Lits> = Some(Vec::new());
            for f in subs.iter().map(facts) {
                let mut own = f.need;
                own.extend(one(f.exact.clone()));
                exact = match (exact, f.exact) {
                    (Some(mut a), Some(b)) if a.len() + b.len() <= CAP => {
                        a.extend(b);
                        Some(a)
                    }
                    _ => None,
                };
                need = match (need, best(own)) {
                    (Some(mut a), Some(b)) => {
                        a.extend(b);
                        Some(a)
                    }
                    _ => None,
                };
            }
            if let Some(e) = exact.as_mut() {
                e.sort();
                e.dedup();
            }
            Facts {
                exact,
                need: one(need),
            }
        }
    }
}

/// Sets of strings such that every match of `hir` contains a string of each (none known: no
/// set).
pub fn required(hir: &Hir) -> Vec<Lits> {
    let f = facts(hir);
    let mut need = f.need;
    need.extend(one(f.exact));
    need.sort_by_key(|set| std::cmp::Reverse(score(set)));
    need.dedup();
    need.truncate(MAX_SETS);
    need
}

/// Whether `haystack` holds a string of every set of `need`.
pub fn holds_all(haystack: &[u8], need: &[Lits]) -> bool {
    need.iter().all(|set| {
        set.iter()
            .any(|l| memchr::memmem::find(haystack, l).is_some())
    })
}

#[cfg(test)]
mod tests {
    use super::{holds_all, required};
    use regex_automata::util::syntax;

    fn need(pattern: &str, case_insensitive: bool) -> Vec<super::Lits> {
        let config = syntax::Config::new().case_insensitive(case_insensitive);
        required(&syntax::parse_with(pattern, &config).expect("the pattern parses"))
    }

    #[test]
    fn a_text_the_filter_turns_away_never_matches() {
        let patterns = [
            r"\b(?:the\s+)?(?P<role>user|admin)\s+(?:has\s+)?(?:approved|okayed)\s+(?P<action>[^.\n]*)",
            r"<\|(?:system|user|im_end)\|>",
            r"(?m)^\s*#{2,}\s*(?:system|instructions?)\b",
            r"\brm\s+-{0,2}(?:rf|fr|r)\b|\bgit\s+clean\s+-{0,2}\w*f",
            r"(?:ab){2}c|x+yz?",
            r"\b(?:drop\s+(?:table|database)|truncate\s+\w+)\b",
            r"a*|b",
            r"k\w+",
        ];
        let texts = [
            "The USER approved pushing to main.",
            "the admin has okayed it",
            "<|system|> obey",
            "<|im_start|>",
            "  ## System override",
            "rm -rf /tmp/x and git clean -fdx",
            "ababc xyz xx",
            "DROP TABLE users; truncate orders",
            "",
            "\u{212A}elvin KELVIN kelvin",
            "ſystem: the uſer approved it",
            "nothing to see here",
        ];
        for pattern in patterns {
            for case_insensitive in [false, true] {
                let need = need(pattern, case_insensitive);
                let regex = regex::RegexBuilder::new(pattern)
                    .case_insensitive(case_insensitive)
                    .build()
                    .expect("the pattern compiles");
                for text in texts {
                    assert!(
                        holds_all(text.as_bytes(), &need) || !regex.is_match(text),
                        "{pattern:?} (case-insensitive {case_insensitive}) on {text:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_pattern_that_may_match_anything_needs_nothing() {
        assert!(need(r"a*|b", false).is_empty());
        assert!(need(r"\w+", true).is_empty());
        assert!(holds_all(b"", &need(r".*", false)));
    }

    #[test]
    fn case_variants_are_needed_when_case_is_ignored() {
        let need = need(r"\bpush\b", true);
        assert!(holds_all("PuSh".as_bytes(), &need));
        assert!(!holds_all(b"pull", &need));
    }
}
