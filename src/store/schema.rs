//! The store's schema as an ordered list of migrations, one list for both backends: each SQL
//! step is written in SQLite's dialect and PostgreSQL's ([`postgres_ddl`]), and a Rust step
//! (data SQL cannot compute) runs on either. The version is SQLite's `PRAGMA user_version`
//! or PostgreSQL's `schema_version` row.
//!
//! Migration `i` (1-based) takes a store from version `i - 1` to `i`. Each runs in its own
//! write transaction (the store's write lock) that first rereads the version, so two processes
//! opening an old store at once migrate it exactly once. Never edit a released step; append a
//! new one, in both dialects.

mod postgres_ddl;

use std::path::Path;

use super::sql::{params, Conn, Dialect, Transaction, Tx};
use super::StoreError;

/// One migration step: SQL in each dialect, or a Rust step for data SQL cannot compute.
pub(crate) enum Step {
    Sql {
        sqlite: &'static str,
        postgres: &'static str,
    },
    Rust(fn(&dyn Conn) -> Result<(), StoreError>),
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

/// Version 5: the queue's time order within each verdict class, so the most-severe-first
/// order is read by key class by class ([`super::page`]), one index walk per page however
/// deep, with or without a status. Plain indexes: the same text on both backends.
const V5: &str = "
CREATE INDEX compactions_by_class ON compactions (verdict_class, created_at, id);
CREATE INDEX compactions_by_status_class ON compactions (status, verdict_class, created_at, id);
";

pub(crate) const MIGRATIONS: &[&[Step]] = &[
    &[Step::Sql {
        sqlite: V1,
        postgres: postgres_ddl::V1,
    }],
    &[Step::Sql {
        sqlite: V2,
        postgres: postgres_ddl::V2,
    }],
    &[
        Step::Sql {
            sqlite: V3,
            postgres: postgres_ddl::V3,
        },
        Step::Rust(fill_frontier),
    ],
    &[
        Step::Sql {
            sqlite: V4,
            postgres: postgres_ddl::V4,
        },
        Step::Rust(super::log::rebuild_nodes),
        Step::Rust(fill_authorisers),
    ],
    &[Step::Sql {
        sqlite: V5,
        postgres: V5,
    }],
];

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

pub(crate) fn version(conn: &dyn Conn) -> Result<i64, StoreError> {
    conn.schema_version()
        .map_err(StoreError::sql("reading the schema version"))
}

/// Brings the store to [`SCHEMA_VERSION`].
pub(crate) fn migrate(conn: &dyn Conn) -> Result<(), StoreError> {
    migrate_to(conn, SCHEMA_VERSION)
}

/// Refuses a store a read-only open cannot use: none at all (an empty database), or one of
/// another schema version.
pub(crate) fn check_current(conn: &dyn Conn, shown: &Path) -> Result<(), StoreError> {
    let found = version(conn)?;
    if found == 0 && conn.dialect() == Dialect::Postgres {
        return Err(StoreError::Missing(shown.to_owned()));
    }
    if found > SCHEMA_VERSION {
        return Err(StoreError::NewerSchema {
            found,
            supported: SCHEMA_VERSION,
        });
    }
    if found < SCHEMA_VERSION {
        return Err(StoreError::OlderSchema {
            found,
            supported: SCHEMA_VERSION,
        });
    }
    Ok(())
}

/// Brings the store to `target`.
pub(crate) fn migrate_to(conn: &dyn Conn, target: i64) -> Result<(), StoreError> {
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
        let tx =
            Transaction::begin(conn, Tx::Write).map_err(StoreError::sql("starting a migration"))?;
        // Another process may have migrated while we waited for the lock.
        if version(conn)? == current {
            let steps = usize::try_from(current)
                .ok()
                .and_then(|i| MIGRATIONS.get(i))
                .ok_or_else(|| {
                    StoreError::Corrupt(format!("no migration from version \"{current}\""))
                })?;
            for step in *steps {
                match step {
                    Step::Sql { sqlite, postgres } => conn
                        .batch(match conn.dialect() {
                            Dialect::Sqlite => sqlite,
                            Dialect::Postgres => postgres,
                        })
                        .map_err(StoreError::sql("applying a schema migration"))?,
                    Step::Rust(f) => f(conn)?,
                }
            }
            conn.set_schema_version(current + 1)
                .map_err(StoreError::sql("recording the schema version"))?;
        }
        tx.commit()
            .map_err(StoreError::sql("committing a migration"))?;
    }
}

/// Version 4's step: who authorised each registration, from its receipt (empty for a
/// registration made before receipts named their authoriser).
fn fill_authorisers(conn: &dyn Conn) -> Result<(), StoreError> {
    let rows = conn
        .rows(
            "SELECT seq, receipt_json FROM audit_entries WHERE kind = 'reviewer'",
            &[],
            |r| Ok((r.int(0)?, r.string(1)?)),
        )
        .map_err(StoreError::sql("reading reviewer registrations"))?;
    for (seq, body) in rows {
        let by = crate::audit::receipt_fields::read(&body)
            .and_then(|b| b.str("authorized_by").map(str::to_owned))
            .unwrap_or_default();
        conn.execute(
            "UPDATE reviewers SET authorized_by = ?2 WHERE receipt_seq = ?1",
            &params![seq, &by],
        )
        .map_err(StoreError::sql("recording reviewer authorisers"))?;
    }
    Ok(())
}

/// Version 3's step: the frontier from the stored leaf hashes (version 4 replaces it).
fn fill_frontier(conn: &dyn Conn) -> Result<(), StoreError> {
    let leaves = conn
        .rows(
            "SELECT leaf_hash FROM audit_entries ORDER BY seq",
            &[],
            |r| r.string(0),
        )
        .map_err(StoreError::sql("reading audit leaves"))?;
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
            &params![height, &crate::audit::hex(&hash)],
        )
        .map_err(StoreError::sql("filling the audit frontier"))?;
    }
    Ok(())
}
