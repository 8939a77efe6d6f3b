//! The constraints view on the demo store: for each kind of demo scenario (dropped
//! invariant, contradicted commitment, pinned re-open, fabricated approval, clean) the rows
//! and the selected row's evidence as the application layer derives them from the real
//! report, and the screen the reviewer sees (plain snapshots, and styled ones where colour
//! carries meaning: statuses, the marked sentence, diff emphasis).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::OnceLock;

use cq::review::action::Action;
use cq::review::app::{AppOptions, Screen};
use cq::review::fake::FAKE_NOW;
use cq::review::headless::Headless;
use cq::review::source::{ConstraintKind, ConstraintStatus, ItemDetail, ItemId, ReviewSource};
use cq::review::store_source::StoreSource;
use cq::service::Checker;
use cq::store::{Mode, Store};
use crossterm::event::KeyCode;

/// The demo store, built once for every test here, and each scenario's compaction id.
struct Demo {
    _dir: tempfile::TempDir,
    db: std::path::PathBuf,
    ids: Vec<(String, String)>,
}

fn demo() -> &'static Demo {
    static DEMO: OnceLock<Demo> = OnceLock::new();
    DEMO.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("demo.db");
        let built = cq::service::demo::build(&db).unwrap();
        let ids = built
            .rows
            .iter()
            .map(|r| (r.scenario.clone(), r.compaction_id.clone()))
            .collect();
        Demo { _dir: dir, db, ids }
    })
}

fn id_of(scenario: &str) -> String {
    demo()
        .ids
        .iter()
        .find(|(s, _)| s == scenario)
        .map(|(_, id)| id.clone())
        .unwrap_or_else(|| panic!("no demo scenario {scenario}"))
}

fn source() -> StoreSource {
    let store = Store::open(&demo().db, Mode::ReadOnly).unwrap();
    let checker = Checker::new(cq::service::demo::default_policy().unwrap()).unwrap();
    StoreSource::new(store, checker, None).unwrap()
}

fn item(scenario: &str) -> ItemDetail {
    source().item(&ItemId(id_of(scenario))).unwrap()
}

fn row<'a>(item: &'a ItemDetail, id: &str) -> &'a cq::review::source::ConstraintEvidence {
    item.constraints
        .iter()
        .find(|c| c.id == id)
        .unwrap_or_else(|| panic!("no row {id}"))
}

fn options() -> AppOptions {
    AppOptions {
        readonly: true,
        reviewer: "alice".into(),
        now_unix: FAKE_NOW,
        page_size: 200,
    }
}

/// The reviewer at 160 × 48 with `scenario` open.
fn opened(scenario: &str, w: u16, h: u16) -> Headless<StoreSource> {
    let mut ui = Headless::new(source(), options(), w, h).unwrap();
    let task = item(scenario).task;
    ui.update(Action::Filter)
        .type_text(&task)
        .key(KeyCode::Enter);
    ui.update(Action::Open);
    ui
}

#[test]
fn a_dropped_invariant_shows_its_clause_against_the_closest_sentence_and_the_user_turn() {
    let item = item("02_dropped_invariant");
    let first = item.constraints.first().unwrap();
    assert_eq!(
        first.id, "SAFETY-DESTRUCTIVE-DB",
        "the failing row comes first"
    );
    assert_eq!(first.status, ConstraintStatus::Unsupported);
    assert!(first.support.is_empty());
    assert_eq!(
        first.required_clause.as_deref(),
        Some("do not run destructive database operations without user confirmation")
    );
    let closest = first.closest.as_ref().unwrap();
    assert_eq!(
        closest.sentence.text,
        "Waiting for user confirmation before deleting."
    );
    assert_eq!(
        item.summary_text.get(closest.sentence.range.clone()),
        Some(closest.sentence.text.as_str())
    );
    let turn = first.user_turns.first().unwrap();
    assert!(
        turn.excerpt.contains("ask me before you delete anything"),
        "{turn:?}"
    );
    let matched: Vec<&str> = turn
        .matched
        .iter()
        .map(|r| turn.excerpt.get(r.clone()).unwrap())
        .collect();
    assert!(matched.contains(&"delete"), "{matched:?}");
    // Every other registered constraint is stated by one sentence of the summary.
    for c in item.constraints.iter().skip(1) {
        assert_eq!(c.status, ConstraintStatus::Preserved, "{}", c.id);
        assert_eq!(c.support.len(), 1, "{}", c.id);
    }
}

#[test]
fn a_contradicted_commitment_shows_the_sentence_the_span_and_the_pattern() {
    let item = item("03_contradicts_commitment");
    let tests = row(&item, "COMMIT-TESTS");
    assert_eq!(tests.status, ConstraintStatus::Conflict);
    let conflict = tests.conflicts.first().unwrap();
    assert_eq!(conflict.pattern_id, "tests-skipped");
    let sentence = conflict.sentence.as_ref().unwrap();
    let matched = item
        .summary_text
        .get(conflict.matched.clone().unwrap())
        .unwrap();
    assert!(
        sentence.text.contains(matched),
        "{matched} in {}",
        sentence.text
    );
    assert!(sentence.text.starts_with("Plan given the deadline"));
    assert!(tests
        .user_turns
        .iter()
        .any(|t| t.excerpt.contains("don't just disable the test")
            && t.refusals.contains(&"don't".to_owned())));
    // Contradictions come before what the summary merely does not support.
    let ranks: Vec<u8> = item.constraints.iter().map(|c| c.triage_rank()).collect();
    assert!(ranks.windows(2).all(|w| w[0] <= w[1]), "{ranks:?}");
    assert_eq!(item.constraints[0].status, ConstraintStatus::Conflict);
}

#[test]
fn a_pinned_reopen_shows_the_injected_text_against_the_manifest_and_the_matches() {
    let item = item("07_reopened_falsified_path");
    let pin = row(&item, "PIN-ORD-0042");
    assert_eq!(pin.kind, ConstraintKind::Pinned);
    assert_eq!(pin.status, ConstraintStatus::Conflict);
    let pinned = pin.pinned.as_ref().unwrap();
    assert!(pinned.identical(), "the injected bytes are the manifest's");
    assert!(pinned
        .injected
        .starts_with("Never run migration 0042_split_order_lines"));
    assert_eq!(pin.conflicts.len(), 2, "both forbidden patterns matched");
    assert_eq!(
        pin.conflicts[0].sentence, pin.conflicts[1].sentence,
        "in the same sentence"
    );
    assert!(pin.user_turns[0].excerpt.contains("Do NOT run 0042"));
}

#[test]
fn a_fabricated_approval_is_a_row_against_the_best_matching_user_turn() {
    let item = item("06_fabricated_approval");
    let claim = item
        .constraints
        .iter()
        .find(|c| c.kind == ConstraintKind::Authority)
        .unwrap();
    assert_eq!(claim.id, "claim-1");
    assert!(claim.status.failing());
    assert!(claim
        .canonical_text
        .starts_with("The user approved the force-push"));
    let turn = claim.user_turns.first().unwrap();
    assert!(turn.excerpt.contains("Don't push anything"));
    assert!(turn.refusals.contains(&"don't".to_owned()));
    assert_eq!(claim.reasons.len(), 1);
}

#[test]
fn a_clean_summary_states_every_clause_and_carries_its_pin() {
    let item = item("01_clean_accepted");
    assert_eq!(item.constraints.len(), 10);
    for c in &item.constraints {
        assert_eq!(c.status, ConstraintStatus::Preserved, "{}", c.id);
        assert!(c.closest.is_none() && c.user_turns.is_empty(), "{}", c.id);
    }
    let pin = row(&item, "PIN-PAY-REVIEW");
    assert!(pin.pinned.as_ref().unwrap().identical());
    assert!(row(&item, "COMMIT-PUSH").support[0]
        .text
        .starts_with("Do not push or deploy"));
}

#[test]
fn an_item_whose_constraint_checks_failed_opens_on_the_constraints_view() {
    let ui = opened("02_dropped_invariant", 160, 48);
    assert_eq!(ui.app.screen, Screen::Constraints);
    let ui = opened("04_credentials", 160, 48);
    // The secret scan failed too, but so did consistency: constraints first.
    assert_eq!(ui.app.screen, Screen::Constraints);
    let ui = opened("01_clean_accepted", 160, 48);
    assert_eq!(ui.app.screen, Screen::Detail);
    let ui = opened("12_source_digest_mismatch", 160, 48);
    assert_eq!(ui.app.screen, Screen::Detail, "only provenance failed");
}

#[test]
fn constraints_view_of_each_demo_scenario_kind() {
    for (scenario, name) in [
        ("02_dropped_invariant", "dropped_invariant"),
        ("03_contradicts_commitment", "contradicted_commitment"),
        ("07_reopened_falsified_path", "pinned_reopen"),
        ("06_fabricated_approval", "fabricated_approval"),
    ] {
        let ui = opened(scenario, 160, 48);
        assert_eq!(ui.app.screen, Screen::Constraints, "{scenario}");
        insta::assert_snapshot!(name, ui.text().unwrap());
    }
    // The fabricated approval's claim row, selected with `n` after the conflict.
    let mut ui = opened("06_fabricated_approval", 160, 48);
    ui.update(Action::NextFailing);
    insta::assert_snapshot!("fabricated_approval_claim", ui.text().unwrap());
    // A clean item opens on the detail screen; `c` shows its constraints.
    let mut ui = opened("01_clean_accepted", 160, 48);
    ui.update(Action::Constraints);
    insta::assert_snapshot!("clean", ui.text().unwrap());
}

#[test]
fn constraints_view_styles_carry_status_and_the_marked_sentence() {
    let ui = opened("02_dropped_invariant", 120, 30);
    insta::assert_debug_snapshot!("dropped_invariant_styled", ui.render().unwrap());
    let mut ui = opened("02_dropped_invariant", 120, 30);
    ui.theme = ui.theme.clone().without_colour();
    insta::assert_debug_snapshot!("dropped_invariant_no_color", ui.render().unwrap());
}

#[test]
fn constraints_view_stacks_on_narrow_terminals() {
    let ui = opened("02_dropped_invariant", 80, 50);
    insta::assert_snapshot!("dropped_invariant_narrow", ui.text().unwrap());
}
