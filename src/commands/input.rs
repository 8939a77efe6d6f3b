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
    let mut bytes = Vec::new();
    let limit = u64::try_from(max_bytes)
        .unwrap_or(u64::MAX)
        .saturating_add(1);
    match path.filter(|p| p.as_os_str() != "-") {
        Some(path) => std::fs::File::open(path)
            .and_then(|f| f.take(limit).read_to_end(&mut bytes))
            .with_context(|| format!("while reading {name}"))?,
        None => std::io::stdin()
            .lock()
            .take(limit)
            .read_to_end(&mut bytes)
            .context("while reading standard input")?,
    };
    if bytes.len() > max_bytes {
        anyhow::bail!(
            "{name} is larger than {max_bytes} bytes, the most cq reads: refused without reading the rest"
        );
    }
    Ok(bytes)
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
}
