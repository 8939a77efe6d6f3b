//! Overlays that take the keys: the decision dialog, the reveal confirmation, the filter and
//! command lines, and help.
//!
//! The decision dialog walks Edit (reason and note) → Review (exactly what will be recorded)
//! → Anomalies (one more confirmation when the sanitizer found anything) → Submitting →
//! Finished (the receipt, or the refusal explained in place). Nothing is sent before the
//! reviewer has seen the Review stage.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::{App, Effect, Overlay};
use crate::review::action::Action;
use crate::review::source::{
    DecisionKind, DecisionRefusal, DecisionRequest, ItemId, PendingApproval, ReasonCode, Receipt,
};
use crate::review::worker::Request;

/// A one-line text field (cursor always at the end).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Input {
    pub text: String,
}

impl Input {
    pub fn with_text(text: &str) -> Input {
        Input { text: text.into() }
    }

    /// Applies an editing key; returns whether it was one.
    fn edit(&mut self, key: &KeyEvent) -> bool {
        match key.code {
            KeyCode::Char('u') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                self.text.clear();
                true
            }
            KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                if !c.is_control() && self.text.chars().count() < 500 {
                    self.text.push(c);
                }
                true
            }
            KeyCode::Backspace => {
                self.text.pop();
                true
            }
            _ => false,
        }
    }
}

/// Which field of the decision dialog has the keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DialogField {
    Reason,
    Note,
}

/// Where the decision dialog is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DialogStage {
    Edit,
    Review,
    Anomalies,
    Submitting,
    Finished(Vec<(ItemId, Result<Receipt, DecisionRefusal>)>),
}

/// Release or reject one item, or reject every tagged one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecisionDialog {
    pub targets: Vec<ItemId>,
    pub kind: DecisionKind,
    /// Reason codes allowed for `kind`.
    pub reasons: Vec<ReasonCode>,
    pub selected_reason: usize,
    pub note: Input,
    pub field: DialogField,
    pub stage: DialogStage,
    /// Sanitizer anomalies across the targets.
    pub anomalies: usize,
    /// The report the reviewer saw (single item only).
    pub report_sha256: Option<String>,
    pub approvals: Vec<PendingApproval>,
}

impl DecisionDialog {
    pub fn new(
        targets: Vec<ItemId>,
        kind: DecisionKind,
        codes: &[ReasonCode],
        anomalies: usize,
    ) -> DecisionDialog {
        DecisionDialog {
            targets,
            kind,
            reasons: codes.iter().filter(|c| c.kind == kind).cloned().collect(),
            selected_reason: 0,
            note: Input::default(),
            field: DialogField::Reason,
            stage: DialogStage::Edit,
            anomalies,
            report_sha256: None,
            approvals: Vec::new(),
        }
    }

    /// The request that will be recorded, as the Review stage shows it.
    pub fn request(&self, reviewer: &str) -> Option<DecisionRequest> {
        let reason = self.reasons.get(self.selected_reason)?;
        Some(DecisionRequest {
            kind: self.kind,
            reason_code: reason.code.clone(),
            note: self.note.text.trim().to_string(),
            reviewer: reviewer.into(),
            report_sha256: self.report_sha256.clone().unwrap_or_default(),
            anomalies_acknowledged: self.anomalies > 0,
        })
    }
}

/// "Reveal this secret?" with the finding it is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RevealPrompt {
    pub finding_id: String,
    pub rule_id: String,
}

impl App {
    /// Keys typed into a text field; `None` lets the keymap have the key.
    pub(crate) fn on_text_key(&mut self, key: KeyEvent) -> Option<Vec<Effect>> {
        let overlay = self.overlay.as_mut()?;
        match overlay {
            Overlay::Filter(input) => {
                match key.code {
                    KeyCode::Esc => {
                        self.overlay = None;
                        return Some(self.reasons_if_stale());
                    }
                    KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                        self.overlay = None;
                        return Some(self.reasons_if_stale());
                    }
                    KeyCode::Enter => {
                        let text = input.text.clone();
                        self.overlay = None;
                        return Some(self.set_filter(&text));
                    }
                    _ => {
                        if input.edit(&key) {
                            let text = input.text.clone();
                            // Filter as you type; a half-typed predicate waits for more.
                            if crate::review::filter::Filter::parse(&text).is_ok() {
                                return Some(self.set_filter(&text));
                            }
                        }
                    }
                }
                Some(Vec::new())
            }
            Overlay::Command(input) => {
                match key.code {
                    KeyCode::Esc => self.overlay = None,
                    KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                        self.overlay = None;
                    }
                    KeyCode::Enter => {
                        let line = input.text.clone();
                        self.overlay = None;
                        return Some(self.run_command(&line));
                    }
                    _ => {
                        input.edit(&key);
                    }
                }
                Some(Vec::new())
            }
            Overlay::Decision(dialog)
                if dialog.stage == DialogStage::Edit && dialog.field == DialogField::Note =>
            {
                match key.code {
                    KeyCode::Esc | KeyCode::Enter | KeyCode::Tab | KeyCode::BackTab => None,
                    _ => {
                        dialog.note.edit(&key);
                        Some(Vec::new())
                    }
                }
            }
            Overlay::Reveal(_) => match key.code {
                KeyCode::Char('y') | KeyCode::Char('Y') => {
                    Some(self.on_overlay_action(Action::Open))
                }
                KeyCode::Char('n') | KeyCode::Char('N') => {
                    Some(self.on_overlay_action(Action::Back))
                }
                _ => None,
            },
            _ => None,
        }
    }

    pub(crate) fn on_unmapped_key(&mut self, _key: KeyEvent) -> Vec<Effect> {
        Vec::new()
    }

    pub(crate) fn on_overlay_action(&mut self, action: Action) -> Vec<Effect> {
        let Some(overlay) = self.overlay.as_mut() else {
            return Vec::new();
        };
        match overlay {
            Overlay::Help | Overlay::Filter(_) | Overlay::Command(_) => {
                if matches!(
                    action,
                    Action::Back | Action::Help | Action::Quit | Action::Open
                ) {
                    self.overlay = None;
                }
                Vec::new()
            }
            Overlay::Reveal(_) => self.on_reveal_action(action),
            Overlay::Decision(_) => self.on_dialog_action(action),
        }
    }

    /// The reveal prompt: `enter` asks the store to reveal (an audited act), `esc` cancels.
    fn on_reveal_action(&mut self, action: Action) -> Vec<Effect> {
        let reviewer = self.options.reviewer.clone();
        let Some(Overlay::Reveal(prompt)) = self.overlay.as_mut() else {
            return Vec::new();
        };
        match action {
            Action::Open => {
                let finding_id = prompt.finding_id.clone();
                self.overlay = None;
                match self.detail.as_ref() {
                    Some(detail) => vec![Effect::Request(Request::Reveal {
                        id: detail.id.clone(),
                        finding_id,
                        reviewer,
                    })],
                    None => Vec::new(),
                }
            }
            Action::Back | Action::Quit => {
                self.overlay = None;
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    /// The decision dialog, stage by stage: edit, review, confirm anomalies, submit, results.
    fn on_dialog_action(&mut self, action: Action) -> Vec<Effect> {
        let reviewer = self.options.reviewer.clone();
        let Some(Overlay::Decision(dialog)) = self.overlay.as_mut() else {
            return Vec::new();
        };
        match (&dialog.stage, action) {
            (DialogStage::Submitting, _) => Vec::new(),
            (DialogStage::Finished(_), Action::Open | Action::Back | Action::Quit) => {
                self.overlay = None;
                Vec::new()
            }
            (DialogStage::Edit, Action::Back | Action::Quit) => {
                self.overlay = None;
                Vec::new()
            }
            (DialogStage::Review | DialogStage::Anomalies, Action::Back) => {
                dialog.stage = DialogStage::Edit;
                Vec::new()
            }
            (DialogStage::Edit, Action::NextPane | Action::PrevPane) => {
                dialog.field = match dialog.field {
                    DialogField::Reason => DialogField::Note,
                    DialogField::Note => DialogField::Reason,
                };
                Vec::new()
            }
            (DialogStage::Edit, Action::MoveDown) if !dialog.reasons.is_empty() => {
                dialog.selected_reason = (dialog.selected_reason + 1) % dialog.reasons.len();
                Vec::new()
            }
            (DialogStage::Edit, Action::MoveUp) if !dialog.reasons.is_empty() => {
                let n = dialog.reasons.len();
                dialog.selected_reason = (dialog.selected_reason + n - 1) % n;
                Vec::new()
            }
            (DialogStage::Edit, Action::Open) => {
                if dialog.reasons.is_empty() {
                    self.error(
                        "no reason code allows this decision; check the policy's review rules",
                    );
                } else {
                    dialog.stage = DialogStage::Review;
                }
                Vec::new()
            }
            (DialogStage::Review, Action::Open) if dialog.anomalies > 0 => {
                dialog.stage = DialogStage::Anomalies;
                Vec::new()
            }
            (DialogStage::Review | DialogStage::Anomalies, Action::Open) => {
                let Some(request) = dialog.request(&reviewer) else {
                    return Vec::new();
                };
                dialog.stage = DialogStage::Submitting;
                let mut targets = dialog.targets.clone();
                let effect = if targets.len() == 1 && dialog.report_sha256.is_some() {
                    Request::Decide {
                        id: targets.remove(0),
                        request,
                    }
                } else {
                    Request::DecideMany {
                        ids: targets,
                        request,
                    }
                };
                vec![Effect::Request(effect)]
            }
            _ => Vec::new(),
        }
    }

    pub(crate) fn on_decided(
        &mut self,
        results: Vec<(ItemId, Result<Receipt, DecisionRefusal>)>,
    ) -> Vec<Effect> {
        let decided: Vec<ItemId> = results
            .iter()
            .filter(|(_, r)| r.is_ok())
            .map(|(id, _)| id.clone())
            .collect();
        for id in &decided {
            self.queue.tagged.remove(id);
        }
        match self.overlay.as_mut() {
            Some(Overlay::Decision(dialog)) if dialog.stage == DialogStage::Submitting => {
                dialog.stage = DialogStage::Finished(results);
            }
            _ => self.info(format!("{} decision(s) recorded", decided.len())),
        }
        let mut effects = self.reload_queue();
        effects.extend(self.reload_reasons());
        if let Some(detail) = self.detail.as_mut() {
            let generation = self.next_generation + 1;
            self.next_generation = generation;
            detail.generation = generation;
            effects.push(Effect::Request(Request::Item {
                generation,
                id: detail.id.clone(),
            }));
        }
        effects
    }

    pub(crate) fn on_revealed(
        &mut self,
        id: ItemId,
        finding_id: String,
        result: Result<String, String>,
    ) {
        match result {
            Ok(value) => {
                if let Some(detail) = self.detail.as_mut().filter(|d| d.id == id) {
                    detail.revealed.insert(finding_id.clone(), value);
                    self.info(format!(
                        "revealed {finding_id}; the reveal is in the audit log"
                    ));
                }
            }
            Err(e) => self.error(format!("could not reveal {finding_id}: {e}")),
        }
    }

    /// Fills the dialog from `:release REASON NOTE…`.
    pub(crate) fn prefill_dialog(&mut self, reason: Option<&str>, note: &str) {
        if let Some((_, r, n)) = self
            .detail
            .as_mut()
            .and_then(|d| d.pending_decision.as_mut())
        {
            // The dialog opens when the item arrives; fill it then.
            *r = reason.map(str::to_string);
            *n = note.to_string();
            return;
        }
        if let Some(Overlay::Decision(dialog)) = self.overlay.as_mut() {
            if let Some(code) = reason {
                match dialog.reasons.iter().position(|r| r.code == code) {
                    Some(i) => dialog.selected_reason = i,
                    None => {
                        let known: Vec<&str> =
                            dialog.reasons.iter().map(|r| r.code.as_str()).collect();
                        let msg =
                            format!("unknown reason \"{code}\"; use one of {}", known.join(", "));
                        self.error(msg);
                        return;
                    }
                }
            }
            if !note.is_empty() {
                dialog.note.text = note.into();
            }
        }
    }
}
