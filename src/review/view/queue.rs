//! The queue table's view: one line per item with status, severity (the most severe failing
//! check's class, as a bar and a word), reason, tenant/task, age and anomaly count, each
//! carrying a word or glyph besides its colour; below it, when there is room, the preview of
//! the selected row.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};

use super::{text, QueueView};
use crate::review::app::App;
use crate::review::source::{QueueRow, Severity, Sort, Status};
use crate::review::theme::{Role, Theme};

/// First visible row so the selection stays on screen, scrolling a page at a time.
pub fn queue_scroll_top(selected: usize, visible: usize) -> usize {
    let visible = visible.max(1);
    selected / visible * visible
}

/// `now - then` as `42s`, `5m`, `3h`, `2d`.
pub fn age(now: i64, then: i64) -> String {
    let secs = (now - then).max(0);
    match secs {
        0..=59 => format!("{secs}s"),
        60..=3599 => format!("{}m", secs / 60),
        3600..=86_399 => format!("{}h", secs / 3600),
        _ => format!("{}d", secs / 86_400),
    }
}

fn status_cell(status: Status, theme: &Theme) -> Line<'static> {
    let (glyph, role) = match status {
        Status::Quarantined => ("■", Role::Warning),
        Status::PendingApproval => ("◐", Role::Warning),
        Status::Released => ("✓", Role::Ok),
        Status::Rejected => ("✗", Role::Error),
        Status::Accepted => ("✓", Role::Dim),
    };
    Line::from(Span::styled(
        format!("{glyph} {}", status.word()),
        theme.style(role),
    ))
}

fn severity_cell(severity: Severity, theme: &Theme) -> Line<'static> {
    Line::from(Span::styled(
        format!("{} {}", severity.bar(), severity.word()),
        theme.style(super::triage::severity_role(severity)),
    ))
}

/// Body rows below which the queue has no preview.
const PREVIEW_FROM: u16 = 18;

/// The queue table's rectangle and the preview's below it (when the body is tall enough).
pub fn queue_areas(area: Rect) -> (Rect, Option<Rect>) {
    if area.height < PREVIEW_FROM {
        return (area, None);
    }
    let preview = (area.height * 2 / 5).clamp(7, 16);
    let [table, below] =
        Layout::vertical([Constraint::Min(5), Constraint::Length(preview)]).areas(area);
    (table, Some(below))
}

fn row_cells(app: &App, row: &QueueRow, selected: bool, theme: &Theme) -> Vec<Line<'static>> {
    let tagged = app.queue.tagged.contains(&row.id);
    let pointer = Span::raw(if selected { "▶" } else { " " });
    let tag = if tagged {
        Span::styled("●", theme.style(Role::Tagged))
    } else {
        Span::raw(" ")
    };
    let anomalies = if row.anomaly_count > 0 {
        Line::from(Span::styled(
            format!("⚠ {}", row.anomaly_count),
            theme.style(Role::Warning),
        ))
    } else {
        Line::from(Span::styled("-", theme.style(Role::Dim)))
    };
    let mut who = text::untrusted_inline(&row.tenant, Default::default(), theme);
    who.push(Span::styled("/", theme.style(Role::Dim)));
    who.extend(text::untrusted_inline(&row.task, Default::default(), theme));
    vec![
        Line::from(vec![pointer, tag]),
        Line::from(text::untrusted_inline(&row.id.0, Default::default(), theme)),
        status_cell(row.status, theme),
        severity_cell(row.severity, theme),
        Line::from(text::untrusted_inline(
            &row.main_reason,
            Default::default(),
            theme,
        )),
        Line::from(who),
        Line::from(age(app.options.now_unix, row.created_unix)),
        anomalies,
    ]
}

/// The queue's view for the body rectangle.
pub fn queue_view(app: &App, theme: &Theme, body: Rect) -> QueueView {
    let (area, preview_area) = queue_areas(body);
    let q = &app.queue;
    // Border (2) and column titles (1).
    let visible = usize::from(area.height.saturating_sub(3)).max(1);
    let top = queue_scroll_top(q.selected, visible);
    let rows: Vec<Vec<Line<'static>>> = (top..(top + visible).min(q.total))
        .filter_map(|abs| {
            let row = abs.checked_sub(q.offset).and_then(|i| q.rows.get(i))?;
            Some(row_cells(app, row, abs == q.selected, theme))
        })
        .collect();
    let selected = (q.total > 0)
        .then(|| q.selected - top)
        .filter(|i| *i < rows.len());
    let sort = match q.sort {
        Sort::Age => "oldest first",
        Sort::Severity => "most severe first",
    };
    let loading = if q.loading.is_some() {
        format!(" {} loading", super::spinner(app))
    } else {
        String::new()
    };
    let title = Line::from(vec![
        Span::styled(" Queue ", theme.style(Role::Title)),
        Span::raw(format!(
            "{} of {} · {sort}{loading} ",
            if q.total == 0 { 0 } else { q.selected + 1 },
            q.total
        )),
    ]);
    let placeholder = if let Some(e) = &q.error {
        let mut spans = vec![Span::styled(
            "✗ could not load the queue: ",
            theme.style(Role::Error),
        )];
        spans.extend(text::untrusted_inline(e, theme.style(Role::Error), theme));
        Some(Line::from(spans))
    } else if q.total == 0 && q.loading.is_some() {
        Some(Line::from(format!(
            "{} loading the queue…",
            super::spinner(app)
        )))
    } else if q.total == 0 {
        Some(Line::from(Span::styled(
            "no items match; esc clears the filter",
            theme.style(Role::Dim),
        )))
    } else if rows.is_empty() {
        Some(Line::from(format!("{} loading rows…", super::spinner(app))))
    } else {
        None
    };
    // Wide enough for the visible ids (stores may use long ones), within reason.
    let id_width = rows
        .iter()
        .filter_map(|cells| cells.get(1).map(Line::width))
        .max()
        .unwrap_or(2)
        .clamp(4, 24);
    let id_width = u16::try_from(id_width).unwrap_or(24);
    let (rows, selected) = if q.error.is_some() {
        (Vec::new(), None)
    } else {
        (rows, selected)
    };
    QueueView {
        area,
        title,
        columns: vec![
            ("", Constraint::Length(2)),
            ("id", Constraint::Length(id_width)),
            ("status", Constraint::Length(13)),
            ("severity", Constraint::Length(14)),
            ("reason", Constraint::Min(16)),
            ("tenant/task", Constraint::Min(14)),
            ("age", Constraint::Length(4)),
            ("anom", Constraint::Length(5)),
        ],
        rows,
        visible,
        selected,
        selected_style: theme.style(Role::Selection),
        placeholder,
        preview: preview_area
            .filter(|_| q.error.is_none() && q.total > 0)
            .map(|a| super::triage::preview_pane(app, theme, a)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_are_short() {
        assert_eq!(age(100, 58), "42s");
        assert_eq!(age(10_000, 10_000 - 300), "5m");
        assert_eq!(age(100_000, 100_000 - 3 * 3600), "3h");
        assert_eq!(age(1_000_000, 1_000_000 - 2 * 86_400), "2d");
        assert_eq!(age(0, 10), "0s");
    }

    #[test]
    fn scroll_top_pages() {
        assert_eq!(queue_scroll_top(0, 10), 0);
        assert_eq!(queue_scroll_top(9, 10), 0);
        assert_eq!(queue_scroll_top(10, 10), 10);
    }
}
