//! The conflict-verifier contract (G002): what the checker hands a versioned deterministic
//! verifier, and the sealed answer it must return (one result per expected constraint,
//! claim and result population roots, a receipt digest). The checker trusts none of it and
//! re-derives every binding; `seal` is how an honest verifier computes its receipt.

use crate::json::{canonical_array, canonical_object, sha256_hex, write_object, Field};

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
    pub claims: &'a [&'a Claim],
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
    /// The seed's `result_body`, as fields.
    pub fn fields(&self) -> [(&'static str, Field<'_>); 8] {
        [
            ("bounded_rule_id", Field::Str(&self.bounded_rule_id)),
            (
                "canonical_predicate_sha256",
                Field::Str(&self.canonical_predicate_sha256),
            ),
            (
                "canonical_record_sha256",
                Field::Str(&self.canonical_record_sha256),
            ),
            ("claim_status", Field::Str(&self.claim_status)),
            ("constraint_id", Field::Str(&self.constraint_id)),
            ("constraint_type", Field::Str(&self.constraint_type)),
            ("evidence_sha256", Field::Str(&self.evidence_sha256)),
            ("verification_status", Field::Str(&self.verification_status)),
        ]
    }

    /// The canonical text of a result population, in the order given.
    pub fn population<'r>(results: impl IntoIterator<Item = &'r ConstraintResult>) -> String {
        let results: Vec<&ConstraintResult> = results.into_iter().collect();
        canonical_array(&results, |out, result| {
            write_object(out, &mut result.fields())
        })
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
    /// What the match means when it is more than a conflict pattern's match: for two
    /// clauses that contradict each other, which (by number, never by text).
    pub note: Option<String>,
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
    /// The canonical text of the seed's verification body; its SHA-256 is `receipt_sha256`.
    /// `result_population` is the canonical text of the results the caller derived, in
    /// canonical order.
    pub fn canonical_body(&self, result_population: &str) -> String {
        canonical_object(&mut [
            ("assurance_type", Field::Str(&self.assurance_type)),
            ("claim_count", Field::Int(self.claim_count)),
            (
                "claim_population_sha256",
                Field::Str(&self.claim_population_sha256),
            ),
            (
                "compacted_summary_sha256",
                Field::Str(&self.compacted_summary_sha256),
            ),
            ("finding_status", Field::Str(&self.finding_status)),
            ("outcome", Field::Str(&self.outcome)),
            (
                "rendered_policy_sha256",
                Field::Str(&self.rendered_policy_sha256),
            ),
            ("result_count", Field::Int(self.result_count)),
            (
                "result_population_sha256",
                Field::Str(&self.result_population_sha256),
            ),
            ("results", Field::Canonical(result_population)),
            (
                "schema_version",
                Field::Str("aidefend.summary-conflict-verification.v3"),
            ),
            (
                "verifier_artifact_sha256",
                Field::Str(&self.verifier_artifact_sha256),
            ),
            ("verifier_version", Field::Str(&self.verifier_version)),
        ])
    }

    /// Recomputes `result_population_sha256` and `receipt_sha256` from the results as they
    /// stand, as an honest verifier does before answering.
    pub fn seal(&mut self) {
        let population = ConstraintResult::population(&self.results);
        self.result_count = self.results.len() as i64;
        self.result_population_sha256 = sha256_hex(population.as_bytes());
        self.receipt_sha256 = sha256_hex(self.canonical_body(&population).as_bytes());
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
