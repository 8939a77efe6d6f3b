//! A headless driver: the whole reviewer without a terminal or a thread.
//!
//! [`Headless`] runs [`App::update`] and answers its effects synchronously through
//! [`worker::handle`] and [`worker::run_job`] on the same data source, and draws into a
//! ratatui [`TestBackend`] exactly when the real loop would (after an update that changed the
//! state, then handing the layout back), counting the frames. Snapshot tests, view-model tests
//! and benchmarks drive the UI with it exactly as a user would (keys, actions, mouse, resize)
//! and see exactly what would be drawn. Because effects are answered one at a time,
//! [`Headless::hold`] can keep answers back to show loading states, and [`Headless::release`]
//! delivers them (coalesced, and superseded jobs dropped, as the lanes would). [`live`] runs
//! the real loop and lanes instead, for what only threads can show.

pub mod live;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::Terminal;

use crate::review::app::{App, AppOptions, Effect, Msg};
use crate::review::event::Event;
use crate::review::event_loop;
use crate::review::keymap::Keymap;
use crate::review::source::ReviewSource;
use crate::review::theme::Theme;
use crate::review::view::build_view;
use crate::review::worker::{self, Job, Request, WorkerResult};

/// The reviewer driven synchronously.
pub struct Headless<S: ReviewSource> {
    pub app: App,
    pub source: S,
    pub theme: Theme,
    /// Requests held back while `holding` is set.
    pub held: Vec<Request>,
    /// Jobs held back while `holding` is set (the newest of each kind).
    pub held_jobs: Vec<Job>,
    pub holding: bool,
    /// Frames drawn so far.
    pub draws: u64,
    terminal: Terminal<TestBackend>,
}

/// Draws into a test backend, which cannot fail.
fn draw(terminal: &mut Terminal<TestBackend>, app: &mut App, theme: &Theme) {
    let (w, h) = app.size;
    let (w, h) = (w.max(1), h.max(1));
    let area = terminal.backend().buffer().area;
    if (area.width, area.height) != (w, h) {
        terminal.backend_mut().resize(w, h);
    }
    match event_loop::draw(terminal, app, theme) {
        Ok(()) => {}
        Err(never) => match never {},
    }
}

impl<S: ReviewSource> Headless<S> {
    /// A reviewer of `width` × `height` on `source`, with the default keymap and theme, after
    /// its start-up requests have been answered.
    pub fn new(source: S, options: AppOptions, width: u16, height: u16) -> anyhow::Result<Self> {
        let mut app = App::new(options, Keymap::default_keymap()?);
        let _ = app.update(Event::Resize(width, height));
        let mut me = Headless {
            app,
            source,
            theme: Theme::default_theme()?,
            held: Vec::new(),
            held_jobs: Vec::new(),
            holding: false,
            draws: 0,
            terminal: Terminal::new(TestBackend::new(width.max(1), height.max(1)))?,
        };
        let effects = me.app.start();
        me.apply(effects);
        me.draw();
        Ok(me)
    }

    /// Applies a message, answers every request and job it leads to (unless holding), and
    /// draws if anything changed.
    pub fn update(&mut self, msg: impl Into<Msg>) -> &mut Self {
        let msg = msg.into();
        let resized = matches!(msg, Msg::Event(Event::Resize(..)));
        let update = self.app.update(msg);
        let answered = self.apply(update.effects);
        if update.changed || answered || resized {
            self.draw();
        }
        self
    }

    fn draw(&mut self) {
        draw(&mut self.terminal, &mut self.app, &self.theme);
        self.draws += 1;
    }

    /// Hands effects out and feeds every answer back; whether an answer changed the state.
    fn apply(&mut self, effects: Vec<Effect>) -> bool {
        let mut changed = false;
        let mut queue = effects;
        while !queue.is_empty() {
            let mut answers: Vec<WorkerResult> = Vec::new();
            for effect in queue {
                match effect {
                    Effect::Request(request) if self.holding => self.held.push(request),
                    Effect::Job(job) if self.holding => {
                        self.held_jobs.retain(|j| j.kind() != job.kind());
                        self.held_jobs.push(job);
                    }
                    Effect::Cancel(kind) => self.held_jobs.retain(|j| j.kind() != kind),
                    Effect::Request(request) => {
                        answers.push(worker::handle(&mut self.source, request));
                    }
                    Effect::Job(job) => {
                        worker::run_job(&mut self.source, job, &|| false, &mut |answer| {
                            answers.push(answer);
                            true
                        });
                    }
                    Effect::Quit => {}
                }
            }
            let mut next = Vec::new();
            for answer in answers {
                let update = self.app.update(Event::Worker(Box::new(answer)));
                changed |= update.changed;
                next.extend(update.effects);
            }
            queue = next;
        }
        changed
    }

    /// Keeps answers back from now on.
    pub fn hold(&mut self) -> &mut Self {
        self.holding = true;
        self
    }

    /// Answers every held request (coalesced as the fast lane would) and job, stops holding,
    /// and draws if anything changed.
    pub fn release(&mut self) -> &mut Self {
        self.holding = false;
        let mut effects: Vec<Effect> = worker::coalesce(std::mem::take(&mut self.held))
            .into_iter()
            .map(Effect::Request)
            .collect();
        effects.extend(
            std::mem::take(&mut self.held_jobs)
                .into_iter()
                .map(Effect::Job),
        );
        if self.apply(effects) {
            self.draw();
        }
        self
    }

    /// Presses a key.
    pub fn key(&mut self, code: KeyCode) -> &mut Self {
        self.update(Event::Key(KeyEvent::new(code, KeyModifiers::NONE)))
    }

    /// Types each character of `text` as a key press.
    pub fn type_text(&mut self, text: &str) -> &mut Self {
        for c in text.chars() {
            self.key(KeyCode::Char(c));
        }
        self
    }

    /// The frame last drawn.
    pub fn frame(&self) -> &Buffer {
        self.terminal.backend().buffer()
    }

    /// Draws the current state afresh into a buffer (with the current theme).
    pub fn render(&self) -> anyhow::Result<Buffer> {
        let (w, h) = self.app.size;
        let mut terminal = Terminal::new(TestBackend::new(w, h))?;
        let view = build_view(&self.app, &self.theme);
        terminal.draw(|frame| frame.render_widget(&view, frame.area()))?;
        Ok(terminal.backend().buffer().clone())
    }

    /// The drawn screen as plain text, one line per row, trailing spaces trimmed.
    pub fn text(&self) -> anyhow::Result<String> {
        let buffer = self.render()?;
        Ok(buffer_text(&buffer))
    }
}

/// A buffer's symbols as text, one line per row, trailing spaces trimmed.
pub fn buffer_text(buffer: &Buffer) -> String {
    let area = buffer.area;
    let mut out = String::new();
    for y in area.top()..area.bottom() {
        let mut line = String::new();
        for x in area.left()..area.right() {
            line.push_str(buffer[(x, y)].symbol());
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
