//! The report: the result of every check on one compaction under one policy. It is
//! deterministic canonical JSON (`cq.report.v1`, no clock, no randomness) with a digest, so a
//! rerun under the same policy gives the same bytes and a changed report is a changed digest.
//! It carries digests, rule ids, field paths and spans, never a matched secret.

use crate::json::{self, canonical_array, sha256_hex, write_object, CanonicalError, Field, Value};
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
    /// Appends the canonical text of the finding, written directly.
    fn write(&self, out: &mut String) {
        let span = self
            .span
            .as_ref()
            .map(|s| format!("[{},{}]", s.start, s.end));
        write_object(
            out,
            &mut [
                ("category", Field::Str(&self.category)),
                ("constraint_id", Field::Str(&self.constraint_id)),
                ("field", Field::Str(&self.field)),
                ("kind", Field::Str(&self.kind)),
                ("message", Field::Str(&self.message)),
                ("rule_id", Field::Str(&self.rule_id)),
                (
                    "span",
                    span.as_deref().map_or(Field::Null, Field::Canonical),
                ),
            ],
        );
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
    /// Appends the canonical text of the row, written directly.
    fn write(&self, out: &mut String) {
        let mut fields = vec![
            ("bounded_rule_id", Field::Str(&self.bounded_rule_id)),
            ("claim_status", Field::Str(&self.claim_status)),
            ("constraint_id", Field::Str(&self.constraint_id)),
            ("constraint_type", Field::Str(&self.constraint_type)),
            ("evidence_sha256", Field::Str(&self.evidence_sha256)),
            ("verification_status", Field::Str(&self.verification_status)),
        ];
        if !self.origin.is_empty() {
            fields.push(("origin", Field::Str(&self.origin)));
        }
        write_object(out, &mut fields);
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

    /// Appends the canonical text of the result, written directly.
    fn write(&self, out: &mut String) {
        let findings = canonical_array(&self.findings, |out, f| f.write(out));
        let constraints = canonical_array(&self.constraints, |out, c| c.write(out));
        write_object(
            out,
            &mut [
                ("check", Field::Str(&self.check)),
                ("code", Field::Str(&self.code)),
                ("constraints", Field::Canonical(&constraints)),
                ("detail", Field::Str(&self.detail)),
                ("finding_status", Field::Str(self.finding_status.as_str())),
                ("findings", Field::Canonical(&findings)),
                ("outcome", Field::Str(self.outcome.as_str())),
                ("status", Field::Str(self.status.as_str())),
            ],
        );
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
    /// The report as a value (its canonical text read back), for callers that walk or show it.
    pub fn to_value(&self) -> Value {
        let limits = json::Limits {
            max_bytes: usize::MAX,
            max_depth: 64,
        };
        self.canonical()
            .ok()
            .and_then(|text| json::parse(text.as_bytes(), &limits).ok())
            .unwrap_or(Value::Null)
    }

    /// The report's canonical text (`cq.report.v1`), written straight from its fields.
    fn canonical(&self) -> Result<String, CanonicalError> {
        let pinned_manifest = json::canonical(&self.pinned_manifest)?;
        let checks = canonical_array(&self.checks, |out, c| c.write(out));
        fn opt(v: &Option<String>) -> Field<'_> {
            v.as_deref().map_or(Field::Null, Field::Str)
        }
        let mut fields = vec![
            ("schema_version", Field::Str("cq.report.v1")),
            ("compaction_id", Field::Str(&self.compaction_id)),
            ("tenant_id", Field::Str(&self.tenant_id)),
            ("task_id", Field::Str(&self.task_id)),
            ("request_sha256", Field::Str(&self.request_sha256)),
            ("model_revision", Field::Str(&self.model_revision)),
            ("policy_name", Field::Str(&self.policy_name)),
            ("policy_version", Field::Str(&self.policy_version)),
            ("policy_sha256", Field::Str(&self.policy_sha256)),
            ("verifier_version", Field::Str(&self.verifier_version)),
            (
                "verifier_artifact_sha256",
                Field::Str(&self.verifier_artifact_sha256),
            ),
            ("verdict", Field::Str(self.verdict.as_str())),
            ("outcome", Field::Str(self.outcome.as_str())),
            ("finding_status", Field::Str(self.finding_status.as_str())),
            (
                "source_message_sha256s",
                Field::Strs(&self.source_message_sha256s),
            ),
            (
                "source_population_sha256",
                Field::Str(&self.source_population_sha256),
            ),
            (
                "compacted_output_sha256",
                opt(&self.compacted_output_sha256),
            ),
            ("summary_sha256", opt(&self.summary_sha256)),
            ("pinned_manifest", Field::Canonical(&pinned_manifest)),
            (
                "consistency_receipt_sha256",
                opt(&self.consistency_receipt_sha256),
            ),
            (
                "secret_scan_receipt_sha256",
                opt(&self.secret_scan_receipt_sha256),
            ),
            ("context_sha256", Field::Str(&self.context_sha256)),
            ("checks", Field::Canonical(&checks)),
        ];
        if !self.mode.is_strict() {
            fields.push(("mode", Field::Str(self.mode.as_str())));
        }
        let mut out = String::with_capacity(pinned_manifest.len() + checks.len() + 2048);
        write_object(&mut out, &mut fields);
        Ok(out)
    }

    /// Writes the report once: its canonical text and that text's digest. The report holds
    /// only strings, integers and nulls, so this fails only on a bug, and then the gate
    /// refuses rather than recording a report without a digest.
    pub fn seal(self) -> Result<SealedReport, CanonicalError> {
        let canonical = self.canonical()?;
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
