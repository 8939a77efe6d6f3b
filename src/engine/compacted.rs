//! The compacted context as the checks see it (G001 + G002's closed schema). Fields hold
//! what the summarizer wrote; `schema` decides whether that is valid, and the consistency
//! checker must still give the seed's answer for values the schema would have refused, so
//! enumerations stay strings here.

use crate::json::{canonical_array, canonical_object, object_value, write_object, Field, Value};

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
    /// The seed's `claim_body`, as fields.
    pub fn fields(&self) -> [(&'static str, Field<'_>); 6] {
        [
            (
                "canonical_predicate_sha256",
                Field::Str(&self.canonical_predicate_sha256),
            ),
            (
                "canonical_record_sha256",
                Field::Str(&self.canonical_record_sha256),
            ),
            ("constraint_id", Field::Str(&self.constraint_id)),
            ("constraint_type", Field::Str(&self.constraint_type)),
            ("preserved_predicate", Field::Str(&self.preserved_predicate)),
            ("status", Field::Str(&self.status)),
        ]
    }

    /// The seed's `claim_body`.
    pub fn body(&self) -> Value {
        object_value(&self.fields())
    }

    /// The canonical text of a claim population, in the order given.
    pub fn population<'c>(claims: impl IntoIterator<Item = &'c Claim>) -> String {
        let claims: Vec<&Claim> = claims.into_iter().collect();
        canonical_array(&claims, |out, claim| write_object(out, &mut claim.fields()))
    }

    pub fn key(&self) -> (&str, &str) {
        (&self.constraint_type, &self.constraint_id)
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
    /// The canonical text of the seed's `model_dump()` (the five fields as a JSON object),
    /// written directly.
    pub fn canonical(&self) -> String {
        let claims = Claim::population(&self.preserved_constraint_claims);
        canonical_object(&mut [
            ("preserved_constraint_claims", Field::Canonical(&claims)),
            (
                "retained_policy_commitment_ids",
                Field::Strs(&self.retained_policy_commitment_ids),
            ),
            (
                "retained_safety_invariant_ids",
                Field::Strs(&self.retained_safety_invariant_ids),
            ),
            (
                "source_message_sha256s",
                Field::Strs(&self.source_message_sha256s),
            ),
            ("summary_text", Field::Str(&self.summary_text)),
        ])
    }
}
