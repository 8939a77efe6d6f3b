//! The verified invariant manifest and commitment snapshot (G002), their record bodies and
//! digests. The policy builds them; the checker re-derives every digest and refuses any that
//! differ, exactly as the seed does.

use crate::json::{canonical_array, canonical_object, sha256_hex, write_object, Field};

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
    /// The seed's `invariant_body` / `commitment_body`, as fields.
    fn fields(&self, kind: RecordKind) -> [(&'static str, Field<'_>); 4] {
        [
            (kind.id_field(), Field::Str(&self.id)),
            ("canonical_text", Field::Str(&self.canonical_text)),
            ("canonical_predicate", Field::Str(&self.canonical_predicate)),
            ("record_revision", Field::Int(self.record_revision)),
        ]
    }

    /// The canonical SHA-256 of the body: what `record_sha256` must be.
    pub fn body_sha256(&self, kind: RecordKind) -> String {
        sha256_hex(canonical_object(&mut self.fields(kind)).as_bytes())
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
        record.record_sha256 = record.body_sha256(kind);
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
    /// The canonical SHA-256 of the body the manifest (or snapshot) digest is taken over.
    pub fn body_sha256(&self, policy_sha256: &str) -> String {
        let records = canonical_array(&self.records, |out, record| {
            let [id, text, predicate, revision] = record.fields(self.kind);
            write_object(
                out,
                &mut [
                    id,
                    text,
                    predicate,
                    revision,
                    ("record_sha256", Field::Str(&record.record_sha256)),
                ],
            )
        });
        let body = canonical_object(&mut [
            ("schema_version", Field::Str(self.kind.schema_version())),
            ("policy_sha256", Field::Str(policy_sha256)),
            (self.kind.revision_field(), Field::Int(self.revision)),
            ("records", Field::Canonical(&records)),
        ]);
        sha256_hex(body.as_bytes())
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
        set.digest = set.body_sha256(policy_sha256);
        set
    }

    pub fn ids(&self) -> Vec<String> {
        self.records
            .iter()
            .map(|record| record.id.clone())
            .collect()
    }
}
