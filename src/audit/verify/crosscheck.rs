//! The table half of `verify`: every column a reviewer, a rule or the runtime reads must say
//! what the receipts say. A compaction's identity, status, verdict columns, request and
//! reports, each decision, approval, reveal and reviewer row are compared field by field with
//! the receipt that recorded them, stored requests and reports must hash to their digests (a
//! released request is what the runtime injects), and rows without receipts, or receipts
//! without rows, are named. The store's recorded key must be the trusted one.
//!
//! Stored requests (most of the bytes) are hashed on the workers while the store streams the
//! next ones ([`Digests`]); their results are applied in row order before the next table's
//! first row, so the problems come out in the same order as when hashed one by one.

use std::collections::BTreeSet;

use super::super::keys;
use super::super::merkle::Hash;
use super::super::receipt::ReceiptKind;
use super::super::rows::{
    CompactionRow, LogRows, ReportRow, ReviewerRow, SignedRow, SignedTable, TableVisitor,
};
use super::super::unhex32;
use super::digests::Digests;
use super::facts::{CompactionFacts, Facts, SEEN_REQUEST, SEEN_ROW};
use super::{VerifyReport, Workers};

pub(super) fn tables<R: LogRows + ?Sized>(
    rows: &R,
    facts: &Facts,
    workers: &Workers,
    report: &mut VerifyReport,
) -> Result<(), R::Error> {
    match workers.pool() {
        Some(pool) => {
            pool.in_place_scope(|s| check_tables(rows, facts, Digests::new(Some(s)), report))
        }
        None => check_tables(rows, facts, Digests::new(None), report),
    }
}

fn check_tables<R: LogRows + ?Sized>(
    rows: &R,
    facts: &Facts,
    digests: Digests<'_, '_>,
    report: &mut VerifyReport,
) -> Result<(), R::Error> {
    let (origin, key, _) = rows.identity();
    let mut check = Cross {
        facts,
        report,
        origin,
        key_text: keys::verifier_text(&rows.identity().0, &key),
        signed_seen: BTreeSet::new(),
        reviewers_seen: BTreeSet::new(),
        last_ids: [i64::MIN; 3],
        digests,
        requests: Vec::new(),
    };
    rows.tables(&mut check)?;
    check.finish();
    Ok(())
}

struct Cross<'a, 's, 'scope> {
    facts: &'a Facts,
    report: &'a mut VerifyReport,
    origin: String,
    key_text: String,
    signed_seen: BTreeSet<u64>,
    reviewers_seen: BTreeSet<u64>,
    /// The previous id seen in decisions, approvals, reveals (ids must ascend with seq).
    last_ids: [i64; 3],
    /// Stored requests being hashed.
    digests: Digests<'s, 'scope>,
    /// The compactions of the requests in `digests`, in row order.
    requests: Vec<(&'a str, &'a CompactionFacts)>,
}

/// Whether `digest` is the hex digest `claimed`.
fn is_digest(digest: Option<Hash>, claimed: &str) -> bool {
    digest.is_some_and(|d| unhex32(claimed) == Some(d))
}

impl Cross<'_, '_, '_> {
    fn differs(&mut self, seq: u64, what: String) {
        self.report.push(Some(seq), what);
    }

    /// Applies the digests of the stored requests read so far, in row order.
    fn settle(&mut self) {
        if self.requests.is_empty() {
            return;
        }
        let digests = self.digests.drain();
        let mut digests = digests.into_iter();
        for (id, f) in std::mem::take(&mut self.requests) {
            if !is_digest(digests.next().flatten(), &f.request_sha256) {
                let msg = format!("stored request of compaction \"{id}\" differs from its receipt");
                self.report.push(Some(f.verdict_seq), msg);
            }
            f.mark(SEEN_REQUEST);
        }
    }

    fn finish(&mut self) {
        self.settle();
        for (id, f) in &self.facts.compactions {
            if !f.was_seen(SEEN_ROW) {
                let msg = format!("compaction \"{id}\" was deleted from the store");
                self.report.push(Some(f.verdict_seq), msg);
            }
            if !f.was_seen(SEEN_REQUEST) {
                let msg = format!("stored request of compaction \"{id}\" is missing");
                self.report.push(Some(f.verdict_seq), msg);
            }
            let rows = f.report_rows.get();
            if rows < f.reports.len() {
                let missing = &f.reports[rows];
                let msg = format!(
                    "report {} of compaction \"{id}\" is missing from the store",
                    rows + 1
                );
                self.report.push(Some(missing.seq), msg);
            }
        }
        for (seq, f) in &self.facts.signed {
            if !self.signed_seen.contains(seq) {
                let msg = format!(
                    "{} receipt for compaction \"{}\" has no matching row in the store",
                    f.kind.as_str(),
                    f.compaction_id
                );
                self.report.push(Some(*seq), msg);
            }
        }
        for (seq, f) in &self.facts.reviewers {
            if !self.reviewers_seen.contains(seq) {
                let msg = format!("reviewer \"{}\" was removed from the store", f.name);
                self.report.push(Some(*seq), msg);
            }
        }
    }
}

impl TableVisitor for Cross<'_, '_, '_> {
    fn compaction(&mut self, row: CompactionRow) {
        self.settle();
        let Some(f) = self.facts.compactions.get(&row.id) else {
            self.report.push(
                None,
                format!(
                    "compaction \"{}\" has no verdict receipt in the log",
                    row.id
                ),
            );
            return;
        };
        f.mark(SEEN_ROW);
        let at = f.verdict_seq;
        let identity = [
            ("tenant", &row.tenant_id, &f.tenant_id),
            ("task", &row.task_id, &f.task_id),
            ("request digest", &row.request_sha256, &f.request_sha256),
            ("summary digest", &row.summary_sha256, &f.summary_sha256),
            (
                "source population digest",
                &row.source_population_sha256,
                &f.source_population_sha256,
            ),
            ("time", &row.created_at, &f.time),
        ];
        for (what, stored, bound) in identity {
            if stored != bound {
                self.differs(
                    at,
                    format!(
                        "{what} of compaction \"{}\" differs from its verdict receipt",
                        row.id
                    ),
                );
            }
        }
        let Some(current) = f.current() else { return };
        let latest = current.seq;
        let columns = [
            ("current report", row.report_sha256 == current.report_sha256),
            ("verdict", row.verdict == current.verdict),
            ("outcome", row.outcome == current.outcome),
            (
                "finding status",
                row.finding_status == current.finding_status,
            ),
            ("verdict class", row.verdict_class == current.verdict_class),
            (
                "secret-finding flag",
                (row.has_secret_finding == 1) == current.has_secret_finding,
            ),
            ("anomaly count", row.anomaly_count == current.anomaly_count),
            (
                "main reason",
                current
                    .main_reason
                    .as_ref()
                    .is_none_or(|m| *m == row.main_reason),
            ),
        ];
        for (what, same) in columns {
            if !same {
                self.differs(
                    latest,
                    format!(
                        "{what} of compaction \"{}\" differs from its receipts",
                        row.id
                    ),
                );
            }
        }
        let (expected, blame) = match &f.decision {
            Some((seq, action)) if action == "release" => ("released", *seq),
            Some((seq, _)) => ("rejected", *seq),
            None if f.reports.first().is_some_and(|r| r.verdict == "ACCEPTED") => ("accepted", at),
            None => ("quarantined", at),
        };
        if row.status != expected {
            self.differs(
                blame,
                format!(
                    "compaction \"{}\" has status \"{}\" but its receipts say \"{expected}\"",
                    row.id,
                    crate::sanitize::excerpt(&row.status, 40)
                ),
            );
        }
    }

    fn request(&mut self, compaction_id: &str, text: &[u8]) {
        let Some((id, f)) = self.facts.compactions.get_key_value(compaction_id) else {
            return; // reported with its compaction row
        };
        self.requests.push((id, f));
        self.digests.push(text);
    }

    fn report(&mut self, row: ReportRow) {
        self.settle();
        let Some(f) = self.facts.compactions.get(&row.compaction_id) else {
            let msg = format!(
                "a stored report of compaction \"{}\" has no receipt",
                row.compaction_id
            );
            self.report.push(None, msg);
            return;
        };
        let n = f.report_rows.get();
        f.report_rows.set(n + 1);
        let Some(bound) = f.reports.get(n) else {
            let msg = format!(
                "report row {} of compaction \"{}\" has no receipt",
                n + 1,
                row.compaction_id
            );
            self.report.push(Some(f.verdict_seq), msg);
            return;
        };
        let same = row.text_matches
            && row.report_sha256 == bound.report_sha256
            && row.policy_sha256 == bound.policy_sha256
            && row.verifier_version == bound.verifier_version
            && row.created_at == bound.time;
        if !same {
            let msg = format!(
                "report {} of compaction \"{}\" differs from the receipt that recorded it",
                n + 1,
                row.compaction_id
            );
            self.report.push(Some(bound.seq), msg);
        }
    }

    fn signed(&mut self, table: SignedTable, row: SignedRow) {
        self.settle();
        let (kind, slot) = match table {
            SignedTable::Decisions => (ReceiptKind::Decision, 0),
            SignedTable::Approvals => (ReceiptKind::Approval, 1),
            SignedTable::Reveals => (ReceiptKind::Reveal, 2),
        };
        let ordered = row.id > self.last_ids[slot];
        self.last_ids[slot] = row.id;
        let seq = row.receipt_seq;
        let ok = ordered
            && self.facts.signed.get(&seq).is_some_and(|f| {
                f.kind == kind
                    && f.compaction_id == row.compaction_id
                    && f.key_id == row.key_id
                    && f.reviewer == row.reviewer
                    && f.time == row.created_at
                    && match kind {
                        ReceiptKind::Reveal => f.finding_id == row.finding_id,
                        _ => {
                            f.report_sha256 == row.report_sha256
                                && f.reason == row.reason
                                && f.note == row.note
                                && (kind != ReceiptKind::Decision || f.action == row.action)
                        }
                    }
            });
        if ok {
            self.signed_seen.insert(seq);
        } else {
            let msg = format!(
                "{} row for compaction \"{}\" differs from its signed receipt",
                kind.as_str(),
                row.compaction_id
            );
            self.report.push(Some(seq), msg);
        }
    }

    fn reviewer(&mut self, row: ReviewerRow) {
        self.settle();
        let seq = row.receipt_seq;
        let ok = self.facts.reviewers.get(&seq).is_some_and(|f| {
            f.name == row.name
                && f.public_key == row.public_key
                && f.key_id == row.key_id
                && f.role == row.role
                && f.authorized_by == row.authorized_by
                && f.time == row.created_at
        });
        if ok {
            self.reviewers_seen.insert(seq);
        } else {
            let msg = format!(
                "reviewer row \"{}\" differs from its registration receipt",
                crate::sanitize::excerpt(&row.name, 40)
            );
            self.report.push(Some(seq), msg);
        }
    }

    fn meta(&mut self, key: &str, value: &str) {
        self.settle();
        let expected = match key {
            "origin" => self.origin.clone(),
            "public_key" => self.key_text.clone(),
            _ => return,
        };
        if value != expected {
            self.report.push(
                None,
                format!("the store's recorded \"{key}\" is not the trusted store key's"),
            );
        }
    }
}
