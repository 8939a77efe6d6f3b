//! The digit prefilter: most personal-data rules (phone, card, IBAN, national ids, IP
//! addresses) match only where digits cluster. One byte pass finds clusters (digit groups joined
//! by single separators) and those rules run only in small windows around clusters that hold
//! enough digits, instead of over the whole text.

use std::ops::Range;
use std::sync::{Arc, OnceLock};

use super::rule::{Rule, RuleError};
use super::sets::WindowSet;

/// The lowest threshold of each tier after the first (see [`DigitRules`]). A regex set's
/// lazy DFA tracks all of its patterns at once, so the states it builds multiply with what they
/// count; more sets build far fewer, and each one above the first reads only the fewer, shorter
/// windows of its own floor. On the bench corpus (10 MiB, the 44 default digit rules), by
/// callgrind, a cold `cq scan` of it and of two copies: split at 7 digits, 1,645 M and 2,854 M
/// instructions; at 7 and 10, 1,566 M and 2,787 M; at 7, 9 and 11, 1,566 M and 2,801 M; at
/// 7, 9, 10, 11 and 12, 1,559 M and 2,813 M (RESULTS.md, the scanner's speed). Most of what
/// the second split saves is building the states of the set of 31 rules over 7 digits.
const TIER_FLOORS: [usize; 2] = [7, 10];

/// The enabled digit-triggered rules, in tiers by threshold, and one regex set per tier. Each
/// set runs once over the windows of its tier's lowest threshold (which contain the windows of
/// every higher threshold) and tells which of its rules can match there at all; each of those
/// then runs in its own threshold's windows inside. A rule's regex runs on a window only if its
/// tier's set says it matches somewhere around it, so findings are those of running every rule
/// in all of its windows.
///
/// Rules with the very same regex and threshold (IPv4 addresses and reserved ones, Australian
/// ACN and TFN) form one group: one set pattern and one search per window, then each rule's own
/// checks. A tier's set is compiled when a field first has digits for it, and shared by the
/// scanners of one rule pack that enable the same digit rules.
#[derive(Debug, Clone)]
pub(super) struct DigitRules {
    /// Groups: the rules sharing one regex, and their cluster threshold.
    pub groups: Vec<Vec<usize>>,
    pub mins: Vec<usize>,
    /// The tiers, lowest thresholds first, none empty.
    pub tiers: Vec<Tier>,
}

/// The digit groups of one range of thresholds, behind one regex set.
#[derive(Debug, Clone)]
pub(super) struct Tier {
    /// Indexes into [`DigitRules::groups`], in set pattern order.
    pub groups: Vec<usize>,
    /// The lowest threshold among them: its windows contain every other group's windows.
    pub floor: usize,
    set: Arc<OnceLock<Result<WindowSet, String>>>,
}

impl Tier {
    /// The set over the tier's group regexes, compiled on first use.
    pub fn set(&self, d: &DigitRules, rules: &[Rule]) -> Result<&WindowSet, RuleError> {
        self.set
            .get_or_init(|| {
                let patterns = self
                    .groups
                    .iter()
                    .map(|&g| rules[d.groups[g][0]].pattern.clone())
                    .collect();
                WindowSet::new(patterns)
            })
            .as_ref()
            .map_err(|reason| RuleError::Regex {
                id: format!("digit-triggered rules (min_digits {} and up)", self.floor),
                reason: reason.clone(),
            })
    }

    /// For each of `windows`, the groups (indexes into [`DigitRules::groups`]) whose regex
    /// matches somewhere in it, in set order: the set's answer, or each group's own regex when
    /// the set cannot be built (the same answer, slower).
    pub fn matching_all(
        &self,
        d: &DigitRules,
        rules: &[Rule],
        windows: &[&[u8]],
    ) -> Vec<Vec<usize>> {
        match self.set(d, rules) {
            Ok(set) => set
                .matching_all(windows)
                .into_iter()
                .map(|found| found.into_iter().map(|i| self.groups[i]).collect())
                .collect(),
            Err(_) => windows
                .iter()
                .map(|hay| {
                    self.groups
                        .iter()
                        .copied()
                        .filter(|&g| rules[d.groups[g][0]].is_match(hay))
                        .collect()
                })
                .collect(),
        }
    }
}

impl DigitRules {
    /// Compiles every tier's set now.
    pub fn compile_sets(&self, rules: &[Rule]) -> Result<(), RuleError> {
        for tier in &self.tiers {
            tier.set(self, rules)?;
        }
        Ok(())
    }
}

/// Which tier a threshold falls in (0 for the lowest).
fn tier_of(min: usize) -> usize {
    TIER_FLOORS.iter().filter(|&&floor| min >= floor).count()
}

/// The enabled keyword-less ASCII rules that declare `min_digits`, grouped by regex and in
/// tiers by threshold; the sets of `previous` are reused when it covers the very same groups.
pub(super) fn digit_rules(
    rules: &[Rule],
    enabled: &[bool],
    previous: Option<&DigitRules>,
) -> Option<DigitRules> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut mins: Vec<usize> = Vec::new();
    for (i, r) in rules.iter().enumerate() {
        if !enabled.get(i).copied().unwrap_or(false) {
            continue;
        }
        if let (Some(min), true, false) = (r.min_digits, r.keywords.is_empty(), r.unicode) {
            let same = groups
                .iter()
                .zip(&mins)
                .position(|(g, &m)| m == min && rules[g[0]].same_search(r));
            match same {
                Some(at) => groups[at].push(i),
                None => {
                    groups.push(vec![i]);
                    mins.push(min);
                }
            }
        }
    }
    if groups.is_empty() {
        return None;
    }
    if let Some(p) = previous.filter(|p| p.groups == groups) {
        return Some(p.clone());
    }
    let mut tiers = Vec::new();
    for t in 0..=TIER_FLOORS.len() {
        let members: Vec<usize> = (0..groups.len())
            .filter(|&g| tier_of(mins[g]) == t)
            .collect();
        if let Some(floor) = members.iter().map(|&g| mins[g]).min() {
            tiers.push(Tier {
                groups: members,
                floor,
                set: Arc::new(OnceLock::new()),
            });
        }
    }
    Some(DigitRules {
        groups,
        mins,
        tiers,
    })
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
#[cfg(test)]
pub(super) fn clusters(bytes: &[u8]) -> Vec<Cluster> {
    let mut out = Vec::new();
    clusters_into(bytes, &mut out);
    out
}

/// [`clusters`] into `out`, which is cleared first.
pub(super) fn clusters_into(bytes: &[u8], out: &mut Vec<Cluster>) {
    out.clear();
    let mut i = 0;
    while let Some(at) = next_digit(bytes, i) {
        i = at;
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
}

/// The first digit at or after `from`. Most text holds few digits, so it tests 8 bytes at a
/// time (one word: a byte `b` is a digit when `b ^ b'0'` is below 10) while none is one.
fn next_digit(bytes: &[u8], from: usize) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let rest = bytes.get(from..)?;
    let mut chunks = rest.chunks_exact(8);
    let mut at = from;
    for chunk in &mut chunks {
        let word = <[u8; 8]>::try_from(chunk).map_or(0, u64::from_le_bytes) ^ (ONES * 0x30);
        // Some byte of `word` is below 10 (the classic "has less than" word test); a chunk that
        // cannot be read as a word (never) is searched byte by byte.
        if word.wrapping_sub(ONES * 10) & !word & (ONES * 0x80) != 0 || word == ONES * 0x30 {
            if let Some(p) = chunk.iter().position(u8::is_ascii_digit) {
                return Some(at + p);
            }
        }
        at += 8;
    }
    let tail = chunks.remainder();
    tail.iter().position(u8::is_ascii_digit).map(|p| at + p)
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
    fn next_digit_finds_every_digit_in_order() {
        let text = b"no digits here at all, then 7 and, much later in a long line of words, 42 \
            /:;09 \x80\xb0\xb9\xff0 9";
        let found: Vec<usize> =
            std::iter::successors(next_digit(text, 0), |&i| next_digit(text, i + 1)).collect();
        let expected: Vec<usize> = (0..text.len())
            .filter(|&i| text[i].is_ascii_digit())
            .collect();
        assert_eq!(found, expected);
        assert_eq!(next_digit(text, text.len()), None);
        assert_eq!(next_digit(text, text.len() + 5), None);
    }

    #[test]
    fn clusters_join_groups() {
        let c = clusters(b"call +1 415-555 0132 or 10.0.0.1, v2");
        let counts: Vec<usize> = c.iter().map(|c| c.digits).collect();
        assert_eq!(counts, vec![11, 5, 1]);
        assert_eq!(windows(&c, 5, 40).len(), 1);
    }
}
