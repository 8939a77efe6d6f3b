//! The queue's triage data over the store: each row's severity, the focused item's preview,
//! and the dashboard's running totals.
//!
//! [`Tally`] keeps the dashboard's counts between requests and reads only what the store
//! recorded since ([`Store::stats_since`]), so the first dashboard of a session scans the
//! store once and every later one costs a few indexed reads. It checks its running total of
//! compactions against the store's on every read and starts over when they differ, and it
//! recounts the reasons of what is quarantined whenever a rerun may have changed them.

use std::collections::BTreeMap;

use crate::engine::report::Status as ReportStatus;
use crate::engine::verdict::VerdictClass;
use crate::review::source::{
    day_number, ConstraintKind, ConstraintStatus, Dashboard, DayCounts, ItemPreview, PreviewCheck,
    ReviewerCounts, Severity,
};
use crate::service::inspect::Glance;
use crate::store::stats::StatsMark;
use crate::store::{self, ListFilter, SortKey, Store};

/// Summary lines a preview carries.
const PREVIEW_LINES: usize = 8;
/// Items the dashboard lists as waiting longest.
const WAITING: u64 = 6;

/// The severity column of a stored verdict class.
pub fn severity(class: VerdictClass) -> Severity {
    match class {
        VerdictClass::Pass => Severity::Pass,
        VerdictClass::NotRun => Severity::NotRun,
        VerdictClass::InsufficientData => Severity::Undecided,
        VerdictClass::Error => Severity::Error,
        VerdictClass::Finding => Severity::Finding,
    }
}

/// The preview of a glanced compaction.
pub fn preview(glance: &Glance) -> ItemPreview {
    let lines: Vec<&str> = glance.summary.text.lines().collect();
    let report = &glance.report;
    let failing = report
        .checks
        .iter()
        .filter(|c| c.failed())
        .filter_map(|c| {
            Some(PreviewCheck {
                check: super::detail::check_name(&c.check)?,
                status: super::detail::check_status(c.status),
                code: c.code.clone(),
                detail: c.detail.clone(),
            })
        })
        .collect();
    let mut constraints: Vec<(ConstraintKind, String, ConstraintStatus)> = Vec::new();
    for check in &report.checks {
        for row in &check.constraints {
            let status = ConstraintStatus::from_report(&row.verification_status, &row.claim_status);
            let kind = match row.constraint_type.to_ascii_lowercase().as_str() {
                "commitment" => ConstraintKind::Commitment,
                "pinned" => ConstraintKind::Pinned,
                _ => ConstraintKind::Invariant,
            };
            if status.failing() {
                constraints.push((kind, row.constraint_id.clone(), status));
            }
        }
        if check.check == "authority" && check.status != ReportStatus::Pass {
            let claims = check.findings.iter().filter(|f| f.kind == "authority");
            for (n, _) in claims.enumerate() {
                constraints.push((
                    ConstraintKind::Authority,
                    format!("claim-{}", n + 1),
                    ConstraintStatus::Unsupported,
                ));
            }
        }
    }
    ItemPreview {
        id: crate::review::source::ItemId(glance.compaction.summary.id.clone()),
        outcome: super::detail::outcome(report.outcome),
        summary_head: lines
            .iter()
            .take(PREVIEW_LINES)
            .map(|l| (*l).to_owned())
            .collect(),
        more_lines: lines.len().saturating_sub(PREVIEW_LINES),
        failing,
        constraints,
    }
}

/// The dashboard's running totals.
#[derive(Debug, Clone, Default)]
pub struct Tally {
    mark: StatsMark,
    /// By `YYYY-MM-DD`.
    days: BTreeMap<String, DayCounts>,
    reviewers: BTreeMap<String, (usize, usize)>,
    /// What is quarantined now, by main reason.
    reasons: BTreeMap<String, i64>,
    /// Compactions counted.
    counted: u64,
}

impl Tally {
    fn day(&mut self, date: &str) -> &mut DayCounts {
        self.days
            .entry(date.to_owned())
            .or_insert_with(|| DayCounts {
                day: day_number(date).unwrap_or(0),
                ..DayCounts::default()
            })
    }

    /// Reads what changed since the last call and answers the dashboard.
    pub fn refresh(&mut self, store: &Store) -> anyhow::Result<Dashboard> {
        if !self.catch_up(store)? {
            // The running totals disagree with the store: count everything again, once.
            *self = Tally::default();
            self.catch_up(store)?;
        }
        self.dashboard(store)
    }

    /// Applies what changed; `false` when the totals no longer match the store.
    fn catch_up(&mut self, store: &Store) -> anyhow::Result<bool> {
        let delta = store.stats_since(&self.mark)?;
        for d in &delta.days {
            let counts = self.day(&d.day);
            counts.quarantined += d.quarantined as usize;
            counts.accepted += d.accepted as usize;
            self.counted += d.quarantined + d.accepted;
        }
        for d in &delta.decisions {
            let n = d.count as usize;
            let who = self.reviewers.entry(d.reviewer.clone()).or_default();
            match d.action {
                store::Action::Release => {
                    who.0 += n;
                    self.day(&d.day).released += n;
                }
                store::Action::Reject => {
                    who.1 += n;
                    self.day(&d.day).rejected += n;
                }
            }
        }
        // A first read counts from scratch, so only a later one can hold stale reasons.
        if delta.reran && self.mark != StatsMark::default() {
            self.reasons = store
                .quarantine_reasons()?
                .into_iter()
                .map(|(r, n)| (r, i64::try_from(n).unwrap_or(i64::MAX)))
                .collect();
        } else {
            for (reason, n) in &delta.quarantined_reasons {
                *self.reasons.entry(reason.clone()).or_default() += *n as i64;
            }
            for (reason, n) in &delta.decided_reasons {
                *self.reasons.entry(reason.clone()).or_default() -= *n as i64;
            }
            self.reasons.retain(|_, n| *n > 0);
        }
        self.mark = delta.mark;
        Ok(self.counted == delta.total)
    }

    fn dashboard(&self, store: &Store) -> anyhow::Result<Dashboard> {
        let waiting_filter = ListFilter {
            status: Some(store::Status::Quarantined),
            ..ListFilter::default()
        };
        let waiting = store
            .list(&waiting_filter, SortKey::OldestFirst, 0, WAITING)?
            .into_iter()
            .map(super::queue_row)
            .collect();
        let mut top_reasons: Vec<(String, usize)> = self
            .reasons
            .iter()
            .map(|(r, n)| (r.clone(), usize::try_from(*n).unwrap_or(0)))
            .collect();
        top_reasons.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let mut reviewers: Vec<ReviewerCounts> = self
            .reviewers
            .iter()
            .map(|(name, (released, rejected))| ReviewerCounts {
                reviewer: name.clone(),
                released: *released,
                rejected: *rejected,
            })
            .collect();
        reviewers.sort_by(|a, b| {
            (b.released + b.rejected)
                .cmp(&(a.released + a.rejected))
                .then_with(|| a.reviewer.cmp(&b.reviewer))
        });
        Ok(Dashboard {
            days: self.days.values().copied().collect(),
            waiting_total: top_reasons.iter().map(|(_, n)| n).sum(),
            top_reasons,
            waiting,
            reviewers,
        })
    }
}
