//! The per-entry half of `verify`: reads the log in bounded chunks, admits reviewer
//! registrations in order (the chain of authority), checks each entry's bytes on the worker
//! pool (hashes, canonical form, envelope, signature) while the calling thread reads the next
//! chunk, then folds them in log order (sequence numbers, chain links, the Merkle frontier)
//! and collects what the receipts say for the table cross-check. Only the fold decides what
//! is reported and in which order, so the report does not depend on the number of threads.

use std::collections::{BTreeMap, HashMap};

use ed25519_dalek::VerifyingKey;
use rayon::prelude::*;
use sha2::{Digest, Sha256};

use super::super::authority::Authority;
use super::super::merkle::{leaf_hash, Frontier, Hash};
use super::super::receipt::{ReceiptKind, RECEIPT_SCHEMA};
use super::super::receipt_fields::{self, Flat, FlatReceipt};
use super::super::rows::{EntryRow, LogRows};
use super::super::unhex32;
use super::facts::Facts;
use super::{remember, VerifyReport, Workers};
use crate::json::{self, Limits};

/// Entries read per query; two chunks (the one checked, the one read) are held at a time.
const CHUNK: usize = 8_192;

/// Text every registration receipt holds: a body without it cannot be one (the receipt reader
/// accepts no escaped letters), so registrations are found without parsing every body.
const REGISTRATION_KIND: &str = "\"kind\":\"reviewer\"";

pub(super) struct Walk {
    pub size: u64,
    pub signatures: u64,
    pub frontier: Frontier,
    pub roots: BTreeMap<u64, Hash>,
    pub facts: Facts,
    /// Every leaf hash, recomputed from the receipt bytes, in order (when collecting).
    pub leaves: Vec<Hash>,
    authority: Authority,
    prev_sha: Hash,
    /// Whether to keep facts and leaves for the table and tree checks (a chain-only check
    /// keeps neither, so it stays small on a large log).
    collect: bool,
    pub workers: Workers,
}

struct Checked<'a> {
    sha: Hash,
    leaf: Hash,
    problems: Vec<String>,
    body: Option<FlatReceipt<'a>>,
    signed: bool,
}

/// Walks the whole log from its first entry.
pub(super) fn walk<R: LogRows + ?Sized>(
    rows: &R,
    store_key: &VerifyingKey,
    wanted: &[u64],
    workers: Workers,
    report: &mut VerifyReport,
) -> Result<Walk, R::Error> {
    let mut w = Walk::new(store_key, true, workers);
    w.extend(rows, wanted, report)?;
    Ok(w)
}

impl Walk {
    pub fn new(store_key: &VerifyingKey, collect: bool, workers: Workers) -> Walk {
        Walk {
            size: 0,
            signatures: 0,
            frontier: Frontier::new(),
            roots: BTreeMap::new(),
            facts: Facts::default(),
            leaves: Vec::new(),
            authority: Authority::new(store_key),
            prev_sha: [0u8; 32],
            collect,
            workers,
        }
    }

    /// Checks the entries after the ones already walked, remembering the root at each size in
    /// `wanted`.
    pub fn extend<R: LogRows + ?Sized>(
        &mut self,
        rows: &R,
        wanted: &[u64],
        report: &mut VerifyReport,
    ) -> Result<(), R::Error> {
        let mut wanted = wanted.to_vec();
        wanted.sort_unstable();
        wanted.dedup();
        remember(&self.frontier, &wanted, &mut self.roots);
        let mut next = rows.entries(self.size, CHUNK)?;
        loop {
            let chunk = next;
            let Some(last) = chunk.last() else { break };
            let after = last.seq;
            let refused = admit_registrations(&chunk, &mut self.authority);
            let (checked, fetched) = check_while(&self.workers, &chunk, &self.authority, || {
                rows.entries(after, CHUNK)
            });
            for (row, c) in chunk.iter().zip(checked) {
                self.fold(row, c, refused.get(&row.seq), report);
                remember(&self.frontier, &wanted, &mut self.roots);
            }
            next = fetched?;
        }
        Ok(())
    }

    /// Folds one checked entry in order: position, chain, facts, frontier.
    fn fold(
        &mut self,
        row: &EntryRow,
        c: Checked<'_>,
        refused: Option<&String>,
        report: &mut VerifyReport,
    ) {
        let expected = self.size + 1;
        if row.seq != expected {
            let msg = format!("missing: the next stored entry is \"{}\"", row.seq);
            report.push(Some(expected), msg);
        }
        for p in c.problems {
            report.push(Some(row.seq), p);
        }
        if let Some(why) = refused {
            report.push(Some(row.seq), why.clone());
        }
        if unhex32(&row.prev_hash) != Some(self.prev_sha) {
            let msg = "chain broken: previous-hash column does not match the previous receipt";
            report.push(Some(row.seq), msg.into());
        }
        if let Some(body) = &c.body {
            if body.int("seq") != Some(row.seq as i64) {
                let msg = "receipt's own seq does not match its position";
                report.push(Some(row.seq), msg.into());
            }
            let named = body.str("prev_receipt_sha256").and_then(unhex32);
            if named != Some(self.prev_sha) {
                let msg = "chain broken: receipt does not name the previous receipt's hash";
                report.push(Some(row.seq), msg.into());
            }
            if self.collect {
                if let Some(msg) = self.facts.collect(row.seq, body, &self.authority) {
                    report.push(Some(row.seq), msg);
                }
            }
        }
        self.signatures += u64::from(c.signed);
        self.prev_sha = c.sha;
        self.frontier.push(c.leaf);
        if self.collect {
            self.leaves.push(c.leaf);
        }
        self.size = self.frontier.size();
    }
}

/// Admits the chunk's registration receipts in order; why each refused one is not a valid act
/// of authority, by sequence number.
fn admit_registrations(chunk: &[EntryRow], authority: &mut Authority) -> HashMap<u64, String> {
    let mut refused = HashMap::new();
    for row in chunk {
        if !row.body.contains(REGISTRATION_KIND) {
            continue;
        }
        let Some(body) = receipt_fields::read(&row.body) else {
            continue;
        };
        if body.str("kind") != Some(ReceiptKind::Reviewer.as_str()) {
            continue;
        }
        if let Err(why) = authority.admit(
            row.seq,
            row.body.as_bytes(),
            &body,
            row.signature.as_deref(),
        ) {
            refused.insert(row.seq, why);
        }
    }
    refused
}

/// Checks `rows` on the workers while the calling thread runs `fetch` (reading the next
/// chunk); the checks come back in the order of `rows`.
fn check_while<'a, T>(
    workers: &Workers,
    rows: &'a [EntryRow],
    authority: &Authority,
    fetch: impl FnOnce() -> T,
) -> (Vec<Checked<'a>>, T) {
    let check = |r: &'a EntryRow| guarded(r, authority);
    let Some(pool) = workers.pool() else {
        let checked = rows.iter().map(check).collect();
        return (checked, fetch());
    };
    let mut checked = Vec::new();
    let fetched = pool.in_place_scope(|s| {
        s.spawn(|_| checked = rows.par_iter().map(check).collect());
        fetch()
    });
    (checked, fetched)
}

/// [`check_one`], where a panicking checker is itself a verification failure, never a pass.
fn guarded<'a>(row: &'a EntryRow, authority: &Authority) -> Checked<'a> {
    let checked =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check_one(row, authority)));
    checked.unwrap_or_else(|_| Checked {
        sha: [0; 32],
        leaf: [0; 32],
        problems: vec!["internal error while checking this entry".into()],
        body: None,
        signed: false,
    })
}

/// Everything about one entry that does not depend on its neighbours.
fn check_one<'a>(row: &'a EntryRow, authority: &Authority) -> Checked<'a> {
    let bytes = row.body.as_bytes();
    let sha: Hash = Sha256::digest(bytes).into();
    let leaf = leaf_hash(bytes);
    let mut problems = Vec::new();
    if unhex32(&row.sha256) != Some(sha) {
        problems.push("receipt hash does not match the receipt's bytes".to_owned());
    }
    if unhex32(&row.leaf_hash) != Some(leaf) {
        problems.push("leaf hash does not match the receipt's bytes".to_owned());
    }
    let body = receipt_fields::read(&row.body);
    if body.is_none() {
        // Say precisely what is wrong, using the full parser.
        let limits = Limits {
            max_bytes: 1 << 20,
            max_depth: 8,
        };
        problems.push(match json::parse(bytes, &limits) {
            Err(e) => format!("receipt is not valid JSON: {e}"),
            Ok(v) if json::canonical(&v).ok().as_deref() != Some(row.body.as_str()) => {
                "receipt is not in canonical form".into()
            }
            Ok(_) => "receipt is not a flat object of the receipt schema".into(),
        });
    }
    let mut signed = false;
    if let Some(v) = &body {
        envelope(row, v, &mut problems);
        signed = signature(row, v, authority, &mut problems);
    }
    Checked {
        sha,
        leaf,
        problems,
        body,
        signed,
    }
}

/// The columns stored beside the body must say what the body says.
fn envelope(row: &EntryRow, v: &FlatReceipt<'_>, problems: &mut Vec<String>) {
    if v.str("schema") != Some(RECEIPT_SCHEMA) {
        problems.push(format!("receipt schema is not \"{RECEIPT_SCHEMA}\""));
    }
    let kind = v.str("kind").and_then(ReceiptKind::parse);
    if v.str("kind") != Some(row.kind.as_str()) || kind.is_none() {
        problems.push(format!(
            "kind column \"{}\" differs from the receipt",
            crate::sanitize::excerpt(&row.kind, 40)
        ));
    }
    if v.str("time") != Some(row.created_at.as_str()) {
        problems.push("time column differs from the receipt".into());
    }
    let named = match v.get("compaction_id") {
        Some(Flat::Null) => None,
        Some(Flat::Str(s)) => Some(s.as_ref()),
        _ => Some(""),
    };
    if named != row.compaction_id.as_deref() {
        problems.push("compaction column differs from the receipt".into());
    }
}

/// Checks the signature a receipt kind needs; whether one verified.
fn signature(
    row: &EntryRow,
    v: &FlatReceipt<'_>,
    authority: &Authority,
    problems: &mut Vec<String>,
) -> bool {
    let signature = row.signature.as_deref();
    match v.str("kind").and_then(ReceiptKind::parse) {
        Some(ReceiptKind::Reviewer) => {
            // The authoriser's signature was checked when the registration was admitted.
            let by = v.str("authorized_by");
            if by != row.key_id.as_deref() {
                problems.push("key id column differs from the registration's authoriser".into());
            }
            by.is_some()
                && authority
                    .reviewer(v.str("reviewer_key_id").unwrap_or(""))
                    .is_some()
        }
        Some(k) if k.is_signed() => {
            let claimed = v.str("reviewer_key_id");
            if claimed.is_none() || claimed != row.key_id.as_deref() {
                problems.push("key id column differs from the receipt's reviewer key".into());
            }
            let key_id = row.key_id.as_deref().unwrap_or("");
            match authority.signer(row.seq, key_id, row.body.as_bytes(), signature) {
                Ok(_) => true,
                Err(why) => {
                    problems.push(why);
                    false
                }
            }
        }
        Some(_) if row.signature.is_some() || row.key_id.is_some() => {
            problems.push("unsigned receipt kind carries a signature or key id".into());
            false
        }
        _ => false,
    }
}
