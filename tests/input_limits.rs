//! Inputs bigger than cq reads are refused while they are read, not after: an endless stream
//! costs at most the cap in memory, and a bad line of a JSONL file is reported by number while
//! the rest is recorded.
#![allow(clippy::unwrap_used)]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

fn cq(dir: &Path) -> Command {
    let mut command = Command::new(assert_cmd::cargo::cargo_bin("cq"));
    command
        .env("HOME", dir)
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env("XDG_DATA_HOME", dir.join("data"))
        .env_remove("CQ_STORE");
    command
}

#[test]
fn an_endless_request_is_refused_at_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let out = cq(dir.path())
        .args(["check", "/dev/zero"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("larger than") && err.contains("/dev/zero"),
        "{err}"
    );
}

#[test]
fn a_request_streamed_past_the_cap_on_stdin_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = cq(dir.path())
        .args(["check", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let block = vec![b' '; 1 << 20];
        // 80 MiB, past the 64 MiB cap; cq stops reading, so the pipe breaks.
        for _ in 0..80 {
            if input.write_all(&block).is_err() {
                break;
            }
        }
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("larger than"));
}

#[test]
fn ingest_reports_an_over_long_and_a_non_utf8_line_by_number() {
    let dir = tempfile::tempdir().unwrap();
    let demo = std::fs::read_to_string(format!(
        "{}/assets/demo/01_clean_accepted.json",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let one_line: String = demo.lines().collect::<Vec<_>>().join(" ");
    let file = dir.path().join("requests.jsonl");
    let mut f = std::fs::File::create(&file).unwrap();
    writeln!(f, "{one_line}").unwrap();
    f.write_all(b"{\"not utf-8\": \"\xff\xfe\"}\n").unwrap();
    f.write_all(&vec![b'x'; 65 * 1024 * 1024]).unwrap();
    f.write_all(b"\n").unwrap();
    drop(f);
    let db = dir.path().join("s.db");
    let out = cq(dir.path())
        .args(["ingest"])
        .arg(&file)
        .arg("--store")
        .arg(&db)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "bad lines make exit 1");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("1 recorded: 1 accepted"), "{text}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("line 2:"), "{err}");
    assert!(
        err.contains("line 3:") && err.contains("bytes, more than"),
        "{err}"
    );
}

#[test]
fn a_huge_pinned_pattern_or_id_is_quoted_as_an_excerpt() {
    let dir = tempfile::tempdir().unwrap();
    let base: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string("assets/demo/01_clean_accepted.json").unwrap(),
    )
    .unwrap();
    let huge = "a".repeat(990_000);
    for pinned in [
        serde_json::json!({"id": "PIN-X", "severity": "critical", "text": "t",
                           "forbidden_patterns": [format!("({huge}")]}),
        serde_json::json!({"id": "PIN-X", "severity": huge, "text": "t"}),
        serde_json::json!({"id": format!("PIN-{huge}"), "severity": "critical", "text": "t",
                           "forbidden_patterns": ["(x"]}),
    ] {
        let mut request = base.clone();
        request["pinned_constraints"] = serde_json::json!([pinned]);
        let path = dir.path().join("request.json");
        std::fs::write(&path, request.to_string()).unwrap();
        let out = cq(dir.path()).arg("check").arg(&path).output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.len() < 2_000, "{} bytes of stderr", err.len());
        assert!(err.contains("more bytes"), "{err}");
    }
}
