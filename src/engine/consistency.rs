//! The G002 consistency check, exactly as the seed's `ExactCompactionConsistencyChecker`:
//! re-derive the manifest and snapshot digests, reconcile the retained id populations and
//! the claim population, hand every canonical predicate to the verifier, re-derive every
//! binding of its answer, and only then seal the consistency receipt
//! (`aidefend.compaction-consistency-receipt.v3`) into append-only evidence.

use std::collections::{BTreeMap, BTreeSet};

use crate::json::{canonical, canonical_sha256, object, sha256_hex, Value};

use super::compacted::{Claim, CompactedContext};
use super::registry::{RecordKind, RecordSet};
use super::verifier::{
    derive_outcome, CanonicalConstraint, ConflictVerification, ConflictVerifier, VerifierInput,
};

/// Where the consistency receipt is appended and read back from.
pub trait EvidenceSink {
    fn append(&mut self, body: &Value) -> Result<String, String>;
    fn read(&self, id: &str) -> Result<Value, String>;
}

/// Evidence kept in memory, keyed by the body's canonical digest.
#[derive(Debug, Default)]
pub struct MemoryEvidence {
    pub bodies: BTreeMap<String, Value>,
}

impl EvidenceSink for MemoryEvidence {
    fn append(&mut self, body: &Value) -> Result<String, String> {
        let id = canonical_sha256(body).map_err(|e| e.to_string())?;
        self.bodies.insert(id.clone(), body.clone());
        Ok(id)
    }

    fn read(&self, id: &str) -> Result<Value, String> {
        self.bodies
            .get(id)
            .cloned()
            .ok_or_else(|| format!("no evidence with id \"{id}\""))
    }
}

/// The identity of one check call.
#[derive(Debug, Clone, Copy)]
pub struct ConsistencyRequest<'a> {
    pub tenant_id: &'a str,
    pub task_id: &'a str,
    pub policy_sha256: &'a str,
    pub compacted: &'a CompactedContext,
    pub expected_invariant_ids: &'a [String],
    pub expected_commitment_ids: &'a [String],
}

/// A passing check's receipt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsistencyReceipt {
    pub receipt_sha256: String,
    pub invariant_ids: Vec<String>,
    pub commitment_ids: Vec<String>,
    pub body: Value,
    pub rendered_canonical_policy_block: String,
    pub rendered_policy_sha256: String,
}

/// A non-passing check: the seed's outcome class and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsistencyFailure {
    pub outcome: &'static str,
    pub finding_status: &'static str,
    pub message: String,
}

fn fail(
    outcome: &'static str,
    finding_status: &'static str,
    message: impl Into<String>,
) -> ConsistencyFailure {
    ConsistencyFailure {
        outcome,
        finding_status,
        message: message.into(),
    }
}

fn error(message: impl Into<String>) -> ConsistencyFailure {
    fail("ERROR", "UNKNOWN", message)
}

fn finding(message: impl Into<String>) -> ConsistencyFailure {
    fail("FAIL", "FINDING", message)
}

/// What the check found: the receipt or failure, and the verifier's answer when it ran.
#[derive(Debug, Clone)]
pub struct ConsistencyOutcome {
    pub result: Result<ConsistencyReceipt, ConsistencyFailure>,
    pub verification: Option<ConflictVerification>,
    /// Consistency receipt bodies appended to evidence (also when readback failed).
    pub evidence_appended: Vec<Value>,
}

/// The seed's exact checker over a manifest, a snapshot, a verifier and an evidence sink.
pub struct ConsistencyChecker<'a> {
    pub manifest: &'a RecordSet,
    pub snapshot: &'a RecordSet,
    pub verifier: &'a dyn ConflictVerifier,
}

type Key = (String, String);

fn key_text((kind, id): &Key) -> String {
    format!("('{kind}', '{id}')")
}

impl ConsistencyChecker<'_> {
    pub fn verify(
        &self,
        request: &ConsistencyRequest<'_>,
        evidence: &mut dyn EvidenceSink,
    ) -> ConsistencyOutcome {
        let mut verification = None;
        let mut appended = Vec::new();
        let result = self.run(request, evidence, &mut verification, &mut appended);
        ConsistencyOutcome {
            result,
            verification,
            evidence_appended: appended,
        }
    }

    fn check_set(&self, set: &RecordSet, policy_sha256: &str) -> Result<(), ConsistencyFailure> {
        let what = match set.kind {
            RecordKind::Invariant => "verified invariant registry content differs",
            RecordKind::Commitment => "verified commitment content differs",
        };
        let ids: BTreeSet<&str> = set.records.iter().map(|r| r.id.as_str()).collect();
        let broken = set.policy_sha256 != policy_sha256
            || set.records.is_empty()
            || set.revision < 1
            || ids.len() != set.records.len()
            || set.records.iter().any(|r| {
                r.id.is_empty()
                    || r.canonical_text.is_empty()
                    || r.canonical_predicate.is_empty()
                    || r.record_revision < 1
                    || canonical_sha256(&r.body(set.kind)).ok().as_deref()
                        != Some(r.record_sha256.as_str())
            });
        if broken {
            return Err(error(what));
        }
        if canonical_sha256(&set.body(policy_sha256)).ok().as_deref() != Some(set.digest.as_str()) {
            return Err(error(match set.kind {
                RecordKind::Invariant => "invariant manifest digest differs",
                RecordKind::Commitment => "commitment snapshot digest differs",
            }));
        }
        Ok(())
    }

    fn run(
        &self,
        request: &ConsistencyRequest<'_>,
        evidence: &mut dyn EvidenceSink,
        verification_out: &mut Option<ConflictVerification>,
        appended: &mut Vec<Value>,
    ) -> Result<ConsistencyReceipt, ConsistencyFailure> {
        let policy_sha256 = request.policy_sha256;
        let compacted = request.compacted;
        self.check_set(self.manifest, policy_sha256)?;
        self.check_set(self.snapshot, policy_sha256)?;
        let invariant_ids = self.manifest.ids();
        let commitment_ids = self.snapshot.ids();
        if invariant_ids != request.expected_invariant_ids
            || compacted.retained_safety_invariant_ids != invariant_ids
            || commitment_ids != request.expected_commitment_ids
            || compacted.retained_policy_commitment_ids != commitment_ids
        {
            return Err(finding("retained constraint-ID population differs"));
        }

        let canonical_constraints = self.canonical_constraints();
        let expected_by_key: BTreeMap<Key, &CanonicalConstraint> =
            canonical_constraints.iter().map(|c| (c.key(), c)).collect();
        let claims = &compacted.preserved_constraint_claims;
        let observed: BTreeMap<Key, &Claim> = claims.iter().map(|c| (c.key(), c)).collect();
        if observed.len() != claims.len() {
            return Err(finding("constraint claim population is duplicated"));
        }
        if observed.keys().any(|k| !expected_by_key.contains_key(k)) {
            return Err(finding("constraint claim population has extra IDs"));
        }
        if expected_by_key.keys().any(|k| !observed.contains_key(k)) {
            return Err(fail(
                "INSUFFICIENT_DATA",
                "UNKNOWN",
                "constraint claim population is incomplete",
            ));
        }
        for expected in &canonical_constraints {
            let claim = observed[&expected.key()];
            if claim.canonical_record_sha256 != expected.canonical_record_sha256
                || claim.canonical_predicate_sha256 != expected.canonical_predicate_sha256
                || claim.preserved_predicate != expected.canonical_predicate
            {
                return Err(finding(format!(
                    "constraint claim digest or predicate differs: {}",
                    key_text(&expected.key())
                )));
            }
        }
        if claims.iter().any(|c| c.status == "CONFLICT") {
            return Err(finding("compactor reported a constraint conflict"));
        }
        if claims.iter().any(|c| c.status == "UNSUPPORTED") {
            return Err(fail(
                "INSUFFICIENT_DATA",
                "UNKNOWN",
                "compactor could not support every canonical predicate",
            ));
        }
        if claims.iter().any(|c| c.status != "PRESERVED") {
            return Err(error("constraint claim status is invalid"));
        }

        let ordered_claims: Vec<Claim> = canonical_constraints
            .iter()
            .map(|c| observed[&c.key()].clone())
            .collect();
        let claim_population = Value::Array(ordered_claims.iter().map(Claim::body).collect());
        let claim_population_sha256 = digest(&claim_population)?;
        let policy_block = self.policy_block(policy_sha256, &canonical_constraints);
        let rendered_policy_block = canonical(&policy_block).map_err(|e| error(e.to_string()))?;
        let rendered_policy_sha256 = sha256_hex(rendered_policy_block.as_bytes());
        let compacted_output_sha256 = digest(&compacted.to_value())?;
        let compacted_summary_sha256 = digest(&Value::from(&compacted.summary_text))?;

        let input = VerifierInput {
            summary_text: &compacted.summary_text,
            canonical_constraints: &canonical_constraints,
            claims: &ordered_claims,
            rendered_canonical_policy_block: &rendered_policy_block,
            rendered_policy_sha256: &rendered_policy_sha256,
            compacted_summary_sha256: &compacted_summary_sha256,
            claim_population_sha256: &claim_population_sha256,
        };
        let verification = self
            .verifier
            .verify(&input)
            .map_err(|e| error(e.to_string()))?;
        *verification_out = Some(verification.clone());

        let result_keys: Vec<Key> = verification.results.iter().map(|r| r.key()).collect();
        let result_key_set: BTreeSet<&Key> = result_keys.iter().collect();
        let expected_key_set: BTreeSet<&Key> = expected_by_key.keys().collect();
        if result_key_set.len() != result_keys.len()
            || result_key_set != expected_key_set
            || verification.claim_count != ordered_claims.len() as i64
            || verification.claim_population_sha256 != claim_population_sha256
            || verification.result_count != verification.results.len() as i64
        {
            return Err(error("verifier claim/result population binding differs"));
        }
        let results_by_key: BTreeMap<&Key, _> =
            result_keys.iter().zip(&verification.results).collect();
        for expected in &canonical_constraints {
            let key = expected.key();
            let result = results_by_key[&key];
            let claim = observed[&key];
            if result.canonical_record_sha256 != expected.canonical_record_sha256
                || result.canonical_predicate_sha256 != expected.canonical_predicate_sha256
                || result.claim_status != claim.status
                || result.bounded_rule_id.is_empty()
                || result.evidence_sha256.chars().count() != 64
            {
                return Err(error(format!(
                    "per-constraint verifier evidence differs: {}",
                    key_text(&key)
                )));
            }
        }
        let ordered_results: Vec<_> = canonical_constraints
            .iter()
            .map(|c| results_by_key[&c.key()])
            .collect();
        let result_population: Vec<Value> = ordered_results.iter().map(|r| r.body()).collect();
        let result_population_sha256 = digest(&Value::Array(result_population.clone()))?;
        if verification.result_population_sha256 != result_population_sha256 {
            return Err(error("verifier result root differs"));
        }

        let probabilistic = verification.assurance_type == "PROBABILISTIC";
        let derived = derive_outcome(
            ordered_results
                .iter()
                .map(|r| r.verification_status.as_str()),
            probabilistic,
        );
        let body = verification.body(result_population);
        if (
            verification.outcome.as_str(),
            verification.finding_status.as_str(),
        ) != derived
            || verification.verifier_version.is_empty()
            || verification.verifier_artifact_sha256.chars().count() != 64
            || verification.rendered_policy_sha256 != rendered_policy_sha256
            || verification.compacted_summary_sha256 != compacted_summary_sha256
            || canonical_sha256(&body).ok().as_deref() != Some(verification.receipt_sha256.as_str())
        {
            return Err(error("conflict-verifier receipt differs"));
        }
        if derived != ("PASS", "NO_FINDING") {
            return Err(fail(
                derived.0,
                derived.1,
                "summary conflicts with a predicate or lacks bounded support",
            ));
        }
        if verification.assurance_type != "DETERMINISTIC_BOUNDED" {
            return Err(fail(
                "INSUFFICIENT_DATA",
                "UNKNOWN",
                "only complete deterministic bounded evidence can PASS",
            ));
        }

        let receipt_body = object([
            (
                "schema_version",
                Value::from("aidefend.compaction-consistency-receipt.v3"),
            ),
            ("tenant_id", Value::from(request.tenant_id)),
            ("task_id", Value::from(request.task_id)),
            ("policy_sha256", Value::from(policy_sha256)),
            (
                "invariant_manifest_sha256",
                Value::from(&self.manifest.digest),
            ),
            (
                "commitment_snapshot_sha256",
                Value::from(&self.snapshot.digest),
            ),
            (
                "rendered_canonical_policy_block",
                Value::from(&rendered_policy_block),
            ),
            (
                "rendered_policy_sha256",
                Value::from(&rendered_policy_sha256),
            ),
            (
                "compacted_output_sha256",
                Value::from(&compacted_output_sha256),
            ),
            (
                "compacted_summary_sha256",
                Value::from(&compacted_summary_sha256),
            ),
            (
                "claim_population_sha256",
                Value::from(&claim_population_sha256),
            ),
            ("claim_count", Value::from(ordered_claims.len())),
            (
                "result_population_sha256",
                Value::from(&result_population_sha256),
            ),
            ("result_count", Value::from(ordered_results.len())),
            (
                "conflict_verifier_version",
                Value::from(&verification.verifier_version),
            ),
            (
                "conflict_verifier_artifact_sha256",
                Value::from(&verification.verifier_artifact_sha256),
            ),
            (
                "conflict_verifier_receipt_sha256",
                Value::from(&verification.receipt_sha256),
            ),
            (
                "semantic_assurance",
                Value::from("COMPLETE_DETERMINISTIC_BOUNDED_RULES_NOT_FREE_TEXT_EQUIVALENCE"),
            ),
        ]);
        let receipt_sha256 = digest(&receipt_body)?;
        appended.push(receipt_body.clone());
        let evidence_id = evidence.append(&receipt_body);
        let readback = evidence_id.as_ref().ok().map(|id| evidence.read(id));
        if evidence_id.as_deref() != Ok(receipt_sha256.as_str())
            || !matches!(readback, Some(Ok(ref v)) if *v == receipt_body)
        {
            return Err(error("consistency evidence readback differs"));
        }
        Ok(ConsistencyReceipt {
            receipt_sha256,
            invariant_ids,
            commitment_ids,
            body: receipt_body,
            rendered_canonical_policy_block: rendered_policy_block,
            rendered_policy_sha256,
        })
    }

    /// Every registered constraint, invariants first, in registry order.
    pub fn canonical_constraints(&self) -> Vec<CanonicalConstraint> {
        [self.manifest, self.snapshot]
            .iter()
            .flat_map(|set| {
                set.records.iter().map(move |r| CanonicalConstraint {
                    constraint_type: set.kind.constraint_type().to_owned(),
                    constraint_id: r.id.clone(),
                    canonical_text: r.canonical_text.clone(),
                    canonical_predicate: r.canonical_predicate.clone(),
                    canonical_record_sha256: r.record_sha256.clone(),
                    canonical_predicate_sha256: sha256_hex(r.canonical_predicate.as_bytes()),
                })
            })
            .collect()
    }

    fn policy_block(&self, policy_sha256: &str, constraints: &[CanonicalConstraint]) -> Value {
        let constraints = constraints
            .iter()
            .map(|c| {
                object([
                    ("constraint_type", Value::from(&c.constraint_type)),
                    ("constraint_id", Value::from(&c.constraint_id)),
                    ("canonical_text", Value::from(&c.canonical_text)),
                    ("canonical_predicate", Value::from(&c.canonical_predicate)),
                    (
                        "canonical_record_sha256",
                        Value::from(&c.canonical_record_sha256),
                    ),
                    (
                        "canonical_predicate_sha256",
                        Value::from(&c.canonical_predicate_sha256),
                    ),
                ])
            })
            .collect();
        object([
            (
                "schema_version",
                Value::from("aidefend.rehydrated-policy-block.v3"),
            ),
            ("policy_sha256", Value::from(policy_sha256)),
            (
                "invariant_manifest_sha256",
                Value::from(&self.manifest.digest),
            ),
            (
                "commitment_snapshot_sha256",
                Value::from(&self.snapshot.digest),
            ),
            ("constraints", Value::Array(constraints)),
        ])
    }
}

fn digest(value: &Value) -> Result<String, ConsistencyFailure> {
    canonical_sha256(value).map_err(|e| error(e.to_string()))
}
