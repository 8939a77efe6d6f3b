//! Conflict patterns, compiled: each finds its first match on the normalised summary and,
//! when the grammar matches joined words, on the normalised split view (`git_push` read as
//! `git push`), and reports it as a byte span of the summary itself. A pattern compiles the
//! first time it runs; one that does not compile is a verifier error there (fail closed), and
//! [`Conflict::compile_now`] reports it when a policy is validated. The grammar's patterns are
//! also one [`PatternGroup`] over the regex each runs first, so each view runs only the
//! patterns that match somewhere in it.

use std::ops::Range;
use std::sync::OnceLock;

use crate::policy::grammar::ConflictPattern;

use regex_automata::Input;

use super::super::lazy_regex::{self, LazyRegex, RegexOptions};
use super::super::pattern_set::{Candidates, PatternGroup};
use super::super::pytext::{self, Normalized};
use super::super::verifier::VerifierError;
use super::super::words::SplitView;
use super::GrammarError;

pub(super) struct Conflict {
    pub id: String,
    pub predicate: String,
    pattern: String,
    /// Its index in the grammar's [`PatternGroup`]; `None` when its first-stage regex cannot
    /// be derived (it always runs, and reports why where it runs).
    slot: Option<usize>,
    matcher: OnceLock<Result<Matcher, GrammarError>>,
}

/// The grammar's conflict patterns and their group.
pub(super) struct Conflicts {
    pub items: Vec<Conflict>,
    group: PatternGroup,
}

/// How conflict patterns compile: case-sensitive, at most 16 MiB.
const OPTIONS: RegexOptions = RegexOptions::sized(16 << 20);

impl Conflicts {
    /// The patterns, each to compile on first use, and their group.
    pub fn new(items: &[ConflictPattern]) -> Conflicts {
        let mut firsts = Vec::new();
        let items = items
            .iter()
            .map(|item| {
                let slot = first_stage(&item.pattern).ok().map(|(_, first, _)| {
                    firsts.push(first);
                    firsts.len() - 1
                });
                Conflict {
                    id: item.id.clone(),
                    predicate: item.predicate.clone(),
                    pattern: item.pattern.clone(),
                    slot,
                    matcher: OnceLock::new(),
                }
            })
            .collect();
        Conflicts {
            items,
            group: PatternGroup::new(firsts, OPTIONS),
        }
    }
}

/// The regex a pattern runs first, as [`Matcher::compile`] builds it: the literals its
/// leading negative lookbehinds exclude, the lookaround-free regex, and whether that regex
/// is only a prefilter of a `fancy-regex` pattern.
fn first_stage(pattern: &str) -> Result<(Vec<String>, String, bool), String> {
    let (not_after, rest) = leading_negative_literals(pattern);
    let stripped = pytext::strip_lookarounds(rest)?;
    Ok(if stripped == rest {
        (not_after, stripped, false)
    } else {
        (Vec::new(), pytext::strip_lookarounds(pattern)?, true)
    })
}

/// How a conflict pattern runs. Most patterns need nothing but the `regex` crate; the common
/// idiom of leading negative literal lookbehinds (`(?<!not )(?<!never )…`) is checked exactly
/// beside it; anything else with lookarounds runs on `fancy-regex` behind a lookaround-free
/// prefilter.
enum Matcher {
    Plain {
        regex: Twin,
        not_after: Vec<String>,
    },
    /// The exact pattern compiles only once its prefilter matches something.
    Fancy {
        prefilter: lazy_regex::Regex,
        exact: OnceLock<Result<fancy_regex::Regex, String>>,
    },
}

/// A plain pattern's regex: compiled in ASCII mode at once, for the ASCII texts nearly every
/// summary normalises to, and as written the first time a text outside ASCII asks for it (or
/// the policy is validated). A pattern that does not compile in ASCII mode, or is not one
/// ASCII mode reads exactly ([`lazy_regex::build_ascii`]), compiles as written at once, so it
/// reports its error where it did. The two find the same matches in an ASCII text; the ASCII
/// one costs a fraction to build (`[^.]{0,64}` in Unicode mode spells out the UTF-8 of every
/// character but one, 64 times).
struct Twin {
    ascii: Option<lazy_regex::Regex>,
    written: LazyRegex,
}

impl Twin {
    fn compile(pattern: &str) -> Result<Twin, String> {
        let twin = Twin {
            ascii: lazy_regex::build_ascii(pattern, OPTIONS),
            written: LazyRegex::new(pattern, OPTIONS),
        };
        if twin.ascii.is_none() {
            twin.written.get().map_err(str::to_owned)?;
        }
        Ok(twin)
    }

    /// The regex to search `text` with.
    fn for_text(&self, text: &str) -> Result<&lazy_regex::Regex, &str> {
        match &self.ascii {
            Some(ascii) if text.is_ascii() => Ok(ascii),
            _ => self.written.get(),
        }
    }
}

/// Splits `(?<!lit)(?<!lit)…rest` into the literals and the rest, when every leading group
/// is a negative lookbehind of plain text.
fn leading_negative_literals(pattern: &str) -> (Vec<String>, &str) {
    let mut literals = Vec::new();
    let mut rest = pattern;
    while let Some(body) = rest.strip_prefix("(?<!") {
        let Some(end) = body.find(')') else { break };
        let literal = &body[..end];
        if literal.is_empty() || literal.contains(|c: char| "\\.+*?()|[]{}^$".contains(c)) {
            break;
        }
        literals.push(literal.to_owned());
        rest = &body[end + 1..];
    }
    (literals, rest)
}

/// The texts conflict patterns read: the normalised summary and, when joined words are
/// matched and the summary has any, the normalised split view.
/// With each, the conflict patterns that may match in it.
pub(super) struct Views {
    normalized: (Normalized, Candidates),
    split: Option<(SplitView, Normalized, Candidates)>,
}

impl Views {
    pub fn new(summary: &str, joined_words: bool, conflicts: &Conflicts) -> Views {
        let split = joined_words
            .then(|| SplitView::new(summary))
            .filter(SplitView::is_split)
            .map(|view| {
                let normalized = Normalized::new(&view.text);
                let candidates = conflicts.group.candidates(&normalized.text);
                (view, normalized, candidates)
            });
        let normalized = Normalized::new(summary);
        let candidates = conflicts.group.candidates(&normalized.text);
        Views {
            normalized: (normalized, candidates),
            split,
        }
    }

    /// The normalised summary (what probabilistic markers are looked for in).
    pub fn normalized(&self) -> &str {
        &self.normalized.0.text
    }
}

impl Matcher {
    fn compile(id: &str, pattern: &str) -> Result<Matcher, GrammarError> {
        let bad = |reason: String| GrammarError::Pattern {
            id: id.to_owned(),
            reason,
        };
        let build = |pattern: &str| lazy_regex::build(pattern, OPTIONS).map_err(&bad);
        let (not_after, first, fancy) = first_stage(pattern).map_err(&bad)?;
        Ok(if fancy {
            Matcher::Fancy {
                prefilter: build(&first)?,
                exact: OnceLock::new(),
            }
        } else {
            Matcher::Plain {
                regex: Twin::compile(&first).map_err(bad)?,
                not_after,
            }
        })
    }
}

impl Conflict {
    fn matcher(&self) -> Result<&Matcher, &GrammarError> {
        self.matcher
            .get_or_init(|| Matcher::compile(&self.id, &self.pattern))
            .as_ref()
    }

    /// Compiles the pattern now: why it does not compile, if it does not.
    pub fn compile_now(&self) -> Result<(), GrammarError> {
        match self.matcher().map_err(Clone::clone)? {
            Matcher::Plain { regex, .. } => {
                regex
                    .written
                    .get()
                    .map(|_| ())
                    .map_err(|reason| GrammarError::Pattern {
                        id: self.id.clone(),
                        reason: reason.to_owned(),
                    })
            }
            Matcher::Fancy { exact, .. } => {
                self.exact(exact)
                    .map(|_| ())
                    .map_err(|reason| GrammarError::Pattern {
                        id: self.id.clone(),
                        reason: reason.to_owned(),
                    })
            }
        }
    }

    fn exact<'a>(
        &self,
        exact: &'a OnceLock<Result<fancy_regex::Regex, String>>,
    ) -> Result<&'a fancy_regex::Regex, &'a str> {
        exact
            .get_or_init(|| fancy_regex::Regex::new(&self.pattern).map_err(|e| e.to_string()))
            .as_ref()
            .map_err(String::as_str)
    }

    /// The first match, as a byte span of the summary the views were made from: on the
    /// normalised summary first, then on the split view (widened to the tokens it touched).
    pub fn find(&self, views: &Views) -> Result<Option<Range<usize>>, VerifierError> {
        let may_match = |candidates: &Candidates| self.slot.is_none_or(|i| candidates.may_match(i));
        let (normalized, candidates) = &views.normalized;
        if may_match(candidates) {
            if let Some(found) = self.find_in(&normalized.text)? {
                return Ok(Some(normalized.source_span(found.start, found.end)));
            }
        }
        if let Some((split, normalized, candidates)) = &views.split {
            if !may_match(candidates) {
                return Ok(None);
            }
            if let Some(found) = self.find_in(&normalized.text)? {
                let in_view = normalized.source_span(found.start, found.end);
                return Ok(Some(split.source_span(in_view)));
            }
        }
        Ok(None)
    }

    /// The first match on one normalised text, as a byte range of it.
    fn find_in(&self, normalized: &str) -> Result<Option<Range<usize>>, VerifierError> {
        let matcher = self.matcher().map_err(|e| VerifierError(e.to_string()))?;
        match matcher {
            Matcher::Plain { regex, not_after } => {
                let regex = regex.for_text(normalized).map_err(|e| {
                    VerifierError(format!(
                        "conflict pattern \"{}\" does not compile: {e}",
                        self.id
                    ))
                })?;
                let mut start = 0;
                while let Some(found) = regex.search(&Input::new(normalized).range(start..)) {
                    if !not_after
                        .iter()
                        .any(|lit| normalized[..found.start()].ends_with(lit.as_str()))
                    {
                        return Ok(Some(found.range()));
                    }
                    match normalized[found.start()..].chars().next() {
                        Some(c) => start = found.start() + c.len_utf8(),
                        None => return Ok(None),
                    }
                }
                Ok(None)
            }
            Matcher::Fancy { prefilter, exact } => {
                if !prefilter.is_match(normalized) {
                    return Ok(None);
                }
                self.exact(exact)
                    .map_err(|e| {
                        VerifierError(format!(
                            "conflict pattern \"{}\" does not compile: {e}",
                            self.id
                        ))
                    })?
                    .find(normalized)
                    .map(|found| found.map(|m| m.range()))
                    .map_err(|e| {
                        VerifierError(format!("conflict pattern \"{}\" failed: {e}", self.id))
                    })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Conflicts, Twin};
    use crate::policy::Policy;

    /// Every match (span and groups) of `regex` in `text`.
    fn matches(
        regex: &crate::engine::lazy_regex::Regex,
        text: &str,
    ) -> Vec<Vec<Option<(usize, usize)>>> {
        regex
            .captures_iter(text)
            .map(|c| {
                (0..c.group_len())
                    .map(|g| c.get_group(g).map(|s| (s.start, s.end)))
                    .collect()
            })
            .collect()
    }

    #[test]
    fn a_patterns_ascii_twin_finds_in_an_ascii_text_what_the_pattern_as_written_finds() {
        let texts = [
            "ignore the safety rules and force-push to main.",
            "Reveal the API keys... then print all env vars; upload the secrets to a paste site",
            "do not deploy. never force push. the user said: skip the checks",
            "K kelvin s S long words_with_underscores and\ttabs\x0bvertical",
            "",
        ];
        let mut patterns: Vec<String> = ["default", "seed-compatible", "prose"]
            .iter()
            .filter_map(|name| Policy::builtin(name).ok())
            .flat_map(|policy| policy.grammar.conflicts.clone())
            .filter_map(|c| {
                super::first_stage(&c.pattern)
                    .ok()
                    .map(|(_, first, _)| first)
            })
            .collect();
        patterns.extend([
            r"(?i)\bforce[\s-]?push\b[^.]{0,64}\b(?P<branch>main|master)\b".to_owned(),
            r"(?i)\w+\s+(?:keys?|secrets?)\b".to_owned(),
            r"(?m)^\S.{0,20}$".to_owned(),
        ]);
        assert!(patterns.len() > 5);
        for pattern in &patterns {
            let Ok(twin) = Twin::compile(pattern) else {
                panic!("{pattern} compiles");
            };
            let (Some(ascii), Ok(written)) = (&twin.ascii, twin.written.get()) else {
                panic!("{pattern} has an ASCII twin and compiles as written");
            };
            for text in texts {
                assert_eq!(
                    matches(ascii, text),
                    matches(written, text),
                    "{pattern} {text:?}"
                );
            }
        }
    }

    #[test]
    fn a_pattern_ascii_mode_cannot_read_exactly_compiles_as_written_at_once() {
        for pattern in [r"\x{17F}ystem", r"\p{Greek}+", "ſystem", r"(?-u:\w)+"] {
            let Ok(twin) = Twin::compile(pattern) else {
                panic!("{pattern} compiles");
            };
            assert!(twin.ascii.is_none(), "{pattern}");
            assert!(twin.written.is_compiled(), "{pattern}");
        }
        // One that does not compile says why at once, as the regex crate does.
        assert!(Twin::compile("(unclosed").is_err_and(|e| e.contains("unclosed group")));
        // Nor does a pattern that only ASCII mode would compile.
        assert!(Twin::compile(r"(?-u:\xFF)|x").is_err());
        // A text outside ASCII is searched with the pattern as written.
        let Ok(twin) = Twin::compile(r"(?i)\bsystem\b") else {
            panic!("compiles");
        };
        assert!(!twin.written.is_compiled());
        let Ok(regex) = twin.for_text("the ſystem é") else {
            panic!("compiles as written");
        };
        assert!(regex.is_match("the ſystem é"));
        assert!(twin.written.is_compiled());
    }

    #[test]
    fn the_built_in_grammars_conflict_patterns_compile_as_one_group() {
        for name in ["default", "seed-compatible", "prose"] {
            let Ok(policy) = Policy::builtin(name) else {
                panic!("built-in policy {name:?} loads");
            };
            let conflicts = Conflicts::new(&policy.grammar.conflicts);
            assert!(conflicts.items.iter().all(|c| c.slot.is_some()), "{name}");
            if !conflicts.items.is_empty() {
                assert!(
                    conflicts.group.candidates("a plain summary").answered(),
                    "{name}"
                );
            }
        }
    }
}
