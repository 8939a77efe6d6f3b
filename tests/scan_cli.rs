//! `cq scan`: exit codes, masked output (text and JSON), errors for bad input, directories
//! and large files scanned on several threads with the output of one.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use cq::cli::ScanArgs;
use cq::commands::scan::{run, run_on, scanner};
use cq::scan::bulk::SPLIT_ABOVE;

const SECRET: &str = "ghp_XIxB7KMNdAr3zqWtQqhE94qglHqOzn1D1stg";

fn output(text: &str, json: bool) -> (i32, String) {
    let mut out = Vec::new();
    let code = run_on(text, json, &scanner(None, &[]).unwrap(), &mut out).unwrap();
    (code, String::from_utf8(out).unwrap())
}

#[test]
fn findings_exit_one_and_are_masked() {
    let text = format!("deploy with GITHUB_TOKEN={SECRET} and mail ops.lead@corp-mail.net");
    for json in [false, true] {
        let (code, out) = output(&text, json);
        assert_eq!(code, 1);
        assert!(out.contains("github-token"), "{out}");
        assert!(out.contains("********"), "{out}");
        for w in SECRET.as_bytes().windows(4) {
            let piece = std::str::from_utf8(w).unwrap();
            assert!(
                !out.contains(piece) || "github-token".contains(piece),
                "output leaks {piece:?}: {out}"
            );
        }
        assert!(!out.contains("ops.lead"), "{out}");
    }
}

#[test]
fn json_member_values_are_scanned_with_their_names() {
    // The value alone is an ordinary word mix; under a secret-named member it is a password.
    let (code, out) = output(r#"{"note": "S3cr3t-Pa55w0rd!"}"#, false);
    assert_eq!(code, 0, "{out}");
    let (code, out) = output(
        r#"{"db": {"password": "S3cr3t-Pa55w0rd!", "user": "app"}}"#,
        false,
    );
    assert_eq!(code, 1, "{out}");
    assert!(
        out.starts_with("generic-secret-assignment\tcredential\tdb.password\t0..16\t"),
        "{out}"
    );
    assert!(!out.contains("Pa55"), "{out}");
    let (code, out) = output(r#"{"password": "${DB_PASSWORD}"}"#, false);
    assert_eq!(code, 0, "{out}");
}

#[test]
fn clean_input_exits_zero() {
    let (code, out) = output("Refactored the parser; all 214 tests pass.", false);
    assert_eq!(code, 0);
    assert!(out.starts_with("clean"), "{out}");
    let (code, out) = output("nothing to see", true);
    assert_eq!(code, 0);
    assert!(out.contains("\"findings\":[]"), "{out}");
}

#[test]
fn file_input_and_errors() {
    let dir = tempfile::tempdir().unwrap();
    let clean = dir.path().join("clean.txt");
    std::fs::write(&clean, "hello").unwrap();
    assert_eq!(run(&args(&clean, None), &mut Vec::new()).unwrap(), 0);
    let missing = dir.path().join("missing.txt");
    let err = run(&args(&missing, None), &mut Vec::new()).unwrap_err();
    assert!(format!("{err:#}").contains("missing.txt"), "{err:#}");
    let err = scanner(Some(dir.path()), &[]).unwrap_err();
    assert!(format!("{err:#}").contains("no rule files"), "{err:#}");
    let err = scanner(None, &["PERSON".to_owned()]).unwrap_err();
    let msg = format!("{err:#}");
    assert!(msg.contains("PERSON") && msg.contains("UK_NHS"), "{msg}");
}

#[test]
fn bare_national_numbers_need_their_word_unless_their_type_is_named() {
    // An epoch timestamp and a byte count: each passes a check digit (NHS, ACN, NPI, ...).
    let log = r#"{"ts": 1781084494, "level": "info", "bytes": 943476591}"#;
    let nhs = "referral for NHS no. 150 487 3629 sent";
    let bare = "referral 150 487 3629 sent";
    let scan = |types: &[&str], text: &str| {
        let types: Vec<String> = types.iter().map(|t| (*t).to_owned()).collect();
        let mut out = Vec::new();
        let code = run_on(text, false, &scanner(None, &types).unwrap(), &mut out).unwrap();
        (code, String::from_utf8(out).unwrap())
    };
    assert_eq!(scan(&[], log).0, 0, "{}", scan(&[], log).1);
    assert_eq!(scan(&["PII"], bare).0, 0, "{}", scan(&["PII"], bare).1);
    let (code, out) = scan(&["PII"], nhs);
    assert_eq!(code, 1);
    assert!(out.contains("uk-nhs-number"), "{out}");
    let (code, out) = scan(&["UK_NHS"], bare);
    assert_eq!(code, 1);
    assert!(out.starts_with("uk-nhs-number"), "{out}");
}

fn args(input: &Path, jobs: Option<u16>) -> ScanArgs {
    ScanArgs {
        input: Some(input.to_path_buf()),
        jobs,
        json: false,
        rules: None,
        entity_types: Vec::new(),
    }
}

/// `cq scan` run as a process: exit code, stdout, stderr.
fn cq_scan(input: &Path, extra: &[&str]) -> (i32, String, String) {
    let out = assert_cmd::Command::cargo_bin("cq")
        .unwrap()
        .arg("scan")
        .arg(input)
        .args(extra)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn a_directory_is_scanned_in_path_order_and_binary_files_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "b/notes.md",
        b"line one\nmail ops.lead@corp-mail.net\n",
    );
    write(root, "a.env", format!("GITHUB_TOKEN={SECRET}\n").as_bytes());
    write(
        root,
        "b/conf.json",
        br#"{"db": {"password": "S3cr3t-Pa55w0rd!"}}"#,
    );
    write(root, "image.bin", b"PNG\0\x01\x02");
    write(root, "latin1.txt", b"caf\xe9 password = Tr0ub4dor&3-x\n");
    write(root, "clean.txt", b"nothing here\n");
    let (code, out, err) = cq_scan(root, &[]);
    assert_eq!(code, 1, "{out}{err}");
    let fields: Vec<(&str, &str, &str)> = out
        .lines()
        .map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            (c[0], c[2], c[4])
        })
        .collect();
    assert_eq!(
        fields,
        vec![
            ("github-token", "a.env", "1"),
            ("generic-secret-assignment", "a.env", "1"),
            ("generic-secret-assignment", "b/conf.json:db.password", "-"),
            ("email-address", "b/notes.md", "2"),
        ],
        "{out}"
    );
    assert!(!out.contains("XIxB7") && !out.contains("Pa55"), "{out}");
    assert!(err.contains("\"image.bin\": binary file"), "{err}");
    assert!(err.contains("\"latin1.txt\": not UTF-8 text"), "{err}");
    let (_, json, _) = cq_scan(root, &["--json"]);
    assert!(json.contains("\"files\":4"), "{json}");
    assert!(json.contains("{\"path\":\"image.bin\",\"reason\":\"binary file (NUL byte)\"}"));
    assert!(json.contains("\"line\":2"), "{json}");
    // Clean directories say how many files they read.
    let clean = tempfile::tempdir().unwrap();
    write(clean.path(), "x.txt", b"hello\n");
    let (code, out, _) = cq_scan(clean.path(), &[]);
    assert_eq!(code, 0);
    assert!(
        out.starts_with("clean: no findings in 1 files, 0 skipped"),
        "{out}"
    );
}

/// A text over the split size with planted findings on known lines.
fn large_text() -> (String, Vec<usize>) {
    let mut text = String::new();
    let mut planted = Vec::new();
    let mut line = 1;
    while text.len() < SPLIT_ABOVE + SPLIT_ABOVE / 2 {
        if line % 1500 == 0 {
            text.push_str(&format!("contact jane.{line}@corp-mail.net today\n"));
            planted.push(line);
        } else {
            text.push_str("an ordinary line about the parser, its tests and release 1.2\n");
        }
        line += 1;
    }
    (text, planted)
}

#[test]
fn a_large_file_in_chunks_maps_offsets_and_lines_back() {
    let dir = tempfile::tempdir().unwrap();
    let (text, planted) = large_text();
    let file = write(dir.path(), "big.log", text.as_bytes());
    let whole = scanner(None, &[]).unwrap().scan_text("text", &text);
    let (code, out, _) = cq_scan(&file, &["--json", "--jobs", "2"]);
    assert_eq!(code, 1);
    let mut expected = Vec::new();
    for f in &whole {
        let line = text[..f.span.start].matches('\n').count() + 1;
        expected.push(format!(
            "\"field_path\":\"text\",\"span\":[{},{}],\"line\":{line}",
            f.span.start, f.span.end
        ));
    }
    let emails: Vec<usize> = whole
        .iter()
        .filter(|f| f.rule_id == "email-address")
        .map(|f| text[..f.span.start].matches('\n').count() + 1)
        .collect();
    assert_eq!(emails, planted);
    for e in &expected {
        assert!(out.contains(e.as_str()), "missing {e}");
    }
    assert_eq!(out.matches("\"rule_id\"").count(), whole.len());
}

#[test]
fn findings_do_not_depend_on_the_number_of_threads() {
    let dir = tempfile::tempdir().unwrap();
    let (text, _) = large_text();
    write(dir.path(), "big/one.log", text.as_bytes());
    for i in 0..24 {
        let body = format!("file {i}\nGITHUB_TOKEN={SECRET}\nmail a{i}.b@corp-mail.net\n");
        write(dir.path(), &format!("many/f{i:02}.txt"), body.as_bytes());
    }
    let (_, one, _) = cq_scan(dir.path(), &["--jobs", "1"]);
    assert!(one.lines().count() > 50, "{one}");
    for jobs in ["2", "3", "8"] {
        let (_, many, _) = cq_scan(dir.path(), &["--jobs", jobs]);
        assert_eq!(many, one, "--jobs {jobs}");
    }
    let (code, _, err) = cq_scan(dir.path(), &["--jobs", "0"]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn a_text_listing_longer_than_its_buffer_prints_every_finding_once_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let text: String = (1..=3000)
        .map(|i| format!("line {i}: write to person.{i}@corp-mail.net\n"))
        .collect();
    let file = write(dir.path(), "mails.txt", text.as_bytes());
    let whole = scanner(None, &[]).unwrap().scan_text("text", &text);
    let (code, out, _) = cq_scan(&file, &["--jobs", "2"]);
    assert_eq!(code, 1);
    assert!(out.len() > 64 << 10, "{} bytes", out.len());
    let expected: Vec<String> = whole
        .iter()
        .map(|f| {
            let line = text[..f.span.start].matches('\n').count() + 1;
            format!(
                "{}\t{}\ttext\t{}..{}\t{line}\t{}\t********",
                f.rule_id, f.category, f.span.start, f.span.end, f.confidence
            )
        })
        .collect();
    let printed: Vec<&str> = out.lines().collect();
    assert_eq!(printed, expected);
}

#[test]
fn a_rules_error_is_reported_whatever_the_input_and_without_waiting_for_it() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("rules");
    std::fs::create_dir(&rules).unwrap();
    let rules_arg = rules.to_str().unwrap();
    let (big, _) = large_text();
    let inputs = [
        write(dir.path(), "small.txt", b"password = S3cr3t-Pa55w0rd!\n"),
        write(dir.path(), "big.txt", big.as_bytes()),
        write(dir.path(), "latin1.txt", b"caf\xe9 token"),
        dir.path().join("missing.txt"),
    ];
    for input in &inputs {
        for jobs in ["1", "2"] {
            let (code, out, err) = cq_scan(input, &["--rules", rules_arg, "--jobs", jobs]);
            let case = format!("{} --jobs {jobs}", input.display());
            assert_eq!(code, 2, "{case}: {err}");
            assert!(out.is_empty(), "{case}: {out}");
            assert!(err.contains("no rule files"), "{case}: {err}");
        }
    }
    // Standard input that never ends: the rules' error comes first, not after the input.
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("cq"))
        .args(["scan", "--rules", rules_arg])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let _open = child.stdin.take();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert_eq!(status.and_then(|s| s.code()), Some(2), "waited for stdin");
}

#[test]
fn a_file_that_is_not_utf8_is_named_with_its_first_bad_byte_on_any_number_of_threads() {
    let dir = tempfile::tempdir().unwrap();
    let (mut big, _) = large_text();
    big.push_str("tail");
    let mut bytes = big.into_bytes();
    let at = bytes.len() - 2;
    bytes[at] = 0xff;
    let input = write(dir.path(), "big.bin.txt", &bytes);
    for jobs in ["1", "2", "3"] {
        let (code, out, err) = cq_scan(&input, &["--jobs", jobs]);
        assert_eq!(code, 2, "--jobs {jobs}: {err}");
        assert!(out.is_empty(), "{out}");
        assert!(
            err.contains("big.bin.txt") && err.contains(&format!("not UTF-8 text (byte {at})")),
            "--jobs {jobs}: {err}"
        );
    }
}
