//! One scan of one field: the keyword prefilter and each selected rule in its keyword windows,
//! the digit-triggered rules around digit clusters behind their regex set, the whole-field
//! rules behind theirs, the context-word filter, then one level of decoded blobs.

use std::ops::Range;

use super::joined::Joined;
use super::pivot::{self, Pivot};
use super::spare::{self, Spare};
use super::{decode, digits, keywords, rule, Confidence, RawMatch, Scanner};

/// A field at least this long, scanned on a pool, has its keyword rules searched in shares that
/// other threads of the pool may take (a chunk of a large file is about 1 MiB).
const SHARED_ABOVE: usize = 256 << 10;
/// Such a field's keyword rules are searched in up to 2^this shares.
const SHARES_LOG2: u32 = 3;

/// The parts of a field's scan. [`Scanner::scan_text`] runs one after the other; a bulk scan
/// may run them on different threads (see `bulk`), so that each part's automata build their
/// lazy-DFA states on one thread rather than on every one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Part {
    /// The keyword prefilter, the rules it selects in their windows, and the decoded blobs.
    Keyword,
    /// The rules without keywords: digit-triggered rules around digit clusters, and the
    /// whole-field rules.
    Keywordless,
    /// The joined views (see `joined`), scanned with the secret rules.
    Views,
}

/// What the parts of a scan of a field found: the keyword rules' matches, the keywordless
/// rules' matches and those inside decoded blobs (the order [`Scanner::scan_raw`] reports
/// them in), and the joined views with theirs.
#[derive(Debug, Default)]
pub(super) struct Found {
    pub keyword: Vec<RawMatch>,
    pub keywordless: Vec<RawMatch>,
    pub decoded: Vec<RawMatch>,
    pub joined: Joined,
}

impl Found {
    /// Adds what another part found.
    pub(super) fn absorb(&mut self, other: Found) {
        self.keyword.extend(other.keyword);
        self.keywordless.extend(other.keywordless);
        self.decoded.extend(other.decoded);
        if !other.joined.is_empty() {
            self.joined = other.joined;
        }
    }

    /// The ordinary scan's matches in report order, and the joined views.
    pub(super) fn into_parts(self) -> (Vec<RawMatch>, Joined) {
        let mut out = self.keyword;
        out.extend(self.keywordless);
        out.extend(self.decoded);
        (out, self.joined)
    }
}

impl Scanner {
    /// Finds matches in `text`; when `decode` is set, also inside base64/hex blobs (one level).
    pub(super) fn scan_raw(&self, text: &str, decode: bool) -> Vec<RawMatch> {
        let mut out = self.scan_keyword_rules(text);
        out.extend(self.scan_keywordless_rules(text));
        if decode {
            out.extend(self.scan_decoded(text));
        }
        out
    }

    /// Every part of a field's scan, one after the other.
    pub(super) fn scan_all_parts(&self, text: &str) -> Found {
        Found {
            keyword: self.scan_keyword_rules(text),
            keywordless: self.scan_keywordless_rules(text),
            decoded: self.scan_decoded(text),
            joined: self.scan_views(text),
        }
    }

    /// One part of a field's scan, decoded blobs included; the other parts' fields of the
    /// result stay empty.
    pub(super) fn scan_part(&self, part: Part, text: &str) -> Found {
        let mut found = Found::default();
        match part {
            Part::Keyword => {
                found.keyword = self.scan_keyword_rules(text);
                found.decoded = self.scan_decoded(text);
            }
            Part::Keywordless => found.keywordless = self.scan_keywordless_rules(text),
            Part::Views => found.joined = self.scan_views(text),
        }
        found
    }

    /// The keyword prefilter and each rule it selects in its keyword windows.
    fn scan_keyword_rules(&self, text: &str) -> Vec<RawMatch> {
        let bytes = text.as_bytes();
        // The keywords are found in the lower-cased field, where the rules that ignore case
        // are searched too.
        let mut buffer = [0; keywords::SMALL_FIELD];
        let mut spare = None;
        let lower = keywords::lowered(bytes, &mut buffer, &mut spare);
        // (rule, keyword position) pairs, so a field without keyword hits allocates little.
        let hits = self.keywords.hits(lower, &self.keyword_rules);
        let by = rule::By {
            lower: Some(lower),
            ..rule::By::default()
        };
        let groups: Vec<&[(usize, usize)]> = hits.chunk_by(|a, b| a.0 == b.0).collect();
        // A long field's rules are searched as tasks of the pool it is scanned on, so a thread
        // left without work takes a share of the last field's.
        let on_pool = bytes.len() >= SHARED_ABOVE && rayon::current_thread_index().is_some();
        let depth = if on_pool { SHARES_LOG2 } else { 0 };
        let mut out = self.search_groups(text, &groups, by, depth);
        self.keep_in_context(text, &mut out);
        out
    }

    /// Each group's rule (a rule's hits in `text`) in its keyword windows and at its glued
    /// tokens, in group order; with `depth` left, as two halves of about as many hits, one of
    /// which another thread of the pool may take (`rayon::join`).
    fn search_groups(
        &self,
        text: &str,
        groups: &[&[(usize, usize)]],
        by: rule::By,
        depth: u32,
    ) -> Vec<RawMatch> {
        if depth > 0 && groups.len() > 1 {
            let hits: usize = groups.iter().map(|g| g.len()).sum();
            let mut seen = 0;
            let half = groups
                .iter()
                .position(|g| {
                    seen += g.len();
                    seen * 2 >= hits
                })
                .map_or(1, |i| i + 1)
                .clamp(1, groups.len() - 1);
            let (mut first, second) = rayon::join(
                || self.search_groups(text, &groups[..half], by, depth - 1),
                || self.search_groups(text, &groups[half..], by, depth - 1),
            );
            first.extend(second);
            return first;
        }
        let bytes = text.as_bytes();
        let mut out = Vec::new();
        for group in groups {
            let ri = group[0].0;
            let rule = &self.rules[ri];
            let positions = group.iter().map(|&(_, p)| p);
            for window in keywords::windows(bytes, positions, rule.window_before, rule.window) {
                rule.find_in_by(ri, text, window, by, &mut out);
            }
            if let Ok(rule::Compiled {
                glued: Some(glued), ..
            }) = rule.compiled()
            {
                for &(_, at) in *group {
                    rule.find_glued(glued, ri, text, at, &mut out);
                }
            }
        }
        out
    }

    /// The digit-triggered rules around digit clusters behind their regex sets, the
    /// keywordless rules that run around clusters alone, and the whole-field rules behind theirs.
    fn scan_keywordless_rules(&self, text: &str) -> Vec<RawMatch> {
        let bytes = text.as_bytes();
        let mut out = Vec::new();
        let needs_clusters = self.digit_rules.is_some()
            || self
                .always
                .iter()
                .any(|&ri| self.enabled[ri] && self.rules[ri].min_digits.is_some());
        let clusters = needs_clusters.then(|| {
            let mut clusters = Spare::take(&spare::CLUSTERS);
            digits::clusters_into(bytes, &mut clusters);
            clusters
        });
        let clusters = clusters.as_deref().map_or(&[][..], Vec::as_slice);
        if let (Some(d), false) = (&self.digit_rules, clusters.is_empty()) {
            self.scan_digit_rules(d, text, clusters, &mut out);
        }
        for &ri in &self.always {
            if !self.enabled[ri] || self.in_group[ri] {
                continue;
            }
            if let Some(n) = self.rules[ri].min_digits {
                for window in digits::windows(clusters, n, bytes.len()) {
                    self.rules[ri].find_in(ri, text, window, &mut out);
                }
            }
        }
        let groups = self.whole.to_run(&self.rules, bytes);
        let pivots: Vec<Option<&Pivot>> = groups.iter().map(|g| self.rules[g[0]].pivot()).collect();
        // A long field's pivot bytes as bits, once for every rule searched by them.
        let masks = pivot::Masks::for_pivots(bytes, pivots.iter().flatten().copied());
        for (group, pivot) in groups.iter().zip(pivots) {
            let by = rule::By {
                pivot,
                masks: masks.as_ref(),
                lower: None,
            };
            rule::find_group(&self.rules, group, text, 0..bytes.len(), by, &mut out);
        }
        self.keep_in_context(text, &mut out);
        out
    }

    /// Drops the matches of rules that need a context word and have none near.
    fn keep_in_context(&self, text: &str, out: &mut Vec<RawMatch>) {
        out.retain(|m| self.named[m.rule] || self.rules[m.rule].context_near(text, &m.span));
    }

    /// The decodable rules' matches inside base64/hex blobs of `text` (one level), each
    /// reported over the whole blob.
    fn scan_decoded(&self, text: &str) -> Vec<RawMatch> {
        let mut out = Vec::new();
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
        out
    }
}

impl Scanner {
    /// Runs the digit-triggered rules, tier by tier: one set pass over each of the tier's
    /// lowest threshold's windows (all of them at once, see `sets`), then each group the set
    /// reports in its own threshold's windows inside.
    fn scan_digit_rules(
        &self,
        d: &digits::DigitRules,
        text: &str,
        clusters: &[digits::Cluster],
        out: &mut Vec<RawMatch>,
    ) {
        let bytes = text.as_bytes();
        // Windows per threshold, computed when a tier or a group with that threshold first
        // needs them.
        let mut by_min: Vec<(usize, Vec<Range<usize>>)> = Vec::new();
        let windows_of = |by_min: &mut Vec<(usize, Vec<Range<usize>>)>, min: usize| match by_min
            .iter()
            .position(|(m, _)| *m == min)
        {
            Some(pos) => pos,
            None => {
                by_min.push((min, digits::windows(clusters, min, bytes.len())));
                by_min.len() - 1
            }
        };
        for tier in &d.tiers {
            let outer_at = windows_of(&mut by_min, tier.floor);
            if by_min[outer_at].1.is_empty() {
                continue;
            }
            let outers = by_min[outer_at].1.clone();
            let hays: Vec<&[u8]> = outers.iter().map(|w| &bytes[w.clone()]).collect();
            let answers = tier.matching_all(d, &self.rules, &hays);
            for (outer, groups) in outers.iter().zip(&answers) {
                for &g in groups {
                    let pos = windows_of(&mut by_min, d.mins[g]);
                    for window in digits::inside(&by_min[pos].1, outer) {
                        rule::find_group(
                            &self.rules,
                            &d.groups[g],
                            text,
                            window,
                            rule::By::default(),
                            out,
                        );
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Numbers of every shape the digit rules look for, between words, code and other numbers.
    const NUMBERS: &str = "Call +44 20 7946 0958 or (415) 555-0132 ext 12, or 0917 123 4567.\n\
        Card 4111 1111 1111 1111, IBAN DE89 3704 0044 0532 0130 00, SSN 078-05-1120 and\n\
        ssn: 123456789; host 10.0.0.1 or 192.168.1.254:8080, wallet 1BoatSLRHtKNngkdXEeobR76b53LETtpyT.\n\
        NHS 943 476 5919, ABN 51 824 753 556, TFN 123 456 782, NINO AB 12 34 56 C, NRIC S1234567D,\n\
        aadhaar 2345 6789 0124, pesel 44051401359, TC 10000000146, fiscal RSSMRA85T10A562S.\n\
        v2.3.4 built 20261202 at 12:30:45, ids 1 22 333 4444 55555 666666 7777777 88888888,\n\
        999999999 1010101010 11111111111 121212121212 1313131313131 14141414141414 done.";

    fn by_span(mut v: Vec<RawMatch>) -> Vec<(usize, Range<usize>, Confidence)> {
        v.sort_by_key(|m| (m.span.start, m.span.end, m.rule));
        v.into_iter()
            .map(|m| (m.rule, m.span, m.confidence))
            .collect()
    }

    #[test]
    fn a_long_fields_keyword_rules_searched_in_shares_on_a_pool_find_the_same_in_order() {
        let scanner = Scanner::builtin().unwrap();
        let lines = [
            "export GITHUB_TOKEN=ghp_aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6",
            "password = S3cr3t-Pa55w0rd!",
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlc2ln",
            "mail jane.doe@corp-mail.net or call 415-555-0132",
            "an ordinary line of prose about the parser and its tests",
        ];
        let mut text = String::new();
        let mut i = 0;
        while text.len() < SHARED_ABOVE * 2 {
            text.push_str(lines[i % lines.len()]);
            text.push_str(if i % 7 == 0 { " " } else { "\n" });
            i += 1;
        }
        let shown = |v: Vec<RawMatch>| -> Vec<(usize, Range<usize>, Confidence)> {
            v.into_iter()
                .map(|m| (m.rule, m.span, m.confidence))
                .collect()
        };
        // Outside a pool: one share, in order.
        let alone = shown(scanner.scan_keyword_rules(&text));
        let rules: std::collections::BTreeSet<usize> = alone.iter().map(|m| m.0).collect();
        assert!(
            rules.len() >= 4 && alone.len() > 1000,
            "{rules:?} {}",
            alone.len()
        );
        for threads in [1, 2, 3] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let shared = pool.install(|| shown(scanner.scan_keyword_rules(&text)));
            assert!(shared == alone, "{threads} threads");
        }
    }

    #[test]
    fn the_parts_of_a_scan_together_report_what_the_whole_scan_reports_in_its_order() {
        let scanner = Scanner::builtin().unwrap();
        // Base64 of `password=hunter2-Prod!xyz`.
        let blob = "cGFzc3dvcmQ9aHVudGVyMi1Qcm9kIXh5eg==";
        let texts = [
            NUMBERS.to_owned(),
            format!("token {blob} and AKIAIOSFODNN7EXAMPLE, call 415-555-0132, jane@corp-mail.net"),
            "nothing to see here".to_owned(),
            String::new(),
        ];
        let shown = |v: Vec<RawMatch>| -> Vec<(usize, Range<usize>, Confidence)> {
            v.into_iter()
                .map(|m| (m.rule, m.span, m.confidence))
                .collect()
        };
        let mut seen = [false; 3];
        for text in &texts {
            let mut found = scanner.scan_part(Part::Views, text);
            found.absorb(scanner.scan_part(Part::Keywordless, text));
            found.absorb(scanner.scan_part(Part::Keyword, text));
            for (i, part) in [&found.keyword, &found.keywordless, &found.decoded]
                .iter()
                .enumerate()
            {
                seen[i] |= !part.is_empty();
            }
            let (raw, _) = found.into_parts();
            assert_eq!(shown(raw), shown(scanner.scan_raw(text, true)), "{text}");
        }
        assert_eq!(seen, [true; 3], "every part of a scan found something");
    }

    #[test]
    fn digit_rules_behind_their_tiers_find_what_each_rule_finds_in_its_own_windows() {
        let scanner = Scanner::builtin().unwrap();
        let d = scanner.digit_rules.as_ref().unwrap();
        assert!(
            d.tiers.len() >= 2,
            "the built-in digit rules fall in several tiers"
        );
        let mut seen: Vec<usize> = d.tiers.iter().flat_map(|t| t.groups.clone()).collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..d.groups.len()).collect::<Vec<_>>());
        for t in &d.tiers {
            assert!(t.groups.iter().all(|&g| d.mins[g] >= t.floor));
        }
        // The same text again and again, cut at every place a window could end.
        for cut in (0..NUMBERS.len()).filter(|&i| NUMBERS.is_char_boundary(i)) {
            let text = &NUMBERS[cut..];
            let bytes = text.as_bytes();
            let clusters = digits::clusters(bytes);
            let mut tiered = Vec::new();
            scanner.scan_digit_rules(d, text, &clusters, &mut tiered);
            let mut each = Vec::new();
            for group in &d.groups {
                let min = scanner.rules[group[0]].min_digits.unwrap();
                for window in digits::windows(&clusters, min, bytes.len()) {
                    rule::find_group(
                        &scanner.rules,
                        group,
                        text,
                        window,
                        rule::By::default(),
                        &mut each,
                    );
                }
            }
            assert_eq!(by_span(tiered), by_span(each), "from byte {cut}");
        }
    }
}
