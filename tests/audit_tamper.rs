//! Tampering with the stored log or the tables it describes is detected by `audit::verify`,
//! which names the entry: one changed byte in each kind of stored field, a deleted entry,
//! two reordered entries, a truncated log, swapped signatures, and a store rolled back to an
//! older copy while a newer exported checkpoint is kept elsewhere.

#![allow(clippy::unwrap_used)]

#[path = "store_fixtures/fixtures.rs"]
mod fixtures;

use std::path::{Path, PathBuf};

use cq::audit::{verify, VerifyReport};
use cq::store::{store_key_path, Action, DecisionRequest, Mode, Store};
use fixtures::*;
use rusqlite::{params, Connection};

struct Built {
    dir: tempfile::TempDir,
    path: PathBuf,
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
fn build() -> Built {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    let store = open(&path);
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
        dir,
        path,
        team,
        exported,
    }
}

/// A fresh copy of the built store to damage.
fn copy(built: &Built, name: &str) -> PathBuf {
    let path = built.dir.path().join(format!("{name}.db"));
    std::fs::copy(&built.path, &path).unwrap();
    std::fs::copy(store_key_path(&built.path), store_key_path(&path)).unwrap();
    path
}

fn check(path: &Path, exported: Option<&str>) -> VerifyReport {
    let store = Store::open(path, Mode::ReadOnly).unwrap();
    verify(&store, exported).unwrap()
}

fn seq_of(conn: &Connection, kind: &str, nth: usize) -> i64 {
    let mut st = conn
        .prepare("SELECT seq FROM audit_entries WHERE kind = ?1 ORDER BY seq")
        .unwrap();
    let seqs: Vec<i64> = st
        .query_map([kind], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
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

#[test]
fn the_untouched_store_verifies_with_and_without_the_export() {
    let built = build();
    assert!(check(&built.path, None).is_ok());
    let report = check(&built.path, Some(&built.exported));
    assert!(report.is_ok(), "{report}");
    assert_eq!(report.exported_size, Some(report.entries));
}

#[test]
fn one_changed_byte_in_any_column_of_any_receipt_kind_is_named() {
    let built = build();
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
            let conn = raw(&path);
            let seq = seq_of(&conn, kind, 0);
            let value: Option<String> = conn
                .query_row(
                    &format!("SELECT {column} FROM audit_entries WHERE seq = ?1"),
                    [seq],
                    |r| r.get(0),
                )
                .unwrap();
            // Unsigned kinds have no signature or key id: forging one must be caught too.
            let forged = match value {
                Some(v) => flip(&v),
                None => "AAAA".to_owned(),
            };
            let sql = format!("UPDATE audit_entries SET {column} = ?1 WHERE seq = ?2");
            conn.execute(&sql, params![forged, seq]).unwrap();
            drop(conn);
            assert_names(&check(&path, None), seq, &case);
        }
    }
}

#[test]
fn a_changed_sequence_number_is_named() {
    let built = build();
    let path = copy(&built, "seq");
    let conn = raw(&path);
    let seq = seq_of(&conn, "decision", 0);
    conn.execute("UPDATE audit_entries SET seq = 1000 WHERE seq = ?1", [seq])
        .unwrap();
    drop(conn);
    assert_names(&check(&path, None), seq, "seq");
}

#[test]
fn a_deleted_entry_is_named() {
    let built = build();
    let path = copy(&built, "deleted");
    let conn = raw(&path);
    let seq = seq_of(&conn, "verdict", 2);
    conn.execute("DELETE FROM audit_entries WHERE seq = ?1", [seq])
        .unwrap();
    drop(conn);
    assert_names(&check(&path, None), seq, "delete");
}

#[test]
fn two_reordered_entries_are_named() {
    let built = build();
    let path = copy(&built, "reordered");
    let conn = raw(&path);
    let a = seq_of(&conn, "decision", 0);
    let b = a + 1;
    conn.execute_batch(&format!(
        "UPDATE audit_entries SET seq = -1 WHERE seq = {a};
         UPDATE audit_entries SET seq = {a} WHERE seq = {b};
         UPDATE audit_entries SET seq = {b} WHERE seq = -1;"
    ))
    .unwrap();
    drop(conn);
    assert_names(&check(&path, None), a, "reorder");
}

#[test]
fn a_truncated_log_is_named_by_its_checkpoints_or_the_export() {
    let built = build();
    let path = copy(&built, "truncated");
    let conn = raw(&path);
    let total: i64 = conn
        .query_row("SELECT MAX(seq) FROM audit_entries", [], |r| r.get(0))
        .unwrap();
    let keep = total - 4;
    conn.execute("DELETE FROM audit_entries WHERE seq > ?1", [keep])
        .unwrap();
    drop(conn);
    assert_names(&check(&path, None), keep + 1, "truncate");
    // An attacker who also drops the later checkpoints is still caught by the export.
    let conn = raw(&path);
    conn.execute("DELETE FROM checkpoints WHERE tree_size > ?1", [keep])
        .unwrap();
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

#[test]
fn swapped_signatures_are_named() {
    let built = build();
    let path = copy(&built, "swapped");
    let conn = raw(&path);
    let a = seq_of(&conn, "decision", 0);
    let b = seq_of(&conn, "decision", 1);
    conn.execute_batch(&format!(
        "UPDATE audit_entries SET signature = (SELECT signature FROM audit_entries WHERE seq = {b})
             || '|' || signature WHERE seq = {a};
         UPDATE audit_entries SET signature = (SELECT substr(signature, instr(signature, '|') + 1)
             FROM audit_entries WHERE seq = {a}) WHERE seq = {b};
         UPDATE audit_entries SET signature = substr(signature, 1, instr(signature, '|') - 1)
             WHERE seq = {a};"
    ))
    .unwrap();
    drop(conn);
    let report = check(&path, None);
    assert_names(&report, a, "swap signatures");
    assert!(
        report.problems.iter().any(|p| p.seq == Some(b as u64)),
        "{report}"
    );
}

#[test]
fn a_rolled_back_store_is_caught_by_a_newer_exported_checkpoint() {
    let built = build();
    let older = copy(&built, "older");
    let size: i64 = raw(&older)
        .query_row("SELECT MAX(seq) FROM audit_entries", [], |r| r.get(0))
        .unwrap();
    // The store moves on; the operator exports a checkpoint and keeps it elsewhere.
    let newer_note = {
        let store = open(&built.path);
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

#[test]
fn a_rewritten_entry_with_recomputed_hashes_is_caught_by_the_signed_checkpoints() {
    let built = build();
    let path = copy(&built, "rewritten");
    let conn = raw(&path);
    let target = seq_of(&conn, "verdict", 1);
    let rows: Vec<(i64, String)> = conn
        .prepare("SELECT seq, receipt_json FROM audit_entries WHERE seq >= ?1 ORDER BY seq")
        .unwrap()
        .query_map([target], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mut prev: String = conn
        .query_row(
            "SELECT receipt_sha256 FROM audit_entries WHERE seq = ?1",
            [target - 1],
            |r| r.get(0),
        )
        .unwrap();
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
            params![text, sha, leaf, prev, seq],
        )
        .unwrap();
        prev = sha;
    }
    drop(conn);
    let report = check(&path, None);
    assert!(!report.is_ok());
    assert_eq!(report.first_bad(), Some(target as u64), "{report}");
}

#[test]
fn changed_table_rows_are_named_by_their_receipt() {
    let built = build();
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
        let conn = raw(&path);
        let expected = match name {
            "status" => seq_of(&conn, "verdict", 5),
            "request" => seq_of(&conn, "verdict", 1),
            "report" => seq_of(&conn, "verdict", 3),
            "reviewer" => seq_of(&conn, "reviewer", 2),
            "checkpoint" => 1,
            "decisions" => seq_of(&conn, "decision", 1),
            _ => seq_of(&conn, kind, 0),
        };
        assert_eq!(conn.execute(sql, []).unwrap(), 1, "{name} changed nothing");
        drop(conn);
        assert_names(&check(&path, None), expected, name);
    }
}
