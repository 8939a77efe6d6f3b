//! Policies and their trust: resolving a built-in name or a policy file with its detached
//! signature (`FILE.sig`) from a trusted key, signing a policy file, verifying one. A user
//! policy file must be signed by a trusted key, or the caller must allow it unsigned and show
//! the warning [`resolve`] returns. Built-in policies are trusted: they are part of the binary.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use ed25519_dalek::{Signature, Verifier, VerifyingKey};

use crate::audit::keys::{self, NamedKey};
use crate::json::{self, object, Limits, Value};
use crate::policy::{Agents, Policy, BUILTIN};

const SIGNATURE_SCHEMA: &str = "cq.policy-signature.v1";
/// Environment variable listing trusted policy-signing keys (whitespace or comma separated).
pub const TRUST_ENV: &str = "CQ_TRUSTED_POLICY_KEYS";

fn signed_message(policy_sha256: &str) -> Vec<u8> {
    format!("{SIGNATURE_SCHEMA}\n{policy_sha256}\n").into_bytes()
}

fn signature_path(file: &Path) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(".sig");
    PathBuf::from(name)
}

fn load_file(file: &Path) -> anyhow::Result<Policy> {
    let text = std::fs::read_to_string(file)
        .with_context(|| format!("while reading policy \"{}\"", file.display()))?;
    Ok(Policy::from_toml(
        &text,
        &format!("\"{}\"", file.display()),
    )?)
}

/// Trusted policy keys: `--trust-key`, `CQ_TRUSTED_POLICY_KEYS`, and the lines of
/// `trusted-policy-keys` in the user's config directory.
fn trusted_keys(extra: &[String]) -> anyhow::Result<Vec<VerifyingKey>> {
    let mut texts: Vec<String> = extra.to_vec();
    if let Ok(env) = std::env::var(TRUST_ENV) {
        texts.extend(
            env.split([',', ' ', '\n'])
                .filter(|t| !t.trim().is_empty())
                .map(str::to_owned),
        );
    }
    if let Some(dirs) = directories::ProjectDirs::from("", "", "cq") {
        let path = dirs.config_dir().join("trusted-policy-keys");
        if let Ok(text) = std::fs::read_to_string(&path) {
            texts.extend(
                text.lines()
                    .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
                    .map(str::to_owned),
            );
        }
    }
    texts
        .iter()
        .map(|t| keys::parse_public(t).map_err(anyhow::Error::from))
        .collect()
}

/// Why a policy file's signature does not hold, or the signer's key id when it does.
fn check_signature(
    file: &Path,
    policy: &Policy,
    trusted: &[VerifyingKey],
) -> Result<String, String> {
    let path = signature_path(file);
    let bytes = std::fs::read(&path)
        .map_err(|_| format!("it has no signature file \"{}\"", path.display()))?;
    let sig = json::parse(&bytes, &Limits::default())
        .map_err(|e| format!("its signature file is not strict JSON: {e}"))?;
    let field = |key: &str| {
        sig.get(key)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    if field("schema_version") != SIGNATURE_SCHEMA {
        return Err(format!("its signature file is not {SIGNATURE_SCHEMA}"));
    }
    let digest = policy.sha256();
    if field("policy_sha256") != digest {
        return Err(format!(
            "it was changed after signing (signed {}, now {digest})",
            field("policy_sha256")
        ));
    }
    let signer = keys::parse_public(&field("signer")).map_err(|e| e.to_string())?;
    let raw = B64
        .decode(field("signature"))
        .map_err(|_| "its signature is not base64".to_owned())?;
    let signature =
        Signature::from_slice(&raw).map_err(|_| "its signature is malformed".to_owned())?;
    signer
        .verify(&signed_message(&digest), &signature)
        .map_err(|_| "its signature does not verify".to_owned())?;
    if !trusted.contains(&signer) {
        return Err(format!(
            "it is signed by key {}, which is not trusted (use --trust-key or {TRUST_ENV})",
            keys::key_id(&signer)
        ));
    }
    Ok(keys::key_id(&signer))
}

/// Which policy to use and how far to trust it (what `--policy`, `--allow-unsigned-policy`
/// and `--trust-key` say).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyChoice {
    /// A built-in name or a policy file.
    pub policy: String,
    pub allow_unsigned: bool,
    /// Extra trusted signer keys (besides the environment and the config file).
    pub trust_keys: Vec<String>,
}

impl PolicyChoice {
    /// A built-in policy by name.
    pub fn builtin(name: &str) -> PolicyChoice {
        PolicyChoice {
            policy: name.to_owned(),
            allow_unsigned: false,
            trust_keys: Vec::new(),
        }
    }
}

/// A policy, and the warning to show when it was used without a trusted signature.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub policy: Policy,
    pub warning: Option<String>,
}

/// The policy `choice` names: a built-in, or a signed file from a trusted key.
pub fn resolve(args: &PolicyChoice) -> anyhow::Result<Resolved> {
    if BUILTIN.iter().any(|(name, _)| *name == args.policy) {
        return Ok(Resolved {
            policy: Policy::builtin(&args.policy)?,
            warning: None,
        });
    }
    let file = Path::new(&args.policy);
    if !file.exists() {
        let names: Vec<&str> = BUILTIN.iter().map(|(n, _)| *n).collect();
        bail!(
            "no policy \"{}\": give a policy file or a built-in name ({})",
            args.policy,
            names.join(", ")
        );
    }
    let policy = load_file(file)?;
    match check_signature(file, &policy, &trusted_keys(&args.trust_keys)?) {
        Ok(_) => Ok(Resolved {
            policy,
            warning: None,
        }),
        Err(why) if args.allow_unsigned => Ok(Resolved {
            policy,
            warning: Some(format!(
                "WARNING: using policy \"{}\" although {why}; --allow-unsigned-policy is for development only",
                file.display()
            )),
        }),
        Err(why) => bail!(
            "policy \"{}\" is not trusted: {why}. Sign it with `cq policy sign --key KEY {}` and trust that key, or pass --allow-unsigned-policy",
            file.display(),
            file.display()
        ),
    }
}

/// The `[agents]` table of the policy `choice` names: of a built-in, read alone
/// ([`Policy::builtin_agents`]); of a file, from the policy [`resolve`] trusts (or refuses).
pub fn agents(choice: &PolicyChoice) -> anyhow::Result<(Agents, Option<String>)> {
    if BUILTIN.iter().any(|(name, _)| *name == choice.policy) {
        return Ok((Policy::builtin_agents(&choice.policy)?, None));
    }
    let resolved = resolve(choice)?;
    Ok((resolved.policy.agents, resolved.warning))
}

/// What signing a policy file wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signed {
    pub policy_name: String,
    pub policy_sha256: String,
    pub key_id: String,
    pub signature_path: PathBuf,
}

/// Signs the policy `file` with the key at `key` (writes `FILE.sig`).
pub fn sign(key: &Path, file: &Path) -> anyhow::Result<Signed> {
    let policy = load_file(file)?;
    let key = NamedKey::load(key)
        .with_context(|| format!("while loading signer key \"{}\"", key.display()))?;
    let digest = policy.sha256();
    let signature = key.sign(&signed_message(&digest));
    let body = object([
        ("schema_version", Value::from(SIGNATURE_SCHEMA)),
        ("policy_name", Value::from(&policy.name)),
        ("policy_sha256", Value::from(&digest)),
        ("signer", Value::from(key.verifier_text())),
        ("key_id", Value::from(key.key_id())),
        ("signature", Value::from(B64.encode(signature.to_bytes()))),
    ]);
    let path = signature_path(file);
    std::fs::write(&path, format!("{}\n", json::canonical(&body)?))
        .with_context(|| format!("while writing \"{}\"", path.display()))?;
    Ok(Signed {
        policy_name: policy.name,
        policy_sha256: digest,
        key_id: key.key_id(),
        signature_path: path,
    })
}

/// Whether the policy `file` is signed by a trusted key: the policy, and the signer's key id
/// or why it does not verify.
pub fn verify(file: &Path, trust: &[String]) -> anyhow::Result<(Policy, Result<String, String>)> {
    let policy = load_file(file)?;
    let verdict = check_signature(file, &policy, &trusted_keys(trust)?);
    Ok((policy, verdict))
}
