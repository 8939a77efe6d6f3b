//! The real loop and both worker lanes on a test backend.
//!
//! [`Live`] runs [`event_loop::run_loop`] on a thread of its own exactly as `cq review` does
//! (the same lanes over forks of the source, the same draw-only-on-change rule), with events
//! sent in place of the terminal's input and every frame sent back as text with the instant it
//! was drawn. Tests use it for what only threads show (a slow job not blocking a page,
//! quitting while a job runs, no frame without a change); the benchmark times key → frame
//! through it.

use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::backend::TestBackend;
use ratatui::Terminal;

use super::buffer_text;
use crate::review::app::{App, AppOptions};
use crate::review::event::Event;
use crate::review::event_loop;
use crate::review::keymap::Keymap;
use crate::review::source::ReviewSource;
use crate::review::theme::Theme;
use crate::review::worker::Lanes;

/// One drawn frame.
#[derive(Debug, Clone)]
pub struct Frame {
    /// When drawing it finished.
    pub at: Instant,
    /// Its text, one line per row.
    pub text: String,
}

/// The reviewer's loop running on its own thread.
pub struct Live {
    events: Sender<Event>,
    frames: Receiver<Frame>,
    done: Receiver<anyhow::Result<()>>,
}

impl Live {
    /// Starts the loop and both lanes on `source`, with the default keymap and theme.
    pub fn spawn(
        source: Box<dyn ReviewSource>,
        options: AppOptions,
        width: u16,
        height: u16,
    ) -> anyhow::Result<Live> {
        let theme = Theme::default_theme()?;
        let mut app = App::new(options, Keymap::default_keymap()?);
        let _ = app.update(Event::Resize(width, height));
        let mut terminal = Terminal::new(TestBackend::new(width.max(1), height.max(1)))?;
        let (events_tx, events) = mpsc::channel();
        let mut lanes = Lanes::spawn(source, events_tx.clone())?;
        let (frames_tx, frames) = mpsc::channel();
        let (done_tx, done) = mpsc::channel();
        std::thread::Builder::new()
            .name("cq-review-live".into())
            .spawn(move || {
                let effects = app.start();
                let result = event_loop::run_loop(&mut app, &mut lanes, &events, effects, |app| {
                    super::draw(&mut terminal, app, &theme);
                    let at = Instant::now();
                    let text = buffer_text(terminal.backend().buffer());
                    let _ = frames_tx.send(Frame { at, text });
                    Ok(())
                });
                // As `cq review` does on quitting: the lanes go, nothing waits for them.
                drop(lanes);
                let _ = done_tx.send(result);
            })?;
        Ok(Live {
            events: events_tx,
            frames,
            done,
        })
    }

    /// Sends an event as the input thread would; returns when it was sent.
    pub fn send(&self, event: Event) -> Instant {
        let at = Instant::now();
        let _ = self.events.send(event);
        at
    }

    /// Presses a key; returns when it was pressed.
    pub fn key(&self, code: KeyCode) -> Instant {
        self.send(Event::Key(KeyEvent::new(code, KeyModifiers::NONE)))
    }

    /// The next frame drawn within `timeout`.
    pub fn next_frame(&self, timeout: Duration) -> Option<Frame> {
        self.frames.recv_timeout(timeout).ok()
    }

    /// The first frame within `timeout` whose text satisfies `ok` (earlier frames are skipped).
    pub fn wait_for(&self, timeout: Duration, ok: impl Fn(&str) -> bool) -> Option<Frame> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.frames.recv_timeout(left) {
                Ok(frame) if ok(&frame.text) => return Some(frame),
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => return None,
            }
        }
    }

    /// Every frame drawn within `window`.
    pub fn frames_within(&self, window: Duration) -> Vec<Frame> {
        let deadline = Instant::now() + window;
        let mut out = Vec::new();
        while let Ok(frame) = self
            .frames
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            out.push(frame);
        }
        out
    }

    /// What the loop returned, if it returned within `timeout`.
    pub fn finished(&self, timeout: Duration) -> Option<anyhow::Result<()>> {
        self.done.recv_timeout(timeout).ok()
    }
}
