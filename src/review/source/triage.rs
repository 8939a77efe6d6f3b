//! What the queue's triage surface and the dashboard read from a source: an item's severity
//! (the most severe failing check's class, not the seed's first failure), a short preview of
//! the focused item, and counts over the store's history.
//!
//! Strings here are untrusted like every source string (reasons and reviewer names come from
//! the store), and a preview's summary lines are masked by the source as an item's are.

use super::{CheckName, CheckStatus, ConstraintKind, ConstraintStatus, ItemId, Outcome, QueueRow};

/// How bad an item is: the class of its most severe failing check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Severity {
    /// Every check passed.
    #[default]
    Pass,
    /// A check did not run (an earlier one stopped it) and none failed.
    NotRun,
    /// The verifier could not decide (INSUFFICIENT_DATA).
    Undecided,
    /// A check could not run to a verdict (ERROR).
    Error,
    /// A check found a problem (FAIL/FINDING).
    Finding,
}

impl Severity {
    /// Most severe first.
    pub const ALL: [Severity; 5] = [
        Severity::Finding,
        Severity::Error,
        Severity::Undecided,
        Severity::NotRun,
        Severity::Pass,
    ];

    /// The word shown in the severity column.
    pub fn word(self) -> &'static str {
        match self {
            Severity::Finding => "finding",
            Severity::Error => "error",
            Severity::Undecided => "undecided",
            Severity::NotRun => "not run",
            Severity::Pass => "pass",
        }
    }

    /// A bar as long as the severity, so the column reads without colour.
    pub fn bar(self) -> &'static str {
        match self {
            Severity::Finding => "▮▮▮▮",
            Severity::Error => "▮▮▮▯",
            Severity::Undecided => "▮▮▯▯",
            Severity::NotRun => "▮▯▯▯",
            Severity::Pass => "▯▯▯▯",
        }
    }

    /// Whether the item failed a check (the `n`/`N` jumps stop at these).
    pub fn failing(self) -> bool {
        self != Severity::Pass
    }

    /// The severity of a seed outcome, for sources that know nothing finer.
    pub fn of_outcome(outcome: Outcome) -> Severity {
        match outcome {
            Outcome::Accepted => Severity::Pass,
            Outcome::InsufficientData => Severity::Undecided,
            Outcome::Error => Severity::Error,
            Outcome::Finding => Severity::Finding,
        }
    }
}

/// A check that did not pass, as the preview lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreviewCheck {
    pub check: CheckName,
    pub status: CheckStatus,
    pub code: String,
    pub detail: String,
}

/// The focused queue row at a glance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemPreview {
    pub id: ItemId,
    /// The seed's outcome (what the runtime was told).
    pub outcome: Outcome,
    /// The first lines of the summary, secrets overwritten.
    pub summary_head: Vec<String>,
    /// Lines of the summary not in `summary_head`.
    pub more_lines: usize,
    /// Checks that failed or errored, in the seed's order.
    pub failing: Vec<PreviewCheck>,
    /// Constraint rows that are not preserved, and authority claims.
    pub constraints: Vec<(ConstraintKind, String, ConstraintStatus)>,
}

/// One day of the store's history.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DayCounts {
    /// Days since 1970-01-01 (UTC).
    pub day: i64,
    /// Compactions recorded quarantined that day.
    pub quarantined: usize,
    /// Compactions recorded accepted that day.
    pub accepted: usize,
    /// Releases decided that day.
    pub released: usize,
    /// Rejections decided that day.
    pub rejected: usize,
}

/// One reviewer's decisions.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReviewerCounts {
    pub reviewer: String,
    pub released: usize,
    pub rejected: usize,
}

/// The dashboard's numbers.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Dashboard {
    /// Days with any activity, oldest first (the view fills the gaps).
    pub days: Vec<DayCounts>,
    /// What is quarantined now, by main reason, most first.
    pub top_reasons: Vec<(String, usize)>,
    /// Quarantined now.
    pub waiting_total: usize,
    /// The items waiting longest, oldest first.
    pub waiting: Vec<QueueRow>,
    /// Decisions by reviewer, most first.
    pub reviewers: Vec<ReviewerCounts>,
}

/// Days since 1970-01-01 of a `YYYY-MM-DD` date (proleptic Gregorian, UTC).
pub fn day_number(date: &str) -> Option<i64> {
    let mut parts = date.get(..10)?.split('-');
    let y: i64 = parts.next()?.parse().ok()?;
    let m: i64 = parts.next()?.parse().ok()?;
    let d: i64 = parts.next()?.parse().ok()?;
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    // Howard Hinnant's days_from_civil.
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    Some(era * 146_097 + doe - 719_468)
}

/// The `YYYY-MM-DD` date of a day number (the inverse of [`day_number`]).
pub fn date_of(day: i64) -> String {
    let z = day + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_round_trip() {
        assert_eq!(day_number("1970-01-01"), Some(0));
        assert_eq!(day_number("2026-12-01T19:03:27Z"), Some(20_788));
        for day in [-1, 0, 59, 60, 20_788, 30_000] {
            assert_eq!(day_number(&date_of(day)), Some(day));
        }
        assert_eq!(day_number("2026-13-01"), None);
        assert_eq!(day_number("soon"), None);
    }

    #[test]
    fn severity_orders_and_bars() {
        assert!(Severity::Finding > Severity::Error && Severity::Error > Severity::Undecided);
        assert_eq!(Severity::ALL[0], Severity::Finding);
        assert!(!Severity::Pass.failing() && Severity::NotRun.failing());
        assert_eq!(Severity::of_outcome(Outcome::Accepted), Severity::Pass);
    }
}
