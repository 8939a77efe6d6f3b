//! Prose mode: the checks on a free-prose summary, as real runtimes (Claude Code, Codex) write
//! it. Such a summary carries no claims, so nothing in it is verified to preserve a constraint:
//! the registered invariants and commitments and the pinned constraints are re-rendered
//! verbatim from the policy and the pinned manifest into the trusted instruction, and reported
//! as `REINJECTED` (never `PRESERVED`), each pin with where it came from. The summary itself is
//! checked for secrets (the G003 scanner over the whole text, its receipt bound to exactly what
//! was scanned), fabricated authority (claims and quotes of the user matched against the user's
//! own turns), conflicts (proposals a registered or pinned constraint forbids) and
//! carried-forward injection (instructions from tool turns, role markers, hidden characters).
//! A fenced ` ```cq-compaction ` block in the strict schema is checked as strict mode too, and
//! both apply. Every finding carries the byte span of its sentence in the summary.

mod claims;
mod conflicts;
mod examples;
mod injection;
mod quoted;
pub(crate) mod rules;
pub(crate) mod segment;
mod stance;
pub(crate) mod stems;

pub use rules::ProseRules;

use crate::json::{canonical_str, object, sha256_hex, Value};

use super::checks::{self, digest_or_empty, CheckContext, Evaluation};
use super::compacted::CompactedContext;
use super::consistency::EvidenceSink;
use super::report::{CheckResult, ConstraintRow};
use super::{GateRequest, SummarizerOutput};
use segment::Segments;

/// The checks prose mode runs after the summarizer's, in first-failure order.
pub const PROSE_CHECKS: [&str; 7] = [
    "min_length",
    "secrets",
    "pinned",
    "conflicts",
    "authority",
    "injection",
    "reinjection",
];

/// The prefix of the strict checks run on a fenced block (`fenced.schema`, …).
pub const FENCED_PREFIX: &str = "fenced.";

/// The summary as the checks read it: its text, its sentences, the request's turns.
pub(crate) struct Summary<'a> {
    pub text: &'a str,
    pub segments: Segments,
    pub request: &'a GateRequest,
}

/// Runs every prose check on `cx.request`.
pub fn evaluate(
    cx: &CheckContext<'_>,
    rules: &ProseRules,
    evidence: &mut dyn EvidenceSink,
) -> Evaluation {
    let (mut ev, revision_leaks) = Evaluation::start(cx);
    let raw = match &cx.request.summarizer {
        SummarizerOutput::Raw(raw) => raw,
        SummarizerOutput::Failed(why) => {
            let (failed, leaks) = checks::summarizer_failed(cx, why, revision_leaks);
            ev.checks.push(failed);
            for check in PROSE_CHECKS {
                ev.checks.push(match check {
                    "secrets" if !leaks.is_empty() => {
                        checks::leak_result(&leaks, "in the summarizer's error or model revision")
                    }
                    "reinjection" => reinjection(cx),
                    "pinned" => conflicts::pinned(rules, None, cx.pinned, cx.request),
                    _ => CheckResult::not_run(check, "no summarizer output"),
                });
            }
            ev.reinjection_sha256 = reinjection_receipt(&ev.checks);
            return ev;
        }
    };
    ev.checks.push(CheckResult::pass(
        "summarizer",
        "the summarizer returned a prose summary",
    ));
    // The runtime's summary is the text the next context holds: digested, scanned and
    // checked exactly as given.
    let compacted = CompactedContext {
        summary_text: raw.clone(),
        retained_safety_invariant_ids: cx.request.expected_invariant_ids.clone(),
        retained_policy_commitment_ids: cx.request.expected_commitment_ids.clone(),
        source_message_sha256s: cx.source_sha256s.to_vec(),
        preserved_constraint_claims: Vec::new(),
    };
    ev.compacted_output_sha256 = Some(sha256_hex(canonical_str(raw).as_bytes()));
    let summary = Summary {
        text: raw,
        segments: Segments::new(raw, &rules.sections),
        request: cx.request,
    };
    ev.checks
        .push(checks::min_length(&compacted, cx.summary_min_length));
    let (secrets, scan) = checks::secrets(cx, &compacted, revision_leaks);
    ev.checks.push(secrets);
    ev.scan = scan;
    ev.checks.push(conflicts::pinned(
        rules,
        Some(&summary),
        cx.pinned,
        cx.request,
    ));
    ev.checks.push(conflicts::registered(rules, &summary));
    ev.checks.push(claims::authority(rules, &summary));
    ev.checks.push(injection::injection(rules, &summary));
    ev.checks.push(reinjection(cx));
    ev.reinjection_sha256 = reinjection_receipt(&ev.checks);
    if let Some(block) = fenced_block(raw, &rules.fence) {
        ev.checks.extend(fenced(cx, block, evidence));
    }
    ev.compacted = Some(compacted);
    ev
}

/// The JSON inside the first fenced block whose info string is `fence`, if any.
pub fn fenced_block<'t>(text: &'t str, fence: &str) -> Option<&'t str> {
    let mut offset = 0;
    let mut open: Option<usize> = None;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim();
        match open {
            None => {
                if trimmed
                    .strip_prefix("```")
                    .is_some_and(|info| info.trim() == fence)
                {
                    open = Some(offset + line.len());
                }
            }
            Some(start) if trimmed == "```" => return text.get(start..offset),
            Some(_) => {}
        }
        offset += line.len();
    }
    // An unclosed block runs to the end: still checked, so it cannot hide.
    open.and_then(|start| text.get(start..))
}

/// The strict checks on a fenced block, named `fenced.<check>`.
fn fenced(cx: &CheckContext<'_>, block: &str, evidence: &mut dyn EvidenceSink) -> Vec<CheckResult> {
    let request = GateRequest {
        summarizer: SummarizerOutput::Raw(block.to_owned()),
        ..cx.request.clone()
    };
    let strict = CheckContext {
        request: &request,
        source_sha256s: cx.source_sha256s,
        policy_sha256: cx.policy_sha256,
        summary_min_length: cx.summary_min_length,
        limits: cx.limits,
        manifest: cx.manifest.clone(),
        snapshot: cx.snapshot.clone(),
        verifier: cx.verifier,
        scanner: cx.scanner,
        leaf_scanner: cx.leaf_scanner,
        authority: cx.authority,
        pinned: cx.pinned,
        registry_cache: cx.registry_cache,
        prose: None,
    };
    checks::evaluate(&strict, evidence)
        .checks
        .into_iter()
        .filter(|c| c.check != "summarizer")
        .map(|mut c| {
            c.check = format!("{FENCED_PREFIX}{}", c.check);
            c
        })
        .collect()
}

/// Every registered invariant and commitment the request expects, as a re-injected row: the
/// trusted instruction renders it from the policy, whatever the summary says.
fn reinjection(cx: &CheckContext<'_>) -> CheckResult {
    let (manifest, snapshot) = match (&cx.manifest, &cx.snapshot) {
        (Ok(m), Ok(s)) => (*m, *s),
        (Err(e), _) | (_, Err(e)) => {
            return CheckResult::error("reinjection", "registry_unavailable", e.clone())
        }
    };
    let mut rows = Vec::new();
    let mut missing = Vec::new();
    let expected = [
        (manifest, &cx.request.expected_invariant_ids),
        (snapshot, &cx.request.expected_commitment_ids),
    ];
    for (set, ids) in expected {
        for id in ids {
            match set.records.iter().find(|r| &r.id == id) {
                Some(record) => rows.push(ConstraintRow {
                    constraint_type: set.kind.constraint_type().to_owned(),
                    constraint_id: id.clone(),
                    claim_status: "NOT_CLAIMED".into(),
                    verification_status: "REINJECTED".into(),
                    bounded_rule_id: "prose-reinjected-v1".into(),
                    evidence_sha256: record.record_sha256.clone(),
                    origin: "policy".into(),
                }),
                None => missing.push(id.as_str()),
            }
        }
    }
    let mut result = if missing.is_empty() {
        CheckResult::pass(
            "reinjection",
            format!(
                "{} registered constraint(s) re-injected verbatim from the policy (not verified in the summary)",
                rows.len()
            ),
        )
    } else {
        CheckResult::error(
            "reinjection",
            "constraint_unregistered",
            format!(
                "the request expects constraint(s) the policy does not register: {}",
                missing.join(", ")
            ),
        )
    };
    result.constraints = rows;
    result
}

/// The digest of what was re-injected: every re-injected row of the report, registered and
/// pinned, in order; `None` when a row could not be re-injected.
fn reinjection_receipt(checks: &[CheckResult]) -> Option<String> {
    let reinjection = checks.iter().find(|c| c.check == "reinjection")?;
    if !reinjection.passed() {
        return None;
    }
    let rows: Vec<Value> = checks
        .iter()
        .filter(|c| c.check == "reinjection" || c.check == "pinned")
        .flat_map(|c| &c.constraints)
        .map(|r| {
            object([
                ("constraint_type", Value::from(&r.constraint_type)),
                ("constraint_id", Value::from(&r.constraint_id)),
                ("evidence_sha256", Value::from(&r.evidence_sha256)),
                ("origin", Value::from(&r.origin)),
            ])
        })
        .collect();
    Some(digest_or_empty(&object([
        ("schema_version", Value::from("cq.prose-reinjection.v1")),
        ("constraints", Value::Array(rows)),
    ])))
}
