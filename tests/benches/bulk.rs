//! `cargo bench --bench bulk`: the bulk commands as processes pinned to one core (`taskset -c
//! 0`, `--jobs 1`), with `--jobs 1` and with `--jobs` every core, in the same run: `cq ingest` of a JSONL file of requests (the demo requests, each repeated
//! under numbered task ids so that every line is a new compaction), `cq recheck --all` of the
//! quarantine that leaves, and `cq import claude-code` of every transcript under
//! `tests/transcripts`. Each row is the best of `CQ_BENCH_RUNS` (default 3) runs, each on a
//! fresh copy of its store; what each command prints must be the same on one thread and on
//! many. `CQ_BENCH_REQUESTS` (default 3,000) sets the number of requests. Prints a markdown
//! table.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

#[path = "variant.rs"]
mod variant;
use variant::Variant;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn cq(home: &Path, variant: Variant) -> Command {
    let mut command = variant.command();
    command
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_DATA_HOME", home.join("data"))
        .env_remove("CQ_STORE");
    command
}

/// Runs `command`; its standard output and how long it took. Exit codes 0 and 1 (findings,
/// quarantined items) are results; anything else stops the bench.
fn timed(command: &mut Command) -> (String, Duration) {
    let start = Instant::now();
    let out = command.output().unwrap();
    let took = start.elapsed();
    assert!(
        out.status.code().is_some_and(|c| c <= 1),
        "{command:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (String::from_utf8(out.stdout).unwrap(), took)
}

/// The demo requests, one per line, repeated until there are `count`, each copy under its own
/// task id (so its digest, and the compaction it records, is new).
fn requests(count: usize) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/demo");
    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    names.sort();
    let lines: Vec<String> = names
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            text.lines().collect::<Vec<_>>().join(" ")
        })
        .collect();
    let mut out = String::new();
    for i in 0..count {
        let line = &lines[i % lines.len()];
        // The task id's value ends at the first quote after `"task_id": "`.
        let key = "\"task_id\": \"";
        let at = line.find(key).unwrap() + key.len();
        let end = at + line[at..].find('"').unwrap();
        out.push_str(&line[..end]);
        out.push_str(&format!("-{i}"));
        out.push_str(&line[end..]);
        out.push('\n');
    }
    out
}

/// Copies the SQLite store `from` (with its journal and key files) to `to`.
fn copy_store(from: &Path, to: &Path) {
    for suffix in ["", "-wal", "-shm", ".key"] {
        let source = PathBuf::from(format!("{}{suffix}", from.display()));
        if source.exists() {
            std::fs::copy(&source, format!("{}{suffix}", to.display())).unwrap();
        }
    }
}

struct Row {
    work: String,
    times: Vec<Duration>,
}

/// The best of `runs` runs of `make(variant, name)` for each variant (`name` is new for every
/// run); the output of every run must equal the first.
fn measure(
    work: &str,
    variants: &[Variant],
    runs: usize,
    mut make: impl FnMut(Variant, &str) -> Command,
) -> Row {
    let mut times = vec![Duration::MAX; variants.len()];
    let mut first: Option<String> = None;
    for run in 0..runs {
        for (v, &variant) in variants.iter().enumerate() {
            let name = format!("{v}-{run}");
            let (out, took) = timed(&mut make(variant, &name));
            match &first {
                Some(f) => assert_eq!(
                    &out, f,
                    "{work}: --jobs {} printed something else",
                    variant.jobs
                ),
                None => first = Some(out),
            }
            times[v] = times[v].min(took);
        }
    }
    Row {
        work: work.to_owned(),
        times,
    }
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let runs = env_usize("CQ_BENCH_RUNS", 3).max(1);
    let count = env_usize("CQ_BENCH_REQUESTS", 3000).max(1);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let pinning = variant::pinning();
    let mut variants = Vec::new();
    if pinning {
        variants.push(Variant::one_core());
    }
    variants.push(Variant::jobs(1));
    if cores > 1 {
        variants.push(Variant::jobs(cores));
    }
    let plain = Variant::jobs(1);
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let file = home.join("requests.jsonl");
    let text = requests(count);
    std::fs::write(&file, &text).unwrap();
    let mut rows = Vec::new();

    rows.push(measure(
        &format!(
            "`cq ingest`: {count} requests ({:.1} MB), checked and recorded",
            text.len() as f64 / 1e6
        ),
        &variants,
        runs,
        |variant, name| {
            let db = home.join(format!("ingest-{name}.db"));
            let mut c = cq(home, variant);
            c.args(["ingest", "--jobs", &variant.jobs.to_string()])
                .arg(&file)
                .arg("--store")
                .arg(&db);
            c
        },
    ));

    // The quarantine an ingest leaves, rechecked on a fresh copy each run.
    let ingested = home.join("ingest-0-0.db");
    let quarantined = cq(home, plain)
        .args([
            "list",
            "--json",
            "--status",
            "quarantined",
            "--limit",
            "1000000",
            "--store",
        ])
        .arg(&ingested)
        .output()
        .unwrap()
        .stdout
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .count();
    rows.push(measure(
        &format!("`cq recheck --all`: the {quarantined} quarantined compactions it leaves"),
        &variants,
        runs,
        |variant, name| {
            let db = home.join(format!("recheck-{name}.db"));
            copy_store(&ingested, &db);
            let mut c = cq(home, variant);
            c.args(["recheck", "--all", "--jobs", &variant.jobs.to_string()])
                .arg("--store")
                .arg(&db);
            c
        },
    ));

    let transcripts = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/transcripts");
    rows.push(measure(
        "`cq import claude-code tests/transcripts` (every transcript under it)",
        &variants,
        runs,
        |variant, name| {
            let db = home.join(format!("import-{name}.db"));
            let mut c = cq(home, variant);
            c.args(["import", "claude-code"])
                .arg(&transcripts)
                .args(["--jobs", &variant.jobs.to_string(), "--store"])
                .arg(&db);
            c
        },
    ));

    let load = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "unknown".to_owned());
    println!("## Bulk commands as processes (best of {runs}; load average {load} at the end)\n");
    let header: Vec<String> = variants
        .iter()
        .map(|v| match v.pinned {
            true => "one core (`taskset -c 0`, `--jobs 1`)".to_owned(),
            false => format!("`--jobs {}`", v.jobs),
        })
        .collect();
    let compare = variants.len() > 1;
    print!("| work | {} |", header.join(" | "));
    if compare {
        print!(" `--jobs {cores}` against one core |");
    }
    println!(
        "\n|---|{}",
        "---|".repeat(variants.len() + usize::from(compare))
    );
    for r in &rows {
        print!("| {} |", r.work);
        for t in &r.times {
            print!(" {:.3} s |", t.as_secs_f64());
        }
        if compare {
            let last = r.times[r.times.len() - 1].as_secs_f64();
            print!(" {:.2}x |", r.times[0].as_secs_f64() / last);
        }
        println!();
    }
    if !pinning {
        println!("\n- one core: not measured: `taskset -c 0 true` did not run");
    }
    if cores == 1 {
        println!("\n- one core only: no speed-up to measure");
    }
}
