//! The closed-clause verifier: the policy's grammar compiled into a deterministic, bounded
//! verifier. A predicate is PRESERVED only when the whole summary parses into allowed
//! clauses (no unparsed suffix, no unknown synonym, no duplicate, every slot word of its
//! type) and the predicate's required clause is among them; an explicit conflict wins over
//! any safe clause, and so do two parsed clauses the grammar declares mutually exclusive; a
//! probabilistic marker makes every predicate UNSUPPORTED. Conflict patterns read joined
//! words apart when the grammar says so (`git_push` as `git push`). Under the
//! `seed-compatible` grammar this is the seed test's `ConflictVerifier`, bit for bit.

mod conflict;
mod exclusive;
mod slots;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ops::Range;

use crate::json::{canonical_object, sha256_hex, write_strings, Field};
use crate::policy::grammar::{Grammar, Segmentation};

use super::lazy_regex::{LazyRegex, RegexOptions};
use super::pytext;
use super::verifier::{
    ConflictVerification, ConflictVerifier, ConstraintResult, ParseFailure, VerifierError,
    VerifierInput, VerifierMatch,
};
use conflict::{Conflicts, Views};
use exclusive::{Contradiction, ExclusiveGroup};
use slots::{SlotTypes, Template};

/// A grammar that cannot be compiled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GrammarError {
    #[error("conflict pattern \"{id}\" does not compile: {reason}")]
    Pattern { id: String, reason: String },
    #[error("conflict pattern \"{id}\" misses its example {example:?}")]
    ExampleMissed { id: String, example: String },
    #[error("conflict pattern \"{id}\" matches its negative example {example:?}")]
    NegativeMatched { id: String, example: String },
    #[error("charset pattern does not compile: {0}")]
    Charset(String),
    #[error("clause template {template:?} has an unknown slot \"{{{slot}}}\" (use one of {known}, or a|b)")]
    Slot {
        template: String,
        slot: String,
        known: String,
    },
    #[error("slot type \"{name}\" is invalid: {reason}")]
    SlotType { name: String, reason: String },
    #[error("exclusive clauses \"{id}\" are invalid: {reason}")]
    Exclusive { id: String, reason: String },
    #[error("required clause {clause:?} for \"{predicate}\" is not an allowed plain clause")]
    Required { predicate: String, clause: String },
}

/// The policy's grammar, compiled.
pub struct ClosedClauseVerifier {
    grammar: Grammar,
    /// Given, or computed from the grammar the first time a receipt needs it (a caller that
    /// only renders a context never pays for it).
    artifact_sha256: std::sync::OnceLock<String>,
    charset: Option<LazyRegex>,
    plain: HashSet<String>,
    types: SlotTypes,
    templates: Vec<Template>,
    required: BTreeMap<String, String>,
    conflicts: Conflicts,
    exclusive: Vec<ExclusiveGroup>,
}

/// A total parse: each clause whitespace-collapsed (and case-folded when the grammar folds),
/// with the byte span of its text in the summary.
struct Parsed {
    clauses: Vec<String>,
    spans: Vec<Range<usize>>,
}

/// The byte spans of the whitespace-separated words of `text`, offset by `base`.
fn word_spans(text: &str, base: usize) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = None;
    for (at, c) in text.char_indices() {
        match (pytext::is_space(c), start) {
            (true, Some(s)) => {
                out.push(base + s..base + at);
                start = None;
            }
            (false, None) => start = Some(at),
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push(base + s..base + text.len());
    }
    out
}

impl ClosedClauseVerifier {
    pub fn new(
        grammar: &Grammar,
        artifact_sha256: &str,
    ) -> Result<ClosedClauseVerifier, GrammarError> {
        let verifier = Self::compile(grammar)?;
        // A fresh lock: setting it cannot fail.
        let _ = verifier.artifact_sha256.set(artifact_sha256.to_owned());
        Ok(verifier)
    }

    /// The grammar compiled, its artifact digest ([`Grammar::artifact_sha256`]) computed on
    /// first use.
    pub fn compile(grammar: &Grammar) -> Result<ClosedClauseVerifier, GrammarError> {
        // The regex crate's default size limit.
        let charset = grammar.charset.as_ref().map(|pattern| {
            LazyRegex::new(format!(r"\A(?:{pattern})\z"), RegexOptions::sized(10 << 20))
        });
        let types = SlotTypes::new(&grammar.slots)?;
        let mut plain = HashSet::new();
        let mut templates = Vec::new();
        let mut all_clauses = HashSet::new();
        for clause in &grammar.clauses {
            let folded = pytext::casefold(&pytext::collapse_whitespace(clause));
            if clause.contains('{') {
                templates.push(types.compile(clause)?);
            } else {
                plain.insert(folded.clone());
            }
            all_clauses.insert(folded);
        }
        let mut required = BTreeMap::new();
        for item in &grammar.required {
            let clause = pytext::casefold(&pytext::collapse_whitespace(&item.clause));
            if !plain.contains(&clause) {
                return Err(GrammarError::Required {
                    predicate: item.predicate.clone(),
                    clause: item.clause.clone(),
                });
            }
            required.insert(item.predicate.clone(), clause);
        }
        let conflicts = Conflicts::new(&grammar.conflicts);
        let in_grammar = |folded: &str| {
            let words: Vec<&str> = folded.split(' ').collect();
            all_clauses.contains(folded) || templates.iter().any(|t| t.matches(&words, &types))
        };
        let exclusive = grammar
            .exclusive
            .iter()
            .map(|item| ExclusiveGroup::compile(item, &types, &in_grammar))
            .collect::<Result<_, _>>()?;
        Ok(ClosedClauseVerifier {
            grammar: grammar.clone(),
            artifact_sha256: std::sync::OnceLock::new(),
            charset,
            plain,
            types,
            templates,
            required,
            conflicts,
            exclusive,
        })
    }

    /// Compiles every pattern of the grammar now and checks every rule against its examples:
    /// each slot type accepts its examples and rejects its negative ones, each conflict
    /// pattern matches its examples and none of its negative ones, each exclusive group finds
    /// a contradiction in each example and none in its negative ones. A policy from a file
    /// is validated when it loads; the built-in ones are validated by a test.
    pub fn validate(&self) -> Result<(), GrammarError> {
        if let Some(charset) = &self.charset {
            charset.compile_now().map_err(GrammarError::Charset)?;
        }
        self.types.validate(&self.grammar.slots)?;
        for (conflict, item) in self.conflicts.items.iter().zip(&self.grammar.conflicts) {
            conflict.compile_now()?;
            for example in &item.examples {
                let views = Views::new(example, self.grammar.match_joined_words, &self.conflicts);
                if !matches!(conflict.find(&views), Ok(Some(_))) {
                    return Err(GrammarError::ExampleMissed {
                        id: item.id.clone(),
                        example: example.clone(),
                    });
                }
            }
            for example in &item.negative_examples {
                let views = Views::new(example, self.grammar.match_joined_words, &self.conflicts);
                if !matches!(conflict.find(&views), Ok(None)) {
                    return Err(GrammarError::NegativeMatched {
                        id: item.id.clone(),
                        example: example.clone(),
                    });
                }
            }
        }
        self.check_exclusive_examples()
    }

    /// The digest of the verifier artifact this grammar was compiled as.
    pub fn artifact_sha256(&self) -> &str {
        self.artifact_sha256
            .get_or_init(|| self.grammar.artifact_sha256())
    }

    /// Every exclusive group finds a contradiction in each of its examples and none in its
    /// negative examples, which must parse.
    fn check_exclusive_examples(&self) -> Result<(), GrammarError> {
        for (index, item) in self.grammar.exclusive.iter().enumerate() {
            let bad = |reason: String| GrammarError::Exclusive {
                id: item.id.clone(),
                reason,
            };
            for (example, want) in item
                .examples
                .iter()
                .map(|e| (e, true))
                .chain(item.negative_examples.iter().map(|e| (e, false)))
            {
                let parsed = self.parse(example).map_err(|why| {
                    bad(format!(
                        "its example {example:?} does not parse: {}",
                        why.message
                    ))
                })?;
                let found = self
                    .contradictions(&parsed)
                    .iter()
                    .any(|c| c.group == index);
                if found != want {
                    return Err(bad(if want {
                        format!("it finds no contradiction in its example {example:?}")
                    } else {
                        format!("it finds a contradiction in its negative example {example:?}")
                    }));
                }
            }
        }
        Ok(())
    }

    /// Cuts the summary into clauses and checks each against the grammar: the clause list
    /// of a total parse, or why the parse is not total. A failure names a clause by number
    /// and byte span, never by its text: the text may hold a secret.
    pub fn parse_clauses(&self, summary: &str) -> Result<Vec<String>, ParseFailure> {
        self.parse(summary).map(|parsed| parsed.clauses)
    }

    fn parse(&self, summary: &str) -> Result<Parsed, ParseFailure> {
        let fail = |message: String, span: Option<Range<usize>>| ParseFailure { message, span };
        if let Some(charset) = &self.charset {
            let charset = charset.get().map_err(|e| {
                fail(
                    format!("the grammar's character set does not compile: {e}"),
                    None,
                )
            })?;
            if !charset.is_match(summary) {
                let bad = summary
                    .char_indices()
                    .find(|(_, c)| !charset.is_match(&c.to_string()));
                return Err(match bad {
                    Some((at, c)) => fail(
                        format!("character U+{:04X} at byte {at} is outside the grammar's character set", c as u32),
                        Some(at..at + c.len_utf8()),
                    ),
                    None => fail("the summary is outside the grammar's character set".into(), None),
                });
            }
        }
        let segments = match self.grammar.segmentation {
            Segmentation::Period => period_segments(summary),
            Segmentation::Sentence => sentence_segments(summary),
        }
        .ok_or_else(|| fail("the summary does not end with \".\"".into(), None))?;
        // Folded clause → its number, to name the first occurrence of a repeat.
        let mut seen: HashMap<String, usize> = HashMap::with_capacity(segments.len());
        let mut clauses = Vec::with_capacity(segments.len());
        let mut spans = Vec::with_capacity(segments.len());
        let total = segments.len();
        for (index, span) in segments.into_iter().enumerate() {
            let number = index + 1;
            let segment = &summary[span.clone()];
            let text = if self.grammar.case_fold {
                pytext::casefold(segment)
            } else {
                segment.to_owned()
            };
            let clause = pytext::collapse_whitespace(&text);
            if clause.is_empty() {
                return Err(fail(
                    format!("clause {number} of {total} is empty"),
                    Some(span),
                ));
            }
            // Case folding is idempotent (checked over every code point against CPython), so a
            // clause folded above needs no second pass.
            let folded = if self.grammar.case_fold {
                clause.clone()
            } else {
                pytext::casefold(&clause)
            };
            if let Some(first) = seen.get(&folded) {
                return Err(fail(
                    format!("clause {number} of {total} repeats clause {first}"),
                    Some(span),
                ));
            }
            let words: Vec<&str> = clause.split(' ').collect();
            let in_grammar = self.plain.contains(&folded)
                || self
                    .templates
                    .iter()
                    .any(|t| t.matches(&words, &self.types));
            if !in_grammar {
                let near_miss = self
                    .templates
                    .iter()
                    .find_map(|t| t.misfit(&words, &self.types));
                return Err(match near_miss {
                    Some((word, slot)) => fail(
                        format!("clause {number} of {total} is not in the grammar: word {} is not a {slot}", word + 1),
                        word_spans(segment, span.start).get(word).cloned().or(Some(span)),
                    ),
                    None => fail(
                        format!("clause {number} of {total} is not in the grammar"),
                        Some(span),
                    ),
                });
            }
            seen.insert(folded, number);
            clauses.push(clause);
            let lead = segment.len() - segment.trim_start_matches(pytext::is_space).len();
            let body = segment.trim_matches(pytext::is_space).len();
            spans.push(span.start + lead..span.start + lead + body);
        }
        if clauses.is_empty() {
            return Err(fail("the summary has no clause".into(), None));
        }
        Ok(Parsed { clauses, spans })
    }

    fn contradictions(&self, parsed: &Parsed) -> Vec<Contradiction> {
        if self.exclusive.is_empty() {
            return Vec::new();
        }
        let words: Vec<Vec<&str>> = parsed
            .clauses
            .iter()
            .map(|c| c.split(' ').collect())
            .collect();
        exclusive::contradictions(&self.exclusive, &words, &self.types)
    }
}

/// The seed's segmentation: `text.split(".")`, and the last segment must be empty. Case
/// folding never makes or removes a `.`, so cutting the original text gives the same clauses.
fn period_segments(text: &str) -> Option<Vec<Range<usize>>> {
    if !text.ends_with('.') {
        return None;
    }
    let mut spans = Vec::new();
    let mut start = 0;
    for (at, _) in text.match_indices('.') {
        spans.push(start..at);
        start = at + 1;
    }
    Some(spans)
}

/// Clauses end at a `.` followed by whitespace or the end of the text.
fn sentence_segments(text: &str) -> Option<Vec<Range<usize>>> {
    let trimmed = text.trim_end_matches(pytext::is_space);
    let body = trimmed.strip_suffix('.')?;
    let mut spans = Vec::new();
    let mut start = 0;
    let mut chars = body.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if c == '.'
            && chars
                .peek()
                .is_some_and(|&(_, next)| pytext::is_space(next))
        {
            spans.push(start..at);
            start = at + 1;
        }
    }
    spans.push(start..body.len());
    Some(spans)
}

impl ConflictVerifier for ClosedClauseVerifier {
    fn verify(&self, input: &VerifierInput<'_>) -> Result<ConflictVerification, VerifierError> {
        let views = Views::new(
            input.summary_text,
            self.grammar.match_joined_words,
            &self.conflicts,
        );
        let parsed = if input.summary_text.is_empty() {
            Err(ParseFailure {
                message: "the summary is empty".into(),
                span: None,
            })
        } else {
            self.parse(input.summary_text)
        };
        let probabilistic = self
            .grammar
            .probabilistic_markers
            .iter()
            .any(|marker| views.normalized().contains(marker.as_str()));
        let mut matched: BTreeMap<&str, Vec<VerifierMatch>> = BTreeMap::new();
        for conflict in &self.conflicts.items {
            if let Some(span) = conflict.find(&views)? {
                matched
                    .entry(conflict.predicate.as_str())
                    .or_default()
                    .push(VerifierMatch {
                        constraint_id: String::new(),
                        rule_id: conflict.id.clone(),
                        span,
                        note: None,
                    });
            }
        }
        if let Ok(parsed) = &parsed {
            let total = parsed.clauses.len();
            for c in self.contradictions(parsed) {
                let Some(group) = self.exclusive.get(c.group) else {
                    continue;
                };
                let note = format!(
                    "clauses {} and {} of {total} contradict each other ({})",
                    c.first + 1,
                    c.second + 1,
                    group.id
                );
                for at in [c.first, c.second] {
                    let Some(span) = parsed.spans.get(at) else {
                        continue;
                    };
                    matched
                        .entry(group.predicate.as_str())
                        .or_default()
                        .push(VerifierMatch {
                            constraint_id: String::new(),
                            rule_id: group.id.clone(),
                            span: span.clone(),
                            note: Some(note.clone()),
                        });
                }
            }
        }
        let clauses = parsed.as_ref().ok().map(|p| &p.clauses);
        // Every evidence body carries the same clause population: written once.
        let clause_population = match clauses {
            Some(clauses) => {
                let mut out = String::with_capacity(clauses.iter().map(|c| c.len() + 3).sum());
                write_strings(&mut out, clauses.iter().map(String::as_str));
                out
            }
            None => "null".to_owned(),
        };
        let mut results = Vec::with_capacity(input.canonical_constraints.len());
        let mut matches = Vec::new();
        if input.canonical_constraints.len() != input.claims.len() {
            return Err(VerifierError(
                "constraint and claim populations differ in length".to_owned(),
            ));
        }
        for (constraint, claim) in input.canonical_constraints.iter().zip(input.claims) {
            let predicate = constraint.canonical_predicate.as_str();
            let mut rule = self.grammar.rule_id.as_str();
            let status = if probabilistic {
                rule = &self.grammar.probabilistic_rule_id;
                "UNSUPPORTED"
            } else if let Some(found) = matched.get(predicate) {
                matches.extend(found.iter().map(|m| VerifierMatch {
                    constraint_id: constraint.constraint_id.clone(),
                    ..m.clone()
                }));
                "CONFLICT"
            } else if let (Some(clauses), Some(required)) = (clauses, self.required.get(predicate))
            {
                let present = clauses.iter().any(|c| {
                    if self.grammar.case_fold {
                        c == required
                    } else {
                        pytext::casefold(c) == *required
                    }
                });
                if present {
                    "PRESERVED"
                } else {
                    "UNSUPPORTED"
                }
            } else {
                "UNSUPPORTED"
            };
            let evidence = canonical_object(&mut [
                ("complete_clause_parse", Field::Bool(clauses.is_some())),
                ("constraint_id", Field::Str(&constraint.constraint_id)),
                ("constraint_type", Field::Str(&constraint.constraint_type)),
                (
                    "parsed_clause_population",
                    Field::Canonical(&clause_population),
                ),
                (
                    "predicate_sha256",
                    Field::Str(&constraint.canonical_predicate_sha256),
                ),
                ("rule", Field::Str(rule)),
                ("status", Field::Str(status)),
                ("summary_sha256", Field::Str(input.compacted_summary_sha256)),
            ]);
            results.push(ConstraintResult {
                constraint_type: constraint.constraint_type.clone(),
                constraint_id: constraint.constraint_id.clone(),
                canonical_record_sha256: constraint.canonical_record_sha256.clone(),
                canonical_predicate_sha256: constraint.canonical_predicate_sha256.clone(),
                claim_status: claim.status.clone(),
                verification_status: status.to_owned(),
                bounded_rule_id: rule.to_owned(),
                evidence_sha256: sha256_hex(evidence.as_bytes()),
            });
        }
        let statuses: Vec<&str> = results
            .iter()
            .map(|r| r.verification_status.as_str())
            .collect();
        let (outcome, finding) = if statuses.contains(&"CONFLICT") {
            ("FAIL", "FINDING")
        } else if statuses.contains(&"UNSUPPORTED") || probabilistic {
            ("INSUFFICIENT_DATA", "UNKNOWN")
        } else {
            ("PASS", "NO_FINDING")
        };
        let mut verification = ConflictVerification {
            outcome: outcome.to_owned(),
            finding_status: finding.to_owned(),
            assurance_type: if probabilistic {
                "PROBABILISTIC"
            } else {
                "DETERMINISTIC_BOUNDED"
            }
            .to_owned(),
            verifier_version: self.grammar.verifier_version.clone(),
            verifier_artifact_sha256: self.artifact_sha256().to_owned(),
            rendered_policy_sha256: input.rendered_policy_sha256.to_owned(),
            compacted_summary_sha256: input.compacted_summary_sha256.to_owned(),
            claim_population_sha256: input.claim_population_sha256.to_owned(),
            claim_count: input.claims.len() as i64,
            result_population_sha256: String::new(),
            result_count: 0,
            results,
            receipt_sha256: String::new(),
            parsed_clauses: clauses.cloned(),
            matches,
            parse_failure: parsed.err(),
        };
        verification.seal();
        Ok(verification)
    }
}
