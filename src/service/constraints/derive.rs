//! Reading one compaction's rows out of its report: the registered invariants and
//! commitments (the consistency check's rows and findings, or in prose mode the reinjection
//! check's rows and the conflicts check's findings; the policy's texts and the
//! grammar's required clauses), the pinned constraints (the pinned check's rows, the request's
//! texts and the report's manifest) and the authority claims (the authority check's
//! findings), each with the sentences and user turns the text matching finds for it.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;

use super::text::{self, clause_form, sentences, similarity};
use super::{
    ClaimEvidence, Closest, ConflictMatch, ConstraintEvidence, ConstraintKind, ConstraintStatus,
    Input, PinnedEvidence, Sentence, TurnMatch,
};
use crate::engine::report::{CheckResult, Finding, Report, Status as CheckStatus};
use crate::json::{self, Value};
use crate::policy::Policy;
use crate::service::inspect::{summary_span, MaskedMessage};

/// Below this word similarity a sentence is not "close" to a clause at all.
const MIN_SIMILARITY: u8 = 15;

pub(super) struct Context<'a> {
    input: &'a Input<'a>,
    policy: &'a Policy,
    sentences: Vec<Range<usize>>,
    /// The consistency check's rows, or in prose mode the reinjection check's.
    consistency: Option<&'a CheckResult>,
    /// Prose mode's proposals a registered constraint forbids (`None` in strict mode).
    conflicts: Option<&'a CheckResult>,
    pinned: Option<&'a CheckResult>,
    authority: Option<&'a CheckResult>,
    /// Required clause forms, by predicate.
    clause_forms: BTreeMap<&'a str, String>,
    /// Each user turn's position and the distinct stems of its words.
    user_stems: Vec<(usize, BTreeSet<String>)>,
}

fn check<'a>(report: &'a Report, name: &str) -> Option<&'a CheckResult> {
    report.checks.iter().find(|c| c.check == name)
}

fn non_empty(s: &str) -> Option<String> {
    (!s.is_empty()).then(|| s.to_owned())
}

impl<'a> Context<'a> {
    pub(super) fn new(input: &'a Input<'a>, policy: &'a Policy) -> Context<'a> {
        Context {
            input,
            policy,
            sentences: sentences(&input.summary.text),
            consistency: check(input.report, "consistency")
                .or_else(|| check(input.report, "reinjection")),
            conflicts: check(input.report, "conflicts"),
            pinned: check(input.report, "pinned"),
            authority: check(input.report, "authority"),
            clause_forms: policy
                .grammar
                .required
                .iter()
                .map(|r| (r.predicate.as_str(), clause_form(&r.clause)))
                .collect(),
            user_stems: input
                .sources
                .iter()
                .enumerate()
                .filter(|(_, m)| m.role == "user")
                .map(|(i, m)| (i, text::stems(&m.content, &policy.authority.stopwords)))
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
        let start = touching
            .first()
            .map_or(span.start, |s| s.start.min(span.start));
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

    pub(super) fn registered(
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
    pub(super) fn unregistered(&self, known: &[ConstraintEvidence]) -> Vec<ConstraintEvidence> {
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
        let about: Vec<&Finding> = Self::findings_about(self.consistency, id)
            .chain(Self::findings_about(self.conflicts, id))
            .collect();
        let missing =
            |f: &&Finding| f.message.contains("not retained") || f.message.starts_with("no claim");
        let status = match row {
            Some(r) => ConstraintStatus::from_report(&r.verification_status, &r.claim_status),
            None if about.iter().any(missing) => ConstraintStatus::Missing,
            // A claim the check refused before verifying (its digest differs, …).
            None if !about.is_empty() => ConstraintStatus::Unsupported,
            None if !Self::ran(self.consistency) => ConstraintStatus::NotChecked,
            None => ConstraintStatus::Missing,
        };
        // Re-injected, and the summary proposes what it forbids.
        let status = match status {
            ConstraintStatus::Reinjected if about.iter().any(|f| f.kind == "conflict") => {
                ConstraintStatus::Conflict
            }
            status => status,
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
            (
                similarity(clause, s),
                others.contains(clause_form(s).as_str()),
            )
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
                .fold(
                    None,
                    |best: Option<&(&Range<usize>, u8, bool)>, c| match best {
                        Some(b) if b.1 >= c.1 => Some(b),
                        _ => Some(c),
                    },
                )
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
        // Turns are tokenized once per compaction; only the best few get an excerpt.
        let mut scored: Vec<(usize, usize)> = self
            .user_stems
            .iter()
            .map(|(index, stems)| (*index, stems.intersection(&wanted).count()))
            .filter(|(_, shared)| *shared > 0)
            .collect();
        scored.sort_by_key(|(index, shared)| (std::cmp::Reverse(*shared), *index));
        scored
            .into_iter()
            .take(limit)
            .filter_map(|(index, _)| {
                let message = self.input.sources.get(index)?;
                self.turn_match(index, message, &wanted)
            })
            .collect()
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
                    (
                        text::shared_words(piece, wanted, stop).1,
                        std::cmp::Reverse(r.start),
                    )
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

    pub(super) fn pinned(&self) -> Vec<ConstraintEvidence> {
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

    pub(super) fn authority(&self) -> Vec<ConstraintEvidence> {
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
