//! The strict JSON parser. Every refusal names the byte offset where it happened.
//!
//! Strict mode (the default, for anything a summarizer or a request supplies) refuses
//! duplicate keys (compared after unescaping), `NaN`/`Infinity`, lone surrogates, nesting
//! deeper than `Limits::max_depth`, input over `Limits::max_bytes`, trailing garbage and
//! invalid UTF-8. Python mode reads as CPython's `json.loads` does (last duplicate wins,
//! non-finite literals accepted) and exists to replay the reference vectors.

use std::collections::BTreeMap;
use std::fmt;

use super::value::{Number, Value};

/// CPython refuses to convert integers with more digits than this.
const MAX_INT_DIGITS: usize = 4300;

/// Bounds on what the parser accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_bytes: usize,
    pub max_depth: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_bytes: 4 * 1024 * 1024,
            max_depth: 64,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseErrorKind {
    TooLarge { size: usize, limit: usize },
    InvalidUtf8,
    ByteOrderMark,
    UnexpectedEnd,
    UnexpectedChar(char),
    TrailingData,
    TooDeep { limit: usize },
    DuplicateKey(String),
    NonFinite(String),
    LoneSurrogate(u16),
    ControlCharInString(u32),
    InvalidEscape,
    InvalidNumber,
    IntegerTooLong,
}

/// A refusal with the byte offset where it happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub offset: usize,
    pub kind: ParseErrorKind,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ParseErrorKind::*;
        let at = self.offset;
        match &self.kind {
            TooLarge { size, limit } => {
                write!(
                    f,
                    "JSON input is {size} bytes, over the limit of {limit} bytes"
                )
            }
            InvalidUtf8 => write!(f, "invalid UTF-8 at byte {at}"),
            ByteOrderMark => write!(f, "unexpected UTF-8 byte order mark at byte {at}"),
            UnexpectedEnd => write!(f, "JSON ends unexpectedly at byte {at}"),
            UnexpectedChar(c) => write!(f, "unexpected character {c:?} at byte {at}"),
            TrailingData => write!(f, "trailing data after the JSON value at byte {at}"),
            TooDeep { limit } => write!(f, "JSON nests deeper than {limit} levels at byte {at}"),
            DuplicateKey(key) => write!(f, "duplicate key {} at byte {at}", shown_key(key)),
            NonFinite(word) => write!(f, "non-finite number \"{word}\" at byte {at}"),
            LoneSurrogate(unit) => write!(f, "lone surrogate \\u{unit:04x} at byte {at}"),
            ControlCharInString(c) => {
                write!(
                    f,
                    "unescaped control character U+{c:04X} in string at byte {at}"
                )
            }
            InvalidEscape => write!(f, "invalid escape sequence at byte {at}"),
            InvalidNumber => write!(f, "invalid number at byte {at}"),
            IntegerTooLong => {
                write!(
                    f,
                    "integer with more than {MAX_INT_DIGITS} digits at byte {at}"
                )
            }
        }
    }
}

impl std::error::Error for ParseError {}

/// A key as error messages show it: plain field names (lower-case letters and `_`) as they
/// are, anything else withheld, since a key from untrusted input may itself be a secret.
pub fn shown_key(key: &str) -> String {
    if (1..=40).contains(&key.len()) && key.bytes().all(|b| b.is_ascii_lowercase() || b == b'_') {
        format!("\"{key}\"")
    } else {
        format!("(a key of {} characters, withheld)", key.chars().count())
    }
}

/// Parses untrusted JSON strictly.
pub fn parse(input: &[u8], limits: &Limits) -> Result<Value, ParseError> {
    Parser::run(input, *limits, false)
}

/// Parses JSON as CPython's `json.loads` does: the last duplicate key wins and `NaN`,
/// `Infinity`, `-Infinity` are numbers (which the canonical writer then refuses). Lone
/// surrogates are refused here already, since no canonical text can hold them.
pub fn parse_python(input: &[u8]) -> Result<Value, ParseError> {
    Parser::run(
        input,
        Limits {
            max_bytes: usize::MAX,
            max_depth: 990,
        },
        true,
    )
}

struct Parser<'a> {
    /// The input, checked to be UTF-8 before parsing starts.
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    limits: Limits,
    python: bool,
}

impl<'a> Parser<'a> {
    fn run(input: &'a [u8], limits: Limits, python: bool) -> Result<Value, ParseError> {
        if input.len() > limits.max_bytes {
            let kind = ParseErrorKind::TooLarge {
                size: input.len(),
                limit: limits.max_bytes,
            };
            return Err(ParseError {
                offset: limits.max_bytes,
                kind,
            });
        }
        let text = match std::str::from_utf8(input) {
            Ok(text) => text,
            Err(err) => {
                return Err(ParseError {
                    offset: err.valid_up_to(),
                    kind: ParseErrorKind::InvalidUtf8,
                })
            }
        };
        if input.starts_with(&[0xEF, 0xBB, 0xBF]) {
            return Err(ParseError {
                offset: 0,
                kind: ParseErrorKind::ByteOrderMark,
            });
        }
        let mut parser = Parser {
            text,
            bytes: input,
            pos: 0,
            limits,
            python,
        };
        parser.skip_ws();
        let value = parser.value(0)?;
        parser.skip_ws();
        if parser.pos != parser.bytes.len() {
            return Err(parser.error(ParseErrorKind::TrailingData));
        }
        Ok(value)
    }

    fn error(&self, kind: ParseErrorKind) -> ParseError {
        ParseError {
            offset: self.pos,
            kind,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn unexpected(&self) -> ParseError {
        match self.rest_str().chars().next() {
            Some(c) => self.error(ParseErrorKind::UnexpectedChar(c)),
            None => self.error(ParseErrorKind::UnexpectedEnd),
        }
    }

    fn rest_str(&self) -> &str {
        // `pos` only stops on character boundaries.
        self.text.get(self.pos..).unwrap_or("")
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn expect(&mut self, byte: u8) -> Result<(), ParseError> {
        if self.peek() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.unexpected())
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, ParseError> {
        match self.peek() {
            None => Err(self.error(ParseErrorKind::UnexpectedEnd)),
            Some(b'{') => self.object(depth + 1),
            Some(b'[') => self.array(depth + 1),
            Some(b'"') => self.string().map(Value::String),
            Some(b't') => self.literal("true", Value::Bool(true)),
            Some(b'f') => self.literal("false", Value::Bool(false)),
            Some(b'n') => self.literal("null", Value::Null),
            Some(b'N') => self.non_finite("NaN"),
            Some(b'I') => self.non_finite("Infinity"),
            Some(b'-') if self.bytes[self.pos..].starts_with(b"-Infinity") => {
                self.non_finite("-Infinity")
            }
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err(self.unexpected()),
        }
    }

    fn literal(&mut self, word: &str, value: Value) -> Result<Value, ParseError> {
        if self.bytes[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(value)
        } else {
            Err(self.unexpected())
        }
    }

    fn non_finite(&mut self, word: &str) -> Result<Value, ParseError> {
        if !self.bytes[self.pos..].starts_with(word.as_bytes()) {
            return Err(self.unexpected());
        }
        if !self.python {
            return Err(self.error(ParseErrorKind::NonFinite(word.to_owned())));
        }
        self.pos += word.len();
        Ok(Value::Number(Number::from_parsed(word.to_owned(), false)))
    }

    fn enter(&self, depth: usize) -> Result<(), ParseError> {
        if depth > self.limits.max_depth {
            Err(self.error(ParseErrorKind::TooDeep {
                limit: self.limits.max_depth,
            }))
        } else {
            Ok(())
        }
    }

    fn object(&mut self, depth: usize) -> Result<Value, ParseError> {
        self.enter(depth)?;
        self.pos += 1;
        let mut map = BTreeMap::new();
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(Value::Object(map));
        }
        loop {
            self.skip_ws();
            if self.peek() != Some(b'"') {
                return Err(self.unexpected());
            }
            let key_at = self.pos;
            let key = self.string()?;
            self.skip_ws();
            self.expect(b':')?;
            self.skip_ws();
            let value = self.value(depth)?;
            if map.contains_key(&key) && !self.python {
                return Err(ParseError {
                    offset: key_at,
                    kind: ParseErrorKind::DuplicateKey(key),
                });
            }
            map.insert(key, value);
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Value::Object(map));
                }
                _ => return Err(self.unexpected()),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Value, ParseError> {
        self.enter(depth)?;
        self.pos += 1;
        let mut items = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(Value::Array(items));
        }
        loop {
            self.skip_ws();
            items.push(self.value(depth)?);
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Value::Array(items));
                }
                _ => return Err(self.unexpected()),
            }
        }
    }

    fn string(&mut self) -> Result<String, ParseError> {
        self.pos += 1; // opening quote
        let mut out = String::new();
        loop {
            let start = self.pos;
            while let Some(byte) = self.peek() {
                if byte == b'"' || byte == b'\\' || byte < 0x20 {
                    break;
                }
                self.pos += 1;
            }
            // Stopped on an ASCII byte, so this slice ends on a character boundary.
            out.push_str(self.text.get(start..self.pos).unwrap_or(""));
            match self.peek() {
                None => return Err(self.error(ParseErrorKind::UnexpectedEnd)),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => self.escape(&mut out)?,
                Some(byte) => {
                    return Err(self.error(ParseErrorKind::ControlCharInString(u32::from(byte))))
                }
            }
        }
    }

    fn escape(&mut self, out: &mut String) -> Result<(), ParseError> {
        let at = self.pos;
        self.pos += 1;
        let c = match self.peek() {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => {
                self.pos += 1;
                let unit = self.hex4(at)?;
                out.push(self.surrogate_pair(unit, at)?);
                return Ok(());
            }
            _ => {
                return Err(ParseError {
                    offset: at,
                    kind: ParseErrorKind::InvalidEscape,
                })
            }
        };
        self.pos += 1;
        out.push(c);
        Ok(())
    }

    fn hex4(&mut self, escape_at: usize) -> Result<u16, ParseError> {
        let digits = self.bytes.get(self.pos..self.pos + 4);
        let text = digits.and_then(|d| std::str::from_utf8(d).ok());
        match text.filter(|t| t.bytes().all(|b| b.is_ascii_hexdigit())) {
            Some(t) => {
                self.pos += 4;
                u16::from_str_radix(t, 16).map_err(|_| ParseError {
                    offset: escape_at,
                    kind: ParseErrorKind::InvalidEscape,
                })
            }
            None => Err(ParseError {
                offset: escape_at,
                kind: ParseErrorKind::InvalidEscape,
            }),
        }
    }

    fn surrogate_pair(&mut self, unit: u16, at: usize) -> Result<char, ParseError> {
        let lone = ParseError {
            offset: at,
            kind: ParseErrorKind::LoneSurrogate(unit),
        };
        match unit {
            0xD800..=0xDBFF => {
                if !self.bytes[self.pos..].starts_with(b"\\u") {
                    return Err(lone);
                }
                let saved = self.pos;
                self.pos += 2;
                let low = self.hex4(saved)?;
                if !(0xDC00..=0xDFFF).contains(&low) {
                    return Err(lone);
                }
                let code = 0x10000 + ((u32::from(unit) - 0xD800) << 10) + (u32::from(low) - 0xDC00);
                char::from_u32(code).ok_or(lone)
            }
            0xDC00..=0xDFFF => Err(lone),
            _ => char::from_u32(u32::from(unit)).ok_or(lone),
        }
    }

    fn number(&mut self) -> Result<Value, ParseError> {
        let start = self.pos;
        let invalid = |pos| ParseError {
            offset: pos,
            kind: ParseErrorKind::InvalidNumber,
        };
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(invalid(self.pos)),
        }
        let int_end = self.pos;
        let mut is_integer = true;
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(invalid(self.pos));
            }
            self.digits();
            is_integer = false;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(invalid(self.pos));
            }
            self.digits();
            is_integer = false;
        }
        if is_integer && int_end - start > MAX_INT_DIGITS + 1 {
            return Err(ParseError {
                offset: start,
                kind: ParseErrorKind::IntegerTooLong,
            });
        }
        let text = String::from_utf8_lossy(&self.bytes[start..self.pos]).into_owned();
        Ok(Value::Number(Number::from_parsed(text, is_integer)))
    }

    fn digits(&mut self) {
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.pos += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strict(text: &str) -> Result<Value, ParseError> {
        parse(text.as_bytes(), &Limits::default())
    }

    #[test]
    fn duplicate_keys_are_compared_after_unescaping() {
        let err = strict(r#"{"a":1,"\u0061":2}"#).unwrap_err();
        assert_eq!(err.kind, ParseErrorKind::DuplicateKey("a".into()));
        assert_eq!(err.offset, 7);
        assert!(parse_python(br#"{"a":1,"a":2}"#).is_ok());
    }

    #[test]
    fn non_finite_literals_are_refused_with_offset() {
        let err = strict("[1, NaN]").unwrap_err();
        assert_eq!(err.kind, ParseErrorKind::NonFinite("NaN".into()));
        assert_eq!(err.offset, 4);
        assert!(strict("-Infinity").is_err());
        assert!(parse_python(b"-Infinity").is_ok());
    }

    #[test]
    fn lone_surrogates_are_refused() {
        for text in [r#""\ud800""#, r#""\udc00""#, r#""\ud800\u0041""#] {
            assert!(matches!(
                strict(text).unwrap_err().kind,
                ParseErrorKind::LoneSurrogate(_)
            ));
        }
        assert_eq!(
            strict(r#""\ud83d\ude00""#).unwrap(),
            Value::String("😀".into())
        );
    }

    #[test]
    fn nesting_size_and_trailing_data_are_bounded() {
        let deep = "[".repeat(65) + &"]".repeat(65);
        assert!(matches!(
            strict(&deep).unwrap_err().kind,
            ParseErrorKind::TooDeep { limit: 64 }
        ));
        let ok = "[".repeat(64) + &"]".repeat(64);
        assert!(strict(&ok).is_ok());
        let small = Limits {
            max_bytes: 4,
            max_depth: 64,
        };
        assert!(matches!(
            parse(b"[1,2]", &small).unwrap_err().kind,
            ParseErrorKind::TooLarge { size: 5, limit: 4 }
        ));
        let err = strict("{} x").unwrap_err();
        assert_eq!((err.kind, err.offset), (ParseErrorKind::TrailingData, 3));
    }

    #[test]
    fn invalid_utf8_and_control_characters_name_the_offset() {
        let err = parse(b"\"ab\xff\"", &Limits::default()).unwrap_err();
        assert_eq!((err.kind, err.offset), (ParseErrorKind::InvalidUtf8, 3));
        let err = strict("\"a\nb\"").unwrap_err();
        assert_eq!(
            (err.kind, err.offset),
            (ParseErrorKind::ControlCharInString(10), 2)
        );
    }

    #[test]
    fn numbers_keep_their_text() {
        let value = strict("[1.50, -0, 123456789012345678901234567890, 1E+2]").unwrap();
        let texts: Vec<&str> = value
            .as_array()
            .unwrap()
            .iter()
            .map(|v| match v {
                Value::Number(n) => n.text(),
                _ => "",
            })
            .collect();
        assert_eq!(
            texts,
            ["1.50", "-0", "123456789012345678901234567890", "1E+2"]
        );
        for bad in ["01", "1.", ".5", "-", "1e", "+1", "0x10"] {
            assert!(strict(bad).is_err(), "{bad}");
        }
    }
}
