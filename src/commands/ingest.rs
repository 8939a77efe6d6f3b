//! `cq ingest FILE.jsonl`: check many requests (one `cq.request.v1` per line) and record
//! every verdict, in batched transactions with one checkpoint each, behind a progress bar.
//! A bad line (malformed, not UTF-8, over the size cap, refused by the gate) is reported with
//! its line number and does not stop the rest; what was recorded before an error stays
//! recorded. The pool checks one batch while the calling thread records the batch before, so
//! the store is written from one thread, in line order, while every core checks.

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
    /// Each bad line's number and what was wrong with it.
    bad: Vec<(usize, String)>,
}

/// Bytes of request lines gathered into one batch. One batch is checked while the one before
/// is recorded, so about twice this is held at once.
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
    let mut checked: Checked = Vec::new();
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
            tally.bad.push((
                number,
                format!("{bytes} bytes, more than the {MAX_REQUEST_BYTES} a request may have"),
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
            let batch = std::mem::replace(&mut pending, Vec::with_capacity(BATCH));
            let previous = std::mem::take(&mut checked);
            checked = check_while_recording(&pool, &checker, batch, &store, previous, &mut tally)?;
            held = 0;
        }
    }
    let last = check_while_recording(&pool, &checker, pending, &store, checked, &mut tally)?;
    record(&store, last, &mut tally)?;
    progress.finish_and_clear();
    tally.bad.sort_by_key(|(number, _)| *number);
    writeln!(
        out,
        "{} recorded: {} accepted, {} quarantined; {} already recorded; {} bad line(s)",
        tally.accepted + tally.quarantined,
        tally.accepted,
        tally.quarantined,
        tally.duplicates,
        tally.bad.len()
    )?;
    for (number, why) in &tally.bad {
        warn(&crate::sanitize::line(&format!("line {number}: {why}")));
    }
    Ok(if tally.bad.is_empty() {
        Exit::Success
    } else {
        Exit::SomeRefused
    })
}

/// Checked lines in line order: each line's number, and what to record or why it is bad.
type Checked = Vec<(usize, Result<NewCompaction, String>)>;

/// Checks `batch` on the pool while this thread records `previous` (checked before); the
/// checked batch, to record next.
fn check_while_recording(
    pool: &rayon::ThreadPool,
    checker: &Checker,
    batch: Vec<(usize, Vec<u8>)>,
    store: &Store,
    previous: Checked,
    tally: &mut Tally,
) -> anyhow::Result<Checked> {
    use rayon::prelude::*;
    let (checked, recorded) = super::jobs::alongside(
        pool,
        || {
            batch
                .par_iter()
                .map(|(number, line)| (*number, check_line(checker, line)))
                .collect::<Checked>()
        },
        || record(store, previous, tally),
    );
    recorded.map(|()| checked)
}

/// Records the good lines of `checked` in one batch; the bad ones go to the tally.
fn record(store: &Store, checked: Checked, tally: &mut Tally) -> anyhow::Result<()> {
    let mut batch = Vec::with_capacity(checked.len());
    let mut lines = Vec::with_capacity(checked.len());
    for (number, result) in checked {
        match result {
            Ok(item) => {
                batch.push(item);
                lines.push(number);
            }
            Err(why) => tally.bad.push((number, why)),
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
            Err(e) => tally.bad.push((*number, e.to_string())),
        }
    }
    batch.clear();
    lines.clear();
    Ok(())
}
