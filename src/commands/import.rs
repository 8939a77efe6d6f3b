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
use crate::store::{Mode, Recorded, Store};

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

/// Checks and records the compactions of one transcript; what happened goes in `tally`.
fn import_one(
    checker: &Checker,
    store: &Store,
    runtime: Runtime,
    file: &Path,
    tally: &mut Tally,
) -> anyhow::Result<()> {
    let found = agents::import_file(file, runtime, &Limits::default());
    tally
        .problems
        .extend(found.problems.iter().map(ToString::to_string));
    let mut pins = PinTracker::new();
    let mut items = Vec::with_capacity(found.compactions.len());
    let mut sessions = Vec::new();
    for c in &found.compactions {
        tally.found += 1;
        let at = format!("{}:{}", file.display(), c.line);
        let pinned = match pins.pins_for(c) {
            Ok(pinned) => pinned,
            Err(e) => {
                tally.problems.push(format!("{at}: {e:#}"));
                continue;
            }
        };
        let request = request_for(c, checker.policy(), pinned);
        match checker.check(&request) {
            Ok(outcome) => {
                items.push(new_compaction(&request, &outcome, checker.release_rules()));
                sessions.push(request.task_id.clone());
            }
            Err(e) => tally.problems.push(format!("{at}: refused: {e}")),
        }
    }
    if items.is_empty() {
        return Ok(());
    }
    let results = store
        .record_batch(&items)
        .with_context(|| format!("while recording the compactions of \"{}\"", file.display()))?;
    // The session index points at each session's last compaction in this transcript.
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
    let mut tally = Tally::default();
    for file in &files {
        progress.inc(1);
        import_one(&checker, &store, runtime, file, &mut tally)?;
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
