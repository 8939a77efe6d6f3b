//! Claude Code session transcripts: one JSON object a line, linked by `uuid` / `parentUuid`
//! into a tree (a rewind starts a new branch from an older turn; the file keeps both). A
//! compaction is a `system` line with `subtype: "compact_boundary"`, whose `parentUuid` is
//! null (the new context starts there) and whose `logicalParentUuid` names the last turn
//! before it; the summary follows as a `user` line with `isCompactSummary: true`.
//!
//! How lines become turns (`entry`): a user line's text is a `user` turn, its `tool_result`
//! blocks `tool` turns; an assistant line's text and `tool_use` blocks are one `assistant`
//! turn (thinking blocks are left out: hidden reasoning the summarizer is not shown);
//! attachments the runtime adds to the context are `tool` turns, except a queued prompt the
//! human typed, which is `user`. Left out: `isMeta` text (runtime-written: caveats, skill
//! bodies; tool results on meta lines stay), slash-command wrappers (`<command-name>`,
//! `<command-args>`, `<local-command-stdout>`, `<local-command-caveat>`, `<bash-input>`, …),
//! and assistant lines the runtime synthesised (`model: "<synthetic>"`, API errors). Runtime
//! notes written as user text (`<system-reminder>`, `<task-notification>`, `[SYSTEM
//! NOTIFICATION …]` banners, interruption markers) are `tool` turns: the model saw them, but
//! no human wrote them.
//!
//! `queue-operation` lines (what the user typed while the agent was busy) are kept aside for
//! `queue`. Which turns a compaction summarized is decided in `chain`.

mod branches;
mod chain;
mod queue;

use std::collections::HashMap;
use std::io::BufRead;
use std::path::Path;

use serde_json::{Map, Value};

use super::lines::{for_each_object, is_true, str_field};
use super::turns::{self, Role, Turn};
use super::{FileImport, Limits, PendingSource};

/// One transcript line that has a place in the tree.
#[derive(Debug)]
pub(super) struct Entry {
    pub line: u64,
    /// Empty for a boundary or summary line without one (it is then not linkable).
    pub uuid: String,
    pub parent: Option<String>,
    pub session: Option<String>,
    pub agent: Option<String>,
    pub cwd: Option<String>,
    pub version: Option<String>,
    pub sidechain: bool,
    /// An assistant line's `message.id`: the lines one API response was split into share it.
    pub message_id: Option<String>,
    /// The `tool_use` ids an assistant line issues, and the ones a user line's `tool_result`
    /// blocks answer.
    pub calls: Vec<String>,
    pub answers: Vec<String>,
    pub body: Body,
}

#[derive(Debug)]
pub(super) enum Body {
    Turns(Vec<Turn>),
    Boundary(Boundary),
    /// The text of an `isCompactSummary` line, as the model received it.
    Summary(String),
    /// A line that only links the tree (progress, system notes, …).
    Link,
}

#[derive(Debug, Default)]
pub(super) struct Boundary {
    pub logical_parent: Option<String>,
    pub trigger: Option<String>,
    /// `preservedSegment` head and tail, and every uuid `preservedMessages` lists.
    pub preserved_head: Option<String>,
    pub preserved_tail: Option<String>,
    pub preserved: Vec<String>,
}

/// Every entry of a file, in line order, with an index by uuid.
#[derive(Debug, Default)]
pub(super) struct Transcript {
    pub entries: Vec<Entry>,
    by_uuid: HashMap<String, Vec<usize>>,
    /// Entries by the uuid their `parentUuid` or `sourceToolAssistantUUID` names.
    children: HashMap<String, Vec<usize>>,
    /// `queue-operation` lines: what the user typed while the agent was busy.
    pub queued: Vec<queue::Operation>,
    /// The entries that hold a turn the human wrote, in file order.
    humans: Vec<usize>,
    uuid_counts: HashMap<String, usize>,
    /// The first `cwd` each session's lines name: where it was started, stable while the
    /// session changes directory.
    first_cwd: HashMap<Option<String>, String>,
}

impl Transcript {
    fn push(&mut self, entry: Entry, source_tool: Option<&str>) {
        let index = self.entries.len();
        let parents = [
            entry.parent.as_deref(),
            source_tool.filter(|s| Some(*s) != entry.parent.as_deref()),
        ];
        for parent in parents.into_iter().flatten() {
            self.children
                .entry(parent.to_string())
                .or_default()
                .push(index);
        }
        if !entry.uuid.is_empty() {
            self.by_uuid
                .entry(entry.uuid.clone())
                .or_default()
                .push(self.entries.len());
            *self.uuid_counts.entry(entry.uuid.clone()).or_default() += 1;
        }
        if matches!(&entry.body, Body::Turns(turns) if turns.iter().any(|t| t.role == Role::User)) {
            self.humans.push(index);
        }
        if let Some(cwd) = &entry.cwd {
            self.first_cwd
                .entry(entry.session.clone())
                .or_insert_with(|| cwd.clone());
        }
        self.entries.push(entry);
    }

    /// Where `session` was started (its first `cwd`).
    pub fn session_cwd(&self, session: &Option<String>) -> Option<&str> {
        self.first_cwd.get(session).map(String::as_str)
    }

    /// The last entry with `uuid` on a line before `before`: the version of a turn that
    /// existed at that point. Parents always resolve to earlier lines, so a walk terminates.
    pub fn resolve(&self, uuid: &str, before: u64) -> Option<usize> {
        self.by_uuid
            .get(uuid)?
            .iter()
            .rev()
            .copied()
            .find(|&index| self.entries.get(index).is_some_and(|e| e.line < before))
    }

    pub fn entry(&self, index: usize) -> Option<&Entry> {
        self.entries.get(index)
    }

    /// The entries whose `parentUuid` or `sourceToolAssistantUUID` is `uuid`, in file order.
    pub fn children(&self, uuid: &str) -> &[usize] {
        self.children.get(uuid).map_or(&[], Vec::as_slice)
    }

    /// Whether more than one line carries `uuid`.
    pub fn is_repeated(&self, uuid: &str) -> bool {
        self.uuid_counts.get(uuid).is_some_and(|&count| count > 1)
    }
}

pub(super) fn import(reader: impl BufRead, path: &Path, limits: &Limits) -> FileImport {
    let mut problems = Vec::new();
    let transcript = read(reader, path, limits, &mut problems);
    FileImport {
        compactions: chain::compactions(&transcript, path),
        problems,
    }
}

pub(super) fn pending(
    reader: impl BufRead,
    path: &Path,
    session_id: Option<&str>,
    limits: &Limits,
) -> Option<PendingSource> {
    let mut problems = Vec::new();
    let transcript = read(reader, path, limits, &mut problems);
    chain::pending(&transcript, path, session_id)
}

fn read(
    reader: impl BufRead,
    path: &Path,
    limits: &Limits,
    problems: &mut Vec<super::ImportProblem>,
) -> Transcript {
    let mut transcript = Transcript::default();
    let mut tools: HashMap<String, String> = HashMap::new();
    for_each_object(
        reader,
        path,
        limits.max_line_bytes,
        problems,
        |line, object| {
            if str_field(&object, "type") == Some("queue-operation") {
                transcript
                    .queued
                    .extend(queue::Operation::of(line, &object));
            } else if let Some(entry) = entry(line, &object, &mut tools) {
                transcript.push(entry, str_field(&object, "sourceToolAssistantUUID"));
            }
        },
    );
    transcript
}

/// The entry for one line, `None` for lines outside the tree (titles, snapshots, queue
/// operations: no `uuid`, and not a boundary or summary).
fn entry(
    line: u64,
    object: &Map<String, Value>,
    tools: &mut HashMap<String, String>,
) -> Option<Entry> {
    let kind = str_field(object, "type").unwrap_or("");
    let uuid = str_field(object, "uuid").unwrap_or("").to_string();
    let boundary = kind == "system" && str_field(object, "subtype") == Some("compact_boundary");
    let summary = kind == "user" && is_true(object, "isCompactSummary");
    if uuid.is_empty() && !boundary && !summary {
        return None;
    }
    let message = object.get("message").and_then(Value::as_object);
    let body = if boundary {
        Body::Boundary(boundary_of(object))
    } else if summary {
        Body::Summary(turns::blocks_text(message.and_then(|m| m.get("content"))))
    } else {
        match kind {
            "user" => Body::Turns(turns::group(
                &uuid,
                line,
                user_blocks(object, message, tools),
            )),
            "assistant" => Body::Turns(turns::group(
                &uuid,
                line,
                assistant_blocks(object, message, tools),
            )),
            "attachment" => Body::Turns(turns::group(&uuid, line, attachment_blocks(object))),
            _ => Body::Link,
        }
    };
    let text = |key: &str| str_field(object, key).map(str::to_string);
    let ids = |block_kind: &str, key: &str| -> Vec<String> {
        match message.and_then(|m| m.get("content")) {
            Some(Value::Array(blocks)) => blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some(block_kind))
                .filter_map(|b| b.get(key).and_then(Value::as_str))
                .map(str::to_string)
                .collect(),
            _ => Vec::new(),
        }
    };
    let (message_id, calls, answers) = match kind {
        "assistant" => (
            message.and_then(|m| str_field(m, "id")).map(str::to_string),
            ids("tool_use", "id"),
            Vec::new(),
        ),
        "user" => (None, Vec::new(), ids("tool_result", "tool_use_id")),
        _ => (None, Vec::new(), Vec::new()),
    };
    Some(Entry {
        line,
        uuid,
        parent: text("parentUuid"),
        session: text("sessionId"),
        agent: text("agentId"),
        cwd: text("cwd"),
        version: text("version"),
        sidechain: is_true(object, "isSidechain"),
        message_id,
        calls,
        answers,
        body,
    })
}

fn boundary_of(object: &Map<String, Value>) -> Boundary {
    let meta = object.get("compactMetadata").and_then(Value::as_object);
    let meta_str = |key: &str| meta.and_then(|m| str_field(m, key)).map(str::to_string);
    let segment = meta
        .and_then(|m| m.get("preservedSegment"))
        .and_then(Value::as_object);
    let segment_str = |key: &str| segment.and_then(|s| str_field(s, key)).map(str::to_string);
    let mut preserved = Vec::new();
    if let Some(kept) = meta
        .and_then(|m| m.get("preservedMessages"))
        .and_then(Value::as_object)
    {
        for key in ["uuids", "allUuids"] {
            for uuid in kept
                .get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let Some(uuid) = uuid.as_str().filter(|u| !u.is_empty()) {
                    preserved.push(uuid.to_string());
                }
            }
        }
    }
    Boundary {
        logical_parent: str_field(object, "logicalParentUuid").map(str::to_string),
        trigger: meta_str("trigger").or_else(|| str_field(object, "trigger").map(str::to_string)),
        preserved_head: segment_str("headUuid"),
        preserved_tail: segment_str("tailUuid"),
        preserved,
    }
}

/// What a user text is: the human's words, a runtime note the model saw, or a command
/// wrapper that is left out.
#[derive(Debug, PartialEq, Eq)]
enum UserText {
    Human,
    Note,
    Wrapper,
}

const WRAPPERS: &[&str] = &[
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<command-contents>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
];
const NOTES: &[&str] = &[
    "<system-reminder>",
    "<task-notification>",
    "<user-prompt-submit-hook>",
    "[Request interrupted by user",
    "[SYSTEM NOTIFICATION",
];

fn classify(text: &str) -> UserText {
    let text = text.trim_start();
    if WRAPPERS.iter().any(|tag| text.starts_with(tag)) {
        UserText::Wrapper
    } else if NOTES.iter().any(|tag| text.starts_with(tag)) {
        UserText::Note
    } else {
        UserText::Human
    }
}

fn user_text(text: &str, meta: bool, out: &mut Vec<(Role, String)>) {
    match classify(text) {
        UserText::Human if !meta => out.push((Role::User, text.to_string())),
        UserText::Note if !meta => out.push((Role::Tool, text.to_string())),
        _ => {}
    }
}

fn user_blocks(
    object: &Map<String, Value>,
    message: Option<&Map<String, Value>>,
    tools: &HashMap<String, String>,
) -> Vec<(Role, String)> {
    let meta = is_true(object, "isMeta");
    let mut out = Vec::new();
    match message.and_then(|m| m.get("content")) {
        Some(Value::String(text)) => user_text(text, meta, &mut out),
        Some(Value::Array(blocks)) => {
            for block in blocks {
                let kind = block.get("type").and_then(Value::as_str).unwrap_or("");
                match kind {
                    "text" => user_text(
                        block.get("text").and_then(Value::as_str).unwrap_or(""),
                        meta,
                        &mut out,
                    ),
                    "tool_result" => out.push((Role::Tool, result_text(block, tools))),
                    _ if !meta => {
                        let text = turns::blocks_text(Some(block));
                        if !text.is_empty() {
                            out.push((Role::User, text));
                        }
                    }
                    _ => {}
                }
            }
        }
        _ => {}
    }
    out
}

fn result_text(block: &Value, tools: &HashMap<String, String>) -> String {
    let name = block
        .get("tool_use_id")
        .and_then(Value::as_str)
        .and_then(|id| tools.get(id))
        .map(String::as_str);
    let is_error = block.get("is_error").and_then(Value::as_bool) == Some(true);
    let output = match block.get("content") {
        Some(Value::Object(object)) => Value::Object(object.clone()).to_string(),
        other => turns::blocks_text(other),
    };
    turns::tool_result(name, is_error, &output)
}

fn assistant_blocks(
    object: &Map<String, Value>,
    message: Option<&Map<String, Value>>,
    tools: &mut HashMap<String, String>,
) -> Vec<(Role, String)> {
    let synthetic = message.and_then(|m| str_field(m, "model")) == Some("<synthetic>");
    if synthetic || is_true(object, "isApiErrorMessage") {
        return Vec::new();
    }
    let mut out = Vec::new();
    match message.and_then(|m| m.get("content")) {
        Some(Value::String(text)) => out.push((Role::Assistant, text.clone())),
        Some(Value::Array(blocks)) => {
            for block in blocks {
                let kind = block.get("type").and_then(Value::as_str).unwrap_or("");
                let name = block.get("name").and_then(Value::as_str).unwrap_or("");
                match kind {
                    "thinking" | "redacted_thinking" => {}
                    "tool_use" | "server_tool_use" | "mcp_tool_use" => {
                        if let Some(id) = block.get("id").and_then(Value::as_str) {
                            tools.insert(id.to_string(), name.to_string());
                        }
                        out.push((Role::Assistant, turns::tool_call(name, block.get("input"))));
                    }
                    _ if kind.ends_with("tool_result") => {
                        out.push((Role::Tool, result_text(block, tools)))
                    }
                    _ => {
                        if let Some(text) = block.get("text").and_then(Value::as_str) {
                            out.push((Role::Assistant, text.to_string()));
                        }
                    }
                }
            }
        }
        _ => {}
    }
    out
}

/// Context the runtime attaches: a queued prompt from the human is a `user` turn; the rest
/// (memory files, file snippets, hook output, reminders) is `tool` when it carries text.
fn attachment_blocks(object: &Map<String, Value>) -> Vec<(Role, String)> {
    let Some(attachment) = object.get("attachment").and_then(Value::as_object) else {
        return Vec::new();
    };
    let kind = str_field(attachment, "type").unwrap_or("attachment");
    if kind == "queued_command" {
        let origin = attachment
            .get("origin")
            .and_then(|o| o.get("kind"))
            .and_then(Value::as_str);
        let prompt = turns::blocks_text(attachment.get("prompt"));
        let human = matches!(origin, None | Some("human" | "user"));
        let role = if human && classify(&prompt) == UserText::Human {
            Role::User
        } else {
            Role::Tool
        };
        return vec![(role, prompt)];
    }
    // A hook's raw output is not context; what a hook adds to the context is.
    if kind.starts_with("hook_")
        && !matches!(kind, "hook_additional_context" | "hook_blocking_error")
    {
        return Vec::new();
    }
    let text = ["content", "snippet", "text", "prompt", "blockingError"]
        .iter()
        .find_map(|key| {
            let value = attachment.get(*key)?;
            let text = match value {
                Value::Object(inner) => turns::blocks_text(inner.get("content")),
                other => turns::blocks_text(Some(other)),
            };
            (!text.trim().is_empty()).then_some(text)
        });
    match text {
        Some(text) => vec![(Role::Tool, format!("[attachment: {kind}]\n{text}"))],
        None => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_wrappers_are_left_out_and_notes_are_tool_turns() {
        assert_eq!(
            classify("<command-name>/compact</command-name>"),
            UserText::Wrapper
        );
        assert_eq!(
            classify("  <local-command-stdout>x</local-command-stdout>"),
            UserText::Wrapper
        );
        assert_eq!(
            classify("<task-notification>\n<task-id>1</task-id>"),
            UserText::Note
        );
        assert_eq!(
            classify("[Request interrupted by user for tool use]"),
            UserText::Note
        );
        assert_eq!(classify("please run <command-name> later"), UserText::Human);
    }
}
