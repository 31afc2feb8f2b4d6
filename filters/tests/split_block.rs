//! Integration tests of the split-block Bloom filter: a set model under
//! random inserts and queries, batch against single operations, union, the
//! FPR formula with fixed seeds, the sizing, and the byte format (round trip,
//! golden bytes, corruption, forgery and the borrowed view).

mod common;

use std::collections::HashSet;

use amq::bloom::SplitBlockBloomView;
use amq::{
    hash_key, math, AnyFilter, Error, Filter, FilterKind, FilterSizing, FilterView, FromBytes, Insert,
    KeyHash, SplitBlockBloom,
};
use proptest::prelude::*;

proptest! {
    #![proptest_config(common::proptest_config(64))]

    /// Against a set: every inserted key is found (no false negatives, ever),
    /// batch queries answer as single ones, the key count is the number of
    /// inserts, and the bytes and the view answer as the filter does.
    #[test]
    fn model_set(
        blocks in 1usize..40,
        inserts in proptest::collection::vec(0u64..500, 0..400),
        batch in any::<bool>(),
    ) {
        let mut f = SplitBlockBloom::with_blocks(blocks).unwrap();
        let hashes: Vec<KeyHash> = inserts.iter().map(|&i| common::mixed(i, 31)).collect();
        let mut model = HashSet::new();
        if batch {
            f.insert_hashes(&hashes).unwrap();
            model.extend(inserts.iter().copied());
        } else {
            for (&i, &h) in inserts.iter().zip(&hashes) {
                f.insert_hash(h).unwrap();
                model.insert(i);
                prop_assert!(f.contains_hash(h));
            }
        }
        prop_assert_eq!(f.num_keys(), inserts.len());
        for &i in &model {
            prop_assert!(f.contains_hash(common::mixed(i, 31)), "false negative for {}", i);
        }
        let probes: Vec<KeyHash> = (0..600u64).map(|i| common::mixed(i, 31)).collect();
        common::assert_contains_hashes_agrees(&f, &probes);
        let bytes = f.to_bytes();
        let back = SplitBlockBloom::from_bytes(&bytes).unwrap();
        prop_assert_eq!(&back, &f);
        let view = SplitBlockBloomView::new(&bytes).unwrap();
        for &h in &probes {
            prop_assert_eq!(view.contains_hash(h), f.contains_hash(h));
        }
        common::assert_contains_hashes_agrees(&view, &probes);
    }
}

/// The measured FPR at 10 and 16 bits per key is the formula's within 10%,
/// with fixed seeds (about 12,000 and 1,500 false positives).
#[test]
fn fpr_matches_the_formula() {
    for (bits, absent) in [(10.0, 1_000_000), (16.0, 1_000_000)] {
        let n = 100_000;
        let keys = common::hashes(7, n);
        let mut f = SplitBlockBloom::new(n, FilterSizing::BitsPerKey(bits)).unwrap();
        f.insert_hashes(&keys).unwrap();
        common::assert_no_false_negatives(&f, &keys);
        let fp = common::false_positives(&f, &keys, 8, absent);
        let measured = fp as f64 / absent as f64;
        common::assert_fpr_close("SplitBlockBloom", measured, f.expected_fpr(), 0.10);
    }
    // The formula itself at 10 bits/key: 1.26%, against the blocked
    // filter's 0.96%.
    let p = math::split_block_bloom_fpr(39_063, 1_000_000);
    assert!((p - 0.0126).abs() < 0.0002, "{p}");
}

#[test]
fn sizing_and_errors() {
    let f = SplitBlockBloom::new(1_000_000, FilterSizing::Fpr(0.01)).unwrap();
    assert_eq!(f.num_blocks(), 41_130);
    assert!(f.expected_fpr() == 0.0); // no keys yet
    let f = SplitBlockBloom::new(1_000_000, FilterSizing::BitsPerKey(10.0)).unwrap();
    assert_eq!(f.num_blocks(), 39_063);
    assert_eq!(f.size_in_bytes(), 39_063 * 32);
    assert!(SplitBlockBloom::new(0, FilterSizing::Fpr(0.01)).is_err());
    assert!(SplitBlockBloom::new(10, FilterSizing::Fpr(0.0)).is_err());
    assert!(SplitBlockBloom::new(10, FilterSizing::BitsPerKey(0.0)).is_err());
    assert!(SplitBlockBloom::new(10, FilterSizing::BitsPerKey(f64::NAN)).is_err());
    assert!(SplitBlockBloom::new(10, FilterSizing::Fpr(1e-300)).is_err());
    assert_eq!(
        SplitBlockBloom::new(usize::MAX, FilterSizing::BitsPerKey(10.0)),
        Err(Error::TooLarge)
    );
    assert!(SplitBlockBloom::with_blocks(0).is_err());
}

#[test]
fn union_is_the_filter_of_both() {
    let a_keys = common::hashes(1, 500);
    let b_keys = common::hashes(2, 500);
    let mut a = SplitBlockBloom::with_blocks(64).unwrap();
    let mut b = SplitBlockBloom::with_blocks(64).unwrap();
    a.insert_hashes(&a_keys).unwrap();
    b.insert_hashes(&b_keys).unwrap();
    let mut both = SplitBlockBloom::with_blocks(64).unwrap();
    both.insert_hashes(&a_keys).unwrap();
    both.insert_hashes(&b_keys).unwrap();
    let before = a.clone();
    assert_eq!(
        a.union(&SplitBlockBloom::with_blocks(65).unwrap()),
        Err(Error::Incompatible)
    );
    assert_eq!(a, before);
    a.union(&b).unwrap();
    assert_eq!(a, both);
}

#[test]
fn any_filter_and_views_hold_it() {
    let keys = common::hashes(3, 2_000);
    let any = AnyFilter::build(FilterKind::SplitBlockBloom, &keys, FilterSizing::Fpr(0.01)).unwrap();
    assert_eq!(any.kind(), FilterKind::SplitBlockBloom);
    common::assert_no_false_negatives(&any, &keys);
    let mut inserted = AnyFilter::new(FilterKind::SplitBlockBloom, 2_000, FilterSizing::Fpr(0.01)).unwrap();
    inserted.insert_hashes(&keys).unwrap();
    assert_eq!(inserted, any);
    let bytes = any.to_bytes();
    assert!(FilterView::supports(FilterKind::SplitBlockBloom));
    let view = FilterView::new(&bytes).unwrap();
    assert_eq!(view.kind(), FilterKind::SplitBlockBloom);
    common::assert_no_false_negatives(view.as_filter(), &keys);
    assert_eq!(view.to_bytes(), bytes);
    // The view answers from bytes at any address.
    let mut shifted = vec![0u8; bytes.len() + 63];
    for offset in [1, 7, 32, 63] {
        shifted[offset..offset + bytes.len()].copy_from_slice(&bytes);
        let v = SplitBlockBloomView::new(&shifted[offset..offset + bytes.len()]).unwrap();
        common::assert_no_false_negatives(&v, &keys);
        assert_eq!(v.num_blocks(), any_blocks(&any));
    }
}

fn any_blocks(f: &AnyFilter) -> usize {
    match f {
        AnyFilter::SplitBlockBloom(s) => s.num_blocks(),
        _ => unreachable!(),
    }
}

#[test]
fn bytes_round_trip_and_survive_corruption() {
    let keys = common::hashes(4, 60);
    let mut f = SplitBlockBloom::new(60, FilterSizing::BitsPerKey(12.0)).unwrap();
    f.insert_hashes(&keys).unwrap();
    common::assert_round_trip(&f, &common::hashes(5, 1000));
    common::assert_corruption_safe(&f, &keys);
    let mut tiny = SplitBlockBloom::with_blocks(1).unwrap();
    tiny.insert(b"apple").unwrap();
    common::assert_forgery_safe(&tiny, common::Payload::AnyValueDecodes);
}

/// The format is pinned: one block holding "apple" and "pear". The payload
/// is checked against the layout written out by hand (block 0, bit
/// `(x · SALT[i]) >> 27` of word `i` for each key's low 32 bits `x`).
#[test]
fn golden_bytes() {
    let mut f = SplitBlockBloom::with_blocks(1).unwrap();
    f.insert(b"apple").unwrap();
    f.insert(b"pear").unwrap();
    let bytes = f.to_bytes();
    let mut words = [0u32; 8];
    for key in [&b"apple"[..], b"pear"] {
        let x = hash_key(key).get() as u32;
        for (w, s) in words.iter_mut().zip(amq::parquet::SALT) {
            *w |= 1 << (x.wrapping_mul(s) >> 27);
        }
    }
    let payload: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let sum_at = bytes.len() - amq::format::CHECKSUM_LEN;
    assert_eq!(&bytes[..4], b"AMQF");
    assert_eq!(bytes[6], FilterKind::SplitBlockBloom.id());
    assert_eq!(bytes[6], 16);
    // Parameters: block count u32, key count u64.
    assert_eq!(u32::from_le_bytes(bytes[8..12].try_into().unwrap()), 12);
    assert_eq!(&bytes[20..32], [1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(&bytes[64..sum_at], &payload[..]);
    common::assert_golden(
        "SplitBlockBloom",
        &bytes,
        "414d5146020010010c00000020000000000000000100000002000000000000000000000000000000\
         000000000000000000000000000000000000000000000000\
         0000021000400400008080000200000200002020000081000000140000110000\
         644fcec470994745",
    );
}
