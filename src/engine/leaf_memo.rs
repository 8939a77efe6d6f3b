//! Short leaves scanned once per scanner. A summary that passes holds in its claims the
//! registries' own ids, predicates and digests, the same on every call with one policy; what a
//! scan finds in a text depends on the text and the scanner's selection alone (see
//! [`LeafScanner::selection`]), so the findings of a short text are kept and handed out again,
//! named after the field that asks. Only texts of at most [`MAX_TEXT_BYTES`] are kept, at most
//! [`MAX_ENTRIES`] of them (then the memo starts over), and only for the scanner that found
//! them: a summarizer that fills its claims with new strings costs memory that stays bounded,
//! and never changes what a scan reports.

use std::collections::HashMap;
use std::sync::RwLock;

use super::secret_scan::{LeafFinding, LeafScanner};

/// Longer texts are always scanned.
pub const MAX_TEXT_BYTES: usize = 256;

/// Texts kept before the memo starts over.
pub const MAX_ENTRIES: usize = 4096;

#[derive(Debug, Default)]
pub struct LeafMemo {
    kept: RwLock<Option<Kept>>,
}

#[derive(Debug)]
struct Kept {
    selection: String,
    found: HashMap<String, Vec<LeafFinding>>,
}

impl LeafMemo {
    /// What `scanner` finds in `text`, as `scanner.scan_field(field_path, text)` answers.
    pub fn scan_field(
        &self,
        scanner: &dyn LeafScanner,
        field_path: &str,
        text: &str,
    ) -> Vec<LeafFinding> {
        let Some(selection) = scanner.selection().filter(|_| text.len() <= MAX_TEXT_BYTES) else {
            return scanner.scan_field(field_path, text);
        };
        let named = |found: &[LeafFinding]| -> Vec<LeafFinding> {
            found
                .iter()
                .map(|f| LeafFinding {
                    field_path: field_path.to_owned(),
                    ..f.clone()
                })
                .collect()
        };
        if let Ok(kept) = self.kept.read() {
            let found = kept
                .as_ref()
                .filter(|k| k.selection == selection)
                .and_then(|k| k.found.get(text));
            if let Some(found) = found {
                return named(found);
            }
        }
        let found = scanner.scan_field(field_path, text);
        if let Ok(mut kept) = self.kept.write() {
            let fresh = kept
                .as_ref()
                .is_none_or(|k| k.selection != selection || k.found.len() >= MAX_ENTRIES);
            if fresh {
                *kept = Some(Kept {
                    selection: selection.to_owned(),
                    found: HashMap::new(),
                });
            }
            if let Some(k) = kept.as_mut() {
                k.found.insert(text.to_owned(), found.clone());
            }
        }
        found
    }

    /// Forgets every kept text.
    pub fn clear(&self) {
        if let Ok(mut kept) = self.kept.write() {
            *kept = None;
        }
    }

    /// How many texts are kept.
    pub fn len(&self) -> usize {
        self.kept
            .read()
            .ok()
            .and_then(|k| k.as_ref().map(|k| k.found.len()))
            .unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A leaf scanner whose short leaves go through a memo.
pub struct Memoized<'a> {
    pub scanner: &'a dyn LeafScanner,
    pub memo: &'a LeafMemo,
}

impl LeafScanner for Memoized<'_> {
    fn scan_field(&self, field_path: &str, text: &str) -> Vec<LeafFinding> {
        self.memo.scan_field(self.scanner, field_path, text)
    }

    fn selection(&self) -> Option<&str> {
        self.scanner.selection()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::Scanner;

    const TOKEN: &str = "ghp_R7xK2mQ9vL4pT8wZ3nB6cY1dF5hJ0sA2eG7k";

    struct Unnamed(Scanner);

    impl LeafScanner for Unnamed {
        fn scan_field(&self, field_path: &str, text: &str) -> Vec<LeafFinding> {
            self.0.scan_field(field_path, text)
        }
    }

    fn scanner() -> Scanner {
        Scanner::builtin().unwrap()
    }

    #[test]
    fn a_kept_text_gives_what_a_scan_gives_named_after_the_field_that_asks() {
        let scanner = scanner();
        let memo = LeafMemo::default();
        let texts = [
            TOKEN,
            "SAFETY-1",
            "deny(secret_disclosure)",
            "password: hunter2-Xk9!",
        ];
        for text in texts {
            let first = memo.scan_field(&scanner, "a.b", text);
            assert_eq!(first, scanner.scan_field("a.b", text), "{text}");
            let again = memo.scan_field(&scanner, "claims[3].status", text);
            assert_eq!(
                again,
                scanner.scan_field("claims[3].status", text),
                "{text}"
            );
        }
        assert!(!scanner.scan_field("f", TOKEN).is_empty());
        assert_eq!(memo.len(), texts.len());
    }

    #[test]
    fn another_selection_is_scanned_afresh() {
        let all = scanner();
        let pii = all.for_entity_types(&["PII"]).unwrap();
        assert_ne!(all.selection(), pii.selection());
        assert_eq!(all.selection(), all.clone().selection());
        let memo = LeafMemo::default();
        assert!(!memo.scan_field(&all, "f", TOKEN).is_empty());
        assert_eq!(
            memo.scan_field(&pii, "f", TOKEN),
            pii.scan_field("f", TOKEN)
        );
        assert!(pii.scan_field("f", TOKEN).is_empty());
        assert!(!memo.scan_field(&all, "f", TOKEN).is_empty());
    }

    #[test]
    fn long_texts_and_scanners_without_a_selection_are_not_kept() {
        let memo = LeafMemo::default();
        let long = format!("{TOKEN} {}", "word ".repeat(MAX_TEXT_BYTES / 5));
        let scanner = scanner();
        assert_eq!(
            memo.scan_field(&scanner, "f", &long),
            scanner.scan_field("f", &long)
        );
        let unnamed = Unnamed(scanner.clone());
        assert!(!memo.scan_field(&unnamed, "f", TOKEN).is_empty());
        assert!(memo.is_empty());
    }

    #[test]
    fn the_memo_stays_bounded() {
        let memo = LeafMemo::default();
        let scanner = scanner();
        for i in 0..MAX_ENTRIES + 10 {
            memo.scan_field(&scanner, "f", &format!("id-{i}"));
            assert!(memo.len() <= MAX_ENTRIES);
        }
        assert_eq!(memo.len(), 10);
        memo.clear();
        assert!(memo.is_empty());
    }
}
