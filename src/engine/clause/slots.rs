//! Clause templates and their typed slots. A slot takes exactly one word, and its type says
//! which: a built-in shape (`path`, `identifier`, `number`, `commit`), a choice (`{a|b}`),
//! or a type the policy declares (`{test}`, `{branch}`, a narrower `{path}`) as a shape
//! plus a pattern and a bound on the words the value joins. A declared type replaces the
//! built-in of the same name; its pattern compiles on first use (one that does not compile
//! accepts no word), and [`SlotTypes::validate`] proves every declared type's examples.

use crate::policy::grammar::{SlotShape, SlotType};

use super::super::lazy_regex::{LazyRegex, RegexOptions};
use super::super::pytext;
use super::super::words;
use super::GrammarError;

/// One word of a template.
#[derive(Debug, Clone)]
pub(super) enum Token {
    Literal(String),
    /// An index into the grammar's slot types.
    Typed(usize),
    Choice(Vec<String>),
}

/// A compiled clause template.
#[derive(Debug, Clone)]
pub(super) struct Template {
    pub tokens: Vec<Token>,
}

struct Kind {
    name: String,
    shape: SlotShape,
    pattern: Option<LazyRegex>,
    max_words: Option<usize>,
}

fn shape_accepts(shape: SlotShape, word: &str) -> bool {
    let ascii = |extra: &str| {
        word.chars()
            .all(|c| c.is_ascii_alphanumeric() || extra.contains(c))
    };
    match shape {
        SlotShape::Path => {
            (1..=256).contains(&word.len())
                && ascii("_-./@+=")
                && !word.starts_with(['.', '-'])
                && !word.split('/').any(|part| part == ".." || part == ".")
        }
        SlotShape::Identifier => {
            (1..=128).contains(&word.len())
                && word.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                && ascii("_:.-")
        }
        SlotShape::Number => {
            let (int, frac) = word.split_once('.').unwrap_or((word, "0"));
            (1..=15).contains(&int.len())
                && (1..=6).contains(&frac.len())
                && int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())
        }
        SlotShape::Commit => {
            (7..=40).contains(&word.len())
                && word.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        }
    }
}

impl Kind {
    fn accepts(&self, word: &str) -> bool {
        shape_accepts(self.shape, word)
            && self
                .pattern
                .as_ref()
                .is_none_or(|p| p.get().is_ok_and(|p| p.is_match(word)))
            && self
                .max_words
                .is_none_or(|max| words::word_count(word) <= max)
    }
}

/// The slot types a grammar's templates may name.
pub(super) struct SlotTypes {
    kinds: Vec<Kind>,
}

const BUILTIN: [(&str, SlotShape); 4] = [
    ("path", SlotShape::Path),
    ("identifier", SlotShape::Identifier),
    ("number", SlotShape::Number),
    ("commit", SlotShape::Commit),
];

impl SlotTypes {
    /// The declared types, then each built-in one no declared type replaces.
    pub fn new(declared: &[SlotType]) -> Result<SlotTypes, GrammarError> {
        let mut kinds: Vec<Kind> = Vec::with_capacity(declared.len() + BUILTIN.len());
        for item in declared {
            let bad = |reason: String| GrammarError::SlotType {
                name: item.name.clone(),
                reason,
            };
            if item.name.is_empty()
                || !item
                    .name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b == b'_')
            {
                return Err(bad("a slot type's name is lower-case letters and _".into()));
            }
            if kinds.iter().any(|k| k.name == item.name) {
                return Err(bad("the slot type is declared twice".into()));
            }
            let pattern = item.pattern.as_ref().map(|pattern| {
                LazyRegex::new(format!(r"\A(?:{pattern})\z"), RegexOptions::sized(1 << 20))
            });
            let max_words = match item.max_words {
                Some(max) => Some(
                    usize::try_from(max)
                        .ok()
                        .filter(|&m| m >= 1)
                        .ok_or_else(|| bad("max_words must be at least 1".into()))?,
                ),
                None => None,
            };
            kinds.push(Kind {
                name: item.name.clone(),
                shape: item.shape,
                pattern,
                max_words,
            });
        }
        for (name, shape) in BUILTIN {
            if !kinds.iter().any(|k| k.name == name) {
                kinds.push(Kind {
                    name: name.to_owned(),
                    shape,
                    pattern: None,
                    max_words: None,
                });
            }
        }
        Ok(SlotTypes { kinds })
    }

    /// Compiles every declared type's pattern and checks that the type accepts each of its
    /// examples and rejects each negative example (`declared` as given to [`SlotTypes::new`]).
    pub fn validate(&self, declared: &[SlotType]) -> Result<(), GrammarError> {
        for (kind, item) in self.kinds.iter().zip(declared) {
            let bad = |reason: String| GrammarError::SlotType {
                name: item.name.clone(),
                reason,
            };
            if let Some(pattern) = &kind.pattern {
                pattern
                    .compile_now()
                    .map_err(|e| bad(format!("its pattern does not compile: {e}")))?;
            }
            if let Some(missed) = item.examples.iter().find(|e| !kind.accepts(e)) {
                return Err(bad(format!("it rejects its example {missed:?}")));
            }
            if let Some(taken) = item.negative_examples.iter().find(|e| kind.accepts(e)) {
                return Err(bad(format!("it accepts its negative example {taken:?}")));
            }
        }
        Ok(())
    }

    pub fn name(&self, index: usize) -> &str {
        self.kinds.get(index).map_or("", |k| k.name.as_str())
    }

    fn accepts(&self, index: usize, word: &str) -> bool {
        self.kinds.get(index).is_some_and(|k| k.accepts(word))
    }

    /// Compiles a clause template; an unknown slot name is an error.
    pub fn compile(&self, template: &str) -> Result<Template, GrammarError> {
        let tokens = pytext::collapse_whitespace(template)
            .split(' ')
            .map(
                |word| match word.strip_prefix('{').and_then(|w| w.strip_suffix('}')) {
                    Some(choice) if choice.contains('|') => Ok(Token::Choice(
                        choice.split('|').map(pytext::casefold).collect(),
                    )),
                    Some(slot) => self
                        .kinds
                        .iter()
                        .position(|k| k.name == slot)
                        .map(Token::Typed)
                        .ok_or_else(|| GrammarError::Slot {
                            template: template.to_owned(),
                            slot: slot.to_owned(),
                            known: self
                                .kinds
                                .iter()
                                .map(|k| k.name.as_str())
                                .collect::<Vec<_>>()
                                .join(", "),
                        }),
                    None => Ok(Token::Literal(pytext::casefold(word))),
                },
            )
            .collect::<Result<_, _>>()?;
        Ok(Template { tokens })
    }
}

impl Template {
    pub fn matches(&self, words: &[&str], types: &SlotTypes) -> bool {
        words.len() == self.tokens.len()
            && self
                .tokens
                .iter()
                .zip(words)
                .all(|(token, word)| token_accepts(token, word, types))
    }

    /// When every word but some slots fits, the first slot word that does not: its index
    /// and the slot's name (a near miss, to say why a clause is outside the grammar).
    pub fn misfit(&self, words: &[&str], types: &SlotTypes) -> Option<(usize, String)> {
        if words.len() != self.tokens.len() {
            return None;
        }
        let mut first = None;
        for (index, (token, word)) in self.tokens.iter().zip(words).enumerate() {
            if token_accepts(token, word, types) {
                continue;
            }
            match token {
                Token::Literal(_) => return None,
                Token::Typed(kind) => {
                    first.get_or_insert((index, format!("{{{}}}", types.name(*kind))));
                }
                Token::Choice(options) => {
                    first.get_or_insert((index, format!("{{{}}}", options.join("|"))));
                }
            }
        }
        first
    }

    /// The word position of each slot, in order.
    pub fn slot_positions(&self) -> Vec<usize> {
        self.tokens
            .iter()
            .enumerate()
            .filter(|(_, token)| !matches!(token, Token::Literal(_)))
            .map(|(at, _)| at)
            .collect()
    }

    /// For each slot in order, whether it is a choice.
    pub fn slot_choices(&self) -> impl Iterator<Item = bool> + '_ {
        self.tokens.iter().filter_map(|token| match token {
            Token::Literal(_) => None,
            Token::Typed(_) => Some(false),
            Token::Choice(_) => Some(true),
        })
    }

    pub fn slot_count(&self) -> usize {
        self.slot_choices().count()
    }
}

fn token_accepts(token: &Token, word: &str, types: &SlotTypes) -> bool {
    match token {
        Token::Literal(literal) => folds_to(word, literal),
        Token::Typed(kind) => types.accepts(*kind, word),
        Token::Choice(options) => options.iter().any(|option| folds_to(word, option)),
    }
}

/// Whether `word` case-folds to `folded` (ASCII words without allocating).
fn folds_to(word: &str, folded: &str) -> bool {
    if word.is_ascii() {
        word.len() == folded.len()
            && word
                .bytes()
                .zip(folded.bytes())
                .all(|(w, f)| w.to_ascii_lowercase() == f)
    } else {
        pytext::casefold(word) == folded
    }
}
