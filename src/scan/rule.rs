//! Rule files: their TOML shape, compilation into [`Rule`]s, and matching one rule in a window.
//!
//! A rule file holds `[[rule]]` tables. Regexes are compiled as `regex::bytes` with ASCII
//! semantics (a rule opts into Unicode with `unicode = true`) and a size limit, so a rule file
//! cannot make the scanner allocate without bound. The sensitive value is the `secret` named
//! group, else group 1, else the whole match. A rule's regex is compiled when the rule first
//! runs (most calls run few rules), or all at once by [`Rule::compiled`] callers that validate a
//! pack; a regex that cannot compile when first run reports its whole window as a finding, so
//! a broken rule never narrows a scan silently.

use std::fmt;
use std::sync::{Arc, OnceLock};

use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::pivot::Pivot;
use super::shape::{self, ValueShape};
use super::validate::Validator;
use super::work::Work;

mod case;
mod engine;
mod search;

#[cfg(test)]
pub(super) use engine::parse;
pub(super) use engine::RuleRegex;

pub(super) use search::{find_group, By, MatchCtx};

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
    /// Whether the category is a secret (credential, private key, token), not personal data
    /// or an identifier.
    pub fn is_secret(self) -> bool {
        !matches!(self, Category::Pii | Category::Identifier)
    }

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

impl Confidence {
    pub fn as_str(self) -> &'static str {
        match self {
            Confidence::Low => "low",
            Confidence::Medium => "medium",
            Confidence::High => "high",
        }
    }
}

impl fmt::Display for Confidence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
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
    /// The regex source and its Unicode mode, for building shared regex sets.
    pub(super) pattern: String,
    pub(super) unicode: bool,
    /// The regex, built when the rule first runs (or the reason it does not compile).
    compiled: OnceLock<Result<Compiled, String>>,
    /// The regex's pivot (see `pivot`), read from the pattern when first asked for; boxed,
    /// as few rules have one and every rule is copied as the scanner is built.
    pivot: OnceLock<Option<Box<Pivot>>>,
    /// The work of the rule's pack: in a bulk scan the regex runs on its fast engines from its
    /// first search (see `work`).
    pub(super) work: Arc<Work>,
    validator: Option<Validator>,
    allowlist: Vec<String>,
}

impl Rule {
    /// The pivot of the rule's regex (see `pivot`), if it has one worth searching by; read
    /// from the pattern the first time it is asked for (a pattern that does not parse has
    /// none, and fails when it compiles).
    pub(super) fn pivot(&self) -> Option<&Pivot> {
        self.pivot
            .get_or_init(|| {
                engine::parse(&self.pattern, self.unicode)
                    .ok()
                    .and_then(|hir| Pivot::of(&hir))
                    .map(Box::new)
            })
            .as_deref()
    }
}

/// A rule's compiled regex and where its value sits in a match.
#[derive(Debug, Clone)]
pub(super) struct Compiled {
    pub regex: RuleRegex,
    /// Where the value sits in a match, so most matches need no capture extraction.
    value_shape: ValueShape,
    /// The token regex without its boundary context, for a vendor-prefixed rule (see `glued`).
    pub glued: Option<super::glued::Glued>,
}

/// Compiles one rule's regex with the scanner's limits (in a bulk scan, on its fast engines at
/// once), and from the same parse where its value sits in a match and, for a vendor-prefixed
/// token rule, its glued-token regex.
pub(super) fn build_regex(
    pattern: &str,
    unicode: bool,
    keywords: &[String],
    category: Category,
    bulk: bool,
) -> Result<Compiled, String> {
    // A keyword rule runs in its keyword windows, where the prefilter's lower-cased text is at
    // hand: one that ignores case runs there (see `case`).
    let may_lower = !keywords.is_empty();
    let (regex, hir) = RuleRegex::parsed(pattern, unicode, REGEX_SIZE_LIMIT, bulk, may_lower)?;
    let groups = regex.captures_len().saturating_sub(1);
    let first_name = regex.capture_names().nth(1).flatten();
    let value_shape = shape::value_shape_of(&hir, groups, first_name);
    let glued = super::glued::glued_of(&hir, unicode, keywords, category);
    Ok(Compiled {
        regex,
        value_shape,
        glued,
    })
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
    rules_of(name, toml::from_str(text).map_err(|e| e.to_string()))
}

/// The rules of one embedded file, from the JSON form the build script wrote of its TOML.
pub(super) fn parse_json_file(name: &str, json: &str) -> Result<Vec<Rule>, RuleError> {
    rules_of(name, serde_json::from_str(json).map_err(|e| e.to_string()))
}

fn rules_of(name: &str, file: Result<RuleFile, String>) -> Result<Vec<Rule>, RuleError> {
    let file = file.map_err(|reason| RuleError::Parse {
        file: name.to_owned(),
        reason,
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
        pattern: spec.regex,
        unicode: spec.unicode,
        compiled: OnceLock::new(),
        pivot: OnceLock::new(),
        work: Arc::default(),
        validator,
        allowlist: spec
            .allowlist
            .iter()
            .map(|a| a.to_ascii_lowercase())
            .collect(),
    })
}

/// SHA-256 (hex) over each file's name, a NUL, its length and its bytes, in the order given.
pub(super) fn files_sha256<'a>(files: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    let mut h = Sha256::new();
    for (name, text) in files {
        h.update(name.as_bytes());
        h.update([0u8]);
        h.update((text.len() as u64).to_be_bytes());
        h.update(text.as_bytes());
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}
