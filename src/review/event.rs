//! Things that happened: terminal input, a resize, a clock tick, a frame drawn, a worker's
//! answer, the store changing under the reviewer, or a part of the UI stopping.
//!
//! Events carry no intent; [`crate::review::app::App::update`] decides what each one means
//! (through the keymap for keys). The input thread and both worker lanes send events into the
//! one channel the loop blocks on.

use crossterm::event::{KeyEvent, MouseEvent};

use crate::review::view::LayoutMetrics;
use crate::review::worker::WorkerResult;

/// Something that happened.
#[derive(Debug, Clone)]
pub enum Event {
    /// A key press.
    Key(KeyEvent),
    /// A mouse click or scroll.
    Mouse(MouseEvent),
    /// The terminal now has this many columns and rows.
    Resize(u16, u16),
    /// Time passed (drives the spinner; only sent while something animates).
    Tick,
    /// A frame was drawn with this layout.
    Layout(Box<LayoutMetrics>),
    /// A worker lane finished a request or one item of a job.
    Worker(Box<WorkerResult>),
    /// Someone else recorded or decided something (the live queue).
    StoreChanged,
    /// Terminal input or a worker lane stopped for good; the loop ends with this error.
    Stopped(String),
}

impl Event {
    /// Converts a crossterm event; `None` for events the UI ignores (focus, paste, key
    /// releases, the pointer moving or dragging, a button let go).
    pub fn from_terminal(event: crossterm::event::Event) -> Option<Event> {
        use crossterm::event::{Event as T, KeyEventKind, MouseEventKind as M};
        match event {
            T::Key(k) if k.kind != KeyEventKind::Release => Some(Event::Key(k)),
            T::Mouse(m) if !matches!(m.kind, M::Moved | M::Drag(_) | M::Up(_)) => {
                Some(Event::Mouse(m))
            }
            T::Resize(w, h) => Some(Event::Resize(w, h)),
            _ => None,
        }
    }
}
