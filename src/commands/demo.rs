//! `cq demo [--store DB] [--no-tui]`: build a demo store from the scenarios bundled in
//! `assets/demo/` ([`crate::service::demo`]) and open the reviewer on it. The store is
//! `cq/demo.db` in the user's data directory unless `--store` says otherwise; `CQ_STORE` is
//! ignored, so the demo never writes into a real store.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::cli::{DemoArgs, PolicyArgs, ReviewArgs, StoreArgs};
use crate::service::demo::{build, Built};

use super::Output;

/// `cq/demo.db` in the user's data directory.
pub fn default_demo_store() -> anyhow::Result<PathBuf> {
    let dirs = directories::ProjectDirs::from("", "", "cq")
        .context("no data directory for this user: pass --store PATH")?;
    Ok(dirs.data_dir().join("demo.db"))
}

/// Builds the demo store and prints what each scenario got; the reviewer to open on it,
/// unless `--no-tui`.
pub fn run(args: &DemoArgs, out: &mut Output) -> anyhow::Result<Option<ReviewArgs>> {
    let path = match &args.store {
        Some(path) => path.clone(),
        None => default_demo_store()?,
    };
    let built = build(&path)?;
    write_table(out, &path, &built)?;
    out.flush()?;
    if args.no_tui {
        return Ok(None);
    }
    Ok(Some(ReviewArgs {
        store: StoreArgs {
            store: Some(path.clone()),
            store_key: None,
            store_signing_key: None,
        },
        readonly: false,
        config: None,
        key: built.reviewer_keys.first().cloned(),
        policy: PolicyArgs {
            policy: "default".into(),
            allow_unsigned_policy: false,
            trust_keys: Vec::new(),
        },
    }))
}

fn write_table(out: &mut impl Write, path: &Path, built: &Built) -> std::io::Result<()> {
    let width = built
        .rows
        .iter()
        .map(|r| r.scenario.len())
        .max()
        .unwrap_or(8)
        .max(8);
    writeln!(
        out,
        "{:<width$}  {:<11}  {:<25}  MAIN REASON",
        "SCENARIO", "VERDICT", "OUTCOME"
    )?;
    for r in &built.rows {
        writeln!(
            out,
            "{:<width$}  {:<11}  {:<25}  {}",
            r.scenario,
            r.verdict,
            r.outcome,
            if r.main_reason.is_empty() {
                "-"
            } else {
                &r.main_reason
            }
        )?;
    }
    let added = built.rows.iter().filter(|r| r.new).count();
    writeln!(
        out,
        "\ndemo store \"{}\": {} scenario(s), {added} new, {} already there",
        path.display(),
        built.rows.len(),
        built.rows.len() - added
    )?;
    let keys: Vec<String> = built
        .reviewer_keys
        .iter()
        .map(|k| format!("\"{}\"", k.display()))
        .collect();
    writeln!(out, "demo reviewers (approvers): {}", keys.join(", "))?;
    if let Some(alice) = built.reviewer_keys.first() {
        writeln!(
            out,
            "review it: cq review --store \"{}\" --key \"{}\"",
            path.display(),
            alice.display()
        )?;
    }
    Ok(())
}
