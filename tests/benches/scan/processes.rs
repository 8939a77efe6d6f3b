//! `cq scan` as a process on one core, on one worker and on every core: the bench corpus as one
//! file, as ten copies of it in one file, and as a directory of its fields, each written under
//! the target directory. "One core" is `--jobs 1` pinned to the first CPU (`taskset -c 0`, as
//! in the bulk bench): the process's other thread, which loads the rules while the worker reads
//! the input, then shares that core. The runs alternate, so drifting load hits all alike; each
//! is timed with its output discarded, and one more run of each is compared byte for byte (the
//! listing must not depend on the number of threads). Prints the best and the median of each,
//! and the speed-ups of every core against one core and against one worker, with the one-minute
//! load average at the row's end. Without `taskset`, the one-core columns say so.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::variant::Variant;

/// One input and how many times each thread count runs on it.
struct Input {
    name: String,
    path: PathBuf,
    runs: usize,
}

/// Writes the inputs and prints the table; an input that cannot be written is reported.
pub fn run(target: &Path, text: &str, parts: &[&str], load_average: &dyn Fn() -> String) {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    println!(
        "## `cq scan` as a process on one core, `--jobs 1` and `--jobs {cores}`, alternating (default rules)\n"
    );
    let mut inputs = Vec::new();
    let file = target.join("bench-scan-corpus.txt");
    let large = target.join("bench-scan-corpus-x10.txt");
    let dir = target.join("bench-scan-fields");
    let written = std::fs::write(&file, text)
        .and_then(|()| std::fs::write(&large, text.repeat(10)))
        .and_then(|()| write_fields(&dir, parts));
    if let Err(e) = written {
        println!(
            "processes not measured: cannot write the inputs under {}: {e}\n",
            target.display()
        );
        return;
    }
    let mb = |n: usize| n as f64 / 1_048_576.0;
    inputs.push(Input {
        name: format!("the corpus, one file of {:.0} MiB", mb(text.len())),
        path: file,
        runs: 25,
    });
    inputs.push(Input {
        name: format!(
            "ten copies of it, one file of {:.0} MiB",
            mb(text.len() * 10)
        ),
        path: large,
        runs: 4,
    });
    inputs.push(Input {
        name: format!("the corpus as a directory of {} files", parts.len()),
        path: dir,
        runs: 15,
    });
    let pinning = crate::variant::pinning();
    println!("| input | runs | one core best / median | `--jobs 1` best / median | `--jobs {cores}` best / median | speed-up against one core, best / medians | against `--jobs 1`, best / medians | findings | load average |");
    println!("|---|---|---|---|---|---|---|---|---|");
    let secs = |d: Duration| d.as_secs_f64();
    for input in &inputs {
        match measure(input, cores, pinning) {
            Ok(m) => {
                let (pinned, against_pinned) = match m.pinned {
                    Some(p) => (
                        format!("{:.3} / {:.3} s", secs(p.0), secs(p.1)),
                        format!(
                            "{:.2}x / {:.2}x",
                            secs(p.0) / secs(m.many.0),
                            secs(p.1) / secs(m.many.1)
                        ),
                    ),
                    None => ("no `taskset`".to_owned(), String::new()),
                };
                println!(
                    "| {} | {} | {pinned} | {:.3} / {:.3} s | {:.3} / {:.3} s | {against_pinned} | {:.2}x / {:.2}x | {} | {} |",
                    input.name,
                    input.runs,
                    secs(m.one.0),
                    secs(m.one.1),
                    secs(m.many.0),
                    secs(m.many.1),
                    secs(m.one.0) / secs(m.many.0),
                    secs(m.one.1) / secs(m.many.1),
                    m.findings,
                    load_average()
                );
            }
            Err(e) => println!("| {} | not measured: {e} | | | | | | | |", input.name),
        }
    }
    println!();
}

/// The bench's fields as files `f000.txt`, `f001.txt`, … of a fresh directory.
fn write_fields(dir: &Path, parts: &[&str]) -> std::io::Result<()> {
    if dir.exists() {
        std::fs::remove_dir_all(dir)?;
    }
    std::fs::create_dir_all(dir)?;
    for (i, part) in parts.iter().enumerate() {
        std::fs::write(dir.join(format!("f{i:03}.txt")), part)?;
    }
    Ok(())
}

struct Measured {
    /// Best and median wall time of each: one core (when `taskset` runs), one worker, every
    /// core.
    pinned: Option<(Duration, Duration)>,
    one: (Duration, Duration),
    many: (Duration, Duration),
    findings: usize,
}

fn measure(input: &Input, cores: usize, pinning: bool) -> Result<Measured, String> {
    let one = Variant::jobs(1);
    let many = Variant::jobs(cores);
    let pinned = pinning.then(Variant::one_core);
    let listing = |v: Variant| -> Result<Vec<u8>, String> {
        let out = scan(&input.path, v)
            .output()
            .map_err(|e| format!("cannot run cq: {e}"))?;
        match out.status.code() {
            Some(0 | 1) => Ok(out.stdout),
            _ => Err(format!(
                "cq scan --jobs {} failed: {}",
                v.jobs,
                String::from_utf8_lossy(&out.stderr).trim()
            )),
        }
    };
    let first = listing(one)?;
    for v in pinned.into_iter().chain([many]) {
        if listing(v)? != first {
            return Err(format!(
                "the listing of --jobs {} (pinned: {}) differs from one worker's",
                v.jobs, v.pinned
            ));
        }
    }
    let timed = |v: Variant| -> Result<Duration, String> {
        let start = Instant::now();
        let status = scan(&input.path, v)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map_err(|e| format!("cannot run cq: {e}"))?;
        let took = start.elapsed();
        match status.code() {
            Some(0 | 1) => Ok(took),
            _ => Err(format!("cq scan --jobs {} failed", v.jobs)),
        }
    };
    let (mut pins, mut ones, mut manys) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..input.runs {
        if let Some(v) = pinned {
            pins.push(timed(v)?);
        }
        ones.push(timed(one)?);
        manys.push(timed(many)?);
    }
    let findings = first
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .count();
    Ok(Measured {
        pinned: pinned.map(|_| best_and_median(&mut pins)),
        one: best_and_median(&mut ones),
        many: best_and_median(&mut manys),
        findings,
    })
}

fn scan(path: &Path, v: Variant) -> Command {
    let mut c = v.command();
    c.arg("scan")
        .arg(path)
        .args(["--jobs", &v.jobs.to_string()]);
    c
}

fn best_and_median(times: &mut [Duration]) -> (Duration, Duration) {
    times.sort();
    (times[0], times[times.len() / 2])
}
