//! What the state machine reads back from the frame last drawn ([`LayoutMetrics`]): scroll
//! limits, page sizes, the queue's visible rows, where the panes are and where each finding
//! sits. The loop draws after every change and hands the layout back at once, so these are
//! the metrics of the state being updated. Before a pane has been drawn there is no limit:
//! the view clamps what it draws, and the layout that follows clamps the state to match.

use super::{App, CPane, Pane, Screen};
use crate::review::view::{LayoutMetrics, PaneMetrics, Scroller};

impl App {
    /// Takes the layout of the frame just drawn and clamps every drawn pane's scroll to it
    /// (which changes nothing on screen: the view drew it clamped).
    pub(crate) fn on_layout(&mut self, metrics: LayoutMetrics) {
        self.layout = metrics;
        let Some(detail) = self.detail.as_mut() else {
            return;
        };
        if detail.summary_follows {
            if let Some(line) = self.layout.constraint_summary_scroll {
                detail.cscroll[CPane::Summary.index()] = line;
            }
        }
        for pane in &self.layout.panes {
            let target = match pane.scroller {
                // The checks pane and the constraints list follow their selection instead.
                Scroller::Detail(Pane::Checks)
                | Scroller::Constraints(CPane::List)
                | Scroller::Preview => continue,
                Scroller::Detail(p) => match detail.scroll.get_mut(p.index()) {
                    Some(scroll) => scroll,
                    None => continue,
                },
                Scroller::Constraints(p) => match detail.cscroll.get_mut(p.index()) {
                    Some(scroll) => scroll,
                    None => continue,
                },
                Scroller::Diff => &mut detail.diff_scroll,
                Scroller::Audit => &mut detail.audit_scroll,
            };
            *target = (*target).min(pane.scroll_limit());
        }
    }

    /// Queue rows visible at once.
    pub(crate) fn queue_rows(&self) -> usize {
        self.layout
            .queue
            .map_or_else(|| self.body_rows().saturating_sub(1), |q| q.rows)
            .max(1)
    }

    /// Screen row of the queue's first data row.
    pub(crate) fn queue_first_row(&self) -> u16 {
        self.layout.queue.map_or(3, |q| q.first_row_y)
    }

    /// The drawn pane the movement keys scroll on this screen (the focused one on the
    /// detail screen).
    fn scrolling_pane(&self) -> Option<&PaneMetrics> {
        let scroller = match self.screen {
            Screen::Queue | Screen::Dashboard => return None,
            Screen::Detail => Scroller::Detail(self.detail.as_ref()?.focus),
            Screen::Constraints => Scroller::Constraints(self.detail.as_ref()?.cpane),
            Screen::Diff => Scroller::Diff,
            Screen::Audit => Scroller::Audit,
        };
        self.layout.pane(scroller)
    }

    /// How far the scrolling pane can scroll (no limit before it has been drawn).
    pub(crate) fn scroll_limit(&self) -> usize {
        self.scrolling_pane()
            .map_or(usize::MAX, PaneMetrics::scroll_limit)
    }

    /// Lines a page key scrolls: the pane's height less one line kept for context.
    pub(crate) fn pane_page(&self) -> usize {
        self.scrolling_pane()
            .map_or_else(
                || self.body_rows().saturating_sub(4),
                |p| p.height.saturating_sub(1),
            )
            .max(1)
    }

    /// The pane (of the detail or constraints screen) drawn under a screen position.
    pub(crate) fn pane_at(&self, column: u16, row: u16) -> Option<Scroller> {
        let at = ratatui::layout::Position { x: column, y: row };
        self.layout
            .panes
            .iter()
            .find(|p| p.area.contains(at))
            .map(|p| p.scroller)
    }
}
