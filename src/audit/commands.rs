//! The `cq audit …` and `cq keys …` commands as plain functions: they take parsed arguments
//! and return what to print, so `main.rs` only maps results to exit codes.

use std::path::Path;

use super::{generate_key, verify, VerifyReport};
use crate::store::{Store, StoreError};

/// `cq audit verify [--checkpoint FILE]`: the report (its `is_ok` decides the exit code).
pub fn audit_verify(store: &Store, checkpoint: Option<&Path>) -> anyhow::Result<VerifyReport> {
    let note = match checkpoint {
        Some(path) => Some(
            std::fs::read_to_string(path).map_err(|source| StoreError::Io {
                context: "reading the checkpoint",
                path: path.to_owned(),
                source,
            })?,
        ),
        None => None,
    };
    Ok(verify(store, note.as_deref())?)
}

/// `cq audit export`: JSONL on `out`; returns the number of receipts.
pub fn audit_export(store: &Store, out: &mut dyn std::io::Write) -> anyhow::Result<u64> {
    Ok(super::export_jsonl(store, out)?)
}

/// `cq audit checkpoint`: the latest signed checkpoint note (creating it if the log grew).
pub fn audit_checkpoint(store: &Store) -> anyhow::Result<String> {
    Ok(store.checkpoint()?.unwrap_or_default())
}

/// `cq keys generate --name NAME [--dir DIR]`: what was written and the public key to register.
pub fn keys_generate(name: &str, dir: &Path) -> anyhow::Result<String> {
    let made = generate_key(name, dir)?;
    Ok(format!(
        "secret key: {} (mode 0600, keep it private)\npublic key: {}\n{}\nregister it with: cq reviewers add {name} {} --role reviewer\n",
        made.secret_path.display(),
        made.public_path.display(),
        made.verifier_key,
        made.verifier_key,
    ))
}
