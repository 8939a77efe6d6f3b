//! The constraints screen's state and handlers: one row per constraint and authority claim of
//! the open item, the evidence of the selected row, and the summary scrolled to it.
//!
//! It is where an item opens when its consistency, pinned or authority check failed, and one
//! key away otherwise. The selection moves through rows (`n`/`N` through the failing ones);
//! selecting a row resets the evidence pane and makes the summary pane follow the row's
//! sentence again, until the reviewer scrolls the summary by hand. After a rerun, rows are
//! compared by kind and id with the item as it was before, so a row whose status changed is
//! marked and the selection stays on the same constraint.

use super::{App, Effect, Screen};
use crate::review::action::Action;
use crate::review::source::{CheckName, CheckStatus, ConstraintStatus, ItemDetail};

/// A pane of the constraints screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CPane {
    /// The rows.
    List,
    /// The selected row's evidence, side by side.
    Evidence,
    /// The summary, scrolled to the selected row's sentence.
    Summary,
}

impl CPane {
    pub const ALL: [CPane; 3] = [CPane::List, CPane::Evidence, CPane::Summary];

    pub fn index(self) -> usize {
        match self {
            CPane::List => 0,
            CPane::Evidence => 1,
            CPane::Summary => 2,
        }
    }

    fn step(self, forward: bool) -> CPane {
        let n = self.index() + if forward { 1 } else { 2 };
        CPane::ALL[n % 3]
    }
}

/// Whether an item opens on the constraints screen: a check about constraints or authority
/// did not pass.
pub fn opens_on_constraints(item: &ItemDetail) -> bool {
    item.checks.iter().any(|c| {
        matches!(
            c.check,
            CheckName::Consistency
                | CheckName::Conflicts
                | CheckName::Pinned
                | CheckName::Authority
        ) && matches!(c.status, CheckStatus::Fail | CheckStatus::Error)
    })
}

/// For each row of `item`, its status before the last rerun when that differs (`None`: the
/// same, or no rerun); a row new since then reads as `Some(NotChecked)`.
pub fn changed_since(
    before: Option<&ItemDetail>,
    item: &ItemDetail,
) -> Vec<Option<ConstraintStatus>> {
    let Some(before) = before else {
        return vec![None; item.constraints.len()];
    };
    item.constraints
        .iter()
        .map(|row| {
            let old = before
                .constraints
                .iter()
                .find(|b| b.kind == row.kind && b.id == row.id)
                .map(|b| b.status.clone())
                .unwrap_or(ConstraintStatus::NotChecked);
            (old != row.status).then_some(old)
        })
        .collect()
}

impl App {
    /// Switches the open item between the detail and the constraints screens (from the
    /// queue: opens the selected item on the constraints screen).
    pub(crate) fn toggle_constraints(&mut self) -> Vec<Effect> {
        if self.screen == Screen::Queue {
            let Some(id) = self.queue.selected_row().map(|r| r.id.clone()) else {
                return Vec::new();
            };
            let effects = self.open_item(id);
            self.show_item_screen(Screen::Constraints);
            return effects;
        }
        let next = if self.screen == Screen::Constraints {
            Screen::Detail
        } else {
            Screen::Constraints
        };
        self.show_item_screen(next);
        Vec::new()
    }

    /// Shows the open item on `screen` (detail or constraints) and remembers it as the
    /// screen the diff and audit screens go back to.
    pub(crate) fn show_item_screen(&mut self, screen: Screen) {
        if let Some(detail) = self.detail.as_mut() {
            detail.item_screen = screen;
            self.screen = screen;
        }
    }

    /// Moves the selection to row `to` (clamped), resetting the evidence scroll and making
    /// the summary follow the row again.
    fn select_constraint(&mut self, to: usize) {
        let Some(detail) = self.detail.as_mut() else {
            return;
        };
        let rows = detail.item.as_ref().map_or(0, |i| i.constraints.len());
        let to = to.min(rows.saturating_sub(1));
        if to != detail.constraint {
            detail.constraint = to;
            detail.cscroll[CPane::Evidence.index()] = 0;
        }
        detail.summary_follows = true;
    }

    /// The next (or previous) failing row after the selection; says so when there is none.
    fn jump_failing_constraint(&mut self, forward: bool) {
        let Some(detail) = self.detail.as_ref() else {
            return;
        };
        let Some(item) = detail.item.as_ref() else {
            return;
        };
        let at = detail.constraint;
        let failing = |i: &usize| item.constraints.get(*i).is_some_and(|c| c.status.failing());
        let found = if forward {
            (at + 1..item.constraints.len()).find(failing)
        } else {
            (0..at).rev().find(failing)
        };
        match found {
            Some(i) => {
                self.select_constraint(i);
                if let Some(detail) = self.detail.as_mut() {
                    detail.cpane = CPane::List;
                }
            }
            None => self.info(if forward {
                "no failing constraint below this one"
            } else {
                "no failing constraint above this one"
            }),
        }
    }

    pub(crate) fn on_constraints_action(&mut self, action: Action) -> Vec<Effect> {
        let page = self.pane_page();
        let limit = self.scroll_limit();
        let Some(detail) = self.detail.as_mut() else {
            self.screen = Screen::Queue;
            return Vec::new();
        };
        let delta: Option<isize> = match action {
            Action::MoveDown => Some(1),
            Action::MoveUp => Some(-1),
            Action::PageDown => Some(page as isize),
            Action::PageUp => Some(-(page as isize)),
            Action::Top => Some(isize::MIN / 2),
            Action::Bottom => Some(isize::MAX / 2),
            _ => None,
        };
        if let Some(delta) = delta {
            match detail.cpane {
                CPane::List => {
                    let to = detail.constraint.saturating_add_signed(delta);
                    self.select_constraint(to);
                }
                pane => {
                    if pane == CPane::Summary {
                        detail.summary_follows = false;
                    }
                    let scroll = &mut detail.cscroll[pane.index()];
                    *scroll = scroll.saturating_add_signed(delta).min(limit);
                }
            }
            return Vec::new();
        }
        match action {
            Action::NextPane | Action::PrevPane => {
                detail.cpane = detail.cpane.step(action == Action::NextPane);
                Vec::new()
            }
            Action::Open => {
                detail.cpane = match detail.cpane {
                    CPane::List => CPane::Evidence,
                    _ => CPane::List,
                };
                Vec::new()
            }
            Action::NextFailing | Action::PrevFailing => {
                self.jump_failing_constraint(action == Action::NextFailing);
                Vec::new()
            }
            Action::Constraints => self.toggle_constraints(),
            _ => self.on_detail_action(action),
        }
    }

    /// After a rerun replaced the open item: keep the selection on the same constraint.
    pub(crate) fn keep_constraint_selection(&mut self) {
        let Some(detail) = self.detail.as_mut() else {
            return;
        };
        let (Some(before), Some(item)) = (detail.before_rerun.as_ref(), detail.item.as_ref())
        else {
            return;
        };
        let Some(selected) = before.constraints.get(detail.constraint) else {
            return;
        };
        if let Some(i) = item
            .constraints
            .iter()
            .position(|c| c.kind == selected.kind && c.id == selected.id)
        {
            detail.constraint = i;
        }
    }
}
