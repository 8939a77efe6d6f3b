//! Receipt bodies: canonical JSON objects of schema `cq.receipt.v1`.
//!
//! Every body has `schema`, `seq`, `kind`, `time` and `prev_receipt_sha256` (the SHA-256 of
//! the previous receipt's bytes, 64 zeros for the first), plus fields that depend on the kind.
//! Values are digests, identifiers, codes and reviewer notes; callers never put a request, a
//! summary or a matched secret in a receipt. A receipt's bytes are its canonical text, so its
//! digest equals `json::canonical_sha256` of the parsed body.

use std::collections::BTreeMap;

use crate::json::{self, CanonicalError, Value};

/// The schema tag written into every receipt.
pub const RECEIPT_SCHEMA: &str = "cq.receipt.v1";

/// The `prev_receipt_sha256` of the first receipt.
pub const GENESIS_PREV: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// What a receipt records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReceiptKind {
    /// The gate's verdict on a newly recorded compaction.
    Verdict,
    /// A rerun that changed the report.
    Rerun,
    /// One reviewer's approval towards a two-person release.
    Approval,
    /// The final release or reject.
    Decision,
    /// A reviewer revealed a masked secret span.
    Reveal,
    /// A reviewer key was registered.
    Reviewer,
}

impl ReceiptKind {
    pub const ALL: [ReceiptKind; 6] = [
        ReceiptKind::Verdict,
        ReceiptKind::Rerun,
        ReceiptKind::Approval,
        ReceiptKind::Decision,
        ReceiptKind::Reveal,
        ReceiptKind::Reviewer,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ReceiptKind::Verdict => "verdict",
            ReceiptKind::Rerun => "rerun",
            ReceiptKind::Approval => "approval",
            ReceiptKind::Decision => "decision",
            ReceiptKind::Reveal => "reveal",
            ReceiptKind::Reviewer => "reviewer",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == text)
    }

    /// Receipts a reviewer makes are signed with the reviewer's key (a registration with its
    /// authoriser's: an approver's, or the store's for the first ones); the others are covered
    /// by the store's signed checkpoints.
    pub fn is_signed(self) -> bool {
        matches!(
            self,
            ReceiptKind::Approval | ReceiptKind::Decision | ReceiptKind::Reveal
        )
    }
}

/// A receipt under construction: the kind, the compaction it is about and its own fields.
#[derive(Debug, Clone, PartialEq)]
pub struct Receipt {
    pub kind: ReceiptKind,
    pub compaction_id: Option<String>,
    fields: BTreeMap<String, Value>,
}

impl Receipt {
    pub fn new(kind: ReceiptKind, compaction_id: Option<&str>) -> Self {
        Receipt {
            kind,
            compaction_id: compaction_id.map(str::to_owned),
            fields: BTreeMap::new(),
        }
    }

    /// Adds a kind-specific field; the envelope fields are set by [`Receipt::body`].
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.fields.insert(key.to_owned(), value.into());
        self
    }

    /// The same fields under another kind.
    pub fn with_kind(mut self, kind: ReceiptKind) -> Self {
        self.kind = kind;
        self
    }

    pub fn field(&self, key: &str) -> Option<&Value> {
        self.fields.get(key)
    }

    /// The canonical bytes of the receipt at position `seq` after the receipt `prev`.
    pub fn body(&self, seq: u64, prev: &str, time: &str) -> Result<String, CanonicalError> {
        let mut map = self.fields.clone();
        map.insert("schema".into(), RECEIPT_SCHEMA.into());
        map.insert("seq".into(), seq.into());
        map.insert("kind".into(), self.kind.as_str().into());
        map.insert("time".into(), time.into());
        map.insert("prev_receipt_sha256".into(), prev.into());
        map.insert("compaction_id".into(), self.compaction_id.clone().into());
        json::canonical(&Value::Object(map))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_is_canonical_and_carries_the_envelope() {
        let r = Receipt::new(ReceiptKind::Decision, Some("c1"))
            .with("decision", "release")
            .with("note", "looks fine — ok");
        let body = r.body(7, GENESIS_PREV, "2026-01-01T00:00:00.000Z").unwrap();
        assert!(body.starts_with(
            "{\"compaction_id\":\"c1\",\"decision\":\"release\",\"kind\":\"decision\""
        ));
        assert!(body.contains("\"seq\":7"));
        assert!(body.contains("looks fine — ok"));
        let parsed = json::parse(body.as_bytes(), &json::Limits::default()).unwrap();
        assert_eq!(json::canonical(&parsed).unwrap(), body);
    }

    #[test]
    fn kinds_round_trip() {
        for k in ReceiptKind::ALL {
            assert_eq!(ReceiptKind::parse(k.as_str()), Some(k));
        }
    }
}
