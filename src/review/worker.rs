//! The work the reviewer hands to the data source, and how each piece is answered.
//!
//! Work goes down one of two [`lanes`], each a thread with its own [`ReviewSource`] handle
//! (its own SQLite connection in production), so neither ever blocks drawing:
//! - the fast lane answers [`Request`]s: queue pages, item loads, the focused row's preview,
//!   the queue's reason counts, the dashboard, reason codes, decisions and reveals. Reads
//!   coalesce newest-wins: when several queue loads (or item loads, previews…) wait, only the
//!   last runs. Writes never coalesce and never get dropped.
//! - the slow lane runs [`Job`]s: reruns (one item, or every tagged one) and the audit view's
//!   whole-store `audit verify`. A new job of the same [`JobKind`] cancels the one running
//!   (and any still waiting); a batch rerun stops between items, an audit verify that cannot
//!   stop mid-way has its result dropped.
//!
//! Every read and job carries the generation number the UI gave it, and the UI drops answers
//! whose generation is no longer current. [`handle`] and [`run_job`] are the lanes' bodies;
//! the headless driver calls them directly.

pub mod lanes;

pub use lanes::Lanes;

use crate::review::filter::Filter;
use crate::review::source::{
    AuditView, Dashboard, DecisionRefusal, DecisionRequest, ItemDetail, ItemId, ItemPreview,
    QueuePage, ReasonCode, Receipt, RerunOutcome, ReviewSource, Sort,
};

/// Quick work for the fast lane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    Queue {
        generation: u64,
        filter: Filter,
        sort: Sort,
        offset: usize,
        limit: usize,
    },
    Item {
        generation: u64,
        id: ItemId,
    },
    /// The focused queue row's preview.
    Preview {
        generation: u64,
        id: ItemId,
    },
    /// The queue's counts by reason, for the header.
    Reasons {
        generation: u64,
        filter: Filter,
    },
    /// The dashboard's numbers.
    Dashboard {
        generation: u64,
    },
    ReasonCodes,
    Decide {
        id: ItemId,
        request: DecisionRequest,
    },
    /// Decide several items with their current report (reject all tagged).
    DecideMany {
        ids: Vec<ItemId>,
        request: DecisionRequest,
    },
    Reveal {
        id: ItemId,
        finding_id: String,
        reviewer: String,
    },
}

impl Request {
    /// Reads of the same kind replace each other while waiting.
    fn coalesce_key(&self) -> Option<u8> {
        match self {
            Request::Queue { .. } => Some(0),
            Request::Item { .. } => Some(1),
            Request::ReasonCodes => Some(2),
            Request::Preview { .. } => Some(3),
            Request::Reasons { .. } => Some(4),
            Request::Dashboard { .. } => Some(5),
            _ => None,
        }
    }
}

/// Kinds of slow job; a new job cancels the running job of its kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JobKind {
    Rerun,
    Audit,
}

impl JobKind {
    pub const ALL: [JobKind; 2] = [JobKind::Rerun, JobKind::Audit];

    pub fn index(self) -> usize {
        match self {
            JobKind::Rerun => 0,
            JobKind::Audit => 1,
        }
    }
}

/// Slow work for the slow lane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Job {
    /// Rerun the checks of each item in turn, answering item by item.
    Rerun { generation: u64, ids: Vec<ItemId> },
    /// The item's receipts and a verification of the whole audit log.
    Audit { generation: u64, id: ItemId },
}

impl Job {
    pub fn kind(&self) -> JobKind {
        match self {
            Job::Rerun { .. } => JobKind::Rerun,
            Job::Audit { .. } => JobKind::Audit,
        }
    }
}

/// A lane's answer; errors are rendered strings for display.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WorkerResult {
    Queue {
        generation: u64,
        result: Result<QueuePage, String>,
    },
    Item {
        generation: u64,
        result: Result<ItemDetail, String>,
    },
    Preview {
        generation: u64,
        result: Result<ItemPreview, String>,
    },
    Reasons {
        generation: u64,
        result: Result<Vec<(String, usize)>, String>,
    },
    Dashboard {
        generation: u64,
        result: Result<Dashboard, String>,
    },
    Audit {
        generation: u64,
        result: Result<AuditView, String>,
    },
    ReasonCodes(Result<Vec<ReasonCode>, String>),
    /// One item of a rerun job.
    Rerun {
        generation: u64,
        id: ItemId,
        result: Result<RerunOutcome, String>,
    },
    Decided {
        id: ItemId,
        result: Result<Receipt, DecisionRefusal>,
    },
    DecidedMany {
        results: Vec<(ItemId, Result<Receipt, DecisionRefusal>)>,
    },
    Revealed {
        id: ItemId,
        finding_id: String,
        result: Result<String, String>,
    },
}

fn text(e: anyhow::Error) -> String {
    format!("{e:#}")
}

/// Answers one request against the source (the fast lane's loop body).
pub fn handle(source: &mut dyn ReviewSource, request: Request) -> WorkerResult {
    match request {
        Request::Queue {
            generation,
            filter,
            sort,
            offset,
            limit,
        } => WorkerResult::Queue {
            generation,
            result: source
                .queue_page(&filter, sort, offset, limit)
                .map_err(text),
        },
        Request::Item { generation, id } => WorkerResult::Item {
            generation,
            result: source.item(&id).map_err(text),
        },
        Request::Preview { generation, id } => WorkerResult::Preview {
            generation,
            result: source.preview(&id).map_err(text),
        },
        Request::Reasons { generation, filter } => WorkerResult::Reasons {
            generation,
            result: source.reason_counts(&filter).map_err(text),
        },
        Request::Dashboard { generation } => WorkerResult::Dashboard {
            generation,
            result: source.dashboard().map_err(text),
        },
        Request::ReasonCodes => WorkerResult::ReasonCodes(source.reason_codes().map_err(text)),
        Request::Decide { id, request } => WorkerResult::Decided {
            result: source.decide(&id, &request),
            id,
        },
        Request::DecideMany { ids, request } => {
            let results = ids
                .into_iter()
                .map(|id| {
                    let result = match source.item(&id) {
                        Ok(item) => {
                            let mut r = request.clone();
                            r.report_sha256 = item.report_sha256;
                            source.decide(&id, &r)
                        }
                        Err(e) => Err(DecisionRefusal::Failed(text(e))),
                    };
                    (id, result)
                })
                .collect();
            WorkerResult::DecidedMany { results }
        }
        Request::Reveal {
            id,
            finding_id,
            reviewer,
        } => WorkerResult::Revealed {
            result: source.reveal(&id, &finding_id, &reviewer).map_err(text),
            id,
            finding_id,
        },
    }
}

/// Runs one job against the source (the slow lane's loop body), handing each answer to
/// `send`, which says whether anyone still listens. `cancelled` is asked before each item of a
/// rerun (an item already started finishes: its report is one transaction) and after an audit
/// verify, whose result is then dropped.
pub fn run_job(
    source: &mut dyn ReviewSource,
    job: Job,
    cancelled: &dyn Fn() -> bool,
    send: &mut dyn FnMut(WorkerResult) -> bool,
) {
    match job {
        Job::Rerun { generation, ids } => {
            for id in ids {
                if cancelled() {
                    return;
                }
                let result = source.rerun(&id).map_err(text);
                if !send(WorkerResult::Rerun {
                    generation,
                    id,
                    result,
                }) {
                    return;
                }
            }
        }
        Job::Audit { generation, id } => {
            let result = source.audit_status(&id).map_err(text);
            if !cancelled() {
                send(WorkerResult::Audit { generation, result });
            }
        }
    }
}

/// Keeps only the newest of each coalescing kind, in arrival order otherwise.
pub fn coalesce(pending: Vec<Request>) -> Vec<Request> {
    let mut out: Vec<Request> = Vec::with_capacity(pending.len());
    for request in pending {
        if let Some(key) = request.coalesce_key() {
            out.retain(|r| r.coalesce_key() != Some(key));
        }
        out.push(request);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::review::fake::FakeSource;

    fn queue(generation: u64) -> Request {
        Request::Queue {
            generation,
            filter: Filter::default(),
            sort: Sort::Severity,
            offset: 0,
            limit: 10,
        }
    }

    #[test]
    fn reads_coalesce_newest_wins_and_writes_stay() {
        let reveal = Request::Reveal {
            id: ItemId("q-0001".into()),
            finding_id: "f-1".into(),
            reviewer: "alice".into(),
        };
        let out = coalesce(vec![queue(1), reveal.clone(), queue(2), queue(3)]);
        assert_eq!(out, vec![reveal, queue(3)]);
    }

    #[test]
    fn a_cancelled_rerun_stops_between_items() {
        let mut source = FakeSource::new();
        let ids: Vec<ItemId> = source.items.iter().take(3).map(|i| i.id.clone()).collect();
        let sent = std::cell::Cell::new(0);
        let mut results = Vec::new();
        run_job(
            &mut source,
            Job::Rerun { generation: 1, ids },
            &|| sent.get() >= 1,
            &mut |r| {
                sent.set(sent.get() + 1);
                results.push(r);
                true
            },
        );
        assert_eq!(results.len(), 1);
        assert_eq!(source.reruns.len(), 1, "the rest never ran");
    }

    #[test]
    fn a_cancelled_audit_verify_drops_its_result() {
        let mut source = FakeSource::new();
        let id = source.items[0].id.clone();
        let mut results = Vec::new();
        let job = Job::Audit { generation: 1, id };
        run_job(&mut source, job.clone(), &|| true, &mut |r| {
            results.push(r);
            true
        });
        assert!(results.is_empty());
        run_job(&mut source, job, &|| false, &mut |r| {
            results.push(r);
            true
        });
        assert_eq!(results.len(), 1);
    }
}
