//! `cargo bench --bench scan`: single-thread scanner throughput over a generated 10 MB mixed
//! corpus (80% real prose lines from `tests/prose`, 12% code, config, JSON, logs and encoded
//! blobs, 8% lines with planted secrets and PII) with every rule on,
//! and the same corpus through Yelp's `detect-secrets` (installed from PyPI into a venv under the
//! target directory) for a ratio measured in the same run; then the cost of one call on the small
//! fields the gate scans (a hex digest, a short id, a 2 KB summary). Prints markdown tables.
//! `CQ_BENCH_QUICK=1` prints only the corpus time, `CQ_BENCH_SMALL=1` only the small fields,
//! `CQ_BENCH_RUNS=N` takes the best of N timed runs (default 3, quick 1), for a steady-state profile.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use cq::scan::Scanner;

#[path = "scan/dump.rs"]
mod dump;

const CORPUS_BYTES: usize = 10 * 1024 * 1024;
/// Fields are scanned in pieces of about this size, like the string leaves of a summary.
const FIELD_BYTES: usize = 16 * 1024;

/// A small deterministic generator (xorshift) so every run scans the same bytes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn token(&mut self, alphabet: &[u8], len: usize) -> String {
        (0..len)
            .map(|_| alphabet[self.below(alphabet.len())] as char)
            .collect()
    }
}

const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const HEX: &[u8] = b"0123456789abcdef";

fn corpus() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let prose = std::fs::read_to_string(root.join("tests/prose/crate-docs.md")).unwrap_or_default();
    let prose_lines: Vec<&str> = prose.lines().filter(|l| l.len() > 20).collect();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut out = String::with_capacity(CORPUS_BYTES + 4096);
    while out.len() < CORPUS_BYTES {
        // About 80% prose, 12% code, config, JSON and logs without secrets, 8% lines that carry
        // a secret or personal data.
        let roll = rng.below(100);
        let pick = if roll < 80 {
            0
        } else if roll < 92 {
            10 + rng.below(5)
        } else {
            15 + rng.below(5)
        };
        let line = match pick {
            0 if !prose_lines.is_empty() => prose_lines[rng.below(prose_lines.len())].to_owned(),
            10 => format!(
                "let retries = {}; // backoff in ms: {}",
                rng.below(10),
                rng.below(5000)
            ),
            11 => format!(
                "commit {} fixed the parser; see src/json/parse.rs:{}",
                rng.token(HEX, 40),
                rng.below(900)
            ),
            12 => format!(
                "{{\"id\": \"{}\", \"status\": \"ok\", \"count\": {}}}",
                rng.token(HEX, 32),
                rng.below(99)
            ),
            13 => format!(
                "server.port = {}\nserver.host = \"app-{}.internal\"",
                8000 + rng.below(999),
                rng.below(50)
            ),
            14 => format!(
                "blob: {}",
                rng.token(
                    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
                    64
                )
            ),
            15 => format!("github_token = \"ghp_{}\"", rng.token(ALNUM, 36)),
            16 => format!(
                "AWS_ACCESS_KEY_ID=AKIA{}",
                rng.token(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)
            ),
            17 => format!(
                "Contact jane.{}@corp-mail.net or +44 20 7946 {:04}.",
                rng.below(999),
                rng.below(9999)
            ),
            18 => format!("the staging password is Pr0d-{}!", rng.token(ALNUM, 8)),
            19 => format!(
                "client at 10.{}.{}.{} sent {} bytes",
                rng.below(255),
                rng.below(255),
                rng.below(255),
                rng.below(99999)
            ),
            _ => format!(
                "retrying request {} after {} ms",
                rng.below(9999),
                rng.below(900)
            ),
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}

fn fields(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let mut end = (start + FIELD_BYTES).min(text.len());
        while end < text.len() && text.as_bytes()[end - 1] != b'\n' {
            end += 1;
        }
        out.push(&text[start..end]);
        start = end;
    }
    out
}

fn mb_per_s(bytes: usize, d: Duration) -> f64 {
    bytes as f64 / 1_048_576.0 / d.as_secs_f64()
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"))
}

/// Installs `detect-secrets` into a venv under the target dir; `None` with a reason if it fails.
fn detect_secrets() -> Result<PathBuf, String> {
    let venv = target_dir().join("bench-detect-secrets-venv");
    let bin = venv.join("bin/detect-secrets");
    if bin.exists() {
        return Ok(bin);
    }
    let run = |cmd: &mut Command| -> Result<(), String> {
        let out = cmd.output().map_err(|e| e.to_string())?;
        if out.status.success() {
            Ok(())
        } else {
            Err(String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or("")
                .to_owned())
        }
    };
    run(Command::new("python3").arg("-m").arg("venv").arg(&venv))
        .map_err(|e| format!("cannot create a venv: {e}"))?;
    run(Command::new(venv.join("bin/pip")).args(["install", "-q", "detect-secrets==1.5.0"]))
        .map_err(|e| format!("pip install detect-secrets failed: {e}"))?;
    Ok(bin)
}

fn time_detect_secrets(bin: &Path, file: &Path) -> Result<Duration, String> {
    let start = Instant::now();
    let out = Command::new(bin)
        .arg("scan")
        .arg("--all-files")
        .arg(file)
        .current_dir(file.parent().unwrap_or(Path::new(".")))
        .output()
        .map_err(|e| e.to_string())?;
    let elapsed = start.elapsed();
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    Ok(elapsed)
}

/// Median nanoseconds per `scan_text` call on `field`, over batches of calls.
fn ns_per_call(scanner: &Scanner, field: &str) -> f64 {
    const BATCH: usize = 64;
    let mut per_call: Vec<f64> = (0..301)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..BATCH {
                std::hint::black_box(scanner.scan_text("f", std::hint::black_box(field)));
            }
            start.elapsed().as_nanos() as f64 / BATCH as f64
        })
        .collect();
    per_call.sort_by(f64::total_cmp);
    per_call[per_call.len() / 2]
}

/// The gate scans about 90 short strings per call (digests, ids, predicates, a summary), so
/// per-call overhead matters there more than throughput.
fn small_fields(every: &Scanner) {
    let default_rules = Scanner::builtin().expect("built-in rules compile");
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let digest = rng.token(HEX, 64);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let prose = std::fs::read_to_string(root.join("tests/prose/crate-docs.md")).unwrap_or_default();
    let mut summary = String::new();
    for line in prose.lines().filter(|l| l.len() > 20) {
        if summary.len() + line.len() > 2048 {
            break;
        }
        summary.push_str(line);
        summary.push('\n');
    }
    let cases: [(&str, &str); 4] = [
        ("64-char hex digest", &digest),
        ("short id `SAFETY-1`", "SAFETY-1"),
        (
            "predicate `deny(secret_disclosure)`",
            "deny(secret_disclosure)",
        ),
        ("2 KB prose summary", &summary),
    ];
    println!("## cq scan cost per small field (median ns per call)\n");
    println!("| field | bytes | default rules | every rule |");
    println!("|---|---|---|---|");
    for (name, field) in cases {
        println!(
            "| {name} | {} | {:.0} ns | {:.0} ns |",
            field.len(),
            ns_per_call(&default_rules, field),
            ns_per_call(every, field)
        );
    }
    println!();
}

fn main() {
    let text = corpus();
    let parts = fields(&text);
    if let Some(file) = std::env::var_os("CQ_BENCH_DUMP") {
        let n = dump::write(Path::new(&file), &text, &parts).expect("the dump is written");
        println!("dump: {n} findings in {}", Path::new(&file).display());
        return;
    }
    let scanner = match std::env::var_os("CQ_BENCH_RULES") {
        Some(dir) => Scanner::from_dir(Path::new(&dir)).expect("rules compile"),
        None => Scanner::builtin().expect("built-in rules compile"),
    };
    let all: Vec<String> = scanner.entity_types();
    let names: Vec<&str> = all.iter().map(String::as_str).collect();
    let scanner = scanner
        .for_entity_types(&names)
        .expect("every entity type is supported");
    let scanner = match std::env::var("CQ_BENCH_ENTITIES") {
        Ok(list) => {
            let only: Vec<&str> = list.split(',').collect();
            scanner.for_entity_types(&only).expect("known entity types")
        }
        Err(_) => scanner,
    };

    let compile_start = Instant::now();
    let _fresh = Scanner::builtin().expect("built-in rules compile");
    let compile = compile_start.elapsed();

    // Warm up once, then take the best of three runs.
    let mut findings = 0;
    for p in &parts {
        findings += scanner.scan_text("bench", p).len();
    }
    let mut best = Duration::MAX;
    let runs = match std::env::var("CQ_BENCH_RUNS")
        .ok()
        .and_then(|n| n.parse().ok())
    {
        Some(n) => n,
        None if std::env::var_os("CQ_BENCH_QUICK").is_some() => 1,
        None => 3,
    };
    for _ in 0..runs {
        let start = Instant::now();
        let mut n = 0;
        for p in &parts {
            n += scanner.scan_text("bench", p).len();
        }
        best = best.min(start.elapsed());
        assert_eq!(n, findings);
    }
    if std::env::var_os("CQ_BENCH_RULE_COUNTS").is_some() {
        let mut counts = std::collections::BTreeMap::new();
        for f in scanner.scan_text("bench", &text) {
            *counts.entry(f.rule_id).or_insert(0usize) += 1;
        }
        let mut v: Vec<_> = counts.into_iter().collect();
        v.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
        for (rule, n) in v.iter().take(15) {
            println!("{rule}: {n}");
        }
    }
    if std::env::var_os("CQ_BENCH_SMALL").is_some() {
        small_fields(&scanner);
        return;
    }
    if std::env::var_os("CQ_BENCH_QUICK").is_some() {
        println!("quick: {:.3} s, {} findings", best.as_secs_f64(), findings);
        return;
    }
    let whole_start = Instant::now();
    let whole = scanner.scan_text("bench", &text).len();
    let whole_time = whole_start.elapsed();
    let default_rules = Scanner::builtin().expect("built-in rules compile");
    let default_start = Instant::now();
    let mut default_findings = 0;
    for p in &parts {
        default_findings += default_rules.scan_text("bench", p).len();
    }
    let default_time = default_start.elapsed();
    let cq_rate = mb_per_s(text.len(), best);

    println!(
        "## cq scan throughput ({} rules, every entity type on)\n",
        scanner.rules().len()
    );
    println!("| input | bytes | time | throughput | findings |");
    println!("|---|---|---|---|---|");
    println!(
        "| {} fields of ~16 KiB | {} | {:.3} s | {:.1} MB/s | {} |",
        parts.len(),
        text.len(),
        best.as_secs_f64(),
        cq_rate,
        findings
    );
    println!(
        "| one 10 MiB field | {} | {:.3} s | {:.1} MB/s | {} |",
        text.len(),
        whole_time.as_secs_f64(),
        mb_per_s(text.len(), whole_time),
        whole
    );
    println!(
        "| {} fields, default rules (opt-in DATE_TIME, URL, plates... off) | {} | {:.3} s | {:.1} MB/s | {} |",
        parts.len(),
        text.len(),
        default_time.as_secs_f64(),
        mb_per_s(text.len(), default_time),
        default_findings
    );
    println!(
        "\nrule pack compile time: {:.1} ms\n",
        compile.as_secs_f64() * 1000.0
    );

    small_fields(&scanner);

    println!("## cq vs detect-secrets (same corpus, same run)\n");
    let file = target_dir().join("bench-scan-corpus.txt");
    if std::env::var_os("CQ_BENCH_SKIP_DETECT_SECRETS").is_some() {
        println!("detect-secrets skipped: CQ_BENCH_SKIP_DETECT_SECRETS is set");
        return;
    }
    let ds = std::fs::write(&file, &text)
        .map_err(|e| e.to_string())
        .and_then(|()| detect_secrets())
        .and_then(|bin| {
            let empty = target_dir().join("bench-empty.txt");
            std::fs::write(&empty, "").map_err(|e| e.to_string())?;
            let startup = time_detect_secrets(&bin, &empty)?;
            let total = time_detect_secrets(&bin, &file)?;
            Ok((startup, total))
        });
    match ds {
        Ok((startup, total)) => {
            let work = total.saturating_sub(startup).max(Duration::from_millis(1));
            let ds_rate = mb_per_s(text.len(), work);
            println!("| scanner | time | throughput | cq speed-up |");
            println!("|---|---|---|---|");
            println!(
                "| cq (Rust, 1 thread) | {:.3} s | {:.1} MB/s | 1x |",
                best.as_secs_f64(),
                cq_rate
            );
            println!(
                "| detect-secrets 1.5.0 (Python, startup {:.2} s excluded) | {:.2} s | {:.2} MB/s | {:.0}x |",
                startup.as_secs_f64(),
                work.as_secs_f64(),
                ds_rate,
                cq_rate / ds_rate
            );
        }
        Err(reason) => println!("detect-secrets skipped: {reason}"),
    }
}
