//! Migrations: a store is created from an empty file, and a store written at every earlier
//! schema version (with data in it) upgrades to the current one, keeps its data, ends with
//! exactly the schema of a fresh store, and still verifies and accepts new receipts.

#![allow(clippy::unwrap_used)]

#[path = "store_fixtures/fixtures.rs"]
mod fixtures;

use std::path::Path;

use cq::audit::verify;
use cq::store::schema::SCHEMA_VERSION;
use cq::store::{Action, DecisionRequest, ListFilter, Mode, Store, StoreError};
use fixtures::*;

/// What each migration added, to take a current store back to version `v`. Migrations are
/// additive, so this yields the store an older build would have written.
const ADDED: &[&str] = &[
    "",
    "DROP INDEX compactions_by_created; DROP INDEX compactions_by_status;
     DROP INDEX compactions_by_anomalies; DROP INDEX compactions_by_status_anomalies;
     DROP INDEX compactions_by_task; DROP INDEX reports_by_compaction;
     DROP INDEX approvals_by_compaction; DROP INDEX audit_by_compaction;
     DROP INDEX checkpoints_by_size; DROP TABLE reveals;",
    "DROP TABLE audit_frontier;",
    "DROP TABLE audit_nodes; DROP TABLE agent_sessions;
     CREATE TABLE audit_frontier (height INTEGER PRIMARY KEY, hash TEXT NOT NULL) STRICT;
     ALTER TABLE reviewers DROP COLUMN authorized_by;",
];

fn schema_of(path: &Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(path).unwrap();
    let mut st = conn
        .prepare("SELECT type || ' ' || name || ': ' || COALESCE(sql, '') FROM sqlite_master ORDER BY type, name")
        .unwrap();
    st.query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn populate(store: &Store) {
    let team = team(store);
    store
        .record_batch(&(0..30).map(compaction).collect::<Vec<_>>())
        .unwrap();
    let seen = store
        .compaction("c-000001")
        .unwrap()
        .unwrap()
        .summary
        .report_sha256;
    let req = DecisionRequest {
        compaction_id: "c-000001".into(),
        action: Action::Reject,
        reason: REASONS[2].into(),
        note: "old store".into(),
        seen_report_sha256: seen,
    };
    store.decide(&req, &team.carol, &rules()).unwrap();
}

#[test]
fn adds_what_each_migration_added() {
    assert_eq!(ADDED.len() as i64, SCHEMA_VERSION);
}

#[test]
fn a_store_is_created_from_an_empty_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty.db");
    std::fs::write(&path, b"").unwrap();
    let store = Store::open(&path, Mode::ReadWrite).unwrap();
    populate(&store);
    assert!(verify(&store, None).unwrap().is_ok());
    let version: i64 = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, SCHEMA_VERSION);
}

#[test]
fn a_store_of_every_earlier_version_upgrades_with_its_data() {
    let dir = tempfile::tempdir().unwrap();
    let fresh = dir.path().join("fresh.db");
    drop(open(&fresh));
    let expected = schema_of(&fresh);
    for version in 1..SCHEMA_VERSION {
        let path = dir.path().join(format!("v{version}.db"));
        {
            let store = open(&path);
            populate(&store);
        }
        let conn = raw(&path);
        for step in ADDED[version as usize..].iter().rev() {
            conn.execute_batch(step).unwrap();
        }
        conn.pragma_update(None, "user_version", version).unwrap();
        drop(conn);
        // Read-only, an old store is refused with advice; read-write, it is upgraded.
        let old = Store::open(&path, Mode::ReadOnly);
        assert!(matches!(old, Err(StoreError::OlderSchema { found, .. }) if found == version));
        let store = open(&path);
        assert_eq!(schema_of(&path), expected, "from version {version}");
        assert_eq!(store.count(&ListFilter::default()).unwrap(), 30);
        let report = verify(&store, None).unwrap();
        assert!(report.is_ok(), "from version {version}: {report}");
        // The rebuilt frontier keeps the log appendable and checkpoints consistent.
        store.record_verdict(&compaction(100)).unwrap();
        let report = verify(&store, None).unwrap();
        assert!(
            report.is_ok(),
            "after appending, from version {version}: {report}"
        );
    }
}

#[test]
fn a_newer_store_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new.db");
    drop(open(&path));
    raw(&path)
        .pragma_update(None, "user_version", SCHEMA_VERSION + 1)
        .unwrap();
    for mode in [Mode::ReadWrite, Mode::ReadOnly] {
        let r = Store::open(&path, mode);
        assert!(matches!(r, Err(StoreError::NewerSchema { .. })), "{mode:?}");
    }
}
