//! `cq ingest FILE.jsonl`: check many requests (one `cq.request.v1` per line) and record
//! every verdict, in batched transactions with one checkpoint each, behind a progress bar.
//! A bad line (malformed, not UTF-8, over the size cap, refused by the gate) is reported with
//! its line number and does not stop the rest; what was recorded before an error stays
//! recorded.

use std::io::{BufReader, Write};
use std::path::Path;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};

use crate::cli::{PolicyArgs, StoreArgs};
use crate::engine::request_json::MAX_REQUEST_BYTES;
use crate::engine::verdict::Verdict;
use crate::engine::GateRequest;
use crate::service::record::new_compaction;
use crate::service::Checker;
use crate::store::{Mode, NewCompaction, Recorded, Store};

use super::input::{self, Line};
use super::{policy, store, warn, Exit, Output};

/// Requests recorded per transaction.
const BATCH: usize = 500;

#[derive(Debug, Default)]
struct Tally {
    accepted: u64,
    quarantined: u64,
    duplicates: u64,
    bad: Vec<String>,
}

/// Bytes of request lines held at once before they are checked and recorded.
const BATCH_BYTES: usize = 64 * 1024 * 1024;

pub fn run(
    file: &Path,
    jobs: Option<u16>,
    store_args: &StoreArgs,
    policy_args: &PolicyArgs,
    out: &mut Output,
) -> anyhow::Result<Exit> {
    let pool = super::jobs::pool(jobs)?;
    let checker = Checker::new(policy::resolve(policy_args)?)?;
    let store = store::open(store_args, Mode::ReadWrite)?;
    let mut reader = BufReader::new(
        std::fs::File::open(file)
            .with_context(|| format!("while opening \"{}\"", file.display()))?,
    );
    let progress = ProgressBar::new_spinner();
    progress.set_style(
        ProgressStyle::with_template("{spinner} {pos} requests checked ({per_sec}) {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    let mut tally = Tally::default();
    let mut pending: Vec<(usize, Vec<u8>)> = Vec::with_capacity(BATCH);
    let mut held = 0usize;
    let mut buf = Vec::new();
    let mut number = 0usize;
    while let Some(read) =
        input::read_line(&mut reader, &mut buf, MAX_REQUEST_BYTES).with_context(|| {
            format!(
                "while reading line {} of \"{}\"",
                number + 1,
                file.display()
            )
        })?
    {
        number += 1;
        if let Line::TooLong { bytes } = read {
            tally.bad.push(format!(
                "line {number}: {bytes} bytes, more than the {MAX_REQUEST_BYTES} a request may have"
            ));
            continue;
        }
        if buf.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        progress.inc(1);
        held += buf.len();
        pending.push((number, std::mem::take(&mut buf)));
        if pending.len() == BATCH || held >= BATCH_BYTES {
            check_and_record(&pool, &checker, &store, &mut pending, &mut tally)?;
            held = 0;
        }
    }
    check_and_record(&pool, &checker, &store, &mut pending, &mut tally)?;
    progress.finish_and_clear();
    writeln!(
        out,
        "{} recorded: {} accepted, {} quarantined; {} already recorded; {} bad line(s)",
        tally.accepted + tally.quarantined,
        tally.accepted,
        tally.quarantined,
        tally.duplicates,
        tally.bad.len()
    )?;
    for bad in &tally.bad {
        warn(&crate::sanitize::line(bad));
    }
    Ok(if tally.bad.is_empty() {
        Exit::Success
    } else {
        Exit::SomeRefused
    })
}

/// Checks the pending lines on the pool (results in line order) and records them in one batch.
fn check_and_record(
    pool: &rayon::ThreadPool,
    checker: &Checker,
    store: &Store,
    pending: &mut Vec<(usize, Vec<u8>)>,
    tally: &mut Tally,
) -> anyhow::Result<()> {
    use rayon::prelude::*;
    let checked: Vec<(usize, Result<NewCompaction, String>)> = pool.install(|| {
        pending
            .par_iter()
            .map(|(number, line)| (*number, check_line(checker, line)))
            .collect()
    });
    pending.clear();
    let mut batch = Vec::with_capacity(checked.len());
    let mut lines = Vec::with_capacity(checked.len());
    for (number, result) in checked {
        match result {
            Ok(item) => {
                batch.push(item);
                lines.push(number);
            }
            Err(why) => tally.bad.push(format!("line {number}: {why}")),
        }
    }
    flush(store, &mut batch, &mut lines, tally)
}

/// One line checked: what the store keeps of it, or why it is bad.
fn check_line(checker: &Checker, line: &[u8]) -> Result<NewCompaction, String> {
    let request = GateRequest::from_json(line)?;
    let outcome = checker
        .check(&request)
        .map_err(|e| format!("refused: {e}"))?;
    Ok(new_compaction(&request, &outcome, checker.release_rules()))
}

fn flush(
    store: &Store,
    batch: &mut Vec<NewCompaction>,
    lines: &mut Vec<usize>,
    tally: &mut Tally,
) -> anyhow::Result<()> {
    if batch.is_empty() {
        return Ok(());
    }
    let results = store.record_batch(batch)?;
    for ((item, number), result) in batch.iter().zip(lines.iter()).zip(results) {
        match result {
            Ok(Recorded::New { .. }) if item.report.verdict == Verdict::Accepted => {
                tally.accepted += 1
            }
            Ok(Recorded::New { .. }) => tally.quarantined += 1,
            Ok(Recorded::Duplicate { .. }) => tally.duplicates += 1,
            Err(e) => tally.bad.push(format!("line {number}: {e}")),
        }
    }
    batch.clear();
    lines.clear();
    Ok(())
}
