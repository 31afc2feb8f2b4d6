//! Binary fuse filters (`BinaryFuse8/16/32`, 3- and 4-wise) against a
//! `HashSet` model, the key-set sizes where other implementations fail, their
//! space and FPR targets, and their byte format.

mod common;

use amq::hash::remix;
use amq::xor::{FuseArity, FuseParams};
use amq::Xor8;
use amq::{
    AnyFilter, BinaryFuse16, BinaryFuse32, BinaryFuse8, Error, Filter, FilterKind, FormatError, FromBytes,
    KeyHash,
};
use proptest::prelude::*;

const ARITIES: [FuseParams; 2] = [FuseParams::THREE_WISE, FuseParams::FOUR_WISE];

fn check_all_widths(keys: &[KeyHash], probes: &[KeyHash]) {
    for params in &ARITIES {
        common::check_static_model::<BinaryFuse8>(keys, probes, params);
        common::check_static_model::<BinaryFuse16>(keys, probes, params);
        common::check_static_model::<BinaryFuse32>(keys, probes, params);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Arbitrary key sets; the narrow range makes duplicates common.
    #[test]
    fn no_false_negatives_vs_hashset(
        keys in prop::collection::vec(prop_oneof![any::<u64>(), 0u64..64], 0..600),
        probes in prop::collection::vec(any::<u64>(), 0..64),
    ) {
        check_all_widths(&common::well_mixed(&keys), &common::well_mixed(&probes));
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
        check_all_widths(&keys, &keys[..n.min(100)]);
    }
}

/// As reported against xor_singleheader: other binary fuse builds fail for 20–40% of
/// distinct key sets of about 11,500 keys. Ours must build every one.
#[test]
fn thousand_key_sets_of_10k_to_13k_all_build() {
    for set in 0..1000u64 {
        let n = 10_000 + (remix(set, 99) % 3_001) as usize;
        let keys = common::hashes(1_000_000 + set, n);
        let f = BinaryFuse8::build(&keys).unwrap_or_else(|e| panic!("set {set}, n = {n}: {e}"));
        assert_eq!(f.num_keys(), n);
        assert!(keys.iter().all(|&h| f.contains_hash(h)), "set {set}");
    }
}

/// The worst sizes of the paper's layout (a segment-length step followed by
/// rounding the segment count down) build for every width and arity.
#[test]
fn segment_step_sizes_build() {
    for n in [3_551, 11_504, 11_521, 12_371, 37_453] {
        for seed in 0..5 {
            let keys = common::hashes(seed * 1_000 + n as u64, n);
            check_all_widths(&keys, &[]);
        }
    }
}

#[test]
fn half_duplicates_build_and_answer() {
    let distinct = common::hashes(11, 20_000);
    let mut keys = distinct.clone();
    keys.extend_from_slice(&distinct[..10_000]);
    keys.extend_from_slice(&distinct[5_000..15_000]);
    for params in &ARITIES {
        let f = BinaryFuse8::build_with(&keys, params).unwrap();
        assert_eq!(f.num_keys(), 20_000);
        common::assert_no_false_negatives(&f, &distinct);
        // xorf's fuse filters return an error for 10,000 keys + 100 duplicates.
        let mut few_dups = distinct[..10_000].to_vec();
        few_dups.extend_from_slice(&distinct[..100]);
        let f = BinaryFuse16::build_with(&few_dups, params).unwrap();
        assert_eq!(f.num_keys(), 10_000);
        let h = KeyHash::from_well_mixed(42);
        let f = BinaryFuse32::build_with(&vec![h; 100_000], params).unwrap();
        assert_eq!(f.num_keys(), 1);
        assert!(f.contains_hash(h));
    }
}

#[test]
fn fpr_at_100k_keys() {
    let keys = common::hashes(1, 100_000);
    let absent = common::absent_hashes(2, 1_000_000, &keys);
    for params in &ARITIES {
        let f = BinaryFuse8::build_with(&keys, params).unwrap();
        let name = format!("BinaryFuse8 {:?}", params.arity);
        common::assert_fpr_close(&name, common::measured_fpr(&f, &absent), f.expected_fpr(), 0.15);
        // 2^-16 needs many probes: 2^25 give ~512 expected positives (sd 4.4%).
        let f = BinaryFuse16::build_with(&keys, params).unwrap();
        let n = 1u64 << 25;
        let fpr = common::false_positives(&f, &keys, 3, n) as f64 / n as f64;
        common::assert_fpr_close("BinaryFuse16", fpr, f.expected_fpr(), 0.15);
        // 2^-32 cannot be measured this way; 1M probes expect 0.0002 hits.
        let f = BinaryFuse32::build_with(&keys, params).unwrap();
        assert_eq!(f.expected_fpr(), 1.0 / 4_294_967_296.0);
        assert!(common::measured_fpr(&f, &absent) <= 1e-6);
    }
}

/// At 100,000 keys the paper's 3-wise size factor is 1.175 (its large-n
/// value, 1.125, is reached at a million keys), so the 9.1 bits/key target
/// holds for 4-wise here and for 3-wise from a million keys.
#[test]
fn space_at_100k_keys() {
    let keys = common::hashes(1, 100_000);
    let four = FuseParams::FOUR_WISE;
    let bpk8 = BinaryFuse8::build_with(&keys, &four).unwrap().bits_per_key();
    let bpk16 = BinaryFuse16::build_with(&keys, &four).unwrap().bits_per_key();
    let bpk32 = BinaryFuse32::build_with(&keys, &four).unwrap().bits_per_key();
    assert!(
        bpk8 <= 9.1 && bpk16 <= 18.2 && bpk32 <= 36.4,
        "4-wise: {bpk8} {bpk16} {bpk32}"
    );
    let three = BinaryFuse8::build(&keys).unwrap();
    assert!(three.bits_per_key() <= 9.6, "3-wise: {}", three.bits_per_key());
    // Both are smaller than an xor filter.
    assert!(three.bits_per_key() < Xor8::build(&keys).unwrap().bits_per_key());
}

#[test]
fn space_at_one_million_keys() {
    let keys = common::hashes(4, 1_000_000);
    let bpk8 = BinaryFuse8::build(&keys).unwrap().bits_per_key();
    let bpk16 = BinaryFuse16::build(&keys).unwrap().bits_per_key();
    let bpk32 = BinaryFuse32::build(&keys).unwrap().bits_per_key();
    assert!(
        bpk8 <= 9.1 && bpk16 <= 18.2 && bpk32 <= 36.4,
        "3-wise: {bpk8} {bpk16} {bpk32}"
    );
}

#[test]
fn format_round_trip() {
    for n in [0usize, 1, 1000] {
        let keys = common::hashes(5, n);
        let probe = common::hashes(6, 1000);
        for params in &ARITIES {
            common::assert_round_trip(&BinaryFuse8::build_with(&keys, params).unwrap(), &probe);
            common::assert_round_trip(&BinaryFuse16::build_with(&keys, params).unwrap(), &probe);
            common::assert_round_trip(&BinaryFuse32::build_with(&keys, params).unwrap(), &probe);
        }
    }
}

#[test]
fn corruption_is_detected_or_harmless() {
    let keys = common::hashes(7, 3);
    for params in &ARITIES {
        common::assert_corruption_safe(&BinaryFuse8::build_with(&keys, params).unwrap(), &keys);
        common::assert_corruption_safe(&BinaryFuse16::build_with(&keys, params).unwrap(), &keys);
    }
    common::assert_corruption_safe(&BinaryFuse32::build(&keys).unwrap(), &keys);
    common::assert_corruption_safe(&BinaryFuse8::build(&[]).unwrap(), &[]);
}

#[test]
fn golden_bytes() {
    let keys = common::well_mixed(&[1, 2, 3]);
    let f = BinaryFuse8::build(&keys).unwrap();
    common::assert_golden_frame("BinaryFuse8", &f.to_bytes(), FUSE8_GOLDEN);
    let f = BinaryFuse16::build(&keys).unwrap();
    common::assert_golden_frame("BinaryFuse16", &f.to_bytes(), FUSE16_GOLDEN);
    let f = BinaryFuse32::build(&keys).unwrap();
    common::assert_golden_frame("BinaryFuse32", &f.to_bytes(), FUSE32_GOLDEN);
    let f = BinaryFuse8::build_with(&keys, &FuseParams::FOUR_WISE).unwrap();
    common::assert_golden_frame("BinaryFuse8 4-wise", &f.to_bytes(), FUSE8_FOUR_GOLDEN);
}

const FUSE8_GOLDEN: &str = "414d514601000701190000001800000000000000efba76d7bf8ca3fa0308000000010000000300000000000000000000000000000000000000000000000057660000005c0084fa4d8d521eb504";
const FUSE16_GOLDEN: &str = "414d514601000801190000003000000000000000efba76d7bf8ca3fa03080000000100000003000000000000000000000000000000000000000000000000000000000000000000000000000000000057b966bc0000000000005c0c000085350e7daadf0527";
const FUSE32_GOLDEN: &str = "414d514601000901190000006000000000000000efba76d7bf8ca3fa0308000000010000000300000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000057b900f166bc0f820000000000000000000000005c0cf62b0000000014dcef547acba1c6";
const FUSE8_FOUR_GOLDEN: &str = "414d514601000701190000000e00000000000000efba76d7bf8ca3fa04010000000b0000000300000000000000000000000000006631000000005c789cb4c6239d4438";

#[test]
fn wrong_kind_and_garbage_are_errors() {
    let f = BinaryFuse8::build(&common::well_mixed(&[1, 2, 3])).unwrap();
    let bytes = f.to_bytes();
    assert_eq!(
        BinaryFuse16::from_bytes(&bytes).unwrap_err(),
        Error::Format(FormatError::WrongKind {
            expected: FilterKind::BinaryFuse16,
            found: FilterKind::BinaryFuse8
        })
    );
    assert!(matches!(
        AnyFilter::from_bytes(&bytes),
        Ok(AnyFilter::BinaryFuse8(_))
    ));
    assert!(BinaryFuse32::from_bytes(&[]).is_err());
    assert!(BinaryFuse32::from_bytes(&[0xFF; 200]).is_err());
    assert_eq!(f.arity(), FuseArity::Three);
}

/// A sharded frame built from `docs/format.md` alone: kind 7 (or 8, 9),
/// seed 0, arity 3, segment length 16, segment count 3, 40 keys, `shards`
/// shards with seeds 1, 2, …, each shard's `(3 + 2) · 16` fingerprints zero.
fn sharded_frame(kind: FilterKind, width: usize, shards: u32) -> Vec<u8> {
    let mut params = Vec::new();
    params.extend_from_slice(&0u64.to_le_bytes());
    params.push(3);
    params.extend_from_slice(&16u32.to_le_bytes());
    params.extend_from_slice(&3u32.to_le_bytes());
    params.extend_from_slice(&40u64.to_le_bytes());
    params.extend_from_slice(&shards.to_le_bytes());
    for s in 1..=u64::from(shards) {
        params.extend_from_slice(&s.to_le_bytes());
    }
    let payload = vec![0u8; shards as usize * 80 * width];
    let mut b = b"AMQF".to_vec();
    b.extend_from_slice(&2u16.to_le_bytes());
    b.extend_from_slice(&[kind.id(), 1]);
    b.extend_from_slice(&(params.len() as u32).to_le_bytes());
    b.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    b.extend_from_slice(&params);
    b.resize(b.len().next_multiple_of(64), 0);
    b.extend_from_slice(&payload);
    b.extend_from_slice(&[0; 8]);
    common::reseal(&mut b);
    b
}

/// A key's shard is the top `log2 S` bits of its hash, so a shard count
/// that is not a power of two would leave shards unused or address past
/// the last one: every decoder and view refuses it, and every count that
/// decodes answers every query.
#[test]
fn sharded_frames_need_a_power_of_two_of_shards() {
    use amq::xor::{BinaryFuse16View, BinaryFuse32View, BinaryFuse8View};
    use amq::FilterView;
    let probes = common::hashes(77, 2_000);
    for shards in 2..=17u32 {
        let ok = shards.is_power_of_two();
        for (kind, width) in [
            (FilterKind::BinaryFuse8, 1),
            (FilterKind::BinaryFuse16, 2),
            (FilterKind::BinaryFuse32, 4),
        ] {
            let b = sharded_frame(kind, width, shards);
            let decoded: Vec<Box<dyn Filter + '_>> = [
                AnyFilter::from_bytes(&b).map(|f| Box::new(f) as Box<dyn Filter>),
                FilterView::new(&b).map(|f| Box::new(f) as Box<dyn Filter>),
                FilterView::trusted(&b).map(|f| Box::new(f) as Box<dyn Filter>),
                match kind {
                    FilterKind::BinaryFuse8 => {
                        BinaryFuse8::from_bytes(&b).map(|f| Box::new(f) as Box<dyn Filter>)
                    }
                    FilterKind::BinaryFuse16 => {
                        BinaryFuse16::from_bytes(&b).map(|f| Box::new(f) as Box<dyn Filter>)
                    }
                    _ => BinaryFuse32::from_bytes(&b).map(|f| Box::new(f) as Box<dyn Filter>),
                },
                match kind {
                    FilterKind::BinaryFuse8 => {
                        BinaryFuse8View::new(&b).map(|f| Box::new(f) as Box<dyn Filter>)
                    }
                    FilterKind::BinaryFuse16 => {
                        BinaryFuse16View::new(&b).map(|f| Box::new(f) as Box<dyn Filter>)
                    }
                    _ => BinaryFuse32View::new(&b).map(|f| Box::new(f) as Box<dyn Filter>),
                },
            ]
            .into_iter()
            .inspect(|r| assert_eq!(r.is_ok(), ok, "{kind:?}, {shards} shards"))
            .filter_map(Result::ok)
            .collect();
            for f in decoded {
                let mut out = vec![false; probes.len()];
                f.contains_hashes(&probes, &mut out);
                for (&h, &o) in probes.iter().zip(&out) {
                    assert_eq!(f.contains_hash(h), o);
                }
            }
        }
    }
}
