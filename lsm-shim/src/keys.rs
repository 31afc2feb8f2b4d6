//! Byte-string keys as the read path compares them: an inlined compare, and
//! the first 16 bytes as an integer whose order agrees with the keys'.

use std::cmp::Ordering;

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

#[inline(always)]
fn be64(c: &[u8]) -> u64 {
    u64::from_be_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])
}

#[cfg(test)]
mod tests {
    use super::{compare_keys, key_prefix};
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
