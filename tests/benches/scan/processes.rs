//! `cq scan` as a process on one worker and on every core: the bench corpus as one file, as ten
//! copies of it in one file, and as a directory of its fields, each written under the target
//! directory. The one-worker and every-core runs alternate, so drifting load hits both alike;
//! each is timed with its output discarded, and one more run of each is compared byte for byte
//! (the listing must not depend on the number of threads). Prints the best and the median of
//! each, and both speed-ups, with the one-minute load average at the row's end.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

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
        "## `cq scan` as a process, `--jobs 1` and `--jobs {cores}` alternating (default rules)\n"
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
    println!("| input | runs | `--jobs 1` best / median | `--jobs {cores}` best / median | speed-up, best | speed-up, medians | findings | load average |");
    println!("|---|---|---|---|---|---|---|---|");
    for input in &inputs {
        match measure(input, cores) {
            Ok(m) => println!(
                "| {} | {} | {:.3} / {:.3} s | {:.3} / {:.3} s | {:.2}x | {:.2}x | {} | {} |",
                input.name,
                input.runs,
                m.one.0.as_secs_f64(),
                m.one.1.as_secs_f64(),
                m.many.0.as_secs_f64(),
                m.many.1.as_secs_f64(),
                m.one.0.as_secs_f64() / m.many.0.as_secs_f64(),
                m.one.1.as_secs_f64() / m.many.1.as_secs_f64(),
                m.findings,
                load_average()
            ),
            Err(e) => println!("| {} | not measured: {e} | | | | | | |", input.name),
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
    /// Best and median wall time of each.
    one: (Duration, Duration),
    many: (Duration, Duration),
    findings: usize,
}

fn measure(input: &Input, cores: usize) -> Result<Measured, String> {
    let listing = |jobs: usize| -> Result<Vec<u8>, String> {
        let out = scan(&input.path, jobs)
            .output()
            .map_err(|e| format!("cannot run cq: {e}"))?;
        match out.status.code() {
            Some(0 | 1) => Ok(out.stdout),
            _ => Err(format!(
                "cq scan --jobs {jobs} failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )),
        }
    };
    let one = listing(1)?;
    if listing(cores)? != one {
        return Err(format!(
            "the listing on {cores} threads differs from one thread's"
        ));
    }
    let timed = |jobs: usize| -> Result<Duration, String> {
        let start = Instant::now();
        let status = scan(&input.path, jobs)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map_err(|e| format!("cannot run cq: {e}"))?;
        let took = start.elapsed();
        match status.code() {
            Some(0 | 1) => Ok(took),
            _ => Err(format!("cq scan --jobs {jobs} failed")),
        }
    };
    let (mut ones, mut manys) = (Vec::new(), Vec::new());
    for _ in 0..input.runs {
        ones.push(timed(1)?);
        manys.push(timed(cores)?);
    }
    let findings = one.split(|&b| b == b'\n').filter(|l| !l.is_empty()).count();
    Ok(Measured {
        one: best_and_median(&mut ones),
        many: best_and_median(&mut manys),
        findings,
    })
}

fn scan(path: &Path, jobs: usize) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cq"));
    c.arg("scan").arg(path).args(["--jobs", &jobs.to_string()]);
    c
}

fn best_and_median(times: &mut [Duration]) -> (Duration, Duration) {
    times.sort();
    (times[0], times[times.len() / 2])
}
