//! The G002 consistency check, exactly as the seed's `ExactCompactionConsistencyChecker`:
//! re-derive the manifest and snapshot digests, reconcile the retained id populations and
//! the claim population, hand every canonical predicate to the verifier, re-derive every
//! binding of its answer, and only then seal the consistency receipt
//! (`aidefend.compaction-consistency-receipt.v3`) into append-only evidence.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use crate::json::{
    canonical_array, canonical_object, canonical_str, sha256_hex, write_object, Field,
};

use super::compacted::{Claim, CompactedContext};
use super::registry::{RecordKind, RecordSet};
use super::verifier::{
    derive_outcome, CanonicalConstraint, ConflictVerification, ConflictVerifier, ConstraintResult,
    VerifierInput,
};

/// Where the consistency receipt is appended and read back from. Bodies travel as their
/// canonical JSON text; the id is the SHA-256 of that text.
pub trait EvidenceSink {
    fn append(&mut self, canonical_body: &str) -> Result<String, String>;
    fn read(&self, id: &str) -> Result<String, String>;
}

/// Evidence kept in memory, keyed by the body's canonical digest.
#[derive(Debug, Default)]
pub struct MemoryEvidence {
    pub bodies: BTreeMap<String, String>,
}

impl EvidenceSink for MemoryEvidence {
    fn append(&mut self, canonical_body: &str) -> Result<String, String> {
        let id = sha256_hex(canonical_body.as_bytes());
        self.bodies.insert(id.clone(), canonical_body.to_owned());
        Ok(id)
    }

    fn read(&self, id: &str) -> Result<String, String> {
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
    /// The receipt body's canonical JSON text.
    pub body: String,
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
    /// Consistency receipt bodies (canonical text) appended to evidence, also when readback
    /// failed.
    pub evidence_appended: Vec<String>,
}

/// The seed's exact checker over a manifest, a snapshot, a verifier and an evidence sink.
pub struct ConsistencyChecker<'a> {
    pub manifest: &'a RecordSet,
    pub snapshot: &'a RecordSet,
    pub verifier: &'a dyn ConflictVerifier,
    /// Registries verified by earlier calls, to skip re-deriving their digests (`None`
    /// re-derives everything on every call, as the seed does).
    pub cache: Option<&'a RegistryCache>,
}

/// What the checker derives from the registries alone.
#[derive(Debug)]
struct Registered {
    constraints: Vec<CanonicalConstraint>,
    rendered_policy_block: String,
    /// The block as a JSON string, as the receipt body carries it.
    rendered_policy_block_json: String,
    rendered_policy_sha256: String,
}

/// Registries whose digests were verified, with what was derived from them: a policy's
/// registries are the same on every call, and re-hashing them is most of a check's fixed
/// cost. An entry is reused only when the manifest, the snapshot and the policy digest are
/// equal, field for field, to the ones verified, so the answer is the one a full re-derivation
/// gives; anything else is verified from scratch and, when it passes, replaces the entry.
#[derive(Debug, Default)]
pub struct RegistryCache {
    verified: Mutex<Option<VerifiedRegistries>>,
}

#[derive(Debug)]
struct VerifiedRegistries {
    manifest: RecordSet,
    snapshot: RecordSet,
    policy_sha256: String,
    registered: Arc<Registered>,
}

impl RegistryCache {
    fn get(
        &self,
        manifest: &RecordSet,
        snapshot: &RecordSet,
        policy: &str,
    ) -> Option<Arc<Registered>> {
        let verified = self.verified.lock().ok()?;
        verified
            .as_ref()
            .filter(|v| {
                v.policy_sha256 == policy && v.manifest == *manifest && v.snapshot == *snapshot
            })
            .map(|v| Arc::clone(&v.registered))
    }

    fn put(
        &self,
        manifest: &RecordSet,
        snapshot: &RecordSet,
        policy: &str,
        registered: &Arc<Registered>,
    ) {
        if let Ok(mut verified) = self.verified.lock() {
            *verified = Some(VerifiedRegistries {
                manifest: manifest.clone(),
                snapshot: snapshot.clone(),
                policy_sha256: policy.to_owned(),
                registered: Arc::clone(registered),
            });
        }
    }
}

/// A constraint's `(constraint_type, constraint_id)`.
type Key<'a> = (&'a str, &'a str);

fn key_text((kind, id): Key<'_>) -> String {
    format!("('{kind}', '{id}')")
}

fn constraint_key(c: &CanonicalConstraint) -> Key<'_> {
    (&c.constraint_type, &c.constraint_id)
}

fn claim_key(c: &Claim) -> Key<'_> {
    (&c.constraint_type, &c.constraint_id)
}

fn result_key(r: &ConstraintResult) -> Key<'_> {
    (&r.constraint_type, &r.constraint_id)
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
                    || r.body_sha256(set.kind) != r.record_sha256
            });
        if broken {
            return Err(error(what));
        }
        if set.body_sha256(policy_sha256) != set.digest {
            return Err(error(match set.kind {
                RecordKind::Invariant => "invariant manifest digest differs",
                RecordKind::Commitment => "commitment snapshot digest differs",
            }));
        }
        Ok(())
    }

    /// The registries' digests re-derived (or found verified in the cache), and what the
    /// checker derives from them alone.
    fn registered(&self, policy_sha256: &str) -> Result<Arc<Registered>, ConsistencyFailure> {
        let cached = self
            .cache
            .and_then(|cache| cache.get(self.manifest, self.snapshot, policy_sha256));
        if let Some(registered) = cached {
            return Ok(registered);
        }
        self.check_set(self.manifest, policy_sha256)?;
        self.check_set(self.snapshot, policy_sha256)?;
        let constraints = self.canonical_constraints();
        let rendered_policy_block = self.policy_block(policy_sha256, &constraints);
        let registered = Arc::new(Registered {
            rendered_policy_sha256: sha256_hex(rendered_policy_block.as_bytes()),
            rendered_policy_block_json: canonical_str(&rendered_policy_block),
            rendered_policy_block,
            constraints,
        });
        if let Some(cache) = self.cache {
            cache.put(self.manifest, self.snapshot, policy_sha256, &registered);
        }
        Ok(registered)
    }

    fn run(
        &self,
        request: &ConsistencyRequest<'_>,
        evidence: &mut dyn EvidenceSink,
        verification_out: &mut Option<ConflictVerification>,
        appended: &mut Vec<String>,
    ) -> Result<ConsistencyReceipt, ConsistencyFailure> {
        let policy_sha256 = request.policy_sha256;
        let compacted = request.compacted;
        let registered = self.registered(policy_sha256)?;
        let invariant_ids = self.manifest.ids();
        let commitment_ids = self.snapshot.ids();
        if invariant_ids != request.expected_invariant_ids
            || compacted.retained_safety_invariant_ids != invariant_ids
            || commitment_ids != request.expected_commitment_ids
            || compacted.retained_policy_commitment_ids != commitment_ids
        {
            return Err(finding("retained constraint-ID population differs"));
        }

        let canonical_constraints = &registered.constraints;
        let expected_by_key: BTreeMap<Key<'_>, &CanonicalConstraint> = canonical_constraints
            .iter()
            .map(|c| (constraint_key(c), c))
            .collect();
        let observed = claims_by_key(
            &compacted.preserved_constraint_claims,
            canonical_constraints,
            &expected_by_key,
        )?;

        let ordered_claims: Vec<&Claim> = canonical_constraints
            .iter()
            .map(|c| observed[&constraint_key(c)])
            .collect();
        let claim_population_sha256 =
            sha256_hex(Claim::population(ordered_claims.iter().copied()).as_bytes());
        let rendered_policy_block = &registered.rendered_policy_block;
        let rendered_policy_sha256 = &registered.rendered_policy_sha256;
        let compacted_output_sha256 = sha256_hex(compacted.canonical().as_bytes());
        let compacted_summary_sha256 =
            sha256_hex(canonical_str(&compacted.summary_text).as_bytes());

        let input = VerifierInput {
            summary_text: &compacted.summary_text,
            canonical_constraints,
            claims: &ordered_claims,
            rendered_canonical_policy_block: rendered_policy_block,
            rendered_policy_sha256,
            compacted_summary_sha256: &compacted_summary_sha256,
            claim_population_sha256: &claim_population_sha256,
        };
        let verification = self
            .verifier
            .verify(&input)
            .map_err(|e| error(e.to_string()))?;
        let verification = &*verification_out.insert(verification);

        let result_keys: Vec<Key<'_>> = verification.results.iter().map(result_key).collect();
        let result_key_set: BTreeSet<&Key<'_>> = result_keys.iter().collect();
        let expected_key_set: BTreeSet<&Key<'_>> = expected_by_key.keys().collect();
        if result_key_set.len() != result_keys.len()
            || result_key_set != expected_key_set
            || verification.claim_count != ordered_claims.len() as i64
            || verification.claim_population_sha256 != claim_population_sha256
            || verification.result_count != verification.results.len() as i64
        {
            return Err(error("verifier claim/result population binding differs"));
        }
        let results_by_key: BTreeMap<Key<'_>, &ConstraintResult> = result_keys
            .iter()
            .copied()
            .zip(&verification.results)
            .collect();
        for expected in canonical_constraints {
            let key = constraint_key(expected);
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
                    key_text(key)
                )));
            }
        }
        let ordered_results: Vec<&ConstraintResult> = canonical_constraints
            .iter()
            .map(|c| results_by_key[&constraint_key(c)])
            .collect();
        let result_population = ConstraintResult::population(ordered_results.iter().copied());
        let result_population_sha256 = sha256_hex(result_population.as_bytes());
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
        let body_sha256 = sha256_hex(verification.canonical_body(&result_population).as_bytes());
        if (
            verification.outcome.as_str(),
            verification.finding_status.as_str(),
        ) != derived
            || verification.verifier_version.is_empty()
            || verification.verifier_artifact_sha256.chars().count() != 64
            || verification.rendered_policy_sha256 != *rendered_policy_sha256
            || verification.compacted_summary_sha256 != compacted_summary_sha256
            || body_sha256 != verification.receipt_sha256
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

        let receipt_body = self.receipt_body(&Bound {
            request,
            registered: &registered,
            verification,
            claim_count: ordered_claims.len(),
            claim_population_sha256: &claim_population_sha256,
            compacted_output_sha256: &compacted_output_sha256,
            compacted_summary_sha256: &compacted_summary_sha256,
            result_count: ordered_results.len(),
            result_population_sha256: &result_population_sha256,
        });
        let receipt_sha256 = sha256_hex(receipt_body.as_bytes());
        appended.push(receipt_body.clone());
        let evidence_id = evidence.append(&receipt_body);
        let readback = evidence_id.as_ref().ok().map(|id| evidence.read(id));
        if evidence_id.as_deref() != Ok(receipt_sha256.as_str())
            || !matches!(readback, Some(Ok(ref text)) if *text == receipt_body)
        {
            return Err(error("consistency evidence readback differs"));
        }
        Ok(ConsistencyReceipt {
            receipt_sha256,
            invariant_ids,
            commitment_ids,
            body: receipt_body,
            rendered_canonical_policy_block: rendered_policy_block.clone(),
            rendered_policy_sha256: rendered_policy_sha256.clone(),
        })
    }

    /// The consistency receipt's canonical body: what the check bound, field by field.
    fn receipt_body(&self, b: &Bound<'_>) -> String {
        canonical_object(&mut [
            ("claim_count", Field::Int(b.claim_count as i64)),
            (
                "claim_population_sha256",
                Field::Str(b.claim_population_sha256),
            ),
            (
                "commitment_snapshot_sha256",
                Field::Str(&self.snapshot.digest),
            ),
            (
                "compacted_output_sha256",
                Field::Str(b.compacted_output_sha256),
            ),
            (
                "compacted_summary_sha256",
                Field::Str(b.compacted_summary_sha256),
            ),
            (
                "conflict_verifier_artifact_sha256",
                Field::Str(&b.verification.verifier_artifact_sha256),
            ),
            (
                "conflict_verifier_receipt_sha256",
                Field::Str(&b.verification.receipt_sha256),
            ),
            (
                "conflict_verifier_version",
                Field::Str(&b.verification.verifier_version),
            ),
            (
                "invariant_manifest_sha256",
                Field::Str(&self.manifest.digest),
            ),
            ("policy_sha256", Field::Str(b.request.policy_sha256)),
            (
                "rendered_canonical_policy_block",
                Field::Canonical(&b.registered.rendered_policy_block_json),
            ),
            (
                "rendered_policy_sha256",
                Field::Str(&b.registered.rendered_policy_sha256),
            ),
            ("result_count", Field::Int(b.result_count as i64)),
            (
                "result_population_sha256",
                Field::Str(b.result_population_sha256),
            ),
            (
                "schema_version",
                Field::Str("aidefend.compaction-consistency-receipt.v3"),
            ),
            (
                "semantic_assurance",
                Field::Str("COMPLETE_DETERMINISTIC_BOUNDED_RULES_NOT_FREE_TEXT_EQUIVALENCE"),
            ),
            ("task_id", Field::Str(b.request.task_id)),
            ("tenant_id", Field::Str(b.request.tenant_id)),
        ])
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

    /// The canonical text of the seed's rehydrated policy block.
    fn policy_block(&self, policy_sha256: &str, constraints: &[CanonicalConstraint]) -> String {
        let constraints = canonical_array(constraints, |out, c| {
            write_object(
                out,
                &mut [
                    ("constraint_type", Field::Str(&c.constraint_type)),
                    ("constraint_id", Field::Str(&c.constraint_id)),
                    ("canonical_text", Field::Str(&c.canonical_text)),
                    ("canonical_predicate", Field::Str(&c.canonical_predicate)),
                    (
                        "canonical_record_sha256",
                        Field::Str(&c.canonical_record_sha256),
                    ),
                    (
                        "canonical_predicate_sha256",
                        Field::Str(&c.canonical_predicate_sha256),
                    ),
                ],
            )
        });
        canonical_object(&mut [
            (
                "commitment_snapshot_sha256",
                Field::Str(&self.snapshot.digest),
            ),
            ("constraints", Field::Canonical(&constraints)),
            (
                "invariant_manifest_sha256",
                Field::Str(&self.manifest.digest),
            ),
            ("policy_sha256", Field::Str(policy_sha256)),
            (
                "schema_version",
                Field::Str("aidefend.rehydrated-policy-block.v3"),
            ),
        ])
    }
}

/// The summary's claims by constraint key, once they are exactly the registered population, each
/// bound to its registered record and predicate, and each PRESERVED: the first that is not, as
/// the seed words it.
fn claims_by_key<'a>(
    claims: &'a [Claim],
    canonical_constraints: &[CanonicalConstraint],
    expected_by_key: &BTreeMap<Key<'_>, &CanonicalConstraint>,
) -> Result<BTreeMap<Key<'a>, &'a Claim>, ConsistencyFailure> {
    let observed: BTreeMap<Key<'_>, &Claim> = claims.iter().map(|c| (claim_key(c), c)).collect();
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
    for expected in canonical_constraints {
        let claim = observed[&constraint_key(expected)];
        if claim.canonical_record_sha256 != expected.canonical_record_sha256
            || claim.canonical_predicate_sha256 != expected.canonical_predicate_sha256
            || claim.preserved_predicate != expected.canonical_predicate
        {
            return Err(finding(format!(
                "constraint claim digest or predicate differs: {}",
                key_text(constraint_key(expected))
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
    Ok(observed)
}

/// What a passing consistency check bound, for its receipt.
struct Bound<'a> {
    request: &'a ConsistencyRequest<'a>,
    registered: &'a Registered,
    verification: &'a ConflictVerification,
    claim_count: usize,
    claim_population_sha256: &'a str,
    compacted_output_sha256: &'a str,
    compacted_summary_sha256: &'a str,
    result_count: usize,
    result_population_sha256: &'a str,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::registry::ConstraintRecord;
    use crate::engine::verifier::VerifierError;

    struct Unreachable;

    impl ConflictVerifier for Unreachable {
        fn verify(&self, _: &VerifierInput<'_>) -> Result<ConflictVerification, VerifierError> {
            Err(VerifierError("not reached in these tests".into()))
        }
    }

    fn set(kind: RecordKind, policy: &str, id: &str) -> RecordSet {
        let record = ConstraintRecord::sealed(kind, id, "Never do it.", "deny(it)", 1);
        RecordSet::sealed(kind, policy, 1, vec![record])
    }

    /// The message of the first failure: with no claims, a call whose registries verify
    /// stops at the id population.
    fn first_failure(manifest: &RecordSet, snapshot: &RecordSet, cache: &RegistryCache) -> String {
        let compacted = CompactedContext {
            summary_text: String::new(),
            retained_safety_invariant_ids: Vec::new(),
            retained_policy_commitment_ids: Vec::new(),
            source_message_sha256s: Vec::new(),
            preserved_constraint_claims: Vec::new(),
        };
        let checker = ConsistencyChecker {
            manifest,
            snapshot,
            verifier: &Unreachable,
            cache: Some(cache),
        };
        let request = ConsistencyRequest {
            tenant_id: "t",
            task_id: "k",
            policy_sha256: &manifest.policy_sha256,
            compacted: &compacted,
            expected_invariant_ids: &[],
            expected_commitment_ids: &[],
        };
        match checker
            .verify(&request, &mut MemoryEvidence::default())
            .result
        {
            Err(failure) => failure.message,
            Ok(_) => "passed".into(),
        }
    }

    #[test]
    fn registries_changed_after_they_were_verified_are_verified_again() {
        let policy = "a".repeat(64);
        let manifest = set(RecordKind::Invariant, &policy, "SAFETY-1");
        let snapshot = set(RecordKind::Commitment, &policy, "COMMIT-1");
        let cache = RegistryCache::default();
        let past_registries = "retained constraint-ID population differs";
        assert_eq!(first_failure(&manifest, &snapshot, &cache), past_registries);
        assert!(cache.get(&manifest, &snapshot, &policy).is_some());

        let mut text = manifest.clone();
        text.records[0].canonical_text = "Always do it.".into();
        assert_eq!(
            first_failure(&text, &snapshot, &cache),
            "verified invariant registry content differs"
        );
        let mut digest = snapshot.clone();
        digest.digest = "0".repeat(64);
        assert_eq!(
            first_failure(&manifest, &digest, &cache),
            "commitment snapshot digest differs"
        );
        let mut revision = manifest.clone();
        revision.revision = 0;
        assert_eq!(
            first_failure(&revision, &snapshot, &cache),
            "verified invariant registry content differs"
        );
        // The verified registries are still served from the cache, and only they are.
        assert_eq!(first_failure(&manifest, &snapshot, &cache), past_registries);
        assert!(cache.get(&text, &snapshot, &policy).is_none());
        assert!(cache.get(&manifest, &snapshot, &"b".repeat(64)).is_none());
    }
}
