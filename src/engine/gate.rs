//! The gate (G001): refuse invalid requests, run every check, and return either the
//! accepted context (trusted instruction + the summary as untrusted user data) or the
//! fallback (trusted instruction + the last `fallback_message_count` source messages), with
//! the seed's audit events and our report, sealed once. The trusted instruction comes from
//! the policy and the pinned manifest only, and must carry every pinned text byte for byte
//! ([`super::context`]).

use std::borrow::Cow;

use crate::json::{canonical_str, object, sha256_hex, write_strings, Limits, Value};
use crate::policy::Mode;

use super::authority::AuthorityChecker;
use super::checks::{self, CheckContext, Evaluation};
use super::consistency::{EvidenceSink, RegistryCache};
use super::context::{trusted_context, Body};
pub use super::context::{ContextMessage, RenderInput, UNTRUSTED_MARKER};
use super::pinned::PinnedManifest;
use super::registry::RecordSet;
use super::report::{CheckResult, Report, SealedReport};
use super::secret_scan::{CompactionScanner, LeafScanner};
use super::verdict::{FindingStatus, Outcome, Verdict};
use super::verifier::ConflictVerifier;
use super::{GateRequest, Refusal};

/// The seed's `VerifiedCompactionPolicy`, plus parser limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactionPolicy {
    pub name: String,
    pub policy_version: String,
    pub policy_sha256: String,
    pub summary_min_length: i64,
    pub fallback_message_count: i64,
    pub limits: Limits,
    pub verifier_version: String,
    pub verifier_artifact_sha256: String,
}

/// The signed policy store as the gate sees it. The registries and the default pinned
/// constraints come borrowed where the source keeps them, as a compiled policy does, so a
/// call copies none of them.
pub trait PolicySource {
    fn load_verified(&self, tenant_id: &str, task_id: &str) -> Result<CompactionPolicy, String>;
    fn render_trusted_instruction(&self, input: &RenderInput<'_>) -> Result<String, String>;
    fn invariant_manifest(
        &self,
        tenant_id: &str,
        task_id: &str,
        policy_sha256: &str,
    ) -> Result<Cow<'_, RecordSet>, String>;
    fn commitment_snapshot(
        &self,
        tenant_id: &str,
        task_id: &str,
        policy_sha256: &str,
    ) -> Result<Cow<'_, RecordSet>, String>;
    fn default_pinned(&self) -> Cow<'_, [crate::policy::PinnedConstraint]>;
    /// The compiled prose rules when the policy is in prose mode; `None` is strict mode.
    fn prose_rules(&self) -> Option<&super::prose::ProseRules> {
        None
    }
}

/// Where the seed-format acceptance and fallback events go; each is read back and compared.
pub trait AuditSink {
    fn append(&mut self, event: &Value) -> Result<String, String>;
    fn read(&self, id: &str) -> Result<Value, String>;
}

/// The gate's answer.
#[derive(Debug, Clone)]
pub struct GateOutcome {
    pub accepted: bool,
    pub messages: Vec<ContextMessage>,
    pub report: SealedReport,
    pub audit_events: Vec<Value>,
    pub source_message_sha256s: Vec<String>,
    pub summary_text: Option<String>,
}

/// The gate's collaborators.
pub struct Gate<'a> {
    pub policy: &'a dyn PolicySource,
    pub verifier: &'a dyn ConflictVerifier,
    pub scanner: &'a dyn CompactionScanner,
    pub leaf_scanner: &'a dyn LeafScanner,
    pub authority: &'a AuthorityChecker,
    /// Registries verified by earlier calls (see `RegistryCache`); `None` re-derives them.
    pub registry_cache: Option<&'a RegistryCache>,
}

fn validate_policy(policy: &CompactionPolicy) -> Result<(), Refusal> {
    if policy.policy_version.is_empty()
        || policy.policy_sha256.chars().count() != 64
        || policy.summary_min_length < 1
        || policy.fallback_message_count < 1
    {
        return Err(Refusal::InvalidPolicy(
            "verified compaction policy is invalid".into(),
        ));
    }
    Ok(())
}

/// The compaction id: a short, stable name derived from the request digest.
pub fn compaction_id(request_sha256: &str) -> String {
    format!("cq-{}", request_sha256.get(..16).unwrap_or(request_sha256))
}

/// What the checks run against, resolved once per request.
struct Prepared {
    sources: Vec<String>,
    policy: CompactionPolicy,
    pinned: PinnedManifest,
    population_sha256: String,
}

impl Gate<'_> {
    pub fn run(
        &self,
        request: &GateRequest,
        evidence: &mut dyn EvidenceSink,
        audit: &mut dyn AuditSink,
    ) -> Result<GateOutcome, Refusal> {
        let prepared = self.prepare(request)?;
        let mut evaluation = self.evaluate(request, &prepared, evidence);
        let mut audit_events = Vec::new();
        let accepted_messages = self.accept(
            request,
            &prepared,
            &mut evaluation,
            audit,
            &mut audit_events,
        )?;
        let accepted = accepted_messages.is_some();
        let messages = match accepted_messages {
            Some(messages) => messages,
            None => self.fall_back(request, &prepared, audit, &mut audit_events)?,
        };
        let mode = if self.policy.prose_rules().is_some() {
            Mode::Prose
        } else {
            Mode::Strict
        };
        let report = build_report(
            request,
            &prepared,
            &mut evaluation,
            accepted,
            &messages,
            mode,
        )
        .seal()
        .map_err(|e| Refusal::ReportFailed(e.to_string()))?;
        Ok(GateOutcome {
            accepted,
            messages,
            report,
            audit_events,
            source_message_sha256s: prepared.sources,
            summary_text: evaluation.compacted.map(|c| c.summary_text),
        })
    }

    /// The seed's refusals: identity and population, the verified policy, the pinned manifest.
    fn prepare(&self, request: &GateRequest) -> Result<Prepared, Refusal> {
        let sources = request.source_digests()?;
        let policy = self
            .policy
            .load_verified(&request.tenant_id, &request.task_id)
            .map_err(Refusal::InvalidPolicy)?;
        validate_policy(&policy)?;
        let pinned =
            PinnedManifest::isolate(&self.policy.default_pinned(), &request.pinned_constraints)
                .map_err(Refusal::InvalidRequest)?;
        let mut population = String::with_capacity(sources.len() * 67 + 2);
        write_strings(&mut population, sources.iter().map(String::as_str));
        let population_sha256 = sha256_hex(population.as_bytes());
        Ok(Prepared {
            sources,
            policy,
            pinned,
            population_sha256,
        })
    }

    fn evaluate(
        &self,
        request: &GateRequest,
        p: &Prepared,
        evidence: &mut dyn EvidenceSink,
    ) -> Evaluation {
        let (tenant, task, digest) = (
            &request.tenant_id,
            &request.task_id,
            &p.policy.policy_sha256,
        );
        let manifest = self.policy.invariant_manifest(tenant, task, digest);
        let snapshot = self.policy.commitment_snapshot(tenant, task, digest);
        let cx = CheckContext {
            request,
            source_sha256s: &p.sources,
            policy_sha256: &p.policy.policy_sha256,
            summary_min_length: p.policy.summary_min_length,
            limits: p.policy.limits,
            manifest: manifest.as_deref().map_err(Clone::clone),
            snapshot: snapshot.as_deref().map_err(Clone::clone),
            verifier: self.verifier,
            scanner: self.scanner,
            leaf_scanner: self.leaf_scanner,
            authority: self.authority,
            pinned: &p.pinned,
            registry_cache: self.registry_cache,
            prose: self.policy.prose_rules(),
        };
        match cx.prose {
            Some(rules) => super::prose::evaluate(&cx, rules, evidence),
            None => checks::evaluate(&cx, evidence),
        }
    }

    /// The trusted context of `request` followed by `body`.
    fn context(
        &self,
        request: &GateRequest,
        p: &Prepared,
        body: Body<'_>,
    ) -> Result<Vec<ContextMessage>, Refusal> {
        let rendered = self.policy.render_trusted_instruction(&RenderInput {
            tenant_id: &request.tenant_id,
            task_id: &request.task_id,
            policy_sha256: &p.policy.policy_sha256,
            invariant_ids: &request.expected_invariant_ids,
            commitment_ids: &request.expected_commitment_ids,
            pinned: &p.pinned,
        });
        trusted_context(rendered, &p.pinned, body)
    }

    /// The accepted context, when every check passed and the acceptance event was appended
    /// and read back; an audit failure becomes a failing `audit` check.
    fn accept(
        &self,
        request: &GateRequest,
        p: &Prepared,
        evaluation: &mut Evaluation,
        audit: &mut dyn AuditSink,
        events: &mut Vec<Value>,
    ) -> Result<Option<Vec<ContextMessage>>, Refusal> {
        if evaluation.first_failure().is_some() {
            return Ok(None);
        }
        let (Some(output_sha256), Some(compacted), Some(scan)) = (
            &evaluation.compacted_output_sha256,
            &evaluation.compacted,
            &evaluation.scan,
        ) else {
            return Ok(None);
        };
        // Strict mode names the consistency receipt; prose mode, which verified nothing, the
        // digest of what it re-injected.
        let (schema, receipt) = match (&evaluation.reinjection_sha256, &evaluation.consistency) {
            (Some(reinjected), _) => (
                "cq.context-compaction-acceptance.prose.v1",
                ("reinjection_receipt_sha256", reinjected.clone()),
            ),
            (None, Some(consistency)) => (
                "aidefend.context-compaction-acceptance.v1",
                (
                    "consistency_receipt_sha256",
                    consistency.receipt_sha256.clone(),
                ),
            ),
            (None, None) => return Ok(None),
        };
        let messages = self.context(request, p, Body::Summary(&compacted.summary_text))?;
        let mut fields = identity(request, p, schema);
        fields.extend([
            ("compacted_output_sha256", Value::from(output_sha256)),
            (receipt.0, Value::from(receipt.1)),
            (
                "secret_scan_receipt_sha256",
                Value::from(&scan.receipt_sha256),
            ),
            ("outcome", Value::from("ACCEPTED")),
        ]);
        if evaluation.reinjection_sha256.is_some() {
            fields.push(("mode", Value::from("prose")));
        }
        let event = object(fields);
        events.push(event.clone());
        match append_and_read_back(audit, &event) {
            Ok(()) => Ok(Some(messages)),
            Err(why) => {
                evaluation
                    .checks
                    .push(CheckResult::error("audit", "audit_readback_differs", why));
                Ok(None)
            }
        }
    }

    /// The fallback context, after its audit event was appended and read back.
    fn fall_back(
        &self,
        request: &GateRequest,
        p: &Prepared,
        audit: &mut dyn AuditSink,
        events: &mut Vec<Value>,
    ) -> Result<Vec<ContextMessage>, Refusal> {
        let keep = usize::try_from(p.policy.fallback_message_count.max(1)).unwrap_or(usize::MAX);
        let messages = self.context(
            request,
            p,
            Body::Fallback {
                messages: &request.messages,
                keep,
            },
        )?;
        let mut fields = identity(request, p, "aidefend.context-compaction-fallback.v1");
        fields.push(("outcome", Value::from("FALLBACK")));
        let event = object(fields);
        events.push(event.clone());
        append_and_read_back(audit, &event).map_err(Refusal::AuditFailed)?;
        Ok(messages)
    }
}

/// The identity fields every seed-format audit event starts with.
fn identity(request: &GateRequest, p: &Prepared, schema: &str) -> Vec<(&'static str, Value)> {
    vec![
        ("schema_version", Value::from(schema)),
        ("tenant_id", Value::from(&request.tenant_id)),
        ("task_id", Value::from(&request.task_id)),
        ("policy_sha256", Value::from(&p.policy.policy_sha256)),
        (
            "source_population_sha256",
            Value::from(&p.population_sha256),
        ),
    ]
}

fn append_and_read_back(audit: &mut dyn AuditSink, event: &Value) -> Result<(), String> {
    let id = audit
        .append(event)
        .map_err(|e| format!("audit append failed: {e}"))?;
    match audit.read(&id) {
        Ok(read) if read == *event => Ok(()),
        Ok(_) => Err("compaction audit readback differs".into()),
        Err(e) => Err(format!("audit read failed: {e}")),
    }
}

/// The report of a call; the checks, the model revision and the output digest are moved out of
/// `evaluation`, which the call has no further use for.
fn build_report(
    request: &GateRequest,
    p: &Prepared,
    evaluation: &mut Evaluation,
    accepted: bool,
    messages: &[ContextMessage],
    mode: Mode,
) -> Report {
    let request_sha256 = sha256_hex(request.canonical().as_bytes());
    let (verdict, outcome, finding_status) = if accepted {
        (Verdict::Accepted, Outcome::Pass, FindingStatus::NoFinding)
    } else {
        let first = evaluation.first_failure();
        (
            Verdict::Quarantined,
            first.map_or(Outcome::Error, |c| c.outcome),
            first.map_or(FindingStatus::Unknown, |c| c.finding_status),
        )
    };
    let context = ContextMessage::canonical(messages);
    let policy = &p.policy;
    Report {
        compaction_id: compaction_id(&request_sha256),
        tenant_id: request.tenant_id.clone(),
        task_id: request.task_id.clone(),
        request_sha256,
        model_revision: std::mem::take(&mut evaluation.model_revision),
        policy_name: policy.name.clone(),
        policy_version: policy.policy_version.clone(),
        policy_sha256: policy.policy_sha256.clone(),
        verifier_version: policy.verifier_version.clone(),
        verifier_artifact_sha256: policy.verifier_artifact_sha256.clone(),
        verdict,
        outcome,
        finding_status,
        source_message_sha256s: p.sources.clone(),
        source_population_sha256: p.population_sha256.clone(),
        compacted_output_sha256: evaluation.compacted_output_sha256.take(),
        summary_sha256: evaluation
            .compacted
            .as_ref()
            .map(|c| sha256_hex(canonical_str(&c.summary_text).as_bytes())),
        pinned_manifest: p.pinned.to_value(),
        consistency_receipt_sha256: evaluation
            .consistency
            .as_ref()
            .map(|c| c.receipt_sha256.clone()),
        secret_scan_receipt_sha256: evaluation.scan.as_ref().map(|s| s.receipt_sha256.clone()),
        context_sha256: sha256_hex(context.as_bytes()),
        checks: std::mem::take(&mut evaluation.checks),
        mode,
    }
}
