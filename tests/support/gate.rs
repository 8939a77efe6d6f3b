//! Running requests through the real gate (`cq check`'s checker, the `default` policy, the
//! real scanner) and reading the report: which checks failed and with what findings.
#![allow(dead_code)]

use cq::engine::gate::GateOutcome;
use cq::engine::report::{CheckResult, Finding, Status};
use cq::engine::GateRequest;
use cq::json::{self, object, Limits, Value};
use cq::policy::Policy;
use cq::service::Checker;

pub fn checker() -> &'static Checker {
    static CHECKER: std::sync::OnceLock<Checker> = std::sync::OnceLock::new();
    CHECKER.get_or_init(|| Checker::new(Policy::builtin("default").unwrap()).unwrap())
}

pub fn run(request: &Value) -> GateOutcome {
    let request = GateRequest::from_value(request).unwrap();
    checker().check(&request).unwrap()
}

/// A demo scenario's request (`assets/demo/NAME`), as its document.
pub fn demo_request(name: &str) -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/demo")
        .join(name);
    json::parse(&std::fs::read(path).unwrap(), &Limits::default()).unwrap()
}

/// The summary text of a request's summarizer output.
pub fn summary_of(request: &Value) -> String {
    let raw = request
        .get("summarizer")
        .and_then(|s| s.get("raw_output"))
        .and_then(Value::as_str)
        .unwrap();
    let output = json::parse(raw.as_bytes(), &Limits::default()).unwrap();
    output
        .get("summary_text")
        .and_then(Value::as_str)
        .unwrap()
        .to_owned()
}

/// The request with its summarizer output's summary replaced; everything else (digests,
/// claims, pinned constraints) stays as it was.
pub fn with_summary(request: &Value, summary: &str) -> Value {
    let mut request = request.clone();
    let Value::Object(top) = &mut request else {
        panic!("not an object")
    };
    let Some(Value::Object(summarizer)) = top.get_mut("summarizer") else {
        panic!("no summarizer")
    };
    let raw = summarizer
        .get("raw_output")
        .and_then(Value::as_str)
        .unwrap();
    let mut output = json::parse(raw.as_bytes(), &Limits::default()).unwrap();
    if let Value::Object(fields) = &mut output {
        fields.insert("summary_text".into(), Value::from(summary));
    }
    summarizer.insert(
        "raw_output".into(),
        Value::from(json::canonical(&output).unwrap()),
    );
    request
}

pub fn check<'a>(o: &'a GateOutcome, name: &str) -> &'a CheckResult {
    o.report.checks.iter().find(|c| c.check == name).unwrap()
}

pub fn status(o: &GateOutcome, name: &str) -> Status {
    check(o, name).status
}

pub fn findings<'a>(o: &'a GateOutcome, name: &str) -> &'a [Finding] {
    &check(o, name).findings
}

/// The names of the checks that did not pass, for assertion messages.
pub fn failed(o: &GateOutcome) -> Vec<String> {
    o.report
        .failures()
        .map(|c| format!("{}:{}", c.check, c.code))
        .collect()
}

/// Adds a pinned constraint to a request.
pub fn add_pin(request: &mut Value, id: &str, text: &str, pattern: &str) {
    if let Value::Object(top) = request {
        if let Some(Value::Array(pins)) = top.get_mut("pinned_constraints") {
            pins.push(object([
                ("id", Value::from(id)),
                ("severity", Value::from("critical")),
                ("text", Value::from(text)),
                (
                    "forbidden_patterns",
                    Value::Array(vec![Value::from(pattern)]),
                ),
            ]));
        }
    }
}

/// The byte range of the last occurrence of `token` in `summary`.
pub fn range_of(summary: &str, token: &str) -> std::ops::Range<usize> {
    let at = summary.rfind(token).unwrap();
    at..at + token.len()
}

/// The spans of `check`'s findings that `keep` selects and that lie on the bytes of the
/// last `token` in `summary`.
pub fn spans_on(
    summary: &str,
    o: &GateOutcome,
    check: &str,
    token: &str,
    keep: impl Fn(&Finding) -> bool,
) -> Vec<std::ops::Range<usize>> {
    let slot = range_of(summary, token);
    findings(o, check)
        .iter()
        .filter(|f| keep(f))
        .filter_map(|f| f.span.clone())
        .filter(|s| slot.start <= s.start && s.end <= slot.end && s.start < s.end)
        .collect()
}
