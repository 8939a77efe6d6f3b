//! Checkpoints in the C2SP `tlog-checkpoint` format, wrapped in a C2SP `signed-note`:
//!
//! ```text
//! <origin>
//! <tree size>
//! <base64 root hash>
//!
//! — <signer name> <base64(key hash (4 bytes) || Ed25519 signature (64 bytes))>
//! ```
//!
//! The signature covers the note body: the three checkpoint lines, each ending in a newline.
//! Parsing is strict: anything else is an error, never a silently ignored line.

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use ed25519_dalek::VerifyingKey;

use super::keys::{note_key_hash, NamedKey};
use super::merkle::Hash;

/// The unsigned content of a checkpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint {
    pub origin: String,
    pub size: u64,
    pub root: Hash,
}

/// Why a checkpoint note could not be read or trusted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoteError {
    #[error("checkpoint is malformed: {0}")]
    Malformed(String),
    #[error("checkpoint has no signature by \"{0}\" that verifies")]
    BadSignature(String),
}

impl Checkpoint {
    /// The signed body: origin, size and base64 root, each line ending in "\n".
    pub fn body(&self) -> String {
        format!(
            "{}\n{}\n{}\n",
            self.origin,
            self.size,
            B64.encode(self.root)
        )
    }

    /// The complete signed note.
    pub fn sign(&self, key: &NamedKey) -> String {
        let body = self.body();
        let mut sig = note_key_hash(&key.name, &key.verifying())
            .to_be_bytes()
            .to_vec();
        sig.extend_from_slice(&key.sign(body.as_bytes()).to_bytes());
        format!("{body}\n\u{2014} {} {}\n", key.name, B64.encode(sig))
    }

    /// Parses a signed note without checking signatures.
    pub fn parse(note: &str) -> Result<(Checkpoint, Vec<NoteSignature>), NoteError> {
        let bad = |why: &str| NoteError::Malformed(why.to_owned());
        let (body, sigs) = note
            .split_once("\n\n")
            .ok_or_else(|| bad("no blank line between the body and its signatures"))?;
        let mut lines = body.split('\n');
        let (Some(origin), Some(size), Some(root), None) =
            (lines.next(), lines.next(), lines.next(), lines.next())
        else {
            return Err(bad(
                "expected exactly three body lines (origin, size, root)",
            ));
        };
        if origin.is_empty() || origin.chars().any(char::is_control) {
            return Err(bad("origin line is empty or has control characters"));
        }
        let size_ok = !size.is_empty()
            && size.bytes().all(|b| b.is_ascii_digit())
            && (size == "0" || !size.starts_with('0'));
        let size: u64 = match size.parse() {
            Ok(n) if size_ok => n,
            _ => {
                return Err(NoteError::Malformed(format!(
                    "tree size \"{size}\" is not a number"
                )))
            }
        };
        let root: Hash = B64
            .decode(root)
            .ok()
            .and_then(|r| r.try_into().ok())
            .ok_or_else(|| {
                NoteError::Malformed(format!("root hash \"{root}\" is not 32 bytes of base64"))
            })?;
        let sigs = sigs
            .strip_suffix('\n')
            .ok_or_else(|| bad("the last signature line does not end in a newline"))?;
        let mut signatures = Vec::new();
        for line in sigs.split('\n') {
            let rest = line.strip_prefix("\u{2014} ").ok_or_else(|| {
                NoteError::Malformed(format!(
                    "signature line \"{line}\" does not start with an em dash"
                ))
            })?;
            let (name, data) = rest
                .split_once(' ')
                .ok_or_else(|| bad("signature line has no name"))?;
            let data = B64
                .decode(data)
                .map_err(|_| bad("signature is not base64"))?;
            if data.len() < 5 {
                return Err(bad("signature is too short"));
            }
            let (hash, sig) = data.split_at(4);
            signatures.push(NoteSignature {
                name: name.to_owned(),
                key_hash: u32::from_be_bytes([hash[0], hash[1], hash[2], hash[3]]),
                signature: sig.to_vec(),
            });
        }
        Ok((
            Checkpoint {
                origin: origin.to_owned(),
                size,
                root,
            },
            signatures,
        ))
    }

    /// Parses a note and checks that `name`'s key signed it.
    pub fn open(note: &str, name: &str, key: &VerifyingKey) -> Result<Checkpoint, NoteError> {
        let (checkpoint, signatures) = Self::parse(note)?;
        let hash = note_key_hash(name, key);
        let body = checkpoint.body();
        let verified = signatures.iter().any(|s| {
            s.name == name
                && s.key_hash == hash
                && ed25519_dalek::Signature::from_slice(&s.signature)
                    .is_ok_and(|sig| key.verify_strict(body.as_bytes(), &sig).is_ok())
        });
        if verified {
            Ok(checkpoint)
        } else {
            Err(NoteError::BadSignature(name.to_owned()))
        }
    }
}

/// One signature line of a note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoteSignature {
    pub name: String,
    pub key_hash: u32,
    pub signature: Vec<u8>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sign_parse_open_round_trip() {
        let key = NamedKey::generate("cq.example/log").unwrap();
        let cp = Checkpoint {
            origin: "cq.example/log".into(),
            size: 42,
            root: [7; 32],
        };
        let note = cp.sign(&key);
        assert!(note.starts_with("cq.example/log\n42\nBwcH"));
        assert!(note.contains("\n\n\u{2014} cq.example/log "));
        assert_eq!(
            Checkpoint::open(&note, &key.name, &key.verifying()).unwrap(),
            cp
        );
    }

    #[test]
    fn any_changed_byte_is_refused() {
        let key = NamedKey::generate("log").unwrap();
        let note = Checkpoint {
            origin: "log".into(),
            size: 3,
            root: [1; 32],
        }
        .sign(&key);
        for i in 0..note.len() {
            let mut bytes = note.clone().into_bytes();
            bytes[i] ^= 0x01;
            let Ok(text) = String::from_utf8(bytes) else {
                continue;
            };
            assert!(
                Checkpoint::open(&text, "log", &key.verifying()).is_err(),
                "byte {i}"
            );
        }
    }
}
