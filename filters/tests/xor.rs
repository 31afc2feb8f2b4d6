//! Xor filters (`Xor8`, `Xor16`) against a `HashSet` model, their space and
//! FPR targets at 100,000 keys, and their byte format.

mod common;

use std::fmt::Debug;

use amq::{AnyFilter, Error, Filter, FilterKind, FormatError, FromBytes, KeyHash, StaticFilter, Xor16, Xor8};
use proptest::prelude::*;

/// Builds through the trait, as generic callers do.
fn build<F: StaticFilter<Params = ()>>(keys: &[KeyHash]) -> F {
    F::build_with(keys, &()).expect("build")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Arbitrary key sets; the narrow range makes duplicates common.
    #[test]
    fn no_false_negatives_vs_hashset(
        keys in prop::collection::vec(prop_oneof![any::<u64>(), 0u64..64], 0..600),
        probes in prop::collection::vec(any::<u64>(), 0..64),
    ) {
        let (keys, probes) = (common::well_mixed(&keys), common::well_mixed(&probes));
        common::check_static_model::<Xor8>(&keys, &probes, &());
        common::check_static_model::<Xor16>(&keys, &probes, &());
    }
}

#[test]
fn edge_sizes_and_powers_of_two() {
    let mut sizes = vec![0usize, 1, 2, 3, 4];
    for k in 3..=14 {
        sizes.extend([(1 << k) - 1, 1 << k, (1 << k) + 1]);
    }
    for n in sizes {
        let keys = common::hashes(n as u64, n);
        common::check_static_model::<Xor8>(&keys, &keys, &());
        common::check_static_model::<Xor16>(&keys, &keys, &());
    }
}

#[test]
fn half_duplicates_build_and_answer() {
    let distinct = common::hashes(11, 20_000);
    let mut keys = distinct.clone();
    keys.extend_from_slice(&distinct[..10_000]);
    keys.extend_from_slice(&distinct[5_000..15_000]);
    let f = Xor8::build(&keys).unwrap();
    assert_eq!(f.num_keys(), 20_000);
    common::assert_no_false_negatives(&f, &distinct);
    // One hash repeated far past any counter width.
    let h = KeyHash::from_well_mixed(42);
    let f = Xor16::build(&vec![h; 100_000]).unwrap();
    assert_eq!(f.num_keys(), 1);
    assert!(f.contains_hash(h));
}

#[test]
fn space_and_fpr_at_100k_keys() {
    let keys = common::hashes(1, 100_000);
    let f = Xor8::build(&keys).unwrap();
    assert!(f.bits_per_key() <= 9.9, "Xor8 {} bits/key", f.bits_per_key());
    let absent = common::absent_hashes(2, 1_000_000, &keys);
    common::assert_fpr_close("Xor8", common::measured_fpr(&f, &absent), f.expected_fpr(), 0.15);

    let f = Xor16::build(&keys).unwrap();
    assert!(f.bits_per_key() <= 19.7, "Xor16 {} bits/key", f.bits_per_key());
    // 2^-16 needs many probes: 2^25 give ~512 expected positives (sd 4.4%).
    let n = 1u64 << 25;
    let fpr = common::false_positives(&f, &keys, 3, n) as f64 / n as f64;
    common::assert_fpr_close("Xor16", fpr, f.expected_fpr(), 0.15);
}

#[test]
fn format_round_trip() {
    for n in [0usize, 1, 1000] {
        let keys = common::hashes(5, n);
        let probe = common::hashes(6, 1000);
        common::assert_round_trip(&Xor8::build(&keys).unwrap(), &probe);
        common::assert_round_trip(&Xor16::build(&keys).unwrap(), &probe);
    }
}

#[test]
fn corruption_is_detected_or_harmless() {
    let keys = common::hashes(7, 4);
    common::assert_corruption_safe(&Xor8::build(&keys).unwrap(), &keys);
    common::assert_corruption_safe(&Xor16::build(&keys).unwrap(), &keys);
    common::assert_corruption_safe(&Xor8::build(&[]).unwrap(), &[]);
}

#[test]
fn golden_bytes() {
    let f = Xor8::build(&common::well_mixed(&[1, 2, 3])).unwrap();
    common::assert_golden_frame("Xor8", &f.to_bytes(), XOR8_GOLDEN);
    let f = Xor16::build(&common::well_mixed(&[1, 2, 3])).unwrap();
    common::assert_golden_frame("Xor16", &f.to_bytes(), XOR16_GOLDEN);
}

const XOR8_GOLDEN: &str = "414d514601000501180000002400000000000000efba76d7bf8ca3fa0c00000000000000030000000000000000000000006657000000005c000000000000000000000000000000000000000000000000632b00b5ae749b4f";
const XOR16_GOLDEN: &str = "414d514601000601180000004800000000000000efba76d7bf8ca3fa0c0000000000000003000000000000000000000000000000000066bc57b900000000000000005c0c000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000fa6394bff024f29a";

#[test]
fn wrong_kind_and_garbage_are_errors() {
    let bytes = Xor8::build(&common::well_mixed(&[1, 2, 3])).unwrap().to_bytes();
    assert_eq!(
        Xor16::from_bytes(&bytes).unwrap_err(),
        Error::Format(FormatError::WrongKind {
            expected: FilterKind::Xor16,
            found: FilterKind::Xor8
        })
    );
    assert!(matches!(AnyFilter::from_bytes(&bytes), Ok(AnyFilter::Xor8(_))));
    assert!(Xor8::from_bytes(&[]).is_err());
    assert!(Xor8::from_bytes(&[0xFF; 200]).is_err());
}

#[test]
fn generic_callers_see_a_static_filter() {
    fn bits<F: StaticFilter<Params = ()> + Debug>(keys: &[KeyHash]) -> f64 {
        build::<F>(keys).bits_per_key()
    }
    let keys = common::hashes(8, 10_000);
    assert!(bits::<Xor8>(&keys) < bits::<Xor16>(&keys));
}
