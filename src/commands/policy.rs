//! Policies at the edge: resolving `--policy NAME|FILE` with its signature, `cq policy
//! sign|verify|show|prompt`. A user policy file must carry a detached signature (`FILE.sig`)
//! from a trusted key, or the user must say `--allow-unsigned-policy` and get a loud warning.
//! Built-in policies are trusted: they are part of the binary.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use ed25519_dalek::{Signature, Verifier, VerifyingKey};

use crate::audit::keys::{self, NamedKey};
use crate::cli::PolicyArgs;
use crate::engine::PolicyEngine;
use crate::json::{self, object, Limits, Value};
use crate::policy::{Policy, BUILTIN};

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

/// The policy `--policy` names: a built-in, or a signed file from a trusted key.
pub fn resolve(args: &PolicyArgs) -> anyhow::Result<Policy> {
    if BUILTIN.iter().any(|(name, _)| *name == args.policy) {
        return Ok(Policy::builtin(&args.policy)?);
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
        Ok(_) => Ok(policy),
        Err(why) if args.allow_unsigned_policy => {
            eprintln!("cq: WARNING: using policy \"{}\" although {why}; --allow-unsigned-policy is for development only", file.display());
            Ok(policy)
        }
        Err(why) => bail!(
            "policy \"{}\" is not trusted: {why}. Sign it with `cq policy sign --key KEY {}` and trust that key, or pass --allow-unsigned-policy",
            file.display(),
            file.display()
        ),
    }
}

pub fn sign(key: &Path, file: &Path) -> anyhow::Result<u8> {
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
    println!(
        "signed policy \"{}\" ({digest}) with key {}: {}",
        policy.name,
        key.key_id(),
        path.display()
    );
    Ok(0)
}

pub fn verify(file: &Path, trust: &[String]) -> anyhow::Result<u8> {
    let policy = load_file(file)?;
    match check_signature(file, &policy, &trusted_keys(trust)?) {
        Ok(key_id) => {
            println!(
                "policy \"{}\" {} is signed by trusted key {key_id}",
                policy.name,
                policy.sha256()
            );
            Ok(0)
        }
        Err(why) => {
            println!("policy \"{}\" does not verify: {why}", file.display());
            Ok(1)
        }
    }
}

pub fn show(args: &PolicyArgs) -> anyhow::Result<u8> {
    let policy = resolve(args)?;
    let engine = PolicyEngine::new(policy, "builtin")?;
    let p = &engine.policy;
    let mut out = std::io::stdout().lock();
    writeln!(out, "policy          {} {}", p.name, p.policy_version)?;
    writeln!(out, "policy_sha256   {}", engine.policy_sha256)?;
    writeln!(
        out,
        "verifier        {} (artifact {})",
        p.grammar.verifier_version,
        p.verifier_artifact_sha256()
    )?;
    writeln!(
        out,
        "invariants      {} (revision {})",
        p.invariants.records.len(),
        p.invariants.revision
    )?;
    writeln!(
        out,
        "commitments     {} (revision {})",
        p.commitments.records.len(),
        p.commitments.revision
    )?;
    writeln!(
        out,
        "clauses         {} ({} conflict patterns)",
        p.grammar.clauses.len(),
        p.grammar.conflicts.len()
    )?;
    writeln!(out, "pinned defaults {}", p.pinned.len())?;
    writeln!(
        out,
        "min length      {} characters; fallback keeps {} messages",
        p.compaction.summary_min_length, p.compaction.fallback_message_count
    )?;
    Ok(0)
}

pub fn prompt(args: &PolicyArgs) -> anyhow::Result<u8> {
    let engine = PolicyEngine::new(resolve(args)?, "builtin")?;
    print!("{}", super::prompt::render(&engine));
    Ok(0)
}
