//! `cq recheck ID|--all`: rerun every check on stored compactions, each under the policy it
//! was checked under (see [`crate::service::recheck::policies`]), store each new report and
//! say what changed: each check's status and code, the verdict, the report digest, and which
//! policy the rerun used. A compaction whose policy is not at hand is not rerun: `cq recheck
//! ID` fails with the digest it needs; `--all` names each one and reruns the rest.
//! `--override-policy` deliberately reruns under `--policy` instead, and says so per item.

use std::io::Write;

use crate::cli::{PolicyArgs, StoreArgs};
use crate::sanitize::line;
use crate::service::recheck::{self, quarantined_ids, short, Pending, Policies, PolicyNeeded};
use crate::service::Checker;
use crate::store::Mode;

use super::{policy, store, Exit, Output};

/// Compactions prepared, checked on the pool and stored per round.
const ROUND: usize = 256;

/// Which policy the reruns use: `--policy`, and whether it overrides each item's own.
pub struct Under<'a> {
    pub override_policy: bool,
    pub policy: &'a PolicyArgs,
}

pub fn run(
    id: Option<&str>,
    all: bool,
    jobs: Option<u16>,
    store_args: &StoreArgs,
    under: &Under<'_>,
    out: &mut Output,
) -> anyhow::Result<Exit> {
    let store = store::open(store_args, Mode::ReadWrite)?;
    let given = Checker::new(policy::resolve(under.policy)?)?;
    let mut policies = if under.override_policy {
        Policies::overriding()
    } else {
        Policies::own()
    };
    let ids = match (id, all) {
        (Some(id), false) => vec![id.to_owned()],
        (None, true) => quarantined_ids(&store)?,
        _ => anyhow::bail!("give a compaction id or --all"),
    };
    let pool = super::jobs::pool(jobs)?;
    let (mut changed, mut refused, mut rechecked) = (0usize, 0usize, 0usize);
    for round in ids.chunks(ROUND) {
        let mut pending = Vec::with_capacity(round.len());
        for id in round {
            match recheck::prepare(&store, &given, &mut policies, id) {
                Ok(p) => pending.push(p),
                // One item: the refusal is the command's error (nothing was rerun).
                Err(e) if !all => return Err(e),
                Err(e) => match e.downcast_ref::<PolicyNeeded>() {
                    Some(needed) => {
                        refused += 1;
                        writeln!(
                            out,
                            "{}: not rerun: {}",
                            line(id),
                            line(&needed.to_string())
                        )?;
                    }
                    None => return Err(e),
                },
            }
        }
        for done in recheck_round(&pool, &store, &policies, &given, pending)? {
            rechecked += 1;
            let shown = line(&done.id);
            if done.changed() {
                changed += 1;
                writeln!(out, "{shown}: changed")?;
            } else {
                writeln!(
                    out,
                    "{shown}: unchanged (report {})",
                    short(&done.after.sha256)
                )?;
            }
            writeln!(
                out,
                "  {}",
                line(&format!("rerun {}", done.policy.describe()))
            )?;
            for change in done.changes() {
                writeln!(out, "  {}", line(&change))?;
            }
        }
    }
    if refused == 0 {
        writeln!(out, "rechecked {rechecked}, {changed} changed")?;
        return Ok(Exit::Success);
    }
    writeln!(
        out,
        "rechecked {rechecked}, {changed} changed, {refused} not rerun (the policy they were checked under is not at hand: give it with --policy FILE)"
    )?;
    Ok(Exit::SomeRefused)
}

/// Checks a round's prepared reruns on the pool, stores each in order.
fn recheck_round(
    pool: &rayon::ThreadPool,
    store: &crate::store::Store,
    policies: &Policies,
    given: &Checker,
    pending: Vec<Pending>,
) -> anyhow::Result<Vec<recheck::Recheck>> {
    use rayon::prelude::*;
    let outcomes: Vec<_> = pool.install(|| {
        pending
            .par_iter()
            .map(|p| recheck::run(policies, given, p))
            .collect()
    });
    pending
        .into_iter()
        .zip(outcomes)
        .map(|(p, outcome)| recheck::finish(store, policies, given, p, outcome?))
        .collect()
}
