//! The reviewer's loop: one channel in, a frame out only when something changed.
//!
//! The input thread (crossterm's blocking `event::read`) and both worker lanes send
//! [`Event`]s into one channel, and the loop blocks on it: `recv_timeout` until the next
//! spinner tick while an answer is awaited, a plain `recv` otherwise, so an idle reviewer costs
//! nothing. Each event goes through [`App::update`]; the loop hands its effects to the lanes
//! first and draws only when the update changed the state (or the terminal was resized), then
//! hands the frame's layout back to the app ([`Event::Layout`]). Quitting returns at once: the
//! caller drops the [`Lanes`], which cancels every slow job and joins no thread.

use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use ratatui::backend::Backend;
use ratatui::Terminal;

use crate::review::app::{App, Effect};
use crate::review::event::Event;
use crate::review::theme::Theme;
use crate::review::view::build_view;
use crate::review::worker::Lanes;

/// How often the spinner advances while an answer is awaited.
pub const TICK: Duration = Duration::from_millis(100);

/// Draws the app's view and hands the frame's layout back to the app.
pub fn draw<B: Backend>(
    terminal: &mut Terminal<B>,
    app: &mut App,
    theme: &Theme,
) -> Result<(), B::Error> {
    let view = build_view(app, theme);
    terminal.draw(|frame| frame.render_widget(&view, frame.area()))?;
    let update = app.update(Event::Layout(Box::new(view.metrics)));
    debug_assert!(update.effects.is_empty() && !update.changed);
    Ok(())
}

/// Hands effects to the lanes; `true` when one of them is quitting.
fn hand_out(lanes: &mut Lanes, effects: Vec<Effect>) -> bool {
    for effect in effects {
        match effect {
            Effect::Request(request) => lanes.request(request),
            Effect::Job(job) => lanes.submit(job),
            Effect::Cancel(kind) => lanes.cancel(kind),
            Effect::Quit => return true,
        }
    }
    false
}

/// Runs the app until it quits: `first` are its start-up effects, `events` the channel the
/// input thread and `lanes` send into, and `draw` draws a frame (normally [`draw`] on the
/// terminal). Returns when the app quits, without waiting for any job; fails when drawing
/// fails or input or a lane stops for good.
pub fn run_loop(
    app: &mut App,
    lanes: &mut Lanes,
    events: &Receiver<Event>,
    first: Vec<Effect>,
    mut draw: impl FnMut(&mut App) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let mut effects = first;
    let mut dirty = true;
    let mut next_tick: Option<Instant> = None;
    loop {
        if hand_out(lanes, std::mem::take(&mut effects)) {
            return Ok(());
        }
        if dirty {
            draw(app)?;
        }
        next_tick = app
            .waiting()
            .then(|| next_tick.unwrap_or_else(|| Instant::now() + TICK));
        let event = match next_tick {
            None => events.recv().ok(),
            Some(at) => match events.recv_timeout(at.saturating_duration_since(Instant::now())) {
                Ok(event) => Some(event),
                Err(RecvTimeoutError::Timeout) => {
                    next_tick = None;
                    Some(Event::Tick)
                }
                Err(RecvTimeoutError::Disconnected) => None,
            },
        };
        let event = match event {
            Some(Event::Stopped(why)) => anyhow::bail!(why),
            Some(event) => event,
            None => {
                anyhow::bail!("terminal input and both worker lanes stopped; restart `cq review`")
            }
        };
        let resized = matches!(event, Event::Resize(..));
        let update = app.update(event);
        dirty = update.changed || resized;
        effects = update.effects;
    }
}

/// Starts the input thread: it blocks in crossterm's `event::read` and sends what the UI
/// uses. It is never joined; after the loop has returned it ends at the next input (nobody
/// receives any more) or with the process.
/// How long one wait of the change thread lasts.
const CHANGE_WAIT: Duration = Duration::from_millis(500);

/// Turns the source's change feed into [`Event::StoreChanged`] until the loop is gone (the
/// next change after it finds the channel closed). A feed that fails stops quietly: the
/// queue then refreshes only when the reviewer acts.
pub fn spawn_changes(
    mut feed: crate::review::source::ChangeFeed,
    events: Sender<Event>,
) -> anyhow::Result<()> {
    std::thread::Builder::new()
        .name("cq-review-changes".into())
        .spawn(move || loop {
            match feed(CHANGE_WAIT) {
                Ok(true) if events.send(Event::StoreChanged).is_err() => return,
                Ok(_) => {}
                Err(_) => return,
            }
        })
        .context("while starting the change thread")?;
    Ok(())
}

pub fn spawn_input(events: Sender<Event>) -> anyhow::Result<()> {
    std::thread::Builder::new()
        .name("cq-review-input".into())
        .spawn(move || loop {
            match crossterm::event::read() {
                Ok(read) => {
                    if let Some(event) = Event::from_terminal(read) {
                        if events.send(event).is_err() {
                            return;
                        }
                    }
                }
                Err(e) => {
                    let _ = events.send(Event::Stopped(format!(
                        "could not read the terminal: {e}; run `cq review` in an interactive terminal"
                    )));
                    return;
                }
            }
        })
        .context("while starting the input thread")?;
    Ok(())
}
