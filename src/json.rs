//! Our own JSON: a strict parser for untrusted input and a canonical writer that is
//! bit-identical to the seed's Python (`json.dumps(v, sort_keys=True, separators=(",", ":"),
//! ensure_ascii=False, allow_nan=False)`), so every digest `cq` computes matches the seed's.
//!
//! Numbers keep their exact text; integers have no size limit. The strict parser refuses
//! duplicate keys (compared after unescaping), `NaN`/`Infinity`, lone surrogates, deep
//! nesting, oversized input, trailing garbage and invalid UTF-8, each with the byte offset.
//! A second, Python-compatible reading exists only to replay the reference vectors and for
//! `cq digest --python`.

mod canonical;
mod fields;
mod float;
mod parse;
mod value;

pub use canonical::{
    canonical, canonical_sha256, hashed_on_this_thread, sha256_hex, to_ascii, CanonicalError,
};
pub use fields::{
    canonical_array, canonical_object, canonical_str, object_value, write_object, write_strings,
    Field,
};
pub use parse::{parse, parse_python, shown_key, Limits, ParseError, ParseErrorKind};
pub use value::{object, Number, Value};
