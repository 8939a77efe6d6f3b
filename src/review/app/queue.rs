//! The queue screen's state and handlers: paging, filter, sort, tags, bulk actions.
//!
//! The queue holds one page of rows around the selection; moving past the loaded page asks
//! the fast worker lane for the page around the new selection, so nothing ever loads the whole
//! store.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::{App, DecisionDialog, DetailState, Effect, PreviewState, Screen};
use crate::review::action::Action;
use crate::review::filter::Filter;
use crate::review::source::{DecisionKind, ItemId, QueuePage, QueueRow, Sort, Status};
use crate::review::worker::Request;

/// What the queue shows.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct QueueState {
    /// The loaded page (shared, so comparing states is cheap).
    pub rows: Arc<Vec<QueueRow>>,
    /// Absolute index of `rows[0]`.
    pub offset: usize,
    pub total: usize,
    pub counts: BTreeMap<Status, usize>,
    /// Absolute index of the selected row.
    pub selected: usize,
    pub filter: Filter,
    pub filter_text: String,
    pub sort: Sort,
    pub tagged: BTreeSet<ItemId>,
    /// Generation and offset of the request whose answer is awaited.
    pub loading: Option<(u64, usize)>,
    pub error: Option<String>,
    /// The selected row's preview.
    pub preview: PreviewState,
    /// What the filter matches, by the check of its main reason (the header's counts).
    pub reasons: Vec<(String, usize)>,
    /// Generation of the reason counts awaited.
    pub reasons_loading: Option<u64>,
    /// The filter the reason counts were asked for.
    pub reasons_for: Option<Filter>,
    /// A `n` (true) or `N` jump waiting for the next page to go on.
    pub jump: Option<bool>,
}

impl QueueState {
    /// The selected row, when it is loaded.
    pub fn selected_row(&self) -> Option<&QueueRow> {
        self.selected
            .checked_sub(self.offset)
            .and_then(|i| self.rows.get(i))
    }
}

impl App {
    /// Asks for the page around the selection.
    pub(crate) fn reload_queue(&mut self) -> Vec<Effect> {
        let generation = self.generation();
        let limit = self.options.page_size.max(1);
        let offset = self.queue.selected.saturating_sub(limit / 2);
        self.queue.loading = Some((generation, offset));
        vec![Effect::Request(Request::Queue {
            generation,
            filter: self.queue.filter.clone(),
            sort: self.queue.sort,
            offset,
            limit,
        })]
    }

    pub(crate) fn on_queue_page(
        &mut self,
        generation: u64,
        result: Result<QueuePage, String>,
    ) -> Vec<Effect> {
        let Some((awaited, offset)) = self.queue.loading else {
            return Vec::new();
        };
        if awaited != generation {
            return Vec::new();
        }
        self.queue.loading = None;
        match result {
            Ok(page) => {
                self.queue.offset = offset;
                self.queue.total = page.total;
                self.queue.counts = page.counts_by_status;
                self.queue.rows = Arc::new(page.rows);
                self.queue.error = None;
                if self.queue.selected >= self.queue.total {
                    self.queue.selected = self.queue.total.saturating_sub(1);
                }
                if self.queue.rows.is_empty() && self.queue.total > 0 {
                    // The page shrank under us: ask again around the clamped selection.
                    return self.reload_queue();
                }
                let mut effects = self.continue_jump();
                effects.extend(self.want_preview());
                return effects;
            }
            Err(e) => {
                self.queue.error = Some(e);
                self.queue.jump = None;
            }
        }
        Vec::new()
    }

    pub(crate) fn set_filter(&mut self, text: &str) -> Vec<Effect> {
        match Filter::parse(text) {
            Ok(filter) => {
                self.queue.filter_text = text.trim().to_string();
                if filter != self.queue.filter {
                    self.queue.filter = filter;
                    self.queue.selected = 0;
                    let mut effects = self.reload_queue();
                    effects.extend(self.reasons_if_stale());
                    return effects;
                }
                self.reasons_if_stale()
            }
            Err(e) => {
                self.error(e.to_string());
                // The filter typed live before the error still holds: count it.
                self.reasons_if_stale()
            }
        }
    }

    pub(crate) fn set_sort(&mut self, sort: Sort) -> Vec<Effect> {
        self.queue.sort = sort;
        self.queue.selected = 0;
        self.reload_queue()
    }

    pub(crate) fn move_selection(&mut self, to: usize) -> Vec<Effect> {
        let last = self.queue.total.saturating_sub(1);
        self.queue.selected = to.min(last);
        // Every row on screen must be loaded: ask for the page around the selection when
        // the visible window runs past the loaded one.
        let visible = self.queue_rows();
        let top = crate::review::view::queue_scroll_top(self.queue.selected, visible);
        let bottom = (top + visible).min(self.queue.total);
        let loaded = self.queue.offset..self.queue.offset + self.queue.rows.len();
        let shown = top..bottom;
        let covered = shown.is_empty()
            || (loaded.contains(&shown.start) && loaded.contains(&(shown.end - 1)));
        if self.queue.total > 0 && !covered {
            return self.reload_queue();
        }
        Vec::new()
    }

    pub(crate) fn open_item(&mut self, id: ItemId) -> Vec<Effect> {
        let generation = self.generation();
        self.detail = Some(DetailState::new(id.clone(), generation));
        self.screen = Screen::Detail;
        vec![Effect::Request(Request::Item { generation, id })]
    }

    pub(crate) fn on_queue_action(&mut self, action: Action) -> Vec<Effect> {
        let page = self.queue_rows().saturating_sub(1).max(1);
        let selected = self.queue.selected;
        match action {
            Action::MoveDown => self.move_selection(selected + 1),
            Action::MoveUp => self.move_selection(selected.saturating_sub(1)),
            Action::PageDown => self.move_selection(selected + page),
            Action::PageUp => self.move_selection(selected.saturating_sub(page)),
            Action::Top => self.move_selection(0),
            Action::Bottom => self.move_selection(usize::MAX),
            Action::Sort => {
                let next = match self.queue.sort {
                    Sort::Age => Sort::Severity,
                    Sort::Severity => Sort::Age,
                };
                self.set_sort(next)
            }
            Action::Back if !self.queue.filter.is_empty() => self.set_filter(""),
            Action::Tag => {
                if let Some(id) = self.queue.selected_row().map(|r| r.id.clone()) {
                    if !self.queue.tagged.remove(&id) {
                        self.queue.tagged.insert(id);
                    }
                    return self.move_selection(selected + 1);
                }
                Vec::new()
            }
            Action::TagAll => {
                let ids: Vec<ItemId> = self.queue.rows.iter().map(|r| r.id.clone()).collect();
                if ids.iter().all(|id| self.queue.tagged.contains(id)) {
                    for id in &ids {
                        self.queue.tagged.remove(id);
                    }
                } else {
                    self.queue.tagged.extend(ids);
                }
                Vec::new()
            }
            Action::Open => match self.queue.selected_row().map(|r| r.id.clone()) {
                Some(id) => self.open_item(id),
                None => Vec::new(),
            },
            Action::Rerun => match self.queue.selected_row().map(|r| r.id.clone()) {
                Some(id) => self.start_rerun(vec![id]),
                None => Vec::new(),
            },
            Action::RerunTagged => self.rerun_tagged(),
            Action::NextFailing => self.jump_failing_item(true, selected + 1),
            Action::PrevFailing => match selected.checked_sub(1) {
                Some(from) => self.jump_failing_item(false, from),
                None => {
                    self.info("no failing item above this one");
                    Vec::new()
                }
            },
            Action::Constraints => self.toggle_constraints(),
            Action::Release | Action::Reject => {
                let Some(id) = self.queue.selected_row().map(|r| r.id.clone()) else {
                    return Vec::new();
                };
                let mut effects = self.open_item(id);
                effects.extend(self.on_detail_action(action));
                effects
            }
            Action::RejectTagged => {
                self.open_bulk_reject();
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    pub(crate) fn rerun_tagged(&mut self) -> Vec<Effect> {
        if self.queue.tagged.is_empty() {
            self.info("no tagged items: tag items with space first");
            return Vec::new();
        }
        let ids: Vec<ItemId> = self.queue.tagged.iter().cloned().collect();
        self.start_rerun(ids)
    }

    fn open_bulk_reject(&mut self) {
        if self.queue.tagged.is_empty() {
            self.info("no tagged items: tag items with space first");
            return;
        }
        let targets: Vec<ItemId> = self.queue.tagged.iter().cloned().collect();
        let anomalies = self
            .queue
            .rows
            .iter()
            .filter(|r| self.queue.tagged.contains(&r.id))
            .map(|r| r.anomaly_count)
            .sum();
        self.overlay = Some(super::Overlay::Decision(DecisionDialog::new(
            targets,
            DecisionKind::Reject,
            &self.reason_codes,
            anomalies,
        )));
    }

    pub(crate) fn click_queue_row(&mut self, row: u16) -> Vec<Effect> {
        // The table's rows start below the header line, its border and its column titles.
        let first = self.queue_first_row();
        if row < first {
            return Vec::new();
        }
        let visible = self.queue_rows();
        let top = crate::review::view::queue_scroll_top(self.queue.selected, visible);
        self.move_selection(top + usize::from(row - first))
    }
}
