//! Reading a `cq.request.v1` document: strictly parsed, closed objects, strict types. Every
//! error names the JSON path, so a runtime developer sees what to fix.

use crate::json::{self, Limits, Value};
use crate::policy::PinnedConstraint;

use super::{GateRequest, SourceMessage, SummarizerOutput};

/// The largest request `cq` reads (source turns included).
pub const MAX_REQUEST_BYTES: usize = 64 * 1024 * 1024;

fn closed<'a>(
    value: &'a Value,
    path: &str,
    required: &[&str],
    optional: &[&str],
) -> Result<&'a std::collections::BTreeMap<String, Value>, String> {
    let map = value
        .as_object()
        .ok_or_else(|| format!("{path}: expected an object, found {}", value.type_name()))?;
    if let Some(missing) = required.iter().find(|k| !map.contains_key(**k)) {
        return Err(format!("{path}.{missing}: field is missing"));
    }
    if let Some(extra) = map
        .keys()
        .find(|k| !required.contains(&k.as_str()) && !optional.contains(&k.as_str()))
    {
        return Err(format!(
            "{path}: unknown field \"{}\" (allowed: {})",
            crate::sanitize::excerpt(extra, 40),
            [required, optional].concat().join(", ")
        ));
    }
    Ok(map)
}

fn string(
    map: &std::collections::BTreeMap<String, Value>,
    path: &str,
    key: &str,
) -> Result<String, String> {
    let value = &map[key];
    value.as_str().map(str::to_owned).ok_or_else(|| {
        format!(
            "{path}.{key}: expected a string, found {}",
            value.type_name()
        )
    })
}

fn strings(value: &Value, path: &str) -> Result<Vec<String>, String> {
    let items = value.as_array().ok_or_else(|| {
        format!(
            "{path}: expected an array of strings, found {}",
            value.type_name()
        )
    })?;
    items
        .iter()
        .enumerate()
        .map(|(i, v)| {
            v.as_str()
                .map(str::to_owned)
                .ok_or_else(|| format!("{path}[{i}]: expected a string, found {}", v.type_name()))
        })
        .collect()
}

fn array<'a>(value: &'a Value, path: &str) -> Result<&'a [Value], String> {
    value
        .as_array()
        .ok_or_else(|| format!("{path}: expected an array, found {}", value.type_name()))
}

impl GateRequest {
    /// Parses request bytes; errors say what is wrong and where.
    pub fn from_json(bytes: &[u8]) -> Result<GateRequest, String> {
        let limits = Limits {
            max_bytes: MAX_REQUEST_BYTES,
            max_depth: 16,
        };
        let value =
            json::parse(bytes, &limits).map_err(|e| format!("request is not strict JSON: {e}"))?;
        GateRequest::from_value(&value)
    }

    pub fn from_value(value: &Value) -> Result<GateRequest, String> {
        let fields = [
            "schema_version",
            "tenant_id",
            "task_id",
            "messages",
            "expected_invariant_ids",
            "expected_commitment_ids",
            "pinned_constraints",
            "summarizer",
        ];
        let map = closed(value, "request", &fields, &[])?;
        let version = string(map, "request", "schema_version")?;
        if version != "cq.request.v1" {
            return Err(format!(
                "request.schema_version: \"{}\" is not supported (expected \"cq.request.v1\")",
                crate::sanitize::excerpt(&version, 40)
            ));
        }
        let messages = messages(&map["messages"])?;
        let pinned = pinned(&map["pinned_constraints"])?;
        let summarizer = closed(
            &map["summarizer"],
            "request.summarizer",
            &["model_revision", "raw_output"],
            &["error"],
        )?;
        let output = output(summarizer)?;
        Ok(GateRequest {
            tenant_id: string(map, "request", "tenant_id")?,
            task_id: string(map, "request", "task_id")?,
            messages,
            expected_invariant_ids: strings(
                &map["expected_invariant_ids"],
                "request.expected_invariant_ids",
            )?,
            expected_commitment_ids: strings(
                &map["expected_commitment_ids"],
                "request.expected_commitment_ids",
            )?,
            pinned_constraints: pinned,
            model_revision: string(summarizer, "request.summarizer", "model_revision")?,
            summarizer: output,
        })
    }
}

fn messages(value: &Value) -> Result<Vec<SourceMessage>, String> {
    array(value, "request.messages")?
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let path = format!("request.messages[{i}]");
            let m = closed(m, &path, &["message_id", "role", "content"], &[])?;
            Ok(SourceMessage {
                message_id: string(m, &path, "message_id")?,
                role: string(m, &path, "role")?,
                content: string(m, &path, "content")?,
            })
        })
        .collect()
}

fn pinned(value: &Value) -> Result<Vec<PinnedConstraint>, String> {
    array(value, "request.pinned_constraints")?
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let path = format!("request.pinned_constraints[{i}]");
            let p = closed(
                p,
                &path,
                &["id", "severity", "text"],
                &["forbidden_patterns"],
            )?;
            Ok(PinnedConstraint {
                id: string(p, &path, "id")?,
                severity: string(p, &path, "severity")?,
                text: string(p, &path, "text")?,
                forbidden_patterns: match p.get("forbidden_patterns") {
                    Some(v) => strings(v, &format!("{path}.forbidden_patterns"))?,
                    None => Vec::new(),
                },
            })
        })
        .collect()
}

fn output(
    summarizer: &std::collections::BTreeMap<String, Value>,
) -> Result<SummarizerOutput, String> {
    Ok(match (&summarizer["raw_output"], summarizer.get("error")) {
        (Value::String(raw), None) => SummarizerOutput::Raw(raw.clone()),
        (Value::Null, Some(Value::String(why))) => SummarizerOutput::Failed(why.clone()),
        (Value::Null, _) => SummarizerOutput::Failed("the summarizer returned nothing".into()),
        (Value::String(_), Some(_)) => {
            return Err("request.summarizer: give raw_output or error, not both".into());
        }
        (other, _) => {
            return Err(format!(
                "request.summarizer.raw_output: expected the summarizer's JSON output as a string (or null with an error), found {}",
                other.type_name()
            ))
        }
    })
}
