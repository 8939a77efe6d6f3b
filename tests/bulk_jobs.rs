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

/// The demo requests repeated until there are `count`, each copy under its own task id.
fn numbered_requests(count: usize) -> String {
    let lines: Vec<String> = demo_requests().lines().map(str::to_owned).collect();
    let key = "\"task_id\": \"";
    (0..count)
        .map(|i| {
            let line = &lines[i % lines.len()];
            let at = line.find(key).unwrap() + key.len();
            let end = at + line[at..].find('"').unwrap();
            format!("{}-{i}{}\n", &line[..end], &line[end..])
        })
        .collect()
}

#[test]
fn ingest_and_recheck_over_several_batches_do_not_depend_on_the_number_of_threads() {
    // 520 requests: two ingest batches (500 a batch) and, of the quarantined, two recheck
    // rounds (256 a round), so one batch is checked while the one before is recorded.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let file = d.join("requests.jsonl");
    std::fs::write(&file, numbered_requests(520)).unwrap();
    let mut seen = Vec::new();
    for jobs in ["1", "3"] {
        let db = d.join(format!("s{jobs}.db"));
        let ingested = run(cq(d)
            .args(["ingest", "--jobs", jobs])
            .arg(&file)
            .arg("--store")
            .arg(&db));
        let rechecked = run(cq(d)
            .args(["recheck", "--all", "--jobs", jobs, "--store"])
            .arg(&db));
        seen.push((ingested, rechecked, queue(d, &db)));
    }
    assert_eq!(seen[0], seen[1]);
    let (ingested, rechecked, queue) = &seen[0];
    assert_eq!(queue.len(), 520, "every request is a compaction");
    assert!(ingested.starts_with("520 recorded"), "{ingested}");
    let quarantined = queue
        .iter()
        .filter(|row| row.contains("\"status\":\"quarantined\""))
        .count();
    assert!(
        quarantined > 256,
        "{quarantined} quarantined: one recheck round"
    );
    assert!(
        rechecked.ends_with(&format!("rechecked {quarantined}, 0 changed\n")),
        "{rechecked}"
    );
}

#[test]
fn import_over_several_rounds_does_not_depend_on_the_number_of_threads() {
    // Three copies of the transcripts: more files than one round (32) holds, and every copy's
    // compactions already recorded by the first.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/transcripts/claude-code");
    let transcripts = d.join("transcripts");
    for copy in 0..3 {
        let into = transcripts.join(format!("copy{copy}"));
        std::fs::create_dir_all(&into).unwrap();
        for entry in std::fs::read_dir(&source).unwrap() {
            let path = entry.unwrap().path();
            std::fs::copy(&path, into.join(path.file_name().unwrap())).unwrap();
        }
    }
    let mut seen = Vec::new();
    for jobs in ["1", "3"] {
        let db = d.join(format!("s{jobs}.db"));
        let out = run(cq(d)
            .args(["import", "claude-code", "--jobs", jobs])
            .arg(&transcripts)
            .arg("--store")
            .arg(&db));
        seen.push((out, queue(d, &db)));
    }
    assert_eq!(seen[0], seen[1]);
    let (out, queue) = &seen[0];
    assert!(out.contains("in 39 transcript(s)"), "{out}");
    assert!(
        out.contains(&format!("{} already recorded", 2 * queue.len())),
        "{out}"
    );
}
