//! Reviewer decisions: release or reject a quarantined compaction, with a reason code from the
//! policy and a note, signed by the reviewer's key and bound to the report digest they saw.
//!
//! The rules are checked inside the write transaction, so they hold under concurrency: a
//! compaction is decided at most once (the loser gets [`DecisionError::AlreadyDecided`]), a
//! decision on a report that a rerun has since replaced is [`DecisionError::Stale`], and a
//! release of a two-person class needs approvals from two distinct approver keys on the
//! current report. A reject is a veto and needs one reviewer. Every fact a rule reads (the
//! reviewer's role, the current report and its class, earlier approvals, an earlier decision)
//! comes from receipts the store verified ([`Store::verified_compaction`]), never from a
//! cached column; a column that disagrees is tamper.

use super::sql::params;
use super::verified::Verifier;
use super::{Status, Store, StoreError, VerifiedCompaction};
use crate::audit::authority::{Registration, Role};
use crate::audit::keys::NamedKey;
use crate::audit::{Receipt, ReceiptKind};
use crate::engine::verdict::VerdictClass;
use crate::json::Value;

/// Release or reject.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    Release,
    Reject,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Release => "release",
            Action::Reject => "reject",
        }
    }

    pub fn parse(text: &str) -> Option<Action> {
        match text {
            "release" => Some(Action::Release),
            "reject" => Some(Action::Reject),
            _ => None,
        }
    }

    fn status(self) -> Status {
        match self {
            Action::Release => Status::Released,
            Action::Reject => Status::Rejected,
        }
    }
}

/// The review rules of the policy in force.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewRules {
    /// Reason codes a decision may cite.
    pub reason_codes: Vec<String>,
    /// Verdict classes whose release needs two distinct approvers.
    pub two_person_classes: Vec<VerdictClass>,
    /// Whether any secret finding also needs two approvers.
    pub two_person_for_secrets: bool,
}

impl ReviewRules {
    pub fn needs_two(&self, verdict_class: VerdictClass, has_secret_finding: bool) -> bool {
        (has_secret_finding && self.two_person_for_secrets)
            || self.two_person_classes.contains(&verdict_class)
    }
}

/// A reviewer's decision as they made it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecisionRequest {
    pub compaction_id: String,
    pub action: Action,
    pub reason: String,
    pub note: String,
    /// The report digest the reviewer was looking at.
    pub seen_report_sha256: String,
}

/// What a decision did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecisionOutcome {
    /// The compaction is now released or rejected.
    Decided { status: Status, receipt_seq: u64 },
    /// An approval was recorded; `needed - approvals` more are required.
    Approved {
        approvals: usize,
        needed: usize,
        receipt_seq: u64,
    },
}

/// Why a decision was refused; each variant tells the reviewer what to do.
#[derive(Debug, thiserror::Error)]
pub enum DecisionError {
    #[error("the store \"{0}\" is open read-only: no decision can be written")]
    ReadOnly(std::path::PathBuf),
    #[error("no compaction \"{0}\" in the store")]
    UnknownCompaction(String),
    #[error(
        "key \"{key_id}\" is not a registered reviewer: run `cq reviewers add NAME PUBKEY` first"
    )]
    UnknownReviewer { key_id: String },
    #[error("reason code \"{code}\" is not in the policy: use one of {allowed}")]
    UnknownReason { code: String, allowed: String },
    #[error("compaction \"{id}\" was \"{status}\" by the gate and needs no decision")]
    NotQuarantined { id: String, status: Status },
    #[error("compaction \"{id}\" is already decided (\"{status}\" by \"{reviewer}\")")]
    AlreadyDecided {
        id: String,
        status: Status,
        reviewer: String,
    },
    #[error("compaction \"{id}\" was rechecked since you looked (report \"{seen}\" is now \"{current}\"): review the new report and decide again")]
    Stale {
        id: String,
        seen: String,
        current: String,
    },
    #[error("reviewer \"{reviewer}\" already approved compaction \"{id}\": a second, different approver must release it")]
    SelfApproval { id: String, reviewer: String },
    #[error("releasing compaction \"{id}\" needs two approvers and \"{reviewer}\" has the reviewer role: ask an approver, or reject it")]
    NotApprover { id: String, reviewer: String },
    #[error(transparent)]
    Store(StoreError),
}

impl DecisionError {
    /// Whether the store was found tampered with.
    pub fn is_tamper(&self) -> bool {
        matches!(self, DecisionError::Store(e) if e.is_tamper())
    }
}

impl From<StoreError> for DecisionError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::ReadOnly(path) => DecisionError::ReadOnly(path),
            StoreError::UnknownCompaction(id) => DecisionError::UnknownCompaction(id),
            other => DecisionError::Store(other),
        }
    }
}

impl Store {
    /// Records `request` signed by `key` under `rules`; see the module docs for the rules.
    /// A press on an item someone already decided is refused from a verified snapshot, without
    /// queueing for the write lock behind the writers; the rules are checked again under the
    /// lock, which is what makes them hold. Only a decision receipt on file (one indexed
    /// lookup) makes the snapshot worth verifying.
    fn refuse_if_seen_decided(&self, id: &str) -> Result<(), DecisionError> {
        if self.mode() != super::Mode::ReadWrite || !self.decision_on_file(id)? {
            return Ok(());
        }
        match self
            .verified_compaction(id)
            .ok()
            .and_then(|seen| Some((seen.decision.clone()?, seen.status())))
        {
            Some((d, status)) => Err(DecisionError::AlreadyDecided {
                id: id.into(),
                status,
                reviewer: d.reviewer,
            }),
            None => Ok(()),
        }
    }

    pub fn decide(
        &self,
        request: &DecisionRequest,
        key: &NamedKey,
        rules: &ReviewRules,
    ) -> Result<DecisionOutcome, DecisionError> {
        let id = request.compaction_id.as_str();
        known_reason(request, rules)?;
        self.refuse_if_seen_decided(id)?;
        self.write(|_, log, _| {
            let time = log.time().to_owned();
            let (verified, state) = self.verified_for_write(log, id)?;
            let reviewer = known_reviewer(&verified, key)?;
            decidable(&state, request)?;
            let signed = |kind| {
                target_receipt(&state, kind)
                    .with("reason", request.reason.as_str())
                    .with("note", request.note.as_str())
                    .with("reviewer", reviewer.name.as_str())
                    .with("reviewer_key_id", reviewer.key_id.as_str())
            };
            let needs_two = request.action == Action::Release
                && (state.approvals_required >= 2
                    || rules.needs_two(state.verdict_class, state.has_secret_finding));
            let mut approvers = Vec::new();
            if needs_two {
                if reviewer.role != Role::Approver {
                    return Err(DecisionError::NotApprover {
                        id: id.into(),
                        reviewer: reviewer.name,
                    });
                }
                if state.approvals.iter().any(|(_, k)| *k == reviewer.key_id) {
                    return Err(DecisionError::SelfApproval {
                        id: id.into(),
                        reviewer: reviewer.name,
                    });
                }
                let approval = log.append(&signed(ReceiptKind::Approval), Some(key))?;
                log.write_with(
                    "INSERT INTO approvals (compaction_id, reviewer, key_id, report_sha256, reason,
                         note, receipt_seq, created_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                    &params![
                        id,
                        &reviewer.name,
                        &reviewer.key_id,
                        &state.report_sha256,
                        &request.reason,
                        &request.note,
                        approval.seq,
                        &time
                    ],
                )?;
                approvers = state
                    .approvals
                    .iter()
                    .map(|(seq, _)| Value::from(*seq))
                    .collect();
                approvers.push(Value::from(approval.seq));
                if approvers.len() < 2 {
                    return Ok(DecisionOutcome::Approved {
                        approvals: approvers.len(),
                        needed: 2,
                        receipt_seq: approval.seq,
                    });
                }
            }
            let receipt = signed(ReceiptKind::Decision)
                .with("decision", request.action.as_str())
                .with("approval_receipt_seqs", approvers);
            let appended = log.append(&receipt, Some(key))?;
            log.write_with(
                "INSERT INTO decisions (compaction_id, action, reason, note, reviewer, key_id,
                     report_sha256, receipt_seq, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                &params![
                    id,
                    request.action.as_str(),
                    &request.reason,
                    &request.note,
                    &reviewer.name,
                    &reviewer.key_id,
                    &state.report_sha256,
                    appended.seq,
                    &time
                ],
            )?;
            let status = request.action.status();
            log.write_with(
                "UPDATE compactions SET status = ?2 WHERE id = ?1",
                &params![id, status.as_str()],
            )?;
            Ok(DecisionOutcome::Decided {
                status,
                receipt_seq: appended.seq,
            })
        })
    }

    /// Whether a decision receipt about `id` is on file (unverified: a hint only).
    fn decision_on_file(&self, id: &str) -> Result<bool, StoreError> {
        self.conn()
            .one(
                "SELECT EXISTS (SELECT 1 FROM audit_entries
                     WHERE compaction_id = ?1 AND kind = 'decision')",
                &[super::sql::Param::Text(id)],
                |r| r.flag(0),
            )
            .map_err(StoreError::sql("looking for a decision"))
    }

    /// Audits that `key`'s reviewer revealed the masked secret `finding_id` of compaction
    /// `id`. The receipt holds the finding's id, never the value.
    pub fn record_reveal(
        &self,
        id: &str,
        finding_id: &str,
        key: &NamedKey,
    ) -> Result<u64, DecisionError> {
        self.write(|_, log, _| {
            let time = log.time().to_owned();
            let (verified, state) = self.verified_for_write(log, id)?;
            let reviewer = known_reviewer(&verified, key)?;
            let receipt = target_receipt(&state, ReceiptKind::Reveal)
                .with("finding_id", finding_id)
                .with("reviewer", reviewer.name.as_str())
                .with("reviewer_key_id", reviewer.key_id.as_str());
            let appended = log.append(&receipt, Some(key))?;
            log.write_with(
                "INSERT INTO reveals (compaction_id, finding_id, reviewer, key_id, receipt_seq,
                     created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                &params![
                    id,
                    finding_id,
                    &reviewer.name,
                    &reviewer.key_id,
                    appended.seq,
                    &time
                ],
            )?;
            Ok(appended.seq)
        })
    }
}

/// The verified registration of `key`.
fn known_reviewer(verified: &Verifier, key: &NamedKey) -> Result<Registration, DecisionError> {
    let key_id = key.key_id();
    verified
        .authority
        .reviewer(&key_id)
        .cloned()
        .ok_or(DecisionError::UnknownReviewer { key_id })
}

/// The digests a decision, approval or reveal receipt binds, from the verified state.
fn target_receipt(state: &VerifiedCompaction, kind: ReceiptKind) -> Receipt {
    Receipt::new(kind, Some(&state.compaction_id))
        .with("request_sha256", state.request_sha256.as_str())
        .with("summary_sha256", state.summary_sha256.as_str())
        .with(
            "source_population_sha256",
            state.source_population_sha256.as_str(),
        )
        .with("report_sha256", state.report_sha256.as_str())
        .with("policy_sha256", state.policy_sha256.as_str())
        .with("verifier_version", state.verifier_version.as_str())
        .with("verdict_class", state.verdict_class.as_str())
}

/// The request's reason code is one the review rules allow.
fn known_reason(request: &DecisionRequest, rules: &ReviewRules) -> Result<(), DecisionError> {
    if rules.reason_codes.contains(&request.reason) {
        return Ok(());
    }
    let allowed: Vec<String> = rules
        .reason_codes
        .iter()
        .map(|c| format!("\"{c}\""))
        .collect();
    Err(DecisionError::UnknownReason {
        code: crate::sanitize::excerpt(&request.reason, 40),
        allowed: allowed.join(", "),
    })
}

/// `state`, verified under the write lock, may be decided as `request` asks: not decided yet,
/// still quarantined, and its report the one the reviewer saw.
fn decidable(state: &VerifiedCompaction, request: &DecisionRequest) -> Result<(), DecisionError> {
    let id = request.compaction_id.as_str();
    if let Some(d) = &state.decision {
        return Err(DecisionError::AlreadyDecided {
            id: id.into(),
            status: state.status(),
            reviewer: d.reviewer.clone(),
        });
    }
    if state.status() != Status::Quarantined {
        return Err(DecisionError::NotQuarantined {
            id: id.into(),
            status: state.status(),
        });
    }
    if request.seen_report_sha256 != state.report_sha256 {
        return Err(DecisionError::Stale {
            id: id.into(),
            seen: crate::sanitize::excerpt(&request.seen_report_sha256, 64),
            current: state.report_sha256.clone(),
        });
    }
    Ok(())
}
