//! `cq scan [FILE|DIR|-] [--json] [--rules DIR] [--entity-types LIST] [--jobs N]`: scan a
//! file, a directory (recursively) or stdin, and print masked findings.
//!
//! The matched value never reaches the terminal: each finding prints its rule, category,
//! field, byte span, line and confidence, and a fixed-width mask in place of the value. The
//! scan runs on a pool of `--jobs` threads (default: every core): a directory's files in
//! parallel, a large file in chunks split on line boundaries (`scan::bulk`), with spans and
//! lines mapped back to the file. Files print in path order and findings in span order,
//! whatever the number of threads. In a directory, binary, non-UTF-8 and unreadable files are
//! reported and skipped, never fatal.

mod walk;

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::cli::ScanArgs;
use crate::sanitize;
use crate::scan::{Finding, Scanner};

/// The mask printed instead of a matched value; fixed width so it reveals no length.
const MASK: &str = "********";

/// What one scanned text (stdin, a file, or a file of a directory) gave.
#[derive(Debug, Default)]
pub struct Scanned {
    pub findings: Vec<Finding>,
    /// The 1-based line of each finding's start, for text (not for a JSON document's strings).
    pub lines: Vec<Option<usize>>,
}

/// A file of a directory that was not scanned, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    pub path: String,
    pub reason: String,
}

/// Everything one `cq scan` found, in output order.
#[derive(Debug, Default)]
pub struct Report {
    pub scanned: Scanned,
    /// For a directory: how many files were scanned, and those that were not.
    pub files: Option<usize>,
    pub skipped: Vec<Skipped>,
}

/// Scans the input `args` names and prints masked findings (skipped files to stderr). Returns
/// the exit code: 0 clean, 1 findings. Errors become exit code 2 in `main`.
pub fn run(args: &ScanArgs, out: &mut dyn Write) -> anyhow::Result<i32> {
    let pool = super::jobs::pool(args.jobs)?;
    let load = || scanner(args.rules.as_deref(), &args.entity_types);
    let (scanner, report) = match &args.input {
        Some(path) if path.as_os_str() != "-" && path.is_dir() => {
            let scanner = load()?;
            let report = pool.install(|| walk::scan_dir(&scanner, path))?;
            (scanner, report)
        }
        input => {
            let regular_file = input
                .as_ref()
                .filter(|p| p.as_os_str() != "-")
                .and_then(|p| std::fs::metadata(p).ok())
                .is_some_and(|m| m.is_file());
            let (text, scanner) = if regular_file {
                // Read (and checked to be UTF-8) on the pool while this thread loads the
                // rules; the rules' error, if any, is the one reported.
                super::jobs::alongside(&pool, || read_text(input.as_ref()), load)
            } else {
                // Standard input, a pipe or a device is read once the rules are loaded, so an
                // error in them is reported at once rather than when the input ends.
                let scanner = load()?;
                (read_input(input.as_ref()), Ok(scanner))
            };
            let (scanner, text) = (scanner?, text?);
            let report = Report {
                scanned: pool.install(|| scan_document(&scanner, None, &text)),
                ..Report::default()
            };
            (scanner, report)
        }
    };
    let mut err = std::io::stderr().lock();
    for s in &report.skipped {
        writeln!(err, "cq scan: skipped \"{}\": {}", shown(&s.path), s.reason)?;
    }
    let code = write_report(&report, args.json, &scanner, out);
    // The process exits next: freeing every compiled rule with its lazy-DFA caches, and every
    // finding, one allocation at a time, would only delay it (the scanner of a 10 MiB scan
    // alone: 11 M instructions on the main thread after the last line is printed).
    std::mem::forget(report);
    std::mem::forget(scanner);
    code
}

/// The text of the file `input` names. A file large enough to be scanned in chunks is read on
/// every thread of the current pool when it has more than one: most of reading it is faulting
/// in the pages it is read into.
fn read_text(input: Option<&PathBuf>) -> anyhow::Result<String> {
    let chunked = input
        .filter(|p| p.as_os_str() != "-")
        .and_then(|p| std::fs::metadata(p).ok())
        .is_some_and(|m| m.len() > crate::scan::bulk::SPLIT_ABOVE as u64);
    match input {
        Some(path) if chunked && rayon::current_num_threads() > 1 => {
            utf8_input(input, super::input::read_on_pool(path, MAX_SCAN_BYTES)?)
        }
        _ => read_input(input),
    }
}

/// The built-in pack or the rules in `rules`, narrowed to `entity_types` when any are given (an
/// unsupported type is an error, as in a scan policy).
pub fn scanner(
    rules: Option<&std::path::Path>,
    entity_types: &[String],
) -> anyhow::Result<Scanner> {
    let scanner = match rules {
        Some(dir) => Scanner::from_dir(dir)
            .with_context(|| format!("while loading rules from \"{}\"", dir.display()))?,
        None => Scanner::builtin().context("while loading the built-in rules")?,
    };
    if entity_types.is_empty() {
        return Ok(scanner);
    }
    let types: Vec<&str> = entity_types.iter().map(|t| t.trim()).collect();
    scanner.for_entity_types(&types).with_context(|| {
        format!(
            "--entity-types: choose from {}",
            scanner.entity_types().join(", ")
        )
    })
}

/// Scans `text` on the current thread pool and writes masked findings to `out`; the testable
/// core of [`run`] for one text.
pub fn run_on(
    text: &str,
    json: bool,
    scanner: &Scanner,
    out: &mut dyn Write,
) -> anyhow::Result<i32> {
    let report = Report {
        scanned: scan_document(scanner, None, text),
        ..Report::default()
    };
    write_report(&report, json, scanner, out)
}

/// Scans one document: a JSON object or array string by string (keys too) under each one's
/// path, member values with their names as context; anything else as one text, in chunks when
/// large. `name` (a file in a directory) prefixes every field path.
pub fn scan_document(scanner: &Scanner, name: Option<&str>, text: &str) -> Scanned {
    match json_document(text) {
        Some(value) => scan_json_document(scanner, name, &value),
        None => text_scanned(text, scanner.scan_chunked(name.unwrap_or("text"), text)),
    }
}

/// `text` as a JSON object or array, when it is one (anything else is scanned as text).
fn json_document(text: &str) -> Option<crate::json::Value> {
    let limits = crate::json::Limits {
        max_bytes: 256 << 20,
        max_depth: 512,
    };
    let looks_like_json = matches!(text.trim_start().as_bytes().first(), Some(b'{' | b'['));
    let document = match looks_like_json {
        true => crate::json::parse(text.as_bytes(), &limits).ok(),
        false => None,
    };
    document.filter(|v| {
        matches!(
            v,
            crate::json::Value::Object(_) | crate::json::Value::Array(_)
        )
    })
}

/// A JSON document's findings, string by string, each path prefixed by `name` (a file in a
/// directory).
fn scan_json_document(
    scanner: &Scanner,
    name: Option<&str>,
    value: &crate::json::Value,
) -> Scanned {
    let mut findings = scanner.scan_json(value);
    if let Some(name) = name {
        for f in &mut findings {
            f.field_path = format!("{name}:{}", f.field_path);
        }
    }
    let lines = vec![None; findings.len()];
    Scanned { findings, lines }
}

/// A text's findings with the line each starts on.
fn text_scanned(text: &str, findings: Vec<Finding>) -> Scanned {
    let lines = line_numbers(text, &findings);
    Scanned { findings, lines }
}

/// The 1-based line of each finding's start in `text`.
fn line_numbers(text: &str, findings: &[Finding]) -> Vec<Option<usize>> {
    let bytes = text.as_bytes();
    let (mut at, mut line) = (0, 1);
    findings
        .iter()
        .map(|f| {
            let start = f.span.start.min(bytes.len());
            if start < at {
                // Findings come in span order; one out of order is counted from the start.
                (at, line) = (0, 1);
            }
            line += memchr::memchr_iter(b'\n', &bytes[at..start]).count();
            at = start;
            Some(line)
        })
        .collect()
}

/// The largest single input `cq scan` reads (a directory's files are each read on their own).
const MAX_SCAN_BYTES: usize = 1 << 30;

fn read_input(input: Option<&PathBuf>) -> anyhow::Result<String> {
    utf8_input(input, super::input::read(input, MAX_SCAN_BYTES)?)
}

/// The input's bytes as text, or an error naming it and its first byte that is not UTF-8.
fn utf8_input(input: Option<&PathBuf>, bytes: Vec<u8>) -> anyhow::Result<String> {
    String::from_utf8(bytes).map_err(|e| {
        anyhow::anyhow!(
            "{} is not UTF-8 text (byte {}): scan text or JSON",
            super::input::name(input),
            e.utf8_error().valid_up_to()
        )
    })
}

/// Untrusted text (a field path holding a JSON key, a file name) as it may reach the terminal.
fn shown(s: &str) -> String {
    sanitize::line(s)
}

/// How much printed text [`write_report`] gathers before handing it on.
const FLUSH_AT: usize = 64 << 10;

fn write_report(
    report: &Report,
    json: bool,
    scanner: &Scanner,
    out: &mut dyn Write,
) -> anyhow::Result<i32> {
    let scanned = &report.scanned;
    if json {
        writeln!(out, "{}", render_json(scanner, report))?;
    } else {
        // Lines are written into one buffer, handed on every 64 KiB: a large scan prints
        // hundreds of thousands of them. Most findings share their field's path, shown once.
        let mut buffer = String::with_capacity(FLUSH_AT + 1024);
        let mut path: Option<(&str, String)> = None;
        for (f, line) in scanned.findings.iter().zip(&scanned.lines) {
            let field = match &path {
                Some((raw, shown_path)) if *raw == f.field_path => shown_path,
                _ => &path.insert((f.field_path.as_str(), shown(&f.field_path))).1,
            };
            let mut number = itoa::Buffer::new();
            for part in [&f.rule_id, "\t", f.category.as_str(), "\t", field, "\t"] {
                buffer.push_str(part);
            }
            buffer.push_str(number.format(f.span.start));
            buffer.push_str("..");
            buffer.push_str(number.format(f.span.end));
            buffer.push('\t');
            buffer.push_str(line.map_or("-", |l| number.format(l)));
            for part in ["\t", f.confidence.as_str(), "\t", MASK, "\n"] {
                buffer.push_str(part);
            }
            if buffer.len() >= FLUSH_AT {
                out.write_all(buffer.as_bytes())?;
                buffer.clear();
            }
        }
        out.write_all(buffer.as_bytes())?;
        if scanned.findings.is_empty() {
            let files = match report.files {
                Some(n) => format!(" in {n} files, {} skipped", report.skipped.len()),
                None => String::new(),
            };
            writeln!(
                out,
                "clean: no findings{files} ({} rules, {})",
                scanner.rules().len(),
                scanner.version()
            )?;
        }
    }
    Ok(i32::from(!scanned.findings.is_empty()))
}

fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn render_json(scanner: &Scanner, report: &Report) -> String {
    let scanned = &report.scanned;
    let items: Vec<String> = scanned
        .findings
        .iter()
        .zip(&scanned.lines)
        .map(|(f, line)| {
            format!(
                "{{\"rule_id\":{},\"category\":{},\"field_path\":{},\"span\":[{},{}],\"line\":{},\"confidence\":{},\"value\":{}}}",
                json_string(&f.rule_id),
                json_string(f.category.as_str()),
                json_string(&f.field_path),
                f.span.start,
                f.span.end,
                line.map_or_else(|| "null".to_owned(), |l| l.to_string()),
                json_string(&f.confidence.to_string()),
                json_string(MASK)
            )
        })
        .collect();
    let directory = match report.files {
        Some(n) => {
            let skipped: Vec<String> = report
                .skipped
                .iter()
                .map(|s| {
                    format!(
                        "{{\"path\":{},\"reason\":{}}}",
                        json_string(&s.path),
                        json_string(&s.reason)
                    )
                })
                .collect();
            format!(",\"files\":{n},\"skipped\":[{}]", skipped.join(","))
        }
        None => String::new(),
    };
    format!(
        "{{\"scanner_version\":{},\"rules_sha256\":{},\"findings\":[{}]{directory}}}",
        json_string(scanner.version()),
        json_string(&scanner.rules_sha256()),
        items.join(",")
    )
}

/// The path of `path` under `root`, with `/` between parts, for field paths and reports.
fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    parts.join("/")
}
