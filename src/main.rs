//! The `cq` binary: parse the command line, run the command, map how it ended to an exit
//! code: 0 accepted / clean / verified / released, 1 quarantined / findings / tampered / not
//! released, 2 refused or failed. A closed standard output is not an error and does not
//! change the code (`cq check … | head -1` on a quarantined request still exits 1).

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use cq::cli::Command;
use cq::commands::{warn, Exit, Output};

/// The gate builds and frees many small strings per call, which the system allocator showed as
/// a sixth of its profile; `cargo bench --bench gate` measures with this allocator too. It is
/// built without transparent huge pages (`no_thp` in Cargo.toml): with them its arena faulted
/// in 2 MiB at a time, half of every short process's resident set, and a bulk scan was no
/// faster for them.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = cq::cli::Cli::parse();
    let mut out = Output::stdout();
    // The two front ends: the TUI (`review`, and `demo` once its store is built) and the CLI.
    let result = match cli.command {
        Command::Review(args) => cq::review::launch::run(&args).map(|()| Exit::Success),
        Command::Demo(args) => match cq::commands::demo::run(&args, &mut out) {
            Ok(Some(review)) => out
                .flush()
                .map_err(anyhow::Error::from)
                .and_then(|()| cq::review::launch::run(&review))
                .map(|()| Exit::Success),
            Ok(None) => Ok(Exit::Success),
            Err(e) => Err(e),
        },
        command => cq::commands::run(command, &mut out),
    };
    let flushed = out.flush();
    match result.and_then(|exit| flushed.map(|()| exit).map_err(Into::into)) {
        Ok(Exit::Success) => ExitCode::SUCCESS,
        Ok(
            Exit::Quarantined
            | Exit::Findings
            | Exit::Tampered
            | Exit::NotReleased
            | Exit::SomeRefused,
        ) => ExitCode::from(1),
        Err(err) => {
            warn(&cq::service::redact::error_message(&format!("{err:#}")));
            if cq::store::is_tamper(&err) {
                ExitCode::from(1)
            } else {
                ExitCode::from(2)
            }
        }
    }
}
