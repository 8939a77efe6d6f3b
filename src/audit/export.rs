//! Exporting the audit log: one canonical JSON object per line (the receipt itself under
//! `receipt`, with its hash, leaf hash, previous hash, signature and key id), and the latest
//! signed checkpoint as a note to keep somewhere the store's owner cannot rewrite.

use std::io::Write;

use rusqlite::params;

use crate::json::{self, object, Limits, Value};
use crate::store::{Store, StoreError};

/// Writes every receipt as one JSONL line; returns how many were written.
pub fn export_jsonl(store: &Store, out: &mut dyn Write) -> Result<u64, StoreError> {
    let err = StoreError::sql("exporting the audit log");
    let mut st = store
        .conn()
        .prepare(
            "SELECT seq, receipt_json, receipt_sha256, prev_hash, leaf_hash, signature, key_id
             FROM audit_entries ORDER BY seq",
        )
        .map_err(err)?;
    let mut rows = st.query(params![]).map_err(err)?;
    let mut n = 0u64;
    let io = |source| StoreError::Io {
        context: "writing the export to",
        path: "output".into(),
        source,
    };
    while let Some(row) = rows.next().map_err(err)? {
        let seq: i64 = row.get(0).map_err(err)?;
        let text: String = row.get(1).map_err(err)?;
        let receipt = json::parse(text.as_bytes(), &Limits::default()).map_err(|e| {
            StoreError::Corrupt(format!(
                "audit entry \"{seq}\" is not valid JSON ({e}): run `cq audit verify`"
            ))
        })?;
        let text_of = |i| row.get::<_, Option<String>>(i).map_err(err);
        let line = object([
            ("seq", Value::from(seq)),
            ("receipt", receipt),
            ("receipt_sha256", text_of(2)?.into()),
            ("prev_hash", text_of(3)?.into()),
            ("leaf_hash", text_of(4)?.into()),
            ("signature", text_of(5)?.into()),
            ("key_id", text_of(6)?.into()),
        ]);
        let line = json::canonical(&line).map_err(StoreError::Canonical)?;
        writeln!(out, "{line}").map_err(io)?;
        n += 1;
    }
    out.flush().map_err(io)?;
    Ok(n)
}

/// The latest signed checkpoint, after adding one if the log has grown since (read-write
/// stores only); `None` for an empty log.
pub fn latest_checkpoint(store: &Store) -> Result<Option<String>, StoreError> {
    store.checkpoint()
}
