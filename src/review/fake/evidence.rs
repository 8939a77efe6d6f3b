//! The fake items' constraint evidence, derived from each item's check rows, summary spans
//! and pinned views the way the store's adapter derives it from a report: the sentence that
//! states a constraint's clause, the conflicting sentence, the closest sentence when the
//! clause is missing, pinned texts against their digests, and one row per authority claim.

use crate::review::source::{
    CheckName, CheckStatus, ClaimEvidence, Closest, ConflictMatch, ConstraintEvidence,
    ConstraintKind, ConstraintStatus, ItemDetail, PinnedEvidence, Sentence, SpanKind, TurnMatch,
    Verification,
};
use crate::service::constraints::{clause_form, sentences, similarity};

/// The fake policy: id, canonical text, predicate, required clause.
const REGISTRY: [(&str, &str, &str, &str); 2] = [
    (
        "INV-1",
        "Never rewrite the history of a protected branch such as main.",
        "protect(branch_main)",
        "branch main is protected",
    ),
    (
        "COM-3",
        "Run the checks before applying a change, and report what they found.",
        "require(checks_first)",
        "tests pass on branch feature/login",
    ),
];

fn sentence_at(summary: &str, range: &std::ops::Range<usize>) -> Option<Sentence> {
    let all = sentences(summary);
    let found = all
        .iter()
        .find(|s| s.start <= range.start && range.start < s.end.max(s.start + 1))?;
    Some(Sentence {
        range: found.clone(),
        text: summary.get(found.clone())?.to_owned(),
    })
}

fn status_of(v: Verification, claim: &str) -> ConstraintStatus {
    match v {
        _ if claim.eq_ignore_ascii_case("missing") => ConstraintStatus::Missing,
        Verification::Preserved => ConstraintStatus::Preserved,
        Verification::Conflict => ConstraintStatus::Conflict,
        Verification::Unsupported => ConstraintStatus::Unsupported,
        Verification::Reinjected => ConstraintStatus::Reinjected,
    }
}

/// The evidence rows of `item`, failing ones first.
pub fn evidence(item: &ItemDetail) -> Vec<ConstraintEvidence> {
    let mut rows = registered_rows(item);
    rows.extend(pinned_rows(item));
    rows.extend(authority_rows(item));
    rows.sort_by_key(ConstraintEvidence::triage_rank);
    rows
}

/// One row per registered invariant and commitment the consistency check reported.
fn registered_rows(item: &ItemDetail) -> Vec<ConstraintEvidence> {
    let summary = &item.summary_text;
    let cut = sentences(summary);
    let mut rows = Vec::new();
    let consistency = item
        .checks
        .iter()
        .find(|c| c.check == CheckName::Consistency);
    for row in consistency.iter().flat_map(|c| &c.constraints) {
        let Some((id, text, predicate, clause)) = REGISTRY
            .iter()
            .find(|(id, ..)| *id == row.constraint_id)
            .copied()
        else {
            continue;
        };
        let status = status_of(row.verification, &row.claim_status);
        let support: Vec<Sentence> = cut
            .iter()
            .filter(|r| {
                summary
                    .get((*r).clone())
                    .is_some_and(|s| clause_form(s).contains(&clause_form(clause)))
            })
            .filter_map(|r| sentence_at(summary, r))
            .collect();
        let conflicts = item
            .summary_spans
            .iter()
            .filter(
                |s| matches!(&s.kind, SpanKind::Conflict { constraint_id } if constraint_id == id),
            )
            .map(|s| ConflictMatch {
                sentence: sentence_at(summary, &s.range),
                matched: Some(s.range.clone()),
                pattern_id: row.rule_id.clone().unwrap_or_default(),
                description: "rewriting a protected branch's history".into(),
            })
            .collect();
        let closest = (support.is_empty() && status.failing())
            .then(|| {
                cut.iter()
                    .map(|r| (r, similarity(clause, summary.get(r.clone()).unwrap_or(""))))
                    .max_by_key(|(r, sim)| (*sim, std::cmp::Reverse(r.start)))
                    .filter(|(_, sim)| *sim > 0)
                    .and_then(|(r, sim)| {
                        Some(Closest {
                            sentence: sentence_at(summary, r)?,
                            similarity: sim,
                        })
                    })
            })
            .flatten();
        let user_turns = if status.failing() {
            item.sources
                .iter()
                .enumerate()
                .filter(|(_, m)| m.role == crate::review::source::Role::User)
                .map(|(index, m)| TurnMatch {
                    message_id: m.message_id.clone(),
                    index,
                    excerpt: m.content.clone(),
                    matched: Vec::new(),
                    shared: 0,
                    refusals: Vec::new(),
                    approvals: Vec::new(),
                })
                .take(1)
                .collect()
        } else {
            Vec::new()
        };
        let reasons = match &status {
            ConstraintStatus::Preserved => Vec::new(),
            other => vec![format!("{id} is {}", other.word())],
        };
        rows.push(ConstraintEvidence {
            kind: if row.constraint_type == "commitment" {
                ConstraintKind::Commitment
            } else {
                ConstraintKind::Invariant
            },
            id: id.into(),
            status,
            canonical_text: text.into(),
            canonical_predicate: Some(predicate.into()),
            required_clause: Some(clause.into()),
            claim: Some(ClaimEvidence {
                status: row.claim_status.clone(),
                predicate: item
                    .claims
                    .iter()
                    .find(|c| c.constraint_id == id)
                    .map(|c| c.preserved_predicate.clone())
                    .unwrap_or_default(),
            }),
            rule_id: row.rule_id.clone(),
            evidence_sha256: row.evidence_sha256.clone(),
            reasons,
            support,
            conflicts,
            closest,
            claimed: None,
            user_turns,
            pinned: None,
        });
    }
    rows
}

/// One row per pinned constraint: the text as injected against the manifest.
fn pinned_rows(item: &ItemDetail) -> Vec<ConstraintEvidence> {
    let summary = &item.summary_text;
    let mut rows = Vec::new();
    for pinned in &item.pinned {
        let injected = pinned.returned.clone().unwrap_or_default();
        let identical = pinned.returned.as_deref() == Some(pinned.text.as_str());
        let conflicts: Vec<ConflictMatch> = item
            .summary_spans
            .iter()
            .filter(|s| matches!(&s.kind, SpanKind::PinnedMatch { constraint_id } if *constraint_id == pinned.constraint_id))
            .map(|s| ConflictMatch {
                sentence: sentence_at(summary, &s.range),
                matched: Some(s.range.clone()),
                pattern_id: r"\bmigrations/".into(),
                description: "a forbidden pattern of this pinned constraint".into(),
            })
            .collect();
        let status = if pinned.returned.is_none() {
            ConstraintStatus::Missing
        } else if !identical || !conflicts.is_empty() {
            ConstraintStatus::Conflict
        } else {
            ConstraintStatus::Preserved
        };
        rows.push(ConstraintEvidence {
            kind: ConstraintKind::Pinned,
            id: pinned.constraint_id.clone(),
            status,
            canonical_text: pinned.text.clone(),
            canonical_predicate: None,
            required_clause: None,
            claim: None,
            rule_id: Some("pinned-verbatim-v1".into()),
            evidence_sha256: None,
            reasons: Vec::new(),
            support: Vec::new(),
            conflicts,
            closest: None,
            claimed: None,
            user_turns: Vec::new(),
            pinned: Some(PinnedEvidence {
                severity: "critical".into(),
                injected_sha256: super::sha256_hex(&injected),
                injected,
                manifest_sha256: Some(super::sha256_hex(&pinned.text)),
            }),
        });
    }
    rows
}

/// One row per authority claim the authority check found unsupported.
fn authority_rows(item: &ItemDetail) -> Vec<ConstraintEvidence> {
    let summary = &item.summary_text;
    let mut rows = Vec::new();
    let authority = item
        .checks
        .iter()
        .find(|c| c.check == CheckName::Authority && c.status != CheckStatus::Pass);
    if let Some(check) = authority {
        let spans: Vec<_> = item
            .summary_spans
            .iter()
            .filter(|s| s.kind == SpanKind::Authority)
            .collect();
        let claims: Vec<Option<Sentence>> = if spans.is_empty() {
            vec![None]
        } else {
            spans
                .iter()
                .map(|s| {
                    Some(Sentence {
                        range: s.range.clone(),
                        text: summary.get(s.range.clone())?.to_owned(),
                    })
                })
                .collect()
        };
        for (n, claimed) in claims.into_iter().enumerate() {
            rows.push(ConstraintEvidence {
                kind: ConstraintKind::Authority,
                id: format!("claim-{}", n + 1),
                status: ConstraintStatus::Unsupported,
                canonical_text: claimed
                    .as_ref()
                    .map_or_else(|| check.detail.clone(), |s| s.text.clone()),
                canonical_predicate: None,
                required_clause: None,
                claim: None,
                rule_id: check.code.clone(),
                evidence_sha256: None,
                reasons: vec![check.detail.clone()],
                support: Vec::new(),
                conflicts: Vec::new(),
                closest: None,
                claimed,
                user_turns: Vec::new(),
                pinned: None,
            });
        }
    }
    rows
}
