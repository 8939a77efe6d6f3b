//! Reading a policy: TOML into the typed model, the seed's validity rules plus our own, the
//! JSON form and its digest, and the built-in policies embedded from `assets/policies/`.

use std::collections::BTreeSet;

use crate::json::{self, Value};

use super::model::{Agents, Policy};

/// The built-in policies, by name.
pub const BUILTIN: &[(&str, &str)] = &[
    (
        "default",
        include_str!("../../assets/policies/default.toml"),
    ),
    (
        "seed-compatible",
        include_str!("../../assets/policies/seed-compatible.toml"),
    ),
    ("prose", include_str!("../../assets/policies/prose.toml")),
];

/// Each built-in policy's JSON form, written by the build script (`src/build.rs`) from its
/// TOML, and the `policy_sha256` it has as shipped. `tests/policy.rs` holds the JSON equal to
/// the TOML and each digest to the policy's own, and fails when a built-in is missing here.
const SHIPPED: &[(&str, &str, &str)] = &[
    (
        "default",
        include_str!(concat!(env!("OUT_DIR"), "/assets/policies/default.json")),
        "288f1721052922468eac7e6c2d15ee7cc9d3c2429abcf0704ae8c44547dcca0a",
    ),
    (
        "seed-compatible",
        include_str!(concat!(
            env!("OUT_DIR"),
            "/assets/policies/seed-compatible.json"
        )),
        "d4fa0098f62a52b58534fa937f5b7bf0ddb25404bd8b116872d280534891dfe1",
    ),
    (
        "prose",
        include_str!(concat!(env!("OUT_DIR"), "/assets/policies/prose.json")),
        "e8d5359ab3ef057760b2fd68de39d4cc0665f6b4128f187514fffa115f8f8f03",
    ),
];

/// Whether `sha256` is the digest of a built-in policy as shipped. Their patterns and examples
/// are checked by a test (`tests/policy.rs`), so compiling one of them skips validating it.
pub fn is_shipped_sha256(sha256: &str) -> bool {
    SHIPPED.iter().any(|(_, _, digest)| *digest == sha256)
}

fn builtin_text(name: &str) -> Result<&'static str, PolicyError> {
    BUILTIN
        .iter()
        .find(|(builtin, _)| *builtin == name)
        .map(|(_, text)| *text)
        .ok_or_else(|| PolicyError::UnknownBuiltin(name.to_owned()))
}

/// A built-in policy as shipped and its digest, carried by the policy read from it, so the
/// digest of a built-in nobody edited is a comparison rather than a serialisation and a hash.
/// It is no part of a policy's value: it compares equal to any other and is never serialised.
#[derive(Clone, Default)]
pub struct Shipped(Option<std::sync::Arc<(Policy, &'static str)>>);

impl PartialEq for Shipped {
    fn eq(&self, _: &Shipped) -> bool {
        true
    }
}

impl Eq for Shipped {}

impl std::fmt::Debug for Shipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "Shipped" } else { "-" })
    }
}

/// The lines of `text` from its `[agents]` header to the next table header (nothing when it
/// has none).
fn agents_table(text: &str) -> &str {
    let Some(start) = text
        .match_indices("[agents]")
        .map(|(at, _)| at)
        .find(|&at| at == 0 || text[..at].ends_with('\n'))
    else {
        return "";
    };
    let rest = &text[start..];
    let end = rest
        .match_indices("\n[")
        .map(|(at, _)| at + 1)
        .next()
        .unwrap_or(rest.len());
    &rest[..end]
}

#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error("policy {origin} is not valid TOML for cq.policy.v1: {reason}")]
    Syntax { origin: String, reason: String },
    #[error("policy {origin} is invalid: {reason}")]
    Invalid { origin: String, reason: String },
    #[error("no built-in policy named \"{0}\" (built-in: default, seed-compatible, prose)")]
    UnknownBuiltin(String),
}

impl Policy {
    /// Parses and validates a policy; `origin` names it in errors (a path or `builtin:NAME`).
    pub fn from_toml(text: &str, origin: &str) -> Result<Policy, PolicyError> {
        let policy: Policy = toml::from_str(text).map_err(|e| PolicyError::Syntax {
            origin: origin.to_owned(),
            reason: e.to_string(),
        })?;
        policy.validate().map_err(|reason| PolicyError::Invalid {
            origin: origin.to_owned(),
            reason,
        })?;
        Ok(policy)
    }

    /// The built-in policy `name`, read from its embedded JSON form and validated.
    pub fn builtin(name: &str) -> Result<Policy, PolicyError> {
        let (_, json, digest) = SHIPPED
            .iter()
            .find(|(builtin, _, _)| *builtin == name)
            .ok_or_else(|| PolicyError::UnknownBuiltin(name.to_owned()))?;
        let origin = format!("builtin:{name}");
        let mut policy: Policy = serde_json::from_str(json).map_err(|e| PolicyError::Syntax {
            origin: origin.clone(),
            reason: e.to_string(),
        })?;
        policy
            .validate()
            .map_err(|reason| PolicyError::Invalid { origin, reason })?;
        policy.shipped = Shipped(Some(std::sync::Arc::new((policy.clone(), *digest))));
        Ok(policy)
    }

    /// The built-in policy `name` read from its TOML text, as a policy file is read.
    pub fn builtin_from_toml(name: &str) -> Result<Policy, PolicyError> {
        Policy::from_toml(builtin_text(name)?, &format!("builtin:{name}"))
    }

    /// The `[agents]` table of the built-in policy `name`, read without parsing the rest of
    /// it: all a `PreToolUse` hook needs, on every tool call, of a policy that is part of the
    /// binary. `tests/policy.rs` holds it equal to `Policy::builtin(name)?.agents` for every
    /// built-in.
    pub fn builtin_agents(name: &str) -> Result<Agents, PolicyError> {
        #[derive(serde::Deserialize)]
        struct AgentsOnly {
            #[serde(default)]
            agents: Agents,
        }
        let only: AgentsOnly =
            toml::from_str(agents_table(builtin_text(name)?)).map_err(|e| PolicyError::Syntax {
                origin: format!("builtin:{name}"),
                reason: e.to_string(),
            })?;
        Ok(only.agents)
    }

    fn validate(&self) -> Result<(), String> {
        if self.schema_version != "cq.policy.v1" {
            return Err(format!(
                "schema_version is \"{}\", expected \"cq.policy.v1\"",
                self.schema_version
            ));
        }
        if self.policy_version.is_empty() || self.name.is_empty() {
            return Err("name and policy_version must not be empty".into());
        }
        let c = &self.compaction;
        if c.summary_min_length < 1 || c.fallback_message_count < 1 {
            return Err(
                "compaction.summary_min_length and fallback_message_count must be at least 1"
                    .into(),
            );
        }
        if c.max_raw_output_bytes < 1 || !(1..=1024).contains(&c.max_json_depth) {
            return Err(
                "compaction.max_raw_output_bytes must be positive and max_json_depth in 1..=1024"
                    .into(),
            );
        }
        for (what, set) in [
            ("invariants", &self.invariants),
            ("commitments", &self.commitments),
        ] {
            if set.revision < 1 || set.records.is_empty() {
                return Err(format!(
                    "{what} needs a revision of at least 1 and at least one record"
                ));
            }
            let mut ids = BTreeSet::new();
            for record in &set.records {
                if record.id.is_empty()
                    || record.canonical_text.is_empty()
                    || record.canonical_predicate.is_empty()
                {
                    return Err(format!(
                        "{what}: a record has an empty id, text or predicate"
                    ));
                }
                if record.record_revision < 1 {
                    return Err(format!(
                        "{what}: record \"{}\" needs record_revision of at least 1",
                        record.id
                    ));
                }
                if !ids.insert(record.id.as_str()) {
                    return Err(format!("{what}: record id \"{}\" appears twice", record.id));
                }
            }
        }
        let predicates: BTreeSet<&str> = self
            .invariants
            .records
            .iter()
            .chain(&self.commitments.records)
            .map(|r| r.canonical_predicate.as_str())
            .collect();
        for required in &self.grammar.required {
            if !predicates.contains(required.predicate.as_str()) {
                return Err(format!(
                    "grammar.required names predicate \"{}\" that no record has",
                    required.predicate
                ));
            }
        }
        for item in &self.grammar.exclusive {
            if !predicates.contains(item.predicate.as_str()) {
                return Err(format!(
                    "grammar.exclusive \"{}\" names predicate \"{}\" that no record has",
                    item.id, item.predicate
                ));
            }
        }
        let mut pinned = BTreeSet::new();
        for item in &self.pinned {
            check_pinned(&item.id, &item.severity, &item.text)?;
            if !pinned.insert(item.id.as_str()) {
                return Err(format!(
                    "pinned constraint id \"{}\" appears twice",
                    item.id
                ));
            }
        }
        match (&self.prose, self.compaction.mode) {
            (None, super::Mode::Prose) => {
                return Err(
                    "compaction.mode is \"prose\" but the policy has no [prose] table: add one (see the built-in prose policy)".into(),
                )
            }
            (Some(prose), _) => {
                let registered: Vec<&str> = self
                    .invariants
                    .records
                    .iter()
                    .chain(&self.commitments.records)
                    .map(|r| r.id.as_str())
                    .collect();
                prose.validate(&registered)?;
            }
            (None, super::Mode::Strict) => {}
        }
        let codes: BTreeSet<&str> = self
            .review
            .reason_codes
            .iter()
            .map(|r| r.code.as_str())
            .collect();
        if codes.len() != self.review.reason_codes.len() {
            return Err("review.reason_codes has a duplicate code".into());
        }
        if let Some(bad) = self
            .review
            .reason_codes
            .iter()
            .find(|r| !["release", "reject", "both"].contains(&r.applies_to.as_str()))
        {
            return Err(format!(
                "reason code \"{}\" applies_to must be release, reject or both",
                bad.code
            ));
        }
        Ok(())
    }

    /// The policy's JSON form: every field of the typed model (absent options left out).
    pub fn to_value(&self) -> Value {
        toml::Value::try_from(self)
            .map(|v| toml_to_json(&v))
            .unwrap_or(Value::Null)
    }

    /// `policy_sha256`: the canonical SHA-256 of the JSON form.
    pub fn sha256(&self) -> String {
        if let Some((shipped, digest)) = self.shipped.0.as_deref() {
            if shipped == self {
                return (*digest).to_owned();
            }
        }
        json::canonical_sha256(&self.to_value()).unwrap_or_default()
    }

    /// The verifier artifact's digest: the grammar's own if set, else its canonical SHA-256.
    pub fn verifier_artifact_sha256(&self) -> String {
        self.grammar.artifact_sha256()
    }
}

impl super::grammar::Grammar {
    /// The verifier artifact's digest: its own `artifact_sha256` if set, else the grammar's
    /// canonical SHA-256.
    pub fn artifact_sha256(&self) -> String {
        match &self.artifact_sha256 {
            Some(digest) => digest.clone(),
            None => {
                let value = toml::Value::try_from(self)
                    .map(|v| toml_to_json(&v))
                    .unwrap_or(Value::Null);
                json::canonical_sha256(&value).unwrap_or_default()
            }
        }
    }
}

/// The rules a pinned constraint must meet, from the policy or from a request.
pub fn check_pinned(id: &str, severity: &str, text: &str) -> Result<(), String> {
    if id.trim().is_empty() || text.trim().is_empty() {
        return Err("a pinned constraint has an empty id or text".into());
    }
    if !["critical", "high", "medium", "low"].contains(&severity) {
        return Err(format!(
            "pinned constraint \"{}\" has severity \"{}\": use critical, high, medium or low",
            crate::sanitize::excerpt(id, 80),
            crate::sanitize::excerpt(severity, 40)
        ));
    }
    Ok(())
}

fn toml_to_json(value: &toml::Value) -> Value {
    match value {
        toml::Value::String(s) => Value::from(s.as_str()),
        toml::Value::Integer(i) => Value::from(*i),
        toml::Value::Float(f) => Value::from(f.to_string()),
        toml::Value::Boolean(b) => Value::Bool(*b),
        toml::Value::Datetime(d) => Value::from(d.to_string()),
        toml::Value::Array(items) => Value::Array(items.iter().map(toml_to_json).collect()),
        toml::Value::Table(table) => {
            json::object(table.iter().map(|(k, v)| (k.as_str(), toml_to_json(v))))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{agents_table, Policy, BUILTIN};

    #[test]
    fn a_builtin_agents_table_read_alone_is_the_one_the_whole_policy_has() {
        for (name, _) in BUILTIN {
            let whole = Policy::builtin(name).map(|p| p.agents);
            let alone = Policy::builtin_agents(name);
            assert!(
                matches!((&whole, &alone), (Ok(w), Ok(a)) if w == a),
                "{name}: {whole:?} {alone:?}"
            );
        }
    }

    #[test]
    fn the_agents_table_ends_at_the_next_table_header() {
        let text = "name = \"x\"\n[agents]\nguarded_tools = [\n  \"Bash\",\n]\n[scan]\nx = 1\n";
        assert_eq!(
            agents_table(text),
            "[agents]\nguarded_tools = [\n  \"Bash\",\n]\n"
        );
        assert_eq!(agents_table("a = \"[agents]\"\n[scan]\n"), "");
        assert_eq!(
            agents_table("[agents]\nblock_compaction = true"),
            "[agents]\nblock_compaction = true"
        );
    }
}
