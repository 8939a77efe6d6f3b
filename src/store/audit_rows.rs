//! The audit log and the tables as rows for `audit` to check ([`LogRows`]), in one read
//! transaction so a writer committing meanwhile cannot make them look inconsistent; the export
//! of the log; and the one mapping of `audit_entries` rows every reader uses.

use std::io::Write;

use ed25519_dalek::VerifyingKey;
use rusqlite::{params, Connection, Row};
use sha2::{Digest, Sha256};

use super::{Store, StoreError};
use crate::audit::rows::{
    CheckpointRow, CompactionRow, EntryRow, LogRows, ReportRow, ReviewerRow, SignedRow,
    SignedTable, TableVisitor,
};
use crate::audit::VerifyReport;

/// The columns [`entry_from_row`] reads, in order.
pub(crate) const ENTRY_COLUMNS: &str = "seq, kind, compaction_id, receipt_json, receipt_sha256, \
     prev_hash, leaf_hash, signature, key_id, created_at";

pub(crate) fn entry_from_row(r: &Row<'_>) -> rusqlite::Result<EntryRow> {
    Ok(EntryRow {
        seq: r.get::<_, i64>(0)?.max(0) as u64,
        kind: r.get(1)?,
        compaction_id: r.get(2)?,
        body: r.get(3)?,
        sha256: r.get(4)?,
        prev_hash: r.get(5)?,
        leaf_hash: r.get(6)?,
        signature: r.get(7)?,
        key_id: r.get(8)?,
        created_at: r.get(9)?,
    })
}

/// Entries matching `clause` (bound to `value`), in order.
pub(crate) fn entries_where(
    conn: &Connection,
    clause: &str,
    value: &dyn rusqlite::ToSql,
) -> Result<Vec<EntryRow>, StoreError> {
    let err = StoreError::sql("reading receipts");
    let sql = format!("SELECT {ENTRY_COLUMNS} FROM audit_entries WHERE {clause} ORDER BY seq");
    let mut st = conn.prepare_cached(&sql).map_err(err)?;
    let rows = st.query_map([value], entry_from_row).map_err(err)?;
    rows.collect::<Result<_, _>>().map_err(err)
}

impl Store {
    /// Verifies the whole store (see [`crate::audit::verify`]); `exported` is a checkpoint
    /// note kept outside it.
    pub fn verify(&self, exported: Option<&str>) -> Result<VerifyReport, StoreError> {
        self.conn()
            .execute_batch("BEGIN DEFERRED")
            .map_err(StoreError::sql("starting a read transaction"))?;
        let result = crate::audit::verify(self, exported);
        let ended = self.conn().execute_batch("COMMIT");
        let report = result?;
        ended.map_err(StoreError::sql("ending the read transaction"))?;
        Ok(report)
    }

    /// Checks what was appended to the log since `check` last ran, in one read transaction.
    pub fn refresh_chain(
        &self,
        check: &mut crate::audit::ChainCheck,
    ) -> Result<VerifyReport, StoreError> {
        self.conn()
            .execute_batch("BEGIN DEFERRED")
            .map_err(StoreError::sql("starting a read transaction"))?;
        let result = check.refresh(self);
        let ended = self.conn().execute_batch("COMMIT");
        let report = result?;
        ended.map_err(StoreError::sql("ending the read transaction"))?;
        Ok(report)
    }

    /// Writes every receipt as one JSONL line to `out`; how many were written.
    pub fn export_jsonl(&self, out: &mut dyn Write) -> Result<u64, StoreError> {
        let io = |source| StoreError::Io {
            context: "writing the export to",
            path: "output".into(),
            source,
        };
        let mut after = 0;
        let mut n = 0u64;
        loop {
            let chunk = LogRows::entries(self, after, 4096)?;
            let Some(last) = chunk.last() else { break };
            after = last.seq;
            for row in &chunk {
                let line = crate::audit::export::export_line(row).map_err(StoreError::Corrupt)?;
                writeln!(out, "{line}").map_err(io)?;
                n += 1;
            }
        }
        out.flush().map_err(io)?;
        Ok(n)
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
        let err = StoreError::sql("reading the audit log");
        let sql = format!(
            "SELECT {ENTRY_COLUMNS} FROM audit_entries WHERE seq > ?1 ORDER BY seq LIMIT ?2"
        );
        let mut st = self.conn().prepare_cached(&sql).map_err(err)?;
        let rows = st
            .query_map(
                params![
                    i64::try_from(after).unwrap_or(i64::MAX),
                    i64::try_from(limit).unwrap_or(i64::MAX)
                ],
                entry_from_row,
            )
            .map_err(err)?;
        rows.collect::<Result<_, _>>().map_err(err)
    }

    fn checkpoints(&self) -> Result<Vec<CheckpointRow>, StoreError> {
        let err = StoreError::sql("reading checkpoints");
        let mut st = self
            .conn()
            .prepare(
                "SELECT id, tree_size, root_hash, note, created_at FROM checkpoints
                 ORDER BY tree_size, id",
            )
            .map_err(err)?;
        let rows = st
            .query_map([], |r| {
                Ok(CheckpointRow {
                    id: r.get(0)?,
                    size: r.get::<_, i64>(1)?.max(0) as u64,
                    root_hex: r.get(2)?,
                    note: r.get(3)?,
                    created_at: r.get(4)?,
                })
            })
            .map_err(err)?;
        rows.collect::<Result<_, _>>().map_err(err)
    }

    fn latest_checkpoint(&self) -> Result<Option<CheckpointRow>, StoreError> {
        let err = StoreError::sql("reading the latest checkpoint");
        let mut st = self
            .conn()
            .prepare_cached(
                "SELECT id, tree_size, root_hash, note, created_at FROM checkpoints
                 ORDER BY tree_size DESC, id DESC LIMIT 1",
            )
            .map_err(err)?;
        let mut rows = st.query([]).map_err(err)?;
        let Some(r) = rows.next().map_err(err)? else {
            return Ok(None);
        };
        let row = (|| -> rusqlite::Result<CheckpointRow> {
            Ok(CheckpointRow {
                id: r.get(0)?,
                size: r.get::<_, i64>(1)?.max(0) as u64,
                root_hex: r.get(2)?,
                note: r.get(3)?,
                created_at: r.get(4)?,
            })
        })()
        .map_err(err)?;
        Ok(Some(row))
    }

    fn nodes(&self, visit: &mut dyn FnMut(u32, u64, &[u8])) -> Result<(), StoreError> {
        let err = StoreError::sql("reading the audit tree");
        let mut st = self
            .conn()
            .prepare("SELECT level, idx, hash FROM audit_nodes")
            .map_err(err)?;
        let mut rows = st.query([]).map_err(err)?;
        while let Some(row) = rows.next().map_err(err)? {
            let level: i64 = row.get(0).map_err(err)?;
            let index: i64 = row.get(1).map_err(err)?;
            let hash = row.get_ref(2).map_err(err)?.as_blob().unwrap_or(&[]);
            visit(
                u32::try_from(level).unwrap_or(u32::MAX),
                u64::try_from(index).unwrap_or(u64::MAX),
                hash,
            );
        }
        Ok(())
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

fn compactions(conn: &Connection, visit: &mut dyn TableVisitor) -> Result<(), StoreError> {
    let err = StoreError::sql("reading compactions");
    let mut st = conn
        .prepare(
            "SELECT id, tenant_id, task_id, request_sha256, summary_sha256,
                    source_population_sha256, status, verdict, outcome, finding_status,
                    verdict_class, has_secret_finding, main_reason, anomaly_count, report_sha256,
                    created_at
             FROM compactions",
        )
        .map_err(err)?;
    let mut rows = st.query([]).map_err(err)?;
    while let Some(r) = rows.next().map_err(err)? {
        let row = (|| -> rusqlite::Result<CompactionRow> {
            Ok(CompactionRow {
                id: r.get(0)?,
                tenant_id: r.get(1)?,
                task_id: r.get(2)?,
                request_sha256: r.get(3)?,
                summary_sha256: r.get(4)?,
                source_population_sha256: r.get(5)?,
                status: r.get(6)?,
                verdict: r.get(7)?,
                outcome: r.get(8)?,
                finding_status: r.get(9)?,
                verdict_class: r.get(10)?,
                has_secret_finding: r.get(11)?,
                main_reason: r.get(12)?,
                anomaly_count: r.get(13)?,
                report_sha256: r.get(14)?,
                created_at: r.get(15)?,
            })
        })()
        .map_err(err)?;
        visit.compaction(row);
    }
    Ok(())
}

fn requests(conn: &Connection, visit: &mut dyn TableVisitor) -> Result<(), StoreError> {
    let err = StoreError::sql("reading requests");
    let mut st = conn
        .prepare("SELECT compaction_id, request_json FROM requests")
        .map_err(err)?;
    let mut rows = st.query([]).map_err(err)?;
    while let Some(row) = rows.next().map_err(err)? {
        let id = row.get_ref(0).map_err(err)?.as_str().unwrap_or("");
        let text = row.get_ref(1).map_err(err)?.as_bytes().unwrap_or(&[]);
        visit.request(id, text);
    }
    Ok(())
}

fn reports(conn: &Connection, visit: &mut dyn TableVisitor) -> Result<(), StoreError> {
    let err = StoreError::sql("reading reports");
    let mut st = conn
        .prepare(
            "SELECT id, compaction_id, report_sha256, report_json, policy_sha256,
                    verifier_version, created_at
             FROM reports ORDER BY id",
        )
        .map_err(err)?;
    let mut rows = st.query([]).map_err(err)?;
    while let Some(r) = rows.next().map_err(err)? {
        let digest: String = r.get(2).map_err(err)?;
        let text = r.get_ref(3).map_err(err)?.as_bytes().unwrap_or(&[]);
        let text_matches = crate::audit::unhex32(&digest)
            .is_some_and(|d| d == <[u8; 32]>::from(Sha256::digest(text)));
        let row = ReportRow {
            id: r.get(0).map_err(err)?,
            compaction_id: r.get(1).map_err(err)?,
            report_sha256: digest,
            policy_sha256: r.get(4).map_err(err)?,
            verifier_version: r.get(5).map_err(err)?,
            created_at: r.get(6).map_err(err)?,
            text_matches,
        };
        visit.report(row);
    }
    Ok(())
}

fn signed(conn: &Connection, visit: &mut dyn TableVisitor) -> Result<(), StoreError> {
    let err = StoreError::sql("reading decisions");
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
        let mut st = conn.prepare(sql).map_err(err)?;
        let rows = st
            .query_map([], |r| {
                Ok(SignedRow {
                    id: r.get(0)?,
                    receipt_seq: r.get::<_, i64>(1)?.max(0) as u64,
                    compaction_id: r.get(2)?,
                    action: r.get(3)?,
                    reason: r.get(4)?,
                    note: r.get(5)?,
                    reviewer: r.get(6)?,
                    key_id: r.get(7)?,
                    report_sha256: r.get(8)?,
                    finding_id: r.get(9)?,
                    created_at: r.get(10)?,
                })
            })
            .map_err(err)?;
        for row in rows {
            visit.signed(table, row.map_err(err)?);
        }
    }
    Ok(())
}

fn reviewers(conn: &Connection, visit: &mut dyn TableVisitor) -> Result<(), StoreError> {
    let err = StoreError::sql("reading reviewers");
    let mut st = conn
        .prepare(
            "SELECT receipt_seq, name, public_key, key_id, role, authorized_by, created_at
             FROM reviewers",
        )
        .map_err(err)?;
    let rows = st
        .query_map([], |r| {
            Ok(ReviewerRow {
                receipt_seq: r.get::<_, i64>(0)?.max(0) as u64,
                name: r.get(1)?,
                public_key: r.get(2)?,
                key_id: r.get(3)?,
                role: r.get(4)?,
                authorized_by: r.get(5)?,
                created_at: r.get(6)?,
            })
        })
        .map_err(err)?;
    for row in rows {
        visit.reviewer(row.map_err(err)?);
    }
    Ok(())
}

fn meta(conn: &Connection, visit: &mut dyn TableVisitor) -> Result<(), StoreError> {
    let err = StoreError::sql("reading the store identity");
    let mut st = conn.prepare("SELECT key, value FROM meta").map_err(err)?;
    let rows = st
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
        .map_err(err)?;
    for row in rows {
        let (key, value) = row.map_err(err)?;
        visit.meta(&key, &value);
    }
    Ok(())
}
