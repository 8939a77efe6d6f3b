//! Where a rule's value sits in its match, read from the regex's syntax tree once at compile
//! time, so that matching can skip capture extraction (the costliest part of a match) when the
//! value's span follows from the match's span alone. Anything the analysis does not recognise
//! is [`ValueShape::Captures`], which extracts captures as before; the other shapes give exactly
//! the span that capture extraction would.

use std::ops::Range;

use regex_syntax::hir::{Hir, HirKind, Look};

/// How to find the value's span from a match's span.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ValueShape {
    /// The value is the whole match: the regex has no group, or its only group spans the whole
    /// pattern apart from zero-width assertions (`\b(...)\b`).
    Whole,
    /// `(?:^|X)(...)` with `X` one byte wide and nothing but zero-width assertions after the
    /// group: a match that does not start the haystack begins with that one byte, so the value
    /// is the rest. A match at the start of the haystack is ambiguous and needs captures.
    AfterOneByte,
    /// Anything else: extract captures.
    Captures,
}

impl ValueShape {
    /// The value's span for a match at `m`, or `None` when captures are needed.
    pub(super) fn value(self, m: Range<usize>) -> Option<Range<usize>> {
        match self {
            ValueShape::Whole => Some(m),
            ValueShape::AfterOneByte if m.start > 0 && m.start < m.end => Some(m.start + 1..m.end),
            ValueShape::AfterOneByte | ValueShape::Captures => None,
        }
    }
}

/// The shape of `pattern` (compiled with `unicode` as given) whose regex has `groups` explicit
/// capture groups. Only a single unnamed or `secret` group, or none, is ever simplified.
#[cfg(test)]
pub(super) fn value_shape(
    pattern: &str,
    unicode: bool,
    groups: usize,
    name: Option<&str>,
) -> ValueShape {
    match super::rule::parse(pattern, unicode) {
        Ok(hir) => value_shape_of(&hir, groups, name),
        Err(_) if groups == 0 => ValueShape::Whole,
        Err(_) => ValueShape::Captures,
    }
}

/// The shape of a pattern parsed as `hir` (see [`value_shape`]).
pub(super) fn value_shape_of(hir: &Hir, groups: usize, name: Option<&str>) -> ValueShape {
    if groups == 0 {
        return ValueShape::Whole;
    }
    if groups > 1 || name.is_some_and(|n| n != "secret") {
        return ValueShape::Captures;
    }
    let parts: &[Hir] = match hir.kind() {
        HirKind::Concat(parts) => parts,
        HirKind::Capture(_) => return ValueShape::Whole,
        _ => return ValueShape::Captures,
    };
    let Some(at) = parts
        .iter()
        .position(|p| matches!(p.kind(), HirKind::Capture(_)))
    else {
        return ValueShape::Captures;
    };
    let (before, after) = (&parts[..at], &parts[at + 1..]);
    if !after.iter().all(zero_width) {
        return ValueShape::Captures;
    }
    if before.iter().all(zero_width) {
        return ValueShape::Whole;
    }
    match before {
        [lead] if start_or_one_byte(lead) => ValueShape::AfterOneByte,
        _ => ValueShape::Captures,
    }
}

fn zero_width(h: &Hir) -> bool {
    matches!(h.kind(), HirKind::Look(_)) && h.properties().maximum_len() == Some(0)
}

/// `^|X` with `X` matching exactly one byte (not a line anchor: `^` is start of haystack only).
fn start_or_one_byte(h: &Hir) -> bool {
    let HirKind::Alternation(alts) = h.kind() else {
        return false;
    };
    match alts.as_slice() {
        [start, one] => {
            matches!(start.kind(), HirKind::Look(Look::Start))
                && matches!(one.kind(), HirKind::Class(_))
                && one.properties().minimum_len() == Some(1)
                && one.properties().maximum_len() == Some(1)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(p: &str) -> ValueShape {
        let re = regex::bytes::Regex::new(p).unwrap();
        let names: Vec<Option<&str>> = re.capture_names().skip(1).collect();
        value_shape(p, false, names.len(), names.first().copied().flatten())
    }

    #[test]
    fn shapes_are_recognised_only_where_the_span_follows() {
        assert_eq!(shape(r"AKIA[0-9A-Z]{16}"), ValueShape::Whole);
        assert_eq!(shape(r"\b([13][a-z]{25,34})\b"), ValueShape::Whole);
        assert_eq!(
            shape(r"(?i)(?:^|[^\w.@/-])(https?://\S+)"),
            ValueShape::AfterOneByte
        );
        assert_eq!(shape(r"(?:^|[^\w])(\d+)(?:[^\w]|$)"), ValueShape::Captures);
        assert_eq!(shape(r"(?m)(?:^|[^\w])(\d+)"), ValueShape::Captures);
        assert_eq!(shape(r"key=(\w+)"), ValueShape::Captures);
        assert_eq!(shape(r"(?P<key>\w+)=(?P<secret>\w+)"), ValueShape::Captures);
        assert_eq!(ValueShape::AfterOneByte.value(0..5), None);
        assert_eq!(ValueShape::AfterOneByte.value(3..9), Some(4..9));
    }
}
