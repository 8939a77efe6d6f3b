//! `cq hook claude-code|codex`: one hook payload on standard input, the runtime's JSON answer
//! on standard output ([`crate::service::hooks`]); and `cq hook install`, which merges cq's
//! entries into the runtime's settings without losing what is there.
//!
//! A payload cannot be read (not JSON, a field missing): the error goes to standard error and
//! the exit code is 2, which both runtimes treat as a blocking error (a tool call is refused).

use std::io::{Read, Write};
use std::path::PathBuf;

use anyhow::Context;

use crate::agents::hooks::{parse_hook_input, HookEvent, MAX_HOOK_INPUT_BYTES};
use crate::agents::settings::{self, HookInstall, Scope};
use crate::agents::Runtime;
use crate::cli::{HookCommand, HookInstallArgs, HookRunArgs, PolicyArgs};
use crate::service::hooks::{answer, pre_tool_use, HookEnv};

use super::import::runtime;
use super::{policy, store, Exit, Output};

pub fn run(command: &HookCommand, out: &mut Output) -> anyhow::Result<Exit> {
    match command {
        HookCommand::ClaudeCode(args) => respond(Runtime::ClaudeCode, args, out),
        HookCommand::Codex(args) => respond(Runtime::Codex, args, out),
        HookCommand::Install(args) => install(args, out),
    }
}

fn respond(runtime: Runtime, args: &HookRunArgs, out: &mut Output) -> anyhow::Result<Exit> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .take(MAX_HOOK_INPUT_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .context("while reading the hook payload from standard input")?;
    let input = parse_hook_input(runtime, &bytes)?;
    let choice = PolicyArgs::from(&args.policy);
    let store_path = store::path(&args.store)?;
    let reply = match &input.event {
        // Every tool call: the policy's `[agents]` table is all it reads of the policy.
        HookEvent::PreToolUse { tool_name, .. } => pre_tool_use(
            &input,
            tool_name,
            &policy::agents(&choice)?,
            &store_path,
            args.store.store_key.as_deref(),
        ),
        _ => answer(
            &input,
            &HookEnv {
                store_path: &store_path,
                store_key: args.store.store_key.clone(),
                policy: &policy::resolve(&choice)?,
            },
        ),
    };
    writeln!(out, "{reply}")?;
    Ok(Exit::Success)
}

fn install(args: &HookInstallArgs, out: &mut Output) -> anyhow::Result<Exit> {
    let runtime = runtime(args.runtime);
    let scope = if args.user {
        Scope::User
    } else {
        Scope::Project
    };
    let home = directories::BaseDirs::new()
        .map(|d| d.home_dir().to_path_buf())
        .ok_or_else(|| anyhow::anyhow!("no home directory for this user"))?;
    let config_home = match runtime {
        Runtime::ClaudeCode => std::env::var_os("CLAUDE_CONFIG_DIR"),
        Runtime::Codex => std::env::var_os("CODEX_HOME"),
    }
    .map(PathBuf::from);
    let project = std::env::current_dir().context("while reading the current directory")?;
    let path = settings::settings_path(runtime, scope, &project, &home, config_home.as_deref());
    let program = match &args.program {
        Some(p) => p.clone(),
        None => std::env::current_exe().context("while finding the cq program")?,
    };
    let spec = HookInstall::new(runtime, &program.display().to_string());
    let before = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e).with_context(|| format!("while reading \"{}\"", path.display())),
    };
    let after = if args.uninstall {
        settings::uninstall(&before, &spec)
    } else {
        settings::install(&before, &spec)
    }
    .with_context(|| format!("in \"{}\"", path.display()))?;
    if after == before {
        writeln!(
            out,
            "\"{}\" already {}",
            path.display(),
            if args.uninstall {
                "has no cq hooks"
            } else {
                "runs cq's hooks"
            }
        )?;
        return Ok(Exit::Success);
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("while creating \"{}\"", dir.display()))?;
    }
    let temp = path.with_extension("json.cq-new");
    std::fs::write(&temp, &after)
        .with_context(|| format!("while writing \"{}\"", temp.display()))?;
    std::fs::rename(&temp, &path)
        .with_context(|| format!("while replacing \"{}\"", path.display()))?;
    writeln!(
        out,
        "{} cq's hooks {} \"{}\" ({})",
        if args.uninstall {
            "removed"
        } else {
            "installed"
        },
        if args.uninstall { "from" } else { "in" },
        path.display(),
        spec.command()
    )?;
    Ok(Exit::Success)
}
