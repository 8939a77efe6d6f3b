//! The verifier grammar as policy data: the controlled language a summary must be written
//! in (allowed clauses and clause templates with typed slots, and the slot types themselves),
//! the clause each predicate requires, the conflict patterns per predicate, the clauses that
//! contradict each other, and the probabilistic markers. Every rule carries examples that
//! are checked when the policy loads. The `seed-compatible` profile reproduces the seed
//! test's grammar exactly: it declares none of the newer tables, and a table left out is
//! left out of the policy's JSON form too, so its digest stays the seed's.

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

/// The built-in shape a slot type narrows; every value of the type has this shape first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SlotShape {
    /// A relative path: ASCII letters, digits and `_ - . / @ + =`, no `.` or `..` part.
    Path,
    /// A name: starts with a letter or `_`; letters, digits and `_ : . -`.
    Identifier,
    /// Digits, optionally with a decimal part.
    Number,
    /// 7 to 40 lower-case hex digits.
    Commit,
}

/// A slot type a template names as `{name}`: a built-in shape narrowed by a pattern the
/// whole value must match and a bound on the words it may join (split on `_ - / . : @ + =`
/// and camel-case humps), so that a sentence cannot hide in one slot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlotType {
    pub name: String,
    pub shape: SlotShape,
    /// One line for the summarizer's prompt: what a value looks like.
    pub summary: String,
    /// A regex (`regex` crate syntax) the whole value must match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_words: Option<i64>,
    /// Values the type must accept, and must reject: checked when the policy loads.
    #[serde(default)]
    pub examples: Vec<String>,
    #[serde(default)]
    pub negative_examples: Vec<String>,
}

/// Clauses that cannot all be true at once: two parsed clauses of one group about the same
/// subject in different states contradict each other, and `predicate` CONFLICTs. The
/// subject is the values of the slots numbered in `subject` (1-based, in each clause's slot
/// order; by default every slot that is not a choice); the state is which clause of
/// `clauses` it is and the values of the slots numbered in `state` (by default every
/// choice outside the subject). Other slots are neither.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExclusiveClauses {
    pub id: String,
    pub predicate: String,
    #[serde(default)]
    pub description: String,
    /// Clauses or templates of the grammar, written as in `clauses`.
    pub clauses: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<Vec<i64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<Vec<i64>>,
    /// Summaries that must hold a contradiction of this group, and that must not.
    #[serde(default)]
    pub examples: Vec<String>,
    #[serde(default)]
    pub negative_examples: Vec<String>,
}

fn is_false(value: &bool) -> bool {
    !value
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
    /// Allowed clauses; `{path}`, `{identifier}`, `{number}`, `{commit}`, the names of
    /// `slots` and `{a|b|c}` are typed slots that fill exactly one word each.
    pub clauses: Vec<String>,
    pub required: Vec<RequiredClause>,
    #[serde(default)]
    pub conflicts: Vec<ConflictPattern>,
    /// Also run the conflict patterns on the text with the separators that join words
    /// inside one token turned into spaces (`git_push` reads `git push`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub match_joined_words: bool,
    /// Slot types beyond, or narrowing, the built-in `path`, `identifier`, `number` and
    /// `commit`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub slots: Vec<SlotType>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclusive: Vec<ExclusiveClauses>,
}
