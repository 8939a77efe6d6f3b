//! Every check on one compaction, run independently and recorded, so a reviewer sees every
//! problem at once: summarizer, schema, minimum length, provenance, consistency, secrets,
//! pinned constraints, authority. The order of this list is the seed's first-failure order,
//! which decides the verdict's outcome class.

use std::collections::HashMap;

use crate::json::{self, canonical_sha256, Field, Limits, Value};

use super::authority::AuthorityChecker;
use super::compacted::CompactedContext;
use super::consistency::{
    ConsistencyChecker, ConsistencyFailure, ConsistencyReceipt, ConsistencyRequest, EvidenceSink,
    RegistryCache,
};
use super::diagnose;
use super::pinned::PinnedManifest;
use super::redact::redact;
use super::registry::RecordSet;
use super::report::{CheckResult, ConstraintRow, Finding};
use super::schema;
use super::secret_scan::{
    population_text, scan_field_count, CompactionScanner, LeafFinding, LeafScanner, ScanFailure,
    SecretScanReceipt,
};
use super::verdict::{FindingStatus, Outcome};
use super::verifier::ConflictVerifier;
use super::{GateRequest, SummarizerOutput};

/// What the checks need besides the request.
pub struct CheckContext<'a> {
    pub request: &'a GateRequest,
    pub source_sha256s: &'a [String],
    pub policy_sha256: &'a str,
    pub summary_min_length: i64,
    pub limits: Limits,
    pub manifest: Result<&'a RecordSet, String>,
    pub snapshot: Result<&'a RecordSet, String>,
    pub verifier: &'a dyn ConflictVerifier,
    pub scanner: &'a dyn CompactionScanner,
    pub leaf_scanner: &'a dyn LeafScanner,
    pub authority: &'a AuthorityChecker,
    pub pinned: &'a PinnedManifest,
    pub registry_cache: Option<&'a RegistryCache>,
    /// The policy's prose rules when it is in prose mode (see [`super::prose`]).
    pub prose: Option<&'a super::prose::ProseRules>,
}

/// The checks' results and what passing ones produced.
pub struct Evaluation {
    pub checks: Vec<CheckResult>,
    /// The request's model revision with any secret in it redacted (the report quotes it).
    pub model_revision: String,
    /// The canonical SHA-256 of the output, once it parsed as strict JSON.
    pub compacted_output_sha256: Option<String>,
    pub compacted: Option<CompactedContext>,
    pub consistency: Option<ConsistencyReceipt>,
    pub scan: Option<SecretScanReceipt>,
    /// Prose mode: the digest of every constraint re-injected into the trusted instruction.
    pub reinjection_sha256: Option<String>,
}

impl Evaluation {
    /// No result yet; the request's model revision redacted, and the secrets found in it.
    pub(crate) fn start(cx: &CheckContext<'_>) -> (Evaluation, Vec<LeafFinding>) {
        let revision = &cx.request.model_revision;
        let revision_leaks = cx
            .leaf_scanner
            .scan_field("summarizer.model_revision", revision);
        let ev = Evaluation {
            checks: Vec::new(),
            model_revision: redact(revision, &revision_leaks, MAX_ERROR_CHARS),
            compacted_output_sha256: None,
            compacted: None,
            consistency: None,
            scan: None,
            reinjection_sha256: None,
        };
        (ev, revision_leaks)
    }

    /// The first check that did not pass, in order.
    pub fn first_failure(&self) -> Option<&CheckResult> {
        self.checks.iter().find(|c| !c.passed())
    }
}

const AFTER_SCHEMA: [&str; 6] = [
    "min_length",
    "provenance",
    "consistency",
    "secrets",
    "pinned",
    "authority",
];

fn secret_finding(f: LeafFinding) -> Finding {
    Finding {
        kind: "secret".into(),
        field: f.field_path,
        span: Some(f.span),
        rule_id: f.rule_id,
        category: f.category.clone(),
        message: format!("{} ({} confidence)", f.category, f.confidence),
        ..Finding::default()
    }
}

/// Longest summarizer error text a report quotes.
const MAX_ERROR_CHARS: usize = 500;

pub fn evaluate(cx: &CheckContext<'_>, evidence: &mut dyn EvidenceSink) -> Evaluation {
    let mut checks = Vec::with_capacity(8);
    // The model revision is summarizer-side text the report quotes: scanned like the output.
    let (mut ev, revision_leaks) = Evaluation::start(cx);
    let raw = match &cx.request.summarizer {
        SummarizerOutput::Raw(raw) => {
            checks.push(CheckResult::pass(
                "summarizer",
                "the summarizer returned output",
            ));
            raw
        }
        SummarizerOutput::Failed(why) => {
            let (failed, leaks) = summarizer_failed(cx, why, revision_leaks);
            checks.push(failed);
            checks.push(CheckResult::not_run("schema", "no summarizer output"));
            checks.extend(AFTER_SCHEMA.iter().map(|c| {
                if *c == "secrets" && !leaks.is_empty() {
                    leak_result(&leaks, "in the summarizer's error or model revision")
                } else {
                    CheckResult::not_run(c, "no summarizer output")
                }
            }));
            ev.checks = checks;
            return ev;
        }
    };
    let parsed = match json::parse(raw.as_bytes(), &cx.limits) {
        Ok(value) => value,
        Err(e) => {
            let finding = Finding {
                kind: "schema".into(),
                field: "raw_output".into(),
                // One character at the offset (none past the end), so a viewer can mark it.
                span: Some(
                    e.offset
                        ..raw[e.offset.min(raw.len())..]
                            .chars()
                            .next()
                            .map_or(e.offset, |c| e.offset + c.len_utf8()),
                ),
                message: e.to_string(),
                ..Finding::default()
            };
            checks.push(
                CheckResult::fail(
                    "schema",
                    "json_invalid",
                    format!("summarizer output is not strict JSON: {e}"),
                )
                .with_findings(vec![finding]),
            );
            let mut leaks = cx.leaf_scanner.scan_field("raw_output", raw);
            leaks.extend(revision_leaks);
            checks.extend(not_run_after_schema(leaks));
            ev.checks = checks;
            return ev;
        }
    };
    ev.compacted_output_sha256 = canonical_sha256(&parsed).ok();
    let compacted = match schema::validate(&parsed) {
        Ok(compacted) => compacted,
        Err(errors) => {
            let findings = errors
                .iter()
                .map(|e| Finding {
                    kind: "schema".into(),
                    field: e.path.clone(),
                    message: e.message.clone(),
                    ..Finding::default()
                })
                .collect();
            let detail = format!(
                "{} schema violation(s), first: {}: {}",
                errors.len(),
                errors[0].path,
                errors[0].message
            );
            checks.push(
                CheckResult::fail("schema", "schema_invalid", detail).with_findings(findings),
            );
            let mut leaks = revision_leaks;
            scan_leaves(cx.leaf_scanner, &parsed, String::new(), &mut leaks);
            checks.extend(not_run_after_schema(leaks));
            ev.checks = checks;
            return ev;
        }
    };
    checks.push(CheckResult::pass(
        "schema",
        "the output fits the closed schema",
    ));
    checks.push(min_length(&compacted, cx.summary_min_length));
    checks.push(provenance(&compacted, cx.source_sha256s));
    let (consistency, receipt) = consistency(cx, &compacted, evidence);
    checks.push(consistency);
    ev.consistency = receipt;
    let (secrets, scan) = secrets(cx, &compacted, revision_leaks);
    checks.push(secrets);
    ev.scan = scan;
    checks.push(pinned(cx.pinned, &compacted.summary_text));
    checks.push(authority(cx, &compacted.summary_text));
    ev.checks = checks;
    ev.compacted = Some(compacted);
    ev
}

/// The failing summarizer check for `why`, and every secret found in it and the model
/// revision (`revision_leaks`), which the secrets check still reports.
pub(crate) fn summarizer_failed(
    cx: &CheckContext<'_>,
    why: &str,
    revision_leaks: Vec<LeafFinding>,
) -> (CheckResult, Vec<LeafFinding>) {
    let mut leaks = cx.leaf_scanner.scan_field("summarizer.error", why);
    let failed = CheckResult::error(
        "summarizer",
        "summarizer_failed",
        format!(
            "the summarizer failed: {}",
            redact(why, &leaks, MAX_ERROR_CHARS)
        ),
    );
    leaks.extend(revision_leaks);
    (failed, leaks)
}

/// After a schema failure nothing else can run, but a secret in the raw output is still
/// worth showing, so the secrets check reports what a leaf scan finds.
fn not_run_after_schema(leaks: Vec<LeafFinding>) -> Vec<CheckResult> {
    AFTER_SCHEMA
        .iter()
        .map(|check| {
            if *check == "secrets" && !leaks.is_empty() {
                leak_result(&leaks, "in the malformed output")
            } else {
                CheckResult::not_run(check, "the output does not fit the closed schema")
            }
        })
        .collect()
}

/// A failing secrets check for `leaks` found `where`.
pub(crate) fn leak_result(leaks: &[LeafFinding], place: &str) -> CheckResult {
    let detail = format!("{} secret finding(s) {place}", leaks.len());
    CheckResult::fail("secrets", "secret_found", detail)
        .with_findings(leaks.iter().cloned().map(secret_finding).collect())
}

fn scan_leaves(scanner: &dyn LeafScanner, value: &Value, path: String, out: &mut Vec<LeafFinding>) {
    value.visit_strings(&mut |at, text| {
        let at = match (path.is_empty(), at.is_empty()) {
            (true, _) => at.to_owned(),
            (false, true) => path.clone(),
            (false, false) => format!("{path}.{at}"),
        };
        out.extend(scanner.scan_field(&at, text));
    });
}

pub(crate) fn min_length(compacted: &CompactedContext, min: i64) -> CheckResult {
    let length = compacted.summary_text.chars().count();
    if (length as i64) < min {
        let message =
            format!("compacted summary is {length} characters, shorter than the policy's {min}");
        let finding = Finding {
            kind: "min_length".into(),
            field: "summary_text".into(),
            span: Some(0..compacted.summary_text.len()),
            message: message.clone(),
            ..Finding::default()
        };
        CheckResult::fail("min_length", "summary_too_short", message).with_findings(vec![finding])
    } else {
        CheckResult::pass(
            "min_length",
            format!("{length} characters, policy minimum {min}"),
        )
    }
}

fn provenance(compacted: &CompactedContext, sources: &[String]) -> CheckResult {
    let claimed = &compacted.source_message_sha256s;
    if claimed == sources {
        return CheckResult::pass(
            "provenance",
            format!("all {} source digests match, in order", sources.len()),
        );
    }
    let mut findings = Vec::new();
    for (i, digest) in claimed.iter().enumerate() {
        let message = match sources.iter().position(|s| s == digest) {
            Some(at) if at == i => continue,
            Some(at) => format!("digest of source message {at} stands at position {i}"),
            None => "digest matches no source message".to_owned(),
        };
        findings.push(Finding {
            kind: "provenance".into(),
            field: format!("source_message_sha256s[{i}]"),
            message,
            ..Finding::default()
        });
    }
    for (i, digest) in sources.iter().enumerate() {
        if !claimed.contains(digest) {
            let message = format!("source message {i} is not covered by the summary");
            findings.push(Finding {
                kind: "provenance".into(),
                field: "source_message_sha256s".into(),
                message,
                ..Finding::default()
            });
        }
    }
    let detail = format!(
        "compacted source population differs: {} claimed, {} given",
        claimed.len(),
        sources.len()
    );
    CheckResult::fail("provenance", "source_population_differs", detail).with_findings(findings)
}

fn consistency(
    cx: &CheckContext<'_>,
    compacted: &CompactedContext,
    evidence: &mut dyn EvidenceSink,
) -> (CheckResult, Option<ConsistencyReceipt>) {
    let (manifest, snapshot) = match (&cx.manifest, &cx.snapshot) {
        (Ok(m), Ok(s)) => (*m, *s),
        (Err(e), _) | (_, Err(e)) => {
            return (
                CheckResult::error("consistency", "registry_unavailable", e.clone()),
                None,
            )
        }
    };
    let checker = ConsistencyChecker {
        manifest,
        snapshot,
        verifier: cx.verifier,
        cache: cx.registry_cache,
    };
    let outcome = checker.verify(
        &ConsistencyRequest {
            tenant_id: &cx.request.tenant_id,
            task_id: &cx.request.task_id,
            policy_sha256: cx.policy_sha256,
            compacted,
            expected_invariant_ids: &cx.request.expected_invariant_ids,
            expected_commitment_ids: &cx.request.expected_commitment_ids,
        },
        evidence,
    );
    let mut findings = Vec::new();
    let mut rows = Vec::new();
    if let Some(v) = &outcome.verification {
        rows = v
            .results
            .iter()
            .map(|r| ConstraintRow {
                constraint_type: r.constraint_type.clone(),
                constraint_id: r.constraint_id.clone(),
                claim_status: r.claim_status.clone(),
                verification_status: r.verification_status.clone(),
                bounded_rule_id: r.bounded_rule_id.clone(),
                evidence_sha256: r.evidence_sha256.clone(),
                origin: String::new(),
            })
            .collect();
        findings.extend(v.matches.iter().map(|m| Finding {
            kind: "conflict".into(),
            field: "summary_text".into(),
            span: Some(m.span.clone()),
            rule_id: m.rule_id.clone(),
            constraint_id: m.constraint_id.clone(),
            message: match &m.note {
                Some(note) => format!("{note}, so {} cannot be verified", m.constraint_id),
                None => format!("the summary contradicts {}", m.constraint_id),
            },
            ..Finding::default()
        }));
        if let Some(why) = &v.parse_failure {
            findings.push(Finding {
                kind: "unparsed".into(),
                field: "summary_text".into(),
                span: why.span.clone(),
                message: why.message.clone(),
                ..Finding::default()
            });
        }
    }
    // G001 re-checks what the checker says it covered.
    let outcome_result = outcome.result.clone().and_then(|receipt| {
        if receipt.invariant_ids != cx.request.expected_invariant_ids
            || receipt.commitment_ids != cx.request.expected_commitment_ids
            || receipt.receipt_sha256.chars().count() != 64
        {
            Err(ConsistencyFailure {
                outcome: "ERROR",
                finding_status: "UNKNOWN",
                message: "compaction consistency receipt differs".into(),
            })
        } else {
            Ok(receipt)
        }
    });
    let mut result = match &outcome_result {
        Ok(receipt) => CheckResult::pass(
            "consistency",
            format!(
                "every registered constraint is PRESERVED; receipt {}",
                &receipt.receipt_sha256[..16]
            ),
        ),
        Err(failure) => {
            // The consistency checker speaks the seed's words; an unknown one is an error.
            let outcome = Outcome::parse(failure.outcome).unwrap_or(Outcome::Error);
            let code = match outcome {
                Outcome::Fail => "consistency_finding",
                Outcome::InsufficientData => "consistency_unsupported",
                _ => "consistency_error",
            };
            let base = if outcome == Outcome::Fail || outcome == Outcome::InsufficientData {
                CheckResult::fail("consistency", code, failure.message.clone())
            } else {
                CheckResult::error("consistency", code, failure.message.clone())
            };
            CheckResult {
                outcome,
                finding_status: FindingStatus::parse(failure.finding_status)
                    .unwrap_or(outcome.finding_status()),
                ..base
            }
        }
    };
    if !result.passed() {
        findings.extend(diagnose::consistency_findings(
            compacted,
            manifest,
            snapshot,
            (
                &cx.request.expected_invariant_ids,
                &cx.request.expected_commitment_ids,
            ),
            outcome.verification.as_ref(),
        ));
    }
    result.findings = findings;
    result.constraints = rows;
    (result, outcome_result.ok())
}

pub(crate) fn secrets(
    cx: &CheckContext<'_>,
    compacted: &CompactedContext,
    mut leaks: Vec<LeafFinding>,
) -> (CheckResult, Option<SecretScanReceipt>) {
    // Every value of every claim. The keys are the schema's own field names here (the claim
    // was rebuilt from the validated output); keys of output that fails the schema are
    // scanned with the rest of it, above. Findings depend on the text alone (see
    // `LeafScanner`), so a value that repeats (every claim's `status`, `constraint_type`)
    // is scanned once and its findings are named after each field that holds it.
    let mut scanned: HashMap<&str, Vec<LeafFinding>> = HashMap::new();
    for (i, claim) in compacted.preserved_constraint_claims.iter().enumerate() {
        for (key, value) in claim.fields() {
            if let Field::Str(text) = value {
                let path = || format!("preserved_constraint_claims[{i}].{key}");
                let found = scanned
                    .entry(text)
                    .or_insert_with(|| cx.leaf_scanner.scan_field(&path(), text));
                if !found.is_empty() {
                    let path = path();
                    leaks.extend(found.iter().map(|f| LeafFinding {
                        field_path: path.clone(),
                        ..f.clone()
                    }));
                }
            }
        }
    }
    let scanned = cx
        .scanner
        .scan(cx.policy_sha256, compacted)
        .and_then(|receipt| bound_to_population(receipt, compacted));
    match scanned {
        Ok(receipt) if leaks.is_empty() => {
            let detail = format!(
                "{} field(s) scanned clean; receipt {}",
                receipt.scanned_field_count,
                &receipt.receipt_sha256[..16.min(receipt.receipt_sha256.len())]
            );
            (CheckResult::pass("secrets", detail), Some(receipt))
        }
        Ok(_) => {
            let detail = format!(
                "{} secret finding(s) in constraint claims or the model revision",
                leaks.len()
            );
            (
                CheckResult::fail("secrets", "secret_found", detail)
                    .with_findings(leaks.into_iter().map(secret_finding).collect()),
                None,
            )
        }
        Err(failure) => {
            leaks.splice(0..0, failure.findings);
            let findings = leaks.into_iter().map(secret_finding).collect();
            let result = if failure.code == "secret_found" {
                CheckResult::fail("secrets", failure.code, failure.message)
            } else {
                CheckResult::error("secrets", failure.code, failure.message)
            };
            (result.with_findings(findings), None)
        }
    }
}

/// G001 trusts no scanner adapter either: the receipt must be CLEAN and name exactly the
/// population of the four roots and its field count.
fn bound_to_population(
    receipt: SecretScanReceipt,
    compacted: &CompactedContext,
) -> Result<SecretScanReceipt, ScanFailure> {
    let population = population_text(compacted);
    let bound = receipt.decision == "CLEAN"
        && json::sha256_hex(population.as_bytes()) == receipt.scanned_population_sha256
        && receipt.scanned_field_count == scan_field_count(compacted) as i64
        && receipt.receipt_sha256.chars().count() == 64;
    if bound {
        Ok(receipt)
    } else {
        Err(ScanFailure {
            code: "scan_receipt_unbound",
            message: "secret-scan receipt or measured population differs".into(),
            findings: Vec::new(),
        })
    }
}

fn pinned(manifest: &PinnedManifest, summary: &str) -> CheckResult {
    let conflicts = manifest.conflicts(summary);
    let mut rows: Vec<ConstraintRow> = manifest
        .constraints
        .iter()
        .map(|p| {
            let conflict = conflicts.iter().any(|c| c.constraint_id == p.constraint.id);
            ConstraintRow {
                constraint_type: "PINNED".into(),
                constraint_id: p.constraint.id.clone(),
                claim_status: p.constraint.severity.clone(),
                verification_status: if conflict { "CONFLICT" } else { "PRESERVED" }.into(),
                bounded_rule_id: "pinned-verbatim-v1".into(),
                evidence_sha256: p.record_sha256.clone(),
                origin: String::new(),
            }
        })
        .collect();
    rows.sort_by(|a, b| a.constraint_id.cmp(&b.constraint_id));
    let mut result = if conflicts.is_empty() {
        CheckResult::pass(
            "pinned",
            format!(
                "{} pinned constraint(s) carried verbatim; none re-opened",
                manifest.constraints.len()
            ),
        )
    } else {
        let mut ids: Vec<&str> = conflicts.iter().map(|c| c.constraint_id.as_str()).collect();
        ids.dedup();
        CheckResult::fail(
            "pinned",
            "pinned_conflict",
            format!(
                "the summary re-opens a falsified path forbidden by {}",
                ids.join(", ")
            ),
        )
    };
    result.findings = conflicts
        .into_iter()
        .map(|c| Finding {
            kind: "pinned".into(),
            field: "summary_text".into(),
            span: Some(c.span),
            rule_id: c.pattern,
            constraint_id: c.constraint_id.clone(),
            message: format!(
                "matches a forbidden pattern of pinned constraint {}",
                c.constraint_id
            ),
            ..Finding::default()
        })
        .collect();
    result.constraints = rows;
    result
}

fn authority(cx: &CheckContext<'_>, summary: &str) -> CheckResult {
    let findings = cx.authority.check(summary, &cx.request.messages);
    if findings.is_empty() {
        return CheckResult::pass(
            "authority",
            "no unsupported claim of user or system authority",
        );
    }
    let detail = format!(
        "{} claim(s) of authority that no source turn supports",
        findings.len()
    );
    let findings = findings
        .into_iter()
        .map(|f| Finding {
            kind: "authority".into(),
            field: "summary_text".into(),
            span: Some(f.span),
            rule_id: format!("authority-{}", f.role),
            message: f.reason,
            ..Finding::default()
        })
        .collect();
    CheckResult::fail("authority", "fabricated_authority", detail).with_findings(findings)
}

/// The canonical digest of a value, empty when it has none (only non-finite numbers).
pub fn digest_or_empty(value: &Value) -> String {
    canonical_sha256(value).unwrap_or_default()
}
