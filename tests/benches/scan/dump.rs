//! `CQ_BENCH_DUMP=FILE cargo bench --bench scan`: every finding the scanner reports over the
//! bench corpus and the test corpora (`tests/scan-corpus`, `../shared/scan-corpus`,
//! `tests/prose`, `tests/benign-code`), under the default rules, every rule, and `PII` alone,
//! one line per finding (selection, source, field, span, rule, category, confidence; never a
//! value). Two builds whose dumps are byte-identical find the same things; the dump uses only
//! the scanner's public API, so the same file builds against older commits for a comparison.

use std::fmt::Write as _;
use std::path::Path;

use cq::scan::{Finding, Scanner};

/// The selections dumped: name and the scanner.
fn selections(builtin: &Scanner) -> Vec<(&'static str, Scanner)> {
    let all = builtin.entity_types();
    let names: Vec<&str> = all.iter().map(String::as_str).collect();
    let every = builtin
        .for_entity_types(&names)
        .expect("every entity type is supported");
    let pii = builtin
        .for_entity_types(&["PII"])
        .expect("PII is supported");
    vec![("default", builtin.clone()), ("every", every), ("pii", pii)]
}

fn push(out: &mut String, selection: &str, source: &str, findings: &[Finding]) {
    for f in findings {
        let _ = writeln!(
            out,
            "{selection}\t{source}\t{}\t{}..{}\t{}\t{}\t{}",
            f.field_path, f.span.start, f.span.end, f.rule_id, f.category, f.confidence
        );
    }
}

/// The corpora's text files, as `(name, text)`, in a fixed order.
fn text_files(root: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for dir in ["tests/prose", "tests/benign-code"] {
        let mut names: Vec<_> = std::fs::read_dir(root.join(dir))
            .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        names.sort();
        for path in names {
            if let Ok(text) = std::fs::read_to_string(&path) {
                out.push((format!("{dir}/{}", file_name(&path)), text));
            }
        }
    }
    out
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The labelled rows of every `*.jsonl` file under the two scan corpora: `(source, row)`.
fn corpus_rows(root: &Path) -> Vec<(String, cq::json::Value)> {
    let limits = cq::json::Limits {
        max_bytes: 1 << 24,
        max_depth: 64,
    };
    let mut out = Vec::new();
    for dir in ["tests/scan-corpus", "../shared/scan-corpus"] {
        let mut names: Vec<_> = std::fs::read_dir(root.join(dir))
            .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        names.retain(|p| p.extension().is_some_and(|e| e == "jsonl"));
        names.sort();
        for path in names {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            for (n, line) in text.lines().enumerate() {
                if let Ok(row) = cq::json::parse(line.as_bytes(), &limits) {
                    out.push((format!("{dir}/{}:{}", file_name(&path), n + 1), row));
                }
            }
        }
    }
    out
}

/// Writes the dump to `file` and returns how many findings it holds.
pub fn write(file: &Path, corpus: &str, fields: &[&str]) -> std::io::Result<usize> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let builtin = Scanner::builtin().expect("built-in rules compile");
    let texts = text_files(root);
    let rows = corpus_rows(root);
    let mut out = String::new();
    for (selection, scanner) in selections(&builtin) {
        for (i, field) in fields.iter().enumerate() {
            let path = format!("bench/{i}");
            push(
                &mut out,
                selection,
                "bench-fields",
                &scanner.scan_text(&path, field),
            );
        }
        push(
            &mut out,
            selection,
            "bench-whole",
            &scanner.scan_text("bench", corpus),
        );
        for (name, text) in &texts {
            push(&mut out, selection, name, &scanner.scan_text(name, text));
        }
        for (source, row) in &rows {
            if let Some(text) = row.get("text").and_then(cq::json::Value::as_str) {
                push(
                    &mut out,
                    selection,
                    source,
                    &scanner.scan_text("text", text),
                );
            }
            push(&mut out, selection, source, &scanner.scan_json(row));
        }
    }
    std::fs::write(file, &out)?;
    Ok(out.lines().count())
}
