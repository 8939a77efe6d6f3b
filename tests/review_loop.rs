//! The reviewer's loop and worker lanes with real threads: a slow job (rerun, audit verify)
//! holds the slow lane while the fast lane still pages the queue and loads items; cancelling
//! a job stops a batch between items and drops an audit result; quitting returns while a slow
//! job is stuck; and nothing is drawn without a change of state. The slow calls of the source
//! used here wait for permits the test hands out, so every interleaving is chosen, not timed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use cq::review::app::AppOptions;
use cq::review::event::Event;
use cq::review::fake::{FakeSource, FAKE_NOW};
use cq::review::filter::Filter;
use cq::review::headless::live::Live;
use cq::review::source::{
    AuditView, Dashboard, DecisionRefusal, DecisionRequest, ItemDetail, ItemId, ItemPreview,
    QueuePage, ReasonCode, Receipt, RerunOutcome, ReviewSource, Sort,
};
use cq::review::worker::{Job, JobKind, Lanes, Request, WorkerResult};
use crossterm::event::{KeyCode, KeyModifiers, MouseEvent, MouseEventKind};

/// Long enough for any answer on a loaded machine; only reached when something is wrong.
const PATIENCE: Duration = Duration::from_secs(10);
/// How long to watch for something that must not happen.
const QUIET: Duration = Duration::from_millis(300);

/// Permits for the slow calls, and what they did.
#[derive(Default)]
struct Gate {
    state: Mutex<GateState>,
    changed: Condvar,
}

#[derive(Default)]
struct GateState {
    permits: usize,
    started: Vec<String>,
    finished: Vec<String>,
}

impl Gate {
    fn allow(&self, n: usize) {
        self.state.lock().unwrap().permits += n;
        self.changed.notify_all();
    }

    /// Marks `what` started, waits for a permit, runs `f`, marks it finished.
    fn pass<T>(&self, what: String, f: impl FnOnce() -> T) -> T {
        let mut state = self.state.lock().unwrap();
        state.started.push(what.clone());
        self.changed.notify_all();
        while state.permits == 0 {
            state = self.changed.wait(state).unwrap();
        }
        state.permits -= 1;
        drop(state);
        let out = f();
        self.state.lock().unwrap().finished.push(what);
        self.changed.notify_all();
        out
    }

    /// Waits until `ok` holds of the state.
    fn until(&self, ok: impl Fn(&GateState) -> bool) {
        let deadline = Instant::now() + PATIENCE;
        let mut state = self.state.lock().unwrap();
        while !ok(&state) {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(!left.is_zero(), "timed out waiting on the slow calls");
            state = self.changed.wait_timeout(state, left).unwrap().0;
        }
    }

    fn started(&self) -> Vec<String> {
        self.state.lock().unwrap().started.clone()
    }

    fn finished(&self) -> Vec<String> {
        self.state.lock().unwrap().finished.clone()
    }
}

/// The fake source whose reruns and audit verifications wait at the gate.
#[derive(Clone)]
struct Gated {
    inner: FakeSource,
    gate: Arc<Gate>,
}

fn gated() -> (Gated, Arc<Gate>) {
    let gate = Arc::new(Gate::default());
    let source = Gated {
        inner: FakeSource::new(),
        gate: gate.clone(),
    };
    (source, gate)
}

impl ReviewSource for Gated {
    fn queue_page(
        &mut self,
        filter: &Filter,
        sort: Sort,
        offset: usize,
        limit: usize,
    ) -> anyhow::Result<QueuePage> {
        self.inner.queue_page(filter, sort, offset, limit)
    }
    fn item(&mut self, id: &ItemId) -> anyhow::Result<ItemDetail> {
        self.inner.item(id)
    }
    fn preview(&mut self, id: &ItemId) -> anyhow::Result<ItemPreview> {
        self.inner.preview(id)
    }
    fn reason_counts(&mut self, filter: &Filter) -> anyhow::Result<Vec<(String, usize)>> {
        self.inner.reason_counts(filter)
    }
    fn dashboard(&mut self) -> anyhow::Result<Dashboard> {
        self.inner.dashboard()
    }
    fn rerun(&mut self, id: &ItemId) -> anyhow::Result<RerunOutcome> {
        let inner = &mut self.inner;
        self.gate.pass(format!("rerun {id}"), || inner.rerun(id))
    }
    fn decide(&mut self, id: &ItemId, r: &DecisionRequest) -> Result<Receipt, DecisionRefusal> {
        self.inner.decide(id, r)
    }
    fn reveal(&mut self, id: &ItemId, finding: &str, reviewer: &str) -> anyhow::Result<String> {
        self.inner.reveal(id, finding, reviewer)
    }
    fn audit_status(&mut self, id: &ItemId) -> anyhow::Result<AuditView> {
        let inner = &mut self.inner;
        self.gate
            .pass(format!("audit {id}"), || inner.audit_status(id))
    }
    fn reason_codes(&mut self) -> anyhow::Result<Vec<ReasonCode>> {
        self.inner.reason_codes()
    }
    fn fork(&self) -> anyhow::Result<Box<dyn ReviewSource>> {
        Ok(Box::new(self.clone()))
    }
}

fn options() -> AppOptions {
    AppOptions {
        readonly: false,
        reviewer: "alice".into(),
        now_unix: FAKE_NOW,
        page_size: 200,
    }
}

fn live(source: Gated) -> Live {
    let live = Live::spawn(Box::new(source), options(), 140, 30).unwrap();
    // Settled: the first page, its reason counts and the first row's preview are drawn.
    live.wait_for(PATIENCE, |s| {
        s.contains("Queue 1 of 20") && s.contains("── summary") && !s.contains("loading")
    })
    .expect("the queue");
    live
}

/// Whether an item is drawn: the detail screen's checks pane or the constraints screen's
/// list counts what is not passing.
fn item_shown(s: &str) -> bool {
    s.contains("not passing)") || s.contains(" rows · ")
}

fn id(n: usize) -> ItemId {
    ItemId(format!("q-{n:04}"))
}

/// Answers from the lanes within `window`.
fn answers(events: &Receiver<Event>, window: Duration) -> Vec<WorkerResult> {
    let deadline = Instant::now() + window;
    let mut out = Vec::new();
    while let Ok(event) = events.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        if let Event::Worker(result) = event {
            out.push(*result);
        }
    }
    out
}

#[test]
fn a_running_audit_verify_does_not_block_a_queue_page_or_an_item_load() {
    let (source, gate) = gated();
    let ui = live(source);
    ui.key(KeyCode::Enter);
    ui.wait_for(PATIENCE, item_shown).expect("the item");
    ui.key(KeyCode::Char('A'));
    ui.wait_for(PATIENCE, |s| s.contains("verifying the audit log"))
        .expect("the audit screen");
    gate.until(|g| g.started.len() == 1);
    // The verification holds the slow lane; leaving it, paging and opening the next item
    // are answered by the fast lane meanwhile.
    ui.key(KeyCode::Esc);
    ui.key(KeyCode::Esc);
    ui.key(KeyCode::Down);
    ui.wait_for(PATIENCE, |s| s.contains("Queue 2 of 20"))
        .expect("the queue page");
    ui.key(KeyCode::Enter);
    // The pane titles count what is not passing once the item is there.
    ui.wait_for(PATIENCE, item_shown)
        .expect("the second item, while the verification still runs");
    assert!(
        gate.finished().is_empty(),
        "the verification was still running"
    );
    gate.allow(1);
}

#[test]
fn a_rerun_of_tagged_items_does_not_block_paging() {
    let (source, gate) = gated();
    let ui = live(source);
    for _ in 0..3 {
        ui.key(KeyCode::Char(' '));
    }
    ui.key(KeyCode::Char('R'));
    ui.wait_for(PATIENCE, |s| s.contains("rerunning 3"))
        .expect("the job running");
    gate.until(|g| g.started.len() == 1);
    ui.key(KeyCode::End);
    ui.wait_for(PATIENCE, |s| {
        s.contains("rerunning 3") && s.contains("Queue 20 of 20")
    })
    .expect("a page while the job runs");
    ui.key(KeyCode::Enter);
    ui.wait_for(PATIENCE, |s| s.contains("rerunning 3") && item_shown(s))
        .expect("an item while the job runs");
    gate.allow(3);
    ui.wait_for(PATIENCE, |s| !s.contains("rerunning"))
        .expect("the job done");
    assert_eq!(gate.finished().len(), 3);
}

#[test]
fn quitting_returns_while_a_slow_job_runs() {
    let (source, gate) = gated();
    let ui = live(source);
    ui.key(KeyCode::Enter);
    ui.key(KeyCode::Char('r'));
    ui.wait_for(PATIENCE, |s| s.contains("rerunning checks"))
        .expect("the rerun running");
    gate.until(|g| g.started.len() == 1);
    let pressed = ui.key(KeyCode::Char('q'));
    let result = ui.finished(PATIENCE).expect("the loop returned");
    assert!(result.is_ok(), "{result:?}");
    assert!(pressed.elapsed() < PATIENCE);
    assert!(gate.finished().is_empty(), "the rerun was still stuck");
    gate.allow(1);
}

#[test]
fn no_frame_is_drawn_without_a_change_of_state() {
    let (source, _gate) = gated();
    let ui = live(source);
    // Settled: nothing is awaited, so nothing ticks.
    assert!(ui.frames_within(QUIET).is_empty());
    // A key nothing is bound to, a move up at the top, a wheel-less mouse event, a stale
    // answer: none changes the state.
    ui.key(KeyCode::F(12));
    ui.key(KeyCode::Up);
    ui.send(Event::Mouse(MouseEvent {
        kind: MouseEventKind::Moved,
        column: 3,
        row: 4,
        modifiers: KeyModifiers::NONE,
    }));
    ui.send(Event::Worker(Box::new(WorkerResult::Item {
        generation: 999,
        result: Ok(FakeSource::new().items[3].clone()),
    })));
    assert!(ui.frames_within(QUIET).is_empty());
    ui.key(KeyCode::Down);
    let frames = ui.frames_within(QUIET);
    assert_eq!(
        frames.len(),
        2,
        "one key, one frame, then one with its preview"
    );
    assert!(frames[0].text.contains("Queue 2 of 20"));
    assert!(frames[0].text.contains("loading the preview"));
    assert!(!frames[1].text.contains("loading the preview"));
    // A resize always draws, even to the same size.
    ui.send(Event::Resize(140, 30));
    assert_eq!(ui.frames_within(QUIET).len(), 1);
}

#[test]
fn cancelling_an_audit_verify_drops_its_result() {
    let (source, gate) = gated();
    let (tx, events) = mpsc::channel();
    let mut lanes = Lanes::spawn(Box::new(source), tx).unwrap();
    lanes.submit(Job::Audit {
        generation: 1,
        id: id(1),
    });
    gate.until(|g| g.started.len() == 1);
    lanes.cancel(JobKind::Audit);
    gate.allow(1);
    gate.until(|g| g.finished.len() == 1);
    assert!(answers(&events, QUIET).is_empty(), "the result was dropped");
    // Uncancelled, the next one answers.
    lanes.submit(Job::Audit {
        generation: 2,
        id: id(1),
    });
    gate.allow(1);
    let got = answers(&events, QUIET);
    assert!(
        matches!(got[..], [WorkerResult::Audit { generation: 2, .. }]),
        "{got:?}"
    );
}

#[test]
fn cancelling_a_batch_rerun_stops_it_between_items() {
    let (source, gate) = gated();
    let (tx, events) = mpsc::channel();
    let mut lanes = Lanes::spawn(Box::new(source), tx).unwrap();
    let ids: Vec<ItemId> = (1..=5).map(id).collect();
    lanes.submit(Job::Rerun { generation: 1, ids });
    gate.allow(1);
    // The first item is done and the second has started when the job is cancelled.
    gate.until(|g| g.finished.len() == 1 && g.started.len() == 2);
    lanes.cancel(JobKind::Rerun);
    gate.allow(10);
    let got = answers(&events, QUIET);
    assert_eq!(
        got.len(),
        2,
        "the item under way finishes, no other starts: {got:?}"
    );
    assert_eq!(gate.started(), ["rerun q-0001", "rerun q-0002"]);
}

#[test]
fn a_new_rerun_job_cancels_the_running_one() {
    let (source, gate) = gated();
    let (tx, events) = mpsc::channel();
    let mut lanes = Lanes::spawn(Box::new(source), tx).unwrap();
    lanes.submit(Job::Rerun {
        generation: 1,
        ids: (1..=3).map(id).collect(),
    });
    gate.until(|g| g.started.len() == 1);
    lanes.submit(Job::Rerun {
        generation: 2,
        ids: vec![id(7)],
    });
    gate.allow(10);
    let got: Vec<(u64, String)> = answers(&events, QUIET)
        .into_iter()
        .map(|r| match r {
            WorkerResult::Rerun { generation, id, .. } => (generation, id.0),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(got, [(1, "q-0001".into()), (2, "q-0007".into())]);
}

#[test]
fn dropping_the_lanes_does_not_wait_and_stops_queued_work() {
    let (source, gate) = gated();
    let (tx, events) = mpsc::channel();
    let mut lanes = Lanes::spawn(Box::new(source), tx).unwrap();
    lanes.submit(Job::Rerun {
        generation: 1,
        ids: (1..=3).map(id).collect(),
    });
    gate.until(|g| g.started.len() == 1);
    let t = Instant::now();
    drop(lanes);
    assert!(t.elapsed() < Duration::from_secs(1), "quitting waited");
    gate.allow(10);
    gate.until(|g| g.finished.len() == 1);
    std::thread::sleep(QUIET);
    assert_eq!(
        gate.started().len(),
        1,
        "nothing ran after the lanes were dropped"
    );
    drop(events);
}

#[test]
fn the_fast_lane_answers_while_the_slow_lane_is_stuck() {
    let (source, gate) = gated();
    let (tx, events) = mpsc::channel();
    let mut lanes = Lanes::spawn(Box::new(source), tx).unwrap();
    lanes.submit(Job::Audit {
        generation: 1,
        id: id(1),
    });
    gate.until(|g| g.started.len() == 1);
    lanes.request(Request::Item {
        generation: 2,
        id: id(2),
    });
    let got = answers(&events, QUIET);
    assert!(
        matches!(
            &got[..],
            [WorkerResult::Item {
                generation: 2,
                result: Ok(_)
            }]
        ),
        "{got:?}"
    );
    gate.allow(1);
}
