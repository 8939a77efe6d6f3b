//! What the reviewer reads and records, behind one trait.
//!
//! [`ReviewSource`] is the whole contract between the TUI and the store: a paged queue (the UI
//! never loads every item), one item's detail, a rerun of the checks, a decision, an audited
//! reveal of a masked secret and the item's audit status. Each worker lane owns a handle of its
//! own ([`ReviewSource::fork`]), so methods take `&mut self` and the trait only needs `Send`. Every string in these
//! types is untrusted unless its doc says otherwise and must go through
//! [`crate::sanitize`] before it reaches the terminal. Secret values are never in
//! these types except in the `String` that [`ReviewSource::reveal`] returns: a source hands
//! out summaries and source messages with each matched secret's bytes overwritten (same byte
//! length, so span ranges stay valid), and the UI draws a mask over those ranges anyway.

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;

mod triage;

pub use triage::{
    date_of, day_number, Dashboard, DayCounts, ItemPreview, PreviewCheck, ReviewerCounts, Severity,
};

pub use crate::service::constraints::{
    ClaimEvidence, Closest, ConflictMatch, ConstraintEvidence, ConstraintKind, ConstraintStatus,
    PinnedEvidence, Sentence, TurnMatch,
};

use crate::review::filter::Filter;

/// Identifies one quarantined (or decided) compaction in the store.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ItemId(pub String);

impl fmt::Display for ItemId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Where an item stands in review.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Status {
    /// Waiting for a decision.
    Quarantined,
    /// One approval recorded, a second reviewer must approve.
    PendingApproval,
    /// Released by a reviewer.
    Released,
    /// Rejected by a reviewer.
    Rejected,
    /// Passed every check; never needed review.
    Accepted,
}

impl Status {
    /// Every status, in display order.
    pub const ALL: [Status; 5] = [
        Status::Quarantined,
        Status::PendingApproval,
        Status::Released,
        Status::Rejected,
        Status::Accepted,
    ];

    /// Lower-case word used in filters and on screen.
    pub fn word(self) -> &'static str {
        match self {
            Status::Quarantined => "quarantined",
            Status::PendingApproval => "pending",
            Status::Released => "released",
            Status::Rejected => "rejected",
            Status::Accepted => "accepted",
        }
    }

    /// Parses [`Status::word`] (and a few prefixes such as `quar`).
    pub fn parse(word: &str) -> Option<Status> {
        let word = word.to_ascii_lowercase();
        Status::ALL
            .into_iter()
            .find(|s| !word.is_empty() && s.word().starts_with(&word))
    }
}

/// The gate's verdict with the seed's outcome class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Outcome {
    /// Every check passed.
    Accepted,
    /// A check found a problem (FAIL / FINDING).
    Finding,
    /// A check could not decide (INSUFFICIENT_DATA / UNKNOWN).
    InsufficientData,
    /// A check could not run (ERROR / UNKNOWN).
    Error,
}

impl Outcome {
    /// The seed's label.
    pub fn label(self) -> &'static str {
        match self {
            Outcome::Accepted => "ACCEPTED",
            Outcome::Finding => "FAIL/FINDING",
            Outcome::InsufficientData => "INSUFFICIENT_DATA/UNKNOWN",
            Outcome::Error => "ERROR/UNKNOWN",
        }
    }

    /// The verdict this outcome belongs to: ACCEPTED only when every check passed.
    pub fn verdict(self) -> &'static str {
        match self {
            Outcome::Accepted => "ACCEPTED",
            _ => "QUARANTINED",
        }
    }

    /// A short label for narrow columns.
    pub fn short(self) -> &'static str {
        match self {
            Outcome::Accepted => "ACCEPTED",
            Outcome::Finding => "FINDING",
            Outcome::InsufficientData => "INSUFFICIENT",
            Outcome::Error => "ERROR",
        }
    }

    /// Higher is worse; used to sort by severity.
    pub fn severity(self) -> u8 {
        match self {
            Outcome::Accepted => 0,
            Outcome::InsufficientData => 1,
            Outcome::Finding => 2,
            Outcome::Error => 3,
        }
    }
}

/// How the queue is ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Sort {
    /// Oldest first.
    Age,
    /// The most severe failing check first, then oldest (the default: triage order).
    #[default]
    Severity,
}

/// One row of the queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueRow {
    pub id: ItemId,
    pub tenant: String,
    pub task: String,
    pub status: Status,
    pub outcome: Outcome,
    /// The most severe failing check's class (the seed's outcome is the first failure's).
    pub severity: Severity,
    /// The most severe failing check's reason code, e.g. `secrets: secret_found`.
    pub main_reason: String,
    /// When the gate quarantined it (Unix seconds, trusted).
    pub created_unix: i64,
    /// Anomalies the sanitizer counts over the summary and source messages.
    pub anomaly_count: usize,
}

/// One page of the queue.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct QueuePage {
    pub rows: Vec<QueueRow>,
    /// Items matching the filter.
    pub total: usize,
    /// Items matching the filter's non-status terms, by status (for the header).
    pub counts_by_status: BTreeMap<Status, usize>,
}

/// Author of a source message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
    Tool,
}

impl Role {
    pub fn word(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }
}

/// A message that was compacted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceMessage {
    pub role: Role,
    pub message_id: String,
    /// Hex SHA-256 of the content (trusted: computed by the gate).
    pub sha256: String,
    pub content: String,
    /// Byte ranges of `content` holding matched secrets (already overwritten by the source;
    /// the UI draws a mask over them).
    pub masked: Vec<Range<usize>>,
}

/// What a highlighted span of the summary is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SpanKind {
    /// A matched secret (bytes already overwritten by the source): the UI shows a mask.
    MaskedSecret {
        finding_id: String,
        rule_id: String,
        category: String,
    },
    /// Text contradicting a constraint.
    Conflict { constraint_id: String },
    /// A sentence claiming authority the summarizer does not have.
    Authority,
    /// Text matching a pinned constraint.
    PinnedMatch { constraint_id: String },
}

/// A highlighted byte range of the summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummarySpan {
    pub range: Range<usize>,
    pub kind: SpanKind,
}

/// The checks the gate runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CheckName {
    Schema,
    MinLength,
    Provenance,
    Consistency,
    Pinned,
    Authority,
    Secrets,
    /// Prose mode: whether the runtime returned a summary at all.
    Summarizer,
    /// Prose mode: proposals a registered constraint forbids.
    Conflicts,
    /// Prose mode: instructions carried forward from tool output.
    Injection,
    /// Prose mode: the registered constraints re-injected from the policy.
    Reinjection,
}

impl CheckName {
    pub fn word(self) -> &'static str {
        match self {
            CheckName::Schema => "schema",
            CheckName::MinLength => "min_length",
            CheckName::Provenance => "provenance",
            CheckName::Consistency => "consistency",
            CheckName::Pinned => "pinned",
            CheckName::Authority => "authority",
            CheckName::Secrets => "secrets",
            CheckName::Summarizer => "summarizer",
            CheckName::Conflicts => "conflicts",
            CheckName::Injection => "injection",
            CheckName::Reinjection => "reinjection",
        }
    }
}

/// A check's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckStatus {
    Pass,
    Fail,
    Error,
    NotRun,
}

impl CheckStatus {
    pub fn word(self) -> &'static str {
        match self {
            CheckStatus::Pass => "pass",
            CheckStatus::Fail => "FAIL",
            CheckStatus::Error => "ERROR",
            CheckStatus::NotRun => "not run",
        }
    }
}

/// The bounded verifier's answer for one constraint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verification {
    Preserved,
    Conflict,
    Unsupported,
    /// Prose mode: re-rendered from the policy, not looked for in the summary.
    Reinjected,
}

impl Verification {
    pub fn word(self) -> &'static str {
        match self {
            Verification::Preserved => "PRESERVED",
            Verification::Conflict => "CONFLICT",
            Verification::Unsupported => "UNSUPPORTED",
            Verification::Reinjected => "RE-INJECTED",
        }
    }
}

/// One constraint's row in a check result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConstraintRow {
    /// `invariant`, `commitment` or `pinned`.
    pub constraint_type: String,
    pub constraint_id: String,
    /// What the summary claims about it (e.g. `PRESERVED`, `missing`).
    pub claim_status: String,
    pub verification: Verification,
    /// The verifier rule that decided, when one did.
    pub rule_id: Option<String>,
    /// Hex SHA-256 of the evidence.
    pub evidence_sha256: Option<String>,
    /// Where the finding is in the summary, to scroll to.
    pub summary_range: Option<Range<usize>>,
    /// Which source message backs it, to scroll to.
    pub source_message_id: Option<String>,
}

/// One check's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckResult {
    pub check: CheckName,
    pub status: CheckStatus,
    /// Reason code, e.g. `secret.aws_access_key`.
    pub code: Option<String>,
    pub detail: String,
    pub constraints: Vec<ConstraintRow>,
}

/// A constraint claim: the summary's predicate against the canonical one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    pub constraint_id: String,
    pub preserved_predicate: String,
    pub canonical_predicate: String,
}

/// A pinned constraint against what the returned context carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinnedView {
    pub constraint_id: String,
    /// The constraint's text from the request's manifest.
    pub text: String,
    /// What the returned context carries for it (`None`: missing).
    pub returned: Option<String>,
}

/// Release or reject.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecisionKind {
    Release,
    Reject,
}

impl DecisionKind {
    pub fn word(self) -> &'static str {
        match self {
            DecisionKind::Release => "release",
            DecisionKind::Reject => "reject",
        }
    }
}

/// A first approval waiting for a second reviewer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingApproval {
    pub reviewer: String,
    pub kind: DecisionKind,
    pub reason_code: String,
    pub at_unix: i64,
}

/// A receipt of a verdict or decision as stored in the audit log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Receipt {
    /// Position in the audit log.
    pub seq: u64,
    /// `verdict`, `decision`, `reveal`, `approval`…
    pub kind: String,
    /// Canonical JSON body.
    pub body: String,
    pub sha256: String,
    /// Base64 Ed25519 signature, when signed.
    pub signature: Option<String>,
    pub at_unix: i64,
}

/// Everything the detail screen shows about one item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemDetail {
    pub id: ItemId,
    pub tenant: String,
    pub task: String,
    pub status: Status,
    pub outcome: Outcome,
    pub main_reason: String,
    pub created_unix: i64,
    /// Digest of the report the reviewer is looking at (sent back with a decision).
    pub report_sha256: String,
    pub policy_sha256: String,
    /// The policy of the current report, one line (name, version, mode, digest).
    pub policy: String,
    /// The policy digest of the item's first check (its verdict), when the current report
    /// is a rerun under another policy (`cq recheck --override-policy`).
    pub first_check_policy_sha256: Option<String>,
    pub sources: Vec<SourceMessage>,
    pub summary_text: String,
    pub summary_spans: Vec<SummarySpan>,
    pub checks: Vec<CheckResult>,
    /// Why each constraint and authority claim passed or failed, failing ones first.
    pub constraints: Vec<ConstraintEvidence>,
    pub claims: Vec<Claim>,
    pub pinned: Vec<PinnedView>,
    /// The previous summary of the same task, if there is one.
    pub previous_summary: Option<String>,
    pub approvals: Vec<PendingApproval>,
    pub receipts: Vec<Receipt>,
}

/// What a rerun found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RerunOutcome {
    /// The stored report, one field per line (pretty canonical JSON), for diffing.
    pub before_report: String,
    /// The fresh report in the same form.
    pub after_report: String,
    pub changed: bool,
    /// Which policy the rerun ran under, one line (`under built-in policy "prose" … the one
    /// it was checked under`).
    pub policy: String,
    /// Whether that was another policy than the one the item was checked under.
    pub policy_overridden: bool,
    /// The item as it stands after the rerun.
    pub detail: ItemDetail,
}

/// A decision the reviewer asks the store to record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecisionRequest {
    pub kind: DecisionKind,
    pub reason_code: String,
    pub note: String,
    /// The reviewer's identity (from the options, not typed in the dialog).
    pub reviewer: String,
    /// The report the reviewer saw; the store refuses if it is no longer current.
    pub report_sha256: String,
    /// The reviewer confirmed the item's sanitizer anomalies.
    pub anomalies_acknowledged: bool,
}

/// A reason code offered by the policy's review rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReasonCode {
    pub code: String,
    pub summary: String,
    /// Which decision it may justify.
    pub kind: DecisionKind,
}

/// Why the store did not record a decision; the dialog explains each in place.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecisionRefusal {
    #[error("the report changed since you opened it (seen \"{seen}\", now \"{current}\"); rerun or reopen the item")]
    Stale { seen: String, current: String },
    #[error("already decided: \"{kind}\" by \"{by}\"")]
    AlreadyDecided { by: String, kind: String },
    #[error("the store is open read-only; reopen without --readonly to decide")]
    ReadOnly,
    #[error("\"{reviewer}\" recorded the first approval; a different reviewer must approve")]
    SelfApproval { reviewer: String },
    #[error("approval recorded ({have} of {need}); a second reviewer must approve")]
    NeedsSecondApprover {
        have: u32,
        need: u32,
        receipt: Receipt,
    },
    #[error("the store could not record the decision: {0}")]
    Failed(String),
}

/// State of the audit log as far as one item is concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChainStatus {
    /// `audit verify` holds: chain and checkpoints intact.
    Verified { entries: u64, checkpoint: String },
    /// The chain breaks at `seq`.
    Broken { seq: u64, reason: String },
    /// Verification could not run.
    Unknown(String),
}

/// The item's receipts and the log's verification result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditView {
    pub receipts: Vec<Receipt>,
    pub chain: ChainStatus,
}

/// The data source behind `cq review`: the SQLite store in production, [`super::fake`] in
/// tests.
pub trait ReviewSource: Send {
    /// One page of the queue, filtered and sorted, plus totals.
    fn queue_page(
        &mut self,
        filter: &Filter,
        sort: Sort,
        offset: usize,
        limit: usize,
    ) -> anyhow::Result<QueuePage>;
    /// One item in full.
    fn item(&mut self, id: &ItemId) -> anyhow::Result<ItemDetail>;
    /// The focused queue row at a glance (cheaper than [`ReviewSource::item`]).
    fn preview(&mut self, id: &ItemId) -> anyhow::Result<ItemPreview>;
    /// What `filter` matches, by the check of its main reason, most first.
    fn reason_counts(&mut self, filter: &Filter) -> anyhow::Result<Vec<(String, usize)>>;
    /// The dashboard's numbers; a source keeps running totals and reads only what changed.
    fn dashboard(&mut self) -> anyhow::Result<Dashboard>;
    /// Reruns every check on the item under the policy it was checked under and stores the
    /// new report; fails, rerunning nothing, when that policy is not at hand.
    fn rerun(&mut self, id: &ItemId) -> anyhow::Result<RerunOutcome>;
    /// Records a decision (or refuses, saying why).
    fn decide(
        &mut self,
        id: &ItemId,
        request: &DecisionRequest,
    ) -> Result<Receipt, DecisionRefusal>;
    /// Returns a masked secret's value and writes the reveal to the audit log.
    fn reveal(&mut self, id: &ItemId, finding_id: &str, reviewer: &str) -> anyhow::Result<String>;
    /// The item's receipts and whether the audit log verifies.
    fn audit_status(&mut self, id: &ItemId) -> anyhow::Result<AuditView>;
    /// Reason codes the policy allows for decisions.
    fn reason_codes(&mut self) -> anyhow::Result<Vec<ReasonCode>>;
    /// A second handle on the same data, for another worker lane: the store opened again
    /// (same path, same mode, its own connection and checker), or a copy of in-memory data.
    fn fork(&self) -> anyhow::Result<Box<dyn ReviewSource>>;
    /// A feed that says when the data changed under the reviewer (other hosts recording,
    /// other reviewers deciding): each call waits up to the given time and says whether a
    /// change came. `None` for data nobody else changes.
    fn changes(&self) -> anyhow::Result<Option<ChangeFeed>> {
        Ok(None)
    }
}

/// See [`ReviewSource::changes`].
pub type ChangeFeed = Box<dyn FnMut(std::time::Duration) -> anyhow::Result<bool> + Send>;
