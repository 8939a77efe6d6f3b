//! Tampering with the stored log or the tables it describes is detected by `audit::verify`,
//! which names the entry: one changed byte in each kind of stored field, a deleted entry,
//! two reordered entries, a truncated log, swapped signatures, and a store rolled back to an
//! older copy while a newer exported checkpoint is kept elsewhere. On both backends.

#![allow(clippy::unwrap_used)]

#[path = "store_fixtures/fixtures.rs"]
mod fixtures;

use cq::audit::{verify, VerifyReport};
use cq::store::{Action, DecisionRequest, Store};
use fixtures::*;

struct Built {
    store: TestStore,
    team: Team,
    /// A checkpoint exported at the end, as a careful operator would keep it.
    exported: String,
}

fn decide(store: &Store, id: &str, action: Action, key: &cq::audit::NamedKey) {
    let seen = store.compaction(id).unwrap().unwrap().summary.report_sha256;
    let req = DecisionRequest {
        compaction_id: id.into(),
        action,
        reason: REASONS[1].into(),
        note: "tamper fixture".into(),
        seen_report_sha256: seen,
    };
    store.decide(&req, key, &rules()).unwrap();
}

/// Reviewers, verdicts, decisions, two approvals, a rerun and a reveal: every receipt kind.
fn build(s: TestStore) -> Built {
    let store = s.open();
    let team = team(&store);
    for i in 0..6 {
        store.record_verdict(&compaction(i)).unwrap();
    }
    decide(&store, "c-000001", Action::Release, &team.carol);
    decide(&store, "c-000004", Action::Reject, &team.carol);
    decide(&store, "c-000002", Action::Release, &team.alice);
    decide(&store, "c-000002", Action::Release, &team.bob);
    store
        .record_rerun("c-000005", &report(5, "QUARANTINED", "FAIL/FINDING", 1))
        .unwrap();
    store
        .record_reveal("c-000005", "secret-0", &team.carol)
        .unwrap();
    store
        .record_batch(&[compaction(6), compaction(7), compaction(8)])
        .unwrap();
    let exported = store.checkpoint().unwrap().unwrap();
    assert!(verify(&store, Some(&exported)).unwrap().is_ok());
    Built {
        store: s,
        team,
        exported,
    }
}

/// A fresh copy of the built store to damage.
fn copy(built: &Built, name: &str) -> TestStore {
    built.store.copy(name)
}

fn check(store: &TestStore, exported: Option<&str>) -> VerifyReport {
    verify(&store.open_ro(), exported).unwrap()
}

fn seq_of(conn: &mut Raw, kind: &str, nth: usize) -> i64 {
    let seqs: Vec<i64> = conn
        .query(
            "SELECT seq FROM audit_entries WHERE kind = ?1 ORDER BY seq",
            &[V::from(kind)],
        )
        .into_iter()
        .map(|r| r[0].int())
        .collect();
    seqs[nth]
}

/// Changes one byte near the middle of `text`, keeping it ASCII.
fn flip(text: &str) -> String {
    let mut bytes = text.as_bytes().to_vec();
    let mid = bytes.len() / 2;
    let i = (mid..bytes.len())
        .chain(0..mid)
        .find(|&i| bytes[i].is_ascii_alphanumeric())
        .unwrap();
    bytes[i] = match bytes[i] {
        b'a' => b'b',
        b'0' => b'1',
        b if b.is_ascii_digit() => b'0',
        _ => b'a',
    };
    String::from_utf8(bytes).unwrap()
}

fn assert_names(report: &VerifyReport, seq: i64, case: &str) {
    assert!(!report.is_ok(), "{case}: tampering went unnoticed");
    assert_eq!(report.first_bad(), Some(seq as u64), "{case}: {report}");
    assert!(
        report
            .to_string()
            .contains(&format!("first bad entry is \"{seq}\"")),
        "{case}: {report}"
    );
}

/// Registers a fresh reviewer for later decisions on a built store.
fn team_keys(store: &Store, approver: &cq::audit::NamedKey) -> cq::audit::NamedKey {
    let dave = cq::audit::NamedKey::generate("dave").unwrap();
    store
        .add_reviewer(
            "dave",
            &dave.verifier_text(),
            cq::store::Role::Reviewer,
            Some(approver),
        )
        .unwrap();
    dave
}

both! {
fn the_untouched_store_verifies_with_and_without_the_export(s: TestStore) {
    let built = build(s);
    assert!(check(&built.store, None).is_ok());
    let report = check(&built.store, Some(&built.exported));
    assert!(report.is_ok(), "{report}");
    assert_eq!(report.exported_size, Some(report.entries));
}

fn one_changed_byte_in_any_column_of_any_receipt_kind_is_named(s: TestStore) {
    let built = build(s);
    let columns = [
        "receipt_json",
        "receipt_sha256",
        "prev_hash",
        "leaf_hash",
        "kind",
        "compaction_id",
        "created_at",
        "signature",
        "key_id",
    ];
    let kinds = [
        "reviewer", "verdict", "approval", "decision", "rerun", "reveal",
    ];
    for kind in kinds {
        for column in columns {
            let case = format!("{kind}.{column}");
            let path = copy(&built, &case.replace('.', "_"));
            let mut conn = path.raw();
            let seq = seq_of(&mut conn, kind, 0);
            let value = conn.query(
                &format!("SELECT {column} FROM audit_entries WHERE seq = ?1"),
                &[V::from(seq)],
            )[0][0]
                .opt_text();
            // Unsigned kinds have no signature or key id: forging one must be caught too.
            let forged = match value {
                Some(v) => flip(&v),
                None => "AAAA".to_owned(),
            };
            let sql = format!("UPDATE audit_entries SET {column} = ?1 WHERE seq = ?2");
            conn.execute(&sql, &[V::from(forged), V::from(seq)]);
            drop(conn);
            assert_names(&check(&path, None), seq, &case);
        }
    }
}

fn a_changed_sequence_number_is_named(s: TestStore) {
    let built = build(s);
    let path = copy(&built, "seq");
    let mut conn = path.raw();
    let seq = seq_of(&mut conn, "decision", 0);
    conn.execute(
        "UPDATE audit_entries SET seq = 1000 WHERE seq = ?1",
        &[V::from(seq)],
    );
    drop(conn);
    assert_names(&check(&path, None), seq, "seq");
}

fn a_deleted_entry_is_named(s: TestStore) {
    let built = build(s);
    let path = copy(&built, "deleted");
    let mut conn = path.raw();
    let seq = seq_of(&mut conn, "verdict", 2);
    conn.execute("DELETE FROM audit_entries WHERE seq = ?1", &[V::from(seq)]);
    drop(conn);
    assert_names(&check(&path, None), seq, "delete");
}

fn two_reordered_entries_are_named(s: TestStore) {
    let built = build(s);
    let path = copy(&built, "reordered");
    let mut conn = path.raw();
    let a = seq_of(&mut conn, "decision", 0);
    let b = a + 1;
    conn.batch(&format!(
        "UPDATE audit_entries SET seq = -1 WHERE seq = {a};
         UPDATE audit_entries SET seq = {a} WHERE seq = {b};
         UPDATE audit_entries SET seq = {b} WHERE seq = -1;"
    ));
    drop(conn);
    assert_names(&check(&path, None), a, "reorder");
}

fn a_truncated_log_is_named_by_its_checkpoints_or_the_export(s: TestStore) {
    let built = build(s);
    let path = copy(&built, "truncated");
    let mut conn = path.raw();
    let total = conn.int("SELECT MAX(seq) FROM audit_entries", &[]);
    let keep = total - 4;
    conn.execute("DELETE FROM audit_entries WHERE seq > ?1", &[V::from(keep)]);
    drop(conn);
    assert_names(&check(&path, None), keep + 1, "truncate");
    // An attacker who also drops the later checkpoints is still caught by the export.
    let mut conn = path.raw();
    conn.execute(
        "DELETE FROM checkpoints WHERE tree_size > ?1",
        &[V::from(keep)],
    );
    drop(conn);
    assert!(check(&path, None)
        .problems
        .iter()
        .all(|p| !p.message.contains("checkpoint")));
    assert_names(
        &check(&path, Some(&built.exported)),
        keep + 1,
        "truncate+export",
    );
}

fn swapped_signatures_are_named(s: TestStore) {
    let built = build(s);
    let path = copy(&built, "swapped");
    let mut conn = path.raw();
    let a = seq_of(&mut conn, "decision", 0);
    let b = seq_of(&mut conn, "decision", 1);
    conn.batch(&format!(
        "UPDATE audit_entries SET signature = (SELECT signature FROM audit_entries WHERE seq = {b})
             || '|' || signature WHERE seq = {a};
         UPDATE audit_entries SET signature = (SELECT substr(signature, instr(signature, '|') + 1)
             FROM audit_entries WHERE seq = {a}) WHERE seq = {b};
         UPDATE audit_entries SET signature = substr(signature, 1, instr(signature, '|') - 1)
             WHERE seq = {a};"
    ));
    drop(conn);
    let report = check(&path, None);
    assert_names(&report, a, "swap signatures");
    assert!(
        report.problems.iter().any(|p| p.seq == Some(b as u64)),
        "{report}"
    );
}

fn a_rolled_back_store_is_caught_by_a_newer_exported_checkpoint(s: TestStore) {
    let built = build(s);
    let older = copy(&built, "older");
    let size = older.raw().int("SELECT MAX(seq) FROM audit_entries", &[]);
    // The store moves on; the operator exports a checkpoint and keeps it elsewhere.
    let newer_note = {
        let store = built.store.open();
        let t = team_keys(&store, &built.team.alice);
        decide(&store, "c-000007", Action::Reject, &t);
        store.checkpoint().unwrap().unwrap()
    };
    // Someone puts the older copy back: it verifies on its own, but not against the export.
    assert!(check(&older, None).is_ok());
    let report = check(&older, Some(&newer_note));
    assert_names(&report, size + 1, "rollback");
    assert!(report.to_string().contains("rolled back"), "{report}");
}

fn a_rewritten_entry_with_recomputed_hashes_is_caught_by_the_signed_checkpoints(s: TestStore) {
    let built = build(s);
    let path = copy(&built, "rewritten");
    let mut conn = path.raw();
    let target = seq_of(&mut conn, "verdict", 1);
    let rows: Vec<(i64, String)> = conn
        .query(
            "SELECT seq, receipt_json FROM audit_entries WHERE seq >= ?1 ORDER BY seq",
            &[V::from(target)],
        )
        .into_iter()
        .map(|r| (r[0].int(), r[1].text()))
        .collect();
    let mut prev = conn.query(
        "SELECT receipt_sha256 FROM audit_entries WHERE seq = ?1",
        &[V::from(target - 1)],
    )[0][0]
        .text();
    for (seq, body) in rows {
        let mut v = cq::json::parse(body.as_bytes(), &Default::default()).unwrap();
        if let cq::json::Value::Object(map) = &mut v {
            map.insert("prev_receipt_sha256".into(), prev.clone().into());
            if seq == target {
                map.insert("verdict".into(), "ACCEPTED".into());
            }
        }
        let text = cq::json::canonical(&v).unwrap();
        let sha = cq::json::sha256_hex(text.as_bytes());
        let leaf = cq::audit::hex(&cq::audit::merkle::leaf_hash(text.as_bytes()));
        conn.execute(
            "UPDATE audit_entries SET receipt_json = ?1, receipt_sha256 = ?2, leaf_hash = ?3,
                 prev_hash = ?4 WHERE seq = ?5",
            &[
                V::from(text),
                V::from(sha.clone()),
                V::from(leaf),
                V::from(prev.clone()),
                V::from(seq),
            ],
        );
        prev = sha;
    }
    drop(conn);
    let report = check(&path, None);
    assert!(!report.is_ok());
    assert_eq!(report.first_bad(), Some(target as u64), "{report}");
}

fn changed_table_rows_are_named_by_their_receipt(s: TestStore) {
    let built = build(s);
    let cases: [(&str, &str, &str); 8] = [
        ("decisions", "UPDATE decisions SET action = 'release' WHERE action = 'reject'", "decision"),
        ("status", "UPDATE compactions SET status = 'released' WHERE id = 'c-000005'", "verdict"),
        ("request", "UPDATE requests SET request_json = replace(request_json, 'step 1', 'step 9') WHERE compaction_id = 'c-000001'", "verdict"),
        ("report", "UPDATE reports SET report_json = replace(report_json, 'PASS', 'PASX') WHERE compaction_id = 'c-000003'", "verdict"),
        ("approval", "UPDATE approvals SET key_id = (SELECT key_id FROM reviewers WHERE name = 'carol') WHERE id = 1", "approval"),
        ("reviewer", "UPDATE reviewers SET role = 'approver' WHERE name = 'carol'", "reviewer"),
        ("reveal", "UPDATE reveals SET finding_id = 'secret-3'", "reveal"),
        ("checkpoint", "UPDATE checkpoints SET note = replace(note, char(10) || '1' , char(10) || '2') WHERE id = 1", "reviewer"),
    ];
    for (name, sql, kind) in cases {
        let path = copy(&built, name);
        let mut conn = path.raw();
        let expected = match name {
            "status" => seq_of(&mut conn, "verdict", 5),
            "request" => seq_of(&mut conn, "verdict", 1),
            "report" => seq_of(&mut conn, "verdict", 3),
            "reviewer" => seq_of(&mut conn, "reviewer", 2),
            "checkpoint" => 1,
            "decisions" => seq_of(&mut conn, "decision", 1),
            _ => seq_of(&mut conn, kind, 0),
        };
        assert_eq!(conn.execute(sql, &[]), 1, "{name} changed nothing");
        drop(conn);
        assert_names(&check(&path, None), expected, name);
    }
}
}
