//! Redaction: each finding's span replaced by a marker naming its category, overlapping spans
//! merged, so a redacted text keeps its shape and never a byte of a matched value.

use std::ops::Range;

use super::{Category, Finding};

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

pub(super) fn floor_char_boundary(text: &str, mut i: usize) -> usize {
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
    use crate::scan::Confidence;

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
}
