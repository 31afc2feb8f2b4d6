//! Integration tests of the binary fuse filter with bit-packed fingerprints:
//! the set model at every width and both arities, the FPR `2^-w` with fixed
//! seeds, the space against `log2(1/FPR)`, the sizing, and the byte format
//! (round trip, golden bytes, corruption, forgery and the borrowed view).

mod common;

use amq::xor::{packed_fingerprint_bits, FuseArity, PackedBinaryFuseView, PackedFuseParams};
use amq::{
    hash_key, AnyFilter, BinaryFuse8, Filter, FilterKind, FilterSizing, FilterView, FromBytes, KeyHash,
    PackedBinaryFuse, StaticFilter,
};
use proptest::prelude::*;

proptest! {
    #![proptest_config(common::proptest_config(48))]

    /// Against a set, at any width and arity: every key found, the distinct
    /// keys counted, batch equal to single, and the bytes and the view
    /// answering as the filter does.
    #[test]
    fn model_set(
        bits in 1u32..=32,
        four in any::<bool>(),
        keys in proptest::collection::vec(0u64..3000, 0..600),
    ) {
        let arity = if four { FuseArity::Four } else { FuseArity::Three };
        let hashes: Vec<KeyHash> = keys.iter().map(|&k| common::mixed(k, 41)).collect();
        let probes: Vec<KeyHash> = (0..3000u64).map(|k| common::mixed(k, 41)).collect();
        let params = PackedFuseParams::with_bits(bits).arity(arity);
        let f: PackedBinaryFuse = common::check_static_model(&hashes, &probes, &params);
        prop_assert_eq!((f.fingerprint_bits(), f.arity()), (bits, arity));
        let bytes = f.to_bytes();
        prop_assert_eq!(&PackedBinaryFuse::from_bytes(&bytes).unwrap(), &f);
        let view = PackedBinaryFuseView::new(&bytes).unwrap();
        for &h in &probes {
            prop_assert_eq!(view.contains_hash(h), f.contains_hash(h));
        }
        common::assert_contains_hashes_agrees(&view, &probes);
    }
}

/// The measured FPR is `2^-w` within 10% (fixed seeds, at least about 1,000
/// false positives each), 3-wise and 4-wise.
#[test]
fn fpr_is_two_to_the_minus_width() {
    let keys = common::hashes(5, 100_000);
    for (bits, absent) in [(3, 200_000), (7, 400_000), (10, 2_000_000)] {
        for arity in [FuseArity::Three, FuseArity::Four] {
            let f =
                PackedBinaryFuse::build_with(&keys, &PackedFuseParams::with_bits(bits).arity(arity)).unwrap();
            let fp = common::false_positives(&f, &keys, 6, absent);
            let measured = fp as f64 / absent as f64;
            common::assert_fpr_close("PackedBinaryFuse", measured, f.expected_fpr(), 0.10);
        }
    }
}

/// At a million keys the space is at most 1.15 × log2(1/FPR) (3-wise: about
/// 1.13 slots per key): at 0.1% against the target itself (10 bits, 2^-10
/// just under it), at 1% against the filter's 2^-7 (whole bits: a target
/// between two widths takes the narrower FPR).
#[test]
fn space_is_near_the_bound_at_a_million_keys() {
    let keys = common::hashes(7, 1_000_000);
    for target in [0.001, 0.01] {
        let f = PackedBinaryFuse::build(&keys, FilterSizing::Fpr(target)).unwrap();
        assert!(f.expected_fpr() <= target);
        let bound = -f.expected_fpr().log2();
        assert!(
            f.bits_per_key() <= 1.15 * bound,
            "{target}: {} bits/key against {bound}",
            f.bits_per_key()
        );
    }
    let f = PackedBinaryFuse::build(&keys, FilterSizing::Fpr(0.001)).unwrap();
    assert!(
        f.bits_per_key() <= 1.15 * -(0.001f64).log2(),
        "{}",
        f.bits_per_key()
    );
}

#[test]
fn sizing_and_errors() {
    assert_eq!(packed_fingerprint_bits(1000, FilterSizing::Fpr(0.5)).unwrap(), 1);
    assert_eq!(packed_fingerprint_bits(1000, FilterSizing::Fpr(0.49)).unwrap(), 2);
    assert_eq!(
        packed_fingerprint_bits(1000, FilterSizing::Fpr(0.001)).unwrap(),
        10
    );
    assert_eq!(
        packed_fingerprint_bits(1000, FilterSizing::Fpr(2f64.powi(-32))).unwrap(),
        32
    );
    assert!(packed_fingerprint_bits(1000, FilterSizing::Fpr(2f64.powi(-33))).is_err());
    assert!(packed_fingerprint_bits(1000, FilterSizing::Fpr(0.0)).is_err());
    assert!(packed_fingerprint_bits(1000, FilterSizing::BitsPerKey(0.5)).is_err());
    assert!(packed_fingerprint_bits(1000, FilterSizing::BitsPerKey(100.0)).is_err());
    let keys = common::hashes(8, 1000);
    for bits in [0, 33] {
        assert!(matches!(
            PackedBinaryFuse::build_with(&keys, &PackedFuseParams::with_bits(bits)),
            Err(amq::Error::InvalidParameter { .. })
        ));
    }
    // A budget gives the widest fingerprint that fits it.
    let f = PackedBinaryFuse::build(&common::hashes(9, 100_000), FilterSizing::BitsPerKey(12.0)).unwrap();
    assert!(f.bits_per_key() <= 12.0);
    let wider = PackedBinaryFuse::build_with(
        &common::hashes(9, 100_000),
        &PackedFuseParams::with_bits(f.fingerprint_bits() + 1),
    )
    .unwrap();
    assert!(wider.bits_per_key() > 12.0);
    let empty = PackedBinaryFuse::build(&[], FilterSizing::BitsPerKey(10.0)).unwrap();
    assert_eq!((empty.num_keys(), empty.fingerprint_bits()), (0, 8));
    let empty = PackedBinaryFuse::build(&[], FilterSizing::Fpr(0.01)).unwrap();
    assert_eq!((empty.num_keys(), empty.expected_fpr()), (0, 0.0));
    assert!(!empty.contains(b"x"));
}

#[test]
fn any_filter_and_views_hold_it() {
    let keys = common::hashes(10, 5_000);
    let any = AnyFilter::build(FilterKind::PackedBinaryFuse, &keys, FilterSizing::Fpr(0.001)).unwrap();
    assert_eq!(any.kind(), FilterKind::PackedBinaryFuse);
    common::assert_no_false_negatives(&any, &keys);
    let bytes = any.to_bytes();
    assert!(FilterView::supports(FilterKind::PackedBinaryFuse));
    let view = FilterView::new(&bytes).unwrap();
    assert_eq!(view.kind(), FilterKind::PackedBinaryFuse);
    common::assert_no_false_negatives(view.as_filter(), &keys);
    assert_eq!(view.to_bytes(), bytes);
    let mut shifted = vec![0u8; bytes.len() + 63];
    for offset in [1, 5, 33] {
        shifted[offset..offset + bytes.len()].copy_from_slice(&bytes);
        let v = PackedBinaryFuseView::new(&shifted[offset..offset + bytes.len()]).unwrap();
        common::assert_no_false_negatives(&v, &keys);
    }
    // Width 8 answers exactly as `BinaryFuse8` does: the same table.
    let p8 = PackedBinaryFuse::build_with(&keys, &PackedFuseParams::with_bits(8)).unwrap();
    let f8 = BinaryFuse8::build(&keys).unwrap();
    let probes = common::hashes(11, 20_000);
    assert!(probes.iter().all(|&h| p8.contains_hash(h) == f8.contains_hash(h)));
}

#[test]
fn bytes_round_trip_and_survive_corruption() {
    let keys = common::hashes(12, 40);
    for bits in [5, 13] {
        let f = PackedBinaryFuse::build_with(&keys, &PackedFuseParams::with_bits(bits)).unwrap();
        common::assert_round_trip(&f, &common::hashes(13, 1000));
        common::assert_corruption_safe(&f, &keys);
    }
    let tiny = PackedBinaryFuse::build_with(&common::hashes(14, 3), &PackedFuseParams::with_bits(3)).unwrap();
    common::assert_forgery_safe(&tiny, common::Payload::MayBeRefused);
}

/// The format is pinned: "apple", "pear" and "plum" in 5-bit fingerprints.
/// The payload is checked against the 32-bit table it is packed from (each
/// slot's low 5 bits at bit `5·i`).
#[test]
fn golden_bytes() {
    let keys: Vec<KeyHash> = [&b"apple"[..], b"pear", b"plum"]
        .iter()
        .map(|k| hash_key(k))
        .collect();
    let f = PackedBinaryFuse::build_with(&keys, &PackedFuseParams::with_bits(5)).unwrap();
    let wide = amq::BinaryFuse32::build(&keys).unwrap().to_bytes();
    let slots = f.num_slots();
    let mut packed = vec![0u8; (slots * 5).div_ceil(8) + 7];
    for i in 0..slots {
        let v = u32::from_le_bytes(wide[64 + 4 * i..68 + 4 * i].try_into().unwrap()) & 31;
        for b in 0..5 {
            if v >> b & 1 == 1 {
                packed[(5 * i + b) / 8] |= 1 << ((5 * i + b) % 8);
            }
        }
    }
    let bytes = f.to_bytes();
    let sum_at = bytes.len() - amq::format::CHECKSUM_LEN;
    assert_eq!(bytes[6], FilterKind::PackedBinaryFuse.id());
    assert_eq!(bytes[6], 17);
    // Parameters: the fuse layout's 25 bytes, then the width.
    assert_eq!(u32::from_le_bytes(bytes[8..12].try_into().unwrap()), 26);
    assert_eq!(bytes[20 + 25], 5);
    assert_eq!(&bytes[64..sum_at], &packed[..]);
    common::assert_golden(
        "PackedBinaryFuse",
        &bytes,
        "414d5146020011011a0000001600000000000000efba76d7bf8ca3fa030800000001000000030000\
         00000000000500000000000000000000000000000000000000800000000000000000000800c00600\
         000000000000205d4dd80e1fec0c",
    );
}

#[test]
fn static_build_with_is_build_with() {
    let keys = common::hashes(15, 2000);
    let params = PackedFuseParams::with_bits(9);
    let a = <PackedBinaryFuse as StaticFilter>::build_with(&keys, &params).unwrap();
    assert_eq!(a, PackedBinaryFuse::build_with(&keys, &params).unwrap());
}
