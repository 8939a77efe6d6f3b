//! The rows `verify` checks, as the store hands them over. The store owns every SQL statement;
//! the audit side reads these plain values (all of them untrusted) through [`LogRows`], so
//! verification is pure and the same code checks any backend.

use ed25519_dalek::VerifyingKey;

/// One audit log entry as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryRow {
    pub seq: u64,
    pub kind: String,
    pub compaction_id: Option<String>,
    /// The canonical JSON body (the signed and hashed bytes).
    pub body: String,
    pub sha256: String,
    pub prev_hash: String,
    pub leaf_hash: String,
    /// Base64 Ed25519 signature, for receipts a reviewer (or the store, for a registration
    /// it authorised) made.
    pub signature: Option<String>,
    pub key_id: Option<String>,
    pub created_at: String,
}

/// One stored checkpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointRow {
    pub id: i64,
    pub size: u64,
    pub root_hex: String,
    pub note: String,
    pub created_at: String,
}

/// One row of `compactions`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactionRow {
    pub id: String,
    pub tenant_id: String,
    pub task_id: String,
    pub request_sha256: String,
    pub summary_sha256: String,
    pub source_population_sha256: String,
    pub status: String,
    pub verdict: String,
    pub outcome: String,
    pub finding_status: String,
    pub verdict_class: String,
    pub has_secret_finding: i64,
    pub main_reason: String,
    pub anomaly_count: i64,
    pub report_sha256: String,
    pub created_at: String,
}

/// One row of `reports` (in insertion order per compaction).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportRow {
    pub id: i64,
    pub compaction_id: String,
    pub report_sha256: String,
    pub policy_sha256: String,
    pub verifier_version: String,
    pub created_at: String,
    /// Whether the stored JSON text hashes to `report_sha256`.
    pub text_matches: bool,
}

/// One row of `decisions`, `approvals` or `reveals` (the columns a kind does not have are
/// empty).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedRow {
    pub id: i64,
    pub receipt_seq: u64,
    pub compaction_id: String,
    pub action: String,
    pub reason: String,
    pub note: String,
    pub reviewer: String,
    pub key_id: String,
    pub report_sha256: String,
    pub finding_id: String,
    pub created_at: String,
}

/// One row of `reviewers`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewerRow {
    pub receipt_seq: u64,
    pub name: String,
    pub public_key: String,
    pub key_id: String,
    pub role: String,
    pub authorized_by: String,
    pub created_at: String,
}

/// Which table a [`SignedRow`] came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignedTable {
    Decisions,
    Approvals,
    Reveals,
}

/// Receives the store's table rows; each table comes whole and in one call order.
pub trait TableVisitor {
    fn compaction(&mut self, row: CompactionRow);
    /// A stored request and whether its text hashes to `claimed_sha256`'s value.
    fn request(&mut self, compaction_id: &str, text: &[u8]);
    fn report(&mut self, row: ReportRow);
    fn signed(&mut self, table: SignedTable, row: SignedRow);
    fn reviewer(&mut self, row: ReviewerRow);
    /// A `meta` key and value.
    fn meta(&mut self, key: &str, value: &str);
}

/// What a store lets `verify` read.
pub trait LogRows {
    type Error;
    /// The store's origin line and the public key trusted from outside the store file (or why
    /// none is).
    fn identity(&self) -> (String, VerifyingKey, Result<String, String>);
    /// Entries with a sequence number above `after`, in order, at most `limit`.
    fn entries(&self, after: u64, limit: usize) -> Result<Vec<EntryRow>, Self::Error>;
    /// Every stored checkpoint, smallest tree first.
    fn checkpoints(&self) -> Result<Vec<CheckpointRow>, Self::Error>;
    /// The checkpoint of the largest tree, if any.
    fn latest_checkpoint(&self) -> Result<Option<CheckpointRow>, Self::Error>;
    /// Every stored audit-tree node `(level, index, hash bytes)`.
    fn nodes(&self, visit: &mut dyn FnMut(u32, u64, &[u8])) -> Result<(), Self::Error>;
    /// Every row of the tables the receipts describe.
    fn tables(&self, visit: &mut dyn TableVisitor) -> Result<(), Self::Error>;
}
