//! What the runtime hands the gate, and the seed's refusals: an empty identity or source
//! population, a malformed source message, duplicated message ids. A refused request never
//! reaches a check; the caller gets a clear error (exit code 2).

use crate::json::{
    self, canonical_array, canonical_object, object_value, sha256_hex, write_object, Field, Limits,
    Value,
};
use crate::policy::PinnedConstraint;

/// A source message that was compacted: `{message_id, role: user|assistant|tool, content}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceMessage {
    pub message_id: String,
    pub role: String,
    pub content: String,
}

impl SourceMessage {
    /// The seed's `message_record`, whose canonical SHA-256 is the message's source digest.
    pub fn record(&self) -> Value {
        object_value(&self.fields())
    }

    fn fields(&self) -> [(&'static str, Field<'_>); 3] {
        [
            ("content", Field::Str(&self.content)),
            ("message_id", Field::Str(&self.message_id)),
            ("role", Field::Str(&self.role)),
        ]
    }

    /// Appends the record's canonical text.
    pub fn write_record(&self, out: &mut String) {
        write_object(out, &mut self.fields());
    }

    /// The message's source digest: the canonical SHA-256 of its record.
    pub fn record_sha256(&self) -> String {
        sha256_hex(canonical_object(&mut self.fields()).as_bytes())
    }
}

/// What the summarizer gave back: its raw output, or how it failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SummarizerOutput {
    Raw(String),
    Failed(String),
}

/// One compaction to decide.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateRequest {
    pub tenant_id: String,
    pub task_id: String,
    pub messages: Vec<SourceMessage>,
    pub expected_invariant_ids: Vec<String>,
    pub expected_commitment_ids: Vec<String>,
    pub pinned_constraints: Vec<PinnedConstraint>,
    pub model_revision: String,
    pub summarizer: SummarizerOutput,
}

/// Why a request was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("invalid request: {0}")]
    InvalidRequest(String),
    #[error("invalid policy: {0}")]
    InvalidPolicy(String),
    #[error("the trusted instruction could not be rendered: {0}")]
    RenderFailed(String),
    #[error("the returned context does not carry pinned constraint(s) {0:?} byte for byte")]
    PinnedMissing(Vec<String>),
    #[error("audit failed: {0}")]
    AuditFailed(String),
    #[error("the report could not be written as canonical JSON: {0}")]
    ReportFailed(String),
}

impl GateRequest {
    /// The seed's checks on identity and source population; the source digests in order.
    pub fn source_digests(&self) -> Result<Vec<String>, Refusal> {
        if self.tenant_id.is_empty() || self.task_id.is_empty() || self.messages.is_empty() {
            return Err(Refusal::InvalidRequest(
                "compaction identity or source population is empty".into(),
            ));
        }
        let mut digests = Vec::with_capacity(self.messages.len());
        let mut seen = std::collections::HashSet::new();
        for (index, message) in self.messages.iter().enumerate() {
            if message.message_id.is_empty()
                || !["user", "assistant", "tool"].contains(&message.role.as_str())
                || message.content.is_empty()
            {
                return Err(Refusal::InvalidRequest(format!(
                    "untrusted message schema differs: messages[{index}] needs a message_id, a role of user, assistant or tool, and non-empty content"
                )));
            }
            if !seen.insert(message.message_id.as_str()) {
                return Err(Refusal::InvalidRequest(format!(
                    "source message IDs are duplicated: \"{}\" at messages[{index}]",
                    crate::sanitize::excerpt(&message.message_id, 80)
                )));
            }
            digests.push(message.record_sha256());
        }
        Ok(digests)
    }
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
