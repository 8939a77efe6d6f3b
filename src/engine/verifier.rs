//! The conflict-verifier contract (G002): what the checker hands a versioned deterministic
//! verifier, and the sealed answer it must return (one result per expected constraint,
//! claim and result population roots, a receipt digest). The checker trusts none of it and
//! re-derives every binding; `seal` is how an honest verifier computes its receipt.

use crate::json::{canonical_sha256, object, Value};

use super::compacted::Claim;

/// One registered constraint as the verifier must evaluate it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CanonicalConstraint {
    pub constraint_type: String,
    pub constraint_id: String,
    pub canonical_text: String,
    pub canonical_predicate: String,
    pub canonical_record_sha256: String,
    pub canonical_predicate_sha256: String,
}

impl CanonicalConstraint {
    pub fn key(&self) -> (String, String) {
        (self.constraint_type.clone(), self.constraint_id.clone())
    }
}

/// What the checker hands the verifier.
#[derive(Debug, Clone, Copy)]
pub struct VerifierInput<'a> {
    pub summary_text: &'a str,
    pub canonical_constraints: &'a [CanonicalConstraint],
    pub claims: &'a [Claim],
    pub rendered_canonical_policy_block: &'a str,
    pub rendered_policy_sha256: &'a str,
    pub compacted_summary_sha256: &'a str,
    pub claim_population_sha256: &'a str,
}

/// The verifier's answer for one constraint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConstraintResult {
    pub constraint_type: String,
    pub constraint_id: String,
    pub canonical_record_sha256: String,
    pub canonical_predicate_sha256: String,
    pub claim_status: String,
    pub verification_status: String,
    pub bounded_rule_id: String,
    pub evidence_sha256: String,
}

impl ConstraintResult {
    /// The seed's `result_body`.
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
            ("claim_status", Value::from(&self.claim_status)),
            (
                "verification_status",
                Value::from(&self.verification_status),
            ),
            ("bounded_rule_id", Value::from(&self.bounded_rule_id)),
            ("evidence_sha256", Value::from(&self.evidence_sha256)),
        ])
    }

    pub fn key(&self) -> (String, String) {
        (self.constraint_type.clone(), self.constraint_id.clone())
    }
}

/// A span of the summary that a rule matched, for reviewers (not part of any receipt).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifierMatch {
    pub constraint_id: String,
    pub rule_id: String,
    /// Byte range in `summary_text`.
    pub span: std::ops::Range<usize>,
}

/// Why a summary does not parse totally: a message that never quotes the summary, and the
/// byte span of the offending clause or character.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseFailure {
    pub message: String,
    pub span: Option<std::ops::Range<usize>>,
}

/// The verifier's sealed answer (the seed's `ConflictVerification`), plus diagnostics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConflictVerification {
    pub outcome: String,
    pub finding_status: String,
    pub assurance_type: String,
    pub verifier_version: String,
    pub verifier_artifact_sha256: String,
    pub rendered_policy_sha256: String,
    pub compacted_summary_sha256: String,
    pub claim_population_sha256: String,
    pub claim_count: i64,
    pub result_population_sha256: String,
    pub result_count: i64,
    pub results: Vec<ConstraintResult>,
    pub receipt_sha256: String,
    /// The clauses of a total parse, `None` when the summary is outside the grammar.
    pub parsed_clauses: Option<Vec<String>>,
    pub matches: Vec<VerifierMatch>,
    /// Why the parse was not total, for reviewers.
    pub parse_failure: Option<ParseFailure>,
}

impl ConflictVerification {
    /// The seed's verification body; its canonical SHA-256 is `receipt_sha256`. The result
    /// population given is the one the checker derived, in canonical order.
    pub fn body(&self, result_population: Vec<Value>) -> Value {
        object([
            (
                "schema_version",
                Value::from("aidefend.summary-conflict-verification.v3"),
            ),
            ("outcome", Value::from(&self.outcome)),
            ("finding_status", Value::from(&self.finding_status)),
            ("assurance_type", Value::from(&self.assurance_type)),
            ("verifier_version", Value::from(&self.verifier_version)),
            (
                "verifier_artifact_sha256",
                Value::from(&self.verifier_artifact_sha256),
            ),
            (
                "rendered_policy_sha256",
                Value::from(&self.rendered_policy_sha256),
            ),
            (
                "compacted_summary_sha256",
                Value::from(&self.compacted_summary_sha256),
            ),
            (
                "claim_population_sha256",
                Value::from(&self.claim_population_sha256),
            ),
            ("claim_count", Value::from(self.claim_count)),
            (
                "result_population_sha256",
                Value::from(&self.result_population_sha256),
            ),
            ("result_count", Value::from(self.result_count)),
            ("results", Value::Array(result_population)),
        ])
    }

    /// Recomputes `result_population_sha256` and `receipt_sha256` from the results as they
    /// stand, as an honest verifier does before answering.
    pub fn seal(&mut self) {
        let population: Vec<Value> = self.results.iter().map(ConstraintResult::body).collect();
        self.result_count = self.results.len() as i64;
        self.result_population_sha256 =
            canonical_sha256(&Value::Array(population.clone())).unwrap_or_default();
        self.receipt_sha256 = canonical_sha256(&self.body(population)).unwrap_or_default();
    }
}

/// The verifier could not run: the checker turns this into ERROR/UNKNOWN.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("conflict verifier failed: {0}")]
pub struct VerifierError(pub String);

/// A versioned deterministic verifier of canonical predicates against a summary.
pub trait ConflictVerifier {
    fn verify(&self, input: &VerifierInput<'_>) -> Result<ConflictVerification, VerifierError>;
}

/// `(outcome, finding_status)` from a set of verification statuses and the assurance type,
/// the rule both the verifier and the checker apply.
pub fn derive_outcome<'a>(
    statuses: impl IntoIterator<Item = &'a str>,
    probabilistic: bool,
) -> (&'static str, &'static str) {
    let statuses: Vec<&str> = statuses.into_iter().collect();
    if statuses.contains(&"CONFLICT") {
        ("FAIL", "FINDING")
    } else if statuses.contains(&"UNSUPPORTED") || probabilistic {
        ("INSUFFICIENT_DATA", "UNKNOWN")
    } else if !statuses.is_empty() && statuses.iter().all(|s| *s == "PRESERVED") {
        ("PASS", "NO_FINDING")
    } else {
        ("ERROR", "UNKNOWN")
    }
}
