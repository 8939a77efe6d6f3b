//! Fabricated authority: a summary that claims an instruction, approval or confirmation
//! from the user or the system ("the user approved the force-push", "as instructed by the
//! system") or carries a chat-template role marker. A claim is supported only when a source
//! turn of that role says so: a user turn with an approval phrase, no refusal phrase, and
//! every content word of the claimed action. No source turn has the system role, so a claim
//! of system authority is never supported. Support is looked up, never guessed.
//!
//! The rules also read joined words apart (`user_approved_pushing_to_main`,
//! `developer:allow_force_push` read as sentences, see `words`); a claim found only there is
//! reported on the bytes of the tokens that hid it.

use crate::policy::Authority;

use super::lazy_regex::{LazyRegex, RegexOptions};
use super::pattern_set::PatternGroup;
use super::words::SplitView;
use super::SourceMessage;

/// A sentence of the summary that claims authority no source turn supports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthorityFinding {
    /// `user`, `system`, or `marker` for a role marker.
    pub role: String,
    pub action: String,
    /// Byte range of the sentence in the summary.
    pub span: std::ops::Range<usize>,
    pub reason: String,
}

/// The policy's authority rules, compiled; each pattern on first use (see [`LazyRegex`]), and
/// the approval and refusal phrases as one word-bounded alternation each, which matches
/// wherever one of its phrases does. The role markers and claims are also one
/// [`PatternGroup`] (markers first), so a text runs only the patterns that match in it.
pub struct AuthorityChecker {
    claims: Vec<LazyRegex>,
    markers: Vec<LazyRegex>,
    group: PatternGroup,
    approvals: Option<LazyRegex>,
    refusals: Option<LazyRegex>,
    stopwords: Vec<String>,
}

const OPTIONS: RegexOptions = RegexOptions {
    case_insensitive: true,
    multi_line: true,
    size_limit: 4 << 20,
};

fn lazy(patterns: &[String]) -> Vec<LazyRegex> {
    patterns
        .iter()
        .map(|p| LazyRegex::new(p, OPTIONS))
        .collect()
}

/// `\b(?:p1|p2|…)\b` over the escaped phrases; `None` for no phrase.
fn phrases(phrases: &[String]) -> Option<LazyRegex> {
    let escaped: Vec<String> = phrases.iter().map(|p| regex::escape(p)).collect();
    (!escaped.is_empty())
        .then(|| LazyRegex::new(format!(r"\b(?:{})\b", escaped.join("|")), OPTIONS))
}

/// Whether one of `phrases` is in `text` (no phrases: no); `None` when they do not compile.
fn says(phrases: Option<&LazyRegex>, text: &str) -> Option<bool> {
    match phrases {
        None => Some(false),
        Some(phrases) => phrases.get().ok().map(|r| r.is_match(text)),
    }
}

/// A pattern that does not compile, as the finding that quarantines the summary (fail
/// closed: a rule that cannot run never passes).
fn broken(what: &str, pattern: &str, reason: &str, at: usize) -> AuthorityFinding {
    AuthorityFinding {
        role: "marker".into(),
        action: String::new(),
        span: at..at,
        reason: format!("authority {what} pattern {pattern:?} does not compile: {reason}"),
    }
}

fn role_of(word: &str) -> &'static str {
    match word.to_lowercase().as_str() {
        "system" | "admin" | "administrator" | "platform" | "developer" | "developer message"
        | "root" | "system prompt" => "system",
        _ => "user",
    }
}

/// Whether the character at byte `at` of `text` ends a sentence: `!`, `?`, a newline, or a
/// `.` before whitespace or the end (the `.` of `src/main.rs` ends nothing).
fn ends_sentence(text: &str, at: usize, c: char) -> bool {
    match c {
        '!' | '?' | '\n' => true,
        '.' => text[at + 1..]
            .chars()
            .next()
            .is_none_or(super::pytext::is_space),
        _ => false,
    }
}

/// The sentence around `at` in `text`.
fn sentence_span(text: &str, at: std::ops::Range<usize>) -> std::ops::Range<usize> {
    let start = text[..at.start]
        .char_indices()
        .rev()
        .find(|&(i, c)| ends_sentence(text, i, c))
        .map_or(0, |(i, c)| i + c.len_utf8());
    let end = text[at.end..]
        .char_indices()
        .find(|&(i, c)| ends_sentence(text, at.end + i, c))
        .map_or(text.len(), |(i, c)| at.end + i + c.len_utf8());
    let lead = text[start..end].len() - text[start..end].trim_start().len();
    (start + lead)..end
}

impl AuthorityChecker {
    pub fn new(rules: &Authority) -> Result<AuthorityChecker, String> {
        for pattern in &rules.claim_patterns {
            if !pattern.contains("?P<role>") && !pattern.contains("?<role>") {
                return Err(format!(
                    "authority claim pattern {pattern:?} has no named group \"role\""
                ));
            }
        }
        let group = rules
            .role_markers
            .iter()
            .chain(&rules.claim_patterns)
            .cloned()
            .collect();
        Ok(AuthorityChecker {
            group: PatternGroup::new(group, OPTIONS),
            claims: lazy(&rules.claim_patterns),
            markers: lazy(&rules.role_markers),
            approvals: phrases(&rules.approval_markers),
            refusals: phrases(&rules.refusal_markers),
            stopwords: rules.stopwords.iter().map(|w| w.to_lowercase()).collect(),
        })
    }

    /// Compiles every pattern now: the first that does not compile, and why.
    pub fn validate(&self) -> Result<(), String> {
        for (what, patterns) in [
            ("claim", self.claims.iter().collect::<Vec<_>>()),
            ("role marker", self.markers.iter().collect()),
            ("approval", self.approvals.iter().collect()),
            ("refusal", self.refusals.iter().collect()),
        ] {
            for pattern in patterns {
                pattern.compile_now().map_err(|e| {
                    format!(
                        "authority {what} pattern {:?} does not compile: {e}",
                        pattern.pattern()
                    )
                })?;
            }
        }
        Ok(())
    }

    /// Whether the rules can find anything at all.
    pub fn is_empty(&self) -> bool {
        self.claims.is_empty() && self.markers.is_empty()
    }

    fn action_words(&self, action: &str) -> Vec<String> {
        action
            .split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_'))
            .map(|w| w.trim_matches('-').to_lowercase())
            .filter(|w| w.chars().count() >= 3 && !self.stopwords.contains(w))
            .collect()
    }

    fn user_supports(&self, action: &[String], sources: &[SourceMessage]) -> bool {
        sources.iter().filter(|m| m.role == "user").any(|m| {
            let content = m.content.to_lowercase();
            // Phrases that do not compile approve nothing and refuse everything (fail closed).
            says(self.approvals.as_ref(), &m.content) == Some(true)
                && says(self.refusals.as_ref(), &m.content) == Some(false)
                && action.iter().all(|word| content.contains(word.as_str()))
        })
    }

    pub fn check(&self, summary: &str, sources: &[SourceMessage]) -> Vec<AuthorityFinding> {
        let mut findings: Vec<AuthorityFinding> = Vec::new();
        self.check_text(summary, sources, &mut findings, &|range| {
            sentence_span(summary, range)
        });
        let view = SplitView::new(summary);
        if view.is_split() {
            let mut joined = Vec::new();
            self.check_text(&view.text, sources, &mut joined, &|range| {
                view.source_span(range)
            });
            for finding in joined {
                let overlaps = findings
                    .iter()
                    .any(|f| f.span.start < finding.span.end && finding.span.start < f.span.end);
                if !overlaps {
                    findings.push(finding);
                }
            }
        }
        findings.sort_by_key(|f| f.span.start);
        findings
    }

    /// The findings in `text`; `span` turns a match's range in `text` into the span of the
    /// summary the finding names.
    fn check_text(
        &self,
        text: &str,
        sources: &[SourceMessage],
        findings: &mut Vec<AuthorityFinding>,
        span: &dyn Fn(std::ops::Range<usize>) -> std::ops::Range<usize>,
    ) {
        let push = |finding: AuthorityFinding, findings: &mut Vec<AuthorityFinding>| {
            if !findings.iter().any(|f| f.span == finding.span) {
                findings.push(finding);
            }
        };
        let candidates = self.group.candidates(text);
        for (index, marker) in self.markers.iter().enumerate() {
            if !candidates.may_match(index) {
                continue;
            }
            let marker = match marker.get() {
                Ok(marker) => marker,
                Err(why) => {
                    push(broken("role marker", marker.pattern(), why, 0), findings);
                    continue;
                }
            };
            for found in marker.find_iter(text) {
                let finding = AuthorityFinding {
                    role: "marker".into(),
                    action: String::new(),
                    span: span(found.range()),
                    reason: "a chat-template role marker in summary data claims a trusted role"
                        .into(),
                };
                push(finding, findings);
            }
        }
        for (index, claim) in self.claims.iter().enumerate() {
            if !candidates.may_match(self.markers.len() + index) {
                continue;
            }
            let claim = match claim.get() {
                Ok(claim) => claim,
                Err(why) => {
                    push(broken("claim", claim.pattern(), why, 0), findings);
                    continue;
                }
            };
            for captures in claim.captures_iter(text) {
                let (Some(whole), Some(role)) =
                    (captures.get_match(), captures.get_group_by_name("role"))
                else {
                    continue;
                };
                let role = role_of(text.get(role.range()).unwrap_or(""));
                let action_span = captures.get_group_by_name("action");
                // A pattern without an `action` group claims for its whole sentence.
                let action = match action_span {
                    Some(a) => text.get(a.range()),
                    None => text.get(sentence_span(text, whole.range())),
                }
                .unwrap_or("")
                .trim()
                .to_owned();
                let words = self.action_words(&action);
                let reason = if role == "system" {
                    "no source turn has the system role, so no system instruction can be carried"
                        .to_owned()
                } else if self.user_supports(&words, sources) {
                    continue;
                } else if words.is_empty() {
                    "no user turn approves or confirms anything".to_owned()
                } else {
                    // The action's words stay out of the message: they may hold a secret.
                    format!(
                        "no user turn approves the claimed action ({} word(s) checked)",
                        words.len()
                    )
                };
                // The claim itself, less the action it claims for, when the action trails or
                // leads it: on the split view, the tokens that make the claim.
                let head = match action_span {
                    Some(a) if a.end == whole.end() && a.start > whole.start() => {
                        whole.start()..a.start
                    }
                    Some(a) if a.start == whole.start() && a.end < whole.end() => {
                        a.end..whole.end()
                    }
                    _ => whole.range(),
                };
                let finding = AuthorityFinding {
                    role: role.into(),
                    action,
                    span: span(head),
                    reason,
                };
                push(finding, findings);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::AuthorityChecker;
    use crate::policy::Policy;

    #[test]
    fn the_built_in_authority_patterns_compile_as_one_group() {
        for name in ["default", "seed-compatible", "prose"] {
            let checker = Policy::builtin(name)
                .map_err(|e| e.to_string())
                .and_then(|p| AuthorityChecker::new(&p.authority));
            let Ok(checker) = checker else {
                panic!("built-in policy {name:?} compiles");
            };
            if !checker.is_empty() {
                assert!(
                    checker.group.candidates("a plain summary").answered(),
                    "{name}"
                );
            }
        }
    }
}
