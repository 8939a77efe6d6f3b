//! The quarantine store: one SQLite file holding every recorded compaction, each report run
//! on it, reviewer decisions and approvals, and the audit log with its checkpoints.
//!
//! It guarantees that a row and the receipt describing it are written in the same
//! `BEGIN IMMEDIATE` transaction (WAL, `synchronous=FULL`, foreign keys on, busy timeout), so a
//! crash or a concurrent writer never leaves a decision without its receipt. A store opened
//! [`Mode::ReadOnly`] refuses every write before touching SQLite. Requests and reports are
//! opaque canonical JSON text here: the store checks their digests, never their shape.

mod decide;
mod filter;
mod query;
mod record;
mod reviewers;
pub mod schema;

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension, Transaction, TransactionBehavior};

use crate::audit::keys::{self, KeyError, NamedKey};

pub use decide::{Action, DecisionError, DecisionOutcome, DecisionRequest, ReviewRules};
pub use filter::{ListFilter, ListTerm, SortKey, TermField};
pub use query::{
    Approval, Compaction, CompactionSummary, Decision, ReportRow, Status, StatusCounts,
    StoredReceipt,
};
pub use record::{NewCompaction, NewReport, Recorded, ReportChange};
pub use reviewers::{Reviewer, Role};
pub use schema::SCHEMA_VERSION;

/// How long a writer waits for another writer's lock before giving up.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// The environment variable that overrides the default store path.
pub const STORE_ENV: &str = "CQ_STORE";

/// Whether the store may be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    ReadWrite,
    /// For incident response: every write is refused with [`StoreError::ReadOnly`].
    ReadOnly,
}

/// Why the store could not be opened, read or written.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("the store \"{0}\" is open read-only: reopen it without --readonly to change it")]
    ReadOnly(PathBuf),
    #[error("no store at \"{0}\": run `cq check --store {0}` to create one")]
    Missing(PathBuf),
    #[error("store schema version \"{found}\" is newer than this cq supports (\"{supported}\"): upgrade cq")]
    NewerSchema { found: i64, supported: i64 },
    #[error("store schema version \"{found}\" is older than \"{supported}\": open it read-write once to upgrade it")]
    OlderSchema { found: i64, supported: i64 },
    #[error("no compaction \"{0}\" in the store: `cq list` shows what is there")]
    UnknownCompaction(String),
    #[error("reviewer \"{name}\" already has that name or key: pick another name or key")]
    ReviewerExists { name: String },
    #[error("compaction id \"{0}\" is already recorded for a different request")]
    IdConflict(String),
    #[error("{what} digest \"{claimed}\" does not match its JSON text (sha256 \"{actual}\")")]
    DigestMismatch {
        what: &'static str,
        claimed: String,
        actual: String,
    },
    #[error("store key \"{0}\" is missing: the store can be read with --readonly; restore the key file to write")]
    KeyMissing(PathBuf),
    #[error("store key \"{path}\" does not match the key recorded in the store")]
    KeyMismatch { path: PathBuf },
    #[error("store is inconsistent: {0}")]
    Corrupt(String),
    #[error("no data directory for this user: pass --store PATH or set CQ_STORE")]
    NoDataDir,
    #[error(transparent)]
    Key(#[from] KeyError),
    #[error("while {context}: {source}")]
    Sql {
        context: &'static str,
        source: rusqlite::Error,
    },
    #[error("while {context} \"{path}\": {source}")]
    Io {
        context: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("a receipt could not be written as canonical JSON: {0}")]
    Canonical(crate::json::CanonicalError),
}

/// What the store file says differs from what its signed receipts say: a row, a cached column
/// or the log itself was edited outside `cq`. Decisions and `cq status` refuse with this (exit
/// 1); `cq audit verify` names every problem.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the store \"{}\" has been tampered with: {what}; run `cq audit verify --store \"{}\"` for every problem", .path.display(), .path.display())]
pub struct Tampered {
    pub path: PathBuf,
    pub what: String,
}

impl StoreError {
    /// A `map_err` adapter naming what was being done.
    pub fn sql(context: &'static str) -> impl Fn(rusqlite::Error) -> StoreError + Copy {
        move |source| StoreError::Sql { context, source }
    }
}

/// `$CQ_STORE`, else `cq/store.db` in the user's data directory.
pub fn default_store_path() -> Result<PathBuf, StoreError> {
    if let Some(path) = std::env::var_os(STORE_ENV).filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(path));
    }
    let dirs = directories::ProjectDirs::from("", "", "cq").ok_or(StoreError::NoDataDir)?;
    Ok(dirs.data_dir().join("store.db"))
}

/// The store's own signing key file, kept beside the store: `<store>.key`.
pub fn store_key_path(store: &Path) -> PathBuf {
    let mut name = store.as_os_str().to_owned();
    name.push(".key");
    PathBuf::from(name)
}

/// An open store.
pub struct Store {
    conn: Connection,
    path: PathBuf,
    mode: Mode,
    origin: String,
    public_key: ed25519_dalek::VerifyingKey,
    key: Option<NamedKey>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("path", &self.path)
            .field("mode", &self.mode)
            .field("origin", &self.origin)
            .finish_non_exhaustive()
    }
}

impl Store {
    /// Opens (and in read-write mode creates and migrates) the store at `path`. A new store
    /// gets its own Ed25519 key at [`store_key_path`], created with mode 0600.
    pub fn open(path: &Path, mode: Mode) -> Result<Store, StoreError> {
        let io = |context, source| StoreError::Io {
            context,
            path: path.to_owned(),
            source,
        };
        let conn = match mode {
            Mode::ReadWrite => {
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir).map_err(|e| io("creating the directory of", e))?;
                }
                let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
                    | OpenFlags::SQLITE_OPEN_CREATE
                    | OpenFlags::SQLITE_OPEN_NO_MUTEX;
                Connection::open_with_flags(path, flags)
            }
            Mode::ReadOnly => {
                if !path.exists() {
                    return Err(StoreError::Missing(path.to_owned()));
                }
                let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
                Connection::open_with_flags(path, flags)
            }
        }
        .map_err(StoreError::sql("opening the store"))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(StoreError::sql("setting the busy timeout"))?;
        // 64 MiB of page cache: the digest indexes are random-access and outgrow the default.
        conn.execute_batch("PRAGMA foreign_keys = ON; PRAGMA cache_size = -65536")
            .map_err(StoreError::sql("configuring the connection"))?;
        if mode == Mode::ReadWrite {
            let journal: String = conn
                .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
                .map_err(StoreError::sql("switching to WAL"))?;
            if !journal.eq_ignore_ascii_case("wal") {
                return Err(StoreError::Corrupt(format!(
                    "journal mode is \"{journal}\", not \"wal\""
                )));
            }
            conn.execute_batch("PRAGMA synchronous = FULL")
                .map_err(StoreError::sql("setting synchronous=FULL"))?;
            schema::migrate(&conn)?;
        } else {
            conn.execute_batch("PRAGMA query_only = ON")
                .map_err(StoreError::sql("making the connection read-only"))?;
            let found = schema::version(&conn)?;
            if found != SCHEMA_VERSION {
                return Err(if found > SCHEMA_VERSION {
                    StoreError::NewerSchema {
                        found,
                        supported: SCHEMA_VERSION,
                    }
                } else {
                    StoreError::OlderSchema {
                        found,
                        supported: SCHEMA_VERSION,
                    }
                });
            }
        }
        let (origin, public_key, key) = match mode {
            Mode::ReadWrite => load_or_create_key(&conn, path)?,
            Mode::ReadOnly => {
                let (origin, public) = read_identity(&conn)?
                    .ok_or_else(|| StoreError::Corrupt("the store has no public key".into()))?;
                (origin, public, None)
            }
        };
        Ok(Store {
            conn,
            path: path.to_owned(),
            mode,
            origin,
            public_key,
            key,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The checkpoint origin line (also the name the store's key signs with).
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The store's checkpoint verifier key, as `name+hash+base64`.
    pub fn verifier_key(&self) -> String {
        keys::verifier_text(&self.origin, &self.public_key)
    }

    pub fn public_key(&self) -> &ed25519_dalek::VerifyingKey {
        &self.public_key
    }

    pub(crate) fn conn(&self) -> &Connection {
        &self.conn
    }

    /// Runs `f` in a `BEGIN IMMEDIATE` transaction, committing on `Ok`.
    pub(crate) fn write<T, E: From<StoreError>>(
        &self,
        f: impl FnOnce(&Transaction<'_>, &NamedKey) -> Result<T, E>,
    ) -> Result<T, E> {
        let key = match (&self.key, self.mode) {
            (Some(key), Mode::ReadWrite) => key,
            _ => return Err(StoreError::ReadOnly(self.path.clone()).into()),
        };
        let tx = Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)
            .map_err(StoreError::sql("starting a write transaction"))?;
        let value = f(&tx, key)?;
        tx.commit().map_err(StoreError::sql("committing"))?;
        Ok(value)
    }

    /// Appends a signed checkpoint when the log has grown since the last one; returns the
    /// latest checkpoint note either way (`None` for an empty log).
    pub fn checkpoint(&self) -> Result<Option<String>, StoreError> {
        if self.mode == Mode::ReadWrite {
            self.write(|tx, key| {
                let writer = crate::audit::log::LogWriter::load(tx)?;
                writer.finish(tx, Some((key, &self.origin))).map(drop)
            })?;
        }
        Ok(crate::audit::log::latest_note(&self.conn)?.map(|(_, note)| note))
    }
}

fn read_identity(
    conn: &Connection,
) -> Result<Option<(String, ed25519_dalek::VerifyingKey)>, StoreError> {
    let get = |k: &str| -> Result<Option<String>, StoreError> {
        conn.query_row("SELECT value FROM meta WHERE key = ?1", [k], |r| r.get(0))
            .optional()
            .map_err(StoreError::sql("reading the store identity"))
    };
    let (Some(origin), Some(public)) = (get("origin")?, get("public_key")?) else {
        return Ok(None);
    };
    let key = keys::parse_public(&public)
        .map_err(|_| StoreError::Corrupt(format!("store public key \"{public}\" is malformed")))?;
    Ok(Some((origin, key)))
}

/// Loads the store key, or creates it under the write lock so two processes opening a new
/// store at once agree on one key.
fn load_or_create_key(
    conn: &Connection,
    path: &Path,
) -> Result<(String, ed25519_dalek::VerifyingKey, Option<NamedKey>), StoreError> {
    let key_path = store_key_path(path);
    if let Some((origin, public)) = read_identity(conn)? {
        if !key_path.exists() {
            return Err(StoreError::KeyMissing(key_path));
        }
        let key = NamedKey::load(&key_path)?;
        if key.verifying() != public || key.name != origin {
            return Err(StoreError::KeyMismatch { path: key_path });
        }
        return Ok((origin, public, Some(key)));
    }
    let tx = Transaction::new_unchecked(conn, TransactionBehavior::Immediate)
        .map_err(StoreError::sql("starting a write transaction"))?;
    let key = if let Some((_, public)) = read_identity(&tx)? {
        let key = NamedKey::load(&key_path)?;
        if key.verifying() != public {
            return Err(StoreError::KeyMismatch { path: key_path });
        }
        key
    } else {
        let key = if key_path.exists() {
            NamedKey::load(&key_path)?
        } else {
            let fresh = NamedKey::generate("cq")?;
            let origin = format!("cq.store/{}", &fresh.key_id()[..16]);
            let key = NamedKey {
                name: origin,
                signing: fresh.signing,
            };
            key.save_new(&key_path)?;
            key
        };
        for (k, v) in [
            ("origin", key.name.clone()),
            ("public_key", key.verifier_text()),
        ] {
            tx.execute(
                "INSERT INTO meta (key, value) VALUES (?1, ?2)",
                [k, v.as_str()],
            )
            .map_err(StoreError::sql("recording the store identity"))?;
        }
        key
    };
    tx.commit().map_err(StoreError::sql("committing"))?;
    Ok((key.name.clone(), key.verifying(), Some(key)))
}
