//! Rules without keywords or digit trigger run over the whole field. Most of them (MAC
//! addresses, bot tokens, IPv6 addresses, vendor key formats) match in few fields. In a long
//! field, those whose regex has a pivot (see `pivot`: IPv6 and MAC addresses, Discord bot
//! tokens) are searched by it, which skips from one pivot byte to the next, and one regex-set
//! pass over the field tells which of the others (vendor formats behind a literal prefix, which
//! the set's prefilter skips to) match at all; in a short field one set over all of them tells
//! which match. Only those run. A set answers exactly what each rule's own regex would over the
//! same bytes, and a pivot search finds what the regex finds, so findings do not change.
//!
//! Opt-in rules (plain URLs, dates) are broad and match almost every field; a set would only
//! add a pass for them, so they run directly, as do rules that opt into Unicode (the set is
//! compiled with ASCII semantics). An opt-in rule with the very regex of a gated rule (reserved
//! IPv6 addresses) is gated on that rule's answer, which is its own, and shares its search.
//! Each set is compiled when a field first needs it, and shared by the scanners of one rule
//! pack that enable the same whole-field rules.

use std::sync::{Arc, OnceLock};

use regex::bytes::{RegexSet, SetMatches};

use super::rule::Rule;
use super::sets;

/// The enabled whole-field rules: those checked through the set first, and the rest.
#[derive(Debug, Clone, Default)]
pub(super) struct WholeField {
    /// The rules run only when the set or their pivot says they may match (empty when fewer
    /// than two: a set of one only repeats the rule's own pass, so such a rule runs directly).
    gated: Vec<usize>,
    /// The searches, in order of their first rule: a direct rule alone, a gated rule with the
    /// aliases that share its search, an alias that does not alone; with the index into
    /// `gated` of the rule whose answer runs it (`None`: it always runs).
    runs: Vec<(Option<usize>, Vec<usize>)>,
    /// How the gated rules are checked in a long field (the set over those without a pivot),
    /// made when one first needs it.
    plan: Arc<OnceLock<Plan>>,
    /// How they are checked in a short field (see [`LONG_FROM`]: one set over all of them).
    short: Arc<OnceLock<Plan>>,
}

/// The length from which a field is long: its gated rules with a pivot are searched by it
/// (their pivot bytes found as bits, see `pivot::Masks`) and the set answers for the others. In
/// a shorter field one set over every gated rule answers for all of them: a pivot byte (`:` of
/// an IPv6 address, `-` or `:` of a MAC address) stands in most short fields, and searching
/// from it (compiling the rule's regex on the first) costs more than the set's pass.
pub(super) const LONG_FROM: usize = super::pivot::MASKS_FROM_BYTES;

/// Which gated rules a set checks (the others are searched by their pivots), and the set.
#[derive(Debug)]
struct Plan {
    /// For each gated rule, its pattern index in the set if it is behind the set.
    in_set: Vec<Option<usize>>,
    /// `None` when fewer than two rules are behind it (a set of one only repeats the rule's
    /// own pass) or when it cannot be built: then each runs.
    set: Option<RegexSet>,
}

impl Plan {
    /// The plan that puts the rules of `gated` that `behind` picks behind one set.
    fn new(rules: &[Rule], gated: &[usize], behind: impl Fn(&Rule) -> bool) -> Plan {
        let mut slots = 0..;
        let in_set: Vec<Option<usize>> = gated
            .iter()
            .map(|&ri| behind(&rules[ri]).then(|| slots.next()).flatten())
            .collect();
        let patterns: Vec<&str> = gated
            .iter()
            .zip(&in_set)
            .filter(|(_, slot)| slot.is_some())
            .map(|(&ri, _)| rules[ri].pattern.as_str())
            .collect();
        let set = (patterns.len() >= 2)
            .then(|| sets::build(patterns).ok())
            .flatten();
        Plan { in_set, set }
    }

    /// Whether gated rule `i` is to run, given the set's answer (`None`: nothing matched).
    fn runs(&self, i: usize, found: Option<&SetMatches>) -> bool {
        match self.set.as_ref().and(self.in_set[i]) {
            Some(slot) => found.is_some_and(|f| f.matched(slot)),
            None => true,
        }
    }
}

impl WholeField {
    /// Splits `candidates` (keyword-less rules without a digit trigger) among the enabled
    /// rules; the set of `previous` is reused when it gates the very same rules.
    pub(super) fn new(
        rules: &[Rule],
        enabled: &[bool],
        candidates: &[usize],
        previous: Option<&WholeField>,
    ) -> WholeField {
        let mut gated = Vec::new();
        let mut direct = Vec::new();
        for &ri in candidates {
            if !enabled.get(ri).copied().unwrap_or(false) {
                continue;
            }
            let r = &rules[ri];
            if r.default_enabled && !r.unicode {
                gated.push(ri);
            } else {
                direct.push(ri);
            }
        }
        if gated.len() < 2 {
            direct.append(&mut gated);
            direct.sort_unstable();
            return WholeField {
                runs: direct.into_iter().map(|ri| (None, vec![ri])).collect(),
                ..WholeField::default()
            };
        }
        // Opt-in rules with the same regex as a gated rule go with that rule's answer.
        let same_regex = |ri: usize| {
            gated
                .iter()
                .position(|&g| rules[g].pattern == rules[ri].pattern && !rules[ri].unicode)
        };
        let mut runs: Vec<(Option<usize>, Vec<usize>)> = gated
            .iter()
            .enumerate()
            .map(|(i, &g)| (Some(i), vec![g]))
            .collect();
        for ri in direct {
            match same_regex(ri) {
                Some(i) if rules[gated[i]].same_search(&rules[ri]) => runs[i].1.push(ri),
                Some(i) => runs.push((Some(i), vec![ri])),
                None => runs.push((None, vec![ri])),
            }
        }
        runs.sort_unstable_by(|a, b| a.1.cmp(&b.1));
        let (plan, short) = match previous {
            Some(p) if p.gated == gated => (Arc::clone(&p.plan), Arc::clone(&p.short)),
            _ => (Arc::default(), Arc::default()),
        };
        WholeField {
            gated,
            runs,
            plan,
            short,
        }
    }

    /// The gated rules' plan for a field of `len` bytes, made on first use.
    fn plan(&self, rules: &[Rule], len: usize) -> &Plan {
        if len < LONG_FROM {
            self.short
                .get_or_init(|| Plan::new(rules, &self.gated, |_| true))
        } else {
            self.plan
                .get_or_init(|| Plan::new(rules, &self.gated, |r| r.pivot().is_none()))
        }
    }

    /// Compiles both plans' sets now (there are none without gated rules).
    pub(super) fn compile_sets(&self, rules: &[Rule]) {
        if !self.gated.is_empty() {
            self.plan(rules, 0);
            self.plan(rules, LONG_FROM);
        }
    }

    /// The rules to run over `bytes`, as groups that share one search (a gated rule and its
    /// aliases with the same search; every other rule alone), in order of each group's first
    /// rule: the direct ones, and the gated ones (with their aliases) whose regex matches
    /// somewhere in `bytes` or, in a long field, that are searched by their pivot.
    pub(super) fn to_run(&self, rules: &[Rule], bytes: &[u8]) -> Vec<&[usize]> {
        let plan = (!self.gated.is_empty()).then(|| self.plan(rules, bytes.len()));
        // Most fields match none of the set's patterns: the plain search says so and stops at
        // a first match, where the overlapping search that names every pattern reads on.
        let found = plan
            .and_then(|p| p.set.as_ref())
            .filter(|set| set.is_match(bytes))
            .map(|set| set.matches(bytes));
        self.runs
            .iter()
            .filter(|(gate, _)| match (gate, plan) {
                (Some(i), Some(plan)) => plan.runs(*i, found.as_ref()),
                _ => true,
            })
            .map(|(_, group)| group.as_slice())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_selects_only_rules_that_match_and_in_a_long_field_pivoted_rules_always_run() {
        let scanner = super::super::Scanner::builtin().unwrap();
        let rules = scanner.rules();
        let find = |id: &str| rules.iter().position(|r| r.id == id).unwrap();
        let (twilio, crates, ipv6, url) = (
            find("twilio-api-key"),
            find("cratesio-api-key"),
            find("ipv6-address"),
            find("url"),
        );
        let enabled = vec![true; rules.len()];
        let w = WholeField::new(rules, &enabled, &[twilio, crates, ipv6, url], None);
        assert_eq!(w.gated.len(), 3);
        assert!(rules[ipv6].pivot().is_some() && rules[twilio].pivot().is_none());
        // A short field: one set over every gated rule answers for all of them.
        assert_eq!(owned(w.to_run(rules, b"plain text")), vec![vec![url]]);
        let key = format!("key SK{}", "0a".repeat(16));
        assert_eq!(
            owned(w.to_run(rules, key.as_bytes())),
            sorted(vec![vec![twilio], vec![url]])
        );
        // A long field: the IPv6 rule has a pivot, and is searched by it rather than asked of
        // the set.
        let long = |text: &str| format!("{text} {}", "plain text ".repeat(LONG_FROM / 10));
        assert_eq!(
            owned(w.to_run(rules, long("plain").as_bytes())),
            sorted(vec![vec![ipv6], vec![url]])
        );
        assert_eq!(
            owned(w.to_run(rules, long(&key).as_bytes())),
            sorted(vec![vec![twilio], vec![ipv6], vec![url]])
        );
        // The opt-in reserved-address rule shares the IPv6 regex, so it shares its search.
        let reserved = find("ipv6-reserved-address");
        let w = WholeField::new(
            rules,
            &enabled,
            &[twilio, crates, ipv6, reserved, url],
            None,
        );
        for text in ["at ::1".to_owned(), long("at ::1")] {
            assert_eq!(
                owned(w.to_run(rules, text.as_bytes())),
                sorted(vec![vec![ipv6, reserved], vec![url]])
            );
        }
        assert_eq!(owned(w.to_run(rules, b"at noon")), vec![vec![url]]);
        // A scanner gating the same rules shares the plans and their compiled sets.
        let again = WholeField::new(
            rules,
            &enabled,
            &[twilio, crates, ipv6, reserved, url],
            Some(&w),
        );
        assert!(Arc::ptr_eq(&w.plan, &again.plan) && Arc::ptr_eq(&w.short, &again.short));
    }

    fn sorted(mut groups: Vec<Vec<usize>>) -> Vec<Vec<usize>> {
        groups.sort_unstable();
        groups
    }

    fn owned(groups: Vec<&[usize]>) -> Vec<Vec<usize>> {
        groups.into_iter().map(<[usize]>::to_vec).collect()
    }
}
