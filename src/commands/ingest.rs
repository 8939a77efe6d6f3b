//! `cq ingest FILE.jsonl`: check many requests (one `cq.request.v1` per line) and record
//! every verdict, in batched transactions with one checkpoint each, behind a progress bar.
//! A bad line is reported with its line number and does not stop the rest; what was
//! recorded before an error stays recorded.

use std::io::{BufRead, BufReader};
use std::path::Path;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};

use crate::cli::{PolicyArgs, StoreArgs};
use crate::engine::GateRequest;
use crate::store::{Mode, Recorded};

use super::check::Checker;
use super::{queue, record};

/// Requests recorded per transaction.
const BATCH: usize = 500;

#[derive(Debug, Default)]
struct Tally {
    accepted: u64,
    quarantined: u64,
    duplicates: u64,
    bad: Vec<String>,
}

pub fn run(file: &Path, store_args: &StoreArgs, policy: &PolicyArgs) -> anyhow::Result<u8> {
    let checker = Checker::new(policy)?;
    let store = queue::open(store_args, Mode::ReadWrite)?;
    let reader = BufReader::new(
        std::fs::File::open(file)
            .with_context(|| format!("while opening \"{}\"", file.display()))?,
    );
    let progress = ProgressBar::new_spinner();
    progress.set_style(
        ProgressStyle::with_template("{spinner} {pos} requests checked ({per_sec}) {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    let mut tally = Tally::default();
    let mut batch = Vec::with_capacity(BATCH);
    let mut lines = Vec::with_capacity(BATCH);
    for (index, line) in reader.lines().enumerate() {
        let number = index + 1;
        let line =
            line.with_context(|| format!("while reading line {number} of \"{}\"", file.display()))?;
        if line.trim().is_empty() {
            continue;
        }
        progress.inc(1);
        let checked = GateRequest::from_json(line.as_bytes())
            .map_err(|e| e.to_string())
            .and_then(|request| {
                checker
                    .check(&request)
                    .map_err(|e| format!("{e:#}"))
                    .map(|outcome| (request, outcome))
            })
            .and_then(|(request, outcome)| {
                record::new_compaction(&request, &outcome).map_err(|e| format!("{e:#}"))
            });
        match checked {
            Ok(item) => {
                batch.push(item);
                lines.push(number);
            }
            Err(why) => tally.bad.push(format!("line {number}: {why}")),
        }
        if batch.len() == BATCH {
            flush(&store, &mut batch, &mut lines, &mut tally)?;
        }
    }
    flush(&store, &mut batch, &mut lines, &mut tally)?;
    progress.finish_and_clear();
    println!(
        "{} recorded: {} accepted, {} quarantined; {} already recorded; {} bad line(s)",
        tally.accepted + tally.quarantined,
        tally.accepted,
        tally.quarantined,
        tally.duplicates,
        tally.bad.len()
    );
    for bad in &tally.bad {
        eprintln!("cq: {bad}");
    }
    Ok(if tally.bad.is_empty() { 0 } else { 1 })
}

fn flush(
    store: &crate::store::Store,
    batch: &mut Vec<crate::store::NewCompaction>,
    lines: &mut Vec<usize>,
    tally: &mut Tally,
) -> anyhow::Result<()> {
    if batch.is_empty() {
        return Ok(());
    }
    let results = store.record_batch(batch)?;
    for ((item, number), result) in batch.iter().zip(lines.iter()).zip(results) {
        match result {
            Ok(Recorded::New { .. }) if item.report.verdict == "ACCEPTED" => tally.accepted += 1,
            Ok(Recorded::New { .. }) => tally.quarantined += 1,
            Ok(Recorded::Duplicate { .. }) => tally.duplicates += 1,
            Err(e) => tally.bad.push(format!("line {number}: {e}")),
        }
    }
    batch.clear();
    lines.clear();
    Ok(())
}
