//! `cargo bench --bench startup`: what one `cq` process costs a runtime from start to exit, for
//! the calls a runtime makes most: `cq check --json` on a typical request (the demo's clean
//! one), `cq status` of a recorded compaction (accepted, and one held in quarantine, which is
//! what a runtime polls while a reviewer decides), and the Claude Code `PreToolUse` hook for a
//! guarded tool (`Bash`) and an unguarded one (`Read`) on a session cq recorded, beside
//! `cq --version`, the floor every process pays (loading, relocating, parsing arguments). For
//! each: best-of-`CQ_BENCH_RUNS` (default 20) wall time, peak RSS by `/usr/bin/time`, and the
//! instructions callgrind counts (repeatable while other work shares the machine; skipped
//! without `valgrind` or with `CQ_BENCH_CALLGRIND=0`). Targets: `cq check` ≤ 15 ms and
//! ≤ 20 MB, `cq status` and the read-only hook decisions ≤ 5 ms. Prints a markdown table.

#![allow(clippy::unwrap_used)]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const REQUEST: &str = "assets/demo/01_clean_accepted.json";
const QUARANTINED: &str = "assets/demo/02_dropped_invariant.json";
const TRANSCRIPT: &str =
    "tests/transcripts/claude-code/marot__spotter__ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl";
const SESSION: &str = "ae4a77f8-aedd-4bc1-888f-c94edc91af04";

/// One call: its arguments and standard input.
struct Call {
    name: &'static str,
    args: Vec<String>,
    stdin: Vec<u8>,
    target: &'static str,
}

fn command(program: &str, dir: &Path, args: &[String]) -> Command {
    let mut command = Command::new(program);
    command
        .args(args)
        .env("HOME", dir)
        .env("XDG_DATA_HOME", dir.join("data"))
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env_remove("CQ_STORE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

fn run(mut command: Command, stdin: &[u8]) -> Output {
    let mut child = command.spawn().unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

fn cq(dir: &Path, args: &[String], stdin: &[u8]) -> Output {
    run(command(env!("CARGO_BIN_EXE_cq"), dir, args), stdin)
}

fn wall(dir: &Path, call: &Call, runs: usize) -> Duration {
    (0..runs)
        .map(|_| {
            let start = Instant::now();
            let out = cq(dir, &call.args, &call.stdin);
            let elapsed = start.elapsed();
            assert!(
                out.status.code().is_some_and(|c| c <= 1),
                "{}: {}",
                call.name,
                String::from_utf8_lossy(&out.stderr)
            );
            elapsed
        })
        .min()
        .unwrap_or_default()
}

/// Peak resident set in kB, by `/usr/bin/time -f %M` (best of three).
fn peak_rss_kb(dir: &Path, call: &Call) -> Option<u64> {
    if !Path::new("/usr/bin/time").exists() {
        return None;
    }
    (0..3)
        .filter_map(|_| {
            let mut args = vec!["-f".to_owned(), "CQ_RSS %M".to_owned()];
            args.push(env!("CARGO_BIN_EXE_cq").to_owned());
            args.extend(call.args.iter().cloned());
            let out = run(command("/usr/bin/time", dir, &args), &call.stdin);
            let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
            stderr
                .lines()
                .find_map(|l| l.strip_prefix("CQ_RSS "))
                .and_then(|n| n.trim().parse().ok())
        })
        .min()
}

/// Instructions callgrind counts for one call (the whole process).
fn instructions(dir: &Path, call: &Call) -> Option<u64> {
    if std::env::var("CQ_BENCH_CALLGRIND").is_ok_and(|v| v == "0") {
        return None;
    }
    let mut args = vec![
        "--tool=callgrind".to_owned(),
        "--callgrind-out-file=/dev/null".to_owned(),
        env!("CARGO_BIN_EXE_cq").to_owned(),
    ];
    args.extend(call.args.iter().cloned());
    let out = run(command("valgrind", dir, &args), &call.stdin);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    stderr.lines().find_map(|l| {
        let count = l.split("Collected :").nth(1)?;
        count.trim().parse().ok()
    })
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| (*s).to_owned()).collect()
}

/// A store holding the demo's clean request and the fixture session, and the calls to time.
fn calls(dir: &Path) -> Vec<Call> {
    let db = dir.join("startup.db").display().to_string();
    let recorded = cq(
        dir,
        &strings(&["check", REQUEST, "--json", "--store", &db]),
        b"",
    );
    assert!(recorded.status.success(), "{recorded:?}");
    let verdict: serde_json::Value = serde_json::from_slice(&recorded.stdout).unwrap();
    let id = verdict["compaction_id"].as_str().unwrap().to_owned();
    // What a runtime polls while a compaction waits for a reviewer.
    let held = cq(
        dir,
        &strings(&["check", QUARANTINED, "--json", "--store", &db]),
        b"",
    );
    assert_eq!(held.status.code(), Some(1), "{held:?}");
    let verdict: serde_json::Value = serde_json::from_slice(&held.stdout).unwrap();
    let held_id = verdict["compaction_id"].as_str().unwrap().to_owned();
    // The hooks' own default policy (`prose`) where this build has it.
    let has_prose = cq(dir, &strings(&["policy", "show", "--policy", "prose"]), b"")
        .status
        .success();
    let policy = if has_prose { "prose" } else { "default" };
    let import = cq(
        dir,
        &strings(&[
            "import",
            "claude-code",
            TRANSCRIPT,
            "--policy",
            policy,
            "--store",
            &db,
        ]),
        b"",
    );
    assert!(import.status.code().is_some_and(|c| c <= 1), "{import:?}");
    let hook = strings(&["hook", "claude-code", "--policy", policy, "--store", &db]);
    let payload = |event: &str, extra: &str| {
        format!(
            r#"{{"session_id":"{SESSION}","transcript_path":"{TRANSCRIPT}","cwd":"/tmp","hook_event_name":"{event}"{extra}}}"#
        )
        .into_bytes()
    };
    vec![
        Call {
            name: "`cq --version` (the process floor)",
            args: strings(&["--version"]),
            stdin: Vec::new(),
            target: "",
        },
        Call {
            name: "`cq check --json` (demo 01, accepted)",
            args: strings(&["check", REQUEST, "--json"]),
            stdin: Vec::new(),
            target: "≤ 15 ms, ≤ 20 MB",
        },
        Call {
            name: "`cq status ID` (accepted, with its context)",
            args: strings(&["status", &id, "--store", &db]),
            stdin: Vec::new(),
            target: "≤ 5 ms",
        },
        Call {
            name: "`cq status ID` (quarantined: the receipt alone)",
            args: strings(&["status", &held_id, "--store", &db]),
            stdin: Vec::new(),
            target: "≤ 5 ms",
        },
        Call {
            name: "`cq hook claude-code` `PreToolUse` `Bash` (guarded)",
            args: hook.clone(),
            stdin: payload(
                "PreToolUse",
                r#","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"t1""#,
            ),
            target: "≤ 5 ms",
        },
        Call {
            name: "`cq hook claude-code` `PreToolUse` `Read` (not guarded)",
            args: hook.clone(),
            stdin: payload(
                "PreToolUse",
                r#","tool_name":"Read","tool_input":{"file_path":"x"}"#,
            ),
            target: "≤ 5 ms",
        },
        // Once per compaction: the transcript read, its last compaction checked (already
        // recorded, as when PostCompact fired first) and the context answered.
        Call {
            name: "`cq hook claude-code` `SessionStart` after a compaction (a prose check)",
            args: hook,
            stdin: payload("SessionStart", r#","source":"compact""#),
            target: "",
        },
    ]
}

fn main() {
    let runs = std::env::var("CQ_BENCH_RUNS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(20);
    let dir = tempfile::tempdir().unwrap();
    let calls = calls(dir.path());
    println!(
        "| `cq` process, best of {runs} | wall | peak RSS | instructions (callgrind) | target |"
    );
    println!("|---|---|---|---|---|");
    for call in &calls {
        let wall = wall(dir.path(), call, runs);
        let rss = peak_rss_kb(dir.path(), call).map_or("n/a".to_owned(), |kb| {
            format!("{:.1} MB", kb as f64 / 1024.0)
        });
        let count = instructions(dir.path(), call)
            .map_or("n/a".to_owned(), |n| format!("{:.1} M", n as f64 / 1e6));
        println!(
            "| {} | {:.1} ms | {rss} | {count} | {} |",
            call.name,
            wall.as_secs_f64() * 1e3,
            call.target
        );
    }
}
