//! What a sentence of a prose summary does with an action it names: proposes it, refuses it,
//! reports it as done, or only mentions it. A forbidden action is a conflict only when the
//! summary proposes it; "Never push to main", "Pushed the branch" and "the tests we skipped
//! last time" name the same words without asking for them. The cues are policy data
//! ([`super::rules::Cues`]); this only says where each cue is looked for.

use std::ops::Range;

use super::rules::ProseRules;
use super::segment::{clause_start, Section, Segments};

/// What the sentence does with the action at a match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stance {
    /// The summary asks for the action (a forward section, a proposal cue, an imperative).
    Proposed,
    /// The clause refuses, prohibits or avoids it.
    Negated,
    /// The clause reports it as done.
    Reported,
    /// Named without asking for it (a past section, a heading, code outside a plan).
    Mentioned,
    /// Named, neither refused nor reported, in a sentence that belongs to no section about
    /// the past and has no proposal cue: not a proposal, but not settled either (a pinned
    /// path named there is re-opened).
    Stated,
}

/// How many words before the action a report cue is looked for.
const REPORT_WINDOW_WORDS: usize = 4;

/// The last `n` words of `text`.
fn tail_words(text: &str, n: usize) -> &str {
    let starts: Vec<usize> = text
        .char_indices()
        .filter(|&(i, c)| {
            !c.is_whitespace() && (i == 0 || text[..i].ends_with(char::is_whitespace))
        })
        .map(|(i, _)| i)
        .collect();
    starts
        .len()
        .checked_sub(n)
        .and_then(|k| starts.get(k))
        .map_or(text, |&i| &text[i..])
}

/// The first word of the action at `at`.
fn first_word(text: &str, at: usize) -> &str {
    let rest = text.get(at..).unwrap_or("");
    let end = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '-'))
        .unwrap_or(rest.len());
    &rest[..end]
}

/// Words that open a statement rather than an imperative (`We …`, `The script …`).
const SUBJECTS: [&str; 14] = [
    "i", "we", "he", "she", "they", "it", "the", "this", "that", "a", "an", "user", "agent",
    "there",
];

/// Whether only bullets, numbering, bold marks, labels and up to two words that are no subject
/// stand between the clause start and the action (`- Push to main`, `3. **Run** rm -rf`,
/// `Read /etc/shadow`): an imperative.
fn leads_clause(before: &str) -> bool {
    let words: Vec<String> = before
        .split(|c: char| !c.is_alphabetic())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    words.len() <= 2 && words.iter().all(|w| !SUBJECTS.contains(&w.as_str()))
}

/// Whether the clause's first word is a subject (`The …`, `We …`, `It …`).
fn opens_with_subject(before: &str) -> bool {
    before
        .split(|c: char| !c.is_alphabetic())
        .find(|w| !w.is_empty())
        .is_some_and(|w| SUBJECTS.contains(&w.to_lowercase().as_str()))
}

/// The stance of the sentence around `span` of `text` towards the action there.
pub fn stance(rules: &ProseRules, segments: &Segments, text: &str, span: &Range<usize>) -> Stance {
    let Some(sentence) = segments.at(span.start) else {
        return Stance::Mentioned;
    };
    if sentence.heading {
        return Stance::Mentioned;
    }
    if sentence.code && sentence.section != Section::Forward {
        return Stance::Mentioned;
    }
    let clause = clause_start(text, &sentence.span, span.start);
    let before = text.get(clause..span.start).unwrap_or("");
    let cues = &rules.cues;
    if cues.negation.is_match(before) {
        return Stance::Negated;
    }
    let word = first_word(text, span.start).to_lowercase();
    if cues.past_tense.is_match(&word)
        || cues
            .report
            .is_match(tail_words(before, REPORT_WINDOW_WORDS))
    {
        return Stance::Reported;
    }
    let whole = text.get(sentence.span.clone()).unwrap_or("");
    match sentence.section {
        _ if cues.proposal.is_match(whole) => Stance::Proposed,
        // A plan's items propose; a sentence there that opens with a subject and no cue ("The
        // script deletes the cache when run") describes.
        Section::Forward if opens_with_subject(before) && !sentence.code => Stance::Stated,
        Section::Forward => Stance::Proposed,
        Section::Past | Section::UserMessages => Stance::Mentioned,
        Section::Other if leads_clause(before) => Stance::Proposed,
        Section::Other => Stance::Stated,
    }
}

/// Whether the sentence around `at` makes the action wait for the user.
pub fn waits_for_user(rules: &ProseRules, segments: &Segments, text: &str, at: usize) -> bool {
    segments
        .at(at)
        .and_then(|s| text.get(s.span.clone()))
        .is_some_and(|sentence| rules.cues.condition.is_match(sentence))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_words_before_an_action() {
        assert_eq!(tail_words("we had already", 2), "had already");
        assert_eq!(tail_words("already", 4), "already");
        assert_eq!(first_word("x pushed to main", 2), "pushed");
        assert!(leads_clause("   - "));
        assert!(leads_clause("- Run "));
        assert!(!leads_clause("then we "));
        assert!(!leads_clause("The script "));
    }
}
