//! The store's commands at the edge: `list`, `show`, `decide`, `status`, `ingest`, `audit …`,
//! `keys generate`, `reviewers …`. Each opens the store (read-only unless it writes), calls
//! the store or audit function, and prints; the review rules come from the policy.

use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::cli::{
    AuditCommand, KeysCommand, PolicyArgs, ReviewersCommand, StoreArgs, StoreCommand,
};
use crate::engine::{GateRequest, PolicyEngine};
use crate::json::{self, object, Limits, Value};
use crate::policy::Policy;
use crate::store::commands as store_commands;
use crate::store::{self, Action, ListFilter, Mode, ReviewRules, SortKey, Status, Store};

use super::policy;

/// Opens the store `--store`/`CQ_STORE` names, or the default one.
pub fn open(args: &StoreArgs, mode: Mode) -> anyhow::Result<Store> {
    let path = match &args.store {
        Some(path) => path.clone(),
        None => store::default_store_path()?,
    };
    Store::open(&path, mode)
        .with_context(|| format!("while opening the store \"{}\"", path.display()))
}

/// The policy's review rules for one kind of decision.
pub fn review_rules(policy: &Policy, action: Action) -> ReviewRules {
    let wanted = if action == Action::Release {
        "release"
    } else {
        "reject"
    };
    ReviewRules {
        reason_codes: policy
            .review
            .reason_codes
            .iter()
            .filter(|r| r.applies_to == wanted || r.applies_to == "both")
            .map(|r| r.code.clone())
            .collect(),
        two_person_classes: policy
            .review
            .two_person_classes
            .iter()
            .filter(|c| *c != "secret")
            .cloned()
            .collect(),
        two_person_for_secrets: policy
            .review
            .two_person_classes
            .iter()
            .any(|c| c == "secret"),
    }
}

pub fn run(command: &StoreCommand) -> anyhow::Result<u8> {
    match command {
        StoreCommand::List {
            store,
            status,
            json,
            limit,
        } => {
            let store = open(store, Mode::ReadOnly)?;
            let status = match status {
                Some(text) => Some(Status::parse(text).ok_or_else(|| anyhow::anyhow!("unknown status \"{text}\": use quarantined, released, rejected or accepted"))?),
                None => None,
            };
            let filter = ListFilter {
                status,
                ..ListFilter::default()
            };
            print!(
                "{}",
                store_commands::list(&store, &filter, SortKey::NewestFirst, 0, *limit, *json)?
            );
            Ok(0)
        }
        StoreCommand::Show { id, store, json } => {
            print!(
                "{}",
                store_commands::show(&open(store, Mode::ReadOnly)?, id, *json)?
            );
            Ok(0)
        }
        StoreCommand::Decide {
            id,
            release,
            reason,
            note,
            key,
            report,
            store,
            policy: policy_args,
            ..
        } => {
            let action = if *release {
                Action::Release
            } else {
                Action::Reject
            };
            let rules = review_rules(&policy::resolve(policy_args)?, action);
            let store = open(store, Mode::ReadWrite)?;
            print!(
                "{}",
                store_commands::decide(
                    &store,
                    id,
                    action,
                    reason,
                    note,
                    key,
                    report.as_deref(),
                    &rules
                )?
            );
            Ok(0)
        }
        StoreCommand::Status { id, store, policy } => status(id, store, policy),
        StoreCommand::Ingest {
            file,
            store,
            policy,
        } => super::ingest::run(file, store, policy),
        StoreCommand::Recheck {
            id,
            all,
            store,
            policy,
        } => super::recheck::run(id.as_deref(), *all, store, policy),
    }
}

/// `cq status ID`: for a runtime. Exit 0 with the context to inject once released (or
/// accepted), exit 1 while quarantined or when rejected.
fn status(id: &str, args: &StoreArgs, policy_args: &PolicyArgs) -> anyhow::Result<u8> {
    let view = store_commands::status(&open(args, Mode::ReadOnly)?, id)?;
    let receipt = match &view.receipt_json {
        Some(text) => json::parse(
            text.as_bytes(),
            &Limits {
                max_bytes: 1 << 24,
                max_depth: 64,
            },
        )?,
        None => Value::Null,
    };
    let mut fields = vec![
        ("compaction_id", Value::from(id)),
        ("status", Value::from(view.status.as_str())),
        ("receipt", receipt),
    ];
    let settled = match &view.request_json {
        Some(request_json) => {
            let request = GateRequest::from_json(request_json.as_bytes())
                .map_err(|e| anyhow::anyhow!("stored request of \"{id}\": {e}"))?;
            let summary = summary_text(&request).ok_or_else(|| {
                anyhow::anyhow!("stored request of \"{id}\" has no summary to inject")
            })?;
            let engine = PolicyEngine::new(policy::resolve(policy_args)?, "builtin")?;
            let messages = engine.released_context(&request, &summary)?;
            fields.push((
                "messages",
                Value::Array(messages.iter().map(|m| m.to_value()).collect()),
            ));
            true
        }
        None => false,
    };
    println!("{}", json::to_ascii(&json::canonical(&object(fields))?));
    Ok(if settled { 0 } else { 1 })
}

fn summary_text(request: &GateRequest) -> Option<String> {
    let crate::engine::SummarizerOutput::Raw(raw) = &request.summarizer else {
        return None;
    };
    let value = json::parse(raw.as_bytes(), &Limits::default()).ok()?;
    value
        .get("summary_text")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

pub fn audit(command: &AuditCommand) -> anyhow::Result<u8> {
    match command {
        AuditCommand::Verify { store, checkpoint } => {
            let report = crate::audit::commands::audit_verify(
                &open(store, Mode::ReadOnly)?,
                checkpoint.as_deref(),
            )?;
            print!("{report}");
            Ok(if report.is_ok() { 0 } else { 1 })
        }
        AuditCommand::Export { store } => {
            let store = open(store, Mode::ReadOnly)?;
            let mut out = std::io::stdout().lock();
            crate::audit::commands::audit_export(&store, &mut out)?;
            Ok(0)
        }
        AuditCommand::Checkpoint { store } => {
            print!(
                "{}",
                crate::audit::commands::audit_checkpoint(&open(store, Mode::ReadWrite)?)?
            );
            Ok(0)
        }
    }
}

pub fn keys(command: &KeysCommand) -> anyhow::Result<u8> {
    let KeysCommand::Generate { name, dir } = command;
    let dir: PathBuf = match dir {
        Some(dir) => dir.clone(),
        None => directories::ProjectDirs::from("", "", "cq")
            .map(|d| d.config_dir().join("keys"))
            .ok_or_else(|| anyhow::anyhow!("no config directory for this user: pass --dir"))?,
    };
    print!(
        "{}",
        crate::audit::commands::keys_generate(name, Path::new(&dir))?
    );
    Ok(0)
}

pub fn reviewers(command: &ReviewersCommand) -> anyhow::Result<u8> {
    match command {
        ReviewersCommand::Add {
            name,
            pubkey,
            role,
            store,
        } => {
            print!(
                "{}",
                store_commands::reviewers_add(&open(store, Mode::ReadWrite)?, name, pubkey, role)?
            );
        }
        ReviewersCommand::List { store } => {
            for r in open(store, Mode::ReadOnly)?.reviewers()? {
                println!(
                    "{}\t{}\t{}",
                    crate::sanitize::line(&r.name),
                    r.role.as_str(),
                    r.key_id
                );
            }
        }
    }
    Ok(0)
}
