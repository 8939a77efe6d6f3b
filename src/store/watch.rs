//! Telling an open reviewer that the store changed, without it asking: the live queue.
//!
//! A [`Watch`] owns a connection of its own. On PostgreSQL it `LISTEN`s to the channel every
//! write that grew the log notifies when it commits (another host's new quarantine, another
//! reviewer's decision), so a change arrives as soon as it is committed. A SQLite file has no
//! such channel, so the watch polls the log's size. Either way it only says *that* something
//! changed; what changed is read through the store as always.

use std::time::{Duration, Instant};

use super::sql::Conn;
use super::{postgres, sqlite, Location, Store, StoreError};

/// How often a SQLite watch looks at the log's size.
const POLL: Duration = Duration::from_millis(250);

/// A change feed on one store.
pub struct Watch {
    inner: Inner,
}

enum Inner {
    Postgres(Box<postgres::Postgres>),
    Sqlite { conn: sqlite::Sqlite, size: u64 },
}

impl std::fmt::Debug for Watch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self.inner {
            Inner::Postgres(_) => "Watch(listen)",
            Inner::Sqlite { .. } => "Watch(poll)",
        })
    }
}

fn log_size(conn: &dyn Conn) -> Result<u64, StoreError> {
    conn.one(
        "SELECT COALESCE(MAX(seq), 0) FROM audit_entries",
        &[],
        |r| r.count(0),
    )
    .map_err(StoreError::sql("reading the audit log size"))
}

impl Store {
    /// The audit log's size: it grows with every change to the queue (a new item, a
    /// decision, an approval, a rerun), so a reader can tell whether what it read is still
    /// current.
    pub fn log_size(&self) -> Result<u64, StoreError> {
        log_size(self.conn())
    }

    /// A change feed on this store, with a connection of its own (see the module docs).
    pub fn watch(&self) -> Result<Watch, StoreError> {
        let inner = match (self.location(), self.db()) {
            (Location::Postgres(url), super::Db::Postgres(conn)) => {
                Inner::Postgres(Box::new(postgres::listener(url, conn.channel())?))
            }
            (Location::File(path), _) => {
                let conn = sqlite::open_read_only(path)?;
                let size = log_size(&conn)?;
                Inner::Sqlite { conn, size }
            }
            (Location::Postgres(_), _) => {
                return Err(StoreError::Corrupt(
                    "a URL store on a file connection".into(),
                ))
            }
        };
        Ok(Watch { inner })
    }
}

impl Watch {
    /// Waits up to `timeout` for a change; whether one came.
    pub fn wait(&mut self, timeout: Duration) -> Result<bool, StoreError> {
        match &mut self.inner {
            Inner::Postgres(conn) => conn
                .wait_notification(timeout)
                .map_err(StoreError::sql("waiting for changes")),
            Inner::Sqlite { conn, size } => {
                let until = Instant::now() + timeout;
                loop {
                    let now = log_size(conn)?;
                    if now != *size {
                        *size = now;
                        return Ok(true);
                    }
                    let left = until.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Ok(false);
                    }
                    std::thread::sleep(left.min(POLL));
                }
            }
        }
    }
}
