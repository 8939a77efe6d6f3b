//! Turning a gate outcome into what the store records: the request and report as canonical
//! JSON with their digests, the verdict class the two-person rule keys on, the main reason,
//! and the summary's anomaly count (from the one sanitizer).

use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::engine::gate::GateOutcome;
use crate::engine::report::Report;
use crate::engine::GateRequest;
use crate::json;
use crate::review::sanitize::anomaly_count;
use crate::store::{self, Mode, NewCompaction, NewReport, Recorded, Store};

/// The store path: the given one, or the default for an empty `--store`.
pub fn store_path(path: &Path) -> anyhow::Result<PathBuf> {
    if path.as_os_str().is_empty() {
        Ok(store::default_store_path()?)
    } else {
        Ok(path.to_owned())
    }
}

/// What the store keeps of a report.
pub fn new_report(report: &Report, summary: Option<&str>) -> anyhow::Result<NewReport> {
    let main = report.failures().next();
    Ok(NewReport {
        report_sha256: report.sha256(),
        report_json: json::canonical(&report.to_value())?,
        policy_sha256: report.policy_sha256.clone(),
        verifier_version: report.verifier_version.clone(),
        verdict: report.verdict.to_owned(),
        outcome: report.outcome.to_owned(),
        finding_status: report.finding_status.to_owned(),
        verdict_class: format!("{}/{}", report.outcome, report.finding_status),
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
        request_json: json::canonical(&request.to_value())?,
        summary_sha256: report.summary_sha256.clone().unwrap_or_default(),
        source_population_sha256: report.source_population_sha256.clone(),
        report: new_report(report, outcome.summary_text.as_deref())?,
    })
}

/// Records one verdict (what `cq check --store` does).
pub fn record(
    path: &Path,
    request: &GateRequest,
    outcome: &GateOutcome,
) -> anyhow::Result<Recorded> {
    let path = store_path(path)?;
    let store = Store::open(&path, Mode::ReadWrite)
        .with_context(|| format!("while opening the store \"{}\"", path.display()))?;
    Ok(store.record_verdict(&new_compaction(request, outcome)?)?)
}
