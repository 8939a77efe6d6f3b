//! A strict JSON reader that keeps where every value is in the text, so a settings file can be
//! edited in place: what is not edited stays byte for byte, formatting and order included.
//! RFC 8259 only (no comments, no trailing commas); a duplicate key, nesting deeper than
//! [`MAX_DEPTH`], or trailing text is an error with its line and column.

/// Deeper than any settings file; keeps the recursion bounded.
pub(crate) const MAX_DEPTH: usize = 128;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Node {
    /// Byte range of the value in the text.
    pub start: usize,
    pub end: usize,
    pub kind: Kind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kind {
    Object(Vec<Member>),
    Array(Vec<Node>),
    String(String),
    /// A number, `true`, `false` or `null`.
    Scalar,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Member {
    pub key: String,
    pub key_start: usize,
    pub value: Node,
}

impl Node {
    pub fn member(&self, key: &str) -> Option<&Member> {
        match &self.kind {
            Kind::Object(members) => members.iter().find(|m| m.key == key),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match &self.kind {
            Kind::String(text) => Some(text),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SyntaxError {
    pub line: usize,
    pub column: usize,
    pub what: String,
}

pub(crate) fn parse(text: &str) -> Result<Node, SyntaxError> {
    let mut reader = Reader {
        text,
        bytes: text.as_bytes(),
        at: 0,
    };
    reader.skip_space();
    let node = reader.value(0)?;
    reader.skip_space();
    if reader.at < reader.bytes.len() {
        return Err(reader.error("text after the end of the JSON value"));
    }
    Ok(node)
}

struct Reader<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn error(&self, what: &str) -> SyntaxError {
        let before = self.text.get(..self.at).unwrap_or(self.text);
        let line = before.matches('\n').count() + 1;
        let column = before
            .rsplit('\n')
            .next()
            .map_or(0, |last| last.chars().count())
            + 1;
        SyntaxError {
            line,
            column,
            what: what.to_string(),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn skip_space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn expect(&mut self, byte: u8, what: &str) -> Result<(), SyntaxError> {
        if self.peek() == Some(byte) {
            self.at += 1;
            Ok(())
        } else {
            Err(self.error(what))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Node, SyntaxError> {
        if depth > MAX_DEPTH {
            return Err(self.error("nesting is too deep"));
        }
        let start = self.at;
        let kind = match self.peek() {
            Some(b'{') => self.object(depth)?,
            Some(b'[') => self.array(depth)?,
            Some(b'"') => Kind::String(self.string()?),
            Some(b't') => self.word("true")?,
            Some(b'f') => self.word("false")?,
            Some(b'n') => self.word("null")?,
            Some(b'-' | b'0'..=b'9') => self.number()?,
            Some(_) => return Err(self.error("expected a JSON value")),
            None => return Err(self.error("the text ends where a value was expected")),
        };
        Ok(Node {
            start,
            end: self.at,
            kind,
        })
    }

    fn object(&mut self, depth: usize) -> Result<Kind, SyntaxError> {
        self.at += 1;
        let mut members: Vec<Member> = Vec::new();
        self.skip_space();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(Kind::Object(members));
        }
        loop {
            self.skip_space();
            let key_start = self.at;
            if self.peek() != Some(b'"') {
                return Err(self.error("expected a string key"));
            }
            let key = self.string()?;
            if members.iter().any(|m| m.key == key) {
                self.at = key_start;
                return Err(self.error(&format!("the key \"{key}\" appears twice in one object")));
            }
            self.skip_space();
            self.expect(b':', "expected ':' after a key")?;
            self.skip_space();
            let value = self.value(depth + 1)?;
            members.push(Member {
                key,
                key_start,
                value,
            });
            self.skip_space();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    return Ok(Kind::Object(members));
                }
                _ => return Err(self.error("expected ',' or '}'")),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Kind, SyntaxError> {
        self.at += 1;
        let mut items = Vec::new();
        self.skip_space();
        if self.peek() == Some(b']') {
            self.at += 1;
            return Ok(Kind::Array(items));
        }
        loop {
            self.skip_space();
            items.push(self.value(depth + 1)?);
            self.skip_space();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b']') => {
                    self.at += 1;
                    return Ok(Kind::Array(items));
                }
                _ => return Err(self.error("expected ',' or ']'")),
            }
        }
    }

    fn word(&mut self, word: &str) -> Result<Kind, SyntaxError> {
        if self.bytes.get(self.at..self.at + word.len()) == Some(word.as_bytes()) {
            self.at += word.len();
            Ok(Kind::Scalar)
        } else {
            Err(self.error("expected a JSON value"))
        }
    }

    fn number(&mut self) -> Result<Kind, SyntaxError> {
        let start = self.at;
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.peek() {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.error("expected a digit")),
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.error("expected a digit after '.'"));
            }
            self.digits();
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.error("expected a digit in the exponent"));
            }
            self.digits();
        }
        debug_assert!(self.at > start);
        Ok(Kind::Scalar)
    }

    fn digits(&mut self) {
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
    }

    fn string(&mut self) -> Result<String, SyntaxError> {
        self.at += 1;
        let mut out = String::new();
        loop {
            let run_start = self.at;
            while matches!(self.peek(), Some(byte) if byte != b'"' && byte != b'\\' && byte >= 0x20)
            {
                self.at += 1;
            }
            out.push_str(self.text.get(run_start..self.at).unwrap_or(""));
            match self.peek() {
                Some(b'"') => {
                    self.at += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.at += 1;
                    self.escape(&mut out)?;
                }
                Some(_) => return Err(self.error("a control character inside a string")),
                None => return Err(self.error("the text ends inside a string")),
            }
        }
    }

    fn escape(&mut self, out: &mut String) -> Result<(), SyntaxError> {
        let byte = self
            .peek()
            .ok_or_else(|| self.error("the text ends inside a string"))?;
        self.at += 1;
        let ch = match byte {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let first = self.hex4()?;
                if (0xD800..0xDC00).contains(&first) {
                    if self.bytes.get(self.at..self.at + 2) != Some(b"\\u") {
                        return Err(self.error("a lone surrogate escape"));
                    }
                    self.at += 2;
                    let second = self.hex4()?;
                    if !(0xDC00..0xE000).contains(&second) {
                        return Err(self.error("a lone surrogate escape"));
                    }
                    let code = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00);
                    char::from_u32(code).ok_or_else(|| self.error("an invalid escape"))?
                } else {
                    char::from_u32(first).ok_or_else(|| self.error("a lone surrogate escape"))?
                }
            }
            _ => return Err(self.error("an invalid escape")),
        };
        out.push(ch);
        Ok(())
    }

    fn hex4(&mut self) -> Result<u32, SyntaxError> {
        let digits = self
            .text
            .get(self.at..self.at + 4)
            .ok_or_else(|| self.error("a short \\u escape"))?;
        let value = u32::from_str_radix(digits, 16).map_err(|_| self.error("a bad \\u escape"))?;
        self.at += 4;
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_point_at_the_values() {
        let text = "{ \"a\" : [1, {\"b\": \"x\\u00e9\"}], \"c\": null }";
        let root = parse(text).unwrap();
        let a = root.member("a").unwrap();
        assert_eq!(
            &text[a.value.start..a.value.end],
            "[1, {\"b\": \"x\\u00e9\"}]"
        );
        let Kind::Array(items) = &a.value.kind else {
            panic!()
        };
        assert_eq!(items[1].member("b").unwrap().value.as_str(), Some("xé"));
    }

    #[test]
    fn malformed_text_is_an_error_with_its_place() {
        for (text, line, column) in [
            ("{\"a\": 1,}", 1, 9),
            ("{\n  \"a\": 1\n  \"b\": 2\n}", 3, 3),
            ("{\"a\": 1, \"a\": 2}", 1, 10),
            ("// c\n{}", 1, 1),
            ("{} {}", 1, 4),
            ("[\"\\ud800\"]", 1, 9),
        ] {
            let error = parse(text).unwrap_err();
            assert_eq!(
                (error.line, error.column),
                (line, column),
                "{text}: {}",
                error.what
            );
        }
        let deep = "[".repeat(MAX_DEPTH + 2);
        assert!(parse(&deep).unwrap_err().what.contains("deep"));
    }
}
