//! Fixed-shape bodies (receipts, evidence, claims, results) written as canonical JSON straight
//! from borrowed fields, without building a value tree first: the gate hashes dozens of them
//! on every call. A body is one list of `(key, Field)` pairs; its canonical text, its digest
//! and, where a caller wants one, its `Value` all come from that one list, so they cannot
//! disagree.

use std::fmt::Write as _;

use super::canonical::write_string;
use super::value::{object, Value};

/// One member of a fixed-shape body, borrowed.
#[derive(Debug, Clone, Copy)]
pub enum Field<'a> {
    Str(&'a str),
    Int(i64),
    Bool(bool),
    Null,
    /// An array of strings.
    Strs(&'a [String]),
    /// Text that is already canonical JSON (a nested body or population written before).
    Canonical(&'a str),
}

/// Appends the canonical text of the object made of `fields` (in any order; they are sorted
/// here by code point, as Python's `sort_keys` does) to `out`.
pub fn write_object(out: &mut String, fields: &mut [(&str, Field<'_>)]) {
    if !fields.is_sorted_by(|a, b| a.0 <= b.0) {
        fields.sort_unstable_by(|a, b| a.0.cmp(b.0));
    }
    out.push('{');
    for (index, (key, field)) in fields.iter().enumerate() {
        if index > 0 {
            out.push(',');
        }
        write_string(out, key);
        out.push(':');
        write_field(out, field);
    }
    out.push('}');
}

fn write_field(out: &mut String, field: &Field<'_>) {
    match field {
        Field::Str(text) => write_string(out, text),
        Field::Int(n) => {
            let _ = write!(out, "{n}");
        }
        Field::Bool(true) => out.push_str("true"),
        Field::Bool(false) => out.push_str("false"),
        Field::Null => out.push_str("null"),
        Field::Strs(items) => write_strings(out, items.iter().map(String::as_str)),
        Field::Canonical(text) => out.push_str(text),
    }
}

/// Appends a JSON array of strings.
pub fn write_strings<'s>(out: &mut String, items: impl IntoIterator<Item = &'s str>) {
    out.push('[');
    for (index, item) in items.into_iter().enumerate() {
        if index > 0 {
            out.push(',');
        }
        write_string(out, item);
    }
    out.push(']');
}

/// The canonical text of a JSON string.
pub fn canonical_str(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    write_string(&mut out, text);
    out
}

/// The canonical text of one body.
pub fn canonical_object(fields: &mut [(&str, Field<'_>)]) -> String {
    let mut out = String::with_capacity(capacity(fields));
    write_object(&mut out, fields);
    out
}

/// About the length of the body's text (escapes aside), so it is written without regrowing.
fn capacity(fields: &[(&str, Field<'_>)]) -> usize {
    let values: usize = fields
        .iter()
        .map(|(key, field)| {
            key.len()
                + 6
                + match field {
                    Field::Str(text) | Field::Canonical(text) => text.len(),
                    Field::Strs(items) => items.iter().map(|i| i.len() + 3).sum(),
                    Field::Int(_) | Field::Bool(_) | Field::Null => 20,
                }
        })
        .sum();
    values + 2
}

/// The canonical text of an array whose items are written by `item`.
pub fn canonical_array<T>(items: &[T], mut item: impl FnMut(&mut String, &T)) -> String {
    let mut out = String::with_capacity(64 + 256 * items.len());
    out.push('[');
    for (index, value) in items.iter().enumerate() {
        if index > 0 {
            out.push(',');
        }
        item(&mut out, value);
    }
    out.push(']');
    out
}

/// The same body as a `Value`, for callers that walk or show it. `Canonical` members are read
/// back with the strict parser; a member that does not parse becomes `null`, which can only
/// happen if a caller passed text that is not JSON.
pub fn object_value(fields: &[(&str, Field<'_>)]) -> Value {
    object(fields.iter().map(|(key, field)| {
        let value = match field {
            Field::Str(text) => Value::from(*text),
            Field::Int(n) => Value::from(*n),
            Field::Bool(flag) => Value::Bool(*flag),
            Field::Null => Value::Null,
            Field::Strs(items) => Value::from(*items),
            Field::Canonical(text) => {
                let limits = super::Limits {
                    max_bytes: usize::MAX,
                    max_depth: 64,
                };
                super::parse(text.as_bytes(), &limits).unwrap_or(Value::Null)
            }
        };
        (key.to_string(), value)
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::canonical;

    #[test]
    fn a_body_written_directly_is_the_canonical_text_of_its_value() {
        let strs = vec!["b\"\n".to_owned(), "é".to_owned()];
        let mut fields = [
            ("zeta", Field::Str("z\u{1}\\")),
            ("alpha", Field::Int(-42)),
            ("mid", Field::Bool(true)),
            ("empty", Field::Null),
            ("list", Field::Strs(&strs)),
            ("nested", Field::Canonical(r#"{"a":[1,2]}"#)),
            ("Upper", Field::Bool(false)),
            ("é-key", Field::Str("")),
        ];
        let text = canonical_object(&mut fields);
        assert_eq!(canonical(&object_value(&fields)).unwrap(), text);
        assert!(text.starts_with(r#"{"Upper":false,"alpha":-42,"#));
    }

    #[test]
    fn arrays_are_written_item_by_item() {
        let items = ["x", "y"];
        let text = canonical_array(&items, |out, item| {
            write_object(out, &mut [("v", Field::Str(item))])
        });
        assert_eq!(text, r#"[{"v":"x"},{"v":"y"}]"#);
        assert_eq!(canonical_array::<&str>(&[], |_, _| {}), "[]");
    }
}
