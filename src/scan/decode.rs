//! One level of decoding: base64 (standard or URL-safe) and hex blobs that decode to mostly
//! printable text are scanned again, and a match inside one is reported on the whole blob.

use std::ops::Range;

use base64::Engine;

/// A decoded blob and where its encoded form sits in the original text.
pub(super) struct Blob {
    pub span: Range<usize>,
    pub decoded: String,
}

/// Shortest encoded blob worth decoding.
const MIN_BLOB: usize = 24;
/// Longest blob decoded (bounds the work a hostile input can cause).
const MAX_BLOB: usize = 64 * 1024;

/// Which bytes belong to the base64 (standard or URL-safe) and hex alphabets, as a table so the
/// run search over every scanned byte is one lookup per byte.
const BLOB_BYTE: [bool; 256] = blob_table();

const fn blob_table() -> [bool; 256] {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        t[i] = b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'_' | b'-');
        i += 1;
    }
    t
}

fn blob_byte(b: u8) -> bool {
    BLOB_BYTE[usize::from(b)]
}

/// Maximal runs of base64/hex alphabet bytes (with trailing `=` padding) of blob length.
///
/// Most scanned text is prose, whose runs are words: instead of classifying every byte, the
/// search looks at the last byte a run long enough to count would need and steps past the last
/// non-alphabet byte before it, so it reads a few bytes per word.
fn candidate_runs(bytes: &[u8]) -> Vec<Range<usize>> {
    // Padding adds at most two bytes, so a run needs this many alphabet bytes to count.
    const MIN_RUN: usize = MIN_BLOB - 2;
    let mut out = Vec::new();
    // Invariant: `i` is 0 or follows a byte outside the alphabet.
    let mut i = 0;
    while i + MIN_RUN <= bytes.len() {
        let probe = &bytes[i..i + MIN_RUN];
        if let Some(q) = probe.iter().rposition(|&b| !blob_byte(b)) {
            i += q + 1;
            continue;
        }
        let start = i;
        let run_end = bytes[start + MIN_RUN..]
            .iter()
            .position(|&b| !blob_byte(b))
            .map_or(bytes.len(), |n| start + MIN_RUN + n);
        let mut end = run_end;
        while end < bytes.len() && end - run_end < 2 && bytes[end] == b'=' {
            end += 1;
        }
        if end - start >= MIN_BLOB && end - start <= MAX_BLOB {
            out.push(start..end);
        }
        // The byte at `run_end` (if any) is outside the alphabet; step past it.
        i = if end > run_end { end } else { run_end + 1 };
    }
    out
}

pub(super) fn encoded_blobs(text: &str) -> Vec<Blob> {
    let mut out = Vec::new();
    for range in candidate_runs(text.as_bytes()) {
        let s = &text.as_bytes()[range.clone()];
        let mixed = s.iter().any(u8::is_ascii_digit) || s.iter().any(u8::is_ascii_uppercase);
        if !mixed {
            continue;
        }
        let hex = s.iter().all(u8::is_ascii_hexdigit);
        // Decode a short prefix first, without allocating: most runs (hashes, paths, random
        // tokens) fail here.
        if !head_is_printable(&s[..16], hex) {
            continue;
        }
        let decoded = if hex { decode_hex(s) } else { decode_base64(s) };
        if let Some(decoded) = decoded.and_then(printable) {
            out.push(Blob {
                span: range,
                decoded,
            });
        }
    }
    out
}

fn text_byte(b: u8) -> bool {
    (0x20..0x7f).contains(&b) || matches!(b, b'\n' | b'\r' | b'\t')
}

/// Whether the first 16 encoded characters decode to printable text.
fn head_is_printable(head: &[u8], hex: bool) -> bool {
    if hex {
        return head.chunks(2).all(|p| {
            let v = |c: u8| (c as char).to_digit(16).unwrap_or(0);
            text_byte((v(p[0]) * 16 + v(p[1])) as u8)
        });
    }
    let sextet = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => u32::from(c - b'A'),
            b'a'..=b'z' => u32::from(c - b'a') + 26,
            b'0'..=b'9' => u32::from(c - b'0') + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        })
    };
    head.chunks(4).all(|q| {
        let mut n = 0u32;
        for &c in q {
            match sextet(c) {
                Some(v) => n = (n << 6) | v,
                None => return false,
            }
        }
        [(n >> 16) as u8, (n >> 8) as u8, n as u8]
            .iter()
            .all(|&b| text_byte(b))
    })
}

fn decode_hex(s: &[u8]) -> Option<Vec<u8>> {
    if s.len() % 2 != 0 {
        return None;
    }
    let val = |c: u8| (c as char).to_digit(16);
    s.chunks(2)
        .map(|p| Some((val(p[0])? * 16 + val(p[1])?) as u8))
        .collect()
}

fn decode_base64(s: &[u8]) -> Option<Vec<u8>> {
    let trimmed: Vec<u8> = s.iter().copied().filter(|&c| c != b'=').collect();
    let url = trimmed.iter().any(|&c| c == b'-' || c == b'_');
    let engine = if url {
        base64::engine::general_purpose::URL_SAFE_NO_PAD
    } else {
        base64::engine::general_purpose::STANDARD_NO_PAD
    };
    engine.decode(&trimmed).ok()
}

/// Whether `s` is base64 (standard or URL-safe) of at least 12 bytes of printable text.
pub(super) fn decodes_to_text(s: &str) -> bool {
    s.len() >= 16 && decode_base64(s.as_bytes()).and_then(printable).is_some()
}

/// The decoded bytes as text, if at least 90% of them are printable ASCII or whitespace.
fn printable(bytes: Vec<u8>) -> Option<String> {
    if bytes.len() < 12 {
        return None;
    }
    let good = bytes
        .iter()
        .filter(|&&b| (0x20..0x7f).contains(&b) || b == b'\n' || b == b'\r' || b == b'\t')
        .count();
    if good * 10 < bytes.len() * 9 {
        return None;
    }
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_base64_and_hex() {
        let b64 = base64::engine::general_purpose::STANDARD.encode("password=hunter2-Prod!xyz");
        let text = format!("blob {b64} end");
        let blobs = encoded_blobs(&text);
        assert_eq!(blobs.len(), 1);
        assert!(blobs[0].decoded.contains("hunter2"));
        let hex: String = "api_key=abcdef123456"
            .bytes()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(encoded_blobs(&hex).len(), 1);
        assert!(encoded_blobs("3f2a9c1e0b7d4a5f6e8c9b0a1d2e3f4a5b6c7d8e").is_empty());
    }

    /// The byte-by-byte definition the skipping search must agree with.
    fn runs_byte_by_byte(bytes: &[u8]) -> Vec<Range<usize>> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            if !blob_byte(bytes[i]) {
                i += 1;
                continue;
            }
            let start = i;
            while i < bytes.len() && blob_byte(bytes[i]) {
                i += 1;
            }
            let mut end = i;
            while end < bytes.len() && end - i < 2 && bytes[end] == b'=' {
                end += 1;
            }
            if end - start >= MIN_BLOB && end - start <= MAX_BLOB {
                out.push(start..end);
            }
            i = end.max(i);
        }
        out
    }

    #[test]
    fn skipping_run_search_matches_byte_by_byte() {
        let pieces = [
            "a",
            "ab",
            " ",
            "=",
            "==",
            "===",
            ".",
            "QUJD",
            "ZGVm",
            "0123456789abcdef",
            "x-y_z",
            "aGVsbG8gd29ybGQ",
            "\n",
            "ü",
        ];
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        for _ in 0..4000 {
            let mut text = String::new();
            for _ in 0..next(40) {
                text.push_str(pieces[next(pieces.len())]);
            }
            let b = text.as_bytes();
            assert_eq!(candidate_runs(b), runs_byte_by_byte(b), "{text:?}");
        }
    }
}
