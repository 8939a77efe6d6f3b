//! Where a field's pivot bytes stand, as bits: one word of 64 bits for every 64 bytes, for
//! each pivot byte of the rules that search the field. A pivot byte with another one at a
//! distance where a match holds its second (see `layout`) is found with a few shifts of the
//! words, so the search passes over the rest (most `.` and `-` in prose) without looking at
//! them one by one, as `memchr` does; what it finds is still checked byte for byte.

use super::Pivot;

/// Fields shorter than this are searched byte by byte (`memchr`): building the words would
/// cost more than it saves.
pub(in crate::scan) const FROM_BYTES: usize = 4 << 10;

/// The bits of a field's pivot bytes.
#[derive(Debug)]
pub(in crate::scan) struct Masks {
    bytes: Vec<u8>,
    /// For each of `bytes`, a bit for each byte of the field: set where the byte stands.
    words: Vec<Vec<u64>>,
}

const ONES: u64 = 0x0101_0101_0101_0101;
const LOW_SEVEN: u64 = 0x7f7f_7f7f_7f7f_7f7f;

/// The high bit of each byte of `x` that equals `b`, and no other bit.
fn equal(x: u64, b: u8) -> u64 {
    let y = x ^ (ONES * u64::from(b));
    !(((y & LOW_SEVEN).wrapping_add(LOW_SEVEN)) | y | LOW_SEVEN)
}

/// The high bits of a word's eight bytes as its eight low bits.
fn gather(high: u64) -> u64 {
    (high >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56
}

impl Masks {
    /// The bits of the bytes of `pivots` in `hay`, when it is long enough to be worth them
    /// ([`FROM_BYTES`]) and there are any.
    pub fn for_pivots<'a>(hay: &[u8], pivots: impl Iterator<Item = &'a Pivot>) -> Option<Masks> {
        if hay.len() < FROM_BYTES {
            return None;
        }
        let mut bytes: Vec<u8> = pivots.flat_map(Pivot::bytes).copied().collect();
        bytes.sort_unstable();
        bytes.dedup();
        (!bytes.is_empty()).then(|| Masks::of(hay, &bytes))
    }

    /// The bits of `bytes` (each once) in `hay`.
    pub fn of(hay: &[u8], bytes: &[u8]) -> Masks {
        let mut words = vec![vec![0u64; hay.len().div_ceil(64)]; bytes.len()];
        for (w, block) in hay.chunks(64).enumerate() {
            for (k, &b) in bytes.iter().enumerate() {
                let mut bits = 0u64;
                if let Ok(block) = <&[u8; 64]>::try_from(block) {
                    for (i, eight) in block.chunks_exact(8).enumerate() {
                        let x = eight.try_into().map_or(0, u64::from_le_bytes);
                        bits |= gather(equal(x, b)) << (8 * i);
                    }
                } else {
                    for (i, &c) in block.iter().enumerate() {
                        bits |= u64::from(c == b) << i;
                    }
                }
                words[k][w] = bits;
            }
        }
        Masks {
            bytes: bytes.to_vec(),
            words,
        }
    }

    /// The words of `pivot`'s bytes, or `None` when one of its bytes has none (then the caller
    /// searches byte by byte).
    pub fn of_pivot<'a>(&'a self, pivot: &'a Pivot) -> Option<PivotWords<'a>> {
        let mut rows: [&[u64]; 3] = [&[]; 3];
        for (row, b) in rows.iter_mut().zip(&pivot.bytes) {
            *row = &self.words[self.bytes.iter().position(|x| x == b)?];
        }
        Some(PivotWords { pivot, rows })
    }
}

/// The words of one pivot's bytes in a field.
pub(in crate::scan) struct PivotWords<'a> {
    pivot: &'a Pivot,
    /// One row per pivot byte (the rest empty).
    rows: [&'a [u64]; 3],
}

impl PivotWords<'_> {
    /// Bits of word `w`: where one of the pivot bytes stands.
    fn word(&self, w: usize) -> u64 {
        self.rows
            .iter()
            .fold(0u64, |m, row| m | row.get(w).copied().unwrap_or(0))
    }

    /// The first position at or after `from` where one of the pivot's bytes stands and, when
    /// its matches hold a second one, another one stands at one of the distances the second
    /// can; `None` when there is none.
    pub fn next(&self, from: usize) -> Option<usize> {
        let words = self.rows[0].len();
        let mut w = from / 64;
        let mut this = self.word(w) & u64::MAX.checked_shl((from % 64) as u32).unwrap_or(0);
        while w < words {
            let next = self.word(w + 1);
            let mut candidates = this;
            if let Some(second) = self.pivot.layout.second {
                let mut after = 0u64;
                let mut distances = second & !1;
                while distances != 0 {
                    let d = distances.trailing_zeros();
                    distances &= distances - 1;
                    after |= (this >> d) | (next << (64 - d));
                }
                candidates &= after;
            }
            if candidates != 0 {
                return Some(w * 64 + candidates.trailing_zeros() as usize);
            }
            w += 1;
            this = next;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bits_say_where_each_byte_stands() {
        let hay: Vec<u8> = (0..1000u32)
            .map(|i| b":.-ab\xff"[(i * 7 % 13 % 6) as usize])
            .collect();
        let bytes = b":.-";
        let masks = Masks::of(&hay, bytes);
        for (k, &b) in bytes.iter().enumerate() {
            for (i, &c) in hay.iter().enumerate() {
                assert_eq!(masks.words[k][i / 64] >> (i % 64) & 1 == 1, c == b, "{i}");
            }
        }
        assert!(Masks::of(b"", bytes).words.iter().all(Vec::is_empty));
    }
}
