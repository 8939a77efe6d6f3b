//! The SQL seam every store module is written against, so recording, deciding, querying, the
//! log writer and the audit rows exist once for both backends ([`super::sqlite`] and
//! [`super::postgres`]).
//!
//! Statements are written once, with `?N` placeholders; a backend rewrites them for its
//! server. Values go in as [`Param`]s and come out through [`Row`]'s typed accessors, which
//! refuse a value of the wrong type instead of coercing it. The few places where the dialects
//! differ in a statement ([`Dialect`]) are named here; everything else (opening, transactions,
//! the write lock, the schema version) lives in the backend files.

use std::fmt;

/// One bound value.
#[derive(Clone, PartialEq, Eq)]
pub(crate) enum Param<'a> {
    Int(i64),
    Text(&'a str),
    /// Text computed for the statement (a lowered filter term).
    Owned(String),
    Bytes(&'a [u8]),
    Null,
}

impl std::fmt::Debug for Param<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Param::Int(v) => write!(f, "Int({v})"),
            Param::Text(v) => write!(f, "Text({} bytes)", v.len()),
            Param::Owned(v) => write!(f, "Owned({} bytes)", v.len()),
            Param::Bytes(v) => write!(f, "Bytes({} bytes)", v.len()),
            Param::Null => f.write_str("Null"),
        }
    }
}

impl Param<'_> {
    /// The same value owning its text, to be bound after its source is gone; bytes cannot
    /// be kept that way.
    pub fn to_static(&self) -> Result<Param<'static>, SqlError> {
        Ok(match self {
            Param::Int(v) => Param::Int(*v),
            Param::Text(v) => Param::Owned((*v).to_owned()),
            Param::Owned(v) => Param::Owned(v.clone()),
            Param::Null => Param::Null,
            Param::Bytes(_) => {
                return Err(SqlError::Other(
                    "a bytes value cannot be bound after its statement was queued".into(),
                ))
            }
        })
    }
}

impl From<i64> for Param<'_> {
    fn from(v: i64) -> Self {
        Param::Int(v)
    }
}

impl From<u32> for Param<'_> {
    fn from(v: u32) -> Self {
        Param::Int(i64::from(v))
    }
}

impl From<u64> for Param<'_> {
    /// Sequence numbers and sizes; beyond `i64::MAX` nothing can match anyway.
    fn from(v: u64) -> Self {
        Param::Int(i64::try_from(v).unwrap_or(i64::MAX))
    }
}

impl From<usize> for Param<'_> {
    fn from(v: usize) -> Self {
        Param::Int(i64::try_from(v).unwrap_or(i64::MAX))
    }
}

impl From<bool> for Param<'_> {
    /// Flags are stored as 0 or 1 on both backends.
    fn from(v: bool) -> Self {
        Param::Int(i64::from(v))
    }
}

impl<'a> From<&'a str> for Param<'a> {
    fn from(v: &'a str) -> Self {
        Param::Text(v)
    }
}

impl<'a> From<&'a String> for Param<'a> {
    fn from(v: &'a String) -> Self {
        Param::Text(v)
    }
}

impl<'a> From<&'a [u8]> for Param<'a> {
    fn from(v: &'a [u8]) -> Self {
        Param::Bytes(v)
    }
}

impl<'a, T: Into<Param<'a>>> From<Option<T>> for Param<'a> {
    fn from(v: Option<T>) -> Self {
        v.map_or(Param::Null, Into::into)
    }
}

/// `[Param]` from a list of values of mixed types.
macro_rules! params {
    ($($v:expr),* $(,)?) => {
        [$($crate::store::sql::Param::from($v)),*]
    };
}
pub(crate) use params;

/// What went wrong talking to a backend. Never carries a connection string.
#[derive(Debug, thiserror::Error)]
pub enum SqlError {
    #[error(transparent)]
    Sqlite(#[from] rusqlite::Error),
    #[error("{}", with_causes(.0))]
    Postgres(#[from] postgres::Error),
    #[error("column {column} holds {why}")]
    Value { column: usize, why: String },
    #[error("{0}")]
    Other(String),
}

/// `e` and every error under it (the server's own message is the cause of a `db error`).
fn with_causes(e: &postgres::Error) -> String {
    let mut text = e.to_string();
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}

impl SqlError {
    /// A value of column `column` that the reader refuses.
    pub(crate) fn value(column: usize, why: impl fmt::Display) -> SqlError {
        SqlError::Value {
            column,
            why: why.to_string(),
        }
    }
}

/// One result row. Accessors refuse NULL and values of another type.
pub(crate) trait Row {
    /// An integer (a flag stored as a boolean reads as 0 or 1).
    fn opt_int(&self, i: usize) -> Result<Option<i64>, SqlError>;
    fn opt_text(&self, i: usize) -> Result<Option<&str>, SqlError>;
    /// A blob, or the bytes of a text value.
    fn opt_bytes(&self, i: usize) -> Result<Option<&[u8]>, SqlError>;
}

impl dyn Row + '_ {
    pub fn int(&self, i: usize) -> Result<i64, SqlError> {
        self.opt_int(i)?
            .ok_or_else(|| SqlError::value(i, "NULL, not an integer"))
    }

    /// A non-negative integer (sequence numbers, sizes, counts); a negative one reads as 0.
    pub fn count(&self, i: usize) -> Result<u64, SqlError> {
        Ok(u64::try_from(self.int(i)?).unwrap_or(0))
    }

    pub fn text(&self, i: usize) -> Result<&str, SqlError> {
        self.opt_text(i)?
            .ok_or_else(|| SqlError::value(i, "NULL, not text"))
    }

    pub fn string(&self, i: usize) -> Result<String, SqlError> {
        self.text(i).map(str::to_owned)
    }

    pub fn opt_string(&self, i: usize) -> Result<Option<String>, SqlError> {
        Ok(self.opt_text(i)?.map(str::to_owned))
    }

    pub fn bytes(&self, i: usize) -> Result<&[u8], SqlError> {
        self.opt_bytes(i)?
            .ok_or_else(|| SqlError::value(i, "NULL, not bytes"))
    }

    pub fn flag(&self, i: usize) -> Result<bool, SqlError> {
        Ok(self.int(i)? != 0)
    }
}

/// How a transaction starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tx {
    /// Takes the store's write lock first (SQLite `BEGIN IMMEDIATE`; PostgreSQL a
    /// transaction-level advisory lock), so writers run one after another and each sees the
    /// log's latest tail.
    Write,
    /// PostgreSQL: `SERIALIZABLE` isolation without the advisory lock, so a writer that
    /// loses a race fails with SQLSTATE 40001 or 40P01 ([`Conn::lost_race`]) and runs again
    /// (measured against [`Tx::Write`] by the store bench; see [`super`]). SQLite: as
    /// [`Tx::Write`].
    Serializable,
    /// One consistent snapshot for several reads.
    Read,
}

/// Which SQL the server speaks, where a statement has to differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

impl Dialect {
    /// `haystack` contains the text bound to parameter `n` (both lowered by the caller).
    pub(crate) fn contains(self, haystack: &str, n: usize) -> String {
        match self {
            Dialect::Sqlite => format!("instr({haystack}, ?{n}) > 0"),
            Dialect::Postgres => format!("strpos({haystack}, ?{n}) > 0"),
        }
    }
}

/// One connection to a store's database.
pub(crate) trait Conn {
    fn dialect(&self) -> Dialect;
    /// Runs one statement; how many rows it changed.
    fn execute(&self, sql: &str, params: &[Param<'_>]) -> Result<u64, SqlError>;
    /// Runs one query, handing each row to `each` in order. `each` must not use this
    /// connection.
    fn query(
        &self,
        sql: &str,
        params: &[Param<'_>],
        each: &mut dyn FnMut(&dyn Row) -> Result<(), SqlError>,
    ) -> Result<(), SqlError>;
    /// Runs `writes` (statements whose results nobody reads, none depending on another's
    /// effect), in order or as one statement: PostgreSQL sends them in one round trip (as
    /// one statement of data-modifying `WITH` parts), SQLite runs them one by one.
    fn execute_all(&self, writes: &[(&str, &[Param<'_>])]) -> Result<(), SqlError> {
        for (sql, values) in writes {
            self.execute(sql, values)?;
        }
        Ok(())
    }
    /// Runs statements without parameters (migrations).
    fn batch(&self, sql: &str) -> Result<(), SqlError>;
    fn begin(&self, tx: Tx) -> Result<(), SqlError>;
    fn commit(&self) -> Result<(), SqlError>;
    fn rollback(&self) -> Result<(), SqlError>;
    /// The schema version the store records (0 for an empty database).
    fn schema_version(&self) -> Result<i64, SqlError>;
    fn set_schema_version(&self, version: i64) -> Result<(), SqlError>;
    /// Tells listeners on other connections that the log grew to `size` entries, when the
    /// current transaction commits (PostgreSQL); a no-op where nobody can listen.
    fn announce(&self, size: u64) -> Result<(), SqlError>;
    /// Whether a statement since the last [`Conn::begin`] failed because the transaction
    /// lost a race with a concurrent one (SQLSTATE 40001 serialization failure or 40P01
    /// deadlock): run again from the start, it may succeed.
    fn lost_race(&self) -> bool {
        false
    }
}

impl dyn Conn + '_ {
    /// Every row `f` maps.
    pub fn rows<T>(
        &self,
        sql: &str,
        params: &[Param<'_>],
        mut f: impl FnMut(&dyn Row) -> Result<T, SqlError>,
    ) -> Result<Vec<T>, SqlError> {
        let mut out = Vec::new();
        self.query(sql, params, &mut |row| {
            out.push(f(row)?);
            Ok(())
        })?;
        Ok(out)
    }

    /// The first row `f` maps, if any.
    pub fn opt<T>(
        &self,
        sql: &str,
        params: &[Param<'_>],
        mut f: impl FnMut(&dyn Row) -> Result<T, SqlError>,
    ) -> Result<Option<T>, SqlError> {
        let mut out = None;
        self.query(sql, params, &mut |row| {
            if out.is_none() {
                out = Some(f(row)?);
            }
            Ok(())
        })?;
        Ok(out)
    }

    /// The first row `f` maps; no row is an error.
    pub fn one<T>(
        &self,
        sql: &str,
        params: &[Param<'_>],
        f: impl FnMut(&dyn Row) -> Result<T, SqlError>,
    ) -> Result<T, SqlError> {
        self.opt(sql, params, f)?
            .ok_or_else(|| SqlError::Other("the query returned no row".into()))
    }
}

/// Rows per multi-row `INSERT` (at most 16 columns each: 2,048 parameters, within both
/// backends' limits).
const ROWS_PER_INSERT: usize = 128;

/// Inserts rows of `columns.len()` values each (`values` flattened, row after row) into
/// `table`, many rows per statement.
pub(crate) fn insert_rows(
    conn: &dyn Conn,
    table: &str,
    columns: &[&str],
    values: &[Param<'_>],
) -> Result<(), SqlError> {
    for (sql, chunk) in inserts(table, columns, values) {
        conn.execute(&sql, chunk)?;
    }
    Ok(())
}

/// The statements [`insert_rows`] runs, each with its values.
pub(crate) fn inserts<'v, 'a>(
    table: &str,
    columns: &[&str],
    values: &'v [Param<'a>],
) -> Vec<(String, &'v [Param<'a>])> {
    let width = columns.len();
    if width == 0 {
        return Vec::new();
    }
    let mut out = Vec::new();
    for chunk in values.chunks(width * ROWS_PER_INSERT) {
        let rows = chunk.len() / width;
        let mut sql = format!("INSERT INTO {table} ({}) VALUES ", columns.join(", "));
        for r in 0..rows {
            sql.push_str(if r == 0 { "(" } else { ", (" });
            for c in 0..width {
                if c > 0 {
                    sql.push_str(", ");
                }
                sql.push_str(&format!("?{}", r * width + c + 1));
            }
            sql.push(')');
        }
        out.push((sql, chunk));
    }
    out
}

/// `column IN (?a, ?b, …)` over `count` parameters numbered from `first`.
pub(crate) fn in_list(column: &str, first: usize, count: usize) -> String {
    let slots: Vec<String> = (first..first + count).map(|n| format!("?{n}")).collect();
    format!("{column} IN ({})", slots.join(", "))
}

/// A transaction that rolls back unless committed.
pub(crate) struct Transaction<'a> {
    conn: &'a dyn Conn,
    open: bool,
}

impl<'a> Transaction<'a> {
    pub fn begin(conn: &'a dyn Conn, tx: Tx) -> Result<Self, SqlError> {
        conn.begin(tx)?;
        Ok(Transaction { conn, open: true })
    }

    pub fn commit(mut self) -> Result<(), SqlError> {
        self.open = false;
        self.conn.commit()
    }
}

impl Drop for Transaction<'_> {
    fn drop(&mut self) {
        if self.open {
            let _ = self.conn.rollback();
        }
    }
}

/// `?N` placeholders rewritten as `$N`, leaving string literals and quoted names alone.
pub(crate) fn dollar_placeholders(sql: &str) -> String {
    placeholders(sql, '$', 0)
}

/// `?N` placeholders rewritten as `?M` with `M = N + offset`, leaving string literals and
/// quoted names alone: a statement's parameters numbered after another's.
pub(crate) fn shifted_placeholders(sql: &str, offset: usize) -> String {
    placeholders(sql, '?', offset)
}

/// `?N` outside literals and quoted names as `{sigil}{N + offset}`.
fn placeholders(sql: &str, sigil: char, offset: usize) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut quote: Option<char> = None;
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '?') => {
                let mut digits = String::new();
                while let Some(d) = chars.next_if(char::is_ascii_digit) {
                    digits.push(d);
                }
                out.push(sigil);
                match digits.parse::<usize>() {
                    Ok(n) => out.push_str(&(n + offset).to_string()),
                    Err(_) => out.push_str(&digits),
                }
                continue;
            }
            (None, _) => {}
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_outside_literals_become_dollars() {
        assert_eq!(
            dollar_placeholders("SELECT '?1', \"a?\" FROM t WHERE a = ?1 AND b = ?12"),
            "SELECT '?1', \"a?\" FROM t WHERE a = $1 AND b = $12"
        );
    }

    #[test]
    fn shifted_placeholders_number_after_the_statements_before() {
        assert_eq!(
            shifted_placeholders("UPDATE t SET a = ?2, b = '?1' WHERE c = ?1", 10),
            "UPDATE t SET a = ?12, b = '?1' WHERE c = ?11"
        );
    }
}
