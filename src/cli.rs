//! Command-line types (clap only): what each command takes. The commands themselves live in
//! `commands/`; only `main.rs` turns their results into exit codes.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "cq",
    version,
    about = "A fail-closed gate for LLM context compactions, and a reviewer for what it quarantines"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Decide whether a compacted summary may re-enter the agent's context (exit 0 accepted,
    /// 1 quarantined, 2 refused).
    Check(CheckArgs),
    /// Print the canonical JSON and SHA-256 of a JSON document.
    Digest(DigestArgs),
    /// Inspect, sign and verify policies.
    #[command(subcommand)]
    Policy(PolicyCommand),
    /// Scan text or JSON for secrets and personal data (exit 0 clean, 1 findings, 2 error).
    Scan(ScanArgs),
    #[command(flatten)]
    Store(StoreCommand),
    /// Move a store between SQLite and PostgreSQL.
    #[command(name = "store", subcommand)]
    StoreAdmin(StoreAdminCommand),
    /// Verify, export and checkpoint the audit log.
    #[command(subcommand)]
    Audit(AuditCommand),
    /// Reviewer keys.
    #[command(subcommand)]
    Keys(KeysCommand),
    /// Reviewers allowed to decide.
    #[command(subcommand)]
    Reviewers(ReviewersCommand),
    /// Record every compaction in Claude Code or Codex transcripts (a file or a directory tree).
    Import(ImportArgs),
    /// The runtime hooks: `cq hook claude-code|codex` answers a hook payload on stdin;
    /// `cq hook install` adds them to the runtime's settings.
    #[command(subcommand)]
    Hook(HookCommand),
    /// Open the reviewer's terminal UI on a store.
    Review(ReviewArgs),
    /// Build a demo store from the bundled scenarios and open the reviewer on it.
    Demo(DemoArgs),
}

/// Where the policy comes from and how far to trust it.
#[derive(Debug, Clone, Args)]
pub struct PolicyArgs {
    /// A built-in policy name (default, prose, seed-compatible) or a policy TOML file.
    #[arg(long, default_value = "default")]
    pub policy: String,
    /// Use a policy file without a valid signature from a trusted key (warns loudly).
    #[arg(long)]
    pub allow_unsigned_policy: bool,
    /// A trusted policy-signing public key (repeatable); also CQ_TRUSTED_POLICY_KEYS.
    #[arg(long = "trust-key", value_name = "PUBKEY")]
    pub trust_keys: Vec<String>,
}

/// The policy for real agents' prose compactions (default: the built-in `prose`).
#[derive(Debug, Clone, Args)]
pub struct AgentPolicyArgs {
    /// A built-in policy name (prose, default, seed-compatible) or a policy TOML file.
    #[arg(long, default_value = "prose")]
    pub policy: String,
    /// Use a policy file without a valid signature from a trusted key (warns loudly).
    #[arg(long)]
    pub allow_unsigned_policy: bool,
    /// A trusted policy-signing public key (repeatable); also CQ_TRUSTED_POLICY_KEYS.
    #[arg(long = "trust-key", value_name = "PUBKEY")]
    pub trust_keys: Vec<String>,
}

impl From<&AgentPolicyArgs> for PolicyArgs {
    fn from(args: &AgentPolicyArgs) -> PolicyArgs {
        PolicyArgs {
            policy: args.policy.clone(),
            allow_unsigned_policy: args.allow_unsigned_policy,
            trust_keys: args.trust_keys.clone(),
        }
    }
}

/// An agent runtime whose transcripts and hooks cq reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RuntimeName {
    ClaudeCode,
    Codex,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// claude-code or codex.
    #[arg(value_enum)]
    pub runtime: RuntimeName,
    /// A transcript, or a directory of them (e.g. ~/.claude/projects, ~/.codex/sessions).
    pub path: PathBuf,
    /// Threads to read and check with (default: every core); what is recorded, and in what
    /// order, does not depend on it.
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub policy: AgentPolicyArgs,
}

#[derive(Debug, Subcommand)]
pub enum HookCommand {
    /// Answer one Claude Code hook payload (stdin) with JSON (stdout).
    ClaudeCode(HookRunArgs),
    /// Answer one Codex hook payload (stdin) with JSON (stdout).
    Codex(HookRunArgs),
    /// Add cq's hook entries to the runtime's settings (or remove them with --uninstall).
    Install(HookInstallArgs),
}

#[derive(Debug, Args)]
pub struct HookRunArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub policy: AgentPolicyArgs,
}

#[derive(Debug, Args)]
pub struct HookInstallArgs {
    /// claude-code or codex.
    #[arg(value_enum)]
    pub runtime: RuntimeName,
    /// The project's settings (`.claude/settings.json`, `.codex/hooks.json` here), the default.
    #[arg(long, conflicts_with = "user")]
    pub project: bool,
    /// The user's settings (`~/.claude/settings.json`, `~/.codex/hooks.json`).
    #[arg(long)]
    pub user: bool,
    /// Remove cq's entries instead.
    #[arg(long)]
    pub uninstall: bool,
    /// The cq program the hooks run (default: this binary).
    #[arg(long)]
    pub program: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The request (cq.request.v1 JSON); `-` or nothing reads standard input.
    pub request: Option<PathBuf>,
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// Print the verdict as JSON (with the full report) for a runtime to read.
    #[arg(long)]
    pub json: bool,
    /// Record the verdict in a store (without a value: CQ_STORE, else the default store).
    #[arg(long, value_name = "DB", num_args = 0..=1)]
    pub store: Option<Option<PathBuf>>,
}

#[derive(Debug, Args)]
pub struct DigestArgs {
    /// The JSON document; `-` or nothing reads standard input.
    pub input: Option<PathBuf>,
    /// Read as CPython's json.loads does (last duplicate key wins, NaN accepted) instead of
    /// strictly.
    #[arg(long)]
    pub python: bool,
}

#[derive(Debug, Subcommand)]
pub enum PolicyCommand {
    /// Print the policy's controlled language as instructions for a summarizer's prompt.
    Prompt(PolicyArgs),
    /// Print the policy's digest, records and grammar size.
    Show(PolicyArgs),
    /// Sign a policy file with a key from `cq keys generate` (writes FILE.sig).
    Sign {
        /// The signer key file.
        #[arg(long)]
        key: PathBuf,
        file: PathBuf,
    },
    /// Verify a policy file's signature (FILE.sig) against trusted keys.
    Verify {
        file: PathBuf,
        #[arg(long = "trust-key", value_name = "PUBKEY")]
        trust_keys: Vec<String>,
    },
}

#[derive(Debug, Args)]
pub struct ScanArgs {
    /// A file of text or JSON, or a directory to scan recursively; `-` or nothing reads
    /// standard input.
    pub input: Option<PathBuf>,
    /// Threads to scan with (default: every core). Findings and their order do not depend on
    /// it.
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,
    /// Print findings as JSON.
    #[arg(long)]
    pub json: bool,
    /// Load rules from this directory instead of the built-in pack.
    #[arg(long)]
    pub rules: Option<PathBuf>,
    /// Scan for these entity types only, as a policy's `[scan] entity_types` would
    /// (comma-separated: umbrella types such as SECRET or PII, or a rule's own type such as
    /// UK_NHS, which also reports that rule's matches without their context words).
    #[arg(long, value_delimiter = ',', value_name = "TYPES")]
    pub entity_types: Vec<String>,
}

/// Where the store is, and which key it must be signed with.
#[derive(Debug, Clone, Args)]
pub struct StoreArgs {
    /// The store: a SQLite file, or a PostgreSQL URL `postgres://USER@HOST/DB` (default: the
    /// user's data directory; also CQ_STORE).
    #[arg(long, value_name = "DB|URL", env = "CQ_STORE", hide_env_values = true)]
    pub store: Option<PathBuf>,
    /// The store's public key, trusted from outside the store file (the content of its `.pub`
    /// file; also CQ_STORE_KEY). Without it the key file or `.pub` beside the store is used.
    #[arg(long, value_name = "PUBKEY")]
    pub store_key: Option<String>,
    /// The store's signing key file, which every host that writes to the store holds (also
    /// CQ_STORE_SIGNING_KEY; default: `<store>.key`, or for a URL
    /// `cq/store-keys/<database>.key` in the config directory).
    #[arg(long, value_name = "FILE")]
    pub store_signing_key: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum StoreAdminCommand {
    /// Copy the store FROM (a file or a postgres:// URL) into the empty store TO, with its
    /// audit log intact: verify must pass on both sides with the same root.
    Copy(StoreCopyArgs),
}

#[derive(Debug, Clone, Args)]
pub struct StoreCopyArgs {
    /// The store to copy (a SQLite file or a PostgreSQL URL).
    pub from: PathBuf,
    /// Where to copy it: a new file, or an empty PostgreSQL database or schema.
    pub to: PathBuf,
    /// FROM's public key, trusted from outside it (also CQ_STORE_KEY).
    #[arg(long, value_name = "PUBKEY")]
    pub store_key: Option<String>,
    /// FROM's signing key file (default: beside a file store, or the config directory's one
    /// for a URL); copied to TO so that TO can be written.
    #[arg(long, value_name = "FILE")]
    pub from_signing_key: Option<PathBuf>,
    /// Where TO's signing key file goes (default: beside a file store, or the config
    /// directory's one for a URL).
    #[arg(long, value_name = "FILE")]
    pub to_signing_key: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum StoreCommand {
    /// Check many requests (one cq.request.v1 per line) and record every verdict.
    Ingest {
        file: PathBuf,
        /// Threads to check with (default: every core); what is recorded, and in what order,
        /// does not depend on it.
        #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
        jobs: Option<u16>,
        #[command(flatten)]
        store: StoreArgs,
        #[command(flatten)]
        policy: PolicyArgs,
    },
    /// List recorded compactions.
    List {
        #[command(flatten)]
        store: StoreArgs,
        /// quarantined, released, rejected or accepted.
        #[arg(long)]
        status: Option<String>,
        #[arg(long)]
        json: bool,
        /// How many rows at most.
        #[arg(long, default_value_t = 100)]
        limit: u64,
    },
    /// Show one compaction: request digests, every report, decisions, receipts.
    Show {
        id: String,
        #[command(flatten)]
        store: StoreArgs,
        #[arg(long)]
        json: bool,
    },
    /// Rerun the checks under the policy each compaction was checked under (the one given
    /// by --policy when its digest matches, else the built-in with that digest) and store the
    /// new report; a compaction whose policy is not at hand is not rerun.
    Recheck {
        id: Option<String>,
        /// Every quarantined compaction.
        #[arg(long, conflicts_with = "id")]
        all: bool,
        /// Rerun under --policy on purpose, even where a compaction was checked under another
        /// policy (each rerun then says it was not the policy of the recorded check).
        #[arg(long)]
        override_policy: bool,
        /// Threads to check with (default: every core); what is recorded, and in what order,
        /// does not depend on it.
        #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
        jobs: Option<u16>,

        #[command(flatten)]
        store: StoreArgs,
        #[command(flatten)]
        policy: PolicyArgs,
    },
    /// Release or reject a quarantined compaction (a signed receipt).
    Decide {
        id: String,
        #[arg(long, conflicts_with = "reject", required_unless_present = "reject")]
        release: bool,
        #[arg(long)]
        reject: bool,
        /// A reason code from the policy.
        #[arg(long)]
        reason: String,
        #[arg(long, default_value = "")]
        note: String,
        /// The reviewer's signer key file.
        #[arg(long)]
        key: PathBuf,
        /// The report digest the reviewer saw (default: the latest).
        #[arg(long)]
        report: Option<String>,
        #[command(flatten)]
        store: StoreArgs,
        #[command(flatten)]
        policy: PolicyArgs,
    },
    /// For the runtime: the context to inject once released, with its receipt (exit 0
    /// released or accepted, 1 otherwise).
    Status {
        id: String,
        #[command(flatten)]
        store: StoreArgs,
        /// The policy that renders the trusted instruction.
        #[command(flatten)]
        policy: PolicyArgs,
    },
}

#[derive(Debug, Subcommand)]
pub enum AuditCommand {
    /// Recompute every hash, link, signature and Merkle root (exit 1 on any tamper).
    Verify {
        #[command(flatten)]
        store: StoreArgs,
        /// An exported checkpoint the log must extend.
        #[arg(long)]
        checkpoint: Option<PathBuf>,
        /// Threads to check rows on while one reads the store (default: every core). The
        /// report does not depend on it.
        #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
        jobs: Option<u16>,
    },
    /// Write every receipt as JSONL to standard output.
    Export {
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Sign and print a checkpoint of the log (signed-note format) to keep elsewhere.
    Checkpoint {
        #[command(flatten)]
        store: StoreArgs,
    },
}

#[derive(Debug, Subcommand)]
pub enum KeysCommand {
    /// Generate a reviewer key pair (secret file 0600).
    Generate {
        #[arg(long)]
        name: String,
        /// Where to write the key files (default: the user's config directory).
        #[arg(long)]
        dir: Option<PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
pub enum ReviewersCommand {
    /// Register a reviewer's public key.
    Add {
        name: String,
        pubkey: String,
        /// reviewer or approver.
        #[arg(long, default_value = "reviewer")]
        role: String,
        /// The key file of the approver who authorises this registration (not needed for the
        /// first approver of a new store, which the store's own key registers).
        #[arg(long)]
        key: Option<PathBuf>,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// List registered reviewers.
    List {
        #[command(flatten)]
        store: StoreArgs,
    },
}

#[derive(Debug, Args)]
pub struct ReviewArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    /// Open the store so that no decision can be written.
    #[arg(long)]
    pub readonly: bool,
    /// Keymap and theme overrides (TOML).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// The reviewer's signer key file, used to sign decisions.
    #[arg(long)]
    pub key: Option<PathBuf>,
    #[command(flatten)]
    pub policy: PolicyArgs,
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Where to build the demo store (default: the user's data directory).
    #[arg(long, value_name = "DB")]
    pub store: Option<PathBuf>,
    /// Only build the store; do not open the reviewer.
    #[arg(long)]
    pub no_tui: bool,
}
