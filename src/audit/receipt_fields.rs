//! A fast, strict reader for receipts. Receipts are flat canonical JSON objects (values are
//! strings, integers, booleans, null, or arrays of integers), so `verify` can check their
//! canonical form and read their fields in one pass without building a tree.
//!
//! [`read`] accepts exactly the canonical text the canonical writer produces for such an
//! object (keys in code-point order without duplicates, no whitespace, Python's escapes,
//! integers without leading zeros) and returns `None` for anything else; the caller then
//! falls back to the full parser to say what is wrong.

use std::borrow::Cow;

/// One receipt value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Flat<'a> {
    Null,
    Bool(bool),
    Int(i64),
    Str(Cow<'a, str>),
    Ints(Vec<i64>),
}

/// A receipt's fields in key order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlatReceipt<'a> {
    fields: Vec<(Cow<'a, str>, Flat<'a>)>,
}

impl<'a> FlatReceipt<'a> {
    pub fn get(&self, key: &str) -> Option<&Flat<'a>> {
        let i = self
            .fields
            .binary_search_by(|(k, _)| k.as_ref().cmp(key))
            .ok()?;
        Some(&self.fields[i].1)
    }

    pub fn str(&self, key: &str) -> Option<&str> {
        match self.get(key)? {
            Flat::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn int(&self, key: &str) -> Option<i64> {
        match self.get(key)? {
            Flat::Int(n) => Some(*n),
            _ => None,
        }
    }
}

/// Reads `text` if it is a flat object in canonical form.
pub fn read(text: &str) -> Option<FlatReceipt<'_>> {
    let mut r = Reader { text, pos: 0 };
    r.eat(b'{')?;
    let mut fields: Vec<(Cow<'_, str>, Flat<'_>)> = Vec::with_capacity(24);
    if r.peek() == Some(b'}') {
        r.pos += 1;
    } else {
        loop {
            let key = r.string()?;
            if fields
                .last()
                .is_some_and(|(prev, _)| prev.as_bytes() >= key.as_bytes())
            {
                return None;
            }
            r.eat(b':')?;
            let value = r.value()?;
            fields.push((key, value));
            match r.next()? {
                b',' => continue,
                b'}' => break,
                _ => return None,
            }
        }
    }
    (r.pos == text.len()).then_some(FlatReceipt { fields })
}

struct Reader<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Reader<'a> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let b = self.peek()?;
        self.pos += 1;
        Some(b)
    }

    fn eat(&mut self, want: u8) -> Option<()> {
        (self.next()? == want).then_some(())
    }

    fn literal(&mut self, word: &str) -> Option<()> {
        let end = self.pos + word.len();
        (self.text.get(self.pos..end)? == word).then(|| self.pos = end)
    }

    fn value(&mut self) -> Option<Flat<'a>> {
        match self.peek()? {
            b'"' => self.string().map(Flat::Str),
            b't' => self.literal("true").map(|()| Flat::Bool(true)),
            b'f' => self.literal("false").map(|()| Flat::Bool(false)),
            b'n' => self.literal("null").map(|()| Flat::Null),
            b'[' => {
                self.pos += 1;
                let mut items = Vec::new();
                if self.peek() == Some(b']') {
                    self.pos += 1;
                    return Some(Flat::Ints(items));
                }
                loop {
                    items.push(self.int()?);
                    match self.next()? {
                        b',' => continue,
                        b']' => return Some(Flat::Ints(items)),
                        _ => return None,
                    }
                }
            }
            _ => self.int().map(Flat::Int),
        }
    }

    /// A canonical integer: `-?(0|[1-9][0-9]*)`, not `-0`, not followed by a fraction.
    fn int(&mut self) -> Option<i64> {
        let start = self.pos;
        let bytes = self.text.as_bytes();
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        let digits = self.pos;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.pos += 1;
        }
        let n = self.pos - digits;
        let leading_zero = n > 1 && bytes[digits] == b'0';
        let minus_zero = digits > start && n == 1 && bytes[digits] == b'0';
        if n == 0 || leading_zero || minus_zero || matches!(self.peek(), Some(b'.' | b'e' | b'E')) {
            return None;
        }
        self.text[start..self.pos].parse().ok()
    }

    /// A string with exactly the escapes Python's `json.dumps(ensure_ascii=False)` writes.
    fn string(&mut self) -> Option<Cow<'a, str>> {
        self.eat(b'"')?;
        let bytes = self.text.as_bytes();
        let start = self.pos;
        while let Some(&b) = bytes.get(self.pos) {
            match b {
                b'"' => {
                    self.pos += 1;
                    return Some(Cow::Borrowed(&self.text[start..self.pos - 1]));
                }
                b'\\' => break,
                0..=0x1f => return None,
                _ => self.pos += 1,
            }
        }
        let mut out = String::from(&self.text[start..self.pos]);
        loop {
            let run = self.pos;
            while bytes
                .get(self.pos)
                .is_some_and(|&b| b != b'"' && b != b'\\' && b >= 0x20)
            {
                self.pos += 1;
            }
            out.push_str(&self.text[run..self.pos]);
            match self.next()? {
                b'"' => return Some(Cow::Owned(out)),
                b'\\' => out.push(self.escape()?),
                _ => return None,
            }
        }
    }

    fn escape(&mut self) -> Option<char> {
        Some(match self.next()? {
            b'"' => '"',
            b'\\' => '\\',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let hex = self.text.get(self.pos..self.pos + 4)?;
                if hex.bytes().any(|b| !matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
                    return None;
                }
                self.pos += 4;
                let code = u32::from_str_radix(hex, 16).ok()?;
                // Only control characters without a short escape are written as \u00XX.
                if code >= 0x20 || matches!(code, 0x8 | 0x9 | 0xa | 0xc | 0xd) {
                    return None;
                }
                char::from_u32(code)?
            }
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{self, object, Value};

    #[test]
    fn reads_what_the_canonical_writer_writes() {
        let v = object([
            ("a", Value::from("plain")),
            (
                "b",
                Value::from("quote \" back \\ nl \n tab \t bell \u{7} é — 😀"),
            ),
            ("c", Value::from(-42i64)),
            (
                "d",
                Value::from(vec![Value::from(1u64), Value::from(20u64)]),
            ),
            ("e", Value::Null),
            ("f", Value::from(true)),
            ("g", Value::from(Vec::<Value>::new())),
            ("é", Value::from(0u64)),
        ]);
        let text = json::canonical(&v).unwrap();
        let flat = read(&text).unwrap();
        assert_eq!(flat.str("b"), v.get("b").and_then(Value::as_str));
        assert_eq!(flat.int("c"), Some(-42));
        assert_eq!(flat.get("d"), Some(&Flat::Ints(vec![1, 20])));
        assert_eq!(flat.get("e"), Some(&Flat::Null));
        assert_eq!(flat.int("é"), Some(0));
    }

    #[test]
    fn refuses_anything_not_canonical() {
        for bad in [
            r#"{"b":1,"a":2}"#,
            r#"{"a":1,"a":2}"#,
            r#"{ "a":1}"#,
            r#"{"a":01}"#,
            r#"{"a":-0}"#,
            r#"{"a":1.0}"#,
            r#"{"a":"\/"}"#,
            r#"{"a":"\u0041"}"#,
            r#"{"a":"\u000a"}"#,
            r#"{"a":"\u001F"}"#,
            r#"{"a":{"b":1}}"#,
            "{\"a\":\"\t\"}",
            r#"{"a":1}x"#,
            r#"{"a":1,}"#,
        ] {
            assert!(read(bad).is_none(), "{bad}");
        }
        assert!(read(r#"{"a":"\u001f"}"#).is_some());
    }
}
