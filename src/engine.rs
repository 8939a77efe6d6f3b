//! The gate engine: pure and deterministic, no I/O. It validates a summarizer's output
//! against the closed schema (G001), reconciles and verifies every registered invariant and
//! commitment (G002), drives the secret scan through a backend trait (G003), checks pinned
//! negative constraints (seed 004) and fabricated authority, and turns all of that into a
//! verdict, a report and the context to inject.

pub mod authority;
pub mod clause;
pub mod compacted;
pub mod consistency;
pub mod diagnose;
pub mod lazy_regex;
pub mod leaf_memo;
pub mod pattern_set;
pub mod pinned;
pub mod prose;
pub mod pytext;
pub mod redact;
pub mod registry;
pub mod request;
pub mod schema;
pub mod secret_scan;
pub mod verifier;
pub mod words;

pub use request::{GateRequest, Refusal, SourceMessage, SummarizerOutput};
pub mod checks;
pub mod context;
pub mod gate;
pub mod policy_engine;
pub mod report;
pub mod report_reader;
pub mod request_json;
pub mod verdict;

pub use policy_engine::{EngineError, PolicyEngine};
