//! The prose table of a policy, compiled once: every regex built case-insensitive with a size
//! bound, every word list stemmed, and a pattern that does not compile named in the error.
//! Whether the rules also do what their examples say is checked in [`super::examples`].

use crate::engine::lazy_regex::{self, Regex, RegexOptions};

use crate::policy::prose::{ClaimKind, InjectionScope, Prose};
use crate::policy::Authority;

use super::stems::{stem, Vocabulary};

/// How every prose pattern compiles.
const OPTIONS: RegexOptions = RegexOptions {
    case_insensitive: true,
    multi_line: true,
    size_limit: 8 << 20,
};

/// `pattern` on the engines that are cheap to build, and on its fast ones once it has
/// searched enough (see [`lazy_regex`]): a check compiles every pattern of the table, and one
/// that meets only short texts (a cue, a section heading, a phrase) never builds the fast ones.
pub(crate) fn compile(pattern: &str, what: &str) -> Result<Regex, String> {
    lazy_regex::build(pattern, OPTIONS)
        .map_err(|e| format!("prose {what} pattern {pattern:?} does not compile: {e}"))
}

fn compile_all(patterns: &[String], what: &str) -> Result<Vec<Regex>, String> {
    patterns.iter().map(|p| compile(p, what)).collect()
}

pub(crate) struct ClaimRule {
    pub id: String,
    pub kind: ClaimKind,
    pub regex: Regex,
}

pub(crate) struct ConflictRule {
    pub id: String,
    pub description: String,
    pub constraint_id: String,
    pub confirmable: bool,
    pub regex: Regex,
}

pub(crate) struct InjectionRule {
    pub id: String,
    pub in_summary: bool,
    pub in_tool: bool,
    pub regex: Regex,
}

pub(crate) struct RuntimeApproval {
    pub marker: String,
    pub grants: Vec<String>,
}

/// The cues, compiled.
pub(crate) struct Cues {
    pub proposal: Vec<Regex>,
    pub negation: Vec<Regex>,
    pub report: Vec<Regex>,
    pub past_tense: Vec<Regex>,
    pub condition: Vec<Regex>,
    /// Each ends with `[\s:,(-]*\z`: it must end right before a quote.
    pub quote_attribution: Vec<Regex>,
}

impl Cues {
    pub fn any(list: &[Regex], text: &str) -> bool {
        list.iter().any(|r| r.is_match(text))
    }
}

/// Section headings, compiled.
pub(crate) struct Sections {
    pub user_messages: Vec<Regex>,
    pub forward: Vec<Regex>,
    pub past: Vec<Regex>,
}

/// The prose rules of one policy.
pub struct ProseRules {
    pub(crate) fence: String,
    pub(crate) sections: Sections,
    pub(crate) cues: Cues,
    pub(crate) vocabulary: Vocabulary,
    pub(crate) min_overlap_percent: usize,
    pub(crate) claims: Vec<ClaimRule>,
    pub(crate) runtime_approvals: Vec<RuntimeApproval>,
    pub(crate) conflicts: Vec<ConflictRule>,
    pub(crate) injection: Vec<InjectionRule>,
    /// The tool-scope injection patterns as one set, to skip clean tool turns at once.
    pub(crate) tool_set: regex::RegexSet,
    pub(crate) role_markers: Vec<Regex>,
    pub(crate) approvals: Vec<Regex>,
    pub(crate) refusals: Vec<Regex>,
}

fn phrases(list: &[String], what: &str) -> Result<Vec<Regex>, String> {
    list.iter()
        .map(|p| compile(&format!(r"\b{}\b", regex::escape(p)), what))
        .collect()
}

impl ProseRules {
    /// Compiles `prose`; the role markers and the approval and refusal phrases are the
    /// policy's `[authority]` ones, shared with strict mode.
    pub fn new(prose: &Prose, authority: &Authority) -> Result<ProseRules, String> {
        let c = &prose.cues;
        let quote_attribution = c
            .quote_attribution
            .iter()
            .map(|p| {
                compile(
                    &format!(r"(?:{p})[\s:,(\-\x{{2014}}\x{{2013}}]*\z"),
                    "quote",
                )
            })
            .collect::<Result<_, _>>()?;
        let injection: Vec<InjectionRule> = prose
            .injection
            .iter()
            .map(|r| {
                Ok(InjectionRule {
                    id: r.id.clone(),
                    in_summary: r.applies_to.contains(&InjectionScope::Summary),
                    in_tool: r.applies_to.contains(&InjectionScope::Tool),
                    regex: compile(&r.pattern, "injection")?,
                })
            })
            .collect::<Result<_, String>>()?;
        let tool_set = regex::RegexSetBuilder::new(
            prose
                .injection
                .iter()
                .filter(|r| r.applies_to.contains(&InjectionScope::Tool))
                .map(|r| r.pattern.as_str()),
        )
        .case_insensitive(true)
        .multi_line(true)
        .size_limit(16 << 20)
        .build()
        .map_err(|e| format!("prose injection patterns do not compile as a set: {e}"))?;
        let markers = authority
            .role_markers
            .iter()
            .map(|p| {
                let options = RegexOptions {
                    size_limit: 4 << 20,
                    ..OPTIONS
                };
                lazy_regex::build(p, options)
                    .map_err(|e| format!("authority role marker {p:?} does not compile: {e}"))
            })
            .collect::<Result<_, _>>()?;
        let rules = ProseRules {
            fence: prose.fence.clone(),
            sections: Sections {
                user_messages: compile_all(&prose.sections.user_messages, "section")?,
                forward: compile_all(&prose.sections.forward, "section")?,
                past: compile_all(&prose.sections.past, "section")?,
            },
            cues: Cues {
                proposal: compile_all(&c.proposal, "proposal cue")?,
                negation: compile_all(&c.negation, "negation cue")?,
                report: compile_all(&c.report, "report cue")?,
                past_tense: compile_all(&c.past_tense, "past-tense cue")?,
                condition: compile_all(&c.condition, "condition cue")?,
                quote_attribution,
            },
            vocabulary: Vocabulary::new(&prose.support.stopwords, &prose.support.decisive),
            min_overlap_percent: usize::try_from(prose.support.min_overlap_percent.clamp(1, 100))
                .unwrap_or(50),
            claims: prose
                .claims
                .iter()
                .map(|r| {
                    Ok(ClaimRule {
                        id: r.id.clone(),
                        kind: r.kind,
                        regex: compile(&r.pattern, "claim")?,
                    })
                })
                .collect::<Result<_, String>>()?,
            runtime_approvals: prose
                .runtime_approvals
                .iter()
                .map(|r| RuntimeApproval {
                    marker: r.marker.clone(),
                    grants: r.grants.iter().map(|g| stem(g)).collect(),
                })
                .collect(),
            conflicts: prose
                .conflicts
                .iter()
                .map(|r| {
                    Ok(ConflictRule {
                        id: r.id.clone(),
                        description: r.description.clone(),
                        constraint_id: r.constraint_id.clone(),
                        confirmable: r.confirmable,
                        regex: compile(&r.pattern, "conflict")?,
                    })
                })
                .collect::<Result<_, String>>()?,
            injection,
            tool_set,
            role_markers: markers,
            approvals: phrases(&authority.approval_markers, "approval")?,
            refusals: phrases(&authority.refusal_markers, "refusal")?,
        };
        Ok(rules)
    }

    /// Whether every claim, conflict and injection rule does what its examples say (see
    /// [`super::examples`]); part of [`crate::engine::PolicyEngine::validate`], which every
    /// policy but a built-in as shipped passes when it is compiled.
    pub fn validate(&self, prose: &Prose) -> Result<(), String> {
        super::examples::check(self, prose)
    }
}
