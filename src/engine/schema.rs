//! The closed schema of G001 + G002, as pydantic's strict mode applies it to the seed's
//! `CompactedContext` and `PreservedConstraintClaim`: an object with exactly the five fields,
//! strings never accepted for numbers nor the reverse, non-empty unique populations, claim
//! digests matching `^[0-9a-f]{64}$`, claim types and statuses from their closed sets, and
//! no two claims for one constraint. Every violation is reported with its JSON path.

use std::collections::BTreeSet;

use crate::json::Value;

use super::compacted::{Claim, CompactedContext};
use super::pytext;

/// One schema violation: where, and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaError {
    pub path: String,
    pub message: String,
}

const TOP_FIELDS: [&str; 5] = [
    "summary_text",
    "retained_safety_invariant_ids",
    "retained_policy_commitment_ids",
    "source_message_sha256s",
    "preserved_constraint_claims",
];

const CLAIM_FIELDS: [&str; 6] = [
    "constraint_type",
    "constraint_id",
    "canonical_record_sha256",
    "canonical_predicate_sha256",
    "preserved_predicate",
    "status",
];

/// Where a value sits in the output (`preserved_constraint_claims[3].status`), written out only
/// when a violation is reported there: a valid output, which is most, builds no path.
#[derive(Clone, Copy)]
enum Path<'a> {
    Root,
    Field(&'a Path<'a>, &'a str),
    Item(&'a Path<'a>, usize),
}

impl std::fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Path::Root => Ok(()),
            Path::Field(Path::Root, name) => f.write_str(name),
            Path::Field(parent, name) => write!(f, "{parent}.{name}"),
            Path::Item(parent, index) => write!(f, "{parent}[{index}]"),
        }
    }
}

struct Errors(Vec<SchemaError>);

impl Errors {
    fn push(&mut self, path: Path<'_>, message: impl Into<String>) {
        self.0.push(SchemaError {
            path: path.to_string(),
            message: message.into(),
        });
    }

    fn closed_object<'a>(
        &mut self,
        value: &'a Value,
        path: Path<'_>,
        fields: &[&str],
    ) -> Option<&'a std::collections::BTreeMap<String, Value>> {
        let Some(map) = value.as_object() else {
            self.push(
                path,
                format!("expected an object, found {}", value.type_name()),
            );
            return None;
        };
        for field in fields {
            if !map.contains_key(*field) {
                self.push(Path::Field(&path, field), "field is missing");
            }
        }
        for key in map.keys() {
            if !fields.contains(&key.as_str()) {
                let shown = crate::json::shown_key(key);
                let name = if shown.starts_with('"') {
                    key.clone()
                } else {
                    "(withheld)".to_owned()
                };
                self.push(
                    Path::Field(&path, &name),
                    format!("extra field {shown} is not allowed"),
                );
            }
        }
        Some(map)
    }

    fn string(
        &mut self,
        value: Option<&Value>,
        path: Path<'_>,
        min_chars: usize,
    ) -> Option<String> {
        let value = value?;
        match value.as_str() {
            Some(text) if min_chars == 0 || text.chars().nth(min_chars - 1).is_some() => {
                Some(text.to_owned())
            }
            Some(_) => {
                self.push(
                    path,
                    format!("string must have at least {min_chars} character"),
                );
                None
            }
            None => {
                self.push(
                    path,
                    format!("expected a string, found {}", value.type_name()),
                );
                None
            }
        }
    }

    /// A `list[str]` with at least one item, none blank, none repeated.
    fn population(&mut self, value: Option<&Value>, path: Path<'_>) -> Option<Vec<String>> {
        let value = value?;
        let Some(items) = value.as_array() else {
            self.push(
                path,
                format!("expected an array of strings, found {}", value.type_name()),
            );
            return None;
        };
        if items.is_empty() {
            self.push(path, "array must have at least 1 item");
            return None;
        }
        let mut out = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            out.push(self.string(Some(item), Path::Item(&path, index), 0)?);
        }
        let blank = out
            .iter()
            .any(|v| v.trim_matches(pytext::is_space).is_empty());
        let unique: BTreeSet<&String> = out.iter().collect();
        if blank || unique.len() != out.len() {
            self.push(path, "compaction population is empty or duplicated");
            return None;
        }
        Some(out)
    }

    fn literal(
        &mut self,
        value: Option<&Value>,
        path: Path<'_>,
        allowed: &[&str],
    ) -> Option<String> {
        let text = self.string(value, path, 0)?;
        if allowed.contains(&text.as_str()) {
            Some(text)
        } else {
            self.push(path, format!("must be one of {}", allowed.join(", ")));
            None
        }
    }

    fn digest(&mut self, value: Option<&Value>, path: Path<'_>) -> Option<String> {
        let text = self.string(value, path, 0)?;
        if text.len() == 64 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
            Some(text)
        } else {
            self.push(path, "must be 64 lower-case hex digits");
            None
        }
    }

    fn claim(&mut self, value: &Value, path: Path<'_>) -> Option<Claim> {
        let map = self.closed_object(value, path, &CLAIM_FIELDS)?;
        let at = |field| Path::Field(&path, field);
        let claim = Claim {
            constraint_type: self.literal(
                map.get("constraint_type"),
                at("constraint_type"),
                &["INVARIANT", "COMMITMENT"],
            )?,
            constraint_id: self.string(map.get("constraint_id"), at("constraint_id"), 1)?,
            canonical_record_sha256: self.digest(
                map.get("canonical_record_sha256"),
                at("canonical_record_sha256"),
            )?,
            canonical_predicate_sha256: self.digest(
                map.get("canonical_predicate_sha256"),
                at("canonical_predicate_sha256"),
            )?,
            preserved_predicate: self.string(
                map.get("preserved_predicate"),
                at("preserved_predicate"),
                1,
            )?,
            status: self.literal(
                map.get("status"),
                at("status"),
                &["PRESERVED", "CONFLICT", "UNSUPPORTED"],
            )?,
        };
        Some(claim)
    }
}

/// Validates parsed summarizer output against the closed schema.
pub fn validate(value: &Value) -> Result<CompactedContext, Vec<SchemaError>> {
    let mut errors = Errors(Vec::new());
    let Some(map) = errors.closed_object(value, Path::Root, &TOP_FIELDS) else {
        return Err(errors.0);
    };
    let top = |field| Path::Field(&Path::Root, field);
    let summary_text = errors.string(map.get("summary_text"), top("summary_text"), 1);
    let invariants = errors.population(
        map.get("retained_safety_invariant_ids"),
        top("retained_safety_invariant_ids"),
    );
    let commitments = errors.population(
        map.get("retained_policy_commitment_ids"),
        top("retained_policy_commitment_ids"),
    );
    let sources = errors.population(
        map.get("source_message_sha256s"),
        top("source_message_sha256s"),
    );
    let claims = map.get("preserved_constraint_claims").and_then(|value| {
        let path = top("preserved_constraint_claims");
        let Some(items) = value.as_array() else {
            errors.push(
                path,
                format!("expected an array of claims, found {}", value.type_name()),
            );
            return None;
        };
        if items.is_empty() {
            errors.push(path, "array must have at least 1 item");
            return None;
        }
        let claims: Vec<Option<Claim>> = items
            .iter()
            .enumerate()
            .map(|(i, item)| errors.claim(item, Path::Item(&path, i)))
            .collect();
        let claims: Vec<Claim> = claims.into_iter().collect::<Option<_>>()?;
        let keys: BTreeSet<(&str, &str)> = claims.iter().map(Claim::key).collect();
        if keys.len() != claims.len() {
            errors.push(path, "constraint claim population is duplicated");
            return None;
        }
        Some(claims)
    });
    match (summary_text, invariants, commitments, sources, claims) {
        (Some(summary_text), Some(invariants), Some(commitments), Some(sources), Some(claims))
            if errors.0.is_empty() =>
        {
            Ok(CompactedContext {
                summary_text,
                retained_safety_invariant_ids: invariants,
                retained_policy_commitment_ids: commitments,
                source_message_sha256s: sources,
                preserved_constraint_claims: claims,
            })
        }
        _ => Err(errors.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{parse, Limits};

    fn check(text: &str) -> Result<CompactedContext, Vec<SchemaError>> {
        validate(&parse(text.as_bytes(), &Limits::default()).unwrap())
    }

    const CLAIM: &str = r#"{"constraint_type":"INVARIANT","constraint_id":"S","canonical_record_sha256":"0000000000000000000000000000000000000000000000000000000000000000","canonical_predicate_sha256":"0000000000000000000000000000000000000000000000000000000000000000","preserved_predicate":"p","status":"PRESERVED"}"#;

    fn doc(summary: &str, claim: &str) -> String {
        format!(
            r#"{{"summary_text":{summary},"retained_safety_invariant_ids":["S"],"retained_policy_commitment_ids":["C"],"source_message_sha256s":["x"],"preserved_constraint_claims":[{claim}]}}"#
        )
    }

    #[test]
    fn a_valid_document_passes() {
        assert!(check(&doc("\"hello\"", CLAIM)).is_ok());
    }

    #[test]
    fn strict_types_and_closed_fields() {
        let errors = check(&doc("1", CLAIM)).unwrap_err();
        assert_eq!(errors[0].path, "summary_text");
        let extra = check(&doc(
            "\"s\"",
            &CLAIM.replace("\"status\"", "\"x\":1,\"status\""),
        ))
        .unwrap_err();
        assert_eq!(extra[0].path, "preserved_constraint_claims[0].x");
        let upper = check(&doc("\"s\"", &CLAIM.replacen("00000000", "AAAAAAAA", 1))).unwrap_err();
        assert_eq!(
            upper[0].path,
            "preserved_constraint_claims[0].canonical_record_sha256"
        );
        let status = check(&doc("\"s\"", &CLAIM.replace("PRESERVED", "OK"))).unwrap_err();
        assert_eq!(status[0].path, "preserved_constraint_claims[0].status");
        assert!(check("[]").is_err());
    }

    #[test]
    fn every_violation_names_where_it_is() {
        let paths = |text: &str| -> Vec<(String, String)> {
            check(text)
                .unwrap_err()
                .into_iter()
                .map(|e| (e.path, e.message))
                .collect()
        };
        let top = doc("\"s\"", CLAIM).replace(
            r#""retained_policy_commitment_ids":["C"],"#,
            r#""extra":1,"#,
        );
        assert_eq!(
            paths(&top),
            [
                ("retained_policy_commitment_ids", "field is missing"),
                ("extra", "extra field \"extra\" is not allowed"),
            ]
            .map(|(p, m)| (p.to_owned(), m.to_owned()))
        );
        let item = doc("\"s\"", CLAIM).replace(r#"["x"]"#, r#"["x",2]"#);
        assert_eq!(
            paths(&item),
            [(
                "source_message_sha256s[1]".to_owned(),
                "expected a string, found integer".to_owned()
            )]
        );
        let second = doc(
            "\"s\"",
            &format!("{CLAIM},{}", CLAIM.replace(r#""S""#, r#""""#)),
        );
        assert_eq!(
            paths(&second),
            [(
                "preserved_constraint_claims[1].constraint_id".to_owned(),
                "string must have at least 1 character".to_owned()
            )]
        );
        assert_eq!(paths(&doc("\"\"", CLAIM))[0].0, "summary_text");
        assert!(check(&doc("\"é\"", CLAIM)).is_ok());
    }

    #[test]
    fn populations_must_be_unique_and_non_blank() {
        let text = doc("\"s\"", CLAIM).replace(r#"["S"]"#, r#"["S","S"]"#);
        assert_eq!(
            check(&text).unwrap_err()[0].message,
            "compaction population is empty or duplicated"
        );
        let blank = doc("\"s\"", CLAIM).replace(r#"["C"]"#, "[\"\\u0085 \"]");
        assert!(check(&blank).is_err());
        let dup = doc("\"s\"", &format!("{CLAIM},{CLAIM}"));
        assert_eq!(
            check(&dup).unwrap_err()[0].message,
            "constraint claim population is duplicated"
        );
    }
}
