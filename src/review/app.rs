//! The reviewer's state and the one function that changes it.
//!
//! [`App::update`] takes an [`Event`] or an [`Action`] and answers with an [`Update`]: the
//! [`Effect`]s it asks for (requests for the fast worker lane, jobs for the slow one, a
//! cancellation, quitting) and whether the state changed, which is exactly when the screen
//! must be drawn again. Nothing else mutates the state, nothing here does I/O, and every read
//! and job carries a generation so an answer that has been overtaken is dropped. Keys go
//! through the keymap, except while a text field (filter, command line, decision note) has the
//! focus, where they are typed. The screens' handlers live in the submodules; what the app
//! knows of the drawn layout comes from [`Event::Layout`] after each draw.

mod constraints;
mod detail;
mod dialog;
mod jobs;
mod layout;
mod queue;
mod triage;

use std::collections::BTreeSet;

use crossterm::event::{KeyEvent, MouseEvent};

pub use constraints::{changed_since, opens_on_constraints, CPane};
pub use detail::{findings, item_anomalies, DetailState, DiffKind, Finding, Pane, RerunState};
pub use dialog::{DecisionDialog, DialogField, DialogStage, Input, RevealPrompt};
pub use jobs::{AuditState, RerunJob};
pub use queue::QueueState;
pub use triage::{DashboardState, PreviewState};

use crate::review::action::Action;
use crate::review::event::Event;
use crate::review::keymap::Keymap;
use crate::review::source::{ItemId, ReasonCode};
use crate::review::view::LayoutMetrics;
use crate::review::worker::{Job, JobKind, Request, WorkerResult};

/// Work the state machine asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Send this to the fast lane.
    Request(Request),
    /// Start this on the slow lane (cancelling the running job of its kind).
    Job(Job),
    /// Cancel the slow lane's job of this kind.
    Cancel(JobKind),
    /// Leave the UI.
    Quit,
}

/// What one [`App::update`] did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[must_use = "the effects must be handed out and a change drawn"]
pub struct Update {
    /// Work to hand out, in order.
    pub effects: Vec<Effect>,
    /// Whether the state changed, so the screen must be drawn again.
    pub changed: bool,
}

/// Input to [`App::update`]: something happened, or the user wants something.
#[derive(Debug, Clone)]
pub enum Msg {
    Event(Event),
    Action(Action),
}

impl From<Event> for Msg {
    fn from(e: Event) -> Self {
        Msg::Event(e)
    }
}

impl From<Action> for Msg {
    fn from(a: Action) -> Self {
        Msg::Action(a)
    }
}

/// Fixed facts of the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppOptions {
    /// Hide every decision action.
    pub readonly: bool,
    /// Who records decisions and reveals.
    pub reviewer: String,
    /// "Now" for ages (Unix seconds).
    pub now_unix: i64,
    /// Queue rows fetched per request.
    pub page_size: usize,
}

/// Which screen fills the body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Screen {
    Queue,
    Detail,
    /// The open item's constraints, each with why it passed or failed.
    Constraints,
    Diff,
    Audit,
    Dashboard,
}

/// What floats above the screen and takes the keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Overlay {
    Help,
    Filter(Input),
    Command(Input),
    Decision(DecisionDialog),
    Reveal(RevealPrompt),
}

/// A one-line message for the reviewer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub text: String,
    pub is_error: bool,
}

/// The whole state of the reviewer.
#[derive(Debug, Clone, PartialEq)]
pub struct App {
    pub options: AppOptions,
    pub keymap: Keymap,
    pub size: (u16, u16),
    pub screen: Screen,
    pub overlay: Option<Overlay>,
    pub queue: QueueState,
    pub detail: Option<DetailState>,
    pub reason_codes: Vec<ReasonCode>,
    pub message: Option<Message>,
    /// Items of the rerun job that have not been answered yet.
    pub reruns_pending: BTreeSet<ItemId>,
    /// The rerun job on the slow lane, while it runs.
    pub rerun_job: Option<RerunJob>,
    /// The dashboard's numbers.
    pub dashboard: DashboardState,
    /// The screen the dashboard goes back to.
    pub dashboard_from: Screen,
    /// The layout of the frame last drawn.
    pub layout: LayoutMetrics,
    pub tick: u64,
    pub quit: bool,
    next_generation: u64,
}

impl App {
    /// A fresh reviewer on the queue screen; apply [`App::start`]'s effects to load data.
    pub fn new(options: AppOptions, keymap: Keymap) -> App {
        App {
            options,
            keymap,
            size: (120, 40),
            screen: Screen::Queue,
            overlay: None,
            queue: QueueState::default(),
            detail: None,
            reason_codes: Vec::new(),
            message: None,
            reruns_pending: BTreeSet::new(),
            rerun_job: None,
            dashboard: DashboardState::Idle,
            dashboard_from: Screen::Queue,
            layout: LayoutMetrics::default(),
            tick: 0,
            quit: false,
            next_generation: 0,
        }
    }

    /// The first requests: reason codes, the first queue page and its counts by reason.
    pub fn start(&mut self) -> Vec<Effect> {
        let mut effects = vec![Effect::Request(Request::ReasonCodes)];
        effects.extend(self.reload_queue());
        effects.extend(self.reload_reasons());
        effects
    }

    pub(crate) fn generation(&mut self) -> u64 {
        self.next_generation += 1;
        self.next_generation
    }

    pub(crate) fn info(&mut self, text: impl Into<String>) {
        self.message = Some(Message {
            text: text.into(),
            is_error: false,
        });
    }

    pub(crate) fn error(&mut self, text: impl Into<String>) {
        self.message = Some(Message {
            text: text.into(),
            is_error: true,
        });
    }

    /// Whether an answer from a worker lane is awaited, so a spinner turns (the loop ticks
    /// only then).
    pub fn waiting(&self) -> bool {
        let detail_waiting = self.detail.as_ref().is_some_and(|d| {
            (d.item.is_none() && d.error.is_none())
                || (self.screen == Screen::Audit && matches!(d.audit, AuditState::Loading { .. }))
        });
        let submitting = matches!(
            &self.overlay,
            Some(Overlay::Decision(d)) if d.stage == DialogStage::Submitting
        );
        let dashboard = self.screen == Screen::Dashboard
            && matches!(self.dashboard, DashboardState::Loading { .. });
        self.queue.loading.is_some()
            || !self.reruns_pending.is_empty()
            || detail_waiting
            || submitting
            || dashboard
    }

    /// Rows of the body (screen minus header, status line, footer and borders): the page
    /// sizes before a frame has been drawn.
    pub fn body_rows(&self) -> usize {
        usize::from(self.size.1.saturating_sub(5)).max(1)
    }

    /// The only state mutator. The update reports a change exactly when the state after it
    /// differs from the state before, so the loop draws only then; a layout (describing the
    /// frame already drawn) and a tick while nothing animates never count as one. The large
    /// parts of the state (the queue page, the open item, a rerun's outcome) are shared, so
    /// keeping the state from before costs little.
    pub fn update(&mut self, msg: impl Into<Msg>) -> Update {
        let msg = msg.into();
        match msg {
            Msg::Event(Event::Layout(metrics)) => {
                self.on_layout(*metrics);
                Update::default()
            }
            Msg::Event(Event::Tick) if !self.waiting() => Update::default(),
            Msg::Event(Event::Stopped(_)) => Update::default(),
            msg => {
                let before = self.clone();
                let effects = self.apply(msg);
                Update {
                    changed: *self != before,
                    effects,
                }
            }
        }
    }

    fn apply(&mut self, msg: Msg) -> Vec<Effect> {
        match msg {
            Msg::Action(action) => self.on_action(action),
            Msg::Event(Event::Key(key)) => self.on_key(key),
            Msg::Event(Event::Mouse(mouse)) => self.on_mouse(mouse),
            Msg::Event(Event::Resize(w, h)) => {
                self.size = (w, h);
                Vec::new()
            }
            Msg::Event(Event::Tick) => {
                self.tick = self.tick.wrapping_add(1);
                Vec::new()
            }
            Msg::Event(Event::Worker(result)) => self.on_worker(*result),
            Msg::Event(Event::StoreChanged) => self.reload_queue(),
            Msg::Event(Event::Layout(metrics)) => {
                self.on_layout(*metrics);
                Vec::new()
            }
            Msg::Event(Event::Stopped(_)) => Vec::new(),
        }
    }

    fn on_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        if let Some(effects) = self.on_text_key(key) {
            return effects;
        }
        match self.keymap.action_for(&key) {
            Some(action) => self.on_action(action),
            None => self.on_unmapped_key(key),
        }
    }

    fn on_action(&mut self, action: Action) -> Vec<Effect> {
        let was_audit = self.screen == Screen::Audit;
        let mut effects = self.dispatch(action);
        if was_audit && self.screen != Screen::Audit {
            effects.extend(self.left_audit());
        }
        effects.extend(self.want_preview());
        effects
    }

    fn dispatch(&mut self, action: Action) -> Vec<Effect> {
        self.message = None;
        if self.overlay.is_some() {
            return self.on_overlay_action(action);
        }
        if self.options.readonly && action.decides() {
            self.info("read-only: decisions are hidden (reopen without --readonly to decide)");
            return Vec::new();
        }
        match action {
            Action::Quit => {
                // The loop drops the lanes on quitting, which cancels every slow job.
                self.quit = true;
                vec![Effect::Quit]
            }
            Action::Help => {
                self.overlay = Some(Overlay::Help);
                Vec::new()
            }
            Action::Filter => {
                self.overlay = Some(Overlay::Filter(Input::with_text(&self.queue.filter_text)));
                Vec::new()
            }
            Action::Command => {
                self.overlay = Some(Overlay::Command(Input::default()));
                Vec::new()
            }
            Action::Dashboard if self.screen != Screen::Dashboard => self.open_dashboard(),
            _ => match self.screen {
                Screen::Queue => self.on_queue_action(action),
                Screen::Constraints => self.on_constraints_action(action),
                Screen::Dashboard => self.on_dashboard_action(action),
                Screen::Detail | Screen::Diff | Screen::Audit => self.on_detail_action(action),
            },
        }
    }

    fn on_worker(&mut self, result: WorkerResult) -> Vec<Effect> {
        match result {
            WorkerResult::Queue { generation, result } => self.on_queue_page(generation, result),
            WorkerResult::ReasonCodes(Ok(codes)) => {
                self.reason_codes = codes;
                Vec::new()
            }
            WorkerResult::ReasonCodes(Err(e)) => {
                self.error(format!("could not load reason codes: {e}"));
                Vec::new()
            }
            WorkerResult::Item { generation, result } => self.on_item(generation, result),
            WorkerResult::Preview { generation, result } => {
                self.on_preview(generation, result);
                Vec::new()
            }
            WorkerResult::Reasons { generation, result } => {
                self.on_reasons(generation, result);
                Vec::new()
            }
            WorkerResult::Dashboard { generation, result } => {
                self.on_dashboard(generation, result);
                Vec::new()
            }
            WorkerResult::Audit { generation, result } => {
                self.on_audit(generation, result);
                Vec::new()
            }
            WorkerResult::Rerun {
                generation,
                id,
                result,
            } => self.on_rerun(generation, id, result),
            WorkerResult::Decided { id, result } => self.on_decided(vec![(id, result)]),
            WorkerResult::DecidedMany { results } => self.on_decided(results),
            WorkerResult::Revealed {
                id,
                finding_id,
                result,
            } => {
                self.on_revealed(id, finding_id, result);
                Vec::new()
            }
        }
    }

    fn on_mouse(&mut self, mouse: MouseEvent) -> Vec<Effect> {
        use crossterm::event::{MouseButton, MouseEventKind};
        if self.overlay.is_some() {
            return Vec::new();
        }
        let scroll = match mouse.kind {
            MouseEventKind::ScrollDown => Some(Action::MoveDown),
            MouseEventKind::ScrollUp => Some(Action::MoveUp),
            _ => None,
        };
        if let Some(action) = scroll {
            // The wheel scrolls the pane under the pointer.
            if matches!(self.screen, Screen::Detail | Screen::Constraints) {
                self.click_pane(mouse.column, mouse.row);
            }
            return self.on_action(action);
        }
        match mouse.kind {
            MouseEventKind::Down(MouseButton::Left) => match self.screen {
                Screen::Queue => self.click_queue_row(mouse.row),
                Screen::Detail | Screen::Constraints => {
                    self.click_pane(mouse.column, mouse.row);
                    Vec::new()
                }
                _ => Vec::new(),
            },
            _ => Vec::new(),
        }
    }

    /// Runs a `:` command line.
    pub(crate) fn run_command(&mut self, line: &str) -> Vec<Effect> {
        let mut words = line.split_whitespace();
        let Some(command) = words.next() else {
            return Vec::new();
        };
        let rest: Vec<&str> = words.collect();
        match command {
            "q" | "quit" => self.on_action(Action::Quit),
            "help" => self.on_action(Action::Help),
            "rerun" => self.on_action(Action::Rerun),
            "audit" => self.on_action(Action::Audit),
            "constraints" => self.on_action(Action::Constraints),
            "dashboard" => self.on_action(Action::Dashboard),
            "diff" => self.on_action(Action::ToggleDiff),
            "filter" => self.set_filter(&rest.join(" ")),
            "sort" => match rest.first().copied() {
                Some("age") => self.set_sort(crate::review::source::Sort::Age),
                Some("severity") => self.set_sort(crate::review::source::Sort::Severity),
                _ => {
                    self.error("usage: :sort age|severity");
                    Vec::new()
                }
            },
            "release" | "reject" => {
                let action = if command == "release" {
                    Action::Release
                } else {
                    Action::Reject
                };
                let effects = self.on_action(action);
                self.prefill_dialog(
                    rest.first().copied(),
                    &rest.get(1..).unwrap_or(&[]).join(" "),
                );
                effects
            }
            other => {
                self.error(format!(
                    "unknown command \"{other}\"; try :release, :reject, :rerun, :filter …, :sort, :constraints, :dashboard, :audit, :quit"
                ));
                Vec::new()
            }
        }
    }
}
