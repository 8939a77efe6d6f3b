//! Pivots: a punctuation byte every match of a rule's regex holds a bounded way into it. An
//! IPv6 address holds a `:` within its first six bytes and another within five bytes of it; a
//! Discord bot token a `.` 24 to 27 bytes in and another seven bytes on. A regex without a
//! literal to skip to makes its lazy DFA read every byte of a text (about 2 ns a byte: one
//! whole pass for each such rule); by its pivot the search jumps from pivot byte to pivot byte
//! (`memchr`), passes over those not followed by a second one where a match would hold it, and
//! tries an anchored match only at the starts a match around the byte could have (the bytes
//! it can start with after what stands before it, the bytes it can hold up to the pivot).
//!
//! The matches are the regex's own `find_iter`'s: no match can start before the first start
//! tried that matches, and an anchored search there gives the match the unanchored search gives
//! (leftmost-first at the leftmost start). A haystack dense in pivot bytes (a hostile run of
//! `:`) could make the anchored searches cost more than the DFA: each search keeps a budget of a
//! few passes over its haystack and goes on with the DFA once it is spent, and a regex whose
//! anchored search could read on without bound before it fails has no pivot.
//!
//! The layout is read from the regex's syntax tree when first asked for (see `layout`); a regex
//! whose matches start with a few literals has no pivot, as its own prefilter skips to them.

mod layout;
mod masks;

use regex_automata::util::captures::Captures;
use regex_automata::{meta, Anchored, Input, Match};
use regex_syntax::hir::literal::{ExtractKind, Extractor};
use regex_syntax::hir::{Class, Hir, HirKind};

use layout::{Layout, Starts};
use masks::PivotWords;
pub(super) use masks::{Masks, FROM_BYTES as MASKS_FROM_BYTES};

/// Every match of `regex` in `hay`, as `regex.find_iter(hay)` gives them: by `pivot` when
/// there is one.
pub(super) fn find_iter<'a>(
    regex: &'a meta::Regex,
    hay: &'a [u8],
    pivot: Option<&'a Pivot>,
    masks: Option<&'a Masks>,
) -> impl Iterator<Item = Match> + 'a {
    let plain = pivot.is_none().then(|| regex.find_iter(hay));
    let search = pivot.map(|pivot| Search::new(pivot, masks, regex, hay));
    plain
        .into_iter()
        .flatten()
        .chain(search.into_iter().flatten())
}

/// The captures of every match of `regex` in `hay`, as `regex.captures_iter(hay)` gives them:
/// by `pivot` when there is one, each match's groups from an anchored search at its start.
pub(super) fn captures_iter<'a>(
    regex: &'a meta::Regex,
    hay: &'a [u8],
    pivot: Option<&'a Pivot>,
    masks: Option<&'a Masks>,
) -> impl Iterator<Item = Captures> + 'a {
    let plain = pivot.is_none().then(|| regex.captures_iter(hay));
    let search = pivot.map(|pivot| Search::new(pivot, masks, regex, hay));
    let by_pivot = search.into_iter().flatten().map(move |m| {
        let mut caps = regex.create_captures();
        let input = Input::new(hay).range(m.start()..).anchored(Anchored::Yes);
        regex.search_captures(&input, &mut caps);
        caps
    });
    plain.into_iter().flatten().chain(by_pivot)
}

/// The matches of a pivoted regex in one haystack, found by its pivot while that costs less
/// than a few passes of its DFA over the haystack, and by the DFA from there on (a haystack
/// dense in pivot bytes, such as a hostile run of `:`, never costs more than that). A pivoted
/// regex never matches the empty string, so each search goes on where the last match ended.
struct Search<'a> {
    pivot: &'a Pivot,
    /// The pivot's bytes as bits, when the haystack's were made.
    words: Option<PivotWords<'a>>,
    regex: &'a meta::Regex,
    hay: &'a [u8],
    /// Where the next match may start.
    at: usize,
    /// What the pivot may still spend (see [`Pivot::find_at`]).
    budget: usize,
    /// The DFA's search, once the budget is spent.
    plain: Option<meta::FindMatches<'a, 'a>>,
}

impl<'a> Search<'a> {
    fn new(
        pivot: &'a Pivot,
        masks: Option<&'a Masks>,
        regex: &'a meta::Regex,
        hay: &'a [u8],
    ) -> Search<'a> {
        Search {
            pivot,
            words: masks.and_then(|m| m.of_pivot(pivot)),
            regex,
            hay,
            at: 0,
            budget: hay.len().saturating_mul(4).saturating_add(4096),
            plain: None,
        }
    }
}

impl Iterator for Search<'_> {
    type Item = Match;

    fn next(&mut self) -> Option<Match> {
        if let Some(plain) = &mut self.plain {
            return plain.next();
        }
        let found = self.pivot.find_at(
            self.regex,
            self.hay,
            self.words.as_ref(),
            self.at,
            &mut self.budget,
        );
        match found {
            Ok(found) => {
                let m = found?;
                self.at = m.end();
                Some(m)
            }
            Err(from) => {
                let input = Input::new(self.hay).range(from..);
                self.plain.insert(self.regex.find_iter(input)).next()
            }
        }
    }
}

/// A regex's pivot (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Pivot {
    /// One to three bytes, one of which every match holds.
    bytes: Vec<u8>,
    /// The same bytes as a set.
    is_pivot: [bool; 256],
    /// Where they stand in a match.
    layout: Layout,
    /// The bytes a match can start with.
    starts: Starts,
    /// The bytes a match can hold at each offset, up to its first pivot byte's furthest.
    at_offset: Vec<[bool; 256]>,
    /// The most bytes an anchored search can read before it fails.
    reach: usize,
}

/// What a pivot may cost: the weights of its bytes (how common they are) times the work each
/// occurrence takes (one anchored search at each offset a match may start at, or less where the
/// second pivot byte's distance rules most occurrences out). Above this, reading every byte
/// with the regex's DFA is as fast.
const MAX_COST: usize = 24;

/// The most bytes an anchored search of a pivoted regex may read before it fails: a regex
/// that could read further (an unbounded repetition before what completes a match) could
/// make a text dense in pivot bytes cost a read of the rest of the text at each of them.
const MAX_REACH: usize = 1024;

impl Pivot {
    /// The cheapest pivot of `hir`, if it has one worth using.
    pub fn of(hir: &Hir) -> Option<Pivot> {
        // A regex whose matches start with one of a few literals skips to them by its own
        // prefilter, faster than any pivot.
        if literal_prefixed(hir) {
            return None;
        }
        let starts = Starts::of(hir)?;
        let reach = layout::reach(hir).filter(|&n| n <= MAX_REACH)?;
        let mut best: Option<(usize, Vec<u8>, Layout)> = None;
        for bytes in candidates(hir) {
            let Some(layout) = layout::layout(hir, &byte_set(&bytes)) else {
                continue;
            };
            let weight: usize = bytes.iter().map(|&b| weight(b)).sum();
            let offsets = layout.first.count_ones() as usize;
            let work = match layout.second {
                Some(_) => 1 + offsets / 4,
                None => offsets,
            };
            let cost = weight * work;
            if cost <= MAX_COST && best.as_ref().is_none_or(|(c, ..)| cost < *c) {
                best = Some((cost, bytes, layout));
            }
        }
        let (_, bytes, layout) = best?;
        let furthest = 64 - layout.first.leading_zeros() as usize;
        Some(Pivot {
            is_pivot: byte_set(&bytes),
            bytes,
            layout,
            starts,
            at_offset: layout::offset_bytes(hir, furthest),
            reach,
        })
    }

    /// The first match of `regex` in `hay` that starts at or after `at`, as
    /// `regex.search(&Input::new(hay).range(at..))` finds it; `Err` with where to go on from
    /// once the search would spend more than `budget` (each pivot byte costs one and one more
    /// for each offset a match may start at; each anchored search, the bytes it may read
    /// before it fails).
    pub fn find_at(
        &self,
        regex: &meta::Regex,
        hay: &[u8],
        words: Option<&PivotWords<'_>>,
        at: usize,
        budget: &mut usize,
    ) -> Result<Option<Match>, usize> {
        let fewest = self.layout.first.trailing_zeros() as usize;
        let per_byte = 1 + self.layout.first.count_ones() as usize;
        // Every start before `tried` has been tried.
        let mut tried = at;
        loop {
            // A match starting at or after `tried` has its first pivot byte at or after
            // `tried + fewest`; the next such byte says where the leftmost match can start.
            let from = tried.saturating_add(fewest);
            let next = match words {
                // The bits pass over pivot bytes without a second where a match has one.
                Some(words) => words.next(from),
                None => hay
                    .get(from..)
                    .and_then(|rest| self.next_byte(rest))
                    .map(|i| from + i),
            };
            let Some(p) = next else {
                return Ok(None);
            };
            *budget = budget.checked_sub(per_byte).ok_or(tried)?;
            let untried = tried;
            // No start at or before `p - fewest` can have its first pivot byte after `p` (nor,
            // as before, the bytes the bits passed over).
            tried = p - fewest + 1;
            if !self.second_fits(hay, p) {
                continue;
            }
            // The offsets the first pivot byte can stand at, nearest the start first.
            let mut offsets = self.layout.first;
            while offsets != 0 {
                let offset = 63 - offsets.leading_zeros() as usize;
                offsets &= !(1 << offset);
                let Some(start) = p.checked_sub(offset).filter(|&s| s >= untried) else {
                    continue;
                };
                if !self.starts.can_start(hay, start) || !self.fits(&hay[start..p]) {
                    continue;
                }
                *budget = budget.checked_sub(self.reach).ok_or(untried)?;
                let input = Input::new(hay).range(start..).anchored(Anchored::Yes);
                if let Some(m) = regex.search(&input) {
                    return Ok(Some(m));
                }
            }
        }
    }

    /// Whether the pivot byte after the one at `p` stands where a match's second one can
    /// (always, for a pivot without a second).
    fn second_fits(&self, hay: &[u8], p: usize) -> bool {
        let Some(second) = self.layout.second else {
            return true;
        };
        let reach = 64 - second.leading_zeros() as usize;
        let after = hay.get(p + 1..).unwrap_or(&[]);
        let next = after
            .iter()
            .take(reach)
            .position(|&b| self.is_pivot[usize::from(b)]);
        next.is_some_and(|i| second >> (i + 1) & 1 == 1)
    }

    /// The pivot bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Whether `head` can be how a match starts, byte for byte.
    fn fits(&self, head: &[u8]) -> bool {
        head.iter()
            .zip(&self.at_offset)
            .all(|(&b, set)| set[usize::from(b)])
    }

    fn next_byte(&self, hay: &[u8]) -> Option<usize> {
        match *self.bytes.as_slice() {
            [a] => memchr::memchr(a, hay),
            [a, b] => memchr::memchr2(a, b, hay),
            [a, b, c] => memchr::memchr3(a, b, c, hay),
            _ => None,
        }
    }
}

/// Whether every match of `hir` starts with one of a few literals of at least two bytes (as
/// the meta engine's prefilter finds them).
fn literal_prefixed(hir: &Hir) -> bool {
    let prefixes = Extractor::new().kind(ExtractKind::Prefix).extract(hir);
    prefixes
        .literals()
        .is_some_and(|lits| !lits.is_empty() && lits.iter().all(|l| l.as_bytes().len() >= 2))
}

/// How common a byte is in prose and code, as a weight of [`MAX_COST`]: sentence and path
/// punctuation is common, the rest rare.
fn weight(b: u8) -> usize {
    match b {
        b'.' | b',' | b'-' | b'/' | b'(' | b')' | b'"' | b'_' => 4,
        b':' | b'=' | b'\'' | b';' | b'*' | b'[' | b']' | b'<' | b'>' => 2,
        _ => 1,
    }
}

/// Byte sets that could be a pivot: every byte a literal of the regex holds, and every class of
/// one to three punctuation bytes, alone and joined with one another up to three bytes.
fn candidates(hir: &Hir) -> Vec<Vec<u8>> {
    let mut singles: Vec<Vec<u8>> = Vec::new();
    collect(hir, &mut singles);
    let mut out: Vec<Vec<u8>> = Vec::new();
    let mut push = |mut set: Vec<u8>| {
        set.sort_unstable();
        set.dedup();
        if (1..=3).contains(&set.len()) && !out.contains(&set) {
            out.push(set);
        }
    };
    for (i, a) in singles.iter().enumerate() {
        push(a.clone());
        for b in &singles[i + 1..] {
            push([a.as_slice(), b].concat());
            for c in &singles[i + 1..] {
                push([a.as_slice(), b, c].concat());
            }
        }
    }
    out
}

fn collect(hir: &Hir, out: &mut Vec<Vec<u8>>) {
    match hir.kind() {
        HirKind::Literal(lit) => {
            for &b in lit.0.iter().filter(|b| b.is_ascii_punctuation()) {
                if !out.contains(&vec![b]) {
                    out.push(vec![b]);
                }
            }
        }
        HirKind::Class(class) => {
            if let Some(set) = class_bytes(class).filter(|s| s.len() <= 3) {
                if set.iter().all(u8::is_ascii_punctuation) && !out.contains(&set) {
                    out.push(set);
                }
            }
        }
        HirKind::Capture(c) => collect(&c.sub, out),
        HirKind::Repetition(r) => collect(&r.sub, out),
        HirKind::Concat(parts) | HirKind::Alternation(parts) => {
            parts.iter().for_each(|p| collect(p, out));
        }
        HirKind::Empty | HirKind::Look(_) => {}
    }
}

/// The bytes of a class, when it has at most a few and all are ASCII.
fn class_bytes(class: &Class) -> Option<Vec<u8>> {
    let (ascii, wide) = layout::ranges(class);
    let count: usize = ascii.iter().map(|(lo, hi)| hi - lo + 1).sum();
    if count > 3 || wide.chars || wide.bytes_only {
        return None;
    }
    let bytes = ascii.iter().flat_map(|&(lo, hi)| lo..=hi);
    Some(bytes.filter_map(|b| u8::try_from(b).ok()).collect())
}

fn byte_set(bytes: &[u8]) -> [bool; 256] {
    let mut set = [false; 256];
    for &b in bytes {
        set[usize::from(b)] = true;
    }
    set
}

#[cfg(test)]
mod tests {
    use regex_automata::util::syntax;

    use super::*;
    use crate::scan::rule::parse;

    fn pivot_of(pattern: &str) -> Option<Pivot> {
        Pivot::of(&parse(pattern, false).unwrap())
    }

    fn regex(pattern: &str) -> meta::Regex {
        meta::Builder::new()
            .configure(meta::Config::new().utf8_empty(false))
            .syntax(syntax::Config::new().unicode(false).utf8(false))
            .build(pattern)
            .unwrap()
    }

    fn bits(offsets: &[usize]) -> u64 {
        offsets.iter().map(|&o| 1u64 << o).sum()
    }

    const IPV6: &str = r"(?i)(?:^|[^\w:.])((?:[0-9a-f]{0,4}:){2,7}(?:(?:\d{1,3}\.){3}\d{1,3}|[0-9a-f]{0,4})(?:%[a-z0-9]+)?)";
    const MAC: &str = r"\b([0-9A-Fa-f]{2}(?:[:-][0-9A-Fa-f]{2}){5}|[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4})\b";
    const DISCORD: &str = r"(?:^|[^A-Za-z0-9_.-])([MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38})(?:[^A-Za-z0-9_.-]|$)";

    #[test]
    fn a_pivot_says_where_its_bytes_stand_in_every_match() {
        let ipv6 = pivot_of(IPV6).unwrap();
        assert_eq!(ipv6.bytes, b":");
        assert_eq!(ipv6.layout.first, bits(&[0, 1, 2, 3, 4, 5]));
        assert_eq!(ipv6.layout.second, Some(bits(&[1, 2, 3, 4, 5])));
        let mac = pivot_of(MAC).unwrap();
        assert_eq!(mac.bytes, b"-.:");
        assert_eq!(mac.layout.first, bits(&[2, 4]));
        assert_eq!(mac.layout.second, Some(bits(&[3, 5])));
        let discord = pivot_of(DISCORD).unwrap();
        assert_eq!(discord.bytes, b".");
        assert_eq!(discord.layout.first, bits(&[24, 25, 26, 27]));
        assert_eq!(discord.layout.second, Some(bits(&[7])));
        // A match may lack any pivot byte, hold it unboundedly far in, or be empty; a literal
        // prefix is the regex's own prefilter's to skip to; a repetition before what completes a
        // match could make a failing search read on without bound.
        for none in [
            r"a:b|cd",
            r"x*:y",
            r"(?::)?",
            r"\b(cio[a-zA-Z0-9]{32})\b",
            r"API-[A-Z0-9]{26}",
            r"(?:^|\s)[a-z]{1,3}:[a-z]*X",
        ] {
            assert!(pivot_of(none).is_none(), "{none}");
        }
    }

    fn spans(matches: impl Iterator<Item = Captures>) -> Vec<Vec<Option<(usize, usize)>>> {
        matches
            .map(|c| c.iter().map(|g| g.map(|s| (s.start, s.end))).collect())
            .collect()
    }

    /// The pivot's matches and captures are the regex's own, on `hay`.
    fn same(pattern: &str, re: &meta::Regex, pivot: &Pivot, hay: &[u8]) -> Result<(), String> {
        let shown = || format!("{pattern} on {:?}", String::from_utf8_lossy(hay));
        let plain: Vec<Match> = re.find_iter(hay).collect();
        let pivoted: Vec<Match> = find_iter(re, hay, Some(pivot), None).collect();
        if plain != pivoted {
            return Err(format!("{}: {plain:?} != {pivoted:?}", shown()));
        }
        // The same by the pivot bytes' bits, made for them and a few more bytes.
        let masks = Masks::of(hay, &[pivot.bytes(), b"%-.:"].concat());
        let by_bits: Vec<Match> = find_iter(re, hay, Some(pivot), Some(&masks)).collect();
        if plain != by_bits {
            return Err(format!("{} by bits: {plain:?} != {by_bits:?}", shown()));
        }
        let plain = spans(re.captures_iter(hay));
        let pivoted = spans(captures_iter(re, hay, Some(pivot), None));
        if plain != pivoted {
            return Err(format!("{}: captures {plain:?} != {pivoted:?}", shown()));
        }
        Ok(())
    }

    /// Every built-in rule's pattern with a pivot, and a few of other shapes, with each one's
    /// regex and pivot.
    fn pivoted() -> &'static [(String, meta::Regex, Pivot)] {
        static PIVOTED: std::sync::OnceLock<Vec<(String, meta::Regex, Pivot)>> =
            std::sync::OnceLock::new();
        PIVOTED.get_or_init(|| {
            patterns()
                .into_iter()
                .filter_map(|p| Some((p.clone(), regex(&p), pivot_of(&p)?)))
                .collect()
        })
    }

    fn patterns() -> Vec<String> {
        let scanner = crate::scan::Scanner::builtin().unwrap();
        let mut out: Vec<String> = scanner
            .rules()
            .iter()
            .filter(|r| !r.unicode && pivot_of(&r.pattern).is_some())
            .map(|r| r.pattern.clone())
            .collect();
        out.extend(
            [
                r"(?:^|[^\w:.])((?:[0-9a-f]{0,4}:){2,7}[0-9a-f]{0,4})",
                r"\b[a-f]{1,3}[:;][0-9]{2}\b",
                r"(?:^|-)[a-c]?-[a-c]{0,2}(?:-|$)",
                r"[a-z]{2,4}(?:=|:=)[0-9a-f]{1,8}",
                r"\B:[a-z0-9]{1,9}",
            ]
            .map(str::to_owned),
        );
        out
    }

    #[test]
    fn the_patterns_tried_have_pivots() {
        let patterns = patterns();
        assert!(patterns.len() >= 8, "{patterns:?}");
        for p in &patterns {
            assert!(pivot_of(p).is_some(), "{p}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 1024,
            ..crate::scan::unsaved_proptest()
        })]
        #[test]
        fn a_pivot_finds_what_the_regex_finds(
            parts in proptest::collection::vec(
                proptest::sample::select(vec![
                    &b":"[..], b"::", b".", b"-", b"%", b"=", b" ", b"\n", b"_", b"/", b"a", b"f",
                    b"F", b"0", b"9", b"12", b"ab", b"fe80", b"1a2b", b"x", b"Z", b"M", b"Nq7",
                    b"zz", b"eth0", b"%lo", b"192.168.1.1", b"00:1A:2B:3C:4D:5E",
                    b"0a1b.2c3d.4e5f", b"2001:db8::1",
                    b"MTIzNDU2Nzg5MDEyMzQ1Njc4.GhIjKl.AbCdEfGhIjKlMnOpQrStUvWxYzAbCdE",
                    "\u{e9}".as_bytes(), b"\xff",
                ]),
                0..60,
            )
        ) {
            let hay: Vec<u8> = parts.concat();
            for (pattern, re, pivot) in pivoted() {
                if let Err(e) = same(pattern, re, pivot, &hay) {
                    proptest::prop_assert!(false, "{}", e);
                }
            }
        }
    }

    #[test]
    fn a_text_dense_in_pivot_bytes_is_searched_by_the_dfa_once_the_budget_is_spent() {
        let re = regex(IPV6);
        let pivot = pivot_of(IPV6).unwrap();
        let hostile: Vec<u8> = ":a:".repeat(40_000).into_bytes();
        let mut search = Search::new(&pivot, None, &re, &hostile);
        let found: Vec<Match> = search.by_ref().collect();
        assert!(search.plain.is_some(), "the budget was spent");
        assert_eq!(found, re.find_iter(&hostile[..]).collect::<Vec<_>>());
        // Prose with the odd colon never spends it.
        let prose = "Note: the host is fe80::1 at 12:30:45, see std::fs. ".repeat(2_000);
        let mut search = Search::new(&pivot, None, &re, prose.as_bytes());
        let found: Vec<Match> = search.by_ref().collect();
        assert!(search.plain.is_none());
        assert_eq!(found, re.find_iter(prose.as_bytes()).collect::<Vec<_>>());
    }
}
