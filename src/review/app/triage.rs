//! The queue as a triage surface, and the dashboard: the focused row's preview, counts by
//! reason for the header, `n`/`N` jumps between failing items, and the dashboard screen.
//!
//! Everything here is read from the fast lane and shown when it arrives: a preview is asked
//! for whenever the queue's selection lands on a loaded row it has no preview of (newest wins,
//! so holding `j` asks for one preview, not one per row); reason counts when the filter
//! changes (once the filter line closes, not per typed key) and after writes, not on every
//! page; the dashboard each time it is opened (the
//! source keeps running totals, so reopening costs little) with the last numbers kept on
//! screen while new ones load. A jump past the loaded page moves there, waits for the page and
//! goes on from its first row.

use std::sync::Arc;

use super::{App, Effect, Screen};
use crate::review::action::Action;
use crate::review::source::{Dashboard, ItemId, ItemPreview};
use crate::review::worker::Request;

/// The queue's preview of the selected row.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum PreviewState {
    #[default]
    Idle,
    Loading {
        generation: u64,
        id: ItemId,
    },
    Ready(Arc<ItemPreview>),
    Failed {
        id: ItemId,
        error: String,
    },
}

impl PreviewState {
    fn is_for(&self, id: &ItemId) -> bool {
        match self {
            PreviewState::Idle => false,
            PreviewState::Loading { id: of, .. } | PreviewState::Failed { id: of, .. } => of == id,
            PreviewState::Ready(p) => &p.id == id,
        }
    }
}

/// Where the dashboard stands.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum DashboardState {
    #[default]
    Idle,
    /// New numbers are on their way; the last ones stay on screen.
    Loading {
        generation: u64,
        last: Option<Arc<Dashboard>>,
    },
    Ready(Arc<Dashboard>),
    Failed(String),
}

impl DashboardState {
    /// The numbers to draw, if any have arrived.
    pub fn numbers(&self) -> Option<&Dashboard> {
        match self {
            DashboardState::Loading { last, .. } => last.as_deref(),
            DashboardState::Ready(d) => Some(d),
            _ => None,
        }
    }
}

impl App {
    /// Asks for the selected row's preview when the queue shows one it has none of.
    pub(crate) fn want_preview(&mut self) -> Vec<Effect> {
        if self.screen != Screen::Queue || self.overlay.is_some() {
            return Vec::new();
        }
        let Some(id) = self.queue.selected_row().map(|r| r.id.clone()) else {
            return Vec::new();
        };
        if self.queue.preview.is_for(&id) {
            return Vec::new();
        }
        let generation = self.generation();
        self.queue.preview = PreviewState::Loading {
            generation,
            id: id.clone(),
        };
        vec![Effect::Request(Request::Preview { generation, id })]
    }

    pub(crate) fn on_preview(&mut self, generation: u64, result: Result<ItemPreview, String>) {
        let PreviewState::Loading {
            generation: awaited,
            id,
        } = &self.queue.preview
        else {
            return;
        };
        if *awaited != generation {
            return;
        }
        self.queue.preview = match result {
            Ok(preview) => PreviewState::Ready(Arc::new(preview)),
            Err(error) => PreviewState::Failed {
                id: id.clone(),
                error,
            },
        };
    }

    /// Asks for the header's counts by reason under the current filter.
    pub(crate) fn reload_reasons(&mut self) -> Vec<Effect> {
        let generation = self.generation();
        self.queue.reasons_loading = Some(generation);
        self.queue.reasons_for = Some(self.queue.filter.clone());
        vec![Effect::Request(Request::Reasons {
            generation,
            filter: self.queue.filter.clone(),
        })]
    }

    /// The counts by reason when the filter changed since they were asked for, except while
    /// a filter is being typed (each key would scan the queue again): they follow when the
    /// filter line closes.
    pub(crate) fn reasons_if_stale(&mut self) -> Vec<Effect> {
        let typing = matches!(self.overlay, Some(super::Overlay::Filter(_)));
        if typing || self.queue.reasons_for.as_ref() == Some(&self.queue.filter) {
            return Vec::new();
        }
        self.reload_reasons()
    }

    pub(crate) fn on_reasons(
        &mut self,
        generation: u64,
        result: Result<Vec<(String, usize)>, String>,
    ) {
        if self.queue.reasons_loading != Some(generation) {
            return;
        }
        self.queue.reasons_loading = None;
        match result {
            Ok(reasons) => self.queue.reasons = reasons,
            Err(e) => self.error(format!("could not count the queue by reason: {e}")),
        }
    }

    /// Moves the queue's selection to the next (or previous) failing item, loading pages on
    /// the way when the loaded one has none.
    pub(crate) fn jump_failing_item(&mut self, forward: bool, from: usize) -> Vec<Effect> {
        let q = &self.queue;
        let loaded = q.offset..q.offset + q.rows.len();
        let failing = |abs: &usize| {
            abs.checked_sub(q.offset)
                .and_then(|i| q.rows.get(i))
                .is_some_and(|r| r.severity.failing())
        };
        let found = if forward {
            (from.max(loaded.start)..loaded.end).find(failing)
        } else {
            (loaded.start..=from.min(loaded.end.saturating_sub(1)))
                .rev()
                .find(failing)
                .filter(|_| !loaded.is_empty())
        };
        if let Some(abs) = found {
            self.queue.jump = None;
            return self.move_selection(abs);
        }
        let beyond = if forward {
            (loaded.end < q.total).then_some(loaded.end)
        } else {
            loaded.start.checked_sub(1)
        };
        match beyond {
            Some(next) => {
                self.queue.jump = Some(forward);
                self.queue.selected = next;
                self.reload_queue()
            }
            None => {
                self.queue.jump = None;
                self.info(if forward {
                    "no failing item below this one"
                } else {
                    "no failing item above this one"
                });
                Vec::new()
            }
        }
    }

    /// A page arrived while a jump was looking for a failing item: go on from the selection.
    pub(crate) fn continue_jump(&mut self) -> Vec<Effect> {
        match self.queue.jump.take() {
            Some(forward) => self.jump_failing_item(forward, self.queue.selected),
            None => Vec::new(),
        }
    }

    /// Opens the dashboard (from any screen) and asks for fresh numbers.
    pub(crate) fn open_dashboard(&mut self) -> Vec<Effect> {
        if self.screen != Screen::Dashboard {
            self.dashboard_from = self.screen;
        }
        self.screen = Screen::Dashboard;
        let generation = self.generation();
        let last = match std::mem::take(&mut self.dashboard) {
            DashboardState::Ready(d) => Some(d),
            DashboardState::Loading { last, .. } => last,
            _ => None,
        };
        self.dashboard = DashboardState::Loading { generation, last };
        vec![Effect::Request(Request::Dashboard { generation })]
    }

    pub(crate) fn on_dashboard(&mut self, generation: u64, result: Result<Dashboard, String>) {
        if !matches!(&self.dashboard, DashboardState::Loading { generation: g, .. } if *g == generation)
        {
            return;
        }
        self.dashboard = match result {
            Ok(d) => DashboardState::Ready(Arc::new(d)),
            Err(e) => DashboardState::Failed(e),
        };
    }

    pub(crate) fn on_dashboard_action(&mut self, action: Action) -> Vec<Effect> {
        match action {
            Action::Back | Action::Dashboard => {
                self.screen = match self.dashboard_from {
                    Screen::Dashboard => Screen::Queue,
                    // An item screen without its item (it was closed meanwhile) is the queue.
                    screen if screen != Screen::Queue && self.detail.is_none() => Screen::Queue,
                    screen => screen,
                };
                Vec::new()
            }
            Action::Rerun => self.open_dashboard(),
            _ => Vec::new(),
        }
    }
}
