//! A prose summary cut into what the checks reason about: lines, headings and the sections
//! they open, fenced code, sentences and clauses, each as a byte range of the summary. The
//! matchers run on the whole text (so a line break cannot hide an action from a pattern);
//! this only says where a match stands: in which sentence and clause, under which heading.

use std::ops::Range;

use super::rules::Sections;

/// What a heading says about the lines under it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// No heading, or one the policy gives no meaning.
    Other,
    /// The runtime's list of the user's own messages: quotes there are the user's words.
    UserMessages,
    /// What comes next: every sentence there proposes.
    Forward,
    /// What already happened: a sentence there proposes only with a proposal cue.
    Past,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sentence {
    pub span: Range<usize>,
    pub section: Section,
    /// Inside a fenced code block (the fence lines included).
    pub code: bool,
    pub heading: bool,
}

/// The summary's sentences, in order.
#[derive(Debug, Clone)]
pub struct Segments {
    pub sentences: Vec<Sentence>,
}

/// A heading's text (markers stripped) and whether it is top-level, or `None`.
fn heading(line: &str) -> Option<(&str, bool)> {
    let indent = line.len() - line.trim_start().len();
    let mut t = line.trim();
    if t.is_empty() || t.len() > 100 {
        return None;
    }
    if let Some(rest) = t.strip_prefix('#') {
        return Some((rest.trim_start_matches('#').trim(), indent == 0));
    }
    let bullet = t.starts_with("- ") || (t.starts_with("* ") && !t.starts_with("**"));
    if bullet {
        t = t[2..].trim_start();
    }
    let numbered = t
        .split_once(". ")
        .filter(|(n, _)| !n.is_empty() && n.len() <= 3 && n.bytes().all(|b| b.is_ascii_digit()));
    if let Some((_, rest)) = numbered {
        t = rest.trim_start();
    }
    let inner = t.trim_end_matches(':').trim_end();
    let bold = inner.len() > 4 && inner.starts_with("**") && inner.ends_with("**");
    let ends_colon = t.ends_with(':');
    if !(bold || ends_colon) {
        return None;
    }
    let text = inner.trim_matches('*').trim();
    if text.is_empty() || text.len() > 80 {
        return None;
    }
    Some((text, indent == 0 && !bullet))
}

fn section_of(text: &str, sections: &Sections) -> Option<Section> {
    if sections.user_messages.is_match(text) {
        Some(Section::UserMessages)
    } else if sections.forward.is_match(text) {
        Some(Section::Forward)
    } else if sections.past.is_match(text) {
        Some(Section::Past)
    } else {
        None
    }
}

/// Where a sentence ends in `line` after byte `at`: `.`, `!` or `?` before whitespace or the
/// end of the line (so `src/main.rs` and `v1.2` end nothing).
fn sentence_ends(line: &str) -> Vec<usize> {
    let bytes = line.as_bytes();
    let mut ends = Vec::new();
    let mut from = 0;
    for (i, &b) in bytes.iter().enumerate() {
        // The `.` of a list number (`1. Did x.`) ends nothing.
        let numbering = || {
            let piece = line
                .get(from..i)
                .unwrap_or("")
                .trim_start_matches([' ', '-', '*']);
            !piece.is_empty() && piece.bytes().all(|d| d.is_ascii_digit())
        };
        if matches!(b, b'.' | b'!' | b'?')
            && bytes.get(i + 1).is_none_or(|n| n.is_ascii_whitespace())
            && !(b == b'.' && numbering())
        {
            ends.push(i + 1);
            from = i + 1;
        }
    }
    ends
}

impl Segments {
    pub fn new(text: &str, sections: &Sections) -> Segments {
        let mut sentences = Vec::new();
        let mut section = Section::Other;
        // A sub-heading's meaning lasts until the next top-level heading.
        let mut top = Section::Other;
        let mut in_code = false;
        let mut offset = 0;
        for raw in text.split_inclusive('\n') {
            let line = raw.trim_end_matches(['\n', '\r']);
            let start = offset;
            offset += raw.len();
            if line.trim().is_empty() {
                continue;
            }
            let fence =
                line.trim_start().starts_with("```") || line.trim_start().starts_with("~~~");
            if fence || in_code {
                if fence {
                    in_code = !in_code;
                }
                sentences.push(Sentence {
                    span: start..start + line.len(),
                    section,
                    code: true,
                    heading: false,
                });
                continue;
            }
            if let Some((title, top_level)) = heading(line) {
                let found = section_of(title, sections);
                if top_level {
                    top = found.unwrap_or(Section::Other);
                    section = top;
                } else if let Some(found) = found {
                    section = found;
                } else {
                    section = top;
                }
                sentences.push(Sentence {
                    span: start..start + line.len(),
                    section,
                    code: false,
                    heading: true,
                });
                continue;
            }
            let mut from = 0;
            for end in sentence_ends(line).into_iter().chain([line.len()]) {
                if end <= from {
                    continue;
                }
                let piece = &line[from..end];
                let lead = piece.len() - piece.trim_start().len();
                if !piece.trim().is_empty() {
                    sentences.push(Sentence {
                        span: start + from + lead..start + end,
                        section,
                        code: false,
                        heading: false,
                    });
                }
                from = end;
            }
        }
        Segments { sentences }
    }

    /// The sentence holding byte `at`.
    pub fn at(&self, at: usize) -> Option<&Sentence> {
        let index = self.sentences.partition_point(|s| s.span.start <= at);
        let sentence = self.sentences.get(index.checked_sub(1)?)?;
        (at < sentence.span.end.max(sentence.span.start + 1)).then_some(sentence)
    }
}

/// Words and marks that end a clause inside a sentence.
const CLAUSE_BREAKS: [&str; 14] = [
    "; ", ": ", " — ", " – ", " - ", ", then ", " then ", ", but ", " but ", ", and ", ", so ",
    " so ", "(", ")",
];

/// Where the clause holding byte `at` of `text` starts, within `sentence`.
pub fn clause_start(text: &str, sentence: &Range<usize>, at: usize) -> usize {
    let Some(head) = text.get(sentence.start..at.max(sentence.start)) else {
        return sentence.start;
    };
    let lower = head.to_lowercase();
    CLAUSE_BREAKS
        .iter()
        .filter_map(|b| lower.rfind(b).map(|i| i + b.len()))
        .max()
        .filter(|&i| i <= head.len())
        .map_or(sentence.start, |i| sentence.start + i)
}

#[cfg(test)]
mod tests {
    use super::super::rules::AnyOf;
    use super::*;

    fn sections() -> Sections {
        let r = |p: &str| AnyOf::new(&[p.to_owned()], "section").unwrap();
        Sections {
            user_messages: r("all user messages"),
            forward: r("pending|next step|still need"),
            past: r("analysis|errors"),
        }
    }

    #[test]
    fn headings_open_sections_and_sub_headings_last_until_the_next() {
        let text = "Analysis:\n1. Did x. Then y.\n6. All user messages:\n   - \"hi\"\n7. Pending Tasks:\n   - push\nCurrent state:\n   Still needed:\n   - a\n9. Errors:\n```\ncode. here\n```\n";
        let s = Segments::new(text, &sections());
        let kinds: Vec<(&str, Section, bool)> = s
            .sentences
            .iter()
            .map(|x| (&text[x.span.clone()], x.section, x.code))
            .collect();
        assert_eq!(kinds[0], ("Analysis:", Section::Past, false));
        assert_eq!(kinds[1], ("1. Did x.", Section::Past, false));
        assert_eq!(kinds[2], ("Then y.", Section::Past, false));
        assert_eq!(kinds[4], ("- \"hi\"", Section::UserMessages, false));
        assert_eq!(kinds[6], ("- push", Section::Forward, false));
        assert_eq!(kinds[7].1, Section::Other);
        assert_eq!(kinds[9], ("- a", Section::Forward, false));
        assert_eq!(kinds[11], ("```", Section::Past, true));
        assert_eq!(kinds[12], ("code. here", Section::Past, true));
        assert!(s.at(text.find("Then").unwrap()).is_some());
    }

    #[test]
    fn clauses_break_at_semicolons_and_conjunctions() {
        let text = "Do not wait; push to main now.";
        let at = text.find("push").unwrap();
        assert_eq!(
            clause_start(text, &(0..text.len()), at),
            text.find("push").unwrap()
        );
        let text = "Never push to main.";
        assert_eq!(
            clause_start(text, &(0..text.len()), text.find("push").unwrap()),
            0
        );
    }
}
