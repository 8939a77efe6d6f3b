//! `cq`: a fail-closed gate for LLM context compactions and a terminal reviewer for what the
//! gate quarantines.
//!
//! Layers, and who may import whom (never upward, never sideways between front ends): `json`
//! ← `policy` ← `engine` ← `scan` ← `store` (every SQL statement) + `audit` (pure) ←
//! `service` (the use cases) ← the front ends `commands` (CLI) and `review` (TUI). `sanitize`
//! sits below every printer. The engine does no I/O; only `main.rs` turns results into exit
//! codes.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

pub mod agents;
pub mod audit;
pub mod cli;
pub mod commands;
pub mod diff;
pub mod engine;
pub mod json;
pub mod policy;
pub mod review;
pub mod sanitize;
pub mod scan;
pub mod service;
pub mod store;
