//! Carried-forward injection: text in a prose summary that would make the next context obey
//! something other than the user. Four kinds, each a finding on its sentence:
//! - the policy's `summary` injection rules ("ignore previous instructions", "you are now in
//!   developer mode", text addressed to AI agents), wherever they stand;
//! - chat-template role markers (the policy's `[authority]` ones, shared with strict mode);
//! - hidden characters: everything the terminal sanitizer badges (bidi controls, zero-width
//!   and tag characters, escapes), since no honest summary needs them;
//! - an instruction found in a tool turn (a sentence matching a `tool` rule) that a summary
//!   sentence repeats, unless that sentence refuses it or only reports the past.

use std::collections::HashSet;
use std::ops::Range;

use crate::engine::report::{CheckResult, Finding};
use crate::sanitize::{sanitize, SegmentKind};

use super::conflicts::sentence_span;
use super::rules::ProseRules;
use super::segment::Section;
use super::Summary;

/// The share of a tool instruction's words (percent) a summary sentence must repeat.
const CARRIED_PERCENT: usize = 60;
/// Fewest content words a tool instruction needs before repeating it can be told apart.
const MIN_CARRIED_WORDS: usize = 2;

/// The sentence of `text` around `at` (ends at `.`, `!`, `?` before a space, or a newline).
fn sentence_around(text: &str, at: &Range<usize>) -> Range<usize> {
    let is_end = |b: u8, next: Option<&u8>| {
        b == b'\n' || (matches!(b, b'.' | b'!' | b'?') && next.is_none_or(u8::is_ascii_whitespace))
    };
    let bytes = text.as_bytes();
    let start = (0..at.start)
        .rev()
        .find(|&i| bytes.get(i).is_some_and(|&b| is_end(b, bytes.get(i + 1))))
        .map_or(0, |i| i + 1);
    let end = (at.end..bytes.len())
        .find(|&i| bytes.get(i).is_some_and(|&b| is_end(b, bytes.get(i + 1))))
        .map_or(bytes.len(), |i| i + 1);
    start..end
}

pub fn injection(rules: &ProseRules, summary: &Summary<'_>) -> CheckResult {
    let text = summary.text;
    let mut findings: Vec<Finding> = Vec::new();
    let mut push = |span: Range<usize>, rule: &str, message: String| {
        if !findings
            .iter()
            .any(|f| f.span.as_ref() == Some(&span) && f.rule_id == rule)
        {
            findings.push(Finding {
                kind: "injection".into(),
                field: "summary_text".into(),
                span: Some(span),
                rule_id: rule.to_owned(),
                message,
                ..Finding::default()
            });
        }
    };
    for rule in rules.injection.iter().filter(|r| r.in_summary) {
        for found in rule.regex.find_iter(text) {
            push(
                sentence_span(summary, &found.range()),
                &rule.id,
                "words that carry an injected instruction".into(),
            );
        }
    }
    for marker in &rules.role_markers {
        for found in marker.find_iter(text) {
            push(
                found.range(),
                "role-marker",
                "a chat-template role marker in summary data claims a trusted role".into(),
            );
        }
    }
    let sanitized = sanitize(text);
    for segment in &sanitized.segments {
        let hidden = segment.kind == SegmentKind::Badge
            && !matches!(text.get(segment.source.clone()), Some("\t" | "\r"));
        if hidden {
            push(
                segment.source.clone(),
                "hidden-character",
                format!("a hidden character the sanitizer shows as {}", segment.text),
            );
        }
    }
    for (turn, instruction) in tool_instructions(rules, summary) {
        for sentence in &summary.segments.sentences {
            if sentence.code || sentence.heading {
                continue;
            }
            let said = text.get(sentence.span.clone()).unwrap_or("");
            let bag = rules.vocabulary.bag(said);
            let held = instruction.iter().filter(|w| bag.contains(*w)).count();
            if held * 100 < CARRIED_PERCENT * instruction.len() {
                continue;
            }
            let reported = sentence.section == Section::Past && !rules.cues.proposal.is_match(said);
            if reported || rules.cues.negation.is_match(said) {
                continue;
            }
            push(
                sentence.span.clone(),
                "carried-from-tool",
                format!("repeats an instruction found in tool turn {turn}"),
            );
        }
    }
    findings.sort_by_key(|f| f.span.as_ref().map(|s| s.start));
    if findings.is_empty() {
        return CheckResult::pass(
            "injection",
            "no instruction carried from tool output, no role marker, no hidden character",
        );
    }
    let detail = format!("{} carried-forward injection finding(s)", findings.len());
    CheckResult::fail("injection", "injection_carried", detail).with_findings(findings)
}

/// The instructions the policy's `tool` rules and the role markers find in the tool turns, as the content stems of
/// what each asks for, with
/// the id of the turn each came from.
fn tool_instructions(rules: &ProseRules, summary: &Summary<'_>) -> Vec<(String, HashSet<String>)> {
    let mut out: Vec<(String, HashSet<String>)> = Vec::new();
    let tool_rules: Vec<_> = rules.injection.iter().filter(|r| r.in_tool).collect();
    for message in summary.request.messages.iter().filter(|m| m.role == "tool") {
        let markers = || {
            rules
                .role_markers
                .iter()
                .any(|r| r.is_match(&message.content))
        };
        if !rules.tool_set.is_match(&message.content) && !markers() {
            continue;
        }
        let marked = tool_rules
            .iter()
            .map(|r| &r.regex)
            .chain(&rules.role_markers)
            .flat_map(|regex| regex.find_iter(&message.content));
        for found in marked {
            // What the instruction asks for: its sentence less the words that mark it.
            let around = sentence_around(&message.content, &found.range());
            let marking = rules
                .vocabulary
                .bag(message.content.get(found.range()).unwrap_or(""));
            let mut words = rules
                .vocabulary
                .bag(message.content.get(around).unwrap_or(""));
            words.retain(|w| !marking.contains(w));
            if words.len() >= MIN_CARRIED_WORDS && !out.iter().any(|(_, w)| *w == words) {
                out.push((message.message_id.clone(), words));
            }
        }
    }
    out
}
