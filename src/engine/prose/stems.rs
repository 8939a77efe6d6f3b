//! Words as prose mode compares them: runs of letters and digits, lower-cased, stop words
//! dropped, reduced to a crude stem (`pushed`, `pushes`, `pushing` → `push`; `committed` →
//! `commit`) so that a paraphrase meets the words it paraphrases. The stemmer only has to be
//! consistent, not linguistic: both sides of every comparison go through it.
//!
//! Also the approximate match of a quote inside a turn: token by token, a few edits allowed in
//! a long quote and none in a short one, and never an edit that adds or drops a negation, so
//! "push it, I approve" is not found in "push it? I don't approve".

use std::collections::HashSet;

/// The words of `text` with their byte ranges: maximal runs of alphanumeric characters.
pub fn words(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut rest = text.char_indices().peekable();
    std::iter::from_fn(move || {
        while let Some(&(_, c)) = rest.peek() {
            if c.is_alphanumeric() {
                break;
            }
            rest.next();
        }
        let (start, _) = *rest.peek()?;
        let mut end = start;
        while let Some(&(at, c)) = rest.peek() {
            if !c.is_alphanumeric() {
                break;
            }
            end = at + c.len_utf8();
            rest.next();
        }
        text.get(start..end).map(|w| (start, w))
    })
}

/// The crude stem of one word (lower-cased first).
pub fn stem(word: &str) -> String {
    let mut w = word.to_lowercase();
    if !w.is_ascii() || w.len() <= 3 {
        return w;
    }
    let cut = |w: &mut String, suffix: &str, keep: usize, add: &str| -> bool {
        if w.len() >= suffix.len() + keep && w.ends_with(suffix) {
            w.truncate(w.len() - suffix.len());
            w.push_str(add);
            true
        } else {
            false
        }
    };
    let _ = cut(&mut w, "ies", 2, "y")
        || cut(&mut w, "ied", 2, "y")
        || cut(&mut w, "sses", 2, "ss")
        || cut(&mut w, "ches", 2, "ch")
        || cut(&mut w, "shes", 2, "sh")
        || cut(&mut w, "xes", 2, "x")
        || (!w.ends_with("ss")
            && !w.ends_with("us")
            && !w.ends_with("is")
            && cut(&mut w, "s", 3, ""));
    let _ = cut(&mut w, "ingly", 3, "")
        || cut(&mut w, "ing", 2, "")
        || cut(&mut w, "edly", 3, "")
        || cut(&mut w, "ed", 2, "")
        || cut(&mut w, "ly", 4, "");
    if w.len() > 3 && w.ends_with('e') {
        w.pop();
    }
    let bytes = w.as_bytes();
    if let [.., a, b] = bytes {
        if a == b && !b"lsz".contains(b) && !b"aeiou".contains(b) && w.len() > 3 {
            w.pop();
        }
    }
    w
}

/// Stop words and decisive words, as the comparisons need them.
#[derive(Debug, Clone, Default)]
pub struct Vocabulary {
    stopwords: HashSet<String>,
    decisive: HashSet<String>,
}

impl Vocabulary {
    pub fn new(stopwords: &[String], decisive: &[String]) -> Vocabulary {
        Vocabulary {
            stopwords: stopwords.iter().map(|w| w.to_lowercase()).collect(),
            decisive: decisive.iter().map(|w| stem(w)).collect(),
        }
    }

    /// Whether `word` (as written) carries meaning: not a stop word, not a lone letter.
    pub fn is_content(&self, word: &str) -> bool {
        let lower = word.to_lowercase();
        !self.stopwords.contains(&lower)
            && (lower.chars().count() > 1 || lower.chars().all(|c| c.is_ascii_digit()))
    }

    pub fn is_decisive(&self, stem: &str) -> bool {
        self.decisive.contains(stem)
    }

    /// The content stems of `text`, in order, repeats kept.
    pub fn stems(&self, text: &str) -> Vec<String> {
        words(text)
            .filter(|(_, w)| self.is_content(w))
            .map(|(_, w)| stem(w))
            .collect()
    }

    /// The content stems of `text` as a set.
    pub fn bag(&self, text: &str) -> HashSet<String> {
        self.stems(text).into_iter().collect()
    }
}

/// A quote's tokens: lower-cased words, every one kept (stop words carry a quote's sense).
pub fn tokens(text: &str) -> Vec<String> {
    words(text).map(|(_, w)| w.to_lowercase()).collect()
}

const NEGATIONS: [&str; 9] = [
    "not", "no", "never", "don", "dont", "t", "nt", "cannot", "won",
];

fn is_negation(token: &str) -> bool {
    NEGATIONS.contains(&token)
}

/// Whether two tokens are the same word: equal, the same stem, or one typo apart in words
/// of five letters or more.
fn same_token(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    if is_negation(a) || is_negation(b) {
        return false;
    }
    if stem(a) == stem(b) {
        return true;
    }
    a.len() >= 5 && b.len() >= 5 && within_one_edit(a.as_bytes(), b.as_bytes())
}

/// One substitution, insertion, deletion or transposition at most.
fn within_one_edit(a: &[u8], b: &[u8]) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if long.len() - short.len() > 1 {
        return false;
    }
    let prefix = short.iter().zip(long).take_while(|(x, y)| x == y).count();
    if short.len() == long.len() {
        let rest_equal = |skip: usize| short.get(prefix + skip..) == long.get(prefix + skip..);
        return rest_equal(1)
            || (prefix + 1 < short.len()
                && short.get(prefix) == long.get(prefix + 1)
                && short.get(prefix + 1) == long.get(prefix)
                && rest_equal(2));
    }
    short.get(prefix..) == long.get(prefix + 1..)
}

/// The fewest token edits that turn `quote` into some run of `turn`'s tokens (Sellers'
/// algorithm: a quote may start and end anywhere in the turn). An edit on a negation token
/// costs `never`, so no amount of tolerance lets a quote drop or add one.
pub fn edits_to_match(quote: &[String], turn: &[String], never: usize) -> usize {
    if quote.is_empty() {
        return 0;
    }
    let cost = |t: &str| if is_negation(t) { never } else { 1 };
    // A match may neither start right after a negation of the turn nor end right before one:
    // "don't push to main" does not say "push to main". (A quote that drops its last words to
    // stop short of "I don't approve" pays for them as edits.)
    let window = 1;
    let negation_in = |from: usize, to: usize| {
        turn.get(from..to.min(turn.len()))
            .is_some_and(|ts| ts.iter().any(|t| is_negation(t)))
    };
    let negated_before = |j: usize| negation_in(j.saturating_sub(window), j);
    // prev[j]: best cost of matching quote[..i] ending at turn[..j].
    let mut prev: Vec<usize> = (0..=turn.len())
        .map(|j| if negated_before(j) { never } else { 0 })
        .collect();
    let mut row = vec![0usize; turn.len() + 1];
    for q in quote {
        let q_cost = cost(q);
        row[0] = prev[0].saturating_add(q_cost);
        for (j, t) in turn.iter().enumerate() {
            let substitute = if same_token(q, t) {
                prev[j]
            } else {
                prev[j].saturating_add(q_cost.max(cost(t)))
            };
            let delete = prev[j + 1].saturating_add(q_cost);
            let insert = row[j].saturating_add(cost(t));
            row[j + 1] = substitute.min(delete).min(insert);
        }
        std::mem::swap(&mut prev, &mut row);
    }
    prev.iter()
        .enumerate()
        .filter(|(j, _)| !negation_in(*j, *j + window))
        .map(|(_, cost)| *cost)
        .min()
        .unwrap_or(usize::MAX)
}

/// Edits a quote of `len` tokens may need and still count as the user's words.
pub fn allowed_edits(len: usize) -> usize {
    len / 8
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(text: &str) -> Vec<String> {
        tokens(text)
    }

    #[test]
    fn inflections_share_a_stem() {
        for (a, b) in [
            ("pushed", "push"),
            ("pushing", "pushes"),
            ("committed", "commit"),
            ("starting", "start"),
            ("approved", "approves"),
            ("deleting", "delete"),
            ("dependencies", "dependency"),
            ("tackle", "tackles"),
            ("running", "run"),
        ] {
            assert_eq!(stem(a), stem(b), "{a} {b}");
        }
        assert_ne!(stem("push"), stem("pull"));
    }

    #[test]
    fn a_quote_matches_with_typos_but_never_across_a_negation() {
        let turn = toks("and continue with the reamining tasks");
        assert_eq!(
            edits_to_match(&toks("continue with the remaining tasks"), &turn, 99),
            0
        );
        let turn = toks("push it to main? I don't approve");
        let quote = toks("push it to main, I approve");
        assert!(edits_to_match(&quote, &turn, 99) > allowed_edits(quote.len()));
        let turn =
            toks("we can finally push the reviewed change set to main today? I don't approve");
        let quote = toks("we can finally push the reviewed change set to main today, I approve");
        assert!(edits_to_match(&quote, &turn, 99) > allowed_edits(quote.len()));
        assert!(edits_to_match(&toks("push to main"), &toks("don't push to main"), 99) > 0);
        let turn = toks("Work on bead spotter-fum. Run bd show spotter-fum.");
        assert_eq!(
            edits_to_match(&toks("Work on bead spotter-fum"), &turn, 99),
            0
        );
        assert_eq!(
            edits_to_match(&toks("Work on bead spotter-dov"), &turn, 99),
            1
        );
    }

    #[test]
    fn words_are_alphanumeric_runs() {
        let found: Vec<&str> = words("git push --force origin/main; spotter-gqc.6")
            .map(|(_, w)| w)
            .collect();
        assert_eq!(
            found,
            ["git", "push", "force", "origin", "main", "spotter", "gqc", "6"]
        );
    }
}
