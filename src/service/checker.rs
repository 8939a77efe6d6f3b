//! A policy and the scanner, compiled once and ready to check requests: what `cq check`,
//! `cq ingest`, `cq recheck`, the reviewer's reruns and the runtime hooks all run the gate
//! through, so every path checks a request the same way.

use anyhow::Context;

use crate::engine::gate::{AuditSink, GateOutcome};
use crate::engine::{GateRequest, PolicyEngine, Refusal};
use crate::json::Value;
use crate::policy::Policy;
use crate::scan::backend::ScannerBackend;
use crate::scan::Scanner;
use crate::store::{Action, ReviewRules};

/// The seed-format audit events of one check, kept in memory (the store keeps our own
/// receipts; these are what the seed's contract reads back).
#[derive(Debug, Default)]
pub struct MemoryAudit {
    pub events: Vec<Value>,
}

impl AuditSink for MemoryAudit {
    fn append(&mut self, event: &Value) -> Result<String, String> {
        self.events.push(event.clone());
        Ok((self.events.len() - 1).to_string())
    }

    fn read(&self, id: &str) -> Result<Value, String> {
        let index: usize = id.parse().map_err(|_| format!("bad audit id \"{id}\""))?;
        self.events
            .get(index)
            .cloned()
            .ok_or_else(|| format!("no audit event \"{id}\""))
    }
}

/// A compiled policy and the built-in scanner.
pub struct Checker {
    pub engine: PolicyEngine,
    pub backend: ScannerBackend,
    /// The policy's review rules for releases (how many approvers a release needs).
    release: ReviewRules,
}

impl std::fmt::Debug for Checker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Checker")
            .field("policy", &self.engine.policy.name)
            .field("policy_sha256", &self.engine.policy_sha256)
            .finish_non_exhaustive()
    }
}

impl Checker {
    /// Compiles `policy` against the built-in scan rules.
    pub fn new(policy: Policy) -> anyhow::Result<Checker> {
        let scanner = Scanner::builtin().context("while loading the built-in scan rules")?;
        let release = super::decide::review_rules(&policy, Action::Release)?;
        let engine = PolicyEngine::new(policy, &scanner.rules_sha256())?;
        Ok(Checker {
            engine,
            backend: ScannerBackend::new(scanner),
            release,
        })
    }

    /// The policy's review rules for releases.
    pub fn release_rules(&self) -> &ReviewRules {
        &self.release
    }

    pub fn scanner(&self) -> &Scanner {
        self.backend.scanner()
    }

    pub fn policy(&self) -> &Policy {
        &self.engine.policy
    }

    /// Runs the gate on one request.
    pub fn check(&self, request: &GateRequest) -> Result<GateOutcome, Refusal> {
        let mut audit = MemoryAudit::default();
        self.engine
            .check(request, &self.backend, self.backend.scanner(), &mut audit)
    }
}

#[cfg(test)]
mod tests {
    fn assert_sync<T: Sync + Send>() {}

    #[test]
    fn a_checker_is_shared_by_every_thread_of_a_bulk_run() {
        assert_sync::<super::Checker>();
    }
}
