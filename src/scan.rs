//! The secret and PII scanner behind the gate's G003 check.
//!
//! Rules are data (`assets/rules/*.toml`, embedded at build time): each names a category, the
//! keywords that must appear near a match, a regex whose `secret` group (or first group) is the
//! sensitive value, and optional validator, entropy floor and allowlist. Scanning runs one
//! aho-corasick pass over the text to find keyword hits, runs only the candidate rules' regexes
//! in windows around those hits (rules without keywords run around digit clusters, or over the
//! whole field behind one regex-set pass that skips those that cannot match), then validates,
//! measures entropy and drops placeholders. One level of base64/hex decoding catches encoded
//! secrets. A [`Finding`] records where a value is, never what it is: no copy, no preview and no
//! unkeyed hash of the matched bytes ever leaves this module.
//!
//! Loading a pack compiles nothing: each rule's regex is compiled when a scan first runs the
//! rule, each regex set when a field first needs it, so a short-lived process pays only for
//! the rules its input selects ([`Scanner::compile_all`] compiles everything, as loading a
//! pack from files and the embedded-asset tests do). [`bulk`] spreads a large text over a
//! rayon pool with the same findings as one thread.

pub mod backend;
pub mod bulk;
mod decode;
mod digits;
mod filter;
mod glued;
mod ids;
mod joined;
mod keywords;
mod names;
mod net;
mod pass;
mod pivot;
mod redact;
mod rule;
mod sets;
mod shape;
mod spare;
mod validate;
mod values;
mod whole;
mod work;

use std::fmt;
use std::ops::Range;
use std::path::Path;
use std::sync::{Arc, OnceLock};

pub use redact::redact;
pub use rule::{Category, Confidence, Rule, RuleError};

use redact::floor_char_boundary;

/// The scanner's version string, recorded in receipts next to [`Scanner::rules_sha256`].
pub const SCANNER_VERSION: &str = "cq-scan-1";

/// Language profiles the prose rules understand (keywords and phrasing). Structured detectors
/// (keys, tokens, checksummed identifiers) are language-independent.
pub const SUPPORTED_LANGUAGES: &[&str] = &["en", "de", "es", "fr"];

/// Umbrella entity types a scan policy may name; each selects every rule of its categories.
const UMBRELLA_ENTITY_TYPES: &[(&str, &[Category])] = &[
    (
        "SECRET",
        &[Category::Credential, Category::PrivateKey, Category::Token],
    ),
    ("CREDENTIAL", &[Category::Credential]),
    ("PRIVATE_KEY", &[Category::PrivateKey]),
    ("TOKEN", &[Category::Token]),
    ("PII", &[Category::Pii]),
    ("IDENTIFIER", &[Category::Identifier]),
];

/// One embedded rule file (see [`BUILTIN_RULE_FILES`]).
macro_rules! builtin_rules {
    ($name:literal) => {
        (
            concat!($name, ".toml"),
            include_str!(concat!("../assets/rules/", $name, ".toml")),
            include_str!(concat!(env!("OUT_DIR"), "/assets/rules/", $name, ".json")),
        )
    };
}

/// The embedded rule pack, in the fixed order used by [`Scanner::rules_sha256`]: each file's
/// name, its TOML text (what the digest covers) and the same rules as JSON, written by the build
/// script (`src/build.rs`) so a process need not parse TOML to load them.
const BUILTIN_RULE_FILES: &[(&str, &str, &str)] = &[
    builtin_rules!("cloud"),
    builtin_rules!("vcs"),
    builtin_rules!("saas"),
    builtin_rules!("keys"),
    builtin_rules!("generic"),
    builtin_rules!("pii"),
    builtin_rules!("pii_national"),
];

/// Bytes scanned before a keyword hit, and after it unless the rule asks for more; the window
/// then grows to the end of the line (bounded by [`LINE_SLACK`]).
pub(crate) const WINDOW_BEFORE: usize = 96;
pub(crate) const WINDOW_AFTER: usize = 384;
const LINE_SLACK: usize = 96;

/// One sensitive value found in one field: where it is and what kind, never what it is.
#[derive(Clone, PartialEq, Eq, serde::Serialize)]
pub struct Finding {
    pub rule_id: String,
    pub category: Category,
    pub field_path: String,
    /// Byte offsets into the scanned text.
    pub span: Range<usize>,
    pub confidence: Confidence,
}

impl fmt::Debug for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Finding")
            .field("rule_id", &self.rule_id)
            .field("category", &self.category)
            .field("field_path", &self.field_path)
            .field("span", &self.span)
            .field("confidence", &self.confidence)
            .finish()
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({}) in {} at {}..{} [{}]: ****",
            self.rule_id,
            self.category,
            self.field_path,
            self.span.start,
            self.span.end,
            self.confidence
        )
    }
}

/// Rules plus the keyword automaton; cheap to clone and to share across threads. Regexes and
/// regex sets are compiled when a scan first needs them (see [`Scanner::compile_all`]), and
/// scanners narrowed from one another share what is already compiled.
#[derive(Debug, Clone)]
pub struct Scanner {
    rules: Arc<[Rule]>,
    enabled: Vec<bool>,
    keywords: Arc<keywords::Keywords>,
    /// For each keyword pattern id, the enabled rules it selects.
    keyword_rules: Vec<Vec<usize>>,
    /// Rules without keywords or digit trigger: they run over the whole text.
    always: Vec<usize>,
    /// Enabled digit-triggered rules behind one regex set.
    digit_rules: Option<digits::DigitRules>,
    /// Whether each rule runs through `digit_rules` rather than on its own.
    in_group: Vec<bool>,
    /// Rules whose entity type the scan policy named: their context words are not required.
    named: Vec<bool>,
    /// Enabled rules that run over the whole field, most behind one regex-set pass.
    whole: whole::WholeField,
    rules_sha256: String,
    /// The rule files' digest and which rules run and which are named: what a scan's
    /// findings depend on besides the text (see [`Scanner::selection`]).
    selection: Arc<str>,
    /// This scanner narrowed to its secret rules, for the joined views (built on first use).
    secrets: OnceLock<Box<Scanner>>,
}

impl Scanner {
    /// The embedded rule pack with its default entity types enabled. Cheap: rule regexes and
    /// sets compile when a scan first needs them (the embedded-asset tests compile them all).
    pub fn builtin() -> Result<Scanner, RuleError> {
        let mut rules = Vec::new();
        for (name, _, json) in BUILTIN_RULE_FILES {
            rules.extend(rule::parse_json_file(name, json)?);
        }
        let texts = BUILTIN_RULE_FILES
            .iter()
            .map(|(name, text, _)| (*name, *text));
        Scanner::with_rules(rules, rule::files_sha256(texts))
    }

    /// Every `*.toml` file in `dir`, read in file-name order (for `--rules DIR`).
    pub fn from_dir(dir: &Path) -> Result<Scanner, RuleError> {
        let read_err = |source| RuleError::Read {
            path: dir.display().to_string(),
            source,
        };
        let mut names = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(read_err)? {
            let path = entry.map_err(read_err)?.path();
            if path.extension().is_some_and(|e| e == "toml") {
                names.push(path);
            }
        }
        names.sort();
        let mut files = Vec::new();
        for path in names {
            let text = std::fs::read_to_string(&path).map_err(|source| RuleError::Read {
                path: path.display().to_string(),
                source,
            })?;
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            files.push((name, text));
        }
        if files.is_empty() {
            return Err(RuleError::Empty {
                path: dir.display().to_string(),
            });
        }
        Scanner::from_files(&files)
    }

    /// Compiles rule files given as `(file name, TOML text)`, hashed in the order given. Every
    /// regex is compiled now, so a rule that does not compile is an error here.
    pub fn from_files(files: &[(String, String)]) -> Result<Scanner, RuleError> {
        let scanner = Scanner::parse(files)?;
        scanner.compile_all()?;
        Ok(scanner)
    }

    /// Parses and checks rule files without compiling their regexes.
    fn parse(files: &[(String, String)]) -> Result<Scanner, RuleError> {
        let mut rules = Vec::new();
        for (name, text) in files {
            rules.extend(rule::parse_file(name, text)?);
        }
        let texts = files
            .iter()
            .map(|(name, text)| (name.as_str(), text.as_str()));
        Scanner::with_rules(rules, rule::files_sha256(texts))
    }

    /// A scanner over `rules` (checked, not compiled) whose rule files hash to `rules_sha256`.
    fn with_rules(mut rules: Vec<Rule>, rules_sha256: String) -> Result<Scanner, RuleError> {
        let mut seen = std::collections::BTreeSet::new();
        for r in &rules {
            if !seen.insert(r.id.as_str()) {
                return Err(RuleError::DuplicateId { id: r.id.clone() });
            }
        }
        let enabled: Vec<bool> = rules.iter().map(|r| r.default_enabled).collect();
        let named = vec![false; rules.len()];
        // One count of work for the pack: its keyword automata and rules read it.
        let work = Arc::new(work::Work::default());
        for r in &mut rules {
            r.work = Arc::clone(&work);
        }
        let keywords = keywords::Keywords::new(&rules, work)?;
        let always: Vec<usize> = (0..rules.len())
            .filter(|&ri| rules[ri].keywords.is_empty())
            .collect();
        let keyword_rules = selected(&keywords.rules_of, &enabled);
        let (digit_rules, in_group) = group_digit_rules(&rules, &enabled, None);
        let whole = whole_field_rules(&rules, &enabled, &always, None);
        let selection = selection(&rules_sha256, &enabled, &named);
        Ok(Scanner {
            selection,
            rules: rules.into(),
            enabled,
            keywords: Arc::new(keywords),
            keyword_rules,
            always,
            digit_rules,
            in_group,
            named,
            whole,
            rules_sha256,
            secrets: OnceLock::new(),
        })
    }

    /// Compiles now everything this scanner's scans could need: every rule's regex (enabled or
    /// not), the regex sets of its selection and the keyword DFA. A built-in rule that does not
    /// compile is caught by the embedded-asset tests, which call this.
    pub fn compile_all(&self) -> Result<(), RuleError> {
        for r in self.rules.iter() {
            r.compiled_fully()?;
        }
        if let Some(d) = &self.digit_rules {
            d.compile_sets(&self.rules)?;
        }
        self.whole.compile_sets(&self.rules);
        self.keywords.build_dfa();
        Ok(())
    }

    /// A scanner that runs exactly the rules selected by `entity_types` (umbrella types such as
    /// `SECRET` or `PII`, or a rule's own entity such as `IBAN_CODE` or `DATE_TIME`). Naming a
    /// type this scanner does not support is an error, never a silently narrowed scan. A rule
    /// whose own entity type is named reports its matches without its context words; one
    /// selected through an umbrella type still needs them.
    pub fn for_entity_types(&self, entity_types: &[&str]) -> Result<Scanner, RuleError> {
        let mut enabled = vec![false; self.rules.len()];
        let mut named = vec![false; self.rules.len()];
        for name in entity_types {
            if !self.supports_entity_type(name) {
                return Err(RuleError::UnsupportedEntityType {
                    name: (*name).to_owned(),
                });
            }
            let umbrella = UMBRELLA_ENTITY_TYPES.iter().find(|(n, _)| n == name);
            for (i, r) in self.rules.iter().enumerate() {
                let selected = match umbrella {
                    Some((_, cats)) => cats.contains(&r.category) && r.default_enabled,
                    None => r.entity == *name,
                };
                enabled[i] |= selected;
                named[i] |= umbrella.is_none() && selected;
            }
        }
        Ok(self.narrowed(enabled, named))
    }

    /// This scanner running only the `enabled` rules, sharing what is compiled.
    fn narrowed(&self, enabled: Vec<bool>, named: Vec<bool>) -> Scanner {
        let (digit_rules, in_group) =
            group_digit_rules(&self.rules, &enabled, self.digit_rules.as_ref());
        let whole = whole_field_rules(&self.rules, &enabled, &self.always, Some(&self.whole));
        Scanner {
            keyword_rules: selected(&self.keywords.rules_of, &enabled),
            selection: selection(&self.rules_sha256, &enabled, &named),
            enabled,
            digit_rules,
            in_group,
            named,
            whole,
            secrets: OnceLock::new(),
            ..self.clone()
        }
    }

    /// This scanner without its PII and identifier rules: what the joined views are scanned
    /// with, since only secrets are taken from them.
    fn secrets_only(&self) -> &Scanner {
        self.secrets.get_or_init(|| {
            let enabled = (0..self.rules.len())
                .map(|ri| self.enabled[ri] && self.rules[ri].category.is_secret())
                .collect();
            Box::new(self.narrowed(enabled, self.named.clone()))
        })
    }

    /// Names what this scanner's findings depend on besides the text: the rule files' digest,
    /// then a mark per rule (`-` off, `e` on, `n` on and named). Two scanners with the same
    /// selection find the same in every text.
    pub fn selection(&self) -> &str {
        &self.selection
    }

    /// Whether a scan policy may name `name` as an entity type.
    pub fn supports_entity_type(&self, name: &str) -> bool {
        UMBRELLA_ENTITY_TYPES.iter().any(|(n, _)| *n == name)
            || self.rules.iter().any(|r| r.entity == name)
    }

    /// Whether a scan policy may name `code` as a language profile (see [`SUPPORTED_LANGUAGES`]).
    pub fn supports_language(&self, code: &str) -> bool {
        SUPPORTED_LANGUAGES.contains(&code)
    }

    /// Every entity type this scanner accepts, umbrella types first.
    pub fn entity_types(&self) -> Vec<String> {
        let mut out: Vec<String> = UMBRELLA_ENTITY_TYPES
            .iter()
            .map(|(n, _)| (*n).to_owned())
            .collect();
        for r in self.rules.iter() {
            if !out.contains(&r.entity) {
                out.push(r.entity.clone());
            }
        }
        out
    }

    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    pub fn version(&self) -> &str {
        SCANNER_VERSION
    }

    /// SHA-256 (hex) over the rule files' names and bytes in their fixed order.
    pub fn rules_sha256(&self) -> String {
        self.rules_sha256.clone()
    }

    /// Scans one field, and the joined views of its fragments (see `joined`). Findings are
    /// sorted by span and never overlap for the same rule.
    pub fn scan_text(&self, field_path: &str, text: &str) -> Vec<Finding> {
        self.findings_of(field_path, self.scan_all_parts(text))
    }

    /// The findings of a field from what the parts of its scan found: the ordinary scan's
    /// matches and the joined views' that the joining made, in span order, each (rule, span)
    /// once.
    fn findings_of(&self, field_path: &str, found: pass::Found) -> Vec<Finding> {
        let (mut raw, joined) = found.into_parts();
        let joined = self.keep_joined(joined, &raw);
        raw.extend(joined);
        raw.sort_by(|a, b| {
            (a.span.start, a.span.end, a.rule).cmp(&(b.span.start, b.span.end, b.rule))
        });
        raw.dedup_by(|b, a| a.rule == b.rule && a.span == b.span);
        raw.into_iter()
            .map(|m| {
                let r = &self.rules[m.rule];
                Finding {
                    rule_id: r.id.clone(),
                    category: r.category,
                    field_path: field_path.to_owned(),
                    span: m.span,
                    confidence: m.confidence,
                }
            })
            .collect()
    }

    /// Scans every string of a JSON document, keys included, each under its path. A string
    /// that is an object member's value is also scanned as the line `"name": "value"`, so a
    /// secret-named member gives its value the context an assignment in code would
    /// (`{"password": "S3cr3t-Pa55w0rd!"}`); only findings inside the value are kept.
    pub fn scan_json(&self, document: &crate::json::Value) -> Vec<Finding> {
        let mut out = Vec::new();
        document.visit_strings_with_keys(&mut |path, key, text| {
            let mut found = self.scan_text(path, text);
            if let Some(name) = key {
                let line = format!("\"{name}\": \"{text}\"");
                let at = name.len() + 5;
                found.extend(self.scan_text(path, &line).into_iter().filter_map(|f| {
                    let inside = f.span.start >= at && f.span.end <= at + text.len();
                    inside.then(|| Finding {
                        span: f.span.start - at..f.span.end - at,
                        ..f
                    })
                }));
                found.sort_by(|a, b| {
                    (a.span.start, a.span.end, &a.rule_id).cmp(&(
                        b.span.start,
                        b.span.end,
                        &b.rule_id,
                    ))
                });
                found.dedup_by(|b, a| a.rule_id == b.rule_id && a.span == b.span);
            }
            out.extend(found);
        });
        out
    }
}

/// A match before it is turned into a [`Finding`].
#[derive(Debug, Clone)]
struct RawMatch {
    rule: usize,
    span: Range<usize>,
    confidence: Confidence,
}

/// What [`Scanner::selection`] names.
fn selection(rules_sha256: &str, enabled: &[bool], named: &[bool]) -> Arc<str> {
    let marks = enabled
        .iter()
        .zip(named)
        .map(|(&on, &named)| match (on, named) {
            (false, _) => '-',
            (true, false) => 'e',
            (true, true) => 'n',
        });
    format!("{rules_sha256}:{}", marks.collect::<String>()).into()
}

/// The rules each keyword selects, narrowed to the enabled ones.
fn selected(rules_of: &[Vec<usize>], enabled: &[bool]) -> Vec<Vec<usize>> {
    rules_of
        .iter()
        .map(|rules| {
            rules
                .iter()
                .copied()
                .filter(|&ri| enabled.get(ri).copied().unwrap_or(false))
                .collect()
        })
        .collect()
}

fn group_digit_rules(
    rules: &[Rule],
    enabled: &[bool],
    previous: Option<&digits::DigitRules>,
) -> (Option<digits::DigitRules>, Vec<bool>) {
    let digit_rules = digits::digit_rules(rules, enabled, previous);
    let mut in_group = vec![false; rules.len()];
    for &ri in digit_rules.iter().flat_map(|d| d.groups.iter().flatten()) {
        in_group[ri] = true;
    }
    (digit_rules, in_group)
}

/// The enabled keyword-less rules without a digit trigger, which run over the whole field.
fn whole_field_rules(
    rules: &[Rule],
    enabled: &[bool],
    always: &[usize],
    previous: Option<&whole::WholeField>,
) -> whole::WholeField {
    let candidates: Vec<usize> = always
        .iter()
        .copied()
        .filter(|&ri| rules[ri].min_digits.is_none())
        .collect();
    whole::WholeField::new(rules, enabled, &candidates, previous)
}

/// The proptest configuration of the scanner's property tests: a failing case is printed, not
/// saved (the layout keeps the top level to its own files).
#[cfg(test)]
pub(crate) fn unsaved_proptest() -> proptest::prelude::ProptestConfig {
    proptest::prelude::ProptestConfig {
        failure_persistence: None,
        ..proptest::prelude::ProptestConfig::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_rules_compile() {
        let s = Scanner::builtin().unwrap();
        assert!(!s.rules().is_empty());
        assert_eq!(s.rules_sha256().len(), 64);
        s.compile_all().unwrap();
        let all = s.entity_types();
        let names: Vec<&str> = all.iter().map(String::as_str).collect();
        s.for_entity_types(&names).unwrap().compile_all().unwrap();
    }

    #[test]
    fn the_embedded_pack_read_from_json_is_the_one_its_toml_files_give() {
        let files: Vec<(String, String)> = BUILTIN_RULE_FILES
            .iter()
            .map(|(name, text, _)| ((*name).to_owned(), (*text).to_owned()))
            .collect();
        let from_toml = Scanner::parse(&files).unwrap();
        let from_json = Scanner::builtin().unwrap();
        assert_eq!(from_json.rules_sha256(), from_toml.rules_sha256());
        assert_eq!(from_json.rules().len(), from_toml.rules().len());
        for (json, toml) in from_json.rules().iter().zip(from_toml.rules()) {
            // Every field, the float entropy floors to the bit, none compiled yet.
            assert_eq!(format!("{json:?}"), format!("{toml:?}"));
            assert_eq!(
                json.entropy_min.map(f64::to_bits),
                toml.entropy_min.map(f64::to_bits),
                "{}",
                json.id
            );
        }
        // The same selections, keyword automaton and rule groups.
        assert_eq!(format!("{from_json:?}"), format!("{from_toml:?}"));
    }

    #[test]
    fn builtin_compiles_only_what_a_scan_uses() {
        let s = Scanner::builtin().unwrap();
        assert!(s.rules().iter().all(|r| !r.is_compiled()));
        s.scan_text("t", "the token is ghp_XIxB7KMNdAr3zqWtQqhE94qglHqOzn1D1stg");
        let compiled: Vec<&str> = s
            .rules()
            .iter()
            .filter(|r| r.is_compiled())
            .map(|r| r.id.as_str())
            .collect();
        assert!(compiled.contains(&"github-token"), "{compiled:?}");
        assert!(compiled.len() < s.rules().len() / 4, "{compiled:?}");
        // A narrowed scanner shares the rules, compiled or not.
        let narrowed = s.for_entity_types(&["SECRET"]).unwrap();
        assert!(narrowed.rules()[0].is_compiled() == s.rules()[0].is_compiled());
    }

    #[test]
    fn a_rule_that_cannot_compile_fails_closed() {
        let file = r#"
            [[rule]]
            id = "broken"
            description = "a regex that does not parse"
            category = "credential"
            keywords = ["vault"]
            regex = '(unclosed'
        "#;
        let files = [("broken.toml".to_owned(), file.to_owned())];
        let err = Scanner::from_files(&files).unwrap_err().to_string();
        assert!(err.contains("\"broken\""), "{err}");
        // Built lazily, the same rule reports the window it could not search.
        let lazy = Scanner::parse(&files).unwrap();
        let found = lazy.scan_text("t", "the vault is open");
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].rule_id, "broken");
        assert_eq!(found[0].confidence, Confidence::High);
    }

    #[test]
    fn url_login_is_not_an_email_address() {
        let s = Scanner::builtin().unwrap();
        let ids = |text: &str| -> Vec<String> {
            s.scan_text("t", text)
                .into_iter()
                .map(|f| f.rule_id)
                .collect()
        };
        let db = "DATABASE_URL=postgres://app:Qv7rX2mLp9Tz@db-prod.acme.io:5432/app";
        assert_eq!(ids(db), vec!["url-credentials"]);
        // An address in a URL's query is still an e-mail address.
        let query = "see https://shop.acme.io/u?email=jane.roe@mailbox.org for details";
        assert_eq!(ids(query), vec!["email-address"]);
    }

    #[test]
    fn numbers_inside_a_decoded_token_are_not_pii() {
        // The claims hold `"iat":1781084494`, which passes the Swedish organisation number's
        // Luhn check; decoded, it used to be reported as PII over the whole token.
        let s = Scanner::builtin().unwrap();
        let token = "GITHUB_TOKEN=eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJnaXRodWIiLCJzdWIiOiJpbnN0YWxsYXRpb24iLCJpYXQiOjE3ODEwODQ0OTQsImV4cCI6MTc4MTA4ODA5NH0.e51a3ZMZToPiuGf4t0VMP95h0Q0Y8xG1XqaBaQ-3cEM";
        let findings = s.scan_text("t", token);
        assert!(!findings.is_empty());
        assert!(
            findings.iter().all(|f| f.category != Category::Pii),
            "{findings:?}"
        );
        // The same number in plain text is still checked.
        let plain = s.scan_text("t", "org no 178108-4494");
        assert!(plain.iter().any(|f| f.rule_id == "se-organisationsnummer"));
    }

    #[test]
    fn scanner_is_send_and_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Scanner>();
        assert_send_sync::<Finding>();
    }

    #[test]
    fn unsupported_entity_type_is_an_error() {
        let s = Scanner::builtin().unwrap();
        assert!(s.for_entity_types(&["NOT_A_TYPE"]).is_err());
        assert!(s.for_entity_types(&["SECRET", "PII"]).is_ok());
        assert!(!s.supports_language("xx"));
    }
}
