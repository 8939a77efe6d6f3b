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

/// Patterns asked only whether any of them matches a text (the cues, the section headings, the
/// approval and refusal phrases): one set ([`lazy_regex::build_any`]), whose engines are built
/// once for the list rather than once a pattern, and which matches a text exactly when one of
/// them does. A list whose set does not build is compiled pattern by pattern: that names the
/// pattern that does not compile, or, when each does (a size limit only the whole exceeds),
/// keeps them apart.
pub(crate) enum AnyOf {
    Set(Regex),
    Each(Vec<Regex>),
}

impl AnyOf {
    pub(crate) fn new(patterns: &[String], what: &str) -> Result<AnyOf, String> {
        match lazy_regex::build_any(patterns, OPTIONS) {
            Ok(set) => Ok(AnyOf::Set(set)),
            Err(_) => compile_all(patterns, what).map(AnyOf::Each),
        }
    }

    pub fn is_match(&self, text: &str) -> bool {
        match self {
            AnyOf::Set(set) => set.is_match(text),
            AnyOf::Each(list) => list.iter().any(|r| r.is_match(text)),
        }
    }
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
    pub proposal: AnyOf,
    pub negation: AnyOf,
    pub report: AnyOf,
    pub past_tense: AnyOf,
    pub condition: AnyOf,
    /// Each ends with `[\s:,(-]*\z`: it must end right before a quote.
    pub quote_attribution: AnyOf,
}

/// Section headings, compiled.
pub(crate) struct Sections {
    pub user_messages: AnyOf,
    pub forward: AnyOf,
    pub past: AnyOf,
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
    pub(crate) approvals: AnyOf,
    pub(crate) refusals: AnyOf,
}

fn phrases(list: &[String], what: &str) -> Result<AnyOf, String> {
    let patterns: Vec<String> = list
        .iter()
        .map(|p| format!(r"\b{}\b", regex::escape(p)))
        .collect();
    AnyOf::new(&patterns, what)
}

impl ProseRules {
    /// Compiles `prose`; the role markers and the approval and refusal phrases are the
    /// policy's `[authority]` ones, shared with strict mode.
    pub fn new(prose: &Prose, authority: &Authority) -> Result<ProseRules, String> {
        let c = &prose.cues;
        let quote_attribution: Vec<String> = c
            .quote_attribution
            .iter()
            .map(|p| format!(r"(?:{p})[\s:,(\-\x{{2014}}\x{{2013}}]*\z"))
            .collect();
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
                user_messages: AnyOf::new(&prose.sections.user_messages, "section")?,
                forward: AnyOf::new(&prose.sections.forward, "section")?,
                past: AnyOf::new(&prose.sections.past, "section")?,
            },
            cues: Cues {
                proposal: AnyOf::new(&c.proposal, "proposal cue")?,
                negation: AnyOf::new(&c.negation, "negation cue")?,
                report: AnyOf::new(&c.report, "report cue")?,
                past_tense: AnyOf::new(&c.past_tense, "past-tense cue")?,
                condition: AnyOf::new(&c.condition, "condition cue")?,
                quote_attribution: AnyOf::new(&quote_attribution, "quote")?,
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

#[cfg(test)]
mod tests {
    use super::AnyOf;

    fn list(patterns: &[&str]) -> Vec<String> {
        patterns.iter().map(|p| (*p).to_owned()).collect()
    }

    #[test]
    fn a_list_matches_a_text_exactly_when_one_of_its_patterns_does() {
        let patterns = list(&[
            r"\bnext\b",
            r"(?-i:Only)\s+(?P<x>case)",
            r"^[a-z-]{2,}ed$",
            r"(?P<x>\bwait)\s+for\b",
        ]);
        let set = AnyOf::new(&patterns, "cue").expect("the list compiles");
        assert!(matches!(set, AnyOf::Set(_)));
        let each = super::compile_all(&patterns, "cue").expect("each compiles");
        for text in [
            "NEXT → step",
            "nextstep",
            "only case",
            "Only CASE",
            "pushed",
            "pushed it",
            "→ WAIT for the user",
            "ſtill waiting",
            "",
        ] {
            let any = each.iter().any(|r| r.is_match(text));
            assert_eq!(set.is_match(text), any, "{text:?}");
        }
    }

    #[test]
    fn an_empty_list_matches_nothing() {
        let set = AnyOf::new(&[], "cue").expect("an empty list compiles");
        assert!(!set.is_match(""));
        assert!(!set.is_match("anything at all"));
    }

    #[test]
    fn a_pattern_of_a_list_that_does_not_compile_is_named() {
        let patterns = list(&[r"\bfine\b", "(unclosed", r"\bok\b"]);
        let Err(error) = AnyOf::new(&patterns, "negation cue") else {
            panic!("the list does not compile");
        };
        assert!(
            error.contains("prose negation cue pattern \"(unclosed\""),
            "{error}"
        );
        assert!(error.contains("unclosed group"), "{error}");
    }
}
