//! Where a compaction stands, derived from receipts this store verified, never from a cached
//! column: what `cq status` hands a runtime and what a decision's two-person rule keys on.
//!
//! Every receipt used is checked to be included, byte for byte, in the tree whose head the
//! store key (trusted from outside the file) signed last, and that head must cover the whole
//! log. Signed receipts must carry the signature of a reviewer admitted by the chain of
//! authority. The cached columns a caller reads (status, current report, verdict class,
//! secret flag, request digest) must agree with the receipts; a disagreement is tamper, not a
//! fallback. What this does not see (a receipt hidden by editing its compaction column) makes
//! a compaction look less settled, never more, and `cq audit verify` names it.

use std::collections::{BTreeSet, HashMap};

use ed25519_dalek::VerifyingKey;
use sha2::{Digest, Sha256};

use super::audit_rows::{entries_in, entries_where, entry_from_row, ENTRY_COLUMNS};
use super::log::{latest_note, nodes, Head, LogWriter};
use super::query::Status;
use super::sql::Param;
use super::{Store, StoreError};
use crate::audit::authority::{Authority, Registration, Role};
use crate::audit::merkle::{self, leaf_hash};
use crate::audit::note::Checkpoint;
use crate::audit::receipt_fields::{self, Flat};
use crate::audit::rows::EntryRow;
use crate::audit::{hex, ReceiptKind};
use crate::engine::verdict::{Verdict, VerdictClass};

/// A compaction as its verified receipts describe it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedCompaction {
    pub compaction_id: String,
    pub tenant_id: String,
    pub task_id: String,
    pub verdict: Verdict,
    pub request_sha256: String,
    pub summary_sha256: String,
    pub source_population_sha256: String,
    /// The current report (the verdict's, or the last rerun that changed it).
    pub report_sha256: String,
    pub policy_sha256: String,
    pub verifier_version: String,
    pub verdict_class: VerdictClass,
    pub has_secret_finding: bool,
    /// Approvals a release needs, as recorded with the current report.
    pub approvals_required: u32,
    /// Approvals of the current report by distinct approvers, `(seq, key id)`.
    pub approvals: Vec<(u64, String)>,
    pub decision: Option<VerifiedDecision>,
    /// The verdict receipt's bytes.
    pub verdict_receipt: String,
}

/// A verified decision receipt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedDecision {
    pub seq: u64,
    pub release: bool,
    pub reviewer: String,
    pub report_sha256: String,
    /// The receipt's bytes.
    pub receipt: String,
}

impl VerifiedCompaction {
    /// Where it stands.
    pub fn status(&self) -> Status {
        match &self.decision {
            Some(d) if d.release => Status::Released,
            Some(_) => Status::Rejected,
            None if self.verdict == Verdict::Accepted => Status::Accepted,
            None => Status::Quarantined,
        }
    }
}

/// What every verified read starts from: the trusted key, the signed head it verified, and
/// the chain of authority proven under it.
pub(crate) struct Verifier {
    head: Head,
    pub authority: Authority,
}

impl Store {
    /// The trusted key's signed head and the verified chain of authority (one snapshot).
    pub(crate) fn verifier(&self) -> Result<Verifier, StoreError> {
        let key = *self.trusted_key()?;
        self.read(|_| {
            let head = self.signed_head(&key)?;
            let authority = self.authority(&head, &key)?;
            Ok(Verifier { head, authority })
        })
    }

    /// The latest checkpoint, verified with the trusted store key, covering the whole log.
    fn signed_head(&self, key: &VerifyingKey) -> Result<Head, StoreError> {
        let size = self
            .conn()
            .one(
                "SELECT COALESCE(MAX(seq), 0) FROM audit_entries",
                &[],
                |r| r.count(0),
            )
            .map_err(StoreError::sql("reading the audit log size"))?;
        if size == 0 {
            return Ok(Head {
                size,
                root: crate::audit::merkle::empty_root(),
            });
        }
        let Some((_, note)) = latest_note(self.conn())? else {
            return Err(self
                .tampered("its audit log has no signed checkpoint")
                .into());
        };
        let cp = Checkpoint::open(&note, self.origin(), key)
            .map_err(|e| self.tampered(format!("its latest checkpoint does not verify: {e}")))?;
        if cp.size != size {
            return Err(self
                .tampered(format!(
                    "its latest signed checkpoint covers {} entries but the log has {size}",
                    cp.size
                ))
                .into());
        }
        Ok(Head {
            size,
            root: cp.root,
        })
    }

    /// Checks that each of `rows` is, byte for byte, leaf `row.seq` of the signed tree (the
    /// nodes of every proof read in one go).
    fn proven<'r>(
        &self,
        head: &Head,
        rows: impl IntoIterator<Item = &'r EntryRow>,
    ) -> Result<(), StoreError> {
        let mut plans = Vec::new();
        let mut wanted = Vec::new();
        for row in rows {
            let index = row.seq.checked_sub(1).filter(|i| *i < head.size);
            let Some(index) = index else {
                return Err(self
                    .tampered(format!("entry {} lies outside the signed log", row.seq))
                    .into());
            };
            let ranges: Vec<Vec<(u32, u64)>> = merkle::inclusion_ranges(index, head.size)
                .into_iter()
                .map(|(lo, hi)| merkle::range_nodes(lo, hi))
                .collect();
            wanted.extend(ranges.iter().flatten().copied());
            plans.push((row, index, ranges));
        }
        wanted.sort_unstable();
        wanted.dedup();
        let found = nodes(self.conn(), &wanted)?;
        for (row, index, ranges) in plans {
            let mut path = Vec::new();
            for range in ranges {
                let mut roots = Vec::with_capacity(range.len());
                for (level, idx) in range {
                    roots.push(*found.get(&(level, idx)).ok_or_else(|| {
                        self.tampered(format!("its audit tree lacks node {level}/{idx}"))
                    })?);
                }
                path.extend(merkle::fold_range(&roots));
            }
            let leaf = leaf_hash(row.body.as_bytes());
            if merkle::root_from_path(leaf, index, head.size, &path) != Some(head.root) {
                return Err(self
                    .tampered(format!(
                        "entry {} is not the receipt its signed checkpoint holds",
                        row.seq
                    ))
                    .into());
            }
        }
        Ok(())
    }

    /// Every reviewer registration, proven and admitted in order by the chain of authority.
    fn authority(&self, head: &Head, key: &VerifyingKey) -> Result<Authority, StoreError> {
        let rows = entries_where(
            self.conn(),
            "kind = ?1 AND compaction_id IS NULL",
            Param::Text(ReceiptKind::Reviewer.as_str()),
        )?;
        self.proven(head, &rows)?;
        self.admitted(key, &rows)
    }

    /// The chain of authority from the registration receipts `rows` (each already proven).
    fn admitted(&self, key: &VerifyingKey, rows: &[EntryRow]) -> Result<Authority, StoreError> {
        let mut authority = Authority::new(key);
        let kind = ReceiptKind::Reviewer.as_str();
        for row in rows {
            let body = receipt_fields::read(&row.body)
                .ok_or_else(|| self.tampered(format!("entry {} is not a receipt", row.seq)))?;
            if body.str("kind") != Some(kind) {
                continue;
            }
            authority
                .admit(
                    row.seq,
                    row.body.as_bytes(),
                    &body,
                    row.signature.as_deref(),
                )
                .map_err(|why| self.tampered(format!("registration {}: {why}", row.seq)))?;
        }
        Ok(authority)
    }

    /// The registered reviewer holding `key_id`, from verified registrations.
    pub fn verified_reviewer(&self, key_id: &str) -> Result<Option<Registration>, StoreError> {
        Ok(self.verifier()?.authority.reviewer(key_id).cloned())
    }

    /// Whether the store's key may still register someone (no approver yet), from verified
    /// registrations.
    pub(crate) fn verified_authority(&self) -> Result<Authority, StoreError> {
        Ok(self.verifier()?.authority)
    }

    /// Compaction `id` as its verified receipts describe it (see the module docs).
    pub fn verified_compaction(&self, id: &str) -> Result<VerifiedCompaction, StoreError> {
        self.read(|_| {
            let verifier = self.verifier()?;
            self.verified_compaction_with(&verifier, id)
        })
    }

    /// [`Store::verified_compaction`] under a verifier already at hand (same snapshot).
    pub(crate) fn verified_compaction_with(
        &self,
        verifier: &Verifier,
        id: &str,
    ) -> Result<VerifiedCompaction, StoreError> {
        let rows = entries_where(self.conn(), "compaction_id = ?1", Param::Text(id))?;
        self.proven(&verifier.head, &rows)?;
        let before: Vec<u64> = rows.iter().filter_map(|r| r.seq.checked_sub(1)).collect();
        let previous = entries_in(self.conn(), &before)?;
        self.settled(&verifier.authority, id, &rows, &previous)
    }

    /// [`Store::verifier`] and [`Store::verified_compaction`] of `id` inside a write
    /// transaction, with every check theirs, in two queries: the head is the one `log`
    /// verified under the write lock (no writer can move it before the commit), then one
    /// query reads the registrations, `id`'s receipts and the entry before each of those,
    /// and one the nodes of all their inclusion proofs.
    pub(crate) fn verified_for_write(
        &self,
        log: &LogWriter,
        id: &str,
    ) -> Result<(Verifier, VerifiedCompaction), StoreError> {
        let key = *self.trusted_key()?;
        if *log.key() != key {
            // Not this store's writer: verify from scratch.
            let verifier = self.verifier()?;
            let state = self.verified_compaction_with(&verifier, id)?;
            return Ok((verifier, state));
        }
        let head = log.head();
        let sql = format!(
            "SELECT {ENTRY_COLUMNS}, 0 FROM audit_entries WHERE kind = ?1 AND compaction_id IS NULL
             UNION ALL
             SELECT {ENTRY_COLUMNS}, 1 FROM audit_entries WHERE compaction_id = ?2
             UNION ALL
             SELECT {ENTRY_COLUMNS}, 2 FROM audit_entries
             WHERE seq IN (SELECT seq - 1 FROM audit_entries WHERE compaction_id = ?2)
             ORDER BY 11, 1"
        );
        let mut parts: [Vec<EntryRow>; 3] = Default::default();
        self.conn()
            .query(
                &sql,
                &[Param::Text(ReceiptKind::Reviewer.as_str()), Param::Text(id)],
                &mut |r| {
                    let part = usize::try_from(r.int(10)?).unwrap_or(usize::MAX);
                    if let Some(rows) = parts.get_mut(part) {
                        rows.push(entry_from_row(r)?);
                    }
                    Ok(())
                },
            )
            .map_err(StoreError::sql("reading receipts"))?;
        let [registrations, rows, previous] = parts;
        self.proven(&head, registrations.iter().chain(&rows))?;
        let authority = self.admitted(&key, &registrations)?;
        let state = self.settled(&authority, id, &rows, &previous)?;
        Ok((Verifier { head, authority }, state))
    }

    /// Compaction `id` from its receipts `rows` (each already proven) and the entries
    /// `previous` that come right before them.
    fn settled(
        &self,
        authority: &Authority,
        id: &str,
        rows: &[EntryRow],
        previous: &[EntryRow],
    ) -> Result<VerifiedCompaction, StoreError> {
        self.chained(rows, previous)?;
        let mut state: Option<VerifiedCompaction> = None;
        for row in rows {
            let body = receipt_fields::read(&row.body)
                .ok_or_else(|| self.tampered(format!("entry {} is not a receipt", row.seq)))?;
            if body.str("compaction_id") != Some(id) || body.int("seq") != Some(row.seq as i64) {
                return Err(self
                    .tampered(format!(
                        "entry {} is filed under the wrong compaction",
                        row.seq
                    ))
                    .into());
            }
            let kind = body.str("kind").and_then(ReceiptKind::parse);
            self.apply(&mut state, kind, row, &body, authority)?;
        }
        let state =
            state.ok_or_else(|| StoreError::UnknownCompaction(crate::sanitize::excerpt(id, 80)))?;
        self.agrees(&state)?;
        Ok(state)
    }

    /// Each of `rows` names the hash of the entry before it, found in `previous`.
    fn chained(&self, rows: &[EntryRow], previous: &[EntryRow]) -> Result<(), StoreError> {
        let previous: HashMap<u64, &EntryRow> = previous.iter().map(|r| (r.seq, r)).collect();
        for row in rows.iter().filter(|r| r.seq > 1) {
            let named = receipt_fields::read(&row.body)
                .and_then(|b| b.str("prev_receipt_sha256").map(str::to_owned));
            let actual = previous
                .get(&(row.seq - 1))
                .map(|prev| hex(&Sha256::digest(prev.body.as_bytes())));
            if named.is_none() || named != actual {
                return Err(self
                    .tampered(format!(
                        "entry {} does not follow the entry before it",
                        row.seq
                    ))
                    .into());
            }
        }
        Ok(())
    }

    /// Folds one verified receipt into the compaction's state.
    fn apply(
        &self,
        state: &mut Option<VerifiedCompaction>,
        kind: Option<ReceiptKind>,
        row: &EntryRow,
        body: &crate::audit::receipt_fields::FlatReceipt<'_>,
        authority: &Authority,
    ) -> Result<(), StoreError> {
        let s = |k: &str| body.str(k).unwrap_or("").to_owned();
        let bad = |what: &str| self.tampered(format!("entry {}: {what}", row.seq));
        let report = |state: &mut VerifiedCompaction| -> Result<(), StoreError> {
            state.report_sha256 = s("report_sha256");
            state.policy_sha256 = s("policy_sha256");
            state.verifier_version = s("verifier_version");
            state.verdict_class = VerdictClass::parse(&s("verdict_class"))
                .ok_or_else(|| bad("unknown verdict class"))?;
            state.has_secret_finding =
                matches!(body.get("has_secret_finding"), Some(Flat::Bool(true)));
            state.approvals_required = body.int("approvals_required").map_or_else(
                || {
                    if state.verdict_class == VerdictClass::Finding || state.has_secret_finding {
                        2
                    } else {
                        1
                    }
                },
                |n| u32::try_from(n).unwrap_or(2),
            );
            state.approvals.clear();
            Ok(())
        };
        match (kind, state.as_mut()) {
            (Some(ReceiptKind::Verdict), None) => {
                let mut fresh = VerifiedCompaction {
                    compaction_id: s("compaction_id"),
                    tenant_id: s("tenant_id"),
                    task_id: s("task_id"),
                    verdict: Verdict::parse(&s("verdict")).ok_or_else(|| bad("unknown verdict"))?,
                    request_sha256: s("request_sha256"),
                    summary_sha256: s("summary_sha256"),
                    source_population_sha256: s("source_population_sha256"),
                    report_sha256: String::new(),
                    policy_sha256: String::new(),
                    verifier_version: String::new(),
                    verdict_class: VerdictClass::Pass,
                    has_secret_finding: false,
                    approvals_required: 1,
                    approvals: Vec::new(),
                    decision: None,
                    verdict_receipt: row.body.clone(),
                };
                report(&mut fresh)?;
                *state = Some(fresh);
            }
            (Some(ReceiptKind::Rerun), Some(st)) if st.decision.is_none() => report(st)?,
            (Some(ReceiptKind::Rerun), Some(_)) => {}
            (Some(ReceiptKind::Approval), Some(st)) => {
                let signer = authority
                    .signer(
                        row.seq,
                        &s("reviewer_key_id"),
                        row.body.as_bytes(),
                        row.signature.as_deref(),
                    )
                    .map_err(|why| bad(&why))?;
                if signer.role == Role::Approver
                    && s("report_sha256") == st.report_sha256
                    && !st.approvals.iter().any(|(_, k)| *k == signer.key_id)
                {
                    st.approvals.push((row.seq, signer.key_id.clone()));
                }
            }
            (Some(ReceiptKind::Decision), Some(st)) if st.decision.is_none() => {
                let signer = authority
                    .signer(
                        row.seq,
                        &s("reviewer_key_id"),
                        row.body.as_bytes(),
                        row.signature.as_deref(),
                    )
                    .map_err(|why| bad(&why))?;
                let release = s("decision") == "release";
                if release && st.approvals_required >= 2 {
                    let cited: BTreeSet<u64> = match body.get("approval_receipt_seqs") {
                        Some(Flat::Ints(seqs)) => {
                            seqs.iter().filter_map(|n| u64::try_from(*n).ok()).collect()
                        }
                        _ => BTreeSet::new(),
                    };
                    let approved = st.approvals.iter().filter(|(seq, _)| cited.contains(seq));
                    if approved.count() < 2 {
                        return Err(bad("a release that needs two approvers cites fewer").into());
                    }
                }
                st.decision = Some(VerifiedDecision {
                    seq: row.seq,
                    release,
                    reviewer: signer.name.clone(),
                    report_sha256: s("report_sha256"),
                    receipt: row.body.clone(),
                });
            }
            (Some(ReceiptKind::Decision), Some(_)) => {
                return Err(bad("a second decision on one compaction").into())
            }
            (Some(ReceiptKind::Reveal), Some(_)) => {}
            _ => return Err(bad("a receipt out of order for its compaction").into()),
        }
        Ok(())
    }

    /// The cached columns a caller reads must say what the receipts say, and the stored
    /// request must exist (its text is not read here: a caller that uses it checks it
    /// against the request digest).
    fn agrees(&self, state: &VerifiedCompaction) -> Result<(), StoreError> {
        let id = &state.compaction_id;
        let row = self
            .conn()
            .opt(
                "SELECT status, report_sha256, verdict_class, has_secret_finding, request_sha256,
                        (SELECT COUNT(*) FROM requests WHERE compaction_id = compactions.id)
                 FROM compactions WHERE id = ?1",
                &[Param::Text(id)],
                |r| {
                    Ok([
                        r.text(0)? == state.status().as_str(),
                        r.text(1)? == state.report_sha256,
                        r.text(2)? == state.verdict_class.as_str(),
                        r.flag(3)? == state.has_secret_finding,
                        r.text(4)? == state.request_sha256,
                        r.int(5)? == 1,
                    ])
                },
            )
            .map_err(StoreError::sql("reading a compaction"))?
            .ok_or_else(|| self.tampered(format!("compaction \"{id}\" has receipts but no row")))?;
        let what = [
            "status",
            "current report",
            "verdict class",
            "secret-finding flag",
            "request digest",
            "stored request",
        ];
        let checks = what.into_iter().zip(row);
        for (what, same) in checks {
            if !same {
                return Err(self
                    .tampered(format!(
                        "the {what} of compaction \"{}\" differs from its receipts",
                        crate::sanitize::line(id)
                    ))
                    .into());
            }
        }
        Ok(())
    }
}
