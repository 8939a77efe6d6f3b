//! The quoted strings of a text: `"…"` or `“…”` on one line, with 1 to [`MAX_QUOTE_CHARS`]
//! characters inside, found leftmost first and without overlap, exactly as the regex
//! `"([^"\n]{1,2000})"|“([^”\n]{1,2000})”` finds them. That regex costs about 30 ms to compile
//! (two thousand copies of a Unicode class), more than the rest of a prose check; this finds
//! the same in one pass over the text.

use std::ops::Range;

/// The most characters a quote holds.
pub const MAX_QUOTE_CHARS: usize = 2000;

const OPEN_CURLY: char = '\u{201C}';
const CLOSE_CURLY: char = '\u{201D}';

/// The characters that open, close or cut a quote, where each is and how many characters
/// come before it.
struct Mark {
    at: usize,
    chars_before: usize,
    c: char,
}

/// The inner ranges of the quoted strings of `text`, in order (see the module docs).
pub fn quoted(text: &str) -> Vec<Range<usize>> {
    let marks: Vec<Mark> = text
        .char_indices()
        .enumerate()
        .filter(|(_, (_, c))| matches!(*c, '"' | '\n' | OPEN_CURLY | CLOSE_CURLY))
        .map(|(chars_before, (at, c))| Mark {
            at,
            chars_before,
            c,
        })
        .collect();
    // For each mark, the next mark after it that ends a straight quote (`"` or a line break),
    // and the next that ends a curly one (`”` or a line break).
    let mut next_straight = vec![None; marks.len()];
    let mut next_curly = vec![None; marks.len()];
    let (mut straight, mut curly) = (None, None);
    for (i, mark) in marks.iter().enumerate().rev() {
        next_straight[i] = straight;
        next_curly[i] = curly;
        if matches!(mark.c, '"' | '\n') {
            straight = Some(i);
        }
        if matches!(mark.c, CLOSE_CURLY | '\n') {
            curly = Some(i);
        }
    }
    let mut out = Vec::new();
    let mut i = 0;
    while i < marks.len() {
        let open = &marks[i];
        let (end, close) = match open.c {
            '"' => (next_straight[i], '"'),
            OPEN_CURLY => (next_curly[i], CLOSE_CURLY),
            _ => (None, '"'),
        };
        let closed = end.filter(|&j| {
            let inside = marks[j].chars_before - open.chars_before - 1;
            marks[j].c == close && (1..=MAX_QUOTE_CHARS).contains(&inside)
        });
        match closed {
            Some(j) => {
                out.push(open.at + open.c.len_utf8()..marks[j].at);
                // The search goes on after the closing quote.
                i = j + 1;
            }
            None => i += 1,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The regex this replaces.
    fn by_regex(text: &str) -> Vec<Range<usize>> {
        let regex =
            regex::Regex::new(r#""([^"\n]{1,2000})"|\x{201C}([^\x{201D}\n]{1,2000})\x{201D}"#)
                .unwrap();
        regex
            .captures_iter(text)
            .filter_map(|c| c.get(1).or_else(|| c.get(2)).map(|m| m.range()))
            .collect()
    }

    #[test]
    fn quotes_of_every_kind_and_length() {
        let long = "é".repeat(MAX_QUOTE_CHARS);
        let texts = [
            String::new(),
            r#"the user said "ship it" and “go ahead”, then """#.to_owned(),
            "\"a\nb\" “c\n” \"d\"".to_owned(),
            format!("\"{long}\" and \"{long}x\" then \"ok\""),
            format!("“{long}” “{long}é” “ok”"),
            "“a \"b\" c” \"d “e” f\" ”\"".to_owned(),
        ];
        for text in &texts {
            assert_eq!(quoted(text), by_regex(text), "{text:?}");
        }
        assert_eq!(quoted(r#"said "ship it" and “go ahead”"#), [6..13, 22..30]);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 256,
            ..crate::scan::unsaved_proptest()
        })]
        #[test]
        fn any_text_gets_the_regexs_quotes(
            parts in proptest::collection::vec(
                proptest::sample::select(vec![
                    "\"", "\u{201C}", "\u{201D}", "\n", "a", "é", " ", "\u{2019}",
                    // Three of these hold more than a quote may.
                    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\
                     aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                ]),
                0..80,
            )
        ) {
            let text: String = parts.iter().map(|p| {
                if p.len() > 100 { p.repeat(5) } else { (*p).to_owned() }
            }).collect();
            proptest::prop_assert_eq!(quoted(&text), by_regex(&text));
        }
    }
}
