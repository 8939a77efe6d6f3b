//! `cq recheck ID|--all`: rerun every check on stored compactions, each under the policy it
//! was checked under (see [`crate::service::recheck::policies`]), store each new report and
//! say what changed: each check's status and code, the verdict, the report digest, and which
//! policy the rerun used. A compaction whose policy is not at hand is not rerun: `cq recheck
//! ID` fails with the digest it needs; `--all` names each one and reruns the rest.
//! `--override-policy` deliberately reruns under `--policy` instead, and says so per item.

use std::io::Write;

use crate::cli::{PolicyArgs, StoreArgs};
use crate::sanitize::line;
use crate::service::recheck::{self, quarantined_ids, short, Pending, Policies, PolicyNeeded};
use crate::service::Checker;
use crate::store::Mode;

use super::{policy, store, Exit, Output};

/// Compactions prepared, checked on the pool and stored per round.
const ROUND: usize = 256;

/// Which policy the reruns use: `--policy`, and whether it overrides each item's own.
pub struct Under<'a> {
    pub override_policy: bool,
    pub policy: &'a PolicyArgs,
}

pub fn run(
    id: Option<&str>,
    all: bool,
    jobs: Option<u16>,
    store_args: &StoreArgs,
    under: &Under<'_>,
    out: &mut Output,
) -> anyhow::Result<Exit> {
    let store = store::open(store_args, Mode::ReadWrite)?;
    let given = Checker::new(policy::resolve(under.policy)?)?;
    let mut policies = if under.override_policy {
        Policies::overriding()
    } else {
        Policies::own()
    };
    let ids = match (id, all) {
        (Some(id), false) => vec![id.to_owned()],
        (None, true) => quarantined_ids(&store)?,
        _ => anyhow::bail!("give a compaction id or --all"),
    };
    let pool = super::jobs::pool(jobs)?;
    let mut tally = Tally::default();
    // While the pool reruns one round, this thread stores the round before, prints it, and
    // reads the round after from the store.
    let mut rounds = ids.chunks(ROUND);
    let mut fetched = rounds.next().map(|ids| fetch_round(&store, ids));
    let mut previous: Option<Round> = None;
    while let Some(this) = fetched.take() {
        let (mut round, failed) = prepare(&pool, &given, &mut policies, this, all);
        if let Some(e) = failed {
            // What the round before found is stored and printed, and which of this round's
            // were not rerun, before the error; nothing of this round is rerun.
            if let Some(r) = previous.take() {
                r.finish(&store, &policies, &given, &mut tally, out)?;
            }
            for not_rerun in &round.not_rerun {
                writeln!(out, "{not_rerun}")?;
            }
            return Err(e);
        }
        let next = rounds.next();
        let (outcomes, (finished, after)) = super::jobs::alongside(
            &pool,
            || {
                use rayon::prelude::*;
                round
                    .pending
                    .par_iter()
                    .map(|p| recheck::run(&policies, &given, p))
                    .collect::<Vec<_>>()
            },
            || {
                let finished = previous.take().map_or(Ok(()), |r| {
                    r.finish(&store, &policies, &given, &mut tally, out)
                });
                // The next round is read once this one's predecessor is stored.
                let next = next
                    .filter(|_| finished.is_ok())
                    .map(|ids| fetch_round(&store, ids));
                (finished, next)
            },
        );
        finished?;
        round.outcomes = outcomes;
        previous = Some(round);
        fetched = after;
    }
    if let Some(r) = previous {
        r.finish(&store, &policies, &given, &mut tally, out)?;
    }
    let Tally {
        changed,
        refused,
        rechecked,
    } = tally;
    if refused == 0 {
        writeln!(out, "rechecked {rechecked}, {changed} changed")?;
        return Ok(Exit::Success);
    }
    writeln!(
        out,
        "rechecked {rechecked}, {changed} changed, {refused} not rerun (the policy they were checked under is not at hand: give it with --policy FILE)"
    )?;
    Ok(Exit::SomeRefused)
}

/// What a round reads from the store: the stored texts of its ids, in order, up to the first
/// that could not be read, and why.
struct Fetched {
    stored: Vec<recheck::Stored>,
    unread: Option<anyhow::Error>,
}

fn fetch_round(store: &crate::store::Store, ids: &[String]) -> Fetched {
    let mut stored = Vec::with_capacity(ids.len());
    for id in ids {
        match recheck::fetch(store, id) {
            Ok(s) => stored.push(s),
            Err(e) => {
                return Fetched {
                    stored,
                    unread: Some(e),
                }
            }
        }
    }
    Fetched {
        stored,
        unread: None,
    }
}

/// The round of what was `fetched`: each compaction prepared for its rerun, or named as not
/// rerun (with `--all`), up to the first error, if any. The stored texts are parsed on the
/// pool; errors come in the order of the round's ids, an unread one last.
fn prepare(
    pool: &rayon::ThreadPool,
    given: &Checker,
    policies: &mut Policies,
    fetched: Fetched,
    all: bool,
) -> (Round, Option<anyhow::Error>) {
    use rayon::prelude::*;
    let Fetched {
        stored: fetched,
        unread,
    } = fetched;
    let parsed: Vec<_> = pool.install(|| fetched.par_iter().map(recheck::parse).collect());
    let mut round = Round::default();
    for (stored, parsed) in fetched.iter().zip(parsed) {
        match parsed.and_then(|p| recheck::pick(given, policies, p)) {
            Ok(p) => round.pending.push(p),
            // One item: the refusal is the command's error (nothing was rerun).
            Err(e) if !all => return (round, Some(e)),
            Err(e) => match e.downcast_ref::<PolicyNeeded>() {
                Some(needed) => round.not_rerun.push(format!(
                    "{}: not rerun: {}",
                    line(&stored.id),
                    line(&needed.to_string())
                )),
                None => return (round, Some(e)),
            },
        }
    }
    (round, unread)
}

#[derive(Default)]
struct Tally {
    changed: usize,
    refused: usize,
    rechecked: usize,
}

/// One round of compactions: those prepared for a rerun, with their outcomes once the pool has
/// rerun them, and the lines saying which were not rerun.
#[derive(Default)]
struct Round {
    pending: Vec<Pending>,
    outcomes: Vec<anyhow::Result<crate::engine::gate::GateOutcome>>,
    not_rerun: Vec<String>,
}

impl Round {
    /// Stores the round's reruns in one transaction and prints what each changed, after the
    /// lines of those not rerun.
    fn finish(
        self,
        store: &crate::store::Store,
        policies: &Policies,
        given: &Checker,
        tally: &mut Tally,
        out: &mut Output,
    ) -> anyhow::Result<()> {
        for not_rerun in &self.not_rerun {
            tally.refused += 1;
            writeln!(out, "{not_rerun}")?;
        }
        // The reruns before the first that failed are stored and printed, then the error.
        let mut done = Vec::with_capacity(self.pending.len());
        let mut failed = None;
        for (p, outcome) in self.pending.into_iter().zip(self.outcomes) {
            match outcome {
                Ok(outcome) => done.push((p, outcome)),
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        for done in recheck::finish_all(store, policies, given, done)? {
            tally.rechecked += 1;
            let shown = line(&done.id);
            if done.changed() {
                tally.changed += 1;
                writeln!(out, "{shown}: changed")?;
            } else {
                writeln!(
                    out,
                    "{shown}: unchanged (report {})",
                    short(&done.after.sha256)
                )?;
            }
            writeln!(
                out,
                "  {}",
                line(&format!("rerun {}", done.policy.describe()))
            )?;
            for change in done.changes() {
                writeln!(out, "  {}", line(&change))?;
            }
        }
        failed.map_or(Ok(()), Err)
    }
}
