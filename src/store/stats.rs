//! Counts for the reviewer's dashboard and queue header: compactions and decisions per day,
//! reasons of what is quarantined, and reasons per check under a queue filter.
//!
//! The dashboard keeps running totals and asks only for what changed since it last read
//! ([`Store::stats_since`] with a [`StatsMark`]), so a store of 100,000 items is scanned once
//! per session, not once per frame. Every read of one call runs in one read transaction, so
//! the counts and the new mark describe the same snapshot; [`StatsDelta::total`] lets the
//! caller check its running totals against the store and start over when they disagree
//! (a writer that committed an older timestamp late, a store rewritten underneath).
//! Compactions are ordered by `(created_at, id)` (the queue's index), decisions by their ids,
//! which only grow; reruns are counted (reports beyond each compaction's first), so no read
//! here touches a report's text.

use super::filter::ListFilter;
use super::sql::{Conn, Dialect, Param};
use super::{Action, Store, StoreError};

/// How far a caller's running totals have read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StatsMark {
    /// `(created_at, id)` of the newest compaction counted; `None` before the first read.
    pub compaction: Option<(String, String)>,
    /// The newest decision counted (0: none).
    pub decision_id: i64,
    /// Reports beyond each compaction's first (the reruns that changed a report) when read.
    pub reruns: u64,
}

/// Compactions recorded on one day (`YYYY-MM-DD`, UTC).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DayTally {
    pub day: String,
    /// Recorded quarantined (still quarantined or decided since).
    pub quarantined: u64,
    pub accepted: u64,
}

/// Decisions of one kind by one reviewer on one day.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecisionTally {
    pub day: String,
    pub action: Action,
    pub reviewer: String,
    pub count: u64,
}

/// What changed after a [`StatsMark`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StatsDelta {
    /// Where the next call starts.
    pub mark: StatsMark,
    /// Compactions recorded after the mark, per day.
    pub days: Vec<DayTally>,
    /// Decisions recorded after the mark.
    pub decisions: Vec<DecisionTally>,
    /// Compactions recorded quarantined after the mark, by their main reason.
    pub quarantined_reasons: Vec<(String, u64)>,
    /// Compactions decided after the mark, by their main reason.
    pub decided_reasons: Vec<(String, u64)>,
    /// Whether a rerun stored a new report since the mark (main reasons may have changed,
    /// so running reason counts must be read again with [`Store::quarantine_reasons`]).
    pub reran: bool,
    /// Compactions in the store.
    pub total: u64,
}

/// `(text, count)` rows of a grouping query.
fn counted(
    conn: &dyn Conn,
    sql: &str,
    values: &[Param<'_>],
    context: &'static str,
) -> Result<Vec<(String, u64)>, StoreError> {
    conn.rows(sql, values, |r| Ok((r.string(0)?, r.count(1)?)))
        .map_err(StoreError::sql(context))
}

/// `AND (created_at, id) > (?, ?)` after `mark`, with its values.
fn after(mark: &StatsMark) -> (&'static str, Vec<Param<'_>>) {
    match &mark.compaction {
        Some((at, id)) => (
            " AND (created_at, id) > (?1, ?2)",
            vec![Param::Text(at), Param::Text(id)],
        ),
        None => ("", Vec::new()),
    }
}

fn since(conn: &dyn Conn, mark: &StatsMark) -> Result<StatsDelta, StoreError> {
    let (newer, values) = after(mark);
    let sql = format!(
        "SELECT substr(created_at, 1, 10),
                SUM(CASE WHEN status <> 'accepted' THEN 1 ELSE 0 END),
                SUM(CASE WHEN status = 'accepted' THEN 1 ELSE 0 END)
         FROM compactions WHERE 1 = 1{newer} GROUP BY 1 ORDER BY 1"
    );
    let days = conn
        .rows(&sql, &values, |r| {
            Ok(DayTally {
                day: r.string(0)?,
                quarantined: r.count(1)?,
                accepted: r.count(2)?,
            })
        })
        .map_err(StoreError::sql("counting compactions per day"))?;
    let quarantined_reasons = counted(
        conn,
        &format!(
            "SELECT main_reason, COUNT(*) FROM compactions
             WHERE status <> 'accepted'{newer} GROUP BY 1 ORDER BY 1"
        ),
        &values,
        "counting new quarantines by reason",
    )?;
    let decided = [Param::Int(mark.decision_id)];
    let decisions = conn
        .rows(
            "SELECT substr(created_at, 1, 10), action, reviewer, COUNT(*) FROM decisions
             WHERE id > ?1 GROUP BY 1, 2, 3 ORDER BY 1, 2, 3",
            &decided,
            |r| Ok((r.string(0)?, r.string(1)?, r.string(2)?, r.count(3)?)),
        )
        .map_err(StoreError::sql("counting decisions per day"))?
        .into_iter()
        .map(|(day, action, reviewer, count)| {
            let action = Action::parse(&action).ok_or_else(|| {
                StoreError::Corrupt(format!("decision action \"{action}\" is unknown"))
            })?;
            Ok(DecisionTally {
                day,
                action,
                reviewer,
                count,
            })
        })
        .collect::<Result<Vec<_>, StoreError>>()?;
    let decided_reasons = counted(
        conn,
        "SELECT c.main_reason, COUNT(*) FROM decisions d JOIN compactions c ON c.id = d.compaction_id
         WHERE d.id > ?1 GROUP BY 1 ORDER BY 1",
        &decided,
        "counting new decisions by reason",
    )?;
    let err = StoreError::sql("reading the newest rows");
    let count = |sql: &str| conn.one(sql, &[], |r| r.count(0)).map_err(err);
    let decision_id = conn
        .one(
            "SELECT COALESCE(MAX(id), ?1) FROM decisions",
            &decided,
            |r| r.int(0),
        )
        .map_err(err)?;
    // Every compaction has one first report; each report beyond it is a changed rerun. Both
    // counts read an index, never the reports' text.
    let total = count("SELECT COUNT(*) FROM compactions")?;
    let reruns = count("SELECT COUNT(*) FROM reports")?.saturating_sub(total);
    let newest = conn
        .opt(
            "SELECT created_at, id FROM compactions ORDER BY created_at DESC, id DESC LIMIT 1",
            &[],
            |r| Ok((r.string(0)?, r.string(1)?)),
        )
        .map_err(err)?;
    Ok(StatsDelta {
        mark: StatsMark {
            compaction: newest.or_else(|| mark.compaction.clone()),
            decision_id,
            reruns,
        },
        days,
        decisions,
        quarantined_reasons,
        decided_reasons,
        reran: reruns != mark.reruns,
        total,
    })
}

/// The check of a `check: reason` main reason (the whole text when it has no colon).
fn check_of(dialect: Dialect, column: &str) -> String {
    match dialect {
        Dialect::Sqlite => format!(
            "CASE WHEN instr({column}, ':') > 0
             THEN substr({column}, 1, instr({column}, ':') - 1) ELSE {column} END"
        ),
        Dialect::Postgres => format!("split_part({column}, ':', 1)"),
    }
}

impl Store {
    /// What changed after `mark`, read in one transaction (the default mark reads all).
    pub fn stats_since(&self, mark: &StatsMark) -> Result<StatsDelta, StoreError> {
        self.read(|conn| since(conn, mark))
    }

    /// What is quarantined now, by main reason, most first.
    pub fn quarantine_reasons(&self) -> Result<Vec<(String, u64)>, StoreError> {
        counted(
            self.conn(),
            "SELECT main_reason, COUNT(*) FROM compactions WHERE status = 'quarantined'
             GROUP BY 1 ORDER BY 2 DESC, 1",
            &[],
            "counting quarantines by reason",
        )
    }

    /// What `filter` matches, by the check of its main reason (`secrets` for
    /// `secrets: secret_found`), most first; items without a reason are left out.
    pub fn reason_counts(&self, filter: &ListFilter) -> Result<Vec<(String, u64)>, StoreError> {
        let (clause, values) = filter.where_clause(self.dialect());
        let joined = if clause.is_empty() {
            "WHERE main_reason <> ''".to_owned()
        } else {
            format!("{clause} AND main_reason <> ''")
        };
        let check = check_of(self.dialect(), "main_reason");
        counted(
            self.conn(),
            &format!(
                "SELECT {check}, COUNT(*) FROM compactions {joined} GROUP BY 1 ORDER BY 2 DESC, 1"
            ),
            &values,
            "counting the queue by reason",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_store_counts_nothing_and_marks_nothing() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let store = Store::open(&dir.path().join("s.db"), super::super::Mode::ReadWrite)
            .unwrap_or_else(|e| panic!("{e}"));
        let delta = store
            .stats_since(&StatsMark::default())
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(delta.total, 0);
        assert!(delta.days.is_empty() && delta.decisions.is_empty() && !delta.reran);
        assert_eq!(delta.mark, StatsMark::default());
        let reasons = store
            .reason_counts(&ListFilter::default())
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(reasons.is_empty());
    }
}
