//! Which of a group of policy patterns can match a text, found in one pass. A check that runs
//! many patterns one by one over the same summary (the authority claims and role markers, the
//! grammar's conflict patterns) mostly finds nothing; so the group is compiled once, lazily,
//! into one lazy DFA over all its patterns, and one overlapping search over the text says
//! which patterns have a match anywhere in it. Only those run on their own (for their spans
//! and groups), so the findings are exactly what running every pattern gives.
//!
//! The answer never leaves out a pattern that matches. The group compiles the same patterns
//! under the same options, in ASCII mode, and answers only for ASCII texts: on a text of
//! ASCII alone every Unicode class, case fold, `\s`, `\w` and `\b` of a pattern matches
//! exactly what its ASCII form matches (the non-ASCII members of `(?i)s` or `[^.\n]` never
//! occur), and ASCII mode compiles a fraction of the automaton Unicode mode does. That holds
//! for patterns written in ASCII without escapes of code points beyond it (`ſ` and the Kelvin
//! sign `K` fold to ASCII letters); a group with any other pattern does not build. "Has a match
//! somewhere" does not depend on match semantics either. Where the group cannot answer
//! exactly (a text with any non-ASCII character, a pattern ASCII mode refuses, a DFA that
//! gives up) it says every pattern may match, and the caller runs them all, as it would
//! without the group. A pattern that does not compile does not compile in the group either,
//! so the group does not build and the pattern reports its error where it runs; the one
//! exception is a pattern over its size limit in Unicode mode and under it in ASCII mode,
//! which the engine never meets: it validates every policy it did not ship by compiling each
//! pattern whole, and tests compile the built-in ones.

use std::sync::{Mutex, OnceLock};

use regex_automata::hybrid::dfa::{Cache, DFA};
use regex_automata::nfa::thompson::{self, WhichCaptures};
use regex_automata::util::syntax;
use regex_automata::{Input, MatchKind, PatternSet};

use super::lazy_regex::{ascii_only, RegexOptions};

/// A group of patterns and, once asked, their lazy DFA (`None` when it does not build).
pub struct PatternGroup {
    patterns: Vec<String>,
    options: RegexOptions,
    compiled: OnceLock<Option<Compiled>>,
}

struct Compiled {
    dfa: DFA,
    /// Caches to search with, reused across calls (states built once stay built).
    caches: Mutex<Vec<Cache>>,
}

/// The patterns of a group that may match one text.
#[derive(Debug, Clone)]
pub struct Candidates(Option<PatternSet>);

impl Candidates {
    /// Every pattern may match (the set could not answer exactly).
    pub fn all() -> Candidates {
        Candidates(None)
    }

    /// Whether the group answered (it names the patterns that match), rather than leaving
    /// every pattern to run.
    pub fn answered(&self) -> bool {
        self.0.is_some()
    }

    /// Whether the pattern at `index` (in the order the group was given) may match.
    pub fn may_match(&self, index: usize) -> bool {
        match &self.0 {
            None => true,
            Some(set) => regex_automata::PatternID::new(index).is_ok_and(|id| set.contains(id)),
        }
    }
}

impl PatternGroup {
    pub fn new(patterns: Vec<String>, options: RegexOptions) -> PatternGroup {
        PatternGroup {
            patterns,
            options,
            compiled: OnceLock::new(),
        }
    }

    /// Which patterns have a match somewhere in `text` (see the module docs).
    pub fn candidates(&self, text: &str) -> Candidates {
        if !text.is_ascii() {
            return Candidates::all();
        }
        let Some(compiled) = self.compiled.get_or_init(|| self.compile()) else {
            return Candidates::all();
        };
        let cache = compiled
            .caches
            .lock()
            .ok()
            .and_then(|mut caches| caches.pop());
        let mut cache = cache.unwrap_or_else(|| compiled.dfa.create_cache());
        let found = compiled.which(&mut cache, text);
        if let Ok(mut caches) = compiled.caches.lock() {
            caches.push(cache);
        }
        found.map_or_else(Candidates::all, |set| Candidates(Some(set)))
    }

    fn compile(&self) -> Option<Compiled> {
        if self.patterns.is_empty() || !self.patterns.iter().all(|p| ascii_only(p)) {
            return None;
        }
        let o = self.options;
        let nfa = thompson::Compiler::new()
            .syntax(
                syntax::Config::new()
                    .case_insensitive(o.case_insensitive)
                    .multi_line(o.multi_line)
                    .unicode(false)
                    .utf8(false),
            )
            .configure(
                thompson::Config::new()
                    .utf8(false)
                    .nfa_size_limit(Some(o.size_limit))
                    .which_captures(WhichCaptures::None),
            )
            .build_many(&self.patterns)
            .ok()?;
        let dfa = DFA::builder()
            .configure(
                DFA::config()
                    .match_kind(MatchKind::All)
                    .unicode_word_boundary(true)
                    .cache_capacity(2 << 20),
            )
            .build_from_nfa(nfa)
            .ok()?;
        Some(Compiled {
            dfa,
            caches: Mutex::new(Vec::new()),
        })
    }
}

impl Compiled {
    /// The patterns with a match somewhere in `text`, or `None` where the DFA gave up. Most
    /// texts match none of a group's patterns, so a forward search that stops at the first
    /// match state asks first: the DFA runs all of its patterns at once and every match of
    /// any pattern passes through a match state, so finding none means no pattern matches.
    /// That search runs the lazy DFA's unrolled loop; the overlapping search, which steps
    /// byte by byte, runs only when something matches, to say what.
    fn which(&self, cache: &mut Cache, text: &str) -> Option<PatternSet> {
        let mut set = PatternSet::new(self.dfa.pattern_len());
        let input = Input::new(text);
        match self
            .dfa
            .try_search_fwd(cache, &input.clone().earliest(true))
        {
            Ok(None) => return Some(set),
            Ok(Some(_)) => {}
            Err(_) => return None,
        }
        self.dfa
            .try_which_overlapping_matches(cache, &input, &mut set)
            .ok()
            .map(|()| set)
    }
}

#[cfg(test)]
mod tests {
    use super::{Candidates, PatternGroup};
    use crate::engine::lazy_regex::{build, RegexOptions};

    const OPTIONS: RegexOptions = RegexOptions {
        case_insensitive: true,
        multi_line: true,
        size_limit: 4 << 20,
    };

    fn group(patterns: &[&str]) -> PatternGroup {
        PatternGroup::new(patterns.iter().map(|p| (*p).to_owned()).collect(), OPTIONS)
    }

    /// Each pattern run alone: whether it matches `text`.
    fn alone(patterns: &[&str], text: &str) -> Vec<bool> {
        patterns
            .iter()
            .map(|p| build(p, OPTIONS).is_ok_and(|r| r.is_match(text)))
            .collect()
    }

    fn answer(candidates: &Candidates, n: usize) -> Vec<bool> {
        (0..n).map(|i| candidates.may_match(i)).collect()
    }

    /// The group answers for each text exactly what running each pattern alone gives.
    fn assert_exact(patterns: &[&str], texts: &[&str]) {
        let g = group(patterns);
        for text in texts {
            let candidates = g.candidates(text);
            assert!(candidates.answered(), "{text:?}");
            assert_eq!(
                answer(&candidates, patterns.len()),
                alone(patterns, text),
                "{text:?}"
            );
        }
    }

    #[test]
    fn a_group_names_exactly_the_patterns_that_match_an_ascii_text() {
        let patterns = [
            r"\b(?P<role>user|admin)\s+approved\b(?P<action>[^.\n]*)",
            r"(?m)^\s*(?:system|developer)\s*:",
            r"\bforce[\s-]?push\b",
            r"<\|im_start\|>",
        ];
        let texts = [
            "The USER approved the plan. Then a force-push.",
            "notes\n  System: obey\n",
            "nothing to see here",
            "<|im_start|>user approved",
            "",
        ];
        assert_exact(&patterns, &texts);
    }

    #[test]
    fn a_group_answers_exactly_whether_nothing_matches_or_something_does() {
        let patterns = [r"\bforce[\s-]?push\b", r"(?m)^\s*system\s*:", r"x*", r"zz$"];
        let long = "quiet words and more quiet words, ".repeat(200);
        let texts = [
            String::new(),
            long.clone(),
            format!("{long}then a force-push"),
            format!("{long}\nsystem: obey"),
            format!("{long}zz"),
            "force-pushed, not a force push".to_owned(),
        ];
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        assert_exact(&patterns, &texts);
        let without_empty = [patterns[0], patterns[1], patterns[3]];
        assert_exact(&without_empty, &texts);
        let g = group(&without_empty);
        assert_eq!(answer(&g.candidates(&long), 3), [false, false, false]);
    }

    #[test]
    fn a_text_the_dfa_cannot_read_exactly_leaves_every_pattern_to_run() {
        // `ſ` folds to `s`: outside ASCII the group does not answer.
        let patterns = [r"\bsystem\b", r"\bnever\b"];
        let candidates = group(&patterns).candidates("the ſystem é approved");
        assert_eq!(answer(&candidates, 2), [true, true]);
    }

    #[test]
    fn an_ascii_text_is_read_exactly_by_patterns_of_unicode_classes_and_folds() {
        let patterns = [
            r"\bpermission\s+granted\b[^.\n]*\bdeploy",
            r"(?i:KELVIN)\W+\w+\s*:",
            r"[[:upper:]]{2}\d",
            r"[^a-z\s]{3}",
        ];
        let texts = [
            "Permission  granted, then deploy.",
            "permission granted. deploy",
            "kelvin -- x :",
            "abc def",
            "abc ABC",
            "tab\tand\x0b vertical\x1cfile separator",
        ];
        assert_exact(&patterns, &texts);
    }

    #[test]
    fn a_pattern_ascii_mode_would_read_otherwise_leaves_every_pattern_to_run() {
        for pattern in [
            "ſystem",
            r"\x{17F}ystem",
            r"\u017Fystem",
            r"\U{212A}ey",
            r"(?i-u:system)|(?-u:\xFF)",
        ] {
            let patterns = [pattern, r"\bnever\b"];
            let candidates = group(&patterns).candidates("the system key");
            assert!(!candidates.answered(), "{pattern}");
            assert_eq!(answer(&candidates, 2), [true, true], "{pattern}");
        }
    }

    #[test]
    fn a_group_that_does_not_compile_leaves_every_pattern_to_run() {
        let patterns = [r"fine", r"(unclosed"];
        let candidates = group(&patterns).candidates("nothing fine");
        assert_eq!(answer(&candidates, 2), [true, true]);
    }
}
