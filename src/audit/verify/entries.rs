//! The per-entry half of `verify`: reads the log in chunks, checks each entry's bytes in
//! parallel (hashes, canonical form, envelope, signature), then folds them in order (sequence
//! numbers, chain links, Merkle frontier) and collects the facts the table cross-check needs.

use std::collections::{BTreeMap, HashMap};

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use ed25519_dalek::VerifyingKey;
use rusqlite::params;

use sha2::{Digest, Sha256};

use super::super::flat::{self, Flat, FlatReceipt};
use super::super::keys::{key_id, to_verifying, verify_b64};
use super::super::merkle::{leaf_hash, Frontier, Hash};
use super::super::receipt::{ReceiptKind, RECEIPT_SCHEMA};
use super::super::unhex32;
use super::{remember, VerifyReport};
use crate::json::{self, Limits};
use crate::store::{Store, StoreError};

const CHUNK: i64 = 16_384;

/// What the receipts say, for the cross-check against the tables.
#[derive(Debug, Default)]
pub(super) struct Facts {
    pub compactions: HashMap<String, CompactionFacts>,
    /// Approval, decision and reveal receipts by sequence number.
    pub signed: BTreeMap<u64, SignedFact>,
    /// Reviewer registrations by sequence number.
    pub reviewers: BTreeMap<u64, ReviewerFact>,
}

#[derive(Debug, Default)]
pub(super) struct CompactionFacts {
    pub verdict_seq: u64,
    pub request_sha256: String,
    pub verdict: String,
    pub latest_report: String,
    /// The receipt that set `latest_report`.
    pub latest_report_seq: u64,
    /// `(seq, action)` of the decision receipt.
    pub decision: Option<(u64, String)>,
}

#[derive(Debug)]
pub(super) struct SignedFact {
    pub kind: ReceiptKind,
    pub compaction_id: String,
    pub key_id: String,
    pub report_sha256: String,
    pub reason: String,
    pub action: String,
    pub finding_id: String,
}

#[derive(Debug)]
pub(super) struct ReviewerFact {
    pub name: String,
    pub key_id: String,
    pub public_key: String,
    pub role: String,
}

pub(super) struct Walk {
    pub size: u64,
    pub signatures: u64,
    pub frontier: Frontier,
    pub roots: BTreeMap<u64, Hash>,
    pub facts: Facts,
}

struct Raw {
    seq: u64,
    kind: String,
    compaction_id: Option<String>,
    json: String,
    sha: String,
    prev: String,
    leaf: String,
    signature: Option<String>,
    key_id: Option<String>,
    created_at: String,
}

struct Checked<'a> {
    sha: Hash,
    leaf: Hash,
    problems: Vec<String>,
    body: Option<FlatReceipt<'a>>,
    signed: bool,
}

/// Reviewer keys registered in the log: key id → (key, registration seq).
type Keys = HashMap<String, (VerifyingKey, u64)>;

pub(super) fn walk(
    store: &Store,
    wanted: &[u64],
    report: &mut VerifyReport,
) -> Result<Walk, StoreError> {
    let mut wanted = wanted.to_vec();
    wanted.sort_unstable();
    wanted.dedup();
    let keys = registered_keys(store)?;
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(8);
    let mut w = Walk {
        size: 0,
        signatures: 0,
        frontier: Frontier::new(),
        roots: BTreeMap::new(),
        facts: Facts::default(),
    };
    remember(&w.frontier, &wanted, &mut w.roots);
    let mut prev_sha = [0u8; 32];
    let mut after = 0i64;
    loop {
        let raws = read_chunk(store, after)?;
        let Some(last) = raws.last() else { break };
        after = last.seq as i64;
        let checked = check_parallel(&raws, &keys, threads);
        for (raw, c) in raws.iter().zip(checked) {
            let expected = w.size + 1;
            if raw.seq != expected {
                let msg = format!("missing: the next stored entry is \"{}\"", raw.seq);
                report.push(Some(expected), msg);
            }
            for p in c.problems {
                report.push(Some(raw.seq), p);
            }
            if unhex32(&raw.prev) != Some(prev_sha) {
                let msg = "chain broken: previous-hash column does not match the previous receipt";
                report.push(Some(raw.seq), msg.into());
            }
            if let Some(body) = &c.body {
                if body.int("seq") != Some(raw.seq as i64) {
                    let msg = "receipt's own seq does not match its position";
                    report.push(Some(raw.seq), msg.into());
                }
                let named = body.str("prev_receipt_sha256").and_then(unhex32);
                if named != Some(prev_sha) {
                    let msg = "chain broken: receipt does not name the previous receipt's hash";
                    report.push(Some(raw.seq), msg.into());
                }
                if let Some(msg) = collect(&mut w.facts, raw.seq, body, &keys) {
                    report.push(Some(raw.seq), msg);
                }
            }
            w.signatures += u64::from(c.signed);
            prev_sha = c.sha;
            w.frontier.push(c.leaf);
            w.size = w.frontier.size();
            remember(&w.frontier, &wanted, &mut w.roots);
        }
    }
    Ok(w)
}

fn read_chunk(store: &Store, after: i64) -> Result<Vec<Raw>, StoreError> {
    let err = StoreError::sql("reading the audit log");
    let mut st = store
        .conn()
        .prepare_cached(
            "SELECT seq, kind, compaction_id, receipt_json, receipt_sha256, prev_hash, leaf_hash,
                    signature, key_id, created_at
             FROM audit_entries WHERE seq > ?1 ORDER BY seq LIMIT ?2",
        )
        .map_err(err)?;
    let rows = st
        .query_map(params![after, CHUNK], |r| {
            Ok(Raw {
                seq: r.get::<_, i64>(0)?.max(0) as u64,
                kind: r.get(1)?,
                compaction_id: r.get(2)?,
                json: r.get(3)?,
                sha: r.get(4)?,
                prev: r.get(5)?,
                leaf: r.get(6)?,
                signature: r.get(7)?,
                key_id: r.get(8)?,
                created_at: r.get(9)?,
            })
        })
        .map_err(err)?;
    rows.collect::<Result<_, _>>().map_err(err)
}

fn check_parallel<'a>(raws: &'a [Raw], keys: &Keys, threads: usize) -> Vec<Checked<'a>> {
    let per = raws.len().div_ceil(threads.max(1)).max(1);
    std::thread::scope(|s| {
        let handles: Vec<_> = raws
            .chunks(per)
            .map(|part| {
                s.spawn(move || part.iter().map(|r| check_one(r, keys)).collect::<Vec<_>>())
            })
            .collect();
        let mut out = Vec::with_capacity(raws.len());
        for (h, part) in handles.into_iter().zip(raws.chunks(per)) {
            // A panicking checker is itself a verification failure, never a pass.
            out.extend(h.join().unwrap_or_else(|_| {
                let failed = || Checked {
                    sha: [0; 32],
                    leaf: [0; 32],
                    problems: vec!["internal error while checking this entry".into()],
                    body: None,
                    signed: false,
                };
                part.iter().map(|_| failed()).collect()
            }));
        }
        out
    })
}

/// Everything about one entry that does not depend on its neighbours.
fn check_one<'a>(raw: &'a Raw, keys: &Keys) -> Checked<'a> {
    let bytes = raw.json.as_bytes();
    let sha: Hash = Sha256::digest(bytes).into();
    let leaf = leaf_hash(bytes);
    let mut problems = Vec::new();
    if unhex32(&raw.sha) != Some(sha) {
        problems.push("receipt hash does not match the receipt's bytes".to_owned());
    }
    if unhex32(&raw.leaf) != Some(leaf) {
        problems.push("leaf hash does not match the receipt's bytes".to_owned());
    }
    let body = flat::read(&raw.json);
    if body.is_none() {
        // Say precisely what is wrong, using the full parser.
        let limits = Limits {
            max_bytes: 1 << 20,
            max_depth: 8,
        };
        problems.push(match json::parse(bytes, &limits) {
            Err(e) => format!("receipt is not valid JSON: {e}"),
            Ok(v) if json::canonical(&v).ok().as_deref() != Some(raw.json.as_str()) => {
                "receipt is not in canonical form".into()
            }
            Ok(_) => "receipt is not a flat object of the receipt schema".into(),
        });
    }
    let mut signed = false;
    if let Some(v) = &body {
        if v.str("schema") != Some(RECEIPT_SCHEMA) {
            problems.push(format!("receipt schema is not \"{RECEIPT_SCHEMA}\""));
        }
        let kind = v.str("kind").and_then(ReceiptKind::parse);
        if v.str("kind") != Some(raw.kind.as_str()) || kind.is_none() {
            problems.push(format!(
                "kind column \"{}\" differs from the receipt",
                raw.kind
            ));
        }
        if v.str("time") != Some(raw.created_at.as_str()) {
            problems.push("time column differs from the receipt".into());
        }
        let named = match v.get("compaction_id") {
            Some(Flat::Null) => None,
            Some(Flat::Str(s)) => Some(s.as_ref()),
            _ => Some(""),
        };
        if named != raw.compaction_id.as_deref() {
            problems.push("compaction column differs from the receipt".into());
        }
        match kind {
            Some(k) if k.is_signed() => {
                let claimed = v.str("reviewer_key_id");
                if claimed.is_none() || claimed != raw.key_id.as_deref() {
                    problems.push("key id column differs from the receipt's reviewer key".into());
                }
                let key = raw.key_id.as_deref().and_then(|id| keys.get(id));
                match (key, raw.signature.as_deref()) {
                    (None, _) => problems.push(format!(
                        "signing key \"{}\" was never registered in this log",
                        raw.key_id.as_deref().unwrap_or("")
                    )),
                    (Some(_), None) => problems.push("signature is missing".into()),
                    (Some((key, _)), Some(sig)) => {
                        signed = verify_b64(key, bytes, sig);
                        if !signed {
                            problems.push("reviewer signature does not verify".into());
                        }
                    }
                }
            }
            Some(_) if raw.signature.is_some() || raw.key_id.is_some() => {
                problems.push("unsigned receipt kind carries a signature or key id".into());
            }
            _ => {}
        }
    }
    Checked {
        sha,
        leaf,
        problems,
        body,
        signed,
    }
}

/// Reviewer keys from the log's registration receipts (first registration of a key id wins).
fn registered_keys(store: &Store) -> Result<Keys, StoreError> {
    let err = StoreError::sql("reading reviewer registrations");
    let mut st = store
        .conn()
        .prepare("SELECT seq, receipt_json FROM audit_entries WHERE kind = 'reviewer' ORDER BY seq")
        .map_err(err)?;
    let rows: Vec<(i64, String)> = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .and_then(Iterator::collect)
        .map_err(err)?;
    let mut keys = Keys::new();
    for (seq, text) in rows {
        let Some(v) = flat::read(&text) else { continue };
        let Some((id, key)) = reviewer_key(&v) else {
            continue;
        };
        keys.entry(id).or_insert((key, seq.max(0) as u64));
    }
    Ok(keys)
}

fn reviewer_key(v: &FlatReceipt<'_>) -> Option<(String, VerifyingKey)> {
    let raw = B64.decode(v.str("public_key")?).ok()?;
    let key = to_verifying(&raw)?;
    let id = v.str("reviewer_key_id")?;
    (key_id(&key) == id).then(|| (id.to_owned(), key))
}

/// Records what receipt `seq` says; returns a problem when it contradicts earlier receipts.
fn collect(facts: &mut Facts, seq: u64, v: &FlatReceipt<'_>, keys: &Keys) -> Option<String> {
    let s = |k: &str| v.str(k).unwrap_or("").to_owned();
    let kind = v.str("kind").and_then(ReceiptKind::parse)?;
    let id = s("compaction_id");
    match kind {
        ReceiptKind::Verdict => {
            if facts.compactions.contains_key(&id) {
                return Some(format!("second verdict receipt for compaction \"{id}\""));
            }
            let f = CompactionFacts {
                verdict_seq: seq,
                request_sha256: s("request_sha256"),
                verdict: s("verdict"),
                latest_report: s("report_sha256"),
                latest_report_seq: seq,
                decision: None,
            };
            facts.compactions.insert(id, f);
        }
        ReceiptKind::Rerun => match facts.compactions.get_mut(&id) {
            Some(c) => {
                c.latest_report = s("report_sha256");
                c.latest_report_seq = seq;
            }
            None => return Some(format!("rerun of compaction \"{id}\" that has no verdict")),
        },
        ReceiptKind::Reviewer => {
            if reviewer_key(v).is_none() {
                return Some("reviewer public key does not match its key id".into());
            }
            let f = ReviewerFact {
                name: s("reviewer"),
                key_id: s("reviewer_key_id"),
                public_key: s("public_key"),
                role: s("role"),
            };
            facts.reviewers.insert(seq, f);
        }
        ReceiptKind::Approval | ReceiptKind::Decision | ReceiptKind::Reveal => {
            let key_id = s("reviewer_key_id");
            if keys.get(&key_id).is_some_and(|(_, reg)| *reg >= seq) {
                return Some(format!(
                    "signed by key \"{key_id}\" before it was registered"
                ));
            }
            let Some(c) = facts.compactions.get_mut(&id) else {
                return Some(format!(
                    "{} for compaction \"{id}\" that has no verdict",
                    kind.as_str()
                ));
            };
            if kind == ReceiptKind::Decision {
                if let Some((first, _)) = c.decision {
                    return Some(format!(
                        "second decision on compaction \"{id}\" (first at entry {first})"
                    ));
                }
                c.decision = Some((seq, s("decision")));
            }
            let f = SignedFact {
                kind,
                compaction_id: id,
                key_id,
                report_sha256: s("report_sha256"),
                reason: s("reason"),
                action: s("decision"),
                finding_id: s("finding_id"),
            };
            facts.signed.insert(seq, f);
        }
    }
    None
}
