//! The reviewer's state machine and view model, driven headless: generations and stale
//! answers, paging, filters, tags and bulk actions, mouse, read-only mode, reveals, the
//! keymap from a user file, and what the view model says for each.
#![allow(clippy::unwrap_used)]

use cq::review::action::Action;
use cq::review::app::{AppOptions, AuditState, DialogStage, Effect, Overlay, RerunState, Screen};
use cq::review::config::Config;
use cq::review::event::Event;
use cq::review::fake::{FakeSource, FAKE_NOW};
use cq::review::headless::Headless;
use cq::review::source::{AuditView, ChainStatus, ItemId, ReviewSource, Severity, Status};
use cq::review::view::{build_view, footer_actions, text::plain, Body};
use cq::review::worker::{Job, JobKind, Request, WorkerResult};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};

fn options(page_size: usize) -> AppOptions {
    AppOptions {
        readonly: false,
        reviewer: "alice".into(),
        now_unix: FAKE_NOW,
        page_size,
    }
}

fn ui() -> Headless<FakeSource> {
    Headless::new(FakeSource::new(), options(200), 120, 30).unwrap()
}

/// The queue oldest first (the default is most severe first).
fn ui_by_age() -> Headless<FakeSource> {
    let mut h = ui();
    h.update(Action::Sort);
    h
}

/// Opens the selected item on the detail screen (an item whose constraint, pinned or
/// authority check failed opens on the constraints screen).
fn open_detail(h: &mut Headless<FakeSource>) {
    h.update(Action::Open);
    if h.app.screen == Screen::Constraints {
        h.update(Action::Constraints);
    }
    assert_eq!(h.app.screen, Screen::Detail);
}

fn selected_id(h: &Headless<FakeSource>) -> String {
    h.app.queue.selected_row().unwrap().id.0.clone()
}

#[test]
fn stale_item_answers_are_dropped() {
    let mut h = ui();
    h.hold().update(Action::Open);
    let first = match h.held.last().unwrap() {
        Request::Item { generation, .. } => *generation,
        other => panic!("{other:?}"),
    };
    h.held.clear();
    h.update(Action::Back)
        .update(Action::MoveDown)
        .update(Action::Open);
    h.release();
    let wanted = h.app.detail.as_ref().unwrap().id.clone();
    // The answer to the first open arrives late: it must not replace the item on screen.
    let stale = FakeSource::new().items[0].clone();
    h.update(Event::Worker(Box::new(WorkerResult::Item {
        generation: first,
        result: Ok(stale),
    })));
    let detail = h.app.detail.as_ref().unwrap();
    assert_eq!(detail.item.as_ref().unwrap().id, wanted);
    assert_ne!(wanted.0, "q-0001");
}

#[test]
fn queue_loads_coalesce_newest_wins() {
    let mut h = ui();
    h.hold();
    h.update(Action::Filter)
        .type_text("tenant:acme")
        .key(KeyCode::Enter);
    let queued = h
        .held
        .iter()
        .filter(|r| matches!(r, Request::Queue { .. }))
        .count();
    assert!(queued > 1, "typing filters live: {queued} loads");
    h.release();
    assert_eq!(h.app.queue.total, 5);
    assert!(h.app.queue.rows.iter().all(|r| r.tenant == "acme"));
}

#[test]
fn paging_loads_only_the_page_around_the_selection() {
    let mut h = Headless::new(FakeSource::new(), options(4), 120, 30).unwrap();
    h.update(Action::Sort);
    assert_eq!(h.app.queue.rows.len(), 4);
    assert_eq!(h.app.queue.total, 20);
    for _ in 0..9 {
        h.update(Action::MoveDown);
    }
    assert_eq!(h.app.queue.selected, 9);
    let q = &h.app.queue;
    assert!(q.offset <= 9 && 9 < q.offset + q.rows.len());
    h.update(Action::Bottom);
    assert_eq!(h.app.queue.selected, 19);
    assert_eq!(selected_id(&h), "q-0020");
}

#[test]
fn the_queue_sorts_by_severity_first_and_by_age_on_s() {
    let mut h = ui();
    let severities: Vec<Severity> = h.app.queue.rows.iter().map(|r| r.severity).collect();
    let mut sorted = severities.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(severities, sorted, "most severe first");
    assert_eq!(severities.first(), Some(&Severity::Finding));
    let view = build_view(&h.app, &h.theme);
    assert!(plain(&view.header).contains("sort: severity"));
    h.update(Action::Sort);
    let ages: Vec<i64> = h.app.queue.rows.iter().map(|r| r.created_unix).collect();
    assert!(ages.windows(2).all(|w| w[0] <= w[1]), "oldest first");
    assert!(plain(&build_view(&h.app, &h.theme).header).contains("sort: age"));
}

#[test]
fn tags_and_reject_tagged_record_one_reason_for_all() {
    let mut h = ui();
    h.update(Action::Filter)
        .type_text("status:quarantined tenant:initech")
        .key(KeyCode::Enter);
    h.update(Action::TagAll);
    assert_eq!(h.app.queue.tagged.len(), 4);
    h.update(Action::RejectTagged);
    // Two of the tagged items hold anomalies: one more confirmation.
    h.key(KeyCode::Enter).key(KeyCode::Enter);
    match &h.app.overlay {
        Some(Overlay::Decision(d)) => assert_eq!(d.stage, DialogStage::Anomalies),
        other => panic!("{other:?}"),
    }
    h.key(KeyCode::Enter);
    match &h.app.overlay {
        Some(Overlay::Decision(d)) => match &d.stage {
            DialogStage::Finished(results) => {
                assert_eq!(results.len(), 4);
                assert!(results.iter().all(|(_, r)| r.is_ok()));
            }
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
    assert!(h.app.queue.tagged.is_empty());
    let rejected = h
        .source
        .items
        .iter()
        .filter(|i| i.tenant == "initech" && i.status == Status::Rejected)
        .count();
    assert_eq!(rejected, 4);
}

#[test]
fn rerun_tagged_reruns_each_and_shows_a_spinner_meanwhile() {
    let mut h = ui();
    h.update(Action::Tag).update(Action::Tag);
    h.hold().update(Action::RerunTagged);
    assert_eq!(h.app.reruns_pending.len(), 2);
    let view = build_view(&h.app, &h.theme);
    assert!(plain(&view.header).contains("rerunning 2"));
    h.release();
    assert!(h.app.reruns_pending.is_empty());
    assert_eq!(h.source.reruns.len(), 2);
}

#[test]
fn readonly_hides_and_blocks_every_decision() {
    let mut opts = options(200);
    opts.readonly = true;
    let mut h = Headless::new(FakeSource::readonly(), opts, 120, 30).unwrap();
    assert!(footer_actions(&h.app).iter().all(|a| !a.decides()));
    h.update(Action::Open).update(Action::Reject);
    assert!(h.app.overlay.is_none());
    assert!(h.app.message.as_ref().unwrap().text.contains("read-only"));
    h.update(Action::Back)
        .update(Action::Tag)
        .update(Action::RejectTagged);
    assert!(h.app.overlay.is_none());
}

#[test]
fn reveal_needs_confirmation_and_is_audited() {
    let mut h = ui();
    h.update(Action::Filter)
        .type_text("q-0001")
        .key(KeyCode::Enter);
    h.update(Action::Open).update(Action::Reveal);
    assert!(matches!(h.app.overlay, Some(Overlay::Reveal(_))));
    h.key(KeyCode::Char('n'));
    assert!(h.source.reveals.is_empty());
    assert!(!h.text().unwrap().contains("AKIAFAKE"));
    h.update(Action::Reveal).key(KeyCode::Char('y'));
    assert_eq!(h.source.reveals.len(), 1);
    assert_eq!(h.source.reveals[0].2, "alice");
    assert!(h.text().unwrap().contains("AKIAFAKE"));
    // The state's debug dump never carries the value.
    assert!(!format!("{:?}", h.app).contains("AKIAFAKE"));
    // Going back to the queue forgets it.
    h.update(Action::Back).update(Action::Open);
    assert!(h.app.detail.as_ref().unwrap().revealed.is_empty());
}

#[test]
fn masked_secrets_never_reach_the_screen_anywhere() {
    let mut h = ui();
    h.update(Action::Filter)
        .type_text("q-0001")
        .key(KeyCode::Enter);
    h.update(Action::Open);
    let mut screens = vec![h.text().unwrap()];
    h.update(Action::ToggleDiff);
    for _ in 0..4 {
        screens.push(h.text().unwrap());
        h.update(Action::NextPane);
    }
    for screen in screens {
        assert!(!screen.contains("AKIAFAKEEXAMPLE00042"), "{screen}");
    }
}

#[test]
fn selecting_a_finding_scrolls_summary_and_sources() {
    let mut h = Headless::new(FakeSource::new(), options(200), 120, 14).unwrap();
    // Make the conflict sit far down the summary and the source message far down its pane.
    let long = "filler line\n".repeat(30);
    let item = &mut h.source.items[1];
    item.summary_text = format!("{long}{}", item.summary_text);
    let shift = long.len();
    for span in &mut item.summary_spans {
        span.range = span.range.start + shift..span.range.end + shift;
    }
    for check in &mut item.checks {
        for row in &mut check.constraints {
            if let Some(r) = row.summary_range.as_mut() {
                *r = r.start + shift..r.end + shift;
            }
        }
    }
    item.sources[0].content = long.clone();
    h.update(Action::Filter)
        .type_text("q-0002")
        .key(KeyCode::Enter);
    open_detail(&mut h);
    h.update(Action::NextPane).update(Action::MoveDown);
    let detail = h.app.detail.as_ref().unwrap();
    assert!(
        detail.scroll[1] >= 30,
        "summary scrolled to {}",
        detail.scroll[1]
    );
    assert!(
        detail.scroll[0] >= 30,
        "sources scrolled to {}",
        detail.scroll[0]
    );
    assert!(h.text().unwrap().contains("force-pushed"));
}

#[test]
fn mouse_selects_rows_scrolls_and_focuses_panes() {
    let mut h = ui_by_age();
    let click = |column, row| {
        Event::Mouse(MouseEvent {
            kind: MouseEventKind::Down(MouseButton::Left),
            column,
            row,
            modifiers: KeyModifiers::NONE,
        })
    };
    h.update(click(10, 7));
    assert_eq!(h.app.queue.selected, 4);
    h.update(Event::Mouse(MouseEvent {
        kind: MouseEventKind::ScrollDown,
        column: 10,
        row: 7,
        modifiers: KeyModifiers::NONE,
    }));
    assert_eq!(h.app.queue.selected, 5);
    open_detail(&mut h);
    h.update(click(5, 10));
    assert_eq!(
        h.app.detail.as_ref().unwrap().focus,
        cq::review::app::Pane::Sources
    );
}

#[test]
fn command_line_release_with_reason_and_note_prefills_the_dialog() {
    let mut h = ui();
    h.update(Action::Command)
        .type_text("release test_fixture documented fixture key")
        .key(KeyCode::Enter);
    match &h.app.overlay {
        Some(Overlay::Decision(d)) => {
            assert_eq!(d.reasons[d.selected_reason].code, "test_fixture");
            assert_eq!(d.note.text, "documented fixture key");
        }
        other => panic!("{other:?}"),
    }
    // The first item's pinned check failed: it opened on the constraints screen.
    assert_eq!(h.app.screen, Screen::Constraints);
}

#[test]
fn command_line_rerun_sort_and_quit() {
    let mut h = ui();
    h.update(Action::Command)
        .type_text("sort age")
        .key(KeyCode::Enter);
    assert_eq!(h.app.queue.sort, cq::review::source::Sort::Age);
    h.update(Action::Command)
        .type_text("sort severity")
        .key(KeyCode::Enter);
    assert_eq!(h.app.queue.rows[0].severity, Severity::Finding);
    h.update(Action::Command)
        .type_text("rerun")
        .key(KeyCode::Enter);
    assert_eq!(h.source.reruns.len(), 1);
    let update = h.app.update(Action::Quit);
    assert_eq!(update.effects, vec![Effect::Quit]);
}

#[test]
fn user_keymap_changes_keys_footer_and_help() {
    let config = Config::from_user_toml("[keys]\nquit = [\"Q\"]\nhelp = [\"f2\"]").unwrap();
    let mut h = ui();
    h.app.keymap = config.keymap;
    h.update(Event::Key(KeyEvent::new(
        KeyCode::Char('q'),
        KeyModifiers::NONE,
    )));
    assert!(!h.app.quit);
    h.update(Event::Key(KeyEvent::new(KeyCode::F(2), KeyModifiers::NONE)));
    assert!(matches!(h.app.overlay, Some(Overlay::Help)));
    let text = h.text().unwrap();
    assert!(text.contains("Q               quit"), "{text}");
    assert!(text.contains(" Q quit"));
}

#[test]
fn view_model_marks_selection_without_colour() {
    let mut h = ui();
    h.update(Action::MoveDown);
    let view = build_view(&h.app, &h.theme);
    let Body::Queue(queue) = &view.body else {
        panic!("queue body");
    };
    let selected = queue.selected.unwrap();
    assert!(plain(&queue.rows[selected][0]).starts_with('▶'));
    assert_eq!(plain(&queue.rows[selected][1]), selected_id(&h));
}

#[test]
fn queue_view_sanitizes_untrusted_fields() {
    let mut source = FakeSource::new();
    source.items[0].tenant = "acme\u{1b}]0;pwned\u{7}".into();
    source.items[0].task = "deploy\u{202e}gnp.exe".into();
    let h = Headless::new(source, options(200), 140, 30).unwrap();
    let text = h.text().unwrap();
    assert!(
        text.contains("acme⟨OSC 0;pwned⟩/deploy⟨RLO⟩gnp.exe"),
        "{text}"
    );
    assert!(!text.contains('\u{1b}') && !text.contains('\u{202e}'));
}

#[test]
fn decided_item_is_refreshed_in_queue_and_detail() {
    let mut h = ui();
    let id = ItemId(selected_id(&h));
    h.update(Action::Reject)
        .key(KeyCode::Enter)
        .key(KeyCode::Enter);
    let status = h.source.items.iter().find(|i| i.id == id).unwrap().status;
    assert_eq!(status, Status::Rejected);
    let detail = h.app.detail.as_ref().unwrap().item.as_ref().unwrap();
    assert_eq!(detail.status, Status::Rejected);
    assert_eq!(h.app.queue.counts.get(&Status::Rejected), Some(&2));
}

#[test]
fn scrolling_stops_at_the_end_so_up_moves_at_once() {
    let mut h = Headless::new(FakeSource::new(), options(200), 100, 12).unwrap();
    open_detail(&mut h);
    h.update(Action::PrevPane);
    h.update(Action::Bottom);
    let bottom = h.app.detail.as_ref().unwrap().scroll[0];
    assert!(bottom > 0);
    h.update(Action::MoveUp);
    assert_eq!(h.app.detail.as_ref().unwrap().scroll[0], bottom - 1);
}

#[test]
fn tiny_terminals_never_panic() {
    for (w, h) in [(1, 1), (2, 2), (10, 3), (20, 5), (40, 8), (99, 10)] {
        let mut ui = Headless::new(FakeSource::new(), options(200), w, h).unwrap();
        ui.render().unwrap();
        ui.update(Action::Help);
        ui.render().unwrap();
        ui.update(Action::Back).update(Action::Open);
        ui.render().unwrap();
        ui.update(Action::Zoom);
        ui.render().unwrap();
        ui.update(Action::Reject);
        ui.render().unwrap();
        ui.update(Action::Back).update(Action::ToggleDiff);
        ui.render().unwrap();
        ui.update(Action::Back).update(Action::Audit);
        ui.render().unwrap();
        ui.update(Action::Bottom).update(Action::MoveUp);
        ui.render().unwrap();
    }
}

#[test]
fn waiting_is_true_exactly_while_an_answer_is_awaited() {
    let mut h = ui();
    assert!(!h.app.waiting());
    h.hold().update(Action::Open);
    assert!(h.app.waiting());
    h.release();
    assert!(!h.app.waiting());
    h.hold().update(Action::Rerun);
    assert!(h.app.waiting());
    h.release();
    assert!(!h.app.waiting());
}

#[test]
fn events_that_change_nothing_report_no_change_and_draw_nothing() {
    let mut h = ui();
    let drawn = h.draws;
    let stale = WorkerResult::Item {
        generation: 999,
        result: Ok(FakeSource::new().items[3].clone()),
    };
    let idle = [
        Event::Key(KeyEvent::new(KeyCode::F(12), KeyModifiers::NONE)),
        Event::Key(KeyEvent::new(KeyCode::Up, KeyModifiers::NONE)),
        Event::Tick,
        Event::Worker(Box::new(stale)),
        Event::Mouse(MouseEvent {
            kind: MouseEventKind::Moved,
            column: 1,
            row: 1,
            modifiers: KeyModifiers::NONE,
        }),
    ];
    for event in idle {
        let update = h.app.clone().update(event.clone());
        assert!(!update.changed && update.effects.is_empty(), "{event:?}");
        h.update(event);
    }
    assert_eq!(h.draws, drawn, "nothing was drawn");
    h.update(Action::MoveDown);
    assert_eq!(h.draws, drawn + 1);
    // While an answer is awaited the spinner turns: a tick changes the frame.
    h.hold().update(Action::Open);
    assert!(h.app.clone().update(Event::Tick).changed);
}

#[test]
fn leaving_the_audit_view_cancels_its_verification_and_drops_the_result() {
    let mut h = ui();
    h.update(Action::Open);
    h.hold().update(Action::Audit);
    let generation = match h.held_jobs.as_slice() {
        [Job::Audit { generation, .. }] => *generation,
        other => panic!("{other:?}"),
    };
    let update = h.app.clone().update(Action::Back);
    assert!(update.effects.contains(&Effect::Cancel(JobKind::Audit)));
    h.update(Action::Back);
    assert!(h.held_jobs.is_empty(), "the lane would skip it");
    assert_eq!(h.app.detail.as_ref().unwrap().audit, AuditState::Idle);
    // A verification that could not stop answers anyway: its result is dropped.
    let late = WorkerResult::Audit {
        generation,
        result: Ok(AuditView {
            receipts: Vec::new(),
            chain: ChainStatus::Unknown("late".into()),
        }),
    };
    assert!(!h.app.clone().update(Event::Worker(Box::new(late))).changed);
    h.release();
    // Opening it again verifies afresh.
    h.update(Action::Audit);
    assert!(matches!(
        h.app.detail.as_ref().unwrap().audit,
        AuditState::Ready(_)
    ));
}

#[test]
fn rerun_tagged_is_one_job_answered_item_by_item_with_one_summary() {
    let mut h = ui();
    h.update(Action::Tag)
        .update(Action::Tag)
        .update(Action::Tag);
    h.hold().update(Action::RerunTagged);
    match h.held_jobs.as_slice() {
        [Job::Rerun { ids, .. }] => assert_eq!(ids.len(), 3),
        other => panic!("{other:?}"),
    }
    h.release();
    assert!(h.app.rerun_job.is_none() && h.app.reruns_pending.is_empty());
    let message = h.app.message.as_ref().unwrap();
    assert!(message.text.starts_with("reran 3 items:"), "{message:?}");
    assert_eq!(h.source.reruns.len(), 3);
}

#[test]
fn a_new_rerun_replaces_the_running_job_and_says_how_far_it_got() {
    let mut h = ui();
    h.update(Action::Tag)
        .update(Action::Tag)
        .update(Action::Tag);
    h.hold().update(Action::RerunTagged);
    let first = match h.held_jobs.as_slice() {
        [Job::Rerun { generation, .. }] => *generation,
        other => panic!("{other:?}"),
    };
    // One answer of the batch arrives, then the reviewer reruns the open item alone.
    let id = h.app.reruns_pending.iter().next().unwrap().clone();
    let outcome = h.source.rerun(&id).unwrap();
    h.update(Event::Worker(Box::new(WorkerResult::Rerun {
        generation: first,
        id,
        result: Ok(outcome),
    })));
    h.update(Action::Open).update(Action::Rerun);
    let message = h.app.message.as_ref().unwrap();
    assert_eq!(
        message.text,
        "stopped the previous rerun after 1 of 3 items to start this one"
    );
    match h.held_jobs.as_slice() {
        [Job::Rerun { ids, .. }] => assert_eq!(ids.len(), 1, "the newest job of the kind"),
        other => panic!("{other:?}"),
    }
    assert_eq!(h.app.reruns_pending.len(), 1);
    h.release();
    assert!(h.app.reruns_pending.is_empty());
    assert!(matches!(
        h.app.detail.as_ref().unwrap().rerun,
        RerunState::Done(_)
    ));
}
