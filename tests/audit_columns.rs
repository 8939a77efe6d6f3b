//! Every column of every table, edited one row at a time: each edit is either caught (`cq
//! audit verify` fails and names the entry, the schema refuses the edit, or the store refuses
//! to open) or is on the list below of columns whose value nothing a reviewer, a rule or a
//! runtime reads, with the reason. A new table or column fails this test until it is bound or
//! listed.

#![allow(clippy::unwrap_used)]

#[path = "store_fixtures/fixtures.rs"]
mod fixtures;

use std::path::{Path, PathBuf};

use cq::store::{store_key_path, Action, DecisionRequest, Mode, Store};
use fixtures::*;
use rusqlite::types::Value as Sql;

/// Columns whose value is read by nothing, and why.
const HARMLESS: &[(&str, &str, &str)] = &[
    (
        "checkpoints",
        "created_at",
        "when a checkpoint row was written; nothing reads it (the signed note carries size and root)",
    ),
    (
        "checkpoints",
        "id",
        "a surrogate key; the latest checkpoint is found by tree size, and every row's note is verified",
    ),
    (
        "decisions",
        "id",
        "a surrogate key; a decision is matched to its receipt by receipt_seq (ids must still ascend)",
    ),
    (
        "approvals",
        "id",
        "a surrogate key; approvals are matched to receipts by receipt_seq (ids must still ascend)",
    ),
    (
        "reveals",
        "id",
        "a surrogate key; reveals are matched to receipts by receipt_seq (ids must still ascend)",
    ),
    (
        "agent_sessions",
        "*",
        "an index from an agent session to its latest compaction: the PreToolUse hook checks the compaction it names against its verified receipts (session) and the transcript (summary digest), so an edit can only make the hook deny (tests/agents_hook_e2e.rs)",
    ),
    (
        "reports",
        "id",
        "a surrogate key; only the order matters, and report rows are matched to receipts in order",
    ),
];

struct Built {
    dir: tempfile::TempDir,
    path: PathBuf,
}

fn decide(store: &Store, id: &str, action: Action, key: &cq::audit::NamedKey) {
    let seen = store.compaction(id).unwrap().unwrap().summary.report_sha256;
    let req = DecisionRequest {
        compaction_id: id.into(),
        action,
        reason: REASONS[1].into(),
        note: "column fixture".into(),
        seen_report_sha256: seen,
    };
    store.decide(&req, key, &rules()).unwrap();
}

/// Every kind of row: reviewers, verdicts, a release, a reject, two approvals, a changed
/// rerun, a reveal.
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
        .set_session_compaction("claude-code", "task-1", "c-000001")
        .unwrap();
    store
        .set_session_pending("claude-code", "task-1", &"a".repeat(64), 3)
        .unwrap();
    assert!(store.verify(None).unwrap().is_ok());
    Built { dir, path }
}

fn tables(conn: &rusqlite::Connection) -> Vec<(String, Vec<String>)> {
    let names: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    names
        .into_iter()
        .map(|t| {
            let columns = conn
                .prepare(&format!("SELECT name FROM pragma_table_info('{t}')"))
                .unwrap()
                .query_map([], |r| r.get(0))
                .unwrap()
                .map(Result::unwrap)
                .collect();
            (t, columns)
        })
        .collect()
}

/// A different value of the same type.
fn changed(value: &Sql) -> Option<Sql> {
    Some(match value {
        Sql::Integer(n) => Sql::Integer(if *n == 0 || *n == 1 { 1 - n } else { n + 1 }),
        Sql::Text(t) if t.is_empty() => Sql::Text("x".into()),
        Sql::Text(t) => {
            let mut chars: Vec<char> = t.chars().collect();
            let last = chars.len() - 1;
            chars[last] = match chars[last] {
                'a' => 'b',
                '0' => '1',
                _ if chars[last].is_ascii_hexdigit() => '0',
                _ => 'a',
            };
            Sql::Text(chars.into_iter().collect())
        }
        Sql::Blob(b) if !b.is_empty() => {
            let mut b = b.clone();
            b[0] ^= 1;
            Sql::Blob(b)
        }
        _ => return None,
    })
}

/// Which statuses a compaction may have: a status edit stays inside the CHECK constraint.
fn status_swap(value: &Sql) -> Sql {
    let Sql::Text(t) = value else {
        return value.clone();
    };
    Sql::Text(
        match t.as_str() {
            "quarantined" => "released",
            "accepted" => "quarantined",
            _ => "accepted",
        }
        .into(),
    )
}

fn caught(path: &Path) -> Option<String> {
    match Store::open(path, Mode::ReadOnly) {
        Err(e) => Some(format!("refused to open: {e}")),
        Ok(store) => match store.verify(None) {
            Err(e) => Some(format!("verify failed to run: {e}")),
            Ok(report) if report.is_ok() => None,
            Ok(report) => Some(report.problems[0].message.clone()),
        },
    }
}

#[test]
fn every_column_edit_is_caught_or_read_by_nothing() {
    let built = build();
    let conn = rusqlite::Connection::open(&built.path).unwrap();
    conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
        .unwrap();
    let schema = tables(&conn);
    drop(conn);
    let (mut tried, mut refused, mut caught_n, mut harmless) = (0, 0, 0, 0);
    let mut unnoticed = Vec::new();
    for (table, columns) in &schema {
        let key_column = if table == "audit_nodes" {
            "level || '/' || idx"
        } else {
            "rowid"
        };
        for column in columns {
            let copy_path = built.dir.path().join("copy.db");
            let conn = rusqlite::Connection::open(&built.path).unwrap();
            let rows: Vec<(Sql, Sql)> = conn
                .prepare(&format!(
                    "SELECT {key_column}, \"{column}\" FROM \"{table}\""
                ))
                .unwrap()
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
                .unwrap()
                .map(Result::unwrap)
                .collect();
            drop(conn);
            for (key, value) in rows {
                let new = if column == "status" {
                    Some(status_swap(&value))
                } else {
                    changed(&value)
                };
                let Some(new) = new else { continue };
                let _ = std::fs::remove_file(&copy_path);
                std::fs::copy(&built.path, &copy_path).unwrap();
                std::fs::copy(store_key_path(&built.path), store_key_path(&copy_path)).unwrap();
                let conn = rusqlite::Connection::open(&copy_path).unwrap();
                conn.execute_batch("PRAGMA foreign_keys = OFF").unwrap();
                tried += 1;
                let edited = conn.execute(
                    &format!("UPDATE \"{table}\" SET \"{column}\" = ?1 WHERE {key_column} = ?2"),
                    rusqlite::params![new, key],
                );
                drop(conn);
                if edited.is_err() {
                    refused += 1;
                    continue;
                }
                match caught(&copy_path) {
                    Some(_) => caught_n += 1,
                    None if HARMLESS
                        .iter()
                        .any(|(t, c, _)| t == table && (c == column || *c == "*")) =>
                    {
                        harmless += 1
                    }
                    None => unnoticed.push(format!("{table}.{column} (row {key:?})")),
                }
                std::fs::remove_file(store_key_path(&copy_path)).unwrap();
            }
        }
    }
    eprintln!(
        "column edits: {tried} tried, {refused} refused by the schema, {caught_n} caught by verify or open, {harmless} on columns nothing reads, {} unnoticed",
        unnoticed.len()
    );
    for (t, c, why) in HARMLESS {
        eprintln!("  harmless {t}.{c}: {why}");
    }
    assert!(
        unnoticed.is_empty(),
        "edits nothing noticed: {unnoticed:#?}"
    );
    assert!(tried > 150, "only {tried} edits tried");
}
