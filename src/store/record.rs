//! Recording what the gate produced: a new compaction with its first report and verdict
//! receipt, batches of them (one transaction, one checkpoint), and reruns.
//!
//! Requests are deduplicated by digest: recording the same request twice returns the first
//! compaction and writes nothing. Each JSON text must hash to the digest given with it, so the
//! store never holds a digest that its own bytes contradict. A batch looks its digests and ids
//! up in a few queries and writes its rows many per statement, so recording costs about the
//! same per item over a network as on a local file.

use std::collections::{HashMap, HashSet};

use super::sql::{in_list, insert_rows, params, Conn, Param};
use super::{LogWriter, Store, StoreError};
use crate::audit::hex;
use crate::audit::{Receipt, ReceiptKind};
use crate::engine::verdict::{FindingStatus, Outcome, Verdict, VerdictClass};
use sha2::{Digest, Sha256};

/// One report run on a compaction, as the engine produced it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewReport {
    pub report_sha256: String,
    /// Canonical JSON text of the report; must hash to `report_sha256`.
    pub report_json: String,
    pub policy_sha256: String,
    pub verifier_version: String,
    pub verdict: Verdict,
    pub outcome: Outcome,
    pub finding_status: FindingStatus,
    /// The most severe class among the failing checks: what the two-person rule keys on and
    /// the queue sorts by.
    pub verdict_class: VerdictClass,
    /// `check: code` of the main failure (codes and check names only, never summary text).
    pub main_reason: String,
    pub anomaly_count: u32,
    pub has_secret_finding: bool,
    /// Distinct approvers a release needs under the policy that made this report (1 or 2).
    pub approvals_required: u32,
}

/// A compaction the gate has just judged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewCompaction {
    pub compaction_id: String,
    pub tenant_id: String,
    pub task_id: String,
    pub request_sha256: String,
    /// Canonical JSON text of the request; must hash to `request_sha256`.
    pub request_json: String,
    pub summary_sha256: String,
    pub source_population_sha256: String,
    pub report: NewReport,
}

/// What recording a compaction did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recorded {
    /// Stored, with its verdict receipt at `receipt_seq`.
    New {
        compaction_id: String,
        receipt_seq: u64,
    },
    /// The same request was already recorded as `compaction_id`; nothing was written.
    Duplicate { compaction_id: String },
}

/// What a rerun found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReportChange {
    /// Same report digest as before.
    Unchanged { report_sha256: String },
    /// A different report; approvals given on the previous one are void.
    Changed {
        previous: String,
        current: String,
        receipt_seq: u64,
    },
}

impl Store {
    /// Records one verdict and checkpoints the log (what `cq check --store` does).
    pub fn record_verdict(&self, new: &NewCompaction) -> Result<Recorded, StoreError> {
        check_digest("request", &new.request_sha256, &new.request_json)?;
        check_digest("report", &new.report.report_sha256, &new.report.report_json)?;
        self.write(|tx, log, _| {
            let mut done = insert_all(tx, log, &[new])?;
            done.pop()
                .unwrap_or_else(|| Err(StoreError::Corrupt("a verdict was not recorded".into())))
        })
    }

    /// Records many verdicts in one transaction with one checkpoint at the end (`cq ingest`).
    /// An item whose digests do not match is reported in its slot and the rest still go in.
    pub fn record_batch(
        &self,
        items: &[NewCompaction],
    ) -> Result<Vec<Result<Recorded, StoreError>>, StoreError> {
        let checked: Vec<Result<(), StoreError>> = items
            .iter()
            .map(|new| {
                check_digest("request", &new.request_sha256, &new.request_json).and_then(|()| {
                    check_digest("report", &new.report.report_sha256, &new.report.report_json)
                })
            })
            .collect();
        let good: Vec<&NewCompaction> = items
            .iter()
            .zip(&checked)
            .filter(|(_, c)| c.is_ok())
            .map(|(new, _)| new)
            .collect();
        // A bad item is reported in its slot; a database failure aborts the batch.
        let mut recorded = self
            .write(|tx, log, _| insert_all(tx, log, &good))?
            .into_iter();
        let mut out = Vec::with_capacity(items.len());
        for c in checked {
            out.push(match c {
                Err(e) => Err(e),
                Ok(()) => recorded.next().unwrap_or_else(|| {
                    Err(StoreError::Corrupt("a verdict was not recorded".into()))
                }),
            });
        }
        Ok(out)
    }

    /// Stores a rerun of compaction `id`. A changed report is a new report row, its rerun
    /// receipt and the verdict columns following it; an unchanged one writes nothing. The
    /// status does not change (a human still decides what was quarantined).
    pub fn record_rerun(&self, id: &str, report: &NewReport) -> Result<ReportChange, StoreError> {
        let mut changes = self.record_reruns(&[(id, report)])?;
        changes
            .pop()
            .ok_or_else(|| StoreError::Corrupt("a rerun was not recorded".into()))
    }

    /// Stores many reruns in one transaction (`cq recheck --all`), each as [`record_rerun`]
    /// does, in order: all of them or, on an error, none.
    ///
    /// [`record_rerun`]: Store::record_rerun
    pub fn record_reruns(
        &self,
        reruns: &[(&str, &NewReport)],
    ) -> Result<Vec<ReportChange>, StoreError> {
        for (_, report) in reruns {
            check_digest("report", &report.report_sha256, &report.report_json)?;
        }
        if reruns.is_empty() {
            return Ok(Vec::new());
        }
        self.write(|tx, log, _| {
            reruns
                .iter()
                .map(|(id, report)| rerun(tx, log, id, report))
                .collect()
        })
    }
}

/// One rerun of compaction `id`, inside a write transaction.
fn rerun(
    tx: &dyn Conn,
    log: &mut LogWriter,
    id: &str,
    report: &NewReport,
) -> Result<ReportChange, StoreError> {
    let current = tx
        .opt(
            "SELECT report_sha256, request_sha256, summary_sha256, source_population_sha256
             FROM compactions WHERE id = ?1",
            &[Param::Text(id)],
            |r| Ok((r.string(0)?, r.string(1)?, r.string(2)?, r.string(3)?)),
        )
        .map_err(StoreError::sql("reading the current report"))?;
    let (previous, request, summary, population) =
        current.ok_or_else(|| StoreError::UnknownCompaction(id.to_owned()))?;
    if previous == report.report_sha256 {
        return Ok(ReportChange::Unchanged {
            report_sha256: previous,
        });
    }
    let time = log.time().to_owned();
    insert_rows(
        tx,
        "reports",
        &REPORT_COLUMNS,
        &report_row(id, report, &time),
    )
    .map_err(StoreError::sql("inserting a report"))?;
    update_verdict(tx, id, report)?;
    let receipt = report_receipt(
        ReceiptKind::Rerun,
        id,
        &request,
        &summary,
        &population,
        report,
    )
    .with("previous_report_sha256", previous.as_str());
    let appended = log.append(&receipt, None)?;
    Ok(ReportChange::Changed {
        previous,
        current: report.report_sha256.clone(),
        receipt_seq: appended.seq,
    })
}

fn check_digest(what: &'static str, claimed: &str, text: &str) -> Result<(), StoreError> {
    let actual = hex(&Sha256::digest(text.as_bytes()));
    if actual == claimed {
        Ok(())
    } else {
        Err(StoreError::DigestMismatch {
            what,
            claimed: claimed.to_owned(),
            actual,
        })
    }
}

/// Lookups per query (parameters in one `IN` list).
const LOOKUPS_PER_QUERY: usize = 256;

/// Which of `keys` `column` of `compactions` already holds, with the id of its row.
fn existing(
    tx: &dyn Conn,
    column: &str,
    keys: &[&str],
) -> Result<HashMap<String, String>, StoreError> {
    let mut found = HashMap::new();
    for chunk in keys.chunks(LOOKUPS_PER_QUERY) {
        let sql = format!(
            "SELECT {column}, id FROM compactions WHERE {}",
            in_list(column, 1, chunk.len())
        );
        let values: Vec<Param<'_>> = chunk.iter().map(|k| Param::Text(k)).collect();
        tx.query(&sql, &values, &mut |r| {
            found.insert(r.string(0)?, r.string(1)?);
            Ok(())
        })
        .map_err(StoreError::sql("looking up requests and ids"))?;
    }
    Ok(found)
}

const COMPACTION_COLUMNS: [&str; 16] = [
    "id",
    "tenant_id",
    "task_id",
    "request_sha256",
    "summary_sha256",
    "source_population_sha256",
    "status",
    "verdict",
    "outcome",
    "finding_status",
    "verdict_class",
    "has_secret_finding",
    "main_reason",
    "anomaly_count",
    "report_sha256",
    "created_at",
];

const REPORT_COLUMNS: [&str; 6] = [
    "compaction_id",
    "report_sha256",
    "report_json",
    "policy_sha256",
    "verifier_version",
    "created_at",
];

fn report_row<'a>(id: &'a str, r: &'a NewReport, time: &'a str) -> [Param<'a>; 6] {
    params![
        id,
        &r.report_sha256,
        &r.report_json,
        &r.policy_sha256,
        &r.verifier_version,
        time
    ]
}

/// Records `items` (digests already checked) in order: each new one with its request, first
/// report and verdict receipt; a request recorded before (or earlier in `items`) is a
/// duplicate, an id taken by another request a conflict.
fn insert_all(
    tx: &dyn Conn,
    log: &mut LogWriter,
    items: &[&NewCompaction],
) -> Result<Vec<Result<Recorded, StoreError>>, StoreError> {
    let digests: Vec<&str> = items.iter().map(|n| n.request_sha256.as_str()).collect();
    let ids: Vec<&str> = items.iter().map(|n| n.compaction_id.as_str()).collect();
    let mut by_digest = existing(tx, "request_sha256", &digests)?;
    let mut taken: HashSet<String> = existing(tx, "id", &ids)?.into_keys().collect();
    let time = log.time().to_owned();
    let mut compactions = Vec::with_capacity(items.len() * COMPACTION_COLUMNS.len());
    let mut requests = Vec::with_capacity(items.len() * 2);
    let mut reports = Vec::with_capacity(items.len() * REPORT_COLUMNS.len());
    let mut out = Vec::with_capacity(items.len());
    for new in items {
        if let Some(id) = by_digest.get(&new.request_sha256) {
            out.push(Ok(Recorded::Duplicate {
                compaction_id: id.clone(),
            }));
            continue;
        }
        if !taken.insert(new.compaction_id.clone()) {
            out.push(Err(StoreError::IdConflict(new.compaction_id.clone())));
            continue;
        }
        by_digest.insert(new.request_sha256.clone(), new.compaction_id.clone());
        let r = &new.report;
        let status = match r.verdict {
            Verdict::Accepted => "accepted",
            Verdict::Quarantined => "quarantined",
        };
        compactions.extend(params![
            &new.compaction_id,
            &new.tenant_id,
            &new.task_id,
            &new.request_sha256,
            &new.summary_sha256,
            &new.source_population_sha256,
            status,
            r.verdict.as_str(),
            r.outcome.as_str(),
            r.finding_status.as_str(),
            r.verdict_class.as_str(),
            r.has_secret_finding,
            &r.main_reason,
            r.anomaly_count,
            &r.report_sha256,
            time.as_str(),
        ]);
        requests.extend(params![&new.compaction_id, &new.request_json]);
        reports.extend(report_row(&new.compaction_id, r, &time));
        let receipt = report_receipt(
            ReceiptKind::Verdict,
            &new.compaction_id,
            &new.request_sha256,
            &new.summary_sha256,
            &new.source_population_sha256,
            r,
        )
        .with("tenant_id", new.tenant_id.as_str())
        .with("task_id", new.task_id.as_str());
        let appended = log.append(&receipt, None)?;
        out.push(Ok(Recorded::New {
            compaction_id: new.compaction_id.clone(),
            receipt_seq: appended.seq,
        }));
    }
    insert_rows(tx, "compactions", &COMPACTION_COLUMNS, &compactions)
        .map_err(StoreError::sql("inserting compactions"))?;
    insert_rows(
        tx,
        "requests",
        &["compaction_id", "request_json"],
        &requests,
    )
    .map_err(StoreError::sql("inserting requests"))?;
    insert_rows(tx, "reports", &REPORT_COLUMNS, &reports)
        .map_err(StoreError::sql("inserting reports"))?;
    Ok(out)
}

/// The digests, verdict columns and release requirement a verdict or rerun receipt binds. The
/// main reason is a check name and a code, never summary text.
fn report_receipt(
    kind: ReceiptKind,
    id: &str,
    request: &str,
    summary: &str,
    population: &str,
    r: &NewReport,
) -> Receipt {
    Receipt::new(kind, Some(id))
        .with("request_sha256", request)
        .with("summary_sha256", summary)
        .with("source_population_sha256", population)
        .with("report_sha256", r.report_sha256.as_str())
        .with("policy_sha256", r.policy_sha256.as_str())
        .with("verifier_version", r.verifier_version.as_str())
        .with("verdict", r.verdict.as_str())
        .with("outcome", r.outcome.as_str())
        .with("finding_status", r.finding_status.as_str())
        .with("verdict_class", r.verdict_class.as_str())
        .with("has_secret_finding", r.has_secret_finding)
        .with("anomaly_count", u64::from(r.anomaly_count))
        .with("main_reason", r.main_reason.as_str())
        .with("approvals_required", u64::from(r.approvals_required))
}

fn update_verdict(tx: &dyn Conn, id: &str, r: &NewReport) -> Result<(), StoreError> {
    tx.execute(
        "UPDATE compactions SET verdict = ?2, outcome = ?3, finding_status = ?4, verdict_class = ?5,
             has_secret_finding = ?6, main_reason = ?7, anomaly_count = ?8, report_sha256 = ?9
         WHERE id = ?1",
        &params![
            id,
            r.verdict.as_str(),
            r.outcome.as_str(),
            r.finding_status.as_str(),
            r.verdict_class.as_str(),
            r.has_secret_finding,
            &r.main_reason,
            r.anomaly_count,
            &r.report_sha256
        ],
    )
    .map_err(StoreError::sql("updating the verdict"))?;
    Ok(())
}
