//! The reviewer's queue read by key: the TUI asks for rows by position (the page around the
//! selection), the store reads pages by key ([`Store::page`]), so a page deep in a queue of
//! 100,000 items costs what the first one does.
//!
//! A [`Pager`] remembers the keys of the first and last row of every page it read, by
//! position, for one filter, order and audit-log size (every change to the queue grows the
//! log; a change drops the keys, since positions may have moved). A page then reads on from
//! the nearest known key within [`NEAR`] rows (forwards from one before it, or backwards
//! from one after it), else from whichever end of the queue is within [`NEAR`] rows (the
//! top, or the bottom: jumping to the end reads the last page backwards from the end),
//! else from the key at the position itself, which the store finds by walking only an
//! index's entries ([`Store::key_at`]).

use std::collections::BTreeMap;

use crate::store::{
    CompactionSummary, Direction, ListFilter, QueueKey, Seek, SortKey, StatusCounts, Store,
    StoreError,
};

/// Rows a page may skip past a known key or a queue end before a key is looked up instead.
pub const NEAR: u64 = 1_000;

/// Known keys kept before they are dropped and learned again.
const KEPT: usize = 512;

/// Keys of rows already read (see the module docs).
#[derive(Debug, Default)]
pub struct Pager {
    /// The filter, order and log size the keys belong to.
    of: Option<(ListFilter, SortKey, u64)>,
    keys: BTreeMap<u64, QueueKey>,
}

impl Pager {
    /// Rows `offset..offset + limit` of the queue `list` matches in the `sort` order, of
    /// which there are `total`.
    pub fn page(
        &mut self,
        store: &Store,
        list: &ListFilter,
        sort: SortKey,
        total: u64,
        offset: u64,
        limit: u64,
    ) -> Result<Vec<CompactionSummary>, StoreError> {
        let of = (list.clone(), sort, store.log_size()?);
        if self.of.as_ref() != Some(&of) {
            self.keys.clear();
            self.of = Some(of);
        }
        let rows = read(
            &self.keys,
            store,
            (list, sort),
            total,
            offset..offset.saturating_add(limit),
        )?;
        if self.keys.len() >= KEPT {
            self.keys.clear();
        }
        if let (Some(first), Some(last)) = (rows.first(), rows.last()) {
            self.keys.insert(offset, QueueKey::of(first, sort));
            let at = offset + rows.len() as u64 - 1;
            self.keys.insert(at, QueueKey::of(last, sort));
        }
        Ok(rows)
    }
}

/// Rows `want` of the queue, read from the nearest of `keys` or the queue's ends (see the
/// module docs).
fn read(
    keys: &BTreeMap<u64, QueueKey>,
    store: &Store,
    (list, sort): (&ListFilter, SortKey),
    total: u64,
    want: std::ops::Range<u64>,
) -> Result<Vec<CompactionSummary>, StoreError> {
    let seek = |after, direction, skip, limit| Seek {
        after,
        direction,
        skip,
        limit,
    };
    let (offset, end) = (want.start, want.end);
    let limit = end.saturating_sub(offset);
    let before = keys.range(..offset).next_back();
    if let Some((at, key)) = before.filter(|(at, _)| offset - **at - 1 <= NEAR) {
        let skip = offset - at - 1;
        return store.page(list, sort, seek(Some(key), Direction::Forward, skip, limit));
    }
    let after = keys.range(end..).next();
    if let Some((at, key)) = after.filter(|(at, _)| **at - end <= NEAR) {
        let skip = at - end;
        return store.page(
            list,
            sort,
            seek(Some(key), Direction::Backward, skip, limit),
        );
    }
    if offset <= NEAR {
        return store.page(list, sort, seek(None, Direction::Forward, offset, limit));
    }
    if total.saturating_sub(end) <= NEAR {
        let limit = limit.min(total.saturating_sub(offset));
        let skip = total.saturating_sub(end);
        return store.page(list, sort, seek(None, Direction::Backward, skip, limit));
    }
    match store.key_at(list, sort, offset - 1)? {
        Some(key) => store.page(list, sort, seek(Some(&key), Direction::Forward, 0, limit)),
        None => Ok(Vec::new()),
    }
}

/// How many rows `list` matches, from the per-status counts of its filter without its
/// status terms.
pub fn matched(counts: &StatusCounts, list: &ListFilter) -> u64 {
    let quarantined = crate::store::Status::Quarantined;
    let shown = |s: &crate::store::Status| {
        list.status.is_none_or(|only| only == *s) && !list.excluded_statuses.contains(s)
    };
    let stored: u64 = counts
        .by_status
        .iter()
        .filter(|(s, _)| shown(s))
        .map(|(_, n)| n)
        .sum();
    let pending = if shown(&quarantined) {
        counts.pending_approval
    } else {
        0
    };
    match list.pending_approval {
        Some(true) => pending,
        Some(false) => stored.saturating_sub(pending),
        None => stored,
    }
}
