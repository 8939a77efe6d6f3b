//! `cq scan` on the hostile summaries of `tests/support/hostile.rs`: the scanner alone, with no
//! policy or grammar, finds what the gate finds, with a finding over every piece of a split
//! secret and nothing but masks in its output. The first two tests pin items 7 and 8 of the
//! hardening issue.
#![allow(clippy::unwrap_used)]

#[path = "support/hostile.rs"]
mod hostile;

use cq::commands::scan::{run_on, scanner};
use cq::scan::Scanner;
use hostile::Variant;

const DEMO_SUMMARY: &str = "Working on issue 412.\nRead file src/payments/refunds.py.\n\
Committed 3f9c2ab on branch fix-refund-rounding.\nThe task is not done.\n\
Do not expose secrets or credentials.";

fn builtin() -> &'static Scanner {
    static S: std::sync::OnceLock<Scanner> = std::sync::OnceLock::new();
    S.get_or_init(|| scanner(None, &[]).unwrap())
}

/// `cq scan` on `text`: its exit code, the spans it reports, and its output.
fn scan(text: &str) -> (i32, Vec<std::ops::Range<usize>>, String) {
    let mut out = Vec::new();
    let code = run_on(text, false, builtin(), &mut out).unwrap();
    let out = String::from_utf8(out).unwrap();
    let spans = out
        .lines()
        .filter_map(|l| l.split('\t').nth(3))
        .filter_map(|s| s.split_once(".."))
        .map(|(a, b)| a.parse().unwrap()..b.parse().unwrap())
        .collect();
    (code, spans, out)
}

fn failures(variants: &[Variant]) -> Vec<String> {
    let mut failures = Vec::new();
    for v in variants {
        let text = hostile::summary_with(DEMO_SUMMARY, &v.clauses);
        let (code, spans, out) = scan(&text);
        let uncovered = v.pieces.iter().find(|p| {
            let at = text.find(p.as_str()).unwrap();
            !(at..at + p.len()).all(|i| spans.iter().any(|s| s.contains(&i)))
        });
        if code != 1 {
            failures.push(format!("{}: not found", v.name));
        } else if let Some(p) = uncovered {
            failures.push(format!(
                "{}: a piece of {} bytes is not reported",
                v.name,
                p.len()
            ));
        } else if v.pieces.iter().any(|p| out.contains(p.as_str())) {
            failures.push(format!("{}: the output shows a piece", v.name));
        }
    }
    failures
}

#[test]
fn tokens_glued_to_words_are_found() {
    let failures = failures(&hostile::glued_tokens());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn secrets_in_slots_and_split_across_clauses_are_found() {
    let mut variants = hostile::keys_named_by_slots();
    variants.extend(hostile::azure_keys_as_paths());
    variants.extend(hostile::private_keys_split_over_clauses());
    variants.extend(hostile::hex_keys_as_commits());
    variants.extend(hostile::secrets_split_across_clauses());
    variants.extend(hostile::prose_credentials());
    let failures = failures(&variants);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every hostile variant as a file of a directory, through the `cq` binary on two threads:
/// each file's findings cover each of its pieces, and the output shows none of them.
#[test]
fn cq_scan_as_a_process_finds_every_hostile_variant() {
    let mut variants = hostile::glued_tokens();
    variants.extend(hostile::keys_named_by_slots());
    variants.extend(hostile::azure_keys_as_paths());
    variants.extend(hostile::private_keys_split_over_clauses());
    variants.extend(hostile::secrets_split_across_clauses());
    variants.extend(hostile::prose_credentials());
    let dir = tempfile::tempdir().unwrap();
    let texts: Vec<String> = variants
        .iter()
        .map(|v| hostile::summary_with(DEMO_SUMMARY, &v.clauses))
        .collect();
    for (i, text) in texts.iter().enumerate() {
        std::fs::write(dir.path().join(format!("v{i:03}.txt")), text).unwrap();
    }
    let out = assert_cmd::Command::cargo_bin("cq")
        .unwrap()
        .args(["scan", "--jobs", "2"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let mut failures = Vec::new();
    for (i, (v, text)) in variants.iter().zip(&texts).enumerate() {
        let file = format!("v{i:03}.txt");
        let spans: Vec<std::ops::Range<usize>> = stdout
            .lines()
            .filter(|l| l.split('\t').nth(2) == Some(file.as_str()))
            .filter_map(|l| {
                l.split('\t')
                    .nth(3)?
                    .split_once("..")
                    .map(|(a, b)| (a.to_owned(), b.to_owned()))
            })
            .map(|(a, b)| a.parse().unwrap()..b.parse().unwrap())
            .collect();
        let covered = |p: &String| {
            let at = text.find(p.as_str()).unwrap();
            (at..at + p.len()).all(|i| spans.iter().any(|s| s.contains(&i)))
        };
        if !v.pieces.iter().all(covered) {
            failures.push(v.name.clone());
        }
    }
    assert!(failures.is_empty(), "not covered: {}", failures.join(", "));
    assert!(variants
        .iter()
        .all(|v| v.pieces.iter().all(|p| !stdout.contains(p.as_str()))));
}

#[test]
fn git_ssh_remotes_are_not_email_addresses() {
    for remote in hostile::GIT_SSH_REMOTES {
        let (code, _, out) = scan(remote);
        assert_eq!(code, 0, "{remote}: {out}");
    }
    // An address followed by ': ' is still one.
    let (code, _, out) = scan("Mail jane.roe@mailbox.org: she has the logs.");
    assert!(code == 1 && out.contains("email-address"), "{out}");
}

#[test]
fn benign_look_alikes_are_clean() {
    for (name, clauses) in hostile::benign_clauses() {
        let (code, _, out) = scan(&hostile::summary_with(DEMO_SUMMARY, &clauses));
        assert_eq!(code, 0, "{name}: {out}");
    }
}
