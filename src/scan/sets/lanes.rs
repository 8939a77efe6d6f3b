//! The side-by-side walk of a set's lazy DFA over many windows (see the module docs of `sets`).
//!
//! Each lane walks one window from the DFA's start state for that window, notes the patterns of
//! every match state it passes (matches show one byte late, so the walk ends with the DFA's
//! end-of-input step), and takes the next window when its own ends. While every lane is in an
//! ordinary state and its next state is already computed, the lanes step together without
//! touching the cache; a lane whose next state is special (not computed yet, a match) steps on
//! its own. The lanes share the one cache of computed states: a cache cleared while one lane
//! computes a new state makes the others' states stale, and they start their windows again
//! (what they noted holds). A DFA that gives up (its cache cleared too often for the bytes it
//! reads) leaves every window not yet answered to the caller, as one that will not read a byte
//! (a quit state) leaves its window.

use regex_automata::hybrid::dfa::{Cache, DFA};
use regex_automata::hybrid::LazyStateID;
use regex_automata::Input;

/// How many windows are walked side by side.
const LANES: usize = 4;

/// How many cache clears one call starts lanes over after, before it gives up.
const MAX_CLEARS: usize = 8;

/// The DFA gave up: every window not answered yet is left to the caller.
struct GaveUp;

/// Walks `dfa` over each of `windows`, adding to `answers[i]` the patterns with a match in
/// `windows[i]` (in set order, each once); gives the windows it could not answer.
pub(super) fn walk(
    dfa: &DFA,
    cache: &mut Cache,
    windows: &[&[u8]],
    answers: &mut [Vec<usize>],
) -> Vec<usize> {
    let clears = cache.clear_count();
    let mut walk = Walk {
        dfa,
        cache,
        windows,
        answers,
        clears,
        unwalked: Vec::new(),
        next: 0,
        walked: 0,
        lanes: Lanes {
            window: [0; LANES],
            at: [0; LANES],
            state: [LazyStateID::default(); LANES],
            live: [false; LANES],
        },
    };
    walk.cache.search_start(0);
    let result = walk.run();
    walk.cache.search_finish(walk.walked);
    let mut unwalked = std::mem::take(&mut walk.unwalked);
    if let Err(GaveUp) = result {
        let lanes = &walk.lanes;
        unwalked.extend(
            (0..LANES)
                .filter(|&k| lanes.live[k])
                .map(|k| lanes.window[k]),
        );
        unwalked.extend(walk.next..windows.len());
    }
    for answer in answers.iter_mut() {
        answer.sort_unstable();
    }
    unwalked.sort_unstable();
    unwalked.dedup();
    unwalked
}

/// The lanes: the window each walks, how far it has walked, the DFA's state there, and
/// whether it walks one at all.
struct Lanes {
    window: [usize; LANES],
    at: [usize; LANES],
    state: [LazyStateID; LANES],
    live: [bool; LANES],
}

struct Walk<'a, 'w> {
    dfa: &'a DFA,
    cache: &'a mut Cache,
    windows: &'a [&'w [u8]],
    answers: &'a mut [Vec<usize>],
    /// The cache's clear count the lanes' states were computed under.
    clears: usize,
    unwalked: Vec<usize>,
    /// The next window no lane has taken.
    next: usize,
    /// The bytes walked, for the cache's measure of how well it serves.
    walked: usize,
    lanes: Lanes,
}

impl Walk<'_, '_> {
    fn run(&mut self) -> Result<(), GaveUp> {
        loop {
            for k in 0..LANES {
                if !self.lanes.live[k] {
                    self.take(k)?;
                }
            }
            if !self.lanes.live.iter().any(|&l| l) {
                return Ok(());
            }
            let windows = self.windows;
            let left = |lanes: &Lanes, k: usize| windows[lanes.window[k]].len() - lanes.at[k];
            let live = self.lanes.live;
            if live.iter().all(|&l| l) {
                // As many steps as every lane can take before one reaches its window's end.
                let steps = (0..LANES).map(|k| left(&self.lanes, k)).min().unwrap_or(0);
                self.together(steps)?;
                self.walked += steps * LANES;
            } else {
                // No window is left to take: each lane walks the rest of its own alone.
                for k in (0..LANES).filter(|&k| live[k]) {
                    self.walked += left(&self.lanes, k);
                    self.alone(k)?;
                }
            }
            self.cache.search_update(self.walked);
            for k in 0..LANES {
                let (window, at) = (self.lanes.window[k], self.lanes.at[k]);
                if self.lanes.live[k] && at == self.windows[window].len() {
                    self.finish(k)?;
                }
            }
        }
    }

    /// Lane `k` to its window's end, stepping without the cache while its next state is
    /// computed and ordinary.
    fn alone(&mut self, k: usize) -> Result<(), GaveUp> {
        let hay = self.windows[self.lanes.window[k]];
        loop {
            let (mut at, mut state) = (self.lanes.at[k], self.lanes.state[k]);
            if !state.is_tagged() {
                while let Some(&byte) = hay.get(at) {
                    let next = self.dfa.next_state_untagged(self.cache, state, byte);
                    if next.is_tagged() {
                        break;
                    }
                    state = next;
                    at += 1;
                }
                self.lanes.at[k] = at;
                self.lanes.state[k] = state;
            }
            if at >= hay.len() {
                return Ok(());
            }
            self.step(k)?;
        }
    }

    /// `steps` steps of every lane, side by side while no lane meets a special state, one by
    /// one for a step where one does.
    fn together(&mut self, steps: usize) -> Result<(), GaveUp> {
        let mut done = 0;
        while done < steps {
            let todo = steps - done;
            let at = self.lanes.at;
            let windows = self.lanes.window;
            let hays: [&[u8]; LANES] =
                std::array::from_fn(|k| &self.windows[windows[k]][at[k]..at[k] + todo]);
            let mut state = self.lanes.state;
            let mut i = 0;
            while i < todo && !state.iter().any(LazyStateID::is_tagged) {
                let next: [LazyStateID; LANES] = std::array::from_fn(|k| {
                    self.dfa
                        .next_state_untagged(self.cache, state[k], hays[k][i])
                });
                if next.iter().any(LazyStateID::is_tagged) {
                    break;
                }
                state = next;
                i += 1;
            }
            self.lanes.state = state;
            for (a, &from) in self.lanes.at.iter_mut().zip(&at) {
                *a = from + i;
            }
            done += i;
            if i < todo {
                for k in 0..LANES {
                    self.step(k)?;
                }
                done += 1;
            }
        }
        Ok(())
    }

    /// One step of lane `k`, computing its next state if need be.
    fn step(&mut self, k: usize) -> Result<(), GaveUp> {
        let (window, at) = (self.lanes.window[k], self.lanes.at[k]);
        let byte = self.windows[window][at];
        let state = self
            .dfa
            .next_state(self.cache, self.lanes.state[k], byte)
            .map_err(|_| GaveUp)?;
        self.lanes.state[k] = state;
        self.lanes.at[k] = at + 1;
        self.check(k)?;
        if state.is_match() {
            self.note(window, state);
        }
        if state.is_quit() && !self.unwalked.contains(&window) {
            self.unwalked.push(window);
        }
        Ok(())
    }

    /// Lane `k` at its window's end: the end-of-input step, and the lane is free.
    fn finish(&mut self, k: usize) -> Result<(), GaveUp> {
        let state = self.lanes.state[k];
        if !state.is_dead() && !state.is_quit() {
            let end = self
                .dfa
                .next_eoi_state(self.cache, state)
                .map_err(|_| GaveUp)?;
            self.lanes.state[k] = end;
            self.check(k)?;
            self.note(self.lanes.window[k], end);
        }
        self.lanes.live[k] = false;
        Ok(())
    }

    /// Lane `k` takes the next window not taken yet, if any, at its start.
    fn take(&mut self, k: usize) -> Result<(), GaveUp> {
        let Some(&hay) = self.windows.get(self.next) else {
            return Ok(());
        };
        let window = self.next;
        self.next += 1;
        let state = self
            .dfa
            .start_state_forward(self.cache, &Input::new(hay))
            .map_err(|_| GaveUp)?;
        self.lanes.window[k] = window;
        self.lanes.at[k] = 0;
        self.lanes.state[k] = state;
        self.lanes.live[k] = true;
        self.check(k)?;
        self.note(window, state);
        Ok(())
    }

    /// After lane `k` computed its state: if that cleared the cache, every other live lane's
    /// state is stale, and it starts its window again (should that clear the cache once more,
    /// every lane does).
    fn check(&mut self, k: usize) -> Result<(), GaveUp> {
        let mut keep = Some(k);
        while self.cache.clear_count() != self.clears {
            self.clears = self.cache.clear_count();
            if self.clears > MAX_CLEARS {
                return Err(GaveUp);
            }
            for j in (0..LANES).filter(|&j| self.lanes.live[j] && Some(j) != keep) {
                let hay = self.windows[self.lanes.window[j]];
                self.lanes.state[j] = self
                    .dfa
                    .start_state_forward(self.cache, &Input::new(hay))
                    .map_err(|_| GaveUp)?;
                self.lanes.at[j] = 0;
            }
            keep = None;
        }
        Ok(())
    }

    /// Notes the patterns of `state` (when a match state) for `window`.
    fn note(&mut self, window: usize, state: LazyStateID) {
        if !state.is_match() {
            return;
        }
        for i in 0..self.dfa.match_len(self.cache, state) {
            let pattern = self.dfa.match_pattern(self.cache, state, i).as_usize();
            if !self.answers[window].contains(&pattern) {
                self.answers[window].push(pattern);
            }
        }
    }
}
