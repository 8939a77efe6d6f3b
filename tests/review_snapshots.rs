//! Snapshot tests of every screen and dialog state of `cq review`, drawn into a ratatui
//! `TestBackend` through the headless driver. Plain-text snapshots show layout and words;
//! debug snapshots of the buffer (with styles) are used where colour carries meaning
//! (badges, masks, diff emphasis, NO_COLOR).
#![allow(clippy::unwrap_used)]

use cq::review::action::Action;
use cq::review::app::{AppOptions, Screen};
use cq::review::fake::{FakeSource, FAKE_NOW};
use cq::review::filter::Filter;
use cq::review::headless::Headless;
use cq::review::source::{
    AuditView, Dashboard, DecisionRefusal, DecisionRequest, ItemDetail, ItemId, ItemPreview,
    QueuePage, QueueRow, ReasonCode, Receipt, RerunOutcome, ReviewSource, Sort, Status,
};
use crossterm::event::KeyCode;

fn options(readonly: bool, reviewer: &str) -> AppOptions {
    AppOptions {
        readonly,
        reviewer: reviewer.into(),
        now_unix: FAKE_NOW,
        page_size: 200,
    }
}

fn ui(w: u16, h: u16) -> Headless<FakeSource> {
    Headless::new(FakeSource::new(), options(false, "alice"), w, h).unwrap()
}

/// Filters the queue down to `id` and opens it.
fn open(h: &mut Headless<FakeSource>, id: &str) {
    h.update(Action::Filter).type_text(id).key(KeyCode::Enter);
    h.update(Action::Open);
}

/// Opens `id` on the detail screen (an item whose constraint, pinned or authority check
/// failed opens on the constraints screen; `c` switches).
fn open_detail(h: &mut Headless<FakeSource>, id: &str) {
    open(h, id);
    if h.app.screen == Screen::Constraints {
        h.update(Action::Constraints);
    }
}

fn snap(name: &str, h: &Headless<FakeSource>) {
    insta::assert_snapshot!(name, h.text().unwrap());
}

fn snap_styled(name: &str, h: &Headless<FakeSource>) {
    insta::assert_debug_snapshot!(name, h.render().unwrap());
}

#[test]
fn queue_screens() {
    let mut h = ui(120, 30);
    snap("queue_default", &h);
    h.update(Action::Sort);
    h.update(Action::Tag)
        .update(Action::Tag)
        .update(Action::MoveDown);
    snap("queue_severity_tagged", &h);
    h.update(Action::Filter)
        .type_text("status:quar !tenant:acme reason:secret");
    snap("queue_filter_typing", &h);
    h.key(KeyCode::Enter);
    snap("queue_filtered", &h);
    h.update(Action::Filter)
        .type_text(" zzz")
        .key(KeyCode::Enter);
    snap("queue_no_match", &h);
}

#[test]
fn queue_narrow_and_loading_and_readonly() {
    let mut h = ui(80, 20);
    snap("queue_narrow", &h);
    h.hold().update(Action::Sort);
    snap("queue_loading", &h);
    let h = Headless::new(FakeSource::readonly(), options(true, "ir"), 100, 16).unwrap();
    snap("queue_readonly", &h);
}

#[test]
fn queue_colours_carry_status() {
    let mut h = ui(90, 10);
    h.update(Action::Tag);
    snap_styled("queue_styled", &h);
}

#[test]
fn detail_screens() {
    let mut h = ui(140, 32);
    open(&mut h, "q-0001");
    snap("detail_secret", &h);
    h.update(Action::NextPane);
    h.update(Action::Zoom);
    snap("detail_zoom_checks", &h);
    h.update(Action::Zoom);
    h.update(Action::Reveal);
    snap("reveal_prompt", &h);
    h.key(KeyCode::Char('y'));
    snap("detail_revealed", &h);
    assert_eq!(h.source.reveals.len(), 1);
}

#[test]
fn detail_narrow_stacks_panes() {
    let mut h = ui(80, 44);
    open_detail(&mut h, "q-0002");
    snap("detail_narrow", &h);
}

#[test]
fn detail_selecting_a_finding_scrolls_to_it() {
    let mut h = ui(120, 24);
    open_detail(&mut h, "q-0002");
    h.update(Action::NextPane);
    h.update(Action::MoveDown);
    h.update(Action::Open);
    snap("detail_finding_selected", &h);
}

#[test]
fn detail_anomalies_are_badges_in_their_own_style() {
    let mut h = ui(120, 30);
    open(&mut h, "q-0005");
    snap("detail_anomalies", &h);
    let mut small = ui(100, 16);
    open(&mut small, "q-0005");
    small.update(Action::Zoom);
    snap_styled("detail_anomalies_styled", &small);
    small.theme = small.theme.clone().without_colour();
    snap_styled("detail_anomalies_no_color", &small);
}

#[test]
fn detail_loading_and_rerun_spinner() {
    let mut h = ui(120, 20);
    h.hold().update(Action::Open);
    snap("detail_loading", &h);
    h.release();
    h.hold().update(Action::Rerun);
    h.update(cq::review::event::Event::Tick);
    snap("detail_rerun_running", &h);
    h.release();
    snap("detail_rerun_done", &h);
}

#[test]
fn diff_screens() {
    let mut h = ui(110, 20);
    open(&mut h, "q-0001");
    h.update(Action::ToggleDiff);
    snap("diff_summary", &h);
    h.update(Action::NextPane);
    snap("diff_claims_identical", &h);
    h.update(Action::NextPane);
    snap("diff_report_no_rerun", &h);
    h.update(Action::NextPane);
    snap("diff_pinned_carried", &h);

    let mut h = ui(110, 20);
    open(&mut h, "q-0002");
    h.update(Action::ToggleDiff).update(Action::NextPane);
    snap("diff_claims_conflict", &h);

    let mut h = ui(100, 12);
    open(&mut h, "q-0004");
    h.update(Action::ToggleDiff).update(Action::PrevPane);
    snap_styled("diff_pinned_altered_styled", &h);

    let mut h = ui(110, 30);
    open(&mut h, "q-0012");
    h.update(Action::Rerun).update(Action::ToggleDiff);
    h.update(Action::NextPane).update(Action::NextPane);
    snap("diff_report_after_rerun", &h);
}

#[test]
fn decision_dialog_stages() {
    let mut h = ui(110, 30);
    open(&mut h, "q-0001");
    h.update(Action::Reject);
    snap("decision_edit", &h);
    h.update(Action::MoveDown).update(Action::NextPane);
    h.type_text("live key, rotate it");
    snap("decision_edit_note", &h);
    h.key(KeyCode::Enter);
    snap("decision_review", &h);
    h.key(KeyCode::Enter);
    snap("decision_receipt", &h);
    h.key(KeyCode::Enter);
    snap("detail_after_reject", &h);
}

#[test]
fn decision_with_anomalies_needs_one_more_confirmation() {
    let mut h = ui(110, 30);
    open(&mut h, "q-0005");
    h.update(Action::Reject)
        .key(KeyCode::Enter)
        .key(KeyCode::Enter);
    snap("decision_anomalies_confirm", &h);
    h.key(KeyCode::Enter);
    snap("decision_anomalies_recorded", &h);
}

#[test]
fn decision_refusals_are_explained_in_place() {
    // Two-person rule: the first release becomes a pending approval.
    let mut h = ui(110, 24);
    open(&mut h, "q-0002");
    h.update(Action::Release)
        .key(KeyCode::Enter)
        .key(KeyCode::Enter);
    snap("decision_needs_second_approver", &h);
    // Carol recorded the first approval of q-0010 and cannot approve it again.
    let mut h = Headless::new(FakeSource::new(), options(false, "carol"), 110, 24).unwrap();
    open(&mut h, "q-0010");
    h.update(Action::Release);
    snap("decision_pending_approvals_shown", &h);
    h.key(KeyCode::Enter).key(KeyCode::Enter);
    snap("decision_self_approval", &h);
    // Already decided.
    let mut h = ui(110, 24);
    open(&mut h, "q-0008");
    h.update(Action::Reject)
        .key(KeyCode::Enter)
        .key(KeyCode::Enter);
    snap("decision_already_decided", &h);
    // Stale: the report changed under the reviewer (someone else reran it).
    let mut h = ui(110, 24);
    open(&mut h, "q-0019");
    h.source.items[18].report_sha256 = "0".repeat(64);
    h.update(Action::Reject)
        .key(KeyCode::Enter)
        .key(KeyCode::Enter)
        .key(KeyCode::Enter);
    snap("decision_stale", &h);
    // A read-only store refuses even if the UI was not started read-only.
    let mut h = Headless::new(FakeSource::readonly(), options(false, "alice"), 110, 24).unwrap();
    open(&mut h, "q-0001");
    h.update(Action::Reject)
        .key(KeyCode::Enter)
        .key(KeyCode::Enter);
    snap("decision_store_readonly", &h);
}

#[test]
fn bulk_reject_of_tagged_items() {
    let mut h = ui(110, 26);
    h.update(Action::Tag)
        .update(Action::Tag)
        .update(Action::Tag);
    h.update(Action::RejectTagged);
    snap("bulk_reject_edit", &h);
    h.key(KeyCode::Enter)
        .key(KeyCode::Enter)
        .key(KeyCode::Enter);
    snap("bulk_reject_finished", &h);
    h.key(KeyCode::Enter);
    snap("queue_after_bulk_reject", &h);
}

#[test]
fn help_overlay_is_generated_from_the_keymap() {
    let mut h = ui(100, 36);
    h.update(Action::Help);
    snap("help", &h);
    let mut h = Headless::new(FakeSource::readonly(), options(true, "ir"), 100, 36).unwrap();
    h.update(Action::Help);
    snap("help_readonly", &h);
    let mut h = ui(140, 20);
    h.update(Action::Help);
    snap("help_two_columns", &h);
}

#[test]
fn audit_screens() {
    let mut h = ui(110, 16);
    open(&mut h, "q-0001");
    h.update(Action::Audit);
    snap("audit_verified", &h);
    let mut h = ui(110, 16);
    open(&mut h, "q-0004");
    h.hold().update(Action::Audit);
    snap("audit_loading", &h);
    h.release();
    snap("audit_broken_chain", &h);
}

#[test]
fn command_line() {
    let mut h = ui(100, 14);
    h.update(Action::Command).type_text("filter tenant:globex");
    snap("command_typing", &h);
    h.key(KeyCode::Enter);
    snap("command_filter_applied", &h);
    h.update(Action::Command)
        .type_text("frobnicate")
        .key(KeyCode::Enter);
    snap("command_unknown", &h);
    h.update(Action::Filter)
        .type_text(" status:bogus")
        .key(KeyCode::Enter);
    snap("filter_error", &h);
}

/// A source whose store is broken: every read fails with a clear error.
struct BrokenStore;

impl ReviewSource for BrokenStore {
    fn queue_page(
        &mut self,
        filter: &Filter,
        _: Sort,
        _: usize,
        _: usize,
    ) -> anyhow::Result<QueuePage> {
        if filter.is_empty() {
            let row = QueueRow {
                id: ItemId("q-0001".into()),
                tenant: "acme".into(),
                task: "deploy-api".into(),
                status: Status::Quarantined,
                outcome: cq::review::source::Outcome::Finding,
                severity: cq::review::source::Severity::Finding,
                main_reason: "secret.aws_access_key".into(),
                created_unix: FAKE_NOW - 60,
                anomaly_count: 0,
            };
            return Ok(QueuePage {
                rows: vec![row],
                total: 1,
                counts_by_status: Default::default(),
            });
        }
        anyhow::bail!("database is locked; close other writers of \"cq.db\" and retry")
    }
    fn item(&mut self, id: &ItemId) -> anyhow::Result<ItemDetail> {
        anyhow::bail!("item \"{id}\" has no report: the store is corrupt at row 7")
    }
    fn preview(&mut self, id: &ItemId) -> anyhow::Result<ItemPreview> {
        anyhow::bail!("item \"{id}\" has no report: the store is corrupt at row 7")
    }
    fn reason_counts(&mut self, _: &Filter) -> anyhow::Result<Vec<(String, usize)>> {
        anyhow::bail!("database is locked; close other writers of \"cq.db\" and retry")
    }
    fn dashboard(&mut self) -> anyhow::Result<Dashboard> {
        anyhow::bail!("database is locked; close other writers of \"cq.db\" and retry")
    }
    fn rerun(&mut self, _: &ItemId) -> anyhow::Result<RerunOutcome> {
        anyhow::bail!("policy \"default\" is missing")
    }
    fn decide(&mut self, _: &ItemId, _: &DecisionRequest) -> Result<Receipt, DecisionRefusal> {
        Err(DecisionRefusal::Failed("disk full".into()))
    }
    fn reveal(&mut self, _: &ItemId, _: &str, _: &str) -> anyhow::Result<String> {
        anyhow::bail!("audit log is read-only")
    }
    fn audit_status(&mut self, _: &ItemId) -> anyhow::Result<AuditView> {
        anyhow::bail!("audit log missing")
    }
    fn reason_codes(&mut self) -> anyhow::Result<Vec<ReasonCode>> {
        Ok(Vec::new())
    }
    fn fork(&self) -> anyhow::Result<Box<dyn ReviewSource>> {
        Ok(Box::new(BrokenStore))
    }
}

#[test]
fn errors_from_the_store_are_shown_in_place() {
    let mut h = Headless::new(BrokenStore, options(false, "alice"), 100, 12).unwrap();
    h.update(Action::Open);
    insta::assert_snapshot!("detail_load_error", h.text().unwrap());
    h.update(Action::Audit);
    insta::assert_snapshot!("audit_error", h.text().unwrap());
    h.update(Action::Back).update(Action::Back);
    h.update(Action::Filter)
        .type_text("acme")
        .key(KeyCode::Enter);
    insta::assert_snapshot!("queue_load_error", h.text().unwrap());
}

#[test]
fn summary_highlights_have_a_style_per_kind() {
    for (id, name) in [
        ("q-0001", "summary_secret_mask_styled"),
        ("q-0002", "summary_conflict_styled"),
        ("q-0003", "summary_authority_styled"),
        ("q-0004", "summary_pinned_styled"),
    ] {
        let mut h = ui(90, 10);
        open_detail(&mut h, id);
        h.update(Action::Zoom);
        snap_styled(name, &h);
    }
}
