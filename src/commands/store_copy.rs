//! `cq store copy FROM TO`: moves a store between SQLite and PostgreSQL (either way, or
//! between two of a kind) with its audit log intact. The source must verify before it is
//! copied, and the copy must verify afterwards with the same entries and the same Merkle
//! root; anything else is reported as tampering (exit 1).

use std::io::Write;

use anyhow::Context as _;

use crate::cli::StoreCopyArgs;
use crate::store::{self, Mode, OpenOptions, Store};

use super::{Exit, Output};

pub fn run(args: &StoreCopyArgs, out: &mut Output) -> anyhow::Result<Exit> {
    let (from_shown, to_shown) = (store::shown(&args.from), store::shown(&args.to));
    let source = Store::open_with_signing_key(
        &args.from,
        &OpenOptions {
            mode: Mode::ReadOnly,
            store_key: args.store_key.clone(),
        },
        args.from_signing_key.as_deref(),
    )
    .with_context(|| format!("while opening the store \"{from_shown}\""))?;
    let before = source.verify(None)?;
    if !before.is_ok() {
        writeln!(out, "{}", before.to_string().trim_end())?;
        writeln!(
            out,
            "not copied: \"{from_shown}\" does not verify; `cq audit verify` names every problem"
        )?;
        return Ok(Exit::Tampered);
    }
    let target_options = OpenOptions {
        mode: Mode::ReadOnly,
        store_key: Some(source.verifier_key()),
    };
    let to_key = args.to_signing_key.as_deref();
    let copied = store::copy(&source, &args.to, to_key)
        .with_context(|| format!("while copying \"{from_shown}\" to \"{to_shown}\""))?;
    let target = Store::open_with_signing_key(&args.to, &target_options, to_key)
        .with_context(|| format!("while opening the copy \"{to_shown}\""))?;
    let after = target.verify(None)?;
    for (table, rows) in &copied.rows {
        writeln!(out, "{table:<15} {rows:>9} rows")?;
    }
    writeln!(out, "from  {}", before.to_string().trim_end())?;
    writeln!(out, "to    {}", after.to_string().trim_end())?;
    if !after.is_ok() || after.root != before.root || after.entries != before.entries {
        writeln!(
            out,
            "the copy \"{to_shown}\" does not verify with the source's root: do not use it"
        )?;
        return Ok(Exit::Tampered);
    }
    let keys = target.key_files();
    if copied.key_copied {
        writeln!(
            out,
            "copied: \"{to_shown}\" has the same root, and its signing key is \"{}\"",
            keys.key.display()
        )?;
    } else {
        writeln!(
            out,
            "copied: \"{to_shown}\" has the same root; it is read-only until its signing key is put at \"{}\"",
            keys.key.display()
        )?;
    }
    Ok(Exit::Success)
}
