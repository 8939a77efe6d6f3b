//! Regex sets over rule patterns: the digit-rule tiers and the whole-field rules each ask one
//! set which of its rules can match in a window or a field, then run only those.
//!
//! A digit tier asks its set of many short windows at once ([`WindowSet::matching_all`]): the
//! set's lazy DFA walks [`LANES`] windows side by side, one byte of each in turn, so the
//! processor overlaps their chains of state lookups (each step of one walk waits on the last),
//! where asking the `regex` crate's set of one window after another would wait on every step.
//! The answer for a window is the set's own (`RegexSet::matches`): every pattern with a match
//! anywhere in it.

mod lanes;

use std::sync::OnceLock;

use regex::bytes::{RegexSet, RegexSetBuilder};
use regex_automata::hybrid::dfa::{Cache, DFA};
use regex_automata::nfa::thompson::{self, WhichCaptures};
use regex_automata::util::pool::Pool;
use regex_automata::util::syntax;
use regex_automata::MatchKind;

use super::rule::REGEX_SIZE_LIMIT;

/// A set over `patterns` with ASCII semantics (the rules that opt into Unicode run on their
/// own) and room for the patterns of a whole tier.
pub(super) fn build<'a>(patterns: impl IntoIterator<Item = &'a str>) -> Result<RegexSet, String> {
    RegexSetBuilder::new(patterns)
        .unicode(false)
        .size_limit(SET_SIZE_LIMIT)
        .dfa_size_limit(SET_SIZE_LIMIT)
        .build()
        .map_err(|e| e.to_string())
}

/// The compiled size, and the lazy DFA's cache, a set may take.
const SET_SIZE_LIMIT: usize = REGEX_SIZE_LIMIT * 4;

type CacheFn =
    Box<dyn Fn() -> Cache + Send + Sync + std::panic::UnwindSafe + std::panic::RefUnwindSafe>;

/// A regex set asked of many windows at once (see the module docs).
#[derive(Debug)]
pub(super) struct WindowSet {
    patterns: Vec<String>,
    /// The set's lazy DFA (every pattern, all their matches) and a cache per thread.
    dfa: DFA,
    caches: Pool<Cache, CacheFn>,
    /// The `regex` crate's set over the same patterns, for the windows the lazy DFA gives up
    /// on (a cache cleared too often, a byte it will not read): built when first needed.
    set: OnceLock<Result<RegexSet, String>>,
}

impl WindowSet {
    /// The set over `patterns` (as [`build`] builds it); the error is the `regex` crate's.
    pub fn new(patterns: Vec<String>) -> Result<WindowSet, String> {
        WindowSet::with_cache(patterns, SET_SIZE_LIMIT, false)
    }

    /// [`WindowSet::new`] with a lazy-DFA cache of `capacity` bytes, which gives up after three
    /// clears when it has served fewer than ten bytes per state it computed (as the `regex`
    /// crate's does), or, `patient`, never by itself.
    fn with_cache(
        patterns: Vec<String>,
        capacity: usize,
        patient: bool,
    ) -> Result<WindowSet, String> {
        let (clears, bytes_per_state) = if patient {
            (None, None)
        } else {
            (Some(3), Some(10))
        };
        let dfa = DFA::builder()
            .configure(
                DFA::config()
                    .match_kind(MatchKind::All)
                    .cache_capacity(capacity)
                    .minimum_cache_clear_count(clears)
                    .minimum_bytes_per_state(bytes_per_state),
            )
            .syntax(syntax::Config::new().unicode(false).utf8(false))
            .thompson(
                thompson::Config::new()
                    .utf8(false)
                    .nfa_size_limit(Some(SET_SIZE_LIMIT))
                    .which_captures(WhichCaptures::None),
            )
            .build_many(&patterns);
        let dfa = match dfa {
            Ok(dfa) => dfa,
            // Say what the `regex` crate says of the patterns.
            Err(e) => {
                return Err(build(patterns.iter().map(String::as_str))
                    .err()
                    .unwrap_or(e.to_string()))
            }
        };
        let for_caches = dfa.clone();
        let create: CacheFn = Box::new(move || for_caches.create_cache());
        Ok(WindowSet {
            patterns,
            dfa,
            caches: Pool::new(create),
            set: OnceLock::new(),
        })
    }

    /// For each of `windows`, the indexes of the patterns that match somewhere in it, in set
    /// order: what `RegexSet::matches` answers of each.
    pub fn matching_all(&self, windows: &[&[u8]]) -> Vec<Vec<usize>> {
        let mut cache = self.caches.get();
        let mut answers = vec![Vec::new(); windows.len()];
        let unwalked = lanes::walk(&self.dfa, &mut cache, windows, &mut answers);
        for i in unwalked {
            answers[i] = match self.set() {
                Ok(set) => set.matches(windows[i]).into_iter().collect(),
                // A set that cannot be built matches nothing the rules' own regexes would not
                // find: every pattern runs.
                Err(_) => (0..self.patterns.len()).collect(),
            };
        }
        answers
    }

    fn set(&self) -> Result<&RegexSet, &String> {
        self.set
            .get_or_init(|| build(self.patterns.iter().map(String::as_str)))
            .as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The digit-rule patterns of every rule (the tiers' patterns come from these).
    fn digit_patterns() -> Vec<String> {
        let scanner = super::super::Scanner::builtin().unwrap();
        let mut out: Vec<String> = scanner
            .rules()
            .iter()
            .filter(|r| r.min_digits.is_some() && r.keywords.is_empty() && !r.unicode)
            .map(|r| r.pattern.clone())
            .collect();
        out.dedup();
        out
    }

    /// What the `regex` crate's set says of each window.
    fn expected(patterns: &[String], windows: &[&[u8]]) -> Vec<Vec<usize>> {
        let set = build(patterns.iter().map(String::as_str)).unwrap();
        windows
            .iter()
            .map(|w| set.matches(w).into_iter().collect())
            .collect()
    }

    const WINDOWS: &[&[u8]] = &[
        b"call +44 20 7946 0958 or (415) 555-0132 ext 12",
        b"card 4111 1111 1111 1111, IBAN DE89 3704 0044 0532 0130 00",
        b"",
        b"1",
        b"ssn 078-05-1120 and host 10.0.0.1 wallet 1BoatSLRHtKNngkdXEeobR76b53LETtpyT.",
        b"NHS 943 476 5919, ABN 51 824 753 556, NINO AB 12 34 56 C, NRIC S1234567D",
        b"commit 3f9c2ab1e04d, id 7f3e9a2b4c1d0e5f6a7b8c9d0e1f2a3b \xff\xfe 12",
        b"pesel 44051401359, TC 10000000146, fiscal RSSMRA85T10A562S.",
    ];

    #[test]
    fn side_by_side_the_set_answers_each_window_as_the_regex_crate_does() {
        let patterns = digit_patterns();
        assert!(patterns.len() > 30);
        let set = WindowSet::new(patterns.clone()).unwrap();
        let windows: Vec<&[u8]> = WINDOWS.to_vec();
        assert_eq!(set.matching_all(&windows), expected(&patterns, &windows));
        // Many windows, in every order of lengths the lanes meet.
        let many: Vec<&[u8]> = windows.iter().cycle().take(101).copied().collect();
        let want = expected(&patterns, &many);
        assert!(want.iter().any(|w| !w.is_empty()));
        assert_eq!(set.matching_all(&many), want);
        assert_eq!(set.matching_all(&[]), Vec::<Vec<usize>>::new());
    }

    #[test]
    fn a_cache_cleared_or_given_up_still_gives_the_same_answers() {
        let patterns = digit_patterns();
        let windows: Vec<&[u8]> = WINDOWS.iter().cycle().take(400).copied().collect();
        let want = expected(&patterns, &windows);
        // The smallest caches the lazy DFA accepts are cleared over and over: the lanes start
        // their windows again each time until the walk gives up (after three clears that served
        // few bytes, or eight in one call), and the set answers the rest.
        for capacity in [1 << 16, 1 << 17, 1 << 18, SET_SIZE_LIMIT] {
            for patient in [false, true] {
                let set = WindowSet::with_cache(patterns.clone(), capacity, patient);
                let answers = set.unwrap().matching_all(&windows);
                assert_eq!(answers, want, "{capacity} {patient}");
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 64,
            ..crate::scan::unsaved_proptest()
        })]
        #[test]
        fn any_windows_get_the_regex_crates_answers(
            windows in proptest::collection::vec(
                proptest::collection::vec(
                    proptest::sample::select(vec![
                        &b"0"[..], b"12", b"345", b"6789", b" ", b"-", b".", b"/", b"+", b"(", b")",
                        b"A", b"DE", b"ab", b"X", b"ssn", b"tel", b"\n", b"_", b"\xff",
                    ]),
                    0..40,
                ),
                0..24,
            )
        ) {
            static PATTERNS: OnceLock<(Vec<String>, WindowSet)> = OnceLock::new();
            let (patterns, set) = PATTERNS.get_or_init(|| {
                let patterns = digit_patterns();
                let set = WindowSet::new(patterns.clone()).unwrap();
                (patterns, set)
            });
            let texts: Vec<Vec<u8>> = windows.iter().map(|parts| parts.concat()).collect();
            let windows: Vec<&[u8]> = texts.iter().map(Vec::as_slice).collect();
            proptest::prop_assert_eq!(set.matching_all(&windows), expected(patterns, &windows));
        }
    }
}
