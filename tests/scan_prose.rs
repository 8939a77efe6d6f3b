//! False positives on benign prose: real documentation nobody here wrote (`tests/prose/`, see
//! its ORIGIN.md). Reports flags per MB by rule and asserts at most one flag per MB.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::Path;

use cq::scan::Scanner;

#[test]
fn benign_prose_flags_per_mb() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/prose");
    let scanner = Scanner::builtin().unwrap();
    let show = std::env::var_os("CQ_SCAN_MISSES").is_some();
    let mut bytes = 0usize;
    let mut by_rule: BTreeMap<String, usize> = BTreeMap::new();
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().is_some_and(|n| n != "ORIGIN.md"))
        .collect();
    names.sort();
    let workers = std::thread::available_parallelism()
        .map_or(2, usize::from)
        .max(1);
    for path in names {
        let text = std::fs::read_to_string(&path).unwrap();
        bytes += text.len();
        // Scan in line-aligned pieces on all cores (the test runs in debug).
        let mut pieces = Vec::new();
        let mut start = 0;
        while start < text.len() {
            let mut end = (start + text.len() / workers + 1).min(text.len());
            while end < text.len() && !text.is_char_boundary(end) {
                end += 1;
            }
            end = text[end..].find('\n').map_or(text.len(), |i| end + i + 1);
            pieces.push(start..end);
            start = end;
        }
        let found: Vec<cq::scan::Finding> = std::thread::scope(|scope| {
            let handles: Vec<_> = pieces
                .iter()
                .map(|r| {
                    let (scanner, text, r) = (&scanner, &text, r.clone());
                    scope.spawn(move || {
                        let mut fs = scanner.scan_text("prose", &text[r.clone()]);
                        for f in &mut fs {
                            f.span = f.span.start + r.start..f.span.end + r.start;
                        }
                        fs
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap())
                .collect()
        });
        for f in found {
            if show {
                let line_start = text[..f.span.start].rfind('\n').map_or(0, |i| i + 1);
                let line_end = text[f.span.end..]
                    .find('\n')
                    .map_or(text.len(), |i| f.span.end + i);
                println!("{} | {}", f.rule_id, &text[line_start..line_end]);
            }
            *by_rule.entry(f.rule_id).or_default() += 1;
        }
    }
    let total: usize = by_rule.values().sum();
    let mb = bytes as f64 / 1_000_000.0;
    println!(
        "benign prose: {bytes} bytes, {total} flags, {:.2} flags per MB",
        total as f64 / mb
    );
    for (rule, n) in &by_rule {
        println!("  {rule}: {n}");
    }
    assert!(mb > 2.0, "the prose set should be a few MB");
    assert!(
        total as f64 / mb <= 1.0,
        "{total} flags in {mb:.2} MB of benign prose"
    );
}
