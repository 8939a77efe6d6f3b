//! Diff model: what changed between two texts, as pure data for the reviewer to render.
//!
//! The vocabulary is the one delta and `similar` use: every line is a *minus* (only in the old
//! text), *zero* (in both) or *plus* (only in the new text) line, and a changed line carries
//! *emphasised* segments marking the words that actually differ. [`line_diff`] compares
//! multi-line texts (summary against previous summary, report before and after a rerun,
//! pinned constraint against the returned context); [`word_diff`] compares two one-line
//! strings (a claim's predicate against the canonical predicate), and
//! [`word_diff_ignoring_case`] does so without counting case (a required clause against the
//! summary sentence closest to it). Nothing here draws or
//! sanitizes: the widgets do that, so text in a diff is still untrusted.

use similar::{ChangeTag, TextDiff};

/// Which side of the diff a line or segment belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineTag {
    /// Only in the old text.
    Minus,
    /// In both texts.
    Zero,
    /// Only in the new text.
    Plus,
}

impl LineTag {
    /// The prefix glyph shown before a line, so colour is never the only signal.
    pub fn glyph(self) -> char {
        match self {
            LineTag::Minus => '-',
            LineTag::Zero => ' ',
            LineTag::Plus => '+',
        }
    }
}

impl From<ChangeTag> for LineTag {
    fn from(tag: ChangeTag) -> Self {
        match tag {
            ChangeTag::Delete => LineTag::Minus,
            ChangeTag::Equal => LineTag::Zero,
            ChangeTag::Insert => LineTag::Plus,
        }
    }
}

/// A run of text inside a line; `emphasised` marks the part that changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffSegment {
    /// The text, without a trailing newline.
    pub text: String,
    /// Whether this run is the changed part of a changed line.
    pub emphasised: bool,
}

/// One line of a line diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffLine {
    /// Minus, zero or plus.
    pub tag: LineTag,
    /// Zero-based line number in the old text, if the line is there.
    pub old_line: Option<usize>,
    /// Zero-based line number in the new text, if the line is there.
    pub new_line: Option<usize>,
    /// The line's text in runs.
    pub segments: Vec<DiffSegment>,
}

impl DiffLine {
    /// The whole line's text.
    pub fn text(&self) -> String {
        self.segments.iter().map(|s| s.text.as_str()).collect()
    }
}

/// A line diff with its counts.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LineDiff {
    /// Lines in display order.
    pub lines: Vec<DiffLine>,
    /// Number of minus lines.
    pub removed: usize,
    /// Number of plus lines.
    pub added: usize,
}

impl LineDiff {
    /// Whether the two texts were identical.
    pub fn is_unchanged(&self) -> bool {
        self.removed == 0 && self.added == 0
    }
}

/// Line diff of `old` against `new`, with word-level emphasis inside changed lines.
pub fn line_diff(old: &str, new: &str) -> LineDiff {
    let diff = TextDiff::from_lines(old, new);
    let mut out = LineDiff::default();
    for op in diff.ops() {
        for change in diff.iter_inline_changes(op) {
            let tag = LineTag::from(change.tag());
            match tag {
                LineTag::Minus => out.removed += 1,
                LineTag::Plus => out.added += 1,
                LineTag::Zero => {}
            }
            let mut segments: Vec<DiffSegment> = Vec::new();
            for (emphasised, value) in change.iter_strings_lossy() {
                let text = value.trim_end_matches(['\n', '\r']).to_string();
                if text.is_empty() {
                    continue;
                }
                match segments.last_mut() {
                    Some(last) if last.emphasised == emphasised => last.text.push_str(&text),
                    _ => segments.push(DiffSegment { text, emphasised }),
                }
            }
            out.lines.push(DiffLine {
                tag,
                old_line: change.old_index(),
                new_line: change.new_index(),
                segments,
            });
        }
    }
    out
}

/// A word-level diff of two one-line strings.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WordDiff {
    /// The old string in runs; emphasised runs were removed.
    pub old: Vec<DiffSegment>,
    /// The new string in runs; emphasised runs were added.
    pub new: Vec<DiffSegment>,
}

impl WordDiff {
    /// Whether both strings are equal.
    pub fn is_unchanged(&self) -> bool {
        self.old.iter().chain(&self.new).all(|s| !s.emphasised)
    }
}

/// Word diff of `old` against `new` (for example a claim's predicate against the canonical
/// predicate).
pub fn word_diff(old: &str, new: &str) -> WordDiff {
    let diff = TextDiff::from_words(old, new);
    let mut out = WordDiff::default();
    for change in diff.iter_all_changes() {
        let text = change.value().to_string();
        let (side, emphasised): (&mut Vec<DiffSegment>, bool) = match change.tag() {
            ChangeTag::Delete => (&mut out.old, true),
            ChangeTag::Insert => (&mut out.new, true),
            ChangeTag::Equal => {
                push_run(&mut out.old, &text, false);
                (&mut out.new, false)
            }
        };
        push_run(side, &text, emphasised);
    }
    out
}

/// Like [`word_diff`], ignoring ASCII case (a required clause `do not push` against the
/// summary's `Do not push.`): the runs keep each string's own text.
pub fn word_diff_ignoring_case(old: &str, new: &str) -> WordDiff {
    let (lower_old, lower_new) = (old.to_ascii_lowercase(), new.to_ascii_lowercase());
    let folded = word_diff(&lower_old, &lower_new);
    WordDiff {
        old: restore(old, folded.old),
        new: restore(new, folded.new),
    }
}

/// Runs cut from `original` at the byte lengths of `runs` (ASCII lower-casing keeps them).
fn restore(original: &str, runs: Vec<DiffSegment>) -> Vec<DiffSegment> {
    let mut at = 0;
    runs.into_iter()
        .map(|run| {
            let end = (at + run.text.len()).min(original.len());
            let text = original.get(at..end).unwrap_or(&run.text).to_owned();
            at = end;
            DiffSegment {
                text,
                emphasised: run.emphasised,
            }
        })
        .collect()
}

fn push_run(side: &mut Vec<DiffSegment>, text: &str, emphasised: bool) {
    match side.last_mut() {
        Some(last) if last.emphasised == emphasised => last.text.push_str(text),
        _ => side.push(DiffSegment {
            text: text.to_string(),
            emphasised,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_texts_have_only_zero_lines() {
        let d = line_diff("a\nb\n", "a\nb\n");
        assert!(d.is_unchanged());
        assert!(d.lines.iter().all(|l| l.tag == LineTag::Zero));
        assert_eq!(d.lines.len(), 2);
    }

    #[test]
    fn a_removed_line_is_a_minus_line() {
        let d = line_diff("keep\nnever push to main\nend\n", "keep\nend\n");
        assert_eq!((d.removed, d.added), (1, 0));
        let minus: Vec<_> = d.lines.iter().filter(|l| l.tag == LineTag::Minus).collect();
        assert_eq!(minus[0].text(), "never push to main");
        assert_eq!(minus[0].old_line, Some(1));
        assert_eq!(minus[0].new_line, None);
    }

    #[test]
    fn a_changed_line_emphasises_the_changed_words() {
        let d = line_diff("tests pass on branch main\n", "tests fail on branch main\n");
        assert_eq!((d.removed, d.added), (1, 1));
        let minus = &d.lines[0];
        assert_eq!(minus.tag, LineTag::Minus);
        let emph: Vec<_> = minus.segments.iter().filter(|s| s.emphasised).collect();
        assert_eq!(emph.len(), 1);
        assert_eq!(emph[0].text, "pass");
        let plus = &d.lines[1];
        assert!(plus
            .segments
            .iter()
            .any(|s| s.emphasised && s.text == "fail"));
    }

    #[test]
    fn text_without_trailing_newline_diffs_cleanly() {
        let d = line_diff("a", "b");
        assert_eq!(d.lines.len(), 2);
        assert_eq!(d.lines[0].text(), "a");
        assert_eq!(d.lines[1].text(), "b");
    }

    #[test]
    fn word_diff_marks_removed_and_added_words() {
        let d = word_diff(
            "file src/main.rs was modified",
            "file src/lib.rs was modified",
        );
        assert!(!d.is_unchanged());
        assert!(d
            .old
            .iter()
            .any(|s| s.emphasised && s.text == "src/main.rs"));
        assert!(d.new.iter().any(|s| s.emphasised && s.text == "src/lib.rs"));
        let old: String = d.old.iter().map(|s| s.text.as_str()).collect();
        assert_eq!(old, "file src/main.rs was modified");
    }

    #[test]
    fn a_case_blind_word_diff_keeps_each_side_as_written() {
        let d = word_diff_ignoring_case(
            "do not run destructive database operations",
            "Do not run queries on the database.",
        );
        let old: String = d.old.iter().map(|s| s.text.as_str()).collect();
        let new: String = d.new.iter().map(|s| s.text.as_str()).collect();
        assert_eq!(old, "do not run destructive database operations");
        assert_eq!(new, "Do not run queries on the database.");
        assert!(d
            .new
            .iter()
            .any(|s| !s.emphasised && s.text.starts_with("Do not run")));
        assert!(d
            .old
            .iter()
            .any(|s| s.emphasised && s.text.contains("destructive")));
    }

    #[test]
    fn equal_predicates_are_unchanged() {
        assert!(word_diff("x is 3", "x is 3").is_unchanged());
    }

    #[test]
    fn glyphs_carry_the_tag_without_colour() {
        assert_eq!(LineTag::Minus.glyph(), '-');
        assert_eq!(LineTag::Plus.glyph(), '+');
        assert_eq!(LineTag::Zero.glyph(), ' ');
    }
}
