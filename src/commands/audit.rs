//! `cq audit verify [--checkpoint FILE] [--jobs N]`, `cq audit export`, `cq audit checkpoint`:
//! the audit log checked end to end (rows checked on `--jobs` threads, default every core,
//! with the same report whatever the number), written out as JSONL, or its signed tree head
//! to keep elsewhere.

use std::io::Write;

use crate::audit::Workers;
use crate::cli::AuditCommand;
use crate::store::{Mode, StoreError};

use super::{store, Exit, Output};

pub fn run(command: &AuditCommand, out: &mut Output) -> anyhow::Result<Exit> {
    match command {
        AuditCommand::Verify {
            store,
            checkpoint,
            jobs,
        } => {
            let note = match checkpoint {
                Some(path) => {
                    Some(
                        std::fs::read_to_string(path).map_err(|source| StoreError::Io {
                            context: "reading the checkpoint",
                            path: path.clone(),
                            source,
                        })?,
                    )
                }
                None => None,
            };
            let workers = Workers::new(jobs.map(usize::from));
            let report =
                store::open(store, Mode::ReadOnly)?.verify_with(note.as_deref(), workers)?;
            writeln!(out, "{}", report.to_string().trim_end())?;
            Ok(if report.is_ok() {
                Exit::Success
            } else {
                Exit::Tampered
            })
        }
        AuditCommand::Export { store } => {
            store::open(store, Mode::ReadOnly)?.export_jsonl(out)?;
            Ok(Exit::Success)
        }
        AuditCommand::Checkpoint { store } => {
            let note = store::open(store, Mode::ReadWrite)?
                .checkpoint()?
                .unwrap_or_default();
            write!(out, "{note}")?;
            Ok(Exit::Success)
        }
    }
}
