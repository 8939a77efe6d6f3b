//! A rule's regex, first on the engines that are cheap to build. Most processes run a rule on
//! a few short windows (the gate's fields), where building the literal prefilter, the lazy DFA
//! and its reverse NFA costs more than every search it would speed up; so a rule's regex starts
//! on the NFA engines alone (PikeVM, bounded backtracker) and builds the fast ones once it has
//! searched [`WARM_BYTES`](crate::engine::lazy_regex::WARM_BYTES), using them from then on.
//! Both are the regex the `regex` crate's `bytes::RegexBuilder` builds, with the same syntax and
//! match semantics, so which one answers never changes a match (each is built as that builder
//! builds it, less the one-pass DFA: captures are as fast on the bounded backtracker in a
//! rule's short windows, and building it cost a `cq scan` of the 10 MiB bench corpus 14 M
//! instructions of its 1,566 M, and a `cq check` of the demo request 3.4 M of its 82.8 M, most
//! of it for the regexes built without upper-case letters, see `case`). A pattern that does not
//! compile reports what the `regex` crate says of it.

use std::borrow::Cow;

use regex_automata::util::syntax;
use regex_automata::{meta, MatchKind, PatternID};

use super::case;
use crate::engine::lazy_regex::Warming;
#[cfg(test)]
use crate::engine::lazy_regex::WARM_BYTES;

/// A rule's compiled regex (see the module docs); it answers as `regex::bytes::Regex` does.
#[derive(Debug, Clone)]
pub(in crate::scan) struct RuleRegex {
    pattern: String,
    unicode: bool,
    size_limit: usize,
    /// Built without the ASCII upper-case letters, for lower-cased text (see `case`).
    lowered: bool,
    warm: Warming,
}

impl RuleRegex {
    /// Compiles `pattern` on the NFA engines; the error is the `regex` crate's.
    #[cfg(test)]
    pub fn new(pattern: &str, unicode: bool, size_limit: usize) -> Result<RuleRegex, String> {
        RuleRegex::parsed(pattern, unicode, size_limit, false, false).map(|(regex, _)| regex)
    }

    /// Compiles `pattern` on the NFA engines, or in a bulk scan (`bulk`) on the fast ones from
    /// the same parse (the NFA engines are then never needed: they answer only until the fast
    /// ones are built, or should those not build), and gives the syntax tree it was built from
    /// (for what else a rule reads of its pattern, without parsing it again); the error is the
    /// `regex` crate's. With `may_lower`, a pattern that [`case::ignores_case`] is built without
    /// the ASCII upper-case letters, to search lower-cased text ([`RuleRegex::lowered`]).
    pub fn parsed(
        pattern: &str,
        unicode: bool,
        size_limit: usize,
        bulk: bool,
        may_lower: bool,
    ) -> Result<(RuleRegex, regex_syntax::hir::Hir), String> {
        let explained = |e: String| explain(pattern, unicode, size_limit, e);
        let hir = parse(pattern, unicode).map_err(explained)?;
        let lowered = may_lower && case::ignores_case(&hir);
        let built = if lowered {
            Cow::Owned(case::without_upper_case(&hir))
        } else {
            Cow::Borrowed(&hir)
        };
        let fast = bulk
            .then(|| {
                meta::Builder::new()
                    .configure(config(size_limit, true))
                    .build_from_hir(&built)
                    .ok()
            })
            .flatten();
        let regex = |warm| RuleRegex {
            pattern: pattern.to_owned(),
            unicode,
            size_limit,
            lowered,
            warm,
        };
        if let Some(fast) = fast {
            return Ok((regex(Warming::warm(fast)), hir));
        }
        let cheap = meta::Builder::new()
            .configure(config(size_limit, false))
            .build_from_hir(&built)
            .map_err(|e| explained(e.to_string()))?;
        Ok((regex(Warming::new(cheap)), hir))
    }

    /// Whether the regex searches lower-cased text.
    pub fn lowered(&self) -> bool {
        self.lowered
    }

    /// Whether the fast engines were built (or tried).
    #[cfg(test)]
    pub fn is_warm(&self) -> bool {
        self.warm.is_warm()
    }

    /// Builds the fast engines now: why they do not build, if they do not.
    pub fn compile_fast(&self) -> Result<(), String> {
        self.fast()
            .map(|_| ())
            .map_err(|e| explain(&self.pattern, self.unicode, self.size_limit, e.clone()))
    }

    fn build_fast(&self) -> Result<meta::Regex, String> {
        if !self.lowered {
            return build(&self.pattern, self.unicode, self.size_limit, true);
        }
        let hir = parse(&self.pattern, self.unicode)?;
        meta::Builder::new()
            .configure(config(self.size_limit, true))
            .build_from_hir(&case::without_upper_case(&hir))
            .map_err(|e| e.to_string())
    }

    fn fast(&self) -> Result<&meta::Regex, &String> {
        self.warm.fast(|| self.build_fast())
    }

    /// The engine to search `len` more bytes with ([`Warming::engine`]); in a bulk scan
    /// (`bulk`), the fast engines from the first search.
    pub fn engine(&self, len: usize, bulk: bool) -> &meta::Regex {
        self.warm.engine(len, bulk, || self.build_fast())
    }

    pub fn is_match(&self, hay: &[u8], bulk: bool) -> bool {
        self.engine(hay.len(), bulk).is_match(hay)
    }

    /// The number of groups, the whole match's included.
    pub fn captures_len(&self) -> usize {
        self.warm.cheap().captures_len()
    }

    /// Each group's name, the whole match's (`None`) first.
    pub fn capture_names(&self) -> impl Iterator<Item = Option<&str>> {
        self.warm
            .cheap()
            .group_info()
            .pattern_names(PatternID::ZERO)
    }
}

/// `pattern` on the meta engine as `regex::bytes::RegexBuilder` configures it (`fast`), or the
/// same without the literal prefilter, the lazy and full DFAs (`!fast`).
fn build(
    pattern: &str,
    unicode: bool,
    size_limit: usize,
    fast: bool,
) -> Result<meta::Regex, String> {
    meta::Builder::new()
        .configure(config(size_limit, fast))
        .syntax(syntax_config(unicode))
        .build(pattern)
        .map_err(|e| e.to_string())
}

/// A rule's syntax: bytes, Unicode as the rule says.
fn syntax_config(unicode: bool) -> syntax::Config {
    syntax::Config::new().unicode(unicode).utf8(false)
}

/// `pattern` parsed as a rule's regex parses it.
pub(in crate::scan) fn parse(
    pattern: &str,
    unicode: bool,
) -> Result<regex_syntax::hir::Hir, String> {
    syntax::parse_with(pattern, &syntax_config(unicode)).map_err(|e| e.to_string())
}

/// The meta engine's options as `regex::bytes::RegexBuilder` sets them less the one-pass DFA
/// (`fast`), and also without the literal prefilter, the lazy and full DFAs (`!fast`).
fn config(size_limit: usize, fast: bool) -> meta::Config {
    meta::Config::new()
        .nfa_size_limit(Some(size_limit))
        .hybrid_cache_capacity(size_limit)
        .match_kind(MatchKind::LeftmostFirst)
        .utf8_empty(false)
        .onepass(false)
        .auto_prefilter(fast)
        .hybrid(fast)
        .dfa(fast)
}

/// Why `pattern` does not compile, as the `regex` crate says it (what is wrong and where), or
/// `meta_error` when the `regex` crate compiles it.
fn explain(pattern: &str, unicode: bool, size_limit: usize, meta_error: String) -> String {
    regex::bytes::RegexBuilder::new(pattern)
        .unicode(unicode)
        .size_limit(size_limit)
        .dfa_size_limit(size_limit)
        .build()
        .err()
        .map_or(meta_error, |e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_engines_find_what_the_regex_crate_finds() {
        let patterns = [
            r"(?i)\b(?:api[_-]?key)\W{0,3}(?P<secret>[A-Za-z0-9]{16,40})\b",
            r"(?:^|[^0-9A-Za-z])(\d{3}-\d{2}-\d{4})(?:[^0-9]|$)",
            r"\bghp_[A-Za-z0-9]{36}\b",
            r"x*",
        ];
        let hay: &[u8] =
            b"apiKey: Ab3dEf6hIj9kLm2nOp5q, ssn 123-45-6789; ghp_abcdefghijklmnopqrstuvwxyz0123456789 \xff";
        for p in patterns {
            let expected = regex::bytes::RegexBuilder::new(p)
                .unicode(false)
                .build()
                .unwrap();
            let want: Vec<_> = expected.find_iter(hay).map(|m| m.range()).collect();
            let rule = RuleRegex::new(p, false, 1 << 20).unwrap();
            let (parsed, _) = RuleRegex::parsed(p, false, 1 << 20, false, false).unwrap();
            let (bulk, _) = RuleRegex::parsed(p, false, 1 << 20, true, false).unwrap();
            assert!(bulk.warm.is_warm());
            for engine in [
                rule.warm.cheap(),
                rule.fast().unwrap(),
                parsed.warm.cheap(),
                bulk.warm.cheap(),
                bulk.fast().unwrap(),
            ] {
                let got: Vec<_> = engine.find_iter(hay).map(|m| m.range()).collect();
                assert_eq!(got, want, "{p}");
            }
            assert_eq!(rule.captures_len(), expected.captures_len());
            assert_eq!(parsed.captures_len(), expected.captures_len());
            assert!(parsed.capture_names().eq(expected.capture_names()));
            assert_eq!(bulk.captures_len(), expected.captures_len());
            assert!(bulk.capture_names().eq(expected.capture_names()));
            assert!(rule.capture_names().eq(expected.capture_names()));
        }
    }

    #[test]
    fn the_fast_engines_are_built_once_enough_was_searched() {
        let rule = RuleRegex::new(r"\bkey\b", false, 1 << 20).unwrap();
        assert!(rule.is_match(b"the key", false));
        assert!(!rule.warm.is_warm());
        assert!(!rule.is_match(&[b'a'; WARM_BYTES], false));
        assert!(rule.warm.is_warm());
        rule.compile_fast().unwrap();
    }

    #[test]
    fn in_a_bulk_scan_the_fast_engines_answer_the_first_search() {
        let rule = RuleRegex::new(r"\bkey\b", false, 1 << 20).unwrap();
        assert!(rule.is_match(b"the key", true));
        assert!(rule.warm.is_warm());
    }

    #[test]
    fn a_broken_pattern_says_what_the_regex_crate_says() {
        let broken = String::from("(unclosed");
        let err = RuleRegex::new(&broken, false, 1 << 20).unwrap_err();
        let expected = regex::bytes::Regex::new(&broken).unwrap_err().to_string();
        assert_eq!(err, expected);
    }
}
