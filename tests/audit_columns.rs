//! Every column of every table, edited one row at a time: each edit is either caught (`cq
//! audit verify` fails and names the entry, the schema refuses the edit, or the store refuses
//! to open) or is on the list below of columns whose value nothing a reviewer, a rule or a
//! runtime reads, with the reason. A new table or column fails this test until it is bound or
//! listed. On both backends.

#![allow(clippy::unwrap_used)]

#[path = "store_fixtures/fixtures.rs"]
mod fixtures;

use cq::store::{Action, DecisionRequest, Mode, Store};
use fixtures::*;

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
fn build(s: &TestStore) {
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
        .set_session_compaction("claude-code", "task-1", "c-000001")
        .unwrap();
    store
        .set_session_pending("claude-code", "task-1", &"a".repeat(64), 3)
        .unwrap();
    assert!(store.verify(None).unwrap().is_ok());
}

/// A different value of the same type.
fn changed(value: &V) -> Option<V> {
    Some(match value {
        V::I(n) => V::I(if *n == 0 || *n == 1 { 1 - n } else { n + 1 }),
        V::T(t) if t.is_empty() => V::T("x".into()),
        V::T(t) => {
            let mut chars: Vec<char> = t.chars().collect();
            let last = chars.len() - 1;
            chars[last] = match chars[last] {
                'a' => 'b',
                '0' => '1',
                _ if chars[last].is_ascii_hexdigit() => '0',
                _ => 'a',
            };
            V::T(chars.into_iter().collect())
        }
        V::B(b) if !b.is_empty() => {
            let mut b = b.clone();
            b[0] ^= 1;
            V::B(b)
        }
        _ => return None,
    })
}

/// Which statuses a compaction may have: a status edit stays inside the CHECK constraint.
fn status_swap(value: &V) -> V {
    let V::T(t) = value else {
        return value.clone();
    };
    V::T(
        match t.as_str() {
            "quarantined" => "released",
            "accepted" => "quarantined",
            _ => "accepted",
        }
        .into(),
    )
}

fn caught(store: &TestStore) -> Option<String> {
    match store.try_open(Mode::ReadOnly) {
        Err(e) => Some(format!("refused to open: {e}")),
        Ok(store) => match store.verify(None) {
            Err(e) => Some(format!("verify failed to run: {e}")),
            Ok(report) if report.is_ok() => None,
            Ok(report) => Some(report.problems[0].message.clone()),
        },
    }
}

/// How a row is named for an edit: SQLite's rowid (the primary key of the table without
/// one), PostgreSQL's tuple id.
fn row_key(kind: Kind, table: &str) -> (&'static str, &'static str) {
    match (kind, table) {
        (Kind::Sqlite, "audit_nodes") => ("level || '/' || idx", "level || '/' || idx = ?2"),
        (Kind::Sqlite, _) => ("rowid", "rowid = ?2"),
        (Kind::Postgres, _) => ("ctid::text", "ctid = CAST(CAST(?2 AS text) AS tid)"),
    }
}

/// Applies one edit, runs `check` on the edited store and undoes the edit: SQLite edits a
/// fresh copy of the file; PostgreSQL edits the store itself and puts the old value back
/// (copying a schema per edit is too slow). `None` when the schema refused the edit.
fn with_edit<T>(
    s: &TestStore,
    table: &str,
    column: &str,
    row: &V,
    old: &V,
    new: V,
    check: impl FnOnce(&TestStore) -> T,
) -> Option<T> {
    let (_, matches) = row_key(s.kind, table);
    let update = format!("UPDATE \"{table}\" SET \"{column}\" = ?1 WHERE {matches}");
    match s.kind {
        Kind::Sqlite => {
            let copy = s.copy("column");
            let edited = copy.raw().try_execute(&update, &[new, row.clone()]);
            assert_ne!(edited, Ok(0), "{table}.{column}: the edit matched no row");
            edited.ok().map(|_| check(&copy))
        }
        Kind::Postgres => {
            let mut conn = s.raw();
            let edited = conn.try_query(
                &format!("{update} RETURNING ctid::text"),
                &[new, row.clone()],
            );
            let moved = match edited {
                Err(_) => return None,
                Ok(rows) => rows
                    .first()
                    .map(|r| r[0].clone())
                    .unwrap_or_else(|| panic!("{table}.{column}: the edit matched no row")),
            };
            let result = check(s);
            assert_eq!(
                conn.execute(&update, &[old.clone(), moved]),
                1,
                "{table}.{column}: the edit could not be undone"
            );
            Some(result)
        }
    }
}

both! {
fn every_column_edit_is_caught_or_read_by_nothing(s: TestStore) {
    build(&s);
    if s.kind == Kind::Sqlite {
        s.raw().batch("PRAGMA wal_checkpoint(TRUNCATE)");
    }
    let schema = s.tables();
    let (mut tried, mut refused, mut caught_n, mut harmless) = (0, 0, 0, 0);
    let mut unnoticed = Vec::new();
    for (table, columns) in &schema {
        let (key, _) = row_key(s.kind, table);
        for column in columns {
            let rows = s.raw().query(
                &format!("SELECT {key}, \"{column}\" FROM \"{table}\" ORDER BY {key}"),
                &[],
            );
            for r in rows {
                let (row, value) = (&r[0], &r[1]);
                let new = if column == "status" {
                    Some(status_swap(value))
                } else {
                    changed(value)
                };
                let Some(new) = new else { continue };
                tried += 1;
                let Some(found) = with_edit(&s, table, column, row, value, new, caught) else {
                    refused += 1;
                    continue;
                };
                match found {
                    Some(_) => caught_n += 1,
                    None if HARMLESS
                        .iter()
                        .any(|(t, c, _)| t == table && (c == column || *c == "*")) =>
                    {
                        harmless += 1
                    }
                    None => unnoticed.push(format!("{table}.{column} (row {row:?})")),
                }
            }
        }
    }
    eprintln!(
        "column edits ({:?}): {tried} tried, {refused} refused by the schema, {caught_n} caught by verify or open, {harmless} on columns nothing reads, {} unnoticed",
        s.kind,
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
}
