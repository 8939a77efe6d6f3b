//! Reading a command's input: a file, or standard input for `-` or no path, with the path
//! named in every error. The size cap is enforced while reading, so an endless or huge input
//! (`/dev/zero`, a 1 GB pipe) costs at most the cap in memory and is refused cleanly.

use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::Context;

/// The bytes of `path`, or of standard input when it is `None` or `-`; refused once more than
/// `max_bytes` arrive.
pub fn read(path: Option<&PathBuf>, max_bytes: usize) -> anyhow::Result<Vec<u8>> {
    let name = name(path);
    let bytes = match path.filter(|p| p.as_os_str() != "-") {
        Some(path) => {
            read_file_capped(path, max_bytes).with_context(|| format!("while reading {name}"))?
        }
        None => {
            let bytes = read_capped(std::io::stdin().lock(), max_bytes.saturating_add(1), 0)
                .context("while reading standard input")?;
            (bytes.len() <= max_bytes).then_some(bytes)
        }
    };
    bytes.ok_or_else(|| {
        anyhow::anyhow!(
            "{name} is larger than {max_bytes} bytes, the most cq reads: refused without reading the rest"
        )
    })
}

/// At most `limit` bytes of `reader`. The buffer never grows past `limit`: refusing an input one
/// byte over the cap costs the cap, not the doubled buffer `read_to_end` would allocate and copy
/// into on the way. Capacity beyond `hint` is address space only; pages are touched as bytes
/// arrive.
fn read_capped(reader: impl Read, limit: usize, hint: usize) -> std::io::Result<Vec<u8>> {
    const FIRST: usize = 1 << 20;
    let first = if hint == 0 {
        FIRST
    } else {
        hint.saturating_add(1)
    };
    let mut bytes = Vec::with_capacity(first.min(limit));
    let mut reader = reader.take(u64::try_from(limit).unwrap_or(u64::MAX));
    while bytes.len() < limit {
        if bytes.len() == bytes.capacity() {
            bytes.reserve_exact(limit - bytes.len());
        }
        // Taking no more than the spare capacity, `read_to_end` fills it without zeroing it
        // first and never grows the buffer.
        let room = u64::try_from(bytes.capacity() - bytes.len()).unwrap_or(u64::MAX);
        if (&mut reader).take(room).read_to_end(&mut bytes)? == 0 {
            break;
        }
    }
    Ok(bytes)
}

/// The bytes of the file `path`, or `None` when it holds more than `max_bytes` (read no
/// further than one byte past them).
pub fn read_file_capped(path: &Path, max_bytes: usize) -> std::io::Result<Option<Vec<u8>>> {
    let file = std::fs::File::open(path)?;
    let hint = file.metadata().map_or(0, |m| m.len());
    let limit = max_bytes.saturating_add(1);
    let bytes = read_capped(file, limit, usize::try_from(hint).unwrap_or(usize::MAX))?;
    Ok((bytes.len() <= max_bytes).then_some(bytes))
}

/// Bytes each thread reads at a time in [`read_on_pool`].
const PIECE: usize = 1 << 20;

/// The bytes of the regular file `path`, as [`read`] gives them, read in pieces at their
/// offsets on the current rayon pool, so the pages of a large input are faulted in on every
/// thread rather than on one. A file whose size changes while it is read (it grew past or
/// shrank below the size it had when opened), or that is not a regular file, is read again
/// the ordinary way, from its start to its end.
pub fn read_on_pool(path: &PathBuf, max_bytes: usize) -> anyhow::Result<Vec<u8>> {
    use rayon::prelude::*;
    use std::os::unix::fs::FileExt;
    let pieces = || -> std::io::Result<Option<Vec<u8>>> {
        let file = std::fs::File::open(path)?;
        let meta = file.metadata()?;
        let len = usize::try_from(meta.len()).unwrap_or(usize::MAX);
        if !meta.is_file() || len > max_bytes {
            return Ok(None);
        }
        let mut bytes = vec![0u8; len];
        let read = bytes
            .par_chunks_mut(PIECE)
            .enumerate()
            .try_for_each(|(i, piece)| file.read_exact_at(piece, (i * PIECE) as u64));
        // Not a byte more than when it was opened.
        let grew = file.read_at(&mut [0u8], len as u64).map_or(true, |n| n > 0);
        Ok((read.is_ok() && !grew).then_some(bytes))
    };
    match pieces() {
        Ok(Some(bytes)) => Ok(bytes),
        _ => read(Some(path), max_bytes),
    }
}

/// How an input is named in messages.
pub fn name(path: Option<&PathBuf>) -> String {
    match path.filter(|p| p.as_os_str() != "-") {
        Some(path) => format!("\"{}\"", Path::new(path).display()),
        None => "standard input".to_owned(),
    }
}

/// One line of a JSONL input, as [`read_line`] found it.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// The line's bytes (without its line break) are in the buffer.
    Read,
    /// The line was longer than the cap; it was skipped without keeping it in memory.
    TooLong { bytes: u64 },
}

/// Reads the next line into `buf` (cleared first), keeping at most `max_bytes` of it in
/// memory; `None` at the end of the input.
pub fn read_line(
    reader: &mut impl std::io::BufRead,
    buf: &mut Vec<u8>,
    max_bytes: usize,
) -> std::io::Result<Option<Line>> {
    buf.clear();
    let mut total: u64 = 0;
    let mut seen_any = false;
    loop {
        let chunk = reader.fill_buf()?;
        if chunk.is_empty() {
            if !seen_any {
                return Ok(None);
            }
            break;
        }
        seen_any = true;
        let (part, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(at) => (&chunk[..at], Some(at + 1)),
            None => (chunk, None),
        };
        total += part.len() as u64;
        if buf.len() + part.len() <= max_bytes {
            if buf.capacity() < buf.len() + part.len() {
                // Straight to the cap (address space; pages are touched as bytes arrive), so
                // a long line is never copied into a doubled buffer on its way to the cap.
                buf.reserve_exact(max_bytes - buf.len());
            }
            buf.extend_from_slice(part);
        }
        let used = done.unwrap_or(chunk.len());
        reader.consume(used);
        if done.is_some() {
            break;
        }
    }
    if total > max_bytes as u64 {
        buf.clear();
        return Ok(Some(Line::TooLong { bytes: total }));
    }
    if buf.last() == Some(&b'\r') {
        buf.pop();
    }
    Ok(Some(Line::Read))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_capped_read_stops_at_the_cap_and_never_holds_more() {
        let text = vec![7u8; 3 * (1 << 20) + 5];
        for (limit, hint) in [
            (10, 0),
            (1 << 20, 0),
            (3 << 20, 0),
            (5 << 20, 0),
            (100, 5000),
        ] {
            let bytes = read_capped(text.as_slice(), limit, hint).unwrap();
            assert_eq!(bytes.len(), limit.min(text.len()), "limit {limit}");
            assert!(
                bytes.capacity() <= limit,
                "limit {limit}: capacity {}",
                bytes.capacity()
            );
            assert!(bytes.iter().all(|&b| b == 7));
        }
        assert!(read_capped(&b""[..], 10, 0).unwrap().is_empty());
    }

    #[test]
    fn a_capped_read_retries_an_interrupted_read_and_reports_a_failed_one() {
        struct Flaky(u8);
        impl Read for Flaky {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                self.0 += 1;
                match self.0 {
                    1 => Err(std::io::ErrorKind::Interrupted.into()),
                    2 => {
                        buf[..3].copy_from_slice(b"abc");
                        Ok(3)
                    }
                    _ => Err(std::io::Error::other("disk gone")),
                }
            }
        }
        let err = read_capped(Flaky(0), 100, 0).unwrap_err();
        assert_eq!(err.to_string(), "disk gone");
    }

    #[test]
    fn long_lines_are_skipped_without_being_kept() {
        let text = format!("ok\n{}\nlast", "x".repeat(100));
        let mut reader = std::io::BufReader::with_capacity(8, text.as_bytes());
        let mut buf = Vec::new();
        assert_eq!(
            read_line(&mut reader, &mut buf, 10).unwrap(),
            Some(Line::Read)
        );
        assert_eq!(buf, b"ok");
        assert_eq!(
            read_line(&mut reader, &mut buf, 10).unwrap(),
            Some(Line::TooLong { bytes: 100 })
        );
        assert!(buf.capacity() <= 16, "the long line was never held");
        assert_eq!(
            read_line(&mut reader, &mut buf, 10).unwrap(),
            Some(Line::Read)
        );
        assert_eq!(buf, b"last");
        assert_eq!(read_line(&mut reader, &mut buf, 10).unwrap(), None);
    }
    #[test]
    fn a_file_read_on_the_pool_is_what_an_ordinary_read_gives() {
        let dir = tempfile::tempdir().unwrap();
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let bytes: Vec<u8> = (0..3 * PIECE + 12_345)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed as u8
            })
            .collect();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        for len in [0, 1, PIECE, PIECE + 1, bytes.len()] {
            let path = dir.path().join(format!("f{len}"));
            std::fs::write(&path, &bytes[..len]).unwrap();
            let got = pool.install(|| read_on_pool(&path, 64 << 20)).unwrap();
            assert_eq!(got, &bytes[..len], "{len} bytes");
            assert_eq!(got, read(Some(&path), 64 << 20).unwrap());
        }
        // Over the cap: refused as an ordinary read refuses it, naming the file.
        let path = dir.path().join(format!("f{}", bytes.len()));
        let err = pool.install(|| read_on_pool(&path, PIECE)).unwrap_err();
        assert!(err.to_string().contains("is larger than"), "{err}");
        assert!(
            err.to_string().contains(&path.display().to_string()),
            "{err}"
        );
        // Not a file: read the ordinary way, or refused with the ordinary error.
        let err = pool.install(|| read_on_pool(&dir.path().join("missing"), PIECE));
        assert!(err.unwrap_err().to_string().contains("missing"));
    }
}
