//! `cq import` over every transcript in `tests/transcripts/` (copied from
//! `../shared/transcripts/`, origins in `tests/transcripts/ORIGIN.md`): the number of
//! compactions in each file, and for each its line, session and project (task and tenant), the
//! source span (first and last turn), the number of turns, the summary's first words or why it
//! is unreadable, and whether it can be verified at all. Every compaction is also a request
//! the gate accepts as well-formed.

#![allow(clippy::unwrap_used)]

use std::collections::HashSet;
use std::path::Path;

use cq::agents::{
    import_file, latest_compaction, pending_source, transcript_files, ImportedCompaction,
    ImportedSummary, Limits, Runtime,
};
use cq::engine::{GateRequest, SummarizerOutput};

const CLAUDE: &str = "tests/transcripts/claude-code";
const CODEX: &str = "tests/transcripts/codex";

/// What one compaction must look like.
struct Expected {
    line: u64,
    session: &'static str,
    project: &'static str,
    first: &'static str,
    last: &'static str,
    turns: usize,
    /// The summary's first words, or `!` and the start of why it is unreadable.
    summary: &'static str,
    trigger: Option<&'static str>,
    verifiable: bool,
}

const UNREADABLE_REMOTE: &str = "!remote compaction: the model was given encrypted_content";
const TRIMMED: &str = "[trimmed for fixture]";

fn expected(file: &str) -> Vec<Expected> {
    let spotter = |line, session, dir, first, last, turns, trigger, summary| Expected {
        line,
        session,
        project: dir,
        first,
        last,
        turns,
        summary,
        trigger: Some(trigger),
        verifiable: true,
    };
    let codex = |line, session, project, first, last, turns| Expected {
        line,
        session,
        project,
        first,
        last,
        turns,
        summary: UNREADABLE_REMOTE,
        trigger: None,
        verifiable: true,
    };
    match file {
        "daaain__claude-code-log__dag_compact_after_rewind.jsonl" => vec![Expected {
            line: 9,
            session: "s1",
            project: "/tmp",
            first: "u1",
            last: "b2a2",
            turns: 6,
            summary: "Summary: the user asked for a plan.",
            trigger: Some("auto"),
            verifiable: true,
        }],
        "daaain__claude-code-log__dag_compact_after_rewind_preserved.jsonl" => vec![Expected {
            line: 8,
            session: "s2",
            project: "/tmp",
            first: "u1",
            last: "b2u",
            turns: 3,
            summary: "Summary: the user asked for a plan.",
            trigger: Some("auto"),
            verifiable: true,
        }],
        "jazzyalex__agent-sessions__small.jsonl" => vec![
            Expected {
                line: 21,
                session: "ses_stage0_small",
                project: "/tmp",
                first: "u1",
                last: "a3",
                // Six turns and the collage's `queue-operation` enqueue (line 12).
                turns: 7,
                summary: "Summary of prior context.",
                trigger: Some("auto"),
                verifiable: true,
            },
            Expected {
                line: 51,
                session: TRIMMED,
                project: TRIMMED,
                first: "cq-missing-source",
                last: "cq-missing-source",
                turns: 1,
                summary: "!no summary line follows this compaction boundary",
                trigger: Some(TRIMMED),
                verifiable: false,
            },
        ],
        "marot__spotter__258c7280-ae70-4798-800f-63464d01a85d.jsonl" => vec![spotter(
            1256,
            "258c7280-ae70-4798-800f-63464d01a85d",
            "/home/USER/projects/spotter-worktrees/spotter-gqc",
            "1a2252ee-fde8-4a8f-a103-4028c39c47ce",
            "7c642069-996d-4ae0-a61c-554b35d36fb6",
            // 295 on the parent chain, 12 parallel tool calls and results off it, and the
            // two messages the user queued while the agent worked.
            309,
            "auto",
            "Analysis:\nLet me chronologically analyze the conversation:",
        )],
        "marot__spotter__4d5611e5-241a-462a-8d15-5122611a9569.jsonl" => vec![spotter(
            754,
            "4d5611e5-241a-462a-8d15-5122611a9569",
            "/home/USER/projects/spotter-worktrees/spotter-dov",
            "daa5a4bb-530c-4055-b20c-bde38255c99e",
            "ce1910a6-d099-47d6-b88c-2f2f8abc0cc2",
            // With the parallel tool calls and results off the parent chain (here and below).
            180,
            "auto",
            "Analysis:\nLet me chronologically analyze the conversation:",
        )],
        "marot__spotter__8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl" => vec![spotter(
            714,
            "8463c716-a2ea-4c14-9efa-87158ebd9f20",
            "/home/USER/projects/spotter-worktrees/spotter-fum",
            "d35f0cc4-428d-436c-b878-2ddb26209d06",
            "baf018bd-4787-46a4-9bd2-4e3fb5024f70",
            212,
            "auto",
            "Analysis:\nLet me chronologically analyze the conversation:",
        )],
        "marot__spotter__ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl" => vec![spotter(
            1481,
            "ae4a77f8-aedd-4bc1-888f-c94edc91af04",
            "/home/USER/projects/spotter-worktrees/spotter-4te",
            "858a6db7-6721-4caa-b306-39ec1f17cbf1",
            "1d698e31-9e57-4b0c-b787-727e7bcea2f9",
            404,
            "manual",
            "Analysis:\nLet me chronologically analyze the conversation:",
        )],
        "marot__spotter__fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl" => vec![spotter(
            1584,
            "fa812bfe-b295-4cca-9c2f-fdf01028cb46",
            "/home/USER/projects/spotter-worktrees/spotter-a0y",
            "942615e0-f369-473f-b323-9c337564c3af",
            "b6055828-bf17-4729-9a40-5383d688a628",
            402,
            "auto",
            "Analysis:\nLet me trace through the conversation chronologically:",
        )],
        // The compaction agent's own transcripts hold its prompt and reply, no compaction.
        name if name.contains("__subagents__agent-acompact-") => Vec::new(),
        "codex:jazzyalex__agent-sessions__small.jsonl" => vec![
            codex(
                26,
                "019fc8be-3658-7ca3-9e29-000000000000",
                "/tmp/repo",
                "L6",
                "L23",
                9,
            ),
            codex(47, TRIMMED, TRIMMED, "L33", "L43", 2),
            codex(69, TRIMMED, TRIMMED, "L47.1", "L49", 7),
            codex(81, TRIMMED, TRIMMED, "L69.1", "L69.20", 20),
            codex(89, TRIMMED, TRIMMED, "L81.1", "L81.26", 26),
            codex(111, TRIMMED, TRIMMED, "L89.1", "L105", 63),
        ],
        other => panic!("no expectation for {other}: add one"),
    }
}

/// The gate's own checks on a request built from the compaction pass: non-empty identity and
/// population, roles, non-empty content, unique ids.
fn assert_well_formed(compaction: &ImportedCompaction) {
    let request = GateRequest {
        tenant_id: compaction.project.clone(),
        task_id: compaction.session_id.clone(),
        messages: compaction.messages.clone(),
        expected_invariant_ids: Vec::new(),
        expected_commitment_ids: Vec::new(),
        pinned_constraints: Vec::new(),
        model_revision: compaction.runtime_version.clone().unwrap_or_default(),
        summarizer: SummarizerOutput::Raw(String::new()),
    };
    request.source_digests().unwrap();
    for message in &compaction.messages {
        assert!(
            !message.content.trim().is_empty(),
            "{}: blank {}",
            compaction.key,
            message.message_id
        );
        assert!(["user", "assistant", "tool"].contains(&message.role.as_str()));
    }
}

fn check(label: &str, found: &[ImportedCompaction]) {
    let wanted = expected(label);
    let lines: Vec<u64> = found.iter().map(|c| c.line).collect();
    let wanted_lines: Vec<u64> = wanted.iter().map(|e| e.line).collect();
    assert_eq!(lines, wanted_lines, "{label}: compactions");
    for (compaction, want) in found.iter().zip(&wanted) {
        let at = format!("{label}:{}", compaction.line);
        assert_well_formed(compaction);
        assert_eq!(compaction.session_id, want.session, "{at}: task");
        assert_eq!(compaction.project, want.project, "{at}: tenant");
        assert_eq!(
            compaction.messages.first().map(|m| m.message_id.as_str()),
            Some(want.first),
            "{at}: first turn"
        );
        assert_eq!(
            compaction.messages.last().map(|m| m.message_id.as_str()),
            Some(want.last),
            "{at}: last turn"
        );
        assert_eq!(compaction.messages.len(), want.turns, "{at}: turns");
        assert_eq!(compaction.trigger.as_deref(), want.trigger, "{at}: trigger");
        assert_eq!(
            compaction.unverifiable.is_none(),
            want.verifiable,
            "{at}: {:?}",
            compaction.unverifiable
        );
        match (&compaction.summary, want.summary.strip_prefix('!')) {
            (ImportedSummary::Text(text), None) => {
                assert!(
                    text.starts_with(want.summary),
                    "{at}: summary starts {:?}",
                    &text[..text.len().min(80)]
                );
            }
            (ImportedSummary::Unreadable { why }, Some(reason)) => {
                assert!(why.starts_with(reason), "{at}: {why}")
            }
            (got, _) => panic!("{at}: summary {got:?}, wanted {}", want.summary),
        }
    }
}

fn file_name(path: &Path) -> String {
    path.file_name().unwrap().to_string_lossy().into_owned()
}

#[test]
fn every_claude_code_transcript_yields_its_compactions() {
    let files = transcript_files(Path::new(CLAUDE), Runtime::ClaudeCode).unwrap();
    assert_eq!(files.len(), 13, "every .jsonl but none else");
    for file in files {
        let import = import_file(&file.path, Runtime::ClaudeCode, &Limits::default());
        assert!(import.problems.is_empty(), "{:?}", import.problems);
        check(&file_name(&file.path), &import.compactions);
    }
}

#[test]
fn the_codex_collage_yields_six_unreadable_remote_compactions() {
    let files = transcript_files(Path::new(CODEX), Runtime::Codex).unwrap();
    assert_eq!(files.len(), 1);
    let import = import_file(&files[0].path, Runtime::Codex, &Limits::default());
    assert!(import.problems.is_empty(), "{:?}", import.problems);
    check(
        &format!("codex:{}", file_name(&files[0].path)),
        &import.compactions,
    );
    assert_eq!(
        import.compactions[0].runtime_version.as_deref(),
        Some("0.146.0")
    );
}

#[test]
fn rewound_branches_and_preserved_turns_are_not_summarized_turns() {
    let import = import_file(
        &Path::new(CLAUDE).join("daaain__claude-code-log__dag_compact_after_rewind.jsonl"),
        Runtime::ClaudeCode,
        &Limits::default(),
    );
    let ids: Vec<&str> = import.compactions[0]
        .messages
        .iter()
        .map(|m| m.message_id.as_str())
        .collect();
    assert_eq!(ids, ["u1", "a1", "b2u", "b2a", "b2u2", "b2a2"]);
    let preserved = import_file(
        &Path::new(CLAUDE)
            .join("daaain__claude-code-log__dag_compact_after_rewind_preserved.jsonl"),
        Runtime::ClaudeCode,
        &Limits::default(),
    );
    let compaction = &preserved.compactions[0];
    let ids: Vec<&str> = compaction
        .messages
        .iter()
        .map(|m| m.message_id.as_str())
        .collect();
    assert_eq!(ids, ["u1", "a1", "b2u"]);
    assert!(
        compaction.notes.iter().any(|n| n.contains("preserved")),
        "{:?}",
        compaction.notes
    );
}

#[test]
fn meta_lines_and_command_wrappers_are_left_out_and_tools_rendered() {
    let path = Path::new(CLAUDE).join("marot__spotter__ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl");
    let compaction = &import_file(&path, Runtime::ClaudeCode, &Limits::default()).compactions[0];
    let all: Vec<&str> = compaction
        .messages
        .iter()
        .map(|m| m.content.as_str())
        .collect();
    assert!(
        !all.iter()
            .any(|c| c.contains("Base directory for this skill")),
        "isMeta text left out"
    );
    assert!(!all
        .iter()
        .any(|c| c.contains("<command-name>") || c.contains("<local-command-stdout>")));
    let calls = compaction
        .messages
        .iter()
        .filter(|m| m.content.starts_with("[tool call: "))
        .count();
    let results = compaction
        .messages
        .iter()
        .filter(|m| m.role == "tool" && m.content.starts_with("[tool result: "))
        .count();
    assert!(
        calls > 100 && results > 100,
        "{calls} calls, {results} results"
    );
    assert!(compaction
        .messages
        .iter()
        .all(|m| m.role != "tool" || !m.content.is_empty()));
    let first_call = compaction
        .messages
        .iter()
        .find(|m| m.content.starts_with("[tool call: Bash]\n{"))
        .unwrap();
    assert_eq!(first_call.role, "assistant");
    assert!(
        compaction
            .messages
            .iter()
            .filter(|m| m.role == "user")
            .count()
            >= 1
    );
}

#[test]
fn re_import_and_the_hooks_find_the_same_compactions() {
    let mut keys = HashSet::new();
    for (dir, runtime) in [(CLAUDE, Runtime::ClaudeCode), (CODEX, Runtime::Codex)] {
        for file in transcript_files(Path::new(dir), runtime).unwrap() {
            let first = import_file(&file.path, runtime, &Limits::default());
            let again = import_file(&file.path, runtime, &Limits::default());
            assert_eq!(first, again, "{}", file.path.display());
            for compaction in &first.compactions {
                assert!(
                    keys.insert(compaction.key.clone()),
                    "key {} repeats",
                    compaction.key
                );
            }
            let latest = latest_compaction(&file.path, runtime, None, &Limits::default()).unwrap();
            assert_eq!(
                latest.as_ref(),
                first.compactions.last(),
                "{}",
                file.path.display()
            );
        }
    }
    assert_eq!(keys.len(), 15);
}

#[test]
fn pending_source_is_the_turns_since_the_latest_compaction() {
    let path = Path::new(CLAUDE).join("marot__spotter__ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl");
    let pending = pending_source(&path, Runtime::ClaudeCode, None, &Limits::default())
        .unwrap()
        .unwrap();
    assert_eq!(pending.session_id, "ae4a77f8-aedd-4bc1-888f-c94edc91af04");
    let first = pending.messages.first().unwrap();
    assert_eq!(
        first.role, "assistant",
        "the summary is carried as the summarizer's words"
    );
    assert!(first.content.starts_with("This session is being continued"));
    assert!(pending
        .messages
        .iter()
        .any(|m| m.content == "continue implementation" && m.role == "user"));
    let other = pending_source(
        &path,
        Runtime::ClaudeCode,
        Some("another-session"),
        &Limits::default(),
    )
    .unwrap();
    assert_eq!(other, None);
}

#[test]
fn the_walker_keeps_only_transcripts_in_a_stable_order() {
    let all = transcript_files(Path::new("tests/transcripts"), Runtime::ClaudeCode).unwrap();
    let paths: Vec<&Path> = all.iter().map(|f| f.path.as_path()).collect();
    let mut sorted = paths.clone();
    sorted.sort();
    assert_eq!(paths, sorted);
    // The copied fixtures; `variants/` holds edited copies of them, tested on their own.
    let variants = Path::new("tests/transcripts/variants");
    let names: Vec<String> = all
        .iter()
        .filter(|f| !f.path.starts_with(variants))
        .map(|f| file_name(&f.path))
        .collect();
    assert_eq!(
        names.len(),
        13,
        "no Codex rollout, no pi session: {names:?}"
    );
    let codex = transcript_files(Path::new("tests/transcripts"), Runtime::Codex).unwrap();
    let codex: Vec<_> = codex
        .iter()
        .filter(|f| !f.path.starts_with(variants))
        .collect();
    assert_eq!(codex.len(), 1);
    assert!(codex[0].bytes > 100_000);
}
