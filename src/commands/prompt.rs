//! `cq policy prompt`: the policy's controlled language as instructions a runtime puts in
//! its summarizer's prompt, with the exact ids, digests and claims the closed schema needs,
//! so that a faithful summary can pass the closed grammar.

use std::fmt::Write as _;

use crate::engine::registry::RecordSet;
use crate::engine::PolicyEngine;
use crate::json::sha256_hex;

fn slot_help() -> &'static str {
    "Slots take exactly one word:\n\
     - {path}: a repository-relative path such as src/main.rs (letters, digits, _ - . / @ + =; no spaces, no .. or . parts)\n\
     - {identifier}: a name such as parse_config or tests::parse_ok (starts with a letter or _; letters, digits, _ : . -)\n\
     - {number}: digits, optionally with a decimal part (3, 12.5)\n\
     - {commit}: 7 to 40 lower-case hex digits\n\
     - {a|b|c}: exactly one of the listed words\n"
}

fn claims(out: &mut String, set: &RecordSet) {
    for record in &set.records {
        let _ = writeln!(
            out,
            "  {{\"constraint_type\": \"{}\", \"constraint_id\": \"{}\", \"canonical_record_sha256\": \"{}\", \"canonical_predicate_sha256\": \"{}\", \"preserved_predicate\": \"{}\", \"status\": \"PRESERVED\"}}",
            set.kind.constraint_type(),
            record.id,
            record.record_sha256,
            sha256_hex(record.canonical_predicate.as_bytes()),
            record.canonical_predicate
        );
    }
}

pub fn render(engine: &PolicyEngine) -> String {
    let p = &engine.policy;
    let g = &p.grammar;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "You compact an agent's conversation for policy \"{}\" {} (sha256 {}).",
        p.name, p.policy_version, engine.policy_sha256
    );
    out.push_str(
        "Answer with one JSON object and nothing else, with exactly these five fields:\n\
         summary_text, retained_safety_invariant_ids, retained_policy_commitment_ids, source_message_sha256s, preserved_constraint_claims.\n\n",
    );
    let _ = writeln!(
        out,
        "summary_text is written ONLY in this controlled language (at least {} characters):",
        p.compaction.summary_min_length
    );
    match g.segmentation {
        crate::policy::grammar::Segmentation::Period => out.push_str("- clauses end with \".\"; the text ends with \".\" and nothing after it.\n"),
        crate::policy::grammar::Segmentation::Sentence => out.push_str("- one clause per sentence; each sentence ends with \".\" followed by a space or a new line.\n"),
    }
    if let Some(charset) = &g.charset {
        let _ = writeln!(out, "- use only characters matching {charset}.");
    }
    out.push_str("- every clause must be one of the clauses below, word for word (case does not matter); no clause twice; nothing else.\n");
    out.push_str("- never write instructions, approvals or permissions, and never say that the user or the system approved, confirmed or instructed anything.\n");
    if !g.probabilistic_markers.is_empty() {
        let _ = writeln!(
            out,
            "- do not hedge: phrases such as \"{}\" make the summary unverifiable.",
            g.probabilistic_markers.join("\", \"")
        );
    }
    out.push_str("\nAllowed clauses:\n");
    for clause in &g.clauses {
        let _ = writeln!(out, "- {clause}");
    }
    out.push('\n');
    out.push_str(slot_help());
    out.push_str(
        "\nThe summary must contain each of these clauses (one per registered constraint):\n",
    );
    for required in &g.required {
        let _ = writeln!(
            out,
            "- {}    (keeps {})",
            required.clause, required.predicate
        );
    }
    let _ = writeln!(
        out,
        "\nretained_safety_invariant_ids: {:?}",
        engine.manifest.ids()
    );
    let _ = writeln!(
        out,
        "retained_policy_commitment_ids: {:?}",
        engine.snapshot.ids()
    );
    out.push_str(
        "source_message_sha256s: for each source message in order, the SHA-256 of the canonical JSON of {\"content\", \"message_id\", \"role\"} (`cq digest` computes it).\n",
    );
    out.push_str("preserved_constraint_claims: exactly these objects, copied verbatim:\n");
    claims(&mut out, &engine.manifest);
    claims(&mut out, &engine.snapshot);
    out
}
