//! The detail screen's view: sources | summary | checks, side by side or stacked.
//!
//! The summary shows its spans by kind (masked secret, conflict, authority, pinned match) in
//! a style *and* with a legend line naming each one; masked secrets are replaced by a mask
//! unless revealed. The checks pane lists every check and constraint row; the selected one
//! is marked with `▶` as well as the selection style.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::text::{self, Highlight};
use super::{detail_pane_rects, inner, Body, FindingLines, PaneView, Scroller};
use crate::review::app::{findings, item_anomalies, App, DetailState, Pane, RerunState};
use crate::review::source::{CheckResult, CheckStatus, ItemDetail, SpanKind, Verification};
use crate::review::theme::{Role, Theme};

fn short(sha: &str) -> String {
    sha.chars().take(12).collect()
}

/// The line above an item's panes: id, tenant/task, status, outcome, reason, anomalies,
/// report digest and the rerun's state.
pub(super) fn title_line(app: &App, detail: &DetailState, theme: &Theme) -> Line<'static> {
    let mut spans = vec![Span::styled(
        format!(" {} ", detail.id),
        theme.style(Role::Title),
    )];
    let Some(item) = &detail.item else {
        return Line::from(spans);
    };
    let sep = || Span::styled(" · ", theme.style(Role::Dim));
    // Rare, and it changes what every check means: before the long tenant and task.
    if item.first_check_policy_sha256.is_some() {
        spans.push(Span::styled(
            "⚠ report under another policy than its check",
            theme.style(Role::Warning),
        ));
        spans.push(sep());
    }
    spans.extend(text::untrusted_inline(
        &item.tenant,
        Style::default(),
        theme,
    ));
    spans.push(Span::raw("/"));
    spans.extend(text::untrusted_inline(&item.task, Style::default(), theme));
    spans.push(sep());
    spans.push(Span::raw(item.status.word().to_uppercase()));
    spans.push(sep());
    spans.push(Span::styled(item.outcome.label(), theme.style(Role::Error)));
    if !item.main_reason.is_empty() {
        spans.push(sep());
        spans.extend(text::untrusted_inline(
            &item.main_reason,
            Style::default(),
            theme,
        ));
    }
    let anomalies = item_anomalies(item);
    spans.push(sep());
    if anomalies > 0 {
        spans.push(Span::styled(
            format!("⚠ {anomalies} anomalies"),
            theme.style(Role::Warning),
        ));
    } else {
        spans.push(Span::styled("no anomalies", theme.style(Role::Dim)));
    }
    spans.push(sep());
    spans.push(Span::styled(
        format!("report {}", short(&item.report_sha256)),
        theme.style(Role::Dim),
    ));
    let rerun = match &detail.rerun {
        RerunState::Idle => None,
        RerunState::Running { .. } => Some((
            format!("{} rerunning checks…", super::spinner(app)),
            Role::Warning,
        )),
        RerunState::Done(o) if o.policy_overridden => Some((
            "rerun under ANOTHER policy than its check's".into(),
            Role::Warning,
        )),
        RerunState::Done(o) if o.changed => Some(("rerun: report changed".into(), Role::Warning)),
        RerunState::Done(_) => Some(("rerun: unchanged".into(), Role::Ok)),
        RerunState::Failed(_) => Some(("✗ rerun failed".into(), Role::Error)),
    };
    if let Some((text, role)) = rerun {
        spans.push(sep());
        spans.push(Span::styled(text, theme.style(role)));
    }
    Line::from(spans)
}

/// Source messages: a header line per message, then its content.
fn sources_lines(
    item: &ItemDetail,
    theme: &Theme,
    width: usize,
) -> (Vec<Line<'static>>, Vec<(String, usize)>) {
    let mut out = Vec::new();
    let mut index = Vec::new();
    for message in &item.sources {
        index.push((message.message_id.clone(), out.len()));
        let mut header = vec![Span::styled(
            format!("[{}] ", message.role.word()),
            theme.style(Role::Title),
        )];
        header.extend(text::untrusted_inline(
            &message.message_id,
            theme.style(Role::Title),
            theme,
        ));
        header.push(Span::styled(
            format!("  sha256:{}", short(&message.sha256)),
            theme.style(Role::Dim),
        ));
        out.extend(text::wrap(vec![Line::from(header)], width));
        let masks: Vec<Highlight> = message
            .masked
            .iter()
            .map(|r| Highlight {
                range: r.clone(),
                style: Style::default(),
                replacement: Some(vec![Span::styled(
                    "[masked secret]",
                    theme.style(Role::SecretMask),
                )]),
            })
            .collect();
        let lines = text::untrusted(&message.content, Style::default(), &masks, theme);
        out.extend(text::wrap(
            lines.into_iter().map(|(l, _)| l).collect(),
            width,
        ));
        out.push(Line::default());
    }
    (out, index)
}

pub(super) fn span_role(kind: &SpanKind) -> (Role, &'static str) {
    match kind {
        SpanKind::MaskedSecret { .. } => (Role::SecretMask, "● secret"),
        SpanKind::Conflict { .. } => (Role::Conflict, "✗ conflict"),
        SpanKind::Authority => (Role::Authority, "! authority"),
        SpanKind::PinnedMatch { .. } => (Role::Pinned, "◆ pinned"),
    }
}

/// The summary's highlights: each span in its role's style, masked secrets replaced by a
/// mask (or the revealed value).
pub(super) fn summary_highlights(
    item: &ItemDetail,
    detail: &DetailState,
    theme: &Theme,
) -> Vec<Highlight> {
    item.summary_spans
        .iter()
        .map(|s| {
            let (role, _) = span_role(&s.kind);
            let replacement = match &s.kind {
                SpanKind::MaskedSecret {
                    finding_id,
                    rule_id,
                    ..
                } => Some(match detail.revealed.get(finding_id) {
                    Some(value) => {
                        let mut spans = vec![Span::styled(
                            format!("[revealed {rule_id}: "),
                            theme.style(Role::SecretMask),
                        )];
                        spans.extend(text::untrusted_inline(
                            value,
                            theme.style(Role::SecretMask),
                            theme,
                        ));
                        spans.push(Span::styled("]", theme.style(Role::SecretMask)));
                        spans
                    }
                    None => vec![Span::styled(
                        format!("[secret {rule_id} ••••]"),
                        theme.style(Role::SecretMask),
                    )],
                }),
                _ => None,
            };
            Highlight {
                range: s.range.clone(),
                style: theme.style(role),
                replacement,
            }
        })
        .collect()
}

/// The summary with highlighted spans and a legend; the index maps byte offsets to lines.
fn summary_lines(
    item: &ItemDetail,
    detail: &DetailState,
    theme: &Theme,
    width: usize,
) -> (Vec<Line<'static>>, Vec<(usize, usize)>) {
    let highlights = summary_highlights(item, detail, theme);
    // Every check that did not pass is named above the text, so a failure with no place in
    // the summary (provenance, schema, a dropped id) still shows in this pane.
    let mut out: Vec<Line<'static>> = Vec::new();
    let failing: Vec<&CheckResult> = item
        .checks
        .iter()
        .filter(|c| matches!(c.status, CheckStatus::Fail | CheckStatus::Error))
        .collect();
    if !failing.is_empty() {
        out.push(Line::styled(
            "── not passing (see Checks) ──",
            theme.style(Role::Dim),
        ));
        for check in failing {
            let (glyph, role) = status_glyph(check.status);
            let mut spans = vec![
                Span::styled(format!("{glyph} {}", check.check.word()), theme.style(role)),
                Span::raw(" "),
            ];
            spans.extend(text::untrusted_inline(
                check.code.as_deref().unwrap_or(""),
                Style::default(),
                theme,
            ));
            out.extend(text::wrap(vec![Line::from(spans)], width));
        }
        out.push(Line::default());
    }
    let banner = out.len();
    let lines = text::untrusted(&item.summary_text, Style::default(), &highlights, theme);
    let (text_lines, index) = text::wrap_indexed(lines, width);
    out.extend(text_lines);
    let index: Vec<(usize, usize)> = index
        .into_iter()
        .map(|(at, line)| (at, line + banner))
        .collect();
    if !item.summary_spans.is_empty() {
        out.push(Line::default());
        out.push(Line::styled("── highlights ──", theme.style(Role::Dim)));
        for span in &item.summary_spans {
            let (role, word) = span_role(&span.kind);
            let what = match &span.kind {
                SpanKind::MaskedSecret {
                    rule_id,
                    category,
                    finding_id,
                } => {
                    format!("{rule_id} ({category}) {finding_id}")
                }
                SpanKind::Conflict { constraint_id } | SpanKind::PinnedMatch { constraint_id } => {
                    constraint_id.clone()
                }
                SpanKind::Authority => "claims authority".into(),
            };
            let mut spans = vec![Span::styled(word, theme.style(role)), Span::raw(" ")];
            spans.extend(text::untrusted_inline(&what, Style::default(), theme));
            out.extend(text::wrap(vec![Line::from(spans)], width));
        }
    }
    (out, index)
}

pub(super) fn status_glyph(status: CheckStatus) -> (&'static str, Role) {
    match status {
        CheckStatus::Pass => ("✓", Role::Ok),
        CheckStatus::Fail => ("✗", Role::Error),
        CheckStatus::Error => ("!", Role::Error),
        CheckStatus::NotRun => ("·", Role::Dim),
    }
}

/// Checks and constraint rows; returns the lines and the line of the selected finding.
fn checks_lines(
    item: &ItemDetail,
    selected: usize,
    theme: &Theme,
    width: usize,
) -> (Vec<Line<'static>>, usize) {
    let mut out = Vec::new();
    let mut selected_line = 0;
    let mut n = 0;
    let mut push = |out: &mut Vec<Line<'static>>, spans: Vec<Span<'static>>, is_finding: bool| {
        let mark = is_finding && n == selected;
        if mark {
            selected_line = out.len();
        }
        if is_finding {
            n += 1;
        }
        let mut all = vec![Span::raw(if mark { "▶ " } else { "  " })];
        all.extend(spans);
        let line = Line::from(all);
        let line = if mark {
            line.style(theme.style(Role::Selection))
        } else {
            line
        };
        out.extend(text::wrap(vec![line], width));
    };
    for check in &item.checks {
        let (glyph, role) = status_glyph(check.status);
        let mut spans = vec![
            Span::styled(
                format!("{glyph} {:<12}", check.check.word()),
                theme.style(role),
            ),
            Span::styled(format!("{:<8}", check.status.word()), theme.style(role)),
        ];
        if let Some(code) = &check.code {
            spans.extend(text::untrusted_inline(code, Style::default(), theme));
        }
        push(&mut out, spans, true);
        if check.status != CheckStatus::Pass {
            let mut detail = vec![Span::raw("    ")];
            detail.extend(text::untrusted_inline(
                &check.detail,
                theme.style(Role::Dim),
                theme,
            ));
            push(&mut out, detail, false);
        }
        for row in &check.constraints {
            let role = match row.verification {
                Verification::Preserved => Role::Ok,
                Verification::Conflict => Role::Error,
                Verification::Unsupported => Role::Warning,
                Verification::Reinjected => Role::Dim,
            };
            let mut spans = vec![Span::raw("  ")];
            spans.extend(text::untrusted_inline(
                &row.constraint_id,
                Style::default(),
                theme,
            ));
            spans.push(Span::styled(
                format!(" {} ", row.constraint_type),
                theme.style(Role::Dim),
            ));
            spans.push(Span::styled(row.verification.word(), theme.style(role)));
            spans.push(Span::styled(" claim ", theme.style(Role::Dim)));
            spans.extend(text::untrusted_inline(
                &row.claim_status,
                Style::default(),
                theme,
            ));
            if let Some(rule) = &row.rule_id {
                spans.push(Span::styled(" rule ", theme.style(Role::Dim)));
                spans.extend(text::untrusted_inline(rule, Style::default(), theme));
            }
            if let Some(ev) = &row.evidence_sha256 {
                spans.push(Span::styled(
                    format!(" ev {}", short(ev)),
                    theme.style(Role::Dim),
                ));
            }
            push(&mut out, spans, true);
        }
    }
    (out, selected_line)
}

fn pane(
    app: &App,
    rect: Rect,
    pane: Pane,
    title: String,
    lines: Vec<Line<'static>>,
    scroll: usize,
    theme: &Theme,
) -> PaneView {
    let focused = app.detail.as_ref().is_some_and(|d| d.focus == pane);
    let scroller = Scroller::Detail(pane);
    let (_, height) = inner(rect);
    let max_scroll = lines.len().saturating_sub(height);
    let marker = if focused { "▶ " } else { "" };
    let more = if lines.len() > height {
        format!(
            " {}/{} ",
            (scroll.min(max_scroll) + height).min(lines.len()),
            lines.len()
        )
    } else {
        String::new()
    };
    PaneView {
        scroller,
        area: rect,
        title: Line::from(vec![
            Span::styled(
                format!(" {marker}{title} "),
                theme.style(if focused { Role::Focus } else { Role::Title }),
            ),
            Span::styled(more, theme.style(Role::Dim)),
        ]),
        lines,
        scroll: scroll.min(max_scroll),
        focused,
        border: theme.style(if focused { Role::Focus } else { Role::Dim }),
    }
}

/// Where each finding of `item` sits in the summary and sources as wrapped (`None` for a
/// pane that is not drawn).
fn finding_lines(
    item: &ItemDetail,
    summary_index: Option<&[(usize, usize)]>,
    sources_index: Option<&[(String, usize)]>,
) -> Vec<FindingLines> {
    findings(item)
        .into_iter()
        .map(|f| FindingLines {
            summary: f
                .summary_range
                .zip(summary_index)
                .map(|(r, index)| text::line_of(index, r.start)),
            source: f
                .source_message_id
                .zip(sources_index)
                .and_then(|(id, index)| index.iter().find(|(m, _)| *m == id).map(|(_, l)| *l)),
        })
        .collect()
}

/// The detail screen's body, and where each finding of the open item is in its panes.
pub fn detail_body(app: &App, theme: &Theme, body: Rect) -> (Body, Vec<FindingLines>) {
    let [title_area, _] = Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(body);
    let Some(detail) = app.detail.as_ref() else {
        let body = Body::Panes {
            title: None,
            panes: Vec::new(),
        };
        return (body, Vec::new());
    };
    let title = Some((title_area, title_line(app, detail, theme)));
    let rects = detail_pane_rects(app);
    let Some(item) = detail.item.as_ref() else {
        let line = match &detail.error {
            Some(e) => {
                let mut spans = vec![Span::styled(
                    "✗ could not load the item: ",
                    theme.style(Role::Error),
                )];
                spans.extend(text::untrusted_inline(e, theme.style(Role::Error), theme));
                Line::from(spans)
            }
            None => Line::from(format!("{} loading the item…", super::spinner(app))),
        };
        let panes = Pane::ALL
            .iter()
            .zip(rects)
            .filter_map(|(p, r)| {
                let r = r?;
                let lines = text::wrap(vec![line.clone()], inner(r).0);
                Some(pane(app, r, *p, pane_title(*p).into(), lines, 0, theme))
            })
            .collect();
        return (Body::Panes { title, panes }, Vec::new());
    };
    let mut panes = Vec::new();
    let mut summary_index = None;
    let mut sources_index = None;
    for (p, rect) in Pane::ALL.iter().zip(rects) {
        let Some(rect) = rect else { continue };
        let width = inner(rect).0;
        let (lines, scroll) = match p {
            Pane::Sources => {
                let (lines, index) = sources_lines(item, theme, width);
                sources_index = Some(index);
                (lines, detail.scroll[0])
            }
            Pane::Summary => {
                let (lines, index) = summary_lines(item, detail, theme, width);
                summary_index = Some(index);
                (lines, detail.scroll[1])
            }
            Pane::Checks => {
                let (lines, selected) = checks_lines(item, detail.finding, theme, width);
                let height = inner(rect).1;
                (lines, selected.saturating_sub(height.saturating_sub(1)))
            }
        };
        let title = match p {
            Pane::Sources => format!("Sources ({})", item.sources.len()),
            Pane::Summary => "Summary (untrusted)".to_string(),
            Pane::Checks => {
                let failing = item
                    .checks
                    .iter()
                    .filter(|c| c.status != CheckStatus::Pass)
                    .count();
                format!("Checks ({failing} not passing)")
            }
        };
        panes.push(pane(app, rect, *p, title, lines, scroll, theme));
    }
    let lines = finding_lines(item, summary_index.as_deref(), sources_index.as_deref());
    (Body::Panes { title, panes }, lines)
}

fn pane_title(p: Pane) -> &'static str {
    match p {
        Pane::Sources => "Sources",
        Pane::Summary => "Summary (untrusted)",
        Pane::Checks => "Checks",
    }
}
