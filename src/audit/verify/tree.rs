//! The stored audit tree (`audit_nodes`, every perfect subtree, read for inclusion proofs)
//! must be the tree of the receipts: each stored leaf is the leaf hash of its receipt's bytes,
//! each stored parent hashes its two stored children, and no node is missing or extra. With
//! the signed roots recomputed from the receipts, that makes it exactly the receipts' tree. A
//! wrong node would only make inclusion proofs fail (fail closed), but verify names it, at
//! the first entry under it.

use std::collections::HashSet;

use super::super::merkle::{node_hash, Hash};
use super::super::rows::LogRows;
use super::VerifyReport;

/// A stored node: absent (`None`), or its hash (`Some(None)` when it is not 32 bytes).
type Slot = Option<Option<Hash>>;

pub(super) fn nodes<R: LogRows + ?Sized>(
    rows: &R,
    leaves: &[Hash],
    report: &mut VerifyReport,
) -> Result<(), R::Error> {
    // The receipts' tree, level by level: the stored nodes that belong in it go to their slot,
    // the others are counted once each.
    let mut levels: Vec<Vec<Slot>> = Vec::new();
    let mut width = leaves.len();
    while width > 0 {
        levels.push(vec![None; width]);
        width /= 2;
    }
    let mut inside = 0usize;
    let mut outside: HashSet<(u32, u64)> = HashSet::new();
    rows.nodes(&mut |level, index, hash| {
        let slot = usize::try_from(level)
            .ok()
            .zip(usize::try_from(index).ok())
            .and_then(|(l, i)| levels.get_mut(l)?.get_mut(i));
        match slot {
            Some(slot) => {
                inside += usize::from(slot.is_none());
                *slot = Some(<Hash>::try_from(hash).ok());
            }
            None => {
                outside.insert((level, index));
            }
        }
    })?;
    let stored = |level: usize, index: u64| -> Option<Hash> {
        let i = usize::try_from(index).ok()?;
        levels.get(level)?.get(i).copied().flatten().flatten()
    };
    let mut problems: Vec<(u64, String)> = Vec::new();
    let mut expected = 0usize;
    for (level, slots) in levels.iter().enumerate() {
        for index in 0..slots.len() as u64 {
            expected += 1;
            let first = (index << level) + 1;
            let got = stored(level, index);
            let want = if level == 0 {
                usize::try_from(index)
                    .ok()
                    .and_then(|i| leaves.get(i))
                    .copied()
            } else {
                match (
                    stored(level - 1, 2 * index),
                    stored(level - 1, 2 * index + 1),
                ) {
                    (Some(l), Some(r)) => Some(node_hash(&l, &r)),
                    _ => None,
                }
            };
            match got {
                None => {
                    problems.push((first, format!("audit tree node {level}/{index} is missing")))
                }
                Some(h) if Some(h) != want => problems.push((
                    first,
                    format!("audit tree node {level}/{index} differs from the receipts' tree"),
                )),
                Some(_) => {}
            }
        }
    }
    let stored_count = inside + outside.len();
    if stored_count > expected {
        problems.push((
            leaves.len() as u64 + 1,
            format!(
                "the audit tree has {} node(s) the receipts' tree does not",
                stored_count - expected
            ),
        ));
    }
    for (seq, message) in problems.into_iter().take(20) {
        report.push(Some(seq), message);
    }
    Ok(())
}
