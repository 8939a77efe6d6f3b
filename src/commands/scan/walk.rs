//! A directory scan: the walk (sorted, recursive, without following symbolic links or entering
//! `.git`), then the files read and scanned in parallel on the current rayon pool, a bounded
//! batch at a time, results kept in path order. A file that cannot be read, is larger than
//! `cq scan FILE` reads (1 GiB), holds a NUL byte in its first 8 KiB, or is not UTF-8 is
//! reported as skipped, and the scan goes on.

use std::path::{Path, PathBuf};

use anyhow::Context;
use rayon::prelude::*;

use super::{
    json_document, relative, scan_json_document, text_scanned, Report, Scanned, Skipped,
    MAX_SCAN_BYTES,
};
use crate::commands::input::read_file_capped;
use crate::scan::bulk::SPLIT_ABOVE;
use crate::scan::Scanner;

/// Bytes looked at for a NUL byte, the mark of a binary file.
const BINARY_PROBE: usize = 8 << 10;

/// What the walk found: files to scan, and entries skipped on the way.
#[derive(Debug, Default)]
struct Walk {
    /// Each file and its size when walked.
    files: Vec<(PathBuf, u64)>,
    skipped: Vec<Skipped>,
}

/// How many files are read before they are scanned: at most `bytes` of them (by their size
/// when walked; a larger file is read alone) and at most `files`; and the most of one file
/// that is read (a larger one is skipped, as `cq scan FILE` refuses it).
#[derive(Debug, Clone, Copy)]
struct Batch {
    bytes: u64,
    files: usize,
    file_bytes: usize,
}

const BATCH: Batch = Batch {
    bytes: 16 << 20,
    files: 4096,
    file_bytes: MAX_SCAN_BYTES,
};

/// Scans every file under `root`.
pub(super) fn scan_dir(scanner: &Scanner, root: &Path) -> anyhow::Result<Report> {
    scan_dir_in(scanner, root, BATCH)
}

fn scan_dir_in(scanner: &Scanner, root: &Path, batch: Batch) -> anyhow::Result<Report> {
    // The root itself must be readable; below it, what cannot be read is reported.
    std::fs::read_dir(root)
        .with_context(|| format!("while reading the directory \"{}\"", root.display()))?;
    let mut walk = Walk::default();
    visit(root, root, &mut walk);
    let mut report = Report {
        files: Some(0),
        skipped: walk.skipped,
        ..Report::default()
    };
    let mut scanned = 0;
    for files in batches(&walk.files, batch) {
        for result in scan_batch(scanner, root, files, batch.file_bytes) {
            match result {
                Ok(found) => {
                    scanned += 1;
                    report.scanned.findings.extend(found.findings);
                    report.scanned.lines.extend(found.lines);
                }
                Err(skipped) => report.skipped.push(skipped),
            }
        }
    }
    report.files = Some(scanned);
    report.skipped.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(report)
}

/// The walk's files in batches, in path order.
fn batches(files: &[(PathBuf, u64)], batch: Batch) -> Vec<&[(PathBuf, u64)]> {
    let mut out = Vec::new();
    let (mut start, mut bytes) = (0, 0u64);
    for (i, (_, size)) in files.iter().enumerate() {
        let full = i - start >= batch.files || bytes.saturating_add(*size) > batch.bytes;
        if i > start && full {
            out.push(&files[start..i]);
            (start, bytes) = (i, 0);
        }
        bytes = bytes.saturating_add(*size);
    }
    if start < files.len() {
        out.push(&files[start..]);
    }
    out
}

/// A file of a batch once read: scanned already (a JSON document, a text large enough to be
/// scanned in chunks, or skipped), or a text for the batch's scan.
enum Read {
    Done(Result<Scanned, Skipped>),
    Text { name: String, text: String },
}

/// Reads a batch's files on the current pool, then scans its texts with the parts of each
/// scan as tasks of their own (see [`Scanner::scan_texts`]); results in the batch's order.
fn scan_batch(
    scanner: &Scanner,
    root: &Path,
    batch: &[(PathBuf, u64)],
    max_bytes: usize,
) -> Vec<Result<Scanned, Skipped>> {
    let read: Vec<Read> = batch
        .par_iter()
        .map(|(path, _)| match read_file(root, path, max_bytes) {
            Err(skipped) => Read::Done(Err(skipped)),
            Ok((name, text)) => match json_document(&text) {
                Some(value) => Read::Done(Ok(scan_json_document(scanner, Some(&name), &value))),
                None if text.len() > SPLIT_ABOVE => {
                    Read::Done(Ok(text_scanned(&text, scanner.scan_chunked(&name, &text))))
                }
                None => Read::Text { name, text },
            },
        })
        .collect();
    let fields: Vec<(&str, &str)> = read
        .iter()
        .filter_map(|r| match r {
            Read::Text { name, text } => Some((name.as_str(), text.as_str())),
            Read::Done(_) => None,
        })
        .collect();
    let mut found = scanner.scan_texts(&fields).into_iter();
    read.into_iter()
        .map(|r| match r {
            Read::Done(result) => result,
            Read::Text { text, .. } => Ok(text_scanned(&text, found.next().unwrap_or_default())),
        })
        .collect()
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
            Some(k) if k.is_file() => {
                let size = std::fs::symlink_metadata(&path).map_or(0, |m| m.len());
                walk.files.push((path, size));
            }
            Some(_) => skip(walk, &path, "not a regular file".into()),
            None => skip(walk, &path, "cannot read the directory entry".into()),
        }
    }
}

/// Reads one file of at most `max_bytes` as text with its name, or says why it is skipped.
fn read_file(root: &Path, path: &Path, max_bytes: usize) -> Result<(String, String), Skipped> {
    let name = relative(root, path);
    let skipped = |reason: String| Skipped {
        path: name.clone(),
        reason,
    };
    let bytes = read_file_capped(path, max_bytes)
        .map_err(|e| skipped(format!("cannot read it: {e}")))?
        .ok_or_else(|| {
            skipped(format!(
                "larger than {max_bytes} bytes, the most cq reads of one file: not scanned"
            ))
        })?;
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
    Ok((name, text))
}

#[cfg(test)]
mod tests {
    use super::super::scan_document;
    use super::*;

    #[test]
    fn batches_cover_the_files_in_order_within_their_bounds() {
        let sizes = [5u64, 0, 7, 30, 1, 1, 1, 1, 9, 2, 8];
        let files: Vec<(PathBuf, u64)> = sizes
            .iter()
            .enumerate()
            .map(|(i, &n)| (PathBuf::from(format!("f{i}")), n))
            .collect();
        for limit in [
            Batch {
                bytes: 10,
                files: 3,
                ..BATCH
            },
            Batch {
                bytes: 1,
                files: 100,
                ..BATCH
            },
            Batch {
                bytes: 1000,
                files: 1,
                ..BATCH
            },
            BATCH,
        ] {
            let cut = batches(&files, limit);
            assert_eq!(cut.concat(), files, "{limit:?}");
            for b in &cut {
                let bytes: u64 = b.iter().map(|(_, n)| n).sum();
                assert!(!b.is_empty() && b.len() <= limit.files, "{limit:?}");
                assert!(b.len() == 1 || bytes <= limit.bytes, "{limit:?}: {b:?}");
            }
        }
        assert!(batches(&[], BATCH).is_empty());
    }

    #[test]
    fn a_directory_in_batches_finds_what_each_file_scanned_alone_finds() {
        let dir = tempfile::tempdir().unwrap();
        let put = |name: &str, bytes: &[u8]| {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, bytes).unwrap();
        };
        let secret = "ghp_aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6";
        let mut big = String::new();
        while big.len() <= SPLIT_ABOVE {
            big.push_str("a line of a large log, a mail jo.ann@corp-mail.net and more words\n");
        }
        put("a/big.log", big.as_bytes());
        put(
            "a/config.json",
            format!("{{\"password\": \"S3cr3t-Pa55w0rd!\", \"t\": \"{secret}\"}}").as_bytes(),
        );
        put("a/binary.bin", b"\x00\x01 GITHUB_TOKEN");
        put("a/latin1.txt", b"caf\xe9 token");
        put("b/empty.txt", b"");
        for i in 0..12 {
            let body = format!("note {i}\nGITHUB_TOKEN={secret}\ncall 415-555-01{i:02}, Card 4111 1111 1111 1111\n");
            put(&format!("b/n{i:02}.md"), body.as_bytes());
        }
        let scanner = Scanner::builtin().unwrap();
        let mut walk = Walk::default();
        visit(dir.path(), dir.path(), &mut walk);
        let mut expected = Scanned::default();
        let mut skipped = walk.skipped.clone();
        for (path, _) in &walk.files {
            match read_file(dir.path(), path, MAX_SCAN_BYTES) {
                Ok((name, text)) => {
                    let found = scan_document(&scanner, Some(&name), &text);
                    expected.findings.extend(found.findings);
                    expected.lines.extend(found.lines);
                }
                Err(s) => skipped.push(s),
            }
        }
        skipped.sort_by(|a, b| a.path.cmp(&b.path));
        assert!(expected.findings.len() > 30, "{}", expected.findings.len());
        assert_eq!(skipped.len(), 2, "{skipped:?}");
        for threads in [1, 2, 3] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            for limit in [
                BATCH,
                Batch {
                    bytes: 200,
                    files: 5,
                    ..BATCH
                },
                Batch {
                    bytes: 1,
                    files: 1,
                    ..BATCH
                },
            ] {
                let report = pool
                    .install(|| scan_dir_in(&scanner, dir.path(), limit))
                    .unwrap();
                let case = format!("{threads} threads, {limit:?}");
                assert_eq!(report.scanned.findings, expected.findings, "{case}");
                assert_eq!(report.scanned.lines, expected.lines, "{case}");
                assert_eq!(report.skipped, skipped, "{case}");
                assert_eq!(report.files, Some(walk.files.len() - 2), "{case}");
            }
        }
    }
    #[test]
    fn a_file_over_the_cap_is_skipped_and_the_rest_scanned() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("big.txt"), "GITHUB_TOKEN=x ".repeat(10)).unwrap();
        std::fs::write(
            dir.path().join("small.txt"),
            "mail jane.doe@corp-mail.net\n",
        )
        .unwrap();
        let scanner = Scanner::builtin().unwrap();
        let limit = Batch {
            file_bytes: 100,
            ..BATCH
        };
        let report = scan_dir_in(&scanner, dir.path(), limit).unwrap();
        assert_eq!(report.files, Some(1));
        assert_eq!(report.skipped.len(), 1, "{:?}", report.skipped);
        assert_eq!(report.skipped[0].path, "big.txt");
        assert!(report.skipped[0].reason.contains("larger than 100 bytes"));
        assert!(report
            .scanned
            .findings
            .iter()
            .all(|f| f.field_path == "small.txt"));
        assert!(!report.scanned.findings.is_empty());
    }
}
