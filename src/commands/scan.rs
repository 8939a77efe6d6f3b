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
    let code = write_report(&report, args.json, &scanner, Some(&pool), out);
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
    write_report(&report, json, scanner, None, out)
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

/// Findings counted or printed together, on one thread of the pool.
const FINDINGS_A_TASK: usize = 2048;

/// The 1-based line of each finding's start in `text`. Findings in span order are counted in
/// runs on every thread of the current pool, each run from the start of the one before, and
/// the runs' counts added up in order; findings out of span order are counted one by one.
fn line_numbers(text: &str, findings: &[Finding]) -> Vec<Option<usize>> {
    use rayon::prelude::*;
    let bytes = text.as_bytes();
    let starts: Vec<usize> = findings
        .iter()
        .map(|f| f.span.start.min(bytes.len()))
        .collect();
    if !starts.is_sorted() {
        return lines_one_by_one(bytes, &starts);
    }
    // Each run's newlines before each of its findings, counted from the run's first finding's
    // predecessor (or the text's start).
    let runs: Vec<Vec<usize>> = starts
        .par_chunks(FINDINGS_A_TASK)
        .enumerate()
        .map(|(i, run)| {
            let at = (i * FINDINGS_A_TASK)
                .checked_sub(1)
                .map_or(0, |before| starts[before]);
            counted_from(bytes, at, 0, run)
        })
        .collect();
    let mut lines = Vec::with_capacity(starts.len());
    let mut before = 1;
    for run in runs {
        let last = run.last().copied().unwrap_or(0);
        lines.extend(run.into_iter().map(|n| Some(before + n)));
        before += last;
    }
    lines
}

/// [`line_numbers`] for findings in any order.
fn lines_one_by_one(bytes: &[u8], starts: &[usize]) -> Vec<Option<usize>> {
    counted_from(bytes, 0, 1, starts)
        .into_iter()
        .map(Some)
        .collect()
}

/// `line` plus the newlines from `at` to each of `starts`, each counted from the one before,
/// or from the text's start (line 1) when it starts earlier.
fn counted_from(bytes: &[u8], mut at: usize, mut line: usize, starts: &[usize]) -> Vec<usize> {
    starts
        .iter()
        .map(|&start| {
            if start < at {
                (at, line) = (0, 1);
            }
            line += memchr::memchr_iter(b'\n', &bytes[at..start]).count();
            at = start;
            line
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

/// Findings printed in one piece, on one thread of the pool.
const PRINTED_A_TASK: usize = 512;
/// How many pieces a thread formats in each batch [`write_report`] writes: a batch's text is
/// freed before the next is formatted, so each batch reuses the memory of the one before.
const PIECES_A_THREAD: usize = 2;

/// Prints `report` to `out`: its findings' lines formatted in parallel on `pool` (or the
/// current pool), a batch at a time, and written in order.
fn write_report(
    report: &Report,
    json: bool,
    scanner: &Scanner,
    pool: Option<&rayon::ThreadPool>,
    out: &mut dyn Write,
) -> anyhow::Result<i32> {
    let scanned = &report.scanned;
    if json {
        writeln!(out, "{}", render_json(scanner, report))?;
    } else {
        let threads = pool.map_or_else(rayon::current_num_threads, |p| p.current_num_threads());
        let batch = PRINTED_A_TASK * PIECES_A_THREAD * threads;
        for (findings, lines) in scanned
            .findings
            .chunks(batch)
            .zip(scanned.lines.chunks(batch))
        {
            let render = || finding_lines(findings, lines);
            let pieces = match pool {
                Some(pool) => pool.install(render),
                None => render(),
            };
            for piece in pieces {
                out.write_all(piece.as_bytes())?;
            }
        }
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

/// The printed lines of `findings` (with their `lines`), in pieces formatted on every thread
/// of the current pool. Most findings share their field's path, shown once a piece.
fn finding_lines(findings: &[Finding], lines: &[Option<usize>]) -> Vec<String> {
    use rayon::prelude::*;
    findings
        .par_chunks(PRINTED_A_TASK)
        .zip(lines.par_chunks(PRINTED_A_TASK))
        .map(|(findings, lines)| {
            let mut piece = String::with_capacity(findings.len() * 96);
            let mut path: Option<(&str, String)> = None;
            for (f, line) in findings.iter().zip(lines) {
                let field = match &path {
                    Some((raw, shown_path)) if *raw == f.field_path => shown_path,
                    _ => &path.insert((f.field_path.as_str(), shown(&f.field_path))).1,
                };
                let mut number = itoa::Buffer::new();
                for part in [&f.rule_id, "\t", f.category.as_str(), "\t", field, "\t"] {
                    piece.push_str(part);
                }
                piece.push_str(number.format(f.span.start));
                piece.push_str("..");
                piece.push_str(number.format(f.span.end));
                piece.push('\t');
                piece.push_str(line.map_or("-", |l| number.format(l)));
                for part in ["\t", f.confidence.as_str(), "\t", MASK, "\n"] {
                    piece.push_str(part);
                }
            }
            piece
        })
        .collect()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::{Category, Confidence};

    fn finding(start: usize, field_path: &str) -> Finding {
        Finding {
            rule_id: format!("rule-{}", start % 7),
            category: Category::Credential,
            field_path: field_path.to_owned(),
            span: start..start + 3,
            confidence: Confidence::High,
        }
    }

    fn pool(threads: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
    }

    /// A text of lines of every length from 0 to 40, and findings at every 3rd byte: many
    /// runs of findings, some starting on a line break.
    fn text_and_findings() -> (String, Vec<Finding>) {
        let text: String = (0..3000).map(|i| "x".repeat(i % 41) + "\n").collect();
        let findings = (0..text.len())
            .step_by(3)
            .map(|at| finding(at, "text"))
            .collect();
        (text, findings)
    }

    #[test]
    fn lines_counted_in_runs_are_the_lines_counted_one_by_one_on_any_pool() {
        let (text, mut findings) = text_and_findings();
        assert!(findings.len() > 4 * FINDINGS_A_TASK);
        let starts = |f: &[Finding]| f.iter().map(|f| f.span.start).collect::<Vec<_>>();
        let expected = lines_one_by_one(text.as_bytes(), &starts(&findings));
        assert_eq!(expected[0], Some(1));
        assert_eq!(expected.last().copied().flatten(), Some(3000));
        for threads in [1, 2, 3] {
            let lines = pool(threads).install(|| line_numbers(&text, &findings));
            assert_eq!(lines, expected, "{threads} threads");
        }
        // Out of span order, each is still counted from the start of the text when needed.
        findings.swap(10, 5000);
        let lines = pool(2).install(|| line_numbers(&text, &findings));
        assert_eq!(lines, lines_one_by_one(text.as_bytes(), &starts(&findings)));
        assert_eq!(lines[10], expected[5000]);
        assert_eq!(lines[5000], expected[10]);
    }

    #[test]
    fn the_listing_is_the_same_on_any_pool_with_each_field_path_shown_safely() {
        let (text, mut findings) = text_and_findings();
        findings[4100].field_path = "evil\u{1b}[2Jpath".to_owned();
        let lines = line_numbers(&text, &findings);
        let listing = |threads| pool(threads).install(|| finding_lines(&findings, &lines).concat());
        let one = listing(1);
        assert_eq!(listing(3), one);
        let printed: Vec<&str> = one.lines().collect();
        assert_eq!(printed.len(), findings.len());
        assert_eq!(
            printed[0],
            "rule-0\tcredential\ttext\t0..3\t1\thigh\t********"
        );
        assert!(!printed[4100].contains('\u{1b}'), "{}", printed[4100]);
        assert!(printed[4101].starts_with("rule-"), "{}", printed[4101]);
        assert!(printed[4101].contains("\ttext\t"), "{}", printed[4101]);
    }
}
