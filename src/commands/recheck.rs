//! `cq recheck ID|--all`: rerun every check on stored compactions under the current policy,
//! store each new report and say what changed: each check's status and code, the verdict,
//! the report digest.

use std::io::Write;

use crate::cli::{PolicyArgs, StoreArgs};
use crate::sanitize::line;
use crate::service::recheck::{self, quarantined_ids, short, Recheck};
use crate::service::Checker;
use crate::store::Mode;

use super::{policy, store, Exit, Output};

/// Compactions prepared, checked on the pool and stored per round.
const ROUND: usize = 256;

pub fn run(
    id: Option<&str>,
    all: bool,
    jobs: Option<u16>,
    store_args: &StoreArgs,
    policy_args: &PolicyArgs,
    out: &mut Output,
) -> anyhow::Result<Exit> {
    let store = store::open(store_args, Mode::ReadWrite)?;
    let checker = Checker::new(policy::resolve(policy_args)?)?;
    let ids = match (id, all) {
        (Some(id), false) => vec![id.to_owned()],
        (None, true) => quarantined_ids(&store)?,
        _ => anyhow::bail!("give a compaction id or --all"),
    };
    let pool = super::jobs::pool(jobs)?;
    let mut changed = 0usize;
    for round in ids.chunks(ROUND) {
        for done in recheck_round(&pool, &store, &checker, round)? {
            let id = &done.id;
            let shown = line(id);
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
            for change in done.changes() {
                writeln!(out, "  {}", line(&change))?;
            }
        }
    }
    writeln!(out, "rechecked {}, {changed} changed", ids.len())?;
    Ok(Exit::Success)
}

/// Reads a round's requests, checks them on the pool, stores each rerun in order.
fn recheck_round(
    pool: &rayon::ThreadPool,
    store: &crate::store::Store,
    checker: &Checker,
    ids: &[String],
) -> anyhow::Result<Vec<Recheck>> {
    use rayon::prelude::*;
    let pending = ids
        .iter()
        .map(|id| recheck::prepare(store, id))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let outcomes: Vec<_> = pool.install(|| {
        pending
            .par_iter()
            .map(|p| recheck::run(checker, p))
            .collect()
    });
    pending
        .into_iter()
        .zip(outcomes)
        .map(|(p, outcome)| recheck::finish(store, checker, p, outcome?))
        .collect()
}
