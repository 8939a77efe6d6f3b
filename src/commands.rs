//! The CLI front end: each command reads its input at the edge, calls the application layer
//! ([`crate::service`]) or a lower layer, formats the result and writes it to the command's
//! [`Output`]. A command returns an [`Exit`]; errors bubble up to `main`, which alone turns
//! both into a process exit code. Untrusted text reaches the terminal only through
//! [`crate::sanitize`].

pub mod audit;
pub mod check;
pub mod decide;
pub mod demo;
pub mod digest;
pub mod hook;
pub mod import;
pub mod ingest;
pub mod input;
pub mod jobs;
pub mod keys;
pub mod list;
pub mod output;
pub mod policy;
pub mod prompt;
pub mod recheck;
pub mod scan;
pub mod status;
pub mod store;
pub mod store_copy;

pub use output::{warn, Output};

use crate::cli::{Command, PolicyCommand, StoreAdminCommand, StoreCommand};

/// How a command ended, when it did not fail. `main.rs` maps these to exit codes: success is
/// 0, every other variant 1; an error is 2 (or 1 when the store was found tampered with).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Accepted, clean, verified, released: the caller may go on.
    Success,
    /// The gate quarantined the compaction; the fallback was printed.
    Quarantined,
    /// The scan found secrets or personal data.
    Findings,
    /// `cq audit verify` (or a policy signature) found something wrong.
    Tampered,
    /// `cq status`: the compaction is quarantined or rejected, nothing to inject.
    NotReleased,
    /// `cq ingest`: some lines were bad (the rest were recorded).
    SomeRefused,
}

/// Runs one command, writing its output to `out`. `review` (and `demo`'s reviewer) are the
/// TUI's: `main` starts those.
pub fn run(command: Command, out: &mut Output) -> anyhow::Result<Exit> {
    match command {
        Command::Check(args) => check::run(&args, out),
        Command::Digest(args) => digest::run(&args, out),
        Command::Policy(PolicyCommand::Prompt(args)) => policy::prompt(&args, out),
        Command::Policy(PolicyCommand::Show(args)) => policy::show(&args, out),
        Command::Policy(PolicyCommand::Sign { key, file }) => policy::sign(&key, &file, out),
        Command::Policy(PolicyCommand::Verify { file, trust_keys }) => {
            policy::verify(&file, &trust_keys, out)
        }
        Command::Scan(args) => {
            let found = scan::run(&args, out)? != 0;
            Ok(if found { Exit::Findings } else { Exit::Success })
        }
        Command::Store(command) => store_command(command, out),
        Command::StoreAdmin(StoreAdminCommand::Copy(args)) => store_copy::run(&args, out),
        Command::Audit(command) => audit::run(&command, out),
        Command::Keys(command) => keys::generate(&command, out),
        Command::Reviewers(command) => keys::reviewers(&command, out),
        Command::Import(args) => import::run(&args, out),
        Command::Hook(command) => hook::run(&command, out),
        Command::Review(_) => anyhow::bail!("`cq review` opens the terminal UI, which main starts"),
        Command::Demo(args) => demo::run(&args, out).map(|_| Exit::Success),
    }
}

fn store_command(command: StoreCommand, out: &mut Output) -> anyhow::Result<Exit> {
    match command {
        StoreCommand::List {
            store,
            status,
            json,
            limit,
        } => list::list(&store, status.as_deref(), json, limit, out),
        StoreCommand::Show { id, store, json } => list::show(&store, &id, json, out),
        StoreCommand::Decide {
            id,
            release,
            reason,
            note,
            key,
            report,
            store,
            policy,
            ..
        } => decide::run(
            &decide::Args {
                id: &id,
                release,
                reason: &reason,
                note: &note,
                key: &key,
                report: report.as_deref(),
            },
            &store,
            &policy,
            out,
        ),
        StoreCommand::Status { id, store, policy } => status::run(&id, &store, &policy, out),
        StoreCommand::Ingest {
            file,
            jobs,
            store,
            policy,
        } => ingest::run(&file, jobs, &store, &policy, out),
        StoreCommand::Recheck {
            id,
            all,
            override_policy,
            jobs,
            store,
            policy,
        } => {
            let under = recheck::Under {
                override_policy,
                policy: &policy,
            };
            recheck::run(id.as_deref(), all, jobs, &store, &under, out)
        }
    }
}
