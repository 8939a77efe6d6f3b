//! `cq recheck ID|--all`: rerun every check on stored compactions under the current policy,
//! store each new report (`Store::record_rerun`, which audits a changed one) and say what
//! changed: the verdict, each check's status and code, the report digest.
//!
//! [`recheck`] is the one way a rerun happens: the reviewer's TUI calls it too, so a rerun
//! from the terminal and one from the command line store the same report and receipt.

use std::io::Write;

use anyhow::Context;

use crate::cli::{PolicyArgs, StoreArgs};
use crate::commands::check::Checker;
use crate::commands::record::new_report;
use crate::engine::GateRequest;
use crate::json::{self, Limits, Value};
use crate::store::{ListFilter, Mode, ReportChange, SortKey, Status, Store};

/// Quarantined compactions rechecked per page with `--all`.
const PAGE: u64 = 500;

/// What one rerun did.
#[derive(Debug, Clone)]
pub struct Recheck {
    pub id: String,
    /// The report that was current before the rerun.
    pub before: Value,
    pub before_sha256: String,
    /// The fresh report.
    pub after: Value,
    pub after_sha256: String,
    pub change: ReportChange,
}

impl Recheck {
    /// Whether the report digest changed.
    pub fn changed(&self) -> bool {
        self.before_sha256 != self.after_sha256
    }

    /// What changed, one line each (empty when nothing did).
    pub fn changes(&self) -> Vec<String> {
        changes(&self.before, &self.after)
    }
}

/// Reruns the checks on compaction `id` and stores the new report.
pub fn recheck(store: &Store, checker: &Checker, id: &str) -> anyhow::Result<Recheck> {
    let compaction = store
        .compaction(id)?
        .ok_or_else(|| anyhow::anyhow!("no compaction \"{id}\" in the store"))?;
    let before_row = store
        .reports(id)?
        .pop()
        .ok_or_else(|| anyhow::anyhow!("compaction \"{id}\" has no report"))?;
    let before = parse_report(&before_row.report_json)
        .with_context(|| format!("while reading the stored report of \"{id}\""))?;
    let request = GateRequest::from_json(compaction.request_json.as_bytes())
        .map_err(|e| anyhow::anyhow!("the stored request of \"{id}\" does not parse: {e}"))?;
    let outcome = checker
        .check(&request)
        .with_context(|| format!("while rechecking \"{id}\""))?;
    let report = new_report(&outcome.report, outcome.summary_text.as_deref())?;
    let change = store
        .record_rerun(id, &report)
        .with_context(|| format!("while storing the rerun of \"{id}\""))?;
    Ok(Recheck {
        id: id.to_owned(),
        before,
        before_sha256: compaction.summary.report_sha256,
        after: outcome.report.to_value(),
        after_sha256: report.report_sha256,
        change,
    })
}

/// Parses a stored report (canonical JSON written by `cq`).
pub fn parse_report(text: &str) -> anyhow::Result<Value> {
    let limits = Limits {
        max_bytes: 64 * 1024 * 1024,
        max_depth: 32,
    };
    json::parse(text.as_bytes(), &limits).map_err(|e| anyhow::anyhow!("report is not JSON: {e}"))
}

fn text<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or("")
}

/// `(check, "status code")` for every check of a report.
fn check_states(report: &Value) -> Vec<(String, String)> {
    report
        .get("checks")
        .and_then(Value::as_array)
        .unwrap_or(&[])
        .iter()
        .map(|c| {
            (
                text(c, "check").to_owned(),
                format!("{} {}", text(c, "status"), text(c, "code")),
            )
        })
        .collect()
}

/// What differs between two reports: verdict, each check's status and code, the digest.
pub fn changes(before: &Value, after: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let verdict = |r: &Value| {
        format!(
            "{} {}/{}",
            text(r, "verdict"),
            text(r, "outcome"),
            text(r, "finding_status")
        )
    };
    let (v0, v1) = (verdict(before), verdict(after));
    if v0 != v1 {
        out.push(format!("verdict: {v0} -> {v1}"));
    }
    if text(before, "policy_sha256") != text(after, "policy_sha256") {
        out.push(format!(
            "policy: {} -> {}",
            short(text(before, "policy_sha256")),
            short(text(after, "policy_sha256"))
        ));
    }
    let old = check_states(before);
    let new = check_states(after);
    for (check, state) in &new {
        match old.iter().find(|(c, _)| c == check) {
            Some((_, was)) if was == state => {}
            Some((_, was)) => out.push(format!("check {check}: {was} -> {state}")),
            None => out.push(format!("check {check}: (none) -> {state}")),
        }
    }
    for (check, was) in &old {
        if !new.iter().any(|(c, _)| c == check) {
            out.push(format!("check {check}: {was} -> (none)"));
        }
    }
    let (d0, d1) = (
        json::canonical_sha256(before).unwrap_or_default(),
        json::canonical_sha256(after).unwrap_or_default(),
    );
    if d0 != d1 {
        out.push(format!("report: {} -> {}", short(&d0), short(&d1)));
    }
    out
}

fn short(sha: &str) -> &str {
    sha.get(..16).unwrap_or(sha)
}

/// A JSON value one field per line, keys sorted (for diffs of reports).
pub fn pretty(value: &Value) -> String {
    let mut out = String::new();
    write_pretty(value, 0, &mut out);
    out
}

fn write_pretty(value: &Value, depth: usize, out: &mut String) {
    let pad = |d: usize| "  ".repeat(d);
    match value {
        Value::Array(items) if !items.is_empty() => {
            out.push_str("[\n");
            for (i, item) in items.iter().enumerate() {
                out.push_str(&pad(depth + 1));
                write_pretty(item, depth + 1, out);
                out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
            }
            out.push_str(&pad(depth));
            out.push(']');
        }
        Value::Object(map) if !map.is_empty() => {
            out.push_str("{\n");
            for (i, (key, item)) in map.iter().enumerate() {
                out.push_str(&pad(depth + 1));
                out.push_str(&leaf(&Value::from(key.as_str())));
                out.push_str(": ");
                write_pretty(item, depth + 1, out);
                out.push_str(if i + 1 < map.len() { ",\n" } else { "\n" });
            }
            out.push_str(&pad(depth));
            out.push('}');
        }
        other => out.push_str(&leaf(other)),
    }
}

fn leaf(value: &Value) -> String {
    json::canonical(value).unwrap_or_else(|_| "?".into())
}

/// `cq recheck ID|--all`.
pub fn run(
    id: Option<&str>,
    all: bool,
    store: &StoreArgs,
    policy: &PolicyArgs,
) -> anyhow::Result<u8> {
    let store = super::queue::open(store, Mode::ReadWrite)?;
    let checker = Checker::new(policy)?;
    let mut out = std::io::stdout().lock();
    let ids = match (id, all) {
        (Some(id), false) => vec![id.to_owned()],
        (None, true) => quarantined_ids(&store)?,
        _ => anyhow::bail!("give a compaction id or --all"),
    };
    let mut changed = 0usize;
    for id in &ids {
        let done = recheck(&store, &checker, id)?;
        let lines = done.changes();
        if done.changed() {
            changed += 1;
            writeln!(out, "{id}: changed")?;
        } else {
            writeln!(
                out,
                "{id}: unchanged (report {})",
                short(&done.after_sha256)
            )?;
        }
        for line in lines {
            writeln!(out, "  {}", crate::sanitize::sanitize(&line).to_plain())?;
        }
    }
    writeln!(out, "rechecked {}, {changed} changed", ids.len())?;
    Ok(0)
}

/// Every quarantined compaction id, read page by page.
fn quarantined_ids(store: &Store) -> anyhow::Result<Vec<String>> {
    let filter = ListFilter {
        status: Some(Status::Quarantined),
        ..ListFilter::default()
    };
    let mut ids = Vec::new();
    loop {
        let page = store.list(&filter, SortKey::OldestFirst, ids.len() as u64, PAGE)?;
        let n = page.len();
        ids.extend(page.into_iter().map(|c| c.id));
        if (n as u64) < PAGE {
            return Ok(ids);
        }
    }
}
