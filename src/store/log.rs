//! Appending to the audit log inside the caller's write transaction.
//!
//! A [`LogWriter`] reads the log's tail once per transaction and checks it before building on
//! it: the latest checkpoint must be signed by the store's key and cover the whole log, and
//! the root recomputed from the stored subtree hashes must equal the signed one, so cq never
//! extends (and signs) a tree it did not recompute. It then appends any number of receipts,
//! storing each leaf and every subtree it completes (`audit_nodes`, from which inclusion
//! proofs are read), and on `finish` signs the new tree head. Because all of it happens in
//! the same `BEGIN IMMEDIATE` transaction as the rows the receipts describe, a crash leaves
//! either both or neither.

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use ed25519_dalek::VerifyingKey;
use rusqlite::{params, Connection, OptionalExtension};
use sha2::Digest as _;

use super::StoreError;
use crate::audit::keys::NamedKey;
use crate::audit::merkle::{self, leaf_hash, Frontier, Hash};
use crate::audit::note::Checkpoint;
use crate::audit::receipt::{Receipt, GENESIS_PREV};
use crate::audit::{hex, utc_now};

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
    grew: bool,
}

/// One node of the stored tree.
pub(crate) fn node(conn: &Connection, level: u32, index: u64) -> Result<Option<Hash>, StoreError> {
    let hash: Option<Vec<u8>> = conn
        .prepare_cached("SELECT hash FROM audit_nodes WHERE level = ?1 AND idx = ?2")
        .and_then(|mut st| {
            st.query_row(params![level, index as i64], |r| r.get(0))
                .optional()
        })
        .map_err(StoreError::sql("reading the audit tree"))?;
    Ok(hash.and_then(|h| <Hash>::try_from(h.as_slice()).ok()))
}

fn insert_node(conn: &Connection, level: u32, index: u64, hash: &Hash) -> Result<(), StoreError> {
    conn.prepare_cached("INSERT INTO audit_nodes (level, idx, hash) VALUES (?1, ?2, ?3)")
        .and_then(|mut st| st.execute(params![level, index as i64, hash.as_slice()]))
        .map_err(StoreError::sql("storing the audit tree"))?;
    Ok(())
}

/// The frontier of a tree of `size` leaves, from the stored subtree hashes.
pub(crate) fn stored_frontier(conn: &Connection, size: u64) -> Result<Frontier, StoreError> {
    let mut levels = Vec::new();
    for (level, index) in merkle::frontier_nodes(size) {
        let hash = node(conn, level, index)?.ok_or_else(|| {
            StoreError::LogTampered(format!(
                "the audit tree has no node {level}/{index} for its {size} entries"
            ))
        })?;
        levels.push((level, hash));
    }
    Frontier::from_levels(size, &levels)
        .ok_or_else(|| StoreError::LogTampered("the audit tree's frontier is malformed".into()))
}

/// Appends `leaf` (leaf number `frontier.size()`) to `frontier` and stores it and every
/// subtree it completes.
pub(crate) fn push_leaf(
    conn: &Connection,
    frontier: &mut Frontier,
    leaf: Hash,
) -> Result<(), StoreError> {
    let index = frontier.size();
    insert_node(conn, 0, index, &leaf)?;
    for (level, hash) in frontier.push_completed(leaf) {
        insert_node(conn, level, index >> level, &hash)?;
    }
    Ok(())
}

impl LogWriter {
    /// Reads and checks the tail of the log (see the module docs); a tail that does not check
    /// out is [`StoreError::LogTampered`] and nothing is written.
    pub fn load(conn: &Connection, key: &VerifyingKey, origin: &str) -> Result<Self, StoreError> {
        let tail: Option<(i64, String)> = conn
            .query_row(
                "SELECT seq, receipt_json FROM audit_entries ORDER BY seq DESC LIMIT 1",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(StoreError::sql("reading the audit log tail"))?;
        let Some((seq, body)) = tail else {
            return Ok(LogWriter {
                next_seq: 1,
                prev: GENESIS_PREV.to_owned(),
                frontier: Frontier::new(),
                time: utc_now(),
                grew: false,
            });
        };
        let size = u64::try_from(seq).unwrap_or(0);
        let signed = latest_note(conn)?
            .ok_or_else(|| {
                StoreError::LogTampered(format!("its {size} entries have no signed checkpoint"))
            })
            .and_then(|(_, note)| {
                Checkpoint::open(&note, origin, key).map_err(|e| {
                    StoreError::LogTampered(format!("its latest checkpoint does not verify: {e}"))
                })
            })?;
        if signed.size != size {
            return Err(StoreError::LogTampered(format!(
                "its latest signed checkpoint covers {} entries but the log has {size}",
                signed.size
            )));
        }
        let frontier = stored_frontier(conn, size)?;
        if frontier.root() != signed.root {
            return Err(StoreError::LogTampered(
                "the audit tree recomputed from its stored nodes differs from the signed root"
                    .into(),
            ));
        }
        let leaf = leaf_hash(body.as_bytes());
        if node(conn, 0, size - 1)? != Some(leaf) {
            return Err(StoreError::LogTampered(format!(
                "entry {size} is not the receipt the signed tree holds"
            )));
        }
        Ok(LogWriter {
            next_seq: size + 1,
            prev: hex(&sha2::Sha256::digest(body.as_bytes())),
            frontier,
            time: utc_now(),
            grew: false,
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
        push_leaf(conn, &mut self.frontier, leaf)?;
        self.prev.clone_from(&receipt_sha256);
        self.next_seq += 1;
        self.grew = true;
        Ok(Appended {
            seq,
            receipt_sha256,
            receipt_json: body,
        })
    }

    /// Signs the new tree head with the store's key when the log grew.
    pub fn finish(self, conn: &Connection, key: &NamedKey, origin: &str) -> Result<(), StoreError> {
        if !self.grew {
            return Ok(());
        }
        let size = self.frontier.size();
        let root = self.frontier.root();
        let note = Checkpoint {
            origin: origin.to_owned(),
            size,
            root,
        }
        .sign(key);
        conn.prepare_cached(
            "INSERT INTO checkpoints (tree_size, root_hash, note, created_at) VALUES (?1, ?2, ?3, ?4)",
        )
        .and_then(|mut st| st.execute(params![size as i64, hex(&root), note, self.time]))
        .map_err(StoreError::sql("storing a checkpoint"))?;
        Ok(())
    }
}

/// Rebuilds the stored tree from every receipt's bytes (the migration that introduced
/// `audit_nodes` uses it; the leaf-hash column is not trusted).
pub(crate) fn rebuild_nodes(conn: &Connection) -> Result<(), StoreError> {
    conn.execute("DELETE FROM audit_nodes", [])
        .map_err(StoreError::sql("clearing the audit tree"))?;
    let err = StoreError::sql("reading audit receipts");
    let mut st = conn
        .prepare("SELECT receipt_json FROM audit_entries ORDER BY seq")
        .map_err(err)?;
    let mut rows = st.query([]).map_err(err)?;
    let mut frontier = Frontier::new();
    while let Some(row) = rows.next().map_err(err)? {
        let body = row
            .get_ref(0)
            .map_err(err)?
            .as_bytes()
            .map_err(|e| err(e.into()))?;
        push_leaf(conn, &mut frontier, leaf_hash(body))?;
    }
    Ok(())
}

/// The latest stored checkpoint note, if any.
pub(crate) fn latest_note(conn: &Connection) -> Result<Option<(u64, String)>, StoreError> {
    conn.query_row(
        "SELECT tree_size, note FROM checkpoints ORDER BY tree_size DESC, id DESC LIMIT 1",
        [],
        |r| Ok((r.get::<_, i64>(0)?.max(0) as u64, r.get(1)?)),
    )
    .optional()
    .map_err(StoreError::sql("reading the latest checkpoint"))
}
