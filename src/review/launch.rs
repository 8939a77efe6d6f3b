//! `cq review [--store DB] [--readonly] [--config FILE] [--key FILE] [--policy P]`: open the
//! reviewer's terminal UI on a store. `main` calls this directly (the CLI front end and the
//! TUI never import each other).
//!
//! The store is opened read-only for `--readonly` (every decision action is hidden and the
//! store refuses writes anyway). Decisions and reveals are signed with the reviewer's key
//! from `--key`; without one the UI still opens and every decision is refused with a message
//! saying to pass `--key`. The policy (`--policy`) is the one reruns use and whose review
//! rules (reason codes, two-person classes) decisions follow.

use std::io::Write as _;

use anyhow::Context;

use crate::audit::keys::NamedKey;
use crate::cli::ReviewArgs;
use crate::review::store_source::StoreSource;
use crate::review::ReviewOptions;
use crate::service::policy::{resolve, PolicyChoice};
use crate::store::{self, Mode, OpenOptions, Store};

/// Opens the store and runs the reviewer until the user quits.
pub fn run(args: &ReviewArgs) -> anyhow::Result<()> {
    let mode = if args.readonly {
        Mode::ReadOnly
    } else {
        Mode::ReadWrite
    };
    let path = match &args.store.store {
        Some(path) => path.clone(),
        None => store::default_store_path()?,
    };
    let options = OpenOptions {
        mode,
        store_key: args.store.store_key.clone(),
    };
    let store =
        Store::open_with_signing_key(&path, &options, args.store.store_signing_key.as_deref())
            .with_context(|| format!("while opening the store \"{}\"", store::shown(&path)))?;
    let key =
        match &args.key {
            Some(file) => Some(NamedKey::load(file).with_context(|| {
                format!("while loading the reviewer key \"{}\"", file.display())
            })?),
            None => None,
        };
    let resolved = resolve(&PolicyChoice {
        policy: args.policy.policy.clone(),
        allow_unsigned: args.policy.allow_unsigned_policy,
        trust_keys: args.policy.trust_keys.clone(),
    })?;
    if let Some(warning) = &resolved.warning {
        let _ = writeln!(std::io::stderr(), "cq: {warning}");
    }
    let source = StoreSource::open(store, resolved.policy, key)?;
    let reviewer = source.reviewer_name();
    let options = ReviewOptions::from_env(args.readonly, reviewer, args.config.clone());
    crate::review::run(Box::new(source), options)
}
