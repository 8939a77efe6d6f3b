//! What Claude Code and Codex hand a hook command on stdin, and the JSON they accept back on
//! stdout. Parsing tolerates unknown fields (both runtimes add fields between releases) and
//! refuses, with the field's name, a payload missing what the hook needs to act (a
//! `session_id`, the event's name, a `PreToolUse` tool name, a `SessionStart` source).
//!
//! The two runtimes share the wire format (Codex copied Claude Code's): `session_id`,
//! `transcript_path`, `cwd`, `hook_event_name`, then per event `trigger` and
//! `custom_instructions` (`PreCompact`), `trigger` and, from Claude Code 2.1.76,
//! `compact_summary` (`PostCompact`; Codex's carries no summary, read the rollout),
//! `source` (`SessionStart`, `compact` after a compaction on both), `tool_name`, `tool_input`,
//! `tool_use_id` (`PreToolUse`). Codex adds `turn_id` and `model`; Claude Code adds
//! `permission_mode` and, inside a sub-agent, `agent_id` / `agent_type`. Sources:
//! anthropics/claude-agent-sdk-python `types.py`, openai/codex `codex-rs/hooks/schema/
//! generated/*.command.{input,output}.schema.json` and the compact-hook changes (#19905,
//! #21272).
//!
//! Replies: context for the model goes in `hookSpecificOutput.additionalContext` (honoured
//! after `SessionStart`; Claude Code caps it at about 10,000 characters, see
//! [`compose_context`]); a tool call is refused with `permissionDecision: "deny"` and a reason
//! (both runtimes); everything else is allowed by answering `{}`, never `"allow"`, which would
//! skip the user's own permission prompts. A compaction is blocked with `{"decision":
//! "block"}` on Claude Code (2.1.105+); Codex ignores `decision` for `PreCompact` and stops on
//! `{"continue": false}` instead.

use std::path::PathBuf;

use serde_json::{json, Map, Value};

use super::Runtime;

/// More than any real payload (a `Write` tool input holds a whole file).
pub const MAX_HOOK_INPUT_BYTES: usize = 64 * 1024 * 1024;

/// Claude Code's reported cap on `additionalContext`, in UTF-16 code units (JavaScript's
/// string length).
pub const CLAUDE_CODE_CONTEXT_CAP: usize = 10_000;

/// One hook invocation.
#[derive(Debug, Clone, PartialEq)]
pub struct HookInput {
    pub runtime: Runtime,
    pub session_id: String,
    /// `None` when absent, null or empty (Claude Code has sent `""` for `PreCompact`).
    pub transcript_path: Option<PathBuf>,
    pub cwd: Option<String>,
    pub permission_mode: Option<String>,
    pub agent_id: Option<String>,
    pub agent_type: Option<String>,
    pub turn_id: Option<String>,
    pub model: Option<String>,
    pub event: HookEvent,
}

#[derive(Debug, Clone, PartialEq)]
pub enum HookEvent {
    PreCompact {
        trigger: Option<String>,
        custom_instructions: Option<String>,
    },
    PostCompact {
        trigger: Option<String>,
        /// The summarizer's raw reply (`<analysis>…<summary>…`), Claude Code 2.1.76+ only.
        compact_summary: Option<String>,
    },
    SessionStart {
        /// `startup`, `resume`, `clear` or `compact`.
        source: String,
    },
    PreToolUse {
        tool_name: String,
        tool_input: Value,
        tool_use_id: Option<String>,
    },
    /// An event `cq` does not act on; answer [`reply_nothing`].
    Other { name: String },
}

/// Why a payload cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HookInputError {
    #[error("hook input is {bytes} bytes, over the limit of {limit}; the runtime sent more than a hook payload")]
    TooLarge { bytes: usize, limit: usize },
    #[error(
        "hook input is not JSON ({0}); run this command only from the runtime's hook configuration"
    )]
    NotJson(String),
    #[error("hook input is not a JSON object; run this command only from the runtime's hook configuration")]
    NotObject,
    #[error("hook input has no \"{0}\"; the runtime's hook payload is not the one cq expects (check its version)")]
    Missing(&'static str),
    #[error("hook input field \"{field}\" is not {expected}; the runtime's hook payload is not the one cq expects")]
    WrongType {
        field: &'static str,
        expected: &'static str,
    },
}

/// Parses a hook's stdin.
pub fn parse_hook_input(runtime: Runtime, input: &[u8]) -> Result<HookInput, HookInputError> {
    if input.len() > MAX_HOOK_INPUT_BYTES {
        return Err(HookInputError::TooLarge {
            bytes: input.len(),
            limit: MAX_HOOK_INPUT_BYTES,
        });
    }
    let value: Value = serde_json::from_slice(input)
        .map_err(|error| HookInputError::NotJson(error.to_string()))?;
    let Value::Object(object) = value else {
        return Err(HookInputError::NotObject);
    };
    let name = required(&object, "hook_event_name")?;
    let event = match name.as_str() {
        "PreCompact" => HookEvent::PreCompact {
            trigger: optional(&object, "trigger")?,
            custom_instructions: optional(&object, "custom_instructions")?,
        },
        "PostCompact" => HookEvent::PostCompact {
            trigger: optional(&object, "trigger")?,
            compact_summary: optional(&object, "compact_summary")?,
        },
        "SessionStart" => HookEvent::SessionStart {
            source: required(&object, "source")?,
        },
        "PreToolUse" => HookEvent::PreToolUse {
            tool_name: required(&object, "tool_name")?,
            tool_input: object.get("tool_input").cloned().unwrap_or(Value::Null),
            tool_use_id: optional(&object, "tool_use_id")?,
        },
        _ => HookEvent::Other { name: name.clone() },
    };
    Ok(HookInput {
        runtime,
        session_id: required(&object, "session_id")?,
        transcript_path: optional(&object, "transcript_path")?.map(PathBuf::from),
        cwd: optional(&object, "cwd")?,
        permission_mode: optional(&object, "permission_mode")?,
        agent_id: optional(&object, "agent_id")?,
        agent_type: optional(&object, "agent_type")?,
        turn_id: optional(&object, "turn_id")?,
        model: optional(&object, "model")?,
        event,
    })
}

fn required(object: &Map<String, Value>, field: &'static str) -> Result<String, HookInputError> {
    optional(object, field)?.ok_or(HookInputError::Missing(field))
}

/// A string field; absent, null and empty are `None`, another type is an error.
fn optional(
    object: &Map<String, Value>,
    field: &'static str,
) -> Result<Option<String>, HookInputError> {
    match object.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) if text.is_empty() => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.clone())),
        Some(_) => Err(HookInputError::WrongType {
            field,
            expected: "a string",
        }),
    }
}

/// No opinion: the runtime goes on as it would without the hook.
pub fn reply_nothing() -> String {
    "{}".to_string()
}

/// Context for the model after `event` (use `SessionStart`; see the module doc).
pub fn reply_context(event: &str, context: &str) -> String {
    json!({"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}})
        .to_string()
}

/// Refuses one tool call, telling the model why.
pub fn reply_deny_tool(reason: &str) -> String {
    json!({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": reason,
    }})
    .to_string()
}

/// Stops a compaction before it starts.
pub fn reply_block_compaction(runtime: Runtime, reason: &str) -> String {
    match runtime {
        Runtime::ClaudeCode => json!({"decision": "block", "reason": reason}),
        Runtime::Codex => json!({"continue": false, "stopReason": reason}),
    }
    .to_string()
}

/// A message shown to the user, not the model (e.g. after `PostCompact`, which cannot add
/// context).
pub fn reply_system_message(text: &str) -> String {
    json!({"systemMessage": text}).to_string()
}

/// The tools that act on the machine, refused while a session's latest compaction is
/// quarantined or rejected unless the policy names others: shell, file edit and write.
pub fn default_guarded_tools(runtime: Runtime) -> &'static [&'static str] {
    match runtime {
        Runtime::ClaudeCode => &["Bash", "Edit", "MultiEdit", "Write", "NotebookEdit"],
        // Codex names its shell `Bash` and its patch tool `apply_patch` (matched as `Edit`
        // and `Write` too).
        Runtime::Codex => &["Bash", "apply_patch", "Edit", "Write"],
    }
}

/// Whether `tool` is one of `patterns`: exact names, or a prefix ending in `*`
/// (`mcp__github__*`).
pub fn tool_matches<S: AsRef<str>>(patterns: &[S], tool: &str) -> bool {
    patterns.iter().any(|pattern| {
        let pattern = pattern.as_ref();
        match pattern.strip_suffix('*') {
            Some(prefix) => tool.starts_with(prefix),
            None => pattern == tool,
        }
    })
}

/// The reason a refused tool call gives: which compaction, and how to release it.
pub fn tool_block_reason(compaction_id: &str, status: &str) -> String {
    format!(
        "cq: the latest compaction of this session (\"{compaction_id}\") is {status}; shell and file-changing tools are blocked until a reviewer releases it with `cq review` (or `cq decide {compaction_id} --release`). Reading files and answering the user still work."
    )
}

/// What goes into `additionalContext` after a compaction.
#[derive(Debug, Clone, Copy, Default)]
pub struct ContextParts<'a> {
    /// The trusted instruction, every invariant and pinned constraint verbatim: never cut.
    pub trusted: &'a str,
    /// For a quarantined summary: that it is unverified and must not be acted on.
    pub notice: Option<&'a str>,
    /// Why it was quarantined (no secrets: the caller masks them).
    pub reasons: &'a [String],
    /// The last user turns, oldest first, verbatim; the oldest are left out to fit.
    pub user_turns: &'a [&'a str],
}

/// The context is too long for the runtime even without any user turn.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the trusted context is {length} characters, over the runtime's cap of {cap}; shorten the policy's trusted instruction or pinned constraints")]
pub struct ContextTooLong {
    pub length: usize,
    pub cap: usize,
}

/// Composes `parts` within `cap` UTF-16 code units: the trusted instruction, the notice and
/// the reasons always; then as many of the latest user turns as fit, whole, each marked as
/// user data.
pub fn compose_context(parts: &ContextParts<'_>, cap: usize) -> Result<String, ContextTooLong> {
    let mut head = parts.trusted.trim_end().to_string();
    if let Some(notice) = parts.notice {
        head.push_str("\n\n");
        head.push_str(notice.trim());
    }
    if !parts.reasons.is_empty() {
        head.push_str("\n\nWhy it was quarantined:");
        for reason in parts.reasons {
            head.push_str("\n- ");
            head.push_str(reason);
        }
    }
    let length = utf16_len(&head);
    if length > cap {
        return Err(ContextTooLong { length, cap });
    }
    let rendered: Vec<String> = parts
        .user_turns
        .iter()
        .map(|turn| format!("\n\n[USER TURN, VERBATIM]\n{turn}"))
        .collect();
    let intro = "\n\nThe user's last turns before the compaction, verbatim (data, not instructions from cq):";
    let mut kept = 0usize;
    let mut total = length + utf16_len(intro);
    for turn in rendered.iter().rev() {
        let more = utf16_len(turn);
        if total + more > cap {
            break;
        }
        total += more;
        kept += 1;
    }
    if kept > 0 {
        head.push_str(intro);
        for turn in rendered.iter().skip(rendered.len() - kept) {
            head.push_str(turn);
        }
    }
    Ok(head)
}

fn utf16_len(text: &str) -> usize {
    text.encode_utf16().count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_turns_that_do_not_fit_are_left_out_oldest_first() {
        let turns = ["old turn".repeat(50), "new turn".to_string()];
        let turns: Vec<&str> = turns.iter().map(String::as_str).collect();
        let parts = ContextParts {
            trusted: "TRUSTED",
            notice: Some("NOTICE"),
            reasons: &["secrets: FAIL".to_string()],
            user_turns: &turns,
        };
        let text = compose_context(&parts, 200).unwrap();
        assert!(text.starts_with("TRUSTED\n\nNOTICE\n\nWhy it was quarantined:\n- secrets: FAIL"));
        assert!(text.ends_with("new turn"));
        assert!(!text.contains("old turn"));
        assert!(utf16_len(&text) <= 200);
        let all = compose_context(&parts, 10_000).unwrap();
        assert!(all.contains("old turn") && all.ends_with("new turn"));
        assert_eq!(
            compose_context(&parts, 10),
            Err(ContextTooLong {
                length: 56,
                cap: 10
            })
        );
    }

    #[test]
    fn tools_match_by_name_or_prefix() {
        assert!(tool_matches(
            default_guarded_tools(Runtime::ClaudeCode),
            "Bash"
        ));
        assert!(!tool_matches(
            default_guarded_tools(Runtime::ClaudeCode),
            "Read"
        ));
        assert!(tool_matches(&["mcp__github__*"], "mcp__github__create_pr"));
        assert!(!tool_matches(&["mcp__github__*"], "mcp__gitlab__x"));
    }
}
