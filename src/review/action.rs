//! What the user wants: the vocabulary of the keymap, the help overlay and the footer.
//!
//! An [`Action`] is named by intent, not by key, so the same action works from a key, the
//! `:` command line or the mouse, and the keymap file names actions by [`Action::name`].
//! [`Action::ALL`] fixes the order the help overlay lists them in.

use std::fmt;

/// Something the user asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Action {
    MoveUp,
    MoveDown,
    PageUp,
    PageDown,
    Top,
    Bottom,
    Open,
    Back,
    NextPane,
    PrevPane,
    Zoom,
    Filter,
    Command,
    Sort,
    Tag,
    TagAll,
    Rerun,
    RerunTagged,
    Release,
    Reject,
    RejectTagged,
    Reveal,
    ToggleDiff,
    Constraints,
    NextFailing,
    PrevFailing,
    Audit,
    Dashboard,
    Help,
    Quit,
}

impl Action {
    /// Every action, in help-overlay order.
    pub const ALL: [Action; 30] = [
        Action::MoveUp,
        Action::MoveDown,
        Action::PageUp,
        Action::PageDown,
        Action::Top,
        Action::Bottom,
        Action::Open,
        Action::Back,
        Action::NextPane,
        Action::PrevPane,
        Action::Zoom,
        Action::Filter,
        Action::Command,
        Action::Sort,
        Action::Tag,
        Action::TagAll,
        Action::Rerun,
        Action::RerunTagged,
        Action::Release,
        Action::Reject,
        Action::RejectTagged,
        Action::Reveal,
        Action::ToggleDiff,
        Action::Constraints,
        Action::NextFailing,
        Action::PrevFailing,
        Action::Audit,
        Action::Dashboard,
        Action::Help,
        Action::Quit,
    ];

    /// The name used in keymap files (`move_down`, `reject_tagged`…).
    pub fn name(self) -> &'static str {
        match self {
            Action::MoveUp => "move_up",
            Action::MoveDown => "move_down",
            Action::PageUp => "page_up",
            Action::PageDown => "page_down",
            Action::Top => "top",
            Action::Bottom => "bottom",
            Action::Open => "open",
            Action::Back => "back",
            Action::NextPane => "next_pane",
            Action::PrevPane => "prev_pane",
            Action::Zoom => "zoom",
            Action::Filter => "filter",
            Action::Command => "command",
            Action::Sort => "sort",
            Action::Tag => "tag",
            Action::TagAll => "tag_all",
            Action::Rerun => "rerun",
            Action::RerunTagged => "rerun_tagged",
            Action::Release => "release",
            Action::Reject => "reject",
            Action::RejectTagged => "reject_tagged",
            Action::Reveal => "reveal",
            Action::ToggleDiff => "toggle_diff",
            Action::Constraints => "constraints",
            Action::NextFailing => "next_failing",
            Action::PrevFailing => "prev_failing",
            Action::Audit => "audit",
            Action::Dashboard => "dashboard",
            Action::Help => "help",
            Action::Quit => "quit",
        }
    }

    /// One line for the help overlay.
    pub fn describe(self) -> &'static str {
        match self {
            Action::MoveUp => "move up",
            Action::MoveDown => "move down",
            Action::PageUp => "page up",
            Action::PageDown => "page down",
            Action::Top => "go to the top",
            Action::Bottom => "go to the bottom",
            Action::Open => "open the item / jump to the finding",
            Action::Back => "back / close",
            Action::NextPane => "next pane / next diff",
            Action::PrevPane => "previous pane / previous diff",
            Action::Zoom => "zoom the focused pane",
            Action::Filter => "filter the queue",
            Action::Command => "command line (:release :reject :rerun :filter)",
            Action::Sort => "sort by age / severity",
            Action::Tag => "tag or untag the item",
            Action::TagAll => "tag every item on the page",
            Action::Rerun => "rerun the checks",
            Action::RerunTagged => "rerun the checks of tagged items",
            Action::Release => "release (decision dialog)",
            Action::Reject => "reject (decision dialog)",
            Action::RejectTagged => "reject every tagged item",
            Action::Reveal => "reveal a masked secret (audited)",
            Action::ToggleDiff => "diffs: summary, claims, report, pinned",
            Action::Constraints => "constraints: why each passed/failed",
            Action::NextFailing => "next failing item / constraint",
            Action::PrevFailing => "previous failing item / constraint",
            Action::Audit => "audit view: receipts and chain",
            Action::Dashboard => "dashboard of the store's history",
            Action::Help => "this help",
            Action::Quit => "quit",
        }
    }

    /// Whether the action records a decision (hidden in read-only mode).
    pub fn decides(self) -> bool {
        matches!(
            self,
            Action::Release | Action::Reject | Action::RejectTagged
        )
    }

    /// Looks an action up by [`Action::name`].
    pub fn from_name(name: &str) -> Option<Action> {
        Action::ALL.into_iter().find(|a| a.name() == name)
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_unique() {
        for a in Action::ALL {
            assert_eq!(Action::from_name(a.name()), Some(a));
        }
        let mut names: Vec<_> = Action::ALL.iter().map(|a| a.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), Action::ALL.len());
    }
}
