//! Which policy a rerun runs under. A rerun reproduces a check, so it runs under the policy
//! the item's current report names (its `policy_sha256`, which also fixes its mode), never
//! simply under whatever policy the reviewer opened with: an item a hook or `cq import`
//! checked under the built-in `prose` policy reruns under `prose`, a strict item under its
//! strict policy. That policy is the one given (`--policy`) when its digest matches, else the
//! built-in with that digest; when it is neither (a project policy the reviewer does not
//! have) nothing is rerun and the refusal names the digest needed. Only an explicit override
//! (`cq recheck --override-policy`) reruns under the given policy instead, and then every
//! description of the rerun says it was not the policy the item was checked under.

use crate::engine::report::Report;
use crate::policy::{Mode, Policy, BUILTIN};

use super::short;
use crate::service::Checker;

/// A policy as a report names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedPolicy {
    pub name: String,
    pub version: String,
    pub sha256: String,
    pub mode: Mode,
}

impl NamedPolicy {
    /// The policy `report` names.
    pub fn of_report(report: &Report) -> NamedPolicy {
        NamedPolicy {
            name: report.policy_name.clone(),
            version: report.policy_version.clone(),
            sha256: report.policy_sha256.clone(),
            mode: report.mode,
        }
    }

    fn of_policy(policy: &Policy, sha256: &str) -> NamedPolicy {
        NamedPolicy {
            name: policy.name.clone(),
            version: policy.policy_version.clone(),
            sha256: sha256.to_owned(),
            mode: policy.compaction.mode,
        }
    }

    /// `"prose" cq-prose-2026.12 (prose mode, sha256 e8d5359ab3ef0577)`.
    pub fn label(&self) -> String {
        format!(
            "\"{}\" {} ({} mode, sha256 {})",
            self.name,
            self.version,
            self.mode.as_str(),
            short(&self.sha256)
        )
    }
}

/// The policy a rerun ran under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RerunPolicy {
    pub used: NamedPolicy,
    /// Whether it is one of the built-in policies.
    pub builtin: bool,
    /// The policy the item was checked under, when the rerun deliberately used another one
    /// (`--override-policy`); `None` when it ran under the item's own policy.
    pub instead_of: Option<NamedPolicy>,
}

impl RerunPolicy {
    /// Whether the rerun used another policy than the one the item was checked under.
    pub fn overridden(&self) -> bool {
        self.instead_of.is_some()
    }

    /// One line for a terminal: which policy, and whether it was the item's own.
    pub fn describe(&self) -> String {
        let kind = if self.builtin {
            "built-in policy"
        } else {
            "policy"
        };
        match &self.instead_of {
            None => format!(
                "under {kind} {}, the one it was checked under",
                self.used.label()
            ),
            Some(recorded) => format!(
                "under {kind} {} by --override-policy, NOT the one it was checked under ({})",
                self.used.label(),
                recorded.label()
            ),
        }
    }
}

/// A rerun that cannot run under the policy its item was checked under.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("compaction \"{id}\" was checked under policy {needed}, which is not built in and is not the policy given ({given}); nothing was rerun: give that policy, whose digest is \"{needed_sha256}\", with `--policy FILE` (or rerun it under the given policy on purpose with `cq recheck --override-policy`)", needed = .needed.label(), given = .given.label(), needed_sha256 = .needed.sha256)]
pub struct PolicyNeeded {
    pub id: String,
    pub needed: NamedPolicy,
    pub given: NamedPolicy,
}

/// Which of [`Policies`]' checkers a rerun uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    /// The checker of the policy given.
    Given,
    /// The built-in compiled at this index.
    Builtin(usize),
}

/// The checkers a rerun may use besides the given one: the built-in policies, each compiled
/// the first time an item needs it.
#[derive(Debug, Default)]
pub struct Policies {
    builtins: Vec<Checker>,
    /// Rerun every item under the given policy, whatever it was checked under.
    override_given: bool,
}

impl Policies {
    /// Reruns under each item's own policy.
    pub fn own() -> Policies {
        Policies::default()
    }

    /// Reruns under the given policy on purpose, even where the item was checked under
    /// another (each rerun then says so).
    pub fn overriding() -> Policies {
        Policies {
            builtins: Vec::new(),
            override_given: true,
        }
    }

    /// The checker that reruns item `id`, whose current report is `before`, and which policy
    /// that is; [`PolicyNeeded`] when it is neither the given policy nor a built-in.
    pub fn pick(
        &mut self,
        given: &Checker,
        id: &str,
        before: &Report,
    ) -> anyhow::Result<(Pick, RerunPolicy)> {
        let recorded = NamedPolicy::of_report(before);
        let given_named = NamedPolicy::of_policy(given.policy(), &given.engine.policy_sha256);
        let given_builtin = crate::policy::is_shipped_sha256(&given_named.sha256);
        if given_named.sha256 == recorded.sha256 || self.override_given {
            let instead_of = (given_named.sha256 != recorded.sha256).then_some(recorded);
            return Ok((
                Pick::Given,
                RerunPolicy {
                    used: given_named,
                    builtin: given_builtin,
                    instead_of,
                },
            ));
        }
        let found = self
            .builtins
            .iter()
            .position(|c| c.engine.policy_sha256 == recorded.sha256);
        let index = match found {
            Some(index) => index,
            None => {
                let Some(policy) = builtin_with_digest(&recorded.sha256) else {
                    return Err(PolicyNeeded {
                        id: id.to_owned(),
                        needed: recorded,
                        given: given_named,
                    }
                    .into());
                };
                self.builtins.push(Checker::new(policy)?);
                self.builtins.len() - 1
            }
        };
        Ok((
            Pick::Builtin(index),
            RerunPolicy {
                used: recorded,
                builtin: true,
                instead_of: None,
            },
        ))
    }

    /// The checker `pick` names.
    pub fn checker<'a>(&'a self, given: &'a Checker, pick: Pick) -> anyhow::Result<&'a Checker> {
        match pick {
            Pick::Given => Ok(given),
            Pick::Builtin(index) => self
                .builtins
                .get(index)
                .ok_or_else(|| anyhow::anyhow!("no built-in checker \"{index}\" was compiled")),
        }
    }
}

/// The built-in policy whose digest is `sha256`, if one is (as shipped).
pub fn builtin_with_digest(sha256: &str) -> Option<Policy> {
    if !crate::policy::is_shipped_sha256(sha256) {
        return None;
    }
    BUILTIN
        .iter()
        .filter_map(|(name, _)| Policy::builtin(name).ok())
        .find(|p| p.sha256() == sha256)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_builtin_is_found_by_its_digest() {
        for (name, _) in BUILTIN {
            let policy = Policy::builtin(name).unwrap();
            let found = builtin_with_digest(&policy.sha256()).unwrap();
            assert_eq!(&found.name, name);
        }
        assert!(builtin_with_digest(&"0".repeat(64)).is_none());
    }
}
