//! Checking a request and recording the verdict: what the store keeps of a gate outcome (the
//! request and the sealed report with their digests, the verdict class the two-person rule
//! keys on, the main reason, the summary's anomaly count from the one sanitizer), and the use
//! case `cq check --store`, `cq ingest` and the importers share.

use crate::engine::gate::GateOutcome;
use crate::engine::report::SealedReport;
use anyhow::Context as _;

use crate::engine::GateRequest;
use crate::sanitize::anomaly_count;
use crate::store::{NewCompaction, NewReport, Recorded, ReviewRules, Store};

use super::checker::Checker;

/// What the store keeps of a sealed report; `release` are the review rules for releases, which
/// decide how many approvers a release of it needs.
pub fn new_report(
    report: &SealedReport,
    summary: Option<&str>,
    release: &ReviewRules,
) -> NewReport {
    let main = report.main_failure();
    let class = report.verdict_class();
    let secret = report.has_secret_finding();
    NewReport {
        report_sha256: report.sha256.clone(),
        report_json: report.canonical.clone(),
        policy_sha256: report.policy_sha256.clone(),
        verifier_version: report.verifier_version.clone(),
        verdict: report.verdict,
        outcome: report.outcome,
        finding_status: report.finding_status,
        verdict_class: class,
        main_reason: main
            .map(|c| format!("{}: {}", c.check, c.code))
            .unwrap_or_default(),
        anomaly_count: summary.map_or(0, |s| u32::try_from(anomaly_count(s)).unwrap_or(u32::MAX)),
        has_secret_finding: secret,
        approvals_required: if release.needs_two(class, secret) {
            2
        } else {
            1
        },
    }
}

/// What the store keeps of one checked request.
pub fn new_compaction(
    request: &GateRequest,
    outcome: &GateOutcome,
    release: &ReviewRules,
) -> NewCompaction {
    let report = &outcome.report;
    NewCompaction {
        compaction_id: report.compaction_id.clone(),
        tenant_id: request.tenant_id.clone(),
        task_id: request.task_id.clone(),
        request_sha256: report.request_sha256.clone(),
        request_json: request.canonical(),
        summary_sha256: report.summary_sha256.clone().unwrap_or_default(),
        source_population_sha256: report.source_population_sha256.clone(),
        report: new_report(report, outcome.summary_text.as_deref(), release),
    }
}

/// One request checked and, with a store, recorded.
#[derive(Debug)]
pub struct Checked {
    pub outcome: GateOutcome,
    /// `None` when no store was given.
    pub recorded: Option<Recorded>,
}

/// Runs the gate on `request` and records the verdict in `store` when one is given.
pub fn check_and_record(
    checker: &Checker,
    store: Option<&Store>,
    request: &GateRequest,
) -> anyhow::Result<Checked> {
    let outcome = checker.check(request).context("refused")?;
    let recorded = match store {
        Some(store) => Some(store.record_verdict(&new_compaction(
            request,
            &outcome,
            checker.release_rules(),
        ))?),
        None => None,
    };
    Ok(Checked { outcome, recorded })
}
