//! Regex sets over rule patterns: the digit-rule tiers and the whole-field rules each ask one
//! set which of its rules can match in a window or a field, then run only those.

use regex::bytes::{RegexSet, RegexSetBuilder};

use super::rule::REGEX_SIZE_LIMIT;

/// A set over `patterns` with ASCII semantics (the rules that opt into Unicode run on their
/// own) and room for the patterns of a whole tier.
pub(super) fn build<'a>(patterns: impl IntoIterator<Item = &'a str>) -> Result<RegexSet, String> {
    RegexSetBuilder::new(patterns)
        .unicode(false)
        .size_limit(REGEX_SIZE_LIMIT * 4)
        .dfa_size_limit(REGEX_SIZE_LIMIT * 4)
        .build()
        .map_err(|e| e.to_string())
}

/// The indexes of the set's patterns that match somewhere in `hay`, in set order. Most
/// windows and fields match none: the plain search says so and stops at a first match, where
/// the overlapping search that names every matching pattern reads on to the end.
pub(super) fn matching(set: &RegexSet, hay: &[u8]) -> Vec<usize> {
    if !set.is_match(hay) {
        return Vec::new();
    }
    set.matches(hay).into_iter().collect()
}
