//! What a runtime may inject for a recorded compaction (`cq status ID`, and the hooks): once a
//! reviewer released it, or the gate accepted it, the trusted context with the summary; while
//! it is quarantined or after a reject, nothing but the receipt saying so.
//!
//! Where it stands comes from receipts the store verified (signature, chain, inclusion under
//! the signed head); the stored request is handed on only after its digest was rechecked
//! against the verdict receipt. A cached column that disagrees is tamper.
//!
//! The context is rendered under the policy the compaction was checked under (the digest its
//! verified receipts name): the policy given when its digest matches, else the built-in with
//! that digest; any other policy is refused with the digest needed, never substituted. The
//! summary handed back is what that policy's mode checked: the closed schema's `summary_text`
//! in strict mode, the summarizer's whole text in prose mode.

use sha2::{Digest, Sha256};

use crate::audit::hex;
use crate::engine::context::ContextMessage;
use crate::engine::{GateRequest, PolicyEngine, SummarizerOutput};
use crate::json::{self, Limits, Value};
use crate::policy::Mode;
use crate::service::recheck::policies::builtin_with_digest;
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

/// Where compaction `id` stands, and its context when released or accepted: derived from the
/// receipts the store verified ([`Store::verified_compaction`]), never from a cached column.
/// `given` builds the policy the caller named; it is called only when there is a context to
/// render (a runtime polling a quarantined compaction pays for no policy).
pub fn settlement(
    store: &Store,
    given: impl FnOnce() -> anyhow::Result<PolicyEngine>,
    id: &str,
) -> anyhow::Result<Settlement> {
    let state = store.verified_compaction(id)?;
    let status = state.status();
    let settling = match &state.decision {
        Some(d) => &d.receipt,
        None => &state.verdict_receipt,
    };
    let receipt = json::parse(settling.as_bytes(), &Limits::default())
        .map_err(|e| anyhow::anyhow!("a verified receipt is not valid JSON: {e}"))?;
    let messages = if matches!(status, Status::Released | Status::Accepted) {
        let c = store
            .compaction(id)?
            .ok_or_else(|| StoreError::UnknownCompaction(crate::sanitize::line(id)))?;
        let actual = hex(&Sha256::digest(c.request_json.as_bytes()));
        if actual != state.request_sha256 {
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
        let engine = given()?;
        let own;
        let checked_under = if engine.policy_sha256 == state.policy_sha256 {
            &engine
        } else {
            own = checked_policy(&engine, id, &state.policy_sha256)?;
            &own
        };
        let summary =
            summary_text(&request, checked_under.policy.compaction.mode).ok_or_else(|| {
                anyhow::anyhow!("stored request of \"{id}\" has no summary to inject")
            })?;
        Some(checked_under.released_context(&request, &summary)?)
    } else {
        None
    };
    Ok(Settlement {
        compaction_id: id.to_owned(),
        status,
        receipt: Some(receipt),
        messages,
    })
}

/// The built-in policy compaction `id` was checked under, when it is one; otherwise an error
/// that names the digest needed.
fn checked_policy(given: &PolicyEngine, id: &str, sha256: &str) -> anyhow::Result<PolicyEngine> {
    let Some(policy) = builtin_with_digest(sha256) else {
        anyhow::bail!(
            "compaction \"{}\" was checked under policy sha256 {}, not the one given (\"{}\", sha256 {}): give that policy with `--policy FILE`",
            crate::sanitize::line(id),
            crate::sanitize::line(sha256),
            crate::sanitize::line(&given.policy.name),
            given.policy_sha256
        );
    };
    Ok(PolicyEngine::new(policy, "builtin")?)
}

/// The summary of a request's summarizer output, as a policy in `mode` checked it.
fn summary_text(request: &GateRequest, mode: Mode) -> Option<String> {
    let SummarizerOutput::Raw(raw) = &request.summarizer else {
        return None;
    };
    if mode == Mode::Prose {
        return Some(raw.clone());
    }
    let value = json::parse(raw.as_bytes(), &Limits::default()).ok()?;
    value
        .get("summary_text")
        .and_then(Value::as_str)
        .map(str::to_owned)
}
