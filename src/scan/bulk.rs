//! Bulk scanning on every core: a large text is split on line boundaries into chunks that are
//! scanned in parallel on the caller's rayon pool, each with a margin of context on both sides,
//! and each finding is kept by the one chunk whose core holds its start, its span mapped back to
//! the whole text. The layout depends on the text alone, never on the number of threads, so
//! the findings (and their order) are the same with one thread or many.
//!
//! The margins (16 KiB) are wider than any rule's reach apart from private-key blocks, so a
//! chunked scan finds what scanning the text whole finds, except where a match or a run of
//! overlapping keyword windows is longer than a margin (a PEM block over 16 KiB).

use std::ops::Range;
use std::sync::{Mutex, PoisonError};

use super::pass::{Found, Part};
use super::{Finding, Scanner};

/// The parts of a scan, in the order a thread takes them.
const PARTS: [Part; 3] = [Part::Keyword, Part::Keywordless, Part::Views];
/// The groups of threads: the keyword part alone, and the keywordless rules with the joined
/// views, about as much work on the bench corpus.
const GROUPS: usize = 2;

/// The group of threads that scans `part` first.
fn group_of(part: Part) -> usize {
    match part {
        Part::Keyword => 0,
        Part::Keywordless | Part::Views => 1,
    }
}

/// The size a chunk's core aims at.
pub const CHUNK_BYTES: usize = 1 << 20;
/// Texts up to this size are scanned whole, as one field.
pub const SPLIT_ABOVE: usize = 2 * CHUNK_BYTES;
/// Context scanned before and after each chunk's core.
pub const MARGIN_BYTES: usize = 16 << 10;
/// How far a boundary may move to reach a line start before it settles on any character.
const LINE_REACH: usize = 64 << 10;

/// One piece of a chunked text: the bytes it owns, and the bytes it scans (the core with its
/// margins).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    pub core: Range<usize>,
    pub scan: Range<usize>,
}

/// The chunks of `text`: one covering it all up to [`SPLIT_ABOVE`] bytes; beyond, cores of
/// about [`CHUNK_BYTES`] that start at line starts and cover the text without overlap.
pub fn chunks(text: &str) -> Vec<Chunk> {
    let len = text.len();
    if len <= SPLIT_ABOVE {
        return vec![Chunk {
            core: 0..len,
            scan: 0..len,
        }];
    }
    let mut starts = vec![0];
    let mut at = CHUNK_BYTES;
    while at + CHUNK_BYTES / 2 < len {
        let start = line_start_after(text, at);
        if start >= len {
            break;
        }
        if start > starts.last().copied().unwrap_or(0) {
            starts.push(start);
        }
        at = start + CHUNK_BYTES;
    }
    let mut out = Vec::with_capacity(starts.len());
    for (i, &start) in starts.iter().enumerate() {
        let end = starts.get(i + 1).copied().unwrap_or(len);
        let scan_start = line_start_before(text, start.saturating_sub(MARGIN_BYTES));
        let scan_end = line_start_after(text, (end + MARGIN_BYTES).min(len));
        out.push(Chunk {
            core: start..end,
            scan: scan_start..scan_end.max(end),
        });
    }
    out
}

/// The first line start at or after `at` (within [`LINE_REACH`]), else the next character
/// boundary.
fn line_start_after(text: &str, at: usize) -> usize {
    let bytes = text.as_bytes();
    if at == 0 || at >= bytes.len() || bytes.get(at - 1) == Some(&b'\n') {
        return at.min(bytes.len());
    }
    let reach = (at + LINE_REACH).min(bytes.len());
    match bytes[at..reach].iter().position(|&b| b == b'\n') {
        Some(i) => at + i + 1,
        None => ceil_char_boundary(text, at),
    }
}

/// The last line start at or before `at` (within [`LINE_REACH`]), else the previous character
/// boundary.
fn line_start_before(text: &str, at: usize) -> usize {
    let bytes = text.as_bytes();
    if at == 0 || bytes.get(at - 1) == Some(&b'\n') {
        return at;
    }
    let floor = at.saturating_sub(LINE_REACH);
    match bytes[floor..at].iter().rposition(|&b| b == b'\n') {
        Some(i) => floor + i + 1,
        None if floor == 0 => 0,
        None => super::floor_char_boundary(text, at),
    }
}

fn ceil_char_boundary(text: &str, mut i: usize) -> usize {
    while i < text.len() && !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

impl Scanner {
    /// Scans `text` as [`chunks`] in parallel (on the current rayon pool) and returns its
    /// findings with spans into `text`, ordered as [`Scanner::scan_text`] orders them. A text
    /// of up to [`SPLIT_ABOVE`] bytes is one chunk, which is exactly `scan_text`.
    pub fn scan_chunked(&self, field_path: &str, text: &str) -> Vec<Finding> {
        let layout = chunks(text);
        if let [only] = layout.as_slice() {
            if only.scan == (0..text.len()) {
                return self.scan_text(field_path, text);
            }
        }
        let parts: Vec<&str> = layout
            .iter()
            .map(|c| text.get(c.scan.clone()).unwrap_or_default())
            .collect();
        let by_chunk = self.scan_parts(&parts, |i, found| {
            self.chunk_findings(field_path, &layout[i], found)
        });
        // Moved, not cloned as `concat` would: two strings per finding.
        let mut out = Vec::with_capacity(by_chunk.iter().map(Vec::len).sum());
        for findings in by_chunk {
            out.extend(findings);
        }
        out
    }

    /// Scans each of `fields` (field path, text) as [`Scanner::scan_text`] would, on every
    /// thread of the current pool, the parts of each scan as tasks of their own (see
    /// [`Scanner::scan_parts`]). The findings come in the order of `fields`.
    pub fn scan_texts(&self, fields: &[(&str, &str)]) -> Vec<Vec<Finding>> {
        let texts: Vec<&str> = fields.iter().map(|&(_, text)| text).collect();
        self.scan_parts(&texts, |i, found| self.findings_of(fields[i].0, found))
    }

    /// `finish` of what every part (see [`Part`]) of the scan of each text finds, on every
    /// thread of the current pool, in the order of `texts`. Threads alternate between two groups
    /// of parts, the keyword part and the rest: each takes the next text of its own group's
    /// parts and, when they have none left, the last one left of the other group's, so each
    /// part's automata build their lazy-DFA states on the threads of its group (with two
    /// threads, on one) rather than on every thread. The thread that scans a text's last part
    /// finishes it, while the others scan on. Which thread scans what never changes what is
    /// found.
    fn scan_parts<R: Send>(
        &self,
        texts: &[&str],
        finish: impl Fn(usize, Found) -> R + Sync,
    ) -> Vec<R> {
        let queues = Mutex::new(PARTS.map(|_| 0..texts.len()));
        let take = |group: usize| {
            let mut queues = queues.lock().unwrap_or_else(PoisonError::into_inner);
            let own = (0..PARTS.len()).filter(|&p| group_of(PARTS[p]) == group);
            let other = (0..PARTS.len()).filter(|&p| group_of(PARTS[p]) != group);
            for p in own {
                if let Some(text) = queues[p].next() {
                    return Some((p, text));
                }
            }
            for p in other {
                if let Some(text) = queues[p].next_back() {
                    return Some((p, text));
                }
            }
            None
        };
        // Each text's parts found so far, and how many are still to come.
        let pending: Vec<Mutex<(Found, usize)>> = texts
            .iter()
            .map(|_| Mutex::new((Found::default(), PARTS.len())))
            .collect();
        let done = rayon::broadcast(|ctx| {
            let group = ctx.index() % GROUPS;
            let mut mine = Vec::new();
            while let Some((part, text)) = take(group) {
                let found = self.scan_part(PARTS[part], texts[text]);
                let complete = {
                    let mut pending = pending[text].lock().unwrap_or_else(PoisonError::into_inner);
                    pending.0.absorb(found);
                    pending.1 -= 1;
                    (pending.1 == 0).then(|| std::mem::take(&mut pending.0))
                };
                if let Some(found) = complete {
                    mine.push((text, finish(text, found)));
                }
            }
            mine
        });
        // Every text's last part is scanned by some thread, which finishes it: once per text.
        let mut finished: Vec<(usize, R)> = done.into_iter().flatten().collect();
        debug_assert_eq!(finished.len(), texts.len());
        finished.sort_unstable_by_key(|&(text, _)| text);
        finished.into_iter().map(|(_, r)| r).collect()
    }

    /// The findings of one chunk's core from what the parts of its scan found, with spans
    /// into the whole text.
    fn chunk_findings(&self, field_path: &str, chunk: &Chunk, found: Found) -> Vec<Finding> {
        let base = chunk.scan.start;
        self.findings_of(field_path, found)
            .into_iter()
            .filter(|f| chunk.core.contains(&(base + f.span.start)))
            .map(|f| Finding {
                span: base + f.span.start..base + f.span.end,
                ..f
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_the_text_once_on_line_starts() {
        let line = "some words and a number 12345 on a line\n";
        let text = line.repeat(SPLIT_ABOVE / line.len() * 3);
        let layout = chunks(&text);
        assert!(layout.len() >= 5, "{}", layout.len());
        let mut at = 0;
        for c in &layout {
            assert_eq!(c.core.start, at);
            assert!(c.core.start == 0 || text.as_bytes()[c.core.start - 1] == b'\n');
            assert!(c.scan.start <= c.core.start && c.scan.end >= c.core.end);
            assert!(c.core.start - c.scan.start <= MARGIN_BYTES + line.len());
            at = c.core.end;
        }
        assert_eq!(at, text.len());
        assert_eq!(
            chunks("short"),
            vec![Chunk {
                core: 0..5,
                scan: 0..5
            }]
        );
    }

    #[test]
    fn a_text_without_line_breaks_is_cut_on_character_boundaries() {
        let text = "é".repeat(SPLIT_ABOVE);
        let layout = chunks(&text);
        assert!(layout.len() > 1);
        for c in &layout {
            assert!(text.is_char_boundary(c.core.start) && text.is_char_boundary(c.scan.start));
            assert!(text.is_char_boundary(c.scan.end));
        }
    }

    #[test]
    fn chunked_findings_are_those_of_the_whole_text_whatever_the_threads() {
        let scanner = Scanner::builtin().unwrap();
        let mut text = String::new();
        let mut n = 0u64;
        while text.len() < SPLIT_ABOVE * 2 {
            n += 1;
            text.push_str("an ordinary line of prose about the parser and its tests\n");
            if n % 997 == 0 {
                text.push_str(&format!(
                    "GITHUB_TOKEN=ghp_{:036}\nmail jane.{n}@corp-mail.net\n",
                    n * 7919
                ));
            }
        }
        let whole = scanner.scan_text("f", &text);
        assert!(whole.len() > 10);
        for threads in [1, 2, 3] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let chunked = pool.install(|| scanner.scan_chunked("f", &text));
            assert_eq!(chunked, whole, "{threads} threads");
        }
    }
    #[test]
    fn texts_scanned_together_find_what_each_finds_alone_whatever_the_threads() {
        let scanner = Scanner::builtin().unwrap();
        let texts: Vec<String> = (0..40)
            .map(|i| match i % 4 {
                0 => format!(
                    "GITHUB_TOKEN=ghp_{:036} and mail jane.{i}@corp-mail.net",
                    i * 7919
                ),
                1 => format!("call 415-555-01{i:02} or card 4111 1111 1111 1111, id {i}"),
                // A key cut over three clauses: found only in the joined views.
                2 => "Created file sk-proj-Qk7PKwLBg42. Created file dfjic0XJC8OpgwOdw13. \
                      Created file dLNShpbRCxcgZ6ExUU."
                    .to_owned(),
                _ => "plain words and nothing else".repeat(i),
            })
            .collect();
        let fields: Vec<(String, &str)> = texts
            .iter()
            .enumerate()
            .map(|(i, t)| (format!("f{i}"), t.as_str()))
            .collect();
        let fields: Vec<(&str, &str)> = fields.iter().map(|(p, t)| (p.as_str(), *t)).collect();
        let alone: Vec<Vec<Finding>> = fields
            .iter()
            .map(|&(path, text)| scanner.scan_text(path, text))
            .collect();
        assert!(alone.iter().filter(|f| !f.is_empty()).count() >= 20);
        assert_eq!(alone[2].len(), 3, "{:?}", alone[2]);
        for threads in [1, 2, 3] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let together = pool.install(|| scanner.scan_texts(&fields));
            assert_eq!(together, alone, "{threads} threads");
        }
    }
}
