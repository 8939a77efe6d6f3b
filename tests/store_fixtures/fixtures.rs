//! Shared fixtures for the store and audit tests: realistic requests and reports as canonical
//! JSON, a store with registered reviewers, the review rules of the default policy, and the
//! two backends every store suite runs on ([`backend`]).

#![allow(dead_code, clippy::unwrap_used)]

#[path = "backend.rs"]
pub mod backend;
#[allow(unused_imports)]
pub use backend::*;

use std::path::Path;

use cq::audit::merkle::{leaf_hash, Frontier};
use cq::audit::rows::LogRows;
use cq::audit::{verify, Checkpoint, NamedKey};
use cq::engine::verdict::{FindingStatus, Outcome, Verdict, VerdictClass};
use cq::json::{self, object, Value};
use cq::store::{
    Action, DecisionRequest, Mode, NewCompaction, NewReport, ReviewRules, Role, Store,
};

pub const REASONS: [&str; 3] = ["verified-faithful", "false-positive", "poisoned"];

pub fn rules() -> ReviewRules {
    ReviewRules {
        reason_codes: REASONS.iter().map(|s| s.to_string()).collect(),
        two_person_classes: vec![VerdictClass::Finding],
        two_person_for_secrets: true,
    }
}

/// A typical request: a dozen source messages and a summary, a few KB of canonical JSON.
pub fn request(i: usize, tenant: &str, task: &str) -> Value {
    let messages: Vec<Value> = (0..12)
        .map(|m| {
            object([
                ("message_id", Value::from(format!("m-{i}-{m}"))),
                ("role", Value::from(["user", "assistant", "tool"][m % 3])),
                ("content", Value::from(format!("step {m} of task {task}: edited src/lib.rs line {} and ran the tests; all {} passed", m * 7, 40 + m))),
            ])
        })
        .collect();
    object([
        ("tenant_id", Value::from(tenant)),
        ("task_id", Value::from(task)),
        ("source_messages", Value::from(messages)),
        (
            "expected_invariant_ids",
            Value::from(vec![Value::from("INV-1"), Value::from("INV-2")]),
        ),
        (
            "summarizer_output",
            Value::from(format!("{{\"summary\":\"compaction {i} of {task}\"}}")),
        ),
        ("model_revision", Value::from("summarizer-2026-11")),
    ])
}

pub fn report(i: usize, verdict: &str, class: &str, run: usize) -> NewReport {
    let body = object([
        ("compaction", Value::from(i as u64)),
        ("run", Value::from(run as u64)),
        ("verdict", Value::from(verdict)),
        (
            "checks",
            Value::from(vec![
                object([
                    ("check", Value::from("schema")),
                    ("outcome", Value::from("PASS")),
                ]),
                object([
                    ("check", Value::from("consistency")),
                    ("outcome", Value::from(class)),
                ]),
            ]),
        ),
    ]);
    let report_json = json::canonical(&body).unwrap();
    let (outcome, finding) = class.split_once('/').unwrap_or(("PASS", "NO_FINDING"));
    let word = |text: &str| text.to_owned();
    NewReport {
        report_sha256: json::sha256_hex(report_json.as_bytes()),
        report_json,
        policy_sha256: "a".repeat(64),
        verifier_version: "cq-verifier 0.1".into(),
        verdict: Verdict::parse(&word(verdict)).unwrap(),
        outcome: Outcome::parse(outcome).unwrap(),
        finding_status: FindingStatus::parse(finding).unwrap(),
        verdict_class: VerdictClass::parse(class).unwrap(),
        main_reason: format!("check consistency: {class}"),
        anomaly_count: (i % 5) as u32,
        has_secret_finding: false,
        approvals_required: if class == "FAIL/FINDING" { 2 } else { 1 },
    }
}

/// Compaction `i`: every third accepted, the rest quarantined, alternating between a class
/// that needs two approvers and one that does not.
pub fn compaction(i: usize) -> NewCompaction {
    let (verdict, class) = match i % 3 {
        0 => ("ACCEPTED", "PASS/NO_FINDING"),
        1 => ("QUARANTINED", "INSUFFICIENT_DATA/UNKNOWN"),
        _ => ("QUARANTINED", "FAIL/FINDING"),
    };
    quarantined(i, verdict, class)
}

pub fn quarantined(i: usize, verdict: &str, class: &str) -> NewCompaction {
    let tenant = format!("tenant-{}", i % 4);
    let task = format!("task-{}", i % 50);
    let request_json = json::canonical(&request(i, &tenant, &task)).unwrap();
    NewCompaction {
        compaction_id: format!("c-{i:06}"),
        tenant_id: tenant,
        task_id: task,
        request_sha256: json::sha256_hex(request_json.as_bytes()),
        request_json,
        summary_sha256: json::sha256_hex(format!("summary {i}").as_bytes()),
        source_population_sha256: json::sha256_hex(format!("population {i}").as_bytes()),
        report: report(i, verdict, class, 0),
    }
}

/// A decision on `id`'s current report, with the first reason.
pub fn decision(store: &Store, id: &str, action: Action, note: &str) -> DecisionRequest {
    let seen = store.compaction(id).unwrap().unwrap().summary.report_sha256;
    DecisionRequest {
        compaction_id: id.into(),
        action,
        reason: REASONS[0].into(),
        note: note.into(),
        seen_report_sha256: seen,
    }
}

pub struct Team {
    pub alice: NamedKey,
    pub bob: NamedKey,
    pub carol: NamedKey,
}

/// Alice and Bob are approvers, Carol a reviewer.
pub fn team(store: &Store) -> Team {
    let team = Team {
        alice: NamedKey::generate("alice").unwrap(),
        bob: NamedKey::generate("bob").unwrap(),
        carol: NamedKey::generate("carol").unwrap(),
    };
    store
        .add_reviewer("alice", &team.alice.verifier_text(), Role::Approver, None)
        .unwrap();
    store
        .add_reviewer(
            "bob",
            &team.bob.verifier_text(),
            Role::Approver,
            Some(&team.alice),
        )
        .unwrap();
    store
        .add_reviewer(
            "carol",
            &team.carol.verifier_text(),
            Role::Reviewer,
            Some(&team.alice),
        )
        .unwrap();
    team
}

pub fn open(path: &Path) -> Store {
    Store::open(path, Mode::ReadWrite).unwrap()
}

/// A raw connection for tampering, with foreign keys off.
pub fn raw(path: &Path) -> rusqlite::Connection {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch("PRAGMA foreign_keys = OFF").unwrap();
    conn
}

/// A release of `c`'s recorded report with the first reason.
pub fn release(c: &NewCompaction, note: &str) -> DecisionRequest {
    DecisionRequest {
        compaction_id: c.compaction_id.clone(),
        action: Action::Release,
        reason: REASONS[0].into(),
        note: note.into(),
        seen_report_sha256: c.report.report_sha256.clone(),
    }
}

/// The log is one linear, gap-free sequence, `audit verify` passes, and the Merkle root
/// recomputed here from the receipts' bytes is the one the store's last checkpoint signs.
pub fn assert_log_linear(store: &Store) {
    let report = verify(store, None).unwrap();
    assert!(report.is_ok(), "{report}");
    let mut frontier = Frontier::new();
    for (n, e) in store.entries(0, usize::MAX).unwrap().iter().enumerate() {
        assert_eq!(e.seq, n as u64 + 1, "the log has a gap");
        frontier.push(leaf_hash(e.body.as_bytes()));
    }
    let note = store.checkpoint().unwrap().unwrap();
    let signed = Checkpoint::open(&note, store.origin(), store.public_key()).unwrap();
    assert_eq!(
        (signed.size, signed.root),
        (frontier.size(), frontier.root())
    );
    assert_eq!(report.root, cq::audit::hex(&frontier.root()));
}
