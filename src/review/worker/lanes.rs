//! The two worker threads, and what quitting does to them.
//!
//! [`Lanes::spawn`] forks the data source ([`ReviewSource::fork`]) so each lane owns a handle
//! of its own, and both answer into the loop's one event channel. The slow lane keeps one
//! cancel flag per [`JobKind`]: submitting a job raises the flag of the previous job of its
//! kind, so the running one stops at its next check and a superseded one still waiting is
//! skipped. Dropping [`Lanes`] (quitting) raises every flag and a stop flag each lane checks
//! before any further work, and joins neither thread: a lane in the middle of a slow query or
//! an audit verify is detached, finishes that one call at most, writes nothing more and sends
//! into a channel nobody reads. A lane that panics reports [`Event::Stopped`].

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::Arc;

use anyhow::Context as _;

use super::{coalesce, handle, run_job, Job, JobKind, Request};
use crate::review::event::Event;
use crate::review::source::ReviewSource;

type Flag = Arc<AtomicBool>;

fn raise(flag: &AtomicBool) {
    flag.store(true, Ordering::Release);
}

fn raised(flag: &AtomicBool) -> bool {
    flag.load(Ordering::Acquire)
}

/// The running fast and slow lanes.
pub struct Lanes {
    requests: Option<Sender<Request>>,
    jobs: Option<Sender<(Job, Flag)>>,
    /// The cancel flag of the newest job of each kind, by [`JobKind::index`].
    latest: [Option<Flag>; 2],
    stop: Flag,
}

impl std::fmt::Debug for Lanes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lanes")
            .field("stopped", &raised(&self.stop))
            .finish_non_exhaustive()
    }
}

/// Tells the loop when a lane's thread unwinds, so it does not wait for answers forever.
struct Sentinel {
    lane: &'static str,
    events: Sender<Event>,
}

impl Drop for Sentinel {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let _ = self.events.send(Event::Stopped(format!(
                "the {} worker lane stopped: its data source panicked; restart `cq review`",
                self.lane
            )));
        }
    }
}

impl Lanes {
    /// Starts both lanes on `source` and a fork of it; they answer on `events`.
    pub fn spawn(source: Box<dyn ReviewSource>, events: Sender<Event>) -> anyhow::Result<Lanes> {
        let slow_source = source
            .fork()
            .context("while opening the data source for the slow worker lane")?;
        let stop: Flag = Arc::default();
        let (requests, request_rx) = std::sync::mpsc::channel();
        let (jobs, job_rx) = std::sync::mpsc::channel();
        {
            let (stop, events) = (stop.clone(), events.clone());
            let mut source = source;
            std::thread::Builder::new()
                .name("cq-review-fast".into())
                .spawn(move || {
                    let _sentinel = Sentinel {
                        lane: "fast",
                        events: events.clone(),
                    };
                    fast_lane(source.as_mut(), &request_rx, &stop, &events);
                })
                .context("while starting the fast worker lane")?;
        }
        {
            let stop = stop.clone();
            let mut source = slow_source;
            std::thread::Builder::new()
                .name("cq-review-slow".into())
                .spawn(move || {
                    let _sentinel = Sentinel {
                        lane: "slow",
                        events: events.clone(),
                    };
                    slow_lane(source.as_mut(), &job_rx, &stop, &events);
                })
                .context("while starting the slow worker lane")?;
        }
        Ok(Lanes {
            requests: Some(requests),
            jobs: Some(jobs),
            latest: [None, None],
            stop,
        })
    }

    /// Queues a request on the fast lane (ignored once the lane has stopped).
    pub fn request(&self, request: Request) {
        if let Some(tx) = &self.requests {
            let _ = tx.send(request);
        }
    }

    /// Queues a job on the slow lane, cancelling the previous job of its kind.
    pub fn submit(&mut self, job: Job) {
        let flag: Flag = Arc::default();
        if let Some(old) = self
            .latest
            .get_mut(job.kind().index())
            .and_then(|slot| slot.replace(flag.clone()))
        {
            raise(&old);
        }
        if let Some(tx) = &self.jobs {
            let _ = tx.send((job, flag));
        }
    }

    /// Cancels the running (or waiting) job of `kind`, if any.
    pub fn cancel(&mut self, kind: JobKind) {
        if let Some(flag) = self.latest.get_mut(kind.index()).and_then(Option::take) {
            raise(&flag);
        }
    }
}

impl Drop for Lanes {
    fn drop(&mut self) {
        raise(&self.stop);
        for kind in JobKind::ALL {
            self.cancel(kind);
        }
        self.requests = None;
        self.jobs = None;
    }
}

fn fast_lane(
    source: &mut dyn ReviewSource,
    requests: &Receiver<Request>,
    stop: &AtomicBool,
    events: &Sender<Event>,
) {
    while let Ok(first) = requests.recv() {
        let mut pending = vec![first];
        pending.extend(requests.try_iter());
        for request in coalesce(pending) {
            if raised(stop) {
                return;
            }
            let result = handle(source, request);
            if events.send(Event::Worker(Box::new(result))).is_err() {
                return;
            }
        }
    }
}

fn slow_lane(
    source: &mut dyn ReviewSource,
    jobs: &Receiver<(Job, Flag)>,
    stop: &AtomicBool,
    events: &Sender<Event>,
) {
    while let Ok((job, cancel)) = jobs.recv() {
        let cancelled = || raised(stop) || raised(&cancel);
        if cancelled() {
            continue;
        }
        run_job(source, job, &cancelled, &mut |result| {
            events.send(Event::Worker(Box::new(result))).is_ok()
        });
    }
}
