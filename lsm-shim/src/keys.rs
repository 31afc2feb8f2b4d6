//! Byte-string keys as the read path compares them: an inlined compare, the
//! first 16 bytes as an integer whose order agrees with the keys', range
//! bounds, and the end of a prefix's range.

use std::cmp::Ordering;
use std::ops::Bound;

/// `a.cmp(b)` for byte strings, inlined: eight bytes at a time as
/// big-endian integers, then byte by byte. The read path compares a key with
/// two range bounds per table; a call into the C library's `memcmp` for each
/// cost more than the filter probe it guards. Tested against `Ord for [u8]`.
#[inline(always)]
pub(crate) fn compare_keys(a: &[u8], b: &[u8]) -> Ordering {
    let n = a.len().min(b.len());
    let (mut ca, mut cb) = (a[..n].chunks_exact(8), b[..n].chunks_exact(8));
    for (x, y) in (&mut ca).zip(&mut cb) {
        let (x, y) = (be64(x), be64(y));
        if x != y {
            return x.cmp(&y);
        }
    }
    for (x, y) in ca.remainder().iter().zip(cb.remainder()) {
        if x != y {
            return x.cmp(y);
        }
    }
    a.len().cmp(&b.len())
}

/// The first 16 bytes of a key, zero-padded, as a big-endian integer. Its
/// order is consistent with the keys' order: `key_prefix(a) < key_prefix(b)`
/// implies `a < b` (equal prefixes decide nothing), so one integer compare
/// settles most range checks.
#[inline(always)]
pub(crate) fn key_prefix(key: &[u8]) -> u128 {
    let mut b = [0u8; 16];
    let n = key.len().min(16);
    b[..n].copy_from_slice(&key[..n]);
    u128::from_be_bytes(b)
}

/// Whether `key` is at or past the lower bound `lo` ([`compare_keys`]).
#[inline]
pub(crate) fn after_start(key: &[u8], lo: Bound<&[u8]>) -> bool {
    match lo {
        Bound::Included(l) => compare_keys(key, l) != Ordering::Less,
        Bound::Excluded(l) => compare_keys(key, l) == Ordering::Greater,
        Bound::Unbounded => true,
    }
}

/// Whether `key` is at or before the upper bound `hi` ([`compare_keys`]).
#[inline]
pub(crate) fn before_end(key: &[u8], hi: Bound<&[u8]>) -> bool {
    match hi {
        Bound::Included(h) => compare_keys(key, h) != Ordering::Greater,
        Bound::Excluded(h) => compare_keys(key, h) == Ordering::Less,
        Bound::Unbounded => true,
    }
}

pub(crate) use amq::prefix::prefix_end;

#[inline(always)]
fn be64(c: &[u8]) -> u64 {
    u64::from_be_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])
}

#[cfg(test)]
mod tests {
    use super::{compare_keys, key_prefix, prefix_end};
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, rng_seed: proptest::test_runner::RngSeed::Fixed(3), ..ProptestConfig::default() })]
        #[test]
        fn key_prefix_order_implies_key_order(
            a in proptest::collection::vec(0u8..3, 0..24),
            b in proptest::collection::vec(0u8..3, 0..24),
        ) {
            if key_prefix(&a) < key_prefix(&b) {
                prop_assert!(a < b);
            }
            // Keys that start with `a` are exactly those in [a, prefix_end(a)).
            let starts = b.starts_with(&a);
            let in_range = b >= a && prefix_end(&a).is_none_or(|end| b < end);
            prop_assert_eq!(starts, in_range);
            if a <= b {
                prop_assert!(key_prefix(&a) <= key_prefix(&b));
            }
        }

        #[test]
        fn compare_keys_is_slice_order(
            prefix in proptest::collection::vec(any::<u8>(), 0..20),
            a in proptest::collection::vec(0u8..3, 0..20),
            b in proptest::collection::vec(0u8..3, 0..20),
        ) {
            let (a, b) = ([prefix.as_slice(), &a].concat(), [prefix.as_slice(), &b].concat());
            prop_assert_eq!(compare_keys(&a, &b), a.cmp(&b));
            prop_assert_eq!(compare_keys(&a, &a), std::cmp::Ordering::Equal);
        }
    }
}
