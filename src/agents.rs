//! Reading the compactions real agent runtimes write themselves: Claude Code session
//! transcripts (`~/.claude/projects/<dir>/<session>.jsonl`, and their `subagents/` files) and
//! Codex rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`), for `cq import` (after the
//! fact) and `cq hook` (live).
//!
//! What it guarantees, whatever the file holds:
//! - every compaction found becomes one [`ImportedCompaction`] whose `messages` are non-empty,
//!   in order, with unique `message_id`s, roles exactly `user`, `assistant` or `tool`, and no
//!   empty or whitespace-only content (a compaction whose summarized turns cannot be found gets
//!   one `tool` placeholder turn and an [`ImportedCompaction::unverifiable`] reason instead);
//! - a bad line (not JSON, not UTF-8, longer than [`Limits::max_line_bytes`]) is reported as an
//!   [`ImportProblem`] with its file and 1-based line, and the rest of the file is read; memory
//!   per line is bounded by that cap; unknown fields and line types are ignored;
//! - a summary the runtime cannot show in clear (a Codex remote compaction's
//!   `encrypted_content`, a boundary without a summary line) is [`ImportedSummary::Unreadable`]
//!   with the reason, so it is quarantined, never passed;
//! - a compaction's [`ImportedCompaction::key`] is the same whether the transcript is imported
//!   or read by a hook, so re-importing and the hooks that fire after one compaction find the
//!   one already recorded.
//!
//! How turns become source messages (decided from the data, see `claude_code` and `codex`):
//! the summarized turns are those the model saw since the previous compaction of the same
//! session, following the parent chain (Claude Code) or the rollout order (Codex); the
//! previous compaction's summary is carried as the first turn with role `assistant` (the
//! summarizer's words, never a user turn, so a claim it carries cannot vouch for itself); tool
//! calls are `assistant` turns and tool results `tool` turns, rendered as `[tool call: NAME]`
//! or `[tool result: NAME]` and the payload; hidden reasoning, runtime meta lines and slash
//! command wrappers are left out; runtime notes injected as user text (system reminders,
//! background task notifications) are `tool` turns.
//!
//! This module reads files; parsing itself works over any [`BufRead`], so tests and hooks can
//! hand it bytes.

mod claude_code;
mod codex;
pub mod hooks;
mod lines;
pub mod settings;
mod summary;
mod tail;
mod turns;
mod walk;

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use crate::engine::SourceMessage;

pub use summary::{
    claude_code_summary_matches, format_claude_code_summary, strip_claude_code_summary,
    strip_codex_summary,
};
pub use tail::latest_summary;
pub use walk::{transcript_files, TranscriptFile};

/// The agent runtime that wrote a transcript.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Runtime {
    ClaudeCode,
    Codex,
}

impl Runtime {
    /// The name used on the command line and in keys: `claude-code` or `codex`.
    pub fn name(self) -> &'static str {
        match self {
            Runtime::ClaudeCode => "claude-code",
            Runtime::Codex => "codex",
        }
    }

    /// The runtime named `name` (as [`Runtime::name`] spells it).
    pub fn from_name(name: &str) -> Option<Runtime> {
        [Runtime::ClaudeCode, Runtime::Codex]
            .into_iter()
            .find(|runtime| runtime.name() == name)
    }
}

/// One compaction found in a transcript.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportedCompaction {
    pub runtime: Runtime,
    /// The transcript and the 1-based line of the compaction (Claude Code: the
    /// `compact_boundary` line; Codex: the `compacted` line).
    pub file: PathBuf,
    pub line: u64,
    /// Stable identity: runtime, session, sub-agent and the compaction's own id (Claude Code:
    /// the boundary's uuid; Codex: `window_id`, else the line), so re-import is idempotent.
    pub key: String,
    /// Becomes `tenant_id`: where the session was started (Claude Code: the first `cwd` its
    /// lines name, else the project directory's name; Codex: `session_meta`'s `cwd`, else
    /// `unknown`), stable while the agent changes directory.
    pub project: String,
    /// Becomes `task_id`: Claude Code's `sessionId`, Codex's thread id.
    pub session_id: String,
    /// Set when the transcript is a sub-agent's (Claude Code `agentId`).
    pub agent_id: Option<String>,
    /// The summarized turns, oldest first.
    pub messages: Vec<SourceMessage>,
    /// The `message_id` of the turn that carries the previous compaction's summary, if any.
    pub carried_summary_id: Option<String>,
    pub summary: ImportedSummary,
    /// `auto`, `manual`, or whatever the runtime wrote.
    pub trigger: Option<String>,
    /// Claude Code's `version`, Codex's `cli_version`.
    pub runtime_version: Option<String>,
    /// Set when the summarized turns could not be recovered at all: the compaction cannot be
    /// checked against its source and must be quarantined with this reason.
    pub unverifiable: Option<String>,
    /// How the source was reconstructed when it was not the plain case (a broken parent
    /// chain, a file-order fallback, preserved messages left out); for the reviewer.
    pub notes: Vec<String>,
}

/// The summary a compaction put into the model's context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImportedSummary {
    /// The summary text, without the runtime's preamble and trailer.
    Text(String),
    /// The summary cannot be read (encrypted, missing, empty); it is quarantined for `why`.
    Unreadable { why: String },
}

/// A line that could not be read; the rest of the file was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportProblem {
    pub file: PathBuf,
    /// 1-based; 0 when the file as a whole could not be read.
    pub line: u64,
    pub message: String,
}

impl std::fmt::Display for ImportProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.file.display(), self.line, self.message)
    }
}

/// Everything read from one transcript.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileImport {
    pub compactions: Vec<ImportedCompaction>,
    pub problems: Vec<ImportProblem>,
}

/// Bounds on what one line may cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// A longer line is skipped and reported (its bytes are read but never kept).
    pub max_line_bytes: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_line_bytes: 32 * 1024 * 1024,
        }
    }
}

/// Reads one transcript file written by `runtime`.
pub fn import_file(path: &Path, runtime: Runtime, limits: &Limits) -> FileImport {
    match File::open(path) {
        Ok(file) => import_reader(BufReader::new(file), path, runtime, limits),
        Err(error) => FileImport {
            compactions: Vec::new(),
            problems: vec![ImportProblem {
                file: path.to_path_buf(),
                line: 0,
                message: format!(
                    "cannot open the transcript ({error}); check the path and its permissions"
                ),
            }],
        },
    }
}

/// Reads one transcript from `reader`; `path` names it in keys and problems.
pub fn import_reader(
    reader: impl BufRead,
    path: &Path,
    runtime: Runtime,
    limits: &Limits,
) -> FileImport {
    let mut found = match runtime {
        Runtime::ClaudeCode => claude_code::import(reader, path, limits),
        Runtime::Codex => codex::import(reader, path, limits),
    };
    // A compaction's own id can repeat in a file (copied or trimmed lines): the line decides.
    let mut seen = std::collections::HashSet::new();
    for compaction in &mut found.compactions {
        if !seen.insert(compaction.key.clone()) {
            compaction.key = format!("{}@{}", compaction.key, compaction.line);
            seen.insert(compaction.key.clone());
        }
    }
    found
}

/// The latest compaction in a transcript (for the hooks), optionally only one of
/// `session_id`; `None` when it has none. Reads the whole file once.
pub fn latest_compaction(
    path: &Path,
    runtime: Runtime,
    session_id: Option<&str>,
    limits: &Limits,
) -> Result<Option<ImportedCompaction>, std::io::Error> {
    let file = File::open(path)?;
    let found = import_reader(BufReader::new(file), path, runtime, limits);
    Ok(found
        .compactions
        .into_iter()
        .rev()
        .find(|compaction| session_id.is_none_or(|id| compaction.session_id == id)))
}

/// The turns a compaction about to happen would summarize (for `PreCompact`): those since
/// the session's latest compaction, along the current branch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingSource {
    pub project: String,
    pub session_id: String,
    pub messages: Vec<SourceMessage>,
    pub notes: Vec<String>,
}

/// See [`PendingSource`]; `None` when the transcript holds no turn yet.
pub fn pending_source(
    path: &Path,
    runtime: Runtime,
    session_id: Option<&str>,
    limits: &Limits,
) -> Result<Option<PendingSource>, std::io::Error> {
    let reader = BufReader::new(File::open(path)?);
    Ok(match runtime {
        Runtime::ClaudeCode => claude_code::pending(reader, path, session_id, limits),
        Runtime::Codex => codex::pending(reader, path, session_id, limits),
    })
}

/// The last `count` user turns, oldest first, verbatim (for the fallback notice).
pub fn last_user_turns(messages: &[SourceMessage], count: usize) -> Vec<&SourceMessage> {
    let mut found: Vec<&SourceMessage> = messages
        .iter()
        .rev()
        .filter(|message| message.role == "user")
        .take(count)
        .collect();
    found.reverse();
    found
}
