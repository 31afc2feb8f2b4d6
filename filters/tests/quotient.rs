//! Integration tests of the quotient filter: a multiset model under random
//! insert/remove/query sequences, counts, merges and the bulk build against
//! inserts, the full-table guarantee, the FPR formula with fixed seeds, and
//! the byte format (round trip, golden bytes, corruption and forgery).

mod common;

use std::collections::HashMap;

use amq::quotient::QuotientFilter;
use amq::{AnyFilter, Error, Filter, FilterKind, FilterSizing, FromBytes, Insert, KeyHash, Remove};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Insert(usize),
    Remove(usize),
    Contains(usize),
}

fn op(keys: usize) -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..keys).prop_map(Op::Insert),
        2 => (0..keys).prop_map(Op::Remove),
        1 => (0..keys).prop_map(Op::Contains),
    ]
}

proptest! {
    #![proptest_config(common::proptest_config(64))]

    /// Against a multiset: a key inserted and not all removed is always
    /// found, with at least its count; a removal of a held key succeeds; one
    /// of a key never held fails with `NotPresent` unless it collides; a
    /// refused insert (`Full`) changes nothing; bytes round-trip at the end.
    #[test]
    fn model_multiset(
        q in 3u32..9,
        r in 1u32..14,
        pool in 4usize..200,
        ops in proptest::collection::vec(op(200), 1..600),
    ) {
        let mut f = QuotientFilter::with_bits(q, r).unwrap();
        let keys: Vec<KeyHash> = (0..pool as u64).map(|i| common::mixed(i, u64::from(q * 100 + r))).collect();
        let mut model: HashMap<usize, usize> = HashMap::new();
        for o in ops {
            match o {
                Op::Insert(i) => {
                    let i = i % pool;
                    let before = f.clone();
                    match f.insert_hash(keys[i]) {
                        Ok(()) => *model.entry(i).or_default() += 1,
                        Err(Error::Full) => prop_assert_eq!(&f, &before),
                        Err(e) => prop_assert!(false, "{e:?}"),
                    }
                }
                Op::Remove(i) => {
                    let i = i % pool;
                    let held = model.get(&i).copied().unwrap_or(0);
                    let before = f.clone();
                    match f.remove_hash(keys[i]) {
                        Ok(()) => {
                            if held > 0 {
                                *model.get_mut(&i).unwrap() -= 1;
                            } else {
                                // It matched another key's entry: that key
                                // lost a copy. Undo, as a user must never do
                                // this; the model stays exact.
                                f = before;
                            }
                        }
                        Err(Error::NotPresent) => {
                            prop_assert_eq!(held, 0);
                            prop_assert_eq!(&f, &before);
                        }
                        Err(e) => prop_assert!(false, "{e:?}"),
                    }
                }
                Op::Contains(i) => {
                    let i = i % pool;
                    if model.get(&i).copied().unwrap_or(0) > 0 {
                        prop_assert!(f.contains_hash(keys[i]));
                    }
                }
            }
            for (&i, &c) in &model {
                prop_assert!(f.count_hash(keys[i]) >= c, "count below the model's");
                if c > 0 {
                    prop_assert!(f.contains_hash(keys[i]));
                }
            }
            prop_assert_eq!(f.num_keys(), model.values().sum::<usize>());
        }
        let back = QuotientFilter::from_bytes(&f.to_bytes()).unwrap();
        prop_assert_eq!(&back, &f);
    }

    /// The bulk build holds what inserts hold (the same table, bit for bit),
    /// and a merge holds what building from both key sets holds.
    #[test]
    fn build_and_merge_equal_inserts(
        a in proptest::collection::vec(0u64..400, 0..300),
        b in proptest::collection::vec(0u64..400, 0..300),
    ) {
        let hash = |v: &Vec<u64>| v.iter().map(|&i| common::mixed(i, 3)).collect::<Vec<KeyHash>>();
        let (ha, hb) = (hash(&a), hash(&b));
        let sizing = FilterSizing::Fpr(0.01);
        let fa = QuotientFilter::build(&ha, sizing).unwrap();
        let mut by_inserts = QuotientFilter::new(ha.len().max(1), sizing).unwrap();
        for &h in &ha {
            by_inserts.insert_hash(h).unwrap();
        }
        prop_assert_eq!(&fa, &by_inserts);
        // Merge two filters of one shape.
        let shape = |f: &QuotientFilter| (f.quotient_bits(), f.remainder_bits());
        let mut x = QuotientFilter::with_bits(10, 8).unwrap();
        let mut y = QuotientFilter::with_bits(10, 8).unwrap();
        ha.iter().for_each(|&h| x.insert_hash(h).unwrap());
        hb.iter().for_each(|&h| y.insert_hash(h).unwrap());
        let merged = x.merge(&y).unwrap();
        let mut both = x.clone();
        hb.iter().for_each(|&h| both.insert_hash(h).unwrap());
        prop_assert_eq!(&merged, &both);
        prop_assert_eq!(shape(&merged), (10, 8));
        for &h in ha.iter().chain(&hb) {
            prop_assert_eq!(merged.count_hash(h), x.count_hash(h) + y.count_hash(h));
        }
    }
}

/// A merge of filters of different shapes, or past the capacity, is refused.
#[test]
fn merge_refuses_other_shapes_and_overflow() {
    let a = QuotientFilter::with_bits(6, 8).unwrap();
    assert!(matches!(
        a.merge(&QuotientFilter::with_bits(6, 9).unwrap()),
        Err(Error::InvalidParameter { .. })
    ));
    assert!(matches!(
        a.merge(&QuotientFilter::with_bits(7, 8).unwrap()),
        Err(Error::InvalidParameter { .. })
    ));
    let mut full = QuotientFilter::with_bits(6, 8).unwrap();
    let mut i = 0;
    while full.insert_hash(common::mixed(i, 5)).is_ok() {
        i += 1;
    }
    assert_eq!(full.num_keys(), full.capacity());
    let mut one = QuotientFilter::with_bits(6, 8).unwrap();
    one.insert(b"x").unwrap();
    assert_eq!(full.merge(&one), Err(Error::Full));
}

/// Filled to capacity, with any number of copies of one key: every key is
/// found with its count, the next insert is `Full` and changes nothing, and
/// removing everything leaves an empty filter equal to a new one.
#[test]
fn full_table_and_repeated_keys() {
    for (q, r) in [(4u32, 5u32), (8, 3), (10, 12)] {
        let mut f = QuotientFilter::with_bits(q, r).unwrap();
        let mut keys = Vec::new();
        let mut i = 0u64;
        while keys.len() < f.capacity() {
            // Every fifth key a copy of the one before: runs with repeats.
            let h = if i % 5 == 4 {
                keys[keys.len() - 1]
            } else {
                common::mixed(i, 77)
            };
            f.insert_hash(h).unwrap();
            keys.push(h);
            i += 1;
        }
        let before = f.clone();
        assert_eq!(f.insert_hash(common::mixed(1 << 40, 1)), Err(Error::Full));
        assert_eq!(f, before);
        let mut counts: HashMap<KeyHash, usize> = HashMap::new();
        keys.iter().for_each(|&h| *counts.entry(h).or_default() += 1);
        for (&h, &c) in &counts {
            assert!(f.count_hash(h) >= c);
        }
        common::assert_no_false_negatives(&f, &keys);
        for &h in &keys {
            f.remove_hash(h).unwrap();
        }
        assert_eq!(f, QuotientFilter::with_bits(q, r).unwrap());
        assert_eq!(f.remove_hash(keys[0]), Err(Error::NotPresent));
    }
}

/// The measured FPR, over 400,000 absent keys with a fixed seed, is within
/// 10% of `expected_fpr` at several remainder widths and loads.
#[test]
fn fpr_matches_the_formula() {
    for (n, sizing) in [
        (20_000usize, FilterSizing::Fpr(0.05)),
        (60_000, FilterSizing::Fpr(0.01)),
        (60_000, FilterSizing::Fpr(0.002)),
        (30_000, FilterSizing::BitsPerKey(16.0)),
    ] {
        let keys = common::hashes(11, n);
        let f = QuotientFilter::build(&keys, sizing).unwrap();
        if let FilterSizing::Fpr(target) = sizing {
            assert!(f.expected_fpr() <= target, "{sizing:?}: {}", f.expected_fpr());
        }
        let count = 400_000u64;
        let fp = common::false_positives(&f, &keys, 12, count);
        // The batch answers as single queries do, hits and misses alike.
        let probes: Vec<KeyHash> = keys
            .iter()
            .copied()
            .step_by(7)
            .chain(common::hashes(13, 5_000))
            .collect();
        common::assert_contains_hashes_agrees(&f, &probes);
        common::assert_no_false_negatives(&f, &keys);
        common::assert_fpr_close(
            &format!("{sizing:?}"),
            fp as f64 / count as f64,
            f.expected_fpr(),
            0.1,
        );
    }
}

/// Sizing: what `new` chooses, and the errors of impossible requests.
#[test]
fn sizing_and_errors() {
    let f = QuotientFilter::new(1000, FilterSizing::Fpr(0.01)).unwrap();
    assert_eq!((f.quotient_bits(), f.remainder_bits()), (11, 6));
    assert!(f.capacity() >= 1000);
    for bad in [0.0, 1.0, f64::NAN, -1.0] {
        assert!(QuotientFilter::new(1000, FilterSizing::Fpr(bad)).is_err());
    }
    assert!(QuotientFilter::new(0, FilterSizing::Fpr(0.01)).is_err());
    assert!(QuotientFilter::new(1000, FilterSizing::BitsPerKey(1.0)).is_err());
    assert_eq!(QuotientFilter::with_bits(41, 8), Err(Error::TooLarge));
    assert!(QuotientFilter::with_bits(40, 25).is_err());
    assert!(QuotientFilter::with_bits(8, 0).is_err());
    // An FPR that needs more remainder bits than the hash has left.
    assert!(QuotientFilter::new(1 << 30, FilterSizing::Fpr(1e-12)).is_err());
    // Through `AnyFilter`, as every kind that takes inserts.
    let mut any = AnyFilter::new(FilterKind::QuotientFilter, 1000, FilterSizing::Fpr(0.01)).unwrap();
    any.insert(b"k").unwrap();
    assert!(any.contains(b"k"));
    any.remove(b"k").unwrap();
    assert!(!any.contains(b"k"));
}

#[test]
fn bytes_round_trip_and_survive_corruption() {
    let keys = common::hashes(21, 40);
    let mut f = QuotientFilter::with_bits(5, 7).unwrap();
    for &h in &keys[..28] {
        f.insert_hash(h).unwrap();
    }
    f.insert_hash(keys[0]).unwrap();
    common::assert_round_trip(&f, &keys);
    common::assert_corruption_safe(&f, &keys[..28]);
    // The decoder accepts only tables that inserts could have made.
    common::assert_byte_changes_refused_or_exact(&f);
}

/// The format is pinned: a filter of 4 quotients and 8-bit remainders
/// holding "apple", "pear" and "plum".
#[test]
fn golden_bytes() {
    let mut f = QuotientFilter::with_bits(2, 8).unwrap();
    for key in [&b"apple"[..], b"pear", b"plum"] {
        f.insert(key).unwrap();
    }
    // Checked by hand from the hashes: each key's quotient (top 2 bits) and
    // remainder (the next 8), in quotient order.
    let mut entries: Vec<(u64, u64)> = [&b"apple"[..], b"pear", b"plum"]
        .iter()
        .map(|k| {
            let h = amq::hash_key(k).get();
            (h >> 62, (h >> 54) & 0xff)
        })
        .collect();
    entries.sort();
    let bytes = f.to_bytes();
    // Header (20 bytes: magic, version, kind, hash scheme, lengths) and the
    // two parameter bytes, padded to the 64-byte payload offset.
    assert_eq!(&bytes[..4], b"AMQF");
    assert_eq!(bytes[6], FilterKind::QuotientFilter.id());
    assert_eq!(&bytes[20..22], [2, 8]);
    let payload = &bytes[64..bytes.len() - amq::format::CHECKSUM_LEN];
    // 128 slots: two blocks of 17 + 64 bytes (offset byte, occupied word,
    // run-end word, 64 one-byte remainders).
    assert_eq!(payload.len(), 2 * 81);
    let word = |at: usize| u64::from_le_bytes(payload[at..at + 8].try_into().unwrap());
    let occupied: u64 = entries.iter().map(|&(x, _)| 1u64 << x).fold(0, |a, b| a | b);
    assert_eq!((payload[0], word(1), payload[81], word(82)), (0, occupied, 0, 0));
    // Each entry at its quotient's slot or the first free one after it; a
    // run end after each quotient's last entry.
    let (mut next, mut runends) = (0usize, 0u64);
    for (i, &(x, v)) in entries.iter().enumerate() {
        let slot = next.max(x as usize);
        assert_eq!(u64::from(payload[17 + slot]), v, "slot {slot}");
        if entries.get(i + 1).is_none_or(|&(y, _)| y != x) {
            runends |= 1 << slot;
        }
        next = slot + 1;
    }
    assert_eq!((word(9), word(90)), (runends, 0));
    common::assert_golden("quotient 2+8", &bytes, GOLDEN);
}

/// Header (magic, version 2, kind 13, hash scheme 1, 2 parameter bytes,
/// 162 payload bytes), `q = 2`, `r = 8`, padding to byte 64; block 0: offset
/// 0, occupied word (quotients 0 and 1), run-end word (slots 0 and 2), 64
/// one-byte remainders (slots 0 to 2 hold quotient 0's two in order, then
/// quotient 1's); block 1 (padding slots): empty; the checksum.
const GOLDEN: &str = "
    414d514602000d0102000000a200000000000000
    0208
    000000000000000000000000000000000000000000000000000000000000000000000000000000000000
    00
    0300000000000000
    0500000000000000
    e12ebd0000000000000000000000000000000000000000000000000000000000
    0000000000000000000000000000000000000000000000000000000000000000
    00
    0000000000000000
    0000000000000000
    0000000000000000000000000000000000000000000000000000000000000000
    0000000000000000000000000000000000000000000000000000000000000000
    b09dc6f9758f2774
";
