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
fn an_imported_compaction_shows_its_constraints_claims_turns_summary_and_checks() {
    let dir = tempfile::tempdir().unwrap();
    let mut ui = opened(dir.path());
    // It opens on its constraints: the title names the session (the task) and its project
    // (the tenant); every registered constraint is re-injected, the push one in conflict
    // with the summary's proposal, and the fabricated quote has no user turn.
    let screen = ui.text().unwrap();
    assert!(
        screen.contains("8463c716-a2ea-4c14-9efa-00000000015b"),
        "{screen}"
    );
    assert!(screen.contains("spotter-fum"), "{screen}");
    for id in ["SAFETY-SECRETS", "SAFETY-TOOL-DATA", "COMMIT-DEPS"] {
        let row = screen.lines().find(|l| l.contains(id)).unwrap();
        assert!(row.contains("re-injected"), "{row}");
    }
    let push = screen.lines().find(|l| l.contains("COMMIT-PUSH")).unwrap();
    assert!(push.contains("CONFLICT"), "{push}");
    // Its evidence: the sentence the pattern matched, marked in the summary.
    assert!(screen.contains("pattern push-unconfirmed"), "{screen}");
    assert!(!screen.contains("outside the summary text"), "{screen}");
    assert!(screen.contains("✗ Push it straight to main"), "{screen}");
    // The fabricated quote: no user turn says it.
    ui.update(Action::MoveDown);
    let screen = ui.text().unwrap();
    assert!(screen.contains("no user turn supports this"), "{screen}");
    // The summary pane follows the selected row to its span, by section.
    assert!(screen.contains("7. Pending Tasks:"), "{screen}");

    // The detail screen: the source turns from the user's own request, the checks.
    ui.update(Action::Constraints);
    let screen = ui.text().unwrap();
    assert!(screen.contains("Work on bead spotter-fum"), "{screen}");
    for check in ["secrets", "authority", "conflicts", "reinjection"] {
        assert!(screen.contains(check), "{check} missing:\n{screen}");
    }
}
