//! `cq decide ID --release|--reject --reason CODE --note TEXT --key FILE [--report SHA]`: a
//! reviewer's signed decision under the policy's review rules. Without `--report` the
//! decision binds the report current at this moment.

use std::io::Write;
use std::path::Path;

use anyhow::Context;

use crate::audit::keys::NamedKey;
use crate::cli::{PolicyArgs, StoreArgs};
use crate::sanitize::line;
use crate::service::decide::decide;
use crate::store::{Action, DecisionOutcome, DecisionRequest, Mode, StoreError};

use super::{policy, store, Exit, Output};

/// What the reviewer asked for.
pub struct Args<'a> {
    pub id: &'a str,
    pub release: bool,
    pub reason: &'a str,
    pub note: &'a str,
    pub key: &'a Path,
    pub report: Option<&'a str>,
}

pub fn run(
    args: &Args<'_>,
    store_args: &StoreArgs,
    policy_args: &PolicyArgs,
    out: &mut Output,
) -> anyhow::Result<Exit> {
    let policy = policy::resolve(policy_args)?;
    let store = store::open(store_args, Mode::ReadWrite)?;
    let key = NamedKey::load(args.key)
        .with_context(|| format!("while loading the reviewer key \"{}\"", args.key.display()))?;
    let id = args.id;
    let seen = match args.report {
        Some(s) => s.to_owned(),
        None => {
            store
                .compaction(id)?
                .ok_or_else(|| StoreError::UnknownCompaction(line(id)))?
                .summary
                .report_sha256
        }
    };
    let request = DecisionRequest {
        compaction_id: id.to_owned(),
        action: if args.release {
            Action::Release
        } else {
            Action::Reject
        },
        reason: args.reason.to_owned(),
        note: args.note.to_owned(),
        seen_report_sha256: seen,
    };
    let id = line(id);
    match decide(&store, &policy, &key, &request)?? {
        DecisionOutcome::Decided {
            status,
            receipt_seq,
        } => writeln!(
            out,
            "compaction \"{id}\" {status} by \"{}\" (receipt {receipt_seq})",
            line(&key.name)
        )?,
        DecisionOutcome::Approved {
            approvals,
            needed,
            receipt_seq,
        } => writeln!(
            out,
            "approval {approvals} of {needed} recorded for compaction \"{id}\" (receipt {receipt_seq}); a second approver must release it"
        )?,
    }
    Ok(Exit::Success)
}
