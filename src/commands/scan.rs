//! `cq scan [FILE|-] [--json] [--rules DIR] [--entity-types LIST]`: scan a file or stdin and
//! print masked findings.
//!
//! The matched value never reaches the terminal: each finding prints its rule, category,
//! field, byte span and confidence, and a fixed-width mask in place of the value.

use std::io::{Read, Write};
use std::path::PathBuf;

use anyhow::Context;

use crate::scan::{Finding, Scanner};

/// The mask printed instead of a matched value; fixed width so it reveals no length.
const MASK: &str = "********";

/// Scans `input` (a file, or stdin when `None` or `-`) and prints masked findings. Returns the
/// exit code: 0 clean, 1 findings. Errors become exit code 2 in `main`.
pub fn run(
    input: Option<PathBuf>,
    json: bool,
    rules: Option<PathBuf>,
    entity_types: &[String],
) -> anyhow::Result<i32> {
    let text = read_input(input.as_ref())?;
    let mut out = std::io::stdout().lock();
    let scanner = scanner(rules.as_deref(), entity_types)?;
    run_on(&text, json, &scanner, &mut out)
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

/// Scans `text` and writes masked findings to `out`; the testable core of [`run`].
pub fn run_on(
    text: &str,
    json: bool,
    scanner: &Scanner,
    out: &mut dyn Write,
) -> anyhow::Result<i32> {
    // A JSON object or array is scanned string by string (keys too) under each one's path,
    // member values with their names as context; anything else is one field of text.
    let limits = crate::json::Limits {
        max_bytes: 256 << 20,
        max_depth: 512,
    };
    let findings = match crate::json::parse(text.as_bytes(), &limits) {
        Ok(value @ (crate::json::Value::Object(_) | crate::json::Value::Array(_))) => {
            scanner.scan_json(&value)
        }
        _ => scanner.scan_text("text", text),
    };
    if json {
        writeln!(out, "{}", render_json(scanner, &findings))?;
    } else {
        for f in &findings {
            writeln!(
                out,
                "{}\t{}\t{}\t{}..{}\t{}\t{MASK}",
                f.rule_id, f.category, f.field_path, f.span.start, f.span.end, f.confidence
            )?;
        }
        if findings.is_empty() {
            writeln!(
                out,
                "clean: no findings ({} rules, {})",
                scanner.rules().len(),
                scanner.version()
            )?;
        }
    }
    Ok(i32::from(!findings.is_empty()))
}

fn read_input(input: Option<&PathBuf>) -> anyhow::Result<String> {
    match input {
        Some(path) if path.as_os_str() != "-" => std::fs::read_to_string(path)
            .with_context(|| format!("while reading \"{}\"", path.display())),
        _ => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .context("while reading stdin")?;
            Ok(text)
        }
    }
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

fn render_json(scanner: &Scanner, findings: &[Finding]) -> String {
    let items: Vec<String> = findings
        .iter()
        .map(|f| {
            format!(
                "{{\"rule_id\":{},\"category\":{},\"field_path\":{},\"span\":[{},{}],\"confidence\":{},\"value\":{}}}",
                json_string(&f.rule_id),
                json_string(f.category.as_str()),
                json_string(&f.field_path),
                f.span.start,
                f.span.end,
                json_string(&f.confidence.to_string()),
                json_string(MASK)
            )
        })
        .collect();
    format!(
        "{{\"scanner_version\":{},\"rules_sha256\":{},\"findings\":[{}]}}",
        json_string(scanner.version()),
        json_string(&scanner.rules_sha256()),
        items.join(",")
    )
}
