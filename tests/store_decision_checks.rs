//! Every check a decision makes before it writes, each against the one edit it exists to
//! catch, on both backends: a decision reads the log's head, the chain of authority and the
//! item's receipts in a few queries and verifies the head once for the whole write, so each
//! part of those reads is pinned here. Each edit is refused as tamper with nothing written
//! (no new checkpoint, the item still undecided), and once the edit is undone the same
//! decision goes through, so the refusal was the check's.

#![allow(clippy::unwrap_used)]

#[path = "store_fixtures/fixtures.rs"]
mod fixtures;

use cq::audit::{Checkpoint, NamedKey};
use cq::store::{NewCompaction, Status, Store};
use fixtures::*;

/// A store with the team, 40 recorded items and one decision already taken.
fn setup(s: &TestStore) -> (Store, Team, Vec<NewCompaction>) {
    let store = s.open();
    let team = team(&store);
    let items: Vec<_> = (0..40).map(compaction).collect();
    for r in store.record_batch(&items).unwrap() {
        r.unwrap();
    }
    store
        .decide(&release(&items[1], "first"), &team.carol, &rules())
        .unwrap();
    (store, team, items)
}

fn checkpoints(s: &TestStore) -> i64 {
    s.raw().int("SELECT COUNT(*) FROM checkpoints", &[])
}

/// The sequence number of `item`'s verdict receipt.
fn verdict_seq(s: &TestStore, item: &NewCompaction) -> i64 {
    s.raw().int(
        "SELECT MIN(seq) FROM audit_entries WHERE compaction_id = ?1",
        &[V::T(item.compaction_id.clone())],
    )
}

/// `tamper` makes carol's decision on `item` fail as tamper `because` (the check that
/// caught it) with nothing written; after `undo` the same decision is taken.
fn refused_until_undone(
    s: &TestStore,
    (store, carol): (&Store, &NamedKey),
    (what, because): (&str, &str),
    item: &NewCompaction,
    tamper: impl FnOnce(&TestStore),
    undo: impl FnOnce(&TestStore),
) {
    let before = checkpoints(s);
    tamper(s);
    let err = store
        .decide(&release(item, what), carol, &rules())
        .unwrap_err();
    assert!(err.is_tamper(), "{what}: {err}");
    assert!(err.to_string().contains(because), "{what}: {err}");
    assert_eq!(checkpoints(s), before, "{what}: nothing signed");
    undo(s);
    let state = store.verified_compaction(&item.compaction_id).unwrap();
    assert_eq!(
        state.status(),
        Status::Quarantined,
        "{what}: nothing decided"
    );
    store
        .decide(&release(item, what), carol, &rules())
        .unwrap_or_else(|e| panic!("{what}: undone, the decision goes through: {e}"));
}

/// The latest checkpoint row's id and note.
fn latest_checkpoint(s: &TestStore) -> (i64, String) {
    let rows = s.raw().query(
        "SELECT id, note FROM checkpoints ORDER BY tree_size DESC, id DESC LIMIT 1",
        &[],
    );
    let row = rows.first().unwrap();
    (row[0].int(), row[1].text())
}

fn set_note(s: &TestStore, id: i64, note: &str) {
    s.raw().execute(
        "UPDATE checkpoints SET note = ?2 WHERE id = ?1",
        &[V::I(id), V::T(note.into())],
    );
}

both! {
fn a_decision_refuses_a_head_that_is_not_signed_or_not_the_whole_log(s: TestStore) {
    let (store, team, items) = setup(&s);
    let who = (&store, &team.carol);
    let (id, note) = latest_checkpoint(&s);
    let size: u64 = note.lines().nth(1).unwrap().parse().unwrap();
    let origin = note.lines().next().unwrap().to_owned();
    // Signed by a key that is not the store's.
    let forged = Checkpoint {
        origin: origin.clone(),
        size,
        root: [7; 32],
    }
    .sign(&NamedKey {
        name: origin,
        signing: NamedKey::generate("mallory").unwrap().signing,
    });
    refused_until_undone(
        &s,
        who,
        ("a head signed by another key", "latest checkpoint does not verify"),
        &items[4],
        |s| set_note(s, id, &forged),
        |s| set_note(s, id, &note),
    );
    // A genuine older head: it covers fewer entries than the log holds.
    let (id, note) = latest_checkpoint(&s);
    let older = s.raw().query(
        "SELECT note FROM checkpoints ORDER BY tree_size, id LIMIT 1",
        &[],
    );
    let older = older.first().unwrap()[0].text();
    refused_until_undone(
        &s,
        who,
        ("an older signed head", "covers 1 entries but the log has"),
        &items[7],
        |s| set_note(s, id, &older),
        |s| set_note(s, id, &note),
    );
}

fn a_decision_refuses_a_tail_or_frontier_that_does_not_recompute(s: TestStore) {
    let (store, team, items) = setup(&s);
    let who = (&store, &team.carol);
    let tail = s.raw().int("SELECT MAX(seq) FROM audit_entries", &[]);
    let body = s.raw().strings(
        "SELECT receipt_json FROM audit_entries WHERE seq = ?1",
        &[V::I(tail)],
    );
    let body = body.first().unwrap().clone();
    refused_until_undone(
        &s,
        who,
        ("an edited tail receipt", "is not the receipt the signed tree holds"),
        &items[4],
        |s| {
            s.raw().execute(
                "UPDATE audit_entries SET receipt_json = ?2 WHERE seq = ?1",
                &[V::I(tail), V::T(body.replace("\"note\":\"first\"", "\"note\":\"forst\""))],
            );
        },
        |s| {
            s.raw().execute(
                "UPDATE audit_entries SET receipt_json = ?2 WHERE seq = ?1",
                &[V::I(tail), V::T(body.clone())],
            );
        },
    );
    // The frontier's largest subtree: leaves 0 to 31 of the 44 or 45 entries.
    let hash = node(&s, 5, 0);
    refused_until_undone(
        &s,
        who,
        ("a frontier node zeroed", "recomputed from its stored nodes differs"),
        &items[7],
        |s| set_node(s, 5, 0, vec![0; 32]),
        |s| set_node(s, 5, 0, hash),
    );
}

fn a_decision_refuses_receipts_not_included_in_the_signed_tree(s: TestStore) {
    let (store, team, items) = setup(&s);
    let who = (&store, &team.carol);
    // A node on the proof of the first registration only (not on the frontier).
    let hash = node(&s, 0, 1);
    refused_until_undone(
        &s,
        who,
        ("a registration's proof node zeroed", "entry 1 is not the receipt"),
        &items[4],
        |s| set_node(s, 0, 1, vec![0; 32]),
        |s| set_node(s, 0, 1, hash),
    );
    // The sibling of the item's verdict leaf: on its proof, not on the frontier.
    let leaf = u64::try_from(verdict_seq(&s, &items[7]) - 1).unwrap();
    let hash = node(&s, 0, leaf ^ 1);
    refused_until_undone(
        &s,
        who,
        ("the item's proof node zeroed", "is not the receipt its signed checkpoint holds"),
        &items[7],
        |s| set_node(s, 0, leaf ^ 1, vec![0; 32]),
        |s| set_node(s, 0, leaf ^ 1, hash),
    );
}

fn a_decision_refuses_an_edited_receipt_or_a_broken_chain(s: TestStore) {
    let (store, team, items) = setup(&s);
    let who = (&store, &team.carol);
    for (what, item, seq) in [
        (
            ("the item's verdict edited", "is not the receipt its signed checkpoint holds"),
            &items[4],
            verdict_seq(&s, &items[4]),
        ),
        (
            ("the entry before the item's verdict edited", "does not follow the entry before it"),
            &items[7],
            verdict_seq(&s, &items[7]) - 1,
        ),
    ] {
        let body = s.raw().strings(
            "SELECT receipt_json FROM audit_entries WHERE seq = ?1",
            &[V::I(seq)],
        );
        let body = body.first().unwrap().clone();
        let edited = body.replacen("tenant-", "tenant+", 1);
        assert_ne!(edited, body);
        refused_until_undone(
            &s,
            who,
            what,
            item,
            |s| {
                s.raw().execute(
                    "UPDATE audit_entries SET receipt_json = ?2 WHERE seq = ?1",
                    &[V::I(seq), V::T(edited.clone())],
                );
            },
            |s| {
                s.raw().execute(
                    "UPDATE audit_entries SET receipt_json = ?2 WHERE seq = ?1",
                    &[V::I(seq), V::T(body.clone())],
                );
            },
        );
    }
}

fn a_decision_refuses_cached_columns_that_disagree_with_receipts(s: TestStore) {
    let (store, team, items) = setup(&s);
    let who = (&store, &team.carol);
    let columns = [
        ("report_sha256", "current report", V::T("0".repeat(64))),
        ("verdict_class", "verdict class", V::T("FAIL/FINDING".into())),
        ("has_secret_finding", "secret-finding flag", V::I(1)),
        ("request_sha256", "request digest", V::T("1".repeat(64))),
    ];
    for (n, (column, named, forged)) in columns.into_iter().enumerate() {
        // Each refusal ends in a decision: a fresh item for each column.
        let item = &items[4 + 3 * n];
        let id = V::T(item.compaction_id.clone());
        let was = s.raw().query(
            &format!("SELECT {column} FROM compactions WHERE id = ?1"),
            std::slice::from_ref(&id),
        );
        let was = was.first().unwrap()[0].clone();
        let set = format!("UPDATE compactions SET {column} = ?2 WHERE id = ?1");
        refused_until_undone(
            &s,
            who,
            (column, &format!("the {named} of compaction")),
            item,
            |s| {
                s.raw().execute(&set, &[id.clone(), forged]);
            },
            |s| {
                s.raw().execute(&set, &[id.clone(), was]);
            },
        );
    }
}
}

fn node(s: &TestStore, level: u32, idx: u64) -> Vec<u8> {
    let rows = s.raw().query(
        "SELECT hash FROM audit_nodes WHERE level = ?1 AND idx = ?2",
        &[V::I(level.into()), V::I(idx.try_into().unwrap())],
    );
    match &rows.first().unwrap()[0] {
        V::B(b) => b.clone(),
        other => panic!("{other:?} is not a hash"),
    }
}

fn set_node(s: &TestStore, level: u32, idx: u64, hash: Vec<u8>) {
    s.raw().execute(
        "UPDATE audit_nodes SET hash = ?3 WHERE level = ?1 AND idx = ?2",
        &[
            V::I(level.into()),
            V::I(idx.try_into().unwrap()),
            V::B(hash),
        ],
    );
}
