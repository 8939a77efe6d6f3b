//! [`StoreSource`]: the reviewer's [`ReviewSource`] over the SQLite store.
//!
//! It owns its own [`Store`] (its own connection: the worker thread that holds the source is
//! the only code touching it) and a [`Checker`] (the current policy and the scanner) for
//! reruns. The queue is one paged query per request; an item is built from the stored request
//! and its current report, with every matched secret overwritten before any text leaves
//! (summary, source messages, claims, the previous summary). Decisions go through
//! [`Store::decide`] under the policy's review rules, signed with the reviewer's key; a
//! reveal is recorded in the audit log before the value is handed out, and refused when it
//! cannot be recorded (no key, read-only store).

mod deferred;
pub mod detail;

use anyhow::Context as _;

use crate::audit::keys::NamedKey;
use crate::commands::check::Checker;
use crate::commands::recheck::{self, parse_report};
use crate::engine::GateRequest;
use crate::json::{self, Value};
use crate::policy::Policy;
use crate::review::filter::{Filter, Predicate};
use crate::review::source::{
    AuditView, ChainStatus, DecisionKind, DecisionRefusal, DecisionRequest, ItemDetail, ItemId,
    PendingApproval, QueuePage, QueueRow, ReasonCode, Receipt, RerunOutcome, ReviewSource, Role,
    Sort, SourceMessage, Status,
};
use crate::store::{
    self, Action, Compaction, DecisionError, DecisionOutcome, Mode, QueueField, QueueOrder,
    QueueQuery, QueueStatus, QueueTerm, ReviewRules, Store,
};

use deferred::Deferred;
use detail::{summary_parts, summary_secrets, SummaryParts};

/// The store behind `cq review`.
pub struct StoreSource {
    store: Store,
    policy: Policy,
    checker: Deferred,
    key: Option<NamedKey>,
    rules: ReviewRules,
    reviewer: Option<String>,
}

impl std::fmt::Debug for StoreSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreSource")
            .field("store", &self.store)
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

/// The store's decision rules from a policy's `[review]` table (`secret` in
/// `two_person_classes` means any secret finding).
pub fn review_rules(policy: &Policy) -> ReviewRules {
    let classes = &policy.review.two_person_classes;
    ReviewRules {
        reason_codes: policy
            .review
            .reason_codes
            .iter()
            .map(|r| r.code.clone())
            .collect(),
        two_person_classes: classes.iter().filter(|c| *c != "secret").cloned().collect(),
        two_person_for_secrets: classes.iter().any(|c| c == "secret"),
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
            rules: review_rules(&policy),
            store,
            policy,
            checker,
            key,
            reviewer,
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

    fn compaction(&self, id: &ItemId) -> anyhow::Result<Compaction> {
        self.store
            .compaction(&id.0)?
            .ok_or_else(|| anyhow::anyhow!("no compaction \"{id}\" in the store"))
    }

    /// The request, its summary parts and the current report of a compaction.
    fn load(&self, c: &Compaction) -> anyhow::Result<(GateRequest, SummaryParts, Value)> {
        let id = &c.summary.id;
        let request = GateRequest::from_json(c.request_json.as_bytes())
            .map_err(|e| anyhow::anyhow!("the stored request of \"{id}\" does not parse: {e}"))?;
        let report_row = self
            .store
            .reports(id)?
            .into_iter()
            .rev()
            .find(|r| r.report_sha256 == c.summary.report_sha256)
            .ok_or_else(|| anyhow::anyhow!("compaction \"{id}\" has no current report"))?;
        let report = parse_report(&report_row.report_json)?;
        let parts = summary_parts(&request);
        Ok((request, parts, report))
    }

    fn detail(&self, c: &Compaction) -> anyhow::Result<ItemDetail> {
        let (request, parts, report) = self.load(c)?;
        let scanner = &self.checker.get()?.scanner;
        let policy = &self.policy;
        let secrets = summary_secrets(&report, &parts, scanner);
        let ranges: Vec<_> = secrets.iter().map(|s| s.range.clone()).collect();
        let digests = report
            .get("source_message_sha256s")
            .and_then(Value::as_array)
            .unwrap_or(&[]);
        let sources = request
            .messages
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let field = format!("messages[{i}].content");
                let (content, masked) = detail::scan_and_mask(scanner, &field, &m.content);
                SourceMessage {
                    role: match m.role.as_str() {
                        "user" => Role::User,
                        "assistant" => Role::Assistant,
                        _ => Role::Tool,
                    },
                    message_id: m.message_id.clone(),
                    sha256: digests
                        .get(i)
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                        .unwrap_or_else(|| json::canonical_sha256(&m.record()).unwrap_or_default()),
                    content,
                    masked,
                }
            })
            .collect();
        let s = &c.summary;
        Ok(ItemDetail {
            id: ItemId(s.id.clone()),
            tenant: s.tenant_id.clone(),
            task: s.task_id.clone(),
            status: status_of(s.status, !c.approvals.is_empty()),
            outcome: detail::outcome(&s.outcome),
            main_reason: s.main_reason.clone(),
            created_unix: detail::unix_seconds(&s.created_at),
            report_sha256: s.report_sha256.clone(),
            policy_sha256: report
                .get("policy_sha256")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned(),
            sources,
            summary_text: detail::mask(&parts.text, &ranges),
            summary_spans: detail::spans(&report, &parts, &secrets),
            checks: detail::check_results(&report, &parts),
            claims: detail::claims(&parts, policy, scanner),
            pinned: detail::pinned(&report, &request, policy),
            previous_summary: self.previous_summary(c)?,
            approvals: c
                .approvals
                .iter()
                .map(|a| PendingApproval {
                    reviewer: a.reviewer.clone(),
                    kind: DecisionKind::Release,
                    reason_code: a.reason.clone(),
                    at_unix: detail::unix_seconds(&a.created_at),
                })
                .collect(),
            receipts: self.receipts(&s.id)?,
        })
    }

    /// The previous summary of the same task, masked the same way.
    fn previous_summary(&self, c: &Compaction) -> anyhow::Result<Option<String>> {
        let s = &c.summary;
        let Some(previous) = self
            .store
            .previous_for_task(&s.tenant_id, &s.task_id, &s.id)?
        else {
            return Ok(None);
        };
        let Some(previous) = self.store.compaction(&previous.id)? else {
            return Ok(None);
        };
        let (_, parts, report) = self.load(&previous)?;
        let secrets = summary_secrets(&report, &parts, &self.checker.get()?.scanner);
        let ranges: Vec<_> = secrets.into_iter().map(|s| s.range).collect();
        Ok(Some(detail::mask(&parts.text, &ranges)))
    }

    fn receipts(&self, id: &str) -> anyhow::Result<Vec<Receipt>> {
        Ok(self
            .store
            .signed_receipts_for(id)?
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

fn receipt(stored: store::StoredReceipt) -> Receipt {
    let store::StoredReceipt {
        seq,
        kind,
        receipt_json: body,
        signature,
    } = stored;
    let parsed = json::parse(body.as_bytes(), &json::Limits::default()).ok();
    let at_unix = parsed
        .as_ref()
        .and_then(|v| v.get("time"))
        .and_then(Value::as_str)
        .map_or(0, detail::unix_seconds);
    Receipt {
        seq,
        kind,
        sha256: json::sha256_hex(body.as_bytes()),
        body,
        signature,
        at_unix,
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

fn queue_status(status: Status) -> QueueStatus {
    match status {
        Status::Quarantined => QueueStatus::Quarantined,
        Status::PendingApproval => QueueStatus::Pending,
        Status::Released => QueueStatus::Released,
        Status::Rejected => QueueStatus::Rejected,
        Status::Accepted => QueueStatus::Accepted,
    }
}

fn review_status(status: QueueStatus) -> Status {
    match status {
        QueueStatus::Quarantined => Status::Quarantined,
        QueueStatus::Pending => Status::PendingApproval,
        QueueStatus::Released => Status::Released,
        QueueStatus::Rejected => Status::Rejected,
        QueueStatus::Accepted => Status::Accepted,
    }
}

/// The reviewer's filter as a store query.
pub fn queue_query(filter: &Filter) -> QueueQuery {
    let text = |field, needle: &String| QueueTerm::Text {
        field,
        needle: needle.clone(),
    };
    QueueQuery {
        terms: filter
            .terms
            .iter()
            .map(|t| {
                let term = match &t.predicate {
                    Predicate::Text(n) => text(QueueField::Any, n),
                    Predicate::Reason(n) => text(QueueField::Reason, n),
                    Predicate::Tenant(n) => text(QueueField::Tenant, n),
                    Predicate::Task(n) => text(QueueField::Task, n),
                    Predicate::Status(s) => QueueTerm::Status(queue_status(*s)),
                };
                (t.negated, term)
            })
            .collect(),
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
        let order = match sort {
            Sort::Age => QueueOrder::OldestFirst,
            Sort::Severity => QueueOrder::WorstFirst,
        };
        let result = self
            .store
            .queue(&queue_query(filter), order, offset as u64, limit as u64)
            .context("while reading the queue")?;
        Ok(QueuePage {
            rows: result
                .rows
                .into_iter()
                .map(|e| {
                    let s = e.summary;
                    QueueRow {
                        id: ItemId(s.id),
                        tenant: s.tenant_id,
                        task: s.task_id,
                        status: review_status(e.status),
                        outcome: detail::outcome(&s.outcome),
                        main_reason: s.main_reason,
                        created_unix: detail::unix_seconds(&s.created_at),
                        anomaly_count: s.anomaly_count as usize,
                    }
                })
                .collect(),
            total: result.total as usize,
            counts_by_status: result
                .counts
                .into_iter()
                .map(|(s, n)| (review_status(s), n as usize))
                .collect(),
        })
    }

    fn item(&mut self, id: &ItemId) -> anyhow::Result<ItemDetail> {
        self.checker.wait()?;
        let c = self.compaction(id)?;
        self.detail(&c)
            .with_context(|| format!("while loading \"{id}\""))
    }

    fn rerun(&mut self, id: &ItemId) -> anyhow::Result<RerunOutcome> {
        self.checker.wait()?;
        let done = recheck::recheck(&self.store, self.checker.get()?, &id.0)?;
        let detail = self.item(id)?;
        Ok(RerunOutcome {
            before_report: recheck::pretty(&done.before),
            after_report: recheck::pretty(&done.after),
            changed: done.changed(),
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
        match self.store.decide(&wanted, key, &self.rules) {
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
        let index = detail::finding_index(finding_id)
            .ok_or_else(|| anyhow::anyhow!("no finding \"{finding_id}\" on item \"{id}\""))?;
        let c = self.compaction(id)?;
        let (_, parts, report) = self.load(&c)?;
        let secrets = summary_secrets(&report, &parts, &self.checker.get()?.scanner);
        let value = secrets
            .get(index)
            .and_then(|s| parts.text.get(s.range.clone()))
            .ok_or_else(|| anyhow::anyhow!("no finding \"{finding_id}\" on item \"{id}\""))?
            .to_owned();
        let index = u32::try_from(index).context("finding index out of range")?;
        self.store
            .record_reveal(&id.0, index, key)
            .context("the reveal could not be audited, so it is not shown")?;
        Ok(value)
    }

    fn audit_status(&mut self, id: &ItemId) -> anyhow::Result<AuditView> {
        let receipts = self.receipts(&id.0)?;
        let chain = match crate::audit::verify(&self.store, None) {
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
            Err(e) => ChainStatus::Unknown(e.to_string()),
        };
        Ok(AuditView { receipts, chain })
    }

    fn reason_codes(&mut self) -> anyhow::Result<Vec<ReasonCode>> {
        let mut out = Vec::new();
        for r in &self.policy.review.reason_codes {
            let kinds: &[DecisionKind] = match r.applies_to.as_str() {
                "release" => &[DecisionKind::Release],
                "reject" => &[DecisionKind::Reject],
                _ => &[DecisionKind::Release, DecisionKind::Reject],
            };
            out.extend(kinds.iter().map(|kind| ReasonCode {
                code: r.code.clone(),
                summary: r.description.clone(),
                kind: *kind,
            }));
        }
        Ok(out)
    }
}
