//! `cq import claude-code|codex PATH`: every compaction in a transcript, or in every transcript
//! under a directory, checked under the agent policy (default `prose`) and recorded, behind a
//! progress bar. Re-importing records nothing new (the store deduplicates by request digest).
//! A bad line is reported by file and line and the rest is imported.

use std::io::Write;
use std::path::Path;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};

use crate::agents::{self, Limits, Runtime};
use crate::cli::{ImportArgs, PolicyArgs, RuntimeName};
use crate::engine::verdict::Verdict;
use crate::service::agents::{request_for, PinTracker};
use crate::service::record::new_compaction;
use crate::service::Checker;
use crate::store::{Mode, NewCompaction, Recorded, Store};

use super::{policy, store, warn, Exit, Output};

/// The runtime a command line names.
pub fn runtime(name: RuntimeName) -> Runtime {
    match name {
        RuntimeName::ClaudeCode => Runtime::ClaudeCode,
        RuntimeName::Codex => Runtime::Codex,
    }
}

#[derive(Debug, Default)]
struct Tally {
    found: u64,
    accepted: u64,
    quarantined: u64,
    duplicates: u64,
    problems: Vec<String>,
}

/// One transcript read and checked: what to record, and what went wrong.
#[derive(Default)]
struct Checked {
    found: u64,
    problems: Vec<String>,
    /// What the store keeps of each compaction, with its session (task).
    items: Vec<(NewCompaction, String)>,
}

/// Reads and checks the compactions of one transcript (no store access: transcripts are
/// checked on many threads).
fn read_and_check(checker: &Checker, runtime: Runtime, file: &Path) -> Checked {
    let found = agents::import_file(file, runtime, &Limits::default());
    let mut out = Checked {
        problems: found.problems.iter().map(ToString::to_string).collect(),
        ..Checked::default()
    };
    let mut pins = PinTracker::new();
    for c in &found.compactions {
        out.found += 1;
        let at = format!("{}:{}", file.display(), c.line);
        let pinned = match pins.pins_for(c) {
            Ok(pinned) => pinned,
            Err(e) => {
                out.problems.push(format!("{at}: {e:#}"));
                continue;
            }
        };
        let request = request_for(c, checker.policy(), pinned);
        match checker.check(&request) {
            Ok(outcome) => out.items.push((
                new_compaction(&request, &outcome, checker.release_rules()),
                request.task_id.clone(),
            )),
            Err(e) => out.problems.push(format!("{at}: refused: {e}")),
        }
    }
    out
}

/// Records one transcript's compactions and points each session at its latest.
fn record(
    store: &Store,
    runtime: Runtime,
    file: &Path,
    checked: Checked,
    tally: &mut Tally,
) -> anyhow::Result<()> {
    tally.found += checked.found;
    tally.problems.extend(checked.problems);
    if checked.items.is_empty() {
        return Ok(());
    }
    let (items, sessions): (Vec<NewCompaction>, Vec<String>) = checked.items.into_iter().unzip();
    let results = store
        .record_batch(&items)
        .with_context(|| format!("while recording the compactions of \"{}\"", file.display()))?;
    let mut latest: Vec<(String, String)> = Vec::new();
    for ((item, task), result) in items.iter().zip(&sessions).zip(results) {
        let id = match result {
            Ok(Recorded::New { compaction_id, .. }) => {
                if item.report.verdict == Verdict::Accepted {
                    tally.accepted += 1;
                } else {
                    tally.quarantined += 1;
                }
                compaction_id
            }
            Ok(Recorded::Duplicate { compaction_id }) => {
                tally.duplicates += 1;
                compaction_id
            }
            Err(e) => {
                tally.problems.push(format!("{}: {e}", file.display()));
                continue;
            }
        };
        latest.retain(|(t, _)| t != task);
        latest.push((task.clone(), id));
    }
    for (task, id) in latest {
        store.set_session_compaction(runtime.name(), &task, &id)?;
    }
    Ok(())
}

/// Transcripts read and checked on the pool per round (their results held until recorded).
const ROUND: usize = 32;

pub fn run(args: &ImportArgs, out: &mut Output) -> anyhow::Result<Exit> {
    let runtime = runtime(args.runtime);
    let policy = policy::resolve(&PolicyArgs::from(&args.policy))?;
    let checker = Checker::new(policy)?;
    let store = store::open(&args.store, Mode::ReadWrite)?;
    let files = if args.path.is_dir() {
        agents::transcript_files(&args.path, runtime)
            .with_context(|| {
                format!(
                    "while listing transcripts under \"{}\"",
                    args.path.display()
                )
            })?
            .into_iter()
            .map(|f| f.path)
            .collect()
    } else {
        vec![args.path.clone()]
    };
    let progress = ProgressBar::new(files.len() as u64);
    progress.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} transcripts ({per_sec}) {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let pool = super::jobs::pool(args.jobs)?;
    let mut tally = Tally::default();
    let record_round = |round: &[std::path::PathBuf], checked: Vec<Checked>, tally: &mut Tally| {
        for (file, result) in round.iter().zip(checked) {
            progress.inc(1);
            record(&store, runtime, file, result, tally)?;
        }
        anyhow::Ok(())
    };
    // The pool reads and checks one round of files while this thread records the round before.
    let mut previous: Option<(&[std::path::PathBuf], Vec<Checked>)> = None;
    for round in files.chunks(ROUND) {
        let (checked, recorded) = super::jobs::alongside(
            &pool,
            || {
                use rayon::prelude::*;
                round
                    .par_iter()
                    .map(|file| read_and_check(&checker, runtime, file))
                    .collect::<Vec<Checked>>()
            },
            || {
                previous.take().map_or(Ok(()), |(files, checked)| {
                    record_round(files, checked, &mut tally)
                })
            },
        );
        recorded?;
        previous = Some((round, checked));
    }
    if let Some((files, checked)) = previous {
        record_round(files, checked, &mut tally)?;
    }
    progress.finish_and_clear();
    writeln!(
        out,
        "{} compaction(s) in {} transcript(s): {} accepted, {} quarantined, {} already recorded; {} problem(s)",
        tally.found,
        files.len(),
        tally.accepted,
        tally.quarantined,
        tally.duplicates,
        tally.problems.len()
    )?;
    for problem in &tally.problems {
        warn(&crate::sanitize::line(problem));
    }
    Ok(if tally.problems.is_empty() {
        Exit::Success
    } else {
        Exit::SomeRefused
    })
}
