//! `cq hook claude-code|codex` under a strict policy (the built-in `default`, or a project
//! policy with `mode = "strict"`): a runtime's prose summary cannot parse as the closed
//! schema, so it is quarantined, and the reason says that this policy expects the closed
//! schema and that `mode = "prose"` is what Claude Code and Codex compactions need. Pinned
//! here: that a release through the store lifts the gate on guarded tools and a rejection
//! keeps it, under every mode, although a strict report binds no summary digest of its own.

#![allow(clippy::unwrap_used)]

#[path = "agents_hook_e2e/support.rs"]
#[allow(dead_code)]
mod support;

use serde_json::{json, Value};
use support::*;

/// A project policy: the built-in `prose` with its mode switched to strict.
fn strict_project_policy(s: &Session) -> String {
    let (_, text) = cq::policy::BUILTIN
        .iter()
        .find(|(name, _)| *name == "prose")
        .unwrap();
    let strict = text
        .replacen("mode = \"prose\"", "mode = \"strict\"", 1)
        .replacen("name = \"prose\"", "name = \"project-strict\"", 1);
    assert_ne!(&strict, text, "the prose policy names its mode");
    s.write_project_file(".cq/strict.toml", &strict);
    s.project.join(".cq/strict.toml").display().to_string()
}

/// The policies under test: the built-in strict `default` and a strict project file.
fn strict_policies(s: &Session) -> Vec<Vec<String>> {
    vec![
        vec!["--policy".into(), "default".into()],
        vec![
            "--policy".into(),
            strict_project_policy(s),
            "--allow-unsigned-policy".into(),
        ],
    ]
}

fn runtime_name(runtime: Rt) -> &'static str {
    match runtime {
        Rt::Claude => "claude-code",
        Rt::Codex => "codex",
    }
}

fn hook_with(s: &Session, policy: &[String], payload: &Value) -> Value {
    let mut command = s.cq();
    command
        .args(["hook", runtime_name(s.runtime), "--store"])
        .arg(&s.store)
        .args(policy)
        .write_stdin(payload.to_string());
    let stdout = succeeded(command);
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

fn decision(reply: &Value) -> &str {
    reply["hookSpecificOutput"]["permissionDecision"]
        .as_str()
        .unwrap_or("allow")
}

fn reason(reply: &Value) -> String {
    reply["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

fn session_start(s: &Session, policy: &[String]) -> String {
    let reply = hook_with(
        s,
        policy,
        &s.payload("SessionStart", json!({"source": "compact"})),
    );
    reply["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn tool(s: &Session, policy: &[String], name: &str) -> Value {
    let input = json!({"command": "git status", "description": "Status"});
    hook_with(
        s,
        policy,
        &s.payload(
            "PreToolUse",
            json!({"tool_name": name, "tool_input": input, "tool_use_id": "toolu_strict"}),
        ),
    )
}

const CASES: [(Rt, &str); 2] = [
    (Rt::Claude, CLEAN_CLAUDE),
    (Rt::Codex, "variants/hook-codex-clean.jsonl"),
];

#[test]
fn a_release_lifts_the_gate_under_a_strict_policy() {
    for (runtime, file) in CASES {
        for which in 0..2 {
            let s = Session::new(runtime, file);
            let policy = strict_policies(&s).remove(which);
            let context = session_start(&s, &policy);
            assert!(context.contains(QUARANTINE_NOTICE), "{file}: {context}");
            let id = s.only_compaction();
            assert_eq!(s.status(&id), "quarantined");
            let denied = tool(&s, &policy, "Bash");
            assert_eq!(decision(&denied), "deny", "{denied}");
            assert!(reason(&denied).contains(&id), "{denied}");
            s.release(&id);
            assert_eq!(s.status(&id), "released");
            let after = tool(&s, &policy, "Bash");
            assert_eq!(
                after,
                json!({}),
                "{file} {policy:?}: a release must lift the gate"
            );
        }
    }
}

#[test]
fn a_rejection_keeps_the_gate_under_a_strict_policy() {
    for (runtime, file) in CASES {
        let s = Session::new(runtime, file);
        let policy = vec!["--policy".to_owned(), "default".to_owned()];
        session_start(&s, &policy);
        let id = s.only_compaction();
        s.decide(&id, "alice", &["--reject", "--reason", "poisoned"]);
        assert_eq!(s.status(&id), "rejected");
        let reply = tool(&s, &policy, "Bash");
        assert_eq!(decision(&reply), "deny", "{reply}");
        assert!(reason(&reply).contains("rejected"), "{reply}");
    }
}

#[test]
fn a_released_prose_compaction_is_not_held_by_a_strict_hook_policy() {
    // Recorded under prose, released, then the hook's policy changes to strict: the gate
    // reads the verified state of the compaction it recorded, whatever policy it runs under.
    let s = Session::new(Rt::Claude, "variants/hook-fabricated-approval.jsonl");
    s.session_start();
    let id = s.only_compaction();
    s.release(&id);
    let strict = vec!["--policy".to_owned(), "default".to_owned()];
    assert_eq!(tool(&s, &strict, "Bash"), json!({}));
}

#[test]
fn a_prose_summary_under_a_strict_policy_says_to_use_prose_mode() {
    for (runtime, file) in CASES {
        let s = Session::new(runtime, file);
        let policy = strict_policies(&s).remove(1);
        let context = session_start(&s, &policy);
        let reasons = context
            .split("Why it was quarantined:")
            .nth(1)
            .unwrap_or_default();
        assert!(
            reasons.contains("closed JSON schema") && reasons.contains("mode = \"prose\""),
            "{file}: {reasons}"
        );
        let post = hook_with(
            &s,
            &policy,
            &s.payload("PostCompact", json!({"trigger": "auto"})),
        );
        let message = post["systemMessage"].as_str().unwrap();
        assert!(message.contains("mode = \"prose\""), "{message}");
    }
}

#[test]
fn after_a_strict_release_another_summary_or_an_edited_request_still_denies() {
    let s = Session::new(Rt::Claude, CLEAN_CLAUDE);
    let policy = vec!["--policy".to_owned(), "default".to_owned()];
    session_start(&s, &policy);
    let id = s.only_compaction();
    s.release(&id);
    assert_eq!(tool(&s, &policy, "Bash"), json!({}));

    // The stored request rewritten behind cq's back: it no longer matches its receipts.
    s.sql("UPDATE requests SET request_json = replace(request_json, 'Initial Request', 'Initial Requests')");
    let reply = tool(&s, &policy, "Bash");
    assert_eq!(decision(&reply), "deny", "{reply}");
    assert!(reason(&reply).starts_with("cq could not check"), "{reply}");
    s.sql("UPDATE requests SET request_json = replace(request_json, 'Initial Requests', 'Initial Request')");
    assert_eq!(tool(&s, &policy, "Bash"), json!({}));

    // The transcript's summary is not the one released.
    let text = std::fs::read_to_string(&s.transcript).unwrap();
    let edited = text.replacen("**Initial Request**", "**Initial Request (edited)**", 1);
    assert_ne!(edited, text);
    std::fs::write(&s.transcript, edited).unwrap();
    let reply = tool(&s, &policy, "Bash");
    assert_eq!(decision(&reply), "deny", "{reply}");
    assert!(reason(&reply).contains("not the one cq checked"), "{reply}");
}
