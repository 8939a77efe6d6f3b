//! One suite, two backends: a [`TestStore`] is a temporary SQLite file or a fresh schema on
//! the test PostgreSQL server (`CQ_TEST_POSTGRES`, a URL `.ci/run` exports), with a raw SQL
//! handle for the tamper tests and a read-only role for `--readonly`. [`both!`] writes each
//! test once and runs it on both; without the variable the PostgreSQL half prints a SKIPPED
//! line on the terminal (past the harness's capture) and passes, so a run outside CI says
//! what it did not test.

#![allow(dead_code, clippy::unwrap_used)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use cq::store::{Mode, OpenOptions, Store};

/// The test PostgreSQL server's URL.
pub const PG_ENV: &str = "CQ_TEST_POSTGRES";
/// The role a read-only store connects as: it may only `SELECT`.
pub const READER_ROLE: &str = "cq_test_reader";

/// Says on the terminal what a run did not test. Written to stderr itself, not through
/// `eprintln!`, which the test harness captures and shows only for failing tests.
pub fn skipped(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Writes each test once and runs it on both backends, as `NAME::sqlite` and `NAME::postgres`.
#[macro_export]
macro_rules! both {
    ($($(#[$meta:meta])* fn $name:ident($s:ident: TestStore) $body:block)*) => {$(
        $(#[$meta])*
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            fn run($s: $crate::fixtures::TestStore) $body

            #[test]
            fn sqlite() {
                run($crate::fixtures::TestStore::sqlite());
            }

            #[test]
            fn postgres() {
                if let Some(s) = $crate::fixtures::TestStore::postgres(stringify!($name)) {
                    run(s);
                }
            }
        }
    )*};
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Sqlite,
    Postgres,
}

/// A store for one test.
pub struct TestStore {
    pub kind: Kind,
    /// Key files (and the SQLite file) live here.
    pub dir: tempfile::TempDir,
    /// The store's location: a file path, or a URL naming the test's schema.
    pub location: PathBuf,
    /// The PostgreSQL schema, dropped with the store.
    schema: Option<String>,
    /// Whether the read-only role was granted what the schema holds.
    granted: std::cell::Cell<bool>,
}

static NEXT: AtomicU64 = AtomicU64::new(0);

impl TestStore {
    pub fn sqlite() -> TestStore {
        let dir = tempfile::tempdir().unwrap();
        let location = dir.path().join("s.db");
        TestStore {
            kind: Kind::Sqlite,
            dir,
            location,
            schema: None,
            granted: Default::default(),
        }
    }

    /// A fresh schema on the test server, or `None` (with a SKIPPED line) without one.
    pub fn postgres(test: &str) -> Option<TestStore> {
        let Some(base) = base_url() else {
            skipped(&format!(
                "SKIPPED {test} on PostgreSQL (no PostgreSQL: set {PG_ENV})"
            ));
            return None;
        };
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos();
        let schema = format!("t{}_{n}_{nanos}", std::process::id());
        let mut admin = postgres::Client::connect(&base, postgres::NoTls)
            .unwrap_or_else(|e| panic!("{PG_ENV} names no reachable server: {e}"));
        admin
            .batch_execute(&format!("CREATE SCHEMA {schema}"))
            .unwrap();
        Some(TestStore {
            kind: Kind::Postgres,
            dir: tempfile::tempdir().unwrap(),
            location: PathBuf::from(with_params(&base, &[search_path(&schema)])),
            schema: Some(schema),
            granted: Default::default(),
        })
    }

    pub fn new(kind: Kind, test: &str) -> Option<TestStore> {
        match kind {
            Kind::Sqlite => Some(TestStore::sqlite()),
            Kind::Postgres => TestStore::postgres(test),
        }
    }

    /// The store's signing key file.
    pub fn key_path(&self) -> PathBuf {
        match self.kind {
            Kind::Sqlite => cq::store::store_key_path(&self.location),
            Kind::Postgres => self.dir.path().join("store.key"),
        }
    }

    /// The store's public key file.
    pub fn pub_path(&self) -> PathBuf {
        match self.kind {
            Kind::Sqlite => cq::store::store_pub_path(&self.location),
            Kind::Postgres => self.dir.path().join("store.key.pub"),
        }
    }

    pub fn options(&self, mode: Mode) -> OpenOptions {
        OpenOptions {
            mode,
            store_key: None,
        }
    }

    pub fn open(&self) -> Store {
        self.try_open(Mode::ReadWrite).unwrap()
    }

    /// Read-only: on PostgreSQL through a role that may only `SELECT`.
    pub fn open_ro(&self) -> Store {
        self.try_open(Mode::ReadOnly).unwrap()
    }

    pub fn try_open(&self, mode: Mode) -> Result<Store, cq::store::StoreError> {
        let location = match (self.kind, mode) {
            (Kind::Postgres, Mode::ReadOnly) => self.reader_location(),
            _ => self.location.clone(),
        };
        Store::open_with_signing_key(&location, &self.options(mode), Some(&self.key_path()))
    }

    /// The location as the read-only role sees it (granted `SELECT` on what exists now).
    pub fn reader_location(&self) -> PathBuf {
        let Some(schema) = &self.schema else {
            return self.location.clone();
        };
        let url = self.location.to_str().unwrap();
        let reader = PathBuf::from(with_params(url, &[format!("user={READER_ROLE}")]));
        if self.granted.get() {
            return reader;
        }
        self.granted.set(true);
        let mut admin = self.admin();
        admin
            .batch_execute(&format!(
                "DO $$ BEGIN CREATE ROLE {READER_ROLE} LOGIN; EXCEPTION WHEN OTHERS THEN NULL; END $$;
                 GRANT USAGE ON SCHEMA {schema} TO {READER_ROLE};
                 GRANT SELECT ON ALL TABLES IN SCHEMA {schema} TO {READER_ROLE};"
            ))
            .unwrap();
        reader
    }

    /// Sets the schema version the store records (to fake an older or newer store).
    pub fn set_version(&self, version: i64) {
        match self.kind {
            Kind::Sqlite => self
                .raw()
                .batch(&format!("PRAGMA user_version = {version}")),
            Kind::Postgres => self
                .raw()
                .batch(&format!("UPDATE schema_version SET version = {version}")),
        }
    }

    /// The schema version the store records.
    pub fn version(&self) -> i64 {
        match self.kind {
            Kind::Sqlite => self.raw().int("PRAGMA user_version", &[]),
            Kind::Postgres => self.raw().int("SELECT version FROM schema_version", &[]),
        }
    }

    /// Every table, column, index and constraint, as comparable lines.
    pub fn schema(&self) -> Vec<String> {
        let mut raw = self.raw();
        let mut lines = match self.kind {
            Kind::Sqlite => raw.strings(
                "SELECT type || ' ' || name || ': ' || COALESCE(sql, '') FROM sqlite_master",
                &[],
            ),
            Kind::Postgres => {
                let mut lines = raw.strings(
                    "SELECT 'column ' || table_name || '.' || column_name || ' ' || data_type
                         || ' ' || is_nullable || ' ' || COALESCE(column_default, '')
                         || ' ' || COALESCE(collation_name, '')
                     FROM information_schema.columns WHERE table_schema = current_schema()",
                    &[],
                );
                lines.extend(raw.strings(
                    "SELECT 'index ' || replace(indexdef, current_schema() || '.', '') FROM pg_indexes
                     WHERE schemaname = current_schema()",
                    &[],
                ));
                lines.extend(raw.strings(
                    "SELECT 'constraint ' || conrelid::regclass::text || ' '
                         || pg_get_constraintdef(oid)
                     FROM pg_constraint WHERE connamespace = current_schema()::regnamespace",
                    &[],
                ));
                lines
            }
        };
        lines.sort();
        lines
    }

    fn admin(&self) -> postgres::Client {
        postgres::Client::connect(&base_url().unwrap(), postgres::NoTls).unwrap()
    }

    /// A raw connection for tampering: SQLite with foreign keys off, PostgreSQL in the
    /// test's schema with foreign-key triggers off (`session_replication_role`).
    pub fn raw(&self) -> Raw {
        match self.kind {
            Kind::Sqlite => {
                let conn = rusqlite::Connection::open(&self.location).unwrap();
                conn.execute_batch("PRAGMA foreign_keys = OFF").unwrap();
                Raw::Sqlite(conn)
            }
            Kind::Postgres => {
                let mut client = self.admin();
                let schema = self.schema.as_deref().unwrap();
                client
                    .batch_execute(&format!("SET search_path = {schema}"))
                    .unwrap();
                let _ = client.batch_execute("SET session_replication_role = replica");
                Raw::Postgres(client)
            }
        }
    }

    /// A fresh copy of this store (and its key) to damage: a file copy, or the rows copied
    /// into a new schema with `cq::store::copy`.
    pub fn copy(&self, name: &str) -> TestStore {
        match self.kind {
            Kind::Sqlite => {
                let copy = TestStore::sqlite();
                std::fs::copy(&self.location, &copy.location).unwrap();
                std::fs::copy(self.key_path(), copy.key_path()).unwrap();
                copy
            }
            Kind::Postgres => {
                let copy = TestStore::postgres(name).unwrap();
                std::fs::copy(self.key_path(), copy.key_path()).unwrap();
                let from = self.try_open(Mode::ReadOnly).unwrap();
                cq::store::copy(&from, &copy.location, Some(&copy.key_path())).unwrap();
                copy
            }
        }
    }

    /// The schema's tables and their columns, in order.
    pub fn tables(&self) -> Vec<(String, Vec<String>)> {
        let mut raw = self.raw();
        let names: Vec<String> = match self.kind {
            Kind::Sqlite => raw.strings(
                "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name",
                &[],
            ),
            Kind::Postgres => raw.strings(
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()
                 ORDER BY tablename",
                &[],
            ),
        };
        names
            .into_iter()
            .map(|t| {
                let columns = match self.kind {
                    Kind::Sqlite => {
                        raw.strings(&format!("SELECT name FROM pragma_table_info('{t}')"), &[])
                    }
                    Kind::Postgres => raw.strings(
                        "SELECT column_name FROM information_schema.columns
                         WHERE table_schema = current_schema() AND table_name = ?1
                         ORDER BY ordinal_position",
                        &[V::from(t.as_str())],
                    ),
                };
                (t, columns)
            })
            .collect()
    }
}

impl Drop for TestStore {
    fn drop(&mut self) {
        if let (Some(schema), Some(base)) = (&self.schema, base_url()) {
            if let Ok(mut admin) = postgres::Client::connect(&base, postgres::NoTls) {
                let _ = admin.batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"));
            }
        }
    }
}

fn base_url() -> Option<String> {
    std::env::var(PG_ENV).ok().filter(|u| !u.trim().is_empty())
}

fn search_path(schema: &str) -> String {
    format!("options=-csearch_path%3D{schema}")
}

fn with_params(url: &str, params: &[String]) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}{}", params.join("&"))
}

/// A value read or bound by [`Raw`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum V {
    I(i64),
    T(String),
    B(Vec<u8>),
    Null,
}

impl From<i64> for V {
    fn from(v: i64) -> V {
        V::I(v)
    }
}

impl From<&str> for V {
    fn from(v: &str) -> V {
        V::T(v.to_owned())
    }
}

impl From<String> for V {
    fn from(v: String) -> V {
        V::T(v)
    }
}

impl From<Option<String>> for V {
    fn from(v: Option<String>) -> V {
        v.map_or(V::Null, V::T)
    }
}

impl V {
    pub fn int(&self) -> i64 {
        match self {
            V::I(n) => *n,
            other => panic!("{other:?} is not an integer"),
        }
    }

    pub fn text(&self) -> String {
        match self {
            V::T(t) => t.clone(),
            other => panic!("{other:?} is not text"),
        }
    }

    pub fn opt_text(&self) -> Option<String> {
        match self {
            V::T(t) => Some(t.clone()),
            _ => None,
        }
    }
}

impl rusqlite::ToSql for V {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, ValueRef};
        Ok(ToSqlOutput::Borrowed(match self {
            V::I(n) => ValueRef::Integer(*n),
            V::T(t) => ValueRef::Text(t.as_bytes()),
            V::B(b) => ValueRef::Blob(b),
            V::Null => ValueRef::Null,
        }))
    }
}

impl postgres::types::ToSql for V {
    fn to_sql(
        &self,
        ty: &postgres::types::Type,
        out: &mut bytes::BytesMut,
    ) -> Result<postgres::types::IsNull, Box<dyn std::error::Error + Sync + Send>> {
        use postgres::types::{IsNull, Type};
        match self {
            V::I(n) if *ty == Type::INT4 => i32::try_from(*n)?.to_sql(ty, out),
            V::I(n) => n.to_sql(ty, out),
            V::T(t) => t.as_str().to_sql(ty, out),
            V::B(b) => b.as_slice().to_sql(ty, out),
            V::Null => Ok(IsNull::Yes),
        }
    }

    fn accepts(_: &postgres::types::Type) -> bool {
        true
    }

    postgres::types::to_sql_checked!();
}

/// A raw SQL handle on a test store. Statements are written for SQLite; on PostgreSQL the
/// placeholders and the few functions that differ are rewritten.
pub enum Raw {
    Sqlite(rusqlite::Connection),
    Postgres(postgres::Client),
}

/// SQLite's spelling turned into PostgreSQL's.
pub fn to_postgres(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut quoted = false;
    for c in sql.chars() {
        match c {
            '\'' => quoted = !quoted,
            '?' if !quoted => {
                out.push('$');
                continue;
            }
            _ => {}
        }
        out.push(c);
    }
    out.replace("instr(", "strpos(")
        .replace("char(10)", "chr(10)")
        .replace("zeroblob(32)", "decode(repeat('00', 32), 'hex')")
}

impl Raw {
    pub fn batch(&mut self, sql: &str) {
        match self {
            Raw::Sqlite(c) => c.execute_batch(sql).unwrap(),
            Raw::Postgres(c) => c.batch_execute(&to_postgres(sql)).unwrap(),
        }
    }

    /// Runs one statement; the rows it changed, or the database's refusal.
    pub fn try_execute(&mut self, sql: &str, params: &[V]) -> Result<u64, String> {
        match self {
            Raw::Sqlite(c) => c
                .execute(sql, rusqlite::params_from_iter(params))
                .map(|n| n as u64)
                .map_err(|e| e.to_string()),
            Raw::Postgres(c) => {
                let refs: Vec<&(dyn postgres::types::ToSql + Sync)> = params
                    .iter()
                    .map(|p| p as &(dyn postgres::types::ToSql + Sync))
                    .collect();
                c.execute(to_postgres(sql).as_str(), &refs)
                    .map_err(|e| e.to_string())
            }
        }
    }

    pub fn execute(&mut self, sql: &str, params: &[V]) -> u64 {
        self.try_execute(sql, params).unwrap()
    }

    /// Every row, each column as a [`V`].
    pub fn query(&mut self, sql: &str, params: &[V]) -> Vec<Vec<V>> {
        self.try_query(sql, params).unwrap()
    }

    /// Every row, or the database's refusal.
    pub fn try_query(&mut self, sql: &str, params: &[V]) -> Result<Vec<Vec<V>>, String> {
        Ok(match self {
            Raw::Sqlite(c) => {
                let mut st = c.prepare(sql).map_err(|e| e.to_string())?;
                let n = st.column_count();
                let rows: Result<Vec<Vec<V>>, _> = st
                    .query_map(rusqlite::params_from_iter(params), |r| {
                        (0..n)
                            .map(|i| {
                                Ok(match r.get_ref(i)? {
                                    rusqlite::types::ValueRef::Integer(v) => V::I(v),
                                    rusqlite::types::ValueRef::Text(t) => {
                                        V::T(String::from_utf8_lossy(t).into_owned())
                                    }
                                    rusqlite::types::ValueRef::Blob(b) => V::B(b.to_vec()),
                                    rusqlite::types::ValueRef::Null => V::Null,
                                    rusqlite::types::ValueRef::Real(f) => V::T(f.to_string()),
                                })
                            })
                            .collect()
                    })
                    .map_err(|e| e.to_string())?
                    .collect();
                rows.map_err(|e| e.to_string())?
            }
            Raw::Postgres(c) => {
                use postgres::types::Type;
                let refs: Vec<&(dyn postgres::types::ToSql + Sync)> = params
                    .iter()
                    .map(|p| p as &(dyn postgres::types::ToSql + Sync))
                    .collect();
                let rows = c
                    .query(to_postgres(sql).as_str(), &refs)
                    .map_err(|e| e.to_string())?;
                rows.iter()
                    .map(|r| {
                        (0..r.len())
                            .map(|i| match *r.columns()[i].type_() {
                                Type::INT8 => r.get::<_, Option<i64>>(i).map_or(V::Null, V::I),
                                Type::INT4 => r
                                    .get::<_, Option<i32>>(i)
                                    .map_or(V::Null, |v| V::I(v.into())),
                                Type::BOOL => r
                                    .get::<_, Option<bool>>(i)
                                    .map_or(V::Null, |v| V::I(v.into())),
                                Type::BYTEA => r.get::<_, Option<Vec<u8>>>(i).map_or(V::Null, V::B),
                                _ => r.get::<_, Option<String>>(i).map_or(V::Null, V::T),
                            })
                            .collect()
                    })
                    .collect()
            }
        })
    }

    /// The first column of the first row, as an integer.
    pub fn int(&mut self, sql: &str, params: &[V]) -> i64 {
        self.query(sql, params)[0][0].int()
    }

    /// The first column of every row, as text.
    pub fn strings(&mut self, sql: &str, params: &[V]) -> Vec<String> {
        self.query(sql, params)
            .into_iter()
            .map(|r| r[0].text())
            .collect()
    }
}
