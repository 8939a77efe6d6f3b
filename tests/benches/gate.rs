//! `cargo bench --bench gate`: the seed's typical workload (20 source messages of about 1 KB,
//! 5 invariants and 5 commitments, a 2 KB summary that passes), timed per call for the G002
//! consistency check alone and for the whole gate (strict parse, schema, provenance,
//! consistency, secret scan over every field, pinned, authority, report). Prints a markdown
//! table; the seed's Python reference takes 363 µs and 768 µs on this machine type.
#![allow(clippy::unwrap_used)]

#[path = "../support/requests.rs"]
mod requests;

use std::hint::black_box;

/// The allocator the `cq` binary uses.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
use std::time::{Duration, Instant};

use cq::engine::consistency::{ConsistencyChecker, ConsistencyRequest, MemoryEvidence};
use cq::engine::gate::PolicySource;
use cq::engine::pinned::PinnedManifest;
use cq::engine::secret_scan::{CompactionScanner, ExactSecretScanner};
use cq::engine::{schema, GateRequest, PolicyEngine, SourceMessage, SummarizerOutput};
use cq::json::{self, Limits, Value};
use cq::policy::grammar::RequiredClause;
use cq::policy::{Policy, RecordSpec};
use cq::scan::backend::ScannerBackend;
use cq::scan::Scanner;
use cq::service::checker::MemoryAudit;

fn policy() -> Policy {
    let mut p = Policy::builtin("default").unwrap();
    p.commitments.records.push(RecordSpec {
        id: "COMMIT-REVIEW".into(),
        canonical_text: "Ask for review before merging.".into(),
        canonical_predicate: "require(review_before_merge)".into(),
        record_revision: 1,
    });
    p.grammar
        .clauses
        .push("ask for review before merging".into());
    p.grammar.required.push(RequiredClause {
        predicate: "require(review_before_merge)".into(),
        clause: "ask for review before merging".into(),
    });
    p
}

fn messages() -> Vec<SourceMessage> {
    let roles = ["user", "assistant", "tool"];
    (0..20)
        .map(|i| {
            let mut content = format!("Turn {i}: ");
            while content.len() < 1000 {
                content.push_str("ran cargo test in crates/parser; test parse::nested_{i} ok; editing src/lib.rs line 120 to fix the off-by-one. ");
            }
            SourceMessage { message_id: format!("m{i}"), role: roles[i % 3].into(), content }
        })
        .collect()
}

fn summary(engine: &PolicyEngine) -> String {
    let mut text: String = engine
        .policy
        .grammar
        .required
        .iter()
        .map(|r| format!("{}. ", capitalise(&r.clause)))
        .collect();
    let mut n = 0;
    while text.len() < 2000 {
        text.push_str(&format!(
            "Modified file src/module_{n}.rs. Test case_{n} passed. "
        ));
        n += 1;
    }
    text.trim_end().to_owned()
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
        .unwrap_or_default()
}

fn raw_output(engine: &PolicyEngine, messages: &[SourceMessage], summary: &str) -> String {
    let messages: Vec<Value> = messages.iter().map(SourceMessage::record).collect();
    json::canonical(&requests::output(engine, &messages, summary)).unwrap()
}

/// `CQ_BENCH_SCALE` (a fraction, e.g. 0.01) shortens the runs for profiling;
/// `CQ_BENCH_ONLY` (comma-separated names: `consistency`, `gate`, `gate-afresh`, `floor`,
/// `seed-consistency`, `seed-gate`, `sha`, `writer`, `stages`) runs only those measurements, so
/// a profile shows one workload.
fn scaled(iterations: usize) -> usize {
    let scale: f64 = std::env::var("CQ_BENCH_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0);
    ((iterations as f64 * scale) as usize).max(10)
}

fn time(name: &str, mut f: impl FnMut(), iterations: usize) -> (Duration, Duration) {
    if std::env::var("CQ_BENCH_ONLY").is_ok_and(|only| !only.split(',').any(|n| n == name)) {
        return (Duration::ZERO, Duration::ZERO);
    }
    let iterations = scaled(iterations);
    for _ in 0..iterations / 10 {
        f();
    }
    let mut samples = Vec::with_capacity(iterations);
    for _ in 0..iterations {
        let start = Instant::now();
        f();
        samples.push(start.elapsed());
    }
    samples.sort();
    let mean = samples.iter().sum::<Duration>() / iterations as u32;
    (mean, samples[iterations / 2])
}

/// `CQ_BENCH_DUMP=FILE` appends each workload's report (digest and canonical text), audit
/// events and returned context to FILE, one line each, so two builds' reports can be compared
/// with `cmp`.
fn dump_report(outcome: &cq::engine::gate::GateOutcome) {
    use std::io::Write;
    let Ok(path) = std::env::var("CQ_BENCH_DUMP") else {
        return;
    };
    let events = json::canonical(&Value::Array(outcome.audit_events.clone())).unwrap();
    let context: Vec<Value> = outcome.messages.iter().map(|m| m.to_value()).collect();
    let context = json::canonical(&Value::Array(context)).unwrap();
    let line = format!(
        "{}\t{}\t{events}\t{context}\n",
        outcome.report.sha256, outcome.report.canonical
    );
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    file.write_all(line.as_bytes()).unwrap();
}

fn micros(d: Duration) -> String {
    format!("{:.1} µs", d.as_secs_f64() * 1e6)
}

/// The seed grammar's workload: 5 invariants and 5 commitments over the seed's two predicates,
/// and a 2 KB summary, which that three-clause grammar cannot parse totally (so the evidence
/// bodies carry no clause population and the check ends INSUFFICIENT_DATA, as in the seed).
fn seed_policy() -> Policy {
    let mut p = Policy::builtin("seed-compatible").unwrap();
    let predicates = ["deny(secret_disclosure)", "allow(approved_tools)"];
    let records = |prefix: &str| -> Vec<RecordSpec> {
        (0..5)
            .map(|i| RecordSpec {
                id: format!("{prefix}-{i}"),
                canonical_text: format!("{prefix} record {i}."),
                canonical_predicate: predicates[i % 2].into(),
                record_revision: 1,
            })
            .collect()
    };
    p.invariants.records = records("SAFETY");
    p.commitments.records = records("COMMIT");
    p
}

fn seed_summary() -> String {
    let mut text =
        String::from("Continue the approved task. Do not expose secrets. Use approved tools only.");
    while text.len() < 2000 {
        text.push_str(" Continue the approved task.");
    }
    text
}

fn main() {
    let scanner = Scanner::builtin().unwrap();
    let engine = PolicyEngine::new(policy(), &scanner.rules_sha256()).unwrap();
    let messages = messages();
    let summary = summary(&engine);
    let raw = raw_output(&engine, &messages, &summary);
    let request = GateRequest {
        tenant_id: "tenant-a".into(),
        task_id: "task-a".into(),
        messages: messages.clone(),
        expected_invariant_ids: engine.manifest.ids(),
        expected_commitment_ids: engine.snapshot.ids(),
        pinned_constraints: Vec::new(),
        model_revision: "bench".into(),
        summarizer: SummarizerOutput::Raw(raw.clone()),
    };
    let backend = ScannerBackend::new(scanner.clone());
    let check = || {
        engine
            .check(&request, &backend, &scanner, &mut MemoryAudit::default())
            .unwrap()
    };
    let first = check();
    assert!(
        first.accepted,
        "the bench workload must pass: {:?}",
        first.report.failures().collect::<Vec<_>>()
    );
    dump_report(&first);
    let input_bytes: usize = messages.iter().map(|m| m.content.len()).sum::<usize>() + raw.len();

    let compacted =
        schema::validate(&json::parse(raw.as_bytes(), &Limits::default()).unwrap()).unwrap();
    let checker = ConsistencyChecker {
        manifest: &engine.manifest,
        snapshot: &engine.snapshot,
        verifier: &engine.verifier,
        cache: Some(&engine.registry_cache),
    };
    let consistency_request = ConsistencyRequest {
        tenant_id: "tenant-a",
        task_id: "task-a",
        policy_sha256: &engine.policy_sha256,
        compacted: &compacted,
        expected_invariant_ids: &request.expected_invariant_ids,
        expected_commitment_ids: &request.expected_commitment_ids,
    };
    let (c_mean, c_median) = time(
        "consistency",
        || {
            assert!(
                black_box(checker.verify(&consistency_request, &mut MemoryEvidence::default()))
                    .result
                    .is_ok()
            )
        },
        5000,
    );
    let (g_mean, g_median) = time("gate", || assert!(black_box(check()).accepted), 2000);
    // The same call with every short field new to the engine and the backend (their memos of
    // short leaves cleared).
    let (gf_mean, gf_median) = time(
        "gate-afresh",
        || {
            engine.leaf_memo.clear();
            backend.leaf_memo().clear();
            assert!(black_box(check()).accepted)
        },
        2000,
    );
    let (h_mean, h_median) = time(
        "floor",
        || {
            let mut text = String::with_capacity(input_bytes + 1024);
            for m in &messages {
                m.write_record(&mut text);
            }
            text.push_str(&raw);
            black_box(json::sha256_hex(text.as_bytes()));
        },
        5000,
    );
    let seed_engine = PolicyEngine::new(seed_policy(), &scanner.rules_sha256()).unwrap();
    let seed_raw = raw_output(&seed_engine, &messages, &seed_summary());
    let seed_request = GateRequest {
        expected_invariant_ids: seed_engine.manifest.ids(),
        expected_commitment_ids: seed_engine.snapshot.ids(),
        summarizer: SummarizerOutput::Raw(seed_raw.clone()),
        ..request.clone()
    };
    let seed_compacted =
        schema::validate(&json::parse(seed_raw.as_bytes(), &Limits::default()).unwrap()).unwrap();
    let seed_checker = ConsistencyChecker {
        manifest: &seed_engine.manifest,
        snapshot: &seed_engine.snapshot,
        verifier: &seed_engine.verifier,
        cache: Some(&seed_engine.registry_cache),
    };
    let seed_consistency = ConsistencyRequest {
        policy_sha256: &seed_engine.policy_sha256,
        compacted: &seed_compacted,
        expected_invariant_ids: &seed_request.expected_invariant_ids,
        expected_commitment_ids: &seed_request.expected_commitment_ids,
        ..consistency_request
    };
    dump_report(
        &seed_engine
            .check(
                &seed_request,
                &backend,
                &scanner,
                &mut MemoryAudit::default(),
            )
            .unwrap(),
    );
    let seed_outcome = seed_checker.verify(&seed_consistency, &mut MemoryEvidence::default());
    assert_eq!(
        seed_outcome.result.as_ref().err().map(|f| f.outcome),
        Some("INSUFFICIENT_DATA")
    );
    let (sc_mean, sc_median) = time(
        "seed-consistency",
        || {
            assert!(black_box(
                seed_checker.verify(&seed_consistency, &mut MemoryEvidence::default())
            )
            .result
            .is_err())
        },
        5000,
    );
    let (sg_mean, sg_median) = time(
        "seed-gate",
        || {
            assert!(
                !black_box(
                    seed_engine
                        .check(
                            &seed_request,
                            &backend,
                            &scanner,
                            &mut MemoryAudit::default()
                        )
                        .unwrap()
                )
                .accepted
            )
        },
        2000,
    );
    println!("workload: {} source messages ({} bytes of content), {} invariants + {} commitments, summary {} bytes, raw output {} bytes", messages.len(), input_bytes - raw.len(), engine.manifest.records.len(), engine.snapshot.records.len(), summary.len(), raw.len());
    println!();
    println!("| measurement | mean | median | seed Python | speed-up (median) |");
    println!("|---|---|---|---|---|");
    let speedup =
        |d: Duration, reference: f64| format!("{:.0}×", reference / (d.as_secs_f64() * 1e6));
    let rows = [
        (
            "default grammar, total parse: G002 consistency check",
            c_mean,
            c_median,
        ),
        (
            "default grammar, total parse: whole gate (all checks, real scanner, report)",
            g_mean,
            g_median,
        ),
        (
            "default grammar, total parse: whole gate, no short field seen before",
            gf_mean,
            gf_median,
        ),
        (
            "seed grammar: G002 consistency check (ends INSUFFICIENT_DATA)",
            sc_mean,
            sc_median,
        ),
        ("seed grammar: whole gate (falls back)", sg_mean, sg_median),
    ];
    for (name, mean, median) in rows {
        println!(
            "| {name} | {} | {} | {} | {} |",
            micros(mean),
            micros(median),
            if name.contains("gate") {
                "768 µs"
            } else {
                "363 µs"
            },
            speedup(median, if name.contains("gate") { 768.0 } else { 363.0 })
        );
    }
    println!(
        "| floor: canonical JSON + SHA-256 of the input | {} | {} | | |",
        micros(h_mean),
        micros(h_median)
    );

    // The hashing floor of each workload: the bytes one call hands SHA-256 (counted by
    // `json::hashed_on_this_thread`), hashed alone in as many digests, in this same run.
    let hashed = |f: &dyn Fn()| {
        let (bytes, digests) = json::hashed_on_this_thread();
        f();
        let (after, count) = json::hashed_on_this_thread();
        (after - bytes, count - digests)
    };
    let floors = [
        (
            "default grammar, consistency check",
            "consistency",
            c_median,
            1.5,
            hashed(&|| drop(checker.verify(&consistency_request, &mut MemoryEvidence::default()))),
        ),
        (
            "default grammar, whole gate",
            "gate",
            g_median,
            2.0,
            hashed(&|| drop(check())),
        ),
        (
            "default grammar, whole gate, no short field seen before",
            "gate-afresh",
            gf_median,
            2.0,
            hashed(&|| {
                engine.leaf_memo.clear();
                backend.leaf_memo().clear();
                drop(check())
            }),
        ),
        (
            "seed grammar, consistency check",
            "seed-consistency",
            sc_median,
            1.5,
            hashed(&|| {
                drop(seed_checker.verify(&seed_consistency, &mut MemoryEvidence::default()))
            }),
        ),
        (
            "seed grammar, whole gate",
            "seed-gate",
            sg_median,
            2.0,
            hashed(&|| {
                drop(seed_engine.check(
                    &seed_request,
                    &backend,
                    &scanner,
                    &mut MemoryAudit::default(),
                ))
            }),
        ),
    ];
    println!();
    println!("| call | median | bytes hashed (digests) | SHA-256 of those bytes alone, median | ratio | target |");
    println!("|---|---|---|---|---|---|");
    for (name, only, median, target, (bytes, digests)) in floors {
        let piece = (bytes / digests.max(1)) as usize;
        let buffer = vec![0x5au8; piece.max(1)];
        let (_, floor) = time(
            only,
            || {
                for _ in 0..digests {
                    black_box(json::sha256_hex(black_box(&buffer[..piece])));
                }
            },
            5000,
        );
        if floor.is_zero() {
            continue;
        }
        let ratio = median.as_secs_f64() / floor.as_secs_f64();
        println!(
            "| {name} | {} | {bytes} ({digests}) | {} | {ratio:.2}× | ≤ {target}×: {} |",
            micros(median),
            micros(floor),
            if ratio <= target {
                "met"
            } else {
                "**not met**"
            }
        );
    }
    stages(
        "Default grammar",
        &engine,
        &request,
        &backend,
        &scanner,
        g_median,
    );
    stages(
        "Seed grammar",
        &seed_engine,
        &seed_request,
        &backend,
        &scanner,
        sg_median,
    );
    // What SHA-256 alone costs here, to turn "bytes the contract hashes per call" into time.
    let block = vec![0x5au8; 64 * 1024];
    let (_, sha_median) = time("sha", || drop(black_box(json::sha256_hex(&block))), 5000);
    if !sha_median.is_zero() {
        println!();
        println!(
            "SHA-256 alone: {:.2} GB/s (64 KiB blocks, median)",
            block.len() as f64 / sha_median.as_secs_f64() / 1e9
        );
    }
    // What writing canonical text costs beside it: nearly every byte a call hashes is canonical
    // JSON written just before (the request's text here, written from its fields).
    let written = request.canonical().len();
    let (_, write_median) = time("writer", || drop(black_box(request.canonical())), 5000);
    if !write_median.is_zero() {
        println!(
            "Canonical JSON writer alone: {:.2} GB/s (the request's canonical text, {written} bytes, median)",
            written as f64 / write_median.as_secs_f64() / 1e9
        );
    }
}

/// One workload's gate, stage by stage: each stage timed alone (median) beside the SHA-256 time
/// of the bytes it hashes, to show where a call spends its time above its hashing floor. The
/// rest (the verdict, the trusted context, the report and its seal, the audit events) is the
/// whole gate less the stages.
fn stages(
    name: &str,
    engine: &PolicyEngine,
    request: &GateRequest,
    backend: &ScannerBackend,
    scanner: &Scanner,
    whole: Duration,
) {
    let selected = std::env::var("CQ_BENCH_ONLY");
    let SummarizerOutput::Raw(raw) = &request.summarizer else {
        return;
    };
    if selected.is_ok_and(|only| !only.split(',').any(|n| n == "stages")) {
        return;
    }
    let limits = Limits::default();
    let parsed = json::parse(raw.as_bytes(), &limits).unwrap();
    let compacted = schema::validate(&parsed).unwrap();
    let checker = ConsistencyChecker {
        manifest: &engine.manifest,
        snapshot: &engine.snapshot,
        verifier: &engine.verifier,
        cache: Some(&engine.registry_cache),
    };
    let consistency = ConsistencyRequest {
        tenant_id: &request.tenant_id,
        task_id: &request.task_id,
        policy_sha256: &engine.policy_sha256,
        compacted: &compacted,
        expected_invariant_ids: &request.expected_invariant_ids,
        expected_commitment_ids: &request.expected_commitment_ids,
    };
    let exact = ExactSecretScanner {
        policy: &engine.scan_policy,
        backend,
    };
    let pinned =
        PinnedManifest::isolate(&engine.default_pinned(), &request.pinned_constraints).unwrap();
    let summary = compacted.summary_text.as_str();
    // As the gate scans them: through the engine's memo of short leaves (`afresh` clears it
    // first, as a call whose claims were never seen by this engine).
    let claim_values = |afresh: bool| {
        if afresh {
            engine.leaf_memo.clear();
        }
        let memo = &engine.leaf_memo;
        let mut seen = std::collections::HashSet::new();
        for claim in &compacted.preserved_constraint_claims {
            for (key, value) in claim.fields() {
                if let json::Field::Str(text) = value {
                    if seen.insert(text) {
                        black_box(memo.scan_field(scanner, key, text));
                    }
                }
            }
        }
        black_box(memo.scan_field(
            scanner,
            "summarizer.model_revision",
            &request.model_revision,
        ));
    };
    let rows: [(&str, &dyn Fn()); 7] = [
        ("source digests", &|| {
            drop(black_box(request.source_digests().unwrap()))
        }),
        ("strict parse, output digest, schema", &|| {
            let parsed = json::parse(raw.as_bytes(), &limits).unwrap();
            black_box(json::canonical_sha256(&parsed).unwrap());
            drop(black_box(schema::validate(&parsed).unwrap()));
        }),
        ("G002 consistency check", &|| {
            drop(black_box(
                checker.verify(&consistency, &mut MemoryEvidence::default()),
            ))
        }),
        ("secret scan: claims and model revision", &|| {
            claim_values(false)
        }),
        ("secret scan: G003 request, backend, receipt", &|| {
            drop(black_box(exact.scan(&engine.policy_sha256, &compacted)))
        }),
        ("pinned constraints", &|| {
            drop(black_box(pinned.conflicts(summary)))
        }),
        ("authority", &|| {
            drop(black_box(
                engine.authority.check(summary, &request.messages),
            ))
        }),
    ];
    println!();
    println!("{name}, by stage (each timed alone; SHA-256 of the bytes each hashes, alone):");
    println!();
    println!("| stage | median | bytes hashed (digests) | SHA-256 of those bytes alone |");
    println!("|---|---|---|---|");
    let mut total = Duration::ZERO;
    for (stage, f) in rows {
        let (_, median) = time("stages", f, 1000);
        let (bytes, digests) = hashed_by(f);
        let floor = sha_alone(bytes, digests);
        total += median;
        println!(
            "| {stage} | {} | {bytes} ({digests}) | {} |",
            micros(median),
            micros(floor)
        );
    }
    if !whole.is_zero() {
        println!(
            "| the rest: verdict, trusted context, report, seal, audit events | {} | | |",
            micros(whole.saturating_sub(total))
        );
    }
    let (_, afresh) = time("stages", || claim_values(true), 1000);
    println!(
        "| (secret scan: claims and model revision, none seen before) | {} | 0 (0) | 0.0 µs |",
        micros(afresh)
    );
    let (_, afresh) = time(
        "stages",
        || {
            backend.leaf_memo().clear();
            drop(black_box(exact.scan(&engine.policy_sha256, &compacted)))
        },
        1000,
    );
    println!(
        "| (secret scan: G003 request, backend, receipt, no short field seen before) | {} | | |",
        micros(afresh)
    );
}

/// The bytes and digests one call of `f` hands SHA-256.
fn hashed_by(f: &dyn Fn()) -> (u64, u64) {
    let (bytes, digests) = json::hashed_on_this_thread();
    f();
    let (after, count) = json::hashed_on_this_thread();
    (after - bytes, count - digests)
}

/// SHA-256 of `digests` equal pieces of `bytes` in all, median.
fn sha_alone(bytes: u64, digests: u64) -> Duration {
    let piece = (bytes / digests.max(1)) as usize;
    let buffer = vec![0x5au8; piece.max(1)];
    time(
        "stages",
        || {
            for _ in 0..digests {
                black_box(json::sha256_hex(black_box(&buffer[..piece])));
            }
        },
        1000,
    )
    .1
}
