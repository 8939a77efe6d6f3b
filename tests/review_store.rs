//! The reviewer's store adapter on a real store: requests go through `cq check --store` (the
//! binary), then [`StoreSource`] is tested as the TUI uses it: paging and filtering, detail
//! spans, secrets masked in the summary and in source turns, reruns stored, decisions and
//! their refusals, audited reveals, a fork (the slow worker lane's handle) on the same
//! store trusting the same store key, the queue preview and counts by reason, and the
//! dashboard's running totals against a fresh count after a decision and a rerun.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "review_store/support.rs"]
mod support;

use cq::review::filter::Filter;
use cq::review::source::ChainStatus;
use cq::review::source::{
    DecisionKind, DecisionRefusal, DecisionRequest, ItemId, ReviewSource, Sort, SpanKind, Status,
};
use cq::store::{store_key_path, store_pub_path, Mode, OpenOptions, Store};
use support::*;

#[test]
fn queue_pages_filters_and_counts() {
    let fx = Fixture::build();
    let mut src = fx.source(Mode::ReadOnly, None);
    let all = src
        .queue_page(&Filter::default(), Sort::Age, 0, 50)
        .unwrap();
    assert_eq!(all.total, 5);
    assert_eq!(all.rows.len(), 5);
    assert_eq!(all.counts_by_status.get(&Status::Accepted), Some(&2));
    assert_eq!(all.counts_by_status.get(&Status::Quarantined), Some(&3));
    // Oldest first: the order they were checked in.
    let ids: Vec<_> = all.rows.iter().map(|r| r.id.0.clone()).collect();
    assert_eq!(ids, fx.ids);

    let page = src.queue_page(&Filter::default(), Sort::Age, 2, 2).unwrap();
    assert_eq!(page.total, 5);
    assert_eq!(
        page.rows.iter().map(|r| r.id.0.clone()).collect::<Vec<_>>(),
        fx.ids[2..4].to_vec()
    );

    let q = Filter::parse("status:quarantined").unwrap();
    let page = src.queue_page(&q, Sort::Age, 0, 50).unwrap();
    assert_eq!(page.total, 3);
    assert!(page.rows.iter().all(|r| r.status == Status::Quarantined));
    // The header counts ignore the status term.
    assert_eq!(page.counts_by_status.get(&Status::Accepted), Some(&2));

    let page = src
        .queue_page(
            &Filter::parse("!status:accepted").unwrap(),
            Sort::Age,
            0,
            50,
        )
        .unwrap();
    assert_eq!(page.total, 3);
    assert_eq!(page.rows.len(), 3);
    let page = src
        .queue_page(
            &Filter::parse("status:accepted !status:accepted").unwrap(),
            Sort::Age,
            0,
            50,
        )
        .unwrap();
    assert_eq!((page.total, page.rows.len()), (0, 0));

    let page = src
        .queue_page(&Filter::parse("tenant:GLOB").unwrap(), Sort::Age, 0, 50)
        .unwrap();
    assert_eq!(page.total, 2);
    assert!(page.rows.iter().all(|r| r.tenant == "globex"));
    let page = src
        .queue_page(&Filter::parse("!tenant:globex").unwrap(), Sort::Age, 0, 50)
        .unwrap();
    assert_eq!(page.total, 3);
    let page = src
        .queue_page(&Filter::parse("reason:schema").unwrap(), Sort::Age, 0, 50)
        .unwrap();
    assert_eq!(page.total, 1);
    assert_eq!(page.rows[0].id.0, fx.ids[4]);

    // LIKE wildcards in a filter are literal.
    for literal in ["%", "_"] {
        let page = src
            .queue_page(&Filter::parse(literal).unwrap(), Sort::Age, 0, 50)
            .unwrap();
        assert!(page.total < 5, "\"{literal}\" matched everything");
    }

    // Worst first puts a quarantined item on top.
    let page = src
        .queue_page(&Filter::default(), Sort::Severity, 0, 1)
        .unwrap();
    assert_ne!(page.rows[0].status, Status::Accepted);
}

#[test]
fn detail_has_spans_checks_claims_and_masks_every_secret() {
    let fx = Fixture::build();
    let mut src = fx.source(Mode::ReadOnly, None);
    let item = src.item(&ItemId(fx.secret.clone())).unwrap();
    // The summary's key is overwritten, same byte length, and marked as a masked secret.
    assert!(!item.summary_text.contains(SUMMARY_KEY));
    let secret = item
        .summary_spans
        .iter()
        .find(|s| matches!(s.kind, SpanKind::MaskedSecret { .. }))
        .expect("a masked secret span");
    assert_eq!(
        &item.summary_text[secret.range.clone()],
        "*".repeat(SUMMARY_KEY.len())
    );
    // The key pasted into a source turn is masked too (the gate does not scan sources).
    let pasted = item
        .sources
        .iter()
        .find(|m| !m.masked.is_empty())
        .expect("a masked source message");
    assert!(!pasted.content.contains(SOURCE_TOKEN));
    assert_eq!(pasted.sha256.len(), 64);
    let debug = format!("{item:?}");
    assert!(!debug.contains(SUMMARY_KEY) && !debug.contains(SOURCE_TOKEN));
    assert!(item
        .checks
        .iter()
        .any(|c| c.check.word() == "secrets" && c.status.word() == "FAIL"));
    assert_eq!(item.claims.len(), 2);
    assert_eq!(
        item.claims[0].canonical_predicate,
        "deny(secret_disclosure)"
    );
    assert_eq!(item.report_sha256.len(), 64);

    let conflict = src.item(&ItemId(fx.conflict.clone())).unwrap();
    let span = conflict
        .summary_spans
        .iter()
        .find(|s| matches!(s.kind, SpanKind::Conflict { .. }))
        .expect("a conflict span");
    assert!(conflict.summary_text[span.range.clone()]
        .to_lowercase()
        .contains("reveal"));
    assert!(conflict.checks.iter().any(|c| c
        .constraints
        .iter()
        .any(|r| r.verification.word() == "CONFLICT" && r.summary_range.is_some())));
    // Same tenant and task, checked earlier: the previous summary is there.
    assert!(conflict.previous_summary.is_some());
}

/// `cq recheck ID --policy POLICY --override-policy`: its output.
fn recheck_overriding(fx: &Fixture, id: &str, policy: &str) -> String {
    let out = assert_cmd::Command::cargo_bin("cq")
        .unwrap()
        .args([
            "recheck",
            id,
            "--policy",
            policy,
            "--override-policy",
            "--store",
        ])
        .arg(&fx.db)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn rerun_stores_a_report_and_says_what_changed() {
    let fx = Fixture::build();
    let mut src = fx.source(Mode::ReadWrite, None);
    let id = ItemId(fx.conflict.clone());
    let before = src.item(&id).unwrap();
    let same = src.rerun(&id).unwrap();
    assert!(!same.changed);
    assert_eq!(same.before_report, same.after_report);
    assert_eq!(
        src.store().reports(&id.0).unwrap().len(),
        1,
        "an unchanged rerun stores nothing"
    );

    // A reviewer who opened the store under another policy still reruns the item under the
    // policy it was checked under, and is told so.
    let mut other = fx.source_with_policy(Mode::ReadWrite, Some(&fx.alice), "default");
    let same = other.rerun(&id).unwrap();
    assert!(!same.changed, "{}", same.policy);
    assert!(
        same.policy.contains("\"seed-compatible\"")
            && same.policy.contains("the one it was checked under"),
        "{}",
        same.policy
    );
    assert!(!same.policy_overridden);

    // Rerun under another policy on purpose: the report changes, the item says its report
    // is not under its first check's policy, and a decision on the old one is stale.
    let text = recheck_overriding(&fx, &id.0, "default");
    assert!(text.contains("NOT the one it was checked under"), "{text}");
    let changed = other.item(&id).unwrap();
    assert_ne!(changed.report_sha256, before.report_sha256);
    assert!(changed.policy.contains("\"default\""), "{}", changed.policy);
    assert_eq!(
        changed.first_check_policy_sha256.as_deref(),
        Some(before.policy_sha256.as_str())
    );
    let refused = other
        .decide(&id, &reject(&before.report_sha256, "poisoned"))
        .unwrap_err();
    assert!(
        matches!(refused, DecisionRefusal::Stale { .. }),
        "{refused:?}"
    );
}

#[test]
fn decisions_are_recorded_and_refusals_explained() {
    let fx = Fixture::build();
    let id = ItemId(fx.conflict.clone());
    let seen = fx
        .source(Mode::ReadOnly, None)
        .item(&id)
        .unwrap()
        .report_sha256;

    let refused = fx
        .source(Mode::ReadOnly, Some(&fx.alice))
        .decide(&id, &reject(&seen, "poisoned"))
        .unwrap_err();
    assert_eq!(refused, DecisionRefusal::ReadOnly);
    let refused = fx
        .source(Mode::ReadWrite, None)
        .decide(&id, &reject(&seen, "poisoned"))
        .unwrap_err();
    assert!(refused.to_string().contains("--key"), "{refused}");

    let mut alice = fx.source(Mode::ReadWrite, Some(&fx.alice));
    let receipt = alice.decide(&id, &reject(&seen, "poisoned")).unwrap();
    assert_eq!(receipt.kind, "decision");
    assert!(
        receipt.signature.is_some(),
        "a decision is signed by the reviewer"
    );
    assert!(receipt.body.contains("\"reason\":\"poisoned\""));
    let again = alice.decide(&id, &reject(&seen, "poisoned")).unwrap_err();
    assert!(
        matches!(again, DecisionRefusal::AlreadyDecided { .. }),
        "{again:?}"
    );
    assert_eq!(alice.item(&id).unwrap().status, Status::Rejected);

    // A FAIL/FINDING release needs two approvers: the first is an approval, the same
    // approver cannot give the second, another approver releases it.
    let id = ItemId(fx.secret.clone());
    let seen = alice.item(&id).unwrap().report_sha256;
    let refused = alice.decide(&id, &release(&seen)).unwrap_err();
    assert!(matches!(refused, DecisionRefusal::Failed(ref m) if m.contains("approver")));
    let mut bob = fx.source(Mode::ReadWrite, Some(&fx.bob));
    let first = bob.decide(&id, &release(&seen)).unwrap_err();
    assert!(
        matches!(
            first,
            DecisionRefusal::NeedsSecondApprover {
                have: 1,
                need: 2,
                ..
            }
        ),
        "{first:?}"
    );
    assert_eq!(bob.item(&id).unwrap().status, Status::PendingApproval);
    let page = bob.queue_page(&Filter::parse("status:pending").unwrap(), Sort::Age, 0, 9);
    assert_eq!(page.unwrap().total, 1);
    let own = bob.decide(&id, &release(&seen)).unwrap_err();
    assert!(
        matches!(own, DecisionRefusal::SelfApproval { .. }),
        "{own:?}"
    );
    let mut carol = fx.source(Mode::ReadWrite, Some(&fx.carol));
    let done = carol.decide(&id, &release(&seen)).unwrap();
    assert_eq!(done.kind, "decision");
    assert_eq!(carol.item(&id).unwrap().status, Status::Released);
    assert!(fx.verify_ok());
}

#[test]
fn reveal_is_audited_and_refused_without_a_key() {
    let fx = Fixture::build();
    let id = ItemId(fx.secret.clone());
    let mut anonymous = fx.source(Mode::ReadWrite, None);
    let item = anonymous.item(&id).unwrap();
    let finding = item
        .summary_spans
        .iter()
        .find_map(|s| match &s.kind {
            SpanKind::MaskedSecret { finding_id, .. } => Some(finding_id.clone()),
            _ => None,
        })
        .unwrap();
    let err = anonymous.reveal(&id, &finding, "x").unwrap_err();
    assert!(format!("{err:#}").contains("--key"));
    let err = fx
        .source(Mode::ReadOnly, Some(&fx.alice))
        .reveal(&id, &finding, "alice")
        .unwrap_err();
    assert!(format!("{err:#}").contains("not shown"), "{err:#}");

    let mut alice = fx.source(Mode::ReadWrite, Some(&fx.alice));
    assert_eq!(alice.reveal(&id, &finding, "alice").unwrap(), SUMMARY_KEY);
    let audit = alice.audit_status(&id).unwrap();
    assert!(audit.receipts.iter().any(|r| r.kind == "reveal"));
    assert!(audit.receipts.iter().all(|r| !r.body.contains(SUMMARY_KEY)));
    assert!(
        matches!(
            audit.chain,
            cq::review::source::ChainStatus::Verified { .. }
        ),
        "{:?}",
        audit.chain
    );
    assert!(alice.reveal(&id, "secret-99", "alice").is_err());
}

#[test]
fn reason_codes_come_from_the_policy() {
    let fx = Fixture::build();
    let codes = fx.source(Mode::ReadOnly, None).reason_codes().unwrap();
    assert!(codes
        .iter()
        .any(|c| c.code == "poisoned" && c.kind == DecisionKind::Reject));
    assert!(codes
        .iter()
        .any(|c| c.code == "false-positive" && c.kind == DecisionKind::Release));
}

fn reject(seen: &str, reason: &str) -> DecisionRequest {
    DecisionRequest {
        kind: DecisionKind::Reject,
        reason_code: reason.into(),
        note: "test".into(),
        reviewer: "alice".into(),
        report_sha256: seen.into(),
        anomalies_acknowledged: true,
    }
}

fn release(seen: &str) -> DecisionRequest {
    DecisionRequest {
        kind: DecisionKind::Release,
        reason_code: "false-positive".into(),
        ..reject(seen, "")
    }
}

#[test]
fn cq_recheck_prints_what_changed_and_stores_the_report() {
    let fx = Fixture::build();
    let run = |args: &[&str]| {
        assert_cmd::Command::cargo_bin("cq")
            .unwrap()
            .arg("recheck")
            .args(args)
            .arg("--store")
            .arg(&fx.db)
            .output()
            .unwrap()
    };
    let same = run(&[&fx.conflict, "--policy", "seed-compatible"]);
    assert!(
        same.status.success(),
        "{}",
        String::from_utf8_lossy(&same.stderr)
    );
    let text = String::from_utf8_lossy(&same.stdout);
    assert!(text.contains("unchanged"), "{text}");

    // Under another policy, each item still reruns under its own: nothing changes.
    let own = run(&["--all", "--policy", "default"]);
    assert!(own.status.success());
    let text = String::from_utf8_lossy(&own.stdout);
    assert!(text.contains("rechecked 3, 0 changed"), "{text}");
    assert!(
        text.contains("rerun under built-in policy \"seed-compatible\""),
        "{text}"
    );

    let changed = run(&["--all", "--policy", "default", "--override-policy"]);
    assert!(
        changed.status.success(),
        "{}",
        String::from_utf8_lossy(&changed.stderr)
    );
    let text = String::from_utf8_lossy(&changed.stdout);
    assert!(text.contains("rechecked 3, 3 changed"), "{text}");
    assert!(
        text.contains("policy: ") && text.contains("report: "),
        "{text}"
    );
    let store = cq::store::Store::open(&fx.db, Mode::ReadOnly).unwrap();
    assert_eq!(
        store.reports(&fx.conflict).unwrap().len(),
        2,
        "the first report and the changed one; the unchanged rerun stored nothing"
    );
    assert_eq!(
        store.reports(&fx.ids[0]).unwrap().len(),
        1,
        "accepted items are left alone"
    );
    assert!(fx.verify_ok());
}

#[test]
fn a_fork_sees_the_other_connections_writes() {
    let fx = Fixture::build();
    let mut first = fx.source(Mode::ReadWrite, Some(&fx.alice));
    let mut fork = first.fork().unwrap();
    let all = Filter::default();
    assert_eq!(
        fork.queue_page(&all, Sort::Age, 0, 50).unwrap(),
        first.queue_page(&all, Sort::Age, 0, 50).unwrap()
    );
    let id = ItemId(fx.conflict.clone());
    let seen = first.item(&id).unwrap().report_sha256;
    fork.decide(&id, &reject(&seen, "poisoned")).unwrap();
    assert_eq!(first.item(&id).unwrap().status, Status::Rejected);
}

#[test]
fn a_fork_trusts_the_store_key_the_first_connection_was_given() {
    let fx = Fixture::build();
    let given = Store::open(&fx.db, Mode::ReadOnly).unwrap().verifier_key();
    // Nothing beside the file vouches for it any more: only --store-key does.
    for path in [store_key_path(&fx.db), store_pub_path(&fx.db)] {
        std::fs::rename(&path, path.with_extension("hidden")).unwrap();
    }
    let options = OpenOptions {
        mode: Mode::ReadOnly,
        store_key: Some(given),
    };
    let store = Store::open_with(&fx.db, &options).unwrap();
    let checker = cq::service::Checker::new(policy("seed-compatible")).unwrap();
    let first = cq::review::store_source::StoreSource::new(store, checker, None).unwrap();
    let mut fork = first.fork().unwrap();
    let audit = fork.audit_status(&ItemId(fx.conflict.clone())).unwrap();
    assert!(
        matches!(audit.chain, ChainStatus::Verified { .. }),
        "{:?}",
        audit.chain
    );
}

/// The dashboard's numbers without the waiting list's ages (they read the clock).
fn numbers(d: &cq::review::source::Dashboard) -> String {
    format!(
        "{:?} {:?} {} {:?} {:?}",
        d.days,
        d.top_reasons,
        d.waiting_total,
        d.waiting.iter().map(|r| r.id.0.clone()).collect::<Vec<_>>(),
        d.reviewers
    )
}

#[test]
fn the_dashboard_keeps_running_totals_that_a_fresh_count_agrees_with() {
    let fx = Fixture::build();
    let mut alice = fx.source(Mode::ReadWrite, Some(&fx.alice));
    let first = alice.dashboard().unwrap();
    let recorded: usize = first.days.iter().map(|d| d.quarantined + d.accepted).sum();
    assert_eq!(recorded, 5);
    assert_eq!(first.waiting_total, 3);
    assert!(first.reviewers.is_empty());
    // A decision: the running totals move by it alone.
    let id = ItemId(fx.conflict.clone());
    let seen = alice.item(&id).unwrap().report_sha256;
    alice.decide(&id, &reject(&seen, "poisoned")).unwrap();
    let after = alice.dashboard().unwrap();
    assert_eq!(after.waiting_total, 2);
    assert_eq!(after.reviewers.len(), 1);
    assert_eq!(after.reviewers[0].rejected, 1);
    assert_eq!(after.days.iter().map(|d| d.rejected).sum::<usize>(), 1);
    let fresh = fx.source(Mode::ReadOnly, None).dashboard().unwrap();
    assert_eq!(numbers(&after), numbers(&fresh));
    // A rerun that changes a report (another policy) may change a main reason: the running
    // reason counts are read again and still agree with a fresh count.
    let text = recheck_overriding(&fx, &fx.secret, "default");
    assert!(text.contains(": changed"), "{text}");
    let after = alice.dashboard().unwrap();
    let fresh = fx.source(Mode::ReadOnly, None).dashboard().unwrap();
    assert_eq!(numbers(&after), numbers(&fresh));
}

#[test]
fn the_preview_masks_secrets_and_lists_failing_checks() {
    let fx = Fixture::build();
    let mut src = fx.source(Mode::ReadOnly, None);
    let preview = src.preview(&ItemId(fx.secret.clone())).unwrap();
    let shown = preview.summary_head.join("\n");
    assert!(!shown.contains(SUMMARY_KEY), "{shown}");
    assert!(shown.contains("Key "), "{shown}");
    assert!(preview
        .failing
        .iter()
        .any(|c| c.check == cq::review::source::CheckName::Secrets));
    let counts = src.reason_counts(&Filter::default()).unwrap();
    let total: usize = counts.iter().map(|(_, n)| n).sum();
    assert_eq!(total, 3, "{counts:?}");
    let counts = src
        .reason_counts(&Filter::parse("tenant:initech").unwrap())
        .unwrap();
    assert_eq!(counts, vec![("schema".to_owned(), 1)]);
}

#[test]
fn severity_pages_read_class_by_class_match_the_stores_severity_order() {
    let fx = Fixture::build();
    let mut src = fx.source(Mode::ReadOnly, None);
    let store = Store::open(&fx.db, Mode::ReadOnly).unwrap();
    let filter = cq::store::ListFilter::default();
    for limit in 1..=6 {
        for offset in 0..=6 {
            let ours: Vec<String> = src
                .queue_page(&Filter::default(), Sort::Severity, offset, limit)
                .unwrap()
                .rows
                .into_iter()
                .map(|r| r.id.0)
                .collect();
            let theirs: Vec<String> = store
                .list(
                    &filter,
                    cq::store::SortKey::Severity,
                    offset as u64,
                    limit as u64,
                )
                .unwrap()
                .into_iter()
                .map(|r| r.id)
                .collect();
            assert_eq!(ours, theirs, "offset {offset}, limit {limit}");
        }
    }
    // With a filter too.
    let q = Filter::parse("!status:accepted").unwrap();
    let page = src.queue_page(&q, Sort::Severity, 1, 5).unwrap();
    assert_eq!(page.rows.len(), 2);
    assert!(page.rows.iter().all(|r| r.status != Status::Accepted));
}
