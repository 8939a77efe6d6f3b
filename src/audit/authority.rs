//! The chain of authority over who may decide: every reviewer registration is a receipt signed
//! by whoever authorised it. The store's own key may register reviewers and approvers only
//! until the first approver exists (the store's creator bootstraps the team); after that every
//! registration needs the signature of an approver registered before it. Registrations made
//! before receipts named their authoriser (`authorized_by`) are accepted as the creator's.
//!
//! [`Authority`] replays registrations in log order and answers, for a signed receipt, which
//! registered reviewer made it and with which role — from receipts only, never from the
//! reviewers table.

use std::collections::HashMap;

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use ed25519_dalek::VerifyingKey;

use super::keys::{key_id, to_verifying, verify_b64};
use super::receipt_fields::FlatReceipt;

/// What a reviewer may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// Releases items outside the two-person classes; rejects anything.
    Reviewer,
    /// Also gives one of the two approvals a two-person release needs, and registers others.
    Approver,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Reviewer => "reviewer",
            Role::Approver => "approver",
        }
    }

    pub fn parse(text: &str) -> Option<Role> {
        match text {
            "reviewer" => Some(Role::Reviewer),
            "approver" => Some(Role::Approver),
            _ => None,
        }
    }
}

/// One admitted registration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registration {
    pub seq: u64,
    pub name: String,
    pub key_id: String,
    pub key: VerifyingKey,
    pub role: Role,
    /// The key id that authorised it (`None` for a registration from before authorisers were
    /// recorded).
    pub authorized_by: Option<String>,
}

/// Registrations admitted so far, in log order.
#[derive(Debug, Clone)]
pub struct Authority {
    store_key: VerifyingKey,
    store_key_id: String,
    by_key: HashMap<String, Registration>,
    any_approver: bool,
}

impl Authority {
    pub fn new(store_key: &VerifyingKey) -> Authority {
        Authority {
            store_key: *store_key,
            store_key_id: key_id(store_key),
            by_key: HashMap::new(),
            any_approver: false,
        }
    }

    /// The store key's id, as registrations it signs name it.
    pub fn store_key_id(&self) -> &str {
        &self.store_key_id
    }

    /// Whether an approver is registered (after which the store key registers no one).
    pub fn has_approver(&self) -> bool {
        self.any_approver
    }

    /// The registration of `key_id`, if admitted.
    pub fn reviewer(&self, key_id: &str) -> Option<&Registration> {
        self.by_key.get(key_id)
    }

    /// Admits the registration receipt at `seq` (its canonical `bytes`, parsed `body` and the
    /// signature stored with it) or says why it is not a valid act of authority.
    pub fn admit(
        &mut self,
        seq: u64,
        bytes: &[u8],
        body: &FlatReceipt<'_>,
        signature: Option<&str>,
    ) -> Result<&Registration, String> {
        let field = |k: &str| body.str(k).unwrap_or("").to_owned();
        let raw = B64.decode(field("public_key")).unwrap_or_default();
        let key = to_verifying(&raw).ok_or("the registered public key is malformed")?;
        let id = field("reviewer_key_id");
        if key_id(&key) != id {
            return Err("reviewer public key does not match its key id".into());
        }
        let role = Role::parse(&field("role")).ok_or("the registered role is unknown")?;
        let name = field("reviewer");
        if self.by_key.contains_key(&id) || self.by_key.values().any(|r| r.name == name) {
            return Err(format!(
                "reviewer \"{name}\" or its key is registered twice"
            ));
        }
        let authorized_by = body.str("authorized_by").map(str::to_owned);
        match (&authorized_by, signature) {
            (None, None) => {}
            (None, Some(_)) => return Err("a legacy registration carries a signature".into()),
            (Some(_), None) => return Err("the registration is not signed".into()),
            (Some(by), Some(sig)) => {
                let signer = if *by == self.store_key_id {
                    if self.any_approver {
                        return Err(
                            "the store key registered someone after the first approver existed"
                                .into(),
                        );
                    }
                    self.store_key
                } else {
                    match self.by_key.get(by) {
                        Some(r) if r.role == Role::Approver => r.key,
                        Some(r) => {
                            return Err(format!(
                                "registered by \"{}\", who is not an approver",
                                r.name
                            ))
                        }
                        None => return Err(format!("registered by unknown key \"{by}\"")),
                    }
                };
                if !verify_b64(&signer, bytes, sig) {
                    return Err("the authoriser's signature does not verify".into());
                }
            }
        }
        self.any_approver |= role == Role::Approver;
        let registration = Registration {
            seq,
            name,
            key_id: id.clone(),
            key,
            role,
            authorized_by,
        };
        Ok(self.by_key.entry(id).or_insert(registration))
    }

    /// The reviewer whose key signed `bytes` at `seq`: registered before `seq`, and the
    /// signature verifies.
    pub fn signer(
        &self,
        seq: u64,
        key_id: &str,
        bytes: &[u8],
        signature: Option<&str>,
    ) -> Result<&Registration, String> {
        let r = self
            .by_key
            .get(key_id)
            .ok_or_else(|| format!("signing key \"{key_id}\" was never registered in this log"))?;
        if r.seq >= seq {
            return Err(format!(
                "signed by key \"{key_id}\" before it was registered"
            ));
        }
        match signature {
            None => Err("signature is missing".into()),
            Some(sig) if verify_b64(&r.key, bytes, sig) => Ok(r),
            Some(_) => Err("reviewer signature does not verify".into()),
        }
    }
}
