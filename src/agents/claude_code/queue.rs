//! Messages the user typed while the agent was busy. Claude Code 2.1.x records them as
//! `{"type":"queue-operation","operation":"enqueue","content":…}` lines, outside the tree (no
//! `uuid`); the runtime takes one off the queue with `dequeue` (it becomes the next prompt, a
//! real `user` line) or `remove` (it is handed to the model mid-turn, which in 2.1.39 writes
//! no line at all and in later builds a `queued_command` attachment; or the user took it back
//! to edit it, which the data cannot tell apart). So an enqueued text is a user turn of the
//! span it was typed in, at its own line, unless the next human turn after it (a `user` line
//! or a `queued_command` attachment) already carries that text, as the whole prompt or whole
//! lines of it: then that line is the turn, and the text is not counted twice. A removed
//! message the user took back and edited still counts as typed (the data cannot tell).
//!
//! The runtime also queues its own notes (`<task-notification>` when a background task ends,
//! `[SYSTEM NOTIFICATION …]` banners): those are not the user and never become user turns
//! (the model gets them as a `user` line of their own, read as a `tool` turn).

use serde_json::{Map, Value};

use super::{classify, Body, Transcript, UserText};
use crate::agents::lines::str_field;
use crate::agents::turns::{Role, Turn};

/// One `queue-operation` line.
#[derive(Debug)]
pub(in crate::agents) struct Operation {
    line: u64,
    session: Option<String>,
    enqueue: bool,
    content: String,
}

impl Operation {
    pub(super) fn of(line: u64, object: &Map<String, Value>) -> Option<Operation> {
        let operation = str_field(object, "operation")?;
        Some(Operation {
            line,
            session: str_field(object, "sessionId").map(str::to_string),
            enqueue: operation == "enqueue",
            content: crate::agents::turns::blocks_text(object.get("content")),
        })
    }
}

/// The user turns queued in `session` on lines strictly between `after` and `before`.
pub(super) fn queued_turns(
    transcript: &Transcript,
    session: &Option<String>,
    after: u64,
    before: u64,
) -> Vec<Turn> {
    let first = transcript.queued.partition_point(|op| op.line <= after);
    transcript
        .queued
        .get(first..)
        .unwrap_or_default()
        .iter()
        .take_while(|op| op.line < before)
        .filter(|op| op.enqueue && (op.session.is_none() || op.session == *session))
        .filter(|op| !op.content.trim().is_empty() && classify(&op.content) == UserText::Human)
        .filter(|op| !delivered_as_line(transcript, op))
        .map(|op| Turn {
            id: format!("queued@{}", op.line),
            line: op.line,
            role: Role::User,
            content: op.content.clone(),
        })
        .collect()
}

/// Whether the first human turn after `op` (same session) carries its text.
fn delivered_as_line(transcript: &Transcript, op: &Operation) -> bool {
    let wanted = op.content.trim();
    let first = transcript
        .humans
        .partition_point(|&i| transcript.entry(i).is_some_and(|e| e.line <= op.line));
    let next = transcript
        .humans
        .get(first..)
        .unwrap_or_default()
        .iter()
        .filter_map(|&i| transcript.entry(i))
        .find(|e| op.session.is_none() || e.session == op.session);
    let Some(Body::Turns(turns)) = next.map(|e| &e.body) else {
        return false;
    };
    turns
        .iter()
        .any(|turn| turn.role == Role::User && carries(&turn.content, wanted))
}

/// Whether a user turn's `text` is `wanted`, or holds it as whole lines (the runtime joins
/// several queued messages into one prompt, a line each).
fn carries(text: &str, wanted: &str) -> bool {
    text.trim() == wanted
        || text.lines().any(|line| line.trim() == wanted)
        || (wanted.contains('\n') && text.contains(wanted))
}

#[cfg(test)]
mod tests {
    use super::carries;

    #[test]
    fn a_queued_text_is_carried_only_as_the_whole_prompt_or_whole_lines_of_it() {
        assert!(carries("  check again\n", "check again"));
        assert!(carries("fix the test\ncheck again", "check again"));
        assert!(carries("a\nline one\nline two\n", "line one\nline two"));
        assert!(!carries("yes, but check again later", "check again"));
        assert!(!carries("yes do it", "yes"));
    }
}
