//! The live queue's feed, on both backends: a watch on a store learns within a second that
//! another connection (another host, another reviewer) recorded a compaction or decided one,
//! and stays quiet while nothing changes.

#![allow(clippy::unwrap_used)]

#[path = "store_fixtures/fixtures.rs"]
mod fixtures;

use std::time::{Duration, Instant};

use cq::store::{Action, DecisionRequest};
use fixtures::*;

both! {
fn a_watch_hears_other_writers_within_a_second(s: TestStore) {
    let reviewer = s.open();
    let team = team(&reviewer);
    let mut watch = reviewer.watch().unwrap();
    assert!(!watch.wait(Duration::from_millis(300)).unwrap(), "nothing changed yet");
    let agent = s.open();
    let writer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        agent.record_verdict(&compaction(1)).unwrap();
        agent
    });
    let started = Instant::now();
    assert!(watch.wait(Duration::from_secs(5)).unwrap(), "no change heard");
    let heard = started.elapsed();
    let agent = writer.join().unwrap();
    assert!(heard < Duration::from_millis(1_200), "heard after {heard:?}");
    assert!(reviewer.compaction("c-000001").unwrap().is_some());
    // Another reviewer's decision is heard too.
    let seen = agent.compaction("c-000001").unwrap().unwrap().summary.report_sha256;
    let req = DecisionRequest {
        compaction_id: "c-000001".into(),
        action: Action::Reject,
        reason: REASONS[2].into(),
        note: "from another laptop".into(),
        seen_report_sha256: seen,
    };
    agent.decide(&req, &team.carol, &rules()).unwrap();
    assert!(watch.wait(Duration::from_secs(1)).unwrap(), "the decision was not heard");
    assert!(!watch.wait(Duration::from_millis(300)).unwrap(), "heard a change twice");
}
}
