//! Conflicts in a prose summary: a sentence that proposes what a registered constraint forbids
//! (the policy's `[[prose.conflicts]]`, "Next step: push to main") or what a pinned
//! constraint's forbidden pattern names ("re-run migration 0042"). A match is a conflict only
//! when the summary proposes it ([`super::stance`]); a rule the user may confirm is lifted by a
//! sentence that waits for the user or a user turn that approves the very action. The pinned
//! check also lists every pin as re-injected, with where it came from.

use std::ops::Range;

use crate::engine::pinned::PinnedManifest;
use crate::engine::report::{CheckResult, ConstraintRow, Finding};
use crate::engine::GateRequest;

use super::rules::{ConflictRule, ProseRules};
use super::stance::{stance, waits_for_user, Stance};
use super::Summary;

/// The span of the sentence holding byte `at` (the match itself when it has none).
pub(crate) fn sentence_span(summary: &Summary<'_>, found: &Range<usize>) -> Range<usize> {
    summary
        .segments
        .at(found.start)
        .map_or(found.clone(), |s| s.span.clone())
}

/// Whether a user turn approves the action `rule` names (an approval phrase, no refusal, and
/// the rule's own pattern).
fn user_confirms(rules: &ProseRules, rule: &ConflictRule, request: &GateRequest) -> bool {
    request
        .messages
        .iter()
        .filter(|m| m.role == "user")
        .any(|m| {
            rule.regex.is_match(&m.content)
                && rules.approvals.is_match(&m.content)
                && !rules.refusals.is_match(&m.content)
        })
}

/// The registered constraints' conflicts.
pub fn registered(rules: &ProseRules, summary: &Summary<'_>) -> CheckResult {
    let text = summary.text;
    let mut findings: Vec<Finding> = Vec::new();
    for rule in &rules.conflicts {
        let mut confirmed: Option<bool> = None;
        for found in rule.regex.find_iter(text) {
            let range = found.range();
            if stance(rules, &summary.segments, text, &range) != Stance::Proposed {
                continue;
            }
            if rule.confirmable
                && (waits_for_user(rules, &summary.segments, text, range.start)
                    || *confirmed
                        .get_or_insert_with(|| user_confirms(rules, rule, summary.request)))
            {
                continue;
            }
            let span = sentence_span(summary, &range);
            if findings
                .iter()
                .any(|f| f.span.as_ref() == Some(&span) && f.rule_id == rule.id)
            {
                continue;
            }
            findings.push(Finding {
                kind: "conflict".into(),
                field: "summary_text".into(),
                span: Some(span),
                rule_id: rule.id.clone(),
                constraint_id: rule.constraint_id.clone(),
                message: format!(
                    "the summary proposes what {} forbids ({})",
                    rule.constraint_id, rule.description
                ),
                ..Finding::default()
            });
        }
    }
    findings.sort_by_key(|f| f.span.as_ref().map(|s| s.start));
    if findings.is_empty() {
        return CheckResult::pass(
            "conflicts",
            "no proposal that a registered constraint forbids",
        );
    }
    let detail = format!(
        "{} proposal(s) that a registered constraint forbids",
        findings.len()
    );
    CheckResult::fail("conflicts", "constraint_conflict", detail).with_findings(findings)
}

/// Where a pin came from: the policy, the project file, or a user turn (`PIN-USER-…`).
fn origin(id: &str, text: &str, request: &GateRequest) -> String {
    if !request.pinned_constraints.iter().any(|p| p.id == id) {
        return "policy".into();
    }
    if !id.starts_with("PIN-USER-") {
        return "project file".into();
    }
    let turn = request.messages.iter().find(|m| {
        m.role == "user" && m.content.contains(text) && m.content.to_lowercase().contains("cq pin")
    });
    match turn {
        Some(m) => format!("user turn {}", m.message_id),
        None => "user turn earlier in the session".into(),
    }
}

/// Every pin as a re-injected row, and the proposals its forbidden patterns name; `summary` is
/// `None` when there is no summary to check.
pub fn pinned(
    rules: &ProseRules,
    summary: Option<&Summary<'_>>,
    manifest: &PinnedManifest,
    request: &GateRequest,
) -> CheckResult {
    let mut findings: Vec<Finding> = Vec::new();
    if let Some(summary) = summary {
        for conflict in manifest.conflicts_all(summary.text) {
            // A pin names a path already found false: re-opening it needs no proposal cue.
            let at = stance(rules, &summary.segments, summary.text, &conflict.span);
            if !matches!(at, Stance::Proposed | Stance::Stated) {
                continue;
            }
            let span = sentence_span(summary, &conflict.span);
            if findings.iter().any(|f| {
                f.span.as_ref() == Some(&span) && f.constraint_id == conflict.constraint_id
            }) {
                continue;
            }
            findings.push(Finding {
                kind: "pinned".into(),
                field: "summary_text".into(),
                span: Some(span),
                rule_id: conflict.pattern,
                constraint_id: conflict.constraint_id.clone(),
                message: format!(
                    "proposes a path pinned constraint {} forbids",
                    conflict.constraint_id
                ),
                ..Finding::default()
            });
        }
    }
    let rows: Vec<ConstraintRow> = manifest
        .constraints
        .iter()
        .map(|p| {
            let id = &p.constraint.id;
            let conflict = findings.iter().any(|f| &f.constraint_id == id);
            ConstraintRow {
                constraint_type: "PINNED".into(),
                constraint_id: id.clone(),
                claim_status: p.constraint.severity.clone(),
                verification_status: if conflict { "CONFLICT" } else { "REINJECTED" }.into(),
                bounded_rule_id: "pinned-reinjected-v1".into(),
                evidence_sha256: p.record_sha256.clone(),
                origin: origin(id, &p.constraint.text, request),
            }
        })
        .collect();
    let mut result = if findings.is_empty() {
        CheckResult::pass(
            "pinned",
            format!(
                "{} pinned constraint(s) re-injected verbatim; none proposed against",
                rows.len()
            ),
        )
    } else {
        let mut ids: Vec<&str> = findings.iter().map(|f| f.constraint_id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        CheckResult::fail(
            "pinned",
            "pinned_conflict",
            format!(
                "the summary proposes a path forbidden by {}",
                ids.join(", ")
            ),
        )
    };
    result.findings = findings;
    result.constraints = rows;
    result
}
