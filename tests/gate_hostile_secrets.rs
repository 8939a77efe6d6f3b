//! The gate against hostile summaries: an attacker who writes the summary hides a credential
//! from the secret scan by gluing it to a word, putting it in a slot whose path or name is its
//! key name, splitting it across clauses, or writing it in a form the rules did not know. Each
//! variant is the demo request `assets/demo/01_clean_accepted.json` with only its summary
//! edited (the source digests and claims do not cover the summary, so they stay valid), run
//! through the real gate under the `default` policy, and must be QUARANTINED by the secrets
//! check with every piece of the secret under a finding's span; benign look-alikes must stay
//! ACCEPTED. Where a variant stays in the controlled language (its values fit their typed
//! slots), every other check must pass, so the secret scan alone stands between it and
//! ACCEPTED; prose forms and values no slot takes (a whole 88-character key) fail the grammar
//! too, and for them the secret finding is what is asserted. The variants live in
//! `tests/support/hostile.rs` (the `cq scan` tests use them too).
#![allow(clippy::unwrap_used)]

#[path = "support/hostile.rs"]
mod hostile;

#[path = "support/gate.rs"]
mod gate;

use cq::engine::gate::GateOutcome;
use cq::engine::report::Status;
use cq::json::{self, Value};
use gate::status;
use hostile::Variant;

fn demo() -> &'static Value {
    static DEMO: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    DEMO.get_or_init(|| gate::demo_request("01_clean_accepted.json"))
}

fn base_summary() -> String {
    gate::summary_of(demo())
}

/// The demo request with `summary` as its summary, through the gate.
fn check(summary: &str) -> GateOutcome {
    gate::run(&gate::with_summary(demo(), summary))
}

/// Runs every variant and returns what went wrong, one line per failing variant.
fn quarantined_by_the_secret_scan(variants: &[Variant]) -> Vec<String> {
    let base = base_summary();
    let mut failures = Vec::new();
    for v in variants {
        let summary = hostile::summary_with(&base, &v.clauses);
        let o = check(&summary);
        let secrets = o
            .report
            .checks
            .iter()
            .find(|c| c.check == "secrets")
            .unwrap();
        let others_pass = o
            .report
            .checks
            .iter()
            .all(|c| c.check == "secrets" || c.passed());
        let covered = |piece: &str| {
            let at = summary.find(piece).unwrap();
            (at..at + piece.len()).all(|i| {
                secrets
                    .findings
                    .iter()
                    .filter(|f| f.field == "summary_text")
                    .filter_map(|f| f.span.clone())
                    .any(|s| s.contains(&i))
            })
        };
        let report = o.report.to_value();
        let leaked = v
            .pieces
            .iter()
            .any(|p| json::canonical(&report).unwrap().contains(p.as_str()));
        let problem = if o.accepted || secrets.status != Status::Fail {
            Some("not found".to_owned())
        } else if secrets.code != "secret_found" {
            Some(format!("secrets check code {}", secrets.code))
        } else if v.parses && !others_pass {
            Some(format!(
                "the summary no longer parses ({}): fix the variant",
                gate::findings(&o, "consistency")
                    .iter()
                    .map(|f| f.message.as_str())
                    .collect::<Vec<_>>()
                    .join("; ")
            ))
        } else if let Some(p) = v.pieces.iter().find(|p| !covered(p)) {
            Some(format!("piece {} not under a finding", p.len()))
        } else if leaked {
            Some("a piece reached the report".to_owned())
        } else {
            None
        };
        if let Some(p) = problem {
            failures.push(format!("{}: {p}", v.name));
        }
    }
    failures
}

fn assert_all_quarantined(variants: Vec<Variant>) {
    assert!(variants.len() >= 3, "several variants per class");
    let failures = quarantined_by_the_secret_scan(&variants);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_unedited_demo_summary_is_accepted() {
    let o = check(&base_summary());
    assert!(o.accepted, "{:?}", o.report.failures().collect::<Vec<_>>());
}

#[test]
fn tokens_glued_to_words_are_quarantined_in_every_slot() {
    assert_all_quarantined(hostile::glued_tokens());
}

#[test]
fn keys_named_by_their_path_or_identifier_are_quarantined() {
    assert_all_quarantined(hostile::keys_named_by_slots());
}

#[test]
fn a_storage_key_written_as_a_path_is_quarantined() {
    assert_all_quarantined(hostile::azure_keys_as_paths());
}

#[test]
fn a_private_key_body_split_over_clauses_is_quarantined_with_every_line_masked() {
    assert_all_quarantined(hostile::private_keys_split_over_clauses());
}

#[test]
fn a_hex_key_in_the_commit_slot_is_quarantined() {
    assert_all_quarantined(hostile::hex_keys_as_commits());
}

#[test]
fn secrets_split_across_clauses_are_quarantined_with_every_piece_masked() {
    assert_all_quarantined(hostile::secrets_split_across_clauses());
}

#[test]
fn credentials_in_prose_forms_the_rules_missed_are_quarantined() {
    assert_all_quarantined(hostile::prose_credentials());
}

#[test]
fn benign_look_alikes_in_the_controlled_language_stay_accepted() {
    let base = base_summary();
    for (name, clauses) in hostile::benign_clauses() {
        let o = check(&hostile::summary_with(&base, &clauses));
        assert!(
            o.accepted,
            "{name}: {:?}",
            o.report.failures().collect::<Vec<_>>()
        );
    }
}

#[test]
fn a_git_ssh_remote_is_not_a_secret_or_an_email_address() {
    // `:` has no slot in the controlled language, so the summary is unsupported; the secret
    // scan must still find nothing in it.
    let base = base_summary();
    for remote in hostile::GIT_SSH_REMOTES {
        let o = check(&hostile::summary_with(&base, &[(*remote).to_owned()]));
        assert_eq!(status(&o, "secrets"), Status::Pass, "{remote}");
        assert_eq!(status(&o, "consistency"), Status::Fail, "{remote}");
    }
}
