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

use super::lazy_regex::{LazyRegex, RegexOptions};
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

/// A pinned constraint and its forbidden patterns (compiled when the manifest was isolated for
/// a check; see [`PinnedManifest::for_context`]).
#[derive(Debug, Clone)]
pub struct Pinned {
    pub constraint: PinnedConstraint,
    pub record_sha256: String,
    patterns: Vec<LazyRegex>,
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
    /// Isolates the policy's defaults and the request's constraints, every forbidden pattern
    /// compiled (one that does not compile refuses the request). A request constraint with
    /// the id of a default replaces nothing: the id clash is refused.
    pub fn isolate(
        defaults: &[PinnedConstraint],
        requested: &[PinnedConstraint],
    ) -> Result<PinnedManifest, String> {
        PinnedManifest::build(defaults, requested, true)
    }

    /// The same manifest as [`PinnedManifest::isolate`] gives (ids, texts, digests), for
    /// rendering the trusted context of a compaction already checked: its forbidden patterns
    /// are left to compile if a check ever asks (one that then does not compile reports a
    /// conflict over the whole text, failing closed), so rendering compiles no regex.
    pub fn for_context(
        defaults: &[PinnedConstraint],
        requested: &[PinnedConstraint],
    ) -> Result<PinnedManifest, String> {
        PinnedManifest::build(defaults, requested, false)
    }

    fn build(
        defaults: &[PinnedConstraint],
        requested: &[PinnedConstraint],
        compile: bool,
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
            let patterns: Vec<LazyRegex> = constraint
                .forbidden_patterns
                .iter()
                .map(|pattern| LazyRegex::new(pattern.as_str(), PATTERN))
                .collect();
            if compile {
                // Compiled for every request that carries it: no up-front full DFA.
                for lazy in &patterns {
                    lazy.get()
                        .map_err(|e| pattern_error(&constraint.id, lazy.pattern(), e))?;
                }
            }
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
                let span = match regex.get() {
                    Ok(regex) => regex.find(summary).map(|m| m.range()).or_else(|| {
                        view.and_then(|v| regex.find(&v.text).map(|m| v.source_span(m.range())))
                    }),
                    Err(_) => Some(0..summary.len()),
                };
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
                let conflict = |span| PinnedConflict {
                    constraint_id: pinned.constraint.id.clone(),
                    pattern: pattern.clone(),
                    span,
                };
                match regex.get() {
                    Ok(regex) => out.extend(regex.find_iter(text).map(|m| conflict(m.range()))),
                    Err(_) => out.push(conflict(0..text.len())),
                }
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
    fn the_manifest_for_a_context_is_the_checked_one_and_fails_closed_on_a_bad_pattern() {
        let pins = [
            pin(
                "PIN-1",
                "Never run migration 0042.",
                &[r"\brun\b.{0,40}\b0042\b"],
            ),
            pin("PIN-2", "Never push.", &[]),
        ];
        let checked = PinnedManifest::isolate(&[pin("D", "Default.", &[])], &pins).unwrap();
        let rendered = PinnedManifest::for_context(&[pin("D", "Default.", &[])], &pins).unwrap();
        assert_eq!(rendered.root_sha256, checked.root_sha256);
        assert_eq!(
            format!("{:?}", rendered.to_value()),
            format!("{:?}", checked.to_value())
        );
        let summary = "Next: run migration 0042.";
        assert_eq!(rendered.conflicts(summary), checked.conflicts(summary));
        // A pattern that does not compile refuses a check; a manifest built for a context
        // never compiled it, and if asked, reports the whole text rather than nothing.
        let broken = [pin("PIN-X", "Never.", &["(unclosed"])];
        let err = PinnedManifest::isolate(&[], &broken).unwrap_err();
        assert!(err.contains("does not compile"), "{err}");
        let lazy = PinnedManifest::for_context(&[], &broken).unwrap();
        assert_eq!(lazy.conflicts("anything").len(), 1);
        assert_eq!(lazy.conflicts("anything")[0].span, 0..8);
        assert_eq!(lazy.conflicts_all("text")[0].span, 0..4);
        // Ids clash and invalid severities are refused either way.
        let twice = [pin("A", "x", &[]), pin("A", "y", &[])];
        assert!(PinnedManifest::for_context(&[], &twice).is_err());
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
