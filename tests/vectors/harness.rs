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

pub fn field<'a>(value: &'a Value, key: &str) -> &'a Value {
    value
        .get(key)
        .unwrap_or_else(|| panic!("vector lacks field {key:?}"))
}

pub fn text(value: &Value, key: &str) -> String {
    field(value, key)
        .as_str()
        .unwrap_or_else(|| panic!("{key:?} is not a string"))
        .to_owned()
}

pub fn strings(value: &Value, key: &str) -> Vec<String> {
    field(value, key)
        .as_array()
        .unwrap_or_else(|| panic!("{key:?} is not an array"))
        .iter()
        .map(|v| {
            v.as_str()
                .unwrap_or_else(|| panic!("{key:?} holds a non-string"))
                .to_owned()
        })
        .collect()
}

pub fn int(value: &Value, key: &str) -> i64 {
    field(value, key)
        .as_i64()
        .unwrap_or_else(|| panic!("{key:?} is not an integer"))
}

pub fn record_set(
    value: &Value,
    kind: cq::engine::registry::RecordKind,
) -> cq::engine::registry::RecordSet {
    use cq::engine::registry::{ConstraintRecord, RecordKind, RecordSet};
    let (digest, revision, records, id) = match kind {
        RecordKind::Invariant => (
            "manifest_sha256",
            "registry_revision",
            "invariant_records",
            "invariant_id",
        ),
        RecordKind::Commitment => (
            "snapshot_sha256",
            "commitment_revision",
            "commitment_records",
            "commitment_id",
        ),
    };
    RecordSet {
        kind,
        digest: text(value, digest),
        policy_sha256: text(value, "policy_sha256"),
        revision: int(value, revision),
        records: field(value, records)
            .as_array()
            .unwrap()
            .iter()
            .map(|r| ConstraintRecord {
                id: text(r, id),
                canonical_text: text(r, "canonical_text"),
                canonical_predicate: text(r, "canonical_predicate"),
                record_revision: int(r, "record_revision"),
                record_sha256: text(r, "record_sha256"),
            })
            .collect(),
    }
}

pub fn compacted(value: &Value) -> cq::engine::compacted::CompactedContext {
    use cq::engine::compacted::{Claim, CompactedContext};
    CompactedContext {
        summary_text: text(value, "summary_text"),
        retained_safety_invariant_ids: strings(value, "retained_safety_invariant_ids"),
        retained_policy_commitment_ids: strings(value, "retained_policy_commitment_ids"),
        source_message_sha256s: strings(value, "source_message_sha256s"),
        preserved_constraint_claims: field(value, "preserved_constraint_claims")
            .as_array()
            .unwrap()
            .iter()
            .map(|c| Claim {
                constraint_type: text(c, "constraint_type"),
                constraint_id: text(c, "constraint_id"),
                canonical_record_sha256: text(c, "canonical_record_sha256"),
                canonical_predicate_sha256: text(c, "canonical_predicate_sha256"),
                preserved_predicate: text(c, "preserved_predicate"),
                status: text(c, "status"),
            })
            .collect(),
    }
}
