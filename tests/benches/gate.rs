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
/// `CQ_BENCH_ONLY` (comma-separated names: `consistency`, `gate`, `floor`, `seed-consistency`,
/// `seed-gate`, `sha`) runs only those measurements, so a profile shows one workload.
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
    println!(
        "| default grammar, total parse: G002 consistency check | {} | {} | 363 µs | {} |",
        micros(c_mean),
        micros(c_median),
        speedup(c_median, 363.0)
    );
    println!(
        "| default grammar, total parse: whole gate (all checks, real scanner, report) | {} | {} | 768 µs | {} |",
        micros(g_mean),
        micros(g_median),
        speedup(g_median, 768.0)
    );
    println!(
        "| seed grammar: G002 consistency check (ends INSUFFICIENT_DATA) | {} | {} | 363 µs | {} |",
        micros(sc_mean),
        micros(sc_median),
        speedup(sc_median, 363.0)
    );
    println!(
        "| seed grammar: whole gate (falls back) | {} | {} | 768 µs | {} |",
        micros(sg_mean),
        micros(sg_median),
        speedup(sg_median, 768.0)
    );
    println!(
        "| floor: canonical JSON + SHA-256 of the input | {} | {} | | |",
        micros(h_mean),
        micros(h_median)
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
}
