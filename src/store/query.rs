//! Reading the store: the paged queue, one compaction with its decision and approvals, its
//! report history, and the previous compaction of the same task.
//!
//! The queue is read one page at a time (`list` with offset and limit, `count` for the
//! total; [`super::page`] reads a page by key, at the same cost however deep), every filter
//! and sort backed by an index, so a reviewer can scroll 100,000 items without the store
//! loading them all.

use super::filter::{ListFilter, SortKey};
use super::sql::{params, Param, Row, SqlError};
use super::{Store, StoreError};
use crate::engine::verdict::{FindingStatus, Outcome, Verdict, VerdictClass};

/// Where a compaction stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Status {
    Quarantined,
    Released,
    Rejected,
    Accepted,
}

impl Status {
    pub const ALL: [Status; 4] = [
        Status::Quarantined,
        Status::Released,
        Status::Rejected,
        Status::Accepted,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Status::Quarantined => "quarantined",
            Status::Released => "released",
            Status::Rejected => "rejected",
            Status::Accepted => "accepted",
        }
    }

    pub fn parse(text: &str) -> Option<Status> {
        Self::ALL.into_iter().find(|s| s.as_str() == text)
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One row of the queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactionSummary {
    pub id: String,
    pub tenant_id: String,
    pub task_id: String,
    pub status: Status,
    pub verdict: Verdict,
    pub outcome: Outcome,
    pub finding_status: FindingStatus,
    pub verdict_class: VerdictClass,
    pub has_secret_finding: bool,
    pub main_reason: String,
    pub anomaly_count: u32,
    pub report_sha256: String,
    pub created_at: String,
    /// Approvals given on the current report (1 means a second approver is awaited).
    pub approvals: u32,
}

impl CompactionSummary {
    /// `created_at` as Unix seconds.
    pub fn created_unix(&self) -> i64 {
        crate::audit::parse_utc(&self.created_at).unwrap_or(0)
    }
}

/// Everything about one compaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compaction {
    pub summary: CompactionSummary,
    pub request_sha256: String,
    pub request_json: String,
    pub summary_sha256: String,
    pub source_population_sha256: String,
    pub decision: Option<Decision>,
    /// Approvals given on the current report (void ones are not listed).
    pub approvals: Vec<Approval>,
}

/// A final release or reject.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub action: super::Action,
    pub reason: String,
    pub note: String,
    pub reviewer: String,
    pub key_id: String,
    pub report_sha256: String,
    pub receipt_seq: u64,
    pub created_at: String,
}

/// One reviewer's approval towards a two-person release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Approval {
    pub reviewer: String,
    pub key_id: String,
    pub report_sha256: String,
    pub reason: String,
    pub note: String,
    pub receipt_seq: u64,
    pub created_at: String,
}

/// Per-status totals for the queue header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusCounts {
    pub by_status: Vec<(Status, u64)>,
    /// Quarantined items with one approval on their current report.
    pub pending_approval: u64,
}

/// One receipt as stored in the audit log.
pub type StoredReceipt = crate::audit::rows::EntryRow;

/// One stored report run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportRow {
    pub id: i64,
    pub compaction_id: String,
    pub report_sha256: String,
    pub report_json: String,
    pub policy_sha256: String,
    pub verifier_version: String,
    pub created_at: String,
}

pub(super) const SUMMARY_COLUMNS: &str =
    "id, tenant_id, task_id, status, verdict, outcome, finding_status,
    verdict_class, has_secret_finding, main_reason, anomaly_count, report_sha256, created_at,
    (SELECT COUNT(*) FROM approvals a
     WHERE a.compaction_id = compactions.id AND a.report_sha256 = compactions.report_sha256)";

/// Column `i` of `row` read as one of a vocabulary's words; an unknown word is an error.
fn word<T>(row: &dyn Row, i: usize, parse: fn(&str) -> Option<T>) -> Result<T, SqlError> {
    let text = row.text(i)?;
    parse(text).ok_or_else(|| {
        SqlError::value(
            i,
            format!(
                "an unknown value \"{}\"",
                crate::sanitize::excerpt(text, 40)
            ),
        )
    })
}

/// Column `i` as a `u32` count.
fn small(row: &dyn Row, i: usize) -> Result<u32, SqlError> {
    u32::try_from(row.int(i)?).map_err(|_| SqlError::value(i, "a count out of range"))
}

pub(super) fn summary_from_row(row: &dyn Row) -> Result<CompactionSummary, SqlError> {
    Ok(CompactionSummary {
        id: row.string(0)?,
        tenant_id: row.string(1)?,
        task_id: row.string(2)?,
        status: word(row, 3, Status::parse)?,
        verdict: word(row, 4, Verdict::parse)?,
        outcome: word(row, 5, Outcome::parse)?,
        finding_status: word(row, 6, FindingStatus::parse)?,
        verdict_class: word(row, 7, VerdictClass::parse)?,
        has_secret_finding: row.flag(8)?,
        main_reason: row.string(9)?,
        anomaly_count: small(row, 10)?,
        report_sha256: row.string(11)?,
        created_at: row.string(12)?,
        approvals: small(row, 13)?,
    })
}

impl Store {
    /// One page of the queue.
    pub fn list(
        &self,
        filter: &ListFilter,
        sort: SortKey,
        offset: u64,
        limit: u64,
    ) -> Result<Vec<CompactionSummary>, StoreError> {
        let (clause, mut values) = filter.where_clause(self.dialect());
        let order = sort.order_by();
        let n = values.len();
        let sql = format!(
            "SELECT {SUMMARY_COLUMNS} FROM compactions {clause} ORDER BY {order} LIMIT ?{} OFFSET ?{}",
            n + 1,
            n + 2
        );
        values.push(Param::from(limit));
        values.push(Param::from(offset));
        self.conn()
            .rows(&sql, &values, summary_from_row)
            .map_err(StoreError::sql("listing compactions"))
    }

    /// How many compactions match `filter`.
    pub fn count(&self, filter: &ListFilter) -> Result<u64, StoreError> {
        let (clause, values) = filter.where_clause(self.dialect());
        let sql = format!("SELECT COUNT(*) FROM compactions {clause}");
        self.conn()
            .one(&sql, &values, |r| r.count(0))
            .map_err(StoreError::sql("counting compactions"))
    }

    /// Counts per status of what `filter` matches apart from its status terms (the queue
    /// header, in one pass over the matching rows); the last entry counts quarantined items
    /// awaiting a second approval.
    pub fn status_counts(&self, filter: &ListFilter) -> Result<StatusCounts, StoreError> {
        let base = filter.without_status();
        self.read(|conn| {
            let (clause, values) = base.where_clause(self.dialect());
            let sql = format!("SELECT status, COUNT(*) FROM compactions {clause} GROUP BY status");
            let counted = conn
                .rows(&sql, &values, |r| Ok((r.string(0)?, r.count(1)?)))
                .map_err(StoreError::sql("counting compactions"))?;
            let by_status = Status::ALL
                .into_iter()
                .map(|s| {
                    let n = counted
                        .iter()
                        .filter(|(name, _)| name == s.as_str())
                        .map(|(_, n)| n)
                        .sum();
                    (s, n)
                })
                .collect();
            let pending = ListFilter {
                pending_approval: Some(true),
                ..base.clone()
            };
            Ok(StatusCounts {
                by_status,
                pending_approval: self.count(&pending)?,
            })
        })
    }

    /// One compaction with its decision and current approvals; `None` if unknown.
    pub fn compaction(&self, id: &str) -> Result<Option<Compaction>, StoreError> {
        self.read(|conn| {
            let sql = format!(
                "SELECT {SUMMARY_COLUMNS}, request_sha256,
                        (SELECT request_json FROM requests WHERE compaction_id = compactions.id),
                        summary_sha256, source_population_sha256
                 FROM compactions WHERE id = ?1"
            );
            let found = conn
                .opt(&sql, &[Param::Text(id)], |row| {
                    Ok((
                        summary_from_row(row)?,
                        row.string(14)?,
                        row.string(15)?,
                        row.string(16)?,
                        row.string(17)?,
                    ))
                })
                .map_err(StoreError::sql("reading a compaction"))?;
            let Some((summary, request_sha256, request_json, summary_sha256, population)) = found
            else {
                return Ok(None);
            };
            let current = summary.report_sha256.clone();
            Ok(Some(Compaction {
                summary,
                request_sha256,
                request_json,
                summary_sha256,
                source_population_sha256: population,
                decision: self.decision(id)?,
                approvals: self.approvals(id, &current)?,
            }))
        })
    }

    /// The decision on `id`, if any.
    pub fn decision(&self, id: &str) -> Result<Option<Decision>, StoreError> {
        let found = self
            .conn()
            .opt(
                "SELECT action, reason, note, reviewer, key_id, report_sha256, receipt_seq, created_at
                 FROM decisions WHERE compaction_id = ?1",
                &[Param::Text(id)],
                |row| {
                    Ok((
                        row.string(0)?,
                        Decision {
                            action: super::Action::Release,
                            reason: row.string(1)?,
                            note: row.string(2)?,
                            reviewer: row.string(3)?,
                            key_id: row.string(4)?,
                            report_sha256: row.string(5)?,
                            receipt_seq: row.count(6)?,
                            created_at: row.string(7)?,
                        },
                    ))
                },
            )
            .map_err(StoreError::sql("reading a decision"))?;
        let Some((action, decision)) = found else {
            return Ok(None);
        };
        let action = super::Action::parse(&action).ok_or_else(|| {
            StoreError::Corrupt(format!(
                "decision action \"{}\" is unknown",
                crate::sanitize::excerpt(&action, 40)
            ))
        })?;
        Ok(Some(Decision { action, ..decision }))
    }

    /// Approvals on `id` given while the report was `report_sha256`.
    pub fn approvals(&self, id: &str, report_sha256: &str) -> Result<Vec<Approval>, StoreError> {
        self.conn()
            .rows(
                "SELECT reviewer, key_id, report_sha256, reason, note, receipt_seq, created_at
                 FROM approvals WHERE compaction_id = ?1 AND report_sha256 = ?2 ORDER BY id",
                &params![id, report_sha256],
                |r| {
                    Ok(Approval {
                        reviewer: r.string(0)?,
                        key_id: r.string(1)?,
                        report_sha256: r.string(2)?,
                        reason: r.string(3)?,
                        note: r.string(4)?,
                        receipt_seq: r.count(5)?,
                        created_at: r.string(6)?,
                    })
                },
            )
            .map_err(StoreError::sql("reading approvals"))
    }

    /// Every report run on `id`, oldest first.
    pub fn reports(&self, id: &str) -> Result<Vec<ReportRow>, StoreError> {
        self.conn()
            .rows(
                "SELECT id, compaction_id, report_sha256, report_json, policy_sha256,
                        verifier_version, created_at
                 FROM reports WHERE compaction_id = ?1 ORDER BY id",
                &[Param::Text(id)],
                |r| {
                    Ok(ReportRow {
                        id: r.int(0)?,
                        compaction_id: r.string(1)?,
                        report_sha256: r.string(2)?,
                        report_json: r.string(3)?,
                        policy_sha256: r.string(4)?,
                        verifier_version: r.string(5)?,
                        created_at: r.string(6)?,
                    })
                },
            )
            .map_err(StoreError::sql("reading reports"))
    }

    /// The compaction of the same tenant and task recorded just before `before_id` (for a
    /// diff against the previous summary); `None` if there is none.
    pub fn previous_for_task(
        &self,
        tenant_id: &str,
        task_id: &str,
        before_id: &str,
    ) -> Result<Option<CompactionSummary>, StoreError> {
        let sql = format!(
            "SELECT {SUMMARY_COLUMNS} FROM compactions
             WHERE tenant_id = ?1 AND task_id = ?2
               AND (created_at, id) < (SELECT created_at, id FROM compactions WHERE id = ?3)
             ORDER BY created_at DESC, id DESC LIMIT 1"
        );
        self.conn()
            .opt(
                &sql,
                &params![tenant_id, task_id, before_id],
                summary_from_row,
            )
            .map_err(StoreError::sql("reading the previous compaction of a task"))
    }

    /// The receipts about `id`, oldest first.
    pub fn receipts_for(&self, id: &str) -> Result<Vec<StoredReceipt>, StoreError> {
        super::audit_rows::entries_where(self.conn(), "compaction_id = ?1", Param::Text(id))
    }

    /// The receipt at `seq`, if any.
    pub fn receipt(&self, seq: u64) -> Result<Option<StoredReceipt>, StoreError> {
        Ok(super::audit_rows::entries_where(self.conn(), "seq = ?1", Param::from(seq))?.pop())
    }
}
