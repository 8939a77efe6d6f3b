//! Deep pages of the queue on a large store: page 1, the page at 50,000 and the last page,
//! read by offset (`Store::list`) and by key (`Store::page`: from the start, from a known
//! key, from the key at a position found by `Store::key_at`, backwards from the end), and
//! as the reviewer asks for them (`StoreSource::queue_page`: the per-status counts and the
//! page, from whichever key or end is nearest). Each figure is the best of five runs.

use std::time::Duration;

use cq::policy::Policy;
use cq::review::filter::Filter;
use cq::review::source::{ReviewSource, Sort};
use cq::review::store_source::StoreSource;
use cq::service::Checker;
use cq::store::{Direction, ListFilter, QueueKey, Seek, SortKey, Store};

use super::{timed, Row, SERVER_SPENT};

const LIMIT: u64 = 100;
const RUNS: usize = 5;
/// The deep position: 50,000, or half the queue when it is smaller.
const DEEP: u64 = 50_000;

fn seek(after: Option<&QueueKey>, direction: Direction) -> Seek<'_> {
    Seek {
        after,
        direction,
        skip: 0,
        limit: LIMIT,
    }
}

/// The best of [`RUNS`] runs of `f(run)`, as a row.
fn best(what: String, mut f: impl FnMut(usize)) -> Row {
    let mut kept: Option<Row> = None;
    for run in 0..RUNS {
        let ((), took, cpu) = timed(|| f(run));
        let server = SERVER_SPENT.with(|s| s.get());
        if kept.as_ref().is_none_or(|k| took < k.took) {
            kept = Some(Row {
                what: what.clone(),
                n: 1,
                took,
                cpu,
                server,
            });
        }
    }
    kept.unwrap_or(Row {
        what,
        n: 1,
        took: Duration::ZERO,
        cpu: Duration::ZERO,
        server: Duration::ZERO,
    })
}

pub fn measure(store: &Store, rows: &mut Vec<Row>) {
    let all = ListFilter::default();
    let total = store.count(&all).unwrap();
    let deep = DEEP.min(total / 2);
    for (sort, name) in [
        (SortKey::OldestFirst, "oldest first"),
        (SortKey::Severity, "most severe first"),
    ] {
        let at = |what: &str| format!("queue {name}, {what} of {total}");
        let full = |n: usize| assert_eq!(n as u64, LIMIT);
        rows.push(best(at("offset: page 1"), |_| {
            full(store.list(&all, sort, 0, LIMIT).unwrap().len())
        }));
        rows.push(best(at(&format!("offset: page at {deep}")), |_| {
            full(store.list(&all, sort, deep, LIMIT).unwrap().len())
        }));
        rows.push(best(at("offset: last page"), |_| {
            full(store.list(&all, sort, total - LIMIT, LIMIT).unwrap().len())
        }));
        rows.push(best(at("key: page 1"), |_| {
            full(
                store
                    .page(&all, sort, seek(None, Direction::Forward))
                    .unwrap()
                    .len(),
            )
        }));
        let before = store.key_at(&all, sort, deep - 1).unwrap().unwrap();
        rows.push(best(at(&format!("key: page at {deep}, key known")), |_| {
            let page = store.page(&all, sort, seek(Some(&before), Direction::Forward));
            full(page.unwrap().len())
        }));
        rows.push(best(
            at(&format!("key: page at {deep}, key looked up")),
            |_| {
                let key = store.key_at(&all, sort, deep - 1).unwrap().unwrap();
                let page = store.page(&all, sort, seek(Some(&key), Direction::Forward));
                full(page.unwrap().len())
            },
        ));
        rows.push(best(at("key: last page, backwards from the end"), |_| {
            full(
                store
                    .page(&all, sort, seek(None, Direction::Backward))
                    .unwrap()
                    .len(),
            )
        }));
    }
    reviewer(store, total, rows);
}

/// The reviewer's queue: counts and a page, at the top, cold deep in it, next to a page
/// read before, and at the bottom.
fn reviewer(store: &Store, total: u64, rows: &mut Vec<Row>) {
    let checker = Checker::new(Policy::builtin("seed-compatible").unwrap()).unwrap();
    let mut source = StoreSource::new(store.fork().unwrap(), checker, None).unwrap();
    let filter = Filter::default();
    let limit = LIMIT as usize;
    // Five positions 5,000 apart from here, so no key is known near any of them.
    let deep = (DEEP as usize).min((total as usize).saturating_sub(30_000) / 2);
    for (sort, name) in [(Sort::Age, "age"), (Sort::Severity, "severity")] {
        let at = |what: &str| format!("review queue by {name} (counts + page), {what}");
        let mut page = |offset: usize| {
            let got = source.queue_page(&filter, sort, offset, limit).unwrap();
            assert_eq!(got.rows.len(), limit);
        };
        rows.push(best(at("top"), |_| page(0)));
        rows.push(best(at(&format!("cold at {deep}+")), |run| {
            page(deep + run * 5_000)
        }));
        rows.push(best(at("the next page down"), |run| {
            page(deep + run * 5_000 + limit)
        }));
        rows.push(best(at("bottom"), |_| page(total as usize - limit)));
    }
}
