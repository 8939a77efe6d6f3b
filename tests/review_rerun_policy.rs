//! A rerun runs under the policy the item was checked under, in the reviewer (headless, on a
//! real store) and in `cq recheck`: a Claude Code compaction imported under the built-in
//! `prose` policy reruns unchanged although the reviewer's `--policy` is the strict
//! `default`; a strict item still reruns under its strict policy when the reviewer's is
//! `prose`; an item checked under a project policy the reviewer does not have is not rerun,
//! and the refusal names the digest needed (the right `--policy FILE` makes it work); and
//! `cq recheck --override-policy` reruns under the given policy on purpose, which the output
//! and the reviewer both say. Every item is a real session from `tests/transcripts/`, imported
//! by the `cq` binary as a user imports it.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use cq::review::action::Action;
use cq::review::app::{AppOptions, RerunState};
use cq::review::fake::FAKE_NOW;
use cq::review::headless::Headless;
use cq::review::store_source::StoreSource;
use cq::service::Checker;
use cq::store::{Mode, Store};
use crossterm::event::KeyCode;

/// A real Claude Code session with a fabricated approval added: quarantined under `prose`.
const SESSION: &str = "tests/transcripts/variants/hook-fabricated-approval.jsonl";

struct Imported {
    _dir: tempfile::TempDir,
    db: PathBuf,
    dir: PathBuf,
    id: String,
}

fn cq(dir: &Path) -> assert_cmd::Command {
    let mut command = assert_cmd::Command::cargo_bin("cq").unwrap();
    command
        .env("HOME", dir)
        .env("XDG_CONFIG_HOME", dir.join(".config"))
        .env_remove("CQ_STORE")
        .env_remove("CQ_TRUSTED_POLICY_KEYS")
        .current_dir(dir);
    command
}

/// Runs `command`: its exit code, stdout and stderr.
fn run(command: &mut assert_cmd::Command) -> (Option<i32>, String, String) {
    let out = command.output().unwrap();
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// The built-in `prose` policy under another name: a project policy with its own digest.
const PROJECT_POLICY: &str = "project-prose.toml";

fn project_policy_text() -> String {
    let (_, text) = cq::policy::BUILTIN
        .iter()
        .find(|(name, _)| *name == "prose")
        .unwrap();
    let renamed = text.replacen("name = \"prose\"", "name = \"project-prose\"", 1);
    assert_ne!(&renamed, text);
    renamed
}

fn project_policy_sha256() -> String {
    cq::policy::Policy::from_toml(&project_policy_text(), "test")
        .unwrap()
        .sha256()
}

/// `SESSION` imported by `cq import claude-code` under `policy` (extra args after it).
fn import(policy: &[&str]) -> Imported {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_path_buf();
    std::fs::write(d.join(PROJECT_POLICY), project_policy_text()).unwrap();
    let db = d.join("cq.db");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join(SESSION);
    let (code, out, err) = run(cq(&d)
        .args(["import", "claude-code"])
        .arg(&fixture)
        .arg("--store")
        .arg(&db)
        .args(policy));
    assert_eq!(code, Some(0), "{out}{err}");
    let store = Store::open(&db, Mode::ReadOnly).unwrap();
    let page = store
        .list(
            &cq::store::ListFilter::default(),
            cq::store::SortKey::OldestFirst,
            0,
            10,
        )
        .unwrap();
    assert_eq!(page.len(), 1, "one compaction in {SESSION}");
    let id = page[0].id.clone();
    Imported {
        _dir: dir,
        db,
        dir: d,
        id,
    }
}

impl Imported {
    fn recheck(&self, args: &[&str]) -> (Option<i32>, String, String) {
        run(cq(&self.dir)
            .arg("recheck")
            .args(args)
            .arg("--store")
            .arg(&self.db))
    }

    fn reports(&self) -> usize {
        Store::open(&self.db, Mode::ReadOnly)
            .unwrap()
            .reports(&self.id)
            .unwrap()
            .len()
    }

    fn report_sha256(&self) -> String {
        let store = Store::open(&self.db, Mode::ReadOnly).unwrap();
        store
            .compaction(&self.id)
            .unwrap()
            .unwrap()
            .summary
            .report_sha256
    }

    /// The reviewer on this store with `policy` as its `--policy`, the item open.
    fn reviewer(&self, policy: cq::policy::Policy) -> Headless<StoreSource> {
        let store = Store::open(&self.db, Mode::ReadWrite).unwrap();
        let source = StoreSource::new(store, Checker::new(policy).unwrap(), None).unwrap();
        let options = AppOptions {
            readonly: false,
            reviewer: "alice".into(),
            now_unix: FAKE_NOW,
            page_size: 200,
        };
        let mut ui = Headless::new(source, options, 160, 48).unwrap();
        ui.update(Action::Filter)
            .type_text(&self.id)
            .key(KeyCode::Enter);
        ui.update(Action::Open);
        assert_eq!(
            ui.app.detail.as_ref().map(|d| d.id.0.clone()),
            Some(self.id.clone())
        );
        ui
    }
}

/// Reruns the open item in the reviewer: how the rerun ended, and the report diff pane.
fn rerun(ui: &mut Headless<StoreSource>) -> (RerunState, String) {
    ui.update(Action::Rerun);
    let state = ui.app.detail.as_ref().unwrap().rerun.clone();
    ui.update(Action::ToggleDiff)
        .update(Action::NextPane)
        .update(Action::NextPane);
    (state, ui.text().unwrap())
}

fn builtin(name: &str) -> cq::policy::Policy {
    cq::policy::Policy::builtin(name).unwrap()
}

#[test]
fn an_imported_prose_item_reruns_unchanged_in_the_reviewer_under_a_strict_policy() {
    let item = import(&[]);
    let before = item.report_sha256();
    let mut ui = item.reviewer(builtin("default"));
    let (state, screen) = rerun(&mut ui);
    let RerunState::Done(outcome) = state else {
        panic!("the rerun did not finish: {state:?}\n{screen}");
    };
    assert!(!outcome.changed, "{}", outcome.policy);
    assert!(!outcome.policy_overridden);
    assert!(
        outcome
            .policy
            .starts_with("under built-in policy \"prose\"")
            && outcome.policy.contains("prose mode")
            && outcome.policy.ends_with("the one it was checked under"),
        "{}",
        outcome.policy
    );
    assert!(
        screen.contains("rerun under built-in policy \"prose\""),
        "{screen}"
    );
    assert!(!screen.contains("another policy"), "{screen}");
    assert_eq!(item.report_sha256(), before);
    assert_eq!(item.reports(), 1, "an unchanged rerun stores nothing");
}

#[test]
fn an_imported_prose_item_reruns_unchanged_in_cq_recheck() {
    let item = import(&[]);
    for args in [vec![item.id.as_str()], vec!["--all"]] {
        let (code, out, err) = item.recheck(&args);
        assert_eq!(code, Some(0), "{out}{err}");
        assert!(out.contains(": unchanged"), "{out}");
        assert!(out.contains("rechecked 1, 0 changed"), "{out}");
        assert!(
            out.contains("rerun under built-in policy \"prose\"")
                && out.contains("the one it was checked under"),
            "{out}"
        );
    }
    assert_eq!(item.reports(), 1);
}

#[test]
fn a_strict_item_still_reruns_under_its_strict_policy() {
    let item = import(&["--policy", "default"]);
    let before = item.report_sha256();
    let mut ui = item.reviewer(builtin("prose"));
    let (state, _) = rerun(&mut ui);
    let RerunState::Done(outcome) = state else {
        panic!("the rerun did not finish: {state:?}");
    };
    assert!(!outcome.changed, "{}", outcome.policy);
    assert!(
        outcome.policy.contains("\"default\"") && outcome.policy.contains("strict mode"),
        "{}",
        outcome.policy
    );
    let (code, out, err) = item.recheck(&[&item.id, "--policy", "prose"]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains(": unchanged"), "{out}");
    assert!(out.contains("\"default\""), "{out}");
    assert_eq!(item.report_sha256(), before);
}

#[test]
fn a_project_policy_item_with_the_wrong_policy_is_refused_with_the_digest_needed() {
    let item = import(&["--policy", PROJECT_POLICY, "--allow-unsigned-policy"]);
    let needed = project_policy_sha256();
    let before = item.report_sha256();
    for given in ["default", "prose"] {
        let (code, out, err) = item.recheck(&[&item.id, "--policy", given]);
        assert_eq!(code, Some(2), "{out}{err}");
        assert!(
            err.contains(&needed)
                && err.contains("nothing was rerun")
                && err.contains("--policy FILE")
                && err.contains("\"project-prose\""),
            "{err}"
        );
    }
    let (code, out, _) = item.recheck(&["--all", "--policy", "prose"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("not rerun") && out.contains(&needed), "{out}");
    assert!(out.contains("rechecked 0, 0 changed, 1 not rerun"), "{out}");

    // The reviewer: the rerun fails with the same refusal and stores nothing.
    let mut ui = item.reviewer(builtin("prose"));
    let (state, screen) = rerun(&mut ui);
    let RerunState::Failed(why) = state else {
        panic!("a rerun under the wrong policy ran: {state:?}");
    };
    assert!(
        why.contains(&needed) && why.contains("nothing was rerun"),
        "{why}"
    );
    assert!(screen.contains("rerun failed"), "{screen}");
    assert_eq!(item.report_sha256(), before);
    assert_eq!(item.reports(), 1);

    // The policy it was checked under, given: it reruns, unchanged.
    let (code, out, err) = item.recheck(&[
        &item.id,
        "--policy",
        PROJECT_POLICY,
        "--allow-unsigned-policy",
    ]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains(": unchanged"), "{out}");
    assert!(
        out.contains("rerun under policy \"project-prose\"")
            && out.contains("the one it was checked under"),
        "{out}"
    );
    let project = cq::policy::Policy::from_toml(&project_policy_text(), "test").unwrap();
    let mut ui = item.reviewer(project);
    let (state, _) = rerun(&mut ui);
    assert!(
        matches!(&state, RerunState::Done(o) if !o.changed),
        "{state:?}"
    );
}

#[test]
fn an_override_reruns_under_the_given_policy_and_says_so() {
    let item = import(&["--policy", PROJECT_POLICY, "--allow-unsigned-policy"]);
    let needed = project_policy_sha256();
    let (code, out, err) = item.recheck(&[&item.id, "--policy", "prose", "--override-policy"]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(
        out.contains("under built-in policy \"prose\"")
            && out.contains("by --override-policy, NOT the one it was checked under")
            && out.contains("\"project-prose\""),
        "{out}"
    );
    assert!(
        out.contains("policy: "),
        "the change names the policy: {out}"
    );
    assert_eq!(
        item.reports(),
        2,
        "a rerun under another policy is a new report"
    );

    // The reviewer: the item says its report is not under its first check's policy, and a
    // rerun now runs under the policy of the report it shows (`prose`).
    let mut ui = item.reviewer(builtin("default"));
    let detail = ui.app.detail.as_ref().unwrap().item.clone().unwrap();
    assert_eq!(
        detail.first_check_policy_sha256.as_deref(),
        Some(needed.as_str())
    );
    assert!(detail.policy.contains("\"prose\""), "{}", detail.policy);
    let screen = ui.text().unwrap();
    assert!(
        screen.contains("report under another policy than its check"),
        "{screen}"
    );
    let (state, screen) = rerun(&mut ui);
    assert!(
        matches!(&state, RerunState::Done(o) if !o.changed && o.policy.contains("\"prose\"")),
        "{state:?}"
    );
    assert!(
        screen.contains("its first check was under policy sha256"),
        "{screen}"
    );
}
