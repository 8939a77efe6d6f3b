//! The diff and audit screens' views.
//!
//! Diffs use the minus / zero / plus vocabulary of [`crate::diff`]: every line starts with
//! `-`, ` ` or `+` (so colour is never the only signal) and changed words are emphasised.
//! Diffed text is untrusted, so each run goes through the sanitizer; masked secrets are
//! replaced before diffing so a diff can never show one.

use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::{inner, text, PaneView, Scroller};
use crate::diff::{line_diff, word_diff, DiffSegment, LineDiff, LineTag};
use crate::review::app::{changed_since, App, AuditState, DiffKind, RerunState};
use crate::review::source::{ChainStatus, ItemDetail, SpanKind};
use crate::review::theme::{Role, Theme};

fn tag_roles(tag: LineTag) -> (Role, Role) {
    match tag {
        LineTag::Minus => (Role::Removed, Role::RemovedEmph),
        LineTag::Plus => (Role::Added, Role::AddedEmph),
        LineTag::Zero => (Role::Text, Role::Text),
    }
}

fn segments_line(tag: LineTag, segments: &[DiffSegment], theme: &Theme) -> Line<'static> {
    let (plain, emph) = tag_roles(tag);
    let mut spans = vec![Span::styled(
        format!("{} ", tag.glyph()),
        theme.style(plain),
    )];
    for seg in segments {
        let role = if seg.emphasised { emph } else { plain };
        spans.extend(text::untrusted_inline(&seg.text, theme.style(role), theme));
    }
    Line::from(spans)
}

fn line_diff_lines(diff: &LineDiff, theme: &Theme) -> Vec<Line<'static>> {
    let mut out = vec![Line::styled(
        format!("{} removed, {} added", diff.removed, diff.added),
        theme.style(Role::Dim),
    )];
    out.extend(
        diff.lines
            .iter()
            .map(|l| segments_line(l.tag, &l.segments, theme)),
    );
    out
}

/// What a rerun changed, named before the report's line diff: each check whose status or
/// code changed, then each constraint whose status changed.
fn changed_first(before: &ItemDetail, after: &ItemDetail, theme: &Theme) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    for check in &after.checks {
        let old = before.checks.iter().find(|c| c.check == check.check);
        let same = old.is_some_and(|o| o.status == check.status && o.code == check.code);
        if same {
            continue;
        }
        let was = old.map_or("absent".to_owned(), |o| {
            format!("{} {}", o.status.word(), o.code.as_deref().unwrap_or(""))
        });
        let now = format!(
            "{} {}",
            check.status.word(),
            check.code.as_deref().unwrap_or("")
        );
        let mut spans = vec![
            Span::styled("Δ check ", theme.style(Role::Warning)),
            Span::styled(check.check.word().to_owned(), theme.style(Role::Title)),
        ];
        spans.extend(text::untrusted_inline(
            &format!(": {} → {}", was.trim_end(), now.trim_end()),
            Style::default(),
            theme,
        ));
        out.push(Line::from(spans));
    }
    for (row, was) in after
        .constraints
        .iter()
        .zip(changed_since(Some(before), after))
    {
        let Some(was) = was else { continue };
        let mut spans = vec![Span::styled("Δ constraint ", theme.style(Role::Warning))];
        spans.extend(text::untrusted_inline(
            &row.id,
            theme.style(Role::Title),
            theme,
        ));
        spans.extend(text::untrusted_inline(
            &format!(": {} → {}", was.word(), row.status.word()),
            Style::default(),
            theme,
        ));
        out.push(Line::from(spans));
    }
    if out.is_empty() {
        out.push(Line::styled(
            "no check and no constraint changed",
            theme.style(Role::Dim),
        ));
    }
    out.push(Line::default());
    out
}

/// The summary with masked secrets replaced by a placeholder (for diffing).
pub fn masked_summary(item: &ItemDetail) -> String {
    let mut spans: Vec<_> = item
        .summary_spans
        .iter()
        .filter_map(|s| match &s.kind {
            SpanKind::MaskedSecret { rule_id, .. } => Some((s.range.clone(), rule_id.clone())),
            _ => None,
        })
        .collect();
    let text = &item.summary_text;
    spans.retain(|(r, _)| {
        r.start <= r.end && text.is_char_boundary(r.start) && text.is_char_boundary(r.end)
    });
    spans.sort_by_key(|(r, _)| r.start);
    let mut out = String::new();
    let mut at = 0;
    for (range, rule) in spans {
        if range.start < at {
            continue;
        }
        out.push_str(item.summary_text.get(at..range.start).unwrap_or_default());
        out.push_str(&format!("[secret {rule} ••••]"));
        at = range.end;
    }
    out.push_str(item.summary_text.get(at..).unwrap_or_default());
    out
}

fn diff_lines(app: &App, item: &ItemDetail, kind: DiffKind, theme: &Theme) -> Vec<Line<'static>> {
    match kind {
        DiffKind::Summary => summary_diff(item, theme),
        DiffKind::Claims => claims_diff(item, theme),
        DiffKind::Report => report_diff(app, item, theme),
        DiffKind::Pinned => pinned_diff(item, theme),
    }
}

/// The previous summary of the task against this one (secrets masked).
fn summary_diff(item: &ItemDetail, theme: &Theme) -> Vec<Line<'static>> {
    let dim = theme.style(Role::Dim);
    match &item.previous_summary {
        None => vec![Line::styled("no previous summary of this task", dim)],
        Some(previous) => {
            let mut out = vec![Line::styled("- previous summary   + this summary", dim)];
            out.extend(line_diff_lines(
                &line_diff(previous, &masked_summary(item)),
                theme,
            ));
            out
        }
    }
}

/// Each claim's predicate against the canonical one.
fn claims_diff(item: &ItemDetail, theme: &Theme) -> Vec<Line<'static>> {
    let dim = theme.style(Role::Dim);
    let mut out = vec![Line::styled(
        "- the summary's predicate   + the canonical predicate",
        dim,
    )];
    for claim in &item.claims {
        let d = word_diff(&claim.preserved_predicate, &claim.canonical_predicate);
        let mut head = vec![Span::styled("claim ", theme.style(Role::Title))];
        head.extend(text::untrusted_inline(
            &claim.constraint_id,
            theme.style(Role::Title),
            theme,
        ));
        head.push(if d.is_unchanged() {
            Span::styled("  = identical", theme.style(Role::Ok))
        } else {
            Span::styled("  ≠ differs", theme.style(Role::Warning))
        });
        out.push(Line::from(head));
        out.push(segments_line(LineTag::Minus, &d.old, theme));
        out.push(segments_line(LineTag::Plus, &d.new, theme));
    }
    out
}

/// The policy of the item's current report, and a warning when it is not the policy of its
/// first check.
fn report_policy(item: &ItemDetail, theme: &Theme) -> Vec<Line<'static>> {
    let mut out = vec![Line::from(text::untrusted_inline(
        &format!("current report under policy {}", item.policy),
        theme.style(Role::Dim),
        theme,
    ))];
    if let Some(first) = &item.first_check_policy_sha256 {
        out.push(Line::from(text::untrusted_inline(
            &format!(
                "⚠ a rerun under another policy replaced its report: its first check was under policy sha256 {}",
                first.get(..16).unwrap_or(first)
            ),
            theme.style(Role::Warning),
            theme,
        )));
    }
    out
}

/// The report before the rerun against after it, changed checks first.
fn report_diff(app: &App, item: &ItemDetail, theme: &Theme) -> Vec<Line<'static>> {
    let mut out = report_policy(item, theme);
    out.extend(rerun_diff(app, item, theme));
    out
}

/// The last rerun of the open item: which policy it ran under, then what changed.
fn rerun_diff(app: &App, item: &ItemDetail, theme: &Theme) -> Vec<Line<'static>> {
    let dim = theme.style(Role::Dim);
    match app.detail.as_ref().map(|d| (&d.rerun, &d.before_rerun)) {
        Some((RerunState::Done(outcome), before)) => {
            // Which policy the rerun used comes first: a rerun under another policy than the
            // item's own is a different check, and says so in the warning style.
            let role = if outcome.policy_overridden {
                Role::Warning
            } else {
                Role::Dim
            };
            let mut out = vec![Line::from(text::untrusted_inline(
                &format!("rerun {}", outcome.policy),
                theme.style(role),
                theme,
            ))];
            out.extend(
                before
                    .as_deref()
                    .map(|b| changed_first(b, item, theme))
                    .unwrap_or_default(),
            );
            out.push(Line::styled(
                if outcome.changed {
                    "- report before the rerun   + report after (changed)"
                } else {
                    "- report before the rerun   + report after (unchanged)"
                },
                dim,
            ));
            out.extend(line_diff_lines(
                &line_diff(&outcome.before_report, &outcome.after_report),
                theme,
            ));
            out
        }
        Some((RerunState::Running { .. }, _)) => {
            vec![Line::from(format!(
                "{} rerunning the checks…",
                super::spinner(app)
            ))]
        }
        Some((RerunState::Failed(e), _)) => {
            let mut spans = vec![Span::styled("✗ rerun failed: ", theme.style(Role::Error))];
            spans.extend(text::untrusted_inline(e, theme.style(Role::Error), theme));
            vec![Line::from(spans)]
        }
        _ => vec![Line::styled(
            "no rerun yet: press r to rerun the checks, then come back here",
            dim,
        )],
    }
}

/// Each pinned constraint against what the returned context carries.
fn pinned_diff(item: &ItemDetail, theme: &Theme) -> Vec<Line<'static>> {
    let dim = theme.style(Role::Dim);
    let mut out = vec![Line::styled(
        "- pinned constraint   + what the returned context carries",
        dim,
    )];
    for pinned in &item.pinned {
        let mut head = vec![Span::styled("pinned ", theme.style(Role::Title))];
        head.extend(text::untrusted_inline(
            &pinned.constraint_id,
            theme.style(Role::Title),
            theme,
        ));
        match &pinned.returned {
            None => {
                head.push(Span::styled(
                    "  ✗ MISSING from the returned context",
                    theme.style(Role::Error),
                ));
                out.push(Line::from(head));
                out.push(segments_line(
                    LineTag::Minus,
                    &[DiffSegment {
                        text: pinned.text.clone(),
                        emphasised: true,
                    }],
                    theme,
                ));
            }
            Some(returned) => {
                let d = word_diff(&pinned.text, returned);
                head.push(if d.is_unchanged() {
                    Span::styled("  = carried byte for byte", theme.style(Role::Ok))
                } else {
                    Span::styled("  ✗ altered", theme.style(Role::Error))
                });
                out.push(Line::from(head));
                out.push(segments_line(LineTag::Minus, &d.old, theme));
                out.push(segments_line(LineTag::Plus, &d.new, theme));
            }
        }
    }
    out
}

fn single_pane(
    scroller: Scroller,
    area: Rect,
    title: Line<'static>,
    lines: Vec<Line<'static>>,
    scroll: usize,
    theme: &Theme,
) -> PaneView {
    let (width, height) = inner(area);
    let lines = text::wrap(lines, width);
    let scroll = scroll.min(lines.len().saturating_sub(height));
    PaneView {
        scroller,
        area,
        title,
        lines,
        scroll,
        focused: true,
        border: theme.style(Role::Focus),
    }
}

/// The diff screen.
pub fn diff_pane(app: &App, theme: &Theme, area: Rect) -> PaneView {
    let Some(detail) = app.detail.as_ref() else {
        return single_pane(
            Scroller::Diff,
            area,
            Line::raw(" Diffs "),
            Vec::new(),
            0,
            theme,
        );
    };
    let mut title = vec![Span::styled(" Diffs: ", theme.style(Role::Title))];
    for kind in DiffKind::ALL {
        if kind == detail.diff {
            title.push(Span::styled(
                format!("[{}]", kind.title()),
                theme.style(Role::Focus),
            ));
        } else {
            title.push(Span::styled(
                format!(" {} ", kind.title()),
                theme.style(Role::Dim),
            ));
        }
        title.push(Span::raw(" "));
    }
    let lines = match &detail.item {
        Some(item) => diff_lines(app, item, detail.diff, theme),
        None => vec![Line::from(format!(
            "{} loading the item…",
            super::spinner(app)
        ))],
    };
    single_pane(
        Scroller::Diff,
        area,
        Line::from(title),
        lines,
        detail.diff_scroll,
        theme,
    )
}

/// The audit screen: the item's receipts and whether the log verifies.
pub fn audit_pane(app: &App, theme: &Theme, area: Rect) -> PaneView {
    let title = Line::from(Span::styled(
        " Audit: receipts and chain ",
        theme.style(Role::Title),
    ));
    let Some(detail) = app.detail.as_ref() else {
        return single_pane(Scroller::Audit, area, title, Vec::new(), 0, theme);
    };
    let lines = match &detail.audit {
        AuditState::Idle | AuditState::Loading { .. } => vec![Line::from(format!(
            "{} verifying the audit log…",
            super::spinner(app)
        ))],
        AuditState::Failed(e) => {
            let mut spans = vec![Span::styled(
                "✗ could not read the audit log: ",
                theme.style(Role::Error),
            )];
            spans.extend(text::untrusted_inline(e, theme.style(Role::Error), theme));
            vec![Line::from(spans)]
        }
        AuditState::Ready(audit) => {
            let mut out = vec![match &audit.chain {
                ChainStatus::Verified {
                    entries,
                    checkpoint,
                } => Line::styled(
                    format!(
                        "✓ audit verify holds: {entries} entries, checkpoint {}",
                        &checkpoint.chars().take(16).collect::<String>()
                    ),
                    theme.style(Role::Ok),
                ),
                ChainStatus::Broken { seq, reason } => {
                    let mut spans = vec![Span::styled(
                        format!("✗ audit verify FAILS at entry {seq}: "),
                        theme.style(Role::Error),
                    )];
                    spans.extend(text::untrusted_inline(
                        reason,
                        theme.style(Role::Error),
                        theme,
                    ));
                    Line::from(spans)
                }
                ChainStatus::Unknown(why) => {
                    let mut spans = vec![Span::styled(
                        "? audit verify could not run: ",
                        theme.style(Role::Warning),
                    )];
                    spans.extend(text::untrusted_inline(
                        why,
                        theme.style(Role::Warning),
                        theme,
                    ));
                    Line::from(spans)
                }
            }];
            out.push(Line::default());
            if audit.receipts.is_empty() {
                out.push(Line::styled(
                    "no receipts for this item",
                    theme.style(Role::Dim),
                ));
            }
            for r in &audit.receipts {
                let signed = if r.signature.is_some() {
                    "signed"
                } else {
                    "UNSIGNED"
                };
                let mut head = vec![Span::styled(
                    format!("#{} ", r.seq),
                    theme.style(Role::Title),
                )];
                head.extend(text::untrusted_inline(
                    &r.kind,
                    theme.style(Role::Title),
                    theme,
                ));
                head.push(Span::styled(
                    format!(
                        "  sha256 {}  {signed}",
                        &r.sha256.chars().take(16).collect::<String>()
                    ),
                    theme.style(Role::Dim),
                ));
                out.push(Line::from(head));
                let mut body = vec![Span::raw("  ")];
                body.extend(text::untrusted_inline(&r.body, Style::default(), theme));
                out.push(Line::from(body));
            }
            out
        }
    };
    single_pane(
        Scroller::Audit,
        area,
        title,
        lines,
        detail.audit_scroll,
        theme,
    )
}
