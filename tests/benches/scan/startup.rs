//! Start-up: what a short-lived `cq check` or `cq scan` pays before and during its first
//! call. Each sample is a fresh process (the bench runs itself again with
//! `CQ_BENCH_STARTUP_CHILD`), so lazily compiled regexes, sets and automata start cold; each
//! phase is the best of the samples. The phases split the scanner's share (loading the rule
//! pack, compiling what the first call uses) from the policy's (compiling its grammar,
//! conflict patterns and authority rules), then `cq check` and `cq scan` are timed as
//! processes, with their peak resident memory when `/usr/bin/time` is there.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use cq::engine::{GateRequest, PolicyEngine};
use cq::policy::Policy;
use cq::scan::backend::ScannerBackend;
use cq::scan::Scanner;
use cq::service::checker::MemoryAudit;

const SAMPLES: usize = 7;
/// The request `cq check` is timed on.
const REQUEST: &str = "assets/demo/01_clean_accepted.json";
/// The default policy's entity types, as its scan policy names them.
const POLICY_TYPES: &[&str] = &["CREDENTIAL", "PII", "SECRET"];

/// Phase names, in the order a child prints them.
const PHASES: &[&str] = &[
    "`Scanner::builtin()` (parse the rule pack, keyword NFA)",
    "policy: `Policy::builtin` + `PolicyEngine::new` (grammar, conflict and authority patterns)",
    "first `check` of the request (scanner and policy compile what it uses)",
    "second `check` of the same request (warm)",
    "scanner alone: first scan of the request's summary (rules and sets it needs compiled)",
    "scanner alone: second scan of the same summary (warm)",
    "scanner: `compile_all()` (every rule, set and the keyword DFA: what eager loading costs)",
];

fn request_bytes() -> Vec<u8> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::read(root.join(REQUEST)).unwrap_or_default()
}

fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let start = Instant::now();
    let out = f();
    (out, start.elapsed())
}

/// In a child process: runs every phase once and prints their nanoseconds on one line.
pub fn child() {
    let bytes = request_bytes();
    let (scanner, builtin) = timed(|| Scanner::builtin().expect("built-in rules compile"));
    let (engine, policy) = timed(|| {
        let policy = Policy::builtin("default").expect("the default policy loads");
        PolicyEngine::new(policy, &scanner.rules_sha256()).expect("the default policy compiles")
    });
    let request = GateRequest::from_json(&bytes).expect("the demo request parses");
    let backend = ScannerBackend::new(scanner.clone());
    let check = || {
        engine
            .check(&request, &backend, &scanner, &mut MemoryAudit::default())
            .expect("the demo request is checked")
    };
    let (_, first) = timed(check);
    let (_, second) = timed(check);
    // The scanner alone, fresh, on the summary the runtime sent.
    let fresh = Scanner::builtin().expect("built-in rules compile");
    let narrowed = fresh
        .for_entity_types(POLICY_TYPES)
        .expect("the policy's types are supported");
    let summary = summary_text(&bytes);
    let (_, scan1) = timed(|| narrowed.scan_text("summary", &summary));
    let (_, scan2) = timed(|| narrowed.scan_text("summary", &summary));
    let eager = Scanner::builtin().expect("built-in rules compile");
    let (_, compile) = timed(|| eager.compile_all().expect("built-in rules compile"));
    let all = [builtin, policy, first, second, scan1, scan2, compile];
    let ns: Vec<String> = all.iter().map(|d| d.as_nanos().to_string()).collect();
    println!("phases {}", ns.join(" "));
}

/// The summarizer's raw output in the demo request (the text the gate scans most of).
fn summary_text(bytes: &[u8]) -> String {
    let limits = cq::json::Limits {
        max_bytes: 1 << 24,
        max_depth: 64,
    };
    cq::json::parse(bytes, &limits)
        .ok()
        .and_then(|v| {
            v.get("summarizer")
                .and_then(|s| s.get("raw_output"))
                .and_then(cq::json::Value::as_str)
                .map(str::to_owned)
        })
        .unwrap_or_default()
}

/// Best wall time of `SAMPLES` runs of `cq ARGS`, and the lowest peak RSS `/usr/bin/time`
/// reported (KiB), if it is there.
fn process(args: &[&str]) -> Result<(Duration, Option<u64>), String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut best = Duration::MAX;
    for _ in 0..SAMPLES {
        let start = Instant::now();
        let out = Command::new(env!("CARGO_BIN_EXE_cq"))
            .args(args)
            .current_dir(root)
            .output()
            .map_err(|e| e.to_string())?;
        best = best.min(start.elapsed());
        if !matches!(out.status.code(), Some(0 | 1)) {
            return Err(String::from_utf8_lossy(&out.stderr).into_owned());
        }
    }
    let time = Path::new("/usr/bin/time");
    let mut rss: Option<u64> = None;
    if time.exists() {
        for _ in 0..3 {
            let out = Command::new(time)
                .args(["-f", "%M"])
                .arg(env!("CARGO_BIN_EXE_cq"))
                .args(args)
                .current_dir(root)
                .output()
                .map_err(|e| e.to_string())?;
            let err = String::from_utf8_lossy(&out.stderr);
            if let Some(kb) = err
                .lines()
                .last()
                .and_then(|l| l.trim().parse::<u64>().ok())
            {
                rss = Some(rss.map_or(kb, |r| r.min(kb)));
            }
        }
    }
    Ok((best, rss))
}

/// Prints the start-up tables.
pub fn run() {
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => {
            println!("start-up not measured: {e}");
            return;
        }
    };
    let mut best = vec![u128::MAX; PHASES.len()];
    for _ in 0..SAMPLES {
        let out = Command::new(&exe)
            .env("CQ_BENCH_STARTUP_CHILD", "1")
            .output();
        let Ok(out) = out else { continue };
        let text = String::from_utf8_lossy(&out.stdout);
        let Some(line) = text.lines().find_map(|l| l.strip_prefix("phases ")) else {
            continue;
        };
        for (b, ns) in best.iter_mut().zip(line.split(' ')) {
            if let Ok(ns) = ns.parse::<u128>() {
                *b = (*b).min(ns);
            }
        }
    }
    println!("## Start-up, each phase the best of {SAMPLES} fresh processes\n");
    println!("| phase | time |");
    println!("|---|---|");
    for (name, ns) in PHASES.iter().zip(&best) {
        if *ns == u128::MAX {
            println!("| {name} | not measured |");
        } else {
            println!("| {name} | {:.2} ms |", *ns as f64 / 1e6);
        }
    }
    println!("\n## Processes, best of {SAMPLES} (peak RSS: lowest of 3 by `/usr/bin/time`)\n");
    println!("| command | wall | peak RSS |");
    println!("|---|---|---|");
    let small = std::env::temp_dir().join("cq-bench-small.txt");
    let _ = std::fs::write(
        &small,
        "Refactored the parser; all 214 tests pass (see PR 1234).\n",
    );
    let small_arg = small.to_string_lossy().into_owned();
    let cases: [(&str, Vec<&str>); 3] = [
        ("`cq check` on the demo request", vec!["check", REQUEST]),
        (
            "`cq scan` on one line of text",
            vec!["scan", small_arg.as_str()],
        ),
        ("`cq --version` (the process floor)", vec!["--version"]),
    ];
    for (name, args) in cases {
        match process(&args) {
            Ok((wall, rss)) => {
                let rss = rss.map_or_else(
                    || "not measured".to_owned(),
                    |kb| format!("{:.1} MB", kb as f64 / 1024.0),
                );
                println!("| {name} | {:.1} ms | {rss} |", wall.as_secs_f64() * 1000.0);
            }
            Err(e) => println!("| {name} | failed: {} | |", e.lines().next().unwrap_or("")),
        }
    }
    let _ = std::fs::remove_file(&small);
    println!();
}
