//! Opening the store a command names: `--store DB|URL`, else `CQ_STORE`, else the user's
//! default store, with the location in every error (a URL's password masked).

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
    Store::open_with_signing_key(&path, &options, args.store_signing_key.as_deref())
        .with_context(|| format!("while opening the store \"{}\"", store::shown(&path)))
}
