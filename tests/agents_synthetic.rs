//! Transcripts written for the cases the fixtures do not hold: several compactions in one
//! file, bad lines (not JSON, not UTF-8, over the cap), hostile values, sub-agents, runtime
//! notes, and Codex local, remote and old-format compactions.

#![allow(clippy::unwrap_used)]

use std::path::Path;

use cq::agents::{import_reader, pending_source, FileImport, ImportedSummary, Limits, Runtime};
use serde_json::{json, Value};

const PREAMBLE: &str = "This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\n";
const CODEX_PREFIX: &str = "You are resuming an in-progress task after context compaction. Another language model produced a handoff summary. Treat the summary as authoritative for what is already done. Continue from the \"Next steps\" for the active task; do not re-open completed tasks or audit prior work unless the user explicitly asked. You also have access to the state of the tools that were used by that language model. Here is the summary:\n";

fn jsonl(lines: &[Value]) -> Vec<u8> {
    lines
        .iter()
        .map(|line| format!("{line}\n"))
        .collect::<String>()
        .into_bytes()
}

fn claude(bytes: &[u8], limits: &Limits) -> FileImport {
    import_reader(
        bytes,
        Path::new("/p/-home-u-proj/s.jsonl"),
        Runtime::ClaudeCode,
        limits,
    )
}

fn codex(bytes: &[u8]) -> FileImport {
    import_reader(
        bytes,
        Path::new("rollout-x.jsonl"),
        Runtime::Codex,
        &Limits::default(),
    )
}

fn user(uuid: &str, parent: Option<&str>, content: Value) -> Value {
    json!({"type": "user", "uuid": uuid, "parentUuid": parent, "sessionId": "s", "cwd": "/home/u/proj",
           "version": "2.1.90", "message": {"role": "user", "content": content}})
}

fn assistant(uuid: &str, parent: &str, content: Value) -> Value {
    json!({"type": "assistant", "uuid": uuid, "parentUuid": parent, "sessionId": "s",
           "message": {"role": "assistant", "model": "claude-opus-4-6", "content": content}})
}

fn boundary(uuid: &str, logical: &str) -> Value {
    json!({"type": "system", "subtype": "compact_boundary", "uuid": uuid, "parentUuid": null,
           "logicalParentUuid": logical, "sessionId": "s", "version": "2.1.90",
           "compactMetadata": {"trigger": "auto", "preTokens": 1}})
}

fn summary(uuid: &str, parent: &str, text: &str) -> Value {
    json!({"type": "user", "uuid": uuid, "parentUuid": parent, "sessionId": "s", "isCompactSummary": true,
           "isVisibleInTranscriptOnly": true, "message": {"role": "user", "content": format!("{PREAMBLE}{text}")}})
}

fn ids(import: &FileImport, index: usize) -> Vec<&str> {
    import.compactions[index]
        .messages
        .iter()
        .map(|m| m.message_id.as_str())
        .collect()
}

fn two_compactions() -> Vec<Value> {
    vec![
        user("u1", None, json!("Fix the login bug.")),
        assistant("a1", "u1", json!([{"type": "thinking", "thinking": "hidden"}, {"type": "text", "text": "On it."}])),
        boundary("b1", "a1"),
        summary("s1", "b1", "Summary:\n1. The user asked to fix the login bug."),
        user("u2", Some("s1"), json!("Now run the tests.")),
        assistant("a2", "u2", json!([{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "cargo test"}}])),
        user("r2", Some("a2"), json!([{"type": "tool_result", "tool_use_id": "t1", "content": "ok", "is_error": false}])),
        boundary("b2", "r2"),
        summary("s2", "b2", "Summary:\n1. Tests pass.\n\nIf you need specific details from before compaction (like exact code snippets, error messages, or content you generated), read the full transcript at: /home/u/.claude/projects/p/s.jsonl"),
    ]
}

#[test]
fn each_of_several_compactions_summarizes_the_turns_since_the_previous_one() {
    let import = claude(&jsonl(&two_compactions()), &Limits::default());
    assert!(import.problems.is_empty());
    assert_eq!(ids(&import, 0), ["u1", "a1"]);
    assert_eq!(ids(&import, 1), ["s1", "u2", "a2", "r2"]);
    let second = &import.compactions[1];
    assert_eq!(second.carried_summary_id.as_deref(), Some("s1"));
    assert_eq!(
        second.messages[0].role, "assistant",
        "a carried summary never speaks as the user"
    );
    assert_eq!(
        second.messages[2].content,
        "[tool call: Bash]\n{\"command\":\"cargo test\"}"
    );
    assert_eq!(
        (
            second.messages[3].role.as_str(),
            second.messages[3].content.as_str()
        ),
        ("tool", "[tool result: Bash]\nok")
    );
    assert_eq!(
        second.summary,
        ImportedSummary::Text("Summary:\n1. Tests pass.".into())
    );
    assert_eq!(
        import.compactions[0].messages[1].content, "On it.",
        "thinking is left out"
    );
    assert_eq!(second.key, "claude-code:s:-:b2");
    assert_eq!(second.project, "/home/u/proj");
    assert_eq!(second.runtime_version.as_deref(), Some("2.1.90"));
}

#[test]
fn bad_lines_are_reported_by_line_and_the_rest_is_imported() {
    let mut bytes = Vec::new();
    let lines = two_compactions();
    for (n, line) in lines.iter().enumerate() {
        bytes.extend_from_slice(format!("{line}\n").as_bytes());
        if n == 1 {
            bytes.extend_from_slice(b"{\"type\": \"user\", truncated\n");
            bytes.extend_from_slice(
                b"{\"type\":\"user\",\"uuid\":\"x\",\"message\":{\"content\":\"\xc3\x28\"}}\n",
            );
            bytes.extend_from_slice(format!("{{\"pad\":\"{}\"}}\n", "z".repeat(10_000)).as_bytes());
        }
    }
    let import = claude(
        &bytes,
        &Limits {
            max_line_bytes: 4096,
        },
    );
    let at: Vec<(u64, &str)> = import
        .problems
        .iter()
        .map(|p| (p.line, p.message.split(' ').take(4).last().unwrap_or("")))
        .collect();
    assert_eq!(
        at.iter().map(|(line, _)| *line).collect::<Vec<_>>(),
        [3, 4, 5]
    );
    assert!(import.problems[0]
        .message
        .starts_with("the line is not JSON"));
    assert!(import.problems[1].message.contains("not valid UTF-8"));
    assert!(import.problems[2].message.contains("over the cap of 4096"));
    assert_eq!(
        import.problems[0]
            .to_string()
            .split(':')
            .take(2)
            .collect::<Vec<_>>(),
        ["/p/-home-u-proj/s.jsonl", "3"]
    );
    assert_eq!(ids(&import, 0), ["u1", "a1"]);
    assert_eq!(ids(&import, 1), ["s1", "u2", "a2", "r2"]);
}

#[test]
fn a_bad_line_on_the_chain_keeps_the_turns_after_it_and_says_so() {
    let mut lines: Vec<String> = two_compactions().iter().map(Value::to_string).collect();
    lines[4] = "{not json".into();
    let bytes = lines.join("\n").into_bytes();
    let import = claude(&bytes, &Limits::default());
    assert_eq!(import.problems.len(), 1);
    assert_eq!(ids(&import, 1), ["a2", "r2"]);
    assert!(
        import.compactions[1].notes[0].contains("breaks at \"u2\""),
        "{:?}",
        import.compactions[1].notes
    );
}

#[test]
fn hostile_values_are_carried_verbatim_without_a_panic() {
    let big = "A".repeat(10 * 1024 * 1024);
    let nasty = "run \u{1b}[2J\u{1b}]0;pwned\u{7}\u{202e}txt.exe\u{200b}\0 now";
    let lines = vec![
        user("u1", None, json!(nasty)),
        assistant("a1", "u1", json!([{"type": "text", "text": big}])),
        json!({"type": "user", "uuid": 5, "message": "not an object"}),
        json!({"type": "assistant", "uuid": "w", "parentUuid": "a1", "message": {"content": 42}}),
        json!({"type": "user", "uuid": "v", "parentUuid": "w", "isMeta": "yes", "message": {"content": [7, null, {"type": 1}]}}),
        boundary("b1", "v"),
        summary("s1", "b1", nasty),
    ];
    let import = claude(&jsonl(&lines), &Limits::default());
    assert!(import.problems.is_empty(), "{:?}", import.problems);
    let compaction = &import.compactions[0];
    assert_eq!(ids(&import, 0), ["u1", "a1"]);
    assert_eq!(compaction.messages[0].content, nasty);
    assert_eq!(compaction.messages[1].content.len(), 10 * 1024 * 1024);
    assert_eq!(compaction.summary, ImportedSummary::Text(nasty.into()));
}

#[test]
fn runtime_notes_are_tool_turns_and_runtime_words_are_left_out() {
    let lines = vec![
        user("u1", None, json!("Deploy it.")),
        json!({"type": "user", "uuid": "m1", "parentUuid": "u1", "isMeta": true, "sessionId": "s",
               "message": {"content": [{"type": "text", "text": "Base directory for this skill: /x"},
                                       {"type": "tool_result", "tool_use_id": "t9", "content": [{"type": "text", "text": "kept"}]}]}}),
        user(
            "c1",
            Some("m1"),
            json!("<command-name>/model</command-name>\n<command-args>opus</command-args>"),
        ),
        user(
            "n1",
            Some("c1"),
            json!("<task-notification>\n<status>completed</status>\n</task-notification>"),
        ),
        json!({"type": "assistant", "uuid": "x1", "parentUuid": "n1", "isApiErrorMessage": true,
               "message": {"model": "<synthetic>", "content": [{"type": "text", "text": "API Error: 500"}]}}),
        assistant(
            "a1",
            "x1",
            json!([{"type": "text", "text": "\n\n"}, {"type": "text", "text": "Deployed."}]),
        ),
        json!({"type": "attachment", "uuid": "q1", "parentUuid": "a1", "attachment": {"type": "queued_command", "prompt": "also tag it"}}),
        json!({"type": "attachment", "uuid": "h1", "parentUuid": "q1", "attachment": {"type": "hook_success", "stdout": "{}", "content": ""}}),
        boundary("b1", "h1"),
        summary("s1", "b1", "Summary: deployed"),
    ];
    let import = claude(&jsonl(&lines), &Limits::default());
    let got: Vec<(&str, &str, &str)> = import.compactions[0]
        .messages
        .iter()
        .map(|m| (m.message_id.as_str(), m.role.as_str(), m.content.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("u1", "user", "Deploy it."),
            ("m1", "tool", "[tool result]\nkept"),
            (
                "n1",
                "tool",
                "<task-notification>\n<status>completed</status>\n</task-notification>"
            ),
            ("a1", "assistant", "Deployed."),
            ("q1", "user", "also tag it"),
        ]
    );
}

#[test]
fn a_sub_agent_compaction_is_keyed_by_its_agent() {
    let mut lines = two_compactions();
    for line in &mut lines {
        line["agentId"] = json!("a7f3");
        line["isSidechain"] = json!(true);
    }
    let import = import_reader(
        jsonl(&lines).as_slice(),
        Path::new("/p/-home-u-proj/s/subagents/agent-a7f3.jsonl"),
        Runtime::ClaudeCode,
        &Limits::default(),
    );
    assert_eq!(import.compactions[1].agent_id.as_deref(), Some("a7f3"));
    assert_eq!(import.compactions[1].key, "claude-code:s:a7f3:b2");
    assert_eq!(import.compactions[1].session_id, "s");
}

#[test]
fn a_boundary_whose_summary_never_came_is_unreadable() {
    let mut lines = two_compactions();
    lines.pop();
    let import = claude(&jsonl(&lines), &Limits::default());
    let ImportedSummary::Unreadable { why } = &import.compactions[1].summary else {
        panic!()
    };
    assert!(why.starts_with("no summary line follows"));
}

fn meta(id: &str, cwd: &str) -> Value {
    json!({"timestamp": "t", "type": "session_meta", "payload": {"id": id, "cwd": cwd, "cli_version": "0.52.0", "originator": "codex_cli_rs"}})
}

fn item(payload: Value) -> Value {
    json!({"timestamp": "t", "type": "response_item", "payload": payload})
}

fn message(role: &str, text: &str) -> Value {
    let kind = if role == "assistant" {
        "output_text"
    } else {
        "input_text"
    };
    item(json!({"type": "message", "role": role, "content": [{"type": kind, "text": text}]}))
}

fn compacted(message: &str, history: Option<Value>) -> Value {
    let mut payload = json!({"message": message});
    if let Some(history) = history {
        payload["replacement_history"] = history;
    }
    json!({"timestamp": "t", "type": "compacted", "payload": payload})
}

fn history_message(role: &str, text: &str) -> Value {
    json!({"type": "message", "role": role, "content": [{"type": "input_text", "text": text}]})
}

#[test]
fn a_local_codex_compaction_is_text_and_its_history_starts_the_next_source() {
    let summary_text = format!("{CODEX_PREFIX}## Progress\nfixed the bug");
    let lines = vec![
        meta("019a-s1", "/home/u/repo"),
        json!({"timestamp": "t", "type": "turn_context", "payload": {"cwd": "/elsewhere", "model": "gpt-5"}}),
        message(
            "user",
            "<environment_context>\n<cwd>/home/u/repo</cwd>\n</environment_context>",
        ),
        message("developer", "<permissions instructions>..."),
        message("user", "Fix the bug."),
        item(json!({"type": "reasoning", "summary": [], "encrypted_content": "gAAA"})),
        item(
            json!({"type": "function_call", "name": "shell", "arguments": "{\"command\":[\"ls\"]}", "call_id": "c1"}),
        ),
        item(json!({"type": "function_call_output", "call_id": "c1", "output": "a.rs\n"})),
        message("assistant", "Fixed."),
        json!({"timestamp": "t", "type": "event_msg", "payload": {"type": "agent_message", "message": "Fixed."}}),
        compacted(
            &summary_text,
            Some(json!([
                history_message("user", "<environment_context>x</environment_context>"),
                history_message("user", "Fix the bug."),
                history_message("user", &summary_text),
            ])),
        ),
        message("user", "Now add a test."),
        message("assistant", "Added."),
        compacted(&format!("{CODEX_PREFIX}second"), None),
    ];
    let import = codex(&jsonl(&lines));
    assert!(import.problems.is_empty());
    let first = &import.compactions[0];
    assert_eq!(ids(&import, 0), ["L5", "L7", "L8", "L9"]);
    assert_eq!(
        first.summary,
        ImportedSummary::Text("## Progress\nfixed the bug".into())
    );
    assert_eq!(
        first.messages[1].content,
        "[tool call: shell]\n{\"command\":[\"ls\"]}"
    );
    assert_eq!(first.messages[2].content, "[tool result: shell]\na.rs\n");
    assert_eq!(
        (first.project.as_str(), first.session_id.as_str()),
        ("/home/u/repo", "019a-s1")
    );
    assert_eq!(first.key, "codex:019a-s1:line-11");
    let second = &import.compactions[1];
    assert_eq!(ids(&import, 1), ["L11.2", "L11.3", "L12", "L13"]);
    assert_eq!(second.carried_summary_id.as_deref(), Some("L11.3"));
    assert_eq!(
        second.messages[0].role, "user",
        "a turn the runtime kept verbatim is still the user's"
    );
    assert_eq!(second.messages[1].role, "assistant");
    assert_eq!(second.summary, ImportedSummary::Text("second".into()));
}

#[test]
fn a_remote_codex_compaction_is_unreadable_and_its_encrypted_summary_is_not_carried() {
    let lines = vec![
        meta("019a-s2", "/r"),
        message("user", "Refactor the parser."),
        compacted(
            "",
            Some(json!([
                history_message("user", "Refactor the parser."),
                {"type": "compaction", "encrypted_content": "gAAAAB..."},
            ])),
        ),
        message("assistant", "Done."),
        compacted(
            "",
            Some(json!([{"type": "compaction_summary", "encrypted_content": "gAAAAC..."}])),
        ),
    ];
    let import = codex(&jsonl(&lines));
    for compaction in &import.compactions {
        let ImportedSummary::Unreadable { why } = &compaction.summary else {
            panic!()
        };
        assert!(why.starts_with("remote compaction"), "{why}");
    }
    assert_eq!(ids(&import, 1), ["L3.1", "L4"]);
    assert_eq!(import.compactions[1].carried_summary_id, None);
}

#[test]
fn old_codex_rollouts_and_new_sessions_in_one_file_are_read() {
    let lines = vec![
        json!({"id": "old-session", "timestamp": "2025-05-01T00:00:00Z", "instructions": null}),
        json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Hello."}]}),
        json!({"record_type": "state"}),
        json!({"type": "local_shell_call", "call_id": "c", "action": {"type": "exec", "command": ["ls"]}}),
        compacted("plain summary", None),
        meta("new-session", "/n"),
        message("user", "Other work."),
        compacted("other summary", None),
    ];
    let import = codex(&jsonl(&lines));
    assert_eq!(import.compactions.len(), 2);
    assert_eq!(import.compactions[0].session_id, "old-session");
    assert_eq!(ids(&import, 0), ["L2", "L4"]);
    assert_eq!(
        import.compactions[0].summary,
        ImportedSummary::Text("plain summary".into())
    );
    assert_eq!(import.compactions[0].project, "unknown");
    assert_eq!(import.compactions[1].session_id, "new-session");
    assert_eq!(
        ids(&import, 1),
        ["L7"],
        "a new session starts with an empty history"
    );
}

#[test]
fn codex_pending_source_is_the_history_since_the_last_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rollout.jsonl");
    let lines = vec![
        meta("s3", "/r"),
        message("user", "One."),
        compacted("first", None),
        message("user", "Two."),
    ];
    std::fs::write(&path, jsonl(&lines)).unwrap();
    let pending = pending_source(&path, Runtime::Codex, Some("s3"), &Limits::default())
        .unwrap()
        .unwrap();
    let got: Vec<(&str, &str)> = pending
        .messages
        .iter()
        .map(|m| (m.role.as_str(), m.content.as_str()))
        .collect();
    assert_eq!(got, [("assistant", "first"), ("user", "Two.")]);
    assert_eq!(
        pending_source(&path, Runtime::Codex, Some("other"), &Limits::default()).unwrap(),
        None
    );
}

#[test]
fn the_walker_recurses_in_order_and_skips_what_is_not_a_transcript() {
    let root = tempfile::tempdir().unwrap();
    let project = root.path().join("-home-u-proj");
    let subagents = project.join("s1").join("subagents");
    std::fs::create_dir_all(&subagents).unwrap();
    let transcript = jsonl(&two_compactions());
    std::fs::write(project.join("s2.jsonl"), &transcript).unwrap();
    std::fs::write(project.join("s1.jsonl"), &transcript).unwrap();
    std::fs::write(subagents.join("agent-a1.jsonl"), &transcript).unwrap();
    std::fs::write(project.join("notes.txt"), b"not a transcript").unwrap();
    std::fs::write(project.join("empty.jsonl"), b"\n\n").unwrap();
    std::fs::write(
        project.join("history.jsonl"),
        b"{\"display\":\"ls\",\"timestamp\":1}\n",
    )
    .unwrap();
    std::fs::write(
        root.path().join("rollout-2025.jsonl"),
        jsonl(&[meta("c", "/r"), message("user", "x")]),
    )
    .unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(root.path(), project.join("loop")).unwrap();
    let names = |runtime| -> Vec<String> {
        cq::agents::transcript_files(root.path(), runtime)
            .unwrap()
            .iter()
            .map(|f| {
                f.path
                    .strip_prefix(root.path())
                    .unwrap()
                    .display()
                    .to_string()
            })
            .collect()
    };
    assert_eq!(
        names(Runtime::ClaudeCode),
        [
            "-home-u-proj/s1/subagents/agent-a1.jsonl",
            "-home-u-proj/s1.jsonl",
            "-home-u-proj/s2.jsonl"
        ]
    );
    assert_eq!(names(Runtime::Codex), ["rollout-2025.jsonl"]);
    let one =
        cq::agents::transcript_files(&project.join("notes.txt"), Runtime::ClaudeCode).unwrap();
    assert_eq!(
        one.len(),
        1,
        "a file named on the command line is taken as it is"
    );
}

#[test]
fn the_last_user_turns_are_the_latest_ones_in_order() {
    let import = claude(&jsonl(&two_compactions()), &Limits::default());
    let messages = &import.compactions[1].messages;
    let last: Vec<&str> = cq::agents::last_user_turns(messages, 3)
        .iter()
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(last, ["Now run the tests."]);
    assert_eq!(Runtime::from_name("codex"), Some(Runtime::Codex));
    assert_eq!(Runtime::from_name("Codex"), None);
}
