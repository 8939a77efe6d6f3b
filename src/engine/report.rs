//! The report: the result of every check on one compaction under one policy. It is
//! deterministic canonical JSON (`cq.report.v1`, no clock, no randomness) with a digest, so a
//! rerun under the same policy gives the same bytes and a changed report is a changed digest.
//! It carries digests, rule ids, field paths and spans, never a matched secret.

use crate::json::{self, object, sha256_hex, CanonicalError, Value};
use crate::policy::Mode;

pub use super::verdict::{CheckStatus as Status, FindingStatus, Outcome, Verdict, VerdictClass};

/// Something a check found, located in the compacted output.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Finding {
    /// `schema`, `secret`, `conflict`, `unparsed`, `pinned`, `authority`, `provenance`, ...
    pub kind: String,
    /// JSON path of the field (`summary_text`, `preserved_constraint_claims[1].status`).
    pub field: String,
    /// Byte range in that field's text, when the finding has one.
    pub span: Option<std::ops::Range<usize>>,
    pub rule_id: String,
    pub constraint_id: String,
    /// `credential`, `pii`, ... for secrets.
    pub category: String,
    pub message: String,
}

impl Finding {
    fn to_value(&self) -> Value {
        let span = self.span.as_ref().map_or(Value::Null, |s| {
            Value::Array(vec![Value::from(s.start), Value::from(s.end)])
        });
        object([
            ("kind", Value::from(&self.kind)),
            ("field", Value::from(&self.field)),
            ("span", span),
            ("rule_id", Value::from(&self.rule_id)),
            ("constraint_id", Value::from(&self.constraint_id)),
            ("category", Value::from(&self.category)),
            ("message", Value::from(&self.message)),
        ])
    }
}

/// One constraint's row: a registered invariant or commitment, or a pinned constraint.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ConstraintRow {
    pub constraint_type: String,
    pub constraint_id: String,
    pub claim_status: String,
    pub verification_status: String,
    pub bounded_rule_id: String,
    pub evidence_sha256: String,
    /// Where a re-injected constraint came from (`policy`, `project file`, `user turn …`);
    /// empty, and left out of the report, in strict mode.
    pub origin: String,
}

impl ConstraintRow {
    fn to_value(&self) -> Value {
        let mut fields = vec![
            ("constraint_type", Value::from(&self.constraint_type)),
            ("constraint_id", Value::from(&self.constraint_id)),
            ("claim_status", Value::from(&self.claim_status)),
            (
                "verification_status",
                Value::from(&self.verification_status),
            ),
            ("bounded_rule_id", Value::from(&self.bounded_rule_id)),
            ("evidence_sha256", Value::from(&self.evidence_sha256)),
        ];
        if !self.origin.is_empty() {
            fields.push(("origin", Value::from(&self.origin)));
        }
        object(fields)
    }
}

/// The result of one check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckResult {
    /// `schema`, `consistency`, `secrets`, …: the checks in [`super::checks`].
    pub check: String,
    pub status: Status,
    /// The seed's outcome class when the check did not pass.
    pub outcome: Outcome,
    pub finding_status: FindingStatus,
    pub code: String,
    pub detail: String,
    pub findings: Vec<Finding>,
    pub constraints: Vec<ConstraintRow>,
}

impl CheckResult {
    pub fn pass(check: &'static str, detail: impl Into<String>) -> CheckResult {
        CheckResult {
            check: check.to_owned(),
            status: Status::Pass,
            outcome: Outcome::Pass,
            finding_status: FindingStatus::NoFinding,
            code: "ok".into(),
            detail: detail.into(),
            findings: Vec::new(),
            constraints: Vec::new(),
        }
    }

    /// A finding: FAIL/FINDING.
    pub fn fail(check: &'static str, code: &str, detail: impl Into<String>) -> CheckResult {
        CheckResult {
            status: Status::Fail,
            outcome: Outcome::Fail,
            finding_status: FindingStatus::Finding,
            code: code.into(),
            ..CheckResult::pass(check, detail)
        }
    }

    /// The check could not run to a verdict: ERROR/UNKNOWN.
    pub fn error(check: &'static str, code: &str, detail: impl Into<String>) -> CheckResult {
        CheckResult {
            status: Status::Error,
            outcome: Outcome::Error,
            finding_status: FindingStatus::Unknown,
            code: code.into(),
            ..CheckResult::pass(check, detail)
        }
    }

    pub fn not_run(check: &'static str, because: &str) -> CheckResult {
        CheckResult {
            status: Status::NotRun,
            outcome: Outcome::Unknown,
            finding_status: FindingStatus::Unknown,
            code: "not_run".into(),
            ..CheckResult::pass(check, format!("not run: {because}"))
        }
    }

    pub fn with_findings(mut self, findings: Vec<Finding>) -> CheckResult {
        self.findings = findings;
        self
    }

    pub fn passed(&self) -> bool {
        self.status == Status::Pass
    }

    /// Whether the check found a problem or could not run to a verdict (a check that was not
    /// run is neither: another check's failure stopped it).
    pub fn failed(&self) -> bool {
        matches!(self.status, Status::Fail | Status::Error)
    }

    /// This check's outcome and finding status as one class.
    pub fn class(&self) -> VerdictClass {
        self.outcome.class()
    }

    fn to_value(&self) -> Value {
        object([
            ("check", Value::from(&self.check)),
            ("status", Value::from(self.status.as_str())),
            ("outcome", Value::from(self.outcome.as_str())),
            ("finding_status", Value::from(self.finding_status.as_str())),
            ("code", Value::from(&self.code)),
            ("detail", Value::from(&self.detail)),
            (
                "findings",
                Value::Array(self.findings.iter().map(Finding::to_value).collect()),
            ),
            (
                "constraints",
                Value::Array(
                    self.constraints
                        .iter()
                        .map(ConstraintRow::to_value)
                        .collect(),
                ),
            ),
        ])
    }
}

/// Every check's result on one compaction under one policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    pub compaction_id: String,
    pub tenant_id: String,
    pub task_id: String,
    pub request_sha256: String,
    pub model_revision: String,
    pub policy_name: String,
    pub policy_version: String,
    pub policy_sha256: String,
    pub verifier_version: String,
    pub verifier_artifact_sha256: String,
    pub verdict: Verdict,
    pub outcome: Outcome,
    pub finding_status: FindingStatus,
    pub source_message_sha256s: Vec<String>,
    pub source_population_sha256: String,
    pub compacted_output_sha256: Option<String>,
    pub summary_sha256: Option<String>,
    pub pinned_manifest: Value,
    pub consistency_receipt_sha256: Option<String>,
    pub secret_scan_receipt_sha256: Option<String>,
    pub context_sha256: String,
    pub checks: Vec<CheckResult>,
    /// How the summary was read; `prose` is written into the report, `strict` is left out so
    /// strict reports keep their bytes.
    pub mode: Mode,
}

impl Report {
    pub fn to_value(&self) -> Value {
        let opt = |v: &Option<String>| v.as_ref().map_or(Value::Null, Value::from);
        let mut fields = vec![
            ("schema_version", Value::from("cq.report.v1")),
            ("compaction_id", Value::from(&self.compaction_id)),
            ("tenant_id", Value::from(&self.tenant_id)),
            ("task_id", Value::from(&self.task_id)),
            ("request_sha256", Value::from(&self.request_sha256)),
            ("model_revision", Value::from(&self.model_revision)),
            ("policy_name", Value::from(&self.policy_name)),
            ("policy_version", Value::from(&self.policy_version)),
            ("policy_sha256", Value::from(&self.policy_sha256)),
            ("verifier_version", Value::from(&self.verifier_version)),
            (
                "verifier_artifact_sha256",
                Value::from(&self.verifier_artifact_sha256),
            ),
            ("verdict", Value::from(self.verdict.as_str())),
            ("outcome", Value::from(self.outcome.as_str())),
            ("finding_status", Value::from(self.finding_status.as_str())),
            (
                "source_message_sha256s",
                Value::from(&self.source_message_sha256s[..]),
            ),
            (
                "source_population_sha256",
                Value::from(&self.source_population_sha256),
            ),
            (
                "compacted_output_sha256",
                opt(&self.compacted_output_sha256),
            ),
            ("summary_sha256", opt(&self.summary_sha256)),
            ("pinned_manifest", self.pinned_manifest.clone()),
            (
                "consistency_receipt_sha256",
                opt(&self.consistency_receipt_sha256),
            ),
            (
                "secret_scan_receipt_sha256",
                opt(&self.secret_scan_receipt_sha256),
            ),
            ("context_sha256", Value::from(&self.context_sha256)),
            (
                "checks",
                Value::Array(self.checks.iter().map(CheckResult::to_value).collect()),
            ),
        ];
        if !self.mode.is_strict() {
            fields.push(("mode", Value::from(self.mode.as_str())));
        }
        object(fields)
    }

    /// Writes the report once: its canonical text and that text's digest. The report holds
    /// only strings, integers and nulls, so this fails only on a bug, and then the gate
    /// refuses rather than recording a report without a digest.
    pub fn seal(self) -> Result<SealedReport, CanonicalError> {
        let canonical = json::canonical(&self.to_value())?;
        let sha256 = sha256_hex(canonical.as_bytes());
        Ok(SealedReport {
            report: self,
            canonical,
            sha256,
        })
    }

    /// The checks that did not pass, in the seed's first-failure order.
    pub fn failures(&self) -> impl Iterator<Item = &CheckResult> {
        self.checks.iter().filter(|c| c.failed())
    }

    /// The failing check a reviewer should see first: the first (in the seed's order) of the
    /// most severe class. A pinned re-open in prose is INSUFFICIENT_DATA for consistency but
    /// FAIL/FINDING for pinned: the queue and the two-person rule must see the FAIL.
    pub fn main_failure(&self) -> Option<&CheckResult> {
        let most = self.failures().map(|c| c.class().severity()).max()?;
        self.failures().find(|c| c.class().severity() == most)
    }

    /// The most severe class among the failing checks (the report itself keeps the verdict's
    /// class in the seed's first-failure order); `PASS/NO_FINDING` when nothing failed.
    pub fn verdict_class(&self) -> VerdictClass {
        self.main_failure()
            .map_or(self.outcome.class(), CheckResult::class)
    }

    /// Whether any check found a secret (a release then needs two approvers under the
    /// default review rules).
    pub fn has_secret_finding(&self) -> bool {
        self.checks
            .iter()
            .any(|c| c.findings.iter().any(|f| f.kind == "secret"))
    }
}

/// A report with its canonical text and digest, computed once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SealedReport {
    pub report: Report,
    /// The canonical JSON the store keeps and the digest is over.
    pub canonical: String,
    /// Hex SHA-256 of `canonical`.
    pub sha256: String,
}

impl std::ops::Deref for SealedReport {
    type Target = Report;

    fn deref(&self) -> &Report {
        &self.report
    }
}
