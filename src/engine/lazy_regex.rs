//! A policy pattern compiled on first use, and compiled first on the engines that are cheap
//! to build. A process that checks one request reaches only some of the policy's patterns
//! (approval phrases only once a claim of user authority is found, a slot type's pattern only
//! once a template slot of that type is tried), and compiling Unicode-aware patterns is most of
//! what starting costs; so each pattern keeps its text and options and compiles the first time
//! it is asked for, once per process, for every thread. A pattern that does not compile gives
//! the same error every time it is asked for, and the caller fails closed on it;
//! [`LazyRegex::compile_now`] surfaces that error early for a policy that is validated when it
//! loads.
//!
//! The regex is the `regex` crate's engine (`regex_automata::meta`) configured exactly as
//! `regex::RegexBuilder` configures it, less the full DFA (with `fancy-regex` in the build, the
//! meta engine tries to determinize every small pattern up front, which buys nothing for a few
//! short texts per process) and the one-pass DFA (see `build_meta`). A [`Regex`] starts on the
//! NFA engines alone (no literal prefilter, no lazy DFA and its reverse NFA), which cost about a
//! third as much to build and are as fast on the few kilobytes one check searches; once a
//! pattern has searched [`WARM_BYTES`] (a bulk run, a long text) it builds the fast engines and
//! uses them from then on. A pattern with a Unicode word boundary (`\b`) searching a text with
//! a byte outside ASCII never runs its lazy DFA, which gives up at that byte (the meta engine
//! would then search again from the start on the NFA engines): once warm it runs the NFA
//! engines with the literal prefilter instead. Each is built from the pattern parsed once.
//! Which engine runs never changes a match: every one is the same regex under the same match
//! semantics.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use regex_automata::util::syntax;
use regex_automata::{meta, Input, Match};
use regex_syntax::hir::Hir;

/// How many bytes a pattern searches on its NFA engines before it builds the fast ones: about
/// where the search time those save exceeds what building them costs (callgrind, the default
/// policy's authority and conflict patterns).
pub const WARM_BYTES: usize = 8 << 10;

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
#[derive(Debug, Clone)]
pub struct LazyRegex {
    pattern: String,
    options: RegexOptions,
    compiled: OnceLock<Result<Regex, String>>,
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

    /// Whether something asked for the regex yet (it compiled, or failed to).
    #[cfg(test)]
    pub fn is_compiled(&self) -> bool {
        self.compiled.get().is_some()
    }

    /// The compiled regex, or why the pattern does not compile.
    pub fn get(&self) -> Result<&Regex, &str> {
        self.compiled
            .get_or_init(|| build(&self.pattern, self.options))
            .as_ref()
            .map_err(String::as_str)
    }

    /// Compiles the pattern now, on every engine it may run on: `Err` with the reason when it
    /// does not compile.
    pub fn compile_now(&self) -> Result<(), String> {
        self.get()
            .map_err(str::to_owned)
            .and_then(|regex| regex.compile_fast())
    }
}

/// One regex's engines as it warms up: the NFA engines built at once, the fast ones (built by
/// the owner's builder, the same regex) the first time it has searched more than
/// [`WARM_BYTES`]. A policy pattern ([`Regex`]) and a scanner rule's regex share it; each
/// builds its engines as its `regex` builder would.
#[derive(Debug)]
pub struct Warming {
    cheap: meta::Regex,
    fast: OnceLock<Result<meta::Regex, String>>,
    searched: AtomicUsize,
}

impl Clone for Warming {
    fn clone(&self) -> Warming {
        Warming {
            cheap: self.cheap.clone(),
            fast: self.fast.clone(),
            searched: AtomicUsize::new(self.searched.load(Ordering::Relaxed)),
        }
    }
}

impl Warming {
    pub fn new(cheap: meta::Regex) -> Warming {
        Warming {
            cheap,
            fast: OnceLock::new(),
            searched: AtomicUsize::new(0),
        }
    }

    /// A regex whose fast engines are built already (a bulk scan's): they answer every search.
    pub fn warm(fast: meta::Regex) -> Warming {
        Warming {
            cheap: fast.clone(),
            fast: OnceLock::from(Ok(fast)),
            searched: AtomicUsize::new(0),
        }
    }

    /// The NFA engines (the fast ones for a regex built [`Warming::warm`]).
    pub fn cheap(&self) -> &meta::Regex {
        &self.cheap
    }

    /// The fast engines, built by `build` the first time they are asked for.
    pub fn fast(
        &self,
        build: impl FnOnce() -> Result<meta::Regex, String>,
    ) -> Result<&meta::Regex, &String> {
        self.fast.get_or_init(build).as_ref()
    }

    /// Whether the fast engines were built (or tried).
    pub fn is_warm(&self) -> bool {
        self.fast.get().is_some()
    }

    /// Counts `len` more bytes searched: whether that makes (or made) the regex warm.
    pub fn warms_with(&self, len: usize) -> bool {
        self.is_warm()
            || self
                .searched
                .fetch_add(len, Ordering::Relaxed)
                .saturating_add(len)
                > WARM_BYTES
    }

    /// The engine to search `len` more bytes with; `bulk` when the caller knows it searches
    /// far more than [`WARM_BYTES`] in all (a bulk scan), so the fast engines pay from the
    /// first search. The fast engines match exactly as the NFA ones do; should they not build
    /// (a reverse NFA over its size limit), the NFA engines keep answering.
    pub fn engine(
        &self,
        len: usize,
        bulk: bool,
        build: impl FnOnce() -> Result<meta::Regex, String>,
    ) -> &meta::Regex {
        if !bulk && !self.warms_with(len) {
            return &self.cheap;
        }
        self.fast(build).unwrap_or(&self.cheap)
    }
}

/// A compiled pattern: its NFA engines at once, its fast engines once it has searched enough
/// (see the module docs). It answers as `meta::Regex` does.
#[derive(Debug, Clone)]
pub struct Regex {
    /// The pattern (a set's, see [`build_any`]: its patterns, one a line).
    pattern: String,
    options: RegexOptions,
    /// The pattern parsed (a set's patterns, each), kept for building the fast engines without
    /// parsing it again.
    hirs: Vec<Hir>,
    /// The pattern has a Unicode word boundary (`\b` in Unicode mode): its lazy DFA gives up
    /// at the first byte outside ASCII, and the meta engine then searches again from the start
    /// on the NFA engines, so on a text with such a byte the fast engines only add work.
    quits_outside_ascii: bool,
    warm: Warming,
    /// For such a pattern and such a text, once warm: the NFA engines with the literal
    /// prefilter, and no lazy DFA.
    prefiltered: OnceLock<Result<meta::Regex, String>>,
}

impl Regex {
    /// The engine to search `haystack` with.
    fn engine(&self, haystack: &[u8]) -> &meta::Regex {
        if self.quits_outside_ascii && !haystack.is_ascii() {
            if !self.warm.warms_with(haystack.len()) {
                return self.warm.cheap();
            }
            return self.prefiltered().unwrap_or(self.warm.cheap());
        }
        self.warm
            .engine(haystack.len(), false, || self.build(Engines::Fast))
    }

    fn build(&self, engines: Engines) -> Result<meta::Regex, String> {
        build_meta(&self.hirs, self.options, engines)
    }

    fn prefiltered(&self) -> Result<&meta::Regex, &String> {
        self.prefiltered
            .get_or_init(|| self.build(Engines::Prefiltered))
            .as_ref()
    }

    /// Builds the fast engines now (and the prefiltered ones of a pattern that has them): why
    /// they do not build, if they do not.
    fn compile_fast(&self) -> Result<(), String> {
        let fast = self.warm.fast(|| self.build(Engines::Fast));
        let prefiltered = if self.quits_outside_ascii {
            self.prefiltered()
        } else {
            Ok(self.warm.cheap())
        };
        fast.and(prefiltered)
            .map(|_| ())
            .map_err(|e| match self.hirs.len() {
                1 => explain(&self.pattern, self.options, e),
                _ => format!("{e} (in the set of patterns {:?})", self.pattern),
            })
    }

    pub fn is_match(&self, haystack: &str) -> bool {
        self.engine(haystack.as_bytes()).is_match(haystack)
    }

    pub fn find(&self, haystack: &str) -> Option<Match> {
        self.engine(haystack.as_bytes()).find(haystack)
    }

    pub fn search(&self, input: &Input<'_>) -> Option<Match> {
        let searched = input.haystack().get(input.get_range()).unwrap_or_default();
        self.engine(searched).search(input)
    }

    pub fn find_iter<'r, 'h>(&'r self, haystack: &'h str) -> meta::FindMatches<'r, 'h> {
        self.engine(haystack.as_bytes()).find_iter(haystack)
    }

    pub fn captures_iter<'r, 'h>(&'r self, haystack: &'h str) -> meta::CapturesMatches<'r, 'h> {
        self.engine(haystack.as_bytes()).captures_iter(haystack)
    }
}

/// Which of the meta engine's engines a build includes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Engines {
    /// The PikeVM and the bounded backtracker.
    Nfa,
    /// Those and the literal prefilters.
    Prefiltered,
    /// Those, the literal prefilters and the lazy DFA (forward and reverse).
    Fast,
}

/// `pattern` parsed with `o`; `ascii`, in ASCII mode (see [`build_ascii`]).
fn parse(pattern: &str, o: RegexOptions, ascii: bool) -> Result<Hir, String> {
    let syntax = syntax::Config::new()
        .case_insensitive(o.case_insensitive)
        .multi_line(o.multi_line)
        .unicode(!ascii)
        .utf8(!ascii);
    syntax::parse_with(pattern, &syntax).map_err(|e| e.to_string())
}

/// The meta engine over parsed patterns (one, or a set's).
fn build_meta(hirs: &[Hir], o: RegexOptions, engines: Engines) -> Result<meta::Regex, String> {
    let fast = engines == Engines::Fast;
    let config = meta::Config::new()
        .nfa_size_limit(Some(o.size_limit))
        .hybrid_cache_capacity(2 << 20)
        .match_kind(regex_automata::MatchKind::LeftmostFirst)
        .utf8_empty(true)
        .auto_prefilter(engines != Engines::Nfa)
        .hybrid(fast)
        .dfa(false)
        // The meta engine runs a one-pass DFA only for a search anchored at its start (no
        // search here asks for one; a pattern that begins with `\A` is one), where the bounded
        // backtracker and the PikeVM find the same match; building it for every pattern with a
        // capture group cost `cq check` 0.56 M instructions and 23 page faults.
        .onepass(false);
    meta::Builder::new()
        .configure(config)
        .build_many_from_hir(hirs)
        .map_err(|e| e.to_string())
}

/// Why `pattern` does not compile, as the `regex` crate says it (what is wrong and where; the
/// meta error does not say), or `meta_error` when the `regex` crate compiles it.
fn explain(pattern: &str, o: RegexOptions, meta_error: &str) -> String {
    regex::RegexBuilder::new(pattern)
        .case_insensitive(o.case_insensitive)
        .multi_line(o.multi_line)
        .size_limit(o.size_limit)
        .build()
        .err()
        .map_or_else(|| meta_error.to_owned(), |e| e.to_string())
}

/// `pattern` compiled now, as [`LazyRegex`] compiles it (also for patterns a request brings,
/// which compile for every request that carries them).
pub fn build(pattern: &str, o: RegexOptions) -> Result<Regex, String> {
    build_nfa(pattern, o, false).map_err(|e| explain(pattern, o, &e))
}

/// `pattern` compiled in ASCII mode, for ASCII texts, when that reads them exactly as
/// [`build`]'s regex does ([`ascii_only`]): the same matches and groups, from an automaton that
/// need not spell out the UTF-8 of every Unicode class (`[^.]`, `\w`, case folds), which is
/// most of what compiling such a pattern costs. `None` when the pattern is not one of those or
/// does not compile in ASCII mode; the caller then searches with [`build`]'s regex, which
/// alone says whether and why a pattern does not compile. A regex built here must never
/// search a text with a character outside ASCII.
pub fn build_ascii(pattern: &str, o: RegexOptions) -> Option<Regex> {
    if !ascii_only(pattern) {
        return None;
    }
    build_nfa(pattern, o, true).ok()
}

/// A [`Regex`] on its NFA engines, as written or (`ascii`) in ASCII mode.
fn build_nfa(pattern: &str, o: RegexOptions, ascii: bool) -> Result<Regex, String> {
    from_hirs(pattern.to_owned(), vec![parse(pattern, o, ascii)?], o)
}

fn from_hirs(pattern: String, hirs: Vec<Hir>, o: RegexOptions) -> Result<Regex, String> {
    let cheap = build_meta(&hirs, o, Engines::Nfa)?;
    Ok(Regex {
        pattern,
        options: o,
        quits_outside_ascii: hirs
            .iter()
            .any(|h| h.properties().look_set().contains_word_unicode()),
        hirs,
        warm: Warming::new(cheap),
        prefiltered: OnceLock::new(),
    })
}

/// `patterns` as one set, each compiled as [`build`] compiles it, for asking whether any of them
/// matches a text (a multi-pattern regex: each pattern keeps its own flags and groups, and a
/// match is a match of one of them). The regex engines are built once for the set rather than
/// once a pattern. `Err` when a pattern or the set does not compile (the caller compiles them
/// one by one, with [`build`], to learn which and why).
pub fn build_any(patterns: &[String], o: RegexOptions) -> Result<Regex, String> {
    let hirs = patterns
        .iter()
        .map(|p| parse(p, o, false))
        .collect::<Result<Vec<_>, _>>()?;
    from_hirs(patterns.join("\n"), hirs, o)
}

/// Whether `pattern` reads an ASCII text the same in ASCII mode as in Unicode mode, and fails
/// to compile there wherever it fails in Unicode mode (short of a size limit, which only the
/// larger Unicode automaton can exceed): written in ASCII, with no `\x{…}`, `\u` or `\U`
/// escape (which may name a code point that folds to an ASCII letter; `\xHH` names at most
/// U+00FF, none of which folds to ASCII), and no flag group that turns Unicode off (`(?-u)` may
/// match bytes that are not UTF-8, which Unicode mode refuses). On a text of ASCII alone every
/// Unicode class, case fold, `\s`, `\w` and `\b` of such a pattern matches exactly what its
/// ASCII form matches (the non-ASCII members of `(?i)s` or `[^.\n]` never occur).
pub fn ascii_only(pattern: &str) -> bool {
    pattern.is_ascii()
        && !["\\x{", "\\u", "\\U"].iter().any(|e| pattern.contains(e))
        && !pattern.split("(?").skip(1).any(|rest| {
            let flags: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphabetic() || *c == '-')
                .collect();
            flags
                .split_once('-')
                .is_some_and(|(_, off)| off.contains('u'))
        })
}

#[cfg(test)]
mod tests {
    use super::{build, LazyRegex, RegexOptions, WARM_BYTES};

    /// The options the authority rules compile with.
    const AUTHORITY: RegexOptions = RegexOptions {
        case_insensitive: true,
        multi_line: true,
        size_limit: 4 << 20,
    };

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
        let options = AUTHORITY;
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

    #[test]
    fn a_pattern_matches_the_same_before_and_after_it_builds_its_fast_engines() {
        let options = AUTHORITY;
        let pattern = r"\b(?P<role>user|admin)\s+(?:approved|allowed)\s+(?P<action>[^.\n]*)";
        let regex = build(pattern, options).expect("the pattern compiles");
        let text = "The USER approved pushing to main. Admin allowed it. ſystem: none.\n";
        let spans = |r: &super::Regex| -> Vec<_> {
            r.captures_iter(text)
                .map(|c| {
                    (
                        c.get_match().map(|m| m.range()),
                        c.get_group_by_name("action"),
                    )
                })
                .map(|(m, a)| (m, a.map(|a| a.range())))
                .collect()
        };
        let cold = spans(&regex);
        assert_eq!(cold.len(), 2);
        // A long search warms it up; from then on the fast engines answer, the same way (an
        // ASCII text: outside ASCII this pattern's lazy DFA would give up, see below).
        let ascii = text.replace('ſ', "s");
        let long = ascii.repeat(WARM_BYTES / ascii.len() + 1);
        assert_eq!(
            regex.find_iter(&long).count(),
            2 * (WARM_BYTES / ascii.len() + 1)
        );
        assert!(regex.warm.fast.get().is_some_and(Result::is_ok));
        assert_eq!(spans(&regex), cold);
        assert_eq!(regex.find(text).map(|m| m.range()), Some(4..33));
    }

    #[test]
    fn compiling_a_pattern_now_builds_every_engine_it_may_run_on() {
        let lazy = LazyRegex::new(r"\bgo ahead\b", RegexOptions::sized(1 << 20));
        assert!(lazy.compile_now().is_ok());
        assert!(lazy.get().is_ok_and(|r| {
            r.warm.fast.get().is_some_and(Result::is_ok)
                && r.prefiltered.get().is_some_and(Result::is_ok)
        }));
    }

    /// Every match's groups (the whole match first), as spans.
    type Groups = Vec<Vec<Option<std::ops::Range<usize>>>>;

    /// Every match and group of `regex` in `text`, beside the `regex` crate's.
    fn both_spans(regex: &super::Regex, reference: &regex::Regex, text: &str) -> (Groups, Groups) {
        let ours = regex
            .captures_iter(text)
            .map(|c| {
                (0..c.group_len())
                    .map(|i| c.get_group(i).map(|g| g.range()))
                    .collect()
            })
            .collect();
        let theirs = reference
            .captures_iter(text)
            .map(|c| c.iter().map(|g| g.map(|g| g.range())).collect())
            .collect();
        (ours, theirs)
    }

    #[test]
    fn a_pattern_with_a_unicode_word_boundary_matches_alike_on_every_engine_and_text() {
        // Texts outside ASCII (an arrow, a long s and a Kelvin sign that fold to ASCII
        // letters, letters that are word characters): the lazy DFA of a `\b` pattern gives up
        // on them, so they are searched on the NFA engines, cold and then prefiltered.
        let options = AUTHORITY;
        let patterns = [
            r"\b(?P<role>user|admin)\s+(?:approved|allowed)\s+(?P<action>[^.\n]*)",
            r"\b(?:as|per)\s+the\s+(?P<who>\w+)\b",
            r"\bpush\s+to\s+(?P<branch>main|master)\b",
            r"\bask\b[^.\n]{0,12}\bfirst\b",
        ];
        let texts = [
            "The USER approved pushing → main. Admin allowed it. ſystem: none.\n",
            "as per the usér → per the ᴜser, as per the Kelvin K; ASK them → first. \
             user approved café. éuser approved x. useré approved y.\n",
            "push to main → never push to MASTER; puſh to main\u{212a}, push to mainé.\n",
            "plain ASCII: the user approved it. Admin allowed deploys. Push to master.\n",
        ];
        for pattern in patterns {
            let regex = build(pattern, options).expect("the pattern compiles");
            assert!(regex.quits_outside_ascii, "{pattern}");
            let reference = regex::RegexBuilder::new(pattern)
                .case_insensitive(true)
                .multi_line(true)
                .build()
                .expect("the regex crate compiles it");
            let check = |regex: &super::Regex| {
                for text in texts {
                    let (ours, theirs) = both_spans(regex, &reference, text);
                    assert_eq!(ours, theirs, "{pattern} on {text:?}");
                }
            };
            check(&regex);
            // A long search outside ASCII builds the prefiltered engines, not the fast ones.
            let long = texts.concat().repeat(WARM_BYTES / 64);
            assert_eq!(
                regex.find_iter(&long).count(),
                reference.find_iter(&long).count()
            );
            assert!(regex.prefiltered.get().is_some_and(Result::is_ok));
            assert!(regex.warm.fast.get().is_none());
            check(&regex);
            // A long ASCII search builds the fast ones; a text outside ASCII still avoids them.
            let ascii = texts[3].repeat(WARM_BYTES / 64);
            assert_eq!(
                regex.find_iter(&ascii).count(),
                reference.find_iter(&ascii).count()
            );
            assert!(regex.warm.fast.get().is_some_and(Result::is_ok));
            check(&regex);
        }
    }

    #[test]
    fn a_pattern_without_a_unicode_word_boundary_warms_on_any_text() {
        let regex = build(r"(?m)^\s*(?:system|developer)\s*:", AUTHORITY).expect("compiles");
        assert!(!regex.quits_outside_ascii);
        let long = "system: → x\n".repeat(WARM_BYTES / 8);
        assert_eq!(regex.find_iter(&long).count(), WARM_BYTES / 8);
        assert!(regex.warm.fast.get().is_some_and(Result::is_ok));
        assert!(regex.prefiltered.get().is_none());
    }
}
