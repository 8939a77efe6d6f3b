//! Every occurrence of every keyword in a text, overlaps included, found in several streams at
//! once. An automaton's search reads a byte, looks up the next state and only then can read the
//! next: each step waits on the last, whatever the automaton's size (about 2 ns a byte on the
//! machines measured, as fast for ten keywords as for five hundred). Cut into [`STREAMS`] parts,
//! a text is searched by as many independent walks side by side, which the processor overlaps.
//! Each walk starts the longest keyword's length less one byte before its part, so it reaches
//! its part in the state a walk over the whole text would be in there (an Aho-Corasick state
//! depends only on that many bytes before it), and reports only the occurrences that end in its
//! part: together, exactly those of one walk over the whole text.

use aho_corasick::automaton::{Automaton, StateID};
use aho_corasick::{Anchored, PatternID};

/// How many walks go side by side.
const STREAMS: usize = 4;

/// Calls `found` with the pattern and start of every occurrence of every pattern of `aut` (an
/// automaton for unanchored searches) in `hay`, overlaps included, in no particular order.
pub(super) fn overlapping<A: Automaton>(
    aut: &A,
    hay: &[u8],
    found: &mut dyn FnMut(PatternID, usize),
) {
    let Ok(start) = aut.start_state(Anchored::No) else {
        return;
    };
    let lead = aut.max_pattern_len().saturating_sub(1);
    let part = hay.len().div_ceil(STREAMS);
    // An empty pattern occurs before any byte is read; short texts are not worth cutting.
    if aut.is_match(start) || part < 4 * lead + 64 {
        report(aut, start, 0, found);
        walk(aut, start, hay, 0, found);
        return;
    }
    // Part k owns the occurrences that end in `k * part + 1 ..= (k + 1) * part`.
    let mut states = [start; STREAMS];
    for (k, state) in states.iter_mut().enumerate().skip(1) {
        for &b in &hay[k * part - lead..k * part] {
            *state = aut.next_state(Anchored::No, *state, b);
        }
    }
    // The last part may be shorter: all walk its length side by side, then each its rest.
    let common = hay.len() - (STREAMS - 1) * part;
    let parts: [&[u8]; STREAMS] = std::array::from_fn(|k| &hay[k * part..k * part + common]);
    // Byte `i` of every part, side by side.
    #[allow(clippy::needless_range_loop)]
    for i in 0..common {
        let mut special = false;
        for k in 0..STREAMS {
            states[k] = aut.next_state(Anchored::No, states[k], parts[k][i]);
            special |= aut.is_special(states[k]);
        }
        if special {
            for (k, &state) in states.iter().enumerate() {
                report(aut, state, k * part + i + 1, found);
            }
        }
    }
    for (k, &state) in states.iter().enumerate().take(STREAMS - 1) {
        let rest = k * part + common..(k + 1) * part;
        walk(aut, state, &hay[rest.clone()], rest.start, found);
    }
}

/// One walk over `hay` (which starts at `offset` of the text) from `state`, reporting the
/// occurrences that end after its first byte.
fn walk<A: Automaton>(
    aut: &A,
    mut state: StateID,
    hay: &[u8],
    offset: usize,
    found: &mut dyn FnMut(PatternID, usize),
) {
    for (i, &b) in hay.iter().enumerate() {
        state = aut.next_state(Anchored::No, state, b);
        if aut.is_special(state) {
            report(aut, state, offset + i + 1, found);
        }
    }
}

/// The occurrences that end at `end` when the walk is in `state`.
fn report<A: Automaton>(
    aut: &A,
    state: StateID,
    end: usize,
    found: &mut dyn FnMut(PatternID, usize),
) {
    if !aut.is_match(state) {
        return;
    }
    for i in 0..aut.match_len(state) {
        let pattern = aut.match_pattern(state, i);
        found(pattern, end - aut.pattern_len(pattern));
    }
}

#[cfg(test)]
mod tests {
    use aho_corasick::{dfa, nfa::noncontiguous, AhoCorasick, MatchKind};

    use super::*;

    /// Every (pattern, start) by the library's own overlapping search, sorted.
    fn expected(patterns: &[&str], hay: &[u8]) -> Vec<(usize, usize)> {
        let ac = AhoCorasick::builder()
            .match_kind(MatchKind::Standard)
            .build(patterns)
            .unwrap();
        let mut out: Vec<(usize, usize)> = ac
            .find_overlapping_iter(hay)
            .map(|m| (m.pattern().as_usize(), m.start()))
            .collect();
        out.sort_unstable();
        out
    }

    fn streamed<A: Automaton>(aut: &A, hay: &[u8]) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        overlapping(aut, hay, &mut |p, start| out.push((p.as_usize(), start)));
        out.sort_unstable();
        out
    }

    fn check(patterns: &[&str], hay: &[u8]) -> Result<(), String> {
        let want = expected(patterns, hay);
        // As the keyword prefilter builds them: the DFA from the NFA.
        let nfa = noncontiguous::Builder::new()
            .match_kind(MatchKind::Standard)
            .prefilter(false)
            .build(patterns)
            .unwrap();
        let dfa = dfa::Builder::new()
            .match_kind(MatchKind::Standard)
            .prefilter(false)
            .build_from_noncontiguous(&nfa)
            .unwrap();
        for (name, got) in [("dfa", streamed(&dfa, hay)), ("nfa", streamed(&nfa, hay))] {
            if got != want {
                return Err(format!("{name} {patterns:?} on {} bytes", hay.len()));
            }
        }
        Ok(())
    }

    #[test]
    fn the_streams_find_every_occurrence_one_walk_finds() {
        let patterns = [
            "key", "apikey", "key ", "pass", "password", "a", "aaaa", "://", "==",
        ];
        let text = "The APIKEY = x; password: y; aaaaaa https://x == key key".to_lowercase();
        // Long enough to be cut into streams, with occurrences across every cut.
        for copies in [1, 7, 64, 257] {
            let hay = text.repeat(copies);
            check(&patterns, hay.as_bytes()).unwrap();
        }
        // An empty pattern occurs at every position, the first included.
        check(&["", "ab"], b"abcab").unwrap();
        check(&["", "ab"], "xab".repeat(500).as_bytes()).unwrap();
    }

    proptest::proptest! {
        #![proptest_config(crate::scan::unsaved_proptest())]
        #[test]
        fn streams_find_what_the_library_finds(
            parts in proptest::collection::vec(
                proptest::sample::select(vec!["a", "b", "ab", "ba", "key", "k", "e", "y", " ", "\n"]),
                0..2000,
            ),
            patterns in proptest::collection::vec(
                proptest::sample::select(vec!["a", "ab", "bab", "key", "ey", "aaaa", "y k", "babab"]),
                1..6,
            ),
        ) {
            let hay: String = parts.concat();
            if let Err(e) = check(&patterns, hay.as_bytes()) {
                proptest::prop_assert!(false, "{}", e);
            }
        }
    }
}
