//! `cq keys generate` and `cq reviewers add|list`: reviewer key pairs, and the reviewers a
//! store lets decide.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;

use crate::audit::{generate_key, NamedKey};
use crate::cli::{KeysCommand, ReviewersCommand};
use crate::sanitize::line;
use crate::store::{Mode, Role};

use super::{store, Exit, Output};

/// `cq keys generate --name NAME [--dir DIR]`.
pub fn generate(command: &KeysCommand, out: &mut Output) -> anyhow::Result<Exit> {
    let KeysCommand::Generate { name, dir } = command;
    let dir: PathBuf = match dir {
        Some(dir) => dir.clone(),
        None => directories::ProjectDirs::from("", "", "cq")
            .map(|d| d.config_dir().join("keys"))
            .ok_or_else(|| anyhow::anyhow!("no config directory for this user: pass --dir"))?,
    };
    let made = generate_key(name, &dir)?;
    writeln!(
        out,
        "secret key: {} (mode 0600, keep it private)\npublic key: {}\n{}\nregister it with: cq reviewers add {} {} --role reviewer",
        made.secret_path.display(),
        made.public_path.display(),
        made.verifier_key,
        line(name),
        made.verifier_key,
    )?;
    Ok(Exit::Success)
}

/// `cq reviewers add NAME PUBKEY --role reviewer|approver` and `cq reviewers list`.
pub fn reviewers(command: &ReviewersCommand, out: &mut Output) -> anyhow::Result<Exit> {
    match command {
        ReviewersCommand::Add {
            name,
            pubkey,
            role,
            key,
            store,
        } => {
            let role = Role::parse(role).with_context(|| {
                format!(
                    "role \"{}\" is unknown: use \"reviewer\" or \"approver\"",
                    line(role)
                )
            })?;
            let authoriser = match key {
                Some(path) => Some(NamedKey::load(path).with_context(|| {
                    format!("while loading the approver key \"{}\"", path.display())
                })?),
                None => None,
            };
            let r = store::open(store, Mode::ReadWrite)?.add_reviewer(
                name,
                pubkey,
                role,
                authoriser.as_ref(),
            )?;
            writeln!(
                out,
                "reviewer \"{}\" added as {} (key {}, receipt {})",
                line(&r.name),
                role.as_str(),
                r.key_id,
                r.receipt_seq
            )?;
        }
        ReviewersCommand::List { store } => {
            for r in store::open(store, Mode::ReadOnly)?.reviewers()? {
                writeln!(
                    out,
                    "{}\t{}\t{}",
                    line(&r.name),
                    r.role.as_str(),
                    line(&r.key_id)
                )?;
            }
        }
    }
    Ok(Exit::Success)
}
