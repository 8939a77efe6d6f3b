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
                }
                None => {
                    self.levels[height] = Some(carry);
                    break;
                }
            }
        }
        self.size += 1;
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
