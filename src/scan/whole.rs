//! Rules without keywords or digit trigger run over the whole field. Most of them (MAC
//! addresses, bot tokens, IPv6 addresses, vendor key formats) match in few fields, so one
//! regex-set pass over the field first tells which of them match at all, and only those run:
//! one pass instead of one per rule. The set answers exactly what each rule's own regex would
//! over the same bytes, so findings do not change.
//!
//! Opt-in rules (plain URLs, dates) are broad and match almost every field; a set would only
//! add a pass for them, so they run directly, as do rules that opt into Unicode (the set is
//! compiled with ASCII semantics). An opt-in rule with the very regex of a gated rule (reserved
//! IPv6 addresses) is gated on that rule's answer, which is its own.

use regex::bytes::{RegexSet, RegexSetBuilder};

use super::rule::{Rule, REGEX_SIZE_LIMIT};

/// The enabled whole-field rules: those checked through the set first, and the rest.
#[derive(Debug, Clone, Default)]
pub(super) struct WholeField {
    set: Option<RegexSet>,
    /// Rule indexes in set pattern order.
    gated: Vec<usize>,
    /// Opt-in rules with the same regex as a gated rule, and that rule's set pattern index.
    aliases: Vec<(usize, usize)>,
    direct: Vec<usize>,
}

impl WholeField {
    /// Splits `candidates` (keyword-less rules without a digit trigger) among the enabled rules.
    pub(super) fn new(rules: &[Rule], enabled: &[bool], candidates: &[usize]) -> WholeField {
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
        // A set of one only repeats the rule's own pass.
        if gated.len() < 2 {
            return WholeField::ungated(gated, direct);
        }
        let set = RegexSetBuilder::new(gated.iter().map(|&ri| rules[ri].pattern.as_str()))
            .unicode(false)
            .size_limit(REGEX_SIZE_LIMIT * 4)
            .dfa_size_limit(REGEX_SIZE_LIMIT * 4)
            .build();
        let same_regex = |ri: usize| {
            gated
                .iter()
                .position(|&g| rules[g].pattern == rules[ri].pattern && !rules[ri].unicode)
        };
        let aliases: Vec<(usize, usize)> = direct
            .iter()
            .filter_map(|&ri| same_regex(ri).map(|at| (ri, at)))
            .collect();
        direct.retain(|ri| !aliases.iter().any(|(a, _)| a == ri));
        match set {
            Ok(set) => WholeField {
                set: Some(set),
                gated,
                aliases,
                direct,
            },
            // Each rule compiled alone; without the set they simply all run.
            Err(_) => {
                direct.extend(aliases.iter().map(|&(ri, _)| ri));
                WholeField::ungated(gated, direct)
            }
        }
    }

    /// Every rule runs directly.
    fn ungated(mut gated: Vec<usize>, mut direct: Vec<usize>) -> WholeField {
        direct.append(&mut gated);
        direct.sort_unstable();
        WholeField {
            set: None,
            gated,
            aliases: Vec::new(),
            direct,
        }
    }

    /// The rules to run over `bytes`, in rule order: the direct ones and the gated ones (and
    /// their aliases) whose regex matches somewhere in `bytes`.
    pub(super) fn to_run(&self, bytes: &[u8]) -> Vec<usize> {
        let mut out = self.direct.clone();
        if let Some(set) = &self.set {
            for i in set.matches(bytes).iter() {
                out.push(self.gated[i]);
                out.extend(self.aliases.iter().filter(|a| a.1 == i).map(|a| a.0));
            }
            out.sort_unstable();
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_selects_only_rules_that_match() {
        let scanner = super::super::Scanner::builtin().unwrap();
        let rules = scanner.rules();
        let find = |id: &str| rules.iter().position(|r| r.id == id).unwrap();
        let (mac, ipv6, url) = (find("mac-address"), find("ipv6-address"), find("url"));
        let enabled = vec![true; rules.len()];
        let w = WholeField::new(rules, &enabled, &[mac, ipv6, url]);
        assert_eq!(w.gated.len(), 2);
        assert_eq!(w.to_run(b"plain text"), vec![url]);
        // The IPv6 regex also matches the MAC address (its validator rejects it later).
        assert_eq!(w.to_run(b"at 00:1A:2B:3C:4D:5E"), vec![ipv6, mac, url]);
        // The opt-in reserved-address rule shares the IPv6 regex, so it shares its gate.
        let reserved = find("ipv6-reserved-address");
        let w = WholeField::new(rules, &enabled, &[mac, ipv6, reserved, url]);
        assert_eq!(w.to_run(b"plain text"), vec![url]);
        assert_eq!(w.to_run(b"at ::1"), vec![ipv6, reserved, url]);
    }
}
