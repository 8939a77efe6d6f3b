//! Appending to the audit log inside the caller's write transaction.
//!
//! A [`LogWriter`] reads the log's tail once per transaction and checks it before building on
//! it: the latest checkpoint must be signed by the store's key and cover the whole log, and
//! the root recomputed from the stored subtree hashes must equal the signed one, so cq never
//! extends (and signs) a tree it did not recompute. It then appends any number of receipts,
//! storing each leaf and every subtree it completes (`audit_nodes`, from which inclusion
//! proofs are read), and on `finish` writes them (many rows per statement) and signs the new
//! tree head, with the rows the caller queued beside them ([`LogWriter::write_with`]): one
//! round trip on PostgreSQL. Because all of it happens in the same write transaction as the
//! rows the receipts describe, a crash leaves either both or neither. Nothing in a write
//! transaction reads the log after appending to it. The head it verified is the one the
//! transaction's verified reads prove receipts against ([`LogWriter::head`]): under the
//! write lock no one else can move it, so it is read and checked once per write.

use std::collections::HashMap;

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use ed25519_dalek::VerifyingKey;
use sha2::Digest as _;

use super::sql::{inserts, params, Conn, Param};
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

/// A signed tree head: the size and root of a tree the store's key signed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Head {
    pub size: u64,
    pub root: Hash,
}

pub(crate) struct LogWriter {
    key: VerifyingKey,
    head: Head,
    next_seq: u64,
    prev: String,
    frontier: Frontier,
    time: String,
    /// Receipts appended in this transaction, written by `finish`.
    entries: Vec<Entry>,
    /// Tree nodes completed in this transaction, written by `finish`.
    nodes: Vec<(u32, u64, Hash)>,
    /// The caller's row writes queued to go with the log's ([`LogWriter::write_with`]).
    queued: Vec<(&'static str, Vec<Param<'static>>)>,
}

/// One receipt to store.
struct Entry {
    seq: u64,
    kind: &'static str,
    compaction_id: Option<String>,
    body: String,
    sha256: String,
    prev: String,
    leaf: String,
    signature: Option<String>,
    key_id: Option<String>,
}

/// Node coordinates per query: one statement text per power of two up to this.
const NODES_PER_QUERY: usize = 64;

/// The stored tree nodes at `wanted` (`(level, index)`), read in a few queries; a missing or
/// malformed node is absent from the map.
pub(crate) fn nodes(
    conn: &dyn Conn,
    wanted: &[(u32, u64)],
) -> Result<HashMap<(u32, u64), Hash>, StoreError> {
    let mut found = HashMap::with_capacity(wanted.len());
    for chunk in wanted.chunks(NODES_PER_QUERY) {
        let Some(last) = chunk.last() else { continue };
        let slots = chunk.len().next_power_of_two();
        let mut clauses = Vec::with_capacity(slots);
        let mut values = Vec::with_capacity(slots * 2);
        for i in 0..slots {
            let (level, index) = chunk.get(i).unwrap_or(last);
            clauses.push(format!("(level = ?{} AND idx = ?{})", 2 * i + 1, 2 * i + 2));
            values.push(Param::from(*level));
            values.push(Param::from(*index));
        }
        let sql = format!(
            "SELECT level, idx, hash FROM audit_nodes WHERE {}",
            clauses.join(" OR ")
        );
        conn.query(&sql, &values, &mut |r| {
            let (level, index) = (r.int(0)?, r.int(1)?);
            if let (Ok(level), Ok(index), Ok(hash)) = (
                u32::try_from(level),
                u64::try_from(index),
                <Hash>::try_from(r.bytes(2)?),
            ) {
                found.insert((level, index), hash);
            }
            Ok(())
        })
        .map_err(StoreError::sql("reading the audit tree"))?;
    }
    Ok(found)
}

/// The frontier of a tree of `size` leaves, from the stored subtree hashes; with it the
/// stored leaf `size - 1` (if any).
fn stored_frontier(conn: &dyn Conn, size: u64) -> Result<(Frontier, Option<Hash>), StoreError> {
    let mut wanted = merkle::frontier_nodes(size);
    if size > 0 {
        wanted.push((0, size - 1));
    }
    let found = nodes(conn, &wanted)?;
    let mut levels = Vec::new();
    for (level, index) in merkle::frontier_nodes(size) {
        let hash = found.get(&(level, index)).ok_or_else(|| {
            StoreError::LogTampered(format!(
                "the audit tree has no node {level}/{index} for its {size} entries"
            ))
        })?;
        levels.push((level, *hash));
    }
    let frontier = Frontier::from_levels(size, &levels)
        .ok_or_else(|| StoreError::LogTampered("the audit tree's frontier is malformed".into()))?;
    let leaf = size
        .checked_sub(1)
        .and_then(|i| found.get(&(0, i)).copied());
    Ok((frontier, leaf))
}

/// Appends `leaf` (leaf number `frontier.size()`) to `frontier`, adding it and every subtree
/// it completes to `nodes`.
fn push_leaf(frontier: &mut Frontier, nodes: &mut Vec<(u32, u64, Hash)>, leaf: Hash) {
    let index = frontier.size();
    nodes.push((0, index, leaf));
    for (level, hash) in frontier.push_completed(leaf) {
        nodes.push((level, index >> level, hash));
    }
}

/// The columns of `audit_nodes`, in the order [`node_values`] lists them.
const NODE_COLUMNS: [&str; 3] = ["level", "idx", "hash"];

fn node_values(nodes: &[(u32, u64, Hash)]) -> Vec<Param<'_>> {
    nodes
        .iter()
        .flat_map(|(level, index, hash)| {
            [
                Param::from(*level),
                Param::from(*index),
                Param::Bytes(hash.as_slice()),
            ]
        })
        .collect()
}

impl LogWriter {
    /// Reads and checks the tail of the log (see the module docs), the tail entry and the
    /// latest checkpoint in one query; a tail that does not check out is
    /// [`StoreError::LogTampered`] and nothing is written.
    pub fn load(conn: &dyn Conn, key: &VerifyingKey, origin: &str) -> Result<Self, StoreError> {
        let tail = conn
            .opt(
                "SELECT seq, receipt_json,
                        (SELECT note FROM checkpoints ORDER BY tree_size DESC, id DESC LIMIT 1)
                 FROM audit_entries ORDER BY seq DESC LIMIT 1",
                &[],
                |r| Ok((r.count(0)?, r.string(1)?, r.opt_string(2)?)),
            )
            .map_err(StoreError::sql("reading the audit log tail"))?;
        let Some((size, body, note)) = tail else {
            return Ok(LogWriter {
                key: *key,
                head: Head {
                    size: 0,
                    root: merkle::empty_root(),
                },
                next_seq: 1,
                prev: GENESIS_PREV.to_owned(),
                frontier: Frontier::new(),
                time: utc_now(),
                entries: Vec::new(),
                nodes: Vec::new(),
                queued: Vec::new(),
            });
        };
        let signed = note
            .ok_or_else(|| {
                StoreError::LogTampered(format!("its {size} entries have no signed checkpoint"))
            })
            .and_then(|note| {
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
        let (frontier, stored_leaf) = stored_frontier(conn, size)?;
        if frontier.root() != signed.root {
            return Err(StoreError::LogTampered(
                "the audit tree recomputed from its stored nodes differs from the signed root"
                    .into(),
            ));
        }
        let leaf = leaf_hash(body.as_bytes());
        if stored_leaf != Some(leaf) {
            return Err(StoreError::LogTampered(format!(
                "entry {size} is not the receipt the signed tree holds"
            )));
        }
        Ok(LogWriter {
            key: *key,
            head: Head {
                size,
                root: signed.root,
            },
            next_seq: size + 1,
            prev: hex(&sha2::Sha256::digest(body.as_bytes())),
            frontier,
            time: utc_now(),
            entries: Vec::new(),
            nodes: Vec::new(),
            queued: Vec::new(),
        })
    }

    /// The head [`LogWriter::load`] verified with [`LogWriter::key`]: the latest checkpoint,
    /// signed by that key, covering the whole log as the transaction found it (the empty
    /// tree for an empty log). The write lock keeps it the log's head until the commit.
    pub fn head(&self) -> Head {
        self.head
    }

    /// The key the head was verified with.
    pub fn key(&self) -> &VerifyingKey {
        &self.key
    }

    pub fn time(&self) -> &str {
        &self.time
    }

    /// Queues a row write (`sql` bound to `values`) to go with the log's own in
    /// [`LogWriter::finish`], in one round trip on PostgreSQL. Nothing may read its effect
    /// before the commit, and it may not depend on another queued write's.
    pub fn write_with(
        &mut self,
        sql: &'static str,
        values: &[Param<'_>],
    ) -> Result<(), StoreError> {
        let values = values
            .iter()
            .map(Param::to_static)
            .collect::<Result<Vec<_>, _>>()
            .map_err(StoreError::sql("queueing a write"))?;
        self.queued.push((sql, values));
        Ok(())
    }

    /// Appends one receipt, signing it with `signer` when given.
    pub fn append(
        &mut self,
        receipt: &Receipt,
        signer: Option<&NamedKey>,
    ) -> Result<Appended, StoreError> {
        let seq = self.next_seq;
        let body = receipt
            .body(seq, &self.prev, &self.time)
            .map_err(StoreError::Canonical)?;
        let receipt_sha256 = hex(&sha2::Sha256::digest(body.as_bytes()));
        let leaf = leaf_hash(body.as_bytes());
        push_leaf(&mut self.frontier, &mut self.nodes, leaf);
        self.entries.push(Entry {
            seq,
            kind: receipt.kind.as_str(),
            compaction_id: receipt.compaction_id.clone(),
            body: body.clone(),
            sha256: receipt_sha256.clone(),
            prev: std::mem::replace(&mut self.prev, receipt_sha256.clone()),
            leaf: hex(&leaf),
            signature: signer.map(|k| B64.encode(k.sign(body.as_bytes()).to_bytes())),
            key_id: signer.map(NamedKey::key_id),
        });
        self.next_seq += 1;
        Ok(Appended {
            seq,
            receipt_sha256,
            receipt_json: body,
        })
    }

    /// Writes the appended receipts and tree nodes and signs the new tree head with the
    /// store's key; the new size, or `None` when the log did not grow.
    pub fn finish(
        self,
        conn: &dyn Conn,
        key: &NamedKey,
        origin: &str,
    ) -> Result<Option<u64>, StoreError> {
        let mut writes: Vec<(&str, &[Param<'_>])> = self
            .queued
            .iter()
            .map(|(sql, values)| (*sql, values.as_slice()))
            .collect();
        if self.entries.is_empty() {
            conn.execute_all(&writes)
                .map_err(StoreError::sql("writing the transaction's rows"))?;
            return Ok(None);
        }
        let entries: Vec<Param<'_>> = self
            .entries
            .iter()
            .flat_map(|e| {
                params![
                    e.seq,
                    e.kind,
                    e.compaction_id.as_deref(),
                    &e.body,
                    &e.sha256,
                    &e.prev,
                    &e.leaf,
                    e.signature.as_deref(),
                    e.key_id.as_deref(),
                    &self.time,
                ]
            })
            .collect();
        let nodes = node_values(&self.nodes);
        let size = self.frontier.size();
        let root = self.frontier.root();
        let note = Checkpoint {
            origin: origin.to_owned(),
            size,
            root,
        }
        .sign(key);
        let root = hex(&root);
        let checkpoint = params![size, &root, &note, &self.time];
        let inserts: Vec<(String, &[Param<'_>])> =
            inserts("audit_entries", &ENTRY_COLUMNS, &entries)
                .into_iter()
                .chain(inserts("audit_nodes", &NODE_COLUMNS, &nodes))
                .collect();
        writes.extend(inserts.iter().map(|(sql, values)| (sql.as_str(), *values)));
        writes.push((
            "INSERT INTO checkpoints (tree_size, root_hash, note, created_at) VALUES (?1, ?2, ?3, ?4)",
            &checkpoint,
        ));
        conn.execute_all(&writes).map_err(StoreError::sql(
            "appending audit receipts, their tree and a checkpoint",
        ))?;
        Ok(Some(size))
    }
}

/// The columns of `audit_entries`, in the order [`LogWriter::finish`] writes them.
const ENTRY_COLUMNS: [&str; 10] = [
    "seq",
    "kind",
    "compaction_id",
    "receipt_json",
    "receipt_sha256",
    "prev_hash",
    "leaf_hash",
    "signature",
    "key_id",
    "created_at",
];

/// Rebuilds the stored tree from every receipt's bytes (the migration that introduced
/// `audit_nodes` uses it; the leaf-hash column is not trusted).
pub(crate) fn rebuild_nodes(conn: &dyn Conn) -> Result<(), StoreError> {
    conn.execute("DELETE FROM audit_nodes", &[])
        .map_err(StoreError::sql("clearing the audit tree"))?;
    let mut frontier = Frontier::new();
    let mut built = Vec::new();
    conn.query(
        "SELECT receipt_json FROM audit_entries ORDER BY seq",
        &[],
        &mut |r| {
            push_leaf(&mut frontier, &mut built, leaf_hash(r.bytes(0)?));
            Ok(())
        },
    )
    .map_err(StoreError::sql("reading audit receipts"))?;
    for (sql, values) in inserts("audit_nodes", &NODE_COLUMNS, &node_values(&built)) {
        conn.execute(&sql, values)
            .map_err(StoreError::sql("storing the audit tree"))?;
    }
    Ok(())
}

/// The latest stored checkpoint note, if any.
pub(crate) fn latest_note(conn: &dyn Conn) -> Result<Option<(u64, String)>, StoreError> {
    conn.opt(
        "SELECT tree_size, note FROM checkpoints ORDER BY tree_size DESC, id DESC LIMIT 1",
        &[],
        |r| Ok((r.count(0)?, r.string(1)?)),
    )
    .map_err(StoreError::sql("reading the latest checkpoint"))
}
