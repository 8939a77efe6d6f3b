//! `cq list`, `show`, `decide`, `status`, `reviewers`, `keys generate` and `audit
//! verify|export|checkpoint` on a real store (the demo's), driven through the binary; and what
//! every command does when its reader goes away (`cq list | head -1`).
#![allow(clippy::unwrap_used)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command as Process, Stdio};

use assert_cmd::Command;

fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("cq")
}

fn cq(dir: &Path) -> Command {
    let mut command = Command::new(bin());
    command
        .env("HOME", dir)
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env("XDG_DATA_HOME", dir.join("data"))
        .env_remove("CQ_STORE")
        .env_remove("CQ_TRUSTED_POLICY_KEYS");
    command
}

/// A demo store in `dir`: its path and the path of alice's key.
fn demo_store(dir: &Path) -> (String, String) {
    let db = dir.join("demo.db");
    cq(dir)
        .args(["demo", "--no-tui", "--store", db.to_str().unwrap()])
        .assert()
        .code(0);
    let key = dir.join("demo.db.reviewers/alice.key");
    (db.display().to_string(), key.display().to_string())
}

fn stdout(command: &mut Command) -> String {
    String::from_utf8(command.output().unwrap().stdout).unwrap()
}

/// Exit code, stdout and stderr.
fn run(command: &mut Command) -> (Option<i32>, String, String) {
    let out = command.output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The id of the first quarantined item of `class` in `cq list --json`.
fn first_of_class(dir: &Path, db: &str, class: &str) -> String {
    let jsonl = stdout(cq(dir).args(["list", "--status", "quarantined", "--json", "--store", db]));
    jsonl
        .lines()
        .find(|l| l.contains(&format!("\"verdict_class\":\"{class}\"")))
        .and_then(|l| l.split("\"id\":\"").nth(1))
        .and_then(|rest| rest.split('"').next())
        .unwrap()
        .to_owned()
}

#[test]
fn a_reviewer_works_through_the_store_commands() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (db, key) = demo_store(d);

    // 18 requests and the real-agent scenarios; 16 of the requests are quarantined, and
    // the agent scenarios as the demo says.
    let agents = cq::service::demo::agents::manifest().unwrap().scenario;
    let total = 18 + agents.len();
    let listed = stdout(cq(d).args(["list", "--store", &db]));
    assert!(
        listed.starts_with("ID ") && listed.contains(&format!("{total} of {total} shown")),
        "{listed}"
    );
    let table = stdout(cq(d).args(["demo", "--no-tui", "--store", &db]));
    let agents_quarantined = agents
        .iter()
        .filter(|a| {
            table
                .lines()
                .any(|l| l.starts_with(&format!("{} ", a.name)) && l.contains("QUARANTINED"))
        })
        .count();
    let jsonl = stdout(cq(d).args(["list", "--status", "quarantined", "--json", "--store", &db]));
    assert_eq!(jsonl.lines().count(), 16 + agents_quarantined);
    assert!(jsonl.lines().all(|l| l.starts_with("{\"anomaly_count\":")));
    let (code, _, err) = run(cq(d).args(["list", "--status", "maybe", "--store", &db]));
    assert_eq!(code, Some(2));
    assert!(err.contains("unknown status \"maybe\""), "{err}");

    let id = first_of_class(d, &db, "INSUFFICIENT_DATA/UNKNOWN");
    // Quarantined: the runtime gets the receipt and no context.
    let status = cq(d)
        .args(["status", &id, "--store", &db])
        .output()
        .unwrap();
    assert_eq!(status.status.code(), Some(1));
    let text = String::from_utf8(status.stdout).unwrap();
    assert!(text.contains("\"status\":\"quarantined\"") && !text.contains("\"messages\""));

    let decide = |args: &[&str]| {
        let mut c = cq(d);
        c.args(["decide", &id, "--store", &db, "--key", &key])
            .args(args);
        c.output().unwrap()
    };
    let stale = decide(&["--reject", "--reason", "poisoned", "--report", "00"]);
    assert_eq!(stale.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&stale.stderr).contains("rechecked since you looked"));
    let wrong = decide(&["--release", "--reason", "poisoned"]);
    assert_eq!(
        wrong.status.code(),
        Some(2),
        "a reject reason cannot release"
    );
    let done = decide(&[
        "--release",
        "--reason",
        "verified-by-hand",
        "--note",
        "checked",
    ]);
    assert_eq!(
        done.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    assert!(String::from_utf8_lossy(&done.stdout).contains("released by \"alice\""));
    let again = decide(&["--reject", "--reason", "poisoned"]);
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("already decided"));

    let status = cq(d)
        .args(["status", &id, "--store", &db])
        .output()
        .unwrap();
    assert_eq!(status.status.code(), Some(0));
    let text = String::from_utf8(status.stdout).unwrap();
    assert!(text.contains("\"decision\":\"release\"") && text.contains("[UNTRUSTED COMPACTED"));

    let shown = stdout(cq(d).args(["show", &id, "--store", &db]));
    assert!(
        shown.contains("decision    release by alice (verified-by-hand): checked"),
        "{shown}"
    );
    let shown = stdout(cq(d).args(["show", &id, "--json", "--store", &db]));
    assert!(
        shown.contains("\"receipts\":[{\"kind\":\"verdict\""),
        "{shown}"
    );
    let (code, _, err) = run(cq(d).args(["show", "nope", "--store", &db]));
    assert_eq!(code, Some(2));
    assert!(err.contains("no compaction \"nope\""), "{err}");

    let (code, verified, _) = run(cq(d).args(["audit", "verify", "--store", &db]));
    assert_eq!(code, Some(0));
    assert!(verified.starts_with("audit log ok:"), "{verified}");
    let note = stdout(cq(d).args(["audit", "checkpoint", "--store", &db]));
    assert!(
        note.starts_with("cq.store/") && note.contains("\n\n\u{2014} "),
        "{note}"
    );
    let cp = d.join("checkpoint.txt");
    std::fs::write(&cp, &note).unwrap();
    cq(d)
        .args([
            "audit",
            "verify",
            "--store",
            &db,
            "--checkpoint",
            cp.to_str().unwrap(),
        ])
        .assert()
        .code(0);
    let export = stdout(cq(d).args(["audit", "export", "--store", &db]));
    assert!(export.lines().count() > 18);
    assert!(export
        .lines()
        .all(|l| l.starts_with("{\"key_id\":") && l.contains("\"receipt\":{")));
    let reviewers = stdout(cq(d).args(["reviewers", "list", "--store", &db]));
    assert!(reviewers.contains("alice\tapprover\t") && reviewers.contains("bob\tapprover\t"));
}

#[test]
fn a_tampered_request_is_never_handed_to_the_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (db, _) = demo_store(d);
    let accepted = stdout(cq(d).args(["list", "--status", "accepted", "--json", "--store", &db]));
    // A request checked under the demo's `default` policy (not a real-agent scenario,
    // which `cq status` renders under `prose`).
    let id = accepted
        .lines()
        .find(|l| !l.contains("spotter-fum"))
        .and_then(|l| l.split("\"id\":\"").nth(1))
        .and_then(|rest| rest.split('"').next())
        .unwrap()
        .to_owned();
    cq(d).args(["status", &id, "--store", &db]).assert().code(0);
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute(
        "UPDATE requests SET request_json = replace(request_json, 'the', 'THE') WHERE compaction_id = ?1",
        [&id],
    )
    .unwrap();
    drop(conn);
    let out = cq(d)
        .args(["status", &id, "--store", &db])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "tamper is exit 1, not a refusal"
    );
    assert!(out.stdout.is_empty(), "nothing is handed to the runtime");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("tampered") && err.contains("cq audit verify"),
        "{err}"
    );
}

/// Runs `cq ARGS` with its standard output already closed (what `| head -0` does): the exit
/// code, and standard error.
fn with_stdout_closed(dir: &Path, args: &[&str], stdin: Option<&[u8]>) -> (Option<i32>, String) {
    let mut child = Process::new(bin())
        .args(args)
        .env("HOME", dir)
        .env("XDG_DATA_HOME", dir.join("data"))
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env_remove("CQ_STORE")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    if let (Some(bytes), Some(mut input)) = (stdin, child.stdin.take()) {
        use std::io::Write;
        input.write_all(bytes).unwrap();
    }
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    (child.wait().unwrap().code(), err)
}

#[test]
fn a_closed_stdout_keeps_the_real_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (db, _) = demo_store(d);
    for (args, code) in [
        (vec!["list", "--store", &db], 0),
        (vec!["policy", "prompt"], 0),
        (vec!["audit", "verify", "--store", &db], 0),
        (vec!["audit", "export", "--store", &db], 0),
        (vec!["show", "nope", "--store", &db], 2),
    ] {
        let (got, err) = with_stdout_closed(d, &args, None);
        assert_eq!(got, Some(code), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    let demo = |name: &str| format!("{}/assets/demo/{name}", env!("CARGO_MANIFEST_DIR"));
    let (got, err) = with_stdout_closed(d, &["check", &demo("04_credentials.json")], None);
    assert_eq!(got, Some(1), "quarantined stays 1: {err}");
    let (got, _) = with_stdout_closed(d, &["check", &demo("01_clean_accepted.json")], None);
    assert_eq!(got, Some(0));
    let request = std::fs::read(demo("04_credentials.json")).unwrap();
    let (got, _) = with_stdout_closed(d, &["check", "-", "--json"], Some(&request));
    assert_eq!(got, Some(1));
}

#[test]
fn cli_lines_badge_what_could_steer_a_terminal() {
    assert_eq!(
        cq::sanitize::line("ok \u{1b}[31mred\u{202e}x\u{200b}\nnext"),
        "ok ⟨ESC[31m⟩red⟨RLO⟩x⟨ZWSP⟩⟨LF⟩next"
    );
    assert_eq!(cq::sanitize::line("tâche — fine"), "tâche — fine");
    // What the old CLI escaper let through.
    for hidden in [
        "\u{061c}", "\u{2028}", "\u{2029}", "\u{ad}", "\u{fe0f}", "\u{e000}",
    ] {
        assert!(
            cq::sanitize::line(&format!("a{hidden}b")).contains('⟨'),
            "{hidden:?}"
        );
    }
}
