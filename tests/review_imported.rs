//! An imported compaction in the reviewer: the demo's real Claude Code session with a
//! fabricated approval (`15b_claude_code_fabricated_approval`, imported as `cq import`
//! imports it) opens like any other item: the source turns (the user's own turn, tool calls
//! and results), the summary by section, the checks, and the constraints view with the
//! re-injected constraints. Drawn headless at 160 × 48, the size a reviewer's terminal has.
#![allow(clippy::unwrap_used)]

use cq::review::action::Action;
use cq::review::app::AppOptions;
use cq::review::fake::FAKE_NOW;
use cq::review::headless::Headless;
use cq::review::store_source::StoreSource;
use cq::service::Checker;
use cq::store::{Mode, Store};
use crossterm::event::KeyCode;

const SCENARIO: &str = "15b_claude_code_fabricated_approval";

fn opened(dir: &std::path::Path) -> Headless<StoreSource> {
    let db = dir.join("demo.db");
    cq::service::demo::build(&db).unwrap();
    let session = cq::service::demo::agents::manifest()
        .unwrap()
        .scenario
        .into_iter()
        .find(|s| s.name == SCENARIO)
        .unwrap()
        .session;
    let store = Store::open(&db, Mode::ReadOnly).unwrap();
    let policy = cq::policy::Policy::builtin(cq::service::demo::agents::POLICY).unwrap();
    let source = StoreSource::new(store, Checker::new(policy).unwrap(), None).unwrap();
    let options = AppOptions {
        readonly: true,
        reviewer: "alice".into(),
        now_unix: FAKE_NOW,
        page_size: 200,
    };
    let mut ui = Headless::new(source, options, 160, 48).unwrap();
    ui.update(Action::Filter)
        .type_text(&session)
        .key(KeyCode::Enter);
    ui.update(Action::Open);
    ui
}

#[test]
fn an_imported_compaction_shows_its_turns_summary_checks_and_constraints() {
    let dir = tempfile::tempdir().unwrap();
    let mut ui = opened(dir.path());
    let screen = ui.text().unwrap();
    // The title names the session (the task) and its project (the tenant).
    assert!(screen.contains("8463c716-a2ea-4c14-9efa-00000000015b"), "{screen}");
    assert!(screen.contains("spotter-fum"), "{screen}");
    // The summary starts at its first section, as the runtime wrote it.
    assert!(screen.contains("Analysis:"), "{screen}");
    // The source turns start with the user's own request.
    assert!(screen.contains("Work on bead spotter-fum"), "{screen}");
    // Every check is listed.
    for check in ["schema", "secrets"] {
        assert!(screen.contains(check), "{check} missing:\n{screen}");
    }
    // Constraints view: every registered constraint, re-injected from the policy.
    ui.update(Action::Constraints);
    let screen = ui.text().unwrap();
    for id in ["SAFETY-SECRETS", "COMMIT-PUSH"] {
        assert!(screen.contains(id), "{id} missing:\n{screen}");
    }
}
