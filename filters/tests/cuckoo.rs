//! Integration tests of the cuckoo filter: a multiset model under random
//! insert/remove/query sequences, the full-table guarantee, the load and FPR
//! targets with fixed seeds, and the byte format.

mod common;

use std::collections::HashMap;

use amq::{
    AnyFilter, CuckooFilter, Error, Filter, FilterKind, FilterSizing, FromBytes, Insert, KeyHash, Remove,
};
use proptest::prelude::*;

const WIDTHS: [u32; 3] = [8, 12, 16];

/// Inserts `common::mixed(0.., seed)` until the first `Err(Full)`; returns the keys
/// whose insert succeeded.
fn fill_until_full(f: &mut CuckooFilter, seed: u64) -> Vec<KeyHash> {
    let mut keys = Vec::new();
    for i in 0.. {
        let h = common::mixed(i, seed);
        match f.insert_hash(h) {
            Ok(()) => keys.push(h),
            Err(e) => {
                assert_eq!(e, Error::Full);
                break;
            }
        }
    }
    keys
}

// ---------------------------------------------------------------------------
// Model-based property test

#[derive(Debug, Clone)]
enum Op {
    Insert(usize),
    Remove(usize),
    Contains(usize),
}

fn op() -> impl Strategy<Value = Op> {
    // A small key universe so keys repeat (multiset) and a small table so it
    // fills up and the stash is exercised.
    prop_oneof![
        4 => (0..UNIVERSE).prop_map(Op::Insert),
        3 => (0..UNIVERSE).prop_map(Op::Remove),
        1 => (0..UNIVERSE).prop_map(Op::Contains),
    ]
}

const UNIVERSE: usize = 48;

/// Runs `ops` against a filter and a `HashMap<key, copies>` model and checks,
/// after every step, that no key inserted more times than removed is missing.
fn check_against_model(bits: u32, capacity: usize, ops: &[Op]) -> Result<(), TestCaseError> {
    let universe: Vec<KeyHash> = (0..UNIVERSE as u64)
        .map(|i| common::mixed(i, 77 + bits as u64))
        .collect();
    let mut f = CuckooFilter::with_fingerprint_bits(capacity, bits).unwrap();
    let mut model: HashMap<KeyHash, usize> = HashMap::new();
    for op in ops {
        match *op {
            Op::Insert(k) => {
                let h = universe[k];
                let was_full = f.is_full();
                let before = f.clone();
                match f.insert_hash(h) {
                    Ok(()) => {
                        prop_assert!(!was_full);
                        *model.entry(h).or_default() += 1;
                    }
                    Err(e) => {
                        // Full while the stash is occupied; TooManyCopies
                        // when the key's buckets hold only its copies (8, or
                        // 4 if they coincide), with the stash left free.
                        match e {
                            Error::Full => prop_assert!(was_full, "Full only with the stash occupied"),
                            Error::TooManyCopies => prop_assert!(
                                !was_full && f.count_hash(h) >= 4,
                                "TooManyCopies only with the buckets full of copies"
                            ),
                            other => prop_assert!(false, "unexpected error {:?}", other),
                        }
                        prop_assert_eq!(&f, &before, "a failed insert changed the filter");
                    }
                }
            }
            Op::Remove(k) => {
                let h = universe[k];
                let copies = model.get(&h).copied().unwrap_or(0);
                if copies > 0 {
                    prop_assert_eq!(f.remove_hash(h), Ok(()));
                    model.insert(h, copies - 1);
                } else {
                    // Removing a key the model does not hold: Err changes
                    // nothing; Ok is only allowed for a false positive, and it
                    // removes another key's fingerprint, so it happens on a
                    // copy that is then thrown away.
                    let mut scratch = f.clone();
                    match scratch.remove_hash(h) {
                        Err(e) => {
                            prop_assert_eq!(e, Error::NotPresent);
                            prop_assert_eq!(&scratch, &f);
                        }
                        Ok(()) => prop_assert!(f.contains_hash(h)),
                    }
                }
            }
            Op::Contains(k) => {
                let h = universe[k];
                if model.get(&h).copied().unwrap_or(0) > 0 {
                    prop_assert!(f.contains_hash(h));
                }
            }
        }
        for (&h, &copies) in &model {
            if copies > 0 {
                prop_assert!(f.contains_hash(h), "false negative");
                prop_assert!(f.count_hash(h) >= copies, "count below the model");
            }
        }
        prop_assert_eq!(f.num_keys(), model.values().sum::<usize>());
    }
    Ok(())
}

proptest! {
    #[test]
    fn model_8_bit(ops in prop::collection::vec(op(), 0..300)) {
        check_against_model(8, 24, &ops)?;
    }

    #[test]
    fn model_12_bit(ops in prop::collection::vec(op(), 0..300)) {
        check_against_model(12, 24, &ops)?;
    }

    #[test]
    fn model_16_bit(ops in prop::collection::vec(op(), 0..300)) {
        check_against_model(16, 24, &ops)?;
    }

    #[test]
    fn model_tiny_table(bits in prop::sample::select(WIDTHS.to_vec()),
                        ops in prop::collection::vec(op(), 0..200)) {
        // One bucket: every key shares it, the stash fills after four.
        check_against_model(bits, 1, &ops)?;
    }
}

// ---------------------------------------------------------------------------
// A full table never loses a key

#[test]
fn full_table_keeps_every_key_through_failed_inserts_and_removes() {
    for bits in WIDTHS {
        let mut f = CuckooFilter::with_fingerprint_bits(3_000, bits).unwrap();
        let keys = fill_until_full(&mut f, 100 + bits as u64);
        assert!(f.is_full());
        assert_eq!(f.num_keys(), keys.len());
        common::assert_no_false_negatives(&f, &keys);

        // Further inserts fail and change nothing.
        let before = f.clone();
        for i in 0..200 {
            assert_eq!(f.insert_hash(common::mixed(i, 999)), Err(Error::Full));
            assert_eq!(Insert::insert(&mut f, &i.to_le_bytes()), Err(Error::Full));
        }
        assert_eq!(f, before);
        common::assert_no_false_negatives(&f, &keys);

        // Removing any key frees a slot; the stashed fingerprint goes back.
        let (gone, kept): (Vec<_>, Vec<_>) = keys.iter().enumerate().partition(|(i, _)| i % 3 == 0);
        let mut kept: Vec<KeyHash> = kept.into_iter().map(|(_, &h)| h).collect();
        for (_, &h) in &gone {
            f.remove_hash(h).unwrap();
            assert!(!f.is_full());
        }
        assert_eq!(f.num_keys(), kept.len());
        common::assert_no_false_negatives(&f, &kept);

        // Fill again to failure: old and new keys are all found.
        kept.extend(fill_until_full(&mut f, 200 + bits as u64));
        assert!(f.is_full());
        assert_eq!(f.num_keys(), kept.len());
        common::assert_no_false_negatives(&f, &kept);
    }
}

#[test]
fn one_key_fits_eight_times_then_is_refused_without_filling_the_table() {
    for bits in WIDTHS {
        let mut f = CuckooFilter::with_fingerprint_bits(1_000, bits).unwrap();
        let h = amq::hash_key(b"again");
        // Two buckets of four slots.
        for copies in 1..=8 {
            f.insert_hash(h).unwrap();
            assert_eq!(f.count_hash(h), copies);
        }
        // A ninth copy is refused, and the stash stays free for other keys.
        let before = f.clone();
        assert_eq!(f.insert_hash(h), Err(Error::TooManyCopies));
        assert_eq!(f, before);
        assert!(!f.is_full());
        f.insert_hash(amq::hash_key(b"other")).unwrap();
        f.remove_hash(amq::hash_key(b"other")).unwrap();
        for copies in (0..8).rev() {
            f.remove_hash(h).unwrap();
            assert_eq!(f.count_hash(h), copies);
        }
        assert_eq!(f.remove_hash(h), Err(Error::NotPresent));
        assert_eq!(f.num_keys(), 0);
        assert_eq!(f, CuckooFilter::with_fingerprint_bits(1_000, bits).unwrap());
    }
}

#[test]
fn remove_of_a_definitely_absent_key_is_not_present_and_changes_nothing() {
    let mut f = CuckooFilter::with_fingerprint_bits(1_000, 16).unwrap();
    let keys = common::hashes(5, 900);
    for &h in &keys {
        f.insert_hash(h).unwrap();
    }
    let mut tried = 0;
    for h in common::absent_hashes(5, 10_000, &keys) {
        if !f.contains_hash(h) {
            let before = f.clone();
            assert_eq!(Remove::remove_hash(&mut f, h), Err(Error::NotPresent));
            assert_eq!(f, before);
            tried += 1;
        }
    }
    assert!(tried > 9_900);
}

// ---------------------------------------------------------------------------
// Targets: load, bits/key, FPR (fixed seeds, never flaky)

/// The cheap version of `examples/cuckoo_load.rs`: small tables, fixed seeds.
/// The first failed insert comes at ≥ 95% of the slots (counting only keys
/// in slots, not the stashed one).
#[test]
fn first_failure_comes_after_95_percent_load() {
    for bits in WIDTHS {
        for seed in 0..8 {
            let mut f = CuckooFilter::with_fingerprint_bits(4_000, bits).unwrap();
            let keys = fill_until_full(&mut f, 1_000 * bits as u64 + seed);
            let load = (keys.len() - 1) as f64 / f.num_slots() as f64;
            assert!(
                load >= 0.95,
                "f = {bits}, seed {seed}: first failure at load {load:.4}"
            );
        }
    }
}

#[test]
fn fpr_and_bits_per_key_at_capacity_match_the_formula() {
    // (bits, absent queries): enough for ~1,000+ false positives each.
    for (bits, queries) in [(8, 200_000), (12, 1_000_000), (16, 4_000_000)] {
        let n = 100_000;
        let mut f = CuckooFilter::with_fingerprint_bits(n, bits).unwrap();
        let keys = common::hashes(40 + bits as u64, n);
        for &h in &keys {
            f.insert_hash(h).unwrap();
        }
        assert!(!f.is_full());
        common::assert_no_false_negatives(&f, &keys);
        // Capacity is 95% of the slots: f / 0.95 bits per key.
        let bpk = f.bits_per_key();
        assert!(
            (bpk - bits as f64 / 0.95).abs() < 0.01,
            "f = {bits}: {bpk} bits/key"
        );
        assert!((f.load_factor() - 0.95).abs() < 0.001);
        let absent = common::absent_hashes(40 + bits as u64, queries, &keys);
        let measured = common::measured_fpr(&f, &absent);
        common::assert_fpr_close(&format!("cuckoo f = {bits}"), measured, f.expected_fpr(), 0.15);
        // And the formula is the paper's 2b·α / 2^f to within 1%.
        let approx = 8.0 * f.load_factor() / (1u64 << bits) as f64;
        assert!((f.expected_fpr() / approx - 1.0).abs() < 0.01);
    }
}

#[test]
fn contains_hashes_matches_single_queries() {
    for bits in WIDTHS {
        let mut f = CuckooFilter::with_fingerprint_bits(5_000, bits).unwrap();
        let keys = fill_until_full(&mut f, 3);
        let mut probe = keys.clone();
        probe.extend(common::absent_hashes(3, 20_000, &keys));
        let mut out = vec![false; probe.len()];
        f.contains_hashes(&probe, &mut out);
        for (&h, &o) in probe.iter().zip(&out) {
            assert_eq!(o, f.contains_hash(h));
        }
        assert!(out[..keys.len()].iter().all(|&b| b));
    }
}

// ---------------------------------------------------------------------------
// Parameters

#[test]
fn impossible_parameters_are_errors() {
    let invalid = |r: Result<CuckooFilter, Error>| matches!(r, Err(Error::InvalidParameter { .. }));
    for bits in [0, 1, 4, 7, 9, 10, 11, 13, 15, 17, 32, 64, u32::MAX] {
        assert!(
            invalid(CuckooFilter::with_fingerprint_bits(100, bits)),
            "bits {bits}"
        );
    }
    assert!(invalid(CuckooFilter::with_fingerprint_bits(0, 12)));
    for fpr in [0.0, -0.1, 1.0, 1.5, f64::NAN, f64::INFINITY, 1e-5] {
        assert!(
            invalid(CuckooFilter::new(100, FilterSizing::Fpr(fpr))),
            "fpr {fpr}"
        );
    }
    assert!(invalid(CuckooFilter::new(0, FilterSizing::Fpr(0.01))));
    // More than 2^32 buckets.
    assert_eq!(
        CuckooFilter::with_fingerprint_bits(usize::MAX, 8),
        Err(Error::TooLarge)
    );
    assert_eq!(
        CuckooFilter::new(usize::MAX, FilterSizing::Fpr(0.01)),
        Err(Error::TooLarge)
    );
    // Just over 2^32 - 1 buckets.
    assert_eq!(
        CuckooFilter::with_fingerprint_bits((u32::MAX as f64 * 3.8) as usize + 4, 8),
        Err(Error::TooLarge)
    );
}

#[test]
fn fpr_target_picks_the_smallest_sufficient_width() {
    let bits = |fpr| {
        CuckooFilter::new(10_000, FilterSizing::Fpr(fpr))
            .unwrap()
            .fingerprint_bits()
    };
    assert_eq!(bits(0.5), 8);
    assert_eq!(bits(0.0295), 8);
    assert_eq!(bits(0.029), 12);
    assert_eq!(bits(0.0019), 12);
    assert_eq!(bits(0.0018), 16);
    assert_eq!(bits(0.000117), 16);
}

// ---------------------------------------------------------------------------
// Byte format

#[test]
fn round_trip_each_width_and_with_an_occupied_stash() {
    for bits in WIDTHS {
        let mut f = CuckooFilter::with_fingerprint_bits(500, bits).unwrap();
        let empty = f.clone();
        let probe = common::hashes(9, 2_000);
        common::assert_round_trip(&empty, &probe);
        for &h in &probe[..300] {
            f.insert_hash(h).unwrap();
        }
        common::assert_round_trip(&f, &probe);

        let keys = fill_until_full(&mut f, 10);
        assert!(f.is_full());
        common::assert_round_trip(&f, &probe);
        let mut back = CuckooFilter::from_bytes(&f.to_bytes()).unwrap();
        assert!(back.is_full());
        assert_eq!(back.num_keys(), 300 + keys.len());
        assert_eq!(back.insert_hash(KeyHash::from_well_mixed(1)), Err(Error::Full));
        // The decoded filter behaves exactly like the original from here on.
        back.remove_hash(probe[0]).unwrap();
        f.remove_hash(probe[0]).unwrap();
        assert_eq!(back, f);
        common::assert_no_false_negatives(&back, &keys);
    }
}

#[test]
fn any_filter_and_serde_list_know_the_cuckoo_filter() {
    let mut f = CuckooFilter::new(100, FilterSizing::Fpr(0.01)).unwrap();
    f.insert(b"k").unwrap();
    let any = AnyFilter::from_bytes(&f.to_bytes()).unwrap();
    assert_eq!(any.kind(), FilterKind::CuckooFilter);
    assert!(matches!(any, AnyFilter::CuckooFilter(ref g) if *g == f));
    assert!(any.contains(b"k"));
    assert_eq!(any.expected_fpr(), f.expected_fpr());
}

#[test]
fn corrupted_bytes_never_panic_or_lose_keys() {
    for bits in WIDTHS {
        // Three buckets, filled to failure so the stash is in the bytes too.
        let mut f = CuckooFilter::with_fingerprint_bits(8, bits).unwrap();
        let keys = fill_until_full(&mut f, 4);
        assert!(f.is_full());
        common::assert_corruption_safe(&f, &keys);
    }
}

#[test]
fn golden_bytes() {
    let mut f = CuckooFilter::with_fingerprint_bits(8, 12).unwrap();
    for key in [&b"apple"[..], b"pear", b"plum", b"fig"] {
        f.insert(key).unwrap();
    }
    common::assert_golden_frame("cuckoo 12-bit", &f.to_bytes(), GOLDEN_12);

    let mut full = CuckooFilter::with_fingerprint_bits(1, 8).unwrap();
    for key in [&b"a"[..], b"b", b"c", b"d", b"e"] {
        full.insert(key).unwrap();
    }
    assert!(full.is_full());
    common::assert_golden_frame("cuckoo 8-bit with stash", &full.to_bytes(), GOLDEN_8_STASH);
}

/// Bucket 0 holds "apple" (fp 0xe40) and "pear" (0xdb3), bucket 1 "plum"
/// (0x681) and "fig" (0xb9e); bucket 2 is empty. Checked by hand against the
/// fingerprint and bucket formulas of the module docs.
const GOLDEN_12: &str = "414d5146 0100 04 01 0b000000 1800000000000000
    0c 03000000 0000 00000000
    403edb00000081e6 b900000000000000 0000000000000000
    8adff1fc51fb09ac";
/// One bucket of four 8-bit fingerprints (0x2b, 0x2e, 0xeb, 0x01) and the
/// fifth, 0xbf, in the stash with bucket 0.
const GOLDEN_8_STASH: &str = "414d5146 0100 04 01 0b000000 0800000000000000
    08 01000000 bf00 00000000
    2b2eeb0100000000
    6d21795d9dab0741";
