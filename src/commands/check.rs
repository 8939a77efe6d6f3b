//! `cq check [REQUEST|-] [--policy NAME|FILE] [--json] [--store [DB]]`: run the gate on one
//! request. Prints the verdict (JSON with `--json`, for runtimes; a sanitized summary for a
//! person otherwise) and exits 0 accepted, 1 quarantined; a refused request is an error
//! (exit 2) that says what is wrong and where. With `--store` the verdict is recorded.

use std::io::Write;

use anyhow::Context;

use crate::cli::CheckArgs;
use crate::engine::gate::GateOutcome;
use crate::engine::request_json::MAX_REQUEST_BYTES;
use crate::engine::GateRequest;
use crate::json::{self, object, Value};
use crate::sanitize;
use crate::service::record::check_and_record;
use crate::service::Checker;
use crate::store::{Mode, Store};

use super::{input, policy, Exit, Output};

/// The verdict object a runtime reads.
pub fn verdict_json(outcome: &GateOutcome, with_report: bool) -> Value {
    let report = &outcome.report;
    let reasons = report
        .failures()
        .map(|c| {
            object([
                ("check", Value::from(&c.check)),
                ("code", Value::from(&c.code)),
                ("detail", Value::from(&c.detail)),
            ])
        })
        .collect();
    let mut fields = vec![
        ("verdict", Value::from(report.verdict.as_str())),
        ("outcome", Value::from(report.outcome.as_str())),
        (
            "finding_status",
            Value::from(report.finding_status.as_str()),
        ),
        ("reasons", Value::Array(reasons)),
        (
            "messages",
            Value::Array(outcome.messages.iter().map(|m| m.to_value()).collect()),
        ),
        ("report_sha256", Value::from(&report.sha256)),
        ("compaction_id", Value::from(&report.compaction_id)),
    ];
    if with_report {
        fields.push(("report", report.to_value()));
    }
    object(fields)
}

pub fn run(args: &CheckArgs, out: &mut Output) -> anyhow::Result<Exit> {
    let bytes = input::read(args.request.as_ref(), MAX_REQUEST_BYTES)?;
    let request = GateRequest::from_json(&bytes)
        .map_err(|e| anyhow::anyhow!("refused {}: {e}", input::name(args.request.as_ref())))?;
    let checker = Checker::new(policy::resolve(&args.policy)?)?;
    let store = match &args.store {
        Some(path) => {
            let path = match path {
                Some(path) => path.clone(),
                None => crate::store::default_store_path()?,
            };
            Some(Store::open(&path, Mode::ReadWrite).with_context(|| {
                format!("while opening the store \"{}\"", crate::store::shown(&path))
            })?)
        }
        None => None,
    };
    let checked = check_and_record(&checker, store.as_ref(), &request)?;
    let outcome = &checked.outcome;
    if args.json {
        writeln!(
            out,
            "{}",
            json::to_ascii(&json::canonical(&verdict_json(outcome, true))?)
        )?;
    } else {
        write_human(out, outcome)?;
    }
    Ok(if outcome.accepted {
        Exit::Success
    } else {
        Exit::Quarantined
    })
}

fn write_human(out: &mut impl Write, outcome: &GateOutcome) -> std::io::Result<()> {
    let r = &outcome.report;
    writeln!(
        out,
        "{} {}/{}  {}  policy {} {}",
        r.verdict,
        r.outcome,
        r.finding_status,
        sanitize::line(&r.compaction_id),
        sanitize::line(&r.policy_name),
        sanitize::line(&r.policy_version)
    )?;
    for check in &r.checks {
        let mark = match check.status {
            crate::engine::report::Status::Pass => "ok  ",
            crate::engine::report::Status::Fail => "FAIL",
            crate::engine::report::Status::Error => "ERR ",
            crate::engine::report::Status::NotRun => "--  ",
        };
        writeln!(
            out,
            "  {mark} {:<11} {}",
            check.check,
            sanitize::line(&check.detail)
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
                sanitize::line(&finding.field),
                sanitize::line(&finding.message)
            )?;
        }
    }
    writeln!(out, "report {}", r.sha256)?;
    Ok(())
}
