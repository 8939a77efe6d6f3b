//! The embedded backend: one SQLite file (bundled SQLite), the default store.
//!
//! A read-write connection uses WAL, `synchronous=FULL`, foreign keys and a busy timeout, and
//! writers take the file's write lock up front (`BEGIN IMMEDIATE`), so they run one after
//! another. A read-only connection never writes: a store on read-only media is opened
//! immutable, after checking that no unmerged write-ahead log would be left unread. The schema
//! version is `PRAGMA user_version`.

use std::path::{Path, PathBuf};

use rusqlite::config::DbConfig;
use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Connection, OpenFlags};

use super::sql::{Conn, Dialect, Param, Row, SqlError, Tx};
use super::{StoreError, BUSY_TIMEOUT};

pub(crate) struct Sqlite {
    conn: Connection,
}

impl rusqlite::ToSql for Param<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match self {
            Param::Int(v) => ValueRef::Integer(*v),
            Param::Text(v) => ValueRef::Text(v.as_bytes()),
            Param::Owned(v) => ValueRef::Text(v.as_bytes()),
            Param::Bytes(v) => ValueRef::Blob(v),
            Param::Null => ValueRef::Null,
        }))
    }
}

struct SqliteRow<'a, 'b>(&'a rusqlite::Row<'b>);

impl Row for SqliteRow<'_, '_> {
    fn opt_int(&self, i: usize) -> Result<Option<i64>, SqlError> {
        match self.0.get_ref(i)? {
            ValueRef::Null => Ok(None),
            ValueRef::Integer(v) => Ok(Some(v)),
            other => Err(SqlError::value(
                i,
                format!("{}, not an integer", other.data_type()),
            )),
        }
    }

    fn opt_text(&self, i: usize) -> Result<Option<&str>, SqlError> {
        match self.0.get_ref(i)? {
            ValueRef::Null => Ok(None),
            ValueRef::Text(bytes) => std::str::from_utf8(bytes)
                .map(Some)
                .map_err(|_| SqlError::value(i, "text that is not UTF-8")),
            other => Err(SqlError::value(
                i,
                format!("{}, not text", other.data_type()),
            )),
        }
    }

    fn opt_bytes(&self, i: usize) -> Result<Option<&[u8]>, SqlError> {
        match self.0.get_ref(i)? {
            ValueRef::Null => Ok(None),
            ValueRef::Blob(bytes) | ValueRef::Text(bytes) => Ok(Some(bytes)),
            other => Err(SqlError::value(
                i,
                format!("{}, not bytes", other.data_type()),
            )),
        }
    }
}

impl Conn for Sqlite {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn execute(&self, sql: &str, params: &[Param<'_>]) -> Result<u64, SqlError> {
        let mut st = self.conn.prepare_cached(sql)?;
        Ok(st.execute(rusqlite::params_from_iter(params))? as u64)
    }

    fn query(
        &self,
        sql: &str,
        params: &[Param<'_>],
        each: &mut dyn FnMut(&dyn Row) -> Result<(), SqlError>,
    ) -> Result<(), SqlError> {
        let mut st = self.conn.prepare_cached(sql)?;
        let mut rows = st.query(rusqlite::params_from_iter(params))?;
        while let Some(row) = rows.next()? {
            each(&SqliteRow(row))?;
        }
        Ok(())
    }

    fn batch(&self, sql: &str) -> Result<(), SqlError> {
        Ok(self.conn.execute_batch(sql)?)
    }

    fn begin(&self, tx: Tx) -> Result<(), SqlError> {
        self.batch(match tx {
            Tx::Write | Tx::Serializable => "BEGIN IMMEDIATE",
            Tx::Read => "BEGIN DEFERRED",
        })
    }

    fn commit(&self) -> Result<(), SqlError> {
        self.batch("COMMIT")
    }

    fn rollback(&self) -> Result<(), SqlError> {
        self.batch("ROLLBACK")
    }

    fn schema_version(&self) -> Result<i64, SqlError> {
        Ok(self
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))?)
    }

    fn set_schema_version(&self, version: i64) -> Result<(), SqlError> {
        Ok(self.conn.pragma_update(None, "user_version", version)?)
    }

    fn announce(&self, _size: u64) -> Result<(), SqlError> {
        Ok(())
    }
}

/// Opens a connection that may create, migrate and write the store at `path`; `key` is the
/// store's signing key file (an empty file beside an existing key is a truncated store).
pub(crate) fn open_read_write(path: &Path, key: &Path) -> Result<Sqlite, StoreError> {
    let io = |context, source| StoreError::Io {
        context,
        path: path.to_owned(),
        source,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| io("creating the directory of", e))?;
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags)
        .map_err(|e| StoreError::sql("opening the store")(e.into()))?;
    configure(&conn)?;
    refuse_reinitialising(&conn, path, key)?;
    let journal: String = conn
        .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
        .map_err(|e| StoreError::sql("switching to WAL")(e.into()))?;
    if !journal.eq_ignore_ascii_case("wal") {
        return Err(StoreError::Corrupt(format!(
            "journal mode is \"{journal}\", not \"wal\""
        )));
    }
    conn.execute_batch("PRAGMA synchronous = FULL")
        .map_err(|e| StoreError::sql("setting synchronous=FULL")(e.into()))?;
    Ok(Sqlite { conn })
}

/// Refuses to create a store over a file that was one: an empty file whose key exists beside
/// it was truncated (or replaced), and re-creating it would hide that.
fn refuse_reinitialising(conn: &Connection, path: &Path, key: &Path) -> Result<(), StoreError> {
    let read = |sql: &str| -> Result<i64, StoreError> {
        conn.query_row(sql, [], |r| r.get(0))
            .map_err(|e| StoreError::sql("reading the schema")(e.into()))
    };
    let version = read("PRAGMA user_version")?;
    let tables = read("SELECT COUNT(*) FROM sqlite_master")?;
    if version == 0 && tables == 0 && key.exists() {
        return Err(super::identity::truncated(path, key).into());
    }
    Ok(())
}

/// Opens a connection that never writes (see the module docs).
pub(crate) fn open_read_only(path: &Path) -> Result<Sqlite, StoreError> {
    if !path.exists() {
        return Err(StoreError::Missing(path.to_owned()));
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_URI;
    let attempt = |query: &str| -> Result<Connection, StoreError> {
        let conn = Connection::open_with_flags(uri(path, query), flags)
            .map_err(|e| StoreError::sql("opening the store")(e.into()))?;
        configure(&conn)?;
        conn.query_row("PRAGMA user_version", [], |r| r.get::<_, i64>(0))
            .map_err(|e| StoreError::sql("reading the schema version")(e.into()))?;
        Ok(conn)
    };
    let conn = match attempt("mode=ro") {
        Ok(conn) => conn,
        Err(first) => {
            // Read-only media: SQLite cannot create the shared-memory file of a WAL store.
            let wal = {
                let mut name = path.as_os_str().to_owned();
                name.push("-wal");
                PathBuf::from(name)
            };
            if std::fs::metadata(&wal).is_ok_and(|m| m.len() > 0) {
                return Err(StoreError::UnmergedWal(wal));
            }
            attempt("mode=ro&immutable=1").map_err(|_| first)?
        }
    };
    conn.execute_batch("PRAGMA query_only = ON")
        .map_err(|e| StoreError::sql("making the connection read-only")(e.into()))?;
    Ok(Sqlite { conn })
}

fn configure(conn: &Connection) -> Result<(), StoreError> {
    // Every statement of the store and a few multi-row inserts stay prepared, with one plan
    // whatever is bound to them (the query planner stability guarantee). Otherwise SQLite
    // re-plans a statement that filters on a bound value and sorts, `... WHERE compaction_id =
    // ?1 ORDER BY id`, each time a new value is bound.
    conn.set_prepared_statement_cache_capacity(128);
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)
        .map_err(|e| StoreError::sql("configuring the connection")(e.into()))?;
    conn.busy_timeout(BUSY_TIMEOUT)
        .map_err(|e| StoreError::sql("setting the busy timeout")(e.into()))?;
    // 64 MiB of page cache: the digest indexes are random-access and outgrow the default.
    conn.execute_batch("PRAGMA foreign_keys = ON; PRAGMA cache_size = -65536")
        .map_err(|e| StoreError::sql("configuring the connection")(e.into()))
}

/// A `file:` URI for `path` with `query`, every byte outside the unreserved set escaped.
fn uri(path: &Path, query: &str) -> String {
    let mut out = String::from("file:");
    for b in path.as_os_str().as_encoded_bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                out.push(char::from(*b))
            }
            other => out.push_str(&format!("%{other:02X}")),
        }
    }
    out.push('?');
    out.push_str(query);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cached_statement_keeps_its_plan_whatever_is_bound_to_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("store.db");
        let db = open_read_write(&path, &dir.path().join("store.db.key")).unwrap();
        db.batch(
            "CREATE TABLE reports (id INTEGER PRIMARY KEY, compaction_id TEXT NOT NULL);
             CREATE INDEX reports_by_compaction ON reports (compaction_id, id);
             INSERT INTO reports (compaction_id) VALUES ('a'), ('b'), ('a');",
        )
        .unwrap();
        let sql = "SELECT id FROM reports WHERE compaction_id = ?1 ORDER BY id";
        for read in [&db, &open_read_only(&path).unwrap()] {
            let mut ids = Vec::new();
            for id in ["a", "b", "c", "a"] {
                read.query(sql, &[Param::Text(id)], &mut |row| {
                    ids.push(row.int(0)?);
                    Ok(())
                })
                .unwrap();
            }
            assert_eq!(ids, [1, 3, 2, 1, 3]);
            let st = read.conn.prepare_cached(sql).unwrap();
            assert_eq!(st.get_status(rusqlite::StatementStatus::RePrepare), 0);
        }
    }
}
