//! Fingerprints of any length in one slot width (InfiniFilter's encoding:
//! Dayan et al., "InfiniFilter: Expanding Filters to Infinity and Beyond",
//! SIGMOD 2023).
//!
//! A `w`-bit value holds a fingerprint of `len < w` bits at its top, then a
//! 1 (the delimiter), then zeros: the length is `w − 1 − trailing zeros`.
//! A *void* entry (`len = 0`) is `1` followed by zeros and matches every
//! key of its quotient. A key is matched by the fingerprint when its own
//! bits (the `w` hash bits after the quotient, `key`) start with it, so an
//! entry of length `len` matches an absent key with probability `2^−len`.
//!
//! The encoding keeps values in the order of their bits, which expansion
//! relies on: taking the top bit off (it becomes the quotient's new low
//! bit) and shifting left leaves a valid value of one bit less, in order.

use crate::succinct::bits::low_mask;

/// The value of the first `len` bits of `key` (a `width`-bit value;
/// `len < width ≤ 63`).
#[inline(always)]
pub(crate) fn entry(key: u64, width: u32, len: u32) -> u64 {
    debug_assert!(len < width && width <= 63 && key <= low_mask(width));
    let pad = width - len;
    (key & !low_mask(pad)) | 1 << (pad - 1)
}

/// Whether `key` starts with the fingerprint in value `v` (`v ≠ 0`): the
/// bits above `v`'s lowest set bit agree.
#[inline(always)]
pub(crate) fn matches(v: u64, key: u64) -> bool {
    let delimiter = v & v.wrapping_neg();
    (v ^ key) & (delimiter.wrapping_neg() << 1) == 0
}

/// For a value `v` that `key` matches, a score that grows with the
/// fingerprint's length (`63 −` its trailing zeros, so a void entry scores
/// lowest); `None` if no match. A removal takes the entry of the highest
/// score: any key that entry stands for also matches every shorter entry
/// the removed key matches, so no inserted key loses its last match, void
/// entries included (each copy of a key keeps its own entry: `grow.rs`).
#[inline(always)]
pub(crate) fn longest(v: u64, key: u64) -> Option<u32> {
    matches(v, key).then(|| 63 - v.trailing_zeros())
}

/// The fingerprint length of a `width`-bit value `v ≠ 0`.
#[inline(always)]
pub(crate) fn length(v: u64, width: u32) -> u32 {
    width - 1 - v.trailing_zeros()
}

/// Whether `v` is a void entry of a `width`-bit table.
#[inline(always)]
pub(crate) fn is_void(v: u64, width: u32) -> bool {
    v == 1 << (width - 1)
}

/// Value `v` of a `width`-bit table after one expansion into a
/// `new_width`-bit one (`new_width ≥ width`): the bit that joins the
/// quotient (`None` for a void entry, which goes to both halves) and the
/// value after it.
#[inline(always)]
pub(crate) fn split_top(v: u64, width: u32, new_width: u32) -> (Option<u64>, u64) {
    if is_void(v, width) {
        return (None, 1 << (new_width - 1));
    }
    let bit = v >> (width - 1);
    ((Some(bit)), (v << 1 & low_mask(width)) << (new_width - width))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_match_the_keys_that_start_with_them() {
        let key = 0b1011_0110u64;
        for len in 0..8 {
            let v = entry(key, 8, len);
            assert_eq!(length(v, 8), len);
            assert!(matches(v, key));
            assert_eq!(is_void(v, 8), len == 0);
            // A key differing in bit i (from the top) is matched exactly
            // when i is past the fingerprint.
            for i in 0..8 {
                let other = key ^ (1 << (7 - i));
                assert_eq!(matches(v, other), i >= len, "len {len}, bit {i}");
            }
            let score = longest(v, key);
            assert_eq!(score, Some(63 - (8 - len - 1)));
        }
        assert!(longest(entry(key, 8, 7), key ^ 0b10).is_none());
        // A fingerprint of zeros is not a void entry, whatever its length:
        // it scores above the void and below longer fingerprints.
        let zeros: alloc::vec::Vec<_> = (0..8).map(|len| longest(entry(0, 8, len), 0).unwrap()).collect();
        assert!(zeros.windows(2).all(|w| w[0] < w[1]), "{zeros:?}");
    }

    #[test]
    fn split_top_moves_the_first_bit_to_the_quotient() {
        let v = entry(0b1011_0110, 8, 5); // 10110, then 100
        assert_eq!(split_top(v, 8, 8), (Some(1), entry(0b0110_0000, 8, 4)));
        assert_eq!(split_top(v, 8, 10), (Some(1), entry(0b01_1000_0000, 10, 4)));
        let void = entry(0, 8, 0);
        assert_eq!(split_top(void, 8, 9), (None, 1 << 8));
        let one = entry(0b0100_0000, 8, 1);
        assert_eq!(split_top(one, 8, 8), (Some(0), void));
    }
}
