//! The closed-clause verifier: the policy's grammar compiled into a deterministic, bounded
//! verifier. A predicate is PRESERVED only when the whole summary parses into allowed
//! clauses (no unparsed suffix, no unknown synonym, no duplicate) and the predicate's
//! required clause is among them; an explicit conflict wins over any safe clause; a
//! probabilistic marker makes every predicate UNSUPPORTED. Under the `seed-compatible`
//! grammar this is the seed test's `ConflictVerifier`, bit for bit.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ops::Range;

use crate::json::{canonical_object, sha256_hex, write_strings, Field};
use crate::policy::grammar::{Grammar, Segmentation};

use super::pytext::{self, Normalized};
use super::verifier::{
    ConflictVerification, ConflictVerifier, ConstraintResult, ParseFailure, VerifierError,
    VerifierInput, VerifierMatch,
};

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
    #[error("clause template {template:?} has an unknown slot \"{{{slot}}}\" (use path, identifier, number, commit or a|b)")]
    Slot { template: String, slot: String },
    #[error("required clause {clause:?} for \"{predicate}\" is not an allowed plain clause")]
    Required { predicate: String, clause: String },
}

#[derive(Debug, Clone)]
enum Token {
    Literal(String),
    Slot(SlotKind),
}

#[derive(Debug, Clone)]
enum SlotKind {
    Path,
    Identifier,
    Number,
    Commit,
    Choice(Vec<String>),
}

impl SlotKind {
    fn parse(name: &str) -> Option<SlotKind> {
        match name {
            "path" => Some(SlotKind::Path),
            "identifier" => Some(SlotKind::Identifier),
            "number" => Some(SlotKind::Number),
            "commit" => Some(SlotKind::Commit),
            choice if choice.contains('|') => Some(SlotKind::Choice(
                choice.split('|').map(pytext::casefold).collect(),
            )),
            _ => None,
        }
    }

    fn accepts(&self, word: &str) -> bool {
        let ascii = |extra: &str| {
            word.chars()
                .all(|c| c.is_ascii_alphanumeric() || extra.contains(c))
        };
        match self {
            SlotKind::Path => {
                (1..=256).contains(&word.len())
                    && ascii("_-./@+=")
                    && !word.starts_with(['.', '-'])
                    && !word.split('/').any(|part| part == ".." || part == ".")
            }
            SlotKind::Identifier => {
                (1..=128).contains(&word.len())
                    && word.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                    && ascii("_:.-")
            }
            SlotKind::Number => {
                let (int, frac) = word.split_once('.').unwrap_or((word, "0"));
                (1..=15).contains(&int.len())
                    && (1..=6).contains(&frac.len())
                    && int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())
            }
            SlotKind::Commit => {
                (7..=40).contains(&word.len())
                    && word.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
            }
            SlotKind::Choice(options) => options.contains(&pytext::casefold(word)),
        }
    }
}

struct Conflict {
    id: String,
    predicate: String,
    matcher: Matcher,
}

/// How a conflict pattern runs. Most patterns need nothing but the `regex` crate; the common
/// idiom of leading negative literal lookbehinds (`(?<!not )(?<!never )…`) is checked exactly
/// beside it; anything else with lookarounds runs on `fancy-regex` behind a lookaround-free
/// prefilter.
enum Matcher {
    Plain {
        regex: regex::Regex,
        not_after: Vec<String>,
    },
    Fancy {
        prefilter: regex::Regex,
        exact: fancy_regex::Regex,
    },
}

/// Splits `(?<!lit)(?<!lit)…rest` into the literals and the rest, when every leading group
/// is a negative lookbehind of plain text.
fn leading_negative_literals(pattern: &str) -> (Vec<String>, &str) {
    let mut literals = Vec::new();
    let mut rest = pattern;
    while let Some(body) = rest.strip_prefix("(?<!") {
        let Some(end) = body.find(')') else { break };
        let literal = &body[..end];
        if literal.is_empty() || literal.contains(|c: char| "\\.+*?()|[]{}^$".contains(c)) {
            break;
        }
        literals.push(literal.to_owned());
        rest = &body[end + 1..];
    }
    (literals, rest)
}

impl Conflict {
    fn compile(item: &crate::policy::grammar::ConflictPattern) -> Result<Conflict, GrammarError> {
        let bad = |reason: String| GrammarError::Pattern {
            id: item.id.clone(),
            reason,
        };
        let build = |pattern: &str| {
            regex::RegexBuilder::new(pattern)
                .size_limit(16 << 20)
                .build()
                .map_err(|e| bad(e.to_string()))
        };
        let (not_after, rest) = leading_negative_literals(&item.pattern);
        let stripped = pytext::strip_lookarounds(rest).map_err(&bad)?;
        let matcher = if stripped == rest {
            Matcher::Plain {
                regex: build(rest)?,
                not_after,
            }
        } else {
            Matcher::Fancy {
                prefilter: build(&pytext::strip_lookarounds(&item.pattern).map_err(&bad)?)?,
                exact: fancy_regex::Regex::new(&item.pattern).map_err(|e| bad(e.to_string()))?,
            }
        };
        Ok(Conflict {
            id: item.id.clone(),
            predicate: item.predicate.clone(),
            matcher,
        })
    }

    /// The first match on the normalised summary, as a byte range of it.
    fn find(&self, normalized: &str) -> Result<Option<std::ops::Range<usize>>, VerifierError> {
        match &self.matcher {
            Matcher::Plain { regex, not_after } => {
                let mut start = 0;
                while let Some(found) = regex.find_at(normalized, start) {
                    if !not_after
                        .iter()
                        .any(|lit| normalized[..found.start()].ends_with(lit.as_str()))
                    {
                        return Ok(Some(found.range()));
                    }
                    match normalized[found.start()..].chars().next() {
                        Some(c) => start = found.start() + c.len_utf8(),
                        None => return Ok(None),
                    }
                }
                Ok(None)
            }
            Matcher::Fancy { prefilter, exact } => {
                if !prefilter.is_match(normalized) {
                    return Ok(None);
                }
                exact
                    .find(normalized)
                    .map(|found| found.map(|m| m.range()))
                    .map_err(|e| {
                        VerifierError(format!("conflict pattern \"{}\" failed: {e}", self.id))
                    })
            }
        }
    }
}

/// The policy's grammar, compiled.
pub struct ClosedClauseVerifier {
    grammar: Grammar,
    artifact_sha256: String,
    charset: Option<regex::Regex>,
    plain: HashSet<String>,
    templates: Vec<Vec<Token>>,
    required: BTreeMap<String, String>,
    conflicts: Vec<Conflict>,
}

impl ClosedClauseVerifier {
    pub fn new(
        grammar: &Grammar,
        artifact_sha256: &str,
    ) -> Result<ClosedClauseVerifier, GrammarError> {
        let charset = match &grammar.charset {
            Some(pattern) => Some(
                regex::Regex::new(&format!(r"\A(?:{pattern})\z"))
                    .map_err(|e| GrammarError::Charset(e.to_string()))?,
            ),
            None => None,
        };
        let mut plain = HashSet::new();
        let mut templates = Vec::new();
        for clause in &grammar.clauses {
            if clause.contains('{') {
                templates.push(compile_template(clause)?);
            } else {
                plain.insert(pytext::casefold(&pytext::collapse_whitespace(clause)));
            }
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
        let mut conflicts = Vec::new();
        for item in &grammar.conflicts {
            let conflict = Conflict::compile(item)?;
            for example in &item.examples {
                if !matches!(conflict.find(&Normalized::new(example).text), Ok(Some(_))) {
                    return Err(GrammarError::ExampleMissed {
                        id: item.id.clone(),
                        example: example.clone(),
                    });
                }
            }
            for example in &item.negative_examples {
                if !matches!(conflict.find(&Normalized::new(example).text), Ok(None)) {
                    return Err(GrammarError::NegativeMatched {
                        id: item.id.clone(),
                        example: example.clone(),
                    });
                }
            }
            conflicts.push(conflict);
        }
        Ok(ClosedClauseVerifier {
            grammar: grammar.clone(),
            artifact_sha256: artifact_sha256.to_owned(),
            charset,
            plain,
            templates,
            required,
            conflicts,
        })
    }

    /// Cuts the summary into clauses and checks each against the grammar: the clause list
    /// of a total parse, or why the parse is not total. A failure names a clause by number
    /// and byte span, never by its text: the text may hold a secret.
    pub fn parse_clauses(&self, summary: &str) -> Result<Vec<String>, ParseFailure> {
        let fail = |message: String, span: Option<Range<usize>>| ParseFailure { message, span };
        if let Some(charset) = &self.charset {
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
            let in_grammar = self.plain.contains(&folded) || {
                let words: Vec<&str> = clause.split(' ').collect();
                self.templates.iter().any(|t| template_matches(t, &words))
            };
            if !in_grammar {
                return Err(fail(
                    format!("clause {number} of {total} is not in the grammar"),
                    Some(span),
                ));
            }
            seen.insert(folded, number);
            clauses.push(clause);
        }
        if clauses.is_empty() {
            return Err(fail("the summary has no clause".into(), None));
        }
        Ok(clauses)
    }
}

fn compile_template(template: &str) -> Result<Vec<Token>, GrammarError> {
    pytext::collapse_whitespace(template)
        .split(' ')
        .map(
            |word| match word.strip_prefix('{').and_then(|w| w.strip_suffix('}')) {
                Some(slot) => {
                    SlotKind::parse(slot)
                        .map(Token::Slot)
                        .ok_or_else(|| GrammarError::Slot {
                            template: template.to_owned(),
                            slot: slot.to_owned(),
                        })
                }
                None => Ok(Token::Literal(pytext::casefold(word))),
            },
        )
        .collect()
}

fn template_matches(template: &[Token], words: &[&str]) -> bool {
    words.len() == template.len()
        && template.iter().zip(words).all(|(token, word)| match token {
            Token::Literal(literal) => folds_to(word, literal),
            Token::Slot(slot) => slot.accepts(word),
        })
}

/// Whether `word` case-folds to `folded` (ASCII words without allocating).
fn folds_to(word: &str, folded: &str) -> bool {
    if word.is_ascii() {
        word.len() == folded.len()
            && word
                .bytes()
                .zip(folded.bytes())
                .all(|(w, f)| w.to_ascii_lowercase() == f)
    } else {
        pytext::casefold(word) == folded
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
        let normalized = Normalized::new(input.summary_text);
        let parsed = if input.summary_text.is_empty() {
            Err(ParseFailure {
                message: "the summary is empty".into(),
                span: None,
            })
        } else {
            self.parse_clauses(input.summary_text)
        };
        let probabilistic = self
            .grammar
            .probabilistic_markers
            .iter()
            .any(|marker| normalized.text.contains(marker.as_str()));
        let mut matched: BTreeMap<&str, Vec<VerifierMatch>> = BTreeMap::new();
        for conflict in &self.conflicts {
            if let Some(range) = conflict.find(&normalized.text)? {
                matched
                    .entry(conflict.predicate.as_str())
                    .or_default()
                    .push(VerifierMatch {
                        constraint_id: String::new(),
                        rule_id: conflict.id.clone(),
                        span: normalized.source_span(range.start, range.end),
                    });
            }
        }
        let clauses = parsed.as_ref().ok();
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
            verifier_artifact_sha256: self.artifact_sha256.clone(),
            rendered_policy_sha256: input.rendered_policy_sha256.to_owned(),
            compacted_summary_sha256: input.compacted_summary_sha256.to_owned(),
            claim_population_sha256: input.claim_population_sha256.to_owned(),
            claim_count: input.claims.len() as i64,
            result_population_sha256: String::new(),
            result_count: 0,
            results,
            receipt_sha256: String::new(),
            parsed_clauses: parsed.as_ref().ok().cloned(),
            matches,
            parse_failure: parsed.err(),
        };
        verification.seal();
        Ok(verification)
    }
}
