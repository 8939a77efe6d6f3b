//! The store's identity and where its trust comes from. A store signs its tree head with its
//! own Ed25519 key (mode 0600), kept beside a file store (`<store>.key`, the public half in
//! `<store>.pub`); a PostgreSQL store's writers on every host hold a copy of one key file,
//! named by `--store-signing-key`/`CQ_STORE_SIGNING_KEY` or kept in the config directory
//! (`cq/store-keys/<database>.key`, public half `.pub` beside it). The store also records its
//! public key, but that copy is as writable as every other row, so it is only ever *compared*
//! with a key trusted from outside the store: `--store-key`/`CQ_STORE_KEY`, the signing key
//! file, the `.pub` file, or the user's `trusted-store-keys` config file. A store whose
//! recorded key differs from the trusted one has been tampered with.
//!
//! An existing store is never silently re-initialised: an empty store whose key exists was
//! truncated (or its database dropped), and opening it is refused.

use std::path::{Path, PathBuf};

use ed25519_dalek::VerifyingKey;

use super::location::Location;
use super::sql::{Conn, Param, Transaction, Tx};
use super::{StoreError, Tampered};
use crate::audit::keys::{self, NamedKey};

/// The environment variable naming the trusted store key (like `--store-key`).
pub const STORE_KEY_ENV: &str = "CQ_STORE_KEY";

/// The environment variable naming the store's signing key file (like `--store-signing-key`).
pub const SIGNING_KEY_ENV: &str = "CQ_STORE_SIGNING_KEY";

/// Where a store's signing key and its public half are kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyFiles {
    pub key: PathBuf,
    pub public: PathBuf,
}

/// The key files of the store at `location`: `signing_key` (else `CQ_STORE_SIGNING_KEY`)
/// with `.pub` appended for the public half; else `<store>.key` and `<store>.pub` beside a
/// file store; else, for a URL, `cq/store-keys/<database>.key` in the config directory.
pub fn signing_key_files(
    location: &Location,
    signing_key: Option<&Path>,
) -> Result<KeyFiles, StoreError> {
    let named = signing_key.map(Path::to_owned).or_else(|| {
        std::env::var_os(SIGNING_KEY_ENV)
            .filter(|p| !p.is_empty())
            .map(PathBuf::from)
    });
    if let Some(key) = named {
        return Ok(KeyFiles {
            public: with_suffix(&key, ".pub"),
            key,
        });
    }
    match location {
        Location::File(store) => Ok(KeyFiles {
            key: store_key_path(store),
            public: store_pub_path(store),
        }),
        Location::Postgres(_) => {
            let dirs = directories::ProjectDirs::from("", "", "cq").ok_or(StoreError::NoDataDir)?;
            let key = dirs
                .config_dir()
                .join("store-keys")
                .join(format!("{}.key", location.key_name()));
            Ok(KeyFiles {
                public: with_suffix(&key, ".pub"),
                key,
            })
        }
    }
}

/// The store's own signing key file, kept beside a file store: `<store>.key`.
pub fn store_key_path(store: &Path) -> PathBuf {
    with_suffix(store, ".key")
}

/// The store's public key file, beside a file store: `<store>.pub`.
pub fn store_pub_path(store: &Path) -> PathBuf {
    with_suffix(store, ".pub")
}

/// The refusal to open an empty store whose key exists.
pub(crate) fn truncated(store: &Path, key: &Path) -> Tampered {
    Tampered {
        path: store.to_owned(),
        what: format!(
            "the store is empty but its key \"{}\" exists, so it was truncated, dropped or replaced; restore it from a backup, or move the key away to start a new store",
            key.display()
        ),
    }
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

/// `(origin, public key)` as the store records them.
pub(crate) fn recorded(conn: &dyn Conn) -> Result<Option<(String, VerifyingKey)>, StoreError> {
    let get = |k: &str| -> Result<Option<String>, StoreError> {
        conn.opt(
            "SELECT value FROM meta WHERE key = ?1",
            &[Param::Text(k)],
            |r| r.string(0),
        )
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

/// A public key trusted from outside the store, and where it came from.
fn outside_key(
    files: &KeyFiles,
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
    let key_path = &files.key;
    if key_path.exists() {
        if let Ok(key) = NamedKey::load(key_path) {
            return Ok(Some((
                key.verifying(),
                format!("\"{}\"", key_path.display()),
            )));
        }
    }
    let pub_path = &files.public;
    if let Ok(text) = std::fs::read_to_string(pub_path) {
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
    conn: &dyn Conn,
    path: &Path,
    files: &KeyFiles,
    given: Option<&str>,
) -> Result<Identity, StoreError> {
    let (origin, public) =
        recorded(conn)?.ok_or_else(|| StoreError::Corrupt("the store has no public key".into()))?;
    let trust = match outside_key(files, given, &origin)? {
        Some((key, source)) if key == public => Ok(source),
        Some((_, source)) => {
            return Err(Tampered {
                path: path.to_owned(),
                what: format!("the public key recorded in it is not the store key trusted from {source}"),
            }
            .into())
        }
        None => Err(format!(
            "no key outside the store vouches for it: pass --store-key with the key in \"{}\" (or set {STORE_KEY_ENV})",
            files.public.display()
        )),
    };
    Ok(Identity {
        origin,
        public_key: public,
        trust,
    })
}

/// Loads the store key, or creates it (and the `.pub` file) under the write lock, so two
/// processes opening a new store at once agree on one key. A `given` trusted key must match.
pub(crate) fn read_write(
    conn: &dyn Conn,
    path: &Path,
    files: &KeyFiles,
    given: Option<&str>,
) -> Result<(Identity, NamedKey), StoreError> {
    let key_path = files.key.clone();
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
        None => create(conn, files)?,
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

fn create(conn: &dyn Conn, files: &KeyFiles) -> Result<NamedKey, StoreError> {
    let key_path = &files.key;
    let tx = Transaction::begin(conn, Tx::Write)
        .map_err(StoreError::sql("starting a write transaction"))?;
    let key = if let Some((_, public)) = recorded(conn)? {
        // Another process created it while we waited for the lock.
        let key = NamedKey::load(key_path)?;
        if key.verifying() != public {
            return Err(StoreError::KeyMismatch {
                path: key_path.clone(),
            });
        }
        key
    } else {
        let key = if key_path.exists() {
            NamedKey::load(key_path)?
        } else {
            let fresh = NamedKey::generate("cq")?;
            let origin = format!("cq.store/{}", fresh.key_id().get(..16).unwrap_or("key"));
            let key = NamedKey {
                name: origin,
                signing: fresh.signing,
            };
            if let Some(dir) = key_path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).map_err(|source| StoreError::Io {
                    context: "creating the directory of the store key",
                    path: dir.to_owned(),
                    source,
                })?;
            }
            key.save_new(key_path)?;
            key
        };
        let pub_path = &files.public;
        if !pub_path.exists() {
            std::fs::write(pub_path, format!("{}\n", key.verifier_text())).map_err(|source| {
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
            conn.execute(
                "INSERT INTO meta (key, value) VALUES (?1, ?2)",
                &[Param::Text(k), Param::Text(&v)],
            )
            .map_err(StoreError::sql("recording the store identity"))?;
        }
        key
    };
    tx.commit().map_err(StoreError::sql("committing"))?;
    Ok(key)
}
