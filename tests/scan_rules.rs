//! Every rule's own examples must be found by that rule, and its negative examples must not be;
//! the embedded rule pack loads and has a stable digest.

#![allow(clippy::unwrap_used)]

use std::sync::OnceLock;

use cq::scan::Scanner;

/// The built-in pack, compiled once per test binary (regex compilation is slow in debug).
fn builtin() -> &'static Scanner {
    static S: OnceLock<Scanner> = OnceLock::new();
    S.get_or_init(|| Scanner::builtin().unwrap())
}

fn all_rules() -> Scanner {
    let s = builtin();
    let every: Vec<String> = s.entity_types();
    let refs: Vec<&str> = every.iter().map(String::as_str).collect();
    s.for_entity_types(&refs).unwrap()
}

#[test]
fn rule_examples_match_and_negative_examples_do_not() {
    let scanner = all_rules();
    let mut failures = Vec::new();
    for rule in scanner.rules() {
        assert!(
            !rule.examples.is_empty(),
            "rule \"{}\" has no examples",
            rule.id
        );
        for ex in &rule.examples {
            let hit = scanner
                .scan_text("text", ex)
                .iter()
                .any(|f| f.rule_id == rule.id);
            if !hit {
                failures.push(format!("{}: example not found: {ex:?}", rule.id));
            }
        }
        for ex in &rule.negative_examples {
            let hit = scanner
                .scan_text("text", ex)
                .iter()
                .any(|f| f.rule_id == rule.id);
            if hit {
                failures.push(format!("{}: negative example found: {ex:?}", rule.id));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn rule_pack_identity() {
    let a = builtin();
    let b = Scanner::from_files(&[("x.toml".into(), "".into())]).unwrap();
    assert_ne!(a.rules_sha256(), b.rules_sha256());
    assert_eq!(a.rules_sha256(), builtin().clone().rules_sha256());
    assert_eq!(a.version(), "cq-scan-1");
    let mut ids: Vec<&str> = a.rules().iter().map(|r| r.id.as_str()).collect();
    let n = ids.len();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), n, "rule ids are unique");
}

#[test]
fn rules_from_dir_match_builtin_digest_inputs() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/rules");
    let s = Scanner::from_dir(&dir).unwrap();
    assert_eq!(s.rules().len(), builtin().rules().len());
    let empty = tempfile::tempdir().unwrap();
    let err = Scanner::from_dir(empty.path()).unwrap_err().to_string();
    assert!(err.contains("no rule files"), "{err}");
}

#[test]
fn entity_types_and_languages() {
    let s = builtin();
    for t in [
        "SECRET",
        "CREDENTIAL",
        "PII",
        "EMAIL_ADDRESS",
        "IBAN_CODE",
        "DATE_TIME",
    ] {
        assert!(s.supports_entity_type(t), "{t}");
    }
    assert!(!s.supports_entity_type("PERSON"));
    assert!(s.for_entity_types(&["PERSON"]).is_err());
    assert!(s.supports_language("en"));
    assert!(!s.supports_language("ja"));
    let pii_only = s.for_entity_types(&["PII"]).unwrap();
    assert!(pii_only
        .scan_text("t", "ghp_XIxB7KMNdAr3zqWtQqhE94qglHqOzn1D1stg")
        .is_empty());
    assert!(!pii_only
        .scan_text("t", "mail me at jane.roe@corp-mail.net")
        .is_empty());
}

#[test]
fn prose_leaks_are_found_and_prose_identifiers_are_not() {
    let s = builtin();
    for leak in [
        "the db password is hunter2-Prod!",
        "Note: the staging API key is sk_live_4eC39HqLyjWDarjtT1zdp7dc for now.",
        "We rotated it; the new token is 8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c.",
        "Log in with password: Tr0ub4dor&3",
    ] {
        assert!(
            !s.scan_text("summary_text", leak).is_empty(),
            "missed: {leak}"
        );
    }
    for benign in [
        "Fixed in commit 3f2a9c1e0b7d4a5f6e8c9b0a1d2e3f4a5b6c7d8e; see src/scan/rule.rs.",
        "Request id 123e4567-e89b-12d3-a456-426614174000 was retried.",
        "The docs live at https://docs.rs/regex/latest/regex/ and /usr/share/doc/regex.",
        "The password is required and the token is stored in the keyring.",
        "Run `cargo test --test scan_accuracy` and check the token count.",
    ] {
        let found = s.scan_text("summary_text", benign);
        assert!(found.is_empty(), "flagged {benign:?}: {found:?}");
    }
}
