//! Matching one rule: its regex over a window (once for rules that share a search), the value
//! and key each match gives, the filters and validator that accept or reject the value, and
//! the context words some rules need near a match.

use std::ops::Range;

use regex_automata::util::captures::Captures;
use regex_automata::{meta, Span};

use super::super::pivot::{self, Masks, Pivot};
use super::super::validate::{self, Outcome};
use super::super::{filter, RawMatch};
use super::{build_regex, Category, Compiled, Confidence, Rule, RuleError, RuleRegex, ValueShape};

/// How a rule searches a window: by its pivot (see `pivot`), and in the field's ASCII
/// lower-cased copy (a regex built for lower-cased text lowers the window itself without it).
#[derive(Debug, Default, Clone, Copy)]
pub(in crate::scan) struct By<'a> {
    pub pivot: Option<&'a Pivot>,
    /// The field's pivot bytes as bits (see `pivot`), when made.
    pub masks: Option<&'a Masks>,
    pub lower: Option<&'a [u8]>,
}

/// What a validator sees of one match: the value, the named `key` group, and the text around.
pub(in crate::scan) struct MatchCtx<'a> {
    pub secret: &'a str,
    pub key: Option<&'a str>,
    pub before: &'a str,
    pub after: &'a str,
    /// The rule's keywords (vendor names for vendor-keyed rules).
    pub keywords: &'a [String],
}

impl Rule {
    /// The rule's regex, compiled on first use; an error says which rule and why.
    pub(in crate::scan) fn compiled(&self) -> Result<&Compiled, RuleError> {
        self.compiled
            .get_or_init(|| {
                let bulk = self.work.is_bulk();
                build_regex(
                    &self.pattern,
                    self.unicode,
                    &self.keywords,
                    self.category,
                    bulk,
                )
            })
            .as_ref()
            .map_err(|reason| RuleError::Regex {
                id: self.id.clone(),
                reason: reason.clone(),
            })
    }

    /// The rule's regex on every engine it may run on (see `engine`): an error says which rule
    /// and why it does not compile.
    pub(in crate::scan) fn compiled_fully(&self) -> Result<&Compiled, RuleError> {
        let compiled = self.compiled()?;
        compiled
            .regex
            .compile_fast()
            .map_err(|reason| RuleError::Regex {
                id: self.id.clone(),
                reason,
            })?;
        Ok(compiled)
    }

    /// Whether the regex has been compiled (or tried).
    #[cfg(test)]
    pub(in crate::scan) fn is_compiled(&self) -> bool {
        self.compiled.get().is_some()
    }

    /// Whether the regex has built its fast engines.
    #[cfg(test)]
    pub(in crate::scan) fn is_warm(&self) -> bool {
        self.compiled
            .get()
            .and_then(|c| c.as_ref().ok())
            .is_some_and(|c| c.regex.is_warm())
    }

    /// Whether the rule's regex matches anywhere in `hay` (true when it cannot compile, so the
    /// caller runs it and reports the failure).
    pub(in crate::scan) fn is_match(&self, hay: &[u8]) -> bool {
        self.compiled()
            .map_or(true, |c| c.regex.is_match(hay, self.work.is_bulk()))
    }

    /// Appends this rule's accepted matches inside `window` of `text` to `out`.
    pub(in crate::scan) fn find_in(
        &self,
        index: usize,
        text: &str,
        window: Range<usize>,
        out: &mut Vec<RawMatch>,
    ) {
        self.find_in_by(index, text, window, By::default(), out);
    }

    /// [`Rule::find_in`], searching as `by` says.
    pub(in crate::scan) fn find_in_by(
        &self,
        index: usize,
        text: &str,
        window: Range<usize>,
        by: By<'_>,
        out: &mut Vec<RawMatch>,
    ) {
        let found = self.search(text, window.clone(), by, &mut |span, key| {
            self.push_if_accepted(index, text, span, key, out);
        });
        if !found {
            out.push(failed(index, window));
        }
    }

    /// Whether `other` finds exactly the values (and keys) this rule's search finds in any
    /// window: the same regex, Unicode mode and key reach. Such rules can share one search.
    pub(in crate::scan) fn same_search(&self, other: &Rule) -> bool {
        self.pattern == other.pattern
            && self.unicode == other.unicode
            && self.key_prefix == other.key_prefix
    }

    /// Calls `found` with each value span (and key) this rule's regex finds inside `window` of
    /// `text`, searching as `by` says; false when the regex does not compile.
    fn search(
        &self,
        text: &str,
        window: Range<usize>,
        by: By<'_>,
        found: &mut dyn FnMut(Range<usize>, Option<&str>),
    ) -> bool {
        let Ok(compiled) = self.compiled() else {
            return false;
        };
        let regex = &compiled.regex;
        let lowered_here;
        let hay = match (regex.lowered(), by.lower) {
            (false, _) => text.as_bytes().get(window.clone()),
            (true, Some(lower)) => lower.get(window.clone()),
            (true, None) => {
                lowered_here = text
                    .as_bytes()
                    .get(window.clone())
                    .map(<[u8]>::to_ascii_lowercase);
                lowered_here.as_deref()
            }
        };
        let Some(hay) = hay else {
            return true;
        };
        let pivot = by.pivot;
        let engine = regex.engine(hay.len(), self.work.is_bulk());
        if compiled.value_shape == ValueShape::Captures {
            self.search_captures(regex, engine, text, hay, window.start, by, found);
            return true;
        }
        for m in pivot::find_iter(engine, hay, pivot, by.masks) {
            let value = match compiled.value_shape.value(m.range()) {
                Some(value) => value,
                // Only a match at the window's start is ambiguous; its captures decide.
                None => match first_captures(engine, hay).and_then(|c| value_group(regex, &c)) {
                    Some(v) => v.range(),
                    None => continue,
                },
            };
            found(window.start + value.start..window.start + value.end, None);
        }
        true
    }

    /// [`Rule::search`] for regexes whose value span needs capture extraction.
    /// `hay` is the window of `text` that starts at byte `offset`.
    #[allow(clippy::too_many_arguments)]
    fn search_captures(
        &self,
        regex: &RuleRegex,
        engine: &meta::Regex,
        text: &str,
        hay: &[u8],
        offset: usize,
        by: By<'_>,
        found: &mut dyn FnMut(Range<usize>, Option<&str>),
    ) {
        // Where the previous match ended: the search resumed there, so no key reaches before it.
        let mut searched_from = 0;
        for caps in pivot::captures_iter(engine, hay, by.pivot, by.masks) {
            let floor = searched_from;
            searched_from = caps.get_group(0).map_or(searched_from, |m| m.end);
            let Some(m) = value_group(regex, &caps) else {
                continue;
            };
            let span = offset + m.start..offset + m.end;
            let key = caps.get_group_by_name("key").and_then(|k| {
                let start = name_start(hay, k.start, floor, self.key_prefix);
                text.get(offset + start..offset + k.end)
            });
            found(span, key);
        }
    }

    /// Validates the value at `span` of `text` and records it when accepted.
    pub(in crate::scan) fn push_if_accepted(
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

/// Appends the accepted matches inside `window` of `text` of every rule in `group` (indexes
/// into `rules` whose searches are all [`Rule::same_search`] as the first's) to `out`: one
/// search (as `by` says, for the first rule), then each rule's own checks.
pub(in crate::scan) fn find_group(
    rules: &[Rule],
    group: &[usize],
    text: &str,
    window: Range<usize>,
    by: By<'_>,
    out: &mut Vec<RawMatch>,
) {
    let Some(first) = group.first().and_then(|&ri| rules.get(ri)) else {
        return;
    };
    if let [index] = group {
        first.find_in_by(*index, text, window, by, out);
        return;
    }
    let found = first.search(text, window.clone(), by, &mut |span, key| {
        for &ri in group {
            rules[ri].push_if_accepted(ri, text, span.clone(), key, out);
        }
    });
    if !found {
        out.extend(group.iter().map(|&ri| failed(ri, window.clone())));
    }
}

/// Fail closed: a rule whose regex cannot compile reports the window it was asked to search.
fn failed(rule: usize, window: Range<usize>) -> RawMatch {
    RawMatch {
        rule,
        span: window,
        confidence: Confidence::High,
    }
}

/// The captures of `engine`'s first match in `hay`, if any.
fn first_captures(engine: &meta::Regex, hay: &[u8]) -> Option<Captures> {
    let mut caps = engine.create_captures();
    engine.captures(hay, &mut caps);
    caps.is_match().then_some(caps)
}

/// The value: the `secret` group, else the first group that is not `key`, else the match.
fn value_group(regex: &RuleRegex, caps: &Captures) -> Option<Span> {
    let first_value = || {
        caps.iter()
            .zip(regex.capture_names())
            .skip(1)
            .find_map(|(m, name)| if name == Some("key") { None } else { m })
    };
    caps.get_group_by_name("secret")
        .or_else(first_value)
        .or_else(|| caps.get_group(0))
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
    pub(in crate::scan) fn context_near(&self, text: &str, span: &Range<usize>) -> bool {
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
