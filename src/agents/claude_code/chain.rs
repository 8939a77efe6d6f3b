//! Which turns a Claude Code compaction summarized, decided from the data:
//!
//! - Follow the tree, not the file: from the boundary's `logicalParentUuid`, up `parentUuid`
//!   links. A rewind leaves the abandoned branch in the file; it is not on the chain, so it is
//!   not part of the source. A parent resolves to the last line with that uuid *before* the
//!   current one (the version that existed then), so the walk always terminates.
//! - Several compactions per file: the chain from a later boundary reaches the previous
//!   compaction's summary and then that compaction's boundary, whose `parentUuid` is null.
//!   The walk stops there, so each compaction's source is what the model had in its context
//!   when it was summarized: the previous summary (carried as an `assistant` turn) and the
//!   turns since. Turns before were the previous compaction's source and were checked then.
//! - Parallel tool calls: the other calls of one response and their results hang off the
//!   chain on side branches that no chain line points to; the model was given them all, so
//!   they are turns of the source, in file order among the chain's (`branches` says which
//!   lines; a rewind's abandoned branch, which starts with a user text turn, stays out).
//! - Messages the user queued while the agent was busy (`queue-operation` lines, outside the
//!   tree) are user turns of the span they were typed in: after the previous boundary and
//!   before this one, at their own line, unless a later line already carries them (`queue`).
//!   They are added to turns found in the file, never stand for a chain on their own.
//! - Preserved segments (`compactMetadata.preservedSegment` / `preservedMessages`): the runtime
//!   kept those turns verbatim and re-parented them under the summary; they were not
//!   summarized, so they are left out (and counted in the notes). When `logicalParentUuid` only
//!   exists among the re-parented copies, the walk starts from the preserved head instead.
//! - A broken chain (a parent not in the file, e.g. a cut or sanitized transcript) keeps what
//!   was found and says so in the notes; a chain with no turns at all falls back to the
//!   session's turns in file order since the previous boundary (noted); with none either, the
//!   compaction is unverifiable.
//! - Sub-agent transcripts (`<session>/subagents/agent-*.jsonl`) are read the same way; their
//!   lines carry `agentId`, which goes into the key. The compaction agent's own transcript
//!   (`agent-acompact-*`) holds the summarizer's prompt and raw reply, not a compaction.

use std::collections::HashSet;
use std::path::Path;

use super::{branches, queue, Body, Boundary, Entry, Transcript};
use crate::agents::turns::{placeholder, Role, Turn, TurnList};
use crate::agents::{
    strip_claude_code_summary, ImportedCompaction, ImportedSummary, PendingSource, Runtime,
};

pub(super) fn compactions(transcript: &Transcript, path: &Path) -> Vec<ImportedCompaction> {
    let boundaries: Vec<usize> = (0..transcript.entries.len())
        .filter(|&i| {
            matches!(
                transcript.entry(i).map(|e| &e.body),
                Some(Body::Boundary(_))
            )
        })
        .collect();
    let mut found = Vec::new();
    for (position, &index) in boundaries.iter().enumerate() {
        let Some(entry) = transcript.entry(index) else {
            continue;
        };
        let Body::Boundary(boundary) = &entry.body else {
            continue;
        };
        let same_session = |other: &&usize| {
            transcript
                .entry(**other)
                .is_some_and(|e| e.session == entry.session)
        };
        let previous_line = boundaries
            .get(..position)
            .unwrap_or_default()
            .iter()
            .rev()
            .find(same_session)
            .and_then(|&i| transcript.entry(i))
            .map_or(0, |e| e.line);
        let next_line = boundaries
            .get(position + 1..)
            .unwrap_or_default()
            .iter()
            .find(same_session)
            .and_then(|&i| transcript.entry(i))
            .map_or(u64::MAX, |e| e.line);
        found.push(compaction(
            transcript,
            path,
            entry,
            boundary,
            previous_line,
            next_line,
        ));
    }
    found
}

fn compaction(
    transcript: &Transcript,
    path: &Path,
    entry: &Entry,
    boundary: &Boundary,
    previous_line: u64,
    next_line: u64,
) -> ImportedCompaction {
    let mut notes = Vec::new();
    let summary_entry = find_summary(transcript, entry, next_line);
    let preserved: HashSet<&str> = boundary
        .preserved
        .iter()
        .map(String::as_str)
        .chain(boundary.preserved_head.as_deref())
        .chain(boundary.preserved_tail.as_deref())
        .collect();
    let start = [
        boundary.logical_parent.as_deref(),
        boundary.preserved_tail.as_deref(),
        boundary.preserved_head.as_deref(),
    ]
    .into_iter()
    .flatten()
    .find_map(|uuid| transcript.resolve(uuid, entry.line));
    if start.is_none() {
        notes.push(match &boundary.logical_parent {
            Some(uuid) => format!(
                "the boundary's logicalParentUuid \"{uuid}\" is not in the transcript before it"
            ),
            None => "the boundary has no logicalParentUuid".to_string(),
        });
    }
    let queued = queue::queued_turns(transcript, &entry.session, previous_line, entry.line);
    let span = Span {
        before: entry.line,
        preserved: &preserved,
        queued: &queued,
    };
    let (mut list, mut carried) = source(transcript, start, &span, &mut notes);
    if list.is_empty() {
        // The last line of the same thread before the boundary is the branch that was live.
        let leaf = (0..transcript.entries.len()).rev().find(|&i| {
            transcript.entry(i).is_some_and(|e| {
                e.line < entry.line
                    && !e.uuid.is_empty()
                    && e.session == entry.session
                    && e.agent == entry.agent
                    && e.sidechain == entry.sidechain
                    && !matches!(e.body, Body::Boundary(_))
            })
        });
        if leaf.is_some() && leaf != start {
            (list, carried) = source(transcript, leaf, &span, &mut notes);
            if let (false, Some(line)) = (
                list.is_empty(),
                leaf.and_then(|i| transcript.entry(i)).map(|e| e.line),
            ) {
                notes.push(format!(
                    "the chain was followed from the last line before the boundary (line {line}) instead"
                ));
            }
        }
    }
    if list.is_empty() {
        let fallback: Vec<usize> = (0..transcript.entries.len())
            .filter(|&i| {
                transcript.entry(i).is_some_and(|e| {
                    e.line > previous_line
                        && e.line < entry.line
                        && e.session == entry.session
                        && !preserved.contains(e.uuid.as_str())
                })
            })
            .collect();
        (list, carried) = build(transcript, &fallback, &queued);
        if !list.is_empty() {
            notes.push("the parent chain holds no turns; the source is the session's turns in file order since the previous boundary".into());
        }
    }
    if !list.is_empty() && !queued.is_empty() {
        notes.push(format!(
            "{} message(s) the user queued while the agent was busy are user turns of the span",
            queued.len()
        ));
    }
    let (messages, unverifiable) = if list.is_empty() {
        (
            vec![placeholder()],
            Some("none of the turns this compaction summarized are in the transcript, so it cannot be checked against them".to_string()),
        )
    } else {
        (list.into_messages(), None)
    };
    let session_id = entry.session.clone().unwrap_or_else(|| file_stem(path));
    let project = transcript
        .session_cwd(&entry.session)
        .map(str::to_string)
        .or_else(|| entry.cwd.clone())
        .unwrap_or_else(|| project_dir(path));
    let own_id = if entry.uuid.is_empty() || transcript.is_repeated(&entry.uuid) {
        format!("{}@{}", entry.uuid, entry.line)
    } else {
        entry.uuid.clone()
    };
    ImportedCompaction {
        runtime: Runtime::ClaudeCode,
        file: path.to_path_buf(),
        line: entry.line,
        key: format!(
            "claude-code:{session_id}:{}:{own_id}",
            entry.agent.as_deref().unwrap_or("-")
        ),
        project,
        session_id,
        agent_id: entry.agent.clone(),
        messages,
        carried_summary_id: carried,
        summary: summary_of(summary_entry),
        trigger: boundary.trigger.clone(),
        runtime_version: entry.version.clone(),
        unverifiable,
        notes,
    }
}

/// What bounds one compaction's source: the boundary's line, the turns the runtime kept
/// verbatim, and the messages the user queued in the span.
struct Span<'a> {
    before: u64,
    preserved: &'a HashSet<&'a str>,
    queued: &'a [Turn],
}

/// The turns on the chain ending at `start` and the parallel tool calls and results hanging
/// off it, with the queued user messages, without the preserved turns (noted).
fn source(
    transcript: &Transcript,
    start: Option<usize>,
    span: &Span<'_>,
    notes: &mut Vec<String>,
) -> (TurnList, Option<String>) {
    let Some(start) = start else {
        return (TurnList::default(), None);
    };
    let mut chain = on_chain(transcript, start, span.before, notes);
    let before = chain.len();
    chain.retain(|&i| {
        transcript
            .entry(i)
            .is_some_and(|e| !span.preserved.contains(e.uuid.as_str()))
    });
    if chain.len() < before {
        notes.push(format!(
            "{} preserved turn(s) the runtime kept verbatim are not part of the summarized turns",
            before - chain.len()
        ));
    }
    // Queued messages alone are no chain: without a turn on it, the caller looks elsewhere.
    let any_turn = chain
        .iter()
        .filter_map(|&i| transcript.entry(i))
        .any(|e| match &e.body {
            Body::Turns(turns) => turns.iter().any(|t| !t.content.trim().is_empty()),
            Body::Summary(text) => !text.trim().is_empty(),
            Body::Boundary(_) | Body::Link => false,
        });
    if !any_turn {
        return (TurnList::default(), None);
    }
    build(transcript, &chain, span.queued)
}

/// The chain ending at `start` and the side lines of its parallel tool calls (before line
/// `before`), in file order (noted when there are side lines).
fn on_chain(
    transcript: &Transcript,
    start: usize,
    before: u64,
    notes: &mut Vec<String>,
) -> Vec<usize> {
    let walked = walk(transcript, start);
    if let Some(missing) = walked.missing {
        notes.push(format!(
            "the parent chain breaks at \"{missing}\", which is not in the transcript; earlier turns are missing"
        ));
    }
    let mut chain = walked.entries;
    let side = branches::side_lines(transcript, &chain, before);
    if !side.is_empty() {
        notes.push(format!(
            "{} line(s) of parallel tool calls and results off the parent chain are part of the summarized turns",
            side.len()
        ));
        chain.extend(side);
        chain.sort_unstable();
    }
    chain
}

/// The summary line of a boundary: the first `isCompactSummary` line of the same session
/// after it and before the next boundary, preferring one whose parent is the boundary.
fn find_summary<'a>(
    transcript: &'a Transcript,
    boundary: &Entry,
    next_line: u64,
) -> Option<&'a Entry> {
    let candidates: Vec<&Entry> = transcript
        .entries
        .iter()
        .filter(|e| {
            matches!(e.body, Body::Summary(_))
                && e.line > boundary.line
                && e.line < next_line
                && (e.session.is_none() || e.session == boundary.session)
        })
        .collect();
    candidates
        .iter()
        .find(|e| !boundary.uuid.is_empty() && e.parent.as_deref() == Some(boundary.uuid.as_str()))
        .or_else(|| candidates.first())
        .copied()
}

fn summary_of(entry: Option<&Entry>) -> ImportedSummary {
    match entry.map(|e| &e.body) {
        Some(Body::Summary(text)) => {
            let stripped = strip_claude_code_summary(text);
            if stripped.trim().is_empty() {
                ImportedSummary::Unreadable {
                    why: "the compaction's summary is empty".into(),
                }
            } else {
                ImportedSummary::Text(stripped)
            }
        }
        _ => ImportedSummary::Unreadable {
            why: "no summary line follows this compaction boundary (the transcript may be cut short), so what the model was given cannot be checked".into(),
        },
    }
}

struct Walk {
    /// Oldest first.
    entries: Vec<usize>,
    missing: Option<String>,
}

/// Up the parent links from `start` (included) to the root or a boundary (excluded).
fn walk(transcript: &Transcript, start: usize) -> Walk {
    let mut entries = Vec::new();
    let mut missing = None;
    let mut current = Some(start);
    while let Some(index) = current {
        let Some(entry) = transcript.entry(index) else {
            break;
        };
        if matches!(entry.body, Body::Boundary(_)) {
            break;
        }
        entries.push(index);
        current = match &entry.parent {
            None => None,
            Some(parent) => {
                let found = transcript.resolve(parent, entry.line);
                if found.is_none() {
                    missing = Some(parent.clone());
                }
                found
            }
        };
    }
    entries.reverse();
    Walk { entries, missing }
}

/// The turns of `chain` (entries in file order) and the `queued` user turns, merged by
/// line, and the id of the carried summary if there is one.
fn build(transcript: &Transcript, chain: &[usize], queued: &[Turn]) -> (TurnList, Option<String>) {
    let mut list = TurnList::default();
    let mut carried = None;
    let mut queued = queued.iter().peekable();
    for entry in chain.iter().filter_map(|&i| transcript.entry(i)) {
        while let Some(turn) = queued.next_if(|turn| turn.line < entry.line) {
            list.push(turn);
        }
        match &entry.body {
            Body::Turns(turns) => {
                for turn in turns {
                    list.push(turn);
                }
            }
            Body::Summary(text) => {
                let turn = Turn {
                    id: entry.uuid.clone(),
                    line: entry.line,
                    role: Role::Assistant,
                    content: text.clone(),
                };
                if let Some(id) = list.push(&turn) {
                    carried = Some(id);
                }
            }
            Body::Boundary(_) | Body::Link => {}
        }
    }
    for turn in queued {
        list.push(turn);
    }
    (list, carried)
}

/// The turns since the session's latest compaction along the current branch: from the last
/// line of the session that is in the tree, up to the previous boundary.
pub(super) fn pending(
    transcript: &Transcript,
    path: &Path,
    session_id: Option<&str>,
) -> Option<PendingSource> {
    let leaf = (0..transcript.entries.len()).rev().find(|&i| {
        transcript.entry(i).is_some_and(|e| {
            !e.uuid.is_empty() && session_id.is_none_or(|id| e.session.as_deref() == Some(id))
        })
    })?;
    let entry = transcript.entry(leaf)?;
    let mut notes = Vec::new();
    let chain = on_chain(transcript, leaf, u64::MAX, &mut notes);
    // The span starts after the session's previous boundary, where the chain stops.
    let previous_line = transcript
        .entries
        .iter()
        .rev()
        .find(|e| matches!(e.body, Body::Boundary(_)) && e.session == entry.session)
        .map_or(0, |e| e.line);
    let queued = queue::queued_turns(transcript, &entry.session, previous_line, u64::MAX);
    let (list, _) = build(transcript, &chain, &queued);
    if list.is_empty() {
        return None;
    }
    Some(PendingSource {
        project: transcript
            .session_cwd(&entry.session)
            .map_or_else(|| project_dir(path), str::to_string),
        session_id: entry.session.clone().unwrap_or_else(|| file_stem(path)),
        messages: list.into_messages(),
        notes,
    })
}

fn file_stem(path: &Path) -> String {
    path.file_stem()
        .map(|stem| stem.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The project directory a transcript sits in (`~/.claude/projects/<dir>/<session>.jsonl`,
/// or `<dir>/<session>/subagents/agent-*.jsonl`).
fn project_dir(path: &Path) -> String {
    let parent = path.parent();
    let dir = match parent.and_then(Path::file_name) {
        Some(name) if name == "subagents" => parent.and_then(Path::parent).and_then(Path::parent),
        _ => parent,
    };
    dir.and_then(Path::file_name)
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default()
}
