//! Turning what the store holds (the request JSON and a `cq.report.v1` report) into what the
//! detail screen shows, with every matched secret overwritten before the text leaves here.
//!
//! Secrets are found two ways: the report's `secret` findings on the summary (the gate's own
//! scan), and a scan of every other untrusted text the reviewer will see (source messages,
//! claim predicates, a summary the gate could not parse), because the gate does not scan
//! source turns and a pasted key must not reach the screen. The summary's secrets are
//! numbered in one stable order ([`summary_secrets`]) so a reveal can name one by index.

use std::ops::Range;

use crate::engine::{GateRequest, SummarizerOutput};
use crate::json::{self, Limits, Value};
use crate::policy::Policy;
use crate::review::source::{
    CheckName, CheckResult, CheckStatus, Claim, ConstraintRow, Outcome, PinnedView, SpanKind,
    SummarySpan, Verification,
};
use crate::scan::Scanner;

/// One secret in the summary: where it is and what matched it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretSpan {
    pub range: Range<usize>,
    pub rule_id: String,
    pub category: String,
}

/// The finding id the UI uses for the `index`-th summary secret.
pub fn finding_id(index: usize) -> String {
    format!("secret-{index}")
}

/// The index in a finding id made by [`finding_id`].
pub fn finding_index(id: &str) -> Option<usize> {
    id.strip_prefix("secret-")?.parse().ok()
}

/// What the summarizer's raw output says, read leniently for display.
#[derive(Debug, Clone, Default)]
pub struct SummaryParts {
    /// `summary_text` when the output is a JSON object with one, else the raw text.
    pub text: String,
    /// Whether `text` is the `summary_text` field (report spans refer to it only then).
    pub is_field: bool,
    /// `(constraint_id, preserved_predicate)` of each claim.
    pub claims: Vec<(String, String)>,
}

/// Reads the summary and claims out of a request's summarizer output.
pub fn summary_parts(request: &GateRequest) -> SummaryParts {
    let raw = match &request.summarizer {
        SummarizerOutput::Raw(raw) => raw,
        SummarizerOutput::Failed(why) => {
            return SummaryParts {
                text: format!("(the summarizer failed: {why})"),
                ..SummaryParts::default()
            }
        }
    };
    let limits = Limits {
        max_bytes: crate::engine::request_json::MAX_REQUEST_BYTES,
        max_depth: 64,
    };
    let parsed = json::parse(raw.as_bytes(), &limits).ok();
    let Some(text) = parsed
        .as_ref()
        .and_then(|v| v.get("summary_text"))
        .and_then(Value::as_str)
    else {
        return SummaryParts {
            text: raw.clone(),
            ..SummaryParts::default()
        };
    };
    let claims = parsed
        .as_ref()
        .and_then(|v| v.get("preserved_constraint_claims"))
        .and_then(Value::as_array)
        .unwrap_or(&[])
        .iter()
        .map(|c| (str_of(c, "constraint_id"), str_of(c, "preserved_predicate")))
        .collect();
    SummaryParts {
        text: text.to_owned(),
        is_field: true,
        claims,
    }
}

fn str_of(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned()
}

/// Every finding of every check in a report, with the check's name.
fn findings(report: &Value) -> impl Iterator<Item = (&str, &Value)> {
    checks(report).iter().flat_map(|c| {
        let name = c.get("check").and_then(Value::as_str).unwrap_or("");
        c.get("findings")
            .and_then(Value::as_array)
            .unwrap_or(&[])
            .iter()
            .map(move |f| (name, f))
    })
}

fn checks(report: &Value) -> &[Value] {
    report
        .get("checks")
        .and_then(Value::as_array)
        .unwrap_or(&[])
}

/// A finding's span on the summary text, widened to character boundaries; `None` when the
/// finding is on another field or out of range.
fn summary_span(finding: &Value, parts: &SummaryParts) -> Option<Range<usize>> {
    if !parts.is_field || finding.get("field").and_then(Value::as_str) != Some("summary_text") {
        return None;
    }
    let span = finding.get("span")?.as_array()?;
    let start = usize::try_from(span.first()?.as_i64()?).ok()?;
    let end = usize::try_from(span.get(1)?.as_i64()?).ok()?;
    widen(&parts.text, start..end)
}

/// `range` clamped to `text` and widened to character boundaries; `None` if empty.
pub fn widen(text: &str, range: Range<usize>) -> Option<Range<usize>> {
    if range.start >= range.end {
        return None;
    }
    let mut start = range.start.min(text.len());
    let mut end = range.end.min(text.len());
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    while !text.is_char_boundary(end) {
        end += 1;
    }
    (start < end).then_some(start..end)
}

/// The summary's secrets in their stable order: the report's findings first, then what the
/// scanner finds that they do not already cover.
pub fn summary_secrets(report: &Value, parts: &SummaryParts, scanner: &Scanner) -> Vec<SecretSpan> {
    let mut out: Vec<SecretSpan> = findings(report)
        .filter(|(_, f)| f.get("kind").and_then(Value::as_str) == Some("secret"))
        .filter_map(|(_, f)| {
            Some(SecretSpan {
                range: summary_span(f, parts)?,
                rule_id: str_of(f, "rule_id"),
                category: str_of(f, "category"),
            })
        })
        .collect();
    for found in scanner.scan_text("summary_text", &parts.text) {
        let Some(range) = widen(&parts.text, found.span) else {
            continue;
        };
        if !out
            .iter()
            .any(|s| s.range.start < range.end && range.start < s.range.end)
        {
            out.push(SecretSpan {
                range,
                rule_id: found.rule_id,
                category: found.category.as_str().to_owned(),
            });
        }
    }
    out
}

/// Overwrites every character that touches `ranges` with `*`s of its byte length (same
/// length, still valid UTF-8).
pub fn mask(text: &str, ranges: &[Range<usize>]) -> String {
    if ranges.is_empty() {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    for (at, c) in text.char_indices() {
        let end = at + c.len_utf8();
        if ranges.iter().any(|r| r.start < end && at < r.end) {
            out.extend(std::iter::repeat_n('*', c.len_utf8()));
        } else {
            out.push(c);
        }
    }
    out
}

/// `text` with everything the scanner matches overwritten, and the masked ranges.
pub fn scan_and_mask(scanner: &Scanner, field: &str, text: &str) -> (String, Vec<Range<usize>>) {
    let ranges: Vec<Range<usize>> = scanner
        .scan_text(field, text)
        .into_iter()
        .filter_map(|f| widen(text, f.span))
        .collect();
    (mask(text, &ranges), ranges)
}

/// Highlighted spans of the summary: secrets (by index) and the report's conflict, authority
/// and pinned findings.
pub fn spans(report: &Value, parts: &SummaryParts, secrets: &[SecretSpan]) -> Vec<SummarySpan> {
    let mut out: Vec<SummarySpan> = secrets
        .iter()
        .enumerate()
        .map(|(i, s)| SummarySpan {
            range: s.range.clone(),
            kind: SpanKind::MaskedSecret {
                finding_id: finding_id(i),
                rule_id: s.rule_id.clone(),
                category: s.category.clone(),
            },
        })
        .collect();
    for (_, f) in findings(report) {
        let constraint_id = str_of(f, "constraint_id");
        let kind = match f.get("kind").and_then(Value::as_str) {
            Some("conflict") => SpanKind::Conflict { constraint_id },
            Some("authority") => SpanKind::Authority,
            Some("pinned") => SpanKind::PinnedMatch { constraint_id },
            _ => continue,
        };
        if let Some(range) = summary_span(f, parts) {
            out.push(SummarySpan { range, kind });
        }
    }
    out.sort_by_key(|s| (s.range.start, s.range.end));
    out
}

/// The seed's outcome class of a report or store row.
pub fn outcome(word: &str) -> Outcome {
    match word {
        "PASS" | "ACCEPTED" => Outcome::Accepted,
        "FAIL" => Outcome::Finding,
        "INSUFFICIENT_DATA" => Outcome::InsufficientData,
        _ => Outcome::Error,
    }
}

fn check_name(word: &str) -> Option<CheckName> {
    Some(match word {
        "schema" => CheckName::Schema,
        "min_length" => CheckName::MinLength,
        "provenance" => CheckName::Provenance,
        "consistency" => CheckName::Consistency,
        "pinned" => CheckName::Pinned,
        "authority" => CheckName::Authority,
        "secrets" => CheckName::Secrets,
        _ => return None,
    })
}

/// The per-check results of a report, with per-constraint rows.
pub fn check_results(report: &Value, parts: &SummaryParts) -> Vec<CheckResult> {
    checks(report)
        .iter()
        .filter_map(|c| {
            let name = str_of(c, "check");
            let check = check_name(&name)?;
            let status = match c.get("status").and_then(Value::as_str) {
                Some("pass") => CheckStatus::Pass,
                Some("fail") => CheckStatus::Fail,
                Some("error") => CheckStatus::Error,
                _ => CheckStatus::NotRun,
            };
            let code = str_of(c, "code");
            let findings = c.get("findings").and_then(Value::as_array).unwrap_or(&[]);
            let constraints = c
                .get("constraints")
                .and_then(Value::as_array)
                .unwrap_or(&[])
                .iter()
                .map(|row| constraint_row(row, findings, parts))
                .collect();
            Some(CheckResult {
                check,
                status,
                code: (!code.is_empty() && code != "ok").then_some(code),
                detail: str_of(c, "detail"),
                constraints,
            })
        })
        .collect()
}

fn constraint_row(row: &Value, findings: &[Value], parts: &SummaryParts) -> ConstraintRow {
    let id = str_of(row, "constraint_id");
    let verification = match row.get("verification_status").and_then(Value::as_str) {
        Some("PRESERVED") => Verification::Preserved,
        Some("CONFLICT") => Verification::Conflict,
        _ => Verification::Unsupported,
    };
    let non_empty = |s: String| (!s.is_empty()).then_some(s);
    ConstraintRow {
        constraint_type: str_of(row, "constraint_type"),
        claim_status: str_of(row, "claim_status"),
        verification,
        rule_id: non_empty(str_of(row, "bounded_rule_id")),
        evidence_sha256: non_empty(str_of(row, "evidence_sha256")),
        summary_range: findings
            .iter()
            .filter(|f| str_of(f, "constraint_id") == id)
            .find_map(|f| summary_span(f, parts)),
        source_message_id: None,
        constraint_id: id,
    }
}

/// Each claim's predicate (secrets masked) against the policy's canonical predicate.
pub fn claims(parts: &SummaryParts, policy: &Policy, scanner: &Scanner) -> Vec<Claim> {
    parts
        .claims
        .iter()
        .enumerate()
        .map(|(i, (id, predicate))| {
            let canonical = policy
                .invariants
                .records
                .iter()
                .chain(&policy.commitments.records)
                .find(|r| &r.id == id)
                .map(|r| r.canonical_predicate.clone())
                .unwrap_or_default();
            let field = format!("preserved_constraint_claims[{i}].preserved_predicate");
            Claim {
                constraint_id: id.clone(),
                preserved_predicate: scan_and_mask(scanner, &field, predicate).0,
                canonical_predicate: canonical,
            }
        })
        .collect()
}

/// Each pinned constraint (policy defaults, then the request's) against the manifest the
/// report recorded: the gate refuses a context that does not carry a manifest text byte for
/// byte, so a manifest entry with the same text digest is what the context carried.
pub fn pinned(report: &Value, request: &GateRequest, policy: &Policy) -> Vec<PinnedView> {
    let manifest = report
        .get("pinned_manifest")
        .and_then(|m| m.get("constraints"))
        .and_then(Value::as_array)
        .unwrap_or(&[]);
    let mut seen = std::collections::BTreeSet::new();
    policy
        .pinned
        .iter()
        .chain(&request.pinned_constraints)
        .filter(|p| seen.insert(p.id.clone()))
        .map(|p| {
            let digest = json::sha256_hex(p.text.as_bytes());
            let carried = manifest
                .iter()
                .any(|m| str_of(m, "id") == p.id && str_of(m, "text_sha256") == digest);
            PinnedView {
                constraint_id: p.id.clone(),
                text: p.text.clone(),
                returned: carried.then(|| p.text.clone()),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mask_keeps_byte_length_and_char_boundaries() {
        let text = "key é AKIA1234 end";
        let start = text.find('é').unwrap();
        let masked = mask(text, &[start + 1..start + 2, 8..12]);
        assert_eq!(masked.len(), text.len());
        assert!(!masked.contains('é'));
        assert_eq!(widen(text, start + 1..start + 1), None);
        assert_eq!(widen(text, start + 1..start + 2), Some(start..start + 2));
    }

    #[test]
    fn finding_ids_round_trip() {
        assert_eq!(finding_index(&finding_id(7)), Some(7));
        assert_eq!(finding_index("f-7"), None);
    }
}
