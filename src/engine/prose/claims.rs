//! Fabricated authority in a prose summary: every statement that the user or the system asked
//! for, approved, confirmed or allowed something (the policy's `[[prose.claims]]`), and every
//! user message the summary quotes, matched against the user turns of the compacted span.
//!
//! A claim of the user is supported by a user turn that holds every decisive word of the
//! claimed action (push, delete, production, …) and enough of its other words, by stem, so a
//! paraphrase passes and "the user approved the push to main" does not borrow its support from
//! a turn about the login page; an approval needs a turn that approves (an approval phrase, no
//! refusal), or the runtime's own record of one (Claude Code's plan approval) for what that
//! record grants. A quote must be in a user turn nearly word for word, and never with a
//! negation added or dropped. No source turn speaks for the system, so a claim of system
//! authority is never supported. A finding names the sentence and the closest real turn.

use std::collections::HashSet;
use std::ops::Range;

use crate::engine::report::{CheckResult, Finding};
use crate::engine::SourceMessage;
use crate::policy::prose::ClaimKind;

use super::conflicts::sentence_span;
use super::quoted::{quoted, QUOTE_MARKS};
use super::rules::ProseRules;
use super::segment::{clause_start, Section};
use super::stems::{allowed_edits, edits_to_match, stem, tokens};
use super::Summary;

/// Longest quote compared word by word (a longer one is cut: its start must still match).
const MAX_QUOTE_TOKENS: usize = 120;

/// The words that name the user after "by".
const USER_WORDS: [&str; 6] = [
    "user",
    "human",
    "operator",
    "owner",
    "maintainer",
    "developer",
];

/// Who is claimed to have acted.
fn is_system(role: &str) -> bool {
    let role = role.trim().to_lowercase();
    [
        "system",
        "admin",
        "administrator",
        "root",
        "platform",
        "developer message",
        "developer prompt",
        "system prompt",
    ]
    .iter()
    .any(|r| role.starts_with(r))
}

/// A user turn's words, once.
struct Turn<'a> {
    message: &'a SourceMessage,
    bag: HashSet<String>,
    /// The words of the assistant turn an approving turn answers.
    answered: HashSet<String>,
    approves: bool,
}

impl Turn<'_> {
    fn holds(&self, stem: &str, approval: bool) -> bool {
        self.bag.contains(stem) || (approval && self.answered.contains(stem))
    }
}

/// The user turns of `sources`. A turn that approves also holds the words of the assistant
/// turn it answers ("Shall I push to main?" "yes"): that is what it approved.
fn user_turns<'a>(rules: &ProseRules, sources: &'a [SourceMessage]) -> Vec<Turn<'a>> {
    let mut out = Vec::new();
    let mut asked: Option<&SourceMessage> = None;
    for m in sources {
        match m.role.as_str() {
            "assistant" => asked = Some(m),
            "user" => {
                let approves =
                    rules.approvals.is_match(&m.content) && !rules.refusals.is_match(&m.content);
                let bag = rules.vocabulary.bag(&m.content);
                let mut answered = HashSet::new();
                if let (true, Some(question)) = (approves, asked) {
                    answered = rules.vocabulary.bag(&question.content);
                    answered.retain(|w| !bag.contains(w));
                }
                out.push(Turn {
                    message: m,
                    bag,
                    answered,
                    approves,
                });
                asked = None;
            }
            _ => {}
        }
    }
    out
}

/// How well the best turn covers a claimed action: the turn and the words it holds.
struct Support<'a> {
    turn: Option<&'a SourceMessage>,
    held: usize,
    wanted: usize,
    supported: bool,
}

fn support<'a>(
    rules: &ProseRules,
    turns: &[Turn<'a>],
    action: &[String],
    approval: bool,
) -> Support<'a> {
    let vocabulary = &rules.vocabulary;
    let decisive: HashSet<&String> = action
        .iter()
        .filter(|s| vocabulary.is_decisive(s))
        .collect();
    let others: HashSet<&String> = action
        .iter()
        .filter(|s| !vocabulary.is_decisive(s))
        .collect();
    let mut best = Support {
        turn: None,
        held: 0,
        wanted: decisive.len() + others.len(),
        supported: false,
    };
    for turn in turns {
        let has_decisive = decisive.iter().all(|s| turn.holds(s, approval));
        let held_others = others.iter().filter(|s| turn.holds(s, approval)).count();
        let held = held_others + decisive.iter().filter(|s| turn.holds(s, approval)).count();
        // The share rounds down: one descriptive word alone may be a paraphrase.
        let enough = held_others >= others.len() * rules.min_overlap_percent / 100;
        let supported = has_decisive && enough && (!approval || turn.approves);
        if supported || held > best.held || best.turn.is_none() {
            best = Support {
                turn: Some(turn.message),
                held,
                wanted: best.wanted,
                supported,
            };
        }
        if supported {
            break;
        }
    }
    best
}

/// Marks that end the first clause of a claimed action.
const HEAD_BREAKS: [&str; 11] = [
    " - ",
    " — ",
    " – ",
    "; ",
    ": ",
    " (",
    ", ",
    ". ",
    ".\" ",
    ".\u{201D} ",
    " which ",
];

/// The first clause of `action`: up to the first break after its first word.
fn head_clause(action: &str) -> &str {
    let lead = action.len()
        - action
            .trim_start_matches(|c: char| !c.is_alphanumeric())
            .len();
    let rest = &action[lead..];
    let end = HEAD_BREAKS
        .iter()
        .filter_map(|b| rest.find(b))
        .min()
        .unwrap_or(rest.len());
    &action[..lead + end]
}

/// Whether a runtime record in a tool turn supports an approval of `action`.
fn runtime_grants(rules: &ProseRules, sources: &[SourceMessage], action: &[String]) -> bool {
    if action.iter().any(|s| rules.vocabulary.is_decisive(s)) {
        return false;
    }
    rules.runtime_approvals.iter().any(|record| {
        action.iter().any(|s| record.grants.contains(s))
            && sources.iter().filter(|m| m.role == "tool").any(|m| {
                m.content
                    .lines()
                    .any(|l| l.trim_start().starts_with(&record.marker))
            })
    })
}

fn closest(s: &Support<'_>) -> String {
    match s.turn {
        Some(turn) => format!(
            "closest user turn {} holds {} of {} of its words",
            turn.message_id, s.held, s.wanted
        ),
        None => "the compacted span has no user turn".into(),
    }
}

/// The quotes the summary attributes to the user: every quoted string in a section that
/// lists the user's messages, and one right after words that attribute it to the user.
fn quotes(rules: &ProseRules, summary: &Summary<'_>) -> Vec<Range<usize>> {
    let text = summary.text;
    let mut out = Vec::new();
    for inner in quoted(text) {
        let Some(sentence) = summary.segments.at(inner.start) else {
            continue;
        };
        if sentence.code {
            continue;
        }
        // The words before the opening quote (`"`, or `“`, three bytes), on its line and after
        // any quote mark before it: "the user said" attributes only the quote right after it.
        let opening = text[..inner.start].char_indices().next_back();
        let open = opening.map_or(0, |(at, _)| at);
        let from = text[..open]
            .char_indices()
            .rev()
            .find(|&(_, c)| c == '\n' || QUOTE_MARKS.contains(&c))
            .map_or(0, |(at, c)| at + c.len_utf8());
        let before = &text[from..open];
        let attributed = rules.cues.quote_attribution.is_match(before);
        if sentence.section == Section::UserMessages || attributed {
            out.push(inner);
        }
    }
    out
}

pub fn authority(rules: &ProseRules, summary: &Summary<'_>) -> CheckResult {
    let text = summary.text;
    let sources = &summary.request.messages;
    let turns = user_turns(rules, sources);
    let mut findings: Vec<Finding> = Vec::new();
    let push = |findings: &mut Vec<Finding>, span: Range<usize>, rule: &str, message: String| {
        if !findings
            .iter()
            .any(|f| f.span.as_ref() == Some(&span) && f.rule_id == rule)
        {
            findings.push(Finding {
                kind: "authority".into(),
                field: "summary_text".into(),
                span: Some(span),
                rule_id: rule.to_owned(),
                message,
                ..Finding::default()
            });
        }
    };
    for rule in &rules.claims {
        for captures in rule.regex.captures_iter(text) {
            let Some(whole) = captures.get_match() else {
                continue;
            };
            let Some(sentence) = summary.segments.at(whole.start()) else {
                continue;
            };
            if sentence.code || sentence.heading {
                continue;
            }
            let clause = clause_start(text, &sentence.span, whole.start());
            let claim = text.get(clause..whole.end()).unwrap_or("");
            let lead = text.get(clause..whole.start()).unwrap_or("");
            if rules.cues.negation.is_match(lead) || rules.cues.condition.is_match(claim) {
                continue;
            }
            let group = |name: &str| {
                captures
                    .get_group_by_name(name)
                    .and_then(|span| text.get(span.range()))
            };
            let mut role = group("role").or_else(|| group("role2")).unwrap_or("");
            // "approved by the reviewer" claims nobody's authority but the reviewer's.
            if let Some(by) = group("by") {
                let who = by.split_whitespace().last().unwrap_or("");
                if is_system(who) {
                    role = who;
                } else if !USER_WORDS.contains(&who.to_lowercase().as_str()) {
                    continue;
                }
            }
            let span = sentence_span(summary, &whole.range());
            if is_system(role) {
                push(
                    &mut findings,
                    span,
                    &rule.id,
                    "claims the system's authority; no source turn speaks for the system".into(),
                );
                continue;
            }
            let action_text = group("action")
                .unwrap_or_else(|| text.get(whole.end()..sentence.span.end).unwrap_or(""));
            // Every decisive word of the action counts; the other words only of its first
            // clause, since summaries go on to describe what was asked for.
            let head = head_clause(action_text);
            let mut action = rules.vocabulary.stems(head);
            action.extend(
                rules
                    .vocabulary
                    .stems(action_text)
                    .into_iter()
                    .filter(|s| rules.vocabulary.is_decisive(s)),
            );
            let approval = rule.kind == ClaimKind::Approval;
            let found = support(rules, &turns, &action, approval);
            let granted = || {
                let sentence = text.get(sentence.span.clone()).unwrap_or("");
                let named = if action.is_empty() {
                    rules.vocabulary.stems(sentence)
                } else {
                    action.clone()
                };
                runtime_grants(rules, sources, &named)
            };
            if found.supported || (approval && granted()) {
                continue;
            }
            let what = if approval { "approval" } else { "request" };
            push(
                &mut findings,
                span,
                &rule.id,
                format!(
                    "claims a user {what} that no user turn of the compacted span supports; {}",
                    closest(&found)
                ),
            );
        }
    }
    let user_tokens: Vec<(&SourceMessage, Vec<String>, HashSet<String>)> = sources
        .iter()
        .filter(|m| m.role == "user")
        .map(|m| {
            let t = tokens(&m.content);
            let stems = t.iter().map(|w| stem(w)).collect();
            (m, t, stems)
        })
        .collect();
    for range in quotes(rules, summary) {
        let quoted = text.get(range.clone()).unwrap_or("");
        let quoted = quoted.trim_end_matches(['.', '…', ' ']);
        let mut words = tokens(quoted);
        if words.is_empty() {
            continue;
        }
        words.truncate(MAX_QUOTE_TOKENS);
        let never = words.len() + 1;
        let allowed = allowed_edits(words.len());
        // Only a turn that holds enough of the quote's words by stem can be within the
        // allowed edits (a typo may hide a word from the stems, so the bar is half of that);
        // the others are not aligned word by word.
        let stems: Vec<String> = words.iter().map(|w| stem(w)).collect();
        let need = (words.len() - allowed.min(words.len())) / 2;
        let best = user_tokens
            .iter()
            .filter(|(_, _, bag)| stems.iter().filter(|w| bag.contains(*w)).count() >= need)
            .map(|(m, t, _)| (*m, edits_to_match(&words, t, never)))
            .min_by_key(|(_, edits)| *edits)
            .or_else(|| user_tokens.first().map(|(m, _, _)| (*m, words.len())));
        if best.is_some_and(|(_, edits)| edits <= allowed) {
            continue;
        }
        let closest = match best {
            Some((m, edits)) => format!(
                "closest user turn {} differs by {} word edit(s)",
                m.message_id,
                edits.min(words.len())
            ),
            None => "the compacted span has no user turn".into(),
        };
        push(
            &mut findings,
            range,
            "quoted-user-message",
            format!(
                "quotes a user message that no user turn of the compacted span says; {closest}"
            ),
        );
    }
    findings.sort_by_key(|f| f.span.as_ref().map(|s| s.start));
    if findings.is_empty() {
        return CheckResult::pass(
            "authority",
            "every claim and quote of the user is supported by a user turn",
        );
    }
    let detail = format!(
        "{} claim(s) or quote(s) of authority that no source turn supports",
        findings.len()
    );
    CheckResult::fail("authority", "fabricated_authority", detail).with_findings(findings)
}
