//! The queue read by key (keyset pagination): a page is the rows after (or before) a known
//! row in the sort's order, `WHERE (key…, id) > (?…, ?)`, so reading a page deep in a queue
//! of 100,000 items costs what reading the first does: one walk along an index that serves
//! the order (schema versions 2 and 5), never a scan of every row before it. The
//! most-severe-first order is read class by class, most severe first, each in the
//! oldest-first order along its class's index.
//!
//! A [`Seek`] says where the page starts: after a [`QueueKey`] read from a row of an earlier
//! page, or at either end of the queue; reading backwards returns the rows in the queue's
//! order too. `skip` skips a few rows past the start (a reader moving a little past the
//! nearest key it knows); it costs what reading that many rows does. A reader that knows no
//! key near a position asks [`Store::key_at`], which walks only an index's entries up to it
//! (no row is read, no column computed), and pages on from the key it gets.

use super::filter::{ListFilter, SortKey};
use super::query::{summary_from_row, CompactionSummary, SUMMARY_COLUMNS};
use super::sql::Param;
use super::{Store, StoreError};
use crate::engine::verdict::VerdictClass;

/// The sort columns' values of one queue row: where a page after (or before) it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueKey {
    sort: SortKey,
    anomaly_count: i64,
    verdict_class: VerdictClass,
    created_at: String,
    id: String,
}

impl QueueKey {
    /// The key of `row` in the `sort` order.
    pub fn of(row: &CompactionSummary, sort: SortKey) -> QueueKey {
        QueueKey {
            sort,
            anomaly_count: i64::from(row.anomaly_count),
            verdict_class: row.verdict_class,
            created_at: row.created_at.clone(),
            id: row.id.clone(),
        }
    }

    /// The order this key belongs to.
    pub fn sort(&self) -> SortKey {
        self.sort
    }
}

/// Which way a page reads from its start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Towards the end of the queue (from its start when there is no key).
    Forward,
    /// Towards its start (from its end when there is no key).
    Backward,
}

/// Where a page starts and how long it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seek<'a> {
    /// The row the page reads on from (not itself included); `None` for the end of the
    /// queue the direction starts at.
    pub after: Option<&'a QueueKey>,
    pub direction: Direction,
    /// Rows skipped before the page.
    pub skip: u64,
    pub limit: u64,
}

impl Store {
    /// One page of the queue, in the `sort` order whichever way it was read. A key of
    /// another order is refused.
    pub fn page(
        &self,
        filter: &ListFilter,
        sort: SortKey,
        seek: Seek<'_>,
    ) -> Result<Vec<CompactionSummary>, StoreError> {
        if let Some(key) = seek.after.filter(|k| k.sort != sort) {
            return Err(StoreError::Corrupt(format!(
                "a queue key of the {:?} order was used to page the {sort:?} order: read the first page again",
                key.sort
            )));
        }
        let backward = seek.direction == Direction::Backward;
        let mut rows = match sort.columns() {
            Some(_) => self.along(filter, sort, seek.after, backward, seek.skip, seek.limit)?,
            None => self.by_class(filter, seek)?,
        };
        if backward {
            rows.reverse();
        }
        Ok(rows)
    }

    /// The key of the row at `position` (0-based) of the queue, or `None` past its end:
    /// the sort columns only, read along the order's index.
    pub fn key_at(
        &self,
        filter: &ListFilter,
        sort: SortKey,
        position: u64,
    ) -> Result<Option<QueueKey>, StoreError> {
        let (order, classes) = match sort {
            SortKey::Severity => (SortKey::OldestFirst, VerdictClass::by_severity().to_vec()),
            other => (other, Vec::new()),
        };
        let read = |filter: &ListFilter, position: u64| {
            let (clause, mut values) = filter.where_clause(self.dialect());
            let n = values.len();
            let sql = format!(
                "SELECT anomaly_count, verdict_class, created_at, id FROM compactions {clause}
                 ORDER BY {} LIMIT 1 OFFSET ?{}",
                order.order_by(),
                n + 1
            );
            values.push(Param::from(position));
            self.conn()
                .opt(&sql, &values, |r| {
                    let class = r.text(1)?;
                    Ok(QueueKey {
                        sort,
                        anomaly_count: r.int(0)?,
                        verdict_class: VerdictClass::parse(class).ok_or_else(|| {
                            super::sql::SqlError::value(1, "an unknown verdict class")
                        })?,
                        created_at: r.string(2)?,
                        id: r.string(3)?,
                    })
                })
                .map_err(StoreError::sql("finding a position in the queue"))
        };
        if classes.is_empty() {
            return read(filter, position);
        }
        let mut left = position;
        for class in classes {
            if filter.verdict_class.is_some_and(|c| c != class) {
                continue;
            }
            let of_class = ListFilter {
                verdict_class: Some(class),
                ..filter.clone()
            };
            let n = self.count(&of_class)?;
            if left < n {
                return read(&of_class, left);
            }
            left -= n;
        }
        Ok(None)
    }

    /// The most-severe-first order: each class in turn from the key's (or the first one the
    /// direction meets), oldest first within it; the rows in reading order.
    fn by_class(
        &self,
        filter: &ListFilter,
        seek: Seek<'_>,
    ) -> Result<Vec<CompactionSummary>, StoreError> {
        let backward = seek.direction == Direction::Backward;
        let mut classes = VerdictClass::by_severity().to_vec();
        if backward {
            classes.reverse();
        }
        if let Some(key) = seek.after {
            let at = classes.iter().position(|c| *c == key.verdict_class);
            classes.drain(..at.unwrap_or(classes.len()));
        }
        let wanted = seek.skip.saturating_add(seek.limit);
        let mut rows = Vec::new();
        for (i, class) in classes.into_iter().enumerate() {
            let need = wanted.saturating_sub(rows.len() as u64);
            if need == 0 {
                break;
            }
            if filter.verdict_class.is_some_and(|c| c != class) {
                continue;
            }
            let of_class = ListFilter {
                verdict_class: Some(class),
                ..filter.clone()
            };
            let after = seek.after.filter(|_| i == 0);
            rows.extend(self.along(&of_class, SortKey::OldestFirst, after, backward, 0, need)?);
        }
        let skip = usize::try_from(seek.skip).unwrap_or(usize::MAX);
        Ok(rows.into_iter().skip(skip).collect())
    }

    /// Up to `limit` rows past `after` (skipping `skip`) in the `sort` order, or against it
    /// when `backward`; the rows in reading order. `sort` must have [`SortKey::columns`].
    fn along(
        &self,
        filter: &ListFilter,
        sort: SortKey,
        after: Option<&QueueKey>,
        backward: bool,
        skip: u64,
        limit: u64,
    ) -> Result<Vec<CompactionSummary>, StoreError> {
        let (columns, descending) = sort.columns().unwrap_or((&["created_at", "id"], false));
        let (clause, mut values) = filter.where_clause(self.dialect());
        let mut conditions = Vec::new();
        if let Some(terms) = clause.strip_prefix("WHERE ") {
            conditions.push(format!("({terms})"));
        }
        if let Some(key) = after {
            let mut slots = Vec::with_capacity(columns.len());
            for column in columns {
                values.push(match *column {
                    "anomaly_count" => Param::Int(key.anomaly_count),
                    "created_at" => Param::Text(&key.created_at),
                    _ => Param::Text(&key.id),
                });
                slots.push(format!("?{}", values.len()));
            }
            let past = if descending != backward { "<" } else { ">" };
            conditions.push(format!(
                "({}) {past} ({})",
                columns.join(", "),
                slots.join(", ")
            ));
        }
        let way = if descending != backward {
            "DESC"
        } else {
            "ASC"
        };
        let order: Vec<String> = columns.iter().map(|c| format!("{c} {way}")).collect();
        let filter = match conditions.is_empty() {
            true => String::new(),
            false => format!("WHERE {}", conditions.join(" AND ")),
        };
        let n = values.len();
        let sql = format!(
            "SELECT {SUMMARY_COLUMNS} FROM compactions {filter} ORDER BY {} LIMIT ?{} OFFSET ?{}",
            order.join(", "),
            n + 1,
            n + 2,
        );
        values.push(Param::from(limit));
        values.push(Param::from(skip));
        self.conn()
            .rows(&sql, &values, summary_from_row)
            .map_err(StoreError::sql("reading a page of the queue"))
    }
}
