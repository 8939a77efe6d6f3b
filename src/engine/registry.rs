//! The verified invariant manifest and commitment snapshot (G002), their record bodies and
//! digests. The policy builds them; the checker re-derives every digest and refuses any that
//! differ, exactly as the seed does.

use crate::json::{canonical_sha256, object, Value};

/// A registered invariant or commitment record. `kind` says which.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConstraintRecord {
    pub id: String,
    pub canonical_text: String,
    pub canonical_predicate: String,
    pub record_revision: i64,
    pub record_sha256: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordKind {
    Invariant,
    Commitment,
}

impl RecordKind {
    pub fn id_field(self) -> &'static str {
        match self {
            RecordKind::Invariant => "invariant_id",
            RecordKind::Commitment => "commitment_id",
        }
    }

    /// `INVARIANT` or `COMMITMENT`, the claim's `constraint_type`.
    pub fn constraint_type(self) -> &'static str {
        match self {
            RecordKind::Invariant => "INVARIANT",
            RecordKind::Commitment => "COMMITMENT",
        }
    }

    fn schema_version(self) -> &'static str {
        match self {
            RecordKind::Invariant => "aidefend.invariant-manifest.v3",
            RecordKind::Commitment => "aidefend.commitment-snapshot.v3",
        }
    }

    fn revision_field(self) -> &'static str {
        match self {
            RecordKind::Invariant => "registry_revision",
            RecordKind::Commitment => "commitment_revision",
        }
    }
}

impl ConstraintRecord {
    /// The seed's `invariant_body` / `commitment_body`.
    pub fn body(&self, kind: RecordKind) -> Value {
        object([
            (kind.id_field(), Value::from(&self.id)),
            ("canonical_text", Value::from(&self.canonical_text)),
            (
                "canonical_predicate",
                Value::from(&self.canonical_predicate),
            ),
            ("record_revision", Value::from(self.record_revision)),
        ])
    }

    /// A record with its `record_sha256` computed from its body.
    pub fn sealed(kind: RecordKind, id: &str, text: &str, predicate: &str, revision: i64) -> Self {
        let mut record = ConstraintRecord {
            id: id.to_owned(),
            canonical_text: text.to_owned(),
            canonical_predicate: predicate.to_owned(),
            record_revision: revision,
            record_sha256: String::new(),
        };
        record.record_sha256 = canonical_sha256(&record.body(kind)).unwrap_or_default();
        record
    }
}

/// The invariant manifest or the commitment snapshot: a revisioned, digested record list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordSet {
    pub kind: RecordKind,
    pub digest: String,
    pub policy_sha256: String,
    pub revision: i64,
    pub records: Vec<ConstraintRecord>,
}

impl RecordSet {
    /// The body whose canonical SHA-256 is the manifest (or snapshot) digest.
    pub fn body(&self, policy_sha256: &str) -> Value {
        let records = self
            .records
            .iter()
            .map(|record| {
                let mut body = record.body(self.kind);
                if let Value::Object(map) = &mut body {
                    map.insert("record_sha256".into(), Value::from(&record.record_sha256));
                }
                body
            })
            .collect();
        object([
            ("schema_version", Value::from(self.kind.schema_version())),
            ("policy_sha256", Value::from(policy_sha256)),
            (self.kind.revision_field(), Value::from(self.revision)),
            ("records", Value::Array(records)),
        ])
    }

    /// A set with every digest computed, as a trusted registry would serve it.
    pub fn sealed(
        kind: RecordKind,
        policy_sha256: &str,
        revision: i64,
        records: Vec<ConstraintRecord>,
    ) -> Self {
        let mut set = RecordSet {
            kind,
            digest: String::new(),
            policy_sha256: policy_sha256.to_owned(),
            revision,
            records,
        };
        set.digest = canonical_sha256(&set.body(policy_sha256)).unwrap_or_default();
        set
    }

    pub fn ids(&self) -> Vec<String> {
        self.records
            .iter()
            .map(|record| record.id.clone())
            .collect()
    }
}
