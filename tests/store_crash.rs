//! A child process making decisions is killed with SIGKILL at random moments, 200 times.
//! Afterwards the store opens, `audit::verify` passes (every decision, approval and status
//! agrees with its receipt), and work resumed after each kill. On both backends (on
//! PostgreSQL the server rolls back the killed connection's transaction, or may still commit
//! one whose statements it had already been sent, after the process is gone: the store is
//! verified in one read transaction, which sees such a transaction whole or not at all).
//!
//! The child is this test binary itself, re-run with `CQ_STORE_CRASH_CHILD` set so that only
//! `crash_child` does anything. The random seed (kill timing, the child's choices) is printed;
//! `CQ_CRASH_SEED=N` replays a run with it (the kill moments still depend on the machine).

#![allow(clippy::unwrap_used)]

#[path = "store_fixtures/fixtures.rs"]
mod fixtures;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cq::audit::NamedKey;
use cq::store::{
    Action, DecisionError, DecisionRequest, ListFilter, Mode, OpenOptions, SortKey, Status, Store,
};
use fixtures::*;

const CHILD_ENV: &str = "CQ_STORE_CRASH_CHILD";
/// Replays a run: the seed the failing run printed.
const SEED_ENV: &str = "CQ_CRASH_SEED";
/// The seed the parent hands each child.
const CHILD_SEED_ENV: &str = "CQ_CRASH_CHILD_SEED";
const ROUNDS: usize = 200;

/// xorshift64*: enough randomness for kill timing without a dependency.
struct Rng(u64);

impl Rng {
    /// The seed in `var`, else one from the clock.
    fn seed(var: &str) -> u64 {
        if let Some(seed) = std::env::var(var).ok().and_then(|s| s.parse().ok()) {
            return seed;
        }
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap();
        u64::from(nanos.subsec_nanos()) ^ u64::from(std::process::id()) << 32
    }

    fn new(seed: u64) -> Rng {
        Rng(seed | 1)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n
    }
}

#[test]
fn crash_child() {
    let Ok(spec) = std::env::var(CHILD_ENV) else {
        return;
    };
    let mut parts = spec.splitn(3, '|');
    let (dir, key, location) = (
        Path::new(parts.next().unwrap()),
        parts.next().unwrap(),
        parts.next().unwrap(),
    );
    let options = OpenOptions {
        mode: Mode::ReadWrite,
        store_key: None,
    };
    let store =
        Store::open_with_signing_key(Path::new(location), &options, Some(Path::new(key))).unwrap();
    let load = |n: &str| NamedKey::load(&dir.join(format!("{n}.key"))).unwrap();
    let (alice, bob, carol) = (load("alice"), load("bob"), load("carol"));
    let rules = rules();
    let mut rng = Rng::new(Rng::seed(CHILD_SEED_ENV));
    let mut next_new = 1_000_000 + rng.below(1_000_000) as usize * 10;
    let quarantined = ListFilter {
        status: Some(Status::Quarantined),
        ..ListFilter::default()
    };
    loop {
        let page = store
            .list(&quarantined, SortKey::OldestFirst, rng.below(20), 1)
            .unwrap();
        let Some(item) = page.into_iter().next() else {
            let batch: Vec<_> = (0..50).map(|k| compaction(next_new + k)).collect();
            next_new += 50;
            store.record_batch(&batch).unwrap();
            continue;
        };
        let action = if rng.below(3) == 0 {
            Action::Reject
        } else {
            Action::Release
        };
        let key = match (action, item.verdict_class.as_str(), rng.below(2)) {
            (Action::Release, "FAIL/FINDING", 0) => &alice,
            (Action::Release, "FAIL/FINDING", _) => &bob,
            _ => &carol,
        };
        let req = DecisionRequest {
            compaction_id: item.id.clone(),
            action,
            reason: REASONS[rng.below(3) as usize].into(),
            note: format!("crash test decision on {}", item.id),
            seen_report_sha256: item.report_sha256.clone(),
        };
        match store.decide(&req, key, &rules) {
            Ok(_) | Err(DecisionError::SelfApproval { .. }) => {}
            Err(e) => panic!("unexpected decision error: {e}"),
        }
        if rng.below(10) == 0 {
            store.record_reveal(&item.id, "secret-0", &carol).unwrap();
        }
    }
}

fn write_key(dir: &Path, key: &NamedKey) {
    key.save_new(&dir.join(format!("{}.key", key.name)))
        .unwrap();
}

both! {
fn decisions_survive_sigkill_at_random_moments(s: TestStore) {
    if std::env::var_os(CHILD_ENV).is_some() {
        return;
    }
    let started = Instant::now();
    let spec = format!(
        "{}|{}|{}",
        s.dir.path().display(),
        s.key_path().display(),
        s.location.display()
    );
    {
        let store = s.open();
        let team = team(&store);
        for key in [&team.alice, &team.bob, &team.carol] {
            write_key(s.dir.path(), key);
        }
        let items: Vec<_> = (0..600).filter(|i| i % 3 != 0).map(compaction).collect();
        store.record_batch(&items).unwrap();
    }
    let exe = std::env::current_exe().unwrap();
    let seed = Rng::seed(SEED_ENV);
    eprintln!("crash test seed {seed} (replay with {SEED_ENV}={seed})");
    let mut rng = Rng::new(seed);
    for round in 0..ROUNDS {
        let mut child = Command::new(&exe)
            .args(["crash_child", "--exact", "--nocapture", "--test-threads=1"])
            .env(CHILD_ENV, &spec)
            .env(CHILD_SEED_ENV, (seed ^ round as u64).to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(5 + rng.below(60)));
        if let Ok(Some(status)) = child.try_wait() {
            let out = child.wait_with_output().unwrap();
            panic!(
                "child exited by itself ({status}): {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        child.kill().unwrap(); // SIGKILL on Unix
        child.wait().unwrap();
        if round == ROUNDS / 2 {
            // One read transaction: on PostgreSQL the killed writer's last transaction may
            // still commit on the server after the process is gone, and verifying in separate
            // queries would see its receipts without the checkpoint it commits with them.
            let store = s.open_ro();
            let report = store.verify(None).unwrap();
            assert!(
                report.is_ok(),
                "after round {round} (seed {seed}, {SEED_ENV}={seed} replays it): {report}"
            );
        }
    }
    let spawned = started.elapsed();
    let store = s.open();
    let report = store.verify(None).unwrap();
    eprintln!(
        "kill rounds took {spawned:?}, final verify {:?}",
        started.elapsed() - spawned
    );
    assert!(
        report.is_ok(),
        "seed {seed} ({SEED_ENV}={seed} replays it): {report}"
    );
    let decided = store
        .count(&ListFilter {
            status: Some(Status::Released),
            ..ListFilter::default()
        })
        .unwrap()
        + store
            .count(&ListFilter {
                status: Some(Status::Rejected),
                ..ListFilter::default()
            })
            .unwrap();
    assert!(decided > 0, "the child never got to decide anything");
    eprintln!(
        "{ROUNDS} kills, {decided} decisions, {} receipts, {:?}",
        report.entries,
        started.elapsed()
    );
}
}
