//! `cq store copy FROM TO` between the backends: SQLite to PostgreSQL and back (SQLite to
//! SQLite without a server), the audit log intact (verify passes on both sides with the same
//! root), the copy writable with the same key, a non-empty target and a tampered source
//! refused.

#![allow(clippy::unwrap_used)]

#[path = "store_fixtures/fixtures.rs"]
mod fixtures;

use std::path::Path;

use assert_cmd::Command;
use cq::audit::verify;
use cq::store::Action;
use fixtures::*;

fn cq(dir: &Path) -> Command {
    let mut command = Command::cargo_bin("cq").unwrap();
    command
        .env("HOME", dir)
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env("XDG_DATA_HOME", dir.join("data"))
        .env_remove("CQ_STORE")
        .env_remove("CQ_STORE_KEY")
        .env_remove("CQ_STORE_SIGNING_KEY");
    command
}

/// Runs `cq store copy`; its exit code and output.
fn copy(dir: &Path, from: &TestStore, to: &TestStore) -> (Option<i32>, String) {
    let out = cq(dir)
        .args(["store", "copy"])
        .arg(&from.location)
        .arg(&to.location)
        .arg("--from-signing-key")
        .arg(from.key_path())
        .arg("--to-signing-key")
        .arg(to.key_path())
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), text)
}

fn built() -> (TestStore, Team) {
    let s = TestStore::sqlite();
    let store = s.open();
    let team = team(&store);
    store
        .record_batch(&(0..40).map(compaction).collect::<Vec<_>>())
        .unwrap();
    let req = decision(&store, "c-000001", Action::Release, "before the copy");
    store.decide(&req, &team.carol, &rules()).unwrap();
    store
        .record_reveal("c-000004", "secret-0", &team.carol)
        .unwrap();
    (s, team)
}

#[test]
fn a_store_moves_to_postgres_and_back_with_its_log_intact() {
    let dir = tempfile::tempdir().unwrap();
    let (source, team) = built();
    let root = verify(&source.open_ro(), None).unwrap().root;
    let middle =
        TestStore::postgres("a_store_moves_to_postgres_and_back").unwrap_or_else(TestStore::sqlite);
    let (code, out) = copy(dir.path(), &source, &middle);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains(&root), "{out}");
    let back = TestStore::sqlite();
    let (code, out) = copy(dir.path(), &middle, &back);
    assert_eq!(code, Some(0), "{out}");
    for s in [&middle, &back] {
        let report = verify(&s.open_ro(), None).unwrap();
        assert!(report.is_ok(), "{:?}: {report}", s.kind);
        assert_eq!(report.root, root, "{:?}", s.kind);
    }
    // The copy goes on with the same key and the same rules.
    let store = middle.open();
    let c = store.compaction("c-000001").unwrap().unwrap();
    assert_eq!(c.decision.unwrap().note, "before the copy");
    let req = decision(&store, "c-000002", Action::Release, "after the copy");
    let r = store.decide(&req, &team.carol, &rules());
    assert!(
        matches!(r, Err(cq::store::DecisionError::NotApprover { .. })),
        "the two-person rule holds on the copy: {r:?}"
    );
    store.decide(&req, &team.alice, &rules()).unwrap();
    assert!(verify(&store, None).unwrap().is_ok());
}

#[test]
fn a_non_empty_target_and_a_tampered_source_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (source, _) = built();
    let (other, _) = built();
    let (code, out) = copy(dir.path(), &source, &other);
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("is not empty"), "{out}");
    source
        .raw()
        .batch("UPDATE decisions SET note = 'edited' WHERE compaction_id = 'c-000001'");
    let fresh = TestStore::sqlite();
    let (code, out) = copy(dir.path(), &source, &fresh);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("does not verify"), "{out}");
    assert!(!fresh.location.exists() || std::fs::metadata(&fresh.location).unwrap().len() == 0);
}
