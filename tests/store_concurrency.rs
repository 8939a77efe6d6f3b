//! The race: 8 processes, each an approver, make 200 decisions each on the same 100 items at
//! the same time (every item twice, in an order of their own; half the items need two
//! approvers). Every item is decided exactly once, the only refusals are "already decided"
//! and "you already approved", the audit log is one gap-free sequence, verify passes, and the
//! Merkle root recomputed from the receipts' bytes is the one the last checkpoint signs. On
//! both backends: SQLite's file lock, PostgreSQL's advisory lock; and on PostgreSQL once more
//! with the alternative the store bench measures, `SERIALIZABLE` transactions retried when
//! they lose a race ([`Appends::Serializable`]).
//!
//! The processes are this test binary re-run with `CQ_STORE_RACE_CHILD` set.

#![allow(clippy::unwrap_used)]

#[path = "store_fixtures/fixtures.rs"]
mod fixtures;

use std::path::Path;
use std::process::{Command, Stdio};

use cq::audit::NamedKey;
use cq::store::{
    Action, Appends, DecisionError, DecisionOutcome, DecisionRequest, ListFilter, Mode,
    OpenOptions, Role, Status, Store,
};
use fixtures::*;

const CHILD_ENV: &str = "CQ_STORE_RACE_CHILD";
const PROCESSES: usize = 8;
const ITEMS: usize = 100;
const DECISIONS: usize = 200;

fn item(i: usize) -> cq::store::NewCompaction {
    if i % 2 == 0 {
        quarantined(i, "QUARANTINED", "INSUFFICIENT_DATA/UNKNOWN")
    } else {
        quarantined(i, "QUARANTINED", "FAIL/FINDING")
    }
}

/// What one child saw: decided, approved, already decided, already approved by itself.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Tally([usize; 4]);

#[test]
fn race_child() {
    let Ok(spec) = std::env::var(CHILD_ENV) else {
        return;
    };
    let parts: Vec<&str> = spec.splitn(5, '|').collect();
    let (dir, n, signing, appends, location) =
        (Path::new(parts[0]), parts[1], parts[2], parts[3], parts[4]);
    let n: usize = n.parse().unwrap();
    let options = OpenOptions {
        mode: Mode::ReadWrite,
        store_key: None,
    };
    let mut store =
        Store::open_with_signing_key(Path::new(location), &options, Some(Path::new(signing)))
            .unwrap();
    if appends == "serializable" {
        store.set_appends(Appends::Serializable);
    }
    let key = NamedKey::load(&dir.join(format!("r{n}.key"))).unwrap();
    let mut tally = Tally::default();
    // Every item twice, starting at a different item per process, some walking backwards.
    let order: Vec<usize> = (0..DECISIONS)
        .map(|k| {
            let i = (k + n * 37) % ITEMS;
            if n % 2 == 0 {
                i
            } else {
                ITEMS - 1 - i
            }
        })
        .collect();
    for i in order {
        let req = DecisionRequest {
            compaction_id: item(i).compaction_id,
            action: if n % 3 == 2 && i % 2 == 0 {
                Action::Reject
            } else {
                Action::Release
            },
            reason: REASONS[0].into(),
            note: format!("r{n} decides"),
            seen_report_sha256: item(i).report.report_sha256,
        };
        let slot = match store.decide(&req, &key, &rules()) {
            Ok(DecisionOutcome::Decided { .. }) => 0,
            Ok(DecisionOutcome::Approved { .. }) => 1,
            Err(DecisionError::AlreadyDecided { .. }) => 2,
            Err(DecisionError::SelfApproval { .. }) => 3,
            Err(e) => panic!("unexpected error: {e}"),
        };
        tally.0[slot] += 1;
    }
    let [a, b, c, d] = tally.0;
    println!("RESULT {a} {b} {c} {d} {}", store.retries());
}

both! {
fn eight_processes_deciding_the_same_items_decide_each_once(s: TestStore) {
    race(&s, "lock");
}
}

#[test]
fn eight_processes_deciding_under_serializable_retries_decide_each_once() {
    if let Some(s) = TestStore::postgres("serializable race") {
        race(&s, "serializable");
    }
}

/// The race on `s`, its writers serializing as `appends` says ("lock" or "serializable").
fn race(s: &TestStore, appends: &str) {
    if std::env::var_os(CHILD_ENV).is_some() {
        return;
    }
    {
        let store = s.open();
        let mut first: Option<NamedKey> = None;
        for n in 0..PROCESSES {
            let key = NamedKey::generate(&format!("r{n}")).unwrap();
            store
                .add_reviewer(
                    &format!("r{n}"),
                    &key.verifier_text(),
                    Role::Approver,
                    first.as_ref(),
                )
                .unwrap();
            key.save_new(&s.dir.path().join(format!("r{n}.key")))
                .unwrap();
            first.get_or_insert(key);
        }
        let items: Vec<_> = (0..ITEMS).map(item).collect();
        store.record_batch(&items).unwrap();
    }
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..PROCESSES)
        .map(|n| {
            let spec = format!(
                "{}|{n}|{}|{appends}|{}",
                s.dir.path().display(),
                s.key_path().display(),
                s.location.display()
            );
            Command::new(&exe)
                .args(["race_child", "--exact", "--nocapture", "--test-threads=1"])
                .env(CHILD_ENV, spec)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut total = Tally::default();
    let mut retries = 0;
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
        let counts: Vec<usize> = line.split(' ').map(|n| n.parse().unwrap()).collect();
        for (slot, n) in counts.iter().take(4).enumerate() {
            total.0[slot] += n;
        }
        retries += counts[4];
    }
    let [decided, approved, already, own] = total.0;
    eprintln!("{:?} ({appends}): {decided} decided, {approved} approvals, {already} already decided, {own} own approvals refused, {retries} retries", s.kind);
    assert_eq!(decided, ITEMS, "every item decided exactly once");
    assert_eq!(
        approved,
        ITEMS / 2,
        "one first approval per two-person item"
    );
    assert_eq!(decided + approved + already + own, PROCESSES * DECISIONS);
    let store = s.open();
    let decided_rows = [Status::Released, Status::Rejected].map(|st| {
        store
            .count(&ListFilter {
                status: Some(st),
                ..ListFilter::default()
            })
            .unwrap()
    });
    assert_eq!(decided_rows[0] + decided_rows[1], ITEMS as u64);
    for i in 0..ITEMS {
        let c = store.compaction(&item(i).compaction_id).unwrap().unwrap();
        assert!(c.decision.is_some());
        let kinds: Vec<String> = store
            .receipts_for(&c.summary.id)
            .unwrap()
            .into_iter()
            .map(|r| r.kind)
            .collect();
        let decisions = kinds.iter().filter(|k| *k == "decision").count();
        assert_eq!(decisions, 1, "{}: {kinds:?}", c.summary.id);
    }
    assert_log_linear(&store);
}
