//! `cq check [REQUEST|-] [--policy NAME|FILE] [--json] [--store [DB]]`: run the gate on one
//! request. Prints the verdict (JSON with `--json`, for runtimes; a sanitized summary for a
//! person otherwise) and exits 0 accepted, 1 quarantined; a refused request is an error
//! (exit 2) that says what is wrong and where. With `--store` the verdict is recorded.

use std::io::Write;

use anyhow::Context;

use crate::cli::CheckArgs;
use crate::engine::gate::{AuditSink, GateOutcome};
use crate::engine::{GateRequest, PolicyEngine};
use crate::json::{self, object, Value};
use crate::sanitize::sanitize;
use crate::scan::backend::ScannerBackend;
use crate::scan::Scanner;

use super::{input, policy};

/// The seed-format audit events, kept in memory for one check.
#[derive(Debug, Default)]
pub struct MemoryAudit {
    pub events: Vec<Value>,
}

impl AuditSink for MemoryAudit {
    fn append(&mut self, event: &Value) -> Result<String, String> {
        self.events.push(event.clone());
        Ok((self.events.len() - 1).to_string())
    }

    fn read(&self, id: &str) -> Result<Value, String> {
        let index: usize = id.parse().map_err(|_| format!("bad audit id \"{id}\""))?;
        self.events
            .get(index)
            .cloned()
            .ok_or_else(|| format!("no audit event \"{id}\""))
    }
}

/// A policy and a scanner, ready to check requests.
pub struct Checker {
    pub engine: PolicyEngine,
    pub backend: ScannerBackend,
}

impl Checker {
    pub fn new(args: &crate::cli::PolicyArgs) -> anyhow::Result<Checker> {
        let scanner = Scanner::builtin().context("while loading the built-in scan rules")?;
        let engine = PolicyEngine::new(policy::resolve(args)?, &scanner.rules_sha256())?;
        Ok(Checker {
            engine,
            backend: ScannerBackend::new(scanner),
        })
    }

    pub fn scanner(&self) -> &Scanner {
        self.backend.scanner()
    }

    pub fn check(&self, request: &GateRequest) -> anyhow::Result<GateOutcome> {
        let mut audit = MemoryAudit::default();
        Ok(self
            .engine
            .check(request, &self.backend, self.backend.scanner(), &mut audit)?)
    }
}

/// The verdict object a runtime reads.
pub fn verdict_json(outcome: &GateOutcome, with_report: bool) -> Value {
    let report = &outcome.report;
    let reasons = report
        .failures()
        .map(|c| {
            object([
                ("check", Value::from(c.check)),
                ("code", Value::from(&c.code)),
                ("detail", Value::from(&c.detail)),
            ])
        })
        .collect();
    let mut fields = vec![
        ("verdict", Value::from(report.verdict)),
        ("outcome", Value::from(report.outcome)),
        ("finding_status", Value::from(report.finding_status)),
        ("reasons", Value::Array(reasons)),
        (
            "messages",
            Value::Array(outcome.messages.iter().map(|m| m.to_value()).collect()),
        ),
        ("report_sha256", Value::from(report.sha256())),
        ("compaction_id", Value::from(&report.compaction_id)),
    ];
    if with_report {
        fields.push(("report", report.to_value()));
    }
    object(fields)
}

pub fn run(args: &CheckArgs) -> anyhow::Result<u8> {
    let bytes = input::read(args.request.as_ref())?;
    let request = GateRequest::from_json(&bytes)
        .map_err(|e| anyhow::anyhow!("refused {}: {e}", input::name(args.request.as_ref())))?;
    let checker = Checker::new(&args.policy)?;
    let outcome = checker.check(&request).context("refused")?;
    if let Some(store) = &args.store {
        super::record::record(store.as_deref(), &request, &outcome)?;
    }
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(
            out,
            "{}",
            json::to_ascii(&json::canonical(&verdict_json(&outcome, true))?)
        )?;
    } else {
        write_human(&mut out, &outcome)?;
    }
    Ok(if outcome.accepted { 0 } else { 1 })
}

fn write_human(out: &mut impl Write, outcome: &GateOutcome) -> std::io::Result<()> {
    let r = &outcome.report;
    writeln!(
        out,
        "{} {}/{}  {}  policy {} {}",
        r.verdict, r.outcome, r.finding_status, r.compaction_id, r.policy_name, r.policy_version
    )?;
    for check in &r.checks {
        let mark = match check.status.as_str() {
            "pass" => "ok  ",
            "fail" => "FAIL",
            "error" => "ERR ",
            _ => "--  ",
        };
        writeln!(
            out,
            "  {mark} {:<11} {}",
            check.check,
            sanitize(&check.detail).to_plain()
        )?;
        for finding in check.findings.iter().take(8) {
            let span = finding
                .span
                .as_ref()
                .map(|s| format!(" {}..{}", s.start, s.end))
                .unwrap_or_default();
            writeln!(
                out,
                "         - {} {}{span}: {}",
                finding.kind,
                finding.field,
                sanitize(&finding.message).to_plain()
            )?;
        }
    }
    writeln!(out, "report {}", r.sha256())?;
    Ok(())
}
