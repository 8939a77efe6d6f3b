//! The quarantine store: one SQLite file holding every recorded compaction, each report run
//! on it, reviewer decisions and approvals, and the audit log with its checkpoints.
//!
//! It guarantees that a row and the receipt describing it are written in the same
//! `BEGIN IMMEDIATE` transaction (WAL, `synchronous=FULL`, foreign keys on, busy timeout), so a
//! crash or a concurrent writer never leaves a decision without its receipt. A store opened
//! [`Mode::ReadOnly`] refuses every write before touching SQLite. Requests and reports are
//! opaque canonical JSON text here: the store checks their digests, never their shape.

mod agents;
mod audit_rows;
mod decide;
mod filter;
mod identity;
mod log;
mod query;
mod record;
mod reviewers;
pub mod schema;
pub mod stats;
mod verified;

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, Transaction, TransactionBehavior};

use crate::audit::keys::{self, KeyError, NamedKey};

pub use identity::{store_key_path, store_pub_path, Identity, STORE_KEY_ENV};
pub(crate) use log::LogWriter;
pub use verified::{VerifiedCompaction, VerifiedDecision};

pub use crate::audit::authority::Role;
pub use decide::{Action, DecisionError, DecisionOutcome, DecisionRequest, ReviewRules};
pub use filter::{ListFilter, ListTerm, SortKey, TermField};
pub use query::{
    Approval, Compaction, CompactionSummary, Decision, ReportRow, Status, StatusCounts,
    StoredReceipt,
};
pub use record::{NewCompaction, NewReport, Recorded, ReportChange};
pub use reviewers::{RegistrationError, Reviewer};
pub use schema::SCHEMA_VERSION;

/// How long a writer waits for another writer's lock before giving up.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// The environment variable that overrides the default store path.
pub const STORE_ENV: &str = "CQ_STORE";

/// Whether the store may be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    #[default]
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
    #[error(transparent)]
    Tampered(#[from] Tampered),
    /// Found by the log writer; [`Store::write`] names the store.
    #[error("the audit log was changed outside cq: {0}")]
    LogTampered(String),
    #[error("the store \"{}\" cannot be trusted: {why}", .path.display())]
    Untrusted { path: PathBuf, why: String },
    #[error("the store's write-ahead log \"{}\" holds writes that a read-only directory cannot merge: copy the store with its -wal and -shm files to a writable place and open the copy", .0.display())]
    UnmergedWal(PathBuf),
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
    /// Whether this is the store found tampered with (exit 1, not a refusal).
    pub fn is_tamper(&self) -> bool {
        matches!(self, StoreError::Tampered(_) | StoreError::LogTampered(_))
    }

    /// A `map_err` adapter naming what was being done.
    pub fn sql(context: &'static str) -> impl Fn(rusqlite::Error) -> StoreError + Copy {
        move |source| StoreError::Sql { context, source }
    }
}

/// Whether `err` (or anything it wraps) says a store was tampered with: `main` exits 1 for
/// those, 2 for every other error.
pub fn is_tamper(err: &anyhow::Error) -> bool {
    err.chain().any(|c| {
        c.is::<Tampered>()
            || c.downcast_ref::<StoreError>()
                .is_some_and(StoreError::is_tamper)
            || c.downcast_ref::<DecisionError>()
                .is_some_and(DecisionError::is_tamper)
    })
}

/// `$CQ_STORE`, else `cq/store.db` in the user's data directory.
pub fn default_store_path() -> Result<PathBuf, StoreError> {
    if let Some(path) = std::env::var_os(STORE_ENV).filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(path));
    }
    let dirs = directories::ProjectDirs::from("", "", "cq").ok_or(StoreError::NoDataDir)?;
    Ok(dirs.data_dir().join("store.db"))
}

/// How to open a store.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OpenOptions {
    pub mode: Mode,
    /// The store's public key as the caller trusts it (`--store-key`), checked against the
    /// key the store file records.
    pub store_key: Option<String>,
}

/// An open store.
pub struct Store {
    conn: Connection,
    path: PathBuf,
    mode: Mode,
    identity: Identity,
    key: Option<NamedKey>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("path", &self.path)
            .field("mode", &self.mode)
            .field("origin", &self.identity.origin)
            .finish_non_exhaustive()
    }
}

impl Store {
    /// Opens (and in read-write mode creates and migrates) the store at `path`. A new store
    /// gets its own Ed25519 key at [`store_key_path`], created with mode 0600.
    pub fn open(path: &Path, mode: Mode) -> Result<Store, StoreError> {
        Store::open_with(
            path,
            &OpenOptions {
                mode,
                store_key: None,
            },
        )
    }

    /// [`Store::open`] with a store key the caller trusts.
    pub fn open_with(path: &Path, options: &OpenOptions) -> Result<Store, StoreError> {
        let given = options.store_key.as_deref();
        let (conn, identity, key) = match options.mode {
            Mode::ReadWrite => {
                let conn = open_read_write(path)?;
                let (identity, key) = identity::read_write(&conn, path, given)?;
                (conn, identity, Some(key))
            }
            Mode::ReadOnly => {
                let conn = open_read_only(path)?;
                let identity = identity::read_only(&conn, path, given)?;
                (conn, identity, None)
            }
        };
        Ok(Store {
            conn,
            path: path.to_owned(),
            mode: options.mode,
            identity,
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
        &self.identity.origin
    }

    /// The store's checkpoint verifier key, as `name+hash+base64`.
    pub fn verifier_key(&self) -> String {
        keys::verifier_text(&self.identity.origin, &self.identity.public_key)
    }

    /// The store's public key as recorded (equal to the trusted one when there is one).
    pub fn public_key(&self) -> &ed25519_dalek::VerifyingKey {
        &self.identity.public_key
    }

    /// The store's public key as trusted from outside the file, or why there is none.
    pub fn trusted_key(&self) -> Result<&ed25519_dalek::VerifyingKey, StoreError> {
        self.identity.trusted(&self.path)
    }

    /// Where the trust in the store's key comes from, or why there is none.
    pub fn trust(&self) -> &Result<String, String> {
        &self.identity.trust
    }

    /// A tamper error about this store.
    pub fn tampered(&self, what: impl Into<String>) -> Tampered {
        Tampered {
            path: self.path.clone(),
            what: what.into(),
        }
    }

    pub(crate) fn conn(&self) -> &Connection {
        &self.conn
    }

    /// Runs `f` in a `BEGIN IMMEDIATE` transaction with the log's verified tail, committing on
    /// `Ok`; the log's new head is signed before the commit.
    pub(crate) fn write<T, E: From<StoreError>>(
        &self,
        f: impl FnOnce(&Transaction<'_>, &mut LogWriter, &NamedKey) -> Result<T, E>,
    ) -> Result<T, E> {
        let key = match (&self.key, self.mode) {
            (Some(key), Mode::ReadWrite) => key,
            _ => return Err(StoreError::ReadOnly(self.path.clone()).into()),
        };
        let tx = Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)
            .map_err(StoreError::sql("starting a write transaction"))?;
        let mut log = LogWriter::load(&tx, &self.identity.public_key, self.origin())
            .map_err(|e| self.blame(e))?;
        let value = f(&tx, &mut log, key)?;
        log.finish(&tx, key, self.origin())?;
        tx.commit().map_err(StoreError::sql("committing"))?;
        Ok(value)
    }

    /// Turns a log problem found while writing into a tamper error about this store.
    fn blame(&self, e: StoreError) -> StoreError {
        match e {
            StoreError::LogTampered(what) => self.tampered(what).into(),
            other => other,
        }
    }

    /// The latest signed checkpoint note (`None` for an empty log). Every write signs the
    /// log's new head, so it covers the whole log.
    pub fn checkpoint(&self) -> Result<Option<String>, StoreError> {
        Ok(log::latest_note(&self.conn)?.map(|(_, note)| note))
    }
}

/// Opens a connection that may create, migrate and write the store.
fn open_read_write(path: &Path) -> Result<Connection, StoreError> {
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
    let conn =
        Connection::open_with_flags(path, flags).map_err(StoreError::sql("opening the store"))?;
    configure(&conn)?;
    identity::refuse_reinitialising(&conn, path)?;
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
    Ok(conn)
}

/// Opens a connection that never writes. A store on read-only media (a directory where
/// SQLite cannot create its shared-memory file) is opened immutable, after checking that no
/// unmerged write-ahead log would be left unread.
fn open_read_only(path: &Path) -> Result<Connection, StoreError> {
    if !path.exists() {
        return Err(StoreError::Missing(path.to_owned()));
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_URI;
    let attempt = |query: &str| -> Result<Connection, StoreError> {
        let conn = Connection::open_with_flags(uri(path, query), flags)
            .map_err(StoreError::sql("opening the store"))?;
        configure(&conn)?;
        schema::version(&conn)?;
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
    Ok(conn)
}

fn configure(conn: &Connection) -> Result<(), StoreError> {
    conn.busy_timeout(BUSY_TIMEOUT)
        .map_err(StoreError::sql("setting the busy timeout"))?;
    // 64 MiB of page cache: the digest indexes are random-access and outgrow the default.
    conn.execute_batch("PRAGMA foreign_keys = ON; PRAGMA cache_size = -65536")
        .map_err(StoreError::sql("configuring the connection"))
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
