//! How much the scanners of one rule pack have scanned. A process that scans a few short
//! fields (one gate call) is served best by engines that cost nothing to build, one that scans
//! in bulk (a directory, a large file, a long-running gate) by the fast ones. The keyword
//! automata and every rule of a pack share one count, so once the pack has done [`BULK_WORK`]
//! of work the keyword DFA is built and each rule's regex builds its fast engines the first
//! time it runs, rather than first searching its own 8 KiB on the NFA engines. Which engine
//! answers never changes a finding.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Work (bytes scanned over all fields, plus [`CALL_WEIGHT`] per field) after which a pack is
/// in a bulk scan.
pub(super) const BULK_WORK: usize = 256 << 10;
/// What one field weighs besides its bytes: about 4,000 short fields make a bulk scan.
pub(super) const CALL_WEIGHT: usize = 64;

/// One rule pack's work so far, shared by its keyword automata and its rules.
#[derive(Debug, Default)]
pub(super) struct Work(AtomicUsize);

impl Work {
    /// Counts one field of `len` bytes: whether the pack is now in a bulk scan.
    pub fn add_field(&self, len: usize) -> bool {
        let work = len.saturating_add(CALL_WEIGHT);
        let before = self.0.fetch_add(work, Ordering::Relaxed);
        before.saturating_add(work) >= BULK_WORK
    }

    /// Whether the pack is in a bulk scan.
    pub fn is_bulk(&self) -> bool {
        self.0.load(Ordering::Relaxed) >= BULK_WORK
    }

    /// Counts as much work as a bulk scan (for tests).
    #[cfg(test)]
    pub fn set_bulk(&self) {
        self.0.store(BULK_WORK, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::super::Scanner;

    const TOKEN: &str = "pushed with ghp_R8vQmZ2xLkT9wYcB4nHs6JdF1gPaE3uV7oXi today";

    fn rule_is_warm(scanner: &Scanner, id: &str) -> bool {
        let rule = scanner.rules().iter().find(|r| r.id == id).unwrap();
        rule.is_warm()
    }

    #[test]
    fn a_rule_first_run_in_a_bulk_scan_runs_on_its_fast_engines() {
        let scanner = Scanner::builtin().unwrap();
        let fresh = scanner.scan_text("f", TOKEN);
        assert!(
            fresh.iter().any(|f| f.rule_id == "github-token"),
            "{fresh:?}"
        );
        assert!(!rule_is_warm(&scanner, "github-token"));

        let bulk = Scanner::builtin().unwrap();
        // Short fields that select no token rule, enough of them to make a bulk scan, through
        // a scanner narrowed from the pack: the pack's work is shared.
        let narrowed = bulk.for_entity_types(&["PII"]).unwrap();
        for _ in 0..5_000 {
            narrowed.scan_text("f", "plain words only");
        }
        assert!(!rule_is_warm(&bulk, "github-token"));
        let found = bulk.scan_text("f", TOKEN);
        assert!(rule_is_warm(&bulk, "github-token"));
        assert_eq!(found, fresh);
    }
}
