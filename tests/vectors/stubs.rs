//! The pipeline vectors' collaborators, through cq's own interfaces: the stub policy store
//! and trusted-instruction renderer, the rule-based scanner backend and its lying modes, the
//! scanner adapter's lies, and the audit sink's tamper modes (see `tests/vectors/README.md`).

use std::borrow::Cow;

use cq::engine::compacted::CompactedContext;
use cq::engine::gate::{AuditSink, CompactionPolicy, PolicySource, RenderInput};
use cq::engine::registry::{RecordKind, RecordSet};
use cq::engine::secret_scan::{
    BackendError, BackendReceipt, CompactionScanner, LeafFinding, LeafScanner, ScanBackend,
    ScanFailure, SecretScanReceipt,
};
use cq::json::{self, object, Limits, Value};
use cq::policy::PinnedConstraint;

use crate::harness::{field, int, strings, text};

pub struct StubPolicy<'a> {
    pub input: &'a Value,
}

impl PolicySource for StubPolicy<'_> {
    fn load_verified(&self, _: &str, _: &str) -> Result<CompactionPolicy, String> {
        let p = field(self.input, "compaction_policy");
        Ok(CompactionPolicy {
            name: "vector-stub".into(),
            policy_version: text(p, "policy_version"),
            policy_sha256: text(p, "policy_sha256"),
            summary_min_length: int(p, "summary_min_length"),
            fallback_message_count: int(p, "fallback_message_count"),
            limits: Limits {
                max_bytes: 1 << 20,
                max_depth: 64,
            },
            verifier_version: "conflict-rules-2026-07-28".into(),
            verifier_artifact_sha256: "a".repeat(64),
        })
    }

    fn render_trusted_instruction(&self, input: &RenderInput<'_>) -> Result<String, String> {
        if text(self.input, "render_mode") == "empty" {
            return Ok(String::new());
        }
        let value = object([
            (
                "schema_version",
                Value::from("oracle.stub-trusted-instruction.v1"),
            ),
            ("tenant_id", Value::from(input.tenant_id)),
            ("task_id", Value::from(input.task_id)),
            ("policy_sha256", Value::from(input.policy_sha256)),
            ("invariant_ids", Value::from(input.invariant_ids)),
            ("commitment_ids", Value::from(input.commitment_ids)),
        ]);
        json::canonical(&value).map_err(|e| e.to_string())
    }

    fn invariant_manifest(&self, _: &str, _: &str, _: &str) -> Result<Cow<'_, RecordSet>, String> {
        Ok(Cow::Owned(crate::harness::record_set(
            field(self.input, "invariant_manifest"),
            RecordKind::Invariant,
        )))
    }

    fn commitment_snapshot(&self, _: &str, _: &str, _: &str) -> Result<Cow<'_, RecordSet>, String> {
        Ok(Cow::Owned(crate::harness::record_set(
            field(self.input, "commitment_snapshot"),
            RecordKind::Commitment,
        )))
    }

    fn default_pinned(&self) -> Cow<'_, [PinnedConstraint]> {
        Cow::Borrowed(&[])
    }
}

fn rule() -> &'static regex::Regex {
    static RULE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    RULE.get_or_init(|| {
        regex::Regex::new(r"AKIA[0-9A-Z]{16}|sk-[A-Za-z0-9]{20,}|-----BEGIN [A-Z ]*PRIVATE KEY-----|[0-9]{3}-[0-9]{2}-[0-9]{4}").unwrap()
    })
}

pub struct RuleBackend {
    pub mode: String,
}

impl ScanBackend for RuleBackend {
    fn scan_verified(
        &self,
        request: &Value,
        _timeout_ms: i64,
    ) -> Result<BackendReceipt, BackendError> {
        if self.mode == "timeout" {
            return Err(BackendError::Timeout);
        }
        let rule = rule();
        let hits = field(request, "fields")
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| rule.is_match(&text(f, "value")))
            .count() as i64;
        let zeros = "0".repeat(64);
        let mut r = BackendReceipt {
            receipt_sha256: String::new(),
            request_sha256: json::canonical_sha256(request).unwrap(),
            policy_sha256: text(request, "policy_sha256"),
            scanner_sha256: text(request, "scanner_sha256"),
            scanned_population_sha256: text(request, "scanned_population_sha256"),
            scanned_field_count: int(request, "scanned_field_count"),
            decision: if hits > 0 { "BLOCK" } else { "CLEAN" }.into(),
            finding_count: hits,
            findings: Vec::new(),
        };
        match self.mode.as_str() {
            "rule" | "short_receipt" => {}
            "error" => r.decision = "ERROR".into(),
            "wrong_request_sha" => r.request_sha256 = zeros,
            "wrong_population_sha" => r.scanned_population_sha256 = zeros,
            "wrong_scanner_sha" => r.scanner_sha256 = zeros,
            "wrong_field_count" => r.scanned_field_count += 1,
            "clean_with_findings" => r.finding_count = 1,
            other => panic!("unknown backend_mode {other:?}"),
        }
        let body = object([
            ("schema_version", Value::from("oracle.stub-scan-receipt.v1")),
            ("request_sha256", Value::from(&r.request_sha256)),
            ("policy_sha256", Value::from(&r.policy_sha256)),
            ("scanner_sha256", Value::from(&r.scanner_sha256)),
            (
                "scanned_population_sha256",
                Value::from(&r.scanned_population_sha256),
            ),
            ("scanned_field_count", Value::from(r.scanned_field_count)),
            ("decision", Value::from(&r.decision)),
            ("finding_count", Value::from(r.finding_count)),
        ]);
        r.receipt_sha256 = if self.mode == "short_receipt" {
            "abc".into()
        } else {
            json::canonical_sha256(&body).unwrap()
        };
        Ok(r)
    }
}

/// The same rule over one leaf, for the claims cq scans beyond the seed's four roots.
pub struct RuleLeaves;

impl LeafScanner for RuleLeaves {
    fn scan_field(&self, field_path: &str, value: &str) -> Vec<LeafFinding> {
        rule()
            .find_iter(value)
            .map(|m| LeafFinding {
                field_path: field_path.into(),
                span: m.range(),
                rule_id: "stub-rule".into(),
                category: "credential".into(),
                confidence: "high".into(),
            })
            .collect()
    }
}

/// The adapter's lies after a correct scan.
pub struct LyingScanner<'a> {
    pub inner: &'a dyn CompactionScanner,
    pub mode: String,
}

impl CompactionScanner for LyingScanner<'_> {
    fn scan(
        &self,
        policy_sha256: &str,
        compacted: &CompactedContext,
    ) -> Result<SecretScanReceipt, ScanFailure> {
        let mut receipt = self.inner.scan(policy_sha256, compacted)?;
        match self.mode.as_str() {
            "exact" => {}
            "lie_population" => receipt.scanned_population_sha256 = "0".repeat(64),
            "lie_field_count" => receipt.scanned_field_count -= 1,
            "short_receipt" => receipt.receipt_sha256 = "abc".into(),
            other => panic!("unknown scanner_adapter_mode {other:?}"),
        }
        Ok(receipt)
    }
}

#[derive(Default)]
pub struct ModeAudit {
    pub mode: String,
    pub events: Vec<Value>,
}

impl AuditSink for ModeAudit {
    fn append(&mut self, event: &Value) -> Result<String, String> {
        self.events.push(event.clone());
        json::canonical_sha256(event).map_err(|e| e.to_string())
    }

    fn read(&self, id: &str) -> Result<Value, String> {
        let event = self
            .events
            .iter()
            .rev()
            .find(|e| json::canonical_sha256(e).ok().as_deref() == Some(id))
            .cloned()
            .ok_or("missing")?;
        let accepted = event.get("outcome").and_then(Value::as_str) == Some("ACCEPTED");
        match (self.mode.as_str(), event) {
            ("tamper_all", Value::Object(mut map))
            | ("tamper_accepted", Value::Object(mut map))
                if self.mode == "tamper_all" || accepted =>
            {
                map.insert("outcome".into(), Value::from("TAMPERED"));
                Ok(Value::Object(map))
            }
            (_, event) => Ok(event),
        }
    }
}

pub fn scan_policy(input: &Value) -> cq::engine::secret_scan::VerifiedScanPolicy {
    let p = field(input, "scan_policy");
    cq::engine::secret_scan::VerifiedScanPolicy {
        policy_version: text(p, "policy_version"),
        policy_sha256: text(p, "policy_sha256"),
        scanner_version: text(p, "scanner_version"),
        scanner_sha256: text(p, "scanner_sha256"),
        language_profiles: strings(p, "language_profiles"),
        entity_types: strings(p, "entity_types"),
        field_roots: strings(p, "field_roots"),
        max_total_bytes: int(p, "max_total_bytes"),
        timeout_ms: int(p, "timeout_ms"),
    }
}
