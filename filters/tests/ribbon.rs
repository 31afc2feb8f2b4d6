//! Ribbon filter: model-based property tests, FPR and space at 100,000 keys,
//! fractional bits per key, duplicates, the byte format, and bad parameters.

mod common;

use std::collections::HashSet;

use amq::ribbon::{LINE_SHARD_KEYS, SHARD_KEYS};
use amq::{AnyFilter, Error, Filter, FilterKind, FilterSizing, FromBytes, KeyHash, Ribbon, RibbonParams};
use common::{absent_hashes, assert_fpr_close, assert_no_false_negatives, hashes, measured_fpr};
use proptest::prelude::*;

fn bits(r: u32) -> RibbonParams {
    RibbonParams::with_result_bits(r).unwrap()
}

/// The two-line layout (r = 7; what `bits(7)` gives by default).
fn two_lines() -> RibbonParams {
    bits(7).with_two_line_layout().unwrap()
}

/// The blocked layout at `r` result bits (the only one but at r = 7).
fn blocked(r: u32) -> RibbonParams {
    bits(r).with_blocked_layout()
}

proptest! {
    #![proptest_config(common::proptest_config(64))]

    /// Any key set, duplicates included (drawn from a small pool half the
    /// time), any r: no false negatives.
    #[test]
    fn no_false_negatives_against_hashset_model(
        fresh in prop::collection::vec(any::<u64>(), 0..700),
        repeats in prop::collection::vec(0usize..64, 0..300),
        r in 1u32..=32,
    ) {
        let fresh = common::well_mixed(&fresh);
        let mut keys = fresh.clone();
        if !fresh.is_empty() {
            keys.extend(repeats.iter().map(|&i| fresh[i % fresh.len()]));
        }
        let f = common::check_static_model::<Ribbon>(&keys, &[], &bits(r));
        // Absent keys are absent in the model; the filter may say either, but
        // answering must not panic and must agree with the batch path.
        let model: HashSet<KeyHash> = keys.iter().copied().collect();
        let probe: Vec<KeyHash> = (0..200u64).map(|i| common::mixed(i, 99)).filter(|h| !model.contains(h)).collect();
        let mut out = vec![false; probe.len()];
        f.contains_hashes(&probe, &mut out);
        for (h, o) in probe.iter().zip(out) {
            prop_assert_eq!(f.contains_hash(*h), o);
        }
        // The batch path finds every stored key too (batches of 16 plus a
        // partial one).
        let mut found = vec![false; keys.len()];
        f.contains_hashes(&keys, &mut found);
        prop_assert!(found.iter().all(|&b| b));
    }

    /// The two-line layout against the same model: no false negatives,
    /// single and batch agree, and the bytes round-trip.
    #[test]
    fn two_line_layout_against_hashset_model(
        fresh in prop::collection::vec(any::<u64>(), 0..3000),
        repeats in prop::collection::vec(0usize..64, 0..300),
    ) {
        let fresh = common::well_mixed(&fresh);
        let mut keys = fresh.clone();
        if !fresh.is_empty() {
            keys.extend(repeats.iter().map(|&i| fresh[i % fresh.len()]));
        }
        let model: HashSet<KeyHash> = keys.iter().copied().collect();
        let probe: Vec<KeyHash> = (0..500u64).map(|i| common::mixed(i, 98)).filter(|h| !model.contains(h)).collect();
        let f = common::check_static_model::<Ribbon>(&keys, &probe, &two_lines());
        prop_assert!(f.is_two_line_layout());
        prop_assert_eq!(f.num_keys(), model.len());
        let back = Ribbon::from_bytes(&f.to_bytes()).unwrap();
        prop_assert_eq!(&back, &f);
        for h in probe.iter().chain(&keys) {
            prop_assert_eq!(back.contains_hash(*h), f.contains_hash(*h));
        }
    }

    /// Fractional bits per key and FPR targets keep every key too.
    #[test]
    fn mixed_columns_have_no_false_negatives(
        n in 0usize..3000,
        seed in any::<u64>(),
        b in 1.0f64..34.0,
    ) {
        let keys = hashes(seed, n);
        common::check_static_model::<Ribbon>(&keys, &[], &RibbonParams::with_bits_per_key(b).unwrap());
        common::check_static_model::<Ribbon>(&keys, &[], &RibbonParams::with_fpr(1.0 / b.min(32.0).exp2()).unwrap());
    }
}

#[test]
fn sizes_at_and_around_powers_of_two_and_shard_boundaries() {
    let mut sizes = vec![0usize, 1, 2, 3];
    for k in 2..=15 {
        sizes.extend([(1 << k) - 1, 1 << k, (1 << k) + 1]);
    }
    sizes.extend([SHARD_KEYS - 1, SHARD_KEYS, SHARD_KEYS + 1, 2 * SHARD_KEYS + 1]);
    for (i, &n) in sizes.iter().enumerate() {
        let r = [1, 7, 13, 32][i % 4];
        // r = 7 both ways: the default (two-line) and the blocked layout;
        // bumped (the default) from `BUMPED_MIN_KEYS` keys on, and not.
        for params in [bits(r), blocked(r)] {
            let f = common::check_static_model::<Ribbon>(&hashes(n as u64, n), &[], &params);
            assert_eq!(f.is_two_line_layout(), r == 7 && params == bits(7));
            assert_eq!(f.is_bumped_layout(), n >= amq::ribbon::BUMPED_MIN_KEYS);
            let f =
                common::check_static_model::<Ribbon>(&hashes(n as u64, n), &[], &params.without_bumping());
            assert!(!f.is_bumped_layout());
            let shard_keys = if f.is_two_line_layout() {
                LINE_SHARD_KEYS
            } else {
                SHARD_KEYS
            };
            assert_eq!(f.num_shards(), n.div_ceil(shard_keys));
        }
    }
}

#[test]
fn empty_and_single_key_filters() {
    let empty = Ribbon::build_with(&[], &bits(7)).unwrap();
    assert_eq!(
        (empty.num_keys(), empty.size_in_bytes(), empty.expected_fpr()),
        (0, 0, 0.0)
    );
    assert!(!empty.contains(b"anything"));
    let one = Ribbon::build_with(&[amq::hash_key(b"k")], &bits(7)).unwrap();
    assert!(one.contains(b"k"));
    assert_eq!(one.num_keys(), 1);
}

#[test]
fn half_duplicates_build_and_answer() {
    let distinct = hashes(5, 20_000);
    let mut keys = distinct.clone();
    keys.extend_from_slice(&distinct);
    keys.rotate_left(7_777);
    let f = common::check_static_model::<Ribbon>(&keys, &[], &bits(8));
    assert_eq!(f.num_keys(), 20_000);
    assert!(f.bits_per_key() < 8.0 * 1.04, "{}", f.bits_per_key());
}

/// Duplicates are counted once, in every layout, bumped or not, and in
/// streamed builds: a filter built from each key repeated (3 or 10 times,
/// shuffled) is the one built from the distinct keys, byte for byte, so
/// it takes the same shards and space and keeps the same FPR.
#[test]
fn duplicates_build_the_filter_of_the_distinct_keys() {
    let fpr = |p: f64| RibbonParams::with_fpr(p).unwrap();
    let layouts = [
        ("1%", fpr(0.01)),
        ("1% unbumped", fpr(0.01).without_bumping()),
        ("0.1% unbumped", fpr(0.001).without_bumping()),
        ("r = 7 two-line unbumped", two_lines().without_bumping()),
        ("r = 7 blocked", blocked(7)),
        ("8.3 bits/key", RibbonParams::with_bits_per_key(8.3).unwrap()),
    ];
    for (name, params) in &layouts {
        for (n, copies) in [(2_000usize, 3usize), (5_000, 3), (20_000, 10), (40_000, 2)] {
            let distinct = hashes(n as u64 + 17, n);
            let mut repeated: Vec<KeyHash> = (0..copies).flat_map(|_| distinct.iter().copied()).collect();
            repeated.rotate_left(n / 3);
            let want = Ribbon::build_with(&distinct, params).unwrap();
            let got = Ribbon::build_with(&repeated, params).unwrap();
            assert_eq!(got.num_keys(), n, "{name}, {n} × {copies}");
            assert_eq!(got.expected_fpr(), want.expected_fpr(), "{name}, {n} × {copies}");
            assert!(
                got.to_bytes() == want.to_bytes(),
                "{name}, {n} × {copies}: not the distinct keys' filter"
            );
            let streamed = Ribbon::build_streamed(
                || repeated.iter().copied(),
                params,
                &amq::streamed::StreamedBuild::new()
                    .with_memory(64 << 10)
                    .with_threads(2)
                    .unwrap(),
            )
            .unwrap();
            assert!(
                streamed.to_bytes() == want.to_bytes(),
                "{name}, {n} × {copies}: streamed"
            );
        }
    }
}

#[test]
fn hashes_that_are_not_hashes_still_work() {
    // 0, 1, 2, ...: spread over shards by the first multiplication. (Not
    // well mixed at all: the promise of `from_well_mixed` broken on purpose.)
    let keys: Vec<KeyHash> = (0..50_000).map(KeyHash::from_well_mixed).collect();
    let f = common::check_static_model::<Ribbon>(&keys, &[], &bits(7));
    assert!(f.bits_per_key() < 7.35, "{}", f.bits_per_key());
    let f = common::check_static_model::<Ribbon>(&keys, &[], &blocked(7));
    assert!(f.bits_per_key() < 7.0 * 1.03, "{}", f.bits_per_key());
}

#[test]
fn random_key_sets_in_the_failure_range_of_other_filters_build() {
    for seed in 0..40u64 {
        let n = 10_000 + (seed as usize * 75);
        let keys = hashes(seed + 1_000, n);
        let f = Ribbon::build_with(&keys, &bits(8)).expect("build");
        assert_eq!(f.num_keys(), n);
        assert!(
            f.attempts() <= 4 * f.num_shards() as u64,
            "{} attempts",
            f.attempts()
        );
    }
}

/// Space and FPR at n = 100,000 (fixed seeds): bits/key at most 3.5% above
/// r plus the shard table's 0.02 bits (the design target is 5%; measured
/// with the default 1.025 slots per key: 2.6% at r = 7, 4% at r = 1 where the
/// table weighs most), FPR within 15% of 2^-r. A second filter at 1/64
/// extra slots shows the low-overhead setting: under 2% at r = 7.
#[test]
fn fpr_and_space_at_100k() {
    let n = 100_000;
    let keys = hashes(7, n);
    let absent = absent_hashes(7, 2_000_000, &keys);
    for r in [1u32, 7, 8, 12] {
        let f = Ribbon::build_with(&keys, &blocked(r)).unwrap();
        assert!((f.expected_fpr() / (-(r as f64)).exp2() - 1.0).abs() < 1e-12);
        assert!(
            f.bits_per_key() <= r as f64 * 1.035 + 0.02,
            "r = {r}: {} bits/key",
            f.bits_per_key()
        );
        assert!(
            f.bits_per_key() >= r as f64,
            "r = {r}: {} bits/key",
            f.bits_per_key()
        );
        assert_fpr_close(
            &format!("ribbon r={r}"),
            measured_fpr(&f, &absent),
            f.expected_fpr(),
            0.15,
        );
    }
    // r = 16: 2M probes expect ~31 false positives, too few for ±15%, so the
    // bound is looser; space is held to the same bar.
    let f = Ribbon::build_with(&keys, &bits(16)).unwrap();
    assert!(f.bits_per_key() <= 16.0 * 1.035, "{}", f.bits_per_key());
    let fpr = measured_fpr(&f, &absent);
    assert!(fpr < 2.0 * f.expected_fpr(), "{fpr}");

    let tight = blocked(7).with_slots_per_key(1.0 + 1.0 / 64.0).unwrap();
    let f = Ribbon::build_with(&keys, &tight).unwrap();
    assert!(f.bits_per_key() <= 7.0 * 1.02, "{}", f.bits_per_key());
    assert_fpr_close(
        "ribbon r=7 tight",
        measured_fpr(&f, &absent),
        f.expected_fpr(),
        0.15,
    );
}

/// The two-line layout at 100,000 keys: space within the target's 7.35
/// bits/key, FPR within 15% of 2^-7, retries bounded, and the sizes around
/// its shard boundary.
#[test]
fn two_line_layout_fpr_and_space_at_100k() {
    let n = 100_000;
    let keys = hashes(7, n);
    let absent = absent_hashes(7, 2_000_000, &keys);
    let f = Ribbon::build_with(&keys, &two_lines().without_bumping()).unwrap();
    assert!(f.is_two_line_layout());
    assert_eq!(f.num_shards(), n.div_ceil(LINE_SHARD_KEYS));
    assert_eq!(f.expected_fpr(), 1.0 / 128.0);
    assert!(f.bits_per_key() <= 7.35, "{} bits/key", f.bits_per_key());
    assert!(f.bits_per_key() >= 7.0, "{} bits/key", f.bits_per_key());
    assert!(
        f.attempts() <= 2 * f.num_shards() as u64,
        "{} attempts",
        f.attempts()
    );
    assert_fpr_close(
        "ribbon two-line",
        measured_fpr(&f, &absent),
        f.expected_fpr(),
        0.15,
    );
    assert_eq!(
        f.query_kernel(),
        Ribbon::build_with(&keys, &bits(7)).unwrap().query_kernel()
    );
    for n in [
        0,
        1,
        2,
        63,
        64,
        65,
        73,
        74,
        LINE_SHARD_KEYS - 1,
        LINE_SHARD_KEYS,
        LINE_SHARD_KEYS + 1,
    ] {
        let f = common::check_static_model::<Ribbon>(&hashes(n as u64, n), &[], &two_lines());
        assert_eq!(f.num_shards(), n.div_ceil(LINE_SHARD_KEYS));
    }
    // Tight slack: many shards retry with the next seed (and grow), and
    // every key is still found.
    let tight = two_lines().without_bumping().with_slots_per_key(1.0).unwrap();
    let f = common::check_static_model::<Ribbon>(&keys[..20_000], &[], &tight);
    assert!(f.attempts() > f.num_shards() as u64, "{}", f.attempts());
}

#[test]
fn fractional_bits_per_key_and_fpr_targets() {
    let n = 100_000;
    let keys = hashes(11, n);
    let absent = absent_hashes(11, 1_000_000, &keys);

    let f = Ribbon::build_with(&keys, &RibbonParams::with_bits_per_key(7.5).unwrap()).unwrap();
    assert!(
        (f.bits_per_key() - 7.5).abs() < 0.05,
        "{} bits/key",
        f.bits_per_key()
    );
    let expected = f.expected_fpr();
    assert!(expected < 0.0078125 && expected > 0.00390625, "{expected}");
    assert_fpr_close("ribbon 7.5 bits/key", measured_fpr(&f, &absent), expected, 0.15);

    let f = Ribbon::build_with(&keys, &RibbonParams::with_fpr(0.01).unwrap()).unwrap();
    assert!(
        (f.expected_fpr() / 0.01 - 1.0).abs() < 0.01,
        "{}",
        f.expected_fpr()
    );
    assert_fpr_close("ribbon fpr 1%", measured_fpr(&f, &absent), 0.01, 0.15);
    // log2(100) = 6.64 bits at the limit; the r/r+1 mix and the slots cost a few %.
    assert!(f.bits_per_key() < 6.64 * 1.05, "{} bits/key", f.bits_per_key());
}

#[test]
fn impossible_parameters_are_errors() {
    for r in [0, 33, u32::MAX] {
        assert!(matches!(
            RibbonParams::with_result_bits(r),
            Err(Error::InvalidParameter { .. })
        ));
    }
    for p in [0.0, 1.0, -0.5, 1.5, f64::NAN, f64::INFINITY, 1e-10] {
        assert!(
            matches!(RibbonParams::with_fpr(p), Err(Error::InvalidParameter { .. })),
            "{p}"
        );
    }
    for b in [0.0, 0.99, 40.5, f64::NAN, f64::NEG_INFINITY] {
        assert!(
            matches!(
                RibbonParams::with_bits_per_key(b),
                Err(Error::InvalidParameter { .. })
            ),
            "{b}"
        );
    }
    for ratio in [0.99, 4.5, f64::NAN] {
        assert!(bits(7).with_slots_per_key(ratio).is_err(), "{ratio}");
    }
    // The two-line layout holds 6 to 8 result bits (FPR 2^-8 to 2^-6).
    for params in [
        bits(5),
        bits(9),
        bits(32),
        RibbonParams::with_fpr(0.02).unwrap(),
        RibbonParams::with_fpr(0.003).unwrap(),
        RibbonParams::with_bits_per_key(7.0).unwrap(),
    ] {
        assert!(
            matches!(params.with_two_line_layout(), Err(Error::InvalidParameter { .. })),
            "{params:?}"
        );
    }
    for p in [1.0 / 64.0, 0.01, 1.0 / 128.0, 0.005, 1.0 / 256.0] {
        assert!(
            RibbonParams::with_fpr(p).unwrap().with_two_line_layout().is_ok(),
            "{p}"
        );
    }
    for r in 6..=8 {
        assert!(bits(r).with_two_line_layout().is_ok(), "{r}");
    }
}

#[test]
fn format_round_trip() {
    let probe = hashes(123, 2_000);
    for (n, params) in [
        (0, bits(5)),
        (1, bits(32)),
        (1_000, bits(1)),
        (3 * SHARD_KEYS + 17, RibbonParams::with_bits_per_key(9.3).unwrap()),
        (20_000, RibbonParams::with_fpr(0.003).unwrap()),
        (0, two_lines()),
        (1, two_lines()),
        (3 * LINE_SHARD_KEYS + 17, two_lines()),
    ] {
        let keys = hashes(n as u64 + 1, n);
        let f = Ribbon::build_with(&keys, &params).unwrap();
        common::assert_round_trip(&f, &probe);
        let back = Ribbon::from_bytes(&f.to_bytes()).unwrap();
        assert_no_false_negatives(&back, &keys);
    }
}

#[test]
fn wrong_kind_is_rejected() {
    let f = Ribbon::build_with(&hashes(1, 10), &bits(4)).unwrap();
    let bloom = amq::StandardBloom::new(10, FilterSizing::Fpr(0.01)).unwrap();
    assert!(Ribbon::from_bytes(&bloom.to_bytes()).is_err());
    assert!(amq::StandardBloom::from_bytes(&f.to_bytes()).is_err());
    assert_eq!(
        AnyFilter::from_bytes(&f.to_bytes()).unwrap().kind(),
        FilterKind::Ribbon
    );
}

#[test]
fn corruption_is_detected_or_harmless() {
    let keys = hashes(3, 40);
    let f = Ribbon::build_with(&keys, &bits(3)).unwrap();
    common::assert_corruption_safe(&f, &keys);
    let f = Ribbon::build_with(&keys, &two_lines()).unwrap();
    common::assert_corruption_safe(&f, &keys);
}

/// Pins the serialized bytes: a change here is a format break.
#[test]
fn golden_bytes() {
    let keys = hashes(1, 3);
    let f = Ribbon::build_with(&keys, &bits(2)).unwrap();
    let bytes = f.to_bytes();
    common::assert_golden("ribbon r=2, 3 keys", &bytes, GOLDEN_V2);
    // Version 1 (shard records first, without word offsets) still decodes.
    let v1 = Ribbon::from_bytes(&common::from_hex(GOLDEN)).unwrap();
    assert_eq!(v1, f);
    assert_eq!(v1.to_bytes(), bytes);
}

/// Pins the two-line layout's bytes (format version 2 with the layout
/// byte 1), and that the blocked layout's bytes above are unchanged.
#[test]
fn golden_bytes_two_line_layout() {
    let keys = hashes(1, 3);
    let f = Ribbon::build_with(&keys, &two_lines()).unwrap();
    let bytes = f.to_bytes();
    common::assert_golden("ribbon two-line, 3 keys", &bytes, GOLDEN_TWO_LINES);
    assert_eq!(Ribbon::from_bytes(&bytes).unwrap(), f);
    assert!(keys.iter().all(|&h| f.contains_hash(h)));
}

/// Format version 2: parameters keys 3, shards 1, blocks 2, result bits 2,
/// extra-column start 256 (none); zeros to byte 64; the words (the same
/// four as in version 1); the block starts 0 and 2; the seed 0.
const GOLDEN_V2: &str = "
    414d5146 0200 0a 01 1b000000 2900000000000000
    0300000000000000 0100000000000000 0200000000000000 02 0001
    0000000000000000000000000000000000
    0200000000000000 0500000000000000 0000000000000000 0000000000000000
    00000000 02000000 00
    8d61cc6b9519d9e2";

const GOLDEN: &str = "
    414d5146 0100 0a 01 10000000 2a00000000000000
    0300000000000000 0100000000000000
    02000000 02000000 02 00
    0200000000000000 0500000000000000 0000000000000000 0000000000000000
    3492d471fc00a95e";

/// Format version 2, two-line layout: parameters keys 3, shards 1, lines 1,
/// result bits 7, extra-column start 256, layout 1; zeros to byte 64; one
/// line of eight words; the line starts 0 and 1; the seed 0.
const GOLDEN_TWO_LINES: &str = "
    414d5146 0200 0a 01 1c000000 4900000000000000
    0300000000000000 0100000000000000 0100000000000000 07 0001 01
    00000000000000000000000000000000
    0200000000000000 0a00000000000000 0800000000000000 0100000000000000
    0200000000000000 0b00000000000000 0900000000000000 0000000000000000
    00000000 01000000 00
    08cbeb1c5538abcf";
