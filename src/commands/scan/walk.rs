//! A directory scan: the walk (sorted, recursive, without following symbolic links or entering
//! `.git`), then every file read and scanned in parallel on the current rayon pool, results
//! kept in path order. A file that cannot be read, holds a NUL byte in its first 8 KiB, or is
//! not UTF-8 is reported as skipped, and the scan goes on.

use std::path::{Path, PathBuf};

use anyhow::Context;
use rayon::prelude::*;

use super::{relative, scan_document, Report, Scanned, Skipped};
use crate::scan::Scanner;

/// Bytes looked at for a NUL byte, the mark of a binary file.
const BINARY_PROBE: usize = 8 << 10;

/// What the walk found: files to scan, and entries skipped on the way.
#[derive(Debug, Default)]
struct Walk {
    files: Vec<PathBuf>,
    skipped: Vec<Skipped>,
}

/// Scans every file under `root`.
pub(super) fn scan_dir(scanner: &Scanner, root: &Path) -> anyhow::Result<Report> {
    // The root itself must be readable; below it, what cannot be read is reported.
    std::fs::read_dir(root)
        .with_context(|| format!("while reading the directory \"{}\"", root.display()))?;
    let mut walk = Walk::default();
    visit(root, root, &mut walk);
    let results: Vec<Result<Scanned, Skipped>> = walk
        .files
        .par_iter()
        .map(|path| scan_file(scanner, root, path))
        .collect();
    let mut report = Report {
        files: Some(0),
        skipped: walk.skipped,
        ..Report::default()
    };
    let mut scanned = 0;
    for result in results {
        match result {
            Ok(found) => {
                scanned += 1;
                report.scanned.findings.extend(found.findings);
                report.scanned.lines.extend(found.lines);
            }
            Err(skipped) => report.skipped.push(skipped),
        }
    }
    report.files = Some(scanned);
    report.skipped.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(report)
}

/// Collects the files under `dir`, in path order.
fn visit(root: &Path, dir: &Path, walk: &mut Walk) {
    let skip = |walk: &mut Walk, path: &Path, reason: String| {
        walk.skipped.push(Skipped {
            path: relative(root, path),
            reason,
        });
    };
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => return skip(walk, dir, format!("cannot read the directory: {e}")),
    };
    let mut children: Vec<(PathBuf, Option<std::fs::FileType>)> = entries
        .map(|e| match e {
            Ok(e) => (e.path(), e.file_type().ok()),
            Err(_) => (dir.to_path_buf(), None),
        })
        .collect();
    children.sort_by(|a, b| a.0.cmp(&b.0));
    for (path, kind) in children {
        match kind {
            Some(k) if k.is_symlink() => {
                skip(walk, &path, "symbolic link, not followed".into());
            }
            Some(k) if k.is_dir() && path.file_name().is_some_and(|n| n == ".git") => {
                skip(walk, &path, "version-control directory, not scanned".into());
            }
            Some(k) if k.is_dir() => visit(root, &path, walk),
            Some(k) if k.is_file() => walk.files.push(path),
            Some(_) => skip(walk, &path, "not a regular file".into()),
            None => skip(walk, &path, "cannot read the directory entry".into()),
        }
    }
}

/// Reads and scans one file, or says why it was skipped.
fn scan_file(scanner: &Scanner, root: &Path, path: &Path) -> Result<Scanned, Skipped> {
    let name = relative(root, path);
    let skipped = |reason: String| Skipped {
        path: name.clone(),
        reason,
    };
    let bytes = std::fs::read(path).map_err(|e| skipped(format!("cannot read it: {e}")))?;
    let probe = &bytes[..bytes.len().min(BINARY_PROBE)];
    if probe.contains(&0) {
        return Err(skipped("binary file (NUL byte)".into()));
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        skipped(format!(
            "not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        ))
    })?;
    Ok(scan_document(scanner, Some(&name), &text))
}
