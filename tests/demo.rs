#![allow(clippy::unwrap_used)]
//! The demo keeps its promises: `cq demo --no-tui` (the real binary) builds a store in
//! which every scenario of `assets/demo/scenarios.toml` got the verdict, outcome class and
//! failing checks its manifest entry names; a second run adds nothing; every scenario file
//! is a request `cq check` reads, with the exit code its verdict implies.

use std::path::Path;

use assert_cmd::Command;
use cq::json::{canonical_sha256, parse, Limits, Value};
use cq::service::demo::{agents, manifest, Expectation, Scenario, FILES};
use cq::store::{ListFilter, Mode, Store};

fn demo(store: &Path) -> String {
    let output = Command::cargo_bin("cq")
        .unwrap()
        .args(["demo", "--no-tui", "--store"])
        .arg(store)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    String::from_utf8(output).unwrap()
}

fn compaction_id(scenario: &Scenario) -> String {
    let request = scenario.request().unwrap();
    cq::engine::gate::compaction_id(&canonical_sha256(&request.to_value()).unwrap())
}

fn text<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn list<'a>(value: &'a Value, key: &str) -> &'a [Value] {
    value.get(key).and_then(Value::as_array).unwrap_or_default()
}

/// What is wrong with `expect` against the report, if anything.
fn unmet(report: &Value, expect: &Expectation) -> Option<String> {
    let Some(check) = list(report, "checks")
        .iter()
        .find(|c| text(c, "check") == expect.check)
    else {
        return Some(format!("no check \"{}\" in the report", expect.check));
    };
    let status = text(check, "status");
    if status != "fail" && status != "error" {
        return Some(format!("check \"{}\" is \"{status}\"", expect.check));
    }
    if let Some(code) = &expect.code {
        if text(check, "code") != code {
            return Some(format!(
                "code is \"{}\", not \"{code}\"",
                text(check, "code")
            ));
        }
    }
    if let Some(detail) = &expect.detail {
        if !text(check, "detail").contains(detail.as_str()) {
            return Some(format!(
                "detail \"{}\" lacks \"{detail}\"",
                text(check, "detail")
            ));
        }
    }
    if let Some(kind) = &expect.finding {
        let found = list(check, "findings").iter().any(|f| {
            text(f, "kind") == kind
                && expect
                    .constraint
                    .as_ref()
                    .is_none_or(|c| text(f, "constraint_id") == c)
                && expect
                    .category
                    .as_ref()
                    .is_none_or(|c| text(f, "category") == c)
                && expect
                    .message
                    .as_ref()
                    .is_none_or(|m| text(f, "message").contains(m.as_str()))
        });
        if !found {
            return Some(format!("no matching \"{kind}\" finding: {expect:?}"));
        }
    }
    if let Some(row_status) = &expect.row_status {
        let id = expect.constraint.as_deref().unwrap_or_default();
        let found = list(check, "constraints").iter().any(|r| {
            text(r, "constraint_id") == id && text(r, "verification_status") == row_status
        });
        if !found {
            return Some(format!("constraint \"{id}\" is not \"{row_status}\""));
        }
    }
    None
}

#[test]
fn every_scenario_gets_the_verdict_and_failures_it_promises() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("demo.db");
    let first = demo(&path);
    let manifest = manifest().unwrap();
    let total = manifest.scenario.len() + agents::manifest().unwrap().scenario.len();
    assert!(first.contains(&format!("{total} new")), "{first}");

    let store = Store::open(&path, Mode::ReadOnly).unwrap();
    let mut problems = Vec::new();
    for scenario in &manifest.scenario {
        let id = compaction_id(scenario);
        let Some(stored) = store.compaction(&id).unwrap() else {
            problems.push(format!("{}: not in the store as \"{id}\"", scenario.file));
            continue;
        };
        let rows = store.reports(&id).unwrap();
        assert_eq!(rows.len(), 1, "{}", scenario.file);
        let report = parse(rows[0].report_json.as_bytes(), &Limits::default()).unwrap();
        let class = format!(
            "{}/{}",
            text(&report, "outcome"),
            text(&report, "finding_status")
        );
        let mut say = |what: String| problems.push(format!("{}: {what}", scenario.file));
        if text(&report, "verdict") != scenario.verdict
            || stored.summary.verdict.as_str() != scenario.verdict
        {
            say(format!("verdict is \"{}\"", stored.summary.verdict));
        }
        if class != scenario.outcome {
            say(format!("outcome is \"{class}\""));
        }
        // The queue keys on the most severe failing class, not the seed-order verdict class.
        let failing: Vec<String> = report
            .get("checks")
            .and_then(Value::as_array)
            .unwrap()
            .iter()
            .filter(|c| matches!(text(c, "status"), "fail" | "error"))
            .map(|c| format!("{}/{}", text(c, "outcome"), text(c, "finding_status")))
            .collect();
        let worst = ["FAIL/FINDING", "ERROR/UNKNOWN", "INSUFFICIENT_DATA/UNKNOWN"]
            .into_iter()
            .find(|w| failing.iter().any(|f| f == w))
            .map_or(class.clone(), str::to_owned);
        if stored.summary.verdict_class.as_str() != worst {
            say(format!(
                "queue class is \"{}\", want \"{worst}\"",
                stored.summary.verdict_class
            ));
        }
        if (stored.summary.anomaly_count > 0) != scenario.anomalies {
            say(format!("{} anomalies", stored.summary.anomaly_count));
        }
        if scenario.verdict == "QUARANTINED" && scenario.expect.is_empty() {
            say("a quarantined scenario names no failing check".into());
        }
        for expect in &scenario.expect {
            if let Some(why) = unmet(&report, expect) {
                say(format!("{}: {why}", expect.check));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));

    // Successive compactions of one task are stored in order, so the reviewer diffs the
    // second against the first.
    let second = manifest
        .scenario
        .iter()
        .find(|s| s.file == "14b_successive_second_erased.json")
        .unwrap();
    let first_of_task = manifest
        .scenario
        .iter()
        .find(|s| s.file == "14a_successive_first_kept.json")
        .unwrap();
    let request = second.request().unwrap();
    let previous = store
        .previous_for_task(&request.tenant_id, &request.task_id, &compaction_id(second))
        .unwrap()
        .unwrap();
    assert_eq!(previous.id, compaction_id(first_of_task));

    // A second run finds everything already there and writes nothing.
    let count = store.count(&ListFilter::default()).unwrap();
    let note = store.checkpoint().unwrap();
    let reviewers = store.reviewers().unwrap();
    assert_eq!(reviewers.len(), 2);
    drop(store);
    let again = demo(&path);
    assert!(again.contains("0 new"), "{again}");
    let store = Store::open(&path, Mode::ReadOnly).unwrap();
    assert_eq!(store.count(&ListFilter::default()).unwrap(), count);
    assert_eq!(count, total as u64);
    assert_eq!(store.checkpoint().unwrap(), note);
    assert_eq!(store.reviewers().unwrap(), reviewers);
}

#[test]
fn scenario_files_match_the_manifest() {
    let manifest = manifest().unwrap();
    assert!(manifest.scenario.len() >= 14);
    let listed: Vec<&str> = manifest.scenario.iter().map(|s| s.file.as_str()).collect();
    let embedded: Vec<&str> = FILES.iter().map(|(f, _)| *f).collect();
    assert_eq!(listed, embedded);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/demo");
    let mut on_disk: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    on_disk.sort();
    assert_eq!(on_disk, embedded);
}

#[test]
fn every_demo_file_is_a_request_cq_check_reads() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/demo");
    for scenario in manifest().unwrap().scenario {
        let request = scenario.request().unwrap();
        let roles: Vec<&str> = request.messages.iter().map(|m| m.role.as_str()).collect();
        assert!(
            (8..=40).contains(&roles.len()),
            "{}: {} messages",
            scenario.file,
            roles.len()
        );
        for role in ["user", "assistant", "tool"] {
            assert!(roles.contains(&role), "{}: no {role} turn", scenario.file);
        }
        let code = if scenario.verdict == "ACCEPTED" { 0 } else { 1 };
        Command::cargo_bin("cq")
            .unwrap()
            .arg("check")
            .arg(dir.join(&scenario.file))
            .assert()
            .code(code);
    }
}

#[cfg(target_os = "linux")]
#[test]
fn without_store_the_demo_goes_to_the_data_directory() {
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join("data");
    Command::cargo_bin("cq")
        .unwrap()
        .args(["demo", "--no-tui"])
        .env("HOME", home.path())
        .env("XDG_DATA_HOME", &data)
        .env("CQ_STORE", home.path().join("not-this.db"))
        .assert()
        .success();
    assert!(data.join("cq/demo.db").exists());
    assert!(data.join("cq/demo.db.reviewers/alice.key").exists());
    assert!(!home.path().join("not-this.db").exists());
}

#[test]
fn the_demo_reviewers_can_decide() {
    use cq::audit::keys::NamedKey;
    use cq::store::{Action, DecisionOutcome, DecisionRequest, ReviewRules, Status};

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("demo.db");
    demo(&path);
    let policy = cq::policy::Policy::builtin("default").unwrap();
    let release = cq::service::decide::review_rules(&policy, Action::Release).unwrap();
    let reject = cq::service::decide::review_rules(&policy, Action::Reject).unwrap();
    let rules = ReviewRules {
        reason_codes: [release.reason_codes.clone(), reject.reason_codes].concat(),
        ..release
    };
    let keys = dir.path().join("demo.db.reviewers");
    let alice = NamedKey::load(&keys.join("alice.key")).unwrap();
    let bob = NamedKey::load(&keys.join("bob.key")).unwrap();
    let store = Store::open(&path, Mode::ReadWrite).unwrap();
    let manifest = manifest().unwrap();
    let id_of =
        |file: &str| compaction_id(manifest.scenario.iter().find(|s| s.file == file).unwrap());
    let decision = |file: &str, action, reason: &str| {
        let id = id_of(file);
        let seen = store
            .compaction(&id)
            .unwrap()
            .unwrap()
            .summary
            .report_sha256;
        DecisionRequest {
            compaction_id: id,
            action,
            reason: reason.into(),
            note: "demo".into(),
            seen_report_sha256: seen,
        }
    };

    // A FAIL/FINDING release needs both approvers.
    let release = decision(
        "03_contradicts_commitment.json",
        Action::Release,
        "verified-by-hand",
    );
    let first = store.decide(&release, &alice, &rules).unwrap();
    assert!(matches!(
        first,
        DecisionOutcome::Approved {
            approvals: 1,
            needed: 2,
            ..
        }
    ));
    let second = store.decide(&release, &bob, &rules).unwrap();
    assert!(matches!(
        second,
        DecisionOutcome::Decided {
            status: Status::Released,
            ..
        }
    ));

    let reject = decision("04_credentials.json", Action::Reject, "secret-leak");
    let rejected = store.decide(&reject, &alice, &rules).unwrap();
    assert!(matches!(
        rejected,
        DecisionOutcome::Decided {
            status: Status::Rejected,
            ..
        }
    ));
}

/// The real-agent scenarios are what `cq import` makes of their transcripts: the same
/// compactions (the same request digests), each session indexed to its compaction.
#[test]
fn the_real_agent_scenarios_are_what_cq_import_records() {
    let dir = tempfile::tempdir().unwrap();
    let built = cq::service::demo::build(&dir.path().join("demo.db")).unwrap();
    let imported_store = dir.path().join("imported.db");
    let demo_store = Store::open(&dir.path().join("demo.db"), Mode::ReadOnly).unwrap();
    for scenario in agents::manifest().unwrap().scenario {
        let row = built
            .rows
            .iter()
            .find(|r| r.scenario == scenario.name)
            .unwrap();
        let file = dir.path().join(format!("{}.jsonl", scenario.name));
        std::fs::write(&file, scenario.transcript_text().unwrap()).unwrap();
        Command::cargo_bin("cq")
            .unwrap()
            .args(["import", "claude-code"])
            .arg(&file)
            .arg("--store")
            .arg(&imported_store)
            .assert()
            .success();
        let store = Store::open(&imported_store, Mode::ReadOnly).unwrap();
        assert!(
            store.compaction(&row.compaction_id).unwrap().is_some(),
            "{}: cq import made another compaction",
            scenario.name
        );
        assert_eq!(
            store
                .session_compaction("claude-code", &scenario.session)
                .unwrap(),
            Some(row.compaction_id.clone())
        );
        assert_eq!(
            demo_store
                .session_compaction("claude-code", &scenario.session)
                .unwrap(),
            Some(row.compaction_id.clone())
        );
        if scenario.verdict == "QUARANTINED" {
            assert_eq!(row.verdict, "QUARANTINED", "{}", scenario.name);
        }
    }
}

#[test]
fn the_real_agent_scenarios_get_the_verdict_their_manifest_names() {
    let dir = tempfile::tempdir().unwrap();
    let built = cq::service::demo::build(&dir.path().join("demo.db")).unwrap();
    for scenario in agents::manifest().unwrap().scenario {
        let row = built
            .rows
            .iter()
            .find(|r| r.scenario == scenario.name)
            .unwrap();
        assert_eq!(row.verdict, scenario.verdict, "{}", scenario.name);
    }
}
