//! Migrations, on both backends: a store is created from an empty file (an empty schema), and
//! a store written at every earlier schema version (with data in it) upgrades to the current
//! one, keeps its data, ends with exactly the schema of a fresh store, and still verifies and
//! accepts new receipts.

#![allow(clippy::unwrap_used)]

#[path = "store_fixtures/fixtures.rs"]
mod fixtures;

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
    "DROP INDEX compactions_by_class; DROP INDEX compactions_by_status_class;",
];

/// [`ADDED`] in PostgreSQL's dialect where it differs.
fn added(kind: Kind, step: &str) -> String {
    match kind {
        Kind::Sqlite => step.to_owned(),
        Kind::Postgres => step.replace(
            "CREATE TABLE audit_frontier (height INTEGER PRIMARY KEY, hash TEXT NOT NULL) STRICT;",
            "CREATE TABLE audit_frontier (height BIGINT PRIMARY KEY, hash TEXT COLLATE \"C\" NOT NULL);",
        ),
    }
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

both! {
fn a_store_is_created_from_an_empty_file(s: TestStore) {
    if s.kind == Kind::Sqlite {
        std::fs::write(&s.location, b"").unwrap();
    }
    let store = s.open();
    populate(&store);
    assert!(verify(&store, None).unwrap().is_ok());
    assert_eq!(s.version(), SCHEMA_VERSION);
}

fn a_store_of_every_earlier_version_upgrades_with_its_data(s: TestStore) {
    drop(s.open());
    let expected = s.schema();
    for version in 1..SCHEMA_VERSION {
        let old = TestStore::new(s.kind, "an_earlier_version").unwrap();
        {
            let store = old.open();
            populate(&store);
        }
        let mut conn = old.raw();
        for step in ADDED[version as usize..].iter().rev() {
            conn.batch(&added(s.kind, step));
        }
        drop(conn);
        old.set_version(version);
        // Read-only, an old store is refused with advice; read-write, it is upgraded.
        let refused = old.try_open(Mode::ReadOnly);
        assert!(
            matches!(refused, Err(StoreError::OlderSchema { found, .. }) if found == version),
            "{refused:?}"
        );
        let store = old.open();
        assert_eq!(old.schema(), expected, "from version {version}");
        assert_eq!(store.count(&ListFilter::default()).unwrap(), 30);
        let report = verify(&store, None).unwrap();
        assert!(report.is_ok(), "from version {version}: {report}");
        // The rebuilt tree keeps the log appendable and checkpoints consistent.
        store.record_verdict(&compaction(100)).unwrap();
        let report = verify(&store, None).unwrap();
        assert!(
            report.is_ok(),
            "after appending, from version {version}: {report}"
        );
    }
}

fn a_newer_store_is_refused(s: TestStore) {
    drop(s.open());
    s.set_version(SCHEMA_VERSION + 1);
    for mode in [Mode::ReadWrite, Mode::ReadOnly] {
        let r = s.try_open(mode);
        assert!(matches!(r, Err(StoreError::NewerSchema { .. })), "{mode:?}: {r:?}");
    }
}
}
