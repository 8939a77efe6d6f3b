//! The keyword prefilter: one Aho-Corasick pass over a field finds every occurrence of every
//! rule keyword (overlaps included, ASCII case ignored), and each occurrence selects the rules
//! that list that keyword. The field is lowered to ASCII lower case first and matched against
//! lower-case keywords, which finds exactly what a case-insensitive automaton would, with an
//! automaton half the size.
//!
//! Two automata answer the same: a noncontiguous NFA, searched as built when the scanner is
//! (3.7 M instructions for the built-in pack), and a DFA, several times faster per byte but
//! costlier to build, built from that NFA once the pack is in a bulk scan (see `work`: it has
//! scanned enough text, or enough fields, to repay it). Which one runs never changes a hit.
//! Either is walked over a long field in several streams at once (see `streams`).

mod streams;

use std::ops::Range;
use std::sync::{Arc, OnceLock};

use aho_corasick::{dfa, nfa::noncontiguous, MatchKind};

use super::rule::{Rule, RuleError};
use super::spare::{Spare, BYTES};
use super::work::Work;
use super::{LINE_SLACK, WINDOW_BEFORE};
/// Fields up to this size are lowered in a buffer on the stack.
pub(super) const SMALL_FIELD: usize = 512;

/// The keyword automata over every rule's keywords (enabled or not), shared by the scanners
/// narrowed from one rule pack.
#[derive(Debug)]
pub(super) struct Keywords {
    /// The rules each lower-case keyword (in pattern order) selects.
    pub rules_of: Vec<Vec<usize>>,
    nfa: Option<noncontiguous::NFA>,
    dfa: OnceLock<Option<dfa::DFA>>,
    /// The pack's work, which the fields scanned here add to: the DFA is built once it is a
    /// bulk scan.
    work: Arc<Work>,
}

impl Keywords {
    /// The keywords of `rules`, counting the fields they scan in `work`; an empty pack, or one
    /// without keywords, has no automaton.
    pub fn new(rules: &[Rule], work: Arc<Work>) -> Result<Keywords, RuleError> {
        let mut patterns: Vec<String> = Vec::new();
        let mut rules_of: Vec<Vec<usize>> = Vec::new();
        // Each keyword's pattern id, in first-seen order (a pack has hundreds of keywords).
        let mut ids: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
        for (ri, r) in rules.iter().enumerate() {
            for k in &r.keywords {
                let k = k.to_ascii_lowercase();
                match ids.get(&k) {
                    Some(&pi) => rules_of[pi].push(ri),
                    None => {
                        ids.insert(k.clone(), patterns.len());
                        patterns.push(k);
                        rules_of.push(vec![ri]);
                    }
                }
            }
        }
        let nfa = if patterns.is_empty() {
            None
        } else {
            Some(
                noncontiguous::Builder::new()
                    .match_kind(MatchKind::Standard)
                    .prefilter(false)
                    .build(&patterns)
                    .map_err(|e| RuleError::Keywords {
                        reason: e.to_string(),
                    })?,
            )
        };
        Ok(Keywords {
            rules_of,
            nfa,
            dfa: OnceLock::new(),
            work,
        })
    }

    /// Builds the DFA now (what a long scan would soon do anyway).
    pub fn build_dfa(&self) {
        self.dfa();
    }

    fn dfa(&self) -> Option<&dfa::DFA> {
        self.dfa
            .get_or_init(|| {
                let nfa = self.nfa.as_ref()?;
                dfa::Builder::new()
                    .match_kind(MatchKind::Standard)
                    .prefilter(false)
                    .build_from_noncontiguous(nfa)
                    .ok()
            })
            .as_ref()
    }

    /// Every `(rule, keyword start)` in `lower` (a field in ASCII lower case, see [`lowered`])
    /// for the rules `selects` lists per keyword, sorted and without repeats.
    pub fn hits(&self, lower: &[u8], selects: &[Vec<usize>]) -> Vec<(usize, usize)> {
        let mut hits: Vec<(usize, usize)> = Vec::new();
        let Some(nfa) = &self.nfa else {
            return hits;
        };
        if lower.is_empty() {
            return hits;
        }
        // Every occurrence of every keyword, overlaps included: a keyword that starts inside
        // another one's hit (`key "` in `apikey "`) still selects its rules.
        let mut found = |pattern: aho_corasick::PatternID, start: usize| {
            if let Some(rules) = selects.get(pattern.as_usize()) {
                hits.extend(rules.iter().map(|&ri| (ri, start)));
            }
        };
        let dfa = match self.dfa.get() {
            Some(Some(dfa)) => Some(dfa),
            // Each call weighs its bytes plus a fixed share, so many tiny fields (the gate's ids
            // and digests) also make a bulk scan.
            _ if self.work.add_field(lower.len()) => self.dfa(),
            _ => None,
        };
        match dfa {
            Some(dfa) => streams::overlapping(dfa, lower, &mut found),
            None => streams::overlapping(nfa, lower, &mut found),
        }
        hits.sort_unstable();
        hits.dedup();
        hits
    }
}

/// `bytes` in ASCII lower case: in `buffer` when it fits (most fields the gate scans are
/// short), else in a spare vector of this thread taken into `spare` (see [`super::spare`]),
/// which goes back to the thread's spares when `spare` drops.
pub(super) fn lowered<'a>(
    bytes: &[u8],
    buffer: &'a mut [u8; SMALL_FIELD],
    spare: &'a mut Option<Spare<u8>>,
) -> &'a [u8] {
    let lower: &'a mut [u8] = match buffer.get_mut(..bytes.len()) {
        Some(small) => {
            small.copy_from_slice(bytes);
            small
        }
        None => {
            let spare = spare.insert(Spare::take(&BYTES));
            spare.extend_from_slice(bytes);
            spare
        }
    };
    lower.make_ascii_lowercase();
    lower
}

/// Merged byte windows around sorted keyword positions, widened to whole lines (bounded).
pub(super) fn windows(
    bytes: &[u8],
    positions: impl Iterator<Item = usize>,
    before: usize,
    after: usize,
) -> Vec<Range<usize>> {
    let widen_start = |p: usize| {
        let start = p.saturating_sub(before);
        if before >= WINDOW_BEFORE {
            line_start(bytes, start)
        } else {
            start
        }
    };
    let raw_end = |p: usize| (p + after).min(bytes.len());
    let mut out: Vec<Range<usize>> = Vec::new();
    // The open window: its start and the unwidened end of its latest position. Widened ends
    // and starts grow with the position, so only where two positions' bare reaches do not
    // touch need the lines be looked at.
    let mut open: Option<(usize, usize)> = None;
    for p in positions {
        open = match open {
            None => Some((widen_start(p), raw_end(p))),
            Some((start, end)) if p.saturating_sub(before) <= end => Some((start, raw_end(p))),
            Some((start, end)) => {
                let widened = line_end(bytes, end);
                let next = widen_start(p);
                if next <= widened {
                    Some((start, raw_end(p)))
                } else {
                    out.push(start..widened);
                    Some((next, raw_end(p)))
                }
            }
        };
    }
    if let Some((start, end)) = open {
        out.push(start..line_end(bytes, end));
    }
    out
}

fn line_start(bytes: &[u8], at: usize) -> usize {
    let floor = at.saturating_sub(LINE_SLACK);
    memchr::memrchr(b'\n', &bytes[floor..at]).map_or(floor, |i| floor + i + 1)
}

fn line_end(bytes: &[u8], at: usize) -> usize {
    let ceil = (at + LINE_SLACK).min(bytes.len());
    memchr::memchr(b'\n', &bytes[at..ceil]).map_or(ceil, |i| at + i)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition: each position's window widened to lines, then merged.
    fn windows_one_by_one(
        bytes: &[u8],
        positions: &[usize],
        before: usize,
        after: usize,
    ) -> Vec<Range<usize>> {
        let mut out: Vec<Range<usize>> = Vec::new();
        for &p in positions {
            let start = if before >= WINDOW_BEFORE {
                line_start(bytes, p.saturating_sub(before))
            } else {
                p.saturating_sub(before)
            };
            let end = line_end(bytes, (p + after).min(bytes.len()));
            match out.last_mut() {
                Some(last) if start <= last.end => last.end = last.end.max(end),
                _ => out.push(start..end),
            }
        }
        out
    }

    #[test]
    fn windows_match_their_one_by_one_definition() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        for _ in 0..3000 {
            let len = 1 + next(3000);
            let bytes: Vec<u8> = (0..len)
                .map(|_| if next(40) == 0 { b'\n' } else { b'a' })
                .collect();
            let mut positions: Vec<usize> = (0..next(30)).map(|_| next(len)).collect();
            positions.sort_unstable();
            positions.dedup();
            let (before, after) = ([0, 16, 96, 160, 4096][next(5)], [0, 40, 320, 2048][next(4)]);
            assert_eq!(
                windows(&bytes, positions.iter().copied(), before, after),
                windows_one_by_one(&bytes, &positions, before, after),
                "{positions:?} {before} {after}"
            );
        }
    }

    #[test]
    fn both_automata_find_the_same_hits_in_any_case() {
        let scanner = super::super::Scanner::builtin().unwrap();
        let work = Arc::new(Work::default());
        let k = Keywords::new(scanner.rules(), Arc::clone(&work)).unwrap();
        let text = b"The API_KEY=x and apikey \"y\"; Password: z; ghp_ token PASS_WORD";
        let hits =
            |text: &[u8]| k.hits(lowered(text, &mut [0; SMALL_FIELD], &mut None), &k.rules_of);
        // A long text, walked in streams: the text's hits at each copy's offset.
        let line = [&text[..], b"\n"].concat();
        let long = line.repeat(41);
        let step = line.len();
        let mut each: Vec<(usize, usize)> = (0..41)
            .flat_map(|copy| {
                hits(text)
                    .into_iter()
                    .map(move |(r, at)| (r, at + copy * step))
            })
            .collect();
        each.sort_unstable();
        let nfa = hits(text);
        let nfa_long = hits(&long);
        k.build_dfa();
        work.set_bulk();
        let dfa = hits(text);
        assert!(!nfa.is_empty());
        assert_eq!(nfa, dfa);
        let upper = hits(&text.to_ascii_uppercase());
        assert_eq!(nfa, upper);
        assert_eq!(nfa_long, each);
        assert_eq!(hits(&long), each);
    }
}
