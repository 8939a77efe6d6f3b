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

/// Every mark that opens or closes a quote.
pub const QUOTE_MARKS: [char; 3] = ['"', OPEN_CURLY, CLOSE_CURLY];

/// Where a search for a closing quote stopped: at the closing quote, a line break or the end
/// of the text, and how many characters come before it.
#[derive(Clone, Copy)]
struct Stop {
    at: usize,
    chars_before: usize,
    closed: bool,
}

/// The first closing `close` or line break at or after `start`, whose characters before it
/// are `chars_before`.
fn stop(text: &str, start: usize, chars_before: usize, close: char) -> Stop {
    let rest = &text[start..];
    let (end, closed) = match rest.find([close, '\n']) {
        Some(i) => (i, rest[i..].starts_with(close)),
        None => (rest.len(), false),
    };
    Stop {
        at: start + end,
        chars_before: chars_before + rest[..end].chars().count(),
        closed,
    }
}

/// The inner ranges of the quoted strings of `text`, in order (see the module docs). The
/// openings are visited in order, and each kind of quote remembers where its last search for a
/// closing quote stopped (an opening before that stop stops there too), so no stretch of the
/// text is searched or counted more than three times, and nothing is held but the answer.
pub fn quoted(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    // The characters before `counted`.
    let (mut counted, mut chars) = (0, 0);
    let mut last: [Option<Stop>; 2] = [None, None];
    let mut from = 0;
    while let Some(i) = text[from..].find(['"', OPEN_CURLY]) {
        let open = from + i;
        chars += text[counted..open].chars().count();
        counted = open;
        let straight = text[open..].starts_with('"');
        let (kind, close, start) = match straight {
            true => (0, '"', open + 1),
            false => (1, CLOSE_CURLY, open + OPEN_CURLY.len_utf8()),
        };
        let end = match last[kind] {
            Some(stop) if stop.at >= start => stop,
            _ => stop(text, start, chars + 1, close),
        };
        last[kind] = Some(end);
        let inside = end.chars_before - chars - 1;
        if end.closed && (1..=MAX_QUOTE_CHARS).contains(&inside) {
            out.push(start..end.at);
            // The search goes on after the closing quote.
            from = end.at + close.len_utf8();
        } else {
            from = start;
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

    #[test]
    fn lines_of_openings_that_never_close_take_one_pass() {
        // Each opening would search to the end of the line again without the stops it shares:
        // some 10^12 steps here.
        for open in ["\u{201C}", "\"\u{201C}", "\u{201C}a"] {
            let text = open.repeat((4 << 20) / open.len());
            let quotes = quoted(&text);
            assert!(quotes.iter().all(|q| q.len() <= 4), "{open:?}");
        }
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
