//! The application layer: the use cases the front ends share. `commands/` (the CLI),
//! `review/` (the TUI) and the runtime hooks and importers call these and never each other;
//! each takes typed inputs (a resolved policy, a store handle, a request), never clap types,
//! and returns data for the front end to print or draw.
//!
//! - [`checker`]: a compiled policy and the scanner; every gate run goes through it.
//! - [`record`]: check a request and record the verdict.
//! - [`recheck`]: rerun the checks on a stored compaction.
//! - [`status`]: what a runtime may inject for a recorded compaction.
//! - [`decide`]: the policy's review rules and the decisions they govern.
//! - [`policy`]: resolving, signing and verifying policies.

pub mod agents;
pub mod checker;
pub mod constraints;
pub mod decide;
pub mod demo;
pub mod hooks;
pub mod inspect;
pub mod policy;
pub mod recheck;
pub mod record;
pub mod redact;
pub mod status;

pub use checker::Checker;
