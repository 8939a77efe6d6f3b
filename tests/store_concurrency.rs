//! Two processes make 100 decisions each on the same 100 items at the same time: every item
//! is decided exactly once, and the only error either process sees is "already decided".
//!
//! The processes are this test binary re-run with `CQ_STORE_RACE_CHILD` set.

#![allow(clippy::unwrap_used)]

#[path = "store_fixtures/fixtures.rs"]
mod fixtures;

use std::path::Path;
use std::process::Command;

use cq::audit::{verify, NamedKey};
use cq::store::{Action, DecisionError, DecisionRequest, ListFilter, Role, Status};
use fixtures::*;

const CHILD_ENV: &str = "CQ_STORE_RACE_CHILD";
const ITEMS: usize = 100;

fn item(i: usize) -> cq::store::NewCompaction {
    quarantined(i, "QUARANTINED", "INSUFFICIENT_DATA/UNKNOWN")
}

#[test]
fn race_child() {
    let Ok(spec) = std::env::var(CHILD_ENV) else {
        return;
    };
    let (dir, name) = spec.split_once('|').unwrap();
    let dir = Path::new(dir);
    let store = open(&dir.join("s.db"));
    let key = NamedKey::load(&dir.join(format!("{name}.key"))).unwrap();
    let action = if name == "erin" {
        Action::Release
    } else {
        Action::Reject
    };
    let (mut won, mut lost) = (0, 0);
    for i in 0..ITEMS {
        let req = DecisionRequest {
            compaction_id: item(i).compaction_id,
            action,
            reason: REASONS[0].into(),
            note: format!("{name} decides"),
            seen_report_sha256: item(i).report.report_sha256,
        };
        match store.decide(&req, &key, &rules()) {
            Ok(_) => won += 1,
            Err(DecisionError::AlreadyDecided { .. }) => lost += 1,
            Err(e) => panic!("unexpected error: {e}"),
        }
    }
    println!("RESULT {won} {lost}");
}

#[test]
fn two_processes_deciding_the_same_items_decide_each_once() {
    if std::env::var_os(CHILD_ENV).is_some() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    {
        let store = open(&path);
        for name in ["erin", "frank"] {
            let key = NamedKey::generate(name).unwrap();
            store
                .add_reviewer(name, &key.verifier_text(), Role::Reviewer, None)
                .unwrap();
            key.save_new(&dir.path().join(format!("{name}.key")))
                .unwrap();
        }
        let items: Vec<_> = (0..ITEMS).map(item).collect();
        store.record_batch(&items).unwrap();
    }
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = ["erin", "frank"]
        .iter()
        .map(|name| {
            Command::new(&exe)
                .args(["race_child", "--exact", "--nocapture", "--test-threads=1"])
                .env(CHILD_ENV, format!("{}|{name}", dir.path().display()))
                .output_spawn()
        })
        .collect();
    let mut won = 0;
    let mut lost = 0;
    for child in children {
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "child failed: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // libtest may print "test race_child ... " on the same line.
        let line = stdout
            .lines()
            .find_map(|l| l.split("RESULT ").nth(1))
            .unwrap();
        let (w, l) = line.split_once(' ').unwrap();
        won += w.parse::<usize>().unwrap();
        lost += l.parse::<usize>().unwrap();
    }
    assert_eq!((won, lost), (ITEMS, ITEMS));
    let store = open(&path);
    let decided = [Status::Released, Status::Rejected].map(|s| {
        store
            .count(&ListFilter {
                status: Some(s),
                ..ListFilter::default()
            })
            .unwrap()
    });
    assert_eq!(decided[0] + decided[1], ITEMS as u64);
    for i in 0..ITEMS {
        let c = store.compaction(&item(i).compaction_id).unwrap().unwrap();
        assert!(c.decision.is_some());
        assert_eq!(
            store.receipts_for(&c.summary.id).unwrap().len(),
            2,
            "verdict + one decision"
        );
    }
    let report = verify(&store, None).unwrap();
    assert!(report.is_ok(), "{report}");
}

trait SpawnPiped {
    fn output_spawn(&mut self) -> std::process::Child;
}

impl SpawnPiped for Command {
    fn output_spawn(&mut self) -> std::process::Child {
        use std::process::Stdio;
        self.stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }
}
