//! The command functions behind `cq list`, `show`, `decide`, `status`, `reviewers add`,
//! `keys generate` and `audit verify|export|checkpoint`, on a real store.

#![allow(clippy::unwrap_used)]

#[path = "store_fixtures/fixtures.rs"]
mod fixtures;

use cq::audit::commands as audit_cmd;
use cq::store::commands;
use cq::store::{Action, DecisionError, ListFilter, SortKey, Status};
use fixtures::*;

#[test]
fn a_reviewer_works_through_the_commands() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir.path().join("s.db"));
    let keys = dir.path().join("keys");
    let made = audit_cmd::keys_generate("alice", &keys).unwrap();
    assert!(made.contains("alice.key") && made.contains("cq reviewers add alice"));
    let public = std::fs::read_to_string(keys.join("alice.pub")).unwrap();
    let out = commands::reviewers_add(&store, "alice", &public, "approver").unwrap();
    assert!(out.contains("reviewer \"alice\" added as approver"));
    assert!(commands::reviewers_add(&store, "x", &public, "boss")
        .unwrap_err()
        .to_string()
        .contains("role \"boss\""));
    store
        .record_batch(&(0..6).map(compaction).collect::<Vec<_>>())
        .unwrap();

    let quarantined = ListFilter {
        status: Some(Status::Quarantined),
        ..ListFilter::default()
    };
    let text = commands::list(&store, &quarantined, SortKey::OldestFirst, 0, 10, false).unwrap();
    assert!(text.contains("c-000001") && text.contains("4 of 4 shown"));
    let jsonl = commands::list(&store, &quarantined, SortKey::OldestFirst, 0, 10, true).unwrap();
    assert_eq!(jsonl.lines().count(), 4);
    assert!(jsonl.starts_with("{\"anomaly_count\":"));

    // Not released yet: the runtime gets no request.
    let status = commands::status(&store, "c-000001").unwrap();
    assert_eq!(
        (status.status, status.request_json.is_none()),
        (Status::Quarantined, true)
    );

    let key = keys.join("alice.key");
    let out = commands::decide(
        &store,
        "c-000001",
        Action::Release,
        REASONS[0],
        "ok",
        &key,
        None,
        &rules(),
    )
    .unwrap();
    assert!(out.contains("released by \"alice\""), "{out}");
    let err = commands::decide(
        &store,
        "c-000001",
        Action::Reject,
        REASONS[0],
        "",
        &key,
        None,
        &rules(),
    )
    .unwrap_err();
    assert!(matches!(
        err.downcast_ref::<DecisionError>(),
        Some(DecisionError::AlreadyDecided { .. })
    ));
    let stale = commands::decide(
        &store,
        "c-000004",
        Action::Reject,
        REASONS[0],
        "",
        &key,
        Some("00"),
        &rules(),
    )
    .unwrap_err();
    assert!(
        stale.to_string().contains("rechecked since you looked"),
        "{stale}"
    );

    let status = commands::status(&store, "c-000001").unwrap();
    assert_eq!(status.status, Status::Released);
    assert_eq!(
        status.request_json.as_deref(),
        Some(compaction(1).request_json.as_str())
    );
    let json = status.to_json().unwrap();
    assert!(
        json.contains("\"decision\":\"release\"") && json.contains("\"status\":\"released\""),
        "{json}"
    );

    let shown = commands::show(&store, "c-000001", false).unwrap();
    assert!(shown.contains("decision    release by alice"), "{shown}");
    let shown = commands::show(&store, "c-000001", true).unwrap();
    assert!(
        shown.contains("\"receipts\":[{\"kind\":\"verdict\""),
        "{shown}"
    );
    assert!(commands::show(&store, "nope", false)
        .unwrap_err()
        .to_string()
        .contains("no compaction \"nope\""));

    let report = audit_cmd::audit_verify(&store, None).unwrap();
    assert!(report.is_ok(), "{report}");
    let note = audit_cmd::audit_checkpoint(&store).unwrap();
    assert!(note.starts_with(store.origin()) && note.contains("\n\n\u{2014} "));
    let cp = dir.path().join("checkpoint.txt");
    std::fs::write(&cp, &note).unwrap();
    assert!(audit_cmd::audit_verify(&store, Some(&cp)).unwrap().is_ok());
    let mut out = Vec::new();
    let n = audit_cmd::audit_export(&store, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert_eq!(text.lines().count() as u64, n);
    assert!(text
        .lines()
        .all(|l| l.starts_with("{\"key_id\":") && l.contains("\"receipt\":{")));
}

#[test]
fn a_tampered_request_is_never_handed_to_the_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    let store = open(&path);
    store.record_verdict(&compaction(0)).unwrap();
    assert!(commands::status(&store, "c-000000")
        .unwrap()
        .request_json
        .is_some());
    raw(&path)
        .execute(
            "UPDATE requests SET request_json = replace(request_json, 'step 1', 'step 7')",
            [],
        )
        .unwrap();
    let err = commands::status(&store, "c-000000").unwrap_err();
    assert!(
        err.to_string().contains("does not match its receipt"),
        "{err}"
    );
}

#[test]
fn cli_lines_badge_what_could_steer_a_terminal() {
    assert_eq!(
        cq::sanitize::line("ok \u{1b}[31mred\u{202e}x\u{200b}\nnext"),
        "ok ⟨ESC[31m⟩red⟨RLO⟩x⟨ZWSP⟩⟨LF⟩next"
    );
    assert_eq!(cq::sanitize::line("tâche — fine"), "tâche — fine");
    // What the old CLI escaper let through.
    for hidden in [
        "\u{061c}", "\u{2028}", "\u{2029}", "\u{ad}", "\u{fe0f}", "\u{e000}",
    ] {
        assert!(
            cq::sanitize::line(&format!("a{hidden}b")).contains('⟨'),
            "{hidden:?}"
        );
    }
}
