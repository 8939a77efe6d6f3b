//! Rule files: their TOML shape, compilation into [`Rule`]s, and matching one rule in a window.
//!
//! A rule file holds `[[rule]]` tables. Regexes are compiled as `regex::bytes` with ASCII
//! semantics (a rule opts into Unicode with `unicode = true`) and a size limit, so a rule file
//! cannot make the scanner allocate without bound. The sensitive value is the `secret` named
//! group, else group 1, else the whole match.

use std::fmt;
use std::ops::Range;

use regex::bytes::{Regex, RegexBuilder};
use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::shape::{self, ValueShape};
use super::validate::{self, Outcome, Validator};
use super::{filter, RawMatch};

/// Compiled-size limit for one rule's regex.
pub(super) const REGEX_SIZE_LIMIT: usize = 8 << 20;

/// Errors loading or compiling a rule pack, or selecting entity types from it.
#[derive(Debug, thiserror::Error)]
pub enum RuleError {
    #[error("cannot read rules from \"{path}\": {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("no rule files (*.toml) in \"{path}\"; point --rules at a folder of rule files")]
    Empty { path: String },
    #[error("rule file \"{file}\" is not a valid rule file: {reason}")]
    Parse { file: String, reason: String },
    #[error("rule \"{id}\" has an invalid regex: {reason}")]
    Regex { id: String, reason: String },
    #[error("rule \"{id}\" names unknown validator \"{name}\"")]
    UnknownValidator { id: String, name: String },
    #[error("rule \"{id}\" is invalid: {reason}")]
    Invalid { id: String, reason: String },
    #[error("rule id \"{id}\" appears twice; rule ids must be unique")]
    DuplicateId { id: String },
    #[error("cannot build the keyword prefilter: {reason}")]
    Keywords { reason: String },
    #[error("entity type \"{name}\" is not supported by this scanner; run `cq scan --help` or see the rule pack for supported types")]
    UnsupportedEntityType { name: String },
}

/// What kind of sensitive data a rule finds. Serialises as lower-case words.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, serde::Serialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    Credential,
    PrivateKey,
    Token,
    Pii,
    /// Infrastructure identifiers that are not secret alone (bucket names, account ids, ARNs).
    Identifier,
}

impl Category {
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Credential => "credential",
            Category::PrivateKey => "private_key",
            Category::Token => "token",
            Category::Pii => "pii",
            Category::Identifier => "identifier",
        }
    }

    fn default_entity(self) -> &'static str {
        match self {
            Category::Credential => "CREDENTIAL",
            Category::PrivateKey => "PRIVATE_KEY",
            Category::Token => "TOKEN",
            Category::Pii => "PII",
            Category::Identifier => "IDENTIFIER",
        }
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How sure a rule is: `high` for checksummed or unmistakable formats, `low` for hints.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, serde::Serialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Confidence {
    Low,
    Medium,
    High,
}

impl fmt::Display for Confidence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Confidence::Low => "low",
            Confidence::Medium => "medium",
            Confidence::High => "high",
        })
    }
}

/// One compiled rule.
#[derive(Debug, Clone)]
pub struct Rule {
    pub id: String,
    pub description: String,
    pub category: Category,
    /// Entity type a scan policy can name to select this rule (e.g. `IBAN_CODE`).
    pub entity: String,
    pub keywords: Vec<String>,
    pub confidence: Confidence,
    pub entropy_min: Option<f64>,
    pub examples: Vec<String>,
    pub negative_examples: Vec<String>,
    /// Off unless a scan policy names the rule's entity type (e.g. dates, plain URLs).
    pub default_enabled: bool,
    /// Whether a match inside a decoded base64/hex blob counts. Off by default for
    /// digit-triggered rules: numbers inside decoded blobs are mostly timestamps and ids (a
    /// JWT's `"iat":1516239022` passes a Luhn check).
    pub decodable: bool,
    /// Bytes searched after a keyword hit (long values such as PEM blocks need more).
    pub window: usize,
    /// Bytes searched before a keyword hit (token rules whose keyword is the prefix need few).
    pub window_before: usize,
    /// The match must not be one group of a longer run of digit groups (an IBAN, a card).
    pub standalone: bool,
    /// Words (lower case) one of which must stand near a match (in the 96 bytes before it or
    /// the 32 after, as a word of its own, ASCII case ignored), unless a scan policy names the
    /// rule's entity type. For bare numbers whose only check is one check digit: without it,
    /// one epoch timestamp or byte count in ten passes as an NHS, ACN or NPI number.
    pub context: Vec<String>,
    /// Keyword-less rules whose matches hold at least this many digits in one cluster run only
    /// around such clusters.
    pub min_digits: Option<usize>,
    /// The `key` group also takes up to this many name bytes (`[A-Za-z0-9_.-]`) just before
    /// where the regex matched it, as a leading `(?:-D)?[a-z0-9_.-]{0,N}` in the regex would,
    /// without the cost of that leading repetition in every search.
    pub key_prefix: usize,
    regex: Regex,
    /// The token regex without its boundary context, for a vendor-prefixed rule (see `glued`).
    pub(super) glued: Option<super::glued::Glued>,
    /// Where the value sits in a match, so most matches need no capture extraction.
    value_shape: ValueShape,
    /// The regex source and its Unicode mode, for building shared regex sets.
    pub(super) pattern: String,
    pub(super) unicode: bool,
    validator: Option<Validator>,
    allowlist: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleFile {
    #[serde(default)]
    rule: Vec<RuleSpec>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleSpec {
    id: String,
    description: String,
    category: Category,
    entity: Option<String>,
    #[serde(default)]
    keywords: Vec<String>,
    regex: String,
    #[serde(default)]
    unicode: bool,
    entropy_min: Option<f64>,
    validator: Option<String>,
    #[serde(default)]
    allowlist: Vec<String>,
    confidence: Option<Confidence>,
    #[serde(default)]
    examples: Vec<String>,
    #[serde(default)]
    negative_examples: Vec<String>,
    default_enabled: Option<bool>,
    decodable: Option<bool>,
    window: Option<usize>,
    window_before: Option<usize>,
    #[serde(default)]
    standalone: bool,
    min_digits: Option<usize>,
    #[serde(default)]
    key_prefix: usize,
    #[serde(default)]
    context: Vec<String>,
}

pub(super) fn parse_file(name: &str, text: &str) -> Result<Vec<Rule>, RuleError> {
    let file: RuleFile = toml::from_str(text).map_err(|e| RuleError::Parse {
        file: name.to_owned(),
        reason: e.to_string(),
    })?;
    file.rule.into_iter().map(compile).collect()
}

fn compile(spec: RuleSpec) -> Result<Rule, RuleError> {
    if spec.id.trim().is_empty() || spec.description.trim().is_empty() {
        return Err(RuleError::Invalid {
            id: spec.id,
            reason: "id and description must not be empty".into(),
        });
    }
    let regex = RegexBuilder::new(&spec.regex)
        .unicode(spec.unicode)
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_SIZE_LIMIT)
        .build()
        .map_err(|e| RuleError::Regex {
            id: spec.id.clone(),
            reason: e.to_string(),
        })?;
    let validator = match &spec.validator {
        None => None,
        Some(name) => {
            Some(
                Validator::from_name(name).ok_or_else(|| RuleError::UnknownValidator {
                    id: spec.id.clone(),
                    name: name.clone(),
                })?,
            )
        }
    };
    let groups = regex.captures_len().saturating_sub(1);
    let first_name = regex.capture_names().nth(1).flatten();
    let value_shape = shape::value_shape(&spec.regex, spec.unicode, groups, first_name);
    let glued = super::glued::glued_regex(&spec.regex, spec.unicode, &spec.keywords, spec.category);
    let entity = spec
        .entity
        .unwrap_or_else(|| spec.category.default_entity().to_owned());
    Ok(Rule {
        id: spec.id,
        description: spec.description,
        category: spec.category,
        entity,
        keywords: spec.keywords,
        confidence: spec.confidence.unwrap_or(Confidence::Medium),
        entropy_min: spec.entropy_min,
        examples: spec.examples,
        negative_examples: spec.negative_examples,
        default_enabled: spec.default_enabled.unwrap_or(true),
        decodable: spec.decodable.unwrap_or(spec.min_digits.is_none()),
        window: spec.window.unwrap_or(super::WINDOW_AFTER).min(1 << 20),
        window_before: spec
            .window_before
            .unwrap_or(super::WINDOW_BEFORE)
            .min(1 << 16),
        standalone: spec.standalone,
        context: spec.context.iter().map(|w| w.to_lowercase()).collect(),
        min_digits: spec.min_digits,
        key_prefix: spec.key_prefix.min(1 << 10),
        regex,
        glued,
        value_shape,
        pattern: spec.regex,
        unicode: spec.unicode,
        validator,
        allowlist: spec
            .allowlist
            .iter()
            .map(|a| a.to_ascii_lowercase())
            .collect(),
    })
}

/// SHA-256 (hex) over each file's name, a NUL, its length and its bytes, in the order given.
pub(super) fn files_sha256(files: &[(String, String)]) -> String {
    let mut h = Sha256::new();
    for (name, text) in files {
        h.update(name.as_bytes());
        h.update([0u8]);
        h.update((text.len() as u64).to_be_bytes());
        h.update(text.as_bytes());
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// What a validator sees of one match: the value, the named `key` group, and the text around.
pub(super) struct MatchCtx<'a> {
    pub secret: &'a str,
    pub key: Option<&'a str>,
    pub before: &'a str,
    pub after: &'a str,
    /// The rule's keywords (vendor names for vendor-keyed rules).
    pub keywords: &'a [String],
}

impl Rule {
    /// Appends this rule's accepted matches inside `window` of `text` to `out`.
    pub(super) fn find_in(
        &self,
        index: usize,
        text: &str,
        window: Range<usize>,
        out: &mut Vec<RawMatch>,
    ) {
        let Some(hay) = text.as_bytes().get(window.clone()) else {
            return;
        };
        if self.value_shape == ValueShape::Captures {
            self.find_with_captures(index, text, hay, window.start, out);
            return;
        }
        for m in self.regex.find_iter(hay) {
            let value = match self.value_shape.value(m.range()) {
                Some(value) => value,
                // Only a match at the window's start is ambiguous; its captures decide.
                None => match self.regex.captures(hay).and_then(|c| self.value_group(&c)) {
                    Some(v) => v.range(),
                    None => continue,
                },
            };
            let span = window.start + value.start..window.start + value.end;
            self.push_if_accepted(index, text, span, None, out);
        }
    }

    /// [`Rule::find_in`] for regexes whose value span needs capture extraction.
    /// `hay` is the window of `text` that starts at byte `offset`.
    fn find_with_captures(
        &self,
        index: usize,
        text: &str,
        hay: &[u8],
        offset: usize,
        out: &mut Vec<RawMatch>,
    ) {
        // Where the previous match ended: the search resumed there, so no key reaches before it.
        let mut searched_from = 0;
        for caps in self.regex.captures_iter(hay) {
            let floor = searched_from;
            searched_from = caps.get(0).map_or(searched_from, |m| m.end());
            let Some(m) = self.value_group(&caps) else {
                continue;
            };
            let span = offset + m.start()..offset + m.end();
            let key = caps.name("key").and_then(|k| {
                let start = name_start(hay, k.start(), floor, self.key_prefix);
                text.get(offset + start..offset + k.end())
            });
            self.push_if_accepted(index, text, span, key, out);
        }
    }

    /// The value: the `secret` group, else the first group that is not `key`, else the match.
    fn value_group<'h>(
        &self,
        caps: &regex::bytes::Captures<'h>,
    ) -> Option<regex::bytes::Match<'h>> {
        let first_value = || {
            caps.iter()
                .zip(self.regex.capture_names())
                .skip(1)
                .find_map(|(m, name)| if name == Some("key") { None } else { m })
        };
        caps.name("secret")
            .or_else(first_value)
            .or_else(|| caps.get(0))
    }

    /// Validates the value at `span` of `text` and records it when accepted.
    pub(super) fn push_if_accepted(
        &self,
        index: usize,
        text: &str,
        span: Range<usize>,
        key: Option<&str>,
        out: &mut Vec<RawMatch>,
    ) {
        let Some(secret) = text.get(span.clone()) else {
            return;
        };
        if secret.is_empty() {
            return;
        }
        let ctx = MatchCtx {
            secret,
            key,
            before: str_before(text, span.start, 48),
            after: str_after(text, span.end, 48),
            keywords: &self.keywords,
        };
        if let Some(c) = self.accept(&ctx) {
            out.push(RawMatch {
                rule: index,
                span,
                confidence: c,
            });
        }
    }

    fn accept(&self, ctx: &MatchCtx<'_>) -> Option<Confidence> {
        if !self.allowlist.is_empty() {
            let lower = ctx.secret.to_ascii_lowercase();
            if self.allowlist.iter().any(|a| lower.contains(a.as_str())) {
                return None;
            }
        }
        let checks_placeholders = !matches!(self.category, Category::Pii | Category::Identifier);
        if checks_placeholders && filter::is_placeholder(ctx.secret) {
            return None;
        }
        if let Some(min) = self.entropy_min {
            if filter::shannon_entropy(ctx.secret) < min {
                return None;
            }
        }
        if self.standalone && filter::embedded_in_digit_run(ctx.before) {
            return None;
        }
        if self.category == Category::Pii
            && filter::inside_base64_blob(ctx.before, ctx.secret, ctx.after)
        {
            return None;
        }
        let mut confidence = self.confidence;
        if let Some(v) = self.validator {
            match validate::check(v, ctx) {
                Outcome::Reject => return None,
                Outcome::Confirmed => confidence = Confidence::High,
                Outcome::Weak => confidence = confidence.min(Confidence::Low),
                Outcome::Neutral => {}
            }
        }
        Some(confidence)
    }
}

/// How far a name reaches back from `at` in `hay`: over at most `max` name bytes, not before
/// `floor`, and without a leading `-D` (a Java system-property flag, `-Dsonar.login=...`).
fn name_start(hay: &[u8], at: usize, floor: usize, max: usize) -> usize {
    let floor = floor.max(at.saturating_sub(max)).min(at);
    let name_byte = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-');
    let start = hay[floor..at]
        .iter()
        .rposition(|&b| !name_byte(b))
        .map_or(floor, |i| floor + i + 1);
    let flag = hay
        .get(start..start + 2)
        .is_some_and(|f| f.eq_ignore_ascii_case(b"-d"));
    if flag && start + 2 <= at {
        start + 2
    } else {
        start
    }
}

impl Rule {
    /// Whether one of the rule's context words stands near `span` of `text` (true for a rule
    /// without context words).
    pub(super) fn context_near(&self, text: &str, span: &Range<usize>) -> bool {
        if self.context.is_empty() {
            return true;
        }
        let near = [
            str_before(text, span.start, 96),
            str_after(text, span.end, 32),
        ];
        near.iter().any(|part| {
            let lower = part.to_lowercase();
            self.context.iter().any(|w| has_word(&lower, w))
        })
    }
}

/// Whether `word` occurs in `text` with no ASCII letter or digit joined to either side (a
/// plural `s` allowed): `nhs` in "NHS no." or "NHSs", not `tin` in "setting".
fn has_word(text: &str, word: &str) -> bool {
    let b = text.as_bytes();
    let joined = |i: usize| b.get(i).is_some_and(u8::is_ascii_alphanumeric);
    text.match_indices(word).any(|(at, w)| {
        let end = at + w.len();
        let end = if b.get(end) == Some(&b's') {
            end + 1
        } else {
            end
        };
        let joined_before = at > 0 && joined(at - 1);
        !joined_before && !joined(end)
    })
}

fn str_before(text: &str, end: usize, n: usize) -> &str {
    let mut start = end.saturating_sub(n);
    while start < end && !text.is_char_boundary(start) {
        start += 1;
    }
    text.get(start..end).unwrap_or("")
}

fn str_after(text: &str, start: usize, n: usize) -> &str {
    let mut end = (start + n).min(text.len());
    while end > start && !text.is_char_boundary(end) {
        end -= 1;
    }
    text.get(start..end).unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::{has_word, name_start};

    #[test]
    fn context_words_stand_alone() {
        assert!(has_word("nhs no. ", "nhs"));
        assert!(has_word("the nhss ", "nhs"));
        assert!(has_word("(tin)", "tin"));
        assert!(!has_word("setting ", "tin"));
        assert!(!has_word("tin2", "tin"));
        assert!(has_word("주민등록번호는 ", "주민등록번호"));
    }

    #[test]
    fn key_prefix_reaches_back_like_a_bounded_leading_repetition() {
        let hay = b"x = db.main_password = v";
        // From `password` (at 12) back over name bytes, stopping at the space.
        assert_eq!(name_start(hay, 12, 0, 40), 4);
        // At most `max` bytes, never before where the search resumed.
        assert_eq!(name_start(hay, 12, 0, 3), 9);
        assert_eq!(name_start(hay, 12, 8, 40), 8);
        // A leading `-D` flag is not part of the name, as `(?:-D)?` before the name made it.
        assert_eq!(name_start(b" -Dsonar.login=", 3, 0, 40), 3);
    }
}
