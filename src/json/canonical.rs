//! The canonical writer: byte for byte what CPython's `json.dumps(v, sort_keys=True,
//! separators=(",", ":"), ensure_ascii=False, allow_nan=False)` produces, and SHA-256 over
//! its UTF-8 bytes.

use std::fmt::{self, Write as _};

use sha2::{Digest, Sha256};

use super::float::python_repr;
use super::value::{Number, Value};

/// What Python refuses to serialise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CanonicalError {
    /// `NaN`, `Infinity` or a float literal that overflows to infinity.
    NonFinite(String),
}

impl fmt::Display for CanonicalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CanonicalError::NonFinite(text) => write!(
                f,
                "number \"{text}\" is out of range: non-finite floats have no canonical JSON text"
            ),
        }
    }
}

impl std::error::Error for CanonicalError {}

/// The canonical JSON text of `value`.
pub fn canonical(value: &Value) -> Result<String, CanonicalError> {
    let mut out = String::new();
    write_value(&mut out, value)?;
    Ok(out)
}

/// SHA-256 (lower-case hex) of the canonical JSON text of `value`.
pub fn canonical_sha256(value: &Value) -> Result<String, CanonicalError> {
    Ok(sha256_hex(canonical(value)?.as_bytes()))
}

thread_local! {
    /// Bytes and digests [`sha256_hex`] computed on this thread.
    static HASHED: std::cell::Cell<(u64, u64)> = const { std::cell::Cell::new((0, 0)) };
}

/// How many bytes, in how many digests, [`sha256_hex`] has hashed on this thread so far: the
/// gate bench subtracts two readings to learn what one call must hash, and times SHA-256 of
/// that many bytes beside it.
pub fn hashed_on_this_thread() -> (u64, u64) {
    HASHED.with(std::cell::Cell::get)
}

/// SHA-256 of `bytes` as lower-case hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    HASHED.with(|h| {
        let (total, count) = h.get();
        h.set((total + bytes.len() as u64, count + 1));
    });
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for byte in digest {
        out.push(char::from(HEX[usize::from(byte >> 4)]));
        out.push(char::from(HEX[usize::from(byte & 0x0f)]));
    }
    out
}

fn write_value(out: &mut String, value: &Value) -> Result<(), CanonicalError> {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(number) => write_number(out, number)?,
        Value::String(text) => write_string(out, text),
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_value(out, item)?;
            }
            out.push(']');
        }
        Value::Object(map) => {
            // BTreeMap<String, _> iterates in byte order of UTF-8, which is code-point order.
            out.push('{');
            for (index, (key, item)) in map.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_string(out, key);
                out.push(':');
                write_value(out, item)?;
            }
            out.push('}');
        }
    }
    Ok(())
}

fn write_number(out: &mut String, number: &Number) -> Result<(), CanonicalError> {
    let text = number.text();
    if number.is_integer() {
        // Python reads `-0` as the integer 0; no other integer text changes.
        out.push_str(if text == "-0" { "0" } else { text });
        return Ok(());
    }
    match text.parse::<f64>() {
        Ok(value) if value.is_finite() => {
            out.push_str(&python_repr(value));
            Ok(())
        }
        _ => Err(CanonicalError::NonFinite(text.to_owned())),
    }
}

/// Whether any byte of `word` needs escaping: below 0x20, `"` or `\\` (bit tricks on eight
/// bytes at once: a byte is zero after the XOR, or below 0x20, exactly when its high bit
/// survives the masks).
fn needs_escape(word: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero_in = |w: u64| w.wrapping_sub(ONES) & !w & HIGH;
    let below_space = word.wrapping_sub(ONES * 0x20) & !word & HIGH;
    below_space
        | zero_in(word ^ (ONES * u64::from(b'"')))
        | zero_in(word ^ (ONES * u64::from(b'\\')))
        != 0
}

/// The index of the first byte at or after `from` that needs escaping.
fn next_escape(bytes: &[u8], mut from: usize) -> Option<usize> {
    // Whole 32-byte chunks first, without early exit inside a chunk, which the compiler turns
    // into vector compares; then eight bytes at a time.
    const CHUNK: usize = 32;
    while from + CHUNK <= bytes.len() {
        let hit = bytes[from..from + CHUNK].iter().fold(false, |hit, &b| {
            hit | (b < 0x20) | (b == b'"') | (b == b'\\')
        });
        if hit {
            break;
        }
        from += CHUNK;
    }
    while from + 8 <= bytes.len() {
        let mut word = [0u8; 8];
        word.copy_from_slice(&bytes[from..from + 8]);
        if needs_escape(u64::from_le_bytes(word)) {
            break;
        }
        from += 8;
    }
    bytes[from..]
        .iter()
        .position(|&b| b < 0x20 || b == b'"' || b == b'\\')
        .map(|at| from + at)
}

pub(super) fn write_string(out: &mut String, text: &str) {
    out.reserve(text.len() + 2);
    out.push('"');
    let bytes = text.as_bytes();
    let mut run = 0;
    // Only ASCII bytes are ever escaped, so runs end on character boundaries.
    while let Some(at) = next_escape(bytes, run) {
        out.push_str(&text[run..at]);
        match bytes[at] {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            0x08 => out.push_str("\\b"),
            0x0c => out.push_str("\\f"),
            byte => {
                let _ = write!(out, "\\u{byte:04x}");
            }
        }
        run = at + 1;
    }
    out.push_str(&text[run..]);
    out.push('"');
}

/// The same JSON text with every non-ASCII character and DEL written as `\u` escapes (as
/// Python's `ensure_ascii=True` does): it parses to the same value, and nothing in it can
/// act on a terminal.
pub fn to_ascii(json_text: &str) -> String {
    let mut out = String::with_capacity(json_text.len());
    let mut units = [0u16; 2];
    for c in json_text.chars() {
        if c.is_ascii() && c != '\u{7f}' {
            out.push(c);
        } else {
            for unit in c.encode_utf16(&mut units) {
                let _ = write!(out, "\\u{unit:04x}");
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{object, parse_python};

    fn canon(text: &str) -> String {
        canonical(&parse_python(text.as_bytes()).unwrap()).unwrap()
    }

    #[test]
    fn layout_matches_python() {
        assert_eq!(
            canon(r#"{"b": [1, 2.0], "a": "\u00e9\n\u0001"}"#),
            "{\"a\":\"é\\n\\u0001\",\"b\":[1,2.0]}"
        );
        assert_eq!(canon("-0"), "0");
        assert_eq!(canon("-0.0"), "-0.0");
        assert_eq!(canon("1E16"), "1e+16");
        assert_eq!(canon("[1e-5, 100.0e0]"), "[1e-05,100.0]");
        assert_eq!(
            canon("\"\u{7f}\u{85}\u{2028}\""),
            "\"\u{7f}\u{85}\u{2028}\""
        );
    }

    #[test]
    fn the_word_scan_finds_every_byte_that_needs_escaping() {
        // Every byte value at every position of a 17-byte string, against the plain rule.
        for byte in 0u8..=0x7f {
            for at in 0..17 {
                let mut bytes = vec![b'a'; 17];
                bytes[at] = byte;
                let wanted = (byte < 0x20 || byte == b'"' || byte == b'\\').then_some(at);
                assert_eq!(next_escape(&bytes, 0), wanted, "byte {byte:#x} at {at}");
            }
        }
        let text = "é\u{7f}\u{85}\u{2028}😀";
        assert_eq!(next_escape(text.as_bytes(), 0), None);
    }

    #[test]
    fn non_finite_values_are_refused() {
        for text in ["NaN", "[Infinity]", "-1e400"] {
            let value = parse_python(text.as_bytes()).unwrap();
            assert!(canonical(&value).is_err(), "{text}");
        }
    }

    #[test]
    fn digest_of_built_values() {
        let value = object([("b", Value::from(1i64)), ("a", Value::from("x"))]);
        assert_eq!(canonical(&value).unwrap(), r#"{"a":"x","b":1}"#);
        assert_eq!(
            canonical_sha256(&value).unwrap(),
            sha256_hex(br#"{"a":"x","b":1}"#)
        );
    }
}
