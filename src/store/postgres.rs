//! The shared backend: a PostgreSQL database, so agents on many hosts record into one
//! quarantine and many reviewers work it at once (the synchronous `postgres` client: each
//! [`super::Store`] owns one connection, like the SQLite backend, and the reviewer's worker
//! threads each own a store).
//!
//! The store lives in the first schema of the connection's search path (`public` unless the
//! URL sets `options=-csearch_path%3DNAME`). Writers serialize on a transaction-level advisory
//! lock named after that schema, taken first in every write transaction: the log stays one
//! linear, gap-free sequence however many hosts write, and a writer always builds on the
//! latest committed tail (READ COMMITTED gives each statement after the lock a fresh
//! snapshot). The alternative, `SERIALIZABLE` transactions without the lock retried when
//! they lose a race ([`Tx::Serializable`], [`Conn::lost_race`]), exists for the store bench
//! and the race test only; [`super`] says why the lock stays. A write that grew the log
//! `NOTIFY`s the store's channel when it commits, which [`super::watch`] listens to. Reads
//! that must agree with each other run in one `REPEATABLE READ` snapshot. A store opened
//! read-only also makes its connection read-only (`default_transaction_read_only`), and
//! works with a role that may only `SELECT`.
//!
//! TLS is used when the URL asks for it (`sslmode=require` or `prefer`), with the server's
//! certificate checked against the system's roots; without `sslmode` the connection is plain
//! (a local socket or a trusted network). A password comes from the URL or `PGPASSWORD` and
//! never appears in a message. The schema version is the one row of `schema_version`.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::error::Error as StdError;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use bytes::BytesMut;
use postgres::error::SqlState;
use postgres::fallible_iterator::FallibleIterator;
use postgres::types::{IsNull, ToSql, Type};
use postgres::{Client, Statement};
use sha2::{Digest, Sha256};

use super::sql::{
    dollar_placeholders, shifted_placeholders, Conn, Dialect, Param, Row, SqlError, Tx,
};
use super::StoreError;

/// Prepared statements kept per connection before the cache starts over.
const CACHED_STATEMENTS: usize = 512;

/// Parameters bound to one statement of [`Conn::execute_all`] at most: a single write's
/// rows go in one round trip, while a batch's large inserts stay statements of their own
/// (a new text for every batch shape would be prepared and planned each time).
const PARAMS_PER_STATEMENT: usize = 2_048;

pub(crate) struct Postgres {
    inner: RefCell<Inner>,
    /// The advisory lock every writer of this store takes.
    lock: i64,
    /// The channel a growing log is announced on.
    channel: String,
    /// Whether a statement of the open transaction lost a race ([`Conn::lost_race`]).
    lost_race: Cell<bool>,
    /// Whether the open transaction is a [`Tx::Serializable`] one.
    serializable: Cell<bool>,
    /// The log size [`Conn::announce`] asked to announce, sent with the commit.
    announced: Cell<Option<u64>>,
}

struct Inner {
    client: Client,
    statements: HashMap<String, Statement>,
}

impl Inner {
    fn statement(&mut self, sql: &str) -> Result<Statement, SqlError> {
        if let Some(st) = self.statements.get(sql) {
            return Ok(st.clone());
        }
        let st = self.client.prepare(&dollar_placeholders(sql))?;
        if self.statements.len() >= CACHED_STATEMENTS {
            self.statements.clear();
        }
        self.statements.insert(sql.to_owned(), st.clone());
        Ok(st)
    }
}

type ToSqlResult = Result<IsNull, Box<dyn StdError + Sync + Send>>;

impl ToSql for Param<'_> {
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> ToSqlResult {
        let refuse = |what: &str| -> ToSqlResult {
            Err(format!("cannot bind {what} to a parameter of type {ty}").into())
        };
        match self {
            Param::Null => Ok(IsNull::Yes),
            Param::Int(v) => match *ty {
                Type::INT8 => v.to_sql(ty, out),
                Type::INT4 => i32::try_from(*v)?.to_sql(ty, out),
                Type::INT2 => i16::try_from(*v)?.to_sql(ty, out),
                Type::BOOL => (*v != 0).to_sql(ty, out),
                _ => refuse("an integer"),
            },
            Param::Text(v) if <&str as ToSql>::accepts(ty) => v.to_sql(ty, out),
            Param::Owned(v) if <&str as ToSql>::accepts(ty) => v.as_str().to_sql(ty, out),
            Param::Text(_) | Param::Owned(_) => refuse("text"),
            Param::Bytes(v) if <&[u8] as ToSql>::accepts(ty) => v.to_sql(ty, out),
            Param::Bytes(_) => refuse("bytes"),
        }
    }

    fn accepts(_: &Type) -> bool {
        // Checked per value in `to_sql`.
        true
    }

    postgres::types::to_sql_checked!();
}

struct PgRow<'a>(&'a postgres::Row);

impl PgRow<'_> {
    fn ty(&self, i: usize) -> Result<&Type, SqlError> {
        self.0
            .columns()
            .get(i)
            .map(|c| c.type_())
            .ok_or_else(|| SqlError::value(i, "nothing: there is no such column"))
    }
}

impl Row for PgRow<'_> {
    fn opt_int(&self, i: usize) -> Result<Option<i64>, SqlError> {
        Ok(match *self.ty(i)? {
            Type::INT8 => self.0.try_get::<_, Option<i64>>(i)?,
            Type::INT4 => self.0.try_get::<_, Option<i32>>(i)?.map(i64::from),
            Type::INT2 => self.0.try_get::<_, Option<i16>>(i)?.map(i64::from),
            Type::BOOL => self.0.try_get::<_, Option<bool>>(i)?.map(i64::from),
            ref other => return Err(SqlError::value(i, format!("{other}, not an integer"))),
        })
    }

    fn opt_text(&self, i: usize) -> Result<Option<&str>, SqlError> {
        Ok(self.0.try_get::<_, Option<&str>>(i)?)
    }

    fn opt_bytes(&self, i: usize) -> Result<Option<&[u8]>, SqlError> {
        if *self.ty(i)? == Type::BYTEA {
            Ok(self.0.try_get::<_, Option<&[u8]>>(i)?)
        } else {
            Ok(self.opt_text(i)?.map(str::as_bytes))
        }
    }
}

impl Postgres {
    /// `e` as a [`SqlError`], remembering whether it says the transaction lost a race. In a
    /// `SERIALIZABLE` transaction a unique violation counts too: PostgreSQL reports one as a
    /// serialization failure only when the transaction read the conflicting key itself, and a
    /// writer that numbered a row after the log's tail (an approval's `receipt_seq`) never
    /// read that key.
    fn note(&self, e: postgres::Error) -> SqlError {
        let raced = [
            SqlState::T_R_SERIALIZATION_FAILURE,
            SqlState::T_R_DEADLOCK_DETECTED,
        ];
        let code = e.code();
        if code.is_some_and(|code| raced.contains(code))
            || (self.serializable.get() && code == Some(&SqlState::UNIQUE_VIOLATION))
        {
            self.lost_race.set(true);
        }
        e.into()
    }

    /// `writes` as one statement (see [`Conn::execute_all`]).
    fn execute_as_one(&self, writes: &[(&str, &[Param<'_>])]) -> Result<(), SqlError> {
        let Some(((last, last_values), parts)) = writes.split_last() else {
            return Ok(());
        };
        if parts.is_empty() {
            return self.execute(last, last_values).map(|_| ());
        }
        let mut values: Vec<Param<'_>> = Vec::new();
        let mut with = Vec::with_capacity(parts.len());
        for (i, (sql, part)) in parts.iter().enumerate() {
            with.push(format!(
                "w{i} AS ({})",
                shifted_placeholders(sql, values.len())
            ));
            values.extend(part.iter().cloned());
        }
        let sql = format!(
            "WITH {} {}",
            with.join(", "),
            shifted_placeholders(last, values.len())
        );
        values.extend(last_values.iter().cloned());
        self.execute(&sql, &values).map(|_| ())
    }

    fn run(&self, sql: &str) -> Result<(), SqlError> {
        let result = self.inner()?.client.batch_execute(sql);
        result.map_err(|e| self.note(e))
    }

    fn inner(&self) -> Result<std::cell::RefMut<'_, Inner>, SqlError> {
        self.inner.try_borrow_mut().map_err(|_| {
            SqlError::Other("a statement was run while a query's rows were being read".into())
        })
    }

    /// The channel [`Conn::announce`] notifies.
    pub fn channel(&self) -> &str {
        &self.channel
    }

    /// Waits up to `timeout` for a notification on a channel this connection listens to;
    /// whether one came (several queued ones count as one).
    pub fn wait_notification(&self, timeout: Duration) -> Result<bool, SqlError> {
        let mut inner = self.inner()?;
        let mut notes = inner.client.notifications();
        let got = notes.timeout_iter(timeout).next()?.is_some();
        if got {
            while notes.iter().next()?.is_some() {}
        }
        Ok(got)
    }
}

fn params<'a>(params: &'a [Param<'a>]) -> Vec<&'a (dyn ToSql + Sync)> {
    params.iter().map(|p| p as &(dyn ToSql + Sync)).collect()
}

impl Conn for Postgres {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn execute(&self, sql: &str, values: &[Param<'_>]) -> Result<u64, SqlError> {
        let mut inner = self.inner()?;
        let st = inner.statement(sql)?;
        let result = inner.client.execute(&st, &params(values));
        result.map_err(|e| self.note(e))
    }

    fn query(
        &self,
        sql: &str,
        values: &[Param<'_>],
        each: &mut dyn FnMut(&dyn Row) -> Result<(), SqlError>,
    ) -> Result<(), SqlError> {
        let mut inner = self.inner()?;
        let st = inner.statement(sql)?;
        let mut rows = inner
            .client
            .query_raw(&st, params(values))
            .map_err(|e| self.note(e))?;
        while let Some(row) = rows.next().map_err(|e| self.note(e))? {
            each(&PgRow(&row))?;
        }
        Ok(())
    }

    /// Runs `writes` as few statements as the parameter limit allows, each one `WITH w0 AS
    /// (first), w1 AS (second), … last`: the parts run on one snapshot and none sees another's
    /// rows, which is why the callers' writes must not depend on each other.
    fn execute_all(&self, writes: &[(&str, &[Param<'_>])]) -> Result<(), SqlError> {
        let mut group: Vec<(&str, &[Param<'_>])> = Vec::new();
        let mut bound = 0;
        for &(sql, values) in writes {
            if !group.is_empty() && bound + values.len() > PARAMS_PER_STATEMENT {
                self.execute_as_one(&group)?;
                group.clear();
                bound = 0;
            }
            bound += values.len();
            group.push((sql, values));
        }
        self.execute_as_one(&group)
    }

    fn batch(&self, sql: &str) -> Result<(), SqlError> {
        let mut inner = self.inner()?;
        // The statements may change tables that cached statements were planned against.
        inner.statements.clear();
        drop(inner);
        self.run(sql)
    }

    /// A write transaction and its lock in one round trip (the lock's number is ours, not
    /// anyone's input); a transaction whose lock failed is rolled back.
    fn begin(&self, tx: Tx) -> Result<(), SqlError> {
        self.lost_race.set(false);
        self.serializable.set(tx == Tx::Serializable);
        self.announced.set(None);
        let started = match tx {
            Tx::Write => self.run(&format!(
                "BEGIN; SELECT pg_advisory_xact_lock({})",
                self.lock
            )),
            Tx::Serializable => self.run("BEGIN ISOLATION LEVEL SERIALIZABLE"),
            Tx::Read => self.run("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"),
        };
        if started.is_err() {
            let _ = self.run("ROLLBACK");
        }
        started
    }

    /// Commits, with the announcement [`Conn::announce`] asked for in the same round trip: a
    /// `NOTIFY` is delivered only when its transaction commits, so it cannot come early. A
    /// batch that failed part-way is rolled back, so no transaction is left open.
    fn commit(&self) -> Result<(), SqlError> {
        let done = match self.announced.take() {
            Some(size) => self.run(&format!(
                "SELECT pg_notify('{}', '{size}'); COMMIT",
                self.channel.replace('\'', "")
            )),
            None => self.run("COMMIT"),
        };
        if done.is_err() {
            let _ = self.run("ROLLBACK");
        }
        done
    }

    fn rollback(&self) -> Result<(), SqlError> {
        self.announced.set(None);
        self.run("ROLLBACK")
    }

    fn lost_race(&self) -> bool {
        self.lost_race.get()
    }

    fn schema_version(&self) -> Result<i64, SqlError> {
        let conn: &dyn Conn = self;
        let exists = conn.opt(
            "SELECT 1 FROM pg_catalog.pg_tables
             WHERE schemaname = current_schema() AND tablename = 'schema_version'",
            &[],
            |r| r.int(0),
        )?;
        if exists.is_none() {
            return Ok(0);
        }
        conn.one(
            "SELECT COALESCE(MAX(version), 0) FROM schema_version",
            &[],
            |r| r.int(0),
        )
    }

    fn set_schema_version(&self, version: i64) -> Result<(), SqlError> {
        self.execute("DELETE FROM schema_version", &[])?;
        self.execute(
            "INSERT INTO schema_version (version) VALUES (?1)",
            &[Param::Int(version)],
        )?;
        Ok(())
    }

    /// Sent with the commit ([`Conn::commit`]), not a round trip of its own.
    fn announce(&self, size: u64) -> Result<(), SqlError> {
        self.announced.set(Some(size));
        Ok(())
    }
}

/// Connects to the database `url` names. A read-only connection refuses every write the
/// server is asked for, whatever the role may do.
pub(crate) fn connect(url: &str, read_only: bool) -> Result<Postgres, StoreError> {
    let sql = |context| move |e: postgres::Error| StoreError::sql(context)(e.into());
    let mut config = postgres::Config::from_str(url).map_err(sql("reading the store's URL"))?;
    if config.get_password().is_none() {
        if let Some(password) = std::env::var_os("PGPASSWORD").filter(|p| !p.is_empty()) {
            config.password(password.as_encoded_bytes());
        }
    }
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(Duration::from_secs(10));
    }
    if config.get_application_name().is_none() {
        config.application_name("cq");
    }
    let client = match tls_asked(url) {
        false => config.connect(postgres::NoTls),
        true => config.connect(tls()?),
    }
    .map_err(sql("connecting to the store"))?;
    let conn = Postgres {
        inner: RefCell::new(Inner {
            client,
            statements: HashMap::new(),
        }),
        lock: 0,
        channel: String::new(),
        lost_race: Cell::new(false),
        serializable: Cell::new(false),
        announced: Cell::new(None),
    };
    let setup = if read_only {
        "SET client_min_messages = warning; SET default_transaction_read_only = on"
    } else {
        "SET client_min_messages = warning"
    };
    conn.batch(setup)
        .map_err(StoreError::sql("configuring the connection"))?;
    let schema: Option<String> = (&conn as &dyn Conn)
        .one("SELECT current_schema()", &[], |r| r.opt_string(0))
        .map_err(StoreError::sql("reading the search path"))?;
    let schema = schema.ok_or_else(|| {
        StoreError::Corrupt(
            "the connection's search path names no schema that exists: create the schema, or fix options=-csearch_path in the URL".into(),
        )
    })?;
    let digest = Sha256::digest(format!("cq.store/{schema}").as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(digest.get(..8).unwrap_or(&[0; 8]));
    Ok(Postgres {
        lock: i64::from_be_bytes(first),
        channel: format!("cq_{}", crate::audit::hex(digest.get(..8).unwrap_or(&[]))),
        ..conn
    })
}

/// Whether the URL asks for TLS (`sslmode` other than `disable`).
fn tls_asked(url: &str) -> bool {
    let query = url.split_once('?').map_or("", |(_, q)| q);
    query.split('&').any(|kv| {
        kv.split_once('=')
            .is_some_and(|(k, v)| k == "sslmode" && v != "disable")
    })
}

fn tls() -> Result<tokio_postgres_rustls::MakeRustlsConnect, StoreError> {
    let found = rustls_native_certs::load_native_certs();
    let mut roots = rustls::RootCertStore::empty();
    roots.add_parsable_certificates(found.certs);
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| StoreError::Corrupt(format!("TLS cannot be set up: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(tokio_postgres_rustls::MakeRustlsConnect::new(config))
}

/// A dedicated connection that listens to `store`'s announcements.
pub(crate) fn listener(url: &str, channel: &str) -> Result<Postgres, StoreError> {
    let conn = connect(url, true)?;
    conn.batch(&format!("LISTEN \"{}\"", channel.replace('"', "")))
        .map_err(StoreError::sql("listening for changes"))?;
    Ok(conn)
}
