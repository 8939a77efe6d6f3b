//! The checker (compiled policy + scanner) built on a thread of its own: compiling the
//! scanner's rules takes longer than drawing the first screen, and the queue does not need
//! it. Items, reruns and reveals wait for it the first time. A fork's checker is built only
//! when its lane first needs one, so a second lane costs nothing at start-up.

use std::thread::JoinHandle;

use anyhow::Context as _;

use crate::policy::Policy;
use crate::service::Checker;

/// A checker that is ready, still being built, or failed to build.
pub enum Deferred {
    /// Not started: built by the first [`Deferred::wait`], on the waiting thread.
    Later(Box<Policy>),
    Ready(Box<Checker>),
    Building(JoinHandle<anyhow::Result<Checker>>),
    Failed(String),
}

impl Deferred {
    /// Starts building a checker for `policy`.
    pub fn spawn(policy: Policy) -> anyhow::Result<Deferred> {
        let handle = std::thread::Builder::new()
            .name("cq-review-checker".into())
            .spawn(move || Checker::new(policy))
            .context("while starting the checker thread")?;
        Ok(Deferred::Building(handle))
    }

    /// Waits until the checker is built (or has failed).
    pub fn wait(&mut self) -> anyhow::Result<()> {
        if let Deferred::Later(_) = self {
            let Deferred::Later(policy) = std::mem::replace(self, Deferred::Failed(String::new()))
            else {
                return Ok(());
            };
            *self = match Checker::new(*policy) {
                Ok(checker) => Deferred::Ready(Box::new(checker)),
                Err(e) => Deferred::Failed(format!("{e:#}")),
            };
        }
        if let Deferred::Building(_) = self {
            let Deferred::Building(handle) =
                std::mem::replace(self, Deferred::Failed(String::new()))
            else {
                return Ok(());
            };
            *self = match handle.join() {
                Ok(Ok(checker)) => Deferred::Ready(Box::new(checker)),
                Ok(Err(e)) => Deferred::Failed(format!("{e:#}")),
                Err(_) => Deferred::Failed("the checker thread panicked".into()),
            };
        }
        self.get().map(drop)
    }

    /// The checker, once [`Deferred::wait`] has returned.
    pub fn get(&self) -> anyhow::Result<&Checker> {
        match self {
            Deferred::Ready(checker) => Ok(checker),
            Deferred::Later(_) | Deferred::Building(_) => {
                anyhow::bail!("the policy and scanner are still loading")
            }
            Deferred::Failed(why) => anyhow::bail!("the policy could not be loaded: {why}"),
        }
    }
}
