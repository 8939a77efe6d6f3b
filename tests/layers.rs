//! The layering DESIGN.md sets, checked on the source: the two front ends (`commands`, the
//! CLI, and `review`, the TUI) never import each other; no SQL and no SQLite outside the store;
//! `audit` reads no database; one sanitizer for the terminal; only `main.rs` turns results
//! into exit codes. A change that adds one of these back fails here.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `(path relative to src/, text without comments)` for every source file.
fn sources() -> Vec<(String, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let rel = p.strip_prefix(&src).unwrap_or(&p).display().to_string();
            let text = std::fs::read_to_string(&p).unwrap_or_default();
            let code: String = text
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .collect::<Vec<_>>()
                .join("\n");
            (rel, code)
        })
        .collect()
}

fn offenders(
    sources: &[(String, String)],
    applies: impl Fn(&str) -> bool,
    bad: impl Fn(&str) -> bool,
) -> Vec<String> {
    sources
        .iter()
        .filter(|(path, _)| applies(path))
        .filter(|(_, code)| bad(code))
        .map(|(path, _)| path.clone())
        .collect()
}

#[test]
fn the_front_ends_do_not_import_each_other() {
    let s = sources();
    let tui = |p: &str| p == "review.rs" || p.starts_with("review/");
    let cli = |p: &str| p == "commands.rs" || p.starts_with("commands/");
    let from_tui = offenders(&s, tui, |c| c.contains("crate::commands"));
    assert!(from_tui.is_empty(), "the TUI imports the CLI: {from_tui:?}");
    let outside = offenders(
        &s,
        |p| !tui(p) && p != "main.rs",
        |c| c.contains("crate::review"),
    );
    assert!(
        outside.is_empty(),
        "outside the TUI, crate::review: {outside:?}"
    );
    let lower = offenders(
        &s,
        |p| !cli(p) && p != "main.rs",
        |c| c.contains("crate::commands"),
    );
    assert!(lower.is_empty(), "crate::commands below the CLI: {lower:?}");
    let service = offenders(
        &s,
        |p| p.starts_with("service"),
        |c| c.contains("crate::cli"),
    );
    assert!(
        service.is_empty(),
        "the application layer takes clap types: {service:?}"
    );
}

#[test]
fn sql_lives_in_the_store_only() {
    let s = sources();
    let store = |p: &str| p == "store.rs" || p.starts_with("store/");
    let sql = |c: &str| {
        [
            "\"SELECT ",
            "\"INSERT ",
            "\"UPDATE ",
            "\"DELETE ",
            "\"CREATE ",
            "PRAGMA ",
            "rusqlite",
            "postgres::",
        ]
        .iter()
        .any(|k| c.contains(k))
    };
    let found = offenders(&s, |p| !store(p), sql);
    assert!(found.is_empty(), "SQL outside src/store*: {found:?}");
    // Inside the store, every module is written against the SQL seam; only the seam, the two
    // backends, the PostgreSQL listener and `store.rs` (which picks a backend) name one.
    let backend = |p: &str| {
        [
            "store.rs",
            "store/sql.rs",
            "store/sqlite.rs",
            "store/postgres.rs",
            "store/watch.rs",
        ]
        .contains(&p)
    };
    let driver = |c: &str| c.contains("rusqlite") || c.contains("postgres::");
    let around = offenders(&s, |p| store(p) && !backend(p), driver);
    assert!(
        around.is_empty(),
        "store modules that bypass the SQL seam (store/sql.rs): {around:?}"
    );
    let audit = offenders(
        &s,
        |p| p == "audit.rs" || p.starts_with("audit/"),
        |c| c.contains("crate::store"),
    );
    assert!(audit.is_empty(), "audit reads the store: {audit:?}");
}

#[test]
fn one_sanitizer_escapes_for_the_terminal() {
    let s = sources();
    let found = offenders(
        &s,
        |p| p != "sanitize.rs",
        |c| c.contains("fn printable(text") || c.contains("\\\\u{{{:x}}}") || c.contains("\"⟨{"),
    );
    assert!(found.is_empty(), "a second terminal escaper: {found:?}");
}

#[test]
fn only_main_maps_exit_codes() {
    let s = sources();
    let found = offenders(
        &s,
        |p| p != "main.rs",
        |c| c.contains("ExitCode") || c.contains("process::exit"),
    );
    assert!(found.is_empty(), "exit codes outside main.rs: {found:?}");
}
