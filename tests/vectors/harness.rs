//! Shared loading for the vector replays: reads a JSONL file from `CQ_VECTORS_DIR` (a held-out
//! set of the same shape) or from `tests/vectors/`.

use std::path::PathBuf;

use cq::json::{self, Value};

pub fn dir() -> PathBuf {
    match std::env::var_os("CQ_VECTORS_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/vectors"),
    }
}

pub fn records(name: &str) -> Vec<Value> {
    let path = dir().join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {path:?}: {e}"));
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .enumerate()
        .map(|(n, line)| {
            json::parse_python(line.as_bytes())
                .unwrap_or_else(|e| panic!("{path:?} line {}: {e}", n + 1))
        })
        .collect()
}
