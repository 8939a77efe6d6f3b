//! The audit log and the tables as rows for `audit` to check ([`LogRows`]), in one read
//! transaction so a writer committing meanwhile cannot make them look inconsistent; the export
//! of the log; and the one mapping of `audit_entries` rows every reader uses.

use std::io::Write;

use ed25519_dalek::VerifyingKey;
use sha2::{Digest, Sha256};

use super::sql::{in_list, params, Conn, Param, Row, SqlError};
use super::{Store, StoreError};
use crate::audit::rows::{
    CheckpointRow, CompactionRow, EntryRow, LogRows, ReportRow, ReviewerRow, SignedRow,
    SignedTable, TableVisitor,
};
use crate::audit::VerifyReport;

/// The columns [`entry_from_row`] reads, in order.
pub(crate) const ENTRY_COLUMNS: &str = "seq, kind, compaction_id, receipt_json, receipt_sha256, \
     prev_hash, leaf_hash, signature, key_id, created_at";

pub(crate) fn entry_from_row(r: &dyn Row) -> Result<EntryRow, SqlError> {
    Ok(EntryRow {
        seq: r.count(0)?,
        kind: r.string(1)?,
        compaction_id: r.opt_string(2)?,
        body: r.string(3)?,
        sha256: r.string(4)?,
        prev_hash: r.string(5)?,
        leaf_hash: r.string(6)?,
        signature: r.opt_string(7)?,
        key_id: r.opt_string(8)?,
        created_at: r.string(9)?,
    })
}

fn checkpoint_from_row(r: &dyn Row) -> Result<CheckpointRow, SqlError> {
    Ok(CheckpointRow {
        id: r.int(0)?,
        size: r.count(1)?,
        root_hex: r.string(2)?,
        note: r.string(3)?,
        created_at: r.string(4)?,
    })
}

/// Entries matching `clause` (bound to `value`), in order.
pub(crate) fn entries_where(
    conn: &dyn Conn,
    clause: &str,
    value: Param<'_>,
) -> Result<Vec<EntryRow>, StoreError> {
    let sql = format!("SELECT {ENTRY_COLUMNS} FROM audit_entries WHERE {clause} ORDER BY seq");
    conn.rows(&sql, &[value], entry_from_row)
        .map_err(StoreError::sql("reading receipts"))
}

/// The entries with the sequence numbers `seqs`, in order.
pub(crate) fn entries_in(conn: &dyn Conn, seqs: &[u64]) -> Result<Vec<EntryRow>, StoreError> {
    let mut out = Vec::with_capacity(seqs.len());
    for chunk in seqs.chunks(64) {
        let slots = chunk.len().next_power_of_two();
        let values: Vec<Param<'_>> = (0..slots)
            .map(|i| Param::from(*chunk.get(i).or(chunk.last()).unwrap_or(&0)))
            .collect();
        let sql = format!(
            "SELECT {ENTRY_COLUMNS} FROM audit_entries WHERE {} ORDER BY seq",
            in_list("seq", 1, slots)
        );
        out.extend(
            conn.rows(&sql, &values, entry_from_row)
                .map_err(StoreError::sql("reading receipts"))?,
        );
    }
    out.sort_by_key(|e| e.seq);
    out.dedup_by_key(|e| e.seq);
    Ok(out)
}

impl Store {
    /// Verifies the whole store (see [`crate::audit::verify`]); `exported` is a checkpoint
    /// note kept outside it.
    pub fn verify(&self, exported: Option<&str>) -> Result<VerifyReport, StoreError> {
        self.read(|_| crate::audit::verify(self, exported))
    }

    /// [`Store::verify`], checking rows on `workers`.
    pub fn verify_with(
        &self,
        exported: Option<&str>,
        workers: crate::audit::Workers,
    ) -> Result<VerifyReport, StoreError> {
        self.read(|_| crate::audit::verify_with(self, exported, workers))
    }

    /// Checks what was appended to the log since `check` last ran, in one read transaction.
    pub fn refresh_chain(
        &self,
        check: &mut crate::audit::ChainCheck,
    ) -> Result<VerifyReport, StoreError> {
        self.read(|_| check.refresh(self))
    }

    /// Writes every receipt as one JSONL line to `out`; how many were written.
    pub fn export_jsonl(&self, out: &mut dyn Write) -> Result<u64, StoreError> {
        let io = |source| StoreError::Io {
            context: "writing the export to",
            path: "output".into(),
            source,
        };
        self.read(|_| {
            let mut after = 0;
            let mut n = 0u64;
            loop {
                let chunk = LogRows::entries(self, after, 4096)?;
                let Some(last) = chunk.last() else { break };
                after = last.seq;
                for row in &chunk {
                    let line =
                        crate::audit::export::export_line(row).map_err(StoreError::Corrupt)?;
                    writeln!(out, "{line}").map_err(io)?;
                    n += 1;
                }
            }
            out.flush().map_err(io)?;
            Ok(n)
        })
    }
}

impl LogRows for Store {
    type Error = StoreError;

    fn identity(&self) -> (String, VerifyingKey, Result<String, String>) {
        (
            self.origin().to_owned(),
            *self.public_key(),
            self.trust().clone(),
        )
    }

    fn entries(&self, after: u64, limit: usize) -> Result<Vec<EntryRow>, StoreError> {
        let sql = format!(
            "SELECT {ENTRY_COLUMNS} FROM audit_entries WHERE seq > ?1 ORDER BY seq LIMIT ?2"
        );
        self.conn()
            .rows(&sql, &params![after, limit], entry_from_row)
            .map_err(StoreError::sql("reading the audit log"))
    }

    fn checkpoints(&self) -> Result<Vec<CheckpointRow>, StoreError> {
        self.conn()
            .rows(
                "SELECT id, tree_size, root_hash, note, created_at FROM checkpoints
                 ORDER BY tree_size, id",
                &[],
                checkpoint_from_row,
            )
            .map_err(StoreError::sql("reading checkpoints"))
    }

    fn latest_checkpoint(&self) -> Result<Option<CheckpointRow>, StoreError> {
        self.conn()
            .opt(
                "SELECT id, tree_size, root_hash, note, created_at FROM checkpoints
                 ORDER BY tree_size DESC, id DESC LIMIT 1",
                &[],
                checkpoint_from_row,
            )
            .map_err(StoreError::sql("reading the latest checkpoint"))
    }

    fn nodes(&self, visit: &mut dyn FnMut(u32, u64, &[u8])) -> Result<(), StoreError> {
        self.conn()
            .query("SELECT level, idx, hash FROM audit_nodes", &[], &mut |r| {
                let level = r.int(0)?;
                let index = r.int(1)?;
                let hash = r.opt_bytes(2).ok().flatten().unwrap_or(&[]);
                visit(
                    u32::try_from(level).unwrap_or(u32::MAX),
                    u64::try_from(index).unwrap_or(u64::MAX),
                    hash,
                );
                Ok(())
            })
            .map_err(StoreError::sql("reading the audit tree"))
    }

    fn tables(&self, visit: &mut dyn TableVisitor) -> Result<(), StoreError> {
        let conn = self.conn();
        compactions(conn, visit)?;
        requests(conn, visit)?;
        reports(conn, visit)?;
        signed(conn, visit)?;
        reviewers(conn, visit)?;
        meta(conn, visit)
    }
}

fn compactions(conn: &dyn Conn, visit: &mut dyn TableVisitor) -> Result<(), StoreError> {
    conn.query(
        "SELECT id, tenant_id, task_id, request_sha256, summary_sha256,
                source_population_sha256, status, verdict, outcome, finding_status,
                verdict_class, has_secret_finding, main_reason, anomaly_count, report_sha256,
                created_at
         FROM compactions",
        &[],
        &mut |r| {
            visit.compaction(CompactionRow {
                id: r.string(0)?,
                tenant_id: r.string(1)?,
                task_id: r.string(2)?,
                request_sha256: r.string(3)?,
                summary_sha256: r.string(4)?,
                source_population_sha256: r.string(5)?,
                status: r.string(6)?,
                verdict: r.string(7)?,
                outcome: r.string(8)?,
                finding_status: r.string(9)?,
                verdict_class: r.string(10)?,
                has_secret_finding: r.int(11)?,
                main_reason: r.string(12)?,
                anomaly_count: r.int(13)?,
                report_sha256: r.string(14)?,
                created_at: r.string(15)?,
            });
            Ok(())
        },
    )
    .map_err(StoreError::sql("reading compactions"))
}

fn requests(conn: &dyn Conn, visit: &mut dyn TableVisitor) -> Result<(), StoreError> {
    conn.query(
        "SELECT compaction_id, request_json FROM requests",
        &[],
        &mut |r| {
            let id = r.opt_text(0).ok().flatten().unwrap_or("");
            let text = r.opt_bytes(1).ok().flatten().unwrap_or(&[]);
            visit.request(id, text);
            Ok(())
        },
    )
    .map_err(StoreError::sql("reading requests"))
}

fn reports(conn: &dyn Conn, visit: &mut dyn TableVisitor) -> Result<(), StoreError> {
    conn.query(
        "SELECT id, compaction_id, report_sha256, report_json, policy_sha256,
                verifier_version, created_at
         FROM reports ORDER BY id",
        &[],
        &mut |r| {
            let digest = r.string(2)?;
            let text = r.opt_bytes(3).ok().flatten().unwrap_or(&[]);
            let text_matches = crate::audit::unhex32(&digest)
                .is_some_and(|d| d == <[u8; 32]>::from(Sha256::digest(text)));
            visit.report(ReportRow {
                id: r.int(0)?,
                compaction_id: r.string(1)?,
                report_sha256: digest,
                policy_sha256: r.string(4)?,
                verifier_version: r.string(5)?,
                created_at: r.string(6)?,
                text_matches,
            });
            Ok(())
        },
    )
    .map_err(StoreError::sql("reading reports"))
}

fn signed(conn: &dyn Conn, visit: &mut dyn TableVisitor) -> Result<(), StoreError> {
    let queries = [
        (
            SignedTable::Decisions,
            "SELECT id, receipt_seq, compaction_id, action, reason, note, reviewer, key_id,
                    report_sha256, '', created_at FROM decisions ORDER BY id",
        ),
        (
            SignedTable::Approvals,
            "SELECT id, receipt_seq, compaction_id, '', reason, note, reviewer, key_id,
                    report_sha256, '', created_at FROM approvals ORDER BY id",
        ),
        (
            SignedTable::Reveals,
            "SELECT id, receipt_seq, compaction_id, '', '', '', reviewer, key_id, '',
                    finding_id, created_at FROM reveals ORDER BY id",
        ),
    ];
    for (table, sql) in queries {
        conn.query(sql, &[], &mut |r| {
            visit.signed(
                table,
                SignedRow {
                    id: r.int(0)?,
                    receipt_seq: r.count(1)?,
                    compaction_id: r.string(2)?,
                    action: r.string(3)?,
                    reason: r.string(4)?,
                    note: r.string(5)?,
                    reviewer: r.string(6)?,
                    key_id: r.string(7)?,
                    report_sha256: r.string(8)?,
                    finding_id: r.string(9)?,
                    created_at: r.string(10)?,
                },
            );
            Ok(())
        })
        .map_err(StoreError::sql("reading decisions"))?;
    }
    Ok(())
}

fn reviewers(conn: &dyn Conn, visit: &mut dyn TableVisitor) -> Result<(), StoreError> {
    conn.query(
        "SELECT receipt_seq, name, public_key, key_id, role, authorized_by, created_at
         FROM reviewers",
        &[],
        &mut |r| {
            visit.reviewer(ReviewerRow {
                receipt_seq: r.count(0)?,
                name: r.string(1)?,
                public_key: r.string(2)?,
                key_id: r.string(3)?,
                role: r.string(4)?,
                authorized_by: r.string(5)?,
                created_at: r.string(6)?,
            });
            Ok(())
        },
    )
    .map_err(StoreError::sql("reading reviewers"))
}

fn meta(conn: &dyn Conn, visit: &mut dyn TableVisitor) -> Result<(), StoreError> {
    conn.query("SELECT key, value FROM meta", &[], &mut |r| {
        visit.meta(r.text(0)?, r.text(1)?);
        Ok(())
    })
    .map_err(StoreError::sql("reading the store identity"))
}
