//! The demo: the scenarios bundled in `assets/demo/`, each checked by the real gate under the
//! built-in `default` policy and recorded exactly as `cq check --store` would record it, and
//! the real-agent scenarios of `assets/demo/agents/` imported as `cq import` imports a
//! transcript ([`agents`]), so the demo shows what the gate really says. The store deduplicates by request digest, so a
//! second build adds nothing. Two demo reviewers (`alice`, `bob`, both approvers) get keys
//! beside the store, so releases (including two-person ones) can be tried.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context};
use serde::Deserialize;

use crate::audit::keys::{generate_key, NamedKey};
use crate::engine::gate::GateOutcome;
use crate::engine::GateRequest;
use crate::policy::Policy;
use crate::store::{Mode, Recorded, Role, Store};

use super::record::new_compaction;
use super::Checker;

pub mod agents;

/// The manifest: what each scenario is and what the gate must say about it.
pub const MANIFEST: &str = include_str!("../../assets/demo/scenarios.toml");

/// The scenario files, embedded; `scenario_files_match_the_manifest` keeps this list, the
/// manifest and the directory in step.
pub const FILES: [(&str, &str); 18] = [
    (
        "01_clean_accepted.json",
        include_str!("../../assets/demo/01_clean_accepted.json"),
    ),
    (
        "02_dropped_invariant.json",
        include_str!("../../assets/demo/02_dropped_invariant.json"),
    ),
    (
        "03_contradicts_commitment.json",
        include_str!("../../assets/demo/03_contradicts_commitment.json"),
    ),
    (
        "04_credentials.json",
        include_str!("../../assets/demo/04_credentials.json"),
    ),
    (
        "05_customer_pii.json",
        include_str!("../../assets/demo/05_customer_pii.json"),
    ),
    (
        "06_fabricated_approval.json",
        include_str!("../../assets/demo/06_fabricated_approval.json"),
    ),
    (
        "07_reopened_falsified_path.json",
        include_str!("../../assets/demo/07_reopened_falsified_path.json"),
    ),
    (
        "08_prompt_injection.json",
        include_str!("../../assets/demo/08_prompt_injection.json"),
    ),
    (
        "09_terminal_escapes.json",
        include_str!("../../assets/demo/09_terminal_escapes.json"),
    ),
    (
        "10_trojan_source.json",
        include_str!("../../assets/demo/10_trojan_source.json"),
    ),
    (
        "11a_malformed_duplicate_key.json",
        include_str!("../../assets/demo/11a_malformed_duplicate_key.json"),
    ),
    (
        "11b_malformed_nan.json",
        include_str!("../../assets/demo/11b_malformed_nan.json"),
    ),
    (
        "11c_malformed_extra_field.json",
        include_str!("../../assets/demo/11c_malformed_extra_field.json"),
    ),
    (
        "11d_malformed_claim_digest.json",
        include_str!("../../assets/demo/11d_malformed_claim_digest.json"),
    ),
    (
        "12_source_digest_mismatch.json",
        include_str!("../../assets/demo/12_source_digest_mismatch.json"),
    ),
    (
        "13_too_short.json",
        include_str!("../../assets/demo/13_too_short.json"),
    ),
    (
        "14a_successive_first_kept.json",
        include_str!("../../assets/demo/14a_successive_first_kept.json"),
    ),
    (
        "14b_successive_second_erased.json",
        include_str!("../../assets/demo/14b_successive_second_erased.json"),
    ),
];

/// The demo reviewers: the first one's key is handed to the reviewer UI.
pub const REVIEWERS: [&str; 2] = ["alice", "bob"];

/// `assets/demo/scenarios.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub scenario: Vec<Scenario>,
}

/// One scenario of the manifest.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub file: String,
    pub title: String,
    pub description: String,
    /// `ACCEPTED` or `QUARANTINED`.
    pub verdict: String,
    /// The verdict's class, `outcome/finding_status` (e.g. `FAIL/FINDING`).
    pub outcome: String,
    /// Whether the summary carries characters the sanitizer must badge.
    #[serde(default)]
    pub anomalies: bool,
    #[serde(default)]
    pub expect: Vec<Expectation>,
}

/// A check that must fail, and what it must show (see the manifest's header).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expectation {
    pub check: String,
    pub code: Option<String>,
    pub finding: Option<String>,
    pub constraint: Option<String>,
    pub category: Option<String>,
    pub message: Option<String>,
    pub row_status: Option<String>,
    pub detail: Option<String>,
}

impl Scenario {
    /// The file name without `.json`, as the table shows it.
    pub fn name(&self) -> &str {
        self.file.strip_suffix(".json").unwrap_or(&self.file)
    }

    /// The embedded request text.
    pub fn text(&self) -> anyhow::Result<&'static str> {
        FILES
            .iter()
            .find(|(file, _)| *file == self.file)
            .map(|(_, text)| *text)
            .with_context(|| {
                format!(
                    "demo scenario \"{}\" is in the manifest but not embedded",
                    self.file
                )
            })
    }

    /// The scenario's request, parsed as `cq check` parses it.
    pub fn request(&self) -> anyhow::Result<GateRequest> {
        GateRequest::from_json(self.text()?.as_bytes())
            .map_err(|e| anyhow::anyhow!("demo scenario \"{}\" is not a request: {e}", self.file))
    }
}

/// The embedded manifest, parsed.
pub fn manifest() -> anyhow::Result<Manifest> {
    toml::from_str(MANIFEST)
        .context("while reading the demo manifest \"assets/demo/scenarios.toml\"")
}

/// The built-in `default` policy, as the demo runs it.
pub fn default_policy() -> anyhow::Result<Policy> {
    Ok(Policy::builtin("default")?)
}

/// Where the demo reviewers' keys live: `<store>.reviewers/`.
pub fn reviewer_dir(store: &Path) -> PathBuf {
    let mut name = store.as_os_str().to_owned();
    name.push(".reviewers");
    PathBuf::from(name)
}

/// One scenario as the gate judged it.
#[derive(Debug, Clone)]
pub struct DemoRow {
    pub scenario: String,
    pub compaction_id: String,
    pub verdict: String,
    pub outcome: String,
    pub main_reason: String,
    /// Whether this run stored it (false: it was already there).
    pub new: bool,
}

/// What building the demo store did.
#[derive(Debug, Clone)]
pub struct Built {
    pub rows: Vec<DemoRow>,
    /// The key file of each demo reviewer, in [`REVIEWERS`] order.
    pub reviewer_keys: Vec<PathBuf>,
}

/// Checks every scenario under the `default` policy and records the verdicts in the store
/// at `path` (created if needed), then makes sure the demo reviewers are registered.
pub fn build(path: &Path) -> anyhow::Result<Built> {
    let manifest = manifest()?;
    let checker = Checker::new(default_policy()?)?;
    let mut judged = Vec::with_capacity(manifest.scenario.len());
    for scenario in &manifest.scenario {
        let request = scenario.request()?;
        let outcome = checker
            .check(&request)
            .with_context(|| format!("while checking demo scenario \"{}\"", scenario.file))?;
        judged.push((scenario, request, outcome));
    }
    let store = Store::open(path, Mode::ReadWrite)
        .with_context(|| format!("while opening the demo store \"{}\"", path.display()))?;
    let mut rows = Vec::with_capacity(judged.len());
    // Successive compactions of one task go in successive transactions, so the store's
    // time order (which the reviewer diffs against) is the manifest's order.
    for (n, round) in rounds(&judged).into_iter().enumerate() {
        if n > 0 {
            // Keep this round's timestamp strictly later than the previous one's.
            std::thread::sleep(Duration::from_millis(3));
        }
        let items = round
            .iter()
            .map(|&i| new_compaction(&judged[i].1, &judged[i].2, checker.release_rules()))
            .collect::<Vec<_>>();
        let recorded = store
            .record_batch(&items)
            .with_context(|| format!("while recording the demo in \"{}\"", path.display()))?;
        for (&i, result) in round.iter().zip(recorded) {
            let (scenario, _, outcome) = &judged[i];
            let new = match result
                .with_context(|| format!("while recording demo scenario \"{}\"", scenario.file))?
            {
                Recorded::New { .. } => true,
                Recorded::Duplicate { .. } => false,
            };
            rows.push((i, row(scenario, outcome, new)));
        }
    }
    rows.sort_by_key(|(i, _)| *i);
    let mut rows: Vec<DemoRow> = rows.into_iter().map(|(_, row)| row).collect();
    rows.extend(import_agent_scenarios(&store, path)?);
    let reviewer_keys = ensure_reviewers(&store, path)?;
    Ok(Built {
        rows,
        reviewer_keys,
    })
}

/// Imports the real-agent scenarios as `cq import` does: checked under the agent policy,
/// recorded, and each session pointed at its latest compaction.
fn import_agent_scenarios(store: &Store, path: &Path) -> anyhow::Result<Vec<DemoRow>> {
    let checker = Checker::new(Policy::builtin(agents::POLICY)?)?;
    let mut rows = Vec::new();
    for scenario in agents::manifest()?.scenario {
        let judged = scenario.judge(&checker)?;
        let items: Vec<_> = judged
            .iter()
            .map(|(request, outcome)| new_compaction(request, outcome, checker.release_rules()))
            .collect();
        let recorded = store
            .record_batch(&items)
            .with_context(|| format!("while recording the demo in \"{}\"", path.display()))?;
        for ((request, outcome), result) in judged.iter().zip(recorded) {
            let result = result
                .with_context(|| format!("while recording demo scenario \"{}\"", scenario.name))?;
            let (id, new) = match result {
                Recorded::New { compaction_id, .. } => (compaction_id, true),
                Recorded::Duplicate { compaction_id } => (compaction_id, false),
            };
            store.set_session_compaction(
                crate::agents::Runtime::ClaudeCode.name(),
                &request.task_id,
                &id,
            )?;
            rows.push(DemoRow {
                scenario: scenario.name.clone(),
                ..judged_row(outcome, new)
            });
        }
    }
    Ok(rows)
}

/// Indexes of the judged scenarios, grouped so that the n-th compaction of every task is in
/// round n.
fn rounds(judged: &[(&Scenario, GateRequest, GateOutcome)]) -> Vec<Vec<usize>> {
    let mut seen: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    let mut rounds: Vec<Vec<usize>> = Vec::new();
    for (i, (_, request, _)) in judged.iter().enumerate() {
        let n = seen
            .entry((request.tenant_id.as_str(), request.task_id.as_str()))
            .or_insert(0);
        if rounds.len() <= *n {
            rounds.push(Vec::new());
        }
        rounds[*n].push(i);
        *n += 1;
    }
    rounds
}

fn row(scenario: &Scenario, outcome: &GateOutcome, new: bool) -> DemoRow {
    DemoRow {
        scenario: scenario.name().to_owned(),
        ..judged_row(outcome, new)
    }
}

fn judged_row(outcome: &GateOutcome, new: bool) -> DemoRow {
    let report = &outcome.report;
    DemoRow {
        scenario: String::new(),
        compaction_id: report.compaction_id.clone(),
        verdict: report.verdict.as_str().to_owned(),
        outcome: format!("{}/{}", report.outcome, report.finding_status),
        main_reason: main_reason(report),
        new,
    }
}

/// The first failing check (what the store calls the main reason), then the other checks
/// that failed: a prose summary fails `consistency` first, and the failure the scenario is
/// about often comes after it.
fn main_reason(report: &crate::engine::report::Report) -> String {
    let mut failures = report.failures();
    let Some(first) = failures.next() else {
        return String::new();
    };
    let others: Vec<&str> = failures.map(|c| c.check.as_str()).collect();
    if others.is_empty() {
        format!("{}: {}", first.check, first.code)
    } else {
        format!(
            "{}: {} (also {})",
            first.check,
            first.code,
            others.join(", ")
        )
    }
}

/// Generates the demo reviewers' keys beside the store when absent and registers them as
/// approvers; their key files, in [`REVIEWERS`] order.
fn ensure_reviewers(store: &Store, path: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let dir = reviewer_dir(path);
    let registered = store
        .reviewers()
        .context("while listing the demo reviewers")?;
    let mut keys = Vec::with_capacity(REVIEWERS.len());
    // The first demo approver is registered by the store's key, the next by her.
    let mut authoriser: Option<NamedKey> = None;
    for name in REVIEWERS {
        let secret = dir.join(format!("{name}.key"));
        if !secret.exists() {
            generate_key(name, &dir).with_context(|| {
                format!(
                    "while generating the demo key of \"{name}\" in \"{}\"",
                    dir.display()
                )
            })?;
        }
        let key = NamedKey::load(&secret)
            .with_context(|| format!("while reading the demo key \"{}\"", secret.display()))?;
        match registered.iter().find(|r| r.name == name) {
            Some(r) if r.key_id == key.key_id() => {}
            Some(_) => bail!(
                "demo reviewer \"{name}\" is registered in \"{}\" with another key than \"{}\": remove the demo store to rebuild it",
                path.display(),
                secret.display()
            ),
            None => {
                store
                    .add_reviewer(name, &key.verifier_text(), Role::Approver, authoriser.as_ref())
                    .with_context(|| format!("while registering demo reviewer \"{name}\""))?;
            }
        }
        authoriser.get_or_insert(key);
        keys.push(secret);
    }
    Ok(keys)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn successive_compactions_of_a_task_go_in_later_rounds() {
        let manifest = manifest().unwrap();
        let checker = Checker::new(default_policy().unwrap()).unwrap();
        let judged: Vec<_> = manifest
            .scenario
            .iter()
            .map(|s| {
                let request = s.request().unwrap();
                let outcome = checker.check(&request).unwrap();
                (s, request, outcome)
            })
            .collect();
        let rounds = rounds(&judged);
        let at = |file: &str| {
            let i = judged.iter().position(|(s, _, _)| s.file == file).unwrap();
            rounds.iter().position(|r| r.contains(&i)).unwrap()
        };
        assert!(at("14a_successive_first_kept.json") < at("14b_successive_second_erased.json"));
        assert_eq!(rounds.iter().map(Vec::len).sum::<usize>(), judged.len());
    }
}
