//! `cq audit verify`: recompute every receipt hash, leaf hash, chain link, signature and Merkle
//! root from the stored bytes, check every stored checkpoint (the latest must be signed with
//! the store key trusted from outside the file and cover the whole log) and optionally one
//! exported earlier and kept elsewhere, replay the chain of authority over reviewer keys, and
//! check that every table row says what the receipts say.
//!
//! Nothing stored is trusted: not the hash columns, not the cached audit tree, not the
//! reviewer table (reviewer keys come from the log's own registration receipts), not the key
//! the store records for itself. Every problem names the entry it was found at;
//! [`VerifyReport::first_bad`] is the earliest one. The rows come through [`LogRows`], so
//! this module reads no database itself.
//!
//! The per-row work (hashing, parsing, signatures) runs on [`Workers`] while the calling
//! thread reads the next bounded batch of rows; results are folded in log order, so the
//! report, and the first problem it names, are the same whatever the number of threads.

mod crosscheck;
mod digests;
mod entries;
mod facts;
mod tree;

use std::collections::BTreeMap;
use std::fmt;

use ed25519_dalek::VerifyingKey;

use super::merkle::{Frontier, Hash};
use super::note::Checkpoint;
use super::rows::{CheckpointRow, LogRows};
use super::{hex, unhex32};

/// One thing that does not check out, at audit entry `seq` when it can be pinned to one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub seq: Option<u64>,
    pub message: String,
}

/// What `verify` checked and found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VerifyReport {
    pub entries: u64,
    pub signatures: u64,
    pub checkpoints: u64,
    /// The Merkle root over all entries, hex.
    pub root: String,
    /// The size of the exported checkpoint that was checked, if one was given.
    pub exported_size: Option<u64>,
    /// Sorted by entry; problems not tied to an entry come last.
    pub problems: Vec<Problem>,
}

impl VerifyReport {
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty()
    }

    /// The earliest entry with a problem.
    pub fn first_bad(&self) -> Option<u64> {
        self.problems.iter().filter_map(|p| p.seq).min()
    }

    fn push(&mut self, seq: Option<u64>, message: String) {
        self.problems.push(Problem { seq, message });
    }
}

impl fmt::Display for VerifyReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_ok() {
            write!(
                f,
                "audit log ok: {} entries, {} signatures, {} checkpoints, root {}",
                self.entries, self.signatures, self.checkpoints, self.root
            )?;
            if let Some(size) = self.exported_size {
                write!(
                    f,
                    "; consistent with the exported checkpoint at size {size}"
                )?;
            }
            return Ok(());
        }
        match self.first_bad() {
            Some(seq) => writeln!(f, "audit log TAMPERED: first bad entry is \"{seq}\"")?,
            None => writeln!(f, "audit log TAMPERED")?,
        }
        const SHOWN: usize = 20;
        for p in self.problems.iter().take(SHOWN) {
            match p.seq {
                Some(seq) => writeln!(f, "  entry {seq}: {}", p.message)?,
                None => writeln!(f, "  {}", p.message)?,
            }
        }
        if self.problems.len() > SHOWN {
            writeln!(f, "  … and {} more", self.problems.len() - SHOWN)?;
        }
        Ok(())
    }
}

/// The threads the per-row checks run on: `jobs` of them, or one per core.
pub struct Workers {
    pool: Option<rayon::ThreadPool>,
}

impl Workers {
    /// A pool of `jobs` threads (every core when `None`). If no thread can be started the
    /// checks run on the calling thread: slower, and the same checks.
    pub fn new(jobs: Option<usize>) -> Workers {
        let threads = jobs.unwrap_or_else(|| {
            std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
        });
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads.max(1))
            .thread_name(|i| format!("cq-verify-{i}"))
            .build()
            .ok();
        Workers { pool }
    }

    fn pool(&self) -> Option<&rayon::ThreadPool> {
        self.pool.as_ref()
    }

    /// `f` of every item, computed on the workers, in the order of `items`.
    fn map<I: Sync, T: Send>(&self, items: &[I], f: impl Fn(&I) -> T + Sync + Send) -> Vec<T> {
        use rayon::prelude::*;
        match self.pool() {
            Some(pool) => pool.install(|| items.par_iter().map(f).collect()),
            None => items.iter().map(f).collect(),
        }
    }
}

/// Verifies everything `rows` holds on every core; see [`verify_with`].
pub fn verify<R: LogRows + ?Sized>(
    rows: &R,
    exported: Option<&str>,
) -> Result<VerifyReport, R::Error> {
    verify_with(rows, exported, Workers::new(None))
}

/// Verifies everything `rows` holds, checking rows on `workers`; `exported` is a checkpoint
/// note kept outside the store, which the stored log must extend (same root at that size).
/// The caller gives a consistent snapshot (one read transaction).
pub fn verify_with<R: LogRows + ?Sized>(
    rows: &R,
    exported: Option<&str>,
    workers: Workers,
) -> Result<VerifyReport, R::Error> {
    let mut report = VerifyReport::default();
    let (origin, key, trust) = rows.identity();
    if let Err(why) = &trust {
        report.push(None, format!("the store's key is not trusted: {why}"));
    }
    let stored = rows.checkpoints()?;
    let mut exported_cp = None;
    if let Some(note) = exported {
        match Checkpoint::open(note, &origin, &key) {
            Ok(cp) if cp.origin == origin => exported_cp = Some(cp),
            Ok(cp) => report.push(
                None,
                format!(
                    "exported checkpoint is for log \"{}\", not \"{origin}\"",
                    cp.origin
                ),
            ),
            Err(e) => report.push(None, format!("exported checkpoint does not verify: {e}")),
        }
    }
    // Tree sizes at which the root must be remembered.
    let mut wanted: Vec<u64> = stored.iter().map(|c| c.size).collect();
    wanted.extend(exported_cp.as_ref().map(|c| c.size));
    let walk = entries::walk(rows, &key, &wanted, workers, &mut report)?;
    report.entries = walk.size;
    report.signatures = walk.signatures;
    report.root = hex(&walk.frontier.root());
    tree::nodes(rows, &walk.leaves, &mut report)?;
    checkpoints(&stored, &origin, &key, &walk, &mut report);
    if let Some(cp) = exported_cp {
        exported_checkpoint(&cp, &walk, &mut report);
    }
    crosscheck::tables(rows, &walk.facts, &walk.workers, &mut report)?;
    report.problems.sort_by_key(|p| (p.seq.is_none(), p.seq));
    Ok(report)
}

/// The log's chain, verified incrementally for a view that re-checks often (the reviewer's
/// audit view): each [`ChainCheck::refresh`] checks only the entries added since the last one
/// (bytes, hashes, signatures, chain links, the Merkle frontier), then that the latest
/// checkpoint is signed by the trusted store key and covers exactly the recomputed tree. It
/// keeps no facts or leaves, so it stays small on a large log; the tables and the stored tree
/// are `verify`'s. Problems found stay reported on later refreshes.
pub struct ChainCheck {
    walk: entries::Walk,
    problems: Vec<Problem>,
}

impl ChainCheck {
    pub fn new(store_key: &VerifyingKey) -> ChainCheck {
        ChainCheck {
            walk: entries::Walk::new(store_key, false, Workers::new(None)),
            problems: Vec::new(),
        }
    }

    /// Checks what was appended since the last refresh.
    pub fn refresh<R: LogRows + ?Sized>(&mut self, rows: &R) -> Result<VerifyReport, R::Error> {
        let mut report = VerifyReport::default();
        let (origin, key, trust) = rows.identity();
        self.walk.extend(rows, &[], &mut report)?;
        self.problems.append(&mut report.problems);
        let size = self.walk.size;
        report.entries = size;
        report.signatures = self.walk.signatures;
        report.root = hex(&self.walk.frontier.root());
        let head = rows.latest_checkpoint()?;
        let head_problem = match &head {
            None if size == 0 => None,
            None => Some("the log has no signed checkpoint".to_owned()),
            Some(cp) => match Checkpoint::open(&cp.note, &origin, &key) {
                Err(e) => Some(format!("its latest checkpoint does not verify: {e}")),
                Ok(signed) if signed.size != size => Some(format!(
                    "its latest signed checkpoint covers {} entries but the log has {size}",
                    signed.size
                )),
                Ok(signed) if signed.root != self.walk.frontier.root() => {
                    Some("the recomputed Merkle root differs from the signed one".into())
                }
                Ok(_) => None,
            },
        };
        report.checkpoints = u64::from(head.is_some());
        report.problems = self.problems.clone();
        if let Some(msg) = head_problem {
            report.push(Some(size), msg);
        }
        if let Err(why) = &trust {
            report.push(None, format!("the store's key is not trusted: {why}"));
        }
        report.problems.sort_by_key(|p| (p.seq.is_none(), p.seq));
        Ok(report)
    }
}

/// Stored checkpoints, smallest first: each must be signed and match the recomputed root, and
/// the largest must cover the whole log (every write signs the new head).
fn checkpoints(
    stored: &[CheckpointRow],
    origin: &str,
    key: &VerifyingKey,
    walk: &entries::Walk,
    report: &mut VerifyReport,
) {
    let entry_problems: Vec<u64> = report.problems.iter().filter_map(|p| p.seq).collect();
    let mut good_sizes: Vec<u64> = Vec::new();
    // Each note's signature is checked on the workers; the results are folded in order.
    let (roots, size) = (&walk.roots, walk.size);
    let checked = walk
        .workers
        .map(stored, |cp| check_point(cp, origin, key, roots, size));
    for (cp, problem) in stored.iter().zip(checked) {
        report.checkpoints += 1;
        match problem {
            None => good_sizes.push(cp.size),
            Some(msg) => {
                let seq = blame(cp.size, walk.size, &good_sizes, &entry_problems);
                report.push(
                    Some(seq),
                    format!("checkpoint {} (size {}): {msg}", cp.id, cp.size),
                );
            }
        }
    }
    let covered = good_sizes.iter().copied().max().unwrap_or(0);
    if walk.size > 0 && covered < walk.size {
        report.push(
            Some(covered + 1),
            format!(
                "no signed checkpoint covers entries {}..{}: they were added or rewritten outside cq",
                covered + 1,
                walk.size
            ),
        );
    }
}

fn exported_checkpoint(cp: &Checkpoint, walk: &entries::Walk, report: &mut VerifyReport) {
    report.exported_size = Some(cp.size);
    if cp.size > walk.size {
        report.push(
            Some(walk.size + 1),
            format!(
                "missing: the exported checkpoint covers {} entries but the store has {}; \
                 the store was truncated or rolled back",
                cp.size, walk.size
            ),
        );
    } else if walk.roots.get(&cp.size) != Some(&cp.root) {
        let entry_problems: Vec<u64> = report.problems.iter().filter_map(|p| p.seq).collect();
        let seq = blame(cp.size, walk.size, &[], &entry_problems);
        report.push(
            Some(seq),
            format!(
                "the log does not extend the exported checkpoint: its first {} entries have a \
                 different root; an entry from \"{seq}\" on was rewritten",
                cp.size
            ),
        );
    }
}

fn check_point(
    cp: &CheckpointRow,
    origin: &str,
    key: &VerifyingKey,
    roots: &BTreeMap<u64, Hash>,
    size: u64,
) -> Option<String> {
    let parsed = match Checkpoint::open(&cp.note, origin, key) {
        Ok(parsed) => parsed,
        Err(e) => return Some(e.to_string()),
    };
    if parsed.origin != origin {
        return Some(format!("origin \"{}\" is not the store's", parsed.origin));
    }
    if parsed.size != cp.size || unhex32(&cp.root_hex) != Some(parsed.root) {
        return Some("its size or root columns differ from its signed note".into());
    }
    if cp.size > size {
        return Some(format!(
            "covers {} entries but the log has {size}: entries were removed",
            cp.size
        ));
    }
    match roots.get(&cp.size) {
        Some(root) if *root == parsed.root => None,
        _ => Some("the recomputed Merkle root differs from the signed one".into()),
    }
}

/// The entry to blame for a root mismatch at `size`: the first entry-level problem after the
/// largest smaller checkpoint that matched, else the first entry after it (or the first
/// missing entry if the log is shorter).
fn blame(size: u64, log_size: u64, good_sizes: &[u64], entry_problems: &[u64]) -> u64 {
    let from = good_sizes
        .iter()
        .copied()
        .filter(|s| *s < size)
        .max()
        .unwrap_or(0)
        + 1;
    let known = entry_problems
        .iter()
        .copied()
        .filter(|s| (from..=size).contains(s))
        .min();
    match known {
        Some(seq) => seq,
        None if size > log_size => log_size + 1,
        None => from,
    }
}

/// Rebuilds a frontier to the root at each wanted size (used by `entries`).
pub(crate) fn remember(frontier: &Frontier, wanted: &[u64], roots: &mut BTreeMap<u64, Hash>) {
    if wanted.binary_search(&frontier.size()).is_ok() {
        roots.insert(frontier.size(), frontier.root());
    }
}
