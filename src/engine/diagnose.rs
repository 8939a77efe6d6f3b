//! Why a consistency check failed, as findings a reviewer can act on: which registered ids
//! were dropped, reordered or added, which claim differs from the registry and in which
//! field, which constraint the summarizer itself marked, and which predicate lacks bounded
//! support. Names come from the registry (trusted); anything the summarizer wrote is named
//! by its path, never quoted.

use std::collections::BTreeSet;

use super::compacted::CompactedContext;
use super::registry::RecordSet;
use super::report::Finding;
use super::verifier::ConflictVerification;

fn finding(field: String, constraint_id: &str, message: String) -> Finding {
    Finding {
        kind: "consistency".into(),
        field,
        constraint_id: constraint_id.to_owned(),
        message,
        ..Finding::default()
    }
}

fn ids(
    out: &mut Vec<Finding>,
    root: &str,
    retained: &[String],
    set: &RecordSet,
    expected: &[String],
) {
    let registered = set.ids();
    if expected != registered {
        out.push(finding(
            "request".into(),
            "",
            format!(
                "the request expects {} {root} that differ from the registry's {}",
                expected.len(),
                registered.len()
            ),
        ));
    }
    for id in &registered {
        if !retained.contains(id) {
            out.push(finding(root.into(), id, format!("{id} is not retained")));
        }
    }
    for (index, id) in retained.iter().enumerate() {
        if !registered.contains(id) {
            out.push(finding(
                format!("{root}[{index}]"),
                "",
                "an id that is not registered".into(),
            ));
        }
    }
    let kept: Vec<&String> = retained
        .iter()
        .filter(|id| registered.contains(id))
        .collect();
    let order: Vec<&String> = registered
        .iter()
        .filter(|id| retained.contains(id))
        .collect();
    if kept != order {
        out.push(finding(
            root.into(),
            "",
            "registered ids are out of registry order".into(),
        ));
    }
}

/// Findings that say why the consistency check did not pass.
pub fn consistency_findings(
    compacted: &CompactedContext,
    manifest: &RecordSet,
    snapshot: &RecordSet,
    expected: (&[String], &[String]),
    verification: Option<&ConflictVerification>,
) -> Vec<Finding> {
    let mut out = Vec::new();
    ids(
        &mut out,
        "retained_safety_invariant_ids",
        &compacted.retained_safety_invariant_ids,
        manifest,
        expected.0,
    );
    ids(
        &mut out,
        "retained_policy_commitment_ids",
        &compacted.retained_policy_commitment_ids,
        snapshot,
        expected.1,
    );
    let mut claimed = BTreeSet::new();
    for (index, claim) in compacted.preserved_constraint_claims.iter().enumerate() {
        let path = format!("preserved_constraint_claims[{index}]");
        let set = match claim.constraint_type.as_str() {
            "INVARIANT" => manifest,
            _ => snapshot,
        };
        let Some(record) = set.records.iter().find(|r| {
            r.id == claim.constraint_id && claim.constraint_type == set.kind.constraint_type()
        }) else {
            out.push(finding(
                path,
                "",
                "the claim names no registered constraint".into(),
            ));
            continue;
        };
        claimed.insert((claim.constraint_type.clone(), record.id.clone()));
        let id = record.id.as_str();
        if claim.canonical_record_sha256 != record.record_sha256 {
            out.push(finding(
                format!("{path}.canonical_record_sha256"),
                id,
                format!("{id}: the record digest differs from the registry's"),
            ));
        }
        if claim.canonical_predicate_sha256
            != crate::json::sha256_hex(record.canonical_predicate.as_bytes())
        {
            out.push(finding(
                format!("{path}.canonical_predicate_sha256"),
                id,
                format!("{id}: the predicate digest differs from the registry's"),
            ));
        }
        if claim.preserved_predicate != record.canonical_predicate {
            out.push(finding(
                format!("{path}.preserved_predicate"),
                id,
                format!(
                    "{id}: the predicate differs from {}",
                    record.canonical_predicate
                ),
            ));
        }
        if claim.status != "PRESERVED" {
            out.push(finding(
                format!("{path}.status"),
                id,
                format!("{id}: the summarizer itself does not claim it PRESERVED"),
            ));
        }
    }
    for set in [manifest, snapshot] {
        for record in &set.records {
            if !claimed.contains(&(set.kind.constraint_type().to_owned(), record.id.clone())) {
                out.push(finding(
                    "preserved_constraint_claims".into(),
                    &record.id,
                    format!("no claim for {}", record.id),
                ));
            }
        }
    }
    if let Some(v) = verification {
        for r in v
            .results
            .iter()
            .filter(|r| r.verification_status == "UNSUPPORTED")
        {
            let why = if v.assurance_type == "PROBABILISTIC" {
                "the summary hedges, so no deterministic evidence exists"
            } else if v.parsed_clauses.is_some() {
                "the summary does not state its required clause"
            } else {
                "the summary is not a total parse of the controlled language"
            };
            out.push(finding(
                "summary_text".into(),
                &r.constraint_id,
                format!("{} is UNSUPPORTED: {why}", r.constraint_id),
            ));
        }
    }
    out
}
