//! Tokens glued to words. A vendor-prefixed token rule (`\b(ghp_[A-Za-z0-9]{36,76})\b`) finds
//! its token only between word boundaries, and `_`, letters and digits are word bytes, so
//! `fix_ghp_…`, `Aghp_…`, `token_AKIA…` and `ghp_…_old` used to hide a token from it. For such
//! a rule this module derives the token regex without the boundary context around it (leading
//! and trailing `\b`, `(?:^|[^…])`, `(?:[^…]|$)`), anchored, and runs it at every keyword hit: a
//! vendor prefix starts a token wherever it stands, and the token's own character classes end
//! it. A rule qualifies only when every literal its matches can start with begins with one of
//! its keywords (the vendor prefix), its value is the whole token, and it finds secrets, not
//! PII. Without its boundaries a token must still stand apart from random text: it may not be
//! the front of a longer run of its own alphabet, a prefix of letters and digits only (`AKIA`)
//! must be glued by a symbol or follow a lower-case word (`token_AKIA…`, `fixAKIA…`, not
//! `…INASIAASACK…`), and an alphabet with both cases must show both. A glued match that overlaps one the rule found the ordinary way is not
//! reported twice.

use std::ops::Range;

use regex::bytes::{Regex, RegexBuilder};
use regex_syntax::hir::literal::{ExtractKind, Extractor};
use regex_syntax::hir::{Hir, HirKind};

use super::rule::{Category, Rule};
use super::RawMatch;

/// A vendor-prefixed rule's token regex without its boundaries, and what stands for them.
#[derive(Debug, Clone)]
pub(super) struct Glued {
    regex: Regex,
    /// The bytes the token's last part goes on with: a match followed by one of them is the
    /// front of a longer run (`ASIAASACKOFRICEFELLOVER`), not a token glued to a word.
    continues: [bool; 256],
    /// The token's alphabet has both cases, so a generated token glued to a letter or digit
    /// shows both, or is a third digits (`getxoxp-3656…-963cc5…`); without its boundaries a
    /// rule would take `task_test_y6xijk…` for a Stripe key glued to `ta`. Glued by a symbol
    /// (`fix_xoxp-…`) a token may be one case.
    both_cases: bool,
}

/// The anchored, boundary-free token regex of a vendor-prefixed rule; `None` for any other.
#[cfg(test)]
pub(super) fn glued_regex(
    pattern: &str,
    unicode: bool,
    keywords: &[String],
    category: Category,
) -> Option<Glued> {
    let hir = super::rule::parse(pattern, unicode).ok()?;
    glued_of(&hir, unicode, keywords, category)
}

/// The glued token regex of a rule whose pattern parsed as `hir` (see [`glued_regex`]).
pub(super) fn glued_of(
    hir: &Hir,
    unicode: bool,
    keywords: &[String],
    category: Category,
) -> Option<Glued> {
    if keywords.is_empty() || matches!(category, Category::Pii | Category::Identifier) {
        return None;
    }
    let token = without_boundaries(hir)?;
    if !starts_with_a_keyword(&token, keywords) || has_key_group(&token) {
        return None;
    }
    let regex = RegexBuilder::new(&format!(r"\A(?:{token})"))
        .unicode(unicode)
        .size_limit(super::rule::REGEX_SIZE_LIMIT)
        .dfa_size_limit(super::rule::REGEX_SIZE_LIMIT)
        .build()
        .ok()?;
    let continues = last_bytes(&token)?;
    let both_cases = continues[usize::from(b'A')..=usize::from(b'Z')].contains(&true)
        && continues[usize::from(b'a')..=usize::from(b'z')].contains(&true);
    Some(Glued {
        regex,
        continues,
        both_cases,
    })
}

/// The bytes a match of `h` can end with, or `None` when that is not plain to see.
fn last_bytes(h: &Hir) -> Option<[bool; 256]> {
    let mut set = [false; 256];
    match h.kind() {
        HirKind::Literal(lit) => set[usize::from(*lit.0.last()?)] = true,
        HirKind::Class(regex_syntax::hir::Class::Bytes(c)) => {
            for r in c.ranges() {
                set[usize::from(r.start())..=usize::from(r.end())].fill(true);
            }
        }
        HirKind::Class(regex_syntax::hir::Class::Unicode(c)) => {
            for r in c.ranges() {
                let (lo, hi) = (u32::from(r.start()), u32::from(r.end()));
                if lo < 0x80 {
                    set[lo as usize..=hi.min(0x7F) as usize].fill(true);
                }
                if hi >= 0x80 {
                    set[0x80..].fill(true);
                }
            }
        }
        HirKind::Capture(c) => return last_bytes(&c.sub),
        HirKind::Repetition(r) => return last_bytes(&r.sub),
        HirKind::Alternation(alts) => {
            for a in alts {
                union(&mut set, &last_bytes(a)?);
            }
        }
        HirKind::Concat(parts) => {
            // From the end: a part that can match nothing (`={0,2}`) lets the one before end it.
            for part in parts.iter().rev() {
                if matches!(part.kind(), HirKind::Look(_)) {
                    continue;
                }
                union(&mut set, &last_bytes(part)?);
                if part.properties().minimum_len() != Some(0) {
                    break;
                }
            }
        }
        HirKind::Empty | HirKind::Look(_) => return None,
    }
    Some(set)
}

fn union(into: &mut [bool; 256], from: &[bool; 256]) {
    for (a, b) in into.iter_mut().zip(from) {
        *a |= *b;
    }
}

/// The pattern's top-level concatenation without its leading and trailing boundary context, or
/// `None` when there is none to drop.
fn without_boundaries(hir: &Hir) -> Option<Hir> {
    let HirKind::Concat(parts) = hir.kind() else {
        return None;
    };
    let start = parts.iter().position(|p| !boundary(p))?;
    let end = parts.iter().rposition(|p| !boundary(p))? + 1;
    let token = &parts[start..end];
    // The value must be the whole token, vendor prefix included: one group around all of it,
    // or no group at all. A value after a name (`aws_secret = (…)`) is not a glued token.
    let one_group = matches!(token, [h] if matches!(h.kind(), HirKind::Capture(_)));
    if start == 0 && end == parts.len() || !one_group && token.iter().any(has_capture) {
        return None;
    }
    Some(Hir::concat(token.to_vec()))
}

fn has_capture(h: &Hir) -> bool {
    match h.kind() {
        HirKind::Capture(_) => true,
        HirKind::Concat(parts) | HirKind::Alternation(parts) => parts.iter().any(has_capture),
        HirKind::Repetition(r) => has_capture(&r.sub),
        _ => false,
    }
}

/// A zero-width assertion (`\b`, `^`, `$`), or an alternation of such assertions and classes of
/// one character each (`(?:^|[^A-Za-z0-9])`, `(?:[^A-Za-z0-9_-]|$)`).
fn boundary(h: &Hir) -> bool {
    let one_char = |h: &Hir| {
        matches!(h.kind(), HirKind::Class(_)) && h.properties().maximum_len().is_some_and(|n| n > 0)
    };
    match h.kind() {
        HirKind::Look(_) => true,
        HirKind::Alternation(alts) => {
            alts.iter().any(|a| matches!(a.kind(), HirKind::Look(_)))
                && alts
                    .iter()
                    .all(|a| matches!(a.kind(), HirKind::Look(_)) || one_char(a))
        }
        _ => false,
    }
}

/// Whether every literal a match of `token` can start with begins with one of `keywords`
/// (ASCII case ignored), so that the keyword hit is where the token starts.
fn starts_with_a_keyword(token: &Hir, keywords: &[String]) -> bool {
    let prefixes = Extractor::new().kind(ExtractKind::Prefix).extract(token);
    let Some(literals) = prefixes.literals() else {
        return false;
    };
    let keywords: Vec<Vec<u8>> = keywords
        .iter()
        .map(|k| k.to_ascii_lowercase().into_bytes())
        .collect();
    !literals.is_empty()
        && literals.iter().all(|lit| {
            let lit = lit.as_bytes().to_ascii_lowercase();
            lit.len() >= 2
                && keywords
                    .iter()
                    .any(|k| lit.starts_with(k) || (k.starts_with(&lit) && lit.len() >= 3))
        })
}

fn has_key_group(h: &Hir) -> bool {
    match h.kind() {
        HirKind::Capture(c) => c.name.as_deref() == Some("key") || has_key_group(&c.sub),
        HirKind::Concat(parts) | HirKind::Alternation(parts) => parts.iter().any(has_key_group),
        HirKind::Repetition(r) => has_key_group(&r.sub),
        _ => false,
    }
}

impl Rule {
    /// Matches this rule's glued token regex at the keyword hit `at` of `text` and records an
    /// accepted value unless a match of the same rule in `out` already covers part of it.
    pub(super) fn find_glued(
        &self,
        glued: &Glued,
        index: usize,
        text: &str,
        at: usize,
        out: &mut Vec<RawMatch>,
    ) {
        let end = (at + self.window).min(text.len());
        let Some(hay) = text.as_bytes().get(at..end) else {
            return;
        };
        let Some(caps) = glued.regex.captures(hay) else {
            return;
        };
        let whole = caps.get(0).map_or(0..0, |m| m.range());
        let bytes = text.as_bytes();
        if goes_on(&glued.continues, bytes, at + whole.end) {
            return;
        }
        // A token of letters and digits only (`AKIA…`, `4b1d…`) glued to more letters or digits
        // is chance inside a longer run, unless a lower-case word ends where its capital starts
        // (`fixAKIA…`); one with a symbol (`ghp_…`, `sk_live_…`, a JWT's dots) is glued to
        // anything.
        let symbol = hay
            .get(whole.clone())
            .is_some_and(|p| p.iter().any(|b| !b.is_ascii_alphanumeric()));
        let before = at.checked_sub(1).and_then(|i| bytes.get(i));
        let camel = before.is_some_and(u8::is_ascii_lowercase)
            && hay.get(whole.start).is_some_and(u8::is_ascii_uppercase);
        if before.is_some_and(u8::is_ascii_alphanumeric) && !symbol && !camel {
            return;
        }
        let value = caps
            .name("secret")
            .or_else(|| caps.iter().skip(1).flatten().next())
            .or_else(|| caps.get(0));
        let Some(value) = value else {
            return;
        };
        let span: Range<usize> = at + value.start()..at + value.end();
        let cased = |bytes: &[u8]| {
            bytes.iter().any(u8::is_ascii_uppercase) && bytes.iter().any(u8::is_ascii_lowercase)
                || 3 * bytes.iter().filter(|b| b.is_ascii_digit()).count() >= bytes.len()
        };
        let glued_to_a_word = before.is_some_and(u8::is_ascii_alphanumeric);
        if glued.both_cases && glued_to_a_word && !cased(value.as_bytes()) {
            return;
        }
        let overlaps = |m: &RawMatch| m.span.start < span.end && span.start < m.span.end;
        if out.iter().any(|m| m.rule == index && overlaps(m)) {
            return;
        }
        self.push_if_accepted(index, text, span, None, out);
    }
}

/// Whether the run of a token that ends at `end` of `bytes` goes on: the next byte is one its
/// last part takes, and is not sentence punctuation (`.` before a space or the end) nor a
/// separator before a short word or a name (`_old`, `-backup`, `.v2`).
fn goes_on(continues: &[bool; 256], bytes: &[u8], end: usize) -> bool {
    let Some(&next) = bytes.get(end) else {
        return false;
    };
    if !continues[usize::from(next)] {
        return false;
    }
    if next.is_ascii_alphanumeric() {
        return true;
    }
    let rest = bytes.get(end + 1..).unwrap_or(&[]);
    let word_len = rest
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric())
        .count();
    let word = std::str::from_utf8(&rest[..word_len]).unwrap_or("");
    let ends_sentence = rest.first().is_none_or(u8::is_ascii_whitespace);
    let before_a_word = matches!(next, b'_' | b'-' | b'.')
        && word_len > 0
        && (word_len <= 4 || super::names::name_like(word));
    !(ends_sentence || before_a_word)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn glued(pattern: &str, keywords: &[&str]) -> Option<Regex> {
        glued_rule(pattern, keywords).map(|g| g.regex)
    }

    fn glued_rule(pattern: &str, keywords: &[&str]) -> Option<Glued> {
        let keywords: Vec<String> = keywords.iter().map(|k| (*k).to_owned()).collect();
        glued_regex(pattern, false, &keywords, Category::Token)
    }

    #[test]
    fn boundaries_around_a_vendor_prefixed_token_are_dropped() {
        let re = glued(
            r"\b(gh[pousr]_[A-Za-z0-9]{36,76})\b",
            &["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
        );
        let re = re.expect("a vendor-prefixed rule");
        let token = format!("ghp_{}", "aB3".repeat(12));
        let stuck = format!("{token}_old");
        let m = re.captures(stuck.as_bytes()).and_then(|c| c.get(1));
        assert_eq!(m.map(|m| m.range()), Some(0..token.len()));
        let guarded = glued(
            r"(?:^|[^A-Za-z0-9_.])(hv[sbr]\.[A-Za-z0-9_-]{90,})(?:[^A-Za-z0-9_.-]|$)",
            &["hvs.", "hvb.", "hvr."],
        );
        assert!(guarded.is_some());
    }

    #[test]
    fn rules_whose_keyword_is_not_the_token_start_are_left_alone() {
        // A context word (the vendor's name) is not where the value starts.
        assert!(glued(
            r"(?:^|[^A-Za-z0-9+/-])([A-Za-z0-9+/]{86}==)(?:[^A-Za-z0-9+/=]|$)",
            &["azure"]
        )
        .is_none());
        // No boundary to drop.
        assert!(glued(r"(amzn\.mws\.[0-9a-f]{8})", &["amzn.mws"]).is_none());
        // A name and its value.
        assert!(glued(r"\b(?P<key>token)=(?P<secret>\w+)\b", &["token"]).is_none());
        let keywords = vec!["akia".to_owned()];
        let pii = glued_regex(r"\b(AKIA[A-Z0-9]{16})\b", false, &keywords, Category::Pii);
        assert!(pii.is_none());
    }

    #[test]
    fn a_run_goes_on_unless_a_sentence_or_a_word_follows() {
        let mut set = [false; 256];
        for b in b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-." {
            set[usize::from(*b)] = true;
        }
        let on = |s: &str| goes_on(&set, s.as_bytes(), 3);
        assert!(on("abcd") && on("abc_Qk7x9Lm2-"));
        assert!(!on("abc") && !on("abc. Next") && !on("abc."));
        assert!(!on("abc_old") && !on("abc-backup.") && !on("abc.v2"));
    }

    #[test]
    fn the_last_part_of_the_token_says_how_it_goes_on() {
        let aws = glued_rule(r"\b((?:AKIA|ASIA)[A-Z0-9]{16})\b", &["akia", "asia"]).unwrap();
        assert!(aws.continues[usize::from(b'O')] && !aws.continues[usize::from(b'o')]);
        assert!(!aws.both_cases);
        let padded = glued_rule(r"\b(x_[A-Za-z0-9+/]{8}={0,2})\b", &["x_"]).unwrap();
        assert!(padded.continues[usize::from(b'=')] && padded.continues[usize::from(b'q')]);
        assert!(padded.both_cases);
    }
}
