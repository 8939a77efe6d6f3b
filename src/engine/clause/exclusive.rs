//! Contradictions: groups of clauses the policy declares mutually exclusive ("the task is
//! done" and "the task is not done"; "migration m0042 is forbidden" and "… is applied").
//! Within a group a parsed clause has a subject (the values of its subject slots) and a
//! state (which clause of the group it is, and the values of its state slots; any other
//! slot is neither); two clauses about the same subject in different states contradict
//! each other. Subjects and states
//! compare case-folded and without word separators, so `M-0042` is `m0042`.

use std::collections::{HashMap, HashSet};

use crate::policy::grammar::ExclusiveClauses;

use super::super::pytext;
use super::super::words::SEPARATORS;
use super::slots::{SlotTypes, Template};
use super::GrammarError;

pub(super) struct ExclusiveGroup {
    pub id: String,
    pub predicate: String,
    clauses: Vec<Template>,
    /// 0-based slot numbers of the subject; `None`: every slot that is not a choice.
    subject: Option<Vec<usize>>,
    /// 0-based slot numbers of the state; `None`: every choice outside the subject.
    state: Option<Vec<usize>>,
    /// For each clause, the word positions of its subject's slots and of its state's slots.
    positions: Vec<(Vec<usize>, Vec<usize>)>,
}

/// Two clauses (0-based, in summary order) that contradict each other.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Contradiction {
    pub group: usize,
    pub first: usize,
    pub second: usize,
}

fn comparable(word: &str) -> String {
    if word.is_ascii() {
        // ASCII folds to lower case, and no separator is a letter: one pass.
        return word
            .bytes()
            .filter(|b| !SEPARATORS.as_bytes().contains(b))
            .map(|b| char::from(b.to_ascii_lowercase()))
            .collect();
    }
    pytext::casefold(word).replace(|c: char| SEPARATORS.contains(c), "")
}

/// Which clause of the group, and the values of the slots that are not the subject.
type State = (usize, Vec<String>);
type Key = (Vec<String>, State);

impl ExclusiveGroup {
    /// `in_grammar` says whether a clause (whitespace-collapsed and case-folded) is one of
    /// the grammar's clauses or templates as written, or a clause the grammar parses: a
    /// group names nothing outside the language.
    pub fn compile(
        item: &ExclusiveClauses,
        types: &SlotTypes,
        in_grammar: &dyn Fn(&str) -> bool,
    ) -> Result<ExclusiveGroup, GrammarError> {
        let bad = |reason: String| GrammarError::Exclusive {
            id: item.id.clone(),
            reason,
        };
        if item.clauses.is_empty() {
            return Err(bad("it names no clause".into()));
        }
        let mut clauses = Vec::with_capacity(item.clauses.len());
        for clause in &item.clauses {
            let folded = pytext::casefold(&pytext::collapse_whitespace(clause));
            if !in_grammar(&folded) {
                return Err(bad(format!("{clause:?} is not a clause of the grammar")));
            }
            clauses.push(types.compile(clause)?);
        }
        let numbers = |numbers: &Option<Vec<i64>>, what: &str| -> Result<_, GrammarError> {
            let Some(numbers) = numbers else {
                return Ok(None);
            };
            numbers
                .iter()
                .map(|&number| {
                    usize::try_from(number)
                        .ok()
                        .and_then(|n| n.checked_sub(1))
                        .filter(|&i| clauses.iter().all(|c| i < c.slot_count()))
                        .ok_or_else(|| {
                            bad(format!(
                                "{what} slot {number} is not a slot of every clause"
                            ))
                        })
                })
                .collect::<Result<Vec<usize>, _>>()
                .map(Some)
        };
        let subject = numbers(&item.subject, "subject")?;
        let state = numbers(&item.state, "state")?;
        let mut group = ExclusiveGroup {
            id: item.id.clone(),
            predicate: item.predicate.clone(),
            clauses,
            subject,
            state,
            positions: Vec::new(),
        };
        group.positions = group
            .clauses
            .iter()
            .map(|template| {
                let at = template.slot_positions();
                let subject = group.subject_of(template);
                let state = group.state_of(template, &subject);
                let words = |slots: &[usize]| -> Vec<usize> {
                    slots.iter().filter_map(|&i| at.get(i).copied()).collect()
                };
                (words(&subject), words(&state))
            })
            .collect();
        let subject_lengths: HashSet<usize> = group
            .clauses
            .iter()
            .map(|c| group.subject_of(c).len())
            .collect();
        if subject_lengths.len() > 1 {
            return Err(bad(
                "its clauses have subjects of different lengths; set subject".into(),
            ));
        }
        Ok(group)
    }

    /// The slots naming the subject: as declared, or every slot that is not a choice.
    fn subject_of(&self, template: &Template) -> Vec<usize> {
        match &self.subject {
            Some(numbers) => numbers.clone(),
            None => template
                .slot_choices()
                .enumerate()
                .filter(|(_, choice)| !choice)
                .map(|(i, _)| i)
                .collect(),
        }
    }

    /// The slots naming the state: as declared, or every choice outside the subject.
    fn state_of(&self, template: &Template, subject: &[usize]) -> Vec<usize> {
        match &self.state {
            Some(numbers) => numbers.clone(),
            None => template
                .slot_choices()
                .enumerate()
                .filter(|(i, choice)| *choice && !subject.contains(i))
                .map(|(i, _)| i)
                .collect(),
        }
    }

    /// The clause's subject and state in this group, when it is one of the group's clauses.
    fn key(&self, words: &[&str], types: &SlotTypes) -> Option<Key> {
        let index = self.clauses.iter().position(|t| t.matches(words, types))?;
        let (subject, state) = self.positions.get(index)?;
        let values = |at: &[usize]| -> Vec<String> {
            at.iter()
                .filter_map(|&p| words.get(p))
                .map(|w| comparable(w))
                .collect()
        };
        Some((values(subject), (index, values(state))))
    }
}

/// Every clause that contradicts an earlier one, with the first clause it contradicts.
pub(super) fn contradictions(
    groups: &[ExclusiveGroup],
    clauses: &[Vec<&str>],
    types: &SlotTypes,
) -> Vec<Contradiction> {
    let mut out = Vec::new();
    for (group_index, group) in groups.iter().enumerate() {
        let mut first: HashMap<Vec<String>, (State, usize)> = HashMap::new();
        for (at, words) in clauses.iter().enumerate() {
            let Some((subject, state)) = group.key(words, types) else {
                continue;
            };
            match first.get(&subject) {
                Some((seen, earlier)) if *seen != state => out.push(Contradiction {
                    group: group_index,
                    first: *earlier,
                    second: at,
                }),
                Some(_) => {}
                None => {
                    first.insert(subject, (state, at));
                }
            }
        }
    }
    out.sort_by_key(|c| (c.second, c.first, c.group));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ascii_word_compares_as_the_general_fold_makes_it() {
        let general = |w: &str| pytext::casefold(w).replace(|c: char| SEPARATORS.contains(c), "");
        for b in 0u8..0x80 {
            let c = char::from(b);
            let word = format!("M{c}-0042{c}Ab");
            assert_eq!(comparable(&word), general(&word), "{word:?}");
        }
        assert_eq!(comparable("M-0042"), "m0042");
        assert_eq!(comparable("Straße_X"), "strassex");
    }
}
