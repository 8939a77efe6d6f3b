//! One level of decoding: base64 (standard or URL-safe) and hex blobs that decode to mostly
//! printable text are scanned again, and a match inside one is reported on the whole blob.

use std::ops::Range;
use std::sync::OnceLock;

use base64::Engine;
use regex::bytes::Regex;

/// A decoded blob and where its encoded form sits in the original text.
pub(super) struct Blob {
    pub span: Range<usize>,
    pub decoded: String,
}

/// Shortest encoded blob worth decoding.
const MIN_BLOB: usize = 24;
/// Longest blob decoded (bounds the work a hostile input can cause).
const MAX_BLOB: usize = 64 * 1024;

fn blob_regex() -> Option<&'static Regex> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"(?-u)[A-Za-z0-9+/_\-]{24,}={0,2}").ok())
        .as_ref()
}

pub(super) fn encoded_blobs(text: &str) -> Vec<Blob> {
    let Some(re) = blob_regex() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for m in re.find_iter(text.as_bytes()) {
        let s = &text.as_bytes()[m.range()];
        if s.len() < MIN_BLOB || s.len() > MAX_BLOB {
            continue;
        }
        let decoded = if s.iter().all(u8::is_ascii_hexdigit) {
            decode_hex(s)
        } else {
            decode_base64(s)
        };
        if let Some(decoded) = decoded.and_then(printable) {
            out.push(Blob {
                span: m.range(),
                decoded,
            });
        }
    }
    out
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
}
