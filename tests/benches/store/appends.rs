//! Concurrent appends to one store: how the two ways of serializing writers compare (the
//! store's write lock, and on PostgreSQL `SERIALIZABLE` transactions retried when they lose a
//! race), for 1, 2, 4 and 8 writers each holding its own connection, recording single
//! verdicts or deciding distinct items. Per run: appends per second (wall), p50 and p99 of
//! one append's latency, retries per append; after each run `audit verify` must pass and the
//! Merkle root recomputed from the receipts' bytes must be the one the last checkpoint signs,
//! over a gap-free sequence.

use std::path::PathBuf;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use cq::audit::NamedKey;
use cq::store::{Appends, Mode, OpenOptions, Store};

use super::fixtures::*;

const WRITERS: [usize; 4] = [1, 2, 4, 8];

/// Appends per run (divisible by every writer count); `CQ_BENCH_APPENDS` overrides it.
fn per_run() -> usize {
    std::env::var("CQ_BENCH_APPENDS")
        .ok()
        .and_then(|n| n.parse::<usize>().ok())
        .map_or(240, |n| n.max(8) / 8 * 8)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Work {
    Record,
    Decide,
}

struct Run {
    work: Work,
    appends: Appends,
    writers: usize,
    n: usize,
    took: Duration,
    p50: Duration,
    p99: Duration,
    retries: u64,
}

/// Where each writer thread opens the store.
#[derive(Clone)]
struct Target {
    location: PathBuf,
    signing_key: PathBuf,
}

impl Target {
    fn open(&self, appends: Appends) -> Store {
        let options = OpenOptions {
            mode: Mode::ReadWrite,
            store_key: None,
        };
        let mut store =
            Store::open_with_signing_key(&self.location, &options, Some(&self.signing_key))
                .unwrap();
        store.set_appends(appends);
        store
    }
}

/// Every run on both backends, then the table.
pub fn run() {
    let mut all = Vec::new();
    for kind in [Kind::Sqlite, Kind::Postgres] {
        let Some(s) = TestStore::new(kind, "the append bench") else {
            continue;
        };
        let modes: &[Appends] = match kind {
            Kind::Sqlite => &[Appends::Lock],
            Kind::Postgres => &[Appends::Lock, Appends::Serializable],
        };
        let target = Target {
            location: s.location.clone(),
            signing_key: s.key_path(),
        };
        let (carol, mut next) = {
            let store = s.open();
            (team(&store).carol, 0)
        };
        for work in [Work::Record, Work::Decide] {
            for writers in WRITERS {
                // Both ways in turn, at the same store size.
                for &appends in modes {
                    let n = per_run();
                    let items: Vec<usize> = (next..next + 3 * n).filter(|i| i % 3 == 1).collect();
                    next += 3 * n;
                    if work == Work::Decide {
                        let store = target.open(Appends::Lock);
                        let batch: Vec<_> = items.iter().map(|&i| compaction(i)).collect();
                        store.record_batch(&batch).unwrap();
                    }
                    let run = one_run(&target, &carol, work, appends, writers, &items);
                    assert_log_linear(&target.open(Appends::Lock));
                    all.push((kind, run));
                }
            }
        }
    }
    println!();
    println!("Concurrent appends ({} per run; each run checked: verify passes, root recomputed, no gap):", per_run());
    println!();
    println!("| backend | appends serialized by | work | writers | appends | wall | appends/s | p50 | p99 | retries/append |");
    println!("|---|---|---|---:|---:|---:|---:|---:|---:|---:|");
    for (kind, r) in all {
        let how = match (kind, r.appends) {
            (Kind::Sqlite, _) => "write lock (BEGIN IMMEDIATE)",
            (Kind::Postgres, Appends::Lock) => "advisory lock",
            (Kind::Postgres, Appends::Serializable) => "SERIALIZABLE + retries",
        };
        let work = match r.work {
            Work::Record => "record one verdict",
            Work::Decide => "decide",
        };
        println!(
            "| {kind:?} | {how} | {work} | {} | {} | {:.2} s | {:.0}/s | {:.1} ms | {:.1} ms | {:.2} |",
            r.writers,
            r.n,
            r.took.as_secs_f64(),
            r.n as f64 / r.took.as_secs_f64(),
            r.p50.as_secs_f64() * 1000.0,
            r.p99.as_secs_f64() * 1000.0,
            r.retries as f64 / r.n.max(1) as f64,
        );
    }
}

/// `writers` threads sharing `items` out between them, all starting at once.
fn one_run(
    target: &Target,
    carol: &NamedKey,
    work: Work,
    appends: Appends,
    writers: usize,
    items: &[usize],
) -> Run {
    let start = Arc::new(Barrier::new(writers + 1));
    let threads: Vec<_> = (0..writers)
        .map(|w| {
            let mine: Vec<usize> = items.iter().copied().skip(w).step_by(writers).collect();
            let (target, carol, start) = (target.clone(), carol.clone(), start.clone());
            std::thread::spawn(move || {
                let store = target.open(appends);
                let rules = rules();
                let mut latencies = Vec::with_capacity(mine.len());
                start.wait();
                for i in mine {
                    let c = compaction(i);
                    let t = Instant::now();
                    match work {
                        Work::Record => {
                            store.record_verdict(&c).unwrap();
                        }
                        Work::Decide => {
                            store.decide(&release(&c, "bench"), &carol, &rules).unwrap();
                        }
                    }
                    latencies.push(t.elapsed());
                }
                (latencies, store.retries())
            })
        })
        .collect();
    start.wait();
    let t = Instant::now();
    let mut latencies = Vec::new();
    let mut retries = 0;
    for thread in threads {
        let (l, r) = thread.join().unwrap();
        latencies.extend(l);
        retries += r;
    }
    let took = t.elapsed();
    latencies.sort();
    let at = |q: f64| {
        let i = ((latencies.len() as f64 * q).ceil() as usize).saturating_sub(1);
        latencies.get(i).copied().unwrap_or_default()
    };
    Run {
        work,
        appends,
        writers,
        n: latencies.len(),
        took,
        p50: at(0.50),
        p99: at(0.99),
        retries,
    }
}
