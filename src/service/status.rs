//! What a runtime may inject for a recorded compaction (`cq status ID`, and the hooks): once a
//! reviewer released it, or the gate accepted it, the trusted context with the summary; while
//! it is quarantined or after a reject, nothing but the receipt saying so.
//!
//! The stored request is handed on only after its digest was rechecked against the receipt
//! that settled it.

use sha2::{Digest, Sha256};

use crate::audit::hex;
use crate::engine::context::ContextMessage;
use crate::engine::{GateRequest, PolicyEngine, SummarizerOutput};
use crate::json::{self, Limits, Value};
use crate::store::{Status, Store, StoreError, Tampered};

/// What the runtime gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settlement {
    pub compaction_id: String,
    pub status: Status,
    /// The receipt that settled it (decision, or the verdict for accepted ones); the latest
    /// verdict receipt otherwise.
    pub receipt: Option<Value>,
    /// The context to inject, only once released or accepted.
    pub messages: Option<Vec<ContextMessage>>,
}

impl Settlement {
    /// Whether the runtime may inject `messages`.
    pub fn settled(&self) -> bool {
        self.messages.is_some()
    }
}

/// Where compaction `id` stands, and its context when released or accepted.
pub fn settlement(store: &Store, engine: &PolicyEngine, id: &str) -> anyhow::Result<Settlement> {
    let c = store
        .compaction(id)?
        .ok_or_else(|| StoreError::UnknownCompaction(id.to_owned()))?;
    let receipts = store.receipts_for(id)?;
    let settled = matches!(c.summary.status, Status::Released | Status::Accepted);
    let wanted = if c.summary.status == Status::Accepted {
        "verdict"
    } else {
        "decision"
    };
    let receipt_json = receipts
        .into_iter()
        .rev()
        .find(|r| r.kind == wanted)
        .map(|r| r.body);
    let receipt = match &receipt_json {
        Some(text) => Some(
            json::parse(text.as_bytes(), &Limits::default())
                .map_err(|e| anyhow::anyhow!("stored receipt is not valid JSON: {e}"))?,
        ),
        None => None,
    };
    let messages = if settled {
        let actual = hex(&Sha256::digest(c.request_json.as_bytes()));
        let bound = receipt
            .as_ref()
            .and_then(|r| r.get("request_sha256"))
            .and_then(Value::as_str);
        if actual != c.request_sha256 || bound != Some(actual.as_str()) {
            return Err(Tampered {
                path: store.path().to_owned(),
                what: format!(
                    "the stored request of compaction \"{}\" does not match its receipt",
                    crate::sanitize::line(id)
                ),
            }
            .into());
        }
        let request = GateRequest::from_json(c.request_json.as_bytes())
            .map_err(|e| anyhow::anyhow!("stored request of \"{id}\": {e}"))?;
        let summary = summary_text(&request).ok_or_else(|| {
            anyhow::anyhow!("stored request of \"{id}\" has no summary to inject")
        })?;
        Some(engine.released_context(&request, &summary)?)
    } else {
        None
    };
    Ok(Settlement {
        compaction_id: id.to_owned(),
        status: c.summary.status,
        receipt,
        messages,
    })
}

/// The summary text of a request's summarizer output.
fn summary_text(request: &GateRequest) -> Option<String> {
    let SummarizerOutput::Raw(raw) = &request.summarizer else {
        return None;
    };
    let value = json::parse(raw.as_bytes(), &Limits::default()).ok()?;
    value
        .get("summary_text")
        .and_then(Value::as_str)
        .map(str::to_owned)
}
