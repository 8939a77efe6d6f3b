//! The stored audit tree (`audit_nodes`, every perfect subtree, read for inclusion proofs)
//! must be the tree of the receipts: each stored leaf is the leaf hash of its receipt's bytes,
//! each stored parent hashes its two stored children, and no node is missing or extra. With
//! the signed roots recomputed from the receipts, that makes it exactly the receipts' tree. A
//! wrong node would only make inclusion proofs fail (fail closed), but verify names it, at
//! the first entry under it.

use std::collections::HashMap;

use super::super::merkle::{node_hash, Hash};
use super::super::rows::LogRows;
use super::VerifyReport;

pub(super) fn nodes<R: LogRows + ?Sized>(
    rows: &R,
    leaves: &[Hash],
    report: &mut VerifyReport,
) -> Result<(), R::Error> {
    let mut stored: HashMap<(u32, u64), Option<Hash>> = HashMap::with_capacity(leaves.len() * 2);
    rows.nodes(&mut |level, index, hash| {
        stored.insert((level, index), <Hash>::try_from(hash).ok());
    })?;
    let mut problems: Vec<(u64, String)> = Vec::new();
    let mut width = leaves.len() as u64;
    let mut level = 0u32;
    let mut expected = 0usize;
    while width > 0 {
        for index in 0..width {
            expected += 1;
            let first = (index << level) + 1;
            let got = stored.get(&(level, index)).copied().flatten();
            let want = if level == 0 {
                usize::try_from(index)
                    .ok()
                    .and_then(|i| leaves.get(i))
                    .copied()
            } else {
                let child = |i: u64| stored.get(&(level - 1, i)).copied().flatten();
                match (child(2 * index), child(2 * index + 1)) {
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
        width /= 2;
        level += 1;
    }
    if stored.len() > expected {
        problems.push((
            leaves.len() as u64 + 1,
            format!(
                "the audit tree has {} node(s) the receipts' tree does not",
                stored.len() - expected
            ),
        ));
    }
    for (seq, message) in problems.into_iter().take(20) {
        report.push(Some(seq), message);
    }
    Ok(())
}
