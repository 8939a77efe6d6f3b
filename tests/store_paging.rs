//! The queue read by key, on both backends: walking every order page by page, forwards from
//! the start or backwards from the end, with and without a filter, gives exactly the rows
//! (and the order) that offset paging gives, ties on the time broken by id; a skip moves on
//! from a key; a key of another order is refused.

#![allow(clippy::unwrap_used)]

#[path = "store_fixtures/fixtures.rs"]
mod fixtures;

use cq::policy::Policy;
use cq::review::filter::Filter;
use cq::review::source::{ReviewSource, Sort};
use cq::review::store_source::{list_filter, StoreSource};
use cq::store::{CompactionSummary, Direction, ListFilter, QueueKey, Seek, SortKey, Status, Store};
use fixtures::*;

const SORTS: [SortKey; 4] = [
    SortKey::NewestFirst,
    SortKey::OldestFirst,
    SortKey::MostAnomalies,
    SortKey::Severity,
];

fn filters() -> Vec<ListFilter> {
    vec![
        ListFilter::default(),
        ListFilter {
            status: Some(Status::Quarantined),
            ..ListFilter::default()
        },
        ListFilter {
            excluded_statuses: vec![Status::Accepted],
            ..ListFilter::default()
        },
    ]
}

/// A store of 120 items in three batches (each batch shares one time, so ties are broken by
/// id), a few of them decided.
fn filled(s: &TestStore) -> Store {
    let store = s.open();
    let team = team(&store);
    for batch in 0..3 {
        let items: Vec<_> = (batch * 40..batch * 40 + 40).map(compaction).collect();
        store.record_batch(&items).unwrap();
    }
    for i in [1, 4, 7, 70] {
        store
            .decide(&release(&compaction(i), "paged"), &team.carol, &rules())
            .unwrap();
    }
    store
}

fn ids(rows: &[CompactionSummary]) -> Vec<String> {
    rows.iter().map(|r| r.id.clone()).collect()
}

fn walk(store: &Store, filter: &ListFilter, sort: SortKey, direction: Direction) -> Vec<String> {
    let mut out: Vec<CompactionSummary> = Vec::new();
    let mut key: Option<QueueKey> = None;
    loop {
        let seek = Seek {
            after: key.as_ref(),
            direction,
            skip: 0,
            limit: 7,
        };
        let page = store.page(filter, sort, seek).unwrap();
        let edge = match direction {
            Direction::Forward => page.last(),
            Direction::Backward => page.first(),
        };
        let Some(edge) = edge else { break };
        key = Some(QueueKey::of(edge, sort));
        match direction {
            Direction::Forward => out.extend(page),
            Direction::Backward => out.splice(0..0, page).for_each(drop),
        }
    }
    ids(&out)
}

both! {
fn paging_by_key_gives_the_rows_offset_paging_gives_in_every_order(s: TestStore) {
    let store = filled(&s);
    for filter in filters() {
        for sort in SORTS {
            let total = store.count(&filter).unwrap();
            let all = ids(&store.list(&filter, sort, 0, total).unwrap());
            assert_eq!(all.len() as u64, total);
            assert_eq!(walk(&store, &filter, sort, Direction::Forward), all, "{sort:?} {filter:?}");
            assert_eq!(walk(&store, &filter, sort, Direction::Backward), all, "{sort:?} {filter:?} backwards");
            // The last page, read from the end.
            let last = Seek { after: None, direction: Direction::Backward, skip: 0, limit: 10 };
            let tail = ids(&store.page(&filter, sort, last).unwrap());
            assert_eq!(tail, all[all.len() - 10..].to_vec(), "{sort:?}: last page");
        }
    }
}

fn a_skip_moves_on_from_the_key(s: TestStore) {
    let store = filled(&s);
    for sort in SORTS {
        let filter = ListFilter::default();
        let all = store.list(&filter, sort, 0, 200).unwrap();
        // Row 42 is two rows into the second verdict class: the skip crosses a class edge.
        let key = QueueKey::of(&all[42], sort);
        for direction in [Direction::Forward, Direction::Backward] {
            let seek = Seek { after: Some(&key), direction, skip: 5, limit: 4 };
            let got = ids(&store.page(&filter, sort, seek).unwrap());
            let want = match direction {
                Direction::Forward => ids(&all[48..52]),
                Direction::Backward => ids(&all[33..37]),
            };
            assert_eq!(got, want, "{sort:?} {direction:?}");
        }
    }
}

fn a_key_of_another_order_is_refused(s: TestStore) {
    let store = filled(&s);
    let row = store.list(&ListFilter::default(), SortKey::OldestFirst, 0, 1).unwrap();
    let key = QueueKey::of(&row[0], SortKey::OldestFirst);
    let seek = Seek { after: Some(&key), direction: Direction::Forward, skip: 0, limit: 5 };
    assert!(store.page(&ListFilter::default(), SortKey::Severity, seek).is_err());
}

fn the_key_at_a_position_is_the_row_offset_paging_puts_there(s: TestStore) {
    let store = filled(&s);
    for filter in filters() {
        for sort in SORTS {
            let all = store.list(&filter, sort, 0, 200).unwrap();
            for at in [0, 1, 39, 40, 41, 75, all.len() - 1] {
                let key = store.key_at(&filter, sort, at as u64).unwrap();
                assert_eq!(key, Some(QueueKey::of(&all[at], sort)), "{sort:?} {filter:?} at {at}");
            }
            assert_eq!(store.key_at(&filter, sort, all.len() as u64).unwrap(), None);
        }
    }
}

fn the_reviewers_queue_gives_the_rows_offset_paging_gives_at_every_position(s: TestStore) {
    // More rows than a page reads on from a known key or an end (1,000), so every way in is
    // taken: the top, a near key either side, the key at a cold position, the bottom.
    let store = s.open();
    let team = team(&store);
    for batch in 0..3 {
        let items: Vec<_> = (batch * 900..batch * 900 + 900).map(compaction).collect();
        store.record_batch(&items).unwrap();
    }
    let policy = Policy::builtin("seed-compatible").unwrap();
    let mut source = StoreSource::open(s.open(), policy, None).unwrap();
    const LIMIT: usize = 40;
    // Items decided in turn, one after each order's walk (each needs one reviewer).
    let mut decided = (0..).map(|n| 3 * n + 1);
    for text in ["", "status:quarantined", "!status:accepted"] {
        let filter = Filter::parse(text).unwrap();
        let (list, _) = list_filter(&filter).unwrap();
        for (sort, key) in [(Sort::Age, SortKey::OldestFirst), (Sort::Severity, SortKey::Severity)] {
            let total = store.count(&list).unwrap() as usize;
            let check = |offset: usize, source: &mut StoreSource, what: &str| {
                let got = source.queue_page(&filter, sort, offset, LIMIT).unwrap();
                let want = store.list(&list, key, offset as u64, LIMIT as u64).unwrap();
                let got: Vec<String> = got.rows.into_iter().map(|r| r.id.0).collect();
                assert_eq!(got, ids(&want), "{text:?} {sort:?} at {offset} ({what})");
            };
            check(0, &mut source, "the top");
            check(LIMIT, &mut source, "after a known key");
            check(1_500, &mut source, "cold");
            check(1_500 + LIMIT, &mut source, "after a known key");
            check(1_500 - LIMIT, &mut source, "before a known key");
            check(1_490, &mut source, "overlapping known keys");
            check(total - LIMIT / 2, &mut source, "the bottom");
            check(total - 3 * LIMIT, &mut source, "before the bottom");
            // A decision moves positions (and grows the log): what was known is dropped.
            store
                .decide(&release(&compaction(decided.next().unwrap()), text), &team.carol, &rules())
                .unwrap();
            check(1_500, &mut source, "after a decision");
        }
    }
}

fn recheck_all_walks_every_quarantined_item_oldest_first_by_key(s: TestStore) {
    // More than two of its pages (500), ties on the time broken by id, some decided.
    let store = s.open();
    let team = team(&store);
    for batch in 0..3 {
        let items: Vec<_> = (batch * 600..batch * 600 + 600).map(compaction).collect();
        store.record_batch(&items).unwrap();
    }
    for i in [1, 4, 601, 1_798] {
        store
            .decide(&release(&compaction(i), "walked"), &team.carol, &rules())
            .unwrap();
    }
    let filter = ListFilter {
        status: Some(Status::Quarantined),
        ..ListFilter::default()
    };
    let total = store.count(&filter).unwrap();
    let want = ids(&store.list(&filter, SortKey::OldestFirst, 0, total).unwrap());
    assert!(want.len() > 2 * 500, "{} quarantined", want.len());
    assert_eq!(cq::service::recheck::quarantined_ids(&store).unwrap(), want);
}
}
