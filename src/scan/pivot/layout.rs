//! Reading a pivot's layout from a regex's syntax tree: where in a match its first pivot byte
//! can stand, how far after it the second one stands, and which bytes a match can hold at each
//! offset and start with. Every answer holds for every match the regex can make (it may allow
//! more); where that cannot be told within 64 bytes, there is no answer.

use regex_syntax::hir::{Class, Hir, HirKind, Look, Repetition};

/// Bit `i` of a mask: offset (or distance) `i`, below 64.
pub(super) type Mask = u64;

/// Where the pivot bytes stand in the matches of a regex.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Layout {
    /// The offsets from a match's start at which its first pivot byte can stand.
    pub first: Mask,
    /// The distances from the first pivot byte to the second, when every match holds two.
    pub second: Option<Mask>,
}

/// The paths through a regex so far: those that have met no pivot byte, by offset from the
/// match's start, and those that have met one, by distance from it (1: the byte after it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Paths {
    none: Mask,
    one: Mask,
}

impl Paths {
    fn or(self, other: Paths) -> Paths {
        Paths {
            none: self.none | other.none,
            one: self.one | other.one,
        }
    }
}

/// A walk over a regex for one set of pivot bytes.
struct Walk<'a> {
    pivot: &'a [bool; 256],
    first: Mask,
    second: Mask,
    /// A path went past 64 bytes without its first (`lost_none`) or second pivot byte.
    lost_none: bool,
    lost_one: bool,
}

/// Where the bytes of `pivot` stand in every match of `hir`, or `None` when some match holds
/// none of them within its first 64 bytes.
pub(super) fn layout(hir: &Hir, pivot: &[bool; 256]) -> Option<Layout> {
    let mut walk = Walk {
        pivot,
        first: 0,
        second: 0,
        lost_none: false,
        lost_one: false,
    };
    let end = walk.walk(hir, Paths { none: 1, one: 0 });
    if end.none != 0 || walk.lost_none || walk.first == 0 {
        return None;
    }
    let second = (end.one == 0 && !walk.lost_one).then_some(walk.second);
    Some(Layout {
        first: walk.first,
        second,
    })
}

impl Walk<'_> {
    fn shift(&mut self, paths: Paths, n: u32) -> Paths {
        let keep = |mask: Mask| if n >= 64 { 0 } else { mask << n };
        let lost = |mask: Mask| mask != 0 && (n >= 64 || mask.leading_zeros() < n);
        self.lost_none |= lost(paths.none);
        self.lost_one |= lost(paths.one);
        Paths {
            none: keep(paths.none),
            one: keep(paths.one),
        }
    }

    /// One byte from a set of which `pivot_bytes` and `other_bytes` say whether it holds pivot
    /// bytes and other bytes.
    fn byte(&mut self, paths: Paths, pivot_bytes: bool, other_bytes: bool) -> Paths {
        let mut out = Paths::default();
        if other_bytes {
            out = self.shift(paths, 1);
        }
        if pivot_bytes {
            self.first |= paths.none;
            self.second |= paths.one;
            if paths.none != 0 {
                out.one |= 1 << 1;
            }
        }
        out
    }

    fn walk(&mut self, hir: &Hir, paths: Paths) -> Paths {
        if paths == Paths::default() {
            return paths;
        }
        match hir.kind() {
            HirKind::Empty | HirKind::Look(_) => paths,
            HirKind::Literal(lit) => lit.0.iter().fold(paths, |cur, &b| {
                let pivot = self.pivot[usize::from(b)];
                self.byte(cur, pivot, !pivot)
            }),
            HirKind::Class(class) => {
                let (ascii, wide) = ranges(class);
                let pivot = ascii
                    .iter()
                    .any(|&(lo, hi)| (lo..=hi).any(|b| self.pivot[b]));
                let other = ascii
                    .iter()
                    .any(|&(lo, hi)| (lo..=hi).any(|b| !self.pivot[b]));
                let mut out = self.byte(paths, pivot, other || wide.bytes_only);
                if wide.chars {
                    // A character of two to four bytes, none of them ASCII.
                    for n in 2..=4 {
                        let shifted = self.shift(paths, n);
                        out = out.or(shifted);
                    }
                }
                out
            }
            HirKind::Capture(c) => self.walk(&c.sub, paths),
            HirKind::Concat(parts) => parts.iter().fold(paths, |cur, p| self.walk(p, cur)),
            HirKind::Alternation(alts) => alts
                .iter()
                .fold(Paths::default(), |ends, a| ends.or(self.walk(a, paths))),
            HirKind::Repetition(r) => repeat(r, paths, Paths::or, |cur| self.walk(&r.sub, cur)),
        }
    }
}

/// Where the repetitions of `r` end, from paths `start` (one of the masks of a walk), given
/// where one repetition of its body ends from given paths (`step`) and how ends join (`or`).
/// Each repetition moves a path on by a byte or more, unless it can match nothing; past 130
/// every path has gone beyond 64 bytes or stopped changing.
fn repeat<T: Copy + Default + PartialEq>(
    r: &Repetition,
    start: T,
    or: impl Fn(T, T) -> T,
    mut step: impl FnMut(T) -> T,
) -> T {
    let mut ends = if r.min == 0 { start } else { T::default() };
    let mut cur = start;
    for i in 1..=r.max.unwrap_or(u32::MAX).min(130) {
        let next = step(cur);
        if i >= r.min {
            ends = or(ends, next);
        }
        if next == cur {
            // The body matches nothing more along these paths: every further repetition ends
            // where this one does.
            return or(ends, next);
        }
        if next == T::default() {
            break;
        }
        cur = next;
    }
    ends
}

/// What a class holds beyond ASCII.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Wide {
    /// Characters above ASCII (a Unicode class: two to four bytes each).
    pub chars: bool,
    /// Single bytes from 0x80 up (a byte class).
    pub bytes_only: bool,
}

/// A class's ASCII ranges, and what it holds beyond ASCII.
pub(super) fn ranges(class: &Class) -> (Vec<(usize, usize)>, Wide) {
    let mut ascii = Vec::new();
    let mut wide = Wide::default();
    let mut add = |lo: u32, hi: u32, unicode: bool| {
        if lo < 0x80 {
            ascii.push((lo as usize, hi.min(0x7f) as usize));
        }
        if hi >= 0x80 {
            if unicode {
                wide.chars = true;
            } else {
                wide.bytes_only = true;
            }
        }
    };
    match class {
        Class::Bytes(c) => c
            .ranges()
            .iter()
            .for_each(|r| add(u32::from(r.start()), u32::from(r.end()), false)),
        Class::Unicode(c) => c
            .ranges()
            .iter()
            .for_each(|r| add(u32::from(r.start()), u32::from(r.end()), true)),
    }
    (ascii, wide)
}

/// The most bytes an anchored search for `hir` can read from a start where no match begins:
/// it reads on while what it read can still begin a match, and once every part a match
/// needs has matched, it has found one. `None` when unbounded.
pub(super) fn reach(hir: &Hir) -> Option<usize> {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => Some(0),
        HirKind::Literal(_) | HirKind::Class(_) => hir.properties().maximum_len(),
        HirKind::Capture(c) => reach(&c.sub),
        HirKind::Alternation(alts) => alts
            .iter()
            .map(reach)
            .try_fold(0, |most, r| Some(most.max(r?))),
        HirKind::Repetition(r) => {
            if r.min == 0 {
                return Some(0);
            }
            let each = r.sub.properties().maximum_len()?;
            let before = usize::try_from(r.min - 1).ok()?.checked_mul(each)?;
            before.checked_add(reach(&r.sub)?)
        }
        HirKind::Concat(parts) => {
            // The parts up to the last one a match needs: after it, a match is found.
            let needed = parts
                .iter()
                .rposition(|p| p.properties().minimum_len().is_some_and(|n| n > 0));
            let Some(last) = needed else {
                return Some(0);
            };
            let before = parts[..last].iter().try_fold(0usize, |sum, p| {
                sum.checked_add(p.properties().maximum_len()?)
            })?;
            before.checked_add(reach(&parts[last])?)
        }
    }
}

/// The bytes the matches of `hir` can hold at each offset below `len` (at most 64).
pub(super) fn offset_bytes(hir: &Hir, len: usize) -> Vec<[bool; 256]> {
    let mut at = vec![[false; 256]; len.min(64)];
    bytes_at(hir, 1, &mut at);
    at
}

/// Records in `at` the bytes `hir` can hold at each offset when it starts at any offset of
/// `starts`, and gives the offsets where it can end. Offsets past those `at` holds are dropped.
fn bytes_at(hir: &Hir, starts: Mask, at: &mut [[bool; 256]]) -> Mask {
    if starts == 0 {
        return 0;
    }
    let mut record = |starts: Mask, lo: usize, hi: usize| {
        for k in (0..at.len()).filter(|&k| starts >> k & 1 == 1) {
            at[k][lo..=hi].fill(true);
        }
    };
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => starts,
        HirKind::Literal(lit) => lit.0.iter().fold(starts, |cur, &b| {
            record(cur, usize::from(b), usize::from(b));
            cur << 1
        }),
        HirKind::Class(class) => {
            let (ascii, wide) = ranges(class);
            for (lo, hi) in ascii {
                record(starts, lo, hi);
            }
            let mut ends = starts << 1;
            if wide.bytes_only || wide.chars {
                record(starts, 0x80, 0xff);
            }
            if wide.chars {
                for n in 1..4 {
                    record(starts << n, 0x80, 0xff);
                    ends |= starts << (n + 1);
                }
            }
            ends
        }
        HirKind::Capture(c) => bytes_at(&c.sub, starts, at),
        HirKind::Concat(parts) => parts.iter().fold(starts, |cur, p| bytes_at(p, cur, at)),
        HirKind::Alternation(alts) => alts
            .iter()
            .fold(0, |ends, a| ends | bytes_at(a, starts, at)),
        HirKind::Repetition(r) => repeat(r, starts, |a, b| a | b, |cur| bytes_at(&r.sub, cur, at)),
    }
}

/// The bytes a match can start with, by what stands before the start: nothing (the start of the
/// haystack), a word byte or another byte (ASCII word bytes: letters, digits, `_`). Leading
/// assertions narrow them: `^` holds only at the start, `\b` only where the word class
/// changes. Each set holds every byte a match can start with there (it may hold more).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Starts {
    at_start: [bool; 256],
    after_word: [bool; 256],
    after_other: [bool; 256],
}

impl Starts {
    /// `None` when a match can be empty.
    pub fn of(hir: &Hir) -> Option<Starts> {
        let set = |before: Before| {
            let mut set = [false; 256];
            let empty = add_first_bytes(hir, before, &[true; 256], &mut set);
            empty.is_none().then_some(set)
        };
        Some(Starts {
            at_start: set(Before::Nothing)?,
            after_word: set(Before::Word)?,
            after_other: set(Before::Other)?,
        })
    }

    /// Whether a match can start at `start` of `hay` (a byte of it).
    pub fn can_start(&self, hay: &[u8], start: usize) -> bool {
        let set = match start.checked_sub(1).and_then(|i| hay.get(i)) {
            None => &self.at_start,
            Some(&b) if is_word(b) => &self.after_word,
            Some(_) => &self.after_other,
        };
        hay.get(start).is_some_and(|&b| set[usize::from(b)])
    }
}

/// What stands before a match's start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Before {
    Nothing,
    Word,
    Other,
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The bytes after a zero-width assertion at a match's start, given what stands before it
/// (`None`: it cannot hold there). Unicode word boundaries and line anchors are taken to allow
/// anything they might.
fn after_look(look: Look, before: Before) -> Option<[bool; 256]> {
    let word = || std::array::from_fn(|b| is_word(b as u8));
    let other = || std::array::from_fn(|b| !is_word(b as u8));
    let prev_word = before == Before::Word;
    match look {
        Look::Start if before != Before::Nothing => None,
        Look::WordAscii if prev_word => Some(other()),
        Look::WordAscii => Some(word()),
        Look::WordAsciiNegate if prev_word => Some(word()),
        Look::WordAsciiNegate => Some(other()),
        Look::WordStartAscii if prev_word => None,
        Look::WordStartAscii => Some(word()),
        Look::WordEndAscii if prev_word => Some(other()),
        Look::WordEndAscii => None,
        Look::WordStartHalfAscii if prev_word => None,
        Look::WordEndHalfAscii => Some(other()),
        _ => Some([true; 256]),
    }
}

/// Adds to `set` the bytes of `allowed` a match of `hir` can start with, given what stands
/// before it. When a match of `hir` can be empty, gives the bytes what follows `hir` can then
/// start with (`allowed`, narrowed by the assertions on that way through it).
fn add_first_bytes(
    hir: &Hir,
    before: Before,
    allowed: &[bool; 256],
    set: &mut [bool; 256],
) -> Option<[bool; 256]> {
    let mut add = |lo: usize, hi: usize| {
        for b in lo..=hi {
            set[b] |= allowed[b];
        }
    };
    match hir.kind() {
        HirKind::Empty => Some(*allowed),
        // An assertion that cannot hold here ends this way through the regex.
        HirKind::Look(look) => {
            let after = after_look(*look, before)?;
            Some(std::array::from_fn(|b| allowed[b] && after[b]))
        }
        HirKind::Literal(lit) => match lit.0.first() {
            Some(&b) => {
                add(usize::from(b), usize::from(b));
                None
            }
            None => Some(*allowed),
        },
        HirKind::Class(class) => {
            let (ascii, wide) = ranges(class);
            for (lo, hi) in ascii {
                add(lo, hi);
            }
            if wide.chars || wide.bytes_only {
                add(0x80, 0xff);
            }
            None
        }
        HirKind::Capture(c) => add_first_bytes(&c.sub, before, allowed, set),
        HirKind::Repetition(r) => {
            let through = add_first_bytes(&r.sub, before, allowed, set);
            if r.min > 0 {
                return through;
            }
            // Zero repetitions leave what follows as it was.
            Some(through.map_or(*allowed, |t| std::array::from_fn(|b| allowed[b] || t[b])))
        }
        HirKind::Alternation(alts) => {
            let mut through: Option<[bool; 256]> = None;
            for a in alts {
                if let Some(t) = add_first_bytes(a, before, allowed, set) {
                    let sum = through.get_or_insert([false; 256]);
                    for (s, b) in sum.iter_mut().zip(t) {
                        *s |= b;
                    }
                }
            }
            through
        }
        HirKind::Concat(parts) => {
            let mut allowed = *allowed;
            for part in parts {
                allowed = add_first_bytes(part, before, &allowed, set)?;
            }
            Some(allowed)
        }
    }
}
