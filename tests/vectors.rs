//! Replays the reference vectors (`tests/vectors/`, or `CQ_VECTORS_DIR`) produced by the
//! seed's Python: canonical JSON and digests, the G002 consistency checker and the G001
//! pipeline. Every record must match.
#![allow(clippy::unwrap_used)]

#[path = "vectors/harness.rs"]
mod harness;
#[path = "vectors/stubs.rs"]
mod stubs;
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
            cache: None,
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
                        ("receipt_body", parsed(&receipt.body)),
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
                    let got = outcome
                        .evidence_appended
                        .iter()
                        .map(|b| parsed(b))
                        .collect();
                    if appended != &Value::Array(got) {
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

fn messages(input: &Value) -> Vec<cq::engine::SourceMessage> {
    field(input, "raw_messages")
        .as_array()
        .unwrap()
        .iter()
        .map(|m| cq::engine::SourceMessage {
            message_id: text(m, "message_id"),
            role: text(m, "role"),
            content: text(m, "content"),
        })
        .collect()
}

#[test]
fn pipeline_vectors() {
    use cq::engine::authority::AuthorityChecker;
    use cq::engine::gate::Gate;
    use cq::engine::secret_scan::ExactSecretScanner;
    use cq::engine::{GateRequest, SummarizerOutput};

    let records = harness::records("pipeline.jsonl");
    assert!(!records.is_empty());
    let verifier = seed_verifier();
    let authority =
        AuthorityChecker::new(&Policy::builtin("seed-compatible").unwrap().authority).unwrap();
    let mut failures = Vec::new();
    let mut deviations = 0;
    for record in &records {
        let id = text(record, "id");
        let input = field(record, "input");
        let expected = field(record, "expected");
        let policy = stubs::StubPolicy { input };
        let tampered = tamper::TamperedVerifier {
            inner: &verifier,
            mode: input
                .get("verifier_tamper")
                .and_then(Value::as_str)
                .map(str::to_owned),
        };
        let scan_policy = stubs::scan_policy(input);
        let backend = stubs::RuleBackend {
            mode: text(input, "backend_mode"),
        };
        let exact = ExactSecretScanner {
            policy: &scan_policy,
            backend: &backend,
        };
        let scanner = stubs::LyingScanner {
            inner: &exact,
            mode: text(input, "scanner_adapter_mode"),
        };
        let gate = Gate {
            policy: &policy,
            verifier: &tampered,
            scanner: &scanner,
            leaf_scanner: &stubs::RuleLeaves,
            authority: &authority,
            registry_cache: None,
        };
        let summarizer = match text(input, "summarizer_mode").as_str() {
            "return_raw_output" => SummarizerOutput::Raw(text(input, "raw_output")),
            "raise_valueerror" => SummarizerOutput::Failed("ValueError".into()),
            "raise_keyerror" => {
                SummarizerOutput::Failed("KeyError: summarizer backend missing field".into())
            }
            other => panic!("unknown summarizer_mode {other:?}"),
        };
        let request = GateRequest {
            tenant_id: text(input, "tenant_id"),
            task_id: text(input, "task_id"),
            messages: messages(input),
            expected_invariant_ids: strings(input, "expected_invariant_ids"),
            expected_commitment_ids: strings(input, "expected_commitment_ids"),
            pinned_constraints: Vec::new(),
            model_revision: "vector".into(),
            summarizer,
        };
        let mut evidence = tamper::ModeEvidence {
            mode: text(input, "evidence_mode"),
            appended: Vec::new(),
        };
        let mut audit = stubs::ModeAudit {
            mode: text(input, "audit_mode"),
            events: Vec::new(),
        };
        let result = gate.run(&request, &mut evidence, &mut audit);
        let want = text(expected, "result");
        let exception = expected
            .get("exception")
            .and_then(|e| e.get("type"))
            .and_then(Value::as_str)
            .unwrap_or("");
        // The two documented deviations: a scanner timeout and a KeyError from the summarizer
        // escape the seed's Python; the gate falls back instead.
        let deviation =
            want == "RAISES" && (exception == "TimeoutError" || exception == "KeyError");
        let mut problems = Vec::new();
        match result {
            Err(refusal) if want == "RAISES" && !deviation => {
                let _ = refusal;
            }
            Err(refusal) => problems.push(format!("refused ({refusal}), want {want}")),
            Ok(outcome) => {
                let got = if outcome.accepted {
                    "ACCEPTED"
                } else {
                    "FALLBACK"
                };
                if deviation {
                    deviations += 1;
                    let fallback_event = outcome
                        .audit_events
                        .last()
                        .and_then(|e| e.get("outcome"))
                        .and_then(Value::as_str);
                    if got != "FALLBACK" || fallback_event != Some("FALLBACK") {
                        problems.push(format!(
                            "deviation {exception}: got {got}, want FALLBACK with its audit event"
                        ));
                    }
                } else if got != want {
                    let first = outcome
                        .report
                        .failures()
                        .next()
                        .map(|c| format!("{}: {}", c.check, c.detail))
                        .unwrap_or_default();
                    problems.push(format!("got {got} ({first}), want {want}"));
                } else {
                    let got_messages =
                        Value::Array(outcome.messages.iter().map(|m| m.to_value()).collect());
                    if field(expected, "messages") != &got_messages {
                        problems.push("messages differ".into());
                    }
                    if field(expected, "audit_events")
                        != &Value::Array(outcome.audit_events.clone())
                    {
                        problems.push("audit_events differ".into());
                    }
                    if field(expected, "source_message_sha256s")
                        != &Value::from(&outcome.source_message_sha256s[..])
                    {
                        problems.push("source_message_sha256s differ".into());
                    }
                }
            }
        }
        if !problems.is_empty() {
            failures.push(format!(
                "{id} {:?}: {}",
                strings(record, "mutations"),
                problems.join("; ")
            ));
        }
    }
    assert_eq!(
        deviations, 2,
        "the two documented deviations must fall back"
    );
    assert!(
        failures.is_empty(),
        "{} of {} records differ:\n{}",
        failures.len(),
        records.len(),
        failures.join("\n")
    );
}

/// A canonical body the engine wrote, read back for comparison with a vector's value.
fn parsed(canonical_text: &str) -> Value {
    json::parse(canonical_text.as_bytes(), &json::Limits::default()).unwrap()
}
