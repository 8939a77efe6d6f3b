//! The reviewer's reads: the queue query, and an item's receipts with their signatures.
//!
//! The queue query: substring terms (negatable) over id, tenant, task and main
//! reason, a status that tells a quarantined item waiting for a second approver apart from
//! one nobody has touched, and two orders (oldest first, worst outcome first).
//!
//! Like [`Store::list`] it reads one page at a time; the header counts come from one grouped
//! scan plus a count driven by the (small) approvals table, so typing a filter never loads
//! the store. Matching is case-insensitive for ASCII (SQLite's `LIKE`); covering indexes
//! (schema version 4) keep the scans off the table and its request texts.

use std::collections::BTreeMap;

use rusqlite::params_from_iter;
use rusqlite::types::Value as SqlValue;

use super::query::{summary_from_row, SUMMARY_COLUMNS};
use super::{CompactionSummary, Status, Store, StoreError};

/// Where an item stands in review, as the queue shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum QueueStatus {
    /// Quarantined, no approval on the current report.
    Quarantined,
    /// Quarantined, with at least one approval on the current report.
    Pending,
    Released,
    Rejected,
    Accepted,
}

impl QueueStatus {
    pub const ALL: [QueueStatus; 5] = [
        QueueStatus::Quarantined,
        QueueStatus::Pending,
        QueueStatus::Released,
        QueueStatus::Rejected,
        QueueStatus::Accepted,
    ];

    fn of(status: Status, pending: bool) -> QueueStatus {
        match status {
            Status::Quarantined if pending => QueueStatus::Pending,
            Status::Quarantined => QueueStatus::Quarantined,
            Status::Released => QueueStatus::Released,
            Status::Rejected => QueueStatus::Rejected,
            Status::Accepted => QueueStatus::Accepted,
        }
    }
}

/// Which column a text term searches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueField {
    /// Id, tenant, task or main reason.
    Any,
    Reason,
    Tenant,
    Task,
}

/// One term of a queue query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueueTerm {
    /// The field contains `needle` (compare lower case).
    Text {
        field: QueueField,
        needle: String,
    },
    Status(QueueStatus),
}

/// A conjunction of terms, each possibly negated.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueueQuery {
    pub terms: Vec<(bool, QueueTerm)>,
}

/// Queue order; ties are broken by id.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum QueueOrder {
    #[default]
    OldestFirst,
    /// ERROR, then FAIL, then INSUFFICIENT_DATA, then the rest; oldest first within each.
    WorstFirst,
}

/// One queue row with its review status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueEntry {
    pub summary: CompactionSummary,
    pub status: QueueStatus,
}

/// What one page request returns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueueResult {
    pub rows: Vec<QueueEntry>,
    /// Items matching the whole query.
    pub total: u64,
    /// Items matching the text terms, by status.
    pub counts: BTreeMap<QueueStatus, u64>,
}

const PENDING: &str = "EXISTS (SELECT 1 FROM approvals a
     WHERE a.compaction_id = c.id AND a.report_sha256 = c.report_sha256)";

impl QueueQuery {
    fn allows(&self, status: QueueStatus) -> bool {
        self.terms.iter().all(|(negated, term)| match term {
            QueueTerm::Status(s) => (*s == status) != *negated,
            QueueTerm::Text { .. } => true,
        })
    }

    /// The WHERE terms (joined by AND) and their bound values.
    fn sql(&self, with_status: bool, values: &mut Vec<SqlValue>) -> Vec<String> {
        let mut out = Vec::new();
        for (negated, term) in &self.terms {
            let test = match term {
                QueueTerm::Text { field, needle } => {
                    values.push(SqlValue::Text(like_pattern(needle)));
                    let n = values.len();
                    let has = |col: &str| format!("c.{col} LIKE ?{n} ESCAPE '\\'");
                    match field {
                        QueueField::Any => format!(
                            "({} OR {} OR {} OR {})",
                            has("id"),
                            has("tenant_id"),
                            has("task_id"),
                            has("main_reason")
                        ),
                        QueueField::Reason => has("main_reason"),
                        QueueField::Tenant => has("tenant_id"),
                        QueueField::Task => has("task_id"),
                    }
                }
                QueueTerm::Status(_) if !with_status => continue,
                QueueTerm::Status(s) => match s {
                    QueueStatus::Quarantined => {
                        format!("(c.status = 'quarantined' AND NOT {PENDING})")
                    }
                    QueueStatus::Pending => format!("(c.status = 'quarantined' AND {PENDING})"),
                    QueueStatus::Released => "c.status = 'released'".into(),
                    QueueStatus::Rejected => "c.status = 'rejected'".into(),
                    QueueStatus::Accepted => "c.status = 'accepted'".into(),
                },
            };
            out.push(if *negated {
                format!("NOT {test}")
            } else {
                test
            });
        }
        out
    }
}

/// `%needle%` with LIKE's wildcards escaped (LIKE ignores ASCII case).
fn like_pattern(needle: &str) -> String {
    let mut out = String::with_capacity(needle.len() + 2);
    out.push('%');
    for c in needle.chars() {
        if matches!(c, '\\' | '%' | '_') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('%');
    out
}

fn where_clause(terms: &[String]) -> String {
    if terms.is_empty() {
        String::new()
    } else {
        format!("WHERE {}", terms.join(" AND "))
    }
}

impl Store {
    /// One page of the reviewer's queue, its total and the per-status counts.
    pub fn queue(
        &self,
        query: &QueueQuery,
        order: QueueOrder,
        offset: u64,
        limit: u64,
    ) -> Result<QueueResult, StoreError> {
        let counts = self.queue_counts(query)?;
        let total = counts
            .iter()
            .filter(|(s, _)| query.allows(**s))
            .map(|(_, n)| n)
            .sum();
        let mut values = Vec::new();
        let clause = where_clause(&query.sql(true, &mut values));
        let order = match order {
            QueueOrder::OldestFirst => "c.created_at ASC, c.id ASC",
            QueueOrder::WorstFirst => {
                "CASE c.outcome WHEN 'ERROR' THEN 0 WHEN 'FAIL' THEN 1
                 WHEN 'INSUFFICIENT_DATA' THEN 2 ELSE 3 END, c.created_at ASC, c.id ASC"
            }
        };
        let columns = SUMMARY_COLUMNS
            .split(',')
            .map(|c| format!("c.{}", c.trim()))
            .collect::<Vec<_>>()
            .join(", ");
        let n = values.len();
        let sql = format!(
            "SELECT {columns}, {PENDING} FROM compactions c {clause} ORDER BY {order}
             LIMIT ?{} OFFSET ?{}",
            n + 1,
            n + 2
        );
        values.push(SqlValue::Integer(i64::try_from(limit).unwrap_or(i64::MAX)));
        values.push(SqlValue::Integer(i64::try_from(offset).unwrap_or(i64::MAX)));
        let err = StoreError::sql("reading the review queue");
        let mut st = self.conn().prepare_cached(&sql).map_err(err)?;
        let rows = st
            .query_map(params_from_iter(values), |r| {
                let summary = summary_from_row(r)?;
                let pending: bool = r.get(13)?;
                let status = QueueStatus::of(summary.status, pending);
                Ok(QueueEntry { summary, status })
            })
            .map_err(err)?;
        let rows = rows.collect::<Result<_, _>>().map_err(err)?;
        Ok(QueueResult {
            rows,
            total,
            counts,
        })
    }

    /// Items matching the query's text terms, by review status.
    fn queue_counts(&self, query: &QueueQuery) -> Result<BTreeMap<QueueStatus, u64>, StoreError> {
        let err = StoreError::sql("counting the review queue");
        let mut values = Vec::new();
        let terms = query.sql(false, &mut values);
        let sql = format!(
            "SELECT c.status, COUNT(*) FROM compactions c {} GROUP BY c.status",
            where_clause(&terms)
        );
        let mut counts: BTreeMap<QueueStatus, u64> = BTreeMap::new();
        let mut st = self.conn().prepare_cached(&sql).map_err(err)?;
        let rows = st
            .query_map(params_from_iter(values.iter()), |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))
            })
            .map_err(err)?;
        for row in rows {
            let (status, n) = row.map_err(err)?;
            let status = Status::parse(&status).ok_or_else(|| {
                StoreError::Corrupt(format!("a compaction has status \"{status}\""))
            })?;
            counts.insert(QueueStatus::of(status, false), n.max(0) as u64);
        }
        // Pending items are few: count them from the approvals side.
        let mut pending_terms = vec!["c.status = 'quarantined'".to_owned()];
        pending_terms.extend(terms);
        let sql = format!(
            "SELECT COUNT(DISTINCT c.id) FROM approvals a CROSS JOIN compactions c
             ON c.id = a.compaction_id AND c.report_sha256 = a.report_sha256 {}",
            where_clause(&pending_terms)
        );
        let pending: i64 = self
            .conn()
            .prepare_cached(&sql)
            .and_then(|mut st| st.query_row(params_from_iter(values.iter()), |r| r.get(0)))
            .map_err(err)?;
        let pending = pending.max(0) as u64;
        if pending > 0 {
            let quarantined = counts.entry(QueueStatus::Quarantined).or_default();
            *quarantined = quarantined.saturating_sub(pending);
            counts.insert(QueueStatus::Pending, pending);
        }
        Ok(counts)
    }
}

/// One audit receipt about a compaction, with its signature.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredReceipt {
    pub seq: u64,
    pub kind: String,
    /// Canonical JSON body.
    pub receipt_json: String,
    /// Base64 Ed25519 signature, for receipts a reviewer signed.
    pub signature: Option<String>,
}

impl Store {
    /// The receipts about `id`, oldest first, with their signatures.
    pub fn signed_receipts_for(&self, id: &str) -> Result<Vec<StoredReceipt>, StoreError> {
        let err = StoreError::sql("reading receipts");
        let mut st = self
            .conn()
            .prepare_cached(
                "SELECT seq, kind, receipt_json, signature FROM audit_entries
                 WHERE compaction_id = ?1 ORDER BY seq",
            )
            .map_err(err)?;
        let rows = st
            .query_map([id], |r| {
                Ok(StoredReceipt {
                    seq: r.get::<_, i64>(0)?.max(0) as u64,
                    kind: r.get(1)?,
                    receipt_json: r.get(2)?,
                    signature: r.get(3)?,
                })
            })
            .map_err(err)?;
        rows.collect::<Result<_, _>>().map_err(err)
    }
}
