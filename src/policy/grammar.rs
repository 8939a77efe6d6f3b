//! The verifier grammar as policy data: the controlled language a summary must be written
//! in (allowed clauses and clause templates with typed slots), the clause each predicate
//! requires, the conflict patterns per predicate, and the probabilistic markers. The
//! `seed-compatible` profile reproduces the seed test's grammar exactly.

use serde::{Deserialize, Serialize};

/// How a summary is cut into clauses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Segmentation {
    /// The seed's: split on every `.`; the summary must end with `.` and nothing after it.
    Period,
    /// A clause ends at a `.` followed by whitespace or the end; trailing whitespace is fine,
    /// so paths such as `src/main.rs` stay whole.
    Sentence,
}

/// A clause the summary must contain for a predicate to be PRESERVED.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequiredClause {
    pub predicate: String,
    pub clause: String,
}

/// A pattern (Python `re` syntax on the case-folded, whitespace-collapsed summary) whose
/// match makes a predicate CONFLICT.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConflictPattern {
    pub id: String,
    pub predicate: String,
    pub pattern: String,
    #[serde(default)]
    pub description: String,
    /// Examples that must match, and that must not: checked when the policy loads.
    #[serde(default)]
    pub examples: Vec<String>,
    #[serde(default)]
    pub negative_examples: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Grammar {
    pub verifier_version: String,
    /// The verifier artifact's digest; computed from this grammar when absent.
    #[serde(default)]
    pub artifact_sha256: Option<String>,
    pub rule_id: String,
    pub probabilistic_rule_id: String,
    pub segmentation: Segmentation,
    /// Case-fold the whole summary before cutting it into clauses (the seed does).
    pub case_fold: bool,
    /// A regex the whole summary must match (the seed: `[A-Za-z0-9 ._-]+`).
    #[serde(default)]
    pub charset: Option<String>,
    #[serde(default)]
    pub probabilistic_markers: Vec<String>,
    /// Allowed clauses; `{path}`, `{identifier}`, `{number}`, `{commit}` and `{a|b|c}` are
    /// typed slots that fill exactly one word each.
    pub clauses: Vec<String>,
    pub required: Vec<RequiredClause>,
    #[serde(default)]
    pub conflicts: Vec<ConflictPattern>,
}
