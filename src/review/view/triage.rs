//! The queue's preview pane: the focused row at a glance (severity, the seed's outcome, the
//! failing checks and constraints, the first lines of its summary), as lazygit and k9s show
//! the focused item under their lists.

use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::evidence::status_cell;
use super::{inner, text, PaneView, Scroller};
use crate::review::app::{App, PreviewState};
use crate::review::source::{QueueRow, Severity};
use crate::review::theme::{Role, Theme};

/// The role of a severity (with its bar and word beside it, never alone).
pub fn severity_role(severity: Severity) -> Role {
    match severity {
        Severity::Finding | Severity::Error => Role::Error,
        Severity::Undecided => Role::Warning,
        Severity::NotRun => Role::Dim,
        Severity::Pass => Role::Ok,
    }
}

fn lines(app: &App, row: &QueueRow, theme: &Theme) -> Vec<Line<'static>> {
    let mut head = vec![Span::styled(
        format!("{} {}", row.severity.bar(), row.severity.word()),
        theme.style(severity_role(row.severity)),
    )];
    if !row.main_reason.is_empty() {
        head.push(Span::styled(" · ", theme.style(Role::Dim)));
        head.extend(text::untrusted_inline(
            &row.main_reason,
            Style::default(),
            theme,
        ));
    }
    let mut out = vec![Line::from(head)];
    let preview = match &app.queue.preview {
        PreviewState::Ready(p) if p.id == row.id => p,
        PreviewState::Failed { id, error } if *id == row.id => {
            let mut spans = vec![Span::styled(
                "✗ could not load the preview: ",
                theme.style(Role::Error),
            )];
            spans.extend(text::untrusted_inline(
                error,
                theme.style(Role::Error),
                theme,
            ));
            out.push(Line::from(spans));
            return out;
        }
        _ => {
            out.push(Line::styled("loading the preview…", theme.style(Role::Dim)));
            return out;
        }
    };
    out[0].spans.push(Span::styled(
        format!(" · the runtime was told {}", preview.outcome.label()),
        theme.style(Role::Dim),
    ));
    for check in &preview.failing {
        let (glyph, role) = super::detail::status_glyph(check.status);
        let mut spans = vec![Span::styled(
            format!("{glyph} {:<12}", check.check.word()),
            theme.style(role),
        )];
        spans.extend(text::untrusted_inline(&check.code, Style::default(), theme));
        spans.push(Span::styled(" — ", theme.style(Role::Dim)));
        spans.extend(text::untrusted_inline(
            &check.detail,
            theme.style(Role::Dim),
            theme,
        ));
        out.push(Line::from(spans));
    }
    if !preview.constraints.is_empty() {
        let mut spans = vec![Span::styled("constraints: ", theme.style(Role::Dim))];
        for (n, (kind, id, status)) in preview.constraints.iter().enumerate() {
            if n > 0 {
                spans.push(Span::styled(" · ", theme.style(Role::Dim)));
            }
            let (word, role) = status_cell(status);
            spans.push(Span::styled(
                format!("{} ", kind.word()),
                theme.style(Role::Dim),
            ));
            spans.extend(text::untrusted_inline(id, Style::default(), theme));
            spans.push(Span::styled(format!(" {word}"), theme.style(role)));
        }
        out.push(Line::from(spans));
    }
    out.push(Line::styled(
        "── summary (untrusted) ──",
        theme.style(Role::Dim),
    ));
    for line in &preview.summary_head {
        out.push(Line::from(text::untrusted_inline(
            line,
            Style::default(),
            theme,
        )));
    }
    if preview.more_lines > 0 {
        out.push(Line::styled(
            format!(
                "… {} more line(s): enter opens the item",
                preview.more_lines
            ),
            theme.style(Role::Dim),
        ));
    }
    out
}

/// The preview pane of the queue's selected row.
pub fn preview_pane(app: &App, theme: &Theme, area: Rect) -> PaneView {
    let row = app.queue.selected_row();
    let mut title = vec![Span::styled(" Preview ", theme.style(Role::Title))];
    let body = match row {
        Some(row) => {
            title.extend(text::untrusted_inline(
                &row.id.0,
                theme.style(Role::Title),
                theme,
            ));
            title.push(Span::styled(
                format!(
                    " · {} open · {} constraints ",
                    app.keymap.label(crate::review::action::Action::Open),
                    app.keymap.label(crate::review::action::Action::Constraints)
                ),
                theme.style(Role::Dim),
            ));
            lines(app, row, theme)
        }
        None => vec![Line::styled("no item selected", theme.style(Role::Dim))],
    };
    let (width, _) = inner(area);
    let lines = text::wrap(body, width);
    PaneView {
        scroller: Scroller::Preview,
        area,
        title: Line::from(title),
        lines,
        scroll: 0,
        focused: false,
        border: theme.style(Role::Dim),
    }
}
