//! The compacted context as the checks see it (G001 + G002's closed schema). Fields hold
//! what the summarizer wrote; `schema` decides whether that is valid, and the consistency
//! checker must still give the seed's answer for values the schema would have refused, so
//! enumerations stay strings here.

use crate::json::{object, Value};

/// One untrusted claim that a registered constraint survived compaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    pub constraint_type: String,
    pub constraint_id: String,
    pub canonical_record_sha256: String,
    pub canonical_predicate_sha256: String,
    pub preserved_predicate: String,
    pub status: String,
}

impl Claim {
    /// The seed's `claim_body`.
    pub fn body(&self) -> Value {
        object([
            ("constraint_type", Value::from(&self.constraint_type)),
            ("constraint_id", Value::from(&self.constraint_id)),
            (
                "canonical_record_sha256",
                Value::from(&self.canonical_record_sha256),
            ),
            (
                "canonical_predicate_sha256",
                Value::from(&self.canonical_predicate_sha256),
            ),
            (
                "preserved_predicate",
                Value::from(&self.preserved_predicate),
            ),
            ("status", Value::from(&self.status)),
        ])
    }

    pub fn key(&self) -> (String, String) {
        (self.constraint_type.clone(), self.constraint_id.clone())
    }
}

/// The summarizer's output in the closed schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactedContext {
    pub summary_text: String,
    pub retained_safety_invariant_ids: Vec<String>,
    pub retained_policy_commitment_ids: Vec<String>,
    pub source_message_sha256s: Vec<String>,
    pub preserved_constraint_claims: Vec<Claim>,
}

impl CompactedContext {
    /// The seed's `model_dump()`: the five fields as a JSON object.
    pub fn to_value(&self) -> Value {
        object([
            ("summary_text", Value::from(&self.summary_text)),
            (
                "retained_safety_invariant_ids",
                Value::from(&self.retained_safety_invariant_ids[..]),
            ),
            (
                "retained_policy_commitment_ids",
                Value::from(&self.retained_policy_commitment_ids[..]),
            ),
            (
                "source_message_sha256s",
                Value::from(&self.source_message_sha256s[..]),
            ),
            (
                "preserved_constraint_claims",
                Value::Array(
                    self.preserved_constraint_claims
                        .iter()
                        .map(Claim::body)
                        .collect(),
                ),
            ),
        ])
    }
}
