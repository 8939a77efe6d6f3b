//! The table half of `verify`: every row a reviewer or the runtime acts on must say what the
//! receipts say. A compaction's status, request and current report, each decision, approval,
//! reveal and reviewer row are compared with the receipt that recorded them, and stored
//! requests and reports must hash to their digests (a released request is what the runtime
//! injects, so a rewritten one must not pass).

use std::collections::{BTreeSet, HashMap};

use super::entries::Facts;
use super::VerifyReport;
use crate::audit::ReceiptKind;
use sha2::{Digest, Sha256};

use crate::audit::hex;
use crate::store::{Store, StoreError};

pub(super) fn tables(
    store: &Store,
    facts: &Facts,
    report: &mut VerifyReport,
) -> Result<(), StoreError> {
    compactions(store, facts, report)?;
    reports(store, facts, report)?;
    signed_rows(store, facts, report)?;
    reviewers(store, facts, report)
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn compactions(store: &Store, facts: &Facts, report: &mut VerifyReport) -> Result<(), StoreError> {
    let err = StoreError::sql("reading compactions");
    let mut st = store
        .conn()
        .prepare(
            "SELECT c.id, c.status, c.request_sha256, c.report_sha256, r.request_json
             FROM compactions c LEFT JOIN requests r ON r.compaction_id = c.id",
        )
        .map_err(err)?;
    let mut rows = st.query([]).map_err(err)?;
    let mut seen = BTreeSet::new();
    while let Some(row) = rows.next().map_err(err)? {
        let id: String = row.get(0).map_err(err)?;
        let status: String = row.get(1).map_err(err)?;
        let request_sha256: String = row.get(2).map_err(err)?;
        let report_sha256: String = row.get(3).map_err(err)?;
        let request_json = row
            .get_ref(4)
            .map_err(err)?
            .as_bytes_or_null()
            .map_err(|e| err(e.into()))?;
        let Some(f) = facts.compactions.get(&id) else {
            report.push(
                None,
                format!("compaction \"{id}\" has no verdict receipt in the log"),
            );
            continue;
        };
        seen.insert(id.clone());
        let at = Some(f.verdict_seq);
        if request_sha256 != f.request_sha256
            || request_json.map(sha256_hex).as_ref() != Some(&f.request_sha256)
        {
            report.push(
                at,
                format!("stored request of compaction \"{id}\" differs from its receipt"),
            );
        }
        if report_sha256 != f.latest_report {
            report.push(
                Some(f.latest_report_seq),
                format!("current report of compaction \"{id}\" differs from its receipts"),
            );
        }
        let (expected, blame) = match &f.decision {
            Some((seq, action)) if action == "release" => ("released", Some(*seq)),
            Some((seq, _)) => ("rejected", Some(*seq)),
            None if f.verdict == "ACCEPTED" => ("accepted", at),
            None => ("quarantined", at),
        };
        if status != expected {
            report.push(
                blame,
                format!("compaction \"{id}\" has status \"{status}\" but its receipts say \"{expected}\""),
            );
        }
    }
    for (id, f) in &facts.compactions {
        if !seen.contains(id) {
            report.push(
                Some(f.verdict_seq),
                format!("compaction \"{id}\" was deleted from the store"),
            );
        }
    }
    Ok(())
}

fn reports(store: &Store, facts: &Facts, report: &mut VerifyReport) -> Result<(), StoreError> {
    let err = StoreError::sql("reading reports");
    let mut st = store
        .conn()
        .prepare("SELECT compaction_id, report_sha256, report_json FROM reports ORDER BY id")
        .map_err(err)?;
    let mut rows = st.query([]).map_err(err)?;
    let mut latest: HashMap<String, String> = HashMap::new();
    while let Some(row) = rows.next().map_err(err)? {
        let id: String = row.get(0).map_err(err)?;
        let digest: String = row.get(1).map_err(err)?;
        let text = row
            .get_ref(2)
            .map_err(err)?
            .as_bytes()
            .map_err(|e| err(e.into()))?;
        if sha256_hex(text) != digest {
            let at = facts.compactions.get(&id).map(|f| f.verdict_seq);
            report.push(
                at,
                format!("a stored report of compaction \"{id}\" does not match its digest"),
            );
        }
        latest.insert(id, digest);
    }
    for (id, f) in &facts.compactions {
        if latest.get(id) != Some(&f.latest_report) {
            let msg =
                format!("latest stored report of compaction \"{id}\" differs from its receipts");
            report.push(Some(f.latest_report_seq), msg);
        }
    }
    Ok(())
}

/// Decision, approval and reveal rows against their signed receipts, both ways.
fn signed_rows(store: &Store, facts: &Facts, report: &mut VerifyReport) -> Result<(), StoreError> {
    let err = StoreError::sql("reading decisions");
    let queries = [
        (
            ReceiptKind::Decision,
            "SELECT receipt_seq, compaction_id, key_id, report_sha256, reason, action, NULL FROM decisions",
        ),
        (
            ReceiptKind::Approval,
            "SELECT receipt_seq, compaction_id, key_id, report_sha256, reason, '', NULL FROM approvals",
        ),
        (
            ReceiptKind::Reveal,
            "SELECT receipt_seq, compaction_id, key_id, NULL, NULL, NULL, finding_id FROM reveals",
        ),
    ];
    let mut matched = BTreeSet::new();
    for (kind, sql) in queries {
        let mut st = store.conn().prepare(sql).map_err(err)?;
        let mut rows = st.query([]).map_err(err)?;
        while let Some(row) = rows.next().map_err(err)? {
            let seq = row.get::<_, i64>(0).map_err(err)?.max(0) as u64;
            let id: String = row.get(1).map_err(err)?;
            let key_id: String = row.get(2).map_err(err)?;
            let report_sha256: Option<String> = row.get(3).map_err(err)?;
            let reason: Option<String> = row.get(4).map_err(err)?;
            let action: Option<String> = row.get(5).map_err(err)?;
            let finding: Option<String> = row.get(6).map_err(err)?;
            let name = kind.as_str();
            let ok = facts.signed.get(&seq).is_some_and(|f| {
                f.kind == kind
                    && f.compaction_id == id
                    && f.key_id == key_id
                    && report_sha256.as_ref().is_none_or(|r| *r == f.report_sha256)
                    && reason.as_ref().is_none_or(|r| *r == f.reason)
                    && action
                        .as_ref()
                        .is_none_or(|a| a.is_empty() || *a == f.action)
                    && (kind != ReceiptKind::Reveal || finding.as_ref() == Some(&f.finding_id))
            });
            if ok {
                matched.insert(seq);
            } else {
                report.push(
                    Some(seq),
                    format!("{name} row for compaction \"{id}\" differs from its signed receipt"),
                );
            }
        }
    }
    for (seq, f) in &facts.signed {
        if !matched.contains(seq) {
            let msg = format!(
                "{} receipt for compaction \"{}\" has no matching row in the store",
                f.kind.as_str(),
                f.compaction_id
            );
            report.push(Some(*seq), msg);
        }
    }
    Ok(())
}

fn reviewers(store: &Store, facts: &Facts, report: &mut VerifyReport) -> Result<(), StoreError> {
    let err = StoreError::sql("reading reviewers");
    let mut st = store
        .conn()
        .prepare("SELECT receipt_seq, name, public_key, key_id, role FROM reviewers")
        .map_err(err)?;
    let mut rows = st.query([]).map_err(err)?;
    let mut matched = BTreeSet::new();
    while let Some(row) = rows.next().map_err(err)? {
        let seq = row.get::<_, i64>(0).map_err(err)?.max(0) as u64;
        let name: String = row.get(1).map_err(err)?;
        let ok = facts.reviewers.get(&seq).is_some_and(|f| {
            Some(&f.name) == row.get(1).ok().as_ref()
                && Some(&f.public_key) == row.get(2).ok().as_ref()
                && Some(&f.key_id) == row.get(3).ok().as_ref()
                && Some(&f.role) == row.get(4).ok().as_ref()
        });
        if ok {
            matched.insert(seq);
        } else {
            report.push(
                Some(seq),
                format!("reviewer row \"{name}\" differs from its registration receipt"),
            );
        }
    }
    for (seq, f) in &facts.reviewers {
        if !matched.contains(seq) {
            report.push(
                Some(*seq),
                format!("reviewer \"{}\" was removed from the store", f.name),
            );
        }
    }
    Ok(())
}
