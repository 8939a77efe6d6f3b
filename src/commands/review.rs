//! `cq review`: placeholder until the reviewer UI is wired on this branch.

pub fn run(args: &crate::cli::ReviewArgs) -> anyhow::Result<u8> {
    let _ = args;
    anyhow::bail!("cq review is not wired yet")
}
