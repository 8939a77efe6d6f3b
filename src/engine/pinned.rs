//! Pinned negative constraints (seed 004). Before the summary is examined they are isolated
//! into a manifest (a SHA-256 per constraint and a root); the trusted instruction renders
//! them verbatim from that manifest, never from the summary; the context the gate returns
//! must carry every pinned text byte for byte; and a summary that matches a constraint's
//! forbidden pattern re-opens a falsified path, a CONFLICT for that constraint. A pattern
//! matches the summary or its split view, where joined words read apart (`git_push`,
//! `git/push/origin/main` read `git push …`, see `words`), so a separator cannot dodge it;
//! a match on the view names the bytes of the tokens that hid it.

use crate::json::{canonical_object, canonical_sha256, object, sha256_hex, Value};
use crate::policy::{check_pinned, PinnedConstraint};

use super::lazy_regex::{self, RegexOptions};
use super::words::SplitView;
use crate::sanitize::excerpt;

/// Why a forbidden pattern does not compile, quoting at most an excerpt of it: the regex
/// crate's own message repeats the whole pattern, which a request may have made megabytes long.
fn pattern_error(id: &str, pattern: &str, error: &str) -> String {
    // A syntax error's last line says what is wrong; the lines above repeat the pattern.
    let why = error
        .lines()
        .find_map(|l| l.strip_prefix("error: "))
        .unwrap_or(error);
    format!(
        "pinned constraint \"{}\": forbidden pattern \"{}\" does not compile: {}",
        excerpt(id, 80),
        excerpt(pattern, 80),
        excerpt(why, 200)
    )
}

/// How forbidden patterns compile: case-insensitive, at most 1 MiB.
const PATTERN: RegexOptions = RegexOptions {
    case_insensitive: true,
    multi_line: false,
    size_limit: 1 << 20,
};

/// A pinned constraint whose forbidden patterns were compiled.
#[derive(Debug, Clone)]
pub struct Pinned {
    pub constraint: PinnedConstraint,
    pub record_sha256: String,
    patterns: Vec<lazy_regex::Regex>,
}

/// The isolated constraints, in request order after the policy's defaults.
#[derive(Debug, Clone)]
pub struct PinnedManifest {
    pub constraints: Vec<Pinned>,
    pub root_sha256: String,
}

/// A pinned constraint the summary re-opens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinnedConflict {
    pub constraint_id: String,
    pub pattern: String,
    /// Byte range in the summary.
    pub span: std::ops::Range<usize>,
}

impl PinnedManifest {
    /// Isolates the policy's defaults and the request's constraints. A request constraint
    /// with the id of a default replaces nothing: the id clash is refused.
    pub fn isolate(
        defaults: &[PinnedConstraint],
        requested: &[PinnedConstraint],
    ) -> Result<PinnedManifest, String> {
        let mut constraints: Vec<Pinned> = Vec::new();
        for constraint in defaults.iter().chain(requested) {
            check_pinned(&constraint.id, &constraint.severity, &constraint.text)?;
            if constraints.iter().any(|p| p.constraint.id == constraint.id) {
                return Err(format!(
                    "pinned constraint id \"{}\" appears twice",
                    excerpt(&constraint.id, 80)
                ));
            }
            let patterns = constraint
                .forbidden_patterns
                .iter()
                .map(|pattern| {
                    // Compiled for every request that carries it: no up-front full DFA.
                    lazy_regex::build(pattern, PATTERN)
                        .map_err(|e| pattern_error(&constraint.id, pattern, &e))
                })
                .collect::<Result<_, _>>()?;
            let record_sha256 = sha256_hex(canonical_object(&mut constraint.fields()).as_bytes());
            constraints.push(Pinned {
                constraint: constraint.clone(),
                record_sha256,
                patterns,
            });
        }
        let root = object([
            ("schema_version", Value::from("cq.pinned-manifest.v1")),
            (
                "constraints",
                Value::Array(
                    constraints
                        .iter()
                        .map(|p| {
                            object([
                                ("id", Value::from(&p.constraint.id)),
                                ("record_sha256", Value::from(&p.record_sha256)),
                            ])
                        })
                        .collect(),
                ),
            ),
        ]);
        let root_sha256 = canonical_sha256(&root).map_err(|e| e.to_string())?;
        Ok(PinnedManifest {
            constraints,
            root_sha256,
        })
    }

    /// The manifest as it goes into the report.
    pub fn to_value(&self) -> Value {
        object([
            ("root_sha256", Value::from(&self.root_sha256)),
            (
                "constraints",
                Value::Array(
                    self.constraints
                        .iter()
                        .map(|p| {
                            object([
                                ("id", Value::from(&p.constraint.id)),
                                ("severity", Value::from(&p.constraint.severity)),
                                ("record_sha256", Value::from(&p.record_sha256)),
                                (
                                    "text_sha256",
                                    Value::from(sha256_hex(p.constraint.text.as_bytes())),
                                ),
                            ])
                        })
                        .collect(),
                ),
            ),
        ])
    }

    /// The first match of every forbidden pattern, in the summary or else in its split view.
    pub fn conflicts(&self, summary: &str) -> Vec<PinnedConflict> {
        let any = self.constraints.iter().any(|p| !p.patterns.is_empty());
        let view = any
            .then(|| SplitView::new(summary))
            .filter(SplitView::is_split);
        let view = view.as_ref();
        let mut out = Vec::new();
        for pinned in &self.constraints {
            for (pattern, regex) in pinned
                .constraint
                .forbidden_patterns
                .iter()
                .zip(&pinned.patterns)
            {
                let span = regex.find(summary).map(|m| m.range()).or_else(|| {
                    view.and_then(|v| regex.find(&v.text).map(|m| v.source_span(m.range())))
                });
                if let Some(span) = span {
                    out.push(PinnedConflict {
                        constraint_id: pinned.constraint.id.clone(),
                        pattern: pattern.clone(),
                        span,
                    });
                }
            }
        }
        out
    }

    /// Every match of every forbidden pattern in `text`, in constraint order (prose mode
    /// decides which of them the summary proposes).
    pub fn conflicts_all(&self, text: &str) -> Vec<PinnedConflict> {
        let mut out = Vec::new();
        for pinned in &self.constraints {
            let patterns = pinned
                .constraint
                .forbidden_patterns
                .iter()
                .zip(&pinned.patterns);
            for (pattern, regex) in patterns {
                out.extend(regex.find_iter(text).map(|m| PinnedConflict {
                    constraint_id: pinned.constraint.id.clone(),
                    pattern: pattern.clone(),
                    span: m.range(),
                }));
            }
        }
        out
    }

    /// The ids of constraints whose text the trusted channel does not carry byte for byte.
    pub fn missing_from(&self, trusted_content: &str) -> Vec<String> {
        self.constraints
            .iter()
            .filter(|p| !trusted_content.contains(p.constraint.text.as_str()))
            .map(|p| p.constraint.id.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pin(id: &str, text: &str, patterns: &[&str]) -> PinnedConstraint {
        PinnedConstraint {
            id: id.into(),
            severity: "critical".into(),
            text: text.into(),
            forbidden_patterns: patterns.iter().map(|p| p.to_string()).collect(),
        }
    }

    #[test]
    fn forbidden_patterns_find_reopened_paths() {
        let manifest = PinnedManifest::isolate(
            &[],
            &[pin(
                "PIN-1",
                "Never run migration 0042 on the shared database.",
                &[r"\brun\b.{0,40}\b0042\b"],
            )],
        )
        .unwrap();
        let conflicts = manifest.conflicts("Next: Run migration 0042 again to finish.");
        assert_eq!(conflicts.len(), 1);
        assert_eq!(conflicts[0].span, 6..24);
        assert!(manifest
            .conflicts("Migration 0042 must not run again.")
            .is_empty());
    }

    #[test]
    fn separators_do_not_dodge_a_forbidden_pattern() {
        let manifest =
            PinnedManifest::isolate(&[], &[pin("PIN-PUSH", "Never push.", &[r"\bgit\s+push\b"])])
                .unwrap();
        for (summary, token) in [
            ("Next step is to run test git_push.", "git_push"),
            (
                "Next step is to edit git/push/origin/main.",
                "git/push/origin/main",
            ),
            ("Read file src/GitPush.rs.", "src/GitPush.rs"),
            ("Then git push.", "git push"),
        ] {
            let conflicts = manifest.conflicts(summary);
            assert_eq!(conflicts.len(), 1, "{summary}");
            assert_eq!(&summary[conflicts[0].span.clone()], token);
        }
        assert!(manifest
            .conflicts("Read file src/digit_pusher.rs.")
            .is_empty());
    }

    #[test]
    fn presence_is_byte_for_byte() {
        let manifest =
            PinnedManifest::isolate(&[], &[pin("P", "Do not push to main.", &[])]).unwrap();
        assert!(manifest.missing_from("x Do not push to main. y").is_empty());
        assert_eq!(manifest.missing_from("Do not push to  main."), ["P"]);
    }

    #[test]
    fn bad_constraints_are_refused() {
        assert!(PinnedManifest::isolate(&[], &[pin("P", "t", &["("])]).is_err());
        assert!(PinnedManifest::isolate(&[pin("P", "t", &[])], &[pin("P", "u", &[])]).is_err());
        assert!(PinnedManifest::isolate(&[], &[pin("", "t", &[])]).is_err());
    }
}
