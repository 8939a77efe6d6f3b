//! The chain of authority and the two-person rule against someone who edits the tables
//! directly, on both backends: what every decision checks comes from verified, signed
//! receipts; a row written into a table gives no authority; a damaged audit tree is refused
//! before the next write signs over it; and an emptied database whose signing key exists is
//! not silently re-created.

#![allow(clippy::unwrap_used)]

#[path = "store_fixtures/fixtures.rs"]
mod fixtures;

use cq::audit::NamedKey;
use cq::store::{
    Action, DecisionError, DecisionRequest, Mode, RegistrationError, Role, StoreError,
};
use fixtures::*;

fn checkpoints(s: &TestStore) -> i64 {
    s.raw().int("SELECT COUNT(*) FROM checkpoints", &[])
}

both! {
fn the_two_person_rule_reads_receipts_not_columns(s: TestStore) {
    let store = s.open();
    let team = team(&store);
    // c-000002 is FAIL/FINDING: a release needs two approvers.
    store
        .record_batch(&(0..3).map(compaction).collect::<Vec<_>>())
        .unwrap();
    let seen = store
        .compaction("c-000002")
        .unwrap()
        .unwrap()
        .summary
        .report_sha256;
    s.raw().batch("UPDATE compactions SET verdict_class = 'INSUFFICIENT_DATA/UNKNOWN', has_secret_finding = 0 WHERE id = 'c-000002'");
    let req = DecisionRequest {
        compaction_id: "c-000002".into(),
        action: Action::Release,
        reason: REASONS[0].into(),
        note: "one reviewer".into(),
        seen_report_sha256: seen,
    };
    let lax = cq::store::ReviewRules {
        two_person_classes: Vec::new(),
        two_person_for_secrets: false,
        ..rules()
    };
    let err = store.decide(&req, &team.carol, &lax).unwrap_err();
    assert!(err.is_tamper(), "{err}");
    assert!(!store.verify(None).unwrap().is_ok());
    // Restored columns: the receipt still asks for two approvers, even under lax rules.
    s.raw().batch(
        "UPDATE compactions SET verdict_class = 'FAIL/FINDING' WHERE id = 'c-000002'",
    );
    let err = store.decide(&req, &team.carol, &lax).unwrap_err();
    assert!(matches!(err, DecisionError::NotApprover { .. }), "{err}");
    assert!(store.verify(None).unwrap().is_ok());
}

fn approvers_do_not_authorise_themselves(s: TestStore) {
    let store = s.open();
    let alice = NamedKey::generate("alice").unwrap();
    let mallory = NamedKey::generate("mallory").unwrap();
    let twin = NamedKey::generate("twin").unwrap();
    // The store's creator registers the first approver.
    store
        .add_reviewer("alice", &alice.verifier_text(), Role::Approver, None)
        .unwrap();
    // After that the store key registers no one, and nobody registers themselves.
    let r = store.add_reviewer("mallory", &mallory.verifier_text(), Role::Approver, None);
    assert!(matches!(r, Err(RegistrationError::NeedsApprover)), "{r:?}");
    let r = store.add_reviewer(
        "twin",
        &twin.verifier_text(),
        Role::Approver,
        Some(&mallory),
    );
    assert!(
        matches!(r, Err(RegistrationError::NotApprover { .. })),
        "{r:?}"
    );
    // A row written straight into the table gives no authority.
    s.raw().batch(&format!(
        "INSERT INTO reviewers (name, public_key, key_id, role, receipt_seq, created_at, authorized_by)
         VALUES ('mallory', 'x', '{}', 'approver', 99, 'now', '')",
        mallory.key_id()
    ));
    let report = store.verify(None).unwrap();
    assert!(report.to_string().contains("reviewer row"), "{report}");
}

fn a_reviewer_row_written_into_the_table_gives_no_authority(s: TestStore) {
    let store = s.open();
    let team = team(&store);
    store.record_verdict(&compaction(1)).unwrap();
    let mallory = NamedKey::generate("mallory").unwrap();
    s.raw().batch(&format!(
        "INSERT INTO reviewers (name, public_key, key_id, role, receipt_seq, created_at, authorized_by)
         VALUES ('mallory', 'x', '{}', 'approver', 99, 'now', '{}')",
        mallory.key_id(),
        team.alice.key_id()
    ));
    // Promoting carol in the table does not make her an approver either.
    s.raw().batch(
        "UPDATE reviewers SET role = 'approver' WHERE name = 'carol'",
    );
    let seen = store
        .compaction("c-000001")
        .unwrap()
        .unwrap()
        .summary
        .report_sha256;
    let req = DecisionRequest {
        compaction_id: "c-000001".into(),
        action: Action::Release,
        reason: REASONS[0].into(),
        note: String::new(),
        seen_report_sha256: seen,
    };
    let err = store.decide(&req, &mallory, &rules()).unwrap_err();
    assert!(
        matches!(err, DecisionError::UnknownReviewer { .. }),
        "{err}"
    );
    let report = store.verify(None).unwrap();
    assert!(report.to_string().contains("reviewer row"), "{report}");
}

fn a_tampered_audit_tree_is_refused_before_the_next_write(s: TestStore) {
    let store = s.open();
    team(&store);
    store
        .record_batch(&(0..5).map(compaction).collect::<Vec<_>>())
        .unwrap();
    let before = checkpoints(&s);
    s.raw().batch(
        "UPDATE audit_nodes SET hash = zeroblob(32) WHERE level = (SELECT MAX(level) FROM audit_nodes)",
    );
    let report = store.verify(None).unwrap();
    assert!(!report.is_ok(), "verify names the tree");
    let err = store.record_verdict(&compaction(9)).unwrap_err();
    assert!(err.is_tamper(), "{err}");
    assert_eq!(
        checkpoints(&s),
        before,
        "no wrong root signed"
    );
}

fn an_emptied_store_whose_key_exists_is_not_recreated(s: TestStore) {
    {
        let store = s.open();
        store.record_verdict(&compaction(1)).unwrap();
    }
    // Every table dropped (a file truncated, a schema emptied), the signing key still there.
    match s.kind {
        Kind::Sqlite => std::fs::write(&s.location, b"").unwrap(),
        Kind::Postgres => {
            let mut raw = s.raw();
            for table in raw.strings(
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()",
                &[],
            ) {
                raw.batch(&format!("DROP TABLE {table} CASCADE"));
            }
        }
    }
    let r = s.try_open(Mode::ReadWrite);
    assert!(matches!(&r, Err(StoreError::Tampered(_))), "{r:?}");
    assert!(r.unwrap_err().to_string().contains("truncated"));
    assert!(s.tables().is_empty(), "nothing re-created");
}
}
