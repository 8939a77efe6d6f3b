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

/// Bytes read per step backwards (one buffer, reused for every step).
const BLOCK: usize = 64 * 1024;
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
    let mut back = Backwards::new(marker);
    let mut end = len;
    while end > 0 {
        let Some(start) = back.last_marker_line(&mut file, end)? else {
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

/// Reads a file backwards in blocks through one buffer, looking for a marker.
struct Backwards<'m> {
    marker: memchr::memmem::Finder<'m>,
    buf: Vec<u8>,
}

impl<'m> Backwards<'m> {
    fn new(marker: &'m [u8]) -> Self {
        Backwards {
            marker: memchr::memmem::Finder::new(marker),
            buf: Vec::with_capacity(BLOCK + marker.len()),
        }
    }

    /// The start offset of the last line before `end` that holds the marker.
    fn last_marker_line(&mut self, file: &mut File, end: u64) -> std::io::Result<Option<u64>> {
        let overlap = self.marker.needle().len() as u64;
        let mut hi = end;
        while hi > 0 {
            let lo = hi.saturating_sub(BLOCK as u64);
            // Read a little past `hi` so a marker across two blocks is found once.
            let top = (hi + overlap).min(end);
            read_at(file, lo, top, &mut self.buf)?;
            // The forward search is vectorised; markers are rare, so the last hit is cheap.
            if let Some(at) = self.marker.find_iter(&self.buf).last() {
                return self.line_start(file, lo + at as u64).map(Some);
            }
            hi = lo;
        }
        Ok(None)
    }

    /// The offset just after the last line break before `pos` (0 if none).
    fn line_start(&mut self, file: &mut File, pos: u64) -> std::io::Result<u64> {
        let mut hi = pos;
        while hi > 0 {
            let lo = hi.saturating_sub(BLOCK as u64);
            read_at(file, lo, hi, &mut self.buf)?;
            if let Some(nl) = memchr::memrchr(b'\n', &self.buf) {
                return Ok(lo + nl as u64 + 1);
            }
            hi = lo;
        }
        Ok(0)
    }
}

/// Bytes `lo..hi` of `file` into `buf` (its allocation kept from one call to the next).
fn read_at(file: &mut File, lo: u64, hi: u64, buf: &mut Vec<u8>) -> std::io::Result<()> {
    let want = usize::try_from(hi - lo).unwrap_or(0);
    buf.clear();
    file.seek(SeekFrom::Start(lo))?;
    let got = file.by_ref().take(want as u64).read_to_end(buf)?;
    if got < want {
        return Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof));
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    const FIXTURE: &str =
        "tests/transcripts/claude-code/marot__spotter__ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl";
    const MARKER: &[u8] = b"\"compact_boundary\"";

    /// The fixture up to the end of its latest compaction's summary line, and where that
    /// compaction's marker starts.
    fn ending_at_its_compaction() -> (Vec<u8>, usize) {
        let bytes = std::fs::read(FIXTURE).unwrap();
        let marker = memchr::memmem::rfind(&bytes, MARKER).unwrap();
        let summary = memchr::memmem::find(&bytes[marker..], b"\"isCompactSummary\"").unwrap();
        let end = memchr::memchr(b'\n', &bytes[marker + summary..]).unwrap();
        (bytes[..marker + summary + end + 1].to_vec(), marker)
    }

    fn latest(bytes: &[u8]) -> Option<ImportedSummary> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session.jsonl");
        std::fs::write(&path, bytes).unwrap();
        latest_summary(&path, Runtime::ClaudeCode, &Limits::default()).unwrap()
    }

    /// `bytes` bytes of JSON lines cq ignores, ending in a line break.
    fn padding(bytes: usize) -> Vec<u8> {
        let line = b"{\"type\":\"progress\",\"data\":\"x\"}\n";
        let mut out = Vec::with_capacity(bytes);
        while out.len() + line.len() <= bytes {
            out.extend_from_slice(line);
        }
        out.resize(bytes.saturating_sub(1), b' ');
        out.push(b'\n');
        out
    }

    #[test]
    fn a_marker_split_across_two_blocks_is_found() {
        let (prefix, marker) = ending_at_its_compaction();
        let expected = latest(&prefix);
        assert!(matches!(expected, Some(ImportedSummary::Text(_))));
        // The first block read backwards starts 1..len-1 bytes into the marker.
        for into in [1, 5, MARKER.len() - 1] {
            let pad = marker + into + BLOCK - prefix.len();
            let mut bytes = prefix.clone();
            bytes.extend(padding(pad));
            assert_eq!(bytes.len() - BLOCK, marker + into);
            assert_eq!(
                latest(&bytes),
                expected,
                "split {into} bytes into the marker"
            );
        }
    }

    #[test]
    fn a_compaction_many_blocks_before_the_end_is_found() {
        let (mut bytes, _) = ending_at_its_compaction();
        let expected = latest(&bytes);
        bytes.extend(padding(7 * BLOCK + 123));
        assert_eq!(latest(&bytes), expected);
    }

    #[test]
    fn an_escaped_marker_inside_a_later_string_is_not_a_compaction() {
        let (mut bytes, _) = ending_at_its_compaction();
        let expected = latest(&bytes);
        bytes.extend_from_slice(
            b"{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"\\\"compact_boundary\\\"\"}}\n",
        );
        assert_eq!(latest(&bytes), expected);
    }

    #[test]
    fn a_transcript_without_a_compaction_has_no_summary() {
        assert_eq!(latest(&padding(3 * BLOCK)), None);
        assert_eq!(latest(b""), None);
    }
}
