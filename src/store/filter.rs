//! Which compactions the queue shows and in what order, as plain data turned into SQL here.
//!
//! Exact fields (status, tenant, task, verdict class) use the queue indexes; terms (`cq
//! review`'s filter language: case-insensitive substrings of the id, tenant, task or reason,
//! each possibly negated) scan the small queue rows. Every value is bound as a parameter,
//! never spliced into the SQL.

use super::sql::{Dialect, Param};
use super::Status;
use crate::engine::verdict::VerdictClass;

/// Which compactions to list; empty matches everything. All conditions must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListFilter {
    pub status: Option<Status>,
    pub tenant_id: Option<String>,
    pub task_id: Option<String>,
    pub verdict_class: Option<VerdictClass>,
    /// Statuses to leave out (`!status:accepted` in the reviewer's filter).
    pub excluded_statuses: Vec<Status>,
    /// `Some(true)`: quarantined with an approval on the current report (awaiting a second
    /// approver); `Some(false)`: anything else.
    pub pending_approval: Option<bool>,
    pub terms: Vec<ListTerm>,
}

/// A substring test on one or all text columns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListTerm {
    pub negated: bool,
    pub field: TermField,
    /// Matched case-insensitively (ASCII case folding, as SQLite's `lower`).
    pub needle: String,
}

/// The column a term tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TermField {
    /// Id, tenant, task or main reason.
    Any,
    Reason,
    Tenant,
    Task,
}

/// Queue order. Ties are broken by id, so pages never overlap.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SortKey {
    #[default]
    NewestFirst,
    /// The longest-waiting first.
    OldestFirst,
    MostAnomalies,
    /// The most severe verdict class first ([`VerdictClass::severity`]), oldest first within
    /// each.
    Severity,
}

const PENDING: &str = "(status = 'quarantined' AND EXISTS (SELECT 1 FROM approvals a
    WHERE a.compaction_id = compactions.id AND a.report_sha256 = compactions.report_sha256))";

impl SortKey {
    /// The order's columns, most significant first, all descending (the second value) or
    /// all ascending: a page after a row is the rows whose columns compare past its values.
    /// `None` for [`SortKey::Severity`], which is read class by class in the
    /// [`SortKey::OldestFirst`] order.
    pub(crate) fn columns(self) -> Option<(&'static [&'static str], bool)> {
        match self {
            SortKey::NewestFirst => Some((&["created_at", "id"], true)),
            SortKey::OldestFirst => Some((&["created_at", "id"], false)),
            SortKey::MostAnomalies => Some((&["anomaly_count", "created_at", "id"], true)),
            SortKey::Severity => None,
        }
    }

    pub(crate) fn order_by(self) -> String {
        match self {
            SortKey::NewestFirst => "created_at DESC, id DESC".into(),
            SortKey::OldestFirst => "created_at ASC, id ASC".into(),
            SortKey::MostAnomalies => "anomaly_count DESC, created_at DESC, id DESC".into(),
            SortKey::Severity => {
                let cases: String = VerdictClass::ALL
                    .iter()
                    .map(|c| format!(" WHEN '{}' THEN {}", c.as_str(), c.severity()))
                    .collect();
                format!("CASE verdict_class{cases} ELSE 0 END DESC, created_at ASC, id ASC")
            }
        }
    }
}

impl ListFilter {
    /// The same filter without its status conditions (for per-status counts).
    pub fn without_status(&self) -> ListFilter {
        ListFilter {
            status: None,
            excluded_statuses: Vec::new(),
            pending_approval: None,
            ..self.clone()
        }
    }

    /// `WHERE …` (or nothing) and its parameters, numbered from 1.
    pub(crate) fn where_clause<'a>(&'a self, dialect: Dialect) -> (String, Vec<Param<'a>>) {
        let mut terms = Vec::new();
        let mut values = Vec::new();
        let mut bind = |v: Param<'a>| {
            values.push(v);
            values.len()
        };
        let exact = [
            ("status", self.status.map(Status::as_str)),
            ("tenant_id", self.tenant_id.as_deref()),
            ("task_id", self.task_id.as_deref()),
            (
                "verdict_class",
                self.verdict_class.map(VerdictClass::as_str),
            ),
        ];
        for (column, value) in exact {
            if let Some(v) = value {
                terms.push(format!("{column} = ?{}", bind(Param::Text(v))));
            }
        }
        for status in &self.excluded_statuses {
            terms.push(format!("status <> ?{}", bind(Param::Text(status.as_str()))));
        }
        match self.pending_approval {
            Some(true) => terms.push(PENDING.to_owned()),
            Some(false) => terms.push(format!("NOT {PENDING}")),
            None => {}
        }
        for term in &self.terms {
            let n = bind(Param::Owned(term.needle.to_ascii_lowercase()));
            let has = |column: &str| dialect.contains(&format!("lower({column})"), n);
            let test = match term.field {
                TermField::Any => {
                    format!(
                        "({} OR {} OR {} OR {})",
                        has("id"),
                        has("tenant_id"),
                        has("task_id"),
                        has("main_reason")
                    )
                }
                TermField::Reason => has("main_reason"),
                TermField::Tenant => has("tenant_id"),
                TermField::Task => has("task_id"),
            };
            terms.push(if term.negated {
                format!("NOT {test}")
            } else {
                test
            });
        }
        if terms.is_empty() {
            (String::new(), values)
        } else {
            (format!("WHERE {}", terms.join(" AND ")), values)
        }
    }
}
