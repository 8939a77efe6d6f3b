//! A hooked session for `agents_hook_e2e`: a temporary HOME with the transcript where the
//! runtime keeps it (its project directory rewritten to a temporary one, so no file on this
//! machine can pin anything), a temporary store, and the `cq` binary run as the runtime runs
//! a hook: the payload on stdin, the answer on stdout.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::{json, Value};

pub use cq::service::hooks::QUARANTINE_NOTICE;

/// The real session the Claude Code variants are made from.
pub const CLEAN_CLAUDE: &str =
    "claude-code/marot__spotter__8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl";
const CONSTRUCTED: &str = "tests/transcripts/claude-code-hooks/constructed";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rt {
    Claude,
    Codex,
}

impl Rt {
    fn name(self) -> &'static str {
        match self {
            Rt::Claude => "claude-code",
            Rt::Codex => "codex",
        }
    }

    /// Tools the hook must deny while the latest compaction is not released.
    pub fn guarded(self) -> &'static [&'static str] {
        match self {
            Rt::Claude => &["Bash", "Edit", "Write"],
            Rt::Codex => &["Bash", "apply_patch"],
        }
    }

    /// The project directory the fixture's session ran in.
    fn fixture_project(self) -> &'static str {
        match self {
            Rt::Claude => "/home/USER/projects/spotter-worktrees/spotter-fum",
            Rt::Codex => "/tmp/repo",
        }
    }
}

/// The policy `cq hook` uses when none is named.
pub fn hook_policy() -> cq::policy::Policy {
    cq::policy::Policy::builtin("prose").unwrap()
}

pub struct Session {
    _dir: tempfile::TempDir,
    pub runtime: Rt,
    pub home: PathBuf,
    pub project: PathBuf,
    pub store: PathBuf,
    pub transcript: PathBuf,
    session_id: String,
    keys: PathBuf,
}

impl Session {
    /// `fixture` (under `tests/transcripts/`) as a live session of `runtime`.
    pub fn new(runtime: Rt, fixture: &str) -> Session {
        Session::edited(runtime, fixture, |text| text)
    }

    /// `fixture` changed by `edit` first.
    pub fn edited(runtime: Rt, fixture: &str, edit: impl Fn(String) -> String) -> Session {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let project = dir.path().join("project");
        std::fs::create_dir_all(&project).unwrap();
        let text = std::fs::read_to_string(Path::new("tests/transcripts").join(fixture)).unwrap();
        let text = edit(text).replace(runtime.fixture_project(), project.to_str().unwrap());
        let session_id = session_id(runtime, &text);
        let transcript = match runtime {
            Rt::Claude => home
                .join(".claude/projects/-project")
                .join(format!("{session_id}.jsonl")),
            Rt::Codex => home
                .join(".codex/sessions/2026/08/03")
                .join(format!("rollout-2026-08-03T10-48-56-{session_id}.jsonl")),
        };
        std::fs::create_dir_all(transcript.parent().unwrap()).unwrap();
        std::fs::write(&transcript, text).unwrap();
        Session {
            runtime,
            store: dir.path().join("cq.db"),
            keys: dir.path().join("keys"),
            home,
            project,
            transcript,
            session_id,
            _dir: dir,
        }
    }

    pub fn cq(&self) -> Command {
        let mut command = Command::new(assert_cmd::cargo::cargo_bin("cq"));
        command
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env("XDG_DATA_HOME", self.home.join(".local/share"))
            .env_remove("CQ_STORE")
            .env_remove("CQ_TRUSTED_POLICY_KEYS")
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("CODEX_HOME")
            .current_dir(&self.project);
        command
    }

    /// A payload of `event` for this session, with `fields` added (Claude Code's from the
    /// constructed payloads, Codex's with its extra `turn_id` and `model`).
    pub fn payload(&self, event: &str, fields: Value) -> Value {
        let mut payload = match (self.runtime, event) {
            (Rt::Claude, "SessionStart") => constructed("input_SessionStart_compact.json"),
            (Rt::Claude, "PostCompact") => constructed("input_PostCompact_auto.json"),
            (Rt::Claude, "PreToolUse") => constructed("input_PreToolUse_Bash.json"),
            (Rt::Claude, "PreCompact") => constructed("input_PreCompact_auto.json"),
            (Rt::Codex, _) => {
                json!({"turn_id": "019fc8be-0000-7000-8000-000000000009", "model": "gpt-5.5"})
            }
            (_, other) => panic!("no payload for {other}"),
        };
        let object = payload.as_object_mut().unwrap();
        object.insert("hook_event_name".into(), event.into());
        object.insert("session_id".into(), self.session_id.clone().into());
        object.insert(
            "transcript_path".into(),
            self.transcript.display().to_string().into(),
        );
        object.insert("cwd".into(), self.project.display().to_string().into());
        for (key, value) in fields.as_object().unwrap() {
            object.insert(key.clone(), value.clone());
        }
        payload
    }

    /// Runs the hook on `payload`: its answer (exit 0 and JSON on stdout, always).
    pub fn hook(&self, payload: &Value) -> Value {
        let mut command = self.cq();
        command
            .args(["hook", self.runtime.name(), "--store"])
            .arg(&self.store)
            .write_stdin(payload.to_string());
        let stdout = succeeded(command);
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
    }

    /// SessionStart after a compaction: the context it adds.
    pub fn session_start(&self) -> String {
        let reply = self.hook(&self.payload("SessionStart", json!({"source": "compact"})));
        assert_eq!(
            reply["hookSpecificOutput"]["hookEventName"], "SessionStart",
            "{reply}"
        );
        reply["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    pub fn post_compact(&self) -> Value {
        self.hook(&self.payload("PostCompact", json!({"trigger": "auto"})))
    }

    /// PreToolUse for `tool`.
    pub fn tool(&self, tool: &str) -> Value {
        let input = match tool {
            "Bash" => json!({"command": "git push origin HEAD", "description": "Push"}),
            "Read" => json!({"file_path": self.project.join("README.md")}),
            "apply_patch" => json!({"command": "*** Begin Patch\n*** End Patch\n"}),
            _ => json!({"file_path": self.project.join("a.txt"), "content": "x"}),
        };
        self.hook(&self.payload(
            "PreToolUse",
            json!({"tool_name": tool, "tool_input": input, "tool_use_id": "toolu_e2e"}),
        ))
    }

    fn list(&self) -> Vec<Value> {
        let mut command = self.cq();
        command.args(["list", "--json", "--store"]).arg(&self.store);
        succeeded(command)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// The ids of every compaction in the store.
    pub fn compactions(&self) -> Vec<String> {
        self.list()
            .iter()
            .map(|row| row["id"].as_str().unwrap().to_owned())
            .collect()
    }

    pub fn only_compaction(&self) -> String {
        let ids = self.compactions();
        assert_eq!(ids.len(), 1, "{ids:?}");
        ids[0].clone()
    }

    pub fn status(&self, id: &str) -> String {
        let rows = self.list();
        let row = rows.iter().find(|r| r["id"] == id).unwrap();
        row["status"].as_str().unwrap().to_owned()
    }

    /// Registers the reviewers `alice` and `bob` (approvers) once.
    fn reviewers(&self) {
        if self.keys.exists() {
            return;
        }
        for (n, name) in ["alice", "bob"].into_iter().enumerate() {
            self.cq()
                .args(["keys", "generate", "--name", name, "--dir"])
                .arg(&self.keys)
                .assert()
                .code(0);
            let public = std::fs::read_to_string(self.keys.join(format!("{name}.pub"))).unwrap();
            let mut add = self.cq();
            add.args([
                "reviewers",
                "add",
                name,
                public.trim(),
                "--role",
                "approver",
            ])
            .arg("--store")
            .arg(&self.store);
            if n > 0 {
                add.arg("--key").arg(self.keys.join("alice.key"));
            }
            add.assert().code(0);
        }
    }

    /// `cq decide ID ARGS` by `who`: its stdout.
    pub fn decide(&self, id: &str, who: &str, args: &[&str]) -> String {
        self.reviewers();
        let mut command = self.cq();
        command
            .args(["decide", id])
            .args(args)
            .arg("--key")
            .arg(self.keys.join(format!("{who}.key")))
            .arg("--store")
            .arg(&self.store);
        succeeded(command)
    }

    /// Released by alice, and by bob too when the policy wants two people.
    pub fn release(&self, id: &str) {
        let args = ["--release", "--reason", "verified-by-hand"];
        if self.decide(id, "alice", &args).contains("second approver") {
            self.decide(id, "bob", &args);
        }
    }

    /// Runs SQL on the store behind cq's back.
    pub fn sql(&self, statements: &str) {
        let conn = rusqlite::Connection::open(&self.store).unwrap();
        conn.execute_batch(statements).unwrap();
    }

    pub fn write_project_file(&self, relative: &str, text: &str) {
        let path = self.project.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// `cq hook install ARGS` in the project: its stdout.
    pub fn install(&self, args: &[&str]) -> String {
        let mut command = self.cq();
        command.args(["hook", "install"]).args(args);
        succeeded(command)
    }
}

/// Runs `command`, which must exit 0: its stdout.
pub fn succeeded(mut command: Command) -> String {
    let out = command.output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

fn constructed(name: &str) -> Value {
    serde_json::from_slice(&std::fs::read(Path::new(CONSTRUCTED).join(name)).unwrap()).unwrap()
}

/// The session id a transcript's first lines name.
fn session_id(runtime: Rt, text: &str) -> String {
    text.lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find_map(|line| match runtime {
            Rt::Claude => line["sessionId"].as_str().map(str::to_owned),
            Rt::Codex => line["payload"]["id"].as_str().map(str::to_owned),
        })
        .unwrap()
}
