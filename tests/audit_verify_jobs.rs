//! `audit verify` checks rows on a pool of worker threads while one thread reads the store in
//! bounded batches: on a log longer than one batch, with requests spread over many hashing
//! batches, the report (every problem, in order, and the first bad entry) is the same for one,
//! two and four threads, tampered or not. On both backends.

#![allow(clippy::unwrap_used)]

#[path = "store_fixtures/fixtures.rs"]
mod fixtures;

use cq::audit::{verify_with, VerifyReport, Workers};
use fixtures::*;

/// More entries than one read batch of the entry walk (8,192), and ~20 MB of requests.
const RECORDS: usize = 9_000;

fn build(s: &TestStore) {
    let store = s.open();
    let _team = team(&store);
    let items: Vec<_> = (0..RECORDS).map(compaction).collect();
    for batch in items.chunks(1_000) {
        for r in store.record_batch(batch).unwrap() {
            r.unwrap();
        }
    }
}

fn reports(s: &TestStore) -> Vec<VerifyReport> {
    let store = s.open_ro();
    [Some(1), Some(2), Some(4), None]
        .into_iter()
        .map(|jobs| verify_with(&store, None, Workers::new(jobs)).unwrap())
        .collect()
}

fn seq_of_verdict(conn: &mut Raw, id: &str) -> u64 {
    let rows = conn.query(
        "SELECT seq FROM audit_entries WHERE kind = 'verdict' AND compaction_id = ?1",
        &[V::from(id)],
    );
    u64::try_from(rows[0][0].int()).unwrap()
}

both! {
fn a_log_longer_than_one_batch_verifies_the_same_on_any_number_of_threads(s: TestStore) {
    build(&s);
    let all = reports(&s);
    assert!(all[0].is_ok(), "{}", all[0]);
    assert_eq!(all[0].entries, RECORDS as u64 + 3, "{}", all[0]);
    for other in &all[1..] {
        assert_eq!(other, &all[0]);
    }
}

fn problems_in_late_batches_are_reported_the_same_on_any_number_of_threads(s: TestStore) {
    build(&s);
    let mut conn = s.raw();
    // A request far into the requests table, a receipt in the second read batch, a request
    // in the first hashing batch, and a stored tree node.
    let late = seq_of_verdict(&mut conn, "c-008500");
    let early = seq_of_verdict(&mut conn, "c-000003");
    let changes = [
        "UPDATE requests SET request_json = replace(request_json, 'step 1', 'step 9') \
         WHERE compaction_id IN ('c-008700', 'c-000003')",
        "UPDATE audit_entries SET receipt_json = replace(receipt_json, '\"tenant-', '\"tenanx-') \
         WHERE compaction_id = 'c-008500'",
        "UPDATE audit_nodes SET hash = (SELECT hash FROM audit_nodes WHERE level = 0 AND idx = 0) \
         WHERE level = 0 AND idx = 8600",
    ];
    for sql in changes {
        assert!(conn.execute(sql, &[]) >= 1, "{sql} changed nothing");
    }
    drop(conn);
    let all = reports(&s);
    let first = &all[0];
    assert!(!first.is_ok());
    assert_eq!(first.first_bad(), Some(early), "{first}");
    let named = |seq: u64| first.problems.iter().any(|p| p.seq == Some(seq));
    assert!(named(late), "{first}");
    assert!(
        first.problems.iter().any(|p| p.message.contains("c-008700")),
        "{first}"
    );
    assert!(
        first.problems.iter().any(|p| p.message.contains("tree node 0/8600")),
        "{first}"
    );
    for other in &all[1..] {
        assert_eq!(other, first);
        assert_eq!(other.to_string(), first.to_string());
    }
}
}

/// `cq audit verify --jobs N` on a tampered store: the same output and exit code for any N.
#[test]
fn the_command_prints_the_same_report_for_any_jobs() {
    let s = TestStore::sqlite();
    let store = s.open();
    let _team = team(&store);
    let items: Vec<_> = (0..40).map(compaction).collect();
    store.record_batch(&items).unwrap();
    drop(store);
    let mut conn = s.raw();
    let sql = "UPDATE requests SET request_json = replace(request_json, 'step 1', 'step 9') \
               WHERE compaction_id IN ('c-000007', 'c-000031')";
    assert_eq!(conn.execute(sql, &[]), 2);
    drop(conn);
    let run = |jobs: &str| {
        let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("cq"))
            .args(["audit", "verify", "--jobs", jobs])
            .arg("--store")
            .arg(&s.location)
            .env_remove("CQ_STORE")
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8(out.stdout).unwrap())
    };
    let one = run("1");
    assert_eq!(one.0, Some(1), "{}", one.1);
    assert!(
        one.1.contains("c-000007") && one.1.contains("c-000031"),
        "{}",
        one.1
    );
    assert_eq!(run("2"), one);
    assert_eq!(run("3"), one);
}
