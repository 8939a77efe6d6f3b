//! Opening the store a command names: `--store DB`, else `CQ_STORE`, else the user's default
//! store, with the path in every error.

use std::path::PathBuf;

use anyhow::Context;

use crate::cli::StoreArgs;
use crate::store::{self, Mode, OpenOptions, Store};

/// The store path `--store`/`CQ_STORE` names, or the default one.
pub fn path(args: &StoreArgs) -> anyhow::Result<PathBuf> {
    match &args.store {
        Some(path) => Ok(path.clone()),
        None => Ok(store::default_store_path()?),
    }
}

/// Opens the store `--store`/`CQ_STORE` names, or the default one.
pub fn open(args: &StoreArgs, mode: Mode) -> anyhow::Result<Store> {
    let path = path(args)?;
    let options = OpenOptions {
        mode,
        store_key: args.store_key.clone(),
    };
    Store::open_with(&path, &options)
        .with_context(|| format!("while opening the store \"{}\"", path.display()))
}
