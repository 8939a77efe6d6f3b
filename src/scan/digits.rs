//! The digit prefilter: most personal-data rules (phone, card, IBAN, national ids, IP
//! addresses) match only where digits cluster. One byte pass finds clusters (digit groups joined
//! by single separators) and those rules run only in small windows around clusters that hold
//! enough digits, instead of over the whole text.

use std::ops::Range;

use regex::bytes::{RegexSet, RegexSetBuilder};

use super::rule::{Rule, RuleError, REGEX_SIZE_LIMIT};

/// The enabled digit-triggered rules and one regex set over all of them. The set runs once over
/// the windows of the lowest threshold (which contain every higher threshold's windows) and
/// tells which rules can match there at all; each of those then runs in its own threshold's
/// windows inside. A rule's regex runs on a window only if the set says it matches somewhere
/// around it, so findings are those of running every rule in all of its windows.
#[derive(Debug, Clone)]
pub(super) struct DigitRules {
    /// Rule indexes in set pattern order, and each rule's cluster threshold.
    pub rules: Vec<usize>,
    pub mins: Vec<usize>,
    pub set: RegexSet,
}

impl DigitRules {
    /// The lowest threshold: its windows contain every other rule's windows.
    pub fn floor(&self) -> usize {
        self.mins.iter().copied().min().unwrap_or(1)
    }
}

/// The enabled keyword-less ASCII rules that declare `min_digits`, behind one set.
pub(super) fn digit_rules(
    rules: &[Rule],
    enabled: &[bool],
) -> Result<Option<DigitRules>, RuleError> {
    let mut members = Vec::new();
    let mut mins = Vec::new();
    for (i, r) in rules.iter().enumerate() {
        if !enabled.get(i).copied().unwrap_or(false) {
            continue;
        }
        if let (Some(min), true, false) = (r.min_digits, r.keywords.is_empty(), r.unicode) {
            members.push(i);
            mins.push(min);
        }
    }
    if members.is_empty() {
        return Ok(None);
    }
    let set = RegexSetBuilder::new(members.iter().map(|&i| rules[i].pattern.as_str()))
        .unicode(false)
        .size_limit(REGEX_SIZE_LIMIT * 4)
        .dfa_size_limit(REGEX_SIZE_LIMIT * 4)
        .build()
        .map_err(|e| RuleError::Regex {
            id: "digit-triggered rules (min_digits)".to_owned(),
            reason: e.to_string(),
        })?;
    Ok(Some(DigitRules {
        rules: members,
        mins,
        set,
    }))
}

/// The windows in `windows` (sorted, disjoint) that lie inside `outer`.
pub(super) fn inside(windows: &[Range<usize>], outer: &Range<usize>) -> Vec<Range<usize>> {
    let from = windows.partition_point(|w| w.start < outer.start);
    windows[from..]
        .iter()
        .take_while(|w| w.end <= outer.end)
        .cloned()
        .collect()
}

/// Bytes added on each side of a cluster (room for prefixes such as `DE`, `+`, `NRIC `).
const MARGIN: usize = 24;

/// A run of digit groups and how many digits it holds.
#[derive(Debug, Clone)]
pub(super) struct Cluster {
    pub span: Range<usize>,
    pub digits: usize,
}

fn joiner(b: u8) -> bool {
    matches!(
        b,
        b' ' | b'-' | b'.' | b':' | b'/' | b'(' | b')' | b'+' | b'_' | b','
    )
}

/// Clusters of digits in `bytes`: digit groups separated by one or two joiner bytes.
pub(super) fn clusters(bytes: &[u8]) -> Vec<Cluster> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let start = i;
        let mut end = i;
        let mut digits = 0;
        while i < bytes.len() {
            if bytes[i].is_ascii_digit() {
                digits += 1;
                i += 1;
                end = i;
            } else if joiner(bytes[i]) && bytes.get(i + 1).is_some_and(u8::is_ascii_digit) {
                i += 1;
            } else if joiner(bytes[i])
                && bytes.get(i + 1).is_some_and(|&b| joiner(b))
                && bytes.get(i + 2).is_some_and(u8::is_ascii_digit)
            {
                i += 2;
            } else {
                break;
            }
        }
        out.push(Cluster {
            span: start..end,
            digits,
        });
    }
    out
}

/// Merged windows around the clusters holding at least `min` digits.
pub(super) fn windows(clusters: &[Cluster], min: usize, len: usize) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    for c in clusters.iter().filter(|c| c.digits >= min) {
        let start = c.span.start.saturating_sub(MARGIN);
        let end = (c.span.end + MARGIN).min(len);
        match out.last_mut() {
            Some(last) if start <= last.end => last.end = last.end.max(end),
            _ => out.push(start..end),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clusters_join_groups() {
        let c = clusters(b"call +1 415-555 0132 or 10.0.0.1, v2");
        let counts: Vec<usize> = c.iter().map(|c| c.digits).collect();
        assert_eq!(counts, vec![11, 5, 1]);
        assert_eq!(windows(&c, 5, 40).len(), 1);
    }
}
