//! The evidence pane of the constraints screen: why the selected row has its status, with
//! what the policy expects on the left and what the summary (or a user turn) says on the
//! right, section by section, each pair of cells aligned.
//!
//! A registered constraint shows its canonical text and the summary's claim, then its
//! required clause against the sentence that states it, the sentence that contradicts it
//! (matched span and conflict pattern), or the closest sentence as a word diff; a pinned
//! constraint shows the text as injected against the manifest's digest; an authority claim
//! shows the claim against the best-matching user turn as a word diff. Below come the
//! report's reasons and the user turns that share the constraint's words, labelled as a
//! guess. Every text from the summary, the turns or the report goes through the sanitizer;
//! diff emphasis has a style that keeps a modifier without colour, and `-`/`+` glyphs.

use std::ops::Range;

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::columns::{diff_line, marked, pair, section, trusted, untrusted, Cell};
use super::text;
use crate::diff::{word_diff, word_diff_ignoring_case, DiffSegment};
use crate::review::source::{
    ConstraintEvidence, ConstraintKind, ConstraintStatus, Sentence, TurnMatch,
};
use crate::review::theme::{Role, Theme};

/// A status's glyph, word and role: colour is never the only signal.
pub fn status_cell(status: &ConstraintStatus) -> (String, Role) {
    let (glyph, role) = match status {
        ConstraintStatus::Preserved => ("✓", Role::Ok),
        ConstraintStatus::Conflict => ("✗", Role::Error),
        ConstraintStatus::Unsupported => ("?", Role::Warning),
        ConstraintStatus::Missing => ("∅", Role::Error),
        ConstraintStatus::Reinjected => ("↻", Role::Ok),
        ConstraintStatus::NotChecked => ("·", Role::Dim),
        ConstraintStatus::Other(_) => ("!", Role::Warning),
    };
    // A word the report used that this reviewer does not know is still report text: it goes
    // through the sanitizer like every other.
    let word: String = match status {
        ConstraintStatus::Other(w) => text::untrusted_inline(w, Style::default(), &Theme::plain())
            .iter()
            .map(|s| s.content.as_ref())
            .collect(),
        known => known.word().to_owned(),
    };
    (format!("{glyph} {word}"), role)
}

fn sentence_lines(sentences: &[Sentence], theme: &Theme) -> Vec<Line<'static>> {
    sentences
        .iter()
        .map(|s| {
            let mut line = vec![Span::styled("▌ ", theme.style(Role::Evidence))];
            line.extend(untrusted(&s.text, theme.style(Role::Ok), theme).spans);
            Line::from(line)
        })
        .collect()
}

/// The header: kind, id, status, rule, evidence digest, and what a rerun changed.
fn header(
    row: &ConstraintEvidence,
    changed: Option<&ConstraintStatus>,
    width: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let (status, role) = status_cell(&row.status);
    let mut spans = vec![Span::styled(
        format!("{} ", row.kind.word()),
        theme.style(Role::Dim),
    )];
    spans.extend(text::untrusted_inline(
        &row.id,
        theme.style(Role::Title),
        theme,
    ));
    spans.push(Span::raw("  "));
    spans.push(Span::styled(status, theme.style(role)));
    if let Some(rule) = &row.rule_id {
        spans.push(Span::styled("  rule ", theme.style(Role::Dim)));
        spans.extend(text::untrusted_inline(rule, Style::default(), theme));
    }
    if let Some(ev) = &row.evidence_sha256 {
        let short: String = ev.chars().take(12).collect();
        spans.push(Span::styled(
            format!("  evidence {short}"),
            theme.style(Role::Dim),
        ));
    }
    let mut out = vec![Line::from(spans)];
    if let Some(was) = changed {
        out.push(Line::from(text::untrusted_inline(
            &format!(
                "Δ changed by the rerun: was {}, now {}",
                was.word(),
                row.status.word()
            ),
            theme.style(Role::Warning),
            theme,
        )));
    }
    out.push(Line::default());
    text::wrap(out, width)
}

/// Policy text and the summary's claim about a registered constraint.
fn registered_head(row: &ConstraintEvidence, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let mut left = Vec::new();
    if row.canonical_text.is_empty() {
        left.push(Line::styled(
            "not in the current policy",
            theme.style(Role::Warning),
        ));
    } else {
        left.push(trusted(&row.canonical_text, theme, Role::Text));
    }
    if let Some(p) = &row.canonical_predicate {
        left.push(trusted(&format!("predicate {p}"), theme, Role::Dim));
    }
    let right = match &row.claim {
        None => vec![Line::styled(
            "∅ no claim about it",
            theme.style(Role::Error),
        )],
        Some(claim) => {
            let mut lines = vec![Line::from(vec![
                Span::styled("status ", theme.style(Role::Dim)),
                Span::raw(if claim.status.is_empty() {
                    "(none)".to_owned()
                } else {
                    claim.status.clone()
                }),
            ])];
            match (&row.canonical_predicate, claim.predicate.is_empty()) {
                (_, true) => lines.push(Line::styled("no predicate", theme.style(Role::Dim))),
                (Some(canonical), false) => {
                    let d = word_diff(canonical, &claim.predicate);
                    if d.is_unchanged() {
                        lines.push(untrusted(&claim.predicate, Style::default(), theme));
                        lines.push(Line::styled(
                            "= the canonical predicate",
                            theme.style(Role::Ok),
                        ));
                    } else {
                        lines.push(diff_line(
                            "-",
                            &d.old,
                            Role::Removed,
                            Role::RemovedEmph,
                            theme,
                        ));
                        lines.push(diff_line("+", &d.new, Role::Added, Role::AddedEmph, theme));
                        lines.push(Line::styled(
                            "≠ the canonical predicate",
                            theme.style(Role::Warning),
                        ));
                    }
                }
                (None, false) => lines.push(untrusted(&claim.predicate, Style::default(), theme)),
            }
            lines
        }
    };
    pair(
        Cell::new("policy: canonical text", left),
        Cell::new("summary: its claim", right),
        width,
        theme,
    )
}

/// The required clause against what the summary says.
fn clause_pair(row: &ConstraintEvidence, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let Some(clause) = &row.required_clause else {
        if row.conflicts.is_empty() {
            return Vec::new();
        }
        return conflict_pair(row, None, width, theme);
    };
    if !row.conflicts.is_empty() {
        return conflict_pair(row, Some(clause), width, theme);
    }
    if !row.support.is_empty() {
        let mut right = vec![Line::styled(
            format!("✓ stated in {} sentence(s)", row.support.len()),
            theme.style(Role::Ok),
        )];
        right.extend(sentence_lines(&row.support, theme));
        if row.status.failing() {
            right.push(Line::styled(
                "the clause is there, but see why below",
                theme.style(Role::Warning),
            ));
        }
        return pair(
            Cell::new(
                "policy: required clause",
                vec![trusted(clause, theme, Role::Text)],
            ),
            Cell::new("summary: the sentence that states it", right),
            width,
            theme,
        );
    }
    match &row.closest {
        Some(closest) => {
            let d = word_diff_ignoring_case(clause, &closest.sentence.text);
            pair(
                Cell::new(
                    "policy: required clause (not in the summary)",
                    vec![diff_line(
                        "-",
                        &d.old,
                        Role::Removed,
                        Role::RemovedEmph,
                        theme,
                    )],
                ),
                Cell::new(
                    format!("summary: closest sentence ({}% alike)", closest.similarity),
                    vec![diff_line("+", &d.new, Role::Added, Role::AddedEmph, theme)],
                ),
                width,
                theme,
            )
        }
        None => pair(
            Cell::new(
                "policy: required clause (not in the summary)",
                vec![diff_line(
                    "-",
                    &[DiffSegment {
                        text: clause.clone(),
                        emphasised: true,
                    }],
                    Role::Removed,
                    Role::RemovedEmph,
                    theme,
                )],
            ),
            Cell::new(
                "summary: closest sentence",
                vec![Line::styled(
                    "no sentence of the summary is close to it",
                    theme.style(Role::Dim),
                )],
            ),
            width,
            theme,
        ),
    }
}

fn conflict_pair(
    row: &ConstraintEvidence,
    clause: Option<&String>,
    width: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let mut left = Vec::new();
    match (row.kind, clause) {
        (ConstraintKind::Pinned, _) => {
            left.push(Line::styled("forbidden pattern(s)", theme.style(Role::Dim)))
        }
        (_, Some(clause)) => left.push(trusted(clause, theme, Role::Text)),
        (_, None) => left.push(Line::styled("(no required clause)", theme.style(Role::Dim))),
    }
    let mut right = Vec::new();
    // One sentence once, with every match in it marked, then the patterns that matched it.
    let mut sentences: Vec<(
        Option<&Sentence>,
        Vec<&crate::review::source::ConflictMatch>,
    )> = Vec::new();
    for c in &row.conflicts {
        let at = sentences
            .iter()
            .position(|(s, _)| s.map(|s| &s.range) == c.sentence.as_ref().map(|s| &s.range));
        match at.and_then(|i| sentences.get_mut(i)) {
            Some((_, group)) => group.push(c),
            None => sentences.push((c.sentence.as_ref(), vec![c])),
        }
    }
    for (sentence, group) in sentences {
        match sentence {
            Some(s) => {
                let within: Vec<Range<usize>> = group
                    .iter()
                    .filter_map(|c| {
                        let m = c.matched.as_ref()?;
                        let start = m.start.checked_sub(s.range.start)?;
                        Some(start..start + (m.end - m.start))
                    })
                    .collect();
                let mut line = vec![Span::styled("✗ ", theme.style(Role::Error))];
                line.extend(marked(&s.text, &within, Role::Conflict, theme).spans);
                right.push(Line::from(line));
            }
            None => right.push(Line::styled(
                "(the match is outside the summary text)",
                theme.style(Role::Dim),
            )),
        }
        for c in group {
            let mut pattern = vec![Span::styled("pattern ", theme.style(Role::Dim))];
            pattern.extend(text::untrusted_inline(
                &c.pattern_id,
                theme.style(Role::Title),
                theme,
            ));
            if !c.description.is_empty() {
                pattern.push(Span::styled(": ", theme.style(Role::Dim)));
                pattern.extend(text::untrusted_inline(
                    &c.description,
                    theme.style(Role::Dim),
                    theme,
                ));
            }
            if row.kind == ConstraintKind::Pinned {
                left.push(Line::from(pattern));
            } else {
                right.push(Line::from(pattern));
            }
        }
    }
    let heading = if row.kind == ConstraintKind::Pinned {
        "policy: what it forbids"
    } else {
        "policy: required clause"
    };
    pair(
        Cell::new(heading, left),
        Cell::new("summary: contradicted by (matched span marked)", right),
        width,
        theme,
    )
}

fn pinned_pair(row: &ConstraintEvidence, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let Some(p) = &row.pinned else {
        return Vec::new();
    };
    let short = |s: &str| s.chars().take(16).collect::<String>();
    let left = vec![
        untrusted(&p.injected, Style::default(), theme),
        Line::styled(
            format!(
                "{} bytes · sha256 {} · severity {}",
                p.injected.len(),
                short(&p.injected_sha256),
                p.severity
            ),
            theme.style(Role::Dim),
        ),
    ];
    let right = match &p.manifest_sha256 {
        None => vec![Line::styled(
            "∅ not in the report's pinned manifest",
            theme.style(Role::Error),
        )],
        Some(m) => vec![
            Line::styled(format!("text_sha256 {}", short(m)), theme.style(Role::Dim)),
            if p.identical() {
                Line::styled(
                    "✓ the same bytes: carried byte for byte",
                    theme.style(Role::Ok),
                )
            } else {
                Line::styled(
                    "✗ differs from what the manifest digested",
                    theme.style(Role::Error),
                )
            },
        ],
    };
    pair(
        Cell::new("injected: the pinned text as the context carries it", left),
        Cell::new("manifest: what the report recorded", right),
        width,
        theme,
    )
}

fn turn_lines(turn: &TurnMatch, theme: &Theme) -> Vec<Line<'static>> {
    let mut head = vec![Span::styled("[user] ", theme.style(Role::Title))];
    head.extend(text::untrusted_inline(
        &turn.message_id,
        theme.style(Role::Title),
        theme,
    ));
    head.push(Span::styled(
        format!("  {} shared word(s)", turn.shared),
        theme.style(Role::Dim),
    ));
    let mut lines = vec![
        Line::from(head),
        marked(&turn.excerpt, &turn.matched, Role::Matched, theme),
    ];
    if !turn.refusals.is_empty() {
        lines.push(untrusted(
            &format!("refuses: {}", turn.refusals.join(", ")),
            theme.style(Role::Warning),
            theme,
        ));
    }
    if !turn.approvals.is_empty() {
        lines.push(untrusted(
            &format!("approves: {}", turn.approvals.join(", ")),
            theme.style(Role::Dim),
            theme,
        ));
    }
    lines
}

fn authority_pair(row: &ConstraintEvidence, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let claim = row
        .claimed
        .as_ref()
        .map_or(row.canonical_text.as_str(), |s| s.text.as_str());
    match row.user_turns.first() {
        Some(turn) => {
            let d = word_diff_ignoring_case(claim, &turn.excerpt);
            let mut right = vec![diff_line("+", &d.new, Role::Added, Role::AddedEmph, theme)];
            right.extend(turn_lines(turn, theme).into_iter().skip(2));
            pair(
                Cell::new(
                    "summary: the claim",
                    vec![diff_line(
                        "-",
                        &d.old,
                        Role::Removed,
                        Role::RemovedEmph,
                        theme,
                    )],
                ),
                Cell::new(
                    format!(
                        "best-matching user turn {} (a guess by words)",
                        turn.message_id
                    ),
                    right,
                ),
                width,
                theme,
            )
        }
        None => pair(
            Cell::new(
                "summary: the claim",
                vec![untrusted(claim, theme.style(Role::Authority), theme)],
            ),
            Cell::new(
                "user turns",
                vec![Line::styled(
                    "✗ no user turn supports this",
                    theme.style(Role::Error),
                )],
            ),
            width,
            theme,
        ),
    }
}

/// The evidence pane's lines for `row`, wrapped to `width`.
pub fn evidence_lines(
    row: &ConstraintEvidence,
    changed: Option<&ConstraintStatus>,
    theme: &Theme,
    width: usize,
) -> Vec<Line<'static>> {
    let mut out = header(row, changed, width, theme);
    match row.kind {
        ConstraintKind::Invariant | ConstraintKind::Commitment => {
            out.extend(registered_head(row, width, theme));
            out.extend(clause_pair(row, width, theme));
        }
        ConstraintKind::Pinned => {
            out.extend(pinned_pair(row, width, theme));
            out.extend(clause_pair(row, width, theme));
        }
        ConstraintKind::Authority => out.extend(authority_pair(row, width, theme)),
    }
    if !row.reasons.is_empty() {
        let lines = row
            .reasons
            .iter()
            .map(|r| {
                let mut spans = vec![Span::styled("• ", theme.style(Role::Dim))];
                spans.extend(text::untrusted_inline(r, Style::default(), theme));
                Line::from(spans)
            })
            .collect();
        out.extend(section("why (the report)", lines, width, theme));
    }
    let show_turns = row.kind != ConstraintKind::Authority && row.status.failing();
    if show_turns {
        let lines = if row.user_turns.is_empty() {
            vec![Line::styled(
                "no user turn shares its words",
                theme.style(Role::Dim),
            )]
        } else {
            row.user_turns
                .iter()
                .flat_map(|t| turn_lines(t, theme))
                .collect()
        };
        out.extend(section(
            "where the user stated it (a guess: turns sharing its words)",
            lines,
            width,
            theme,
        ));
    }
    out
}
