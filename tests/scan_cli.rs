//! `cq scan`: exit codes, masked output (text and JSON), and errors for bad input.

#![allow(clippy::unwrap_used)]

use cq::commands::scan::{run, run_on, scanner};

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
    assert_eq!(run(Some(clean), false, None, &[]).unwrap(), 0);
    let missing = dir.path().join("missing.txt");
    let err = run(Some(missing), false, None, &[]).unwrap_err();
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
