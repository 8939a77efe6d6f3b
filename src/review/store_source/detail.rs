//! Turning an [`Inspection`] (a compaction as the application layer hands it out, every secret
//! already overwritten, its report typed) into what the detail screen shows: highlighted
//! summary spans, per-check results with per-constraint rows, claims against the policy's
//! canonical predicates, and pinned constraints against the manifest the context carried.

use crate::engine::report::{CheckResult as ReportCheck, Finding, Status as ReportStatus};
use crate::engine::verdict::Outcome as Seed;
use crate::json;
use crate::policy::Policy;
use crate::review::source::{
    CheckName, CheckResult, CheckStatus, Claim, ConstraintRow, Outcome, PinnedView, SpanKind,
    SummarySpan, Verification,
};
use crate::service::inspect::{finding_id, summary_span, Inspection, SecretSpan, SummaryParts};

/// Highlighted spans of the summary: secrets (by index) and the report's conflict, authority
/// and pinned findings.
pub fn spans(inspection: &Inspection) -> Vec<SummarySpan> {
    let parts = &inspection.summary;
    let mut out: Vec<SummarySpan> = inspection
        .secrets
        .iter()
        .enumerate()
        .map(|(i, s): (usize, &SecretSpan)| SummarySpan {
            range: s.range.clone(),
            kind: SpanKind::MaskedSecret {
                finding_id: finding_id(i),
                rule_id: s.rule_id.clone(),
                category: s.category.clone(),
            },
        })
        .collect();
    for f in inspection.report.checks.iter().flat_map(|c| &c.findings) {
        let constraint_id = f.constraint_id.clone();
        let kind = match f.kind.as_str() {
            "conflict" => SpanKind::Conflict { constraint_id },
            "authority" => SpanKind::Authority,
            "pinned" => SpanKind::PinnedMatch { constraint_id },
            _ => continue,
        };
        if let Some(range) = summary_span(f, parts) {
            out.push(SummarySpan { range, kind });
        }
    }
    out.sort_by_key(|s| (s.range.start, s.range.end));
    out
}

/// The reviewer's outcome for the seed's outcome of a report or store row.
pub fn outcome(seed: Seed) -> Outcome {
    match seed {
        Seed::Pass => Outcome::Accepted,
        Seed::Fail => Outcome::Finding,
        Seed::InsufficientData => Outcome::InsufficientData,
        Seed::Error | Seed::Unknown => Outcome::Error,
    }
}

/// The reviewer's name for a report's check word; `None` for checks it does not show.
pub fn check_name(word: &str) -> Option<CheckName> {
    Some(match word {
        "schema" => CheckName::Schema,
        "min_length" => CheckName::MinLength,
        "provenance" => CheckName::Provenance,
        "consistency" => CheckName::Consistency,
        "pinned" => CheckName::Pinned,
        "authority" => CheckName::Authority,
        "secrets" => CheckName::Secrets,
        "summarizer" => CheckName::Summarizer,
        "conflicts" => CheckName::Conflicts,
        "injection" => CheckName::Injection,
        "reinjection" => CheckName::Reinjection,
        _ => return None,
    })
}

/// The per-check results of a report, with per-constraint rows.
pub fn check_results(inspection: &Inspection) -> Vec<CheckResult> {
    inspection
        .report
        .checks
        .iter()
        .filter_map(|c| check_result(c, &inspection.summary))
        .collect()
}

fn check_result(c: &ReportCheck, parts: &SummaryParts) -> Option<CheckResult> {
    let check = check_name(&c.check)?;
    let status = check_status(c.status);
    let constraints = c
        .constraints
        .iter()
        .map(|row| constraint_row(row, &c.findings, parts))
        .collect();
    Some(CheckResult {
        check,
        status,
        code: (!c.code.is_empty() && c.code != "ok").then(|| c.code.clone()),
        detail: c.detail.clone(),
        constraints,
    })
}

/// The reviewer's status of a report's check status.
pub fn check_status(status: ReportStatus) -> CheckStatus {
    match status {
        ReportStatus::Pass => CheckStatus::Pass,
        ReportStatus::Fail => CheckStatus::Fail,
        ReportStatus::Error => CheckStatus::Error,
        ReportStatus::NotRun => CheckStatus::NotRun,
    }
}

fn constraint_row(
    row: &crate::engine::report::ConstraintRow,
    findings: &[Finding],
    parts: &SummaryParts,
) -> ConstraintRow {
    let verification = match row.verification_status.as_str() {
        "PRESERVED" => Verification::Preserved,
        "CONFLICT" => Verification::Conflict,
        "REINJECTED" => Verification::Reinjected,
        _ => Verification::Unsupported,
    };
    let non_empty = |s: &str| (!s.is_empty()).then(|| s.to_owned());
    ConstraintRow {
        constraint_type: row.constraint_type.clone(),
        claim_status: row.claim_status.clone(),
        verification,
        rule_id: non_empty(&row.bounded_rule_id),
        evidence_sha256: non_empty(&row.evidence_sha256),
        summary_range: findings
            .iter()
            .filter(|f| f.constraint_id == row.constraint_id)
            .find_map(|f| summary_span(f, parts)),
        source_message_id: None,
        constraint_id: row.constraint_id.clone(),
    }
}

/// Each claim's predicate (secrets already masked) against the policy's canonical predicate.
pub fn claims(parts: &SummaryParts, policy: &Policy) -> Vec<Claim> {
    parts
        .claims
        .iter()
        .map(|(id, predicate)| {
            let canonical = policy
                .invariants
                .records
                .iter()
                .chain(&policy.commitments.records)
                .find(|r| &r.id == id)
                .map(|r| r.canonical_predicate.clone())
                .unwrap_or_default();
            Claim {
                constraint_id: id.clone(),
                preserved_predicate: predicate.clone(),
                canonical_predicate: canonical,
            }
        })
        .collect()
}

/// Each pinned constraint (policy defaults, then the request's) against the manifest the
/// report recorded: the gate refuses a context that does not carry a manifest text byte for
/// byte, so a manifest entry with the same text digest is what the context carried.
pub fn pinned(inspection: &Inspection, policy: &Policy) -> Vec<PinnedView> {
    let manifest = inspection
        .report
        .pinned_manifest
        .get("constraints")
        .and_then(json::Value::as_array)
        .unwrap_or(&[]);
    let text_of = |m: &json::Value, key: &str| {
        m.get(key)
            .and_then(json::Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let mut seen = std::collections::BTreeSet::new();
    policy
        .pinned
        .iter()
        .chain(&inspection.request.pinned_constraints)
        .filter(|p| seen.insert(p.id.clone()))
        .map(|p| {
            let digest = json::sha256_hex(p.text.as_bytes());
            let carried = manifest
                .iter()
                .any(|m| text_of(m, "id") == p.id && text_of(m, "text_sha256") == digest);
            PinnedView {
                constraint_id: p.id.clone(),
                text: p.text.clone(),
                returned: carried.then(|| p.text.clone()),
            }
        })
        .collect()
}
