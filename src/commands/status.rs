//! `cq status ID`: for a runtime. Exit 0 with the context to inject once released (or
//! accepted), exit 1 while quarantined or when rejected; the receipt that says so either way.
//! The policy named is read and compiled only when there is a context to render.

use std::io::Write;

use crate::cli::{PolicyArgs, StoreArgs};
use crate::engine::PolicyEngine;
use crate::json::{self, object, Value};
use crate::service::status::settlement;
use crate::store::Mode;

use super::{policy, store, Exit, Output};

pub fn run(
    id: &str,
    store_args: &StoreArgs,
    policy_args: &PolicyArgs,
    out: &mut Output,
) -> anyhow::Result<Exit> {
    let store = store::open(store_args, Mode::ReadOnly)?;
    let given = || Ok(PolicyEngine::new(policy::resolve(policy_args)?, "builtin")?);
    let s = settlement(&store, given, id)?;
    let mut fields = vec![
        ("compaction_id", Value::from(id)),
        ("status", Value::from(s.status.as_str())),
        ("receipt", s.receipt.clone().unwrap_or(Value::Null)),
    ];
    if let Some(messages) = &s.messages {
        fields.push((
            "messages",
            Value::Array(messages.iter().map(|m| m.to_value()).collect()),
        ));
    }
    writeln!(
        out,
        "{}",
        json::to_ascii(&json::canonical(&object(fields))?)
    )?;
    Ok(if s.settled() {
        Exit::Success
    } else {
        Exit::NotReleased
    })
}
