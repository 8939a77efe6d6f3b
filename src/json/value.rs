//! The JSON value type: objects are sorted maps (the canonical order is code-point order,
//! which is also the byte order of UTF-8 keys), numbers keep their source text.

use std::collections::BTreeMap;

/// A JSON number exactly as written. `is_integer` is true when the text has no fraction and
/// no exponent; such numbers are integers of any size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Number {
    text: String,
    is_integer: bool,
}

impl Number {
    /// The number's text as it appeared in the input (or as built).
    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn is_integer(&self) -> bool {
        self.is_integer
    }

    /// Built only by the parser, which has validated `text`.
    pub(crate) fn from_parsed(text: String, is_integer: bool) -> Number {
        Number { text, is_integer }
    }

    /// The value as an `i64` when it is an integer that fits.
    pub fn as_i64(&self) -> Option<i64> {
        if self.is_integer {
            self.text.parse().ok()
        } else {
            None
        }
    }
}

impl From<i64> for Number {
    fn from(value: i64) -> Number {
        Number {
            text: value.to_string(),
            is_integer: true,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Null,
    Bool(bool),
    Number(Number),
    String(String),
    Array(Vec<Value>),
    Object(BTreeMap<String, Value>),
}

impl Value {
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(text) => Some(text),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(items) => Some(items),
            _ => None,
        }
    }

    pub fn as_object(&self) -> Option<&BTreeMap<String, Value>> {
        match self {
            Value::Object(map) => Some(map),
            _ => None,
        }
    }

    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Number(number) => number.as_i64(),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(flag) => Some(*flag),
            _ => None,
        }
    }

    /// The member `key` of an object, `None` for a missing key or a non-object.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.as_object().and_then(|map| map.get(key))
    }

    /// Calls `visit(path, text)` for every string in the value, object keys included (as
    /// `PATH#key`). A key that is not a plain field name is named `<key N>` in paths, since a
    /// key from untrusted input may itself be a secret.
    pub fn visit_strings(&self, visit: &mut dyn FnMut(&str, &str)) {
        self.visit_at(String::new(), None, &mut |path, _, text| visit(path, text));
    }

    /// As [`Value::visit_strings`], also giving the member name a string value sits under in
    /// its object (`None` for keys themselves, array items and a top-level string).
    pub fn visit_strings_with_keys(&self, visit: &mut dyn FnMut(&str, Option<&str>, &str)) {
        self.visit_at(String::new(), None, visit);
    }

    fn visit_at(
        &self,
        path: String,
        key: Option<&str>,
        visit: &mut dyn FnMut(&str, Option<&str>, &str),
    ) {
        match self {
            Value::String(text) => visit(&path, key, text),
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    item.visit_at(format!("{path}[{i}]"), None, visit);
                }
            }
            Value::Object(map) => {
                for (index, (name, item)) in map.iter().enumerate() {
                    let plain = super::shown_key(name).starts_with('"');
                    let shown = if plain {
                        name.clone()
                    } else {
                        format!("<key {index}>")
                    };
                    let path = if path.is_empty() {
                        shown
                    } else {
                        format!("{path}.{shown}")
                    };
                    visit(&format!("{path}#key"), None, name);
                    item.visit_at(path, Some(name), visit);
                }
            }
            _ => {}
        }
    }

    /// A short name of the value's type for error messages ("string", "array", ...).
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Number(n) if n.is_integer() => "integer",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
        }
    }
}

/// Builds an object from `(key, value)` pairs; a later pair with the same key wins.
pub fn object<K: Into<String>, I: IntoIterator<Item = (K, Value)>>(pairs: I) -> Value {
    Value::Object(pairs.into_iter().map(|(k, v)| (k.into(), v)).collect())
}

impl From<&str> for Value {
    fn from(value: &str) -> Value {
        Value::String(value.to_owned())
    }
}

impl From<String> for Value {
    fn from(value: String) -> Value {
        Value::String(value)
    }
}

impl From<&String> for Value {
    fn from(value: &String) -> Value {
        Value::String(value.clone())
    }
}

impl From<bool> for Value {
    fn from(value: bool) -> Value {
        Value::Bool(value)
    }
}

impl From<i64> for Value {
    fn from(value: i64) -> Value {
        Value::Number(Number::from(value))
    }
}

impl From<u64> for Value {
    fn from(value: u64) -> Value {
        Value::Number(Number {
            text: value.to_string(),
            is_integer: true,
        })
    }
}

impl From<usize> for Value {
    fn from(value: usize) -> Value {
        Value::from(value as u64)
    }
}

impl From<Vec<Value>> for Value {
    fn from(items: Vec<Value>) -> Value {
        Value::Array(items)
    }
}

impl From<Vec<String>> for Value {
    fn from(items: Vec<String>) -> Value {
        Value::Array(items.into_iter().map(Value::String).collect())
    }
}

impl From<&[String]> for Value {
    fn from(items: &[String]) -> Value {
        Value::Array(items.iter().map(Value::from).collect())
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(value: Option<T>) -> Value {
        value.map_or(Value::Null, Into::into)
    }
}
