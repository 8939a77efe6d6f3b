//! `cq recheck ID|--all`: rerun every check on stored compactions under the current policy,
//! store each new report and say what changed: each check's status and code, the verdict,
//! the report digest.

use std::io::Write;

use crate::cli::{PolicyArgs, StoreArgs};
use crate::sanitize::line;
use crate::service::recheck::{quarantined_ids, recheck, short};
use crate::service::Checker;
use crate::store::Mode;

use super::{policy, store, Exit, Output};

pub fn run(
    id: Option<&str>,
    all: bool,
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
    let mut changed = 0usize;
    for id in &ids {
        let done = recheck(&store, &checker, id)?;
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
    writeln!(out, "rechecked {}, {changed} changed", ids.len())?;
    Ok(Exit::Success)
}
