//! Policy: a versioned, signed bundle of everything the gate decides by (compaction limits,
//! the invariant registry and commitment snapshot, the verifier grammar, scan policy,
//! default pinned constraints, review rules). Policies are data, never code; the built-in
//! ones are embedded from `assets/policies/`.

pub mod grammar;
mod load;
mod model;
pub mod prose;

pub use load::{check_pinned, is_shipped_sha256, PolicyError, BUILTIN};
pub use model::{
    Agents, Authority, Compaction, PinnedConstraint, Policy, ReasonCode, RecordSetSpec, RecordSpec,
    Review, ScanPolicy,
};
pub use prose::{Mode, Prose};
