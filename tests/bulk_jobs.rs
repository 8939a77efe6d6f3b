//! Bulk commands on many threads record and print the same as on one: `cq ingest`, `cq import`
//! and `cq recheck --all` with `--jobs 1` and `--jobs 3` give the same compactions in the same
//! order, the same verdicts and the same output.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::Command;

fn cq(dir: &Path) -> Command {
    let mut command = Command::new(assert_cmd::cargo::cargo_bin("cq"));
    command
        .env("HOME", dir)
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env("XDG_DATA_HOME", dir.join("data"))
        .env_remove("CQ_STORE");
    command
}

fn run(command: &mut Command) -> String {
    let out = command.output().unwrap();
    assert!(
        out.status.code().is_some_and(|c| c <= 1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The queue in record order, without the times.
fn queue(dir: &Path, db: &Path) -> Vec<String> {
    let text = run(cq(dir)
        .args(["list", "--json", "--limit", "1000", "--store"])
        .arg(db));
    let mut rows: Vec<String> = text
        .lines()
        .map(|l| {
            let cut = l.find("\"created_at\"").unwrap();
            let end = l[cut..].find(',').map_or(l.len(), |e| cut + e);
            format!("{}{}", &l[..cut], &l[end..])
        })
        .collect();
    rows.sort();
    rows
}

fn demo_requests() -> String {
    let dir = format!("{}/assets/demo", env!("CARGO_MANIFEST_DIR"));
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    names.sort();
    names
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            text.lines().collect::<Vec<_>>().join(" ") + "\n"
        })
        .collect()
}

#[test]
fn ingest_and_recheck_do_not_depend_on_the_number_of_threads() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let file = d.join("requests.jsonl");
    std::fs::write(&file, demo_requests()).unwrap();
    let mut outputs = Vec::new();
    let mut queues = Vec::new();
    for jobs in ["1", "3"] {
        let db = d.join(format!("s{jobs}.db"));
        let ingested = run(cq(d)
            .args(["ingest", "--jobs", jobs])
            .arg(&file)
            .arg("--store")
            .arg(&db));
        let rechecked = run(cq(d)
            .args([
                "recheck",
                "--all",
                "--policy",
                "seed-compatible",
                "--jobs",
                jobs,
                "--store",
            ])
            .arg(&db));
        outputs.push((ingested, rechecked));
        queues.push(queue(d, &db));
    }
    assert_eq!(outputs[0], outputs[1]);
    assert_eq!(queues[0], queues[1]);
    assert!(outputs[0].1.contains("rechecked 16"), "{}", outputs[0].1);
}

#[test]
fn import_does_not_depend_on_the_number_of_threads() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let transcripts = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/transcripts/claude-code");
    let mut seen = Vec::new();
    for jobs in ["1", "3"] {
        let db = d.join(format!("s{jobs}.db"));
        let out = run(cq(d)
            .args([
                "import",
                "claude-code",
                "--jobs",
                jobs,
                "--policy",
                "default",
            ])
            .arg(&transcripts)
            .arg("--store")
            .arg(&db));
        seen.push((out, queue(d, &db)));
    }
    assert_eq!(seen[0], seen[1]);
}
