//! The typed policy, read from TOML with every table closed (`deny_unknown_fields`), and its
//! JSON form, whose canonical SHA-256 is `policy_sha256`.

use serde::{Deserialize, Serialize};

use super::grammar::Grammar;
use super::prose::{Mode, Prose};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    pub schema_version: String,
    pub name: String,
    pub policy_version: String,
    #[serde(default)]
    pub description: String,
    pub compaction: Compaction,
    pub invariants: RecordSetSpec,
    pub commitments: RecordSetSpec,
    pub grammar: Grammar,
    pub scan: ScanPolicy,
    #[serde(default)]
    pub pinned: Vec<PinnedConstraint>,
    pub authority: Authority,
    pub review: Review,
    /// What prose mode checks (absent: the policy has no prose mode; left out of the digest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prose: Option<Prose>,
    /// How the runtime hooks act (absent: their defaults; left out of the digest then, so
    /// policies without the table keep theirs).
    #[serde(default, skip_serializing_if = "Agents::is_default")]
    pub agents: Agents,
    /// The built-in this policy was read from, as shipped (never serialised, never compared).
    #[serde(skip)]
    pub(crate) shipped: super::load::Shipped,
}

/// What `cq hook` does for real agent runtimes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Agents {
    /// Tools `PreToolUse` denies while a session's latest compaction is not released (exact
    /// names, or a prefix ending in `*`); empty means the runtime's shell, edit and write tools.
    #[serde(default)]
    pub guarded_tools: Vec<String>,
    /// Whether `PreCompact` stops automatic compaction.
    #[serde(default)]
    pub block_compaction: bool,
}

impl Agents {
    pub fn is_default(&self) -> bool {
        *self == Agents::default()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Compaction {
    pub summary_min_length: i64,
    pub fallback_message_count: i64,
    /// Largest summarizer output accepted, in bytes.
    pub max_raw_output_bytes: i64,
    /// Deepest JSON nesting accepted in summarizer output.
    pub max_json_depth: i64,
    /// The trusted instruction; see `render` for its placeholders.
    pub trusted_instruction: String,
    /// `strict` (the default, left out of the policy's JSON form so strict policies keep
    /// their digests) or `prose`.
    #[serde(default, skip_serializing_if = "Mode::is_strict")]
    pub mode: Mode,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordSetSpec {
    pub revision: i64,
    pub records: Vec<RecordSpec>,
}

impl RecordSetSpec {
    /// The registered ids, in registry order: what a request built from the policy expects.
    pub fn ids(&self) -> Vec<String> {
        self.records.iter().map(|r| r.id.clone()).collect()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordSpec {
    pub id: String,
    pub canonical_text: String,
    pub canonical_predicate: String,
    pub record_revision: i64,
}

/// The seed's `VerifiedScanPolicy`, less the policy digest (which is this policy's).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScanPolicy {
    pub policy_version: String,
    pub scanner_version: String,
    /// The rule pack's digest; `builtin` means the scanner's own embedded rules.
    pub scanner_sha256: String,
    pub language_profiles: Vec<String>,
    pub entity_types: Vec<String>,
    pub field_roots: Vec<String>,
    pub max_total_bytes: i64,
    pub timeout_ms: i64,
}

/// A pinned negative constraint (seed 004): carried byte for byte into the trusted
/// instruction; a summary matching a forbidden pattern re-opens a falsified path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PinnedConstraint {
    pub id: String,
    pub severity: String,
    pub text: String,
    #[serde(default)]
    pub forbidden_patterns: Vec<String>,
}

impl PinnedConstraint {
    /// The constraint's record as canonical-JSON fields: what the request carries and what
    /// the pinned manifest digests.
    pub fn fields(&self) -> [(&'static str, crate::json::Field<'_>); 4] {
        use crate::json::Field;
        [
            ("forbidden_patterns", Field::Strs(&self.forbidden_patterns)),
            ("id", Field::Str(&self.id)),
            ("severity", Field::Str(&self.severity)),
            ("text", Field::Str(&self.text)),
        ]
    }
}

/// How fabricated authority is recognised: claims that a role approved or instructed
/// something, role markers, and what counts as approval in a user turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Authority {
    /// Regexes (case-insensitive) with a named group `role` and, optionally, `action`: the
    /// claimed action, by default the whole sentence the claim stands in.
    pub claim_patterns: Vec<String>,
    /// Regexes (case-insensitive) for chat-template role markers, always a finding.
    pub role_markers: Vec<String>,
    /// Phrases in a user turn that approve (case-insensitive, word-bounded).
    pub approval_markers: Vec<String>,
    /// Phrases in a user turn that refuse; a turn with one does not support approval.
    pub refusal_markers: Vec<String>,
    /// Words ignored when matching a claim's action against user turns.
    pub stopwords: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReasonCode {
    pub code: String,
    pub description: String,
    /// `release`, `reject` or `both`.
    pub applies_to: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Review {
    pub reason_codes: Vec<ReasonCode>,
    /// Verdict classes whose release needs two distinct approvers (`FAIL/FINDING`,
    /// `INSUFFICIENT_DATA/UNKNOWN`, `ERROR/UNKNOWN`, or `secret` for any secret finding).
    pub two_person_classes: Vec<String>,
}
