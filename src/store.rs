//! The quarantine store: every recorded compaction, each report run on it, reviewer decisions
//! and approvals, and the audit log with its checkpoints, in one SQLite file (the embedded
//! default) or one PostgreSQL database (a team's shared queue), chosen by the store's
//! [`Location`]: a path, or a `postgres://` URL.
//!
//! It guarantees, on both backends, that a row and the receipt describing it are written in
//! the same transaction, which first takes the store's write lock (SQLite `BEGIN IMMEDIATE`,
//! PostgreSQL an advisory lock), so a crash or a concurrent writer on any host never leaves a
//! decision without its receipt or the log with a gap. On PostgreSQL the lock was measured
//! against the alternative, `SERIALIZABLE` transactions without it retried on a lost race
//! ([`Appends::Serializable`], kept for `cargo bench --bench store` and the race test). Both
//! keep the log linear and gap-free. With 4 to 8 writers the retries' throughput was within
//! about 30% of the lock's either way (no steady winner) and their median latency lower,
//! but they cost 1 to 2.4 retries per append at 8 writers (every append reads the tail the
//! others extend, so each commit makes the writers beside it redo all their work,
//! signatures included) and a p99 latency 2 to 7 times the lock's (up to over a second);
//! a writer can also run out of retries and fail under contention, which a writer waiting
//! for the lock never does, and PostgreSQL reports some of those races as unique
//! violations, which the retry loop must then take for races too. The lock stays: every
//! writer waits its turn and finishes, and no work is thrown away.
//!
//! A store opened [`Mode::ReadOnly`] refuses every write before touching the database.
//! Requests and reports are opaque canonical JSON text here: the store checks their
//! digests, never their shape. Every SQL statement is written once against [`sql::Conn`];
//! the backends differ only in [`sqlite`] and [`postgres`].

mod agents;
mod audit_rows;
mod copy;
mod decide;
mod filter;
mod identity;
mod location;
mod log;
mod page;
mod postgres;
mod query;
mod record;
mod retry;
mod reviewers;
pub mod schema;
pub(crate) mod sql;
mod sqlite;
pub mod stats;
mod verified;
mod watch;

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::audit::keys::{self, KeyError, NamedKey};
use sql::{Conn, Transaction, Tx};

pub use identity::{
    signing_key_files, store_key_path, store_pub_path, Identity, KeyFiles, SIGNING_KEY_ENV,
    STORE_KEY_ENV,
};
pub use location::{is_url, shown, Location};
pub(crate) use log::LogWriter;
pub use sql::{Dialect, SqlError};
pub use verified::{VerifiedCompaction, VerifiedDecision};
pub use watch::Watch;

pub use crate::audit::authority::Role;
pub use copy::{copy, Copied};
pub use decide::{Action, DecisionError, DecisionOutcome, DecisionRequest, ReviewRules};
pub use filter::{ListFilter, ListTerm, SortKey, TermField};
pub use page::{Direction, QueueKey, Seek};
pub use query::{
    Approval, Compaction, CompactionSummary, Decision, ReportRow, Status, StatusCounts,
    StoredReceipt,
};
pub use record::{NewCompaction, NewReport, Recorded, ReportChange};
pub use retry::Appends;
pub use reviewers::{RegistrationError, Reviewer};
pub use schema::SCHEMA_VERSION;

/// How long a writer waits for another writer's lock before giving up.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// The environment variable that overrides the default store location (a path or a URL).
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
    #[error("the store \"{}\" is not empty: copy into a new file or an empty database (or schema)", .0.display())]
    TargetNotEmpty(PathBuf),
    #[error("no data directory for this user: pass --store PATH or set CQ_STORE")]
    NoDataDir,
    #[error(transparent)]
    Key(#[from] KeyError),
    #[error("while {context}: {source}")]
    Sql {
        context: &'static str,
        source: SqlError,
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
    pub fn sql(context: &'static str) -> impl Fn(SqlError) -> StoreError + Copy {
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

/// `$CQ_STORE` (a path or a `postgres://` URL), else `cq/store.db` in the user's data
/// directory.
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
    /// key the store records.
    pub store_key: Option<String>,
}

/// The connection behind a store.
pub(crate) enum Db {
    Sqlite(sqlite::Sqlite),
    Postgres(Box<postgres::Postgres>),
}

impl Db {
    /// Connects to the database at `location` (without reading or creating the store in it).
    fn connect(location: &Location, mode: Mode, files: &KeyFiles) -> Result<Db, StoreError> {
        Ok(match (location, mode) {
            (Location::File(file), Mode::ReadWrite) => {
                Db::Sqlite(sqlite::open_read_write(file, &files.key)?)
            }
            (Location::File(file), Mode::ReadOnly) => Db::Sqlite(sqlite::open_read_only(file)?),
            (Location::Postgres(url), mode) => {
                Db::Postgres(Box::new(postgres::connect(url, mode == Mode::ReadOnly)?))
            }
        })
    }

    fn conn(&self) -> &dyn Conn {
        match self {
            Db::Sqlite(c) => c,
            Db::Postgres(c) => c.as_ref(),
        }
    }
}

/// An open store.
pub struct Store {
    db: Db,
    location: Location,
    /// The location as messages show it (a URL's password masked).
    path: PathBuf,
    mode: Mode,
    identity: Identity,
    key: Option<NamedKey>,
    key_files: KeyFiles,
    /// Whether a transaction is open on the connection (reads inside it use it).
    in_tx: Cell<bool>,
    /// How write transactions are serialized.
    appends: Appends,
    /// Write transactions run again after losing a race, since opening.
    retries: Cell<u64>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("location", &self.location)
            .field("mode", &self.mode)
            .field("origin", &self.identity.origin)
            .finish_non_exhaustive()
    }
}

/// Marks a transaction open for as long as it lives.
struct InTx<'a>(&'a Cell<bool>);

impl<'a> InTx<'a> {
    fn enter(flag: &'a Cell<bool>) -> Self {
        flag.set(true);
        InTx(flag)
    }
}

impl Drop for InTx<'_> {
    fn drop(&mut self) {
        self.0.set(false);
    }
}

impl Store {
    /// Opens (and in read-write mode creates and migrates) the store at `path`: a file, or a
    /// `postgres://` URL. A new store gets its own Ed25519 signing key (see
    /// [`signing_key_files`]), created with mode 0600.
    pub fn open(path: &Path, mode: Mode) -> Result<Store, StoreError> {
        Store::open_with(
            path,
            &OpenOptions {
                mode,
                ..OpenOptions::default()
            },
        )
    }

    /// [`Store::open`] with a store key the caller trusts.
    pub fn open_with(path: &Path, options: &OpenOptions) -> Result<Store, StoreError> {
        Store::open_with_signing_key(path, options, None)
    }

    /// [`Store::open_with`] with the store's signing key file named (`--store-signing-key`;
    /// `None` looks where [`signing_key_files`] says).
    pub fn open_with_signing_key(
        path: &Path,
        options: &OpenOptions,
        signing_key: Option<&Path>,
    ) -> Result<Store, StoreError> {
        let location = Location::of(path);
        let shown = location.shown_path();
        let files = signing_key_files(&location, signing_key)?;
        let given = options.store_key.as_deref();
        let db = Db::connect(&location, options.mode, &files)?;
        let conn = db.conn();
        let (identity, key) = match options.mode {
            Mode::ReadWrite => {
                let version = conn
                    .schema_version()
                    .map_err(StoreError::sql("reading the schema version"))?;
                if version == 0 && files.key.exists() {
                    return Err(identity::truncated(&shown, &files.key).into());
                }
                schema::migrate(conn)?;
                let (identity, key) = identity::read_write(conn, &shown, &files, given)?;
                (identity, Some(key))
            }
            Mode::ReadOnly => {
                schema::check_current(conn, &shown)?;
                (identity::read_only(conn, &shown, &files, given)?, None)
            }
        };
        Ok(Store {
            db,
            location,
            path: shown,
            mode: options.mode,
            identity,
            key,
            key_files: files,
            in_tx: Cell::new(false),
            appends: Appends::Lock,
            retries: Cell::new(0),
        })
    }

    /// A second connection to the same store, in the same mode, with the same signing key
    /// file, trusting the store key this one trusts (however it came, `--store-key`
    /// included): what a worker thread of its own opens.
    pub fn fork(&self) -> Result<Store, StoreError> {
        let location = match &self.location {
            Location::File(path) => path.clone(),
            Location::Postgres(url) => PathBuf::from(url),
        };
        let mut store = Store::open_with_signing_key(
            &location,
            &OpenOptions {
                mode: self.mode,
                store_key: self.trust().is_ok().then(|| self.verifier_key()),
            },
            Some(&self.key_files.key),
        )?;
        store.appends = self.appends;
        Ok(store)
    }

    /// The store's location as messages show it (for a URL, with its password masked).
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn location(&self) -> &Location {
        &self.location
    }

    /// Which backend holds the store.
    pub fn dialect(&self) -> Dialect {
        self.conn().dialect()
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Where the store's signing key is kept (and its public half).
    pub fn key_files(&self) -> &KeyFiles {
        &self.key_files
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

    /// The store's public key as trusted from outside the store, or why there is none.
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

    pub(crate) fn conn(&self) -> &dyn Conn {
        self.db.conn()
    }

    pub(crate) fn db(&self) -> &Db {
        &self.db
    }

    /// Serializes this store's write transactions as `appends` says (the store bench and
    /// the race test compare the two; the product keeps the lock).
    #[doc(hidden)]
    pub fn set_appends(&mut self, appends: Appends) {
        self.appends = appends;
    }

    /// Write transactions run again after losing a race, since the store was opened.
    #[doc(hidden)]
    pub fn retries(&self) -> u64 {
        self.retries.get()
    }

    /// Runs `f` in a write transaction with the log's verified tail, committing on `Ok`; the
    /// log's new head is signed (and on PostgreSQL announced) before the commit. A
    /// transaction that lost a race with another writer (only possible under
    /// [`Appends::Serializable`]) is rolled back and run again, `f` included, up to
    /// [`retry::MAX_RETRIES`] times.
    pub(crate) fn write<T, E: From<StoreError>>(
        &self,
        mut f: impl FnMut(&dyn Conn, &mut LogWriter, &NamedKey) -> Result<T, E>,
    ) -> Result<T, E> {
        let key = match (&self.key, self.mode) {
            (Some(key), Mode::ReadWrite) => key,
            _ => return Err(StoreError::ReadOnly(self.path.clone()).into()),
        };
        let mut attempt = 0;
        loop {
            match self.write_once(key, &mut f) {
                Err(_) if self.conn().lost_race() && attempt < retry::MAX_RETRIES => {
                    attempt += 1;
                    self.retries.set(self.retries.get() + 1);
                    std::thread::sleep(retry::pause(attempt));
                }
                done => return done,
            }
        }
    }

    fn write_once<T, E: From<StoreError>>(
        &self,
        key: &NamedKey,
        f: &mut impl FnMut(&dyn Conn, &mut LogWriter, &NamedKey) -> Result<T, E>,
    ) -> Result<T, E> {
        let conn = self.conn();
        let how = match self.appends {
            Appends::Lock => Tx::Write,
            Appends::Serializable => Tx::Serializable,
        };
        let tx = Transaction::begin(conn, how)
            .map_err(StoreError::sql("starting a write transaction"))?;
        let _open = InTx::enter(&self.in_tx);
        let mut log = LogWriter::load(conn, &self.identity.public_key, self.origin())
            .map_err(|e| self.blame(e))?;
        let value = f(conn, &mut log, key)?;
        if let Some(size) = log.finish(conn, key, self.origin())? {
            conn.announce(size)
                .map_err(StoreError::sql("announcing the new head"))?;
        }
        tx.commit().map_err(StoreError::sql("committing"))?;
        Ok(value)
    }

    /// Runs `f` on one consistent snapshot of the store (the open transaction's, inside a
    /// write), so several reads cannot see a writer's commit half-way.
    pub(crate) fn read<T, E: From<StoreError>>(
        &self,
        f: impl FnOnce(&dyn Conn) -> Result<T, E>,
    ) -> Result<T, E> {
        let conn = self.conn();
        if self.in_tx.get() {
            return f(conn);
        }
        let tx = Transaction::begin(conn, Tx::Read)
            .map_err(StoreError::sql("starting a read transaction"))?;
        let _open = InTx::enter(&self.in_tx);
        let value = f(conn)?;
        tx.commit()
            .map_err(StoreError::sql("ending the read transaction"))?;
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
        Ok(log::latest_note(self.conn())?.map(|(_, note)| note))
    }
}

/// Whether a store exists at `path` (a URL is taken to exist: connecting tells).
pub fn exists(path: &Path) -> bool {
    match Location::of(path) {
        Location::File(file) => file.exists(),
        Location::Postgres(_) => true,
    }
}
