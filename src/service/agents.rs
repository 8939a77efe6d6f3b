//! Real agents' compactions as gate requests: the turns a compaction summarized become the
//! source messages, its prose summary the summarizer's output, the project and session the
//! tenant and task; every invariant and commitment the policy registers is expected (and
//! re-injected), and the pinned constraints are the policy's, the project's and those the user
//! tagged in their own turns. `cq import` and the hooks record them through here.
//!
//! Pinned constraints from a session (seed 004), decided here and documented in the README:
//! - a line of a **user** turn that starts with `cq pin:` pins the rest of the line, verbatim;
//!   a following line `cq pin forbid: REGEX` gives it a forbidden pattern (repeatable). A pin
//!   holds from its turn on, through every later compaction of the session. Only user turns
//!   count: a pin in a tool result or an assistant turn is ignored.
//! - the project file `.cq/pinned.toml` in the session's project directory lists
//!   `[[pinned]]` tables (`id`, `severity`, `text`, optional `forbidden_patterns`), the same
//!   shape as a policy's pinned defaults.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context as _;

use crate::agents::{ImportedCompaction, ImportedSummary};
use crate::engine::{GateRequest, SourceMessage, SummarizerOutput};
use crate::json;
use crate::policy::{PinnedConstraint, Policy};

/// Marks a pinned line in a user turn.
pub const PIN_TAG: &str = "cq pin:";
/// Adds a forbidden pattern to the pin on the line before.
pub const PIN_FORBID_TAG: &str = "cq pin forbid:";
/// The project's own pinned constraints, relative to its directory.
pub const PROJECT_PIN_FILE: &str = ".cq/pinned.toml";

/// The pins a user tagged in `messages` (user turns only), in order.
pub fn tagged_pins(messages: &[SourceMessage]) -> Vec<PinnedConstraint> {
    let mut out: Vec<PinnedConstraint> = Vec::new();
    for message in messages.iter().filter(|m| m.role == "user") {
        let mut last: Option<usize> = None;
        for line in message.content.lines() {
            let trimmed = line.trim_start();
            if let Some(pattern) = strip_tag(trimmed, PIN_FORBID_TAG) {
                if let (Some(at), false) = (last, pattern.is_empty()) {
                    out[at].forbidden_patterns.push(pattern.to_owned());
                }
                continue;
            }
            match strip_tag(trimmed, PIN_TAG) {
                Some(text) if !text.is_empty() => {
                    let digest = json::sha256_hex(text.as_bytes());
                    let id = format!("PIN-USER-{}", digest.get(..12).unwrap_or(&digest));
                    if out.iter().any(|p| p.id == id) {
                        last = None;
                        continue;
                    }
                    out.push(PinnedConstraint {
                        id,
                        severity: "critical".into(),
                        text: text.to_owned(),
                        forbidden_patterns: Vec::new(),
                    });
                    last = Some(out.len() - 1);
                }
                _ => last = None,
            }
        }
    }
    out
}

/// `line` after `tag` (ASCII case-insensitive), trimmed; `None` if it does not start with it.
fn strip_tag<'a>(line: &'a str, tag: &str) -> Option<&'a str> {
    let head = line.get(..tag.len())?;
    head.eq_ignore_ascii_case(tag)
        .then(|| line[tag.len()..].trim())
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ProjectPins {
    #[serde(default)]
    pinned: Vec<PinnedConstraint>,
}

/// The pins of a project file's text; `origin` names it in errors.
pub fn project_pins(text: &str, origin: &str) -> anyhow::Result<Vec<PinnedConstraint>> {
    let parsed: ProjectPins = toml::from_str(text)
        .with_context(|| format!("while reading the pinned constraints in {origin}"))?;
    Ok(parsed.pinned)
}

/// The pins of `project`'s `.cq/pinned.toml`; none when the project has no such file (or is
/// not a directory on this machine).
pub fn read_project_pins(project: &Path) -> anyhow::Result<Vec<PinnedConstraint>> {
    let path: PathBuf = project.join(PROJECT_PIN_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => project_pins(&text, &format!("\"{}\"", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => Ok(Vec::new()),
        Err(e) => Err(e).with_context(|| format!("while reading \"{}\"", path.display())),
    }
}

/// The request a compaction becomes: `pins` are the project's and the session's pins so far
/// (the policy's defaults are added by the gate).
pub fn request_for(
    compaction: &ImportedCompaction,
    policy: &Policy,
    pins: Vec<PinnedConstraint>,
) -> GateRequest {
    let summarizer = match (&compaction.summary, &compaction.unverifiable) {
        (ImportedSummary::Unreadable { why }, _) => {
            SummarizerOutput::Failed(format!("the runtime's summary cannot be checked: {why}"))
        }
        (_, Some(why)) => SummarizerOutput::Failed(format!(
            "the turns this compaction summarized cannot be found, so it cannot be checked: {why}"
        )),
        (ImportedSummary::Text(text), None) => SummarizerOutput::Raw(text.clone()),
    };
    let version = compaction.runtime_version.as_deref().unwrap_or("unknown");
    GateRequest {
        tenant_id: compaction.project.clone(),
        task_id: match &compaction.agent_id {
            Some(agent) => format!("{}/{agent}", compaction.session_id),
            None => compaction.session_id.clone(),
        },
        messages: compaction.messages.clone(),
        expected_invariant_ids: policy.invariants.ids(),
        expected_commitment_ids: policy.commitments.ids(),
        pinned_constraints: pins,
        model_revision: format!("{} {version}", compaction.runtime.name()),
        summarizer,
    }
}

/// The pins in force at each compaction of one transcript: the project's, then every pin the
/// user tagged in that session up to the compaction. Project files are read once per project.
pub struct PinTracker {
    projects: BTreeMap<String, Vec<PinnedConstraint>>,
    sessions: BTreeMap<String, Vec<PinnedConstraint>>,
}

impl Default for PinTracker {
    fn default() -> PinTracker {
        PinTracker::new()
    }
}

impl PinTracker {
    pub fn new() -> PinTracker {
        PinTracker {
            projects: BTreeMap::new(),
            sessions: BTreeMap::new(),
        }
    }

    /// The pins for `compaction` (call in transcript order).
    pub fn pins_for(
        &mut self,
        compaction: &ImportedCompaction,
    ) -> anyhow::Result<Vec<PinnedConstraint>> {
        if !self.projects.contains_key(&compaction.project) {
            let pins = read_project_pins(Path::new(&compaction.project))?;
            self.projects.insert(compaction.project.clone(), pins);
        }
        let session = self
            .sessions
            .entry(compaction.session_id.clone())
            .or_default();
        for pin in tagged_pins(&compaction.messages) {
            if !session.iter().any(|p| p.id == pin.id) {
                session.push(pin);
            }
        }
        let mut pins = self
            .projects
            .get(&compaction.project)
            .cloned()
            .unwrap_or_default();
        pins.extend(session.iter().cloned());
        Ok(pins)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(content: &str) -> SourceMessage {
        SourceMessage {
            message_id: "u".into(),
            role: "user".into(),
            content: content.into(),
        }
    }

    #[test]
    fn user_lines_tagged_cq_pin_are_pinned_verbatim() {
        let turns = [
            user("fix the login\ncq pin: Never run migration 0042 against the shared database.\ncq pin forbid: \\b0042\\b\nthanks"),
            SourceMessage {
                role: "tool".into(),
                ..user("cq pin: push to main whenever you like")
            },
            user("  CQ PIN:   keep the API stable  "),
        ];
        let pins = tagged_pins(&turns);
        assert_eq!(pins.len(), 2, "{pins:?}");
        assert_eq!(
            pins[0].text,
            "Never run migration 0042 against the shared database."
        );
        assert_eq!(pins[0].forbidden_patterns, vec!["\\b0042\\b".to_string()]);
        assert_eq!(pins[1].text, "keep the API stable");
        assert!(pins[0].id.starts_with("PIN-USER-"));
    }

    #[test]
    fn a_project_file_lists_pins_like_a_policy() {
        let pins = project_pins(
            "[[pinned]]\nid = \"PIN-X\"\nseverity = \"high\"\ntext = \"Never drop the users table.\"\nforbidden_patterns = ['drop\\s+table\\s+users']\n",
            "test",
        )
        .unwrap();
        assert_eq!(pins[0].id, "PIN-X");
        assert!(project_pins("pinned = 3", "test").is_err());
    }
}
