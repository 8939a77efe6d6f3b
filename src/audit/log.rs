//! Appending to the audit log inside the caller's write transaction.
//!
//! A [`LogWriter`] reads the log's tail (last sequence number, last receipt hash, Merkle
//! frontier) once per transaction, appends any number of receipts, and on `finish` stores the
//! new frontier and, when asked, a signed checkpoint. Because all of it happens in the same
//! `BEGIN IMMEDIATE` transaction as the rows the receipts describe, a crash leaves either
//! both or neither.

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use rusqlite::{params, Connection, OptionalExtension};
use sha2::Digest as _;

use super::keys::NamedKey;
use super::merkle::{leaf_hash, Frontier, Hash};
use super::note::Checkpoint;
use super::receipt::{Receipt, GENESIS_PREV};
use super::{hex, unhex32};
use crate::store::StoreError;

/// What an append produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Appended {
    pub seq: u64,
    pub receipt_sha256: String,
    pub receipt_json: String,
}

pub(crate) struct LogWriter {
    next_seq: u64,
    prev: String,
    frontier: Frontier,
    time: String,
}

impl LogWriter {
    /// Reads the tail of the log. The stored frontier is a cache: when it does not match the
    /// log's size it is rebuilt from the leaf hashes.
    pub fn load(conn: &Connection) -> Result<Self, StoreError> {
        let tail: Option<(i64, String)> = conn
            .query_row(
                "SELECT seq, receipt_sha256 FROM audit_entries ORDER BY seq DESC LIMIT 1",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(StoreError::sql("reading the audit log tail"))?;
        let (size, prev) = match tail {
            Some((seq, hash)) => (seq as u64, hash),
            None => (0, GENESIS_PREV.to_owned()),
        };
        let frontier = match load_frontier(conn, size)? {
            Some(f) => f,
            None => rebuild_frontier(conn)?,
        };
        if frontier.size() != size {
            return Err(StoreError::Corrupt(format!(
                "audit log has {} leaves but its last entry is number \"{size}\"; run `cq audit verify`",
                frontier.size()
            )));
        }
        Ok(LogWriter {
            next_seq: size + 1,
            prev,
            frontier,
            time: super::utc_now(),
        })
    }

    pub fn time(&self) -> &str {
        &self.time
    }

    /// Appends one receipt, signing it with `signer` when given.
    pub fn append(
        &mut self,
        conn: &Connection,
        receipt: &Receipt,
        signer: Option<&NamedKey>,
    ) -> Result<Appended, StoreError> {
        let seq = self.next_seq;
        let body = receipt
            .body(seq, &self.prev, &self.time)
            .map_err(StoreError::Canonical)?;
        let receipt_sha256 = hex(&sha2::Sha256::digest(body.as_bytes()));
        let leaf = leaf_hash(body.as_bytes());
        let signature = signer.map(|k| B64.encode(k.sign(body.as_bytes()).to_bytes()));
        conn.prepare_cached(
            "INSERT INTO audit_entries (seq, kind, compaction_id, receipt_json, receipt_sha256,
                 prev_hash, leaf_hash, signature, key_id, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        )
        .and_then(|mut st| {
            st.execute(params![
                seq as i64,
                receipt.kind.as_str(),
                receipt.compaction_id,
                body,
                receipt_sha256,
                self.prev,
                hex(&leaf),
                signature,
                signer.map(NamedKey::key_id),
                self.time,
            ])
        })
        .map_err(StoreError::sql("appending an audit receipt"))?;
        self.frontier.push(leaf);
        self.prev.clone_from(&receipt_sha256);
        self.next_seq += 1;
        Ok(Appended {
            seq,
            receipt_sha256,
            receipt_json: body,
        })
    }

    /// Stores the frontier and, with `checkpoint_key`, a signed checkpoint of the tree head.
    pub fn finish(
        self,
        conn: &Connection,
        checkpoint_key: Option<(&NamedKey, &str)>,
    ) -> Result<Option<String>, StoreError> {
        let err = StoreError::sql("saving the audit log frontier");
        conn.execute("DELETE FROM audit_frontier", [])
            .map_err(err)?;
        for (height, hash) in self.frontier.levels() {
            conn.prepare_cached("INSERT INTO audit_frontier (height, hash) VALUES (?1, ?2)")
                .and_then(|mut st| st.execute(params![height, hex(&hash)]))
                .map_err(StoreError::sql("saving the audit log frontier"))?;
        }
        let Some((key, origin)) = checkpoint_key else {
            return Ok(None);
        };
        let size = self.frontier.size();
        let last: Option<i64> = conn
            .query_row("SELECT MAX(tree_size) FROM checkpoints", [], |r| r.get(0))
            .map_err(StoreError::sql("reading the latest checkpoint"))?;
        if last == Some(size as i64) || size == 0 {
            return Ok(None);
        }
        let root = self.frontier.root();
        let note = Checkpoint {
            origin: origin.to_owned(),
            size,
            root,
        }
        .sign(key);
        conn.execute(
            "INSERT INTO checkpoints (tree_size, root_hash, note, created_at) VALUES (?1, ?2, ?3, ?4)",
            params![size as i64, hex(&root), note, self.time],
        )
        .map_err(StoreError::sql("storing a checkpoint"))?;
        Ok(Some(note))
    }
}

fn load_frontier(conn: &Connection, size: u64) -> Result<Option<Frontier>, StoreError> {
    let err = StoreError::sql("reading the audit log frontier");
    let mut st = conn
        .prepare_cached("SELECT height, hash FROM audit_frontier")
        .map_err(err)?;
    let rows = st
        .query_map([], |r| Ok((r.get::<_, u32>(0)?, r.get::<_, String>(1)?)))
        .and_then(Iterator::collect::<Result<Vec<_>, _>>)
        .map_err(StoreError::sql("reading the audit log frontier"))?;
    let mut levels: Vec<(u32, Hash)> = Vec::with_capacity(rows.len());
    for (height, hash) in rows {
        match unhex32(&hash) {
            Some(h) => levels.push((height, h)),
            None => return Ok(None),
        }
    }
    Ok(Frontier::from_levels(size, &levels))
}

/// Recomputes the frontier from every stored leaf hash (used after a migration or when the
/// cached frontier is inconsistent).
pub(crate) fn rebuild_frontier(conn: &Connection) -> Result<Frontier, StoreError> {
    let mut st = conn
        .prepare("SELECT seq, leaf_hash FROM audit_entries ORDER BY seq")
        .map_err(StoreError::sql("reading audit leaves"))?;
    let mut rows = st
        .query([])
        .map_err(StoreError::sql("reading audit leaves"))?;
    let mut frontier = Frontier::new();
    while let Some(row) = rows
        .next()
        .map_err(StoreError::sql("reading audit leaves"))?
    {
        let seq: i64 = row
            .get(0)
            .map_err(StoreError::sql("reading audit leaves"))?;
        let leaf: String = row
            .get(1)
            .map_err(StoreError::sql("reading audit leaves"))?;
        let leaf = unhex32(&leaf).ok_or_else(|| {
            StoreError::Corrupt(format!("audit entry \"{seq}\" has a malformed leaf hash"))
        })?;
        frontier.push(leaf);
    }
    Ok(frontier)
}

/// The latest stored checkpoint note, if any.
pub(crate) fn latest_note(conn: &Connection) -> Result<Option<(u64, String)>, StoreError> {
    conn.query_row(
        "SELECT tree_size, note FROM checkpoints ORDER BY tree_size DESC, id DESC LIMIT 1",
        [],
        |r| Ok((r.get::<_, i64>(0)? as u64, r.get(1)?)),
    )
    .optional()
    .map_err(StoreError::sql("reading the latest checkpoint"))
}
