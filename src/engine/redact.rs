//! Untrusted text that a report, a reason or an error quotes (the summarizer's error message,
//! the model revision) is shortened and has every span the scanner matched replaced, so no
//! matched secret reaches a report, a receipt or the terminal through it.

use std::ops::Range;

use super::secret_scan::LeafFinding;

/// `text` with each finding's span replaced by `[REDACTED:<rule>]`, cut to at most `max`
/// characters (`…` marks a cut).
pub fn redact(text: &str, findings: &[LeafFinding], max: usize) -> String {
    let mut spans: Vec<(Range<usize>, &str)> = findings
        .iter()
        .filter(|f| f.span.start < f.span.end && f.span.end <= text.len())
        .map(|f| (f.span.clone(), f.rule_id.as_str()))
        .collect();
    spans.sort_by_key(|(r, _)| (r.start, r.end));
    let mut out = String::with_capacity(text.len().min(max.saturating_mul(4)));
    let mut at = 0;
    for (range, rule) in spans {
        if range.start < at {
            at = at.max(range.end);
            continue;
        }
        let (Some(before), true) = (text.get(at..range.start), text.is_char_boundary(range.end))
        else {
            continue;
        };
        out.push_str(before);
        out.push_str("[REDACTED:");
        out.push_str(rule);
        out.push(']');
        at = range.end;
    }
    out.push_str(text.get(at..).unwrap_or(""));
    match out.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &out[..cut]),
        None => out,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(span: Range<usize>) -> LeafFinding {
        LeafFinding {
            field_path: "f".into(),
            span,
            rule_id: "aws-access-key".into(),
            category: "credential".into(),
            confidence: "high".into(),
        }
    }

    #[test]
    fn spans_are_replaced_and_long_text_cut() {
        let text = "backend said AKIAQ3EGRSTUVWXY2345 then died";
        let start = text.find("AKIA").unwrap();
        let shown = redact(text, &[finding(start..start + 20)], 200);
        assert_eq!(shown, "backend said [REDACTED:aws-access-key] then died");
        assert_eq!(
            redact(&"x".repeat(50), &[], 10),
            format!("{}…", "x".repeat(10))
        );
        assert_eq!(
            redact("é", &[finding(0..1)], 10),
            "é",
            "a span off a boundary is left"
        );
    }
}
