//! Replays the reference vectors (`tests/vectors/`, or `CQ_VECTORS_DIR`) produced by the
//! seed's Python: canonical JSON and digests, the G002 consistency checker and the G001
//! pipeline. Every record must match.
#![allow(clippy::unwrap_used)]

#[path = "vectors/harness.rs"]
mod harness;

use cq::json::{self, Value};

#[test]
fn canonical_sha256_vectors() {
    let records = harness::records("canonical_sha256.jsonl");
    assert!(!records.is_empty());
    let mut failures = Vec::new();
    for record in &records {
        let id = record
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_owned();
        let text = record.get("value_json").and_then(Value::as_str).unwrap();
        let result = json::parse_python(text.as_bytes())
            .map_err(|e| e.to_string())
            .and_then(|value| json::canonical(&value).map_err(|e| e.to_string()));
        match (record.get("error"), result) {
            (Some(Value::Null), Ok(canonical)) => {
                let expected = record.get("canonical").and_then(Value::as_str).unwrap();
                let digest = record.get("sha256").and_then(Value::as_str).unwrap();
                if canonical != expected || json::sha256_hex(canonical.as_bytes()) != digest {
                    failures.push(format!("{id}: got {canonical:?}, want {expected:?}"));
                }
            }
            (Some(Value::Null), Err(err)) => failures.push(format!("{id}: refused: {err}")),
            (_, Ok(canonical)) => failures.push(format!("{id}: accepted {canonical:?}")),
            (_, Err(_)) => {}
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} records differ:\n{}",
        failures.len(),
        records.len(),
        failures.join("\n")
    );
}
