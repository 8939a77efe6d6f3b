//! Reading a command's input: a file, or standard input for `-` or no path, with the
//! path named in every error.

use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::Context;

/// The bytes of `path`, or of standard input when it is `None` or `-`.
pub fn read(path: Option<&PathBuf>) -> anyhow::Result<Vec<u8>> {
    match path.filter(|p| p.as_os_str() != "-") {
        Some(path) => {
            std::fs::read(path).with_context(|| format!("while reading \"{}\"", path.display()))
        }
        None => {
            let mut bytes = Vec::new();
            std::io::stdin()
                .read_to_end(&mut bytes)
                .context("while reading standard input")?;
            Ok(bytes)
        }
    }
}

/// How an input is named in messages.
pub fn name(path: Option<&PathBuf>) -> String {
    match path.filter(|p| p.as_os_str() != "-") {
        Some(path) => format!("\"{}\"", Path::new(path).display()),
        None => "standard input".to_owned(),
    }
}
