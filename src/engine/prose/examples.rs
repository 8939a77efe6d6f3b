//! The prose rules test themselves: every claim, conflict and injection rule of a policy's
//! `[prose]` table carries examples that must give a finding of that rule and negative
//! examples that must not, run through the very checks the gate runs (a one-sentence summary
//! over a span with no user turn). A policy whose rules fail their own examples is refused
//! when it is compiled, so a rule that was edited into uselessness cannot ship.

use crate::engine::report::CheckResult;
use crate::engine::{GateRequest, SummarizerOutput};
use crate::policy::prose::Prose;

use super::segment::Segments;
use super::{claims, conflicts, injection, ProseRules, Summary};

fn request() -> GateRequest {
    GateRequest {
        tenant_id: "examples".into(),
        task_id: "examples".into(),
        messages: Vec::new(),
        expected_invariant_ids: Vec::new(),
        expected_commitment_ids: Vec::new(),
        pinned_constraints: Vec::new(),
        model_revision: String::new(),
        summarizer: SummarizerOutput::Raw(String::new()),
    }
}

fn fires(
    rules: &ProseRules,
    check: fn(&ProseRules, &Summary<'_>) -> CheckResult,
    rule: &str,
    text: &str,
) -> bool {
    let request = request();
    let summary = Summary {
        text,
        segments: Segments::new(text, &rules.sections),
        request: &request,
    };
    check(rules, &summary)
        .findings
        .iter()
        .any(|f| f.rule_id == rule)
}

fn expect(
    rules: &ProseRules,
    check: fn(&ProseRules, &Summary<'_>) -> CheckResult,
    what: &str,
    rule: &str,
    examples: &[String],
    negative: &[String],
) -> Result<(), String> {
    for example in examples {
        if !fires(rules, check, rule, example) {
            return Err(format!(
                "prose {what} \"{rule}\" does not fire on its own example {example:?}: fix the pattern or the example"
            ));
        }
    }
    for example in negative {
        if fires(rules, check, rule, example) {
            return Err(format!(
                "prose {what} \"{rule}\" fires on its own negative example {example:?}: fix the pattern or the example"
            ));
        }
    }
    Ok(())
}

/// Runs every example of `prose` against its compiled `rules`.
pub fn check(rules: &ProseRules, prose: &Prose) -> Result<(), String> {
    for r in &prose.claims {
        expect(
            rules,
            claims::authority,
            "claim",
            &r.id,
            &r.examples,
            &r.negative_examples,
        )?;
    }
    for r in &prose.conflicts {
        expect(
            rules,
            conflicts::registered,
            "conflict",
            &r.id,
            &r.examples,
            &r.negative_examples,
        )?;
    }
    for r in &prose.injection {
        // A rule for tool turns only is tested on its pattern: the summary check never runs it.
        if r.applies_to
            .contains(&crate::policy::prose::InjectionScope::Summary)
        {
            expect(
                rules,
                injection::injection,
                "injection",
                &r.id,
                &r.examples,
                &r.negative_examples,
            )?;
        } else if let Some(rule) = rules.injection.iter().find(|i| i.id == r.id) {
            for example in &r.examples {
                if !rule.regex.is_match(example) {
                    return Err(format!(
                        "prose injection \"{}\" does not match its own example {example:?}",
                        r.id
                    ));
                }
            }
            for example in &r.negative_examples {
                if rule.regex.is_match(example) {
                    return Err(format!(
                        "prose injection \"{}\" matches its own negative example {example:?}",
                        r.id
                    ));
                }
            }
        }
    }
    Ok(())
}
