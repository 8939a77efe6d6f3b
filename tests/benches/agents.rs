//! `cargo bench --bench agents`: reading a 3 MB Claude Code session, built from the largest
//! real fixture extended with a renamed copy of its own turns and a second compaction at the
//! end (so the latest compaction is the last thing in the file, as after a live compaction).
//! Times `cq import`'s parse of the whole file and the hooks' `latest_compaction`, best of
//! `CQ_BENCH_RUNS` (default 10) runs; then the `cq` binary as a runtime meets it, one process
//! per call, medians: `cq import` of the session, the `SessionStart` hook on it (parse, check,
//! record, answer), and the `PreToolUse` hook for `Bash` (what runs on every tool call).
//! Targets: import of a 3 MB session ≤ 1 s, `SessionStart` ≤ 200 ms, `PreToolUse` ≤ 10 ms.
//! Prints markdown tables.

#![allow(clippy::unwrap_used)]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cq::agents::{import_file, latest_compaction, Limits, Runtime};
use serde_json::Value;

/// The allocator the `cq` binary uses.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const FIXTURE: &str =
    "tests/transcripts/claude-code/marot__spotter__ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl";
const TARGET_BYTES: usize = 3 * 1024 * 1024;

fn renamed(value: &mut Value, suffix: &str) {
    for key in ["uuid", "parentUuid", "logicalParentUuid"] {
        if let Some(Value::String(id)) = value.get_mut(key) {
            id.push_str(suffix);
        }
    }
}

/// The fixture, then its lines again with every uuid renamed until the file is 3 MB, then a
/// boundary and a summary after the copy's last line.
fn build(path: &Path) -> usize {
    let original = std::fs::read_to_string(FIXTURE).unwrap();
    let mut out = original.clone();
    let mut last_uuid = None;
    'fill: for round in 2.. {
        for line in original.lines() {
            let mut value: Value = serde_json::from_str(line).unwrap();
            if value.get("subtype").and_then(Value::as_str) == Some("compact_boundary") {
                continue;
            }
            renamed(&mut value, &format!("-copy{round}"));
            if let Some(uuid) = value.get("uuid").and_then(Value::as_str) {
                last_uuid = Some(uuid.to_string());
            }
            out.push_str(&value.to_string());
            out.push('\n');
            if out.len() >= TARGET_BYTES {
                break 'fill;
            }
        }
    }
    let session = "ae4a77f8-aedd-4bc1-888f-c94edc91af04";
    let boundary = serde_json::json!({"type": "system", "subtype": "compact_boundary", "parentUuid": null,
        "logicalParentUuid": last_uuid, "sessionId": session, "uuid": "bench-boundary", "version": "2.1.39",
        "cwd": "/home/USER/projects/spotter", "compactMetadata": {"trigger": "auto", "preTokens": 150000}});
    let summary = serde_json::json!({"type": "user", "parentUuid": "bench-boundary", "isCompactSummary": true,
        "sessionId": session, "uuid": "bench-summary", "message": {"role": "user", "content":
        "This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\nSummary:\n1. Primary Request and Intent: benchmark"}});
    out.push_str(&format!("{boundary}\n{summary}\n"));
    std::fs::File::create(path)
        .unwrap()
        .write_all(out.as_bytes())
        .unwrap();
    out.len()
}

fn best(runs: usize, mut f: impl FnMut()) -> Duration {
    (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .min()
        .unwrap_or_default()
}

/// Wall time of `cq ARGS` with `stdin`, which must exit 0.
fn timed(dir: &Path, args: &[&str], stdin: &[u8]) -> Duration {
    let start = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_cq"))
        .args(args)
        .env("HOME", dir)
        .env("XDG_DATA_HOME", dir.join("data"))
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    let out = child.wait_with_output().unwrap();
    let elapsed = start.elapsed();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    elapsed
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times.get(times.len() / 2).copied().unwrap_or_default()
}

/// The agent policy the hooks run under: the built-in `prose` when this build has it.
fn agent_policy(dir: &Path) -> &'static str {
    let has_prose = Command::new(env!("CARGO_BIN_EXE_cq"))
        .args(["policy", "show", "--policy", "prose"])
        .env("HOME", dir)
        .output()
        .is_ok_and(|o| o.status.success());
    if has_prose {
        "prose"
    } else {
        "default"
    }
}

fn processes(dir: &Path, path: &Path, runs: usize) {
    let policy = agent_policy(dir);
    let db = dir.join("hooks.db");
    let db_text = db.display().to_string();
    let transcript = path.display().to_string();
    let import = timed(
        dir,
        &[
            "import",
            "claude-code",
            &transcript,
            "--policy",
            policy,
            "--store",
            &db_text,
        ],
        b"",
    );
    let session = "ae4a77f8-aedd-4bc1-888f-c94edc91af04";
    let payload = |event: &str, extra: &str| {
        format!(
            r#"{{"session_id":"{session}","transcript_path":"{transcript}","cwd":"/home/USER/projects/spotter","hook_event_name":"{event}"{extra}}}"#
        )
        .into_bytes()
    };
    let hook = [
        "hook",
        "claude-code",
        "--policy",
        policy,
        "--store",
        &db_text,
    ];
    let start = payload("SessionStart", r#","source":"compact""#);
    let session_start = median(
        (0..runs.max(3))
            .map(|_| timed(dir, &hook, &start))
            .collect(),
    );
    let tool = payload(
        "PreToolUse",
        r#","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"t1""#,
    );
    let pre_tool = median((0..50).map(|_| timed(dir, &hook, &tool)).collect());
    let read = payload(
        "PreToolUse",
        r#","tool_name":"Read","tool_input":{"file_path":"x"}"#,
    );
    let pre_read = median((0..50).map(|_| timed(dir, &hook, &read)).collect());
    println!();
    println!("| `cq` process (policy `{policy}`) | wall | target |");
    println!("|---|---|---|");
    println!(
        "| `cq import claude-code` of the session (new store) | {:.0} ms | ≤ 1 s |",
        import.as_secs_f64() * 1e3
    );
    println!(
        "| `cq hook claude-code`, `SessionStart` (source compact), median | {:.0} ms | ≤ 200 ms |",
        session_start.as_secs_f64() * 1e3
    );
    println!(
        "| `cq hook claude-code`, `PreToolUse` `Bash`, median of 50 | {:.1} ms | ≤ 10 ms |",
        pre_tool.as_secs_f64() * 1e3
    );
    println!(
        "| `cq hook claude-code`, `PreToolUse` `Read` (not guarded), median of 50 | {:.1} ms | |",
        pre_read.as_secs_f64() * 1e3
    );
}

fn main() {
    let runs = std::env::var("CQ_BENCH_RUNS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(10);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.jsonl");
    let bytes = build(&path);
    let limits = Limits::default();
    let found = import_file(&path, Runtime::ClaudeCode, &limits);
    assert_eq!(found.compactions.len(), 2);
    assert!(found.problems.is_empty());
    let turns: usize = found.compactions.iter().map(|c| c.messages.len()).sum();
    let import = best(runs, || {
        std::hint::black_box(import_file(&path, Runtime::ClaudeCode, &limits));
    });
    let last_line = std::fs::read_to_string(&path).unwrap().lines().count() as u64 - 1;
    let latest = best(runs, || {
        let found = latest_compaction(&path, Runtime::ClaudeCode, None, &limits).unwrap();
        assert_eq!(found.map(|c| c.line), Some(last_line));
    });
    let mb = bytes as f64 / 1e6;
    println!(
        "| operation ({mb:.2} MB session, {turns} source turns, best of {runs}) | time | target |"
    );
    println!("|---|---|---|");
    println!(
        "| `cq import` parse, every compaction | {:.1} ms | ≤ 1 s |",
        import.as_secs_f64() * 1e3
    );
    println!(
        "| latest compaction (`SessionStart`) | {:.1} ms | ≤ 200 ms |",
        latest.as_secs_f64() * 1e3
    );
    processes(dir.path(), &path, runs);
}
