//! The dashboard's and queue header's counts (`store/stats.rs`) on both backends: per day,
//! per reason, per reviewer, and a mark that reads only what changed since.

#![allow(clippy::unwrap_used)]

#[path = "store_fixtures/fixtures.rs"]
mod fixtures;

use cq::store::stats::StatsMark;
use cq::store::{Action, ListFilter, ListTerm, TermField};
use fixtures::*;

both! {
fn counts_read_everything_then_only_what_changed_since_the_mark(s: TestStore) {
    let store = s.open();
    let empty = store.stats_since(&StatsMark::default()).unwrap();
    assert_eq!(empty.total, 0);
    assert_eq!(empty.mark, StatsMark::default());
    let team = team(&store);
    store
        .record_batch(&(0..12).map(compaction).collect::<Vec<_>>())
        .unwrap();
    let all = store.stats_since(&StatsMark::default()).unwrap();
    assert_eq!(all.total, 12);
    assert_eq!(all.days.len(), 1, "{:?}", all.days);
    assert_eq!((all.days[0].quarantined, all.days[0].accepted), (8, 4));
    assert_eq!(all.days[0].day.len(), 10);
    assert_eq!(
        all.quarantined_reasons,
        vec![
            ("check consistency: FAIL/FINDING".to_owned(), 4),
            ("check consistency: INSUFFICIENT_DATA/UNKNOWN".to_owned(), 4),
        ]
    );
    assert!(all.decisions.is_empty() && !all.reran);
    let request = decision(&store, "c-000001", Action::Release, "checked");
    store.decide(&request, &team.carol, &rules()).unwrap();
    store
        .record_batch(&(12..15).map(compaction).collect::<Vec<_>>())
        .unwrap();
    let delta = store.stats_since(&all.mark).unwrap();
    assert_eq!(delta.total, 15);
    let new: u64 = delta.days.iter().map(|d| d.quarantined + d.accepted).sum();
    assert_eq!(new, 3, "only the compactions after the mark: {:?}", delta.days);
    assert_eq!(delta.decisions.len(), 1);
    assert_eq!(delta.decisions[0].action, Action::Release);
    assert_eq!(
        (delta.decisions[0].reviewer.as_str(), delta.decisions[0].count),
        ("carol", 1)
    );
    assert_eq!(
        delta.decided_reasons,
        vec![("check consistency: INSUFFICIENT_DATA/UNKNOWN".to_owned(), 1)]
    );
    let again = store.stats_since(&delta.mark).unwrap();
    assert!(again.days.is_empty() && again.decisions.is_empty() && !again.reran);
}

fn reasons_count_what_is_quarantined_and_what_a_filter_matches(s: TestStore) {
    let store = s.open();
    store
        .record_batch(&(0..12).map(compaction).collect::<Vec<_>>())
        .unwrap();
    assert_eq!(
        store.quarantine_reasons().unwrap(),
        vec![
            ("check consistency: FAIL/FINDING".to_owned(), 4),
            ("check consistency: INSUFFICIENT_DATA/UNKNOWN".to_owned(), 4),
        ]
    );
    assert_eq!(
        store.reason_counts(&ListFilter::default()).unwrap(),
        vec![("check consistency".to_owned(), 12)]
    );
    let tenant = ListFilter {
        terms: vec![ListTerm {
            negated: false,
            field: TermField::Tenant,
            needle: "TENANT-1".into(),
        }],
        ..ListFilter::default()
    };
    assert_eq!(
        store.reason_counts(&tenant).unwrap(),
        vec![("check consistency".to_owned(), 3)]
    );
}
}
