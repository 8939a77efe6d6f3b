//! The reviewer's audit view checks the log incrementally (`ChainCheck`): only what was
//! appended since its last look, then the signed head; a receipt changed after it was looked
//! at is caught for the item on screen, whose receipts are proved under the signed head.
#![allow(clippy::unwrap_used)]

#[path = "store_fixtures/fixtures.rs"]
mod fixtures;

use cq::audit::ChainCheck;
use cq::store::{Mode, Store};
use fixtures::*;

#[test]
fn the_chain_is_checked_from_where_it_was_left() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    let store = open(&path);
    team(&store);
    store
        .record_batch(&(0..20).map(compaction).collect::<Vec<_>>())
        .unwrap();
    let reader = Store::open(&path, Mode::ReadOnly).unwrap();
    let mut check = ChainCheck::new(reader.public_key());
    let first = reader.refresh_chain(&mut check).unwrap();
    assert!(first.is_ok(), "{first}");
    assert_eq!(first.entries, 23);
    store
        .record_batch(&(20..25).map(compaction).collect::<Vec<_>>())
        .unwrap();
    let second = reader.refresh_chain(&mut check).unwrap();
    assert!(second.is_ok(), "{second}");
    assert_eq!(second.entries, 28);
    assert_eq!(second.root, reader.verify(None).unwrap().root);

    // An appended entry forged without the key is caught by the next refresh.
    raw(&path)
        .execute(
            "UPDATE audit_entries SET receipt_json = replace(receipt_json, 'tenant', 'TENANT') WHERE seq = 28",
            [],
        )
        .unwrap();
    let mut fresh = ChainCheck::new(reader.public_key());
    assert!(!reader.refresh_chain(&mut fresh).unwrap().is_ok());
    // One changed after the view looked is not re-read by the chain check, but the item's own
    // receipts are proved under the signed head when it is opened.
    raw(&path)
        .execute(
            "UPDATE audit_entries SET receipt_json = replace(receipt_json, 'tenant', 'TENANT') WHERE seq = 5",
            [],
        )
        .unwrap();
    let id: String = raw(&path)
        .query_row(
            "SELECT compaction_id FROM audit_entries WHERE seq = 5",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let err = reader.verified_compaction(&id).unwrap_err();
    assert!(err.is_tamper(), "{err}");
}
