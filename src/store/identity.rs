//! The store's identity and where its trust comes from. A store signs its tree head with its
//! own Ed25519 key, kept beside it (`<store>.key`, mode 0600; the public half in
//! `<store>.pub`). The store file also records its public key, but that copy is as writable as
//! every other row, so it is only ever *compared* with a key trusted from outside the file:
//! `--store-key`/`CQ_STORE_KEY`, the key file, the `.pub` file, or the user's
//! `trusted-store-keys` config file. A store whose recorded key differs from the trusted one
//! has been tampered with.
//!
//! An existing file is never silently re-initialised: an empty store file whose key exists
//! was truncated, and opening it is refused.

use std::path::{Path, PathBuf};

use ed25519_dalek::VerifyingKey;
use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior};

use super::{StoreError, Tampered};
use crate::audit::keys::{self, NamedKey};

/// The environment variable naming the trusted store key (like `--store-key`).
pub const STORE_KEY_ENV: &str = "CQ_STORE_KEY";

/// The store's own signing key file, kept beside the store: `<store>.key`.
pub fn store_key_path(store: &Path) -> PathBuf {
    with_suffix(store, ".key")
}

/// The store's public key file, beside the store: `<store>.pub`.
pub fn store_pub_path(store: &Path) -> PathBuf {
    with_suffix(store, ".pub")
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// The key that signs this store's tree heads, and whether it was trusted from outside.
#[derive(Debug, Clone)]
pub struct Identity {
    /// The checkpoint origin line (also the name the store's key signs with).
    pub origin: String,
    /// The trusted public key (the recorded one equals it), or the recorded one when nothing
    /// outside the file vouches for it.
    pub public_key: VerifyingKey,
    /// Where the trust comes from, or why there is none.
    pub trust: Result<String, String>,
}

impl Identity {
    /// The trusted public key; an error saying how to supply one when there is none.
    pub fn trusted(&self, store: &Path) -> Result<&VerifyingKey, StoreError> {
        match &self.trust {
            Ok(_) => Ok(&self.public_key),
            Err(why) => Err(StoreError::Untrusted {
                path: store.to_owned(),
                why: why.clone(),
            }),
        }
    }
}

/// `(origin, public key)` as the store file records them.
pub(crate) fn recorded(conn: &Connection) -> Result<Option<(String, VerifyingKey)>, StoreError> {
    let get = |k: &str| -> Result<Option<String>, StoreError> {
        conn.query_row("SELECT value FROM meta WHERE key = ?1", [k], |r| r.get(0))
            .optional()
            .map_err(StoreError::sql("reading the store identity"))
    };
    let (Some(origin), Some(public)) = (get("origin")?, get("public_key")?) else {
        return Ok(None);
    };
    let key = keys::parse_public(&public).map_err(|_| {
        StoreError::Corrupt(format!(
            "store public key \"{}\" is malformed",
            crate::sanitize::excerpt(&public, 80)
        ))
    })?;
    Ok(Some((origin, key)))
}

/// A public key trusted from outside the store file, and where it came from.
fn outside_key(
    path: &Path,
    given: Option<&str>,
    origin: &str,
) -> Result<Option<(VerifyingKey, String)>, StoreError> {
    if let Some(text) = given {
        let key = keys::parse_public(text)?;
        return Ok(Some((key, "--store-key".into())));
    }
    if let Ok(text) = std::env::var(STORE_KEY_ENV) {
        if !text.trim().is_empty() {
            return Ok(Some((keys::parse_public(&text)?, STORE_KEY_ENV.into())));
        }
    }
    let key_path = store_key_path(path);
    if key_path.exists() {
        if let Ok(key) = NamedKey::load(&key_path) {
            return Ok(Some((
                key.verifying(),
                format!("\"{}\"", key_path.display()),
            )));
        }
    }
    let pub_path = store_pub_path(path);
    if let Ok(text) = std::fs::read_to_string(&pub_path) {
        return Ok(Some((
            keys::parse_public(text.trim())?,
            format!("\"{}\"", pub_path.display()),
        )));
    }
    if let Some(dirs) = directories::ProjectDirs::from("", "", "cq") {
        let file = dirs.config_dir().join("trusted-store-keys");
        if let Ok(text) = std::fs::read_to_string(&file) {
            for line in text.lines().map(str::trim) {
                if line.is_empty() || line.starts_with('#') {
                    continue;
                }
                if line.split('+').next() == Some(origin) {
                    return Ok(Some((
                        keys::parse_public(line)?,
                        format!("\"{}\"", file.display()),
                    )));
                }
            }
        }
    }
    Ok(None)
}

/// The identity of an existing store opened read-only: the recorded key, checked against the
/// key trusted from outside.
pub(crate) fn read_only(
    conn: &Connection,
    path: &Path,
    given: Option<&str>,
) -> Result<Identity, StoreError> {
    let (origin, public) =
        recorded(conn)?.ok_or_else(|| StoreError::Corrupt("the store has no public key".into()))?;
    let trust = match outside_key(path, given, &origin)? {
        Some((key, source)) if key == public => Ok(source),
        Some((_, source)) => {
            return Err(Tampered {
                path: path.to_owned(),
                what: format!("the public key recorded in it is not the store key trusted from {source}"),
            }
            .into())
        }
        None => Err(format!(
            "no key outside the store file vouches for it: pass --store-key with the key in \"{}\" (or set {STORE_KEY_ENV})",
            store_pub_path(path).display()
        )),
    };
    Ok(Identity {
        origin,
        public_key: public,
        trust,
    })
}

/// Refuses to create a store over a file that was one: an empty file whose key exists beside
/// it was truncated (or replaced), and re-creating it would hide that.
pub(crate) fn refuse_reinitialising(conn: &Connection, path: &Path) -> Result<(), StoreError> {
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(StoreError::sql("reading the schema version"))?;
    let tables: i64 = conn
        .query_row("SELECT COUNT(*) FROM sqlite_master", [], |r| r.get(0))
        .map_err(StoreError::sql("reading the schema"))?;
    if version == 0 && tables == 0 && store_key_path(path).exists() {
        return Err(Tampered {
            path: path.to_owned(),
            what: format!(
                "the file is empty but its key \"{}\" exists, so it was truncated or replaced; restore it from a backup, or move the key away to start a new store",
                store_key_path(path).display()
            ),
        }
        .into());
    }
    Ok(())
}

/// Loads the store key, or creates it (and the `.pub` file) under the write lock, so two
/// processes opening a new store at once agree on one key. A `given` trusted key must match.
pub(crate) fn read_write(
    conn: &Connection,
    path: &Path,
    given: Option<&str>,
) -> Result<(Identity, NamedKey), StoreError> {
    let key_path = store_key_path(path);
    let key = match recorded(conn)? {
        Some((origin, public)) => {
            if !key_path.exists() {
                return Err(StoreError::KeyMissing(key_path));
            }
            let key = NamedKey::load(&key_path)?;
            if key.verifying() != public || key.name != origin {
                return Err(StoreError::KeyMismatch { path: key_path });
            }
            key
        }
        None => create(conn, path)?,
    };
    if let Some(text) = given {
        if keys::parse_public(text)? != key.verifying() {
            return Err(Tampered {
                path: path.to_owned(),
                what: "its key is not the store key given with --store-key".into(),
            }
            .into());
        }
    }
    let identity = Identity {
        origin: key.name.clone(),
        public_key: key.verifying(),
        trust: Ok(format!("\"{}\"", key_path.display())),
    };
    Ok((identity, key))
}

fn create(conn: &Connection, path: &Path) -> Result<NamedKey, StoreError> {
    let key_path = store_key_path(path);
    let tx = Transaction::new_unchecked(conn, TransactionBehavior::Immediate)
        .map_err(StoreError::sql("starting a write transaction"))?;
    let key = if let Some((_, public)) = recorded(&tx)? {
        // Another process created it while we waited for the lock.
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
            let origin = format!("cq.store/{}", fresh.key_id().get(..16).unwrap_or("key"));
            let key = NamedKey {
                name: origin,
                signing: fresh.signing,
            };
            key.save_new(&key_path)?;
            key
        };
        let pub_path = store_pub_path(path);
        if !pub_path.exists() {
            std::fs::write(&pub_path, format!("{}\n", key.verifier_text())).map_err(|source| {
                StoreError::Io {
                    context: "writing the store's public key",
                    path: pub_path.clone(),
                    source,
                }
            })?;
        }
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
    Ok(key)
}
