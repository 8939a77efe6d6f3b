//! `cq policy sign|verify|show|prompt`, and turning `--policy`, `--allow-unsigned-policy` and
//! `--trust-key` into a policy for every other command ([`resolve`]), with the loud warning
//! an unsigned policy gets.

use std::io::Write;
use std::path::Path;

use crate::cli::PolicyArgs;
use crate::engine::PolicyEngine;
use crate::policy::{Agents, Policy};
use crate::service::policy::{self, PolicyChoice};

use super::{warn, Exit, Output};

/// What the flags choose.
pub fn choice(args: &PolicyArgs) -> PolicyChoice {
    PolicyChoice {
        policy: args.policy.clone(),
        allow_unsigned: args.allow_unsigned_policy,
        trust_keys: args.trust_keys.clone(),
    }
}

/// The policy the flags name; warns on standard error when it is used unsigned.
pub fn resolve(args: &PolicyArgs) -> anyhow::Result<Policy> {
    let resolved = policy::resolve(&choice(args))?;
    if let Some(warning) = &resolved.warning {
        warn(warning);
    }
    Ok(resolved.policy)
}

/// The `[agents]` table of the policy the flags name (see [`policy::agents`]); warns as
/// [`resolve`] does.
pub fn agents(args: &PolicyArgs) -> anyhow::Result<Agents> {
    let (agents, warning) = policy::agents(&choice(args))?;
    if let Some(warning) = &warning {
        warn(warning);
    }
    Ok(agents)
}

pub fn sign(key: &Path, file: &Path, out: &mut Output) -> anyhow::Result<Exit> {
    let signed = policy::sign(key, file)?;
    writeln!(
        out,
        "signed policy \"{}\" ({}) with key {}: {}",
        crate::sanitize::line(&signed.policy_name),
        signed.policy_sha256,
        signed.key_id,
        signed.signature_path.display()
    )?;
    Ok(Exit::Success)
}

pub fn verify(file: &Path, trust: &[String], out: &mut Output) -> anyhow::Result<Exit> {
    let (found, verdict) = policy::verify(file, trust)?;
    match verdict {
        Ok(key_id) => {
            writeln!(
                out,
                "policy \"{}\" {} is signed by trusted key {key_id}",
                crate::sanitize::line(&found.name),
                found.sha256()
            )?;
            Ok(Exit::Success)
        }
        Err(why) => {
            writeln!(out, "policy \"{}\" does not verify: {why}", file.display())?;
            Ok(Exit::Tampered)
        }
    }
}

pub fn show(args: &PolicyArgs, out: &mut Output) -> anyhow::Result<Exit> {
    let engine = PolicyEngine::new(resolve(args)?, "builtin")?;
    let p = &engine.policy;
    let name = crate::sanitize::line(&p.name);
    writeln!(
        out,
        "policy          {name} {}",
        crate::sanitize::line(&p.policy_version)
    )?;
    writeln!(out, "policy_sha256   {}", engine.policy_sha256)?;
    writeln!(
        out,
        "verifier        {} (artifact {})",
        crate::sanitize::line(&p.grammar.verifier_version),
        p.verifier_artifact_sha256()
    )?;
    writeln!(
        out,
        "invariants      {} (revision {})",
        p.invariants.records.len(),
        p.invariants.revision
    )?;
    writeln!(
        out,
        "commitments     {} (revision {})",
        p.commitments.records.len(),
        p.commitments.revision
    )?;
    writeln!(
        out,
        "clauses         {} ({} conflict patterns)",
        p.grammar.clauses.len(),
        p.grammar.conflicts.len()
    )?;
    writeln!(out, "pinned defaults {}", p.pinned.len())?;
    writeln!(
        out,
        "min length      {} characters; fallback keeps {} messages",
        p.compaction.summary_min_length, p.compaction.fallback_message_count
    )?;
    Ok(Exit::Success)
}

pub fn prompt(args: &PolicyArgs, out: &mut Output) -> anyhow::Result<Exit> {
    let engine = PolicyEngine::new(resolve(args)?, "builtin")?;
    write!(out, "{}", super::prompt::render(&engine))?;
    Ok(Exit::Success)
}
