//! The latest compaction's summary, found from the end of a transcript: what a `PreToolUse`
//! hook compares with the compaction it was told is the session's latest, on every tool call,
//! without reading the whole session. Lines are read backwards in blocks until one carries the
//! runtime's compaction marker as a JSON token (`"compact_boundary"`, `"compacted"`; an escaped
//! copy inside a string never matches), then that compaction alone is parsed by the same code
//! as an import, so the summary text is the one an import records.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use super::{import_reader, ImportedSummary, Limits, Runtime};

/// Bytes read per step backwards.
const BLOCK: u64 = 256 * 1024;
/// After a Claude Code boundary, how far its summary line may be.
const MAX_SUMMARY_DISTANCE: u64 = 64 * 1024 * 1024;

/// The summary of the last compaction in the transcript at `path`; `None` when it has none.
pub fn latest_summary(
    path: &Path,
    runtime: Runtime,
    limits: &Limits,
) -> std::io::Result<Option<ImportedSummary>> {
    let mut file = File::open(path)?;
    let len = file.metadata()?.len();
    let marker: &[u8] = match runtime {
        Runtime::ClaudeCode => b"\"compact_boundary\"",
        Runtime::Codex => b"\"compacted\"",
    };
    let mut end = len;
    while end > 0 {
        let Some(start) = last_marker_line(&mut file, end, marker)? else {
            return Ok(None);
        };
        let slice = compaction_slice(&mut file, start, runtime, len)?;
        let found = import_reader(slice.as_slice(), path, runtime, limits);
        if let Some(c) = found.compactions.into_iter().last() {
            return Ok(Some(c.summary));
        }
        end = start;
    }
    Ok(None)
}

/// The start offset of the last line before `end` that holds `marker`.
fn last_marker_line(file: &mut File, end: u64, marker: &[u8]) -> std::io::Result<Option<u64>> {
    let mut hi = end;
    let overlap = marker.len() as u64;
    while hi > 0 {
        let lo = hi.saturating_sub(BLOCK);
        // Read a little past `hi` so a marker across two blocks is found once.
        let top = (hi + overlap).min(end);
        let block = read_at(file, lo, top)?;
        if let Some(at) = memchr::memmem::rfind(&block, marker) {
            return line_start(file, lo + at as u64).map(Some);
        }
        hi = lo;
    }
    Ok(None)
}

/// The offset just after the last line break before `pos` (0 if none).
fn line_start(file: &mut File, pos: u64) -> std::io::Result<u64> {
    let mut hi = pos;
    while hi > 0 {
        let lo = hi.saturating_sub(BLOCK);
        let block = read_at(file, lo, hi)?;
        if let Some(nl) = memchr::memrchr(b'\n', &block) {
            return Ok(lo + nl as u64 + 1);
        }
        hi = lo;
    }
    Ok(0)
}

fn read_at(file: &mut File, lo: u64, hi: u64) -> std::io::Result<Vec<u8>> {
    let mut block = vec![0u8; usize::try_from(hi - lo).unwrap_or(0)];
    file.seek(SeekFrom::Start(lo))?;
    file.read_exact(&mut block)?;
    Ok(block)
}

/// The bytes of the compaction starting at `start`: the marker line, and for Claude Code the
/// lines up to its summary line.
fn compaction_slice(
    file: &mut File,
    start: u64,
    runtime: Runtime,
    len: u64,
) -> std::io::Result<Vec<u8>> {
    file.seek(SeekFrom::Start(start))?;
    let mut out = Vec::new();
    let limit = (len - start).min(MAX_SUMMARY_DISTANCE);
    let mut reader = std::io::BufReader::new(file.take(limit));
    let mut line = Vec::new();
    let mut first = true;
    loop {
        line.clear();
        let n = std::io::BufRead::read_until(&mut reader, b'\n', &mut line)?;
        if n == 0 {
            break;
        }
        out.extend_from_slice(&line);
        let done = match runtime {
            Runtime::Codex => true,
            Runtime::ClaudeCode => !first && contains(&line, b"\"isCompactSummary\""),
        };
        if done {
            break;
        }
        first = false;
    }
    Ok(out)
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(hay, needle).is_some()
}
