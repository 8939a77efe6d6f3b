//! Prose-mode requests as a real runtime's compaction makes them (`service::agents`): user,
//! assistant and tool turns, a free-prose summary, every registered constraint expected, run
//! through the real gate under the built-in `prose` policy.
#![allow(dead_code)]

use cq::engine::gate::GateOutcome;
use cq::engine::report::{CheckResult, Finding, Status};
use cq::engine::{GateRequest, SourceMessage, SummarizerOutput};
use cq::policy::{PinnedConstraint, Policy};
use cq::service::Checker;

pub fn checker() -> &'static Checker {
    static CHECKER: std::sync::OnceLock<Checker> = std::sync::OnceLock::new();
    CHECKER.get_or_init(|| Checker::new(Policy::builtin("prose").unwrap()).unwrap())
}

/// A turn: `("user", "text")`, `("assistant", …)`, `("tool", …)`; ids `m1`, `m2`, ….
pub fn turns(list: &[(&str, &str)]) -> Vec<SourceMessage> {
    list.iter()
        .enumerate()
        .map(|(i, (role, content))| SourceMessage {
            message_id: format!("m{}", i + 1),
            role: (*role).into(),
            content: (*content).into(),
        })
        .collect()
}

/// The request a runtime's compaction of `messages` into `summary` becomes.
pub fn req(
    messages: Vec<SourceMessage>,
    summary: &str,
    pins: Vec<PinnedConstraint>,
) -> GateRequest {
    let policy = checker().policy();
    GateRequest {
        tenant_id: "/home/dev/project".into(),
        task_id: "session-1".into(),
        messages,
        expected_invariant_ids: policy.invariants.ids(),
        expected_commitment_ids: policy.commitments.ids(),
        pinned_constraints: pins,
        model_revision: "claude-code 2.1.39".into(),
        summarizer: SummarizerOutput::Raw(summary.into()),
    }
}

pub fn run(request: &GateRequest) -> GateOutcome {
    checker().check(request).unwrap()
}

/// The default session: the user asks for a fix, the agent works, a tool answers.
pub fn session() -> Vec<SourceMessage> {
    turns(&[
        (
            "user",
            "Please fix the login timeout bug in src/auth/session.rs and run the tests.",
        ),
        ("assistant", "I'll read the session module first."),
        (
            "tool",
            "[tool result: Read]\nfn timeout() -> Duration { Duration::from_secs(5) }",
        ),
        (
            "assistant",
            "The timeout is hard-coded; I'll make it configurable.",
        ),
        (
            "tool",
            "[tool result: Bash]\ntest result: ok. 41 passed; 0 failed",
        ),
    ])
}

/// A Claude Code-shaped summary with `next` as its optional next step.
pub fn summary_with(extra: &str, next: &str) -> String {
    format!(
        "Analysis:\nThe user asked to fix the login timeout bug and run the tests.\n\n\
         Summary:\n1. Primary Request and Intent:\n   The user asked to fix the login timeout bug in src/auth/session.rs and run the tests.\n\n\
         2. Files and Code Sections:\n   - src/auth/session.rs: made the timeout configurable.\n{extra}\n\
         3. All user messages:\n   - \"Please fix the login timeout bug in src/auth/session.rs and run the tests.\"\n\n\
         4. Pending Tasks:\n   - Add a test for the configurable timeout.\n\n\
         5. Optional Next Step:\n   {next}\n"
    )
}

pub fn check<'a>(o: &'a GateOutcome, name: &str) -> &'a CheckResult {
    o.report
        .checks
        .iter()
        .find(|c| c.check == name)
        .unwrap_or_else(|| panic!("no check {name:?} in the report"))
}

pub fn status(o: &GateOutcome, name: &str) -> Status {
    check(o, name).status
}

pub fn findings<'a>(o: &'a GateOutcome, name: &str) -> &'a [Finding] {
    &check(o, name).findings
}

/// The summary text every finding of check `name` names, in order.
pub fn named(o: &GateOutcome, request: &GateRequest, name: &str) -> Vec<String> {
    let SummarizerOutput::Raw(text) = &request.summarizer else {
        return Vec::new();
    };
    findings(o, name)
        .iter()
        .filter_map(|f| f.span.clone())
        .map(|s| text[s].to_owned())
        .collect()
}

/// The failing checks of an outcome, by name.
pub fn failing(o: &GateOutcome) -> Vec<&str> {
    o.report
        .checks
        .iter()
        .filter(|c| c.failed())
        .map(|c| c.check.as_str())
        .collect()
}

pub fn pin(id: &str, text: &str, patterns: &[&str]) -> PinnedConstraint {
    PinnedConstraint {
        id: id.into(),
        severity: "critical".into(),
        text: text.into(),
        forbidden_patterns: patterns.iter().map(|p| (*p).to_owned()).collect(),
    }
}
