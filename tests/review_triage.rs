//! The queue as a triage surface and the dashboard, on the fake source: severity order and
//! column, the focused row's preview, counts by reason in the header, `n`/`N` jumps (across
//! pages too), the dashboard's charts, and what a rerun changed, marked in the constraints
//! view and named first in the report diff. Also that statuses a newer engine may report
//! (prose mode's re-injected, a word this reviewer does not know) and a constraint without a
//! required clause are shown as they are.
#![allow(clippy::unwrap_used)]

use cq::review::action::Action;
use cq::review::app::{AppOptions, DashboardState, PreviewState, Screen};
use cq::review::fake::{FakeSource, LargeSource, FAKE_NOW};
use cq::review::headless::Headless;
use cq::review::source::{ConstraintStatus, ItemId, ReviewSource, Severity};
use cq::review::worker::Request;
use crossterm::event::KeyCode;

fn options(page_size: usize) -> AppOptions {
    AppOptions {
        readonly: false,
        reviewer: "alice".into(),
        now_unix: FAKE_NOW,
        page_size,
    }
}

fn ui(w: u16, h: u16) -> Headless<FakeSource> {
    Headless::new(FakeSource::new(), options(200), w, h).unwrap()
}

fn open(h: &mut Headless<FakeSource>, id: &str) {
    h.update(Action::Filter).type_text(id).key(KeyCode::Enter);
    h.update(Action::Open);
}

#[test]
fn queue_with_preview_and_severity_sort() {
    let mut h = ui(120, 30);
    insta::assert_snapshot!("queue_preview_severity", h.text().unwrap());
    h.update(Action::MoveDown);
    match &h.app.queue.preview {
        PreviewState::Ready(p) => assert_eq!(p.id, h.app.queue.selected_row().unwrap().id),
        other => panic!("{other:?}"),
    }
    insta::assert_debug_snapshot!("queue_preview_styled", h.render().unwrap());
}

#[test]
fn the_header_counts_the_queue_by_reason_and_follows_the_filter() {
    let mut h = ui(160, 30);
    let total: usize = h.app.queue.reasons.iter().map(|(_, n)| n).sum();
    assert_eq!(
        total, 19,
        "every item with a reason: {:?}",
        h.app.queue.reasons
    );
    assert!(h.text().unwrap().contains("authority 5 · consistency 5"));
    h.update(Action::Filter)
        .type_text("tenant:globex")
        .key(KeyCode::Enter);
    let total: usize = h.app.queue.reasons.iter().map(|(_, n)| n).sum();
    assert_eq!(total, 5, "{:?}", h.app.queue.reasons);
}

#[test]
fn a_held_preview_is_asked_for_once_for_the_last_row_reached() {
    let mut h = ui(120, 30);
    h.hold();
    for _ in 0..5 {
        h.update(Action::MoveDown);
    }
    let previews: Vec<&Request> = h
        .held
        .iter()
        .filter(|r| matches!(r, Request::Preview { .. }))
        .collect();
    assert_eq!(previews.len(), 5, "one request per row reached");
    h.release();
    // Coalesced: only the last one ran, and it is the one shown.
    let selected = h.app.queue.selected_row().unwrap().id.clone();
    match &h.app.queue.preview {
        PreviewState::Ready(p) => assert_eq!(p.id, selected),
        other => panic!("{other:?}"),
    }
}

#[test]
fn n_and_big_n_jump_between_failing_items() {
    let mut h = ui(120, 30);
    h.update(Action::Sort); // oldest first: the accepted item sits among failing ones
    let accepted = h
        .app
        .queue
        .rows
        .iter()
        .position(|r| r.severity == Severity::Pass)
        .unwrap();
    h.update(Action::Top);
    for _ in 0..accepted - 1 {
        h.update(Action::MoveDown);
    }
    h.update(Action::NextFailing);
    assert_eq!(
        h.app.queue.selected,
        accepted + 1,
        "the accepted row is skipped"
    );
    h.update(Action::PrevFailing);
    assert_eq!(h.app.queue.selected, accepted - 1);
    h.update(Action::Bottom).update(Action::NextFailing);
    assert!(h
        .app
        .message
        .as_ref()
        .unwrap()
        .text
        .contains("no failing item below"));
    h.update(Action::Top).update(Action::PrevFailing);
    assert!(h
        .app
        .message
        .as_ref()
        .unwrap()
        .text
        .contains("no failing item above"));
}

#[test]
fn a_jump_past_the_loaded_page_loads_the_next_one_and_goes_on() {
    // Pages of 4: the jump from the last loaded row must load the next page.
    let mut h = Headless::new(FakeSource::new(), options(4), 120, 30).unwrap();
    h.update(Action::Sort);
    let loaded_end = h.app.queue.offset + h.app.queue.rows.len();
    for _ in 0..loaded_end - 1 {
        h.update(Action::MoveDown);
    }
    let before = h.app.queue.selected;
    h.update(Action::NextFailing);
    let after = h.app.queue.selected;
    assert!(after > before, "{before} → {after}");
    assert!(h.app.queue.selected_row().unwrap().severity.failing());
    assert_eq!(h.app.queue.jump, None);
}

#[test]
fn dashboard_charts_history_reasons_waiting_and_reviewers() {
    let mut h = ui(140, 36);
    h.update(Action::Dashboard);
    assert_eq!(h.app.screen, Screen::Dashboard);
    assert!(matches!(h.app.dashboard, DashboardState::Ready(_)));
    insta::assert_snapshot!("dashboard", h.text().unwrap());
    insta::assert_debug_snapshot!("dashboard_styled", h.render().unwrap());
    // Back returns where it was opened from.
    h.update(Action::Back);
    assert_eq!(h.app.screen, Screen::Queue);
    open(&mut h, "q-0001");
    h.update(Action::Dashboard).update(Action::Dashboard);
    assert_eq!(h.app.screen, Screen::Detail);
}

#[test]
fn the_dashboard_keeps_its_last_numbers_while_new_ones_load() {
    let mut h = ui(140, 36);
    h.update(Action::Dashboard).update(Action::Back);
    h.hold().update(Action::Dashboard);
    match &h.app.dashboard {
        DashboardState::Loading { last, .. } => assert!(last.is_some()),
        other => panic!("{other:?}"),
    }
    assert!(h.text().unwrap().contains("Quarantined now, by reason"));
    h.release();
    assert!(matches!(h.app.dashboard, DashboardState::Ready(_)));
}

#[test]
fn the_dashboard_on_100k_items_counts_every_one() {
    let mut h = Headless::new(LargeSource::new(100_000), options(200), 160, 48).unwrap();
    h.update(Action::Dashboard);
    let DashboardState::Ready(d) = &h.app.dashboard else {
        panic!("{:?}", h.app.dashboard);
    };
    let recorded: usize = d.days.iter().map(|c| c.quarantined + c.accepted).sum();
    assert_eq!(recorded, 100_000);
}

#[test]
fn a_rerun_marks_each_constraint_whose_status_changed() {
    // q-0006 (every third id reruns changed) turns both UNSUPPORTED rows PRESERVED.
    let mut h = ui(140, 36);
    open(&mut h, "q-0006");
    assert_eq!(h.app.screen, Screen::Constraints);
    let selected = h.app.detail.as_ref().unwrap().constraint;
    let before = h
        .app
        .detail
        .as_ref()
        .unwrap()
        .item
        .as_ref()
        .unwrap()
        .constraints[selected]
        .id
        .clone();
    h.update(Action::Rerun);
    let detail = h.app.detail.as_ref().unwrap();
    let item = detail.item.as_ref().unwrap();
    assert_eq!(
        item.constraints[detail.constraint].id, before,
        "the selection stays on its row"
    );
    let changed = cq::review::app::changed_since(detail.before_rerun.as_deref(), item);
    assert_eq!(changed.iter().filter(|c| c.is_some()).count(), 2);
    insta::assert_snapshot!("constraints_rerun_marks", h.text().unwrap());
    h.update(Action::ToggleDiff)
        .update(Action::NextPane)
        .update(Action::NextPane);
    let text = h.text().unwrap();
    let first_change = text
        .find("Δ constraint INV-1: MISSING → PRESERVED")
        .unwrap();
    let line_diff = text.find("report before the rerun").unwrap();
    assert!(
        first_change < line_diff,
        "changed checks are named first:\n{text}"
    );
    insta::assert_snapshot!("diff_report_names_changed_checks_first", text);
}

#[test]
fn new_statuses_and_a_missing_required_clause_show_as_they_are() {
    let mut source = FakeSource::new();
    let item = &mut source.items[1];
    let mut reinjected = item.constraints[0].clone();
    reinjected.id = "INV-PROSE".into();
    reinjected.status = ConstraintStatus::Reinjected;
    reinjected.required_clause = None;
    reinjected.conflicts.clear();
    reinjected.support.clear();
    let mut unknown = reinjected.clone();
    unknown.id = "INV-NEW".into();
    unknown.status = ConstraintStatus::from_report("DEFERRED", "");
    item.constraints.insert(0, unknown);
    item.constraints.push(reinjected);
    let mut h = Headless::new(source, options(200), 140, 36).unwrap();
    open(&mut h, "q-0002");
    let text = h.text().unwrap();
    assert!(text.contains("! DEFERRED"), "{text}");
    assert!(text.contains("↻ re-injected"), "{text}");
    insta::assert_snapshot!("constraints_new_statuses", text);
    // The source answers the same way for every status.
    let mut fake = FakeSource::new();
    let preview = fake.preview(&ItemId("q-0002".into())).unwrap();
    assert!(preview.constraints.iter().all(|(_, _, s)| s.failing()));
}
