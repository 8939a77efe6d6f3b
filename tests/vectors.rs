//! Replays the reference vectors (`tests/vectors/`, or `CQ_VECTORS_DIR`) produced by the
//! seed's Python: canonical JSON and digests, the G002 consistency checker and the G001
//! pipeline. Every record must match.
#![allow(clippy::unwrap_used)]

#[path = "vectors/harness.rs"]
mod harness;
#[path = "vectors/tamper.rs"]
mod tamper;

use cq::engine::clause::ClosedClauseVerifier;
use cq::engine::consistency::{ConsistencyChecker, ConsistencyRequest};
use cq::engine::registry::RecordKind;
use cq::json::{self, Value};
use cq::policy::Policy;
use harness::{field, strings, text};

#[test]
fn canonical_sha256_vectors() {
    let records = harness::records("canonical_sha256.jsonl");
    assert!(!records.is_empty());
    let mut failures = Vec::new();
    for record in &records {
        let id = record
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_owned();
        let text = record.get("value_json").and_then(Value::as_str).unwrap();
        let result = json::parse_python(text.as_bytes())
            .map_err(|e| e.to_string())
            .and_then(|value| json::canonical(&value).map_err(|e| e.to_string()));
        match (record.get("error"), result) {
            (Some(Value::Null), Ok(canonical)) => {
                let expected = record.get("canonical").and_then(Value::as_str).unwrap();
                let digest = record.get("sha256").and_then(Value::as_str).unwrap();
                if canonical != expected || json::sha256_hex(canonical.as_bytes()) != digest {
                    failures.push(format!("{id}: got {canonical:?}, want {expected:?}"));
                }
            }
            (Some(Value::Null), Err(err)) => failures.push(format!("{id}: refused: {err}")),
            (_, Ok(canonical)) => failures.push(format!("{id}: accepted {canonical:?}")),
            (_, Err(_)) => {}
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} records differ:\n{}",
        failures.len(),
        records.len(),
        failures.join("\n")
    );
}

fn seed_verifier() -> ClosedClauseVerifier {
    let policy = Policy::builtin("seed-compatible").unwrap();
    ClosedClauseVerifier::new(&policy.grammar, &policy.verifier_artifact_sha256()).unwrap()
}

#[test]
fn consistency_vectors() {
    let records = harness::records("consistency.jsonl");
    assert!(!records.is_empty());
    let verifier = seed_verifier();
    let mut failures = Vec::new();
    for record in &records {
        let id = text(record, "id");
        let input = field(record, "input");
        let expected = field(record, "expected");
        let manifest =
            harness::record_set(field(input, "invariant_manifest"), RecordKind::Invariant);
        let snapshot =
            harness::record_set(field(input, "commitment_snapshot"), RecordKind::Commitment);
        let compacted = harness::compacted(field(input, "compacted"));
        let tampered = tamper::TamperedVerifier {
            inner: &verifier,
            mode: input
                .get("verifier_tamper")
                .and_then(Value::as_str)
                .map(str::to_owned),
        };
        let mut evidence = tamper::ModeEvidence {
            mode: text(input, "evidence_mode"),
            appended: Vec::new(),
        };
        let checker = ConsistencyChecker {
            manifest: &manifest,
            snapshot: &snapshot,
            verifier: &tampered,
        };
        let expected_invariants = strings(input, "expected_invariant_ids");
        let expected_commitments = strings(input, "expected_commitment_ids");
        let outcome = checker.verify(
            &ConsistencyRequest {
                tenant_id: &text(input, "tenant_id"),
                task_id: &text(input, "task_id"),
                policy_sha256: &text(input, "policy_sha256"),
                compacted: &compacted,
                expected_invariant_ids: &expected_invariants,
                expected_commitment_ids: &expected_commitments,
            },
            &mut evidence,
        );
        let want = (text(expected, "outcome"), text(expected, "finding_status"));
        let mut problems = Vec::new();
        match &outcome.result {
            Ok(receipt) => {
                if want != ("PASS".to_owned(), "NO_FINDING".to_owned()) {
                    problems.push(format!("passed, want {want:?}"));
                } else {
                    let checks = [
                        ("receipt_sha256", Value::from(&receipt.receipt_sha256)),
                        (
                            "receipt_invariant_ids",
                            Value::from(&receipt.invariant_ids[..]),
                        ),
                        (
                            "receipt_commitment_ids",
                            Value::from(&receipt.commitment_ids[..]),
                        ),
                        (
                            "rendered_canonical_policy_block",
                            Value::from(&receipt.rendered_canonical_policy_block),
                        ),
                        (
                            "rendered_policy_sha256",
                            Value::from(&receipt.rendered_policy_sha256),
                        ),
                        ("receipt_body", receipt.body.clone()),
                    ];
                    for (key, got) in checks {
                        if field(expected, key) != &got {
                            problems.push(format!("{key} differs"));
                        }
                    }
                }
            }
            Err(failure) => {
                if (
                    failure.outcome.to_owned(),
                    failure.finding_status.to_owned(),
                ) != want
                {
                    problems.push(format!(
                        "got {}/{} ({}), want {want:?} ({})",
                        failure.outcome,
                        failure.finding_status,
                        failure.message,
                        expected
                            .get("message")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                    ));
                }
                if let Some(appended) = expected.get("evidence_appended") {
                    if appended != &Value::Array(outcome.evidence_appended.clone()) {
                        problems.push("evidence_appended differs".into());
                    }
                }
            }
        }
        if !problems.is_empty() {
            failures.push(format!(
                "{id} {:?}: {}",
                text(record, "origin"),
                problems.join("; ")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} records differ:\n{}",
        failures.len(),
        records.len(),
        failures.join("\n")
    );
}
