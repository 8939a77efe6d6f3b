//! Parallel tool calls: the lines of one round that hang off the parent chain. When the model
//! issues several tool calls in one response, Claude Code writes each `tool_use` and each
//! `tool_result` as its own line, and only one path of `parentUuid` links leads on; the other
//! calls and results sit on side branches (their parent is a line of the round, but nothing
//! on the chain points to them). The model was given all of them.
//!
//! A side line belongs to the chain when it is reached from it, down `parentUuid` (or
//! `sourceToolAssistantUUID`) links, only through lines of the same round:
//! - an assistant line of a response already on the chain (same `message.id`) that issues a
//!   call not seen yet, or carries no call at all (a copy of a call already seen is not);
//! - a user line whose `tool_result` blocks all answer calls issued on the chain (or by such
//!   an assistant line) that no included line answers yet, and which holds no human text;
//! - a line that only links the tree (progress, hook notes), walked through but not a turn.
//!
//! Anything else ends the side branch: a user text turn (a rewind re-parents a *user text*
//! turn under an older line, and the abandoned branch starts with the old one), a response
//! with another `message.id` (a retry), an attachment, a summary or a boundary. Only lines
//! before `before` (the boundary) of the chain's own thread are taken, so a walk ends.

use std::collections::HashSet;

use super::{Body, Entry, Transcript};
use crate::agents::turns::Role;

/// The indices of the side lines that belong to `chain` (any order), before line `before`.
pub(super) fn side_lines(transcript: &Transcript, chain: &[usize], before: u64) -> Vec<usize> {
    let Some(anchor) = chain.first().and_then(|&i| transcript.entry(i)) else {
        return Vec::new();
    };
    let mut seen: HashSet<usize> = chain.iter().copied().collect();
    let mut uuids: HashSet<&str> = HashSet::new();
    let mut responses: HashSet<&str> = HashSet::new();
    let mut calls: HashSet<&str> = HashSet::new();
    let mut answered: HashSet<&str> = HashSet::new();
    for entry in chain.iter().filter_map(|&i| transcript.entry(i)) {
        remember(entry, &mut uuids, &mut responses, &mut calls, &mut answered);
    }
    let mut pending: Vec<usize> = chain.to_vec();
    let mut found = Vec::new();
    while let Some(index) = pending.pop() {
        let Some(parent) = transcript.entry(index) else {
            continue;
        };
        if parent.uuid.is_empty() {
            continue;
        }
        for &child in transcript.children(&parent.uuid) {
            let Some(entry) = transcript.entry(child) else {
                continue;
            };
            let same_thread = entry.session == anchor.session
                && entry.agent == anchor.agent
                && entry.sidechain == anchor.sidechain;
            if entry.line >= before
                || entry.line <= parent.line
                || !same_thread
                || uuids.contains(entry.uuid.as_str())
                || seen.contains(&child)
            {
                continue;
            }
            // A line left out here may be reached again through another link (a result under
            // a later chain line, whose call is on a side line not walked yet).
            match of_round(entry, &responses, &calls, &answered) {
                Side::Turn => found.push(child),
                Side::Link => {}
                Side::Outside => continue,
            }
            seen.insert(child);
            remember(entry, &mut uuids, &mut responses, &mut calls, &mut answered);
            pending.push(child);
        }
    }
    found
}

enum Side {
    /// A call or result of the round: a turn of the source.
    Turn,
    /// A line that only links the tree: walked through.
    Link,
    /// Not of the round: the side branch ends before it.
    Outside,
}

fn of_round(
    entry: &Entry,
    responses: &HashSet<&str>,
    calls: &HashSet<&str>,
    answered: &HashSet<&str>,
) -> Side {
    let Body::Turns(turns) = &entry.body else {
        return match entry.body {
            Body::Link => Side::Link,
            _ => Side::Outside,
        };
    };
    let human = turns.iter().any(|turn| turn.role == Role::User);
    if let Some(response) = entry.message_id.as_deref() {
        let new_call = entry.calls.iter().any(|id| !calls.contains(id.as_str()));
        if responses.contains(response) && (new_call || entry.calls.is_empty()) {
            return Side::Turn;
        }
        return Side::Outside;
    }
    let answers_round = !entry.answers.is_empty()
        && entry
            .answers
            .iter()
            .all(|id| calls.contains(id.as_str()) && !answered.contains(id.as_str()));
    if answers_round && !human {
        Side::Turn
    } else {
        Side::Outside
    }
}

fn remember<'a>(
    entry: &'a Entry,
    uuids: &mut HashSet<&'a str>,
    responses: &mut HashSet<&'a str>,
    calls: &mut HashSet<&'a str>,
    answered: &mut HashSet<&'a str>,
) {
    if !entry.uuid.is_empty() {
        uuids.insert(&entry.uuid);
    }
    responses.extend(entry.message_id.as_deref());
    calls.extend(entry.calls.iter().map(String::as_str));
    answered.extend(entry.answers.iter().map(String::as_str));
}
