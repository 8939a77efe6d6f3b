//! Layout metrics: what the state machine needs to know about the frame last drawn.
//!
//! [`super::build_view`] lays the screen out once per draw; [`LayoutMetrics`] records the parts
//! of that layout the state machine reads back (how many queue rows fit, each scrolling pane's
//! rectangle, inner size and wrapped line count, where each finding of the open item sits in
//! the wrapped summary and sources). The loop hands them to [`crate::review::app::App`] as an
//! [`crate::review::event::Event::Layout`] after every draw, so scrolling, paging and mouse
//! hit-testing never build a view of their own. They describe a frame already on screen, so
//! applying them never changes what is drawn.

use ratatui::layout::Rect;

use super::{inner, Body};
use crate::review::app::{CPane, Pane};

/// Which scrolling pane a [`PaneMetrics`] describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scroller {
    /// One of the detail screen's three panes.
    Detail(Pane),
    /// One of the constraints screen's three panes.
    Constraints(CPane),
    /// The queue's preview of the selected row (not scrolled).
    Preview,
    /// The diff screen's pane.
    Diff,
    /// The audit screen's pane.
    Audit,
}

/// One scrolling pane as drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PaneMetrics {
    pub scroller: Scroller,
    /// Where the pane is, borders included (for mouse hit-testing).
    pub area: Rect,
    /// Inner height: lines visible at once.
    pub height: usize,
    /// Wrapped lines of content.
    pub lines: usize,
}

impl PaneMetrics {
    /// The largest first visible line that still fills the pane.
    pub fn scroll_limit(&self) -> usize {
        self.lines.saturating_sub(self.height)
    }
}

/// The queue table as drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueMetrics {
    /// Screen row of the table's first data row.
    pub first_row_y: u16,
    /// Data rows visible at once.
    pub rows: usize,
}

/// Where a finding of the open item sits in the wrapped panes (`None`: not in that pane, or
/// the pane is hidden by zoom).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FindingLines {
    pub summary: Option<usize>,
    pub source: Option<usize>,
}

/// The metrics of one drawn frame.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LayoutMetrics {
    /// The terminal size the frame was laid out for.
    pub size: (u16, u16),
    /// The queue table, on the queue screen.
    pub queue: Option<QueueMetrics>,
    /// The scrolling panes on screen.
    pub panes: Vec<PaneMetrics>,
    /// By finding index, for the detail screen's open item.
    pub findings: Vec<FindingLines>,
    /// The first line the constraints screen's summary showed while following the selected
    /// row (the state takes it as its scroll, so scrolling by hand starts from there).
    pub constraint_summary_scroll: Option<usize>,
}

impl LayoutMetrics {
    /// The metrics of a laid-out body.
    pub fn of(size: (u16, u16), body: &Body, findings: Vec<FindingLines>) -> LayoutMetrics {
        let (queue, panes) = match body {
            Body::Queue(q) => {
                // Border and column titles above the first row, border below the last.
                let rows = usize::from(q.area.height.saturating_sub(3)).max(1);
                let first_row_y = q.area.y.saturating_add(2);
                (Some(QueueMetrics { first_row_y, rows }), Vec::new())
            }
            Body::Dashboard(_) => (None, Vec::new()),
            Body::Panes { panes, .. } => (
                None,
                panes
                    .iter()
                    .map(|p| PaneMetrics {
                        scroller: p.scroller,
                        area: p.area,
                        height: inner(p.area).1,
                        lines: p.lines.len(),
                    })
                    .collect(),
            ),
        };
        LayoutMetrics {
            size,
            queue,
            panes,
            findings,
            constraint_summary_scroll: None,
        }
    }

    /// The drawn pane of `scroller`, if it is on screen.
    pub fn pane(&self, scroller: Scroller) -> Option<&PaneMetrics> {
        self.panes.iter().find(|p| p.scroller == scroller)
    }
}
