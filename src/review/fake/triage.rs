//! The fake source's triage answers: an item's preview, reason counts over the filtered
//! queue, and a dashboard computed from the items (their ages, statuses and decision
//! receipts), all deterministic.

use std::collections::BTreeMap;

use super::row_of;
use crate::review::filter::Filter;
use crate::review::source::{
    CheckStatus, Dashboard, DayCounts, ItemDetail, ItemPreview, PreviewCheck, QueueRow,
    ReviewerCounts, Status,
};

/// The preview of an item.
pub fn preview(item: &ItemDetail) -> ItemPreview {
    let lines: Vec<&str> = item.summary_text.lines().collect();
    ItemPreview {
        id: item.id.clone(),
        outcome: item.outcome,
        summary_head: lines.iter().take(8).map(|l| (*l).to_owned()).collect(),
        more_lines: lines.len().saturating_sub(8),
        failing: item
            .checks
            .iter()
            .filter(|c| matches!(c.status, CheckStatus::Fail | CheckStatus::Error))
            .map(|c| PreviewCheck {
                check: c.check,
                status: c.status,
                code: c.code.clone().unwrap_or_default(),
                detail: c.detail.clone(),
            })
            .collect(),
        constraints: item
            .constraints
            .iter()
            .filter(|c| c.status.failing())
            .map(|c| (c.kind, c.id.clone(), c.status.clone()))
            .collect(),
    }
}

/// The check a reason names: `secret` for `secret.aws_access_key` or `secret: found`.
pub fn reason_check(reason: &str) -> &str {
    reason.split([':', '.']).next().map_or(reason, str::trim)
}

/// Reason counts over the rows `filter` matches, most first.
pub fn reason_counts<'a>(
    rows: impl Iterator<Item = &'a QueueRow>,
    filter: &Filter,
) -> Vec<(String, usize)> {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for row in rows.filter(|r| filter.matches(r) && !r.main_reason.is_empty()) {
        *counts
            .entry(reason_check(&row.main_reason).to_owned())
            .or_default() += 1;
    }
    let mut out: Vec<(String, usize)> = counts.into_iter().collect();
    out.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    out
}

fn waiting(status: Status) -> bool {
    matches!(status, Status::Quarantined | Status::PendingApproval)
}

/// The dashboard of `items`, each counted `weight` times (the large source's cycles).
pub fn dashboard(items: &[ItemDetail], weight: usize) -> Dashboard {
    let mut days: BTreeMap<i64, DayCounts> = BTreeMap::new();
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    let mut reviewers: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for item in items {
        let day = item.created_unix.div_euclid(86_400);
        let counts = days.entry(day).or_insert_with(|| DayCounts {
            day,
            ..DayCounts::default()
        });
        if item.status == Status::Accepted {
            counts.accepted += weight;
        } else {
            counts.quarantined += weight;
        }
        if waiting(item.status) {
            *reasons.entry(item.main_reason.clone()).or_default() += weight;
        }
        for receipt in item.receipts.iter().filter(|r| r.kind == "decision") {
            let who = receipt
                .body
                .split_once("\"reviewer\":\"")
                .and_then(|(_, rest)| rest.split('"').next())
                .unwrap_or("unknown")
                .to_owned();
            let day = receipt.at_unix.div_euclid(86_400);
            let counts = days.entry(day).or_insert_with(|| DayCounts {
                day,
                ..DayCounts::default()
            });
            let entry = reviewers.entry(who).or_default();
            if item.status == Status::Released {
                counts.released += weight;
                entry.0 += weight;
            } else {
                counts.rejected += weight;
                entry.1 += weight;
            }
        }
    }
    let mut top_reasons: Vec<(String, usize)> = reasons.into_iter().collect();
    top_reasons.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let mut oldest: Vec<QueueRow> = items
        .iter()
        .filter(|i| waiting(i.status))
        .map(row_of)
        .collect();
    oldest.sort_by_key(|r| (r.created_unix, r.id.clone()));
    oldest.truncate(6);
    Dashboard {
        days: days.into_values().collect(),
        waiting_total: top_reasons.iter().map(|(_, n)| n).sum(),
        top_reasons,
        waiting: oldest,
        reviewers: reviewers
            .into_iter()
            .map(|(reviewer, (released, rejected))| ReviewerCounts {
                reviewer,
                released,
                rejected,
            })
            .collect(),
    }
}
