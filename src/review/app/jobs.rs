//! The slow lane's jobs as the state machine sees them: reruns and the audit view.
//!
//! A rerun job covers one item (`r`) or every tagged item (`R`); a new one cancels the job
//! running (the lane stops it before its next item) and says how far the old one got. Answers
//! arrive item by item; the open item shows its own, a batch ends with one summary, and the
//! queue is reloaded once the job is done. An answer from a cancelled job is not shown, but
//! its report was stored, so the queue is reloaded for it. Leaving the item does not cancel a
//! rerun: it is a write the reviewer asked for, not a view. The audit view's verification is
//! a view: leaving the audit screen cancels it and its result is dropped.

use std::sync::Arc;

use super::{App, Effect, RerunState, Screen};
use crate::review::source::{AuditView, ItemId, RerunOutcome};
use crate::review::worker::{Job, JobKind};

/// Where the audit screen's verification stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuditState {
    /// Not asked for, or cancelled by leaving the audit screen.
    Idle,
    /// `audit verify` runs on the slow lane.
    Loading {
        generation: u64,
    },
    Ready(AuditView),
    Failed(String),
}

/// The rerun job on the slow lane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RerunJob {
    pub generation: u64,
    /// Items in the job.
    pub total: usize,
    /// Answers whose report changed.
    pub changed: usize,
    /// Answers that failed, and the first failure.
    pub failed: usize,
    pub first_failure: Option<(ItemId, String)>,
}

impl App {
    /// Starts a rerun job of `ids`, replacing the running one.
    pub(crate) fn start_rerun(&mut self, ids: Vec<ItemId>) -> Vec<Effect> {
        let generation = self.generation();
        let stopped = self.rerun_job.take().map(|old| {
            (
                old.total.saturating_sub(self.reruns_pending.len()),
                old.total,
            )
        });
        self.reruns_pending = ids.iter().cloned().collect();
        if let Some(detail) = self.detail.as_mut() {
            if self.reruns_pending.contains(&detail.id) {
                detail.rerun = RerunState::Running { generation };
            } else if matches!(detail.rerun, RerunState::Running { .. }) {
                detail.rerun = RerunState::Idle;
            }
        }
        self.rerun_job = Some(RerunJob {
            generation,
            total: ids.len(),
            changed: 0,
            failed: 0,
            first_failure: None,
        });
        if let Some((done, total)) = stopped {
            self.info(format!(
                "stopped the previous rerun after {done} of {total} items to start this one"
            ));
        }
        vec![Effect::Job(Job::Rerun { generation, ids })]
    }

    pub(crate) fn on_rerun(
        &mut self,
        generation: u64,
        id: ItemId,
        result: Result<RerunOutcome, String>,
    ) -> Vec<Effect> {
        let Some(job) = self
            .rerun_job
            .as_mut()
            .filter(|j| j.generation == generation)
        else {
            // A cancelled job's last item: not shown, but its report is stored.
            return if result.is_ok() {
                self.reload_queue()
            } else {
                Vec::new()
            };
        };
        self.reruns_pending.remove(&id);
        match &result {
            Ok(outcome) if outcome.changed => job.changed += 1,
            Ok(_) => {}
            Err(e) => {
                job.failed += 1;
                job.first_failure
                    .get_or_insert_with(|| (id.clone(), e.clone()));
            }
        }
        let single = job.total == 1;
        let current = self
            .detail
            .as_mut()
            .filter(|d| d.id == id && d.rerun == RerunState::Running { generation });
        let updated = result.is_ok() && current.is_some();
        let message = match (result, current) {
            (Ok(outcome), Some(detail)) => {
                let changed = outcome.changed;
                let policy = outcome.policy.clone();
                detail.before_rerun = detail.item.take();
                detail.item = Some(Arc::new(outcome.detail.clone()));
                detail.rerun = RerunState::Done(Arc::new(outcome));
                Ok(if changed {
                    format!("rerun {id}: the report changed (d then tab: report diff), {policy}")
                } else {
                    format!("rerun {id}: the report is unchanged, {policy}")
                })
            }
            (Ok(outcome), None) => Ok(format!(
                "rerun {id}: report {}",
                if outcome.changed {
                    "changed"
                } else {
                    "unchanged"
                }
            )),
            (Err(e), Some(detail)) => {
                detail.rerun = RerunState::Failed(e.clone());
                Err(format!("rerun {id} failed: {e}"))
            }
            (Err(e), None) => Err(format!("rerun {id} failed: {e}")),
        };
        if updated {
            self.keep_constraint_selection();
        }
        if single {
            match message {
                Ok(text) => self.info(text),
                Err(text) => self.error(text),
            }
        }
        if !self.reruns_pending.is_empty() {
            return Vec::new();
        }
        if let Some(job) = self.rerun_job.take().filter(|_| !single) {
            self.finish_batch(&job);
        }
        let mut effects = self.reload_queue();
        effects.extend(self.reload_reasons());
        effects
    }

    fn finish_batch(&mut self, job: &RerunJob) {
        let RerunJob {
            total,
            changed,
            failed,
            ..
        } = *job;
        match &job.first_failure {
            None => self.info(format!("reran {total} items: {changed} reports changed")),
            Some((id, e)) => self.error(format!(
                "reran {total} items: {failed} failed (first \"{id}\": {e}), {changed} reports changed"
            )),
        }
    }

    /// Opens the audit screen and starts verifying the log.
    pub(crate) fn open_audit(&mut self) -> Vec<Effect> {
        let generation = self.generation();
        let Some(detail) = self.detail.as_mut() else {
            return Vec::new();
        };
        detail.audit = AuditState::Loading { generation };
        self.screen = Screen::Audit;
        vec![Effect::Job(Job::Audit {
            generation,
            id: detail.id.clone(),
        })]
    }

    pub(crate) fn on_audit(&mut self, generation: u64, result: Result<AuditView, String>) {
        if let Some(detail) = self
            .detail
            .as_mut()
            .filter(|d| d.audit == AuditState::Loading { generation })
        {
            detail.audit = match result {
                Ok(view) => AuditState::Ready(view),
                Err(e) => AuditState::Failed(e),
            };
        }
    }

    /// The audit screen was left: a verification still running is cancelled.
    pub(crate) fn left_audit(&mut self) -> Vec<Effect> {
        match self.detail.as_mut() {
            Some(detail) if matches!(detail.audit, AuditState::Loading { .. }) => {
                detail.audit = AuditState::Idle;
                vec![Effect::Cancel(JobKind::Audit)]
            }
            _ => Vec::new(),
        }
    }
}
