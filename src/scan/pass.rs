//! One scan of one field: the keyword prefilter and each selected rule in its keyword windows,
//! the digit-triggered rules around digit clusters behind their regex set, the whole-field
//! rules behind theirs, the context-word filter, then one level of decoded blobs.

use std::ops::Range;

use super::{decode, digits, keywords, rule, Confidence, RawMatch, Scanner};

impl Scanner {
    /// Finds matches in `text`; when `decode` is set, also inside base64/hex blobs (one level).
    pub(super) fn scan_raw(&self, text: &str, decode: bool) -> Vec<RawMatch> {
        let bytes = text.as_bytes();
        let mut out = Vec::new();
        // (rule, keyword position) pairs, so a field without keyword hits allocates little.
        let hits = self.keywords.hits(bytes, &self.keyword_rules);
        for group in hits.chunk_by(|a, b| a.0 == b.0) {
            let ri = group[0].0;
            let rule = &self.rules[ri];
            let positions = group.iter().map(|&(_, p)| p);
            for window in keywords::windows(bytes, positions, rule.window_before, rule.window) {
                rule.find_in(ri, text, window, &mut out);
            }
            if let Ok(rule::Compiled {
                glued: Some(glued), ..
            }) = rule.compiled()
            {
                for &(_, at) in group {
                    rule.find_glued(glued, ri, text, at, &mut out);
                }
            }
        }
        let needs_clusters = self.digit_rules.is_some()
            || self
                .always
                .iter()
                .any(|&ri| self.enabled[ri] && self.rules[ri].min_digits.is_some());
        let clusters = if needs_clusters {
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
        for group in self.whole.to_run(&self.rules, bytes) {
            rule::find_group(&self.rules, &group, text, 0..bytes.len(), &mut out);
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
    /// Runs the digit-triggered rules: one set pass over each of the lowest threshold's
    /// windows, then each group the set reports in its own threshold's windows inside. The set
    /// answers for every window first, so its automaton stays in cache while it runs.
    fn scan_digit_rules(
        &self,
        d: &digits::DigitRules,
        text: &str,
        clusters: &[digits::Cluster],
        out: &mut Vec<RawMatch>,
    ) {
        let bytes = text.as_bytes();
        let outer = digits::windows(clusters, d.floor(), bytes.len());
        let answers: Vec<Vec<usize>> = outer
            .iter()
            .map(|w| d.matching(&self.rules, &bytes[w.clone()]))
            .collect();
        // Windows per threshold, computed when a group with that threshold first needs them.
        let mut by_min: Vec<(usize, Vec<Range<usize>>)> = Vec::new();
        for (outer, groups) in outer.iter().zip(&answers) {
            for &g in groups {
                let min = d.mins[g];
                let pos = match by_min.iter().position(|(m, _)| *m == min) {
                    Some(pos) => pos,
                    None => {
                        by_min.push((min, digits::windows(clusters, min, bytes.len())));
                        by_min.len() - 1
                    }
                };
                for window in digits::inside(&by_min[pos].1, outer) {
                    rule::find_group(&self.rules, &d.groups[g], text, window, out);
                }
            }
        }
    }
}
