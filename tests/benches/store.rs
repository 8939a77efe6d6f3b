//! `cargo bench --bench store`: ingest rate of typical records (batched), decision rate,
//! queue paging on a large store, and `audit verify` over 100,000 receipts, on SQLite and,
//! with `CQ_TEST_POSTGRES` set (a server URL, as `.ci/run` exports), on PostgreSQL in the same
//! run. Prints one markdown table per backend. Targets: ingest ≥ 5,000 records/s, one decision
//! ≤ 5 ms, verify of 100,000 receipts ≤ 2 s (SQLite) and ≤ 3 s (PostgreSQL).
//!
//! Then concurrent appends ([`appends`]): 1, 2, 4 and 8 writers recording or deciding at
//! once, each writer with its own connection, serialized by the store's write lock and, on
//! PostgreSQL, by `SERIALIZABLE` transactions retried on a lost race; after every run the
//! log verifies and its root matches a recomputation. `CQ_BENCH_ONLY=appends` runs only
//! that part.

#![allow(clippy::unwrap_used)]

#[path = "../store_fixtures/fixtures.rs"]
mod fixtures;

use std::time::{Duration, Instant};

use cq::audit::verify;
use cq::store::{ListFilter, SortKey, Status, Store};
use fixtures::*;

#[path = "store/appends.rs"]
mod appends;
#[path = "store/pages.rs"]
mod pages;

/// Records ingested; `CQ_BENCH_RECORDS` overrides it for quick profiling runs.
fn ingest_count() -> usize {
    std::env::var("CQ_BENCH_RECORDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(100_000)
}
const BATCH: usize = 1_000;
const DECISIONS: usize = 1_000;

struct Row {
    what: String,
    n: usize,
    took: Duration,
    cpu: Duration,
    /// CPU time of the PostgreSQL server's processes meanwhile (zero for SQLite).
    server: Duration,
}

/// The PostgreSQL server's main process, when the bench runs against one on this machine.
static POSTMASTER: std::sync::OnceLock<Option<u32>> = std::sync::OnceLock::new();

/// `(parent pid, user + system ticks)` of process `pid`, from /proc on Linux.
fn proc_stat(pid: &str) -> Option<(u32, u64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let n = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok());
    Some((u32::try_from(n(1)?).ok()?, n(11)? + n(12)?))
}

/// CPU time of the server's processes (the postmaster and its children).
fn server_time() -> Duration {
    let Some(Some(main)) = POSTMASTER.get() else {
        return Duration::ZERO;
    };
    let mut ticks = 0;
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|p| p.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        if let Some((parent, t)) = proc_stat(pid) {
            if parent == *main || pid == main.to_string() {
                ticks += t;
            }
        }
    }
    Duration::from_millis(ticks * 10)
}

/// Finds the server behind `CQ_TEST_POSTGRES` (its postmaster is our backend's parent).
fn find_server() {
    let pid = std::env::var(PG_ENV).ok().and_then(|url| {
        let mut client = postgres::Client::connect(&url, postgres::NoTls).ok()?;
        let backend: i32 = client
            .query_one("SELECT pg_backend_pid()", &[])
            .ok()?
            .get(0);
        proc_stat(&backend.to_string()).map(|(parent, _)| parent)
    });
    let _ = POSTMASTER.set(pid);
}

/// This process's CPU time (user + system, all threads), from /proc on Linux.
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the command name.
    Duration::from_millis((ticks(11) + ticks(12)) * 10)
}

/// Times `f`, wall clock and CPU.
fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration, Duration) {
    let (t, c, s) = (Instant::now(), cpu_time(), server_time());
    let out = f();
    SERVER_SPENT.with(|spent| spent.set(server_time().saturating_sub(s)));
    (out, t.elapsed(), cpu_time().saturating_sub(c))
}

thread_local! {
    /// The server's CPU time during the last `timed` call.
    static SERVER_SPENT: std::cell::Cell<Duration> = const { std::cell::Cell::new(Duration::ZERO) };
}

fn main() {
    // `CQ_BENCH_VERIFY=PATH` only verifies an existing store (for profiling `verify`).
    if let Some(path) = std::env::var_os("CQ_BENCH_VERIFY") {
        let store = open(std::path::Path::new(&path));
        let (report, took, cpu) = timed(|| verify(&store, None).unwrap());
        println!(
            "verify: {} entries, ok {}, wall {took:?}, cpu {cpu:?}",
            report.entries,
            report.is_ok()
        );
        return;
    }
    find_server();
    let only = std::env::var("CQ_BENCH_ONLY").unwrap_or_default();
    let mut tables = Vec::new();
    for kind in [Kind::Sqlite, Kind::Postgres] {
        if only == "appends" {
            break;
        }
        let Some(s) = TestStore::new(kind, "the store bench") else {
            continue;
        };
        // `CQ_BENCH_KEEP=DIR` keeps the SQLite store in DIR instead of a temporary directory.
        let kept = std::env::var_os("CQ_BENCH_KEEP").map(std::path::PathBuf::from);
        let store = match (&kept, kind) {
            (Some(dir), Kind::Sqlite) => open(&dir.join("bench.db")),
            _ => s.open(),
        };
        tables.push((kind, measure(&store)));
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "machine: {cores} cores, load average {}",
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    for (kind, rows) in tables {
        println!();
        println!("{kind:?}:");
        println!();
        println!("| operation | n | wall | cpu | server cpu | rate (wall) |");
        println!("|---|---:|---:|---:|---:|---:|");
        for r in rows {
            let secs = r.took.as_secs_f64();
            let rate = if r.n > 1 {
                format!("{:.0}/s", r.n as f64 / secs)
            } else {
                "-".into()
            };
            println!(
                "| {} | {} | {:.3} s | {:.2} s | {:.2} s | {rate} |",
                r.what,
                r.n,
                secs,
                r.cpu.as_secs_f64(),
                r.server.as_secs_f64(),
            );
        }
    }
    appends::run();
}

/// Every row, measured on `store`.
fn measure(store: &Store) -> Vec<Row> {
    let team = team(store);
    let mut rows = Vec::new();
    let mut row = |what: String, n: usize, took: Duration, cpu: Duration| {
        let server = SERVER_SPENT.with(|s| s.get());
        rows.push(Row {
            what,
            n,
            took,
            cpu,
            server,
        })
    };

    // Ingest: typical requests (12 source messages, ~2 KB canonical JSON), 1,000 per batch.
    let ingest = ingest_count();
    let items: Vec<_> = (0..ingest).map(compaction).collect();
    let bytes: usize = items
        .iter()
        .map(|c| c.request_json.len() + c.report.report_json.len())
        .sum();
    let ((), took, cpu) = timed(|| {
        for batch in items.chunks(BATCH) {
            for r in store.record_batch(batch).unwrap() {
                r.unwrap();
            }
        }
    });
    row(
        format!(
            "ingest, batches of {BATCH} (avg {} B/record)",
            bytes / ingest
        ),
        ingest,
        took,
        cpu,
    );

    // Single verdicts, one transaction, checkpoint and fsync each (`cq check --store`).
    let singles: Vec<_> = (ingest..ingest + 200).map(compaction).collect();
    let ((), took, cpu) = timed(|| {
        for c in &singles {
            store.record_verdict(c).unwrap();
        }
    });
    row(
        "record one verdict (own transaction + checkpoint)".into(),
        singles.len(),
        took,
        cpu,
    );

    // Decisions: one signed receipt, one checkpoint, one fsync each.
    let targets: Vec<_> = (0..ingest)
        .filter(|i| i % 3 == 1)
        .take(DECISIONS)
        .map(compaction)
        .collect();
    let rules = rules();
    let ((), took, cpu) = timed(|| {
        for c in &targets {
            store
                .decide(&release(c, "bench"), &team.carol, &rules)
                .unwrap();
        }
    });
    row(
        format!(
            "decide (signed receipt + checkpoint), {:.2} ms each",
            took.as_secs_f64() * 1000.0 / targets.len().max(1) as f64
        ),
        targets.len(),
        took,
        cpu,
    );

    // The queue: count and deep pages, as the TUI asks for them.
    let quarantined = ListFilter {
        status: Some(Status::Quarantined),
        ..ListFilter::default()
    };
    let (total, took, cpu) = timed(|| store.count(&quarantined).unwrap());
    row(format!("count quarantined ({total})"), 1, took, cpu);
    let (page, took, cpu) = timed(|| {
        store
            .list(&quarantined, SortKey::NewestFirst, total - 100, 100)
            .unwrap()
    });
    assert_eq!(page.len(), 100);
    row(
        "list: last page of 100 quarantined (deepest offset)".into(),
        1,
        took,
        cpu,
    );
    let offset = ingest as u64 / 2;
    let (page, took, cpu) = timed(|| {
        store
            .list(&ListFilter::default(), SortKey::MostAnomalies, offset, 100)
            .unwrap()
    });
    assert_eq!(page.len(), 100);
    row(
        format!("list: page of 100 at offset {offset}, by anomalies"),
        1,
        took,
        cpu,
    );

    // Verify everything: every hash, link, signature, checkpoint, and the table cross-check.
    let (report, took, cpu) = timed(|| verify(store, None).unwrap());
    assert!(report.is_ok(), "{report}");
    let what = format!(
        "audit verify ({} receipts, {} signatures, {} checkpoints)",
        report.entries, report.signatures, report.checkpoints
    );
    row(what, report.entries as usize, took, cpu);

    // Deep pages, by offset and by key.
    pages::measure(store, &mut rows);

    rows
}
