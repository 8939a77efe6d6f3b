//! The constraints screen's view: the rows (kind, id, status, canonical text) above, the
//! selected row's evidence and the summary side by side below (stacked on narrow terminals).
//!
//! A row's status is a glyph and a word in its role's style; a row whose status a rerun
//! changed carries `Δ`. The summary pane highlights the sentences the selected row is about
//! (in the evidence style and with a `▌` gutter, so the mark survives `NO_COLOR`) and, while
//! it follows the selection, starts two lines above the first of them.

use ratatui::layout::{Constraint, Direction, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::evidence::{evidence_lines, status_cell};
use super::text::{self, Highlight};
use super::{inner, Body, PaneView, Scroller, NARROW};
use crate::review::app::{changed_since, App, CPane, DetailState};
use crate::review::source::{ConstraintEvidence, ConstraintStatus, ItemDetail};
use crate::review::theme::{Role, Theme};

/// Lines kept above the followed sentence.
const CONTEXT: usize = 2;

/// Where the list, evidence and summary panes go (`None`: hidden by zoom).
fn rects(app: &App, detail: &DetailState, area: Rect, rows: usize) -> [Option<Rect>; 3] {
    if detail.zoom {
        let mut out = [None; 3];
        out[detail.cpane.index()] = Some(area);
        return out;
    }
    // The list: every row plus its column titles and borders, at most two fifths.
    let wanted = u16::try_from(rows + 3).unwrap_or(u16::MAX);
    let list = wanted.min(area.height * 2 / 5).max(5.min(area.height));
    let [top, bottom] =
        Layout::vertical([Constraint::Length(list), Constraint::Min(1)]).areas(area);
    let (direction, split) = if app.size.0 < NARROW {
        (
            Direction::Vertical,
            [Constraint::Percentage(55), Constraint::Percentage(45)],
        )
    } else {
        (
            Direction::Horizontal,
            [Constraint::Percentage(62), Constraint::Percentage(38)],
        )
    };
    let parts = Layout::default()
        .direction(direction)
        .constraints(split)
        .split(bottom);
    [Some(top), parts.first().copied(), parts.get(1).copied()]
}

fn pane(
    detail: &DetailState,
    which: CPane,
    rect: Rect,
    title: Vec<Span<'static>>,
    lines: Vec<Line<'static>>,
    scroll: usize,
    theme: &Theme,
) -> PaneView {
    let focused = detail.cpane == which;
    let (_, height) = inner(rect);
    let max_scroll = lines.len().saturating_sub(height);
    let marker = if focused { "▶ " } else { "" };
    let mut spans = vec![Span::styled(
        format!(" {marker}"),
        theme.style(if focused { Role::Focus } else { Role::Title }),
    )];
    spans.extend(title);
    if lines.len() > height {
        spans.push(Span::styled(
            format!(
                " {}/{} ",
                (scroll.min(max_scroll) + height).min(lines.len()),
                lines.len()
            ),
            theme.style(Role::Dim),
        ));
    }
    PaneView {
        scroller: Scroller::Constraints(which),
        area: rect,
        title: Line::from(spans),
        lines,
        scroll: scroll.min(max_scroll),
        focused,
        border: theme.style(if focused { Role::Focus } else { Role::Dim }),
    }
}

fn row_line(
    row: &ConstraintEvidence,
    changed: Option<&ConstraintStatus>,
    selected: bool,
    id_width: usize,
    width: usize,
    theme: &Theme,
) -> Line<'static> {
    let (status, role) = status_cell(&row.status);
    let mut spans = vec![
        Span::raw(if selected { "▶" } else { " " }),
        match changed {
            Some(_) => Span::styled("Δ ", theme.style(Role::Warning)),
            None => Span::raw("  "),
        },
        Span::styled(format!("{:<11}", row.kind.word()), theme.style(Role::Dim)),
    ];
    let id = text::pad(
        Line::from(text::untrusted_inline(&row.id, Style::default(), theme)),
        id_width,
    );
    spans.extend(id.spans);
    spans.push(Span::raw(" "));
    spans.push(Span::styled(format!("{status:<14}"), theme.style(role)));
    spans.push(Span::raw(" "));
    spans.extend(text::untrusted_inline(
        &row.canonical_text,
        Style::default(),
        theme,
    ));
    let line = text::truncate(Line::from(spans), width);
    if selected {
        line.style(theme.style(Role::Selection))
    } else {
        line
    }
}

/// The list's lines: column titles, then the rows around the selection that fit.
fn list_lines(
    item: &ItemDetail,
    detail: &DetailState,
    changed: &[Option<ConstraintStatus>],
    theme: &Theme,
    rect: Rect,
) -> Vec<Line<'static>> {
    let (width, height) = inner(rect);
    let id_width = item
        .constraints
        .iter()
        .map(|c| {
            text::untrusted_inline(&c.id, Style::default(), theme)
                .iter()
                .map(Span::width)
                .sum::<usize>()
        })
        .max()
        .unwrap_or(2)
        .clamp(8, 28);
    let titles = format!(
        "   {:<11}{:<id_width$} {:<14} {}",
        "kind", "id", "status", "canonical text / claim"
    );
    let mut out = vec![text::truncate(
        Line::styled(titles, theme.style(Role::Dim)),
        width,
    )];
    if item.constraints.is_empty() {
        out.push(Line::styled(
            "no registered constraint, pinned constraint or authority claim",
            theme.style(Role::Dim),
        ));
        return out;
    }
    let room = height.saturating_sub(1).max(1);
    let top = detail.constraint.saturating_sub(room.saturating_sub(1));
    for (i, row) in item.constraints.iter().enumerate().skip(top).take(room) {
        let was = changed.get(i).and_then(Option::as_ref);
        out.push(row_line(
            row,
            was,
            i == detail.constraint,
            id_width,
            width,
            theme,
        ));
    }
    out
}

/// The summary with the selected row's sentences marked; the summary line of the first.
fn summary_lines(
    item: &ItemDetail,
    detail: &DetailState,
    row: Option<&ConstraintEvidence>,
    theme: &Theme,
    width: usize,
) -> (Vec<Line<'static>>, Option<usize>) {
    let focus = row.map(ConstraintEvidence::focus).unwrap_or_default();
    let mut highlights = super::detail::summary_highlights(item, detail, theme);
    // After the spans' own, so a conflict keeps its style inside the marked sentence.
    highlights.extend(focus.iter().map(|r| Highlight {
        range: r.clone(),
        style: theme.style(Role::Evidence),
        replacement: None,
    }));
    let gutter = 2;
    let lines = text::untrusted(&item.summary_text, Style::default(), &highlights, theme);
    let (wrapped, index) = text::wrap_indexed(lines, width.saturating_sub(gutter).max(1));
    // Which wrapped lines hold focused text: from each input line's start offset.
    let mut marks = vec![false; wrapped.len()];
    for r in &focus {
        let first = text::line_of(&index, r.start);
        let last = text::line_of(&index, r.end.saturating_sub(1).max(r.start));
        for m in marks.iter_mut().take(last + 1).skip(first) {
            *m = true;
        }
    }
    let out = wrapped
        .into_iter()
        .zip(marks)
        .map(|(line, marked)| {
            let mut spans = vec![if marked {
                Span::styled("▌ ", theme.style(Role::Evidence))
            } else {
                Span::raw("  ")
            }];
            spans.extend(line.spans);
            Line::from(spans)
        })
        .collect();
    let first = focus.first().map(|r| text::line_of(&index, r.start));
    (out, first)
}

/// The constraints screen's body, and the summary scroll it drew while following.
pub fn constraints_body(app: &App, theme: &Theme, body: Rect) -> (Body, Option<usize>) {
    let [title_area, area] =
        Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(body);
    let Some(detail) = app.detail.as_ref() else {
        let body = Body::Panes {
            title: None,
            panes: Vec::new(),
        };
        return (body, None);
    };
    let title = Some((title_area, super::detail::title_line(app, detail, theme)));
    let Some(item) = detail.item.as_ref() else {
        let panes = vec![loading_pane(app, detail, theme, area)];
        return (Body::Panes { title, panes }, None);
    };
    let changed = changed_since(detail.before_rerun.as_deref(), item);
    let row = item.constraints.get(detail.constraint);
    let mut panes = Vec::new();
    let mut followed = None;
    let [list, evidence, summary] = rects(app, detail, area, item.constraints.len());
    if let Some(rect) = list {
        panes.push(list_pane(item, detail, &changed, theme, rect));
    }
    if let Some(rect) = evidence {
        panes.push(evidence_pane(detail, row, &changed, theme, rect));
    }
    if let Some(rect) = summary {
        let (pane, follow) = summary_pane(item, detail, row, theme, rect);
        panes.push(pane);
        followed = follow;
    }
    (Body::Panes { title, panes }, followed)
}

/// The list pane while the item loads, or why it could not.
fn loading_pane(app: &App, detail: &DetailState, theme: &Theme, area: Rect) -> PaneView {
    let line = match &detail.error {
        Some(e) => {
            let mut spans = vec![Span::styled(
                "✗ could not load the item: ",
                theme.style(Role::Error),
            )];
            spans.extend(text::untrusted_inline(e, theme.style(Role::Error), theme));
            Line::from(spans)
        }
        None => Line::from(format!("{} loading the item…", super::spinner(app))),
    };
    pane(
        detail,
        CPane::List,
        area,
        vec![Span::styled("Constraints ", theme.style(Role::Title))],
        text::wrap(vec![line], inner(area).0),
        0,
        theme,
    )
}

/// One row per constraint, with how many fail and how many the rerun changed.
fn list_pane(
    item: &ItemDetail,
    detail: &DetailState,
    changed: &[Option<ConstraintStatus>],
    theme: &Theme,
    rect: Rect,
) -> PaneView {
    let failing = item
        .constraints
        .iter()
        .filter(|c| c.status.failing())
        .count();
    let changes = changed.iter().filter(|c| c.is_some()).count();
    let mut title = vec![
        Span::styled("Constraints ", theme.style(Role::Title)),
        Span::raw(format!("{} rows · ", item.constraints.len())),
        Span::styled(
            format!("{failing} failing"),
            theme.style(if failing > 0 { Role::Error } else { Role::Ok }),
        ),
    ];
    if changes > 0 {
        title.push(Span::styled(
            format!(" · Δ {changes} changed by the rerun"),
            theme.style(Role::Warning),
        ));
    }
    title.push(Span::raw(" "));
    let lines = list_lines(item, detail, changed, theme, rect);
    pane(detail, CPane::List, rect, title, lines, 0, theme)
}

/// Why the selected row has its status: policy against summary.
fn evidence_pane(
    detail: &DetailState,
    row: Option<&ConstraintEvidence>,
    changed: &[Option<ConstraintStatus>],
    theme: &Theme,
    rect: Rect,
) -> PaneView {
    let width = inner(rect).0;
    let lines = match row {
        Some(row) => {
            let was = changed.get(detail.constraint).and_then(Option::as_ref);
            evidence_lines(row, was, theme, width)
        }
        None => vec![Line::styled("nothing selected", theme.style(Role::Dim))],
    };
    let mut title = vec![Span::styled("Why ", theme.style(Role::Title))];
    if let Some(row) = row {
        title.extend(text::untrusted_inline(
            &row.id,
            theme.style(Role::Title),
            theme,
        ));
    }
    title.push(Span::styled(" · policy ⟷ summary ", theme.style(Role::Dim)));
    let scroll = detail.cscroll[CPane::Evidence.index()];
    pane(detail, CPane::Evidence, rect, title, lines, scroll, theme)
}

/// The summary, scrolled to the selected row's sentences while it follows; returns the scroll
/// it followed to.
fn summary_pane(
    item: &ItemDetail,
    detail: &DetailState,
    row: Option<&ConstraintEvidence>,
    theme: &Theme,
    rect: Rect,
) -> (PaneView, Option<usize>) {
    let mut followed = None;
    let (width, height) = inner(rect);
    let (lines, first) = summary_lines(item, detail, row, theme, width);
    let scroll = if detail.summary_follows {
        let line = first.unwrap_or(0).saturating_sub(CONTEXT);
        let line = line.min(lines.len().saturating_sub(height));
        followed = Some(line);
        line
    } else {
        detail.cscroll[CPane::Summary.index()]
    };
    let title = vec![Span::styled(
        "Summary (untrusted) ",
        theme.style(Role::Title),
    )];
    let pane = pane(detail, CPane::Summary, rect, title, lines, scroll, theme);
    (pane, followed)
}
