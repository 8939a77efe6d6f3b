//! The gate (G001): refuse invalid requests, run every check, and return either the
//! accepted context (trusted instruction + the summary as untrusted user data) or the
//! fallback (trusted instruction + the last `fallback_message_count` source messages), with
//! the seed's audit events and our report. The trusted instruction comes from the policy and
//! the pinned manifest only, and must carry every pinned text byte for byte.

use crate::json::{
    self, canonical_array, canonical_object, canonical_str, object, sha256_hex, write_object,
    Field, Limits, Value,
};

use super::authority::AuthorityChecker;
use super::checks::{self, digest_or_empty, CheckContext};
use super::consistency::{EvidenceSink, RegistryCache};
use super::pinned::PinnedManifest;
use super::registry::RecordSet;
use super::report::{CheckResult, Report};
use super::secret_scan::{CompactionScanner, LeafScanner};
use super::verifier::ConflictVerifier;
use super::{GateRequest, Refusal, SummarizerOutput};

/// The marker that opens the summary in the user channel.
pub const UNTRUSTED_MARKER: &str = "[UNTRUSTED COMPACTED CONTEXT DATA]\n";

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

/// What the trusted instruction is rendered from.
pub struct RenderInput<'a> {
    pub tenant_id: &'a str,
    pub task_id: &'a str,
    pub policy_sha256: &'a str,
    pub invariant_ids: &'a [String],
    pub commitment_ids: &'a [String],
    pub pinned: &'a PinnedManifest,
}

/// The signed policy store as the gate sees it.
pub trait PolicySource {
    fn load_verified(&self, tenant_id: &str, task_id: &str) -> Result<CompactionPolicy, String>;
    fn render_trusted_instruction(&self, input: &RenderInput<'_>) -> Result<String, String>;
    fn invariant_manifest(
        &self,
        tenant_id: &str,
        task_id: &str,
        policy_sha256: &str,
    ) -> Result<RecordSet, String>;
    fn commitment_snapshot(
        &self,
        tenant_id: &str,
        task_id: &str,
        policy_sha256: &str,
    ) -> Result<RecordSet, String>;
    fn default_pinned(&self) -> Vec<crate::policy::PinnedConstraint>;
}

/// Where the seed-format acceptance and fallback events go; each is read back and compared.
pub trait AuditSink {
    fn append(&mut self, event: &Value) -> Result<String, String>;
    fn read(&self, id: &str) -> Result<Value, String>;
}

/// One message of the context handed back to the runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextMessage {
    pub role: String,
    pub content: String,
}

impl ContextMessage {
    pub fn to_value(&self) -> Value {
        object([
            ("role", Value::from(&self.role)),
            ("content", Value::from(&self.content)),
        ])
    }
}

/// The gate's answer.
#[derive(Debug, Clone)]
pub struct GateOutcome {
    pub accepted: bool,
    pub messages: Vec<ContextMessage>,
    pub report: Report,
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

impl GateRequest {
    /// The request in `cq.request.v1` form; its canonical SHA-256 identifies the compaction.
    pub fn to_value(&self) -> Value {
        let limits = Limits {
            max_bytes: usize::MAX,
            max_depth: 64,
        };
        json::parse(self.canonical().as_bytes(), &limits).unwrap_or(Value::Null)
    }

    /// The canonical text of the request in `cq.request.v1` form, written directly.
    pub fn canonical(&self) -> String {
        let messages = canonical_array(&self.messages, |out, m| m.write_record(out));
        let pinned = canonical_array(&self.pinned_constraints, |out, p| {
            write_object(out, &mut p.fields())
        });
        let summarizer = match &self.summarizer {
            SummarizerOutput::Raw(raw) => canonical_object(&mut [
                ("model_revision", Field::Str(&self.model_revision)),
                ("raw_output", Field::Str(raw)),
            ]),
            SummarizerOutput::Failed(why) => canonical_object(&mut [
                ("error", Field::Str(why)),
                ("model_revision", Field::Str(&self.model_revision)),
                ("raw_output", Field::Null),
            ]),
        };
        canonical_object(&mut [
            (
                "expected_commitment_ids",
                Field::Strs(&self.expected_commitment_ids),
            ),
            (
                "expected_invariant_ids",
                Field::Strs(&self.expected_invariant_ids),
            ),
            ("messages", Field::Canonical(&messages)),
            ("pinned_constraints", Field::Canonical(&pinned)),
            ("schema_version", Field::Str("cq.request.v1")),
            ("summarizer", Field::Canonical(&summarizer)),
            ("task_id", Field::Str(&self.task_id)),
            ("tenant_id", Field::Str(&self.tenant_id)),
        ])
    }
}

/// The compaction id: a short, stable name derived from the request digest.
pub fn compaction_id(request_sha256: &str) -> String {
    format!("cq-{}", &request_sha256[..request_sha256.len().min(16)])
}

impl Gate<'_> {
    pub fn run(
        &self,
        request: &GateRequest,
        evidence: &mut dyn EvidenceSink,
        audit: &mut dyn AuditSink,
    ) -> Result<GateOutcome, Refusal> {
        let sources = request.source_digests()?;
        let policy = self
            .policy
            .load_verified(&request.tenant_id, &request.task_id)
            .map_err(Refusal::InvalidPolicy)?;
        validate_policy(&policy)?;
        let pinned =
            PinnedManifest::isolate(&self.policy.default_pinned(), &request.pinned_constraints)
                .map_err(Refusal::InvalidRequest)?;
        let manifest = self.policy.invariant_manifest(
            &request.tenant_id,
            &request.task_id,
            &policy.policy_sha256,
        );
        let snapshot = self.policy.commitment_snapshot(
            &request.tenant_id,
            &request.task_id,
            &policy.policy_sha256,
        );
        let cx = CheckContext {
            request,
            source_sha256s: &sources,
            policy_sha256: &policy.policy_sha256,
            summary_min_length: policy.summary_min_length,
            limits: policy.limits,
            manifest: manifest.as_ref().map_err(Clone::clone),
            snapshot: snapshot.as_ref().map_err(Clone::clone),
            verifier: self.verifier,
            scanner: self.scanner,
            leaf_scanner: self.leaf_scanner,
            authority: self.authority,
            pinned: &pinned,
            registry_cache: self.registry_cache,
        };
        let mut evaluation = checks::evaluate(&cx, evidence);
        let population_sha256 = digest_or_empty(&Value::from(&sources[..]));
        let render = || -> Result<String, Refusal> {
            let text = self
                .policy
                .render_trusted_instruction(&RenderInput {
                    tenant_id: &request.tenant_id,
                    task_id: &request.task_id,
                    policy_sha256: &policy.policy_sha256,
                    invariant_ids: &request.expected_invariant_ids,
                    commitment_ids: &request.expected_commitment_ids,
                    pinned: &pinned,
                })
                .map_err(Refusal::RenderFailed)?;
            if text.is_empty() {
                return Err(Refusal::RenderFailed(
                    "trusted instruction rendering failed".into(),
                ));
            }
            let missing = pinned.missing_from(&text);
            if !missing.is_empty() {
                return Err(Refusal::PinnedMissing(missing));
            }
            Ok(text)
        };
        let mut audit_events = Vec::new();
        let identity = |schema: &str| {
            vec![
                ("schema_version", Value::from(schema)),
                ("tenant_id", Value::from(&request.tenant_id)),
                ("task_id", Value::from(&request.task_id)),
                ("policy_sha256", Value::from(&policy.policy_sha256)),
                ("source_population_sha256", Value::from(&population_sha256)),
            ]
        };

        let mut accepted_messages = None;
        if evaluation.first_failure().is_none() {
            if let (Some(output_sha256), Some(compacted), Some(consistency), Some(scan)) = (
                &evaluation.compacted_output_sha256,
                &evaluation.compacted,
                &evaluation.consistency,
                &evaluation.scan,
            ) {
                let instruction = render()?;
                let mut fields = identity("aidefend.context-compaction-acceptance.v1");
                fields.extend([
                    ("compacted_output_sha256", Value::from(output_sha256)),
                    (
                        "consistency_receipt_sha256",
                        Value::from(&consistency.receipt_sha256),
                    ),
                    (
                        "secret_scan_receipt_sha256",
                        Value::from(&scan.receipt_sha256),
                    ),
                    ("outcome", Value::from("ACCEPTED")),
                ]);
                let event = object(fields);
                audit_events.push(event.clone());
                match append_and_read_back(audit, &event) {
                    Ok(()) => {
                        accepted_messages = Some(vec![
                            ContextMessage {
                                role: "system".into(),
                                content: instruction,
                            },
                            ContextMessage {
                                role: "user".into(),
                                content: format!("{UNTRUSTED_MARKER}{}", compacted.summary_text),
                            },
                        ]);
                    }
                    Err(why) => evaluation.checks.push(CheckResult::error(
                        "audit",
                        "audit_readback_differs",
                        why,
                    )),
                }
            }
        }

        let accepted = accepted_messages.is_some();
        let messages = match accepted_messages {
            Some(messages) => messages,
            None => {
                let instruction = render()?;
                let mut fields = identity("aidefend.context-compaction-fallback.v1");
                fields.push(("outcome", Value::from("FALLBACK")));
                let event = object(fields);
                audit_events.push(event.clone());
                append_and_read_back(audit, &event).map_err(Refusal::AuditFailed)?;
                let keep = policy.fallback_message_count.max(1) as usize;
                let tail = &request.messages[request.messages.len().saturating_sub(keep)..];
                std::iter::once(ContextMessage {
                    role: "system".into(),
                    content: instruction,
                })
                .chain(tail.iter().map(|m| ContextMessage {
                    role: m.role.clone(),
                    content: m.content.clone(),
                }))
                .collect()
            }
        };

        let report = build_report(
            request,
            &policy,
            &sources,
            &population_sha256,
            &pinned,
            &evaluation,
            accepted,
            &messages,
        );
        Ok(GateOutcome {
            accepted,
            messages,
            report,
            audit_events,
            source_message_sha256s: sources,
            summary_text: evaluation.compacted.map(|c| c.summary_text),
        })
    }
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

#[allow(clippy::too_many_arguments)]
fn build_report(
    request: &GateRequest,
    policy: &CompactionPolicy,
    sources: &[String],
    population_sha256: &str,
    pinned: &PinnedManifest,
    evaluation: &checks::Evaluation,
    accepted: bool,
    messages: &[ContextMessage],
) -> Report {
    let request_sha256 = sha256_hex(request.canonical().as_bytes());
    let (verdict, outcome, finding_status) = if accepted {
        ("ACCEPTED", "PASS", "NO_FINDING")
    } else {
        let first = evaluation.checks.iter().find(|c| !c.passed());
        (
            "QUARANTINED",
            first.map_or("ERROR", |c| c.outcome),
            first.map_or("UNKNOWN", |c| c.finding_status),
        )
    };
    let context = Value::Array(messages.iter().map(ContextMessage::to_value).collect());
    Report {
        compaction_id: compaction_id(&request_sha256),
        tenant_id: request.tenant_id.clone(),
        task_id: request.task_id.clone(),
        request_sha256,
        model_revision: request.model_revision.clone(),
        policy_name: policy.name.clone(),
        policy_version: policy.policy_version.clone(),
        policy_sha256: policy.policy_sha256.clone(),
        verifier_version: policy.verifier_version.clone(),
        verifier_artifact_sha256: policy.verifier_artifact_sha256.clone(),
        verdict,
        outcome,
        finding_status,
        source_message_sha256s: sources.to_vec(),
        source_population_sha256: population_sha256.to_owned(),
        compacted_output_sha256: evaluation.compacted_output_sha256.clone(),
        summary_sha256: evaluation
            .compacted
            .as_ref()
            .map(|c| sha256_hex(canonical_str(&c.summary_text).as_bytes())),
        pinned_manifest: pinned.to_value(),
        consistency_receipt_sha256: evaluation
            .consistency
            .as_ref()
            .map(|c| c.receipt_sha256.clone()),
        secret_scan_receipt_sha256: evaluation.scan.as_ref().map(|s| s.receipt_sha256.clone()),
        context_sha256: digest_or_empty(&context),
        checks: evaluation.checks.clone(),
    }
}
