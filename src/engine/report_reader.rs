//! Reading a stored `cq.report.v1` back into a typed [`Report`]: the one reader every front end
//! uses (the reviewer's detail view, `cq recheck`'s diff, the status of a compaction).
//!
//! A report in the store is untrusted bytes: it is parsed strictly, every field must be there
//! with its type, and every verdict word must be one of the vocabulary's. Anything else is a
//! [`ReportError`] that names the field, never a default.

use crate::json::{self, Limits, Value};
use crate::policy::Mode;

use super::report::{CheckResult, ConstraintRow, Finding, Report, SealedReport};
use super::verdict::{CheckStatus, FindingStatus, Outcome, Verdict};

/// Largest stored report read back (a report carries spans and digests, never the summary).
pub const MAX_REPORT_BYTES: usize = 64 * 1024 * 1024;

/// Why a stored report cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReportError {
    #[error("the report is not strict JSON: {0}")]
    Json(String),
    #[error("the report's field \"{0}\" is missing or has the wrong type")]
    Field(String),
    #[error("the report's field \"{field}\" has the unknown value \"{value}\"")]
    Word { field: String, value: String },
    #[error("the report is not {expected} (schema \"{found}\")")]
    Schema {
        expected: &'static str,
        found: String,
    },
}

/// The schema tag of a report.
pub const REPORT_SCHEMA: &str = "cq.report.v1";

impl Report {
    /// Reads a report from its canonical text and seals it again; the digest is recomputed
    /// from `text`, so a caller compares it with the digest the store claims.
    pub fn read(text: &str) -> Result<SealedReport, ReportError> {
        let limits = Limits {
            max_bytes: MAX_REPORT_BYTES,
            max_depth: 32,
        };
        let value =
            json::parse(text.as_bytes(), &limits).map_err(|e| ReportError::Json(e.to_string()))?;
        let report = Report::from_value(&value)?;
        Ok(SealedReport {
            report,
            canonical: text.to_owned(),
            sha256: json::sha256_hex(text.as_bytes()),
        })
    }

    /// Reads a parsed report.
    pub fn from_value(v: &Value) -> Result<Report, ReportError> {
        let r = Fields { v, at: "" };
        let schema = r.str("schema_version")?;
        if schema != REPORT_SCHEMA {
            return Err(ReportError::Schema {
                expected: REPORT_SCHEMA,
                found: schema,
            });
        }
        let checks = r
            .array("checks")?
            .iter()
            .enumerate()
            .map(|(i, c)| check(c, &format!("checks[{i}]")))
            .collect::<Result<_, _>>()?;
        Ok(Report {
            compaction_id: r.str("compaction_id")?,
            tenant_id: r.str("tenant_id")?,
            task_id: r.str("task_id")?,
            request_sha256: r.str("request_sha256")?,
            model_revision: r.str("model_revision")?,
            policy_name: r.str("policy_name")?,
            policy_version: r.str("policy_version")?,
            policy_sha256: r.str("policy_sha256")?,
            verifier_version: r.str("verifier_version")?,
            verifier_artifact_sha256: r.str("verifier_artifact_sha256")?,
            verdict: r.word("verdict", Verdict::parse)?,
            outcome: r.word("outcome", Outcome::parse)?,
            finding_status: r.word("finding_status", FindingStatus::parse)?,
            source_message_sha256s: r.strs("source_message_sha256s")?,
            source_population_sha256: r.str("source_population_sha256")?,
            compacted_output_sha256: r.opt_str("compacted_output_sha256")?,
            summary_sha256: r.opt_str("summary_sha256")?,
            pinned_manifest: r.get("pinned_manifest")?.clone(),
            consistency_receipt_sha256: r.opt_str("consistency_receipt_sha256")?,
            secret_scan_receipt_sha256: r.opt_str("secret_scan_receipt_sha256")?,
            context_sha256: r.str("context_sha256")?,
            checks,
            mode: match v.get("mode") {
                None => Mode::Strict,
                Some(_) => r.word("mode", Mode::parse)?,
            },
        })
    }
}

fn check(v: &Value, at: &str) -> Result<CheckResult, ReportError> {
    let c = Fields { v, at };
    let findings = c
        .array("findings")?
        .iter()
        .enumerate()
        .map(|(i, f)| finding(f, &format!("{at}.findings[{i}]")))
        .collect::<Result<_, _>>()?;
    let constraints = c
        .array("constraints")?
        .iter()
        .enumerate()
        .map(|(i, row)| constraint(row, &format!("{at}.constraints[{i}]")))
        .collect::<Result<_, _>>()?;
    Ok(CheckResult {
        check: c.str("check")?,
        status: c.word("status", CheckStatus::parse)?,
        outcome: c.word("outcome", Outcome::parse)?,
        finding_status: c.word("finding_status", FindingStatus::parse)?,
        code: c.str("code")?,
        detail: c.str("detail")?,
        findings,
        constraints,
    })
}

fn finding(v: &Value, at: &str) -> Result<Finding, ReportError> {
    let f = Fields { v, at };
    let span = match f.get("span")? {
        Value::Null => None,
        Value::Array(pair) => match pair.as_slice() {
            [start, end] => {
                let bound = |n: &Value| {
                    n.as_i64()
                        .and_then(|n| usize::try_from(n).ok())
                        .ok_or_else(|| ReportError::Field(format!("{at}.span")))
                };
                Some(bound(start)?..bound(end)?)
            }
            _ => return Err(ReportError::Field(format!("{at}.span"))),
        },
        _ => return Err(ReportError::Field(format!("{at}.span"))),
    };
    Ok(Finding {
        kind: f.str("kind")?,
        field: f.str("field")?,
        span,
        rule_id: f.str("rule_id")?,
        constraint_id: f.str("constraint_id")?,
        category: f.str("category")?,
        message: f.str("message")?,
    })
}

fn constraint(v: &Value, at: &str) -> Result<ConstraintRow, ReportError> {
    let c = Fields { v, at };
    Ok(ConstraintRow {
        constraint_type: c.str("constraint_type")?,
        constraint_id: c.str("constraint_id")?,
        claim_status: c.str("claim_status")?,
        verification_status: c.str("verification_status")?,
        bounded_rule_id: c.str("bounded_rule_id")?,
        evidence_sha256: c.str("evidence_sha256")?,
        origin: match v.get("origin") {
            None => String::new(),
            Some(_) => c.str("origin")?,
        },
    })
}

/// Typed access to one object's fields, naming `at.key` in every error.
struct Fields<'a> {
    v: &'a Value,
    at: &'a str,
}

impl<'a> Fields<'a> {
    fn path(&self, key: &str) -> String {
        if self.at.is_empty() {
            key.to_owned()
        } else {
            format!("{}.{key}", self.at)
        }
    }

    fn get(&self, key: &str) -> Result<&'a Value, ReportError> {
        self.v
            .get(key)
            .ok_or_else(|| ReportError::Field(self.path(key)))
    }

    fn str(&self, key: &str) -> Result<String, ReportError> {
        self.get(key)?
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| ReportError::Field(self.path(key)))
    }

    fn opt_str(&self, key: &str) -> Result<Option<String>, ReportError> {
        match self.get(key)? {
            Value::Null => Ok(None),
            Value::String(s) => Ok(Some(s.clone())),
            _ => Err(ReportError::Field(self.path(key))),
        }
    }

    fn array(&self, key: &str) -> Result<&'a [Value], ReportError> {
        self.get(key)?
            .as_array()
            .ok_or_else(|| ReportError::Field(self.path(key)))
    }

    fn strs(&self, key: &str) -> Result<Vec<String>, ReportError> {
        self.array(key)?
            .iter()
            .map(|s| {
                s.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| ReportError::Field(self.path(key)))
            })
            .collect()
    }

    fn word<T>(&self, key: &str, parse: fn(&str) -> Option<T>) -> Result<T, ReportError> {
        let text = self.str(key)?;
        parse(&text).ok_or_else(|| ReportError::Word {
            field: self.path(key),
            value: crate::sanitize::excerpt(&text, 40),
        })
    }
}
