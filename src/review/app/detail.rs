//! The detail, diff and audit screens' state and handlers.
//!
//! One item is open at a time. Its three panes (sources, summary, checks) scroll on their
//! own; in the checks pane the selection moves through *findings*, and selecting one scrolls
//! the summary and the source messages to where it is. Revealed secrets live here and are
//! dropped with the item when the reviewer goes back to the queue.

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::Arc;

use super::{App, AuditState, CPane, DecisionDialog, Effect, Overlay, RevealPrompt, Screen};
use crate::review::action::Action;
use crate::review::source::{
    CheckName, CheckStatus, DecisionKind, ItemDetail, ItemId, RerunOutcome, SpanKind,
};
use crate::review::view::Scroller;
use crate::sanitize::anomaly_count;

/// A pane of the detail screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pane {
    Sources,
    Summary,
    Checks,
}

impl Pane {
    pub const ALL: [Pane; 3] = [Pane::Sources, Pane::Summary, Pane::Checks];

    pub fn index(self) -> usize {
        match self {
            Pane::Sources => 0,
            Pane::Summary => 1,
            Pane::Checks => 2,
        }
    }

    fn step(self, forward: bool) -> Pane {
        let n = self.index() + if forward { 1 } else { 2 };
        Pane::ALL[n % 3]
    }
}

/// Which diff the diff screen shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffKind {
    /// This summary against the previous summary of the same task.
    Summary,
    /// Each claim's predicate against the canonical predicate.
    Claims,
    /// The report before the last rerun against the report after it.
    Report,
    /// Each pinned constraint against what the returned context carries.
    Pinned,
}

impl DiffKind {
    pub const ALL: [DiffKind; 4] = [
        DiffKind::Summary,
        DiffKind::Claims,
        DiffKind::Report,
        DiffKind::Pinned,
    ];

    pub fn title(self) -> &'static str {
        match self {
            DiffKind::Summary => "summary vs previous",
            DiffKind::Claims => "claims vs canonical",
            DiffKind::Report => "report before/after rerun",
            DiffKind::Pinned => "pinned vs returned",
        }
    }

    fn step(self, forward: bool) -> DiffKind {
        let i = DiffKind::ALL.iter().position(|k| *k == self).unwrap_or(0);
        let n = if forward { i + 1 } else { i + 3 };
        DiffKind::ALL[n % 4]
    }
}

/// Where a rerun of the open item stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RerunState {
    Idle,
    Running { generation: u64 },
    Done(Arc<RerunOutcome>),
    Failed(String),
}

/// Something the checks pane lets the reviewer select.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub check: CheckName,
    /// Index of the constraint row, or `None` for the check's own line.
    pub constraint: Option<usize>,
    pub summary_range: Option<Range<usize>>,
    pub source_message_id: Option<String>,
    /// The masked secret this finding is about, if any.
    pub secret: Option<(String, String)>,
}

/// The checks pane's selectable lines, in display order.
pub fn findings(item: &ItemDetail) -> Vec<Finding> {
    let span_for = |check: CheckName| {
        item.summary_spans.iter().find(|s| {
            matches!(
                (check, &s.kind),
                (CheckName::Secrets, SpanKind::MaskedSecret { .. })
                    | (CheckName::Authority, SpanKind::Authority)
                    | (CheckName::Pinned, SpanKind::PinnedMatch { .. })
                    | (
                        CheckName::Consistency | CheckName::Conflicts,
                        SpanKind::Conflict { .. }
                    )
            )
        })
    };
    let mut out = Vec::new();
    for check in &item.checks {
        let span = span_for(check.check).filter(|_| check.status != CheckStatus::Pass);
        let secret = span.and_then(|s| match &s.kind {
            SpanKind::MaskedSecret {
                finding_id,
                rule_id,
                ..
            } => Some((finding_id.clone(), rule_id.clone())),
            _ => None,
        });
        out.push(Finding {
            check: check.check,
            constraint: None,
            summary_range: span.map(|s| s.range.clone()),
            source_message_id: None,
            secret,
        });
        for (i, row) in check.constraints.iter().enumerate() {
            out.push(Finding {
                check: check.check,
                constraint: Some(i),
                summary_range: row.summary_range.clone(),
                source_message_id: row.source_message_id.clone(),
                secret: None,
            });
        }
    }
    out
}

/// Anomalies the sanitizer finds in the item's summary and source messages.
pub fn item_anomalies(item: &ItemDetail) -> usize {
    anomaly_count(&item.summary_text)
        + item
            .sources
            .iter()
            .map(|s| anomaly_count(&s.content))
            .sum::<usize>()
}

/// Secret values the reviewer revealed, by finding id. Its `Debug` never prints a value, so
/// a debug dump of the state cannot leak one.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Revealed(BTreeMap<String, String>);

impl Revealed {
    pub fn get(&self, finding_id: &str) -> Option<&String> {
        self.0.get(finding_id)
    }

    pub fn insert(&mut self, finding_id: String, value: String) {
        self.0.insert(finding_id, value);
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl std::fmt::Debug for Revealed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.0.keys().map(|k| format!("{k}: <redacted>")))
            .finish()
    }
}

/// The open item and how it is being looked at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DetailState {
    pub id: ItemId,
    pub generation: u64,
    /// Shared, so comparing the state before and after an update costs a pointer compare.
    pub item: Option<Arc<ItemDetail>>,
    pub error: Option<String>,
    pub focus: Pane,
    /// First visible line of each pane.
    pub scroll: [usize; 3],
    pub zoom: bool,
    /// Selected finding in the checks pane.
    pub finding: usize,
    /// Secret values the reviewer revealed, by finding id.
    pub revealed: Revealed,
    pub rerun: RerunState,
    pub diff: DiffKind,
    pub diff_scroll: usize,
    pub audit: AuditState,
    pub audit_scroll: usize,
    /// A decision asked for before the item arrived, with `:release REASON NOTE` words.
    pub pending_decision: Option<(DecisionKind, Option<String>, String)>,
    /// The item screen the diff and audit screens go back to (detail or constraints).
    pub item_screen: Screen,
    /// Selected row of the constraints screen.
    pub constraint: usize,
    /// Focused pane of the constraints screen.
    pub cpane: CPane,
    /// First visible line of each constraints pane (the list follows its selection).
    pub cscroll: [usize; 3],
    /// Whether the constraints screen's summary follows the selected row's sentence.
    pub summary_follows: bool,
    /// The item as it was before the last rerun of it, to mark what changed.
    pub before_rerun: Option<Arc<ItemDetail>>,
}

impl DetailState {
    pub fn new(id: ItemId, generation: u64) -> DetailState {
        DetailState {
            id,
            generation,
            item: None,
            error: None,
            focus: Pane::Summary,
            scroll: [0; 3],
            zoom: false,
            finding: 0,
            revealed: Revealed::default(),
            rerun: RerunState::Idle,
            diff: DiffKind::Summary,
            diff_scroll: 0,
            audit: AuditState::Idle,
            audit_scroll: 0,
            pending_decision: None,
            item_screen: Screen::Detail,
            constraint: 0,
            cpane: CPane::List,
            cscroll: [0; 3],
            summary_follows: true,
            before_rerun: None,
        }
    }
}

impl App {
    pub(crate) fn on_item(
        &mut self,
        generation: u64,
        result: Result<ItemDetail, String>,
    ) -> Vec<Effect> {
        let Some(detail) = self.detail.as_mut().filter(|d| d.generation == generation) else {
            return Vec::new();
        };
        match result {
            Ok(item) => {
                let all = findings(&item);
                let first = detail.item.is_none();
                if first {
                    // Start on the first finding that is not a passing check.
                    detail.finding = all
                        .iter()
                        .position(|f| {
                            item.checks
                                .iter()
                                .find(|c| c.check == f.check)
                                .is_some_and(|c| c.status != CheckStatus::Pass)
                        })
                        .unwrap_or(0);
                }
                detail.finding = detail.finding.min(all.len().saturating_sub(1));
                detail.constraint = detail
                    .constraint
                    .min(item.constraints.len().saturating_sub(1));
                let constraints_first = first
                    && self.screen == Screen::Detail
                    && super::constraints::opens_on_constraints(&item);
                detail.item = Some(Arc::new(item));
                detail.error = None;
                if constraints_first {
                    detail.item_screen = Screen::Constraints;
                    self.screen = Screen::Constraints;
                }
                if let Some((kind, reason, note)) = detail.pending_decision.take() {
                    self.open_decision(kind);
                    self.prefill_dialog(reason.as_deref(), &note);
                }
            }
            Err(e) => detail.error = Some(e),
        }
        Vec::new()
    }

    pub(crate) fn open_decision(&mut self, kind: DecisionKind) {
        let Some(detail) = self.detail.as_mut() else {
            return;
        };
        let Some(item) = detail.item.as_ref() else {
            detail.pending_decision = Some((kind, None, String::new()));
            return;
        };
        let mut dialog = DecisionDialog::new(
            vec![item.id.clone()],
            kind,
            &self.reason_codes,
            item_anomalies(item),
        );
        dialog.report_sha256 = Some(item.report_sha256.clone());
        dialog.approvals = item.approvals.clone();
        self.overlay = Some(Overlay::Decision(dialog));
    }

    fn selected_secret(&self) -> Option<(String, String)> {
        let detail = self.detail.as_ref()?;
        let item = detail.item.as_ref()?;
        let chosen = findings(item)
            .get(detail.finding)
            .and_then(|f| f.secret.clone());
        chosen.or_else(|| {
            item.summary_spans.iter().find_map(|s| match &s.kind {
                SpanKind::MaskedSecret {
                    finding_id,
                    rule_id,
                    ..
                } => Some((finding_id.clone(), rule_id.clone())),
                _ => None,
            })
        })
    }

    /// Scrolls summary and sources to the selected finding, where the last frame drew it.
    fn follow_finding(&mut self) {
        let Some(detail) = self.detail.as_mut() else {
            return;
        };
        let Some(lines) = self.layout.findings.get(detail.finding) else {
            return;
        };
        if let Some(line) = lines.summary {
            detail.scroll[Pane::Summary.index()] = line;
        }
        if let Some(line) = lines.source {
            detail.scroll[Pane::Sources.index()] = line;
        }
    }

    pub(crate) fn on_detail_action(&mut self, action: Action) -> Vec<Effect> {
        if self.detail.is_none() {
            self.screen = Screen::Queue;
            return Vec::new();
        }
        let page = self.pane_page() as isize;
        let delta = match action {
            Action::MoveDown => 1,
            Action::MoveUp => -1,
            Action::PageDown => page,
            Action::PageUp => -page,
            Action::Top => isize::MIN / 2,
            Action::Bottom => isize::MAX / 2,
            _ => return self.on_detail_command(action),
        };
        self.scroll_detail(delta);
        Vec::new()
    }

    /// Moves whatever the detail screen scrolls: the diff, the audit view, the focused finding
    /// (which the other panes follow), or the focused pane.
    fn scroll_detail(&mut self, delta: isize) {
        let limit = self.scroll_limit();
        let screen = self.screen;
        let Some(detail) = self.detail.as_mut() else {
            return;
        };
        let finding_count = detail.item.as_ref().map_or(0, |i| findings(i).len());
        let target = match screen {
            Screen::Diff => &mut detail.diff_scroll,
            Screen::Audit => &mut detail.audit_scroll,
            _ if detail.focus == Pane::Checks => &mut detail.finding,
            _ => &mut detail.scroll[detail.focus.index()],
        };
        *target = target.saturating_add_signed(delta);
        if screen == Screen::Detail && detail.focus == Pane::Checks {
            detail.finding = detail.finding.min(finding_count.saturating_sub(1));
            self.follow_finding();
        } else {
            *target = (*target).min(limit);
        }
    }

    /// Every detail-screen action that is not a scroll.
    fn on_detail_command(&mut self, action: Action) -> Vec<Effect> {
        let screen = self.screen;
        let Some(detail) = self.detail.as_mut() else {
            return Vec::new();
        };
        match (screen, action) {
            (Screen::Diff, Action::NextPane | Action::PrevPane) => {
                detail.diff = detail.diff.step(action == Action::NextPane);
                detail.diff_scroll = 0;
                Vec::new()
            }
            (Screen::Diff | Screen::Audit, Action::Back) => {
                self.screen = detail.item_screen;
                Vec::new()
            }
            (Screen::Diff, Action::ToggleDiff) => {
                self.screen = detail.item_screen;
                Vec::new()
            }
            (_, Action::Constraints) => self.toggle_constraints(),
            (_, Action::ToggleDiff) => {
                self.screen = Screen::Diff;
                Vec::new()
            }
            (_, Action::Back) => {
                self.detail = None;
                self.screen = Screen::Queue;
                Vec::new()
            }
            (_, Action::NextPane | Action::PrevPane) => {
                detail.focus = detail.focus.step(action == Action::NextPane);
                Vec::new()
            }
            (_, Action::Zoom) => {
                detail.zoom = !detail.zoom;
                Vec::new()
            }
            (_, Action::Open) => {
                if detail.focus != Pane::Checks {
                    detail.focus = Pane::Checks;
                }
                self.follow_finding();
                Vec::new()
            }
            (_, Action::Audit) => self.open_audit(),
            (_, Action::Rerun) => {
                let id = detail.id.clone();
                self.start_rerun(vec![id])
            }
            (_, Action::RerunTagged) => self.rerun_tagged(),
            (_, Action::Release) => {
                self.open_decision(DecisionKind::Release);
                Vec::new()
            }
            (_, Action::Reject) => {
                self.open_decision(DecisionKind::Reject);
                Vec::new()
            }
            (_, Action::Reveal) => {
                self.open_reveal();
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    /// Asks to reveal the selected masked secret, or says there is none.
    fn open_reveal(&mut self) {
        match self.selected_secret() {
            Some((finding_id, rule_id)) => {
                self.overlay = Some(Overlay::Reveal(RevealPrompt {
                    finding_id,
                    rule_id,
                }));
            }
            None => self.info("this item has no masked secret to reveal"),
        }
    }

    pub(crate) fn click_pane(&mut self, column: u16, row: u16) {
        let pane = self.pane_at(column, row);
        let Some(detail) = self.detail.as_mut() else {
            return;
        };
        match pane {
            Some(Scroller::Detail(pane)) => detail.focus = pane,
            Some(Scroller::Constraints(pane)) => detail.cpane = pane,
            _ => {}
        }
    }
}
