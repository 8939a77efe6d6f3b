//! Exporting the audit log: one canonical JSON object per line (the receipt itself under
//! `receipt`, with its hash, leaf hash, previous hash, signature and key id). The store hands
//! the rows over ([`crate::audit::rows::EntryRow`]); this module only formats them.

use crate::json::{self, object, Limits, Value};

use super::rows::EntryRow;

/// One JSONL line for `row` (without the line break); an error names an entry whose stored
/// body is not JSON.
pub fn export_line(row: &EntryRow) -> Result<String, String> {
    let receipt = json::parse(row.body.as_bytes(), &Limits::default()).map_err(|e| {
        format!(
            "audit entry \"{}\" is not valid JSON ({e}): run `cq audit verify`",
            row.seq
        )
    })?;
    let line = object([
        ("seq", Value::from(row.seq)),
        ("receipt", receipt),
        ("receipt_sha256", Value::from(&row.sha256)),
        ("prev_hash", Value::from(&row.prev_hash)),
        ("leaf_hash", Value::from(&row.leaf_hash)),
        ("signature", row.signature.clone().into()),
        ("key_id", row.key_id.clone().into()),
    ]);
    json::canonical(&line).map_err(|e| e.to_string())
}
