//! The G003 secret scan, as the seed's `ExactCompactionSecretScanner`: validate the signed
//! scan policy, build the scan request over the four schema roots, hand it to a scanner
//! backend, and accept only a receipt bound to that exact request, policy, scanner and
//! population with a CLEAN decision. Any timeout, error, finding or unverifiable receipt is
//! a failure, which the gate turns into the fallback.

use crate::json::{canonical_object, canonical_sha256, object, sha256_hex, Field, Value};

use super::compacted::CompactedContext;

const REQUIRED_FIELD_ROOTS: [&str; 4] = [
    "summary_text",
    "retained_safety_invariant_ids",
    "retained_policy_commitment_ids",
    "source_message_sha256s",
];

/// The seed's `VerifiedScanPolicy`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedScanPolicy {
    pub policy_version: String,
    pub policy_sha256: String,
    pub scanner_version: String,
    pub scanner_sha256: String,
    pub language_profiles: Vec<String>,
    pub entity_types: Vec<String>,
    pub field_roots: Vec<String>,
    pub max_total_bytes: i64,
    pub timeout_ms: i64,
}

/// A finding as it may be recorded: where and what kind, never the value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeafFinding {
    pub field_path: String,
    /// Byte range in the field's text.
    pub span: std::ops::Range<usize>,
    pub rule_id: String,
    pub category: String,
    pub confidence: String,
}

/// The backend's answer (the seed's `VerifiedBackendScanReceipt`); `findings` is ours, for
/// reviewers, and is not part of the receipt digest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackendReceipt {
    pub receipt_sha256: String,
    pub request_sha256: String,
    pub policy_sha256: String,
    pub scanner_sha256: String,
    pub scanned_population_sha256: String,
    pub scanned_field_count: i64,
    pub decision: String,
    pub finding_count: i64,
    pub findings: Vec<LeafFinding>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BackendError {
    #[error("secret scanner backend timed out")]
    Timeout,
    #[error("secret scanner backend failed: {0}")]
    Failed(String),
}

/// A scanner service: scans the request's fields within the timeout.
pub trait ScanBackend {
    fn scan_verified(
        &self,
        request: &Value,
        timeout_ms: i64,
    ) -> Result<BackendReceipt, BackendError>;
}

/// Scans one string leaf (cq scans every leaf of the output, claims included). What it finds
/// depends on the text alone: `field_path` only names the field in each finding, so the gate
/// may scan a value that repeats once.
pub trait LeafScanner {
    fn scan_field(&self, field_path: &str, text: &str) -> Vec<LeafFinding>;

    /// A name for everything besides the text that this scanner's findings depend on, when
    /// it has one: two scanners with the same selection find the same in every text, each
    /// finding named after the `field_path` given. `None` (the default) keeps its findings
    /// from being remembered across calls (see [`super::leaf_memo`]).
    fn selection(&self) -> Option<&str> {
        None
    }
}

/// The seed's `SecretScanReceipt`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretScanReceipt {
    pub receipt_sha256: String,
    pub scanned_population_sha256: String,
    pub scanned_field_count: i64,
    pub decision: String,
    pub findings: Vec<LeafFinding>,
}

/// Why the scan did not come back clean; `findings` when the backend found something.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanFailure {
    pub code: &'static str,
    pub message: String,
    pub findings: Vec<LeafFinding>,
}

/// The G001 scanner interface.
pub trait CompactionScanner {
    fn scan(
        &self,
        policy_sha256: &str,
        compacted: &CompactedContext,
    ) -> Result<SecretScanReceipt, ScanFailure>;
}

/// The scanned population (its canonical text) and its fields, as the seed's
/// `scan_population`.
pub fn scan_population(compacted: &CompactedContext) -> (String, Vec<(String, String)>) {
    let population = population_text(compacted);
    let mut fields = vec![("summary_text".to_owned(), compacted.summary_text.clone())];
    for (root, values) in [
        (
            "retained_safety_invariant_ids",
            &compacted.retained_safety_invariant_ids,
        ),
        (
            "retained_policy_commitment_ids",
            &compacted.retained_policy_commitment_ids,
        ),
        ("source_message_sha256s", &compacted.source_message_sha256s),
    ] {
        fields.extend(
            values
                .iter()
                .enumerate()
                .map(|(i, v)| (format!("{root}[{i}]"), v.clone())),
        );
    }
    (population, fields)
}

/// How many fields [`scan_population`] gives, without copying them.
pub fn scan_field_count(compacted: &CompactedContext) -> usize {
    1 + compacted.retained_safety_invariant_ids.len()
        + compacted.retained_policy_commitment_ids.len()
        + compacted.source_message_sha256s.len()
}

/// The canonical text of the scanned population alone (the first half of [`scan_population`]).
pub fn population_text(compacted: &CompactedContext) -> String {
    canonical_object(&mut [
        (
            "retained_policy_commitment_ids",
            Field::Strs(&compacted.retained_policy_commitment_ids),
        ),
        (
            "retained_safety_invariant_ids",
            Field::Strs(&compacted.retained_safety_invariant_ids),
        ),
        (
            "source_message_sha256s",
            Field::Strs(&compacted.source_message_sha256s),
        ),
        ("summary_text", Field::Str(&compacted.summary_text)),
    ])
}

fn failure(code: &'static str, message: impl Into<String>) -> ScanFailure {
    ScanFailure {
        code,
        message: message.into(),
        findings: Vec::new(),
    }
}

/// The seed's exact adapter over a verified scan policy and a backend.
pub struct ExactSecretScanner<'a> {
    pub policy: &'a VerifiedScanPolicy,
    pub backend: &'a dyn ScanBackend,
}

impl CompactionScanner for ExactSecretScanner<'_> {
    fn scan(
        &self,
        policy_sha256: &str,
        compacted: &CompactedContext,
    ) -> Result<SecretScanReceipt, ScanFailure> {
        let policy = self.policy;
        if policy.policy_sha256 != policy_sha256
            || policy.policy_version.is_empty()
            || policy.scanner_sha256.chars().count() != 64
            || policy.scanner_version.is_empty()
            || policy.language_profiles.is_empty()
            || policy.entity_types.is_empty()
            || policy.field_roots != REQUIRED_FIELD_ROOTS
            || policy.max_total_bytes < 1
            || policy.timeout_ms < 1
        {
            return Err(failure(
                "scan_policy_invalid",
                "verified secret-scan policy is invalid",
            ));
        }
        let (population, fields) = scan_population(compacted);
        let population_sha256 = sha256_hex(population.as_bytes());
        if fields
            .iter()
            .any(|(path, value)| path.is_empty() || value.is_empty())
        {
            return Err(failure(
                "scan_population",
                "secret-scan population is empty or malformed",
            ));
        }
        let population_bytes = population.len();
        if population_bytes as i64 > policy.max_total_bytes {
            return Err(failure(
                "scan_population_too_large",
                format!("secret-scan population is {population_bytes} bytes, over the signed bound of {}", policy.max_total_bytes),
            ));
        }
        let field_count = fields.len();
        let field_values: Vec<Value> = fields
            .into_iter()
            .map(|(path, value)| {
                object([
                    ("path", Value::String(path)),
                    ("value", Value::String(value)),
                ])
            })
            .collect();
        let request = object([
            (
                "schema_version",
                Value::from("aidefend.compaction-secret-scan-request.v1"),
            ),
            ("policy_version", Value::from(&policy.policy_version)),
            ("policy_sha256", Value::from(&policy.policy_sha256)),
            ("scanner_version", Value::from(&policy.scanner_version)),
            ("scanner_sha256", Value::from(&policy.scanner_sha256)),
            (
                "language_profiles",
                Value::from(&policy.language_profiles[..]),
            ),
            ("entity_types", Value::from(&policy.entity_types[..])),
            ("scanned_population_sha256", Value::from(&population_sha256)),
            ("scanned_field_count", Value::from(field_count)),
            ("fields", Value::Array(field_values)),
        ]);
        let request_sha256 =
            canonical_sha256(&request).map_err(|e| failure("scan_request", e.to_string()))?;
        let receipt = self
            .backend
            .scan_verified(&request, policy.timeout_ms)
            .map_err(|e| match e {
                BackendError::Timeout => failure("scan_timeout", e.to_string()),
                BackendError::Failed(_) => failure("scan_error", e.to_string()),
            })?;
        let bound = receipt.request_sha256 == request_sha256
            && receipt.policy_sha256 == policy.policy_sha256
            && receipt.scanner_sha256 == policy.scanner_sha256
            && receipt.scanned_population_sha256 == population_sha256
            && receipt.scanned_field_count == field_count as i64
            && receipt.receipt_sha256.chars().count() == 64;
        if !bound {
            return Err(failure(
                "scan_receipt_unbound",
                "secret scanner returned incomplete or unbound evidence",
            ));
        }
        if receipt.decision != "CLEAN" || receipt.finding_count != 0 {
            let code = if receipt.decision == "BLOCK" {
                "secret_found"
            } else {
                "scan_error"
            };
            let message = format!(
                "secret scanner decision {} with {} finding(s)",
                receipt.decision, receipt.finding_count
            );
            return Err(ScanFailure {
                code,
                message,
                findings: receipt.findings,
            });
        }
        Ok(SecretScanReceipt {
            receipt_sha256: receipt.receipt_sha256,
            scanned_population_sha256: population_sha256,
            scanned_field_count: field_count as i64,
            decision: "CLEAN".into(),
            findings: Vec::new(),
        })
    }
}
