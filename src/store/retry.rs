//! How writers serialize their appends to the audit log, and the retry loop of the
//! alternative the store bench measures against the product's choice.
//!
//! The product takes the store's write lock first in every write transaction
//! ([`Appends::Lock`]: SQLite `BEGIN IMMEDIATE`, PostgreSQL a transaction-level advisory
//! lock). [`Appends::Serializable`] instead runs PostgreSQL write transactions at
//! `SERIALIZABLE` isolation without the lock; one that loses a race (SQLSTATE 40001 or
//! 40P01) is rolled back and run again from the start, at most [`MAX_RETRIES`] times, after
//! a jittered, exponentially growing pause. It exists for `cargo bench --bench store` and the
//! race test, which show both keep the log linear and gap-free; it is not a user option.

use std::time::Duration;

use rand_core::RngCore as _;

/// How write transactions are serialized.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Appends {
    /// The store's write lock, taken first (the product's behaviour).
    #[default]
    Lock,
    /// PostgreSQL `SERIALIZABLE` isolation, retried on a lost race (the bench's alternative;
    /// SQLite has one writer at a time either way and takes its lock).
    Serializable,
}

/// Runs of one write transaction after the first, at most.
pub const MAX_RETRIES: u32 = 64;

/// The first pause's upper bound; each retry doubles it up to [`MAX_PAUSE`].
const FIRST_PAUSE: Duration = Duration::from_micros(500);
const MAX_PAUSE: Duration = Duration::from_millis(100);

/// The pause before retry `attempt` (1-based): uniformly random up to a bound that doubles
/// with each attempt ("full jitter"), so writers that collided spread out.
pub(crate) fn pause(attempt: u32) -> Duration {
    let bound = FIRST_PAUSE
        .saturating_mul(1u32 << attempt.saturating_sub(1).min(16))
        .min(MAX_PAUSE);
    let micros = u64::try_from(bound.as_micros()).unwrap_or(u64::MAX).max(1);
    Duration::from_micros(rand_core::OsRng.next_u64() % micros)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pauses_stay_under_a_bound_that_doubles_up_to_the_cap() {
        for attempt in 1..=MAX_RETRIES {
            let bound = FIRST_PAUSE
                .saturating_mul(1 << (attempt - 1).min(16))
                .min(MAX_PAUSE);
            for _ in 0..20 {
                assert!(pause(attempt) < bound.max(Duration::from_micros(1)));
            }
        }
    }
}
