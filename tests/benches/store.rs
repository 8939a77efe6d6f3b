//! `cargo bench --bench store`: ingest rate of typical records (batched), decision rate,
//! queue paging on a large store, and `audit verify` over 100,000 receipts. Prints a markdown
//! table. Targets: ingest ≥ 5,000 records/s, verify of 100,000 receipts ≤ 2 s.

#![allow(clippy::unwrap_used)]

#[path = "../store_fixtures/fixtures.rs"]
mod fixtures;

use std::time::{Duration, Instant};

use cq::audit::verify;
use cq::store::{Action, DecisionRequest, ListFilter, SortKey, Status};
use fixtures::*;

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
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bench.db");
    let store = open(&path);
    let team = team(&store);
    let mut rows = Vec::new();

    // Ingest: typical requests (12 source messages, ~3 KB canonical JSON), 1,000 per batch.
    let ingest = ingest_count();
    let items: Vec<_> = (0..ingest).map(compaction).collect();
    let bytes: usize = items
        .iter()
        .map(|c| c.request_json.len() + c.report.report_json.len())
        .sum();
    let t = Instant::now();
    for batch in items.chunks(BATCH) {
        for r in store.record_batch(batch).unwrap() {
            r.unwrap();
        }
    }
    rows.push(Row {
        what: format!(
            "ingest, batches of {BATCH} (avg {} B/record)",
            bytes / ingest
        ),
        n: ingest,
        took: t.elapsed(),
    });

    // Single verdicts, one transaction and checkpoint each (`cq check --store`).
    let singles: Vec<_> = (ingest..ingest + 200).map(compaction).collect();
    let t = Instant::now();
    for c in &singles {
        store.record_verdict(c).unwrap();
    }
    rows.push(Row {
        what: "record one verdict (own transaction + checkpoint)".into(),
        n: singles.len(),
        took: t.elapsed(),
    });

    // Decisions: one signed receipt, one checkpoint, one fsync each.
    let quarantined = ListFilter {
        status: Some(Status::Quarantined),
        ..ListFilter::default()
    };
    let targets: Vec<_> = (0..ingest)
        .filter(|i| i % 3 == 1)
        .take(DECISIONS)
        .map(|i| compaction(i))
        .collect();
    let rules = rules();
    let t = Instant::now();
    for c in &targets {
        let req = DecisionRequest {
            compaction_id: c.compaction_id.clone(),
            action: Action::Release,
            reason: REASONS[0].into(),
            note: "bench".into(),
            seen_report_sha256: c.report.report_sha256.clone(),
        };
        store.decide(&req, &team.carol, &rules).unwrap();
    }
    rows.push(Row {
        what: "decide (signed receipt + checkpoint)".into(),
        n: targets.len(),
        took: t.elapsed(),
    });

    // The queue: count and a deep page, as the TUI asks for them.
    let t = Instant::now();
    let total = store.count(&quarantined).unwrap();
    rows.push(Row {
        what: format!("count quarantined ({total})"),
        n: 1,
        took: t.elapsed(),
    });
    let t = Instant::now();
    let page = store
        .list(
            &quarantined,
            SortKey::NewestFirst,
            total.saturating_sub(100),
            100,
        )
        .unwrap();
    assert_eq!(page.len(), 100);
    rows.push(Row {
        what: "list: last page of 100 (deepest offset)".into(),
        n: 1,
        took: t.elapsed(),
    });
    let t = Instant::now();
    let page = store
        .list(
            &ListFilter::default(),
            SortKey::MostAnomalies,
            ingest as u64 / 2,
            100,
        )
        .unwrap();
    assert_eq!(page.len(), 100);
    rows.push(Row {
        what: format!("list: page at offset {} by anomalies", ingest / 2).into(),
        n: 1,
        took: t.elapsed(),
    });

    // Verify everything: every hash, link, signature, checkpoint, and the table cross-check.
    let t = Instant::now();
    let report = verify(&store, None).unwrap();
    let took = t.elapsed();
    assert!(report.is_ok(), "{report}");
    rows.push(Row {
        what: format!(
            "audit verify ({} receipts, {} signatures, {} checkpoints)",
            report.entries, report.signatures, report.checkpoints
        ),
        n: report.entries as usize,
        took,
    });

    println!("| operation | n | time | rate |");
    println!("|---|---:|---:|---:|");
    for r in rows {
        let secs = r.took.as_secs_f64();
        let rate = if r.n > 1 {
            format!("{:.0}/s", r.n as f64 / secs)
        } else {
            "-".into()
        };
        println!("| {} | {} | {:.3} s | {rate} |", r.what, r.n, secs);
    }
}
