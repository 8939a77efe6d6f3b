//! Reviewer registration. A reviewer is a name, an Ed25519 public key and a role; the
//! registration itself is an audit receipt signed by whoever authorised it (the store's key
//! for the first approvers, an approver's key after that: see [`crate::audit::authority`]),
//! so the set of keys allowed to decide is covered by the same checkpoints as the decisions
//! they sign, and nobody authorises themselves.

use super::sql::{params, Param, Row, SqlError};
use super::{Store, StoreError};
use crate::audit::authority::Role;
use crate::audit::keys::{key_id, parse_public, NamedKey};
use crate::audit::{Receipt, ReceiptKind};
use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;

/// A registered reviewer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reviewer {
    pub name: String,
    /// Base64 of the raw 32-byte Ed25519 public key.
    pub public_key: String,
    pub key_id: String,
    pub role: Role,
    /// The key id that authorised the registration.
    pub authorized_by: String,
    pub receipt_seq: u64,
    pub created_at: String,
}

fn from_row(r: &dyn Row) -> Result<Reviewer, SqlError> {
    let role = r.text(3)?;
    Ok(Reviewer {
        name: r.string(0)?,
        public_key: r.string(1)?,
        key_id: r.string(2)?,
        role: Role::parse(role).ok_or_else(|| {
            SqlError::value(
                3,
                format!("an unknown role \"{}\"", crate::sanitize::excerpt(role, 40)),
            )
        })?,
        receipt_seq: r.count(4)?,
        created_at: r.string(5)?,
        authorized_by: r.string(6)?,
    })
}

const COLUMNS: &str = "name, public_key, key_id, role, receipt_seq, created_at, authorized_by";

/// Why a registration was refused.
#[derive(Debug, thiserror::Error)]
pub enum RegistrationError {
    #[error(
        "an approver exists, so registering a reviewer needs an approver's key: pass --key with it"
    )]
    NeedsApprover,
    #[error("key \"{key_id}\" is not a registered approver, so it cannot register reviewers")]
    NotApprover { key_id: String },
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl Store {
    /// Registers a reviewer key (`public_key` as a verifier key `name+hash+base64` or plain
    /// base64 of 32 bytes), authorised and signed by `authoriser` (an approver's key), or by
    /// the store's own key while no approver is registered.
    pub fn add_reviewer(
        &self,
        name: &str,
        public_key: &str,
        role: Role,
        authoriser: Option<&NamedKey>,
    ) -> Result<Reviewer, RegistrationError> {
        let key = parse_public(public_key).map_err(StoreError::from)?;
        let id = key_id(&key);
        let public_b64 = B64.encode(key.as_bytes());
        self.write(|tx, log, store_key| {
            let authority = self.verified_authority()?;
            let signer = match authoriser {
                None if authority.has_approver() => return Err(RegistrationError::NeedsApprover),
                None => store_key,
                Some(k) => match authority.reviewer(&k.key_id()) {
                    Some(r) if r.role == Role::Approver => k,
                    _ => return Err(RegistrationError::NotApprover { key_id: k.key_id() }),
                },
            };
            let clash = tx
                .opt(
                    "SELECT name FROM reviewers WHERE name = ?1 OR key_id = ?2",
                    &params![name, &id],
                    |r| r.string(0),
                )
                .map_err(StoreError::sql("looking up reviewers"))?;
            let taken = clash.or_else(|| authority.reviewer(&id).map(|r| r.name.clone()));
            if let Some(existing) = taken {
                return Err(StoreError::ReviewerExists { name: existing }.into());
            }
            let authorized_by = signer.key_id();
            let receipt = Receipt::new(ReceiptKind::Reviewer, None)
                .with("reviewer", name)
                .with("reviewer_key_id", id.as_str())
                .with("public_key", public_b64.as_str())
                .with("role", role.as_str())
                .with("authorized_by", authorized_by.as_str());
            let appended = log.append(&receipt, Some(signer))?;
            let time = log.time().to_owned();
            tx.execute(
                "INSERT INTO reviewers (name, public_key, key_id, role, receipt_seq, created_at,
                     authorized_by)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                &params![
                    name,
                    &public_b64,
                    &id,
                    role.as_str(),
                    appended.seq,
                    &time,
                    &authorized_by
                ],
            )
            .map_err(StoreError::sql("adding a reviewer"))?;
            Ok(Reviewer {
                name: name.to_owned(),
                public_key: public_b64.clone(),
                key_id: id.clone(),
                role,
                authorized_by,
                receipt_seq: appended.seq,
                created_at: time,
            })
        })
    }

    /// Every registered reviewer, by name.
    pub fn reviewers(&self) -> Result<Vec<Reviewer>, StoreError> {
        self.conn()
            .rows(
                &format!("SELECT {COLUMNS} FROM reviewers ORDER BY name"),
                &[],
                from_row,
            )
            .map_err(StoreError::sql("listing reviewers"))
    }

    /// The reviewer holding the key `key_id`, if registered.
    pub fn reviewer_by_key(&self, key_id: &str) -> Result<Option<Reviewer>, StoreError> {
        self.conn()
            .opt(
                &format!("SELECT {COLUMNS} FROM reviewers WHERE key_id = ?1"),
                &[Param::Text(key_id)],
                from_row,
            )
            .map_err(StoreError::sql("looking up a reviewer"))
    }
}
