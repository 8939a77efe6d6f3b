//! The view model: what to draw, computed from the state alone.
//!
//! [`build_view`] is a pure function of [`App`] (and the theme): it decides the layout for the
//! terminal size, styles every line by meaning, and routes every untrusted string through
//! [`text::untrusted`]. The widgets only place what it produced, so every screen state can be
//! unit-tested here and snapshot-tested through the widgets. The layout it decided is also
//! summed up in [`View::metrics`], which the loop feeds back to the state machine after each
//! draw (scroll limits, page sizes, mouse hit-testing, scrolling to a finding), so both agree
//! without the state machine ever building a view.

mod columns;
mod constraints;
mod dashboard;
mod detail;
mod diff;
mod evidence;
pub mod metrics;
mod overlay;
mod queue;
pub mod text;
mod triage;

use ratatui::layout::{Constraint, Direction, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};

pub use dashboard::{DashboardAreas, DashboardStyles, DashboardView, DayBars, DAY_WIDTH};
pub use metrics::{FindingLines, LayoutMetrics, PaneMetrics, QueueMetrics, Scroller};
pub use queue::{queue_areas, queue_scroll_top};

use crate::review::action::Action;
use crate::review::app::{App, Overlay, Screen};
use crate::review::theme::{Role, Theme};

/// Braille spinner frames, advanced by ticks.
pub const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// Terminals narrower than this stack the detail panes.
pub const NARROW: u16 = 100;

/// Everything to draw.
#[derive(Debug, Clone)]
pub struct View {
    pub area: Rect,
    pub header: Line<'static>,
    pub body: Body,
    /// A message, or the filter / command line being typed.
    pub status: Option<Line<'static>>,
    pub footer: Line<'static>,
    pub overlay: Option<OverlayView>,
    pub layout: ScreenLayout,
    /// What the state machine reads back about this layout.
    pub metrics: LayoutMetrics,
}

/// Where the four bands of the screen are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScreenLayout {
    pub header: Rect,
    pub body: Rect,
    pub status: Rect,
    pub footer: Rect,
}

/// The body of the screen.
#[derive(Debug, Clone)]
pub enum Body {
    Queue(Box<QueueView>),
    Dashboard(Box<DashboardView>),
    Panes {
        /// A line above the panes (the open item), with where it goes.
        title: Option<(Rect, Line<'static>)>,
        panes: Vec<PaneView>,
    },
}

/// The queue table.
#[derive(Debug, Clone)]
pub struct QueueView {
    pub area: Rect,
    pub title: Line<'static>,
    pub columns: Vec<(&'static str, Constraint)>,
    pub rows: Vec<Vec<Line<'static>>>,
    /// Data rows that fit in the table.
    pub visible: usize,
    /// Index into `rows` of the selected row.
    pub selected: Option<usize>,
    pub selected_style: Style,
    /// Shown instead of rows (loading, empty, error).
    pub placeholder: Option<Line<'static>>,
    /// The selected row at a glance, below the table when there is room.
    pub preview: Option<PaneView>,
}

/// A bordered, scrolled block of lines.
#[derive(Debug, Clone)]
pub struct PaneView {
    pub scroller: Scroller,
    pub area: Rect,
    pub title: Line<'static>,
    pub lines: Vec<Line<'static>>,
    pub scroll: usize,
    pub focused: bool,
    pub border: Style,
}

/// A centred box above the screen.
#[derive(Debug, Clone)]
pub struct OverlayView {
    pub area: Rect,
    pub title: Line<'static>,
    pub lines: Vec<Line<'static>>,
    pub border: Style,
}

/// Splits the screen into header, body, status line and footer.
pub fn screen_layout(area: Rect) -> ScreenLayout {
    let [header, body, status, footer] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(area);
    ScreenLayout {
        header,
        body,
        status,
        footer,
    }
}

/// The full screen for the app's size.
pub fn app_area(app: &App) -> Rect {
    Rect::new(0, 0, app.size.0.max(1), app.size.1.max(1))
}

/// The rectangles of the sources, summary and checks panes (`None`: hidden by zoom).
pub fn detail_pane_rects(app: &App) -> [Option<Rect>; 3] {
    let body = screen_layout(app_area(app)).body;
    let [_, panes] = Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(body);
    let Some(detail) = app.detail.as_ref() else {
        return [None; 3];
    };
    if detail.zoom {
        let mut out = [None; 3];
        out[detail.focus.index()] = Some(panes);
        return out;
    }
    let direction = if app.size.0 < NARROW {
        Direction::Vertical
    } else {
        Direction::Horizontal
    };
    let constraints = if direction == Direction::Horizontal {
        [
            Constraint::Percentage(30),
            Constraint::Percentage(40),
            Constraint::Percentage(30),
        ]
    } else {
        [Constraint::Ratio(1, 3); 3]
    };
    let rects = Layout::default()
        .direction(direction)
        .constraints(constraints)
        .split(panes);
    [
        rects.first().copied(),
        rects.get(1).copied(),
        rects.get(2).copied(),
    ]
}

/// Inner width and height of a bordered rectangle.
pub fn inner(rect: Rect) -> (usize, usize) {
    (
        usize::from(rect.width.saturating_sub(2)).max(1),
        usize::from(rect.height.saturating_sub(2)).max(1),
    )
}

/// Builds the view of the current state.
pub fn build_view(app: &App, theme: &Theme) -> View {
    let area = app_area(app);
    let layout = screen_layout(area);
    let mut findings = Vec::new();
    let mut followed = None;
    let body = match app.screen {
        Screen::Queue => Body::Queue(Box::new(queue::queue_view(app, theme, layout.body))),
        Screen::Detail => {
            let (body, lines) = detail::detail_body(app, theme, layout.body);
            findings = lines;
            body
        }
        Screen::Constraints => {
            let (body, line) = constraints::constraints_body(app, theme, layout.body);
            followed = line;
            body
        }
        Screen::Dashboard => {
            Body::Dashboard(Box::new(dashboard::dashboard_view(app, theme, layout.body)))
        }
        Screen::Diff => Body::Panes {
            title: None,
            panes: vec![diff::diff_pane(app, theme, layout.body)],
        },
        Screen::Audit => Body::Panes {
            title: None,
            panes: vec![diff::audit_pane(app, theme, layout.body)],
        },
    };
    let mut metrics = LayoutMetrics::of(app.size, &body, findings);
    metrics.constraint_summary_scroll = followed;
    View {
        area,
        header: header(app, theme),
        metrics,
        body,
        status: status_line(app, theme),
        footer: footer(app, theme),
        overlay: overlay::overlay_view(app, theme, area),
        layout,
    }
}

fn header(app: &App, theme: &Theme) -> Line<'static> {
    let mut spans = vec![Span::styled(" cq review ", theme.style(Role::Title))];
    let sep = || Span::styled(" │ ", theme.style(Role::Dim));
    if app.options.readonly {
        spans.push(sep());
        spans.push(Span::styled("READ-ONLY", theme.style(Role::Warning)));
    }
    let counts: Vec<String> = crate::review::source::Status::ALL
        .iter()
        .filter_map(|s| app.queue.counts.get(s).map(|n| format!("{n} {}", s.word())))
        .collect();
    spans.push(sep());
    spans.push(Span::raw(if counts.is_empty() {
        "no items".to_string()
    } else {
        counts.join(" · ")
    }));
    spans.push(sep());
    let sort = match app.queue.sort {
        crate::review::source::Sort::Age => "age",
        crate::review::source::Sort::Severity => "severity",
    };
    spans.push(Span::raw(format!("sort: {sort}")));
    if !app.queue.filter.is_empty() {
        spans.push(sep());
        spans.push(Span::raw("filter: "));
        spans.extend(text::untrusted_inline(
            &app.queue.filter.to_string(),
            theme.style(Role::Focus),
            theme,
        ));
    }
    if !app.queue.tagged.is_empty() {
        spans.push(sep());
        spans.push(Span::styled(
            format!("● {} tagged", app.queue.tagged.len()),
            theme.style(Role::Tagged),
        ));
    }
    if !app.reruns_pending.is_empty() {
        spans.push(sep());
        spans.push(Span::styled(
            format!("{} rerunning {}", spinner(app), app.reruns_pending.len()),
            theme.style(Role::Warning),
        ));
    }
    spans.push(sep());
    // What the queue holds, by the check of its main reason.
    if !app.queue.reasons.is_empty() {
        for (n, (reason, count)) in app.queue.reasons.iter().enumerate() {
            if n > 0 {
                spans.push(Span::styled(" · ", theme.style(Role::Dim)));
            }
            spans.extend(text::untrusted_inline(reason, Style::default(), theme));
            spans.push(Span::styled(
                format!(" {count}"),
                theme.style(Role::Warning),
            ));
        }
        spans.push(sep());
    }
    spans.push(Span::styled(
        format!("reviewer {}", app.options.reviewer),
        theme.style(Role::Dim),
    ));
    Line::from(spans).style(theme.style(Role::Header))
}

/// The spinner frame for the current tick.
pub fn spinner(app: &App) -> &'static str {
    SPINNER[(app.tick % SPINNER.len() as u64) as usize]
}

fn status_line(app: &App, theme: &Theme) -> Option<Line<'static>> {
    match &app.overlay {
        Some(Overlay::Filter(input)) => {
            let mut spans = vec![Span::styled("/", theme.style(Role::Key))];
            spans.extend(text::untrusted_inline(&input.text, Style::default(), theme));
            spans.push(Span::styled("█", theme.style(Role::Dim)));
            spans.push(Span::styled(
                "   status: reason: tenant: task: !negate · enter apply · esc close",
                theme.style(Role::Dim),
            ));
            return Some(Line::from(spans));
        }
        Some(Overlay::Command(input)) => {
            let mut spans = vec![Span::styled(":", theme.style(Role::Key))];
            spans.extend(text::untrusted_inline(&input.text, Style::default(), theme));
            spans.push(Span::styled("█", theme.style(Role::Dim)));
            return Some(Line::from(spans));
        }
        _ => {}
    }
    app.message.as_ref().map(|m| {
        let (glyph, role) = if m.is_error {
            ("✗ error: ", Role::Error)
        } else {
            ("• ", Role::Ok)
        };
        let mut spans = vec![Span::styled(glyph, theme.style(role))];
        spans.extend(text::untrusted_inline(&m.text, theme.style(role), theme));
        Line::from(spans)
    })
}

/// Short footer label of an action on the current screen.
fn footer_label(app: &App, action: Action) -> &'static str {
    match action {
        Action::Constraints if app.screen == Screen::Constraints => "detail",
        Action::Constraints => "constraints",
        Action::NextFailing => "next failing",
        Action::PrevFailing => "prev failing",
        Action::Dashboard => "dashboard",
        Action::Rerun if app.screen == Screen::Dashboard => "refresh",
        Action::Open if app.screen == Screen::Constraints => "evidence",
        Action::Open => "open",
        Action::Filter => "filter",
        Action::Sort => "sort",
        Action::Tag => "tag",
        Action::RejectTagged => "reject tagged",
        Action::Rerun => "rerun",
        Action::Release => "release",
        Action::Reject => "reject",
        Action::NextPane => "pane",
        Action::Zoom => "zoom",
        Action::ToggleDiff => "diffs",
        Action::Reveal => "reveal",
        Action::Audit => "audit",
        Action::Back => "back",
        Action::Command => "cmd",
        Action::Help => "help",
        Action::Quit => "quit",
        other => other.name(),
    }
}

/// The footer: the screen's main actions with their first key, from the keymap table.
pub fn footer_actions(app: &App) -> Vec<Action> {
    use Action::*;
    let list: &[Action] = match app.screen {
        Screen::Queue => &[
            Open,
            Constraints,
            NextFailing,
            Filter,
            Sort,
            Tag,
            Rerun,
            Release,
            Reject,
            RejectTagged,
            Dashboard,
            Command,
            Help,
            Quit,
        ],
        Screen::Detail => &[
            NextPane,
            Open,
            Zoom,
            Constraints,
            ToggleDiff,
            Rerun,
            Release,
            Reject,
            Reveal,
            Audit,
            Back,
            Help,
        ],
        Screen::Constraints => &[
            NextFailing,
            PrevFailing,
            NextPane,
            Open,
            Constraints,
            ToggleDiff,
            Rerun,
            Release,
            Reject,
            Zoom,
            Back,
            Help,
        ],
        Screen::Diff => &[NextPane, ToggleDiff, Back, Help],
        Screen::Audit => &[Back, Help],
        Screen::Dashboard => &[Back, Rerun, Help, Quit],
    };
    list.iter()
        .copied()
        .filter(|a| !(app.options.readonly && a.decides()))
        .collect()
}

fn footer(app: &App, theme: &Theme) -> Line<'static> {
    let mut actions = footer_actions(app);
    let width = |actions: &[Action]| -> usize {
        actions
            .iter()
            .map(|a| {
                app.keymap.label(*a).chars().count() + footer_label(app, *a).chars().count() + 3
            })
            .sum()
    };
    // Too wide: drop the last actions before help and quit (the help overlay lists them all).
    while width(&actions) > usize::from(app.size.0) {
        let Some(at) = actions
            .iter()
            .rposition(|a| !matches!(a, Action::Help | Action::Quit))
        else {
            break;
        };
        actions.remove(at);
    }
    let mut spans = Vec::new();
    for action in actions {
        spans.push(Span::styled(
            format!(" {}", app.keymap.label(action)),
            theme.style(Role::Key),
        ));
        spans.push(Span::raw(format!(" {} ", footer_label(app, action))));
    }
    Line::from(spans).style(theme.style(Role::StatusBar))
}
