//! `cq review`: the reviewer's terminal UI.
//!
//! The UI follows one message flow: terminal input becomes an [`event::Event`], the keymap
//! turns keys into [`action::Action`]s, [`app::App::update`] is the only code that changes
//! state and answers with [`app::Effect`]s (work for the [`worker`] lanes, each owning a
//! handle on the data source) and whether anything changed, and drawing is a pure function of
//! the state ([`view::build_view`] then the [`widgets`]), done by the [`event_loop`] only after
//! a change. Every untrusted string reaches the terminal through [`crate::sanitize`]. The data
//! comes from a [`source::ReviewSource`], so the UI runs the same on the SQLite store and on
//! the in-memory [`fake::FakeSource`] used by tests.
//!
//! Wiring `cq review`: open the store (read-only for `--readonly`), wrap it in a type that
//! implements [`source::ReviewSource`], and call
//! `run(Box::new(source), ReviewOptions::from_env(readonly, reviewer, config))`. The adapter
//! overwrites matched secret bytes before handing text out, computes each row's
//! `anomaly_count` with [`crate::sanitize::anomaly_count`], and answers `queue_page` with a paged
//! query. [`headless::Headless`] drives the same UI without a terminal (tests, benchmarks).

pub mod action;
pub mod app;
pub mod config;
pub mod event;
pub mod event_loop;
pub mod fake;
pub mod filter;
pub mod headless;
pub mod keymap;
pub mod launch;
pub mod source;
pub mod store_source;
pub mod theme;
pub mod view;
pub mod widgets;
pub mod worker;

use std::path::PathBuf;
use std::sync::mpsc;

use anyhow::Context as _;

use crate::review::app::{App, AppOptions};
use crate::review::config::Config;
use crate::review::event::Event;
use crate::review::source::ReviewSource;
use crate::review::worker::Lanes;

/// How `cq review` runs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReviewOptions {
    /// Hide every decision action (the store should be opened read-only as well).
    pub readonly: bool,
    /// Who records decisions and reveals (e.g. `$USER`).
    pub reviewer: String,
    /// `--config FILE`; `None` looks in the user's config directory.
    pub config: Option<PathBuf>,
    /// Drop colours, keep modifiers (set when `NO_COLOR` is set and not empty).
    pub no_color: bool,
}

impl ReviewOptions {
    /// Options with `no_color` taken from the `NO_COLOR` environment variable.
    pub fn from_env(readonly: bool, reviewer: String, config: Option<PathBuf>) -> ReviewOptions {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        ReviewOptions {
            readonly,
            reviewer,
            config,
            no_color,
        }
    }
}

/// Queue rows fetched per request.
pub const PAGE_SIZE: usize = 200;

/// Runs the reviewer on the terminal until the user quits.
pub fn run(source: Box<dyn ReviewSource>, options: ReviewOptions) -> anyhow::Result<()> {
    let config = Config::load(options.config.as_deref())?;
    let theme = if options.no_color {
        config.theme.without_colour()
    } else {
        config.theme
    };
    let now_unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    let mut app = App::new(
        AppOptions {
            readonly: options.readonly,
            reviewer: options.reviewer,
            now_unix,
            page_size: PAGE_SIZE,
        },
        config.keymap,
    );
    let (events_tx, events) = mpsc::channel();
    let changes = source.changes()?;
    let mut lanes = Lanes::spawn(source, events_tx.clone())?;
    if let Some(feed) = changes {
        event_loop::spawn_changes(feed, events_tx.clone())?;
    }
    // Dropped before the lanes: the terminal is restored first, and quitting never waits.
    let mut terminal = TerminalGuard::enter()?;
    event_loop::spawn_input(events_tx)?;
    let size = terminal
        .0
        .size()
        .context("while reading the terminal size")?;
    let _ = app.update(Event::Resize(size.width, size.height));
    let effects = app.start();
    event_loop::run_loop(&mut app, &mut lanes, &events, effects, |app| {
        event_loop::draw(&mut terminal.0, app, &theme).context("while drawing")
    })
}

/// Raw mode, alternate screen and mouse capture for as long as it lives.
struct TerminalGuard(ratatui::DefaultTerminal);

impl TerminalGuard {
    fn enter() -> anyhow::Result<TerminalGuard> {
        let terminal = ratatui::try_init().context("while setting up the terminal")?;
        crossterm::execute!(std::io::stdout(), crossterm::event::EnableMouseCapture)
            .context("while enabling the mouse")?;
        Ok(TerminalGuard(terminal))
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        let _ = crossterm::execute!(std::io::stdout(), crossterm::event::DisableMouseCapture);
        ratatui::restore();
    }
}
