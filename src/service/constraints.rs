//! Why each constraint passed or failed, as a reviewer reads it: one [`ConstraintEvidence`]
//! per registered invariant and commitment, per pinned constraint, and per authority claim,
//! derived at read time from a compaction's typed report, the policy and the masked texts of
//! an [`Inspection`].
//!
//! The report says *what* each check decided (a row per constraint, findings with spans and
//! rule ids); this adds *where*: the summary sentence that states a constraint's required
//! clause, the conflicting sentence with the matched span and the conflict pattern, the
//! closest sentence when the clause is missing, the user turns that share the constraint's
//! words (a guess, and labelled as one), a pinned text against its manifest digest, and the
//! user turn that best matches an authority claim. It is pure (no I/O), reads only texts the
//! inspection already masked, and never changes a status: statuses are the report's words,
//! and a word it does not know (a new mode's status) is kept as [`ConstraintStatus::Other`].
//! Rows come in triage order ([`ConstraintEvidence::triage_rank`]): contradictions and
//! fabricated authority first, then dropped, unknown and unsupported ones, then the rest, in
//! policy order within each.

mod derive;
mod text;

use std::ops::Range;

use crate::engine::report::Report;
use crate::policy::Policy;

use super::inspect::{Inspection, MaskedMessage, SummaryParts};

pub use text::{clause_form, sentences, similarity};

/// What a row is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ConstraintKind {
    Invariant,
    Commitment,
    Pinned,
    /// A sentence of the summary claiming the user's or the system's authority.
    Authority,
}

impl ConstraintKind {
    pub fn word(self) -> &'static str {
        match self {
            ConstraintKind::Invariant => "invariant",
            ConstraintKind::Commitment => "commitment",
            ConstraintKind::Pinned => "pinned",
            ConstraintKind::Authority => "authority",
        }
    }
}

/// Where a constraint stands, in the report's words.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ConstraintStatus {
    Preserved,
    Conflict,
    Unsupported,
    /// Not carried: no claim, not retained, or not in the pinned manifest.
    Missing,
    /// Rendered into the trusted instruction from the policy (prose mode): preserved by
    /// construction, never verified.
    Reinjected,
    /// Its check did not run (an earlier failure stopped it).
    NotChecked,
    /// A status word this reviewer does not know; shown as it is and counted as failing.
    Other(String),
}

impl ConstraintStatus {
    /// The status of a report row: its verification status, unless the claim says missing.
    pub fn from_report(verification: &str, claim: &str) -> ConstraintStatus {
        let upper = verification.trim().to_ascii_uppercase();
        match upper.as_str() {
            _ if claim.eq_ignore_ascii_case("missing") => ConstraintStatus::Missing,
            "PRESERVED" => ConstraintStatus::Preserved,
            "CONFLICT" => ConstraintStatus::Conflict,
            "UNSUPPORTED" => ConstraintStatus::Unsupported,
            "MISSING" => ConstraintStatus::Missing,
            w if w.replace(['-', '_', ' '], "").contains("INJECT") => ConstraintStatus::Reinjected,
            _ => ConstraintStatus::Other(verification.to_owned()),
        }
    }

    pub fn word(&self) -> &str {
        match self {
            ConstraintStatus::Preserved => "PRESERVED",
            ConstraintStatus::Conflict => "CONFLICT",
            ConstraintStatus::Unsupported => "UNSUPPORTED",
            ConstraintStatus::Missing => "MISSING",
            ConstraintStatus::Reinjected => "re-injected",
            ConstraintStatus::NotChecked => "not checked",
            ConstraintStatus::Other(word) => word,
        }
    }

    /// Whether the row needs the reviewer (everything but preserved, re-injected and not
    /// checked: a check that did not run is shown by the check that stopped it).
    pub fn failing(&self) -> bool {
        !matches!(
            self,
            ConstraintStatus::Preserved
                | ConstraintStatus::Reinjected
                | ConstraintStatus::NotChecked
        )
    }
}

/// A sentence of the (masked) summary text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sentence {
    /// Byte range in the summary text.
    pub range: Range<usize>,
    pub text: String,
}

/// A match of a conflict pattern (or a pinned forbidden pattern) on the summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConflictMatch {
    /// The sentence the match is in (`None` when the span is not on the summary text).
    pub sentence: Option<Sentence>,
    /// The matched bytes, in the summary text.
    pub matched: Option<Range<usize>>,
    /// The conflict pattern's id (a pinned constraint's: the forbidden pattern itself).
    pub pattern_id: String,
    /// The pattern's one-line description from the policy, when it has one.
    pub description: String,
}

/// The summary sentence most like a required clause the summary does not state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Closest {
    pub sentence: Sentence,
    /// Word similarity to the clause, 0 to 100.
    pub similarity: u8,
}

/// A user turn that shares words with a constraint or a claim (a guess by words).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnMatch {
    pub message_id: String,
    /// Position of the turn among the source messages.
    pub index: usize,
    /// The sentence of the turn with the most shared words (the whole turn when short),
    /// masked as the turn is.
    pub excerpt: String,
    /// The shared words, as byte ranges of `excerpt`.
    pub matched: Vec<Range<usize>>,
    /// Distinct words shared with the whole turn.
    pub shared: usize,
    /// The policy's refusal phrases the turn contains (`not yet`, `don't`).
    pub refusals: Vec<String>,
    /// The policy's approval phrases the turn contains.
    pub approvals: Vec<String>,
}

/// A pinned constraint as injected, against the digest the report's manifest recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinnedEvidence {
    pub severity: String,
    /// The text the trusted instruction carries (from the request or the policy).
    pub injected: String,
    pub injected_sha256: String,
    /// The manifest's `text_sha256` for this id (`None`: not in the manifest).
    pub manifest_sha256: Option<String>,
}

impl PinnedEvidence {
    /// Whether the injected bytes are the ones the manifest digested.
    pub fn identical(&self) -> bool {
        self.manifest_sha256.as_deref() == Some(self.injected_sha256.as_str())
    }
}

/// What the summary's claim says about a registered constraint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimEvidence {
    /// The row's claim status (`PRESERVED`, `missing`, …).
    pub status: String,
    /// The summary's predicate (masked), empty when there is no claim.
    pub predicate: String,
}

/// Everything the constraints view shows about one row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConstraintEvidence {
    pub kind: ConstraintKind,
    /// The constraint id (`claim-1`, `claim-2`… for authority claims).
    pub id: String,
    pub status: ConstraintStatus,
    /// The policy's canonical text; a pinned constraint's text; an authority claim's sentence.
    pub canonical_text: String,
    pub canonical_predicate: Option<String>,
    /// The clause the summary must contain for the predicate (from the grammar).
    pub required_clause: Option<String>,
    pub claim: Option<ClaimEvidence>,
    /// The verifier rule that decided (`cq-closed-clause-v1`, `authority-user`, …).
    pub rule_id: Option<String>,
    pub evidence_sha256: Option<String>,
    /// The report's messages about this row, then why the summary could not be verified.
    pub reasons: Vec<String>,
    /// Summary sentences stating the required clause.
    pub support: Vec<Sentence>,
    pub conflicts: Vec<ConflictMatch>,
    /// When no sentence states the clause: the most similar one not already stating another
    /// constraint's clause.
    pub closest: Option<Closest>,
    /// The summary sentence an authority claim is in.
    pub claimed: Option<Sentence>,
    /// User turns sharing the constraint's words, best first (for a failing row), or the
    /// user turn best matching an authority claim; a guess, never a check.
    pub user_turns: Vec<TurnMatch>,
    pub pinned: Option<PinnedEvidence>,
}

impl ConstraintEvidence {
    /// Where the row goes in triage order: contradictions and fabricated authority first,
    /// then what the summary dropped, unknown statuses, what it does not support, and last
    /// every row that does not fail.
    pub fn triage_rank(&self) -> u8 {
        match (&self.status, self.kind) {
            (s, _) if !s.failing() => 4,
            (ConstraintStatus::Conflict, _) | (_, ConstraintKind::Authority) => 0,
            (ConstraintStatus::Missing, _) => 1,
            (ConstraintStatus::Other(_), _) => 2,
            _ => 3,
        }
    }

    /// The summary ranges this row is about, in order: what the summary pane highlights and
    /// scrolls to.
    pub fn focus(&self) -> Vec<Range<usize>> {
        let mut out: Vec<Range<usize>> = self.support.iter().map(|s| s.range.clone()).collect();
        out.extend(
            self.conflicts
                .iter()
                .filter_map(|c| c.sentence.as_ref().map(|s| s.range.clone())),
        );
        out.extend(self.closest.iter().map(|c| c.sentence.range.clone()));
        out.extend(self.claimed.iter().map(|s| s.range.clone()));
        out.sort_by_key(|r| (r.start, r.end));
        out.dedup();
        out
    }
}

/// The report pieces and masked texts the evidence is read from.
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    pub report: &'a Report,
    pub summary: &'a SummaryParts,
    pub sources: &'a [MaskedMessage],
    pub request_pinned: &'a [crate::policy::PinnedConstraint],
}

/// The evidence for every row of `inspection` under `policy`.
pub fn evidence(inspection: &Inspection, policy: &Policy) -> Vec<ConstraintEvidence> {
    evidence_of(
        &Input {
            report: &inspection.report,
            summary: &inspection.summary,
            sources: &inspection.sources,
            request_pinned: &inspection.request.pinned_constraints,
        },
        policy,
    )
}

/// The evidence read from `input` under `policy`, failing rows first.
pub fn evidence_of(input: &Input<'_>, policy: &Policy) -> Vec<ConstraintEvidence> {
    let cx = derive::Context::new(input, policy);
    let mut rows = cx.registered(ConstraintKind::Invariant, &policy.invariants.records);
    rows.extend(cx.registered(ConstraintKind::Commitment, &policy.commitments.records));
    rows.extend(cx.unregistered(&rows));
    rows.extend(cx.pinned());
    rows.extend(cx.authority());
    // Stable: policy order within each rank.
    rows.sort_by_key(ConstraintEvidence::triage_rank);
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_read_the_report_words_and_keep_unknown_ones() {
        use ConstraintStatus as S;
        assert_eq!(S::from_report("PRESERVED", "PRESERVED"), S::Preserved);
        assert_eq!(S::from_report("UNSUPPORTED", "missing"), S::Missing);
        assert_eq!(S::from_report("RE-INJECTED", ""), S::Reinjected);
        assert_eq!(S::from_report("REINJECTED", ""), S::Reinjected);
        assert_eq!(S::from_report("DEFERRED", ""), S::Other("DEFERRED".into()));
        assert!(S::Other("DEFERRED".into()).failing());
        assert!(!S::Reinjected.failing() && !S::NotChecked.failing());
        assert_eq!(S::Reinjected.word(), "re-injected");
    }
}
