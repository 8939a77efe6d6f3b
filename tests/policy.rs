//! The built-in policies parse, compile (every conflict pattern meets its examples and
//! negative examples) and keep the properties the gate relies on.
#![allow(clippy::unwrap_used)]

use cq::engine::gate::PolicySource;
use cq::engine::PolicyEngine;
use cq::policy::{Policy, BUILTIN};

#[test]
fn every_builtin_policy_loads_and_compiles() {
    for (name, _) in BUILTIN {
        let policy = Policy::builtin(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        let engine =
            PolicyEngine::new(policy, &"b".repeat(64)).unwrap_or_else(|e| panic!("{name}: {e}"));
        // Loading a built-in skips this (it is listed as validated): every pattern compiles
        // and every rule meets its examples and negative examples.
        engine.validate().unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

#[test]
fn every_builtin_policy_read_from_json_is_the_one_its_toml_gives_with_the_digest_shipped() {
    for (name, _) in BUILTIN {
        let from_json = Policy::builtin(name).unwrap();
        let from_toml = Policy::builtin_from_toml(name).unwrap();
        assert_eq!(from_json, from_toml, "{name}");
        assert_eq!(
            format!("{:?}", from_json.to_value()),
            format!("{:?}", from_toml.to_value()),
            "{name}"
        );
        // The digest computed from the policy's value, which a built-in read from TOML has no
        // shipped copy to skip.
        let digest = from_toml.sha256();
        assert!(
            cq::policy::is_shipped_sha256(&digest),
            "built-in policy \"{name}\" is {digest}: put that digest in SHIPPED \
             (src/policy/load.rs) so loading it skips re-validating its examples"
        );
        assert_eq!(from_json.sha256(), digest, "{name}");
    }
    for other in ["0".repeat(64), "288f".to_owned(), String::new()] {
        assert!(!cq::policy::is_shipped_sha256(&other));
    }
}

#[test]
fn an_edited_builtin_policy_has_its_own_digest() {
    let shipped = Policy::builtin("default").unwrap();
    let digest = shipped.sha256();
    for edit in [
        |p: &mut Policy| p.description.push('.'),
        |p: &mut Policy| p.invariants.revision += 1,
        |p: &mut Policy| p.name.push_str("-edited"),
        |p: &mut Policy| p.agents.block_compaction = !p.agents.block_compaction,
    ] {
        let mut edited = shipped.clone();
        edit(&mut edited);
        let mut fresh = Policy::builtin_from_toml("default").unwrap();
        edit(&mut fresh);
        assert_ne!(edited.sha256(), digest);
        assert_eq!(edited.sha256(), fresh.sha256());
    }
}

#[test]
fn an_edited_builtin_policy_is_validated_when_it_compiles() {
    let mut policy = Policy::builtin("default").unwrap();
    let conflict = policy.grammar.conflicts.first_mut().unwrap();
    conflict
        .negative_examples
        .push(conflict.examples[0].clone());
    let err = PolicyEngine::new(policy, &"b".repeat(64)).err().unwrap();
    assert!(
        err.to_string().contains("matches its negative example"),
        "{err}"
    );
}

#[test]
fn default_policy_is_realistic() {
    let policy = Policy::builtin("default").unwrap();
    let records = policy.invariants.records.len() + policy.commitments.records.len();
    assert!(records >= 8, "only {records} invariants and commitments");
    let predicates: Vec<&str> = policy
        .invariants
        .records
        .iter()
        .chain(&policy.commitments.records)
        .map(|r| r.canonical_predicate.as_str())
        .collect();
    for predicate in &predicates {
        assert!(
            policy
                .grammar
                .required
                .iter()
                .any(|r| r.predicate == *predicate),
            "no required clause for {predicate}"
        );
        assert!(
            policy
                .grammar
                .conflicts
                .iter()
                .any(|c| c.predicate == *predicate),
            "no conflict pattern for {predicate}"
        );
    }
    assert!(policy.grammar.clauses.iter().any(|c| c.contains("{path}")));
}

#[test]
fn policy_digest_is_stable_and_sensitive() {
    let a = Policy::builtin("default").unwrap();
    let mut b = a.clone();
    assert_eq!(a.sha256(), b.sha256());
    b.compaction.summary_min_length += 1;
    assert_ne!(a.sha256(), b.sha256());
}

#[test]
fn a_compiled_engine_binds_the_verifier_artifact_digest_of_its_grammar() {
    // Computed when a gate first needs it, the same digest the policy gives: the grammar's
    // own (seed-compatible) or its canonical SHA-256 (the others), and it follows the grammar.
    for (name, _) in BUILTIN {
        let policy = Policy::builtin(name).unwrap();
        let want = policy.verifier_artifact_sha256();
        let engine = PolicyEngine::new(policy, "builtin").unwrap();
        let bound = engine.load_verified("tenant", "task").unwrap();
        assert_eq!(bound.verifier_artifact_sha256, want, "{name}");
    }
    let mut edited = Policy::builtin("default").unwrap();
    let before = edited.verifier_artifact_sha256();
    edited.grammar.clauses.push("the build is green".into());
    let want = edited.verifier_artifact_sha256();
    assert_ne!(want, before);
    let engine = PolicyEngine::new(edited, "builtin").unwrap();
    let bound = engine.load_verified("tenant", "task").unwrap();
    assert_eq!(bound.verifier_artifact_sha256, want);
}

#[test]
fn seed_compatible_keeps_the_seed_grammar() {
    let policy = Policy::builtin("seed-compatible").unwrap();
    assert_eq!(policy.grammar.verifier_version, "conflict-rules-2026-07-28");
    assert_eq!(policy.verifier_artifact_sha256(), "a".repeat(64));
    assert_eq!(policy.compaction.summary_min_length, 10);
    let ids: Vec<&str> = policy
        .invariants
        .records
        .iter()
        .chain(&policy.commitments.records)
        .map(|r| r.id.as_str())
        .collect();
    assert_eq!(ids, ["SAFETY-1", "COMMIT-1"]);
}

#[test]
fn invalid_policies_are_refused_with_the_reason() {
    let text = BUILTIN.iter().find(|(n, _)| *n == "default").unwrap().1;
    let zero = text.replace("fallback_message_count = 8", "fallback_message_count = 0");
    let err = Policy::from_toml(&zero, "test").unwrap_err().to_string();
    assert!(err.contains("fallback_message_count"), "{err}");
    let extra = text.replace("[compaction]", "[compaction]\nsurprise = 1");
    assert!(Policy::from_toml(&extra, "test")
        .unwrap_err()
        .to_string()
        .contains("surprise"));
}
