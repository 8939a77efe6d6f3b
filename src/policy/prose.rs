//! Prose mode as policy data. Real runtimes (Claude Code, Codex) write free prose and never
//! emit claims, so a policy in prose mode does not verify that the summary preserved the
//! registered constraints: they are re-rendered verbatim from the policy into the trusted
//! instruction instead. What the summary itself is checked for is decided here, rule by rule:
//! which statements claim the user's or the system's authority, which proposals a registered
//! constraint forbids, which words carry an instruction forward from tool output, and the cues
//! that tell a proposal from a prohibition or a report of the past. Every rule has an id,
//! examples and negative examples; the engine checks them all when it compiles the policy.
//!
//! A policy without `[prose]` is left exactly as it was (the table is left out of its JSON
//! form), so strict policies keep their digests.

use serde::{Deserialize, Serialize};

/// How the gate reads the summarizer's output.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// The closed JSON schema with claims in the controlled language (the seed's G001/G002).
    #[default]
    Strict,
    /// Free prose: constraints re-injected from the policy, the summary checked for secrets,
    /// fabricated authority, conflicts and carried-forward injection.
    Prose,
}

impl Mode {
    pub fn is_strict(&self) -> bool {
        *self == Mode::Strict
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Strict => "strict",
            Mode::Prose => "prose",
        }
    }

    pub fn parse(text: &str) -> Option<Mode> {
        match text {
            "strict" => Some(Mode::Strict),
            "prose" => Some(Mode::Prose),
            _ => None,
        }
    }
}

/// Everything prose mode decides by.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Prose {
    /// The info string of a fenced block (` ```cq-compaction `) that holds a compaction in
    /// the strict schema inside a prose summary; when present it is checked as strict too.
    pub fence: String,
    pub sections: Sections,
    pub cues: Cues,
    pub support: Support,
    /// Statements that the user or the system asked, approved, confirmed or allowed something.
    #[serde(default)]
    pub claims: Vec<ClaimRule>,
    /// Tool results the runtime itself writes to record a decision of the user.
    #[serde(default)]
    pub runtime_approvals: Vec<RuntimeApproval>,
    /// Proposals a registered constraint forbids.
    #[serde(default)]
    pub conflicts: Vec<ConflictRule>,
    /// Instructions carried forward from tool output or fetched content.
    #[serde(default)]
    pub injection: Vec<InjectionRule>,
}

/// Headings (regexes, case-insensitive, searched in a heading line: a line that ends with
/// `:` or is wrapped in `**` or starts with `#` or a number and `.`) that give the lines
/// under them a meaning, up to the next heading.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sections {
    /// Sections that list the user's own messages: every quoted string there is a quote.
    pub user_messages: Vec<String>,
    /// Sections about what comes next: every sentence there proposes.
    pub forward: Vec<String>,
    /// Sections about what happened: a sentence there proposes only with a proposal cue.
    pub past: Vec<String>,
}

/// Regexes (case-insensitive) that decide what a sentence does with an action it names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cues {
    /// The sentence proposes or plans (`next step`, `will`, `need to`).
    pub proposal: Vec<String>,
    /// Before the action in its clause: the action is refused or prohibited (`never`,
    /// `do not`, `instead of`).
    pub negation: Vec<String>,
    /// In the few words before the action: the clause reports what already happened
    /// (`was`, `already`, `has been`).
    pub report: Vec<String>,
    /// The action's own first word is in the past tense (`pushed`, `ran`): a report.
    pub past_tense: Vec<String>,
    /// The sentence makes the action wait for the user (`waiting for user confirmation`,
    /// `ask the user before`).
    pub condition: Vec<String>,
    /// Ends right before a quote of the user's words (`the user said:`, `user asked to`).
    pub quote_attribution: Vec<String>,
}

/// How a claim is matched against the user's turns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Support {
    /// Words that carry no meaning of their own (ignored when comparing words).
    pub stopwords: Vec<String>,
    /// Words naming actions that matter (`push`, `deploy`, `delete`, `secret`): every one a
    /// claim names must be in the supporting turn, by stem.
    pub decisive: Vec<String>,
    /// The share of a claim's other content words (percent) the supporting turn must hold.
    pub min_overlap_percent: i64,
}

/// What a claim says the user (or the system) did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClaimKind {
    /// Asked, requested, instructed, wanted: a user turn must say it.
    Request,
    /// Approved, confirmed, allowed, permitted: a user turn must approve it (an approval
    /// phrase, no refusal) or the runtime must have recorded the user's approval.
    Approval,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClaimRule {
    pub id: String,
    pub kind: ClaimKind,
    /// A regex (case-insensitive) with a named group `role` (who is claimed to have acted;
    /// empty or absent means the user) and optionally `action` (what they are claimed to
    /// have asked for or allowed; by default the rest of the sentence).
    pub pattern: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub examples: Vec<String>,
    #[serde(default)]
    pub negative_examples: Vec<String>,
}

/// A decision the runtime records in its own tool result (Claude Code's plan approval).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuntimeApproval {
    pub id: String,
    /// The exact text that starts a line of a tool turn holding the record.
    pub marker: String,
    /// The only things it approves: an approval claim it supports names one of these words
    /// and no decisive word.
    pub grants: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConflictRule {
    pub id: String,
    /// The registered invariant or commitment that forbids what the pattern names.
    pub constraint_id: String,
    /// A regex (case-insensitive) naming the forbidden action.
    pub pattern: String,
    #[serde(default)]
    pub description: String,
    /// The constraint forbids the action only without the user's confirmation: a sentence
    /// that waits for it, or a user turn that confirms it, is no conflict.
    #[serde(default)]
    pub confirmable: bool,
    /// Summaries that must hold a conflict of this rule, and that must not.
    #[serde(default)]
    pub examples: Vec<String>,
    #[serde(default)]
    pub negative_examples: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InjectionRule {
    pub id: String,
    /// A regex (case-insensitive) for words that carry an instruction from tool output or
    /// fetched content, or that address the agent the way injected text does.
    pub pattern: String,
    #[serde(default)]
    pub description: String,
    /// Where the rule applies: `summary` (a match in the summary is a finding), `tool` (a
    /// match in a tool turn marks that sentence as an injected instruction, and a summary
    /// sentence that repeats its words carries it forward), or both.
    pub applies_to: Vec<InjectionScope>,
    #[serde(default)]
    pub examples: Vec<String>,
    #[serde(default)]
    pub negative_examples: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InjectionScope {
    Summary,
    Tool,
}

impl Prose {
    /// The rules a prose table must meet before anything is compiled.
    pub fn validate(&self, registered: &[&str]) -> Result<(), String> {
        if self.fence.trim().is_empty() || self.fence.contains(char::is_whitespace) {
            return Err("prose.fence must be one word such as \"cq-compaction\"".into());
        }
        if !(1..=100).contains(&self.support.min_overlap_percent) {
            return Err("prose.support.min_overlap_percent must be in 1..=100".into());
        }
        let mut ids = std::collections::BTreeSet::new();
        let all = self
            .claims
            .iter()
            .map(|r| r.id.as_str())
            .chain(self.runtime_approvals.iter().map(|r| r.id.as_str()))
            .chain(self.conflicts.iter().map(|r| r.id.as_str()))
            .chain(self.injection.iter().map(|r| r.id.as_str()));
        for id in all {
            if id.trim().is_empty() {
                return Err("a prose rule has an empty id".into());
            }
            if !ids.insert(id) {
                return Err(format!("prose rule id \"{id}\" appears twice"));
            }
        }
        for rule in &self.conflicts {
            if !registered.contains(&rule.constraint_id.as_str()) {
                return Err(format!(
                    "prose conflict \"{}\" names constraint \"{}\", which the policy does not register",
                    rule.id, rule.constraint_id
                ));
            }
            if rule.examples.is_empty() {
                return Err(format!(
                    "prose conflict \"{}\" needs at least one example",
                    rule.id
                ));
            }
        }
        for rule in &self.claims {
            if !rule.pattern.contains("?P<role>") && !rule.pattern.contains("?<role>") {
                return Err(format!(
                    "prose claim \"{}\" has no named group \"role\"",
                    rule.id
                ));
            }
        }
        for approval in &self.runtime_approvals {
            if approval.marker.trim().is_empty() || approval.grants.is_empty() {
                return Err(format!(
                    "runtime approval \"{}\" needs a marker and at least one granted word",
                    approval.id
                ));
            }
        }
        Ok(())
    }
}
