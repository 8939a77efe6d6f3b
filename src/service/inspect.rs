//! Looking at one recorded compaction the way a reviewer may: its stored request, its current
//! report (read back typed and checked against its digest), and every untrusted text with each
//! matched secret overwritten before it leaves here.
//!
//! Secrets are found two ways: the report's `secret` findings on the summary (the gate's own
//! scan), and a scan of every other untrusted text a reviewer will see (source messages, claim
//! predicates, a summary the gate could not parse), because the gate does not scan source
//! turns and a pasted key must not reach the screen. The summary's secrets are numbered in one
//! stable order ([`summary_secrets`]) so a reveal can name one by index; a reveal is written to
//! the audit log before the value is handed out.

use std::ops::Range;

use anyhow::Context as _;

use crate::audit::keys::NamedKey;
use crate::engine::report::{Finding, SealedReport};
use crate::engine::request_json::MAX_REQUEST_BYTES;
use crate::engine::{GateRequest, SummarizerOutput};
use crate::json::{self, Limits, Value};
use crate::scan::Scanner;
use crate::store::{Compaction, Store, StoredReceipt};

use super::recheck::current_report;

/// One secret in the summary: where it is and what matched it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretSpan {
    pub range: Range<usize>,
    pub rule_id: String,
    pub category: String,
}

/// The finding id a reviewer uses for the `index`-th summary secret.
pub fn finding_id(index: usize) -> String {
    format!("secret-{index}")
}

/// The index in a finding id made by [`finding_id`].
pub fn finding_index(id: &str) -> Option<usize> {
    id.strip_prefix("secret-")?.parse().ok()
}

/// What the summarizer's raw output says, read leniently for display.
#[derive(Debug, Clone, Default)]
pub struct SummaryParts {
    /// `summary_text` when the output is a JSON object with one, else the raw text.
    pub text: String,
    /// Whether report spans on `summary_text` refer to `text`: the field, or a prose
    /// summary's raw text (which prose mode checks as the summary).
    pub is_field: bool,
    /// `(constraint_id, preserved_predicate)` of each claim.
    pub claims: Vec<(String, String)>,
}

/// A source message with its secrets overwritten.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MaskedMessage {
    pub message_id: String,
    pub role: String,
    /// Hex SHA-256 of the original record, as the report lists it.
    pub sha256: String,
    pub content: String,
    /// Byte ranges of `content` that were overwritten.
    pub masked: Vec<Range<usize>>,
}

/// One compaction as a reviewer sees it, every secret overwritten.
#[derive(Debug, Clone)]
pub struct Inspection {
    pub compaction: Compaction,
    pub request: GateRequest,
    pub report: SealedReport,
    /// The summary with its secrets overwritten, and its claims with theirs.
    pub summary: SummaryParts,
    pub secrets: Vec<SecretSpan>,
    pub sources: Vec<MaskedMessage>,
    /// The previous summary of the same task, masked the same way.
    pub previous_summary: Option<String>,
    pub receipts: Vec<StoredReceipt>,
}

/// Reads the summary and claims out of a request's summarizer output.
pub fn summary_parts(request: &GateRequest) -> SummaryParts {
    let raw = match &request.summarizer {
        SummarizerOutput::Raw(raw) => raw,
        SummarizerOutput::Failed(why) => {
            return SummaryParts {
                text: format!("(the summarizer failed: {why})"),
                ..SummaryParts::default()
            }
        }
    };
    let limits = Limits {
        max_bytes: MAX_REQUEST_BYTES,
        max_depth: 64,
    };
    let parsed = json::parse(raw.as_bytes(), &limits).ok();
    let Some(text) = parsed
        .as_ref()
        .and_then(|v| v.get("summary_text"))
        .and_then(Value::as_str)
    else {
        // Prose (not a JSON object with a summary): prose mode checks the raw text as the
        // summary, so report spans on `summary_text` refer to it.
        return SummaryParts {
            text: raw.clone(),
            is_field: true,
            ..SummaryParts::default()
        };
    };
    let str_of = |c: &Value, key: &str| c.get(key).and_then(Value::as_str).unwrap_or("").to_owned();
    let claims = parsed
        .as_ref()
        .and_then(|v| v.get("preserved_constraint_claims"))
        .and_then(Value::as_array)
        .unwrap_or(&[])
        .iter()
        .map(|c| (str_of(c, "constraint_id"), str_of(c, "preserved_predicate")))
        .collect();
    SummaryParts {
        text: text.to_owned(),
        is_field: true,
        claims,
    }
}

/// A finding's span on the summary text, widened to character boundaries; `None` when the
/// finding is on another field or out of range.
pub fn summary_span(finding: &Finding, parts: &SummaryParts) -> Option<Range<usize>> {
    if !parts.is_field || finding.field != "summary_text" {
        return None;
    }
    widen(&parts.text, finding.span.clone()?)
}

/// `range` clamped to `text` and widened to character boundaries; `None` if empty.
pub fn widen(text: &str, range: Range<usize>) -> Option<Range<usize>> {
    if range.start >= range.end {
        return None;
    }
    let mut start = range.start.min(text.len());
    let mut end = range.end.min(text.len());
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    while !text.is_char_boundary(end) {
        end += 1;
    }
    (start < end).then_some(start..end)
}

/// The summary's secrets in their stable order: the report's findings first, then what the
/// scanner finds that they do not already cover.
pub fn summary_secrets(
    report: &SealedReport,
    parts: &SummaryParts,
    scanner: &Scanner,
) -> Vec<SecretSpan> {
    let mut out: Vec<SecretSpan> = report
        .checks
        .iter()
        .flat_map(|c| &c.findings)
        .filter(|f| f.kind == "secret")
        .filter_map(|f| {
            Some(SecretSpan {
                range: summary_span(f, parts)?,
                rule_id: f.rule_id.clone(),
                category: f.category.clone(),
            })
        })
        .collect();
    for found in scanner.scan_text("summary_text", &parts.text) {
        let Some(range) = widen(&parts.text, found.span) else {
            continue;
        };
        if !out
            .iter()
            .any(|s| s.range.start < range.end && range.start < s.range.end)
        {
            out.push(SecretSpan {
                range,
                rule_id: found.rule_id,
                category: found.category.as_str().to_owned(),
            });
        }
    }
    out
}

/// Overwrites every character that touches `ranges` with `*`s of its byte length (same
/// length, still valid UTF-8).
pub fn mask(text: &str, ranges: &[Range<usize>]) -> String {
    if ranges.is_empty() {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    for (at, c) in text.char_indices() {
        let end = at + c.len_utf8();
        if ranges.iter().any(|r| r.start < end && at < r.end) {
            out.extend(std::iter::repeat_n('*', c.len_utf8()));
        } else {
            out.push(c);
        }
    }
    out
}

/// `text` with everything the scanner matches overwritten, and the masked ranges.
pub fn scan_and_mask(scanner: &Scanner, field: &str, text: &str) -> (String, Vec<Range<usize>>) {
    let ranges: Vec<Range<usize>> = scanner
        .scan_text(field, text)
        .into_iter()
        .filter_map(|f| widen(text, f.span))
        .collect();
    (mask(text, &ranges), ranges)
}

/// The stored request, its summary parts (unmasked) and the current report of `c`.
fn load(
    store: &Store,
    c: &Compaction,
) -> anyhow::Result<(GateRequest, SummaryParts, SealedReport)> {
    let id = &c.summary.id;
    let request = GateRequest::from_json(c.request_json.as_bytes())
        .map_err(|e| anyhow::anyhow!("the stored request of \"{id}\" does not parse: {e}"))?;
    let report = current_report(store, id)?;
    let parts = summary_parts(&request);
    Ok((request, parts, report))
}

/// Compaction `id` with every secret overwritten.
pub fn inspect(store: &Store, scanner: &Scanner, id: &str) -> anyhow::Result<Inspection> {
    let compaction = store
        .compaction(id)?
        .ok_or_else(|| anyhow::anyhow!("no compaction \"{id}\" in the store"))?;
    let (request, mut summary, report) = load(store, &compaction)?;
    let secrets = summary_secrets(&report, &summary, scanner);
    let ranges: Vec<_> = secrets.iter().map(|s| s.range.clone()).collect();
    summary.text = mask(&summary.text, &ranges);
    for (i, (_, predicate)) in summary.claims.iter_mut().enumerate() {
        let field = format!("preserved_constraint_claims[{i}].preserved_predicate");
        *predicate = scan_and_mask(scanner, &field, predicate).0;
    }
    let sources = request
        .messages
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let field = format!("messages[{i}].content");
            let (content, masked) = scan_and_mask(scanner, &field, &m.content);
            MaskedMessage {
                message_id: m.message_id.clone(),
                role: m.role.clone(),
                sha256: report
                    .source_message_sha256s
                    .get(i)
                    .cloned()
                    .unwrap_or_else(|| m.record_sha256()),
                content,
                masked,
            }
        })
        .collect();
    let previous_summary = previous_summary(store, scanner, &compaction)?;
    let receipts = store.receipts_for(id)?;
    Ok(Inspection {
        compaction,
        request,
        report,
        summary,
        secrets,
        sources,
        previous_summary,
        receipts,
    })
}

/// A compaction at a glance: its row, current report and summary, secrets overwritten.
#[derive(Debug, Clone)]
pub struct Glance {
    pub compaction: Compaction,
    pub report: SealedReport,
    pub summary: SummaryParts,
}

/// Compaction `id` as a queue preview needs it: like [`inspect`], without scanning the source
/// messages or reading the previous summary and receipts.
pub fn glance(store: &Store, scanner: &Scanner, id: &str) -> anyhow::Result<Glance> {
    let compaction = store
        .compaction(id)?
        .ok_or_else(|| anyhow::anyhow!("no compaction \"{id}\" in the store"))?;
    let (_, mut summary, report) = load(store, &compaction)?;
    let ranges: Vec<_> = summary_secrets(&report, &summary, scanner)
        .into_iter()
        .map(|s| s.range)
        .collect();
    summary.text = mask(&summary.text, &ranges);
    summary.claims.clear();
    Ok(Glance {
        compaction,
        report,
        summary,
    })
}

/// The previous summary of the same task, masked the same way.
fn previous_summary(
    store: &Store,
    scanner: &Scanner,
    c: &Compaction,
) -> anyhow::Result<Option<String>> {
    let s = &c.summary;
    let Some(previous) = store.previous_for_task(&s.tenant_id, &s.task_id, &s.id)? else {
        return Ok(None);
    };
    let Some(previous) = store.compaction(&previous.id)? else {
        return Ok(None);
    };
    let (_, parts, report) = load(store, &previous)?;
    let ranges: Vec<_> = summary_secrets(&report, &parts, scanner)
        .into_iter()
        .map(|s| s.range)
        .collect();
    Ok(Some(mask(&parts.text, &ranges)))
}

/// The value of the summary secret `finding_id` of compaction `id`, after the reveal was
/// audited under `key`; refused when it cannot be audited.
pub fn reveal(
    store: &Store,
    scanner: &Scanner,
    key: &NamedKey,
    id: &str,
    finding_id: &str,
) -> anyhow::Result<String> {
    let missing = || anyhow::anyhow!("no finding \"{finding_id}\" on item \"{id}\"");
    let index = finding_index(finding_id).ok_or_else(missing)?;
    let c = store
        .compaction(id)?
        .ok_or_else(|| anyhow::anyhow!("no compaction \"{id}\" in the store"))?;
    let (_, parts, report) = load(store, &c)?;
    let secrets = summary_secrets(&report, &parts, scanner);
    let value = secrets
        .get(index)
        .and_then(|s| parts.text.get(s.range.clone()))
        .ok_or_else(missing)?
        .to_owned();
    store
        .record_reveal(id, finding_id, key)
        .context("the reveal could not be audited, so it is not shown")?;
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mask_keeps_byte_length_and_char_boundaries() {
        let text = "key é AKIA1234 end";
        let start = text.find('é').unwrap();
        let masked = mask(text, &[start + 1..start + 2, 8..12]);
        assert_eq!(masked.len(), text.len());
        assert!(!masked.contains('é'));
        assert_eq!(widen(text, start + 1..start + 1), None);
        assert_eq!(widen(text, start + 1..start + 2), Some(start..start + 2));
    }

    #[test]
    fn finding_ids_round_trip() {
        assert_eq!(finding_index(&finding_id(7)), Some(7));
        assert_eq!(finding_index("f-7"), None);
    }
}
