//! `cq digest [FILE|-] [--python]`: the canonical JSON text and SHA-256 of a document, as
//! runtimes need them for source digests. Strict by default; `--python` reads as CPython's
//! `json.loads` does.

use std::io::Write;

use anyhow::Context;

use crate::cli::DigestArgs;
use crate::json::{self, Limits};

use super::{input, Exit, Output};

/// Largest document digested.
const MAX_BYTES: usize = 256 << 20;

pub fn run(args: &DigestArgs, out: &mut Output) -> anyhow::Result<Exit> {
    let bytes = input::read(args.input.as_ref(), MAX_BYTES)?;
    let name = input::name(args.input.as_ref());
    let value = if args.python {
        json::parse_python(&bytes)
    } else {
        json::parse(
            &bytes,
            &Limits {
                max_bytes: MAX_BYTES,
                max_depth: 512,
            },
        )
    }
    .with_context(|| format!("while parsing {name}"))?;
    let text = json::canonical(&value)
        .with_context(|| format!("while writing the canonical form of {name}"))?;
    writeln!(out, "{}", json::to_ascii(&text))?;
    writeln!(out, "sha256 {}", json::sha256_hex(text.as_bytes()))?;
    Ok(Exit::Success)
}
