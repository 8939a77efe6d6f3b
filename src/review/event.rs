//! Things that happened: terminal input, a resize, a clock tick, or a worker's answer.
//!
//! Events carry no intent; [`crate::review::app::App::update`] decides what each one means
//! (through the keymap for keys).

use crossterm::event::{KeyEvent, MouseEvent};

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
    /// Time passed (drives the spinner).
    Tick,
    /// The worker finished a request.
    Worker(Box<WorkerResult>),
}

impl Event {
    /// Converts a crossterm event; `None` for events the UI ignores (focus, paste, key
    /// releases).
    pub fn from_terminal(event: crossterm::event::Event) -> Option<Event> {
        use crossterm::event::{Event as T, KeyEventKind};
        match event {
            T::Key(k) if k.kind != KeyEventKind::Release => Some(Event::Key(k)),
            T::Mouse(m) => Some(Event::Mouse(m)),
            T::Resize(w, h) => Some(Event::Resize(w, h)),
            _ => None,
        }
    }
}
