//! `cq status` on compactions a runtime's own summarizer wrote: the context a runtime gets back
//! is rendered under the policy the compaction was checked under (the built-in `prose` for an
//! import, whatever `--policy` the runtime passes), carries the summary as that policy's mode
//! checked it (the whole prose text), and a policy that is neither the one given nor a built-in
//! is refused with the digest needed rather than substituted.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::{Command, Output};

use cq::engine::GateRequest;
use cq::engine::SummarizerOutput;
use cq::store::{ListFilter, Mode, SortKey, Store};

const SESSION: &str =
    "tests/transcripts/claude-code/marot__spotter__8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl";

fn cq(args: &[&str], store: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cq"))
        .args(args)
        .arg("--store")
        .arg(store)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap()
}

/// The first accepted compaction of the store, and its summarizer's whole text.
fn accepted(store: &Path) -> (String, String) {
    let opened = Store::open(store, Mode::ReadOnly).unwrap();
    let items = opened
        .list(&ListFilter::default(), SortKey::OldestFirst, 0, 100)
        .unwrap();
    let item = items
        .iter()
        .find(|i| i.status == cq::store::Status::Accepted)
        .expect("the clean session has an accepted compaction");
    let stored = opened.compaction(&item.id).unwrap().unwrap();
    let request = GateRequest::from_json(stored.request_json.as_bytes()).unwrap();
    let SummarizerOutput::Raw(raw) = request.summarizer else {
        panic!("an imported summary is raw text");
    };
    (item.id.clone(), raw)
}

/// The text of every message `cq status` hands back.
fn context_text(stdout: &str) -> String {
    let value = cq::json::parse(stdout.trim().as_bytes(), &cq::json::Limits::default()).unwrap();
    let messages = value.get("messages").and_then(|m| m.as_array()).unwrap();
    messages
        .iter()
        .filter_map(|m| m.get("content").and_then(|c| c.as_str()))
        .collect()
}

fn import(store: &Path, extra: &[&str]) {
    let mut args = vec!["import", "claude-code", SESSION];
    args.extend_from_slice(extra);
    let out = cq(&args, store);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn an_accepted_prose_compaction_gives_its_whole_summary_under_any_given_policy() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("cq.db");
    import(&store, &[]);
    let (id, summary) = accepted(&store);
    let mut outputs = Vec::new();
    for policy in ["default", "prose", "seed-compatible"] {
        let out = cq(&["status", &id, "--policy", policy], &store);
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "--policy {policy}: {}{stdout}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = context_text(&stdout);
        assert!(text.contains(summary.trim()), "--policy {policy}: {text}");
        outputs.push(stdout);
    }
    // The same context whatever the runtime passes: it is the prose policy's.
    assert!(outputs.windows(2).all(|w| w[0] == w[1]));
}

#[test]
fn a_project_policy_not_at_hand_is_refused_with_the_digest_needed() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("cq.db");
    let policy = dir.path().join("team.toml");
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/policies/prose.toml"),
    )
    .unwrap()
    .replacen("name = \"prose\"", "name = \"team-prose\"", 1);
    std::fs::write(&policy, text).unwrap();
    let policy = policy.to_str().unwrap();
    import(&store, &["--policy", policy, "--allow-unsigned-policy"]);
    let (id, summary) = accepted(&store);

    let refused = cq(&["status", &id, "--policy", "prose"], &store);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "{stderr}");
    assert!(
        refused.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&refused.stdout)
    );
    assert!(
        stderr.contains("was checked under policy sha256"),
        "{stderr}"
    );
    assert!(stderr.contains("--policy FILE"), "{stderr}");

    let given = cq(
        &["status", &id, "--policy", policy, "--allow-unsigned-policy"],
        &store,
    );
    assert!(
        given.status.success(),
        "{}",
        String::from_utf8_lossy(&given.stderr)
    );
    let text = context_text(&String::from_utf8_lossy(&given.stdout));
    assert!(text.contains(summary.trim()), "{text}");
}
