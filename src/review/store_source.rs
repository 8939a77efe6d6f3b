//! [`StoreSource`]: the reviewer's [`ReviewSource`] over the SQLite store.
//!
//! It owns its own [`Store`] (its own connection: the worker thread that holds the source is
//! the only code touching it) and a [`Checker`] (the reviewer's policy and the scanner, built
//! on a thread of its own, so the queue shows at once). A rerun runs under the policy the item
//! was checked under: the reviewer's when its digest matches, else the built-in with that
//! digest (compiled on first need); an item checked under a policy the reviewer does not
//! have is not rerun, and the error names the digest needed. The queue is the store's
//! paged `list` and its per-status counts, never the whole store; an item is built from the
//! stored request and its current report, with every matched secret overwritten before any text leaves
//! (summary, source messages, claims, the previous summary). Decisions go through
//! [`Store::decide`] under the policy's review rules, signed with the reviewer's key; a
//! reveal is recorded in the audit log before the value is handed out, and refused when it
//! cannot be recorded (no key, read-only store). A fork opens the same store again, in the same
//! mode and trusting the same store key, with a checker of its own, for the slow worker lane.

mod deferred;
pub mod detail;
mod triage;

use anyhow::Context as _;

use crate::audit::keys::NamedKey;
use crate::audit::ChainCheck;
use crate::engine::verdict::VerdictClass;
use crate::policy::Policy;
use crate::review::filter::{Filter, Predicate};
use crate::review::source::{
    AuditView, ChainStatus, Dashboard, DecisionKind, DecisionRefusal, DecisionRequest, ItemDetail,
    ItemId, ItemPreview, PendingApproval, QueuePage, QueueRow, ReasonCode, Receipt, RerunOutcome,
    ReviewSource, Role, Sort, SourceMessage, Status,
};
use crate::service::constraints;
use crate::service::decide::{decide, reason_rules};
use crate::service::inspect::{glance, inspect, reveal, Inspection};
use crate::service::recheck::{self, recheck, NamedPolicy, Policies};
use crate::service::Checker;
use crate::store::{
    self, Action, DecisionError, DecisionOutcome, ListFilter, ListTerm, Mode, SortKey, Store,
    TermField,
};

use deferred::Deferred;
use triage::Tally;

/// The store behind `cq review`.
pub struct StoreSource {
    store: Store,
    policy: Policy,
    checker: Deferred,
    /// The built-in policies items were checked under, compiled when a rerun first needs one
    /// (a rerun runs under the item's own policy, never simply under `policy`).
    policies: Policies,
    key: Option<NamedKey>,
    reviewer: Option<String>,
    /// The log's chain as far as this source has checked it.
    chain: Option<ChainCheck>,
    /// The dashboard's running totals (kept by the lane that owns this source).
    tally: Tally,
}

impl std::fmt::Debug for StoreSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreSource")
            .field("store", &self.store)
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

impl StoreSource {
    /// A source over `store`, rerunning with `checker`, signing with `key` when given.
    pub fn new(
        store: Store,
        checker: Checker,
        key: Option<NamedKey>,
    ) -> anyhow::Result<StoreSource> {
        let policy = checker.engine.policy.clone();
        Self::with(store, policy, Deferred::Ready(Box::new(checker)), key)
    }

    /// Like [`StoreSource::new`], but compiles the policy and the scanner on a thread of their
    /// own, so the queue shows while they load; the first item or rerun waits for them.
    pub fn open(
        store: Store,
        policy: Policy,
        key: Option<NamedKey>,
    ) -> anyhow::Result<StoreSource> {
        let checker = Deferred::spawn(policy.clone())?;
        Self::with(store, policy, checker, key)
    }

    fn with(
        store: Store,
        policy: Policy,
        checker: Deferred,
        key: Option<NamedKey>,
    ) -> anyhow::Result<StoreSource> {
        let reviewer = match &key {
            Some(key) => store
                .reviewer_by_key(&key.key_id())?
                .map(|r| r.name)
                .or_else(|| Some(key.name.clone())),
            None => None,
        };
        Ok(StoreSource {
            store,
            policy,
            checker,
            policies: Policies::own(),
            key,
            reviewer,
            chain: None,
            tally: Tally::default(),
        })
    }

    /// Who decides: the registered name of the key, else `$USER`.
    pub fn reviewer_name(&self) -> String {
        self.reviewer
            .clone()
            .or_else(|| std::env::var("USER").ok().filter(|u| !u.is_empty()))
            .unwrap_or_else(|| "reviewer".into())
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The item as the detail screen shows it.
    fn detail(&self, inspection: &Inspection) -> ItemDetail {
        let c = &inspection.compaction;
        let s = &c.summary;
        let sources = inspection
            .sources
            .iter()
            .map(|m| SourceMessage {
                role: match m.role.as_str() {
                    "user" => Role::User,
                    "assistant" => Role::Assistant,
                    _ => Role::Tool,
                },
                message_id: m.message_id.clone(),
                sha256: m.sha256.clone(),
                content: m.content.clone(),
                masked: m.masked.clone(),
            })
            .collect();
        ItemDetail {
            id: ItemId(s.id.clone()),
            tenant: s.tenant_id.clone(),
            task: s.task_id.clone(),
            status: status_of(s.status, !c.approvals.is_empty()),
            outcome: detail::outcome(s.outcome),
            main_reason: s.main_reason.clone(),
            created_unix: s.created_unix(),
            report_sha256: s.report_sha256.clone(),
            policy_sha256: inspection.report.policy_sha256.clone(),
            policy: NamedPolicy::of_report(&inspection.report).label(),
            first_check_policy_sha256: first_check_policy(inspection),
            sources,
            summary_text: inspection.summary.text.clone(),
            summary_spans: detail::spans(inspection),
            checks: detail::check_results(inspection),
            constraints: constraints::evidence(inspection, &self.policy),
            claims: detail::claims(&inspection.summary, &self.policy),
            pinned: detail::pinned(inspection, &self.policy),
            previous_summary: inspection.previous_summary.clone(),
            approvals: c
                .approvals
                .iter()
                .map(|a| PendingApproval {
                    reviewer: a.reviewer.clone(),
                    kind: DecisionKind::Release,
                    reason_code: a.reason.clone(),
                    at_unix: crate::audit::parse_utc(&a.created_at).unwrap_or(0),
                })
                .collect(),
            receipts: inspection.receipts.iter().cloned().map(receipt).collect(),
        }
    }

    /// One page of the queue most severe first, then oldest (the store's
    /// [`SortKey::Severity`] order), read class by class along the queue's time index: the
    /// store has no index on the verdict class, so one query sorting every row would scan the
    /// whole table for each page, where the first page of a class takes one short index walk.
    /// A page that starts past a class's rows counts that class to skip it.
    fn severity_page(
        &self,
        list: &ListFilter,
        offset: u64,
        limit: u64,
    ) -> anyhow::Result<Vec<store::CompactionSummary>> {
        let mut rows = Vec::new();
        let mut skip = offset;
        for class in VerdictClass::by_severity() {
            let need = limit.saturating_sub(rows.len() as u64);
            if need == 0 {
                break;
            }
            if list.verdict_class.is_some_and(|c| c != class) {
                continue;
            }
            let of_class = ListFilter {
                verdict_class: Some(class),
                ..list.clone()
            };
            let page = self
                .store
                .list(&of_class, SortKey::OldestFirst, skip, need)
                .context("while reading the queue")?;
            if page.is_empty() && skip > 0 {
                let n = self
                    .store
                    .count(&of_class)
                    .context("while counting the queue")?;
                skip = skip.saturating_sub(n);
                continue;
            }
            skip = 0;
            rows.extend(page);
        }
        Ok(rows)
    }

    fn receipts(&self, id: &str) -> anyhow::Result<Vec<Receipt>> {
        Ok(self
            .store
            .receipts_for(id)?
            .into_iter()
            .map(receipt)
            .collect())
    }

    fn receipt_at(&self, id: &str, seq: u64) -> Result<Receipt, DecisionRefusal> {
        self.receipts(id)
            .map_err(|e| DecisionRefusal::Failed(format!("{e:#}")))?
            .into_iter()
            .find(|r| r.seq == seq)
            .ok_or_else(|| DecisionRefusal::Failed(format!("receipt \"{seq}\" is missing")))
    }
}

/// The policy digest the item's verdict receipt binds, when the current report names another
/// (a rerun under another policy replaced it).
fn first_check_policy(inspection: &Inspection) -> Option<String> {
    let verdict = inspection.receipts.iter().find(|r| r.kind == "verdict")?;
    let body = crate::audit::receipt_fields::read(&verdict.body)?;
    let first = body.str("policy_sha256")?;
    (first != inspection.report.policy_sha256).then(|| first.to_owned())
}

fn receipt(stored: store::StoredReceipt) -> Receipt {
    Receipt {
        seq: stored.seq,
        kind: stored.kind,
        at_unix: crate::audit::parse_utc(&stored.created_at).unwrap_or(0),
        body: stored.body,
        sha256: stored.sha256,
        signature: stored.signature,
    }
}

/// The queue row of a stored compaction.
fn queue_row(s: store::CompactionSummary) -> QueueRow {
    QueueRow {
        status: status_of(s.status, s.approvals > 0),
        outcome: detail::outcome(s.outcome),
        severity: triage::severity(s.verdict_class),
        created_unix: s.created_unix(),
        anomaly_count: s.anomaly_count as usize,
        id: ItemId(s.id),
        tenant: s.tenant_id,
        task: s.task_id,
        main_reason: s.main_reason,
    }
}

fn status_of(status: store::Status, pending: bool) -> Status {
    match status {
        store::Status::Quarantined if pending => Status::PendingApproval,
        store::Status::Quarantined => Status::Quarantined,
        store::Status::Released => Status::Released,
        store::Status::Rejected => Status::Rejected,
        store::Status::Accepted => Status::Accepted,
    }
}

/// The store filter for the reviewer's filter, and which statuses it lets through; `None`
/// when its status terms exclude everything.
pub fn list_filter(filter: &Filter) -> Option<(ListFilter, Vec<Status>)> {
    let allowed: Vec<Status> = Status::ALL
        .into_iter()
        .filter(|s| {
            filter.terms.iter().all(|t| match t.predicate {
                Predicate::Status(want) => (want == *s) != t.negated,
                _ => true,
            })
        })
        .collect();
    if allowed.is_empty() {
        return None;
    }
    let mut list = ListFilter::default();
    let stored: Vec<store::Status> = store::Status::ALL
        .into_iter()
        .filter(|s| allowed.iter().any(|a| stored_status(*a) == *s))
        .collect();
    if let [only] = stored[..] {
        list.status = Some(only);
    } else {
        list.excluded_statuses = store::Status::ALL
            .into_iter()
            .filter(|s| !stored.contains(s))
            .collect();
    }
    let quarantined = allowed.contains(&Status::Quarantined);
    let pending = allowed.contains(&Status::PendingApproval);
    list.pending_approval = match (quarantined, pending) {
        (true, false) => Some(false),
        // Pending alone: quarantined with an approval. Pending with other statuses but not
        // plain quarantined cannot be said in one store filter; it lists plain quarantined
        // items too (the header counts stay exact).
        (false, true) if stored.len() == 1 => Some(true),
        _ => None,
    };
    let term = |negated, field, needle: &String| ListTerm {
        negated,
        field,
        needle: needle.clone(),
    };
    list.terms = filter
        .terms
        .iter()
        .filter_map(|t| {
            Some(match &t.predicate {
                Predicate::Text(n) => term(t.negated, TermField::Any, n),
                Predicate::Reason(n) => term(t.negated, TermField::Reason, n),
                Predicate::Tenant(n) => term(t.negated, TermField::Tenant, n),
                Predicate::Task(n) => term(t.negated, TermField::Task, n),
                Predicate::Status(_) => return None,
            })
        })
        .collect();
    Some((list, allowed))
}

fn stored_status(status: Status) -> store::Status {
    match status {
        Status::Quarantined | Status::PendingApproval => store::Status::Quarantined,
        Status::Released => store::Status::Released,
        Status::Rejected => store::Status::Rejected,
        Status::Accepted => store::Status::Accepted,
    }
}

fn refusal(error: DecisionError) -> DecisionRefusal {
    match error {
        DecisionError::ReadOnly(_) => DecisionRefusal::ReadOnly,
        DecisionError::AlreadyDecided {
            status, reviewer, ..
        } => DecisionRefusal::AlreadyDecided {
            by: reviewer,
            kind: status.as_str().to_owned(),
        },
        DecisionError::Stale { seen, current, .. } => DecisionRefusal::Stale { seen, current },
        DecisionError::SelfApproval { reviewer, .. } => DecisionRefusal::SelfApproval { reviewer },
        other => DecisionRefusal::Failed(other.to_string()),
    }
}

impl ReviewSource for StoreSource {
    fn queue_page(
        &mut self,
        filter: &Filter,
        sort: Sort,
        offset: usize,
        limit: usize,
    ) -> anyhow::Result<QueuePage> {
        let Some((list, allowed)) = list_filter(filter) else {
            return Ok(QueuePage::default());
        };
        let counts = self
            .store
            .status_counts(&list)
            .context("while counting the queue")?;
        let mut counts_by_status = std::collections::BTreeMap::new();
        for (s, n) in counts.by_status {
            let n = if s == store::Status::Quarantined {
                counts_by_status.insert(Status::PendingApproval, counts.pending_approval as usize);
                n.saturating_sub(counts.pending_approval)
            } else {
                n
            };
            counts_by_status.insert(status_of(s, false), n as usize);
        }
        counts_by_status.retain(|_, n| *n > 0);
        let total = allowed
            .iter()
            .map(|s| counts_by_status.get(s).copied().unwrap_or(0))
            .sum();
        let rows = match sort {
            Sort::Age => self
                .store
                .list(&list, SortKey::OldestFirst, offset as u64, limit as u64)
                .context("while reading the queue")?,
            Sort::Severity => self.severity_page(&list, offset as u64, limit as u64)?,
        };
        let rows = rows.into_iter().map(queue_row).collect();
        Ok(QueuePage {
            rows,
            total,
            counts_by_status,
        })
    }

    fn item(&mut self, id: &ItemId) -> anyhow::Result<ItemDetail> {
        self.checker.wait()?;
        let inspection = inspect(&self.store, self.checker.get()?.scanner(), &id.0)
            .with_context(|| format!("while loading \"{id}\""))?;
        Ok(self.detail(&inspection))
    }

    fn preview(&mut self, id: &ItemId) -> anyhow::Result<ItemPreview> {
        self.checker.wait()?;
        let glanced = glance(&self.store, self.checker.get()?.scanner(), &id.0)
            .with_context(|| format!("while previewing \"{id}\""))?;
        Ok(triage::preview(&glanced))
    }

    fn reason_counts(&mut self, filter: &Filter) -> anyhow::Result<Vec<(String, usize)>> {
        let Some((list, _)) = list_filter(filter) else {
            return Ok(Vec::new());
        };
        Ok(self
            .store
            .reason_counts(&list)
            .context("while counting the queue by reason")?
            .into_iter()
            .map(|(reason, n)| (reason, n as usize))
            .collect())
    }

    fn dashboard(&mut self) -> anyhow::Result<Dashboard> {
        self.tally
            .refresh(&self.store)
            .context("while counting the store for the dashboard")
    }

    fn rerun(&mut self, id: &ItemId) -> anyhow::Result<RerunOutcome> {
        self.checker.wait()?;
        let done = recheck(&self.store, self.checker.get()?, &mut self.policies, &id.0)?;
        let detail = self.item(id)?;
        Ok(RerunOutcome {
            before_report: recheck::pretty(&done.before.to_value()),
            after_report: recheck::pretty(&done.after.to_value()),
            changed: done.changed(),
            policy: done.policy.describe(),
            policy_overridden: done.policy.overridden(),
            detail,
        })
    }

    fn decide(
        &mut self,
        id: &ItemId,
        request: &DecisionRequest,
    ) -> Result<Receipt, DecisionRefusal> {
        if self.store.mode() == Mode::ReadOnly {
            return Err(DecisionRefusal::ReadOnly);
        }
        let Some(key) = &self.key else {
            return Err(DecisionRefusal::Failed(
                "no reviewer key: quit and reopen with `cq review --key FILE` to sign decisions"
                    .into(),
            ));
        };
        let wanted = store::DecisionRequest {
            compaction_id: id.0.clone(),
            action: match request.kind {
                DecisionKind::Release => Action::Release,
                DecisionKind::Reject => Action::Reject,
            },
            reason: request.reason_code.clone(),
            note: request.note.clone(),
            seen_report_sha256: request.report_sha256.clone(),
        };
        let decided = decide(&self.store, &self.policy, key, &wanted)
            .map_err(|e| DecisionRefusal::Failed(format!("{e:#}")))?;
        match decided {
            Ok(DecisionOutcome::Decided { receipt_seq, .. }) => self.receipt_at(&id.0, receipt_seq),
            Ok(DecisionOutcome::Approved {
                approvals,
                needed,
                receipt_seq,
            }) => Err(DecisionRefusal::NeedsSecondApprover {
                have: approvals as u32,
                need: needed as u32,
                receipt: self.receipt_at(&id.0, receipt_seq)?,
            }),
            Err(e) => Err(refusal(e)),
        }
    }

    fn reveal(&mut self, id: &ItemId, finding_id: &str, _reviewer: &str) -> anyhow::Result<String> {
        self.checker.wait()?;
        let Some(key) = &self.key else {
            anyhow::bail!(
                "a reveal is audited and needs your key: reopen with `cq review --key FILE`"
            );
        };
        reveal(
            &self.store,
            self.checker.get()?.scanner(),
            key,
            &id.0,
            finding_id,
        )
    }

    fn audit_status(&mut self, id: &ItemId) -> anyhow::Result<AuditView> {
        let receipts = self.receipts(&id.0)?;
        // The log's chain is checked incrementally (only what was appended since the last
        // look), and this item's receipts and columns by inclusion under the signed head.
        let key = *self.store.public_key();
        let check = self.chain.get_or_insert_with(|| ChainCheck::new(&key));
        let chain = match self
            .store
            .refresh_chain(check)
            .and_then(|report| self.store.verified_compaction(&id.0).map(|_| report))
        {
            Ok(report) if report.is_ok() => ChainStatus::Verified {
                entries: report.entries,
                checkpoint: report.root,
            },
            Ok(report) => {
                let first = report.problems.first();
                ChainStatus::Broken {
                    seq: report.first_bad().unwrap_or(0),
                    reason: first.map(|p| p.message.clone()).unwrap_or_default(),
                }
            }
            Err(e) if e.is_tamper() => ChainStatus::Broken {
                seq: 0,
                reason: e.to_string(),
            },
            Err(e) => ChainStatus::Unknown(e.to_string()),
        };
        Ok(AuditView { receipts, chain })
    }

    fn reason_codes(&mut self) -> anyhow::Result<Vec<ReasonCode>> {
        let mut out = Vec::new();
        for r in reason_rules(&self.policy) {
            out.extend(r.actions.iter().map(|action| ReasonCode {
                code: r.code.clone(),
                summary: r.description.clone(),
                kind: match action {
                    Action::Release => DecisionKind::Release,
                    Action::Reject => DecisionKind::Reject,
                },
            }));
        }
        Ok(out)
    }

    fn changes(&self) -> anyhow::Result<Option<crate::review::source::ChangeFeed>> {
        let mut watch = self.store.watch()?;
        Ok(Some(Box::new(move |timeout| Ok(watch.wait(timeout)?))))
    }

    fn fork(&self) -> anyhow::Result<Box<dyn ReviewSource>> {
        let store = self
            .store
            .fork()
            .with_context(|| format!("while opening \"{}\" again", self.store.path().display()))?;
        Ok(Box::new(StoreSource {
            store,
            policy: self.policy.clone(),
            checker: Deferred::Later(Box::new(self.policy.clone())),
            policies: Policies::own(),
            key: self.key.clone(),
            reviewer: self.reviewer.clone(),
            chain: None,
            tally: Tally::default(),
        }))
    }
}
