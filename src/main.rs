//! The `cq` binary: parse the command line, run the command, map the result to an exit
//! code (0 accepted / clean, 1 quarantined / findings / tamper, 2 refused or error). A
//! closed pipe on standard output is not an error.

use std::process::ExitCode;

use clap::Parser;

/// The gate builds and frees many small strings per call, which the system allocator showed as
/// a sixth of its profile; `cargo bench --bench gate` measures with this allocator too.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = cq::cli::Cli::parse();
    match cq::commands::run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            if err.chain().any(|cause| {
                cause
                    .downcast_ref::<std::io::Error>()
                    .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
            }) {
                return ExitCode::SUCCESS;
            }
            eprintln!("cq: {err:#}");
            ExitCode::from(2)
        }
    }
}
