//! The dashboard's view: compactions quarantined and decisions per day over the store's
//! history, what is quarantined now by reason, the items waiting longest, and each reviewer's
//! decisions, for ratatui's bar chart and sparkline widgets to draw.
//!
//! The numbers arrive from the fast lane (the source keeps running totals); the view only
//! lays them out: the per-day chart shows the latest days that fit, gaps filled with zeros,
//! and a sparkline shows the whole history. Every label from the store (reasons, reviewer
//! names, ids) goes through the sanitizer; each series has a word beside its colour.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::queue::age;
use super::text;
use crate::review::app::{App, DashboardState};
use crate::review::source::{date_of, Dashboard, DayCounts};
use crate::review::theme::{Role, Theme};

/// Columns one day takes in the per-day chart: three bars of two and a gap.
pub const DAY_WIDTH: u16 = 7;

/// One day's bars.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DayBars {
    /// `MM-DD`.
    pub label: String,
    pub quarantined: u64,
    pub released: u64,
    pub rejected: u64,
}

/// Styles of the dashboard's series.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DashboardStyles {
    pub quarantined: Style,
    pub released: Style,
    pub rejected: Style,
    pub title: Style,
    pub dim: Style,
    pub border: Style,
}

/// Where the dashboard's blocks go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DashboardAreas {
    pub days: Rect,
    pub history: Rect,
    pub reasons: Rect,
    pub waiting: Rect,
    pub reviewers: Rect,
}

/// Everything the dashboard draws.
#[derive(Debug, Clone)]
pub struct DashboardView {
    pub area: Rect,
    pub areas: DashboardAreas,
    pub title: Line<'static>,
    /// Loading, failed, or nothing yet.
    pub note: Option<Line<'static>>,
    /// The latest days that fit, oldest first.
    pub days: Vec<DayBars>,
    /// Quarantined per day over the whole history, oldest first.
    pub history: Vec<u64>,
    pub history_lines: Vec<Line<'static>>,
    pub reasons: Vec<(Line<'static>, u64)>,
    pub waiting: Vec<Line<'static>>,
    /// Reviewer, releases, rejections.
    pub reviewers: Vec<(Line<'static>, u64, u64)>,
    pub styles: DashboardStyles,
}

fn areas(area: Rect) -> DashboardAreas {
    let [top, bottom] =
        Layout::vertical([Constraint::Percentage(48), Constraint::Min(3)]).areas(area);
    let [days, history] =
        Layout::horizontal([Constraint::Percentage(64), Constraint::Min(10)]).areas(top);
    let [reasons, waiting, reviewers] = Layout::horizontal([
        Constraint::Percentage(36),
        Constraint::Percentage(36),
        Constraint::Min(10),
    ])
    .areas(bottom);
    DashboardAreas {
        days,
        history,
        reasons,
        waiting,
        reviewers,
    }
}

/// Every day from the first to the last with activity, gaps as zeros.
fn filled(days: &[DayCounts]) -> Vec<DayCounts> {
    let (Some(first), Some(last)) = (days.first(), days.last()) else {
        return Vec::new();
    };
    // At most ten years of days, so a stray timestamp cannot make the view huge.
    let start = first.day.max(last.day - 3_660);
    (start..=last.day)
        .map(|day| {
            days.iter()
                .find(|d| d.day == day)
                .copied()
                .unwrap_or(DayCounts {
                    day,
                    ..DayCounts::default()
                })
        })
        .collect()
}

fn count(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

fn untrusted(input: &str, theme: &Theme) -> Line<'static> {
    Line::from(text::untrusted_inline(input, Style::default(), theme))
}

fn numbers(app: &App, d: &Dashboard, theme: &Theme, view: &mut DashboardView) {
    let all = filled(&d.days);
    let fit = usize::from(view.areas.days.width.saturating_sub(2) / DAY_WIDTH).max(1);
    view.days = all
        .iter()
        .skip(all.len().saturating_sub(fit))
        .map(|c| DayBars {
            label: date_of(c.day).get(5..).unwrap_or_default().to_owned(),
            quarantined: count(c.quarantined),
            released: count(c.released),
            rejected: count(c.rejected),
        })
        .collect();
    view.history = all.iter().map(|c| count(c.quarantined)).collect();
    let sum = |f: fn(&DayCounts) -> usize| all.iter().map(f).sum::<usize>();
    let span = match (all.first(), all.last()) {
        (Some(a), Some(b)) => format!("{} … {}", date_of(a.day), date_of(b.day)),
        _ => "no history yet".into(),
    };
    view.history_lines = vec![
        Line::styled(span, theme.style(Role::Dim)),
        Line::from(vec![
            Span::styled("■ quarantined ", theme.style(Role::Warning)),
            Span::raw(sum(|c| c.quarantined).to_string()),
            Span::styled("  accepted ", theme.style(Role::Dim)),
            Span::raw(sum(|c| c.accepted).to_string()),
        ]),
        Line::from(vec![
            Span::styled("✓ released ", theme.style(Role::Ok)),
            Span::raw(sum(|c| c.released).to_string()),
            Span::styled("  ✗ rejected ", theme.style(Role::Error)),
            Span::raw(sum(|c| c.rejected).to_string()),
        ]),
        Line::from(vec![
            Span::styled("waiting now ", theme.style(Role::Warning)),
            Span::raw(d.waiting_total.to_string()),
        ]),
    ];
    view.reasons = d
        .top_reasons
        .iter()
        .take(usize::from(view.areas.reasons.height.saturating_sub(2)).max(1))
        .map(|(reason, n)| {
            let label = if reason.is_empty() {
                "(no reason)"
            } else {
                reason
            };
            (untrusted(label, theme), count(*n))
        })
        .collect();
    view.waiting = d
        .waiting
        .iter()
        .map(|row| {
            let mut spans = vec![Span::styled(
                format!("{:>4} ", age(app.options.now_unix, row.created_unix)),
                theme.style(Role::Warning),
            )];
            spans.extend(text::untrusted_inline(&row.id.0, Style::default(), theme));
            spans.push(Span::raw(" "));
            spans.extend(text::untrusted_inline(
                &row.task,
                theme.style(Role::Dim),
                theme,
            ));
            spans.push(Span::raw(" "));
            spans.extend(text::untrusted_inline(
                &row.main_reason,
                theme.style(Role::Dim),
                theme,
            ));
            Line::from(spans)
        })
        .collect();
    if view.waiting.is_empty() {
        view.waiting
            .push(Line::styled("nothing is waiting", theme.style(Role::Ok)));
    }
    view.reviewers = d
        .reviewers
        .iter()
        .map(|r| {
            (
                untrusted(&r.reviewer, theme),
                count(r.released),
                count(r.rejected),
            )
        })
        .collect();
}

/// The dashboard for the body rectangle.
pub fn dashboard_view(app: &App, theme: &Theme, area: Rect) -> DashboardView {
    let mut view = DashboardView {
        area,
        areas: areas(area),
        title: Line::styled(" Dashboard ", theme.style(Role::Title)),
        note: None,
        days: Vec::new(),
        history: Vec::new(),
        history_lines: Vec::new(),
        reasons: Vec::new(),
        waiting: Vec::new(),
        reviewers: Vec::new(),
        styles: DashboardStyles {
            quarantined: theme.style(Role::Warning),
            released: theme.style(Role::Ok),
            rejected: theme.style(Role::Error),
            title: theme.style(Role::Title),
            dim: theme.style(Role::Dim),
            border: theme.style(Role::Dim),
        },
    };
    view.note = match &app.dashboard {
        DashboardState::Loading { .. } => Some(Line::styled(
            format!("{} counting…", super::spinner(app)),
            theme.style(Role::Dim),
        )),
        DashboardState::Failed(e) => {
            let mut spans = vec![Span::styled(
                "✗ could not count the store: ",
                theme.style(Role::Error),
            )];
            spans.extend(text::untrusted_inline(e, theme.style(Role::Error), theme));
            Some(Line::from(spans))
        }
        _ => None,
    };
    if let Some(d) = app.dashboard.numbers() {
        numbers(app, d, theme, &mut view);
    }
    view
}
