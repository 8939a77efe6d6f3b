//! Views of the overlays: help (generated from the keymap table), the decision dialog in each
//! stage, and the reveal confirmation.

use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::{text, OverlayView};
use crate::review::action::Action;
use crate::review::app::{App, DecisionDialog, DialogField, DialogStage, Overlay};
use crate::review::source::{DecisionKind, DecisionRefusal, ItemId, Receipt};
use crate::review::theme::{Role, Theme};

/// A rectangle of at most `width` × `height` centred in `area`.
pub fn centred(area: Rect, width: u16, height: u16) -> Rect {
    let w = width.min(area.width);
    let h = height.min(area.height);
    Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    )
}

pub fn overlay_view(app: &App, theme: &Theme, area: Rect) -> Option<OverlayView> {
    let (title, lines, role) = match app.overlay.as_ref()? {
        Overlay::Help => {
            let lines = help_lines(app, theme);
            let lines = if lines.len() + 2 > usize::from(area.height) {
                two_columns(lines)
            } else {
                lines
            };
            (" Help: keys ".to_string(), lines, Role::Focus)
        }
        Overlay::Decision(dialog) => {
            let role = match dialog.kind {
                DecisionKind::Release => Role::Ok,
                DecisionKind::Reject => Role::Error,
            };
            (dialog_title(dialog), dialog_lines(app, dialog, theme), role)
        }
        Overlay::Reveal(prompt) => {
            let mut who = vec![Span::raw("Reveal the value of finding ")];
            who.extend(text::untrusted_inline(
                &prompt.finding_id,
                theme.style(Role::Title),
                theme,
            ));
            who.push(Span::raw(" ("));
            who.extend(text::untrusted_inline(
                &prompt.rule_id,
                Style::default(),
                theme,
            ));
            who.push(Span::raw(")?"));
            let lines = vec![
                Line::from(who),
                Line::default(),
                Line::raw("The secret will be shown on screen, and the reveal is written to"),
                Line::from(vec![
                    Span::raw("the audit log as reviewer "),
                    Span::styled(
                        format!("\"{}\"", app.options.reviewer),
                        theme.style(Role::Title),
                    ),
                    Span::raw("."),
                ]),
                Line::default(),
                keys_line(&[("y", "reveal"), ("n/esc", "cancel")], theme),
            ];
            (
                " Reveal a secret (audited) ".to_string(),
                lines,
                Role::Warning,
            )
        }
        Overlay::Filter(_) | Overlay::Command(_) => return None,
    };
    let width = lines
        .iter()
        .map(Line::width)
        .max()
        .unwrap_or(20)
        .max(title.len()) as u16
        + 4;
    let height = lines.len() as u16 + 2;
    let rect = centred(area, width.max(40), height);
    Some(OverlayView {
        area: rect,
        title: Line::styled(title, theme.style(Role::Title)),
        lines: text::wrap(lines, usize::from(rect.width.saturating_sub(2))),
        border: theme.style(role),
    })
}

fn keys_line(pairs: &[(&str, &str)], theme: &Theme) -> Line<'static> {
    let mut spans = Vec::new();
    for (key, what) in pairs {
        spans.push(Span::styled(key.to_string(), theme.style(Role::Key)));
        spans.push(Span::raw(format!(" {what}   ")));
    }
    Line::from(spans)
}

/// Folds a long list into two columns side by side (for short terminals).
fn two_columns(lines: Vec<Line<'static>>) -> Vec<Line<'static>> {
    let half = lines.len().div_ceil(2);
    let width = lines.iter().take(half).map(Line::width).max().unwrap_or(0) + 3;
    let mut right = lines.clone().into_iter().skip(half);
    lines
        .into_iter()
        .take(half)
        .map(|mut left| {
            let pad = width.saturating_sub(left.width());
            left.spans.push(Span::raw(" ".repeat(pad)));
            if let Some(r) = right.next() {
                left.spans.extend(r.spans);
            }
            left
        })
        .collect()
}

fn help_lines(app: &App, theme: &Theme) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    for action in Action::ALL {
        if app.options.readonly && action.decides() {
            continue;
        }
        let keys: Vec<String> = app
            .keymap
            .keys_of(action)
            .iter()
            .map(ToString::to_string)
            .collect();
        out.push(Line::from(vec![
            Span::styled(format!("{:<16}", keys.join(" ")), theme.style(Role::Key)),
            Span::raw(action.describe()),
        ]));
    }
    if app.options.readonly {
        out.push(Line::styled(
            "read-only: decision keys are hidden",
            theme.style(Role::Warning),
        ));
    }
    out.push(Line::styled(
        "⟨…⟩ badges stand for hidden or control characters in untrusted text",
        theme.style(Role::Dim),
    ));
    out
}

fn dialog_title(dialog: &DecisionDialog) -> String {
    let what = match dialog.kind {
        DecisionKind::Release => "Release",
        DecisionKind::Reject => "Reject",
    };
    if dialog.targets.len() == 1 {
        format!(" {what} {} ", dialog.targets[0])
    } else {
        format!(" {what} {} tagged items ", dialog.targets.len())
    }
}

fn refusal_line(refusal: &DecisionRefusal, theme: &Theme) -> Vec<Span<'static>> {
    let (glyph, role) = match refusal {
        DecisionRefusal::NeedsSecondApprover { .. } => ("◐ ", Role::Warning),
        _ => ("✗ refused: ", Role::Error),
    };
    let mut spans = vec![Span::styled(glyph, theme.style(role))];
    spans.extend(text::untrusted_inline(
        &refusal.to_string(),
        theme.style(role),
        theme,
    ));
    spans
}

fn dialog_lines(app: &App, dialog: &DecisionDialog, theme: &Theme) -> Vec<Line<'static>> {
    let dim = theme.style(Role::Dim);
    let mut out = Vec::new();
    if dialog.targets.len() > 1 {
        let ids: Vec<String> = dialog.targets.iter().map(|i| i.0.clone()).collect();
        let mut spans = vec![Span::styled("items: ", dim)];
        spans.extend(text::untrusted_inline(
            &ids.join(", "),
            Style::default(),
            theme,
        ));
        out.push(Line::from(spans));
    }
    for approval in &dialog.approvals {
        out.push(Line::styled(
            format!(
                "◐ pending approval: {} chose {} ({}); a second reviewer must agree",
                approval.reviewer,
                approval.kind.word(),
                approval.reason_code
            ),
            theme.style(Role::Warning),
        ));
    }
    match &dialog.stage {
        DialogStage::Edit => edit_lines(dialog, theme, &mut out),
        DialogStage::Review | DialogStage::Anomalies => review_lines(app, dialog, theme, &mut out),
        DialogStage::Submitting => {
            out.push(Line::from(format!(
                "{} recording the decision…",
                super::spinner(app)
            )));
        }
        DialogStage::Finished(results) => finished_lines(results, theme, &mut out),
    }
    out
}

/// The editing stage: reason codes to pick from, the note, the keys.
fn edit_lines(dialog: &DecisionDialog, theme: &Theme, out: &mut Vec<Line<'static>>) {
    let dim = theme.style(Role::Dim);
    let focus = |f: DialogField| if dialog.field == f { "▶ " } else { "  " };
    out.push(Line::styled(
        format!("{}Reason code (↑/↓ pick)", focus(DialogField::Reason)),
        theme.style(Role::Title),
    ));
    if dialog.reasons.is_empty() {
        out.push(Line::styled(
            "    no reason code allows this decision",
            theme.style(Role::Error),
        ));
    }
    for (i, reason) in dialog.reasons.iter().enumerate() {
        let chosen = i == dialog.selected_reason;
        let line = Line::from(vec![
            Span::raw(if chosen { "    (•) " } else { "    ( ) " }),
            Span::styled(format!("{:<22}", reason.code), theme.style(Role::Key)),
            Span::raw(reason.summary.clone()),
        ]);
        out.push(if chosen {
            line.style(theme.style(Role::Selection))
        } else {
            line
        });
    }
    out.push(Line::styled(
        format!("{}Note (tab to switch)", focus(DialogField::Note)),
        theme.style(Role::Title),
    ));
    let mut note = vec![Span::raw("    ")];
    note.extend(text::untrusted_inline(
        &dialog.note.text,
        Style::default(),
        theme,
    ));
    if dialog.field == DialogField::Note {
        note.push(Span::styled("█", dim));
    }
    out.push(Line::from(note));
    if dialog.anomalies > 0 {
        out.push(Line::styled(
            format!(
                "⚠ {} sanitizer anomalies: you will be asked to confirm them",
                dialog.anomalies
            ),
            theme.style(Role::Warning),
        ));
    }
    out.push(keys_line(
        &[("enter", "review"), ("tab", "field"), ("esc", "cancel")],
        theme,
    ));
}

/// The review stage: exactly what will be recorded, and the anomalies to confirm.
fn review_lines(app: &App, dialog: &DecisionDialog, theme: &Theme, out: &mut Vec<Line<'static>>) {
    let dim = theme.style(Role::Dim);
    out.push(Line::styled(
        "This will be recorded:",
        theme.style(Role::Title),
    ));
    if let Some(r) = dialog.request(&app.options.reviewer) {
        let field = |k: &str, v: String| {
            let mut spans = vec![Span::styled(format!("  {k:<24}"), dim)];
            spans.extend(text::untrusted_inline(&v, Style::default(), theme));
            Line::from(spans)
        };
        out.push(field("decision", r.kind.word().into()));
        out.push(field("reason_code", r.reason_code));
        out.push(field(
            "note",
            if r.note.is_empty() {
                "(none)".into()
            } else {
                r.note
            },
        ));
        out.push(field("reviewer", r.reviewer));
        out.push(field(
            "report_sha256",
            if r.report_sha256.is_empty() {
                "each item's current report".into()
            } else {
                r.report_sha256
            },
        ));
        out.push(field(
            "anomalies_acknowledged",
            r.anomalies_acknowledged.to_string(),
        ));
    }
    if dialog.stage == DialogStage::Anomalies {
        out.push(Line::default());
        out.push(Line::styled(
            format!(
                "⚠ This decision covers {} sanitizer anomalies (hidden or control",
                dialog.anomalies
            ),
            theme.style(Role::Warning),
        ));
        out.push(Line::styled(
            "  characters shown as ⟨badges⟩). Confirm you inspected them.",
            theme.style(Role::Warning),
        ));
        out.push(keys_line(
            &[("enter", "confirm and record"), ("esc", "back")],
            theme,
        ));
    } else {
        out.push(keys_line(&[("enter", "record"), ("esc", "edit")], theme));
    }
}

/// The results: each item's receipt or the refusal.
fn finished_lines(
    results: &[(ItemId, Result<Receipt, DecisionRefusal>)],
    theme: &Theme,
    out: &mut Vec<Line<'static>>,
) {
    let dim = theme.style(Role::Dim);
    for (id, result) in results {
        let mut spans = vec![Span::styled(format!("{id}: "), theme.style(Role::Title))];
        match result {
            Ok(receipt) => {
                spans.push(Span::styled(
                    format!(
                        "✓ recorded, receipt #{} sha256 {} {}",
                        receipt.seq,
                        receipt.sha256.chars().take(16).collect::<String>(),
                        if receipt.signature.is_some() {
                            "signed"
                        } else {
                            "UNSIGNED"
                        }
                    ),
                    theme.style(Role::Ok),
                ));
                out.push(Line::from(spans));
                let mut body = vec![Span::raw("  ")];
                body.extend(text::untrusted_inline(&receipt.body, dim, theme));
                out.push(Line::from(body));
            }
            Err(refusal) => {
                spans.extend(refusal_line(refusal, theme));
                out.push(Line::from(spans));
            }
        }
    }
    out.push(keys_line(&[("enter/esc", "close")], theme));
}
