//! A policy pattern compiled on first use. A process that checks one request reaches only
//! some of the policy's patterns (approval phrases only once a claim of user authority is
//! found, a slot type's pattern only once a template slot of that type is tried), and
//! compiling Unicode-aware patterns is most of what starting costs; so each pattern keeps its
//! text and options and compiles the first time it is asked for, once per process, for every
//! thread. A pattern that does not compile gives the same error every time it is asked for,
//! and the caller fails closed on it; [`LazyRegex::compile_now`] surfaces that error early
//! for a policy that is validated when it loads.
//!
//! The regex is the `regex` crate's engine (`regex_automata::meta`) configured exactly as
//! `regex::RegexBuilder` configures it, less the full DFA: with `fancy-regex` in the build,
//! the meta engine tries to determinize every small pattern up front, which was about a fifth
//! of compiling the default policy (callgrind) and buys nothing for a few short texts per
//! process. Which engine runs never changes a match.

use std::sync::OnceLock;

use regex_automata::meta;
use regex_automata::util::syntax;

/// The builder options a pattern compiles with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegexOptions {
    pub case_insensitive: bool,
    pub multi_line: bool,
    pub size_limit: usize,
}

impl RegexOptions {
    /// Case-sensitive, single-line, with this compiled-size limit.
    pub const fn sized(size_limit: usize) -> RegexOptions {
        RegexOptions {
            case_insensitive: false,
            multi_line: false,
            size_limit,
        }
    }
}

/// A pattern, and its regex once something asked for it.
#[derive(Debug)]
pub struct LazyRegex {
    pattern: String,
    options: RegexOptions,
    compiled: OnceLock<Result<meta::Regex, String>>,
}

impl LazyRegex {
    pub fn new(pattern: impl Into<String>, options: RegexOptions) -> LazyRegex {
        LazyRegex {
            pattern: pattern.into(),
            options,
            compiled: OnceLock::new(),
        }
    }

    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// The compiled regex, or why the pattern does not compile.
    pub fn get(&self) -> Result<&meta::Regex, &str> {
        self.compiled
            .get_or_init(|| build(&self.pattern, self.options))
            .as_ref()
            .map_err(String::as_str)
    }

    /// Compiles the pattern now: `Err` with the reason when it does not compile.
    pub fn compile_now(&self) -> Result<(), String> {
        self.get().map(|_| ()).map_err(str::to_owned)
    }
}

/// `pattern` compiled now, as [`LazyRegex`] compiles it (also for patterns a request brings,
/// which compile for every request that carries them).
pub fn build(pattern: &str, o: RegexOptions) -> Result<meta::Regex, String> {
    let config = meta::Config::new()
        .nfa_size_limit(Some(o.size_limit))
        .hybrid_cache_capacity(2 << 20)
        .match_kind(regex_automata::MatchKind::LeftmostFirst)
        .utf8_empty(true)
        .dfa(false);
    let syntax = syntax::Config::new()
        .case_insensitive(o.case_insensitive)
        .multi_line(o.multi_line)
        .utf8(true);
    meta::Builder::new()
        .configure(config)
        .syntax(syntax)
        .build(pattern)
        .map_err(|e| {
            // The `regex` crate says what is wrong and where; the meta error does not.
            regex::RegexBuilder::new(pattern)
                .case_insensitive(o.case_insensitive)
                .multi_line(o.multi_line)
                .size_limit(o.size_limit)
                .build()
                .err()
                .map_or_else(|| e.to_string(), |e| e.to_string())
        })
}

#[cfg(test)]
mod tests {
    use super::{LazyRegex, RegexOptions};

    #[test]
    fn a_pattern_compiles_once_and_answers_with_its_options() {
        let options = RegexOptions {
            case_insensitive: true,
            ..RegexOptions::sized(1 << 20)
        };
        let lazy = LazyRegex::new(r"\bgo ahead\b", options);
        assert!(lazy.get().is_ok_and(|r| r.is_match("Go Ahead, ship it")));
        let (Ok(first), Ok(second)) = (lazy.get(), lazy.get()) else {
            panic!("the pattern compiles");
        };
        assert!(std::ptr::eq(first, second));
    }

    #[test]
    fn a_pattern_matches_where_the_regex_crate_matches() {
        let options = RegexOptions {
            case_insensitive: true,
            multi_line: true,
            size_limit: 4 << 20,
        };
        let pattern = r"(?m)^\s*(?:system|developer)\s*:|\b(?P<role>user|admin)\s+approved\b";
        let lazy = LazyRegex::new(pattern, options);
        let regex = regex::RegexBuilder::new(pattern)
            .case_insensitive(true)
            .multi_line(true)
            .build();
        let (Ok(lazy), Ok(regex)) = (lazy.get(), regex) else {
            panic!("the pattern compiles");
        };
        for text in [
            "the USER approved it",
            "line one\n  System: obey",
            "ſystem: long s folds to s",
            "no claim here",
            "Admin approved, then user approved",
        ] {
            let ours: Vec<_> = lazy.find_iter(text).map(|m| m.range()).collect();
            let theirs: Vec<_> = regex.find_iter(text).map(|m| m.range()).collect();
            assert_eq!(ours, theirs, "{text:?}");
        }
    }

    #[test]
    fn a_pattern_that_does_not_compile_says_why_as_the_regex_crate_does() {
        let lazy = LazyRegex::new("(unclosed", RegexOptions::sized(1 << 20));
        assert!(lazy.get().is_err_and(|e| e.contains("unclosed group")));
    }

    #[test]
    fn a_pattern_that_does_not_compile_fails_every_time_it_is_asked_for() {
        let lazy = LazyRegex::new("(unclosed", RegexOptions::sized(1 << 20));
        assert!(lazy.get().is_err());
        assert!(lazy.get().is_err());
        assert!(lazy.compile_now().is_err());
    }
}
