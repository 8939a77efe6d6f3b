//! `cq review`: the reviewer's terminal UI.
//!
//! The UI follows one message flow: terminal input becomes an [`event::Event`], the keymap
//! turns keys into [`action::Action`]s, [`app::App::update`] is the only code that changes
//! state and answers with [`app::Effect`]s (work for the [`worker`] thread, which owns the
//! data source), and drawing is a pure function of the state ([`view::build_view`] then the
//! [`widgets`]). Every untrusted string reaches the terminal through [`sanitize`]. The data
//! comes from a [`source::ReviewSource`], so the UI runs the same on the SQLite store and on
//! the in-memory [`fake::FakeSource`] used by tests.

pub mod action;
pub mod app;
pub mod config;
pub mod event;
pub mod fake;
pub mod filter;
pub mod keymap;
pub mod sanitize;
pub mod source;
pub mod theme;
pub mod view;
pub mod widgets;
pub mod worker;
