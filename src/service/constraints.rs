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

mod text;

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;

use crate::engine::report::{CheckResult, Finding, Report, Status as CheckStatus};
use crate::json::{self, Value};
use crate::policy::Policy;

use super::inspect::{summary_span, Inspection, MaskedMessage, SummaryParts};

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
            ConstraintStatus::Preserved | ConstraintStatus::Reinjected | ConstraintStatus::NotChecked
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
    let cx = Context::new(input, policy);
    let mut rows = cx.registered(ConstraintKind::Invariant, &policy.invariants.records);
    rows.extend(cx.registered(ConstraintKind::Commitment, &policy.commitments.records));
    rows.extend(cx.unregistered(&rows));
    rows.extend(cx.pinned());
    rows.extend(cx.authority());
    // Stable: policy order within each rank.
    rows.sort_by_key(ConstraintEvidence::triage_rank);
    rows
}

/// Below this word similarity a sentence is not "close" to a clause at all.
const MIN_SIMILARITY: u8 = 15;

struct Context<'a> {
    input: &'a Input<'a>,
    policy: &'a Policy,
    sentences: Vec<Range<usize>>,
    consistency: Option<&'a CheckResult>,
    pinned: Option<&'a CheckResult>,
    authority: Option<&'a CheckResult>,
    /// Required clause forms, by predicate.
    clause_forms: BTreeMap<&'a str, String>,
}

fn check<'a>(report: &'a Report, name: &str) -> Option<&'a CheckResult> {
    report.checks.iter().find(|c| c.check == name)
}

fn non_empty(s: &str) -> Option<String> {
    (!s.is_empty()).then(|| s.to_owned())
}

impl<'a> Context<'a> {
    fn new(input: &'a Input<'a>, policy: &'a Policy) -> Context<'a> {
        Context {
            input,
            policy,
            sentences: sentences(&input.summary.text),
            consistency: check(input.report, "consistency"),
            pinned: check(input.report, "pinned"),
            authority: check(input.report, "authority"),
            clause_forms: policy
                .grammar
                .required
                .iter()
                .map(|r| (r.predicate.as_str(), clause_form(&r.clause)))
                .collect(),
        }
    }

    fn text(&self) -> &str {
        &self.input.summary.text
    }

    fn sentence(&self, range: Range<usize>) -> Option<Sentence> {
        let text = self.text().get(range.clone())?.to_owned();
        Some(Sentence { range, text })
    }

    /// The sentence(s) `span` lies in, as one range.
    fn sentence_around(&self, span: &Range<usize>) -> Option<Sentence> {
        let touching: Vec<&Range<usize>> = self
            .sentences
            .iter()
            .filter(|s| s.start < span.end.max(span.start + 1) && span.start < s.end)
            .collect();
        let start = touching.first().map_or(span.start, |s| s.start.min(span.start));
        let end = touching.last().map_or(span.end, |s| s.end.max(span.end));
        self.sentence(start..end)
    }

    fn conflict_of(&self, f: &Finding, description: String) -> ConflictMatch {
        let matched = summary_span(f, self.input.summary);
        ConflictMatch {
            sentence: matched.as_ref().and_then(|m| self.sentence_around(m)),
            matched,
            pattern_id: f.rule_id.clone(),
            description,
        }
    }

    /// Findings of `check` about `id`.
    fn findings_about<'c>(
        check: Option<&'c CheckResult>,
        id: &'c str,
    ) -> impl Iterator<Item = &'c Finding> + 'c {
        check
            .into_iter()
            .flat_map(|c| &c.findings)
            .filter(move |f| f.constraint_id == id)
    }

    /// Whether a check ran to a verdict with per-constraint rows.
    fn ran(check: Option<&CheckResult>) -> bool {
        check.is_some_and(|c| c.status != CheckStatus::NotRun && !c.constraints.is_empty())
    }

    fn registered(
        &self,
        kind: ConstraintKind,
        records: &[crate::policy::RecordSpec],
    ) -> Vec<ConstraintEvidence> {
        records
            .iter()
            .map(|r| {
                self.consistency_row(
                    kind,
                    &r.id,
                    &r.canonical_text,
                    Some(r.canonical_predicate.as_str()),
                )
            })
            .collect()
    }

    /// Report rows naming ids the current policy does not register.
    fn unregistered(&self, known: &[ConstraintEvidence]) -> Vec<ConstraintEvidence> {
        let rows = self.consistency.map_or(&[][..], |c| &c.constraints[..]);
        rows.iter()
            .filter(|row| !known.iter().any(|k| k.id == row.constraint_id))
            .map(|row| {
                let kind = if row.constraint_type.eq_ignore_ascii_case("commitment") {
                    ConstraintKind::Commitment
                } else {
                    ConstraintKind::Invariant
                };
                self.consistency_row(kind, &row.constraint_id, "", None)
            })
            .collect()
    }

    fn consistency_row(
        &self,
        kind: ConstraintKind,
        id: &str,
        canonical_text: &str,
        predicate: Option<&str>,
    ) -> ConstraintEvidence {
        let row = self
            .consistency
            .and_then(|c| c.constraints.iter().find(|r| r.constraint_id == id));
        let about: Vec<&Finding> = Self::findings_about(self.consistency, id).collect();
        let missing = |f: &&Finding| {
            f.message.contains("not retained") || f.message.starts_with("no claim")
        };
        let status = match row {
            Some(r) => ConstraintStatus::from_report(&r.verification_status, &r.claim_status),
            None if about.iter().any(missing) => ConstraintStatus::Missing,
            // A claim the check refused before verifying (its digest differs, …).
            None if !about.is_empty() => ConstraintStatus::Unsupported,
            None if !Self::ran(self.consistency) => ConstraintStatus::NotChecked,
            None => ConstraintStatus::Missing,
        };
        let claim = self
            .input
            .summary
            .claims
            .iter()
            .find(|(claim_id, _)| claim_id == id)
            .map(|(_, predicate)| predicate.clone());
        let claim = match (row, claim) {
            (Some(r), predicate) => Some(ClaimEvidence {
                status: r.claim_status.clone(),
                predicate: predicate.unwrap_or_default(),
            }),
            (None, Some(predicate)) => Some(ClaimEvidence {
                status: String::new(),
                predicate,
            }),
            (None, None) => None,
        };
        let mut reasons: Vec<String> = about
            .iter()
            .filter(|f| f.kind != "conflict")
            .map(|f| f.message.clone())
            .collect();
        if status == ConstraintStatus::Unsupported {
            reasons.extend(self.unparsed());
        }
        let required = predicate.and_then(|p| {
            self.policy
                .grammar
                .required
                .iter()
                .find(|r| r.predicate == p)
                .map(|r| r.clause.clone())
        });
        let support = required
            .as_deref()
            .map(|clause| self.stating(&clause_form(clause)))
            .unwrap_or_default();
        let conflicts = about
            .iter()
            .filter(|f| f.kind == "conflict")
            .map(|f| self.conflict_of(f, self.description(&f.rule_id)))
            .collect();
        let unstated = !matches!(
            status,
            ConstraintStatus::Preserved | ConstraintStatus::Conflict | ConstraintStatus::Reinjected
        );
        let closest = match &required {
            Some(clause) if support.is_empty() && unstated && status.failing() => {
                self.closest(clause)
            }
            _ => None,
        };
        let user_turns = if status.failing() {
            let words = format!("{canonical_text} {}", required.as_deref().unwrap_or(""));
            self.user_turns(&words, 2)
        } else {
            Vec::new()
        };
        ConstraintEvidence {
            kind,
            id: id.to_owned(),
            status,
            canonical_text: canonical_text.to_owned(),
            canonical_predicate: predicate.map(str::to_owned),
            required_clause: required,
            claim,
            rule_id: row.and_then(|r| non_empty(&r.bounded_rule_id)),
            evidence_sha256: row.and_then(|r| non_empty(&r.evidence_sha256)),
            reasons,
            support,
            conflicts,
            closest,
            claimed: None,
            user_turns,
            pinned: None,
        }
    }

    /// Why the summary could not be verified at all (a clause outside the grammar).
    fn unparsed(&self) -> Vec<String> {
        self.consistency
            .into_iter()
            .flat_map(|c| &c.findings)
            .filter(|f| f.kind == "unparsed")
            .map(|f| match summary_span(f, self.input.summary) {
                Some(span) => format!(
                    "{} (bytes {}..{} of the summary)",
                    f.message, span.start, span.end
                ),
                None => f.message.clone(),
            })
            .collect()
    }

    fn description(&self, pattern_id: &str) -> String {
        self.policy
            .grammar
            .conflicts
            .iter()
            .find(|c| c.id == pattern_id)
            .map(|c| c.description.clone())
            .unwrap_or_default()
    }

    /// Sentences whose clause form is `form`.
    fn stating(&self, form: &str) -> Vec<Sentence> {
        self.sentences
            .iter()
            .filter(|r| self.text().get((*r).clone()).map(clause_form).as_deref() == Some(form))
            .filter_map(|r| self.sentence(r.clone()))
            .collect()
    }

    /// The sentence most like `clause`, leaving out sentences that state another required
    /// clause (they are another constraint's support) unless nothing else is left.
    fn closest(&self, clause: &str) -> Option<Closest> {
        let others: BTreeSet<&str> = self.clause_forms.values().map(String::as_str).collect();
        let score = |r: &Range<usize>| {
            let s = self.text().get(r.clone()).unwrap_or_default();
            (similarity(clause, s), others.contains(clause_form(s).as_str()))
        };
        let scored: Vec<(&Range<usize>, u8, bool)> = self
            .sentences
            .iter()
            .map(|r| {
                let (sim, taken) = score(r);
                (r, sim, taken)
            })
            .collect();
        let pick = |allow_taken: bool| {
            scored
                .iter()
                .filter(|(_, sim, taken)| *sim >= MIN_SIMILARITY && (allow_taken || !taken))
                // The first of the best, so ties go to the earlier sentence.
                .fold(None, |best: Option<&(&Range<usize>, u8, bool)>, c| match best {
                    Some(b) if b.1 >= c.1 => Some(b),
                    _ => Some(c),
                })
        };
        let (range, similarity, _) = pick(false).or_else(|| pick(true))?;
        Some(Closest {
            sentence: self.sentence((*range).clone())?,
            similarity: *similarity,
        })
    }

    /// User turns sharing words with `about`, best first, at most `limit`.
    fn user_turns(&self, about: &str, limit: usize) -> Vec<TurnMatch> {
        let stop = &self.policy.authority.stopwords;
        let wanted = text::stems(about, stop);
        if wanted.is_empty() {
            return Vec::new();
        }
        let mut found: Vec<TurnMatch> = self
            .input
            .sources
            .iter()
            .enumerate()
            .filter(|(_, m)| m.role == "user")
            .filter_map(|(index, m)| self.turn_match(index, m, &wanted))
            .collect();
        found.sort_by_key(|t| (std::cmp::Reverse(t.shared), t.index));
        found.truncate(limit);
        found
    }

    fn turn_match(
        &self,
        index: usize,
        message: &MaskedMessage,
        wanted: &BTreeSet<String>,
    ) -> Option<TurnMatch> {
        let stop = &self.policy.authority.stopwords;
        let content = &message.content;
        let (_, shared) = text::shared_words(content, wanted, stop);
        if shared == 0 {
            return None;
        }
        let excerpt_range = if content.chars().count() <= 240 {
            0..content.len()
        } else {
            sentences(content)
                .into_iter()
                .max_by_key(|r| {
                    let piece = content.get(r.clone()).unwrap_or_default();
                    (text::shared_words(piece, wanted, stop).1, std::cmp::Reverse(r.start))
                })
                .unwrap_or(0..content.len())
        };
        let excerpt = content.get(excerpt_range).unwrap_or_default().to_owned();
        let (matched, _) = text::shared_words(&excerpt, wanted, stop);
        let phrases = |list: &[String]| {
            list.iter()
                .filter(|p| text::has_phrase(content, p))
                .cloned()
                .collect::<Vec<_>>()
        };
        Some(TurnMatch {
            message_id: message.message_id.clone(),
            index,
            excerpt,
            matched,
            shared,
            refusals: phrases(&self.policy.authority.refusal_markers),
            approvals: phrases(&self.policy.authority.approval_markers),
        })
    }

    fn pinned(&self) -> Vec<ConstraintEvidence> {
        let manifest: Vec<&Value> = self
            .input
            .report
            .pinned_manifest
            .get("constraints")
            .and_then(Value::as_array)
            .map(|a| a.iter().collect())
            .unwrap_or_default();
        let field = |m: &Value, key: &str| m.get(key).and_then(Value::as_str).map(str::to_owned);
        let mut seen = BTreeSet::new();
        self.policy
            .pinned
            .iter()
            .chain(self.input.request_pinned)
            .filter(|p| seen.insert(p.id.clone()))
            .map(|p| {
                let entry = manifest
                    .iter()
                    .find(|m| field(m, "id").as_deref() == Some(p.id.as_str()));
                let row = self
                    .pinned
                    .and_then(|c| c.constraints.iter().find(|r| r.constraint_id == p.id));
                let status = match (row, entry) {
                    (Some(r), _) => ConstraintStatus::from_report(&r.verification_status, ""),
                    (None, None) if Self::ran(self.pinned) => ConstraintStatus::Missing,
                    (None, _) => ConstraintStatus::NotChecked,
                };
                let conflicts = Self::findings_about(self.pinned, &p.id)
                    .filter(|f| f.kind == "pinned")
                    .map(|f| self.conflict_of(f, String::new()))
                    .collect();
                let user_turns = if status.failing() {
                    self.user_turns(&p.text, 2)
                } else {
                    Vec::new()
                };
                ConstraintEvidence {
                    kind: ConstraintKind::Pinned,
                    id: p.id.clone(),
                    reasons: Self::findings_about(self.pinned, &p.id)
                        .map(|f| f.message.clone())
                        .collect::<BTreeSet<_>>()
                        .into_iter()
                        .collect(),
                    status,
                    canonical_text: p.text.clone(),
                    canonical_predicate: None,
                    required_clause: None,
                    claim: None,
                    rule_id: row.and_then(|r| non_empty(&r.bounded_rule_id)),
                    evidence_sha256: row.and_then(|r| non_empty(&r.evidence_sha256)),
                    support: Vec::new(),
                    conflicts,
                    closest: None,
                    claimed: None,
                    user_turns,
                    pinned: Some(PinnedEvidence {
                        severity: p.severity.clone(),
                        injected: p.text.clone(),
                        injected_sha256: json::sha256_hex(p.text.as_bytes()),
                        manifest_sha256: entry.and_then(|m| field(m, "text_sha256")),
                    }),
                }
            })
            .collect()
    }

    fn authority(&self) -> Vec<ConstraintEvidence> {
        let findings = self
            .authority
            .into_iter()
            .flat_map(|c| &c.findings)
            .filter(|f| f.kind == "authority");
        findings
            .enumerate()
            .map(|(n, f)| {
                let claimed = summary_span(f, self.input.summary).and_then(|r| self.sentence(r));
                let canonical_text = claimed
                    .as_ref()
                    .map_or_else(|| f.message.clone(), |s| s.text.clone());
                let user_turns = claimed
                    .as_ref()
                    .map(|s| self.user_turns(&s.text, 1))
                    .unwrap_or_default();
                ConstraintEvidence {
                    kind: ConstraintKind::Authority,
                    id: format!("claim-{}", n + 1),
                    status: ConstraintStatus::Unsupported,
                    canonical_text,
                    canonical_predicate: None,
                    required_clause: None,
                    claim: None,
                    rule_id: non_empty(&f.rule_id),
                    evidence_sha256: None,
                    reasons: vec![f.message.clone()],
                    support: Vec::new(),
                    conflicts: Vec::new(),
                    closest: None,
                    claimed,
                    user_turns,
                    pinned: None,
                }
            })
            .collect()
    }
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
