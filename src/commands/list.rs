//! `cq list [--status S] [--json] [--limit N]` and `cq show ID [--json]`: the queue and one
//! compaction with its decision, approvals, reports and receipts. Every string that came from
//! a request (ids, tenant and task, reasons, notes, names) is written through
//! [`crate::sanitize::line`].

use std::io::Write;

use crate::cli::StoreArgs;
use crate::json::{self, object, Value};
use crate::sanitize::line;
use crate::store::{
    Compaction, CompactionSummary, ListFilter, Mode, ReportRow, SortKey, Status, StoreError,
    StoredReceipt,
};

use super::{store, Exit, Output};

fn summary_json(c: &CompactionSummary) -> Value {
    object([
        ("id", Value::from(c.id.as_str())),
        ("tenant_id", c.tenant_id.as_str().into()),
        ("task_id", c.task_id.as_str().into()),
        ("status", c.status.as_str().into()),
        ("verdict", c.verdict.as_str().into()),
        ("outcome", c.outcome.as_str().into()),
        ("finding_status", c.finding_status.as_str().into()),
        ("verdict_class", c.verdict_class.as_str().into()),
        ("has_secret_finding", c.has_secret_finding.into()),
        ("main_reason", c.main_reason.as_str().into()),
        ("anomaly_count", u64::from(c.anomaly_count).into()),
        ("report_sha256", c.report_sha256.as_str().into()),
        ("created_at", c.created_at.as_str().into()),
    ])
}

fn canonical(v: &Value) -> anyhow::Result<String> {
    json::canonical(v).map_err(|e| anyhow::anyhow!("while writing JSON: {e}"))
}

/// `cq list`: one page of the queue, newest first.
pub fn list(
    args: &StoreArgs,
    status: Option<&str>,
    as_json: bool,
    limit: u64,
    out: &mut Output,
) -> anyhow::Result<Exit> {
    let store = store::open(args, Mode::ReadOnly)?;
    let status = match status {
        Some(text) => Some(Status::parse(text).ok_or_else(|| {
            anyhow::anyhow!(
                "unknown status \"{}\": use quarantined, released, rejected or accepted",
                line(text)
            )
        })?),
        None => None,
    };
    let filter = ListFilter {
        status,
        ..ListFilter::default()
    };
    let rows = store.list(&filter, SortKey::NewestFirst, 0, limit)?;
    if as_json {
        for r in &rows {
            writeln!(out, "{}", canonical(&summary_json(r))?)?;
        }
        return Ok(Exit::Success);
    }
    let total = store.count(&filter)?;
    writeln!(
        out,
        "{:<24} {:<12} {:<28} {:>4}  {:<28} REASON",
        "ID", "STATUS", "CLASS", "ANOM", "TENANT/TASK"
    )?;
    for r in &rows {
        writeln!(
            out,
            "{:<24} {:<12} {:<28} {:>4}  {:<28} {}",
            line(&r.id),
            r.status.as_str(),
            r.verdict_class.as_str(),
            r.anomaly_count,
            line(&format!("{}/{}", r.tenant_id, r.task_id)),
            line(&r.main_reason),
        )?;
        if out.is_closed() {
            break;
        }
    }
    writeln!(out, "{} of {total} shown", rows.len())?;
    Ok(Exit::Success)
}

/// `cq show ID`: the compaction, its decision, approvals, reports and receipts.
pub fn show(args: &StoreArgs, id: &str, as_json: bool, out: &mut Output) -> anyhow::Result<Exit> {
    let store = store::open(args, Mode::ReadOnly)?;
    let c = store
        .compaction(id)?
        .ok_or_else(|| StoreError::UnknownCompaction(line(id)))?;
    let reports = store.reports(id)?;
    let receipts = store.receipts_for(id)?;
    if as_json {
        writeln!(out, "{}", canonical(&show_json(&c, &reports, &receipts))?)?;
    } else {
        show_text(out, &c, reports.len(), &receipts)?;
    }
    Ok(Exit::Success)
}

fn show_json(c: &Compaction, reports: &[ReportRow], receipts: &[StoredReceipt]) -> Value {
    let decision = c.decision.as_ref().map(|d| {
        object([
            ("action", Value::from(d.action.as_str())),
            ("reason", d.reason.as_str().into()),
            ("note", d.note.as_str().into()),
            ("reviewer", d.reviewer.as_str().into()),
            ("key_id", d.key_id.as_str().into()),
            ("report_sha256", d.report_sha256.as_str().into()),
            ("receipt_seq", d.receipt_seq.into()),
        ])
    });
    let approvals: Vec<Value> = c
        .approvals
        .iter()
        .map(|a| {
            object([
                ("reviewer", Value::from(a.reviewer.as_str())),
                ("receipt_seq", a.receipt_seq.into()),
            ])
        })
        .collect();
    let reports: Vec<Value> = reports
        .iter()
        .map(|r| {
            object([
                ("report_sha256", Value::from(r.report_sha256.as_str())),
                ("policy_sha256", r.policy_sha256.as_str().into()),
                ("verifier_version", r.verifier_version.as_str().into()),
                ("created_at", r.created_at.as_str().into()),
            ])
        })
        .collect();
    let receipts: Vec<Value> = receipts
        .iter()
        .map(|r| {
            object([
                ("seq", Value::from(r.seq)),
                ("kind", r.kind.as_str().into()),
            ])
        })
        .collect();
    object([
        ("compaction", summary_json(&c.summary)),
        ("request_sha256", c.request_sha256.as_str().into()),
        ("summary_sha256", c.summary_sha256.as_str().into()),
        (
            "source_population_sha256",
            c.source_population_sha256.as_str().into(),
        ),
        ("decision", decision.into()),
        ("approvals", approvals.into()),
        ("reports", reports.into()),
        ("receipts", receipts.into()),
    ])
}

fn show_text(
    out: &mut Output,
    c: &Compaction,
    runs: usize,
    receipts: &[StoredReceipt],
) -> std::io::Result<()> {
    let s = &c.summary;
    writeln!(out, "compaction  {}", line(&s.id))?;
    writeln!(
        out,
        "tenant/task {}/{}",
        line(&s.tenant_id),
        line(&s.task_id)
    )?;
    writeln!(out, "status      {}", s.status)?;
    let secret = if s.has_secret_finding {
        ", secret finding"
    } else {
        ""
    };
    writeln!(
        out,
        "verdict     {} ({}, {} anomalies{secret})",
        s.verdict, s.verdict_class, s.anomaly_count
    )?;
    writeln!(out, "reason      {}", line(&s.main_reason))?;
    let plural = if runs == 1 { "" } else { "s" };
    writeln!(out, "report      {} ({runs} run{plural})", s.report_sha256)?;
    writeln!(out, "request     {}", c.request_sha256)?;
    if let Some(d) = &c.decision {
        writeln!(
            out,
            "decision    {} by {} ({}): {}",
            d.action.as_str(),
            line(&d.reviewer),
            line(&d.reason),
            line(&d.note)
        )?;
    }
    for a in &c.approvals {
        writeln!(
            out,
            "approval    {} (receipt {})",
            line(&a.reviewer),
            a.receipt_seq
        )?;
    }
    let seqs: Vec<String> = receipts
        .iter()
        .map(|r| format!("{} {}", r.seq, line(&r.kind)))
        .collect();
    writeln!(out, "receipts    {}", seqs.join(", "))
}
