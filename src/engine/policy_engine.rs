//! The engine's entry point: a policy compiled into everything the gate needs (the invariant
//! manifest and commitment snapshot with digests, the closed-clause verifier, the authority
//! rules, the verified scan policy, the trusted-instruction renderer), and the two things a
//! caller does with it: [`PolicyEngine::check`] one request, and
//! [`PolicyEngine::released_context`] of a compaction a reviewer released. The renderer takes
//! only the policy and the pinned manifest; nothing the summarizer wrote can reach it.

use std::borrow::Cow;

use crate::json::{self, Limits, Value};
use crate::policy::{Mode, PinnedConstraint, Policy};

use super::authority::AuthorityChecker;
use super::clause::ClosedClauseVerifier;
use super::consistency::{MemoryEvidence, RegistryCache};
use super::context::{trusted_context, Body, ContextMessage, RenderInput};
use super::gate::{AuditSink, CompactionPolicy, Gate, GateOutcome, PolicySource};
use super::leaf_memo::{LeafMemo, Memoized};
use super::pinned::PinnedManifest;
use super::prose::ProseRules;
use super::registry::{ConstraintRecord, RecordKind, RecordSet};
use super::secret_scan::{ExactSecretScanner, LeafScanner, ScanBackend, VerifiedScanPolicy};
use super::{GateRequest, Refusal};

/// A policy that cannot be compiled into a gate.
#[derive(Debug, thiserror::Error)]
#[error("policy \"{policy}\" cannot be used: {reason}")]
pub struct EngineError {
    pub policy: String,
    pub reason: String,
}

pub struct PolicyEngine {
    pub policy: Policy,
    pub policy_sha256: String,
    pub manifest: RecordSet,
    pub snapshot: RecordSet,
    pub verifier: ClosedClauseVerifier,
    pub authority: AuthorityChecker,
    pub scan_policy: VerifiedScanPolicy,
    /// This policy's registries once verified, so later calls skip re-hashing them.
    pub registry_cache: RegistryCache,
    /// Findings of short leaves (claims' ids, predicates and digests) by the leaf scanner
    /// that found them, so later calls with the same scanner do not scan them again.
    pub leaf_memo: LeafMemo,
    /// The compiled prose rules, when the policy is in prose mode.
    pub prose: Option<ProseRules>,
}

fn record_set(
    kind: RecordKind,
    policy_sha256: &str,
    spec: &crate::policy::RecordSetSpec,
) -> RecordSet {
    let records = spec
        .records
        .iter()
        .map(|r| {
            ConstraintRecord::sealed(
                kind,
                &r.id,
                &r.canonical_text,
                &r.canonical_predicate,
                r.record_revision,
            )
        })
        .collect();
    RecordSet::sealed(kind, policy_sha256, spec.revision, records)
}

impl PolicyEngine {
    /// Compiles `policy` and, unless it is a built-in as shipped, validates it
    /// ([`PolicyEngine::validate`]); `scanner_sha256` is the scanner's rule-pack digest, used
    /// where the policy says `builtin`.
    pub fn new(policy: Policy, scanner_sha256: &str) -> Result<PolicyEngine, EngineError> {
        let engine = PolicyEngine::compile(policy, scanner_sha256)?;
        if !crate::policy::is_shipped_sha256(&engine.policy_sha256) {
            engine.validate()?;
        }
        Ok(engine)
    }

    /// Every pattern of the policy compiled and every rule checked against its examples: the
    /// first that fails, and why.
    pub fn validate(&self) -> Result<(), EngineError> {
        let fail = |reason: String| EngineError {
            policy: self.policy.name.clone(),
            reason,
        };
        self.verifier.validate().map_err(|e| fail(e.to_string()))?;
        self.authority.validate().map_err(fail)?;
        match (&self.prose, &self.policy.prose) {
            (Some(rules), Some(prose)) => rules.validate(prose).map_err(fail),
            _ => Ok(()),
        }
    }

    /// The policy compiled, each pattern to compile on first use, nothing validated.
    fn compile(policy: Policy, scanner_sha256: &str) -> Result<PolicyEngine, EngineError> {
        let fail = |reason: String| EngineError {
            policy: policy.name.clone(),
            reason,
        };
        let policy_sha256 = policy.sha256();
        let verifier =
            ClosedClauseVerifier::compile(&policy.grammar).map_err(|e| fail(e.to_string()))?;
        let authority = AuthorityChecker::new(&policy.authority).map_err(fail)?;
        let prose = match (&policy.prose, policy.compaction.mode) {
            (Some(prose), Mode::Prose) => {
                Some(ProseRules::new(prose, &policy.authority).map_err(fail)?)
            }
            _ => None,
        };
        let scan = &policy.scan;
        let scan_policy = VerifiedScanPolicy {
            policy_version: scan.policy_version.clone(),
            policy_sha256: policy_sha256.clone(),
            scanner_version: scan.scanner_version.clone(),
            scanner_sha256: if scan.scanner_sha256 == "builtin" {
                scanner_sha256.to_owned()
            } else {
                scan.scanner_sha256.clone()
            },
            language_profiles: scan.language_profiles.clone(),
            entity_types: scan.entity_types.clone(),
            field_roots: scan.field_roots.clone(),
            max_total_bytes: scan.max_total_bytes,
            timeout_ms: scan.timeout_ms,
        };
        Ok(PolicyEngine {
            manifest: record_set(RecordKind::Invariant, &policy_sha256, &policy.invariants),
            snapshot: record_set(RecordKind::Commitment, &policy_sha256, &policy.commitments),
            policy_sha256,
            verifier,
            authority,
            scan_policy,
            policy,
            registry_cache: RegistryCache::default(),
            leaf_memo: LeafMemo::default(),
            prose,
        })
    }

    /// Runs the gate on one request with this policy.
    pub fn check(
        &self,
        request: &GateRequest,
        backend: &dyn ScanBackend,
        leaf_scanner: &dyn LeafScanner,
        audit: &mut dyn AuditSink,
    ) -> Result<GateOutcome, Refusal> {
        let scanner = ExactSecretScanner {
            policy: &self.scan_policy,
            backend,
        };
        let leaf_scanner = Memoized {
            scanner: leaf_scanner,
            memo: &self.leaf_memo,
        };
        let gate = Gate {
            policy: self,
            verifier: &self.verifier,
            scanner: &scanner,
            leaf_scanner: &leaf_scanner,
            authority: &self.authority,
            registry_cache: Some(&self.registry_cache),
        };
        gate.run(request, &mut MemoryEvidence::default(), audit)
    }

    /// The context to inject once a human released a quarantined compaction: the trusted
    /// instruction rendered from this policy and the request's pinned constraints, and the
    /// summary as untrusted user data, exactly as an accepted verdict returns it.
    pub fn released_context(
        &self,
        request: &GateRequest,
        summary_text: &str,
    ) -> Result<Vec<ContextMessage>, Refusal> {
        request.source_digests()?;
        let pinned = PinnedManifest::for_context(&self.policy.pinned, &request.pinned_constraints)
            .map_err(Refusal::InvalidRequest)?;
        let rendered = self.render_trusted_instruction(&RenderInput {
            tenant_id: &request.tenant_id,
            task_id: &request.task_id,
            policy_sha256: &self.policy_sha256,
            invariant_ids: &request.expected_invariant_ids,
            commitment_ids: &request.expected_commitment_ids,
            pinned: &pinned,
        });
        trusted_context(rendered, &pinned, Body::Summary(summary_text))
    }

    fn constraint_lines(&self) -> String {
        [&self.manifest, &self.snapshot]
            .iter()
            .flat_map(|set| {
                set.records.iter().map(move |r| {
                    format!(
                        "- {} [{}]: {}",
                        r.id,
                        set.kind.constraint_type(),
                        r.canonical_text
                    )
                })
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl PolicySource for PolicyEngine {
    fn load_verified(&self, _tenant_id: &str, _task_id: &str) -> Result<CompactionPolicy, String> {
        let c = &self.policy.compaction;
        Ok(CompactionPolicy {
            name: self.policy.name.clone(),
            policy_version: self.policy.policy_version.clone(),
            policy_sha256: self.policy_sha256.clone(),
            summary_min_length: c.summary_min_length,
            fallback_message_count: c.fallback_message_count,
            limits: Limits {
                max_bytes: c.max_raw_output_bytes.max(1) as usize,
                max_depth: c.max_json_depth.max(1) as usize,
            },
            verifier_version: self.policy.grammar.verifier_version.clone(),
            verifier_artifact_sha256: self.verifier.artifact_sha256().to_owned(),
        })
    }

    fn render_trusted_instruction(&self, input: &RenderInput<'_>) -> Result<String, String> {
        let quoted = |text: &str| json::canonical(&Value::from(text)).map_err(|e| e.to_string());
        let pinned = if input.pinned.constraints.is_empty() {
            "- (none)".to_owned()
        } else {
            input
                .pinned
                .constraints
                .iter()
                .map(|p| {
                    format!(
                        "- [{}] {}: {}",
                        p.constraint.severity, p.constraint.id, p.constraint.text
                    )
                })
                .collect::<Vec<_>>()
                .join("\n")
        };
        let template = self
            .policy
            .compaction
            .trusted_instruction
            .trim_start_matches('\n');
        let mut text = String::with_capacity(template.len() + 1024);
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            text.push_str(&rest[..open]);
            let Some(close) = rest[open..].find('}') else {
                return Err("trusted_instruction has an unclosed \"{\"".into());
            };
            let name = &rest[open + 1..open + close];
            match name {
                "policy_name" => text.push_str(&self.policy.name),
                "policy_version" => text.push_str(&self.policy.policy_version),
                "policy_sha256" => text.push_str(input.policy_sha256),
                "tenant_id" => text.push_str(&quoted(input.tenant_id)?),
                "task_id" => text.push_str(&quoted(input.task_id)?),
                "constraints" => text.push_str(&self.constraint_lines()),
                "pinned" => text.push_str(&pinned),
                other => {
                    return Err(format!(
                        "trusted_instruction has an unknown placeholder \"{{{other}}}\""
                    ))
                }
            }
            rest = &rest[open + close + 1..];
        }
        text.push_str(rest);
        Ok(text)
    }

    fn invariant_manifest(&self, _: &str, _: &str, _: &str) -> Result<Cow<'_, RecordSet>, String> {
        Ok(Cow::Borrowed(&self.manifest))
    }

    fn commitment_snapshot(&self, _: &str, _: &str, _: &str) -> Result<Cow<'_, RecordSet>, String> {
        Ok(Cow::Borrowed(&self.snapshot))
    }

    fn default_pinned(&self) -> Cow<'_, [PinnedConstraint]> {
        Cow::Borrowed(&self.policy.pinned)
    }

    fn prose_rules(&self) -> Option<&ProseRules> {
        self.prose.as_ref()
    }
}
