//! Untrusted text to styled lines, and wrapping.
//!
//! [`untrusted`] is the only way view code turns attacker text into something drawable: it
//! runs [`sanitize`], draws badges in the reserved badge style, applies highlights by byte
//! range and replaces masked ranges (secrets) with a mask, so the masked bytes never reach a
//! [`Line`]. [`wrap`] breaks styled lines at the pane width, character by character, so a
//! long token cannot run off screen and scroll positions are exact.

use std::ops::Range;

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::review::theme::{Role, Theme};
use crate::sanitize::{sanitize, SegmentKind};

/// A byte range of the input to draw differently.
#[derive(Debug, Clone)]
pub struct Highlight {
    pub range: Range<usize>,
    pub style: Style,
    /// When set, the range's bytes are not drawn; this text (trusted) is drawn once instead.
    pub replacement: Option<Vec<Span<'static>>>,
}

/// Untrusted `input` as styled lines, each with the input byte offset it starts at.
pub fn untrusted(
    input: &str,
    base: Style,
    highlights: &[Highlight],
    theme: &Theme,
) -> Vec<(Line<'static>, usize)> {
    // A range that is out of bounds or splits a character is ignored rather than trusted:
    // slicing at it would drop text.
    let valid = |r: &Range<usize>| {
        r.start <= r.end && input.is_char_boundary(r.start) && input.is_char_boundary(r.end)
    };
    let highlights: Vec<&Highlight> = highlights.iter().filter(|h| valid(&h.range)).collect();
    let sanitized = sanitize(input);
    let mut lines: Vec<(Line<'static>, usize)> = vec![(Line::default(), 0)];
    let mut replaced: Vec<usize> = Vec::new();
    for segment in &sanitized.segments {
        let Some((line, _)) = lines.last_mut() else {
            break;
        };
        let replacement_at = |range: &Range<usize>| {
            highlights
                .iter()
                .copied()
                .enumerate()
                .find(|(_, h)| h.replacement.is_some() && overlaps(&h.range, range))
        };
        match segment.kind {
            SegmentKind::LineBreak => lines.push((Line::default(), segment.source.end)),
            SegmentKind::Badge => match replacement_at(&segment.source) {
                Some((i, h)) => {
                    if !replaced.contains(&i) {
                        replaced.push(i);
                        line.spans.extend(h.replacement.clone().unwrap_or_default());
                    }
                }
                None => line
                    .spans
                    .push(Span::styled(segment.text.clone(), theme.style(Role::Badge))),
            },
            SegmentKind::Text => {
                let mut at = segment.source.start;
                let end = segment.source.end;
                while at < end {
                    let next = highlights
                        .iter()
                        .flat_map(|h| [h.range.start, h.range.end])
                        .filter(|&b| b > at && b < end)
                        .min()
                        .unwrap_or(end);
                    if let Some((i, h)) = replacement_at(&(at..next)) {
                        if !replaced.contains(&i) {
                            replaced.push(i);
                            line.spans.extend(h.replacement.clone().unwrap_or_default());
                        }
                        at = next;
                        continue;
                    }
                    let style_here = highlights
                        .iter()
                        .find(|h| h.range.contains(&at))
                        .map_or(base, |h| base.patch(h.style));
                    let from = at - segment.source.start;
                    let to = next - segment.source.start;
                    let piece = segment.text.get(from..to).unwrap_or_default();
                    line.spans.push(Span::styled(piece.to_string(), style_here));
                    at = next;
                }
            }
        }
    }
    lines
}

fn overlaps(a: &Range<usize>, b: &Range<usize>) -> bool {
    a.start < b.end && b.start < a.end
}

/// Untrusted text on one line: a line break is shown as a `⏎` badge, so a field that
/// should be one line cannot push text onto the next one.
pub fn untrusted_inline(input: &str, base: Style, theme: &Theme) -> Vec<Span<'static>> {
    let mut spans = Vec::new();
    for (n, (line, _)) in untrusted(input, base, &[], theme).into_iter().enumerate() {
        if n > 0 {
            spans.push(Span::styled("⏎", theme.style(Role::Badge)));
        }
        spans.extend(line.spans);
    }
    spans
}

fn char_width(c: char) -> usize {
    let mut buf = [0u8; 4];
    Span::raw(&*c.encode_utf8(&mut buf)).width()
}

fn str_width(s: &str) -> usize {
    s.chars().map(char_width).sum()
}

/// Breaks each line into lines at most `width` columns wide, at spaces where it can and
/// inside a word only when the word is wider than the line.
pub fn wrap(lines: Vec<Line<'static>>, width: usize) -> Vec<Line<'static>> {
    let width = width.max(1);
    let mut out = Vec::with_capacity(lines.len());
    for line in lines {
        if line.width() <= width {
            out.push(line);
            continue;
        }
        let base = line.style;
        let mut current = Line::default().style(base);
        let mut used = 0;
        for span in line.spans {
            // A badge is one word: its inner spaces never break it.
            let is_badge = span.content.starts_with('⟨') && span.content.ends_with('⟩');
            let words: Vec<&str> = if is_badge {
                vec![span.content.as_ref()]
            } else {
                span.content.split_inclusive(' ').collect()
            };
            for word in words {
                let w = str_width(word);
                let w_trimmed = str_width(word.trim_end_matches(' '));
                if used > 0 && used + w_trimmed > width && w_trimmed <= width {
                    out.push(std::mem::replace(&mut current, Line::default().style(base)));
                    used = 0;
                }
                if used + w <= width || w_trimmed > width {
                    if w <= width - used.min(width) {
                        current
                            .spans
                            .push(Span::styled(word.to_string(), span.style));
                        used += w;
                        continue;
                    }
                    // A word wider than the line: break it at the width.
                    let mut piece = String::new();
                    for c in word.chars() {
                        let cw = char_width(c);
                        if used + cw > width && used > 0 {
                            if !piece.is_empty() {
                                current
                                    .spans
                                    .push(Span::styled(std::mem::take(&mut piece), span.style));
                            }
                            out.push(std::mem::replace(&mut current, Line::default().style(base)));
                            used = 0;
                        }
                        piece.push(c);
                        used += cw;
                    }
                    if !piece.is_empty() {
                        current.spans.push(Span::styled(piece, span.style));
                    }
                } else {
                    // Only trailing spaces overflow: keep the word, drop the overflow.
                    current.spans.push(Span::styled(
                        word.trim_end_matches(' ').to_string(),
                        span.style,
                    ));
                    used += w_trimmed;
                }
            }
        }
        out.push(current);
    }
    out
}

/// Like [`wrap`] for lines that carry a start offset: returns the wrapped lines and, for
/// each input line, the index of its first wrapped line.
pub fn wrap_indexed(
    lines: Vec<(Line<'static>, usize)>,
    width: usize,
) -> (Vec<Line<'static>>, Vec<(usize, usize)>) {
    let mut out = Vec::new();
    let mut index = Vec::with_capacity(lines.len());
    for (line, start) in lines {
        index.push((start, out.len()));
        out.extend(wrap(vec![line], width));
    }
    (out, index)
}

/// The wrapped line where input byte `at` starts (from [`wrap_indexed`]'s index).
pub fn line_of(index: &[(usize, usize)], at: usize) -> usize {
    index
        .iter()
        .take_while(|(start, _)| *start <= at)
        .last()
        .map_or(0, |(_, line)| *line)
}

/// `line` cut to at most `width` columns, ending in `…` when it was cut.
pub fn truncate(line: Line<'static>, width: usize) -> Line<'static> {
    if line.width() <= width {
        return line;
    }
    let style = line.style;
    let mut out = Vec::new();
    let mut used = 0;
    let room = width.saturating_sub(1);
    for span in line.spans {
        let mut piece = String::new();
        for c in span.content.chars() {
            let w = char_width(c);
            if used + w > room {
                break;
            }
            piece.push(c);
            used += w;
        }
        let cut = piece.len() < span.content.len();
        if !piece.is_empty() {
            out.push(Span::styled(piece, span.style));
        }
        if cut {
            break;
        }
    }
    if width > 0 {
        out.push(Span::raw("…"));
    }
    Line::from(out).style(style)
}

/// `line` padded with spaces to exactly `width` columns (cut first when wider).
pub fn pad(line: Line<'static>, width: usize) -> Line<'static> {
    let mut line = truncate(line, width);
    let missing = width.saturating_sub(line.width());
    if missing > 0 {
        line.spans.push(Span::raw(" ".repeat(missing)));
    }
    line
}

/// The plain text of a line (for tests and widths).
pub fn plain(line: &Line<'_>) -> String {
    line.spans.iter().map(|s| s.content.as_ref()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn theme() -> Theme {
        Theme::default_theme().unwrap()
    }

    #[test]
    fn masked_bytes_never_reach_a_line() {
        let text = "key AKIASECRET done";
        let h = Highlight {
            range: 4..14,
            style: Style::default(),
            replacement: Some(vec![Span::raw("[masked]")]),
        };
        let lines = untrusted(text, Style::default(), &[h], &theme());
        let shown = plain(&lines[0].0);
        assert_eq!(shown, "key [masked] done");
    }

    #[test]
    fn badges_get_the_badge_style_and_highlights_split_text() {
        let h = Highlight {
            range: 0..2,
            style: theme().style(Role::Conflict),
            replacement: None,
        };
        let lines = untrusted("ab\u{1b}[1mcd", Style::default(), &[h], &theme());
        let spans = &lines[0].0.spans;
        assert_eq!(spans[0].content, "ab");
        assert_eq!(spans[0].style, theme().style(Role::Conflict));
        assert_eq!(spans[1].content, "⟨ESC[1m⟩");
        assert_eq!(spans[1].style, theme().style(Role::Badge));
    }

    #[test]
    fn a_range_that_splits_a_character_hides_nothing() {
        let h = Highlight {
            range: 1..2,
            style: Style::default(),
            replacement: Some(vec![Span::raw("[masked]")]),
        };
        let lines = untrusted("é and more", Style::default(), &[h], &theme());
        assert_eq!(plain(&lines[0].0), "é and more");
    }

    #[test]
    fn truncate_and_pad_fit_a_width() {
        let line = Line::from(vec![Span::raw("abc"), Span::raw("défg")]);
        assert_eq!(plain(&truncate(line.clone(), 5)), "abcd…");
        assert_eq!(plain(&truncate(line.clone(), 7)), "abcdéfg");
        assert_eq!(pad(Line::raw("ab"), 4).width(), 4);
        assert_eq!(plain(&pad(line, 3)), "ab…");
    }

    #[test]
    fn wrap_breaks_at_width_and_index_finds_lines() {
        let lines = vec![(Line::raw("abcdefgh"), 0), (Line::raw("xy"), 9)];
        let (wrapped, index) = wrap_indexed(lines, 3);
        assert_eq!(wrapped.len(), 4);
        assert_eq!(plain(&wrapped[2]), "gh");
        assert_eq!(line_of(&index, 10), 3);
        let words = wrap(vec![Line::raw("one two three")], 8);
        let texts: Vec<String> = words.iter().map(plain).collect();
        assert_eq!(texts, ["one two ", "three"]);
    }
}
