//! An in-memory [`ReviewSource`] with twenty realistic items, for tests, snapshots and demos.
//!
//! It behaves like the store where the UI can tell: paging, filtering and sorting follow
//! [`Filter::matches`]; decisions are refused for a read-only source, a stale report, an item
//! already decided and a reviewer approving their own first approval; releases for tenant
//! `globex` need two approvers; reruns change the report of every third item; reveals are
//! logged. A fork (for a second worker lane) is a copy: what one copy records, the other does
//! not see. Secret values are obviously fake. Everything is deterministic (no clock, no
//! randomness) so snapshots are stable.

use std::fmt::Write as _;

use sha2::{Digest, Sha256};

mod evidence;
mod items;
mod large;
mod triage;
use items::build_item;
pub use large::LargeSource;

use crate::review::filter::Filter;
use crate::review::source::{
    AuditView, ChainStatus, CheckStatus, Dashboard, DecisionKind, DecisionRefusal, DecisionRequest,
    ItemDetail, ItemId, ItemPreview, Outcome, PendingApproval, QueuePage, QueueRow, ReasonCode,
    Receipt, RerunOutcome, ReviewSource, Severity, Sort, SpanKind, Status, Verification,
};

/// The fake clock's "now" (Unix seconds): items are minutes to days older than this.
pub const FAKE_NOW: i64 = 1_780_000_000;

/// An in-memory review source.
#[derive(Debug, Clone)]
pub struct FakeSource {
    pub items: Vec<ItemDetail>,
    pub readonly: bool,
    /// `(item, finding, reviewer)` for every reveal, as the audit log would record it.
    pub reveals: Vec<(ItemId, String, String)>,
    /// Reruns performed, by item.
    pub reruns: Vec<ItemId>,
    next_seq: u64,
}

impl Default for FakeSource {
    fn default() -> Self {
        Self::new()
    }
}

impl FakeSource {
    /// Twenty items across four tenants and every status and outcome.
    pub fn new() -> Self {
        let items = (0..20).map(build_item).collect();
        FakeSource {
            items,
            readonly: false,
            reveals: Vec::new(),
            reruns: Vec::new(),
            next_seq: 100,
        }
    }

    /// The same items, refusing every decision as a read-only store would.
    pub fn readonly() -> Self {
        FakeSource {
            readonly: true,
            ..Self::new()
        }
    }

    fn find(&mut self, id: &ItemId) -> anyhow::Result<&mut ItemDetail> {
        self.items
            .iter_mut()
            .find(|i| &i.id == id)
            .ok_or_else(|| anyhow::anyhow!("no item \"{id}\" in the store"))
    }

    fn receipt(&mut self, kind: &str, body: String) -> Receipt {
        self.next_seq += 1;
        Receipt {
            seq: self.next_seq,
            kind: kind.into(),
            sha256: sha256_hex(&body),
            body,
            signature: Some("ZmFrZS1zaWduYXR1cmU=".into()),
            at_unix: FAKE_NOW,
        }
    }
}

/// Hex SHA-256 of a string.
pub fn sha256_hex(s: &str) -> String {
    Sha256::digest(s.as_bytes())
        .iter()
        .fold(String::new(), |mut out, b| {
            let _ = write!(out, "{b:02x}");
            out
        })
}

/// The row the queue shows for an item.
pub fn row_of(item: &ItemDetail) -> QueueRow {
    let anomalies = crate::sanitize::anomaly_count(&item.summary_text)
        + item
            .sources
            .iter()
            .map(|s| crate::sanitize::anomaly_count(&s.content))
            .sum::<usize>();
    QueueRow {
        id: item.id.clone(),
        tenant: item.tenant.clone(),
        task: item.task.clone(),
        status: item.status,
        outcome: item.outcome,
        severity: Severity::of_outcome(item.outcome),
        main_reason: item.main_reason.clone(),
        created_unix: item.created_unix,
        anomaly_count: anomalies,
    }
}

/// The report one field per line, as the store renders it for diffing.
pub fn report_text(item: &ItemDetail) -> String {
    let mut out = format!(
        "{{\n  \"outcome\": \"{}\",\n  \"policy_sha256\": \"{}\",\n",
        item.outcome.label(),
        item.policy_sha256
    );
    for check in &item.checks {
        let _ = writeln!(
            out,
            "  \"{}\": {{\"status\": \"{}\", \"code\": \"{}\"}},",
            check.check.word(),
            check.status.word(),
            check.code.as_deref().unwrap_or("")
        );
        for row in &check.constraints {
            let _ = writeln!(
                out,
                "  \"{}.{}\": \"{}\",",
                check.check.word(),
                row.constraint_id,
                row.verification.word()
            );
        }
    }
    out.push('}');
    out
}

impl ReviewSource for FakeSource {
    fn queue_page(
        &mut self,
        filter: &Filter,
        sort: Sort,
        offset: usize,
        limit: usize,
    ) -> anyhow::Result<QueuePage> {
        let all: Vec<QueueRow> = self.items.iter().map(row_of).collect();
        let loose = filter.without_status();
        let mut page = QueuePage::default();
        for row in all.iter().filter(|r| loose.matches(r)) {
            *page.counts_by_status.entry(row.status).or_default() += 1;
        }
        let mut rows: Vec<QueueRow> = all.into_iter().filter(|r| filter.matches(r)).collect();
        match sort {
            Sort::Age => rows.sort_by_key(|r| (r.created_unix, r.id.clone())),
            Sort::Severity => {
                rows.sort_by_key(|r| (std::cmp::Reverse(r.severity), r.created_unix, r.id.clone()))
            }
        }
        page.total = rows.len();
        page.rows = rows.into_iter().skip(offset).take(limit).collect();
        Ok(page)
    }

    fn item(&mut self, id: &ItemId) -> anyhow::Result<ItemDetail> {
        Ok(self.find(id)?.clone())
    }

    fn preview(&mut self, id: &ItemId) -> anyhow::Result<ItemPreview> {
        Ok(triage::preview(self.find(id)?))
    }

    fn reason_counts(&mut self, filter: &Filter) -> anyhow::Result<Vec<(String, usize)>> {
        let rows: Vec<QueueRow> = self.items.iter().map(row_of).collect();
        Ok(triage::reason_counts(rows.iter(), filter))
    }

    fn dashboard(&mut self) -> anyhow::Result<Dashboard> {
        Ok(triage::dashboard(&self.items, 1))
    }

    fn rerun(&mut self, id: &ItemId) -> anyhow::Result<RerunOutcome> {
        self.reruns.push(id.clone());
        let item = self.find(id)?;
        let before_report = report_text(item);
        let n: usize = item.id.0.trim_start_matches("q-").parse().unwrap_or(1);
        if n % 3 == 0 {
            for check in &mut item.checks {
                if check.status == CheckStatus::Error {
                    check.status = CheckStatus::Fail;
                    check.detail = "rerun: scanner finished; one finding".into();
                }
                for row in &mut check.constraints {
                    if row.verification == Verification::Unsupported {
                        row.verification = Verification::Preserved;
                        row.claim_status = "PRESERVED".into();
                        row.rule_id = Some("R-eq-literal".into());
                    }
                }
            }
            if item.outcome == Outcome::Error {
                item.outcome = Outcome::Finding;
            }
            item.constraints = evidence::evidence(item);
            item.report_sha256 = sha256_hex(&format!("{}-rerun", item.report_sha256));
        }
        let after_report = report_text(item);
        Ok(RerunOutcome {
            changed: before_report != after_report,
            before_report,
            after_report,
            policy: format!("under policy {}, the one it was checked under", item.policy),
            policy_overridden: false,
            detail: item.clone(),
        })
    }

    fn decide(
        &mut self,
        id: &ItemId,
        request: &DecisionRequest,
    ) -> Result<Receipt, DecisionRefusal> {
        if self.readonly {
            return Err(DecisionRefusal::ReadOnly);
        }
        let item = self
            .find(id)
            .map_err(|e| DecisionRefusal::Failed(e.to_string()))?;
        if request.report_sha256 != item.report_sha256 {
            return Err(DecisionRefusal::Stale {
                seen: short(&request.report_sha256),
                current: short(&item.report_sha256),
            });
        }
        if matches!(item.status, Status::Released | Status::Rejected) {
            // Fixture decisions were made by "bob"; later ones record their reviewer.
            let by = item
                .receipts
                .iter()
                .rev()
                .find_map(|r| {
                    let (_, rest) = r.body.split_once("\"reviewer\":\"")?;
                    rest.split('"').next().map(str::to_string)
                })
                .unwrap_or_else(|| "unknown".into());
            return Err(DecisionRefusal::AlreadyDecided {
                by,
                kind: item.status.word().into(),
            });
        }
        let two_person = item.tenant == "globex" && request.kind == DecisionKind::Release;
        if two_person && item.approvals.is_empty() {
            item.approvals.push(PendingApproval {
                reviewer: request.reviewer.clone(),
                kind: request.kind,
                reason_code: request.reason_code.clone(),
                at_unix: FAKE_NOW,
            });
            item.status = Status::PendingApproval;
            let body = decision_body(id, request, "approval");
            let receipt = self.receipt("approval", body);
            return Err(DecisionRefusal::NeedsSecondApprover {
                have: 1,
                need: 2,
                receipt,
            });
        }
        if two_person
            && item
                .approvals
                .iter()
                .any(|a| a.reviewer == request.reviewer)
        {
            return Err(DecisionRefusal::SelfApproval {
                reviewer: request.reviewer.clone(),
            });
        }
        item.status = match request.kind {
            DecisionKind::Release => Status::Released,
            DecisionKind::Reject => Status::Rejected,
        };
        item.approvals.clear();
        let body = decision_body(id, request, "decision");
        let receipt = self.receipt("decision", body);
        if let Ok(item) = self.find(id) {
            item.receipts.push(receipt.clone());
        }
        Ok(receipt)
    }

    fn reveal(&mut self, id: &ItemId, finding_id: &str, reviewer: &str) -> anyhow::Result<String> {
        let item = self.find(id)?;
        let known = item.summary_spans.iter().any(
            |s| matches!(&s.kind, SpanKind::MaskedSecret { finding_id: f, .. } if f == finding_id),
        );
        if !known {
            anyhow::bail!("no finding \"{finding_id}\" on item \"{id}\"");
        }
        self.reveals
            .push((id.clone(), finding_id.into(), reviewer.into()));
        Ok("AKIAFAKEEXAMPLE00042".into())
    }

    fn audit_status(&mut self, id: &ItemId) -> anyhow::Result<AuditView> {
        let item = self.find(id)?;
        let chain = if item.tenant == "umbrella" {
            ChainStatus::Broken {
                seq: 57,
                reason: "entry 57 does not chain to entry 56 (prev_sha256 mismatch)".into(),
            }
        } else {
            ChainStatus::Verified {
                entries: 120,
                checkpoint: sha256_hex("checkpoint-120"),
            }
        };
        Ok(AuditView {
            receipts: item.receipts.clone(),
            chain,
        })
    }

    fn reason_codes(&mut self) -> anyhow::Result<Vec<ReasonCode>> {
        let code = |code: &str, summary: &str, kind| ReasonCode {
            code: code.into(),
            summary: summary.into(),
            kind,
        };
        Ok(vec![
            code(
                "false_positive",
                "the finding is not a real problem",
                DecisionKind::Release,
            ),
            code(
                "test_fixture",
                "the matched value is a documented test fixture",
                DecisionKind::Release,
            ),
            code(
                "secret_leak",
                "the summary carries a live secret",
                DecisionKind::Reject,
            ),
            code(
                "constraint_conflict",
                "the summary contradicts a constraint",
                DecisionKind::Reject,
            ),
            code(
                "prompt_injection",
                "the summary carries instructions or hidden text",
                DecisionKind::Reject,
            ),
            code(
                "unsupported_summary",
                "the summary is outside the controlled language",
                DecisionKind::Reject,
            ),
        ])
    }

    fn fork(&self) -> anyhow::Result<Box<dyn ReviewSource>> {
        Ok(Box::new(self.clone()))
    }
}

fn short(sha: &str) -> String {
    sha.chars().take(12).collect()
}

fn decision_body(id: &ItemId, r: &DecisionRequest, kind: &str) -> String {
    format!(
        "{{\"decision\":\"{}\",\"item\":\"{id}\",\"kind\":\"{kind}\",\"reason\":\"{}\",\"report_sha256\":\"{}\",\"reviewer\":\"{}\"}}",
        r.kind.word(),
        r.reason_code,
        r.report_sha256,
        r.reviewer
    )
}
