//! The store's schema as an ordered list of migrations, applied by `PRAGMA user_version`.
//!
//! Migration `i` (1-based) takes a store from version `i - 1` to `i`. Each runs in its own
//! `BEGIN IMMEDIATE` transaction that first rereads the version, so two processes opening an
//! old store at once migrate it exactly once. Never edit a released step; append a new one.

use rusqlite::{Connection, Transaction, TransactionBehavior};

use super::StoreError;

/// One migration: SQL, or a Rust step for data SQL cannot compute.
pub(crate) enum Step {
    Sql(&'static str),
    Rust(fn(&Connection) -> Result<(), StoreError>),
}

/// Version 1: the tables.
const V1: &str = "
CREATE TABLE meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
) STRICT;

CREATE TABLE compactions (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    request_sha256 TEXT NOT NULL UNIQUE,
    summary_sha256 TEXT NOT NULL,
    source_population_sha256 TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('quarantined', 'released', 'rejected', 'accepted')),
    verdict TEXT NOT NULL,
    outcome TEXT NOT NULL,
    finding_status TEXT NOT NULL,
    verdict_class TEXT NOT NULL,
    has_secret_finding INTEGER NOT NULL CHECK (has_secret_finding IN (0, 1)),
    main_reason TEXT NOT NULL,
    anomaly_count INTEGER NOT NULL,
    report_sha256 TEXT NOT NULL,
    created_at TEXT NOT NULL
) STRICT;

-- Request texts live apart from the queue columns, so paging the queue reads small rows.
CREATE TABLE requests (
    compaction_id TEXT PRIMARY KEY REFERENCES compactions(id),
    request_json TEXT NOT NULL
) STRICT;

CREATE TABLE reports (
    id INTEGER PRIMARY KEY,
    compaction_id TEXT NOT NULL REFERENCES compactions(id),
    report_sha256 TEXT NOT NULL,
    report_json TEXT NOT NULL,
    policy_sha256 TEXT NOT NULL,
    verifier_version TEXT NOT NULL,
    created_at TEXT NOT NULL
) STRICT;

CREATE TABLE reviewers (
    name TEXT PRIMARY KEY,
    public_key TEXT NOT NULL,
    key_id TEXT NOT NULL UNIQUE,
    role TEXT NOT NULL CHECK (role IN ('reviewer', 'approver')),
    receipt_seq INTEGER NOT NULL,
    created_at TEXT NOT NULL
) STRICT;

CREATE TABLE decisions (
    id INTEGER PRIMARY KEY,
    compaction_id TEXT NOT NULL UNIQUE REFERENCES compactions(id),
    action TEXT NOT NULL CHECK (action IN ('release', 'reject')),
    reason TEXT NOT NULL,
    note TEXT NOT NULL,
    reviewer TEXT NOT NULL,
    key_id TEXT NOT NULL,
    report_sha256 TEXT NOT NULL,
    receipt_seq INTEGER NOT NULL UNIQUE,
    created_at TEXT NOT NULL
) STRICT;

CREATE TABLE approvals (
    id INTEGER PRIMARY KEY,
    compaction_id TEXT NOT NULL REFERENCES compactions(id),
    reviewer TEXT NOT NULL,
    key_id TEXT NOT NULL,
    report_sha256 TEXT NOT NULL,
    reason TEXT NOT NULL,
    note TEXT NOT NULL,
    receipt_seq INTEGER NOT NULL UNIQUE,
    created_at TEXT NOT NULL,
    UNIQUE (compaction_id, key_id, report_sha256)
) STRICT;

CREATE TABLE audit_entries (
    seq INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    compaction_id TEXT,
    receipt_json TEXT NOT NULL,
    receipt_sha256 TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    leaf_hash TEXT NOT NULL,
    signature TEXT,
    key_id TEXT,
    created_at TEXT NOT NULL
) STRICT;

CREATE TABLE checkpoints (
    id INTEGER PRIMARY KEY,
    tree_size INTEGER NOT NULL,
    root_hash TEXT NOT NULL,
    note TEXT NOT NULL,
    created_at TEXT NOT NULL
) STRICT;
";

/// Version 2: indexes for the paged queue and per-compaction lookups; audited reveals.
const V2: &str = "
CREATE INDEX compactions_by_created ON compactions (created_at, id);
CREATE INDEX compactions_by_status ON compactions (status, created_at, id);
CREATE INDEX compactions_by_anomalies ON compactions (anomaly_count, created_at, id);
CREATE INDEX compactions_by_status_anomalies ON compactions (status, anomaly_count, created_at, id);
CREATE INDEX compactions_by_task ON compactions (tenant_id, task_id, created_at, id);
CREATE INDEX reports_by_compaction ON reports (compaction_id, id);
CREATE INDEX approvals_by_compaction ON approvals (compaction_id);
CREATE INDEX audit_by_compaction ON audit_entries (compaction_id, seq);
CREATE INDEX checkpoints_by_size ON checkpoints (tree_size);

CREATE TABLE reveals (
    id INTEGER PRIMARY KEY,
    compaction_id TEXT NOT NULL REFERENCES compactions(id),
    finding_id TEXT NOT NULL,
    reviewer TEXT NOT NULL,
    key_id TEXT NOT NULL,
    receipt_seq INTEGER NOT NULL UNIQUE,
    created_at TEXT NOT NULL
) STRICT;
";

/// Version 3: a cached Merkle frontier, so checkpoints never reread the whole log.
const V3: &str = "
CREATE TABLE audit_frontier (
    height INTEGER PRIMARY KEY,
    hash TEXT NOT NULL
) STRICT;
";

/// Version 4: every perfect subtree of the audit tree (so inclusion proofs are read, not
/// recomputed), replacing the cached frontier that a writer used to trust; who authorised
/// each reviewer's registration; each agent session's latest compaction (an index the hooks
/// cross-check against receipts and the transcript, never trust).
const V4: &str = "
CREATE TABLE audit_nodes (
    level INTEGER NOT NULL,
    idx INTEGER NOT NULL,
    hash BLOB NOT NULL,
    PRIMARY KEY (level, idx)
) STRICT, WITHOUT ROWID;
DROP TABLE audit_frontier;
ALTER TABLE reviewers ADD COLUMN authorized_by TEXT NOT NULL DEFAULT '';
CREATE TABLE agent_sessions (
    runtime TEXT NOT NULL,
    session_id TEXT NOT NULL,
    compaction_id TEXT NOT NULL DEFAULT '',
    pending_population_sha256 TEXT NOT NULL DEFAULT '',
    pending_turns INTEGER NOT NULL DEFAULT 0,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (runtime, session_id)
) STRICT;
";

pub(crate) const MIGRATIONS: &[&[Step]] = &[
    &[Step::Sql(V1)],
    &[Step::Sql(V2)],
    &[Step::Sql(V3), Step::Rust(fill_frontier)],
    &[
        Step::Sql(V4),
        Step::Rust(super::log::rebuild_nodes),
        Step::Rust(fill_authorisers),
    ],
];

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

pub(crate) fn version(conn: &Connection) -> Result<i64, StoreError> {
    conn.query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(StoreError::sql("reading the schema version"))
}

/// Brings the store to [`SCHEMA_VERSION`].
pub(crate) fn migrate(conn: &Connection) -> Result<(), StoreError> {
    migrate_to(conn, SCHEMA_VERSION)
}

/// Brings the store to `target` (tests use this to build every earlier version).
pub fn migrate_to(conn: &Connection, target: i64) -> Result<(), StoreError> {
    loop {
        let current = version(conn)?;
        if current > SCHEMA_VERSION {
            return Err(StoreError::NewerSchema {
                found: current,
                supported: SCHEMA_VERSION,
            });
        }
        if current >= target {
            return Ok(());
        }
        let tx = Transaction::new_unchecked(conn, TransactionBehavior::Immediate)
            .map_err(StoreError::sql("starting a migration"))?;
        // Another process may have migrated while we waited for the lock.
        if version(&tx)? == current {
            let steps = usize::try_from(current)
                .ok()
                .and_then(|i| MIGRATIONS.get(i))
                .ok_or_else(|| {
                    StoreError::Corrupt(format!("no migration from version \"{current}\""))
                })?;
            for step in *steps {
                match step {
                    Step::Sql(sql) => tx
                        .execute_batch(sql)
                        .map_err(StoreError::sql("applying a schema migration"))?,
                    Step::Rust(f) => f(&tx)?,
                }
            }
            tx.pragma_update(None, "user_version", current + 1)
                .map_err(StoreError::sql("recording the schema version"))?;
        }
        tx.commit()
            .map_err(StoreError::sql("committing a migration"))?;
    }
}

/// Version 4's step: who authorised each registration, from its receipt (empty for a
/// registration made before receipts named their authoriser).
fn fill_authorisers(conn: &Connection) -> Result<(), StoreError> {
    let err = StoreError::sql("reading reviewer registrations");
    let mut st = conn
        .prepare("SELECT seq, receipt_json FROM audit_entries WHERE kind = 'reviewer'")
        .map_err(err)?;
    let rows = st
        .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))
        .and_then(Iterator::collect::<Result<Vec<_>, _>>)
        .map_err(err)?;
    for (seq, body) in rows {
        let by = crate::audit::receipt_fields::read(&body)
            .and_then(|b| b.str("authorized_by").map(str::to_owned))
            .unwrap_or_default();
        conn.execute(
            "UPDATE reviewers SET authorized_by = ?2 WHERE receipt_seq = ?1",
            rusqlite::params![seq, by],
        )
        .map_err(StoreError::sql("recording reviewer authorisers"))?;
    }
    Ok(())
}

/// Version 3's step: the frontier from the stored leaf hashes (version 4 replaces it).
fn fill_frontier(conn: &Connection) -> Result<(), StoreError> {
    let err = StoreError::sql("reading audit leaves");
    let mut st = conn
        .prepare("SELECT leaf_hash FROM audit_entries ORDER BY seq")
        .map_err(err)?;
    let leaves = st
        .query_map([], |r| r.get::<_, String>(0))
        .and_then(Iterator::collect::<Result<Vec<_>, _>>)
        .map_err(err)?;
    let mut frontier = crate::audit::merkle::Frontier::new();
    for leaf in leaves {
        let leaf = crate::audit::unhex32(&leaf).ok_or_else(|| {
            StoreError::Corrupt("an audit entry has a malformed leaf hash".into())
        })?;
        frontier.push(leaf);
    }
    for (height, hash) in frontier.levels() {
        conn.execute(
            "INSERT INTO audit_frontier (height, hash) VALUES (?1, ?2)",
            rusqlite::params![height, crate::audit::hex(&hash)],
        )
        .map_err(StoreError::sql("filling the audit frontier"))?;
    }
    Ok(())
}
