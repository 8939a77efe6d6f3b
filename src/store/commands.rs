//! The `cq list`, `cq show`, `cq decide`, `cq status` and `cq reviewers add` commands as plain
//! functions: they take parsed arguments and return text to print (or data for the runtime),
//! so `main.rs` only wires clap and maps errors to exit codes.
//!
//! Strings that came from a request (tenant and task ids, reasons) pass through [`crate::sanitize::line`]
//! before they reach a terminal, so control and bidi characters show as escapes.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Context as _;
use sha2::{Digest, Sha256};

use super::{
    Action, CompactionSummary, DecisionOutcome, DecisionRequest, ListFilter, ReviewRules, Role,
    SortKey, Status, Store, StoreError,
};
use crate::audit::{hex, NamedKey};
use crate::json::{self, object, Value};
use crate::sanitize::line;

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

/// `cq list [--status S] [--json]`: one page of the queue.
pub fn list(
    store: &Store,
    filter: &ListFilter,
    sort: SortKey,
    offset: u64,
    limit: u64,
    as_json: bool,
) -> anyhow::Result<String> {
    let rows = store.list(filter, sort, offset, limit)?;
    if as_json {
        let mut out = String::new();
        for r in &rows {
            out.push_str(&canonical(&summary_json(r))?);
            out.push('\n');
        }
        return Ok(out);
    }
    let total = store.count(filter)?;
    let mut out = format!(
        "{:<24} {:<12} {:<28} {:>4}  {:<28} {}\n",
        "ID", "STATUS", "CLASS", "ANOM", "TENANT/TASK", "REASON"
    );
    for r in &rows {
        let _ = writeln!(
            out,
            "{:<24} {:<12} {:<28} {:>4}  {:<28} {}",
            line(&r.id),
            r.status.as_str(),
            line(&r.verdict_class),
            r.anomaly_count,
            line(&format!("{}/{}", r.tenant_id, r.task_id)),
            line(&r.main_reason),
        );
    }
    let _ = writeln!(out, "{} of {total} shown (from {offset})", rows.len());
    Ok(out)
}

/// `cq show ID [--json]`: the compaction, its decision, approvals, reports and receipts.
pub fn show(store: &Store, id: &str, as_json: bool) -> anyhow::Result<String> {
    let c = store
        .compaction(id)?
        .ok_or_else(|| StoreError::UnknownCompaction(id.to_owned()))?;
    let reports = store.reports(id)?;
    let receipts = store.receipts_for(id)?;
    if as_json {
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
        let v = object([
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
        ]);
        return Ok(canonical(&v)? + "\n");
    }
    let s = &c.summary;
    let mut out = String::new();
    let _ = writeln!(out, "compaction  {}", line(&s.id));
    let _ = writeln!(
        out,
        "tenant/task {}/{}",
        line(&s.tenant_id),
        line(&s.task_id)
    );
    let _ = writeln!(out, "status      {}", s.status);
    let _ = writeln!(
        out,
        "verdict     {} ({}, {} anomalies{})",
        s.verdict,
        line(&s.verdict_class),
        s.anomaly_count,
        if s.has_secret_finding {
            ", secret finding"
        } else {
            ""
        }
    );
    let _ = writeln!(out, "reason      {}", line(&s.main_reason));
    let _ = writeln!(
        out,
        "report      {} ({} run{})",
        s.report_sha256,
        reports.len(),
        if reports.len() == 1 { "" } else { "s" }
    );
    let _ = writeln!(out, "request     {}", c.request_sha256);
    if let Some(d) = &c.decision {
        let _ = writeln!(
            out,
            "decision    {} by {} ({}): {}",
            d.action.as_str(),
            line(&d.reviewer),
            line(&d.reason),
            line(&d.note)
        );
    }
    for a in &c.approvals {
        let _ = writeln!(
            out,
            "approval    {} (receipt {})",
            line(&a.reviewer),
            a.receipt_seq
        );
    }
    let seqs: Vec<String> = receipts
        .iter()
        .map(|r| format!("{} {}", r.seq, r.kind))
        .collect();
    let _ = writeln!(out, "receipts    {}", seqs.join(", "));
    Ok(out)
}

/// `cq decide ID --release|--reject --reason CODE --note TEXT --key K [--report SHA]`.
/// Without `seen_report`, the decision binds the report current at this moment. Decision
/// errors stay downcastable to [`super::DecisionError`].
#[allow(clippy::too_many_arguments)]
pub fn decide(
    store: &Store,
    id: &str,
    action: Action,
    reason: &str,
    note: &str,
    key_path: &Path,
    seen_report: Option<&str>,
    rules: &ReviewRules,
) -> anyhow::Result<String> {
    let key = NamedKey::load(key_path)?;
    let seen = match seen_report {
        Some(s) => s.to_owned(),
        None => {
            store
                .compaction(id)?
                .ok_or_else(|| StoreError::UnknownCompaction(id.to_owned()))?
                .summary
                .report_sha256
        }
    };
    let request = DecisionRequest {
        compaction_id: id.to_owned(),
        action,
        reason: reason.to_owned(),
        note: note.to_owned(),
        seen_report_sha256: seen,
    };
    Ok(match store.decide(&request, &key, rules)? {
        DecisionOutcome::Decided { status, receipt_seq } => {
            format!("compaction \"{id}\" {status} by \"{}\" (receipt {receipt_seq})\n", key.name)
        }
        DecisionOutcome::Approved { approvals, needed, receipt_seq } => format!(
            "approval {approvals} of {needed} recorded for compaction \"{id}\" (receipt {receipt_seq}); a second approver must release it\n"
        ),
    })
}

/// What the runtime gets from `cq status ID`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusView {
    pub compaction_id: String,
    pub status: Status,
    /// The stored request, only once released or accepted, and only after its digest was
    /// rechecked against the verdict receipt.
    pub request_json: Option<String>,
    /// The receipt that settled it (decision, or the verdict for accepted ones).
    pub receipt_json: Option<String>,
}

/// `cq status ID`. A stored request that no longer matches its digest is an error, never
/// handed to the runtime.
pub fn status(store: &Store, id: &str) -> anyhow::Result<StatusView> {
    let c = store
        .compaction(id)?
        .ok_or_else(|| StoreError::UnknownCompaction(id.to_owned()))?;
    let receipts = store.receipts_for(id)?;
    let settled = matches!(c.summary.status, Status::Released | Status::Accepted);
    let wanted = if c.summary.status == Status::Accepted {
        "verdict"
    } else {
        "decision"
    };
    let receipt_json = receipts
        .into_iter()
        .rev()
        .find(|r| r.kind == wanted)
        .map(|r| r.body);
    let request_json = if settled {
        let actual = hex(&Sha256::digest(c.request_json.as_bytes()));
        let bound = receipt_json.as_deref().and_then(|r| {
            crate::audit::flat::read(r).and_then(|f| f.str("request_sha256").map(str::to_owned))
        });
        if actual != c.request_sha256 || bound.as_deref() != Some(actual.as_str()) {
            anyhow::bail!("stored request of compaction \"{id}\" does not match its receipt: run `cq audit verify`");
        }
        Some(c.request_json)
    } else {
        None
    };
    Ok(StatusView {
        compaction_id: id.to_owned(),
        status: c.summary.status,
        request_json,
        receipt_json,
    })
}

impl StatusView {
    /// `{"compaction_id", "status", "receipt"}` as canonical JSON (the request is left to the
    /// caller, which renders the context to inject from it).
    pub fn to_json(&self) -> anyhow::Result<String> {
        let receipt = match &self.receipt_json {
            Some(text) => json::parse(text.as_bytes(), &json::Limits::default())
                .map_err(|e| anyhow::anyhow!("stored receipt is not valid JSON: {e}"))?,
            None => Value::Null,
        };
        canonical(&object([
            ("compaction_id", Value::from(self.compaction_id.as_str())),
            ("status", self.status.as_str().into()),
            ("receipt", receipt),
        ]))
    }
}

/// `cq reviewers add NAME PUBKEY --role reviewer|approver`.
pub fn reviewers_add(
    store: &Store,
    name: &str,
    public_key: &str,
    role: &str,
) -> anyhow::Result<String> {
    let role = Role::parse(role)
        .with_context(|| format!("role \"{role}\" is unknown: use \"reviewer\" or \"approver\""))?;
    let r = store.add_reviewer(name, public_key, role)?;
    Ok(format!(
        "reviewer \"{}\" added as {} (key {}, receipt {})\n",
        r.name,
        role.as_str(),
        r.key_id,
        r.receipt_seq
    ))
}
