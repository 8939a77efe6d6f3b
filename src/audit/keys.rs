//! Ed25519 keys for reviewers and for the store itself, kept in the text formats of Go's
//! `golang.org/x/mod/sumdb/note` package, so standard signed-note tooling can read them:
//! a signer key `PRIVATE+KEY+<name>+<hash>+<base64(0x01 || seed)>` and a verifier key
//! `<name>+<hash>+<base64(0x01 || public key)>`.
//!
//! Secret key files are created with mode 0600 and never overwritten; a key file that is
//! readable by others is refused when loaded, so a leaked permission is noticed at once.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};
use sha2::{Digest, Sha256};

/// The signed-note algorithm byte for Ed25519.
const ALG_ED25519: u8 = 0x01;

/// Why a key could not be created, read or parsed.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error(
        "key name \"{0}\" is invalid: use letters, digits, '.', '-', '_' or '/' (no '+' or spaces)"
    )]
    BadName(String),
    #[error("key file \"{path}\" already exists: pick another name or remove it first")]
    Exists { path: PathBuf },
    #[error("key file \"{path}\" is readable by other users: run `chmod 600 {path}`")]
    Permissions { path: PathBuf },
    #[error("key \"{0}\" is malformed: expected a note signer key (PRIVATE+KEY+name+hash+data)")]
    BadSecret(String),
    #[error("public key \"{0}\" is malformed: expected name+hash+data or base64 of 32 bytes")]
    BadPublic(String),
    #[error("while accessing key file \"{path}\": {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// A named Ed25519 signing key (a reviewer's, or the store's own).
#[derive(Clone)]
pub struct NamedKey {
    pub name: String,
    pub signing: SigningKey,
}

impl std::fmt::Debug for NamedKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NamedKey")
            .field("name", &self.name)
            .field("key_id", &self.key_id())
            .finish_non_exhaustive()
    }
}

/// Paths and public data of a freshly generated key pair.
#[derive(Debug, Clone)]
pub struct GeneratedKey {
    pub secret_path: PathBuf,
    pub public_path: PathBuf,
    /// The verifier key text, as written to `public_path`.
    pub verifier_key: String,
    /// [`key_id`] of the public key.
    pub key_id: String,
}

impl NamedKey {
    /// A new random key.
    pub fn generate(name: &str) -> Result<Self, KeyError> {
        check_name(name)?;
        let signing = SigningKey::generate(&mut rand_core::OsRng);
        Ok(NamedKey {
            name: name.to_owned(),
            signing,
        })
    }

    pub fn verifying(&self) -> VerifyingKey {
        self.signing.verifying_key()
    }

    /// The stable identifier written into receipts: hex SHA-256 of the raw public key.
    pub fn key_id(&self) -> String {
        key_id(&self.verifying())
    }

    pub fn sign(&self, message: &[u8]) -> Signature {
        self.signing.sign(message)
    }

    /// `PRIVATE+KEY+<name>+<hash>+<base64>`.
    pub fn signer_text(&self) -> String {
        let mut data = vec![ALG_ED25519];
        data.extend_from_slice(self.signing.as_bytes());
        let hash = note_key_hash(&self.name, &self.verifying());
        format!("PRIVATE+KEY+{}+{hash:08x}+{}", self.name, B64.encode(data))
    }

    /// `<name>+<hash>+<base64>`.
    pub fn verifier_text(&self) -> String {
        verifier_text(&self.name, &self.verifying())
    }

    /// Parses a signer key text, checking its embedded hash.
    pub fn parse(text: &str) -> Result<Self, KeyError> {
        let bad = || KeyError::BadSecret(redact(text));
        let rest = text.trim().strip_prefix("PRIVATE+KEY+").ok_or_else(bad)?;
        // Base64 may itself contain '+': the data is everything after the second '+'.
        let mut parts = rest.splitn(3, '+');
        let (Some(name), Some(hash), Some(data)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err(bad());
        };
        check_name(name).map_err(|_| bad())?;
        let data = B64.decode(data).map_err(|_| bad())?;
        let seed: [u8; 32] = match data.split_first() {
            Some((&ALG_ED25519, seed)) => seed.try_into().map_err(|_| bad())?,
            _ => return Err(bad()),
        };
        let signing = SigningKey::from_bytes(&seed);
        let expected = format!("{:08x}", note_key_hash(name, &signing.verifying_key()));
        if hash != expected {
            return Err(bad());
        }
        Ok(NamedKey {
            name: name.to_owned(),
            signing,
        })
    }

    /// Reads a signer key file, refusing one that other users can read.
    pub fn load(path: &Path) -> Result<Self, KeyError> {
        check_private(path)?;
        let text = fs::read_to_string(path).map_err(|source| KeyError::Io {
            path: path.to_owned(),
            source,
        })?;
        Self::parse(&text)
    }

    /// Writes the signer key to a new file with mode 0600; never overwrites.
    pub fn save_new(&self, path: &Path) -> Result<(), KeyError> {
        write_new(path, &format!("{}\n", self.signer_text()), true)
    }
}

/// Generates a reviewer key pair in `dir`: `<name>.key` (0600) and `<name>.pub`.
pub fn generate_key(name: &str, dir: &Path) -> Result<GeneratedKey, KeyError> {
    let key = NamedKey::generate(name)?;
    let io = |source| KeyError::Io {
        path: dir.to_owned(),
        source,
    };
    fs::create_dir_all(dir).map_err(io)?;
    let file = name.replace('/', "_");
    let secret_path = dir.join(format!("{file}.key"));
    let public_path = dir.join(format!("{file}.pub"));
    if public_path.exists() {
        return Err(KeyError::Exists { path: public_path });
    }
    key.save_new(&secret_path)?;
    let verifier_key = key.verifier_text();
    write_new(&public_path, &format!("{verifier_key}\n"), false)?;
    Ok(GeneratedKey {
        secret_path,
        public_path,
        verifier_key,
        key_id: key.key_id(),
    })
}

/// Parses a public key given either as a verifier key text (`name+hash+base64`) or as plain
/// base64 of the 32 raw bytes.
pub fn parse_public(text: &str) -> Result<VerifyingKey, KeyError> {
    let text = text.trim();
    let bad = || KeyError::BadPublic(text.chars().take(80).collect());
    let parts: Vec<&str> = text.splitn(3, '+').collect();
    let is_note = |hash: &str| hash.len() == 8 && hash.bytes().all(|b| b.is_ascii_hexdigit());
    let raw = match parts.as_slice() {
        [name, hash, data] if is_note(hash) => {
            let data = B64.decode(data).map_err(|_| bad())?;
            let raw = match data.split_first() {
                Some((&ALG_ED25519, raw)) => raw.to_vec(),
                _ => return Err(bad()),
            };
            let key = to_verifying(&raw).ok_or_else(bad)?;
            if *hash != format!("{:08x}", note_key_hash(name, &key)) {
                return Err(bad());
            }
            return Ok(key);
        }
        _ => B64.decode(text).map_err(|_| bad())?,
    };
    to_verifying(&raw).ok_or_else(bad)
}

/// Hex SHA-256 of the raw 32-byte public key: the key id used in receipts and tables.
pub fn key_id(key: &VerifyingKey) -> String {
    crate::audit::hex(&Sha256::digest(key.as_bytes()))
}

/// `<name>+<hash>+<base64(0x01 || key)>`.
pub fn verifier_text(name: &str, key: &VerifyingKey) -> String {
    let mut data = vec![ALG_ED25519];
    data.extend_from_slice(key.as_bytes());
    format!(
        "{name}+{:08x}+{}",
        note_key_hash(name, key),
        B64.encode(data)
    )
}

/// The signed-note key hash: the first four bytes of SHA-256(name || "\n" || 0x01 || key).
pub fn note_key_hash(name: &str, key: &VerifyingKey) -> u32 {
    let mut h = Sha256::new();
    h.update(name.as_bytes());
    h.update(b"\n");
    h.update([ALG_ED25519]);
    h.update(key.as_bytes());
    let d = h.finalize();
    u32::from_be_bytes([d[0], d[1], d[2], d[3]])
}

/// Verifies an Ed25519 signature given as base64.
pub fn verify_b64(key: &VerifyingKey, message: &[u8], signature_b64: &str) -> bool {
    let Ok(raw) = B64.decode(signature_b64) else {
        return false;
    };
    let Ok(sig) = Signature::from_slice(&raw) else {
        return false;
    };
    key.verify(message, &sig).is_ok()
}

pub(crate) fn to_verifying(raw: &[u8]) -> Option<VerifyingKey> {
    let raw: [u8; 32] = raw.try_into().ok()?;
    VerifyingKey::from_bytes(&raw).ok()
}

fn check_name(name: &str) -> Result<(), KeyError> {
    let ok = !name.is_empty()
        && name.len() <= 128
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-/".contains(c));
    if ok {
        Ok(())
    } else {
        Err(KeyError::BadName(name.to_owned()))
    }
}

/// Shows at most the name part of a mangled secret key in an error, never key material.
fn redact(text: &str) -> String {
    let name = text
        .trim()
        .strip_prefix("PRIVATE+KEY+")
        .and_then(|r| r.split('+').next());
    match name {
        Some(n) => format!("PRIVATE+KEY+{n}+…"),
        None => "…".to_owned(),
    }
}

fn write_new(path: &Path, text: &str, private: bool) -> Result<(), KeyError> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(if private { 0o600 } else { 0o644 });
    }
    #[cfg(not(unix))]
    let _ = private;
    let io = |source| KeyError::Io {
        path: path.to_owned(),
        source,
    };
    let mut file = options.open(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            KeyError::Exists {
                path: path.to_owned(),
            }
        } else {
            io(e)
        }
    })?;
    file.write_all(text.as_bytes()).map_err(io)?;
    file.sync_all().map_err(io)
}

fn check_private(path: &Path) -> Result<(), KeyError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let meta = fs::metadata(path).map_err(|source| KeyError::Io {
            path: path.to_owned(),
            source,
        })?;
        if meta.permissions().mode() & 0o077 != 0 {
            return Err(KeyError::Permissions {
                path: path.to_owned(),
            });
        }
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signer_and_verifier_texts_round_trip() {
        let key = NamedKey::generate("alice").unwrap();
        let back = NamedKey::parse(&key.signer_text()).unwrap();
        assert_eq!(back.signing.as_bytes(), key.signing.as_bytes());
        assert_eq!(parse_public(&key.verifier_text()).unwrap(), key.verifying());
        let raw = B64.encode(key.verifying().as_bytes());
        assert_eq!(parse_public(&raw).unwrap(), key.verifying());
    }

    #[test]
    fn a_wrong_hash_is_refused() {
        let key = NamedKey::generate("alice").unwrap();
        let text = key.verifier_text().replacen("alice", "bob", 1);
        assert!(parse_public(&text).is_err());
    }

    #[test]
    fn generated_secret_files_are_private() {
        let dir = tempfile::tempdir().unwrap();
        let made = generate_key("alice", dir.path()).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&made.secret_path)
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let key = NamedKey::load(&made.secret_path).unwrap();
        assert_eq!(key.key_id(), made.key_id);
        assert!(matches!(
            generate_key("alice", dir.path()),
            Err(KeyError::Exists { .. })
        ));
    }
}
