//! Recording, paging, decisions and the two-person rule, end to end through the public API, on
//! both backends.

#![allow(clippy::unwrap_used)]

#[path = "store_fixtures/fixtures.rs"]
mod fixtures;

use cq::audit::verify;
use cq::engine::verdict::VerdictClass;
use cq::store::{
    Action, DecisionError, DecisionOutcome, DecisionRequest, ListFilter, Mode, Recorded,
    ReportChange, SortKey, Status, Store, StoreError,
};
use fixtures::*;

fn request(store: &Store, id: &str, action: Action) -> DecisionRequest {
    let current = store.compaction(id).unwrap().unwrap().summary.report_sha256;
    DecisionRequest {
        compaction_id: id.into(),
        action,
        reason: REASONS[0].into(),
        note: "checked against the source messages".into(),
        seen_report_sha256: current,
    }
}

both! {
fn records_deduplicate_by_request_digest_and_check_digests(s: TestStore) {
    let store = s.open();
    let first = store.record_verdict(&compaction(1)).unwrap();
    assert!(matches!(first, Recorded::New { receipt_seq: 1, .. }));
    let mut again = compaction(1);
    again.compaction_id = "other-id".into();
    assert_eq!(
        store.record_verdict(&again).unwrap(),
        Recorded::Duplicate {
            compaction_id: "c-000001".into()
        }
    );
    let mut bad = compaction(2);
    bad.request_json.push(' ');
    assert!(matches!(
        store.record_verdict(&bad),
        Err(StoreError::DigestMismatch { .. })
    ));
    let batch = store
        .record_batch(&[compaction(3), bad, compaction(4)])
        .unwrap();
    assert!(batch[0].is_ok() && batch[1].is_err() && batch[2].is_ok());
    assert_eq!(store.count(&ListFilter::default()).unwrap(), 3);
    let report = verify(&store, None).unwrap();
    assert!(report.is_ok(), "{report}");
}

fn the_queue_pages_filters_and_sorts(s: TestStore) {
    let store = s.open();
    let items: Vec<_> = (0..300).map(compaction).collect();
    store.record_batch(&items).unwrap();
    let quarantined = ListFilter {
        status: Some(Status::Quarantined),
        ..ListFilter::default()
    };
    assert_eq!(store.count(&quarantined).unwrap(), 200);
    let mut seen = std::collections::BTreeSet::new();
    for page in 0..5 {
        let rows = store
            .list(&quarantined, SortKey::NewestFirst, page * 50, 50)
            .unwrap();
        assert!(rows.len() == 50 || page == 4);
        for r in rows {
            assert_eq!(r.status, Status::Quarantined);
            assert!(seen.insert(r.id));
        }
    }
    assert_eq!(seen.len(), 200);
    let top = store
        .list(&ListFilter::default(), SortKey::MostAnomalies, 0, 10)
        .unwrap();
    assert!(top.iter().all(|r| r.anomaly_count == 4));
    let oldest = store
        .list(&ListFilter::default(), SortKey::OldestFirst, 0, 1)
        .unwrap();
    assert_eq!(oldest[0].id, "c-000000");
    let prev = store
        .previous_for_task("tenant-0", "task-0", "c-000200")
        .unwrap()
        .unwrap();
    assert_eq!(prev.id, "c-000100");
    assert!(store
        .previous_for_task("tenant-0", "task-0", "c-000000")
        .unwrap()
        .is_none());
}

fn decisions_follow_the_rules(s: TestStore) {
    let store = s.open();
    let team = team(&store);
    let rules = rules();
    for i in 0..9 {
        store.record_verdict(&compaction(i)).unwrap();
    }
    // An accepted compaction needs no decision.
    let accepted = store.decide(
        &request(&store, "c-000000", Action::Release),
        &team.carol,
        &rules,
    );
    assert!(matches!(
        accepted,
        Err(DecisionError::NotQuarantined { .. })
    ));
    // A single reviewer releases an ordinary quarantined item; a second decision is refused.
    let ok = store
        .decide(
            &request(&store, "c-000001", Action::Release),
            &team.carol,
            &rules,
        )
        .unwrap();
    assert!(matches!(
        ok,
        DecisionOutcome::Decided {
            status: Status::Released,
            ..
        }
    ));
    let again = store.decide(
        &request(&store, "c-000001", Action::Reject),
        &team.bob,
        &rules,
    );
    assert!(matches!(
        again,
        Err(DecisionError::AlreadyDecided {
            status: Status::Released,
            ..
        })
    ));
    // Unknown reason, unknown reviewer.
    let mut bad = request(&store, "c-000004", Action::Reject);
    bad.reason = "because".into();
    assert!(matches!(
        store.decide(&bad, &team.carol, &rules),
        Err(DecisionError::UnknownReason { .. })
    ));
    let stranger = cq::audit::NamedKey::generate("mallory").unwrap();
    let r = store.decide(
        &request(&store, "c-000004", Action::Reject),
        &stranger,
        &rules,
    );
    assert!(matches!(r, Err(DecisionError::UnknownReviewer { .. })));
    // FAIL/FINDING needs two distinct approvers; a plain reviewer may only reject it.
    let id = "c-000002";
    let r = store.decide(&request(&store, id, Action::Release), &team.carol, &rules);
    assert!(matches!(r, Err(DecisionError::NotApprover { .. })));
    let r = store
        .decide(&request(&store, id, Action::Release), &team.alice, &rules)
        .unwrap();
    assert!(matches!(
        r,
        DecisionOutcome::Approved {
            approvals: 1,
            needed: 2,
            ..
        }
    ));
    let r = store.decide(&request(&store, id, Action::Release), &team.alice, &rules);
    assert!(matches!(r, Err(DecisionError::SelfApproval { .. })));
    // A rerun that changes the report voids the approval and makes old views stale.
    let stale = request(&store, id, Action::Release);
    let change = store
        .record_rerun(id, &report(2, "QUARANTINED", "FAIL/FINDING", 1))
        .unwrap();
    assert!(matches!(change, ReportChange::Changed { .. }));
    let r = store.decide(&stale, &team.bob, &rules);
    assert!(matches!(r, Err(DecisionError::Stale { .. })));
    assert!(store.compaction(id).unwrap().unwrap().approvals.is_empty());
    let r = store
        .decide(&request(&store, id, Action::Release), &team.bob, &rules)
        .unwrap();
    assert!(matches!(r, DecisionOutcome::Approved { approvals: 1, .. }));
    let r = store
        .decide(&request(&store, id, Action::Release), &team.alice, &rules)
        .unwrap();
    assert!(matches!(
        r,
        DecisionOutcome::Decided {
            status: Status::Released,
            ..
        }
    ));
    let shown = store.compaction(id).unwrap().unwrap();
    assert_eq!(shown.summary.status, Status::Released);
    assert_eq!(shown.decision.unwrap().reviewer, "alice");
    assert_eq!(store.reports(id).unwrap().len(), 2);
    // An unchanged rerun changes nothing.
    let same = store
        .record_rerun(id, &report(2, "QUARANTINED", "FAIL/FINDING", 1))
        .unwrap();
    assert!(matches!(same, ReportChange::Unchanged { .. }));
    // A reject is a veto: one reviewer suffices even for a two-person class.
    let r = store
        .decide(
            &request(&store, "c-000005", Action::Reject),
            &team.carol,
            &rules,
        )
        .unwrap();
    assert!(matches!(
        r,
        DecisionOutcome::Decided {
            status: Status::Rejected,
            ..
        }
    ));
    // Reveals are audited.
    store
        .record_reveal("c-000004", "secret-0", &team.carol)
        .unwrap();
    let receipts = store.receipts_for("c-000004").unwrap();
    assert_eq!(receipts.last().unwrap().kind, "reveal");
    let report = verify(&store, None).unwrap();
    assert!(report.is_ok(), "{report}");
    assert!(report.signatures >= 6);
}

fn reruns_in_one_transaction_are_stored_all_or_none(s: TestStore) {
    let store = s.open();
    store
        .record_batch(&[compaction(1), compaction(2), compaction(3)])
        .unwrap();
    let changed = report(1, "QUARANTINED", "FAIL/FINDING", 1);
    let same = report(2, "QUARANTINED", "FAIL/FINDING", 0);
    let changes = store
        .record_reruns(&[("c-000001", &changed), ("c-000002", &same)])
        .unwrap();
    assert!(matches!(changes[0], ReportChange::Changed { .. }));
    assert!(matches!(changes[1], ReportChange::Unchanged { .. }));
    assert_eq!(store.reports("c-000001").unwrap().len(), 2);
    assert_eq!(store.reports("c-000002").unwrap().len(), 1);
    // An unknown compaction, or a report whose text its digest contradicts, stores none.
    let third = report(3, "QUARANTINED", "FAIL/FINDING", 1);
    let r = store.record_reruns(&[("c-000003", &third), ("c-999999", &third)]);
    assert!(matches!(r, Err(StoreError::UnknownCompaction(_))), "{r:?}");
    let mut forged = report(2, "ACCEPTED", "PASS/NO_FINDING", 1);
    forged.report_json.push(' ');
    let r = store.record_reruns(&[("c-000003", &third), ("c-000002", &forged)]);
    assert!(matches!(r, Err(StoreError::DigestMismatch { .. })), "{r:?}");
    assert_eq!(store.reports("c-000003").unwrap().len(), 1);
    assert_eq!(store.reports("c-000002").unwrap().len(), 1);
    let report = verify(&store, None).unwrap();
    assert!(report.is_ok(), "{report}");
}

fn a_read_only_store_refuses_every_write(s: TestStore) {
    let team = {
        let store = s.open();
        let team = team(&store);
        store.record_verdict(&compaction(1)).unwrap();
        team
    };
    let store = s.open_ro();
    let r = store.decide(
        &request(&store, "c-000001", Action::Release),
        &team.carol,
        &rules(),
    );
    assert!(matches!(r, Err(DecisionError::ReadOnly(_))), "{r:?}");
    assert!(matches!(
        store.record_verdict(&compaction(2)),
        Err(StoreError::ReadOnly(_))
    ));
    assert!(matches!(
        store.record_reveal("c-000001", "secret-0", &team.carol),
        Err(DecisionError::ReadOnly(_))
    ));
    let key = team.alice.verifier_text();
    assert!(matches!(
        store.add_reviewer("dave", &key, cq::store::Role::Reviewer, Some(&team.alice)),
        Err(cq::store::RegistrationError::Store(StoreError::ReadOnly(_)))
    ));
    assert!(r.unwrap_err().to_string().contains("read-only"));
    let report = verify(&store, None).unwrap();
    assert!(report.is_ok(), "{report}");
    assert_eq!(store.count(&ListFilter::default()).unwrap(), 1);
}

fn a_missing_store_is_not_created_read_only(s: TestStore) {
    let r = s.try_open(Mode::ReadOnly);
    assert!(matches!(r, Err(StoreError::Missing(_))), "{r:?}");
    if s.kind == Kind::Sqlite {
        assert!(!s.location.exists(), "nothing created");
    }
}

fn the_store_key_is_private_and_stable(s: TestStore) {
    let origin = s.open().origin().to_owned();
    assert_eq!(s.open().origin(), origin);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(s.key_path()).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
}

fn filter_terms_pending_approvals_and_severity(s: TestStore) {
    use cq::store::{ListTerm, TermField};
    let store = s.open();
    let team = team(&store);
    store
        .record_batch(&(0..30).map(compaction).collect::<Vec<_>>())
        .unwrap();
    let term = |negated, field, needle: &str| ListTerm {
        negated,
        field,
        needle: needle.into(),
    };
    let tenant1 = ListFilter {
        terms: vec![term(false, TermField::Tenant, "TENANT-1")],
        ..ListFilter::default()
    };
    assert_eq!(store.count(&tenant1).unwrap(), 8);
    let not_finding = ListFilter {
        terms: vec![
            term(true, TermField::Reason, "fail/finding"),
            term(false, TermField::Any, "c-00001"),
        ],
        ..ListFilter::default()
    };
    let rows = store
        .list(&not_finding, SortKey::OldestFirst, 0, 100)
        .unwrap();
    assert!(rows
        .iter()
        .all(|r| r.id.starts_with("c-00001") && r.verdict_class != VerdictClass::Finding));
    assert_eq!(rows.len(), 7);
    // One approval on a two-person item makes it pending.
    let r = store
        .decide(
            &request(&store, "c-000002", Action::Release),
            &team.alice,
            &rules(),
        )
        .unwrap();
    assert!(matches!(r, DecisionOutcome::Approved { .. }));
    let pending = ListFilter {
        pending_approval: Some(true),
        ..ListFilter::default()
    };
    let rows = store.list(&pending, SortKey::OldestFirst, 0, 10).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!((rows[0].id.as_str(), rows[0].approvals), ("c-000002", 1));
    let counts = store
        .status_counts(&ListFilter {
            status: Some(Status::Released),
            ..tenant1
        })
        .unwrap();
    assert_eq!(counts.by_status[0], (Status::Quarantined, 6));
    assert_eq!(counts.pending_approval, 0);
    // Worst outcome first, oldest first within it.
    let rows = store
        .list(&ListFilter::default(), SortKey::Severity, 0, 30)
        .unwrap();
    assert_eq!(rows[0].id, "c-000002");
    assert!(rows[..10]
        .iter()
        .all(|r| r.outcome == cq::engine::verdict::Outcome::Fail));
    assert!(rows[20..]
        .iter()
        .all(|r| r.verdict == cq::engine::verdict::Verdict::Accepted));
    assert!(rows[0].created_unix() > 1_700_000_000);
    // Receipts by sequence number.
    let receipts = store.receipts_for("c-000002").unwrap();
    let last = receipts.last().unwrap();
    assert_eq!(last.kind, "approval");
    assert!(last.signature.is_some());
    assert_eq!(store.receipt(last.seq).unwrap().as_ref(), Some(last));
    assert!(store.receipt(100_000).unwrap().is_none());
}
}
