//! The scanner as the gate's G003 backend: it answers the seed's scan request with a receipt
//! bound to that exact request, policy, rule pack and population. An entity type or language
//! profile the scanner does not support is an error (the gate falls back), never a silently
//! narrowed scan; a scan that overruns `timeout_ms` is a timeout. Receipts and findings carry
//! rule ids, categories, field paths and spans, never a matched value.

use std::time::Instant;

use crate::engine::leaf_memo::LeafMemo;
use crate::engine::secret_scan::{
    BackendError, BackendReceipt, LeafFinding, LeafScanner, ScanBackend,
};
use crate::json::{self, object, Value};

use super::{Finding, Scanner};

fn leaf(finding: Finding) -> LeafFinding {
    LeafFinding {
        field_path: finding.field_path,
        span: finding.span,
        rule_id: finding.rule_id,
        category: finding.category.as_str().to_owned(),
        confidence: finding.confidence.to_string(),
    }
}

impl LeafScanner for Scanner {
    fn scan_field(&self, field_path: &str, text: &str) -> Vec<LeafFinding> {
        self.scan_text(field_path, text)
            .into_iter()
            .map(leaf)
            .collect()
    }

    fn selection(&self) -> Option<&str> {
        Some(Scanner::selection(self))
    }
}

/// The G003 backend over a rule pack. The scanner narrowed to a request's entity types is
/// kept for the next request with the same types (the policy's, as a rule), and so are the
/// findings of short fields (the retained ids, the source digests) by that scanner.
pub struct ScannerBackend {
    scanner: Scanner,
    prepared: std::sync::Mutex<Option<(Vec<String>, std::sync::Arc<Scanner>)>>,
    memo: LeafMemo,
}

impl ScannerBackend {
    pub fn new(scanner: Scanner) -> ScannerBackend {
        ScannerBackend {
            scanner,
            prepared: std::sync::Mutex::new(None),
            memo: LeafMemo::default(),
        }
    }

    pub fn scanner(&self) -> &Scanner {
        &self.scanner
    }

    /// The findings of short fields kept from earlier requests.
    pub fn leaf_memo(&self) -> &LeafMemo {
        &self.memo
    }

    /// The scanner for exactly these entity types; an unsupported one is an error.
    fn narrowed(&self, entity_types: &[&str]) -> Result<std::sync::Arc<Scanner>, BackendError> {
        let wanted: Vec<String> = entity_types.iter().map(|t| (*t).to_owned()).collect();
        let mut prepared = self
            .prepared
            .lock()
            .map_err(|_| BackendError::Failed("scanner cache poisoned".into()))?;
        if let Some((types, scanner)) = prepared.as_ref() {
            if *types == wanted {
                return Ok(std::sync::Arc::clone(scanner));
            }
        }
        let scanner = std::sync::Arc::new(
            self.scanner
                .for_entity_types(entity_types)
                .map_err(|e| BackendError::Failed(e.to_string()))?,
        );
        *prepared = Some((wanted, std::sync::Arc::clone(&scanner)));
        Ok(scanner)
    }
}

fn strings<'a>(request: &'a Value, key: &str) -> Result<Vec<&'a str>, BackendError> {
    request
        .get(key)
        .and_then(Value::as_array)
        .ok_or_else(|| BackendError::Failed(format!("scan request has no \"{key}\" list")))?
        .iter()
        .map(|v| {
            v.as_str().ok_or_else(|| {
                BackendError::Failed(format!("scan request \"{key}\" holds a non-string"))
            })
        })
        .collect()
}

fn text<'a>(request: &'a Value, key: &str) -> Result<&'a str, BackendError> {
    request
        .get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| BackendError::Failed(format!("scan request has no \"{key}\"")))
}

impl ScanBackend for ScannerBackend {
    fn scan_verified(
        &self,
        request: &Value,
        timeout_ms: i64,
    ) -> Result<BackendReceipt, BackendError> {
        let started = Instant::now();
        for language in strings(request, "language_profiles")? {
            if !self.scanner.supports_language(language) {
                return Err(BackendError::Failed(format!(
                    "language profile \"{language}\" is not supported by this scanner"
                )));
            }
        }
        let entity_types = strings(request, "entity_types")?;
        let scanner = self.narrowed(&entity_types)?;
        let fields = request
            .get("fields")
            .and_then(Value::as_array)
            .ok_or_else(|| BackendError::Failed("scan request has no fields".into()))?;
        let mut findings = Vec::new();
        for field in fields {
            let (path, value) = (text(field, "path")?, text(field, "value")?);
            findings.extend(self.memo.scan_field(&*scanner, path, value));
            if started.elapsed().as_millis() > timeout_ms.max(0) as u128 {
                return Err(BackendError::Timeout);
            }
        }
        let request_sha256 =
            json::canonical_sha256(request).map_err(|e| BackendError::Failed(e.to_string()))?;
        let count = request
            .get("scanned_field_count")
            .and_then(Value::as_i64)
            .unwrap_or(-1);
        let decision = if findings.is_empty() {
            "CLEAN"
        } else {
            "BLOCK"
        };
        let located: Vec<Value> = findings
            .iter()
            .map(|f| {
                object([
                    ("field_path", Value::from(&f.field_path)),
                    ("rule_id", Value::from(&f.rule_id)),
                    ("category", Value::from(&f.category)),
                    (
                        "span",
                        Value::Array(vec![Value::from(f.span.start), Value::from(f.span.end)]),
                    ),
                ])
            })
            .collect();
        let mut receipt = BackendReceipt {
            receipt_sha256: String::new(),
            request_sha256,
            policy_sha256: text(request, "policy_sha256")?.to_owned(),
            scanner_sha256: scanner.rules_sha256(),
            scanned_population_sha256: text(request, "scanned_population_sha256")?.to_owned(),
            scanned_field_count: fields.len() as i64,
            decision: decision.into(),
            finding_count: findings.len() as i64,
            findings,
        };
        if count != receipt.scanned_field_count {
            return Err(BackendError::Failed(
                "scan request's field count does not match its fields".into(),
            ));
        }
        let body = object([
            ("schema_version", Value::from("cq.scan-receipt.v1")),
            ("request_sha256", Value::from(&receipt.request_sha256)),
            ("policy_sha256", Value::from(&receipt.policy_sha256)),
            ("scanner_version", Value::from(scanner.version())),
            ("scanner_sha256", Value::from(&receipt.scanner_sha256)),
            (
                "scanned_population_sha256",
                Value::from(&receipt.scanned_population_sha256),
            ),
            (
                "scanned_field_count",
                Value::from(receipt.scanned_field_count),
            ),
            ("decision", Value::from(decision)),
            ("finding_count", Value::from(receipt.finding_count)),
            ("findings", Value::Array(located)),
        ]);
        receipt.receipt_sha256 =
            json::canonical_sha256(&body).map_err(|e| BackendError::Failed(e.to_string()))?;
        Ok(receipt)
    }
}
