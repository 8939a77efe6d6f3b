//! A headless driver: the whole reviewer without a terminal or a thread.
//!
//! [`Headless`] runs [`App::update`] and answers its effects synchronously through
//! [`worker::handle`] on the same data source, then renders into a ratatui [`TestBackend`]
//! buffer. Snapshot tests, view-model tests and benchmarks drive the UI with it exactly as a
//! user would (keys, actions, mouse, resize) and see exactly what would be drawn. Because
//! effects are answered one at a time, [`Headless::hold`] can keep answers back to show
//! loading states, and [`Headless::release`] delivers them.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::Terminal;

use crate::review::app::{App, AppOptions, Effect, Msg};
use crate::review::event::Event;
use crate::review::keymap::Keymap;
use crate::review::source::ReviewSource;
use crate::review::theme::Theme;
use crate::review::view::build_view;
use crate::review::worker::{self, Request};

/// The reviewer driven synchronously.
pub struct Headless<S: ReviewSource> {
    pub app: App,
    pub source: S,
    pub theme: Theme,
    /// Requests held back while `holding` is set.
    pub held: Vec<Request>,
    pub holding: bool,
}

impl<S: ReviewSource> Headless<S> {
    /// A reviewer of `width` × `height` on `source`, with the default keymap and theme, after
    /// its start-up requests have been answered.
    pub fn new(source: S, options: AppOptions, width: u16, height: u16) -> anyhow::Result<Self> {
        let mut app = App::new(options, Keymap::default_keymap()?);
        app.update(Event::Resize(width, height));
        let mut me = Headless {
            app,
            source,
            theme: Theme::default_theme()?,
            held: Vec::new(),
            holding: false,
        };
        let effects = me.app.start();
        me.apply(effects);
        Ok(me)
    }

    /// Applies a message and answers every request it leads to (unless holding).
    pub fn update(&mut self, msg: impl Into<Msg>) -> &mut Self {
        let effects = self.app.update(msg);
        self.apply(effects);
        self
    }

    fn apply(&mut self, effects: Vec<Effect>) {
        let mut queue = effects;
        while !queue.is_empty() {
            let mut next = Vec::new();
            for effect in queue {
                if let Effect::Request(request) = effect {
                    if self.holding {
                        self.held.push(request);
                        continue;
                    }
                    let result = worker::handle(&mut self.source, request);
                    next.extend(self.app.update(Event::Worker(Box::new(result))));
                }
            }
            queue = next;
        }
    }

    /// Keeps answers back from now on.
    pub fn hold(&mut self) -> &mut Self {
        self.holding = true;
        self
    }

    /// Answers every held request (coalesced as the worker would) and stops holding.
    pub fn release(&mut self) -> &mut Self {
        self.holding = false;
        let held = worker::coalesce(std::mem::take(&mut self.held));
        self.apply(held.into_iter().map(Effect::Request).collect());
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

    /// Draws the current state into a buffer.
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
