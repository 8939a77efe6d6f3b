//! The worker thread: the only code that talks to the data source.
//!
//! The worker owns its own [`ReviewSource`] handle (its own SQLite connection in
//! production), so slow work (rerunning checks, loading a large item) never blocks drawing.
//! Requests that only *read* coalesce newest-wins: when several queue loads (or item loads,
//! or audit loads) are waiting, only the last runs. Every read carries the generation number
//! the UI gave it and the UI drops results whose generation is no longer current. Writes
//! (decisions, reveals, reruns) never coalesce and never get dropped.

use std::sync::mpsc::{Receiver, Sender};
use std::thread::JoinHandle;

use crate::review::filter::Filter;
use crate::review::source::{
    AuditView, DecisionRefusal, DecisionRequest, ItemDetail, ItemId, QueuePage, ReasonCode,
    Receipt, RerunOutcome, ReviewSource, Sort,
};

/// Work for the worker.
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
    Audit {
        generation: u64,
        id: ItemId,
    },
    ReasonCodes,
    Rerun {
        generation: u64,
        id: ItemId,
    },
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
            Request::Audit { .. } => Some(2),
            Request::ReasonCodes => Some(3),
            _ => None,
        }
    }
}

/// The worker's answer to a [`Request`]; errors are rendered strings for display.
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
    Audit {
        generation: u64,
        result: Result<AuditView, String>,
    },
    ReasonCodes(Result<Vec<ReasonCode>, String>),
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

/// Runs one request against the source (the worker's loop body; tests call it directly).
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
        Request::Audit { generation, id } => WorkerResult::Audit {
            generation,
            result: source.audit_status(&id).map_err(text),
        },
        Request::ReasonCodes => WorkerResult::ReasonCodes(source.reason_codes().map_err(text)),
        Request::Rerun { generation, id } => WorkerResult::Rerun {
            generation,
            result: source.rerun(&id).map_err(text),
            id,
        },
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

/// A running worker thread.
pub struct Worker {
    requests: Option<Sender<Request>>,
    thread: Option<JoinHandle<()>>,
}

impl Worker {
    /// Starts the worker; it answers on `results` until the [`Worker`] is dropped.
    pub fn spawn(
        mut source: Box<dyn ReviewSource>,
        results: Sender<WorkerResult>,
    ) -> anyhow::Result<Worker> {
        let (tx, rx) = std::sync::mpsc::channel::<Request>();
        let thread = std::thread::Builder::new()
            .name("cq-review-worker".into())
            .spawn(move || run(source.as_mut(), &rx, &results))?;
        Ok(Worker {
            requests: Some(tx),
            thread: Some(thread),
        })
    }

    /// Queues a request (ignored if the worker has stopped).
    pub fn send(&self, request: Request) {
        if let Some(tx) = &self.requests {
            let _ = tx.send(request);
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.requests = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn run(source: &mut dyn ReviewSource, rx: &Receiver<Request>, results: &Sender<WorkerResult>) {
    while let Ok(first) = rx.recv() {
        let mut pending = vec![first];
        pending.extend(rx.try_iter());
        for request in coalesce(pending) {
            if results.send(handle(source, request)).is_err() {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::review::fake::FakeSource;

    fn queue(generation: u64) -> Request {
        Request::Queue {
            generation,
            filter: Filter::default(),
            sort: Sort::Age,
            offset: 0,
            limit: 10,
        }
    }

    #[test]
    fn reads_coalesce_newest_wins_and_writes_stay() {
        let rerun = Request::Rerun {
            generation: 1,
            id: ItemId("q-0001".into()),
        };
        let out = coalesce(vec![queue(1), rerun.clone(), queue(2), queue(3)]);
        assert_eq!(out, vec![rerun, queue(3)]);
    }

    #[test]
    fn worker_thread_answers_with_generation() {
        let (tx, rx) = std::sync::mpsc::channel();
        let worker = Worker::spawn(Box::new(FakeSource::new()), tx).unwrap();
        worker.send(queue(7));
        match rx.recv().unwrap() {
            WorkerResult::Queue { generation, result } => {
                assert_eq!(generation, 7);
                assert_eq!(result.unwrap().total, 20);
            }
            other => panic!("unexpected {other:?}"),
        }
    }
}
