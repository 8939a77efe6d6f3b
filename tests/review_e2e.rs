//! `cq review` end to end: the real binary in tmux (`new-session`, `send-keys`,
//! `capture-pane`) on a store built with `cq check --store`. Open, filter, open an item,
//! rerun, reject with a reason, quit; then `cq audit verify` passes and the decision is in
//! `cq show` (and in the store). And on the demo store (`cq demo --no-tui`): LOG-88, the
//! dropped invariant, opens on its constraints view with the required clause and the closest
//! summary sentence side by side. Skipped, with the reason printed, when tmux is not
//! installed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "review_store/support.rs"]
mod support;

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use cq::store::{Action, Mode, Store};
use support::Fixture;

/// A tmux server of our own (its own socket), killed when dropped.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn run(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("tmux runs")
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "review"];
        args.extend_from_slice(keys);
        let out = self.run(&args);
        assert!(out.status.success(), "send-keys {keys:?} failed");
    }

    /// Types text literally.
    fn text(&self, text: &str) {
        self.keys(&["-l", text]);
    }

    fn screen(&self) -> String {
        String::from_utf8_lossy(&self.run(&["capture-pane", "-p", "-t", "review"]).stdout)
            .into_owned()
    }

    /// Waits until the screen satisfies `ok`; panics with the screen after a timeout.
    fn wait_for(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if ok(&screen) {
                return screen;
            }
            if start.elapsed() > Duration::from_secs(30) {
                panic!("timed out waiting for {what}; the screen is:\n{screen}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn alive(&self) -> bool {
        self.run(&["has-session", "-t", "review"]).status.success()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}

fn tmux_available() -> bool {
    Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn shell_quote(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', "'\\''"))
}

#[test]
fn review_filter_open_rerun_reject_quit_then_audit_verifies() {
    if !tmux_available() {
        println!("skipped: tmux is not installed");
        return;
    }
    let fx = Fixture::build();
    let dir = fx.dir.path();
    let config = dir.join("config");
    std::fs::create_dir_all(&config).unwrap();
    let command = format!(
        "env XDG_CONFIG_HOME={} HOME={} TERM=xterm-256color {} review --store {} --key {} --policy seed-compatible; sleep 30",
        shell_quote(&config),
        shell_quote(dir),
        shell_quote(Path::new(env!("CARGO_BIN_EXE_cq"))),
        shell_quote(&fx.db),
        shell_quote(&dir.join("alice.key")),
    );
    let tmux = Tmux {
        socket: format!("cq-e2e-{}", std::process::id()),
    };
    let out = tmux.run(&[
        "new-session",
        "-d",
        "-s",
        "review",
        "-x",
        "160",
        "-y",
        "48",
        &command,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // Open: the queue with its counts.
    tmux.wait_for("the queue", |s| {
        s.contains("3 quarantined") && s.contains(&fx.conflict)
    });

    // Filter to acme's quarantined item.
    tmux.keys(&["/"]);
    tmux.text("tenant:acme status:quar");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("the filtered queue", |s| {
        s.contains("filter: tenant:acme") && !s.contains(&fx.secret)
    });
    assert!(screen.contains(&fx.conflict), "{screen}");

    // Open it: the summary is there with its conflict.
    tmux.keys(&["Enter"]);
    tmux.wait_for("the item", |s| {
        s.contains("Summary") && s.contains("Reveal the secrets")
    });

    // Rerun: the report is unchanged under the same policy.
    tmux.keys(&["r"]);
    tmux.wait_for("the rerun", |s| s.contains("unchanged"));

    // Reject with a reason, through the command line.
    tmux.keys(&[":"]);
    tmux.text("reject poisoned fabricated instruction in the summary");
    tmux.keys(&["Enter"]);
    tmux.wait_for("the decision dialog", |s| s.contains("poisoned"));
    tmux.keys(&["Enter"]);
    tmux.wait_for("the review stage", |s| s.contains("This will be recorded"));
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("the receipt", |s| s.contains("receipt #"));
    assert!(screen.contains("signed"), "{screen}");
    tmux.keys(&["Escape"]);
    // The item reloads behind the receipt: wait for the dialog to close too, or `q` would
    // only close it.
    tmux.wait_for("the item rejected", |s| {
        s.contains("REJECTED") && !s.contains("receipt #")
    });

    // Quit: back to the queue, then q.
    tmux.keys(&["q"]);
    let start = Instant::now();
    while tmux.screen().contains("cq review") && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(tmux.alive(), "the pane stays for the trailing sleep");
    let screen = tmux.screen();
    assert!(
        !screen.contains("cq review"),
        "the reviewer quit:\n{screen}"
    );

    // The decision is in the store, signed by alice, and the audit log verifies.
    let store = Store::open(&fx.db, Mode::ReadOnly).unwrap();
    let decision = store.decision(&fx.conflict).unwrap().expect("a decision");
    assert_eq!(decision.action, Action::Reject);
    assert_eq!(decision.reason, "poisoned");
    assert_eq!(decision.reviewer, "alice");
    assert!(decision.note.contains("fabricated instruction"));
    assert_eq!(
        store.reports(&fx.conflict).unwrap().len(),
        1,
        "an unchanged rerun stores nothing"
    );
    assert!(fx.verify_ok());
    // And through the CLI: `cq audit verify` passes, `cq show` has the decision.
    let bin = || assert_cmd::Command::cargo_bin("cq").unwrap();
    let verify = bin()
        .args(["audit", "verify", "--store"])
        .arg(&fx.db)
        .output()
        .unwrap();
    assert!(
        verify.status.success(),
        "{}{}",
        String::from_utf8_lossy(&verify.stdout),
        String::from_utf8_lossy(&verify.stderr)
    );
    let show = bin()
        .args(["show", &fx.conflict, "--store"])
        .arg(&fx.db)
        .output()
        .unwrap();
    assert!(
        show.status.success(),
        "{}",
        String::from_utf8_lossy(&show.stderr)
    );
    let shown = String::from_utf8_lossy(&show.stdout);
    assert!(
        shown.contains("reject") && shown.contains("poisoned"),
        "{shown}"
    );
}

/// The line of `screen` holding both `left` and `right` (side by side), if any.
fn side_by_side<'a>(screen: &'a str, left: &str, right: &str) -> Option<&'a str> {
    screen
        .lines()
        .find(|l| matches!((l.find(left), l.find(right)), (Some(a), Some(b)) if a < b))
}

#[test]
fn log_88_constraints_view_shows_the_required_clause_beside_the_closest_sentence() {
    if !tmux_available() {
        println!("skipped: tmux is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("demo.db");
    let built = assert_cmd::Command::cargo_bin("cq")
        .unwrap()
        .args(["demo", "--no-tui", "--store"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let config = dir.path().join("config");
    std::fs::create_dir_all(&config).unwrap();
    let command = format!(
        "env XDG_CONFIG_HOME={} HOME={} TERM=xterm-256color {} review --readonly --store {}; sleep 30",
        shell_quote(&config),
        shell_quote(dir.path()),
        shell_quote(Path::new(env!("CARGO_BIN_EXE_cq"))),
        shell_quote(&db),
    );
    let tmux = Tmux {
        socket: format!("cq-e2e-log88-{}", std::process::id()),
    };
    let out = tmux.run(&[
        "new-session",
        "-d",
        "-s",
        "review",
        "-x",
        "160",
        "-y",
        "48",
        &command,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    tmux.wait_for("the queue", |s| s.contains("LOG-88"));
    tmux.keys(&["/"]);
    tmux.text("task:LOG-88");
    tmux.keys(&["Enter"]);
    tmux.wait_for("the filtered queue", |s| {
        s.contains("Queue 1 of 1 ") && s.contains("filter: task:log-88") && s.contains("LOG-88")
    });
    // Open it: its consistency check failed, so it opens on the constraints view.
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("the constraints view", |s| {
        s.contains("Constraints") && s.contains("SAFETY-DESTRUCTIVE-DB")
    });
    assert!(screen.contains("? UNSUPPORTED"), "{screen}");
    let screen = tmux.wait_for("the clause beside the closest sentence", |s| {
        side_by_side(
            s,
            "- do not run destructive database operations",
            "+ Waiting for user confirmation before",
        )
        .is_some()
    });
    assert!(
        screen.contains("closest sentence"),
        "the right side is labelled: {screen}"
    );
    // The user's own words, marked as a guess.
    assert!(
        screen.contains("ask me before you delete anything"),
        "{screen}"
    );
    assert!(screen.contains("a guess"), "{screen}");
    // `c` switches to the detail screen and back.
    tmux.keys(&["c"]);
    tmux.wait_for("the detail screen", |s| s.contains("not passing)"));
    tmux.keys(&["c"]);
    tmux.wait_for("the constraints view again", |s| {
        s.contains("Why SAFETY-DESTRUCTIVE-DB")
    });
    tmux.keys(&["q"]);
}
