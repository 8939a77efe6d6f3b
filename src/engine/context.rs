//! The context handed back to the runtime, assembled in one place: the trusted instruction
//! (rendered from the policy and the pinned manifest only, and checked to carry every pinned
//! text byte for byte) in the system channel, then either the summary as untrusted user data
//! or, on the fallback path, the last source messages as they were.
//!
//! The gate's accepted and fallback answers and the context of a compaction a reviewer
//! released all come from [`trusted_context`], so the three can never drift apart.

use crate::json::{canonical_array, object, write_object, Field, Value};

use super::pinned::PinnedManifest;
use super::{Refusal, SourceMessage};

/// The marker that opens the summary in the user channel.
pub const UNTRUSTED_MARKER: &str = "[UNTRUSTED COMPACTED CONTEXT DATA]\n";

/// What the trusted instruction is rendered from.
pub struct RenderInput<'a> {
    pub tenant_id: &'a str,
    pub task_id: &'a str,
    pub policy_sha256: &'a str,
    pub invariant_ids: &'a [String],
    pub commitment_ids: &'a [String],
    pub pinned: &'a PinnedManifest,
}

/// One message of the context handed back to the runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextMessage {
    pub role: String,
    pub content: String,
}

impl ContextMessage {
    /// The canonical text of a context (the messages as an array of [`ContextMessage::to_value`]),
    /// written directly.
    pub fn canonical(messages: &[ContextMessage]) -> String {
        canonical_array(messages, |out, m| {
            write_object(
                out,
                &mut [
                    ("content", Field::Str(&m.content)),
                    ("role", Field::Str(&m.role)),
                ],
            )
        })
    }

    pub fn to_value(&self) -> Value {
        object([
            ("role", Value::from(&self.role)),
            ("content", Value::from(&self.content)),
        ])
    }
}

/// What follows the trusted instruction.
#[derive(Debug, Clone, Copy)]
pub enum Body<'a> {
    /// An accepted or released summary, injected as untrusted user data.
    Summary(&'a str),
    /// The last `keep` source messages, verbatim (the fallback context).
    Fallback {
        messages: &'a [SourceMessage],
        keep: usize,
    },
}

/// The trusted instruction (as the policy rendered it from `pinned` and the request's
/// identity) followed by `body`; refused when rendering failed or the instruction does not
/// carry every pinned constraint byte for byte.
pub fn trusted_context(
    rendered: Result<String, String>,
    pinned: &PinnedManifest,
    body: Body<'_>,
) -> Result<Vec<ContextMessage>, Refusal> {
    let instruction = rendered.map_err(Refusal::RenderFailed)?;
    if instruction.is_empty() {
        return Err(Refusal::RenderFailed(
            "trusted instruction rendering failed".into(),
        ));
    }
    let missing = pinned.missing_from(&instruction);
    if !missing.is_empty() {
        return Err(Refusal::PinnedMissing(missing));
    }
    let system = ContextMessage {
        role: "system".into(),
        content: instruction,
    };
    Ok(match body {
        Body::Summary(text) => vec![
            system,
            ContextMessage {
                role: "user".into(),
                content: format!("{UNTRUSTED_MARKER}{text}"),
            },
        ],
        Body::Fallback { messages, keep } => {
            let tail = &messages[messages.len().saturating_sub(keep.max(1))..];
            std::iter::once(system)
                .chain(tail.iter().map(|m| ContextMessage {
                    role: m.role.clone(),
                    content: m.content.clone(),
                }))
                .collect()
        }
    })
}
