//! Turns as the gate needs them: roles exactly `user`, `assistant` or `tool`, no empty or
//! whitespace-only content, and `message_id`s unique within one compaction (a repeated id gets
//! `@LINE`, then `#N`, appended). Also the one readable rendering of tool calls and results
//! both runtimes share, and the placeholder for a compaction whose turns are missing.

use std::collections::HashSet;

use serde_json::Value;

use crate::engine::SourceMessage;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    User,
    Assistant,
    Tool,
}

impl Role {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }
}

/// One turn before ids are made unique: the transcript's own id for it and its line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Turn {
    pub id: String,
    pub line: u64,
    pub role: Role,
    pub content: String,
}

/// Collects a compaction's turns in order, dropping empty ones and making ids unique.
#[derive(Default)]
pub(crate) struct TurnList {
    messages: Vec<SourceMessage>,
    used: HashSet<String>,
}

impl TurnList {
    pub(crate) fn push(&mut self, turn: &Turn) -> Option<String> {
        if turn.content.trim().is_empty() {
            return None;
        }
        let base = if turn.id.is_empty() {
            format!("line-{}", turn.line)
        } else {
            turn.id.clone()
        };
        let mut id = base.clone();
        if self.used.contains(&id) {
            id = format!("{base}@{}", turn.line);
        }
        let mut n = 2u32;
        while self.used.contains(&id) {
            id = format!("{base}@{}#{n}", turn.line);
            n += 1;
        }
        self.used.insert(id.clone());
        self.messages.push(SourceMessage {
            message_id: id.clone(),
            role: turn.role.as_str().to_string(),
            content: turn.content.clone(),
        });
        Some(id)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    pub(crate) fn into_messages(self) -> Vec<SourceMessage> {
        self.messages
    }
}

/// The one turn a compaction gets when none of its summarized turns could be found.
pub(crate) fn placeholder() -> SourceMessage {
    SourceMessage {
        message_id: "cq-missing-source".into(),
        role: "tool".into(),
        content: "[cq: the turns this compaction summarized are not in the transcript]".into(),
    }
}

/// Splits one transcript line's blocks into turns: consecutive blocks of the same role form
/// one turn (joined by a blank line); the first turn keeps `id`, the next get `#2`, `#3`.
pub(crate) fn group(id: &str, line: u64, blocks: Vec<(Role, String)>) -> Vec<Turn> {
    let mut turns: Vec<Turn> = Vec::new();
    for (role, text) in blocks {
        if text.trim().is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some(last) if last.role == role => {
                last.content.push_str("\n\n");
                last.content.push_str(&text);
            }
            _ => {
                let id = match turns.len() {
                    0 => id.to_string(),
                    n => format!("{id}#{}", n + 1),
                };
                turns.push(Turn {
                    id,
                    line,
                    role,
                    content: text,
                });
            }
        }
    }
    turns
}

/// `[tool call: NAME]` and the call's input, compact JSON or the raw text it was given as.
pub(crate) fn tool_call(name: &str, input: Option<&Value>) -> String {
    let payload = match input {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
    };
    let name = if name.is_empty() { "unnamed" } else { name };
    if payload.is_empty() {
        format!("[tool call: {name}]")
    } else {
        format!("[tool call: {name}]\n{payload}")
    }
}

/// `[tool result: NAME]` (or `[tool result: NAME, error]`) and the output's text.
pub(crate) fn tool_result(name: Option<&str>, is_error: bool, output: &str) -> String {
    let head = match (name, is_error) {
        (Some(name), false) => format!("[tool result: {name}]"),
        (Some(name), true) => format!("[tool result: {name}, error]"),
        (None, false) => "[tool result]".to_string(),
        (None, true) => "[tool result, error]".to_string(),
    };
    if output.trim().is_empty() {
        format!("{head}\n(no output)")
    } else {
        format!("{head}\n{output}")
    }
}

/// Text of a content value that is a string or a list of blocks: text blocks verbatim,
/// images and documents as `[image]` / `[document]`, other blocks by their `text` if any.
pub(crate) fn blocks_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(blocks)) => {
            let parts: Vec<String> = blocks.iter().filter_map(block_text).collect();
            parts.join("\n")
        }
        Some(Value::Object(_)) => content.and_then(block_text).unwrap_or_default(),
        _ => String::new(),
    }
}

fn block_text(block: &Value) -> Option<String> {
    if let Some(text) = block.as_str() {
        return Some(text.to_string());
    }
    let kind = block.get("type").and_then(Value::as_str).unwrap_or("");
    if kind.contains("image") {
        return Some("[image]".into());
    }
    if kind == "document" {
        return Some("[document]".into());
    }
    if kind.contains("encrypted") {
        return Some("[encrypted content]".into());
    }
    block
        .get("text")
        .and_then(Value::as_str)
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turn(id: &str, line: u64, content: &str) -> Turn {
        Turn {
            id: id.into(),
            line,
            role: Role::User,
            content: content.into(),
        }
    }

    #[test]
    fn repeated_ids_are_made_unique_and_blank_turns_dropped() {
        let mut list = TurnList::default();
        assert_eq!(list.push(&turn("a", 1, "x")), Some("a".into()));
        assert_eq!(list.push(&turn("a", 2, "y")), Some("a@2".into()));
        assert_eq!(list.push(&turn("a", 2, "z")), Some("a@2#2".into()));
        assert_eq!(list.push(&turn("b", 3, " \n\t")), None);
        assert_eq!(list.push(&turn("", 4, "w")), Some("line-4".into()));
        assert_eq!(list.into_messages().len(), 4);
    }

    #[test]
    fn blocks_of_one_role_form_one_turn() {
        let turns = group(
            "u",
            7,
            vec![
                (Role::Tool, "r1".into()),
                (Role::Tool, "r2".into()),
                (Role::User, "hi".into()),
                (Role::User, "  ".into()),
            ],
        );
        assert_eq!(turns.len(), 2);
        assert_eq!(turns[0].id, "u");
        assert_eq!(turns[0].content, "r1\n\nr2");
        assert_eq!(turns[1].id, "u#2");
    }
}
