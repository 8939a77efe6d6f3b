//! Hook payloads and replies (Claude Code's constructed payloads in
//! `tests/transcripts/claude-code-hooks/constructed/`, Codex's from its hook schemas), and
//! installing `cq`'s hook entries into settings files: round trips to the original bytes,
//! idempotence, foreign entries kept, malformed files refused.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use cq::agents::hooks::{
    parse_hook_input, reply_block_compaction, reply_context, reply_deny_tool, reply_nothing,
    tool_block_reason, HookEvent, HookInputError,
};
use cq::agents::settings::{
    install, is_cq_command, settings_path, uninstall, HookInstall, Scope, SettingsError,
};
use cq::agents::Runtime;
use serde_json::Value;

const CONSTRUCTED: &str = "tests/transcripts/claude-code-hooks/constructed";

fn constructed(name: &str) -> Vec<u8> {
    std::fs::read(Path::new(CONSTRUCTED).join(name)).unwrap()
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

#[test]
fn claude_code_payloads_parse_into_their_events() {
    let pre = parse_hook_input(
        Runtime::ClaudeCode,
        &constructed("input_PreCompact_manual.json"),
    )
    .unwrap();
    assert_eq!(pre.session_id, "3f2b9c1e-0000-4000-8000-000000000001");
    assert_eq!(
        pre.transcript_path,
        Some(PathBuf::from(
            "/home/dev/.claude/projects/-home-dev-proj/3f2b9c1e-0000-4000-8000-000000000001.jsonl"
        ))
    );
    assert_eq!(pre.cwd.as_deref(), Some("/home/dev/proj"));
    assert_eq!(
        pre.event,
        HookEvent::PreCompact {
            trigger: Some("manual".into()),
            custom_instructions: Some("keep the API decisions".into())
        }
    );
    let auto = parse_hook_input(
        Runtime::ClaudeCode,
        &constructed("input_PreCompact_auto.json"),
    )
    .unwrap();
    assert_eq!(
        auto.event,
        HookEvent::PreCompact {
            trigger: Some("auto".into()),
            custom_instructions: None
        }
    );
    let post = parse_hook_input(
        Runtime::ClaudeCode,
        &constructed("input_PostCompact_auto.json"),
    )
    .unwrap();
    let HookEvent::PostCompact {
        trigger,
        compact_summary,
    } = post.event
    else {
        panic!()
    };
    assert_eq!(trigger.as_deref(), Some("auto"));
    assert!(compact_summary.unwrap().starts_with("<analysis>"));
    let start = parse_hook_input(
        Runtime::ClaudeCode,
        &constructed("input_SessionStart_compact.json"),
    )
    .unwrap();
    assert_eq!(
        start.event,
        HookEvent::SessionStart {
            source: "compact".into()
        }
    );
    let tool = parse_hook_input(
        Runtime::ClaudeCode,
        &constructed("input_PreToolUse_Bash.json"),
    )
    .unwrap();
    assert_eq!(tool.permission_mode.as_deref(), Some("default"));
    let HookEvent::PreToolUse {
        tool_name,
        tool_input,
        tool_use_id,
    } = tool.event
    else {
        panic!()
    };
    assert_eq!(tool_name, "Bash");
    assert_eq!(tool_input["command"], "rm -rf build");
    assert_eq!(
        tool_use_id.as_deref(),
        Some("toolu_01ABCDEFabcdef0123456789")
    );
}

#[test]
fn codex_payloads_parse_with_their_extra_fields() {
    let post = br#"{"session_id":"019fc8be-3658-7ca3-9e29-000000000000","turn_id":"t1","transcript_path":null,
        "cwd":"/tmp/repo","hook_event_name":"PostCompact","model":"gpt-5.5","trigger":"auto","new_field":[1]}"#;
    let input = parse_hook_input(Runtime::Codex, post).unwrap();
    assert_eq!(input.transcript_path, None);
    assert_eq!(input.turn_id.as_deref(), Some("t1"));
    assert_eq!(input.model.as_deref(), Some("gpt-5.5"));
    assert_eq!(
        input.event,
        HookEvent::PostCompact {
            trigger: Some("auto".into()),
            compact_summary: None
        }
    );
    let tool = br#"{"session_id":"s","transcript_path":"/r.jsonl","cwd":"/","hook_event_name":"PreToolUse",
        "model":"m","permission_mode":"default","tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch"},"tool_use_id":"c1"}"#;
    let HookEvent::PreToolUse { tool_name, .. } =
        parse_hook_input(Runtime::Codex, tool).unwrap().event
    else {
        panic!()
    };
    assert_eq!(tool_name, "apply_patch");
    let other = br#"{"session_id":"s","hook_event_name":"Stop","stop_hook_active":false}"#;
    assert_eq!(
        parse_hook_input(Runtime::Codex, other).unwrap().event,
        HookEvent::Other {
            name: "Stop".into()
        }
    );
}

#[test]
fn payloads_missing_what_the_hook_needs_are_refused_by_field() {
    let cases: [(&[u8], HookInputError); 6] = [
        (
            b"{\"hook_event_name\":\"PreCompact\"}",
            HookInputError::Missing("session_id"),
        ),
        (
            b"{\"session_id\":\"s\"}",
            HookInputError::Missing("hook_event_name"),
        ),
        (
            b"{\"session_id\":\"s\",\"hook_event_name\":\"PreToolUse\"}",
            HookInputError::Missing("tool_name"),
        ),
        (
            b"{\"session_id\":\"s\",\"hook_event_name\":\"SessionStart\"}",
            HookInputError::Missing("source"),
        ),
        (
            b"{\"session_id\":7,\"hook_event_name\":\"PreCompact\"}",
            HookInputError::WrongType {
                field: "session_id",
                expected: "a string",
            },
        ),
        (b"[1]", HookInputError::NotObject),
    ];
    for (input, expected) in cases {
        assert_eq!(
            parse_hook_input(Runtime::ClaudeCode, input).unwrap_err(),
            expected
        );
    }
    assert!(matches!(
        parse_hook_input(Runtime::ClaudeCode, b"{\"session_id\": \"\xff\"}"),
        Err(HookInputError::NotJson(_))
    ));
    let message = HookInputError::Missing("session_id").to_string();
    assert!(
        message.starts_with("hook input has no \"session_id\""),
        "{message}"
    );
}

#[test]
fn hostile_payload_values_are_carried_verbatim() {
    let big = "x".repeat(10 * 1024 * 1024);
    let payload = serde_json::json!({
        "session_id": "s\u{1b}[31m\u{202e}",
        "hook_event_name": "PreToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": "/tmp/a", "content": big},
    });
    let input = parse_hook_input(Runtime::ClaudeCode, payload.to_string().as_bytes()).unwrap();
    assert_eq!(input.session_id, "s\u{1b}[31m\u{202e}");
    let HookEvent::PreToolUse { tool_input, .. } = input.event else {
        panic!()
    };
    assert_eq!(
        tool_input["content"].as_str().map(str::len),
        Some(10 * 1024 * 1024)
    );
}

#[test]
fn replies_have_the_shape_the_runtimes_expect() {
    let expected: Value =
        serde_json::from_slice(&constructed("output_PreToolUse_deny.json")).unwrap();
    assert_eq!(
        json(&reply_deny_tool("rm -rf is blocked by policy")),
        expected
    );
    let expected: Value =
        serde_json::from_slice(&constructed("output_SessionStart_additionalContext.json")).unwrap();
    assert_eq!(
        json(&reply_context(
            "SessionStart",
            "Re-read CLAUDE.md: the project rules still apply after compaction."
        )),
        expected
    );
    let expected: Value =
        serde_json::from_slice(&constructed("output_PreCompact_block.json")).unwrap();
    assert_eq!(
        json(&reply_block_compaction(
            Runtime::ClaudeCode,
            "Save your work log before compacting."
        )),
        expected
    );
    assert_eq!(
        json(&reply_block_compaction(Runtime::Codex, "no")),
        serde_json::json!({"continue": false, "stopReason": "no"})
    );
    assert_eq!(reply_nothing(), "{}");
    let reason = tool_block_reason("cq-1234", "quarantined");
    assert!(
        reason.contains("\"cq-1234\"") && reason.contains("cq review"),
        "{reason}"
    );
}

const USER_SETTINGS: &str = r#"{
    "model": "opus",
    "permissions": {
        "allow": ["Bash(ls:*)"]
    },
    "hooks": {
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [
                    {"type": "command", "command": "~/.claude/hooks/guard.sh"}
                ]
            }
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]
    },
    "statusLine": {"type": "command", "command": "x"}
}
"#;

fn originals() -> Vec<(&'static str, String)> {
    vec![
        ("with foreign hooks, 4-space indent", USER_SETTINGS.to_string()),
        ("no hooks", "{\n  \"model\": \"sonnet\"\n}\n".to_string()),
        ("empty object", "{}\n".to_string()),
        ("one line", "{\"model\":\"sonnet\",\"hooks\":{\"Stop\":[]}}".to_string()),
        ("crlf, tabs", "{\r\n\t\"env\": {\"A\": \"1\"},\r\n\t\"hooks\": {\r\n\t\t\"SessionStart\": [\r\n\t\t\t{\"matcher\": \"startup\", \"hooks\": [{\"type\": \"command\", \"command\": \"echo hi\"}]}\r\n\t\t]\r\n\t}\r\n}\r\n".to_string()),
        ("unicode and escapes", "{\n  \"note\": \"caf\\u00e9 ☕ \\\"q\\\"\",\n  \"hooks\": {}, \"n\": 1.50\n}".to_string()),
    ]
}

#[test]
fn install_then_uninstall_gives_back_the_original_bytes() {
    for runtime in [Runtime::ClaudeCode, Runtime::Codex] {
        let spec = HookInstall::new(runtime, "/usr/local/bin/cq");
        for (name, original) in originals() {
            let installed = install(&original, &spec).unwrap();
            let value = json(&installed);
            for event in ["SessionStart", "PostCompact", "PreCompact", "PreToolUse"] {
                let commands: Vec<&str> = value["hooks"][event]
                    .as_array()
                    .unwrap()
                    .iter()
                    .flat_map(|g| g["hooks"].as_array().unwrap())
                    .filter_map(|h| h["command"].as_str())
                    .collect();
                assert!(
                    commands.contains(&spec.command().as_str()),
                    "{name}: {event} in {installed}"
                );
            }
            assert_eq!(
                install(&installed, &spec).unwrap(),
                installed,
                "{name}: install twice"
            );
            let removed = uninstall(&installed, &spec).unwrap();
            if name == "unicode and escapes" {
                // Its own empty `"hooks": {}` goes with cq's last entry; nothing else moves.
                assert_eq!(
                    json(&removed),
                    json(&original.replace("\"hooks\": {}, ", "")),
                    "{name}"
                );
            } else {
                assert_eq!(removed, original, "{name}: uninstall");
            }
            assert_eq!(uninstall(&removed, &spec).unwrap(), removed);
        }
    }
}

#[test]
fn install_keeps_foreign_entries_in_place_and_follows_the_indent() {
    let spec = HookInstall::new(Runtime::ClaudeCode, "cq");
    let installed = install(USER_SETTINGS, &spec).unwrap();
    let untouched = USER_SETTINGS.find("            }\n        ],").unwrap();
    assert!(
        installed.starts_with(&USER_SETTINGS[..untouched]),
        "{installed}"
    );
    let value = json(&installed);
    let groups = value["hooks"]["PreToolUse"].as_array().unwrap();
    assert_eq!(groups[0]["hooks"][0]["command"], "~/.claude/hooks/guard.sh");
    assert_eq!(
        groups[1]["matcher"],
        "Bash|Edit|MultiEdit|Write|NotebookEdit"
    );
    assert_eq!(
        groups[1]["hooks"][0],
        serde_json::json!({"type": "command", "command": "cq hook claude-code"})
    );
    assert_eq!(value["hooks"]["SessionStart"][0]["matcher"], "compact");
    assert!(value["hooks"]["PostCompact"][0].get("matcher").is_none());
    assert_eq!(value["statusLine"]["command"], "x");
    assert!(installed.contains("\n        \"SessionStart\": [\n            {\n                \"matcher\": \"compact\","), "{installed}");
    let keys: Vec<&String> = value.as_object().unwrap().keys().collect();
    assert_eq!(keys.len(), 4);
}

#[test]
fn uninstall_removes_only_cq_entries_even_inside_a_shared_group() {
    let spec = HookInstall::new(Runtime::ClaudeCode, "/opt/cq/bin/cq");
    let shared = r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "guard.sh"},
        {"type": "command", "command": "'/old place/cq' hook claude-code"}
    ]}]}}"#;
    let removed = uninstall(shared, &spec).unwrap();
    assert_eq!(
        json(&removed),
        serde_json::json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh"}]}]}})
    );
    // A Codex entry is not Claude Code's to remove.
    let codex =
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "cq hook codex"}]}]}}"#;
    assert_eq!(uninstall(codex, &spec).unwrap(), codex);
    assert!(is_cq_command("cq hook claude-code", Runtime::ClaudeCode));
    assert!(is_cq_command(
        "\"C:\\tools\\cq.exe\" hook codex",
        Runtime::Codex
    ));
    assert!(!is_cq_command("cqx hook claude-code", Runtime::ClaudeCode));
    assert!(!is_cq_command(
        "echo cq hook claude-code; rm -rf /",
        Runtime::ClaudeCode
    ));
}

#[test]
fn a_program_path_with_spaces_is_quoted_for_the_shell() {
    let spec = HookInstall::new(Runtime::Codex, "/Users/me/My Tools/cq");
    assert_eq!(spec.command(), "'/Users/me/My Tools/cq' hook codex");
    let installed = install("", &spec).unwrap();
    assert!(json(&installed)["hooks"]["PreToolUse"][0]["matcher"] == "Bash|apply_patch|Edit|Write");
    assert!(is_cq_command(&spec.command(), Runtime::Codex));
}

#[test]
fn malformed_settings_are_refused_with_their_place() {
    let spec = HookInstall::new(Runtime::ClaudeCode, "cq");
    let cases = [
        ("{\n  \"a\": 1,\n}\n", "line 3, column 1"),
        ("{\"hooks\": {\"a\": 1}, \"hooks\": {}}", "appears twice"),
        ("[]", "the top level in the settings file is not an object"),
        (
            "{\"hooks\": []}",
            "\"hooks\" in the settings file is not an object",
        ),
        (
            "{\"hooks\": {\"PreCompact\": {}}}",
            "\"hooks\".\"PreCompact\" in the settings file is not an array",
        ),
        ("{\"a\": 1} // comment", "text after the end"),
    ];
    for (text, expected) in cases {
        let error = install(text, &spec).unwrap_err();
        let message = error.to_string();
        assert!(message.contains(expected), "{text}: {message}");
        assert!(
            message.ends_with("fix it by hand, cq changed nothing"),
            "{message}"
        );
    }
    assert!(matches!(
        uninstall("{\"a\":", &spec),
        Err(SettingsError::Malformed { .. })
    ));
}

#[test]
fn settings_live_where_each_runtime_reads_them() {
    let project = Path::new("/work/p");
    let home = Path::new("/home/u");
    assert_eq!(
        settings_path(Runtime::ClaudeCode, Scope::Project, project, home, None),
        PathBuf::from("/work/p/.claude/settings.json")
    );
    assert_eq!(
        settings_path(Runtime::ClaudeCode, Scope::User, project, home, None),
        PathBuf::from("/home/u/.claude/settings.json")
    );
    assert_eq!(
        settings_path(
            Runtime::Codex,
            Scope::User,
            project,
            home,
            Some(Path::new("/cfg/codex"))
        ),
        PathBuf::from("/cfg/codex/hooks.json")
    );
    assert_eq!(
        settings_path(Runtime::Codex, Scope::Project, project, home, None),
        PathBuf::from("/work/p/.codex/hooks.json")
    );
}
