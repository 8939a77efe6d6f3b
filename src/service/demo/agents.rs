//! The demo's real-agent scenarios (`assets/demo/agents/`): a real Claude Code session, and
//! copies of it with one poison added each, turned into compactions exactly as `cq import`
//! turns a transcript into them (the transcript reader, the session's pins, the request, the
//! check, the stored record and the session index), so `cq review` on the demo store shows an
//! imported compaction. Every edit must find its place exactly once, so a changed transcript
//! cannot silently leave a scenario clean.

use std::path::Path;

use anyhow::{bail, Context};
use serde::Deserialize;
use serde_json::Value;

use crate::agents::{self, ImportedCompaction, Limits, Runtime};
use crate::engine::gate::GateOutcome;
use crate::engine::GateRequest;
use crate::service::agents::{request_for, PinTracker};
use crate::service::Checker;

/// The manifest of the real-agent scenarios.
pub const MANIFEST: &str = include_str!("../../../assets/demo/agents/scenarios.toml");

/// The transcripts they are built from, embedded.
pub const TRANSCRIPTS: [(&str, &str); 1] = [(
    "claude-code-spotter-fum.jsonl",
    include_str!("../../../assets/demo/agents/claude-code-spotter-fum.jsonl"),
)];

/// The policy `cq import` and the hooks use when none is named.
pub const POLICY: &str = "prose";

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub scenario: Vec<AgentScenario>,
}

/// One real-agent scenario.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentScenario {
    pub name: String,
    pub title: String,
    pub description: String,
    pub transcript: String,
    /// The session id this copy gets (it replaces the original's everywhere).
    pub session: String,
    /// What the gate says under prose mode (`ACCEPTED` or `QUARANTINED`).
    pub verdict: String,
    #[serde(default)]
    pub edits: Vec<Edit>,
}

/// Text added to one part of the transcript.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Edit {
    pub target: Target,
    /// Where the text goes: right before this (which must occur once); absent, at the end.
    pub before: Option<String>,
    pub text: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Target {
    /// The compaction summary's text.
    Summary,
    /// The session's first turn the user typed.
    FirstUserTurn,
}

/// The embedded manifest, parsed.
pub fn manifest() -> anyhow::Result<Manifest> {
    toml::from_str(MANIFEST)
        .context("while reading the demo manifest \"assets/demo/agents/scenarios.toml\"")
}

impl AgentScenario {
    /// The transcript of this scenario: the original with its session renamed and the edits
    /// applied.
    pub fn transcript_text(&self) -> anyhow::Result<String> {
        let (_, original) = TRANSCRIPTS
            .iter()
            .find(|(name, _)| *name == self.transcript)
            .with_context(|| {
                format!(
                    "demo scenario \"{}\" names transcript \"{}\", which is not embedded",
                    self.name, self.transcript
                )
            })?;
        let mut lines: Vec<String> = original.lines().map(str::to_owned).collect();
        let old_session = lines
            .iter()
            .find_map(|l| session_of(l))
            .with_context(|| format!("transcript \"{}\" names no session", self.transcript))?;
        for line in &mut lines {
            *line = line.replace(&old_session, &self.session);
        }
        for (n, edit) in self.edits.iter().enumerate() {
            apply(&mut lines, edit)
                .with_context(|| format!("in edit {} of demo scenario \"{}\"", n + 1, self.name))?;
        }
        Ok(lines.join("\n") + "\n")
    }

    /// The scenario's compactions, read as `cq import` reads a transcript.
    pub fn compactions(&self) -> anyhow::Result<Vec<ImportedCompaction>> {
        let text = self.transcript_text()?;
        let path = Path::new(&self.transcript);
        let found = agents::import_reader(
            text.as_bytes(),
            path,
            Runtime::ClaudeCode,
            &Limits::default(),
        );
        if let Some(problem) = found.problems.first() {
            bail!("demo scenario \"{}\": {problem}", self.name);
        }
        Ok(found.compactions)
    }

    /// Each compaction's request and what the gate said, in transcript order.
    pub fn judge(&self, checker: &Checker) -> anyhow::Result<Vec<(GateRequest, GateOutcome)>> {
        let mut pins = PinTracker::new();
        let mut out = Vec::new();
        for compaction in self.compactions()? {
            let request = request_for(&compaction, checker.policy(), pins.pins_for(&compaction)?);
            let outcome = checker
                .check(&request)
                .with_context(|| format!("while checking demo scenario \"{}\"", self.name))?;
            out.push((request, outcome));
        }
        if out.is_empty() {
            bail!("demo scenario \"{}\" holds no compaction", self.name);
        }
        Ok(out)
    }
}

fn session_of(line: &str) -> Option<String> {
    let value: Value = serde_json::from_str(line).ok()?;
    value.get("sessionId")?.as_str().map(str::to_owned)
}

/// Adds `edit` to the line it targets.
fn apply(lines: &mut [String], edit: &Edit) -> anyhow::Result<()> {
    for line in lines.iter_mut() {
        let Ok(mut value) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let is_target = match edit.target {
            Target::Summary => value.get("isCompactSummary") == Some(&Value::Bool(true)),
            Target::FirstUserTurn => {
                value.get("type").and_then(Value::as_str) == Some("user")
                    && value.get("isCompactSummary").is_none()
                    && value.get("isMeta").is_none()
                    && value
                        .pointer("/message/content")
                        .is_some_and(Value::is_string)
            }
        };
        if !is_target {
            continue;
        }
        let Some(Value::String(content)) = value.pointer_mut("/message/content") else {
            continue;
        };
        match &edit.before {
            None => content.push_str(&edit.text),
            Some(before) => {
                let found: Vec<usize> = content
                    .match_indices(before.as_str())
                    .map(|(i, _)| i)
                    .collect();
                let [at] = found[..] else {
                    bail!(
                        "\"{}\" occurs {} times in the {:?} text, not once; fix the manifest",
                        crate::sanitize::excerpt(before, 60),
                        found.len(),
                        edit.target
                    );
                };
                content.insert_str(at, &edit.text);
            }
        }
        *line = value.to_string();
        return Ok(());
    }
    bail!(
        "the transcript has no {:?} line; fix the manifest",
        edit.target
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_edit_lands_once_and_each_scenario_is_one_compaction() {
        for scenario in manifest().unwrap().scenario {
            let compactions = scenario.compactions().unwrap();
            assert_eq!(compactions.len(), 1, "{}", scenario.name);
            let c = &compactions[0];
            assert_eq!(c.session_id, scenario.session);
            assert!(c.unverifiable.is_none(), "{}", scenario.name);
            let summary = match &c.summary {
                crate::agents::ImportedSummary::Text(text) => text.clone(),
                other => panic!("{}: {other:?}", scenario.name),
            };
            let first_user = c.messages.iter().find(|m| m.role == "user").unwrap();
            for edit in &scenario.edits {
                let haystack = match edit.target {
                    Target::Summary => &summary,
                    Target::FirstUserTurn => &first_user.content,
                };
                assert!(haystack.contains(edit.text.trim()), "{}", scenario.name);
            }
        }
    }

    #[test]
    fn an_edit_that_does_not_find_its_place_is_an_error() {
        let mut scenario = manifest().unwrap().scenario.remove(1);
        scenario.edits[0].before = Some("no such words in the summary".into());
        let error = format!("{:#}", scenario.transcript_text().unwrap_err());
        assert!(error.contains("occurs 0 times"), "{error}");
    }
}
