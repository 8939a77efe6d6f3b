//! Two columns side by side for the constraints screen's evidence: a section is a pair of
//! cells (a heading and lines each), wrapped to half the pane and padded so the right cell
//! starts at the same column on every line; a narrow pane stacks them. Also the line
//! builders the evidence uses: untrusted text through the sanitizer, diff sides with `-`/`+`
//! glyphs and emphasised runs, and text with byte ranges marked.

use std::ops::Range;

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::text::{self, Highlight};
use crate::diff::DiffSegment;
use crate::review::theme::{Role, Theme};

/// Narrower than this, the two sides stack instead of standing side by side.
pub const SIDE_BY_SIDE: usize = 56;

/// One side of a section: a heading and its lines (unwrapped).
pub struct Cell {
    heading: String,
    lines: Vec<Line<'static>>,
}

impl Cell {
    pub fn new(heading: impl Into<String>, lines: Vec<Line<'static>>) -> Cell {
        Cell {
            heading: heading.into(),
            lines,
        }
    }
}

fn wrapped(cell: &Cell, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let mut lines = vec![Line::styled(cell.heading.clone(), theme.style(Role::Title))];
    lines.extend(cell.lines.iter().cloned());
    text::wrap(lines, width)
}

/// Two cells side by side (stacked when the pane is narrow), then a blank line.
pub fn pair(left: Cell, right: Cell, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    if width < SIDE_BY_SIDE {
        out.extend(wrapped(&left, width, theme));
        out.extend(wrapped(&right, width, theme));
    } else {
        let half = (width - 3) / 2;
        let l = wrapped(&left, half, theme);
        let r = wrapped(&right, width - 3 - half, theme);
        for i in 0..l.len().max(r.len()) {
            let mut line = text::pad(l.get(i).cloned().unwrap_or_default(), half);
            line.spans.push(Span::styled(" │ ", theme.style(Role::Dim)));
            line.spans
                .extend(r.get(i).cloned().unwrap_or_default().spans);
            out.push(line);
        }
    }
    out.push(Line::default());
    out
}

/// A whole-width section: a heading and wrapped lines, then a blank line.
pub fn section(
    heading: &str,
    lines: Vec<Line<'static>>,
    width: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let mut out = wrapped(&Cell::new(heading, lines), width, theme);
    out.push(Line::default());
    out
}

pub fn untrusted(input: &str, base: Style, theme: &Theme) -> Line<'static> {
    Line::from(text::untrusted_inline(input, base, theme))
}

pub fn trusted(input: &str, theme: &Theme, role: Role) -> Line<'static> {
    // Policy text is trusted, but it still goes through the sanitizer: it is shown, not run.
    Line::from(text::untrusted_inline(input, theme.style(role), theme))
}

/// A diff side as one line: `glyph` then runs, emphasised ones in `emph`.
pub fn diff_line(
    glyph: &str,
    runs: &[DiffSegment],
    plain: Role,
    emph: Role,
    theme: &Theme,
) -> Line<'static> {
    let mut spans = vec![Span::styled(format!("{glyph} "), theme.style(plain))];
    for run in runs {
        let role = if run.emphasised { emph } else { plain };
        spans.extend(text::untrusted_inline(&run.text, theme.style(role), theme));
    }
    Line::from(spans)
}

/// `text` with `ranges` (byte ranges of it) in `role`.
pub fn marked(input: &str, ranges: &[Range<usize>], role: Role, theme: &Theme) -> Line<'static> {
    let highlights: Vec<Highlight> = ranges
        .iter()
        .map(|r| Highlight {
            range: r.clone(),
            style: theme.style(role),
            replacement: None,
        })
        .collect();
    let mut spans = Vec::new();
    for (n, (line, _)) in text::untrusted(input, Style::default(), &highlights, theme)
        .into_iter()
        .enumerate()
    {
        if n > 0 {
            spans.push(Span::styled("⏎", theme.style(Role::Badge)));
        }
        spans.extend(line.spans);
    }
    Line::from(spans)
}
