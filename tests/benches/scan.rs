//! `cargo bench --bench scan`: the scanner's speed where users wait on it. Over a generated
//! 10 MB mixed corpus (80% real prose lines from `tests/prose`, 12% code, config, JSON, logs and
//! encoded blobs, 8% lines with planted secrets and PII): single-thread throughput with every
//! rule on (fields of 16 KiB, one 10 MiB field, the default rules); the same work on a rayon
//! pool of one thread and of every core (many fields, and one large text in chunks); `cq scan`
//! as a process on one worker and on every core (the corpus as a file, ten copies of it, and
//! its fields as a directory); start-up
//! (fresh processes: loading the rule pack, the first call's lazy compilation, the policy's
//! share, `cq check` and `cq scan` wall time and peak memory); the cost of one call on the small
//! fields the gate scans; and the same corpus file through Kingfisher, Betterleaks and
//! detect-secrets (pip-installed into a virtualenv under the target directory) for ratios
//! measured in the same run. Prints markdown tables; each two-thread row carries the load
//! average, and the run starts and ends with the machine's SHA-256 rate over the corpus (the
//! gate's floor), a reading of the hour it ran in.
//!
//! `CQ_BENCH_QUICK=1` prints only the corpus time; `CQ_BENCH_ONLY=parallel|processes|startup|small|peers`
//! runs one section after it; `CQ_BENCH_RUNS=N` takes the best of N timed runs (default 3,
//! quick 1), for a steady-state profile; `CQ_BENCH_SKIP_PEERS=1` leaves the peers out (said so
//! in the output); `CQ_BENCH_DUMP=FILE` writes the findings dump (see `scan/dump.rs`) instead.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cq::scan::Scanner;

/// The allocator the `cq` binary uses, so the library's figures are what `cq scan` gets.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "scan/dump.rs"]
mod dump;
#[path = "scan/peers.rs"]
mod peers;
#[path = "scan/processes.rs"]
mod processes;
#[path = "scan/startup.rs"]
mod startup;
#[path = "variant.rs"]
mod variant;

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

/// Best time of `runs` passes of `pass`, which returns a finding count (the same every pass).
fn best_of(runs: usize, mut pass: impl FnMut() -> usize) -> (Duration, usize) {
    let mut best = Duration::MAX;
    let mut findings = 0;
    for _ in 0..runs.max(1) {
        let start = Instant::now();
        findings = pass();
        best = best.min(start.elapsed());
    }
    (best, findings)
}

/// The one-minute load average (`/proc/loadavg`), or `n/a` where the system has none. A
/// two-thread figure means little on a machine whose other work takes a core, so each one is
/// printed with it.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "n/a".to_owned())
}

/// One timed scan on a given pool: best time and findings.
type Work<'a> = dyn Fn(&rayon::ThreadPool) -> (Duration, usize) + 'a;

/// The same work on a pool of one thread and of every core: many fields, and one large text
/// in chunks (`cq scan` on a large file).
fn parallel(scanner: &Scanner, text: &str, parts: &[&str], runs: usize) {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    println!("## Every core: the same scans on a rayon pool of 1 and of {cores} threads (best of {runs})\n");
    println!(
        "| work | 1 thread | {cores} threads | speed-up | load average (1 min, at the row's end) |"
    );
    println!("|---|---|---|---|---|");
    let pool = |n: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .expect("a thread pool starts")
    };
    let (one, many) = (pool(1), pool(cores));
    // As `cq scan DIR` scans a batch of files: the parts of every field's scan as tasks.
    let named: Vec<(&str, &str)> = parts.iter().map(|&f| ("bench", f)).collect();
    let fields = |p: &rayon::ThreadPool| {
        p.install(|| {
            best_of(runs, || {
                scanner.scan_texts(&named).iter().map(Vec::len).sum()
            })
        })
    };
    let chunked = |p: &rayon::ThreadPool| {
        p.install(|| best_of(runs, || scanner.scan_chunked("bench", text).len()))
    };
    let works: [(&str, &Work); 2] = [
        ("{} fields of ~16 KiB (a directory of files)", &fields),
        ("one 10 MiB text in chunks (a large file)", &chunked),
    ];
    for (name, work) in works {
        // Alternate, so drifting load hits both alike.
        let (mut t1, mut tn) = (Duration::MAX, Duration::MAX);
        let mut counts = (0, 0);
        for _ in 0..2 {
            let a = work(&one);
            let b = work(&many);
            t1 = t1.min(a.0);
            tn = tn.min(b.0);
            counts = (a.1, b.1);
        }
        assert_eq!(counts.0, counts.1, "findings do not depend on the threads");
        let rate = |d: Duration| mb_per_s(text.len(), d);
        println!(
            "| {} | {:.1} MB/s | {:.1} MB/s | {:.2}x | {} |",
            name.replace("{}", &parts.len().to_string()),
            rate(t1),
            rate(tn),
            t1.as_secs_f64() / tn.as_secs_f64(),
            load_average()
        );
    }
    println!();
}

fn main() {
    if std::env::var_os("CQ_BENCH_STARTUP_CHILD").is_some() {
        startup::child();
        return;
    }
    let text = corpus();
    let start = hash_rate(&text);
    run(&text);
    println!(
        "SHA-256 of the corpus on this machine (best of {HASH_RUNS}): {start:.2} GB/s at the start of the run, {:.2} GB/s at its end\n",
        hash_rate(&text)
    );
}

const HASH_RUNS: usize = 7;

/// SHA-256 over the 10 MiB corpus, in GB/s (best of [`HASH_RUNS`]): a reading of the hour the
/// run took place in, as the same instructions run at different speeds by the hour on a shared
/// machine (hashing varies less than the scan does).
fn hash_rate(text: &str) -> f64 {
    let (best, _) = best_of(HASH_RUNS, || {
        std::hint::black_box(cq::json::sha256_hex(std::hint::black_box(text.as_bytes()))).len()
    });
    text.len() as f64 / best.as_secs_f64() / 1e9
}

/// Every section the environment asks for (see the module's documentation).
fn run(text: &str) {
    let only = std::env::var("CQ_BENCH_ONLY").ok();
    let section = |name: &str| only.as_deref().is_none_or(|o| o == name);
    let parts = fields(text);
    if let Some(file) = std::env::var_os("CQ_BENCH_DUMP") {
        let n = dump::write(Path::new(&file), text, &parts).expect("the dump is written");
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
    let quick = std::env::var_os("CQ_BENCH_QUICK").is_some();
    let runs = match std::env::var("CQ_BENCH_RUNS")
        .ok()
        .and_then(|n| n.parse().ok())
    {
        Some(n) => n,
        None if quick => 1,
        None => 3,
    };

    // Warm up once (the first pass compiles the rules and builds the lazy DFAs' states), then
    // take the best of the timed runs.
    let per_fields = || {
        parts
            .iter()
            .map(|p| scanner.scan_text("bench", p).len())
            .sum()
    };
    let warm: usize = per_fields();
    let (best, findings) = best_of(runs, per_fields);
    assert_eq!(findings, warm);
    if std::env::var_os("CQ_BENCH_RULE_COUNTS").is_some() {
        let mut counts = std::collections::BTreeMap::new();
        for f in scanner.scan_text("bench", text) {
            *counts.entry(f.rule_id).or_insert(0usize) += 1;
        }
        let mut v: Vec<_> = counts.into_iter().collect();
        v.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
        for (rule, n) in v.iter().take(15) {
            println!("{rule}: {n}");
        }
    }
    if quick {
        println!("quick: {:.3} s, {} findings", best.as_secs_f64(), findings);
    }
    if quick && only.is_none() {
        return;
    }
    let cq_rate = mb_per_s(text.len(), best);
    if only.is_none() {
        let (whole_time, whole) = best_of(1, || scanner.scan_text("bench", text).len());
        let default_rules = Scanner::builtin().expect("built-in rules compile");
        let (default_time, default_findings) = best_of(1, || {
            parts
                .iter()
                .map(|p| default_rules.scan_text("bench", p).len())
                .sum()
        });
        println!(
            "## cq scan throughput, one thread ({} rules, every entity type on)\n",
            scanner.rules().len()
        );
        println!("| input | bytes | time | throughput | findings |");
        println!("|---|---|---|---|---|");
        println!(
            "| {} fields of ~16 KiB (best of {runs}) | {} | {:.3} s | {:.1} MB/s | {} |",
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
            "| {} fields, default rules (opt-in DATE_TIME, URL, plates... off; first pass, cold) | {} | {:.3} s | {:.1} MB/s | {} |",
            parts.len(),
            text.len(),
            default_time.as_secs_f64(),
            mb_per_s(text.len(), default_time),
            default_findings
        );
        println!();
    }
    if section("parallel") {
        parallel(&scanner, text, &parts, runs);
    }
    if section("processes") {
        processes::run(&target_dir(), text, &parts, &load_average);
    }
    if section("startup") {
        startup::run();
    }
    if section("small") {
        small_fields(&scanner);
    }
    if !section("peers") {
        return;
    }
    let skip = ["CQ_BENCH_SKIP_PEERS", "CQ_BENCH_SKIP_DETECT_SECRETS"]
        .iter()
        .find(|v| std::env::var_os(v).is_some());
    if let Some(var) = skip {
        println!("peers skipped: {var} is set");
        return;
    }
    let file = target_dir().join("bench-scan-corpus.txt");
    if let Err(e) = std::fs::write(&file, text) {
        println!("peers not measured: cannot write {}: {e}", file.display());
        return;
    }
    let cq = peers::Cq {
        bytes: text.len(),
        single: best,
        single_findings: findings,
    };
    peers::run(&target_dir(), &file, &cq);
}
