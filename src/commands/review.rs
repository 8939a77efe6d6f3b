//! `cq review [--store DB] [--readonly] [--config FILE] [--key FILE] [--policy P]`: open the
//! reviewer's terminal UI on a store.
//!
//! The store is opened read-only for `--readonly` (every decision action is hidden and the
//! store refuses writes anyway). Decisions and reveals are signed with the reviewer's key
//! from `--key`; without one the UI still opens and every decision is refused with a message
//! saying to pass `--key`. The policy (`--policy`) is the one reruns use and whose review
//! rules (reason codes, two-person classes) decisions follow.

use anyhow::Context;

use crate::audit::keys::NamedKey;
use crate::cli::ReviewArgs;
use crate::review::store_source::StoreSource;
use crate::review::ReviewOptions;
use crate::store::Mode;

use super::{policy, store, Exit};

/// Opens the store and runs the reviewer until the user quits.
pub fn run(args: &ReviewArgs) -> anyhow::Result<Exit> {
    let mode = if args.readonly {
        Mode::ReadOnly
    } else {
        Mode::ReadWrite
    };
    let store = store::open(&args.store, mode)?;
    let key =
        match &args.key {
            Some(file) => Some(NamedKey::load(file).with_context(|| {
                format!("while loading the reviewer key \"{}\"", file.display())
            })?),
            None => None,
        };
    let policy = policy::resolve(&args.policy)?;
    let source = StoreSource::open(store, policy, key)?;
    let reviewer = source.reviewer_name();
    let options = ReviewOptions::from_env(args.readonly, reviewer, args.config.clone());
    crate::review::run(Box::new(source), options)?;
    Ok(Exit::Success)
}
