//! Rerunning the checks on a stored compaction under the policy it was checked under
//! ([`policies`]): the one way a rerun happens, whether from `cq recheck` or the reviewer's
//! `r`, so both store the same report and receipt, and both say which policy it ran under.
//! The store audits a rerun that changed the report ([`Store::record_rerun`]); what changed
//! is said check by check.

pub mod policies;

use anyhow::Context;

use crate::engine::report::{Report, SealedReport};
use crate::engine::GateRequest;
use crate::json::{self, Value};
use crate::store::{Direction, ListFilter, QueueKey, ReportChange, Seek, SortKey, Status, Store};

use super::checker::Checker;
use super::record::new_report;

pub use policies::{NamedPolicy, Pick, Policies, PolicyNeeded, RerunPolicy};

/// Quarantined compactions read per page by [`quarantined_ids`].
const PAGE: u64 = 500;

/// What one rerun did.
#[derive(Debug, Clone)]
pub struct Recheck {
    pub id: String,
    /// The report that was current before the rerun.
    pub before: SealedReport,
    /// The fresh report.
    pub after: SealedReport,
    pub change: ReportChange,
    /// The policy it ran under.
    pub policy: RerunPolicy,
}

impl Recheck {
    /// Whether the report digest changed.
    pub fn changed(&self) -> bool {
        self.before.sha256 != self.after.sha256
    }

    /// What changed, one line each (empty when nothing did).
    pub fn changes(&self) -> Vec<String> {
        changes(&self.before, &self.after)
    }
}

/// The current report of compaction `id`, read back and checked against its digest.
pub fn current_report(store: &Store, id: &str) -> anyhow::Result<SealedReport> {
    let compaction = store
        .compaction(id)?
        .ok_or_else(|| anyhow::anyhow!("no compaction \"{id}\" in the store"))?;
    let report_json = current_report_json(store, id, &compaction.summary.report_sha256)?;
    read_report(id, &report_json, &compaction.summary.report_sha256)
}

/// The text of the report of compaction `id` whose digest is `current`.
fn current_report_json(store: &Store, id: &str, current: &str) -> anyhow::Result<String> {
    store
        .reports(id)?
        .into_iter()
        .rev()
        .find(|r| r.report_sha256 == current)
        .map(|r| r.report_json)
        .ok_or_else(|| anyhow::anyhow!("compaction \"{id}\" has no current report"))
}

/// A stored report's text read back and checked against the digest stored with it.
fn read_report(id: &str, report_json: &str, sha256: &str) -> anyhow::Result<SealedReport> {
    let report = Report::read(report_json)
        .with_context(|| format!("while reading the stored report of \"{id}\""))?;
    if report.sha256 != sha256 {
        anyhow::bail!(
            "the stored report of \"{id}\" does not match its digest: run `cq audit verify`"
        );
    }
    Ok(report)
}

/// What a rerun reads from the store, before it is parsed.
#[derive(Debug, Clone)]
pub struct Stored {
    pub id: String,
    request_json: String,
    report_json: String,
    report_sha256: String,
}

/// The stored request and current report of compaction `id`.
pub fn fetch(store: &Store, id: &str) -> anyhow::Result<Stored> {
    let compaction = store
        .compaction(id)?
        .ok_or_else(|| anyhow::anyhow!("no compaction \"{id}\" in the store"))?;
    let report_sha256 = compaction.summary.report_sha256;
    let report_json = current_report_json(store, id, &report_sha256)?;
    Ok(Stored {
        id: id.to_owned(),
        request_json: compaction.request_json,
        report_json,
        report_sha256,
    })
}

/// A stored compaction's current report and request, parsed (no store access: bulk reruns do
/// this on many threads).
#[derive(Debug)]
pub struct Parsed {
    pub id: String,
    before: SealedReport,
    /// The request, or why it does not parse (told once the policy is picked).
    request: anyhow::Result<GateRequest>,
}

pub fn parse(stored: &Stored) -> anyhow::Result<Parsed> {
    let id = &stored.id;
    let before = read_report(id, &stored.report_json, &stored.report_sha256)?;
    let request = GateRequest::from_json(stored.request_json.as_bytes())
        .map_err(|e| anyhow::anyhow!("the stored request of \"{id}\" does not parse: {e}"));
    Ok(Parsed {
        id: id.clone(),
        before,
        request,
    })
}

/// Picks the policy a parsed compaction reruns under: [`PolicyNeeded`] when the policy it was
/// checked under is not at hand.
pub fn pick(given: &Checker, policies: &mut Policies, parsed: Parsed) -> anyhow::Result<Pending> {
    let (pick, policy) = policies.pick(given, &parsed.id, &parsed.before)?;
    Ok(Pending {
        id: parsed.id,
        request: parsed.request?,
        before: parsed.before,
        pick,
        policy,
    })
}

/// What a rerun starts from: the stored request, the report current before it, and the
/// policy it runs under.
#[derive(Debug, Clone)]
pub struct Pending {
    pub id: String,
    pub request: GateRequest,
    pub before: SealedReport,
    pub pick: Pick,
    pub policy: RerunPolicy,
}

/// Reads what rerunning compaction `id` needs and picks its policy: [`PolicyNeeded`] when the
/// policy it was checked under is not at hand.
pub fn prepare(
    store: &Store,
    given: &Checker,
    policies: &mut Policies,
    id: &str,
) -> anyhow::Result<Pending> {
    let stored = fetch(store, id)?;
    pick(given, policies, parse(&stored)?)
}

/// Runs the checks on a prepared rerun (no store access: bulk reruns do this on many threads).
pub fn run(
    policies: &Policies,
    given: &Checker,
    pending: &Pending,
) -> anyhow::Result<crate::engine::gate::GateOutcome> {
    policies
        .checker(given, pending.pick)?
        .check(&pending.request)
        .with_context(|| format!("while rechecking \"{}\"", pending.id))
}

/// Stores a rerun's report; what it changed.
pub fn finish(
    store: &Store,
    policies: &Policies,
    given: &Checker,
    pending: Pending,
    outcome: crate::engine::gate::GateOutcome,
) -> anyhow::Result<Recheck> {
    let mut done = finish_all(store, policies, given, vec![(pending, outcome)])?;
    done.pop()
        .ok_or_else(|| anyhow::anyhow!("a rerun was not stored"))
}

/// Stores the reports of many reruns in one transaction (all or none); what each changed, in
/// order.
pub fn finish_all(
    store: &Store,
    policies: &Policies,
    given: &Checker,
    done: Vec<(Pending, crate::engine::gate::GateOutcome)>,
) -> anyhow::Result<Vec<Recheck>> {
    let mut reports = Vec::with_capacity(done.len());
    for (pending, outcome) in &done {
        let checker = policies.checker(given, pending.pick)?;
        reports.push(new_report(
            &outcome.report,
            outcome.summary_text.as_deref(),
            checker.release_rules(),
        ));
    }
    let reruns: Vec<(&str, &crate::store::NewReport)> = done
        .iter()
        .zip(&reports)
        .map(|((pending, _), report)| (pending.id.as_str(), report))
        .collect();
    let changes = store
        .record_reruns(&reruns)
        .with_context(|| match &done[..] {
            [(one, _)] => format!("while storing the rerun of \"{}\"", one.id),
            _ => format!("while storing {} reruns", done.len()),
        })?;
    Ok(done
        .into_iter()
        .zip(changes)
        .map(|((pending, outcome), change)| Recheck {
            id: pending.id,
            before: pending.before,
            after: outcome.report,
            change,
            policy: pending.policy,
        })
        .collect())
}

/// Reruns the checks on compaction `id` under the policy it was checked under (or the given
/// one, when `policies` overrides) and stores the new report.
pub fn recheck(
    store: &Store,
    given: &Checker,
    policies: &mut Policies,
    id: &str,
) -> anyhow::Result<Recheck> {
    let pending = prepare(store, given, policies, id)?;
    let outcome = run(policies, given, &pending)?;
    finish(store, policies, given, pending, outcome)
}

/// Every quarantined compaction id, oldest first, read page by page along the queue's index
/// (each page starts after the last row of the one before, so a deep page costs what the
/// first does).
pub fn quarantined_ids(store: &Store) -> anyhow::Result<Vec<String>> {
    let filter = ListFilter {
        status: Some(Status::Quarantined),
        ..ListFilter::default()
    };
    let sort = SortKey::OldestFirst;
    let mut ids = Vec::new();
    let mut last: Option<QueueKey> = None;
    loop {
        let seek = Seek {
            after: last.as_ref(),
            direction: Direction::Forward,
            skip: 0,
            limit: PAGE,
        };
        let page = store.page(&filter, sort, seek)?;
        let Some(end) = page.last() else {
            return Ok(ids);
        };
        last = Some(QueueKey::of(end, sort));
        let n = page.len();
        ids.extend(page.into_iter().map(|c| c.id));
        if (n as u64) < PAGE {
            return Ok(ids);
        }
    }
}

/// What differs between two reports: the checks whose status or code changed first, then the
/// verdict, the policy and the digest.
pub fn changes(before: &SealedReport, after: &SealedReport) -> Vec<String> {
    let state = |c: &crate::engine::report::CheckResult| format!("{} {}", c.status, c.code);
    let mut out = Vec::new();
    for check in &after.checks {
        match before.checks.iter().find(|c| c.check == check.check) {
            Some(was) if state(was) == state(check) => {}
            Some(was) => out.push(format!(
                "check {}: {} -> {}",
                check.check,
                state(was),
                state(check)
            )),
            None => out.push(format!("check {}: (none) -> {}", check.check, state(check))),
        }
    }
    for was in &before.checks {
        if !after.checks.iter().any(|c| c.check == was.check) {
            out.push(format!("check {}: {} -> (none)", was.check, state(was)));
        }
    }
    let verdict = |r: &Report| format!("{} {}/{}", r.verdict, r.outcome, r.finding_status);
    if verdict(before) != verdict(after) {
        out.push(format!(
            "verdict: {} -> {}",
            verdict(before),
            verdict(after)
        ));
    }
    if before.policy_sha256 != after.policy_sha256 {
        out.push(format!(
            "policy: {} -> {}",
            short(&before.policy_sha256),
            short(&after.policy_sha256)
        ));
    }
    if before.sha256 != after.sha256 {
        out.push(format!(
            "report: {} -> {}",
            short(&before.sha256),
            short(&after.sha256)
        ));
    }
    out
}

/// The first 16 characters of a digest.
pub fn short(sha: &str) -> &str {
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
