//! The commands behind the CLI: each reads its input at the edge, calls the library, and
//! returns an exit code. Errors bubble up to `main` as exit code 2.

pub mod check;
pub mod demo;
pub mod digest;
pub mod ingest;
pub mod input;
pub mod policy;
pub mod prompt;
pub mod queue;
pub mod recheck;
pub mod record;
pub mod review;
pub mod scan;

use crate::cli::{Cli, Command, PolicyCommand};

/// Runs one parsed command line; the exit code on success.
pub fn run(cli: Cli) -> anyhow::Result<u8> {
    match cli.command {
        Command::Check(args) => check::run(&args),
        Command::Digest(args) => digest::run(&args),
        Command::Policy(PolicyCommand::Prompt(args)) => policy::prompt(&args),
        Command::Policy(PolicyCommand::Show(args)) => policy::show(&args),
        Command::Policy(PolicyCommand::Sign { key, file }) => policy::sign(&key, &file),
        Command::Policy(PolicyCommand::Verify { file, trust_keys }) => {
            policy::verify(&file, &trust_keys)
        }
        Command::Scan(args) => scan::run(&args).map(|code| code as u8),
        Command::Store(command) => queue::run(&command),
        Command::Audit(command) => queue::audit(&command),
        Command::Keys(command) => queue::keys(&command),
        Command::Reviewers(command) => queue::reviewers(&command),
        Command::Review(args) => review::run(&args),
        Command::Demo(args) => demo::run(&args),
    }
}
