//! How a bench runs a `cq` process: its number of workers, and whether it is pinned to the
//! first CPU (`taskset -c 0`), the one-core baseline the bulk and scan benches share.

use std::process::Command;

/// A run's `--jobs`, and whether it is pinned to one core.
#[derive(Clone, Copy)]
pub struct Variant {
    pub jobs: usize,
    pub pinned: bool,
}

impl Variant {
    /// `--jobs jobs`, not pinned.
    pub fn jobs(jobs: usize) -> Variant {
        Variant {
            jobs,
            pinned: false,
        }
    }

    /// `--jobs 1` pinned to the first CPU.
    pub fn one_core() -> Variant {
        Variant {
            jobs: 1,
            pinned: true,
        }
    }

    /// The `cq` binary, behind `taskset -c 0` when pinned (the caller adds `--jobs`).
    pub fn command(self) -> Command {
        match self.pinned {
            true => {
                let mut c = Command::new("taskset");
                c.args(["-c", "0", env!("CARGO_BIN_EXE_cq")]);
                c
            }
            false => Command::new(env!("CARGO_BIN_EXE_cq")),
        }
    }
}

/// Whether `taskset -c 0` runs here (a machine without it has no one-core rows).
pub fn pinning() -> bool {
    Command::new("taskset")
        .args(["-c", "0", "true"])
        .status()
        .is_ok_and(|s| s.success())
}
