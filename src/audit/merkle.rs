//! RFC 6962 Merkle tree hashing for the audit log: leaf hash = SHA-256(0x00 || receipt
//! bytes), interior node = SHA-256(0x01 || left || right), and the tree head of `n` leaves is
//! RFC 6962's MTH (the left subtree is the largest power of two smaller than `n`).
//!
//! The log keeps a [`Frontier`]: the roots of the perfect subtrees that make up the tree so far,
//! one per set bit of the size. Appending is amortised O(1) and the root is O(log n), so a
//! checkpoint never rereads the log; `verify` rebuilds the frontier from the leaves.

use sha2::{Digest, Sha256};

pub type Hash = [u8; 32];

/// SHA-256(0x00 || data).
pub fn leaf_hash(data: &[u8]) -> Hash {
    let mut h = Sha256::new();
    h.update([0u8]);
    h.update(data);
    h.finalize().into()
}

/// SHA-256(0x01 || left || right).
pub fn node_hash(left: &Hash, right: &Hash) -> Hash {
    let mut h = Sha256::new();
    h.update([1u8]);
    h.update(left);
    h.update(right);
    h.finalize().into()
}

/// The root of the empty tree: SHA-256 of nothing.
pub fn empty_root() -> Hash {
    Sha256::digest([]).into()
}

/// Roots of the perfect subtrees covering the leaves appended so far; `levels[h]` is the root
/// of a subtree of `2^h` leaves when bit `h` of the size is set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Frontier {
    size: u64,
    levels: Vec<Option<Hash>>,
}

impl Frontier {
    pub fn new() -> Self {
        Self::default()
    }

    /// Rebuilds a frontier from stored `(height, hash)` pairs; `None` if they do not match
    /// the bits of `size`.
    pub fn from_levels(size: u64, stored: &[(u32, Hash)]) -> Option<Self> {
        let width = (64 - size.leading_zeros()) as usize;
        let mut levels = vec![None; width];
        for (height, hash) in stored {
            let slot = levels.get_mut(*height as usize)?;
            if slot.replace(*hash).is_some() {
                return None;
            }
        }
        for (h, slot) in levels.iter().enumerate() {
            if slot.is_some() != (size >> h & 1 == 1) {
                return None;
            }
        }
        Some(Frontier { size, levels })
    }

    pub fn size(&self) -> u64 {
        self.size
    }

    /// The `(height, hash)` pairs to store.
    pub fn levels(&self) -> Vec<(u32, Hash)> {
        let pairs = self.levels.iter().enumerate();
        pairs
            .filter_map(|(h, s)| s.map(|hash| (h as u32, hash)))
            .collect()
    }

    pub fn push(&mut self, leaf: Hash) {
        self.push_completed(leaf);
    }

    /// Appends `leaf` and returns the perfect subtrees it completed, `(level, hash)` from
    /// level 1 up (their node index is the leaf's index shifted right by the level).
    pub fn push_completed(&mut self, leaf: Hash) -> Vec<(u32, Hash)> {
        let mut completed = Vec::new();
        let mut carry = leaf;
        let mut height = 0;
        loop {
            if height == self.levels.len() {
                self.levels.push(None);
            }
            match self.levels[height].take() {
                Some(left) => {
                    carry = node_hash(&left, &carry);
                    height += 1;
                    completed.push((height as u32, carry));
                }
                None => {
                    self.levels[height] = Some(carry);
                    break;
                }
            }
        }
        self.size += 1;
        completed
    }

    /// RFC 6962 MTH of the leaves so far.
    pub fn root(&self) -> Hash {
        let mut acc: Option<Hash> = None;
        for hash in self.levels.iter().flatten() {
            acc = Some(match acc {
                None => *hash,
                Some(right) => node_hash(hash, &right),
            });
        }
        acc.unwrap_or_else(empty_root)
    }
}

/// The largest power of two smaller than `n` (`n` ≥ 2): where RFC 6962 splits a tree.
fn split(n: u64) -> u64 {
    1 << (63 - (n - 1).leading_zeros())
}

/// The perfect subtrees `(level, index)` whose roots make up the tree head of leaves
/// `[lo, hi)` (left to right); node `(level, index)` covers leaves
/// `[index << level, (index + 1) << level)`. `lo` must be a multiple of the largest of them,
/// which holds for every range [`inclusion_nodes`] asks for.
pub fn range_nodes(lo: u64, hi: u64) -> Vec<(u32, u64)> {
    let mut out = Vec::new();
    let mut start = lo;
    while start < hi {
        let mut level = 63 - (hi - start).leading_zeros();
        while start & ((1u64 << level) - 1) != 0 {
            level -= 1;
        }
        out.push((level, start >> level));
        start += 1 << level;
    }
    out
}

/// The hash of leaves `[lo, hi)` from the roots of their perfect subtrees ([`range_nodes`]
/// order): folded right to left, as MTH nests them.
pub fn fold_range(roots: &[Hash]) -> Option<Hash> {
    let mut iter = roots.iter().rev();
    let mut acc = *iter.next()?;
    for left in iter {
        acc = node_hash(left, &acc);
    }
    Some(acc)
}

/// The audit path of leaf `index` in a tree of `size` leaves (RFC 6962 PATH), as ranges of
/// leaves whose tree heads form it, bottom up. Each range's head is [`fold_range`] of its
/// [`range_nodes`].
pub fn inclusion_ranges(index: u64, size: u64) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    let (mut lo, mut hi) = (0, size);
    while hi - lo > 1 {
        let k = split(hi - lo);
        if index < lo + k {
            out.push((lo + k, hi));
            hi = lo + k;
        } else {
            out.push((lo, lo + k));
            lo += k;
        }
    }
    out.reverse();
    out
}

/// The root that `leaf` at `index` and its audit path (from [`inclusion_ranges`]) give for a
/// tree of `size` leaves; the caller compares it with a signed root.
pub fn root_from_path(leaf: Hash, index: u64, size: u64, path: &[Hash]) -> Option<Hash> {
    let ranges = inclusion_ranges(index, size);
    if ranges.len() != path.len() || index >= size {
        return None;
    }
    let mut acc = leaf;
    for ((lo, _), sibling) in ranges.iter().zip(path) {
        acc = if *lo > index {
            node_hash(&acc, sibling)
        } else {
            node_hash(sibling, &acc)
        };
    }
    Some(acc)
}

/// The perfect subtrees completed by appending leaf number `index` (0-based): `(level,
/// node index)` from level 1 up, each the parent of two nodes one level below.
pub fn completed_by(index: u64) -> impl Iterator<Item = (u32, u64)> {
    let done = index + 1;
    (1..64u32)
        .take_while(move |level| done & ((1u64 << level) - 1) == 0)
        .map(move |level| (level, (done >> level) - 1))
}

/// The perfect subtrees of the frontier of a tree of `size` leaves, `(level, node index)`,
/// left (highest) to right.
pub fn frontier_nodes(size: u64) -> Vec<(u32, u64)> {
    range_nodes(0, size)
}

/// RFC 6962 MTH computed recursively (the reference the frontier is tested against).
pub fn root_of(leaves: &[Hash]) -> Hash {
    match leaves.len() {
        0 => empty_root(),
        1 => leaves[0],
        n => {
            let k = 1usize << (usize::BITS - (n - 1).leading_zeros() - 1);
            node_hash(&root_of(&leaves[..k]), &root_of(&leaves[k..]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frontier_matches_the_recursive_definition() {
        let leaves: Vec<Hash> = (0u32..70).map(|i| leaf_hash(&i.to_be_bytes())).collect();
        let mut f = Frontier::new();
        assert_eq!(f.root(), root_of(&[]));
        for (i, leaf) in leaves.iter().enumerate() {
            f.push(*leaf);
            assert_eq!(f.root(), root_of(&leaves[..=i]), "size {}", i + 1);
            let back = Frontier::from_levels(f.size(), &f.levels()).unwrap();
            assert_eq!(back, f);
        }
    }

    #[test]
    fn audit_paths_prove_every_leaf_of_every_size() {
        let leaves: Vec<Hash> = (0u32..40).map(|i| leaf_hash(&i.to_be_bytes())).collect();
        let node = |level: u32, idx: u64| {
            let lo = (idx << level) as usize;
            root_of(&leaves[lo..lo + (1 << level)])
        };
        for size in 1..=leaves.len() as u64 {
            let root = root_of(&leaves[..size as usize]);
            let frontier: Vec<Hash> = frontier_nodes(size)
                .into_iter()
                .map(|(l, i)| node(l, i))
                .collect();
            assert_eq!(fold_range(&frontier), Some(root), "frontier at {size}");
            for index in 0..size {
                let path: Vec<Hash> = inclusion_ranges(index, size)
                    .into_iter()
                    .map(|(lo, hi)| {
                        let roots: Vec<Hash> = range_nodes(lo, hi)
                            .into_iter()
                            .map(|(l, i)| node(l, i))
                            .collect();
                        fold_range(&roots).unwrap()
                    })
                    .collect();
                let got = root_from_path(leaves[index as usize], index, size, &path);
                assert_eq!(got, Some(root), "leaf {index} of {size}");
                let wrong = root_from_path(leaves[(index as usize + 1) % 40], index, size, &path);
                assert_ne!(wrong, Some(root));
            }
        }
    }

    #[test]
    fn appends_complete_the_right_subtrees() {
        assert_eq!(completed_by(0).count(), 0);
        assert_eq!(completed_by(1).collect::<Vec<_>>(), vec![(1, 0)]);
        assert_eq!(completed_by(3).collect::<Vec<_>>(), vec![(1, 1), (2, 0)]);
        assert_eq!(completed_by(5).collect::<Vec<_>>(), vec![(1, 2)]);
        assert_eq!(frontier_nodes(6), vec![(2, 0), (1, 2)]);
    }

    #[test]
    fn rfc6962_test_vector() {
        // Root of the 8 leaves used by Certificate Transparency's reference tests.
        let inputs: [&[u8]; 8] = [
            b"",
            b"\x00",
            b"\x10",
            b"\x20\x21",
            b"\x30\x31",
            b"\x40\x41\x42\x43",
            b"\x50\x51\x52\x53\x54\x55\x56\x57",
            b"\x60\x61\x62\x63\x64\x65\x66\x67\x68\x69\x6a\x6b\x6c\x6d\x6e\x6f",
        ];
        let leaves: Vec<Hash> = inputs.iter().map(|d| leaf_hash(d)).collect();
        let root = crate::audit::hex(&root_of(&leaves));
        assert_eq!(
            root,
            "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328"
        );
        assert_eq!(
            crate::audit::hex(&empty_root()),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
