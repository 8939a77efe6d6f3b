//! Codex rollouts: one `{"timestamp", "type", "payload"}` object a line (`session_meta`,
//! `turn_context`, `response_item`, `event_msg`, `compacted`, …; older rollouts wrote response
//! items bare and the session header without a type, both read too). A compaction is a
//! `compacted` line: `message` is the summary for a local compaction (the template's prefix,
//! a newline, the summary) and empty for a remote one, whose `replacement_history` carries the
//! model's new context as a `compaction` item with `encrypted_content` that cannot be read.
//!
//! Decided from the data and from `codex-rs` (`compact.rs`, `compact_remote.rs`):
//! - The source of a compaction is the history before its `compacted` line, back to the
//!   session's previous compaction: the previous compaction's `replacement_history` (what the
//!   model was given then: the user turns it kept verbatim and the summary, carried as an
//!   `assistant` turn; environment and instruction wrappers left out), or its summary alone
//!   when an older rollout kept no history, then every `response_item` since. `event_msg`
//!   lines repeat response items for the UI and are not read.
//! - Several sessions in one file (a collage, or a fork that starts with its parent's header):
//!   a `session_meta` with another id starts a new session, with an empty history.
//! - A remote compaction (an encrypted `compaction` item in `replacement_history`, or no
//!   summary text) is [`ImportedSummary::Unreadable`]: the model's context after it is not
//!   text `cq` can check.
//! - Turns: user and assistant messages by role (developer and system messages are the
//!   runtime's instructions and left out, as are reasoning items); function, custom, shell,
//!   web-search and tool-search calls are `assistant` turns, their outputs `tool` turns;
//!   messages from other agents are `tool` turns. Ids are `L<line>` (and `L<line>.<n>` for
//!   items carried in a `replacement_history`), since rollout items have no stable id.

use std::collections::HashMap;
use std::io::BufRead;
use std::path::Path;

use serde_json::{Map, Value};

use super::lines::{for_each_object, str_field};
use super::turns::{self, placeholder, Role, Turn, TurnList};
use super::{
    strip_codex_summary, FileImport, ImportedCompaction, ImportedSummary, Limits, PendingSource,
    Runtime,
};

const ITEM_TYPES: &[&str] = &[
    "message",
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "local_shell_call",
    "reasoning",
    "web_search_call",
];

#[derive(Default)]
struct Session {
    id: Option<String>,
    cwd: Option<String>,
    version: Option<String>,
}

#[derive(Default)]
struct State {
    session: Session,
    /// The history since the previous compaction, and which turn carries its summary.
    history: Vec<Turn>,
    carried: Option<String>,
    tools: HashMap<String, String>,
    /// No `session_meta` seen yet (an old rollout's bare header may still come).
    headless: bool,
    compactions: Vec<ImportedCompaction>,
}

pub(super) fn import(reader: impl BufRead, path: &Path, limits: &Limits) -> FileImport {
    let mut problems = Vec::new();
    let state = read(reader, path, limits, &mut problems);
    FileImport {
        compactions: state.compactions,
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
    let state = read(reader, path, limits, &mut problems);
    let id = state.session.id.clone().unwrap_or_else(|| file_stem(path));
    if session_id.is_some_and(|wanted| wanted != id) {
        return None;
    }
    let mut list = TurnList::default();
    for turn in &state.history {
        list.push(turn);
    }
    if list.is_empty() {
        return None;
    }
    Some(PendingSource {
        project: state
            .session
            .cwd
            .clone()
            .unwrap_or_else(|| "unknown".into()),
        session_id: id,
        messages: list.into_messages(),
        notes: Vec::new(),
    })
}

fn read(
    reader: impl BufRead,
    path: &Path,
    limits: &Limits,
    problems: &mut Vec<super::ImportProblem>,
) -> State {
    let mut state = State {
        headless: true,
        ..State::default()
    };
    for_each_object(
        reader,
        path,
        limits.max_line_bytes,
        problems,
        |line, object| {
            let kind = str_field(&object, "type").unwrap_or("");
            let payload = object.get("payload").and_then(Value::as_object);
            match (kind, payload) {
                ("session_meta", Some(payload)) => state.session_meta(payload),
                ("turn_context", Some(payload)) if state.session.cwd.is_none() => {
                    state.session.cwd = str_field(payload, "cwd").map(str::to_string);
                }
                ("response_item", Some(payload)) => state.item(line, payload),
                ("compacted", Some(payload)) => state.compacted(line, payload, path),
                // Rollouts before the typed envelope: a bare header, then bare items.
                ("", None)
                    if object.contains_key("id")
                        && object.contains_key("timestamp")
                        && state.headless =>
                {
                    state.session_meta(&object);
                }
                (kind, None) if ITEM_TYPES.contains(&kind) => state.item(line, &object),
                _ => {}
            }
        },
    );
    state
}

impl State {
    fn session_meta(&mut self, payload: &Map<String, Value>) {
        let id = str_field(payload, "id")
            .or_else(|| str_field(payload, "session_id"))
            .map(str::to_string);
        if id != self.session.id {
            self.history.clear();
            self.carried = None;
            self.tools.clear();
        }
        self.headless = false;
        self.session = Session {
            id,
            cwd: str_field(payload, "cwd").map(str::to_string),
            version: str_field(payload, "cli_version").map(str::to_string),
        };
    }

    fn item(&mut self, line: u64, item: &Map<String, Value>) {
        let id = format!("L{line}");
        if let Some((role, text)) = item_turn(item, &mut self.tools) {
            self.history
                .extend(turns::group(&id, line, vec![(role, text)]));
        }
    }

    fn compacted(&mut self, line: u64, payload: &Map<String, Value>, path: &Path) {
        let message = payload.get("message").and_then(Value::as_str).unwrap_or("");
        let history = payload.get("replacement_history").and_then(Value::as_array);
        let encrypted = history.is_some_and(|items| {
            items.iter().any(|item| {
                let kind = item.get("type").and_then(Value::as_str).unwrap_or("");
                matches!(
                    kind,
                    "compaction" | "compaction_summary" | "context_compaction"
                ) || (message.trim().is_empty() && item.get("encrypted_content").is_some())
            })
        });
        let summary = if encrypted {
            ImportedSummary::Unreadable {
                why: "remote compaction: the model was given encrypted_content that cq cannot read, so the summary cannot be checked".into(),
            }
        } else {
            let text = strip_codex_summary(message);
            if text.is_empty() {
                ImportedSummary::Unreadable {
                    why: "the compacted line carries no summary text, so what the model was given cannot be checked".into(),
                }
            } else {
                ImportedSummary::Text(text)
            }
        };
        let mut list = TurnList::default();
        let mut carried = None;
        for turn in &self.history {
            let id = list.push(turn);
            if id.is_some() && self.carried.as_deref() == Some(turn.id.as_str()) {
                carried = id;
            }
        }
        let mut notes = Vec::new();
        if self.headless {
            notes.push(
                "no session_meta line precedes this compaction; the session id is the file's name"
                    .to_string(),
            );
        }
        let (messages, unverifiable) = if list.is_empty() {
            (
                vec![placeholder()],
                Some("none of the turns this compaction summarized are in the rollout, so it cannot be checked against them".to_string()),
            )
        } else {
            (list.into_messages(), None)
        };
        let session_id = self.session.id.clone().unwrap_or_else(|| file_stem(path));
        let own = str_field(payload, "window_id")
            .map_or_else(|| format!("line-{line}"), |w| format!("window-{w}"));
        self.compactions.push(ImportedCompaction {
            runtime: Runtime::Codex,
            file: path.to_path_buf(),
            line,
            key: format!("codex:{session_id}:{own}"),
            project: self.session.cwd.clone().unwrap_or_else(|| "unknown".into()),
            session_id,
            agent_id: None,
            messages,
            carried_summary_id: carried,
            summary,
            trigger: str_field(payload, "trigger").map(str::to_string),
            runtime_version: self.session.version.clone(),
            unverifiable,
            notes,
        });
        self.carry(line, if encrypted { "" } else { message }, history);
    }

    /// After a compaction the model's context is its replacement history (or, in rollouts that
    /// kept none, its summary): that starts the next compaction's source. Encrypted items are
    /// not text and are not carried; neither is the message of a remote compaction.
    fn carry(&mut self, line: u64, message: &str, history: Option<&Vec<Value>>) {
        self.history.clear();
        self.carried = None;
        let mut carried_summary = false;
        for (n, item) in history.into_iter().flatten().enumerate() {
            let Some(item) = item.as_object() else {
                continue;
            };
            let id = format!("L{line}.{}", n + 1);
            let is_message = str_field(item, "type") == Some("message");
            let text = turns::blocks_text(item.get("content"));
            if is_message && str_field(item, "role") == Some("user") && is_summary(&text) {
                self.carried = Some(id.clone());
                carried_summary = true;
                self.history.push(Turn {
                    id,
                    line,
                    role: Role::Assistant,
                    content: text,
                });
            } else if let Some((role, text)) = item_turn(item, &mut self.tools) {
                self.history
                    .extend(turns::group(&id, line, vec![(role, text)]));
            }
        }
        if !carried_summary && !message.trim().is_empty() {
            let id = format!("L{line}");
            self.carried = Some(id.clone());
            self.history.push(Turn {
                id,
                line,
                role: Role::Assistant,
                content: message.to_string(),
            });
        }
    }
}

/// Whether a user message is a compaction summary the runtime put back into the history.
fn is_summary(text: &str) -> bool {
    strip_codex_summary(text) != text.trim()
}

/// User-role text the runtime writes (environment, instructions, skills, aborted-turn
/// markers) rather than the human.
fn is_runtime_context(text: &str) -> bool {
    let text = text.trim_start();
    const MARKERS: &[&str] = &[
        "<environment_context>",
        "<user_instructions>",
        "# agents.md instructions",
        "<instructions>",
        "<turn_aborted>",
        "<context_update>",
        "<skills_instructions>",
        "<skill>",
        "<user_shell_command>",
        "<collaboration_mode>",
        "<permissions instructions>",
    ];
    let head: String = text
        .chars()
        .take(40)
        .collect::<String>()
        .to_ascii_lowercase();
    MARKERS.iter().any(|marker| head.starts_with(marker))
}

/// One response item as a turn, `None` for items that are not (reasoning, snapshots,
/// developer instructions, encrypted compaction items, unknown types).
fn item_turn(
    item: &Map<String, Value>,
    tools: &mut HashMap<String, String>,
) -> Option<(Role, String)> {
    let kind = str_field(item, "type")?;
    let name = str_field(item, "name").unwrap_or("");
    let call_id = str_field(item, "call_id");
    let remember = |tools: &mut HashMap<String, String>, name: &str| {
        if let Some(id) = call_id {
            tools.insert(id.to_string(), name.to_string());
        }
    };
    match kind {
        "message" => {
            let text = turns::blocks_text(item.get("content"));
            match str_field(item, "role")? {
                "user" if is_runtime_context(&text) => None,
                "user" if text.trim_start().starts_with("<subagent_notification>") => {
                    Some((Role::Tool, text))
                }
                "user" => Some((Role::User, text)),
                "assistant" => Some((Role::Assistant, text)),
                _ => None,
            }
        }
        "function_call" => {
            remember(tools, name);
            Some((
                Role::Assistant,
                turns::tool_call(name, item.get("arguments")),
            ))
        }
        "custom_tool_call" => {
            remember(tools, name);
            Some((Role::Assistant, turns::tool_call(name, item.get("input"))))
        }
        "local_shell_call" => {
            remember(tools, "shell");
            let command = item.get("action").and_then(|a| a.get("command"));
            Some((Role::Assistant, turns::tool_call("shell", command)))
        }
        "web_search_call" => Some((
            Role::Assistant,
            turns::tool_call("web_search", item.get("action")),
        )),
        "tool_search_call" => {
            remember(tools, "tool_search");
            Some((
                Role::Assistant,
                turns::tool_call("tool_search", item.get("arguments")),
            ))
        }
        "image_generation_call" => Some((
            Role::Assistant,
            turns::tool_call("image_generation", item.get("revised_prompt")),
        )),
        "function_call_output" | "custom_tool_call_output" | "tool_search_output" => {
            let name = call_id.and_then(|id| tools.get(id)).map(String::as_str);
            let output = match item.get("output").or_else(|| item.get("tools")) {
                Some(Value::Object(object)) => object
                    .get("content")
                    .or_else(|| object.get("text"))
                    .map(|inner| turns::blocks_text(Some(inner)))
                    .unwrap_or_else(|| Value::Object(object.clone()).to_string()),
                Some(Value::Array(items)) if kind == "tool_search_output" => {
                    Value::Array(items.clone()).to_string()
                }
                other => turns::blocks_text(other),
            };
            let failed = item
                .get("output")
                .and_then(|o| o.get("success"))
                .and_then(Value::as_bool)
                == Some(false);
            Some((Role::Tool, turns::tool_result(name, failed, &output)))
        }
        "agent_message" => {
            let author = str_field(item, "author").unwrap_or("another agent");
            let text = turns::blocks_text(item.get("content"));
            Some((
                Role::Tool,
                format!("[message from agent: {author}]\n{text}"),
            ))
        }
        _ => None,
    }
}

fn file_stem(path: &Path) -> String {
    path.file_stem()
        .map(|stem| stem.to_string_lossy().into_owned())
        .unwrap_or_default()
}
