//! Moving a store between backends (`cq store copy FROM TO`): every row of every table, the
//! audit log byte for byte with its tree and signed checkpoints, and the store's identity, so
//! the copy verifies on its own with the same root and keeps being written with the same key.
//!
//! It guarantees that the source is read in one snapshot, that the target is empty before and
//! written in one transaction (a failed copy leaves it without a store), and that the target
//! receives the source's signing key file when the source's is at hand and the target has
//! none (a different key already there is refused). Surrogate ids are renumbered in their
//! order; nothing reads them but that order.

use std::path::Path;

use super::sql::{insert_rows, Conn, Param, SqlError, Transaction, Tx};
use super::{schema, signing_key_files, Db, Location, Mode, Store, StoreError};
use crate::audit::keys::NamedKey;

/// What a copy moved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Copied {
    /// Rows copied, per table, in copy order.
    pub rows: Vec<(&'static str, u64)>,
    /// Whether the target received the signing key file (it can be written to).
    pub key_copied: bool,
}

/// How a column is read.
#[derive(Clone, Copy)]
enum Col {
    Int,
    Text,
    Bytes,
}

/// Every table, parents first, with the columns copied (surrogate ids left out) and the order
/// rows are read in.
type Columns = &'static [(&'static str, Col)];

const TABLES: &[(&str, Columns, &str)] = &[
    ("meta", &[("key", Col::Text), ("value", Col::Text)], "key"),
    (
        "compactions",
        &[
            ("id", Col::Text),
            ("tenant_id", Col::Text),
            ("task_id", Col::Text),
            ("request_sha256", Col::Text),
            ("summary_sha256", Col::Text),
            ("source_population_sha256", Col::Text),
            ("status", Col::Text),
            ("verdict", Col::Text),
            ("outcome", Col::Text),
            ("finding_status", Col::Text),
            ("verdict_class", Col::Text),
            ("has_secret_finding", Col::Int),
            ("main_reason", Col::Text),
            ("anomaly_count", Col::Int),
            ("report_sha256", Col::Text),
            ("created_at", Col::Text),
        ],
        "created_at, id",
    ),
    (
        "requests",
        &[("compaction_id", Col::Text), ("request_json", Col::Text)],
        "compaction_id",
    ),
    (
        "reports",
        &[
            ("compaction_id", Col::Text),
            ("report_sha256", Col::Text),
            ("report_json", Col::Text),
            ("policy_sha256", Col::Text),
            ("verifier_version", Col::Text),
            ("created_at", Col::Text),
        ],
        "id",
    ),
    (
        "reviewers",
        &[
            ("name", Col::Text),
            ("public_key", Col::Text),
            ("key_id", Col::Text),
            ("role", Col::Text),
            ("receipt_seq", Col::Int),
            ("created_at", Col::Text),
            ("authorized_by", Col::Text),
        ],
        "receipt_seq, name",
    ),
    (
        "decisions",
        &[
            ("compaction_id", Col::Text),
            ("action", Col::Text),
            ("reason", Col::Text),
            ("note", Col::Text),
            ("reviewer", Col::Text),
            ("key_id", Col::Text),
            ("report_sha256", Col::Text),
            ("receipt_seq", Col::Int),
            ("created_at", Col::Text),
        ],
        "id",
    ),
    (
        "approvals",
        &[
            ("compaction_id", Col::Text),
            ("reviewer", Col::Text),
            ("key_id", Col::Text),
            ("report_sha256", Col::Text),
            ("reason", Col::Text),
            ("note", Col::Text),
            ("receipt_seq", Col::Int),
            ("created_at", Col::Text),
        ],
        "id",
    ),
    (
        "reveals",
        &[
            ("compaction_id", Col::Text),
            ("finding_id", Col::Text),
            ("reviewer", Col::Text),
            ("key_id", Col::Text),
            ("receipt_seq", Col::Int),
            ("created_at", Col::Text),
        ],
        "id",
    ),
    (
        "audit_entries",
        &[
            ("seq", Col::Int),
            ("kind", Col::Text),
            ("compaction_id", Col::Text),
            ("receipt_json", Col::Text),
            ("receipt_sha256", Col::Text),
            ("prev_hash", Col::Text),
            ("leaf_hash", Col::Text),
            ("signature", Col::Text),
            ("key_id", Col::Text),
            ("created_at", Col::Text),
        ],
        "seq",
    ),
    (
        "audit_nodes",
        &[("level", Col::Int), ("idx", Col::Int), ("hash", Col::Bytes)],
        "level, idx",
    ),
    (
        "checkpoints",
        &[
            ("tree_size", Col::Int),
            ("root_hash", Col::Text),
            ("note", Col::Text),
            ("created_at", Col::Text),
        ],
        "id",
    ),
    (
        "agent_sessions",
        &[
            ("runtime", Col::Text),
            ("session_id", Col::Text),
            ("compaction_id", Col::Text),
            ("pending_population_sha256", Col::Text),
            ("pending_turns", Col::Int),
            ("updated_at", Col::Text),
        ],
        "runtime, session_id",
    ),
];

/// Rows buffered before they are written.
const ROWS_PER_FLUSH: usize = 512;

/// An owned value on its way from one backend to the other.
enum Value {
    Int(i64),
    Text(String),
    Bytes(Vec<u8>),
    Null,
}

impl Value {
    fn param(&self) -> Param<'_> {
        match self {
            Value::Int(v) => Param::Int(*v),
            Value::Text(v) => Param::Text(v),
            Value::Bytes(v) => Param::Bytes(v),
            Value::Null => Param::Null,
        }
    }
}

/// Copies the store `from` into the empty store location `to`, whose signing key file is
/// `signing_key` (else where [`signing_key_files`] says); see the module docs.
pub fn copy(from: &Store, to: &Path, signing_key: Option<&Path>) -> Result<Copied, StoreError> {
    let location = Location::of(to);
    let shown = location.shown_path();
    let files = signing_key_files(&location, signing_key)?;
    let target = Db::connect(&location, Mode::ReadWrite, &files)?;
    let conn = target.conn();
    if schema::version(conn)? != 0 {
        return Err(StoreError::TargetNotEmpty(shown));
    }
    if files.key.exists() && !same_key(&files.key, from)? {
        return Err(StoreError::KeyMismatch { path: files.key });
    }
    schema::migrate(conn)?;
    let tx = Transaction::begin(conn, Tx::Write)
        .map_err(StoreError::sql("starting the copy's write transaction"))?;
    let rows = from.read(|source| {
        let mut rows = Vec::with_capacity(TABLES.len());
        for (table, columns, order) in TABLES {
            rows.push((*table, copy_table(source, conn, table, columns, order)?));
        }
        Ok::<_, StoreError>(rows)
    })?;
    tx.commit()
        .map_err(StoreError::sql("committing the copy"))?;
    let source_key = &from.key_files().key;
    let key_copied = if !files.key.exists() && source_key.exists() {
        let key = NamedKey::load(source_key)?;
        key.save_new(&files.key)?;
        std::fs::write(&files.public, format!("{}\n", key.verifier_text())).map_err(|source| {
            StoreError::Io {
                context: "writing the store's public key",
                path: files.public.clone(),
                source,
            }
        })?;
        true
    } else {
        files.key.exists()
    };
    Ok(Copied { rows, key_copied })
}

/// Whether the key file at `path` is the store's key.
fn same_key(path: &Path, store: &Store) -> Result<bool, StoreError> {
    Ok(NamedKey::load(path)?.verifying() == *store.public_key())
}

fn copy_table(
    source: &dyn Conn,
    target: &dyn Conn,
    table: &str,
    columns: &[(&str, Col)],
    order: &str,
) -> Result<u64, StoreError> {
    let names: Vec<&str> = columns.iter().map(|(n, _)| *n).collect();
    let sql = format!("SELECT {} FROM {table} ORDER BY {order}", names.join(", "));
    let mut buffer: Vec<Value> = Vec::with_capacity(ROWS_PER_FLUSH * columns.len());
    let mut copied = 0u64;
    let flush = |buffer: &mut Vec<Value>| -> Result<(), SqlError> {
        let params: Vec<Param<'_>> = buffer.iter().map(Value::param).collect();
        insert_rows(target, table, &names, &params)?;
        buffer.clear();
        Ok(())
    };
    source
        .query(&sql, &[], &mut |r| {
            for (i, (_, col)) in columns.iter().enumerate() {
                buffer.push(match col {
                    Col::Int => r.opt_int(i)?.map_or(Value::Null, Value::Int),
                    Col::Text => r
                        .opt_text(i)?
                        .map_or(Value::Null, |t| Value::Text(t.to_owned())),
                    Col::Bytes => r
                        .opt_bytes(i)?
                        .map_or(Value::Null, |b| Value::Bytes(b.to_vec())),
                });
            }
            copied += 1;
            if buffer.len() >= ROWS_PER_FLUSH * columns.len() {
                flush(&mut buffer)?;
            }
            Ok(())
        })
        .map_err(StoreError::sql("copying a table"))?;
    flush(&mut buffer).map_err(StoreError::sql("copying a table"))?;
    Ok(copied)
}
