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

pub mod backend;
mod decode;
mod digits;
mod filter;
mod glued;
mod ids;
mod joined;
mod names;
mod net;
mod rule;
mod shape;
mod validate;
mod values;
mod whole;

use std::fmt;
use std::ops::Range;
use std::path::Path;

use aho_corasick::AhoCorasick;

pub use rule::{Category, Confidence, Rule, RuleError};

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

/// The embedded rule pack, in the fixed order used by [`Scanner::rules_sha256`].
const BUILTIN_RULE_FILES: &[(&str, &str)] = &[
    ("cloud.toml", include_str!("../assets/rules/cloud.toml")),
    ("vcs.toml", include_str!("../assets/rules/vcs.toml")),
    ("saas.toml", include_str!("../assets/rules/saas.toml")),
    ("keys.toml", include_str!("../assets/rules/keys.toml")),
    ("generic.toml", include_str!("../assets/rules/generic.toml")),
    ("pii.toml", include_str!("../assets/rules/pii.toml")),
    (
        "pii_national.toml",
        include_str!("../assets/rules/pii_national.toml"),
    ),
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

/// Compiled rules plus the keyword automaton; cheap to share across threads.
#[derive(Debug, Clone)]
pub struct Scanner {
    rules: Vec<Rule>,
    enabled: Vec<bool>,
    keywords: Option<AhoCorasick>,
    /// For each keyword pattern id, the rules it selects.
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
}

impl Scanner {
    /// The embedded rule pack with its default entity types enabled.
    pub fn builtin() -> Result<Scanner, RuleError> {
        let files: Vec<(String, String)> = BUILTIN_RULE_FILES
            .iter()
            .map(|(name, text)| ((*name).to_owned(), (*text).to_owned()))
            .collect();
        Scanner::from_files(&files)
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

    /// Compiles rule files given as `(file name, TOML text)`, hashed in the order given.
    pub fn from_files(files: &[(String, String)]) -> Result<Scanner, RuleError> {
        let mut rules = Vec::new();
        for (name, text) in files {
            rules.extend(rule::parse_file(name, text)?);
        }
        let mut seen = std::collections::BTreeSet::new();
        for r in &rules {
            if !seen.insert(r.id.clone()) {
                return Err(RuleError::DuplicateId { id: r.id.clone() });
            }
        }
        let enabled: Vec<bool> = rules.iter().map(|r| r.default_enabled).collect();
        let named = vec![false; rules.len()];
        let (keywords, keyword_rules, always) = build_prefilter(&rules)?;
        let (digit_rules, in_group) = group_digit_rules(&rules, &enabled)?;
        let whole = whole_field_rules(&rules, &enabled, &always);
        Ok(Scanner {
            rules,
            enabled,
            keywords,
            keyword_rules,
            always,
            digit_rules,
            in_group,
            named,
            whole,
            rules_sha256: rule::files_sha256(files),
        })
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
        let (digit_rules, in_group) = group_digit_rules(&self.rules, &enabled)?;
        let whole = whole_field_rules(&self.rules, &enabled, &self.always);
        Ok(Scanner {
            enabled,
            digit_rules,
            in_group,
            named,
            whole,
            ..self.clone()
        })
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
        for r in &self.rules {
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
        let mut raw = self.scan_raw(text, true);
        let joined = self.scan_joined(text, &raw);
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

    /// Finds matches in `text`; when `decode` is set, also inside base64/hex blobs (one level).
    fn scan_raw(&self, text: &str, decode: bool) -> Vec<RawMatch> {
        let bytes = text.as_bytes();
        let mut out = Vec::new();
        // (rule, keyword position) pairs, so a field without keyword hits allocates nothing.
        let mut hits: Vec<(usize, usize)> = Vec::new();
        if let Some(ac) = &self.keywords {
            // Every occurrence of every keyword, overlaps included: a keyword that starts inside
            // another one's hit (`key "` in `apikey "`) still selects its rules.
            for m in ac.find_overlapping_iter(bytes) {
                for &ri in &self.keyword_rules[m.pattern().as_usize()] {
                    if self.enabled[ri] {
                        hits.push((ri, m.start()));
                    }
                }
            }
        }
        hits.sort_unstable();
        hits.dedup();
        for group in hits.chunk_by(|a, b| a.0 == b.0) {
            let ri = group[0].0;
            let rule = &self.rules[ri];
            let positions = group.iter().map(|&(_, p)| p);
            for window in windows(bytes, positions, rule.window_before, rule.window) {
                rule.find_in(ri, text, window, &mut out);
            }
            if rule.glued.is_some() {
                for &(_, at) in group {
                    rule.find_glued(ri, text, at, &mut out);
                }
            }
        }
        let needs_clusters = self.digit_rules.is_some()
            || self
                .always
                .iter()
                .any(|&ri| self.enabled[ri] && self.rules[ri].min_digits.is_some());
        let clusters = if needs_clusters && bytes.iter().any(u8::is_ascii_digit) {
            digits::clusters(bytes)
        } else {
            Vec::new()
        };
        if let (Some(d), false) = (&self.digit_rules, clusters.is_empty()) {
            self.scan_digit_rules(d, text, &clusters, &mut out);
        }
        for &ri in &self.always {
            if !self.enabled[ri] || self.in_group[ri] {
                continue;
            }
            if let Some(n) = self.rules[ri].min_digits {
                for window in digits::windows(&clusters, n, bytes.len()) {
                    self.rules[ri].find_in(ri, text, window, &mut out);
                }
            }
        }
        for ri in self.whole.to_run(bytes) {
            self.rules[ri].find_in(ri, text, 0..bytes.len(), &mut out);
        }
        out.retain(|m| self.named[m.rule] || self.rules[m.rule].context_near(text, &m.span));
        if decode {
            for blob in decode::encoded_blobs(text) {
                let inner = self.scan_raw(&blob.decoded, false);
                for m in inner {
                    if self.rules[m.rule].decodable {
                        out.push(RawMatch {
                            rule: m.rule,
                            span: blob.span.clone(),
                            confidence: m.confidence.min(Confidence::Medium),
                        });
                    }
                }
            }
        }
        out
    }
}

impl Scanner {
    /// Runs the digit-triggered rules: one set pass over the lowest threshold's windows, then
    /// each rule the set reports in its own threshold's windows inside.
    fn scan_digit_rules(
        &self,
        d: &digits::DigitRules,
        text: &str,
        clusters: &[digits::Cluster],
        out: &mut Vec<RawMatch>,
    ) {
        let bytes = text.as_bytes();
        let floor = d.floor();
        // Windows per threshold, computed when a rule with that threshold first needs them.
        let mut by_min: Vec<(usize, Vec<Range<usize>>)> = Vec::new();
        for outer in digits::windows(clusters, floor, bytes.len()) {
            for idx in d.set.matches(&bytes[outer.clone()]).iter() {
                let (ri, min) = (d.rules[idx], d.mins[idx]);
                let pos = match by_min.iter().position(|(m, _)| *m == min) {
                    Some(pos) => pos,
                    None => {
                        by_min.push((min, digits::windows(clusters, min, bytes.len())));
                        by_min.len() - 1
                    }
                };
                for window in digits::inside(&by_min[pos].1, &outer) {
                    self.rules[ri].find_in(ri, text, window, out);
                }
            }
        }
    }
}

/// A match before it is turned into a [`Finding`].
#[derive(Debug, Clone)]
struct RawMatch {
    rule: usize,
    span: Range<usize>,
    confidence: Confidence,
}

fn group_digit_rules(
    rules: &[Rule],
    enabled: &[bool],
) -> Result<(Option<digits::DigitRules>, Vec<bool>), RuleError> {
    let digit_rules = digits::digit_rules(rules, enabled)?;
    let mut in_group = vec![false; rules.len()];
    for &ri in digit_rules.iter().flat_map(|d| &d.rules) {
        in_group[ri] = true;
    }
    Ok((digit_rules, in_group))
}

/// The enabled keyword-less rules without a digit trigger, which run over the whole field.
fn whole_field_rules(rules: &[Rule], enabled: &[bool], always: &[usize]) -> whole::WholeField {
    let candidates: Vec<usize> = always
        .iter()
        .copied()
        .filter(|&ri| rules[ri].min_digits.is_none())
        .collect();
    whole::WholeField::new(rules, enabled, &candidates)
}

/// The keyword automaton, the rules each keyword selects, and the rules without keywords.
type Prefilter = (Option<AhoCorasick>, Vec<Vec<usize>>, Vec<usize>);

fn build_prefilter(rules: &[Rule]) -> Result<Prefilter, RuleError> {
    let mut patterns: Vec<String> = Vec::new();
    let mut keyword_rules: Vec<Vec<usize>> = Vec::new();
    let mut always = Vec::new();
    for (ri, r) in rules.iter().enumerate() {
        if r.keywords.is_empty() {
            always.push(ri);
        }
        for k in &r.keywords {
            let k = k.to_ascii_lowercase();
            match patterns.iter().position(|p| *p == k) {
                Some(pi) => keyword_rules[pi].push(ri),
                None => {
                    patterns.push(k);
                    keyword_rules.push(vec![ri]);
                }
            }
        }
    }
    if patterns.is_empty() {
        return Ok((None, keyword_rules, always));
    }
    let ac = AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .match_kind(aho_corasick::MatchKind::Standard)
        .kind(Some(aho_corasick::AhoCorasickKind::DFA))
        .build(&patterns)
        .map_err(|e| RuleError::Keywords {
            reason: e.to_string(),
        })?;
    Ok((Some(ac), keyword_rules, always))
}

/// Merged byte windows around sorted keyword positions, widened to whole lines (bounded).
fn windows(
    bytes: &[u8],
    positions: impl Iterator<Item = usize>,
    before: usize,
    after: usize,
) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    for p in positions {
        let start = if before >= WINDOW_BEFORE {
            line_start(bytes, p.saturating_sub(before))
        } else {
            p.saturating_sub(before)
        };
        let end = line_end(bytes, (p + after).min(bytes.len()));
        match out.last_mut() {
            Some(last) if start <= last.end => last.end = last.end.max(end),
            _ => out.push(start..end),
        }
    }
    out
}

fn line_start(bytes: &[u8], at: usize) -> usize {
    let floor = at.saturating_sub(LINE_SLACK);
    bytes[floor..at]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(floor, |i| floor + i + 1)
}

fn line_end(bytes: &[u8], at: usize) -> usize {
    let ceil = (at + LINE_SLACK).min(bytes.len());
    bytes[at..ceil]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(ceil, |i| at + i)
}

/// Replaces each finding's span with `[REDACTED:<category>]`; overlapping spans are merged
/// (the first finding's category names the merged span). Spans outside `text` are ignored.
pub fn redact(text: &str, findings: &[Finding]) -> String {
    let mut spans: Vec<(Range<usize>, Category)> = findings
        .iter()
        .filter(|f| f.span.start < f.span.end && f.span.end <= text.len())
        .map(|f| (f.span.clone(), f.category))
        .collect();
    spans.sort_by_key(|(s, _)| (s.start, std::cmp::Reverse(s.end)));
    let mut merged: Vec<(Range<usize>, Category)> = Vec::new();
    for (span, cat) in spans {
        match merged.last_mut() {
            Some((last, _)) if span.start < last.end => last.end = last.end.max(span.end),
            _ => merged.push((span, cat)),
        }
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (span, cat) in merged {
        let start = floor_char_boundary(text, span.start);
        let end = ceil_char_boundary(text, span.end);
        if start < at {
            continue;
        }
        out.push_str(&text[at..start]);
        out.push_str("[REDACTED:");
        out.push_str(cat.as_str());
        out.push(']');
        at = end;
    }
    out.push_str(&text[at..]);
    out
}

fn floor_char_boundary(text: &str, mut i: usize) -> usize {
    while i > 0 && !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_char_boundary(text: &str, mut i: usize) -> usize {
    while i < text.len() && !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_rules_compile() {
        let s = Scanner::builtin().unwrap();
        assert!(!s.rules().is_empty());
        assert_eq!(s.rules_sha256().len(), 64);
    }

    #[test]
    fn redact_merges_overlaps() {
        let f = |a, b| Finding {
            rule_id: "r".into(),
            category: Category::Credential,
            field_path: "text".into(),
            span: a..b,
            confidence: Confidence::High,
        };
        let out = redact("abcdefghij", &[f(2, 5), f(4, 7)]);
        assert_eq!(out, "ab[REDACTED:credential]hij");
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
