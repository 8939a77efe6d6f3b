//! The vectors' collaborators that lie: a verifier whose answer is altered before the
//! checker sees it, and evidence that reads back wrong. Modes as in `tests/vectors/README.md`.

use cq::engine::consistency::EvidenceSink;
use cq::engine::verifier::{ConflictVerification, ConflictVerifier, VerifierError, VerifierInput};
use cq::json::{self, Value};

pub struct TamperedVerifier<'a> {
    pub inner: &'a dyn ConflictVerifier,
    pub mode: Option<String>,
}

impl ConflictVerifier for TamperedVerifier<'_> {
    fn verify(&self, input: &VerifierInput<'_>) -> Result<ConflictVerification, VerifierError> {
        let mut v = self.inner.verify(input)?;
        let zeros = "0".repeat(64);
        match self.mode.as_deref() {
            None => {}
            Some("claim_count_plus_one") => v.claim_count += 1,
            Some("drop_last_result") => {
                v.results.pop();
            }
            Some("duplicate_first_result") => {
                let first = v.results[0].clone();
                v.results.push(first);
            }
            Some("wrong_claim_population_sha") => v.claim_population_sha256 = zeros,
            Some("wrong_result_record_sha") => v.results[0].canonical_record_sha256 = zeros,
            Some("empty_bounded_rule_id") => v.results[0].bounded_rule_id.clear(),
            Some("short_evidence_sha") => v.results[0].evidence_sha256 = "abc".into(),
            Some("flip_claim_status") => {
                let status = &mut v.results[0].claim_status;
                *status = if status == "CONFLICT" {
                    "PRESERVED".into()
                } else {
                    "CONFLICT".into()
                };
            }
            Some("wrong_result_population_sha") => v.result_population_sha256 = zeros,
            Some("force_pass_outcome") => {
                v.outcome = "PASS".into();
                v.finding_status = "NO_FINDING".into();
            }
            Some("wrong_receipt_sha") => v.receipt_sha256 = zeros,
            Some("wrong_rendered_policy_sha") => v.rendered_policy_sha256 = zeros,
            Some("wrong_summary_sha") => v.compacted_summary_sha256 = zeros,
            Some("short_artifact_sha") => v.verifier_artifact_sha256 = "a".repeat(63),
            Some("empty_verifier_version") => v.verifier_version.clear(),
            Some("probabilistic_resealed") => {
                v.assurance_type = "PROBABILISTIC".into();
                let conflict = v
                    .results
                    .iter()
                    .any(|r| r.verification_status == "CONFLICT");
                let (o, f) = if conflict {
                    ("FAIL", "FINDING")
                } else {
                    ("INSUFFICIENT_DATA", "UNKNOWN")
                };
                v.outcome = o.into();
                v.finding_status = f.into();
                v.seal();
            }
            Some("forge_all_preserved_resealed") => {
                for r in &mut v.results {
                    r.verification_status = "PRESERVED".into();
                    r.bounded_rule_id = "forged-rule".into();
                    r.evidence_sha256 = "f".repeat(64);
                }
                v.outcome = "PASS".into();
                v.finding_status = "NO_FINDING".into();
                v.assurance_type = "DETERMINISTIC_BOUNDED".into();
                v.seal();
            }
            Some("reverse_results_resealed") => {
                v.results.reverse();
                v.seal();
            }
            Some(other) => panic!("unknown verifier_tamper {other:?}"),
        }
        Ok(v)
    }
}

/// Evidence as the vectors' `evidence_mode` says.
#[derive(Default)]
pub struct ModeEvidence {
    pub mode: String,
    pub appended: Vec<String>,
}

impl EvidenceSink for ModeEvidence {
    fn append(&mut self, body: &str) -> Result<String, String> {
        self.appended.push(body.to_owned());
        match self.mode.as_str() {
            "id_mismatch" => Ok("0".repeat(64)),
            _ => Ok(json::sha256_hex(body.as_bytes())),
        }
    }

    fn read(&self, id: &str) -> Result<String, String> {
        let body = self
            .appended
            .iter()
            .find(|b| json::sha256_hex(b.as_bytes()) == id)
            .ok_or_else(|| format!("no evidence {id}"))?;
        let parsed = json::parse(body.as_bytes(), &json::Limits::default());
        match (self.mode.as_str(), parsed) {
            ("readback_mismatch", Ok(Value::Object(mut map))) => {
                map.insert("tampered".into(), Value::Bool(true));
                json::canonical(&Value::Object(map)).map_err(|e| e.to_string())
            }
            _ => Ok(body.clone()),
        }
    }
}
