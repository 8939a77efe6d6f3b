//! Turning a gate outcome into what the store records: the request and report as canonical
//! JSON with their digests, the verdict class the two-person rule keys on, the main reason,
//! and the summary's anomaly count (from the one sanitizer).

use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::engine::gate::GateOutcome;
use crate::engine::report::Report;
use crate::engine::GateRequest;
use crate::json;
use crate::sanitize::anomaly_count;
use crate::store::{self, Mode, NewCompaction, NewReport, Recorded, Store};

/// The store path: the given one, or `CQ_STORE` / the default for a bare `--store`.
pub fn store_path(path: Option<&Path>) -> anyhow::Result<PathBuf> {
    match path {
        Some(path) => Ok(path.to_owned()),
        None => Ok(store::default_store_path()?),
    }
}

/// Outcome classes from the most to the least severe, for the queue and the two-person rule.
const SEVERITY: [&str; 3] = ["FAIL/FINDING", "ERROR/UNKNOWN", "INSUFFICIENT_DATA/UNKNOWN"];

/// The failing check a reviewer should see first: the first (in the seed's order) of the most
/// severe class. A pinned re-open in prose is INSUFFICIENT_DATA for consistency but
/// FAIL/FINDING for pinned: the queue and the two-person rule must see the FAIL.
fn main_failure(report: &Report) -> Option<&crate::engine::report::CheckResult> {
    let class =
        |c: &&crate::engine::report::CheckResult| format!("{}/{}", c.outcome, c.finding_status);
    SEVERITY
        .iter()
        .find_map(|wanted| report.failures().find(|c| class(c) == *wanted))
        .or_else(|| report.failures().next())
}

/// What the store keeps of a report. `verdict_class` is the most severe class among the
/// failing checks (the report itself keeps the verdict's class in the seed's order).
pub fn new_report(report: &Report, summary: Option<&str>) -> anyhow::Result<NewReport> {
    let main = main_failure(report);
    Ok(NewReport {
        report_sha256: report.sha256(),
        report_json: json::canonical(&report.to_value())?,
        policy_sha256: report.policy_sha256.clone(),
        verifier_version: report.verifier_version.clone(),
        verdict: report.verdict.to_owned(),
        outcome: report.outcome.to_owned(),
        finding_status: report.finding_status.to_owned(),
        verdict_class: main.map_or_else(
            || format!("{}/{}", report.outcome, report.finding_status),
            |c| format!("{}/{}", c.outcome, c.finding_status),
        ),
        main_reason: main
            .map(|c| format!("{}: {}", c.check, c.code))
            .unwrap_or_default(),
        anomaly_count: summary.map_or(0, |s| anomaly_count(s) as u32),
        has_secret_finding: report
            .checks
            .iter()
            .any(|c| c.findings.iter().any(|f| f.kind == "secret")),
    })
}

/// What the store keeps of one checked request.
pub fn new_compaction(
    request: &GateRequest,
    outcome: &GateOutcome,
) -> anyhow::Result<NewCompaction> {
    let report = &outcome.report;
    Ok(NewCompaction {
        compaction_id: report.compaction_id.clone(),
        tenant_id: request.tenant_id.clone(),
        task_id: request.task_id.clone(),
        request_sha256: report.request_sha256.clone(),
        request_json: request.canonical(),
        summary_sha256: report.summary_sha256.clone().unwrap_or_default(),
        source_population_sha256: report.source_population_sha256.clone(),
        report: new_report(report, outcome.summary_text.as_deref())?,
    })
}

/// Records one verdict (what `cq check --store` does).
pub fn record(
    path: Option<&Path>,
    request: &GateRequest,
    outcome: &GateOutcome,
) -> anyhow::Result<Recorded> {
    let path = store_path(path)?;
    let store = Store::open(&path, Mode::ReadWrite)
        .with_context(|| format!("while opening the store \"{}\"", path.display()))?;
    Ok(store.record_verdict(&new_compaction(request, outcome)?)?)
}
