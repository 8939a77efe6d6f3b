//! Which compaction is an agent session's latest: an index the runtime hooks keep so a
//! `PreToolUse` call finds it without reading the store's history. It decides nothing on its
//! own: the hooks check the compaction it names against its verified receipts (the session)
//! and against the transcript (the summary), so an edited row can only make a hook deny.

use super::sql::params;
use super::{Store, StoreError};

impl Store {
    /// Records `compaction_id` as the latest compaction of `runtime`'s `session_id`.
    pub fn set_session_compaction(
        &self,
        runtime: &str,
        session_id: &str,
        compaction_id: &str,
    ) -> Result<(), StoreError> {
        self.write(|tx, log, _| {
            tx.execute(
                "INSERT INTO agent_sessions (runtime, session_id, compaction_id, updated_at)
                 VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (runtime, session_id) DO UPDATE
                 SET compaction_id = excluded.compaction_id, updated_at = excluded.updated_at",
                &params![runtime, session_id, compaction_id, log.time()],
            )
            .map_err(StoreError::sql("recording an agent session"))?;
            Ok(())
        })
    }

    /// Records what a session is about to compact (`PreCompact`): the population digest and
    /// number of the turns the runtime will summarize.
    pub fn set_session_pending(
        &self,
        runtime: &str,
        session_id: &str,
        population_sha256: &str,
        turns: usize,
    ) -> Result<(), StoreError> {
        self.write(|tx, log, _| {
            tx.execute(
                "INSERT INTO agent_sessions (runtime, session_id, pending_population_sha256,
                     pending_turns, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (runtime, session_id) DO UPDATE
                 SET pending_population_sha256 = excluded.pending_population_sha256,
                     pending_turns = excluded.pending_turns, updated_at = excluded.updated_at",
                &params![runtime, session_id, population_sha256, turns, log.time()],
            )
            .map_err(StoreError::sql("recording an agent session"))?;
            Ok(())
        })
    }

    /// The compaction the index names as `runtime`'s `session_id`'s latest (empty or `None`
    /// when it has none recorded).
    pub fn session_compaction(
        &self,
        runtime: &str,
        session_id: &str,
    ) -> Result<Option<String>, StoreError> {
        let found = self
            .conn()
            .opt(
                "SELECT compaction_id FROM agent_sessions WHERE runtime = ?1 AND session_id = ?2",
                &params![runtime, session_id],
                |r| r.string(0),
            )
            .map_err(StoreError::sql("reading an agent session"))?;
        Ok(found.filter(|id| !id.is_empty()))
    }
}
