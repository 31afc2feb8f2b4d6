//! The typed key hash (`KeyHash`, made by `hash_u64` / `hash_key`) on
//! structured keys: sequential integers, small values, multiples of 2^32.
//! Raw integers used as hashes put a blocked Bloom filter's keys in one
//! block and fill a cuckoo filter's buckets; hashed, they must give every
//! kind the false-positive rate its formula promises, and every static kind
//! must still find every key. And a `ParquetBloom`, driven by Parquet's
//! own value hash, is never reached with an amq hash: every way in
//! (`AnyFilter`, `FilterView`) refuses it.
//!
//! Fixed keys and a fixed proptest seed: never flaky.

mod common;

use std::collections::HashSet;

use amq::parquet::ParquetValue;
use amq::{
    hash_u64, AnyFilter, BinaryFuse16, BinaryFuse32, BinaryFuse8, Error, Filter, FilterKind, FilterSizing,
    FilterView, FuseParams, HashScheme, KeyHash, ParquetBloom, Ribbon, RibbonParams, Xor16, Xor8,
};
use proptest::collection::vec;
use proptest::prelude::*;

/// Keys `0..KEYS`: sequential integers, the most structured set there is.
const KEYS: u64 = 100_000;
/// Absent keys `ABSENT_FROM..ABSENT_FROM + PROBES`: as structured, and
/// disjoint from the keys.
const ABSENT_FROM: u64 = 1 << 40;
const PROBES: u64 = 1_000_000;
/// Relative tolerance of a measured FPR, unless three binomial standard
/// deviations are more.
const REL_TOLERANCE: f64 = 0.15;

/// The allowed distance between a measured FPR (over `PROBES` absent
/// keys) and `expected`: 15% of it, or three standard deviations of the
/// binomial count, whichever is looser. For the fixed-width kinds' tiny
/// FPRs (BinaryFuse32: 2^-32, a 0.0002 expected false positive) the three
/// sigma win, and the check is `measured ≤ expected + 3σ`: no false
/// positive at all among a million probes.
fn tolerance(expected: f64) -> f64 {
    let sigma = (expected * (1.0 - expected) / PROBES as f64).sqrt();
    (REL_TOLERANCE * expected).max(3.0 * sigma)
}

/// `None` if `measured` is within [`tolerance`] of `expected`, else why not.
fn fpr_mismatch(name: &str, false_positives: usize, expected: f64) -> Option<String> {
    let measured = false_positives as f64 / PROBES as f64;
    let allowed = tolerance(expected);
    println!(
        "{name:<32} expected {expected:.3e}, measured {measured:.3e} ({false_positives} of {PROBES}), allowed ±{allowed:.2e}"
    );
    ((measured - expected).abs() > allowed).then(|| {
        format!("{name}: measured FPR {measured:.3e} ({false_positives} false positives) vs expected {expected:.3e}, allowed ±{allowed:.2e}")
    })
}

/// Structured integer keys, hashed with `hash_u64`, give every kind built
/// through `AnyFilter::build` (every kind driven by key hashes: all but
/// ParquetBloom) its expected FPR, with either sizing, and no false
/// negative.
#[test]
fn structured_integer_keys_give_every_kind_its_expected_fpr() {
    let keys: Vec<KeyHash> = (0..KEYS).map(hash_u64).collect();
    let absent: Vec<KeyHash> = (ABSENT_FROM..ABSENT_FROM + PROBES).map(hash_u64).collect();
    let mut failures = Vec::new();
    let mut built = 0;
    for sizing in [FilterSizing::Fpr(0.01), FilterSizing::BitsPerKey(10.0)] {
        for &kind in FilterKind::ALL {
            if kind.hash_scheme() != HashScheme::Xxh3Seeded {
                // ParquetBloom, driven by Parquet's value hash: see the test
                // below; GrafiteRange, a range filter: tests/range_fpr.rs.
                continue;
            }
            let f = AnyFilter::build(kind, &keys, sizing)
                .unwrap_or_else(|e| panic!("{kind:?} {sizing:?}: build failed: {e}"));
            assert_eq!(f.kind(), kind);
            assert_eq!(f.num_keys(), keys.len(), "{kind:?} {sizing:?}");
            common::assert_no_false_negatives(&f, &keys);
            let mut out = vec![false; absent.len()];
            f.contains_hashes(&absent, &mut out);
            let false_positives = out.iter().filter(|&&o| o).count();
            let name = format!("{kind:?} {sizing:?}");
            failures.extend(fpr_mismatch(&name, false_positives, f.expected_fpr()));
            built += 1;
        }
    }
    assert_eq!(
        built,
        2 * FilterKind::ALL
            .iter()
            .filter(|k| k.hash_scheme() == HashScheme::Xxh3Seeded)
            .count(),
        "every key-hashed kind, both sizings"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The same for a `ParquetBloom`, through its own API: an INT64 column of
/// sequential values, hashed as Parquet hashes them.
#[test]
fn structured_int64_values_give_a_parquet_bloom_its_expected_fpr() {
    let values: Vec<i64> = (0..KEYS as i64).collect();
    let absent: Vec<i64> = (ABSENT_FROM as i64..(ABSENT_FROM + PROBES) as i64).collect();
    let mut failures = Vec::new();
    for sizing in [FilterSizing::Fpr(0.01), FilterSizing::BitsPerKey(10.0)] {
        let mut f = ParquetBloom::new(values.len(), sizing).unwrap();
        f.insert_values(&values).unwrap();
        assert_eq!(f.num_keys(), values.len());
        let mut found = vec![false; values.len()];
        f.contains_values(&values, &mut found);
        assert!(
            found.iter().all(|&o| o),
            "ParquetBloom {sizing:?}: false negative"
        );
        let mut out = vec![false; absent.len()];
        f.contains_values(&absent, &mut out);
        let false_positives = out.iter().filter(|&&o| o).count();
        let name = format!("ParquetBloom {sizing:?}");
        failures.extend(fpr_mismatch(&name, false_positives, f.expected_fpr()));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A `u64` key: arbitrary, small (so duplicates are common), or a multiple
/// of 2^32 (low half zero, as ids packed into the high half are).
fn key() -> impl Strategy<Value = u64> {
    prop_oneof![any::<u64>(), 0..1000u64, (0..1000u64).prop_map(|x| x << 32),]
}

proptest! {
    #![proptest_config(common::proptest_config(48))]

    /// Any set of integer keys (arbitrary and structured values, a run of
    /// consecutive integers, repeats), hashed with `hash_u64`, builds every
    /// static kind, and each finds every key: no false negative, the key
    /// count is the number of distinct keys, and the batch query agrees.
    #[test]
    fn every_static_kind_finds_every_hashed_integer_key(
        mut keys in vec(key(), 0..1500),
        run_start in any::<u64>(),
        run_len in 0..1000u64,
        repeat in 0..200usize,
    ) {
        keys.extend(run_start..run_start.saturating_add(run_len));
        let repeated: Vec<u64> = keys.iter().copied().take(repeat).collect();
        keys.extend(repeated);
        let hashes: Vec<KeyHash> = keys.iter().copied().map(hash_u64).collect();
        let distinct: HashSet<u64> = keys.iter().copied().collect();
        // Present keys and others with the top bit flipped.
        let probes: Vec<KeyHash> = keys
            .iter()
            .take(300)
            .flat_map(|&k| [hash_u64(k), hash_u64(k ^ (1 << 63))])
            .collect();
        let three = FuseParams::THREE_WISE;
        let packed = amq::xor::PackedFuseParams::with_bits(11);
        let checks: [(&str, usize); 8] = [
            ("Xor8", common::check_static_model::<Xor8>(&hashes, &probes, &()).num_keys()),
            ("Xor16", common::check_static_model::<Xor16>(&hashes, &probes, &()).num_keys()),
            ("BinaryFuse8", common::check_static_model::<BinaryFuse8>(&hashes, &probes, &three).num_keys()),
            ("BinaryFuse16", common::check_static_model::<BinaryFuse16>(&hashes, &probes, &three).num_keys()),
            ("BinaryFuse32", common::check_static_model::<BinaryFuse32>(&hashes, &probes, &three).num_keys()),
            (
                "PackedBinaryFuse 11 bits",
                common::check_static_model::<amq::PackedBinaryFuse>(&hashes, &probes, &packed).num_keys(),
            ),
            (
                "Ribbon 1%",
                common::check_static_model::<Ribbon>(&hashes, &probes, &RibbonParams::with_fpr(0.01).unwrap())
                    .num_keys(),
            ),
            (
                "Ribbon r=7",
                common::check_static_model::<Ribbon>(&hashes, &probes, &RibbonParams::with_result_bits(7).unwrap())
                    .num_keys(),
            ),
        ];
        for (name, n) in checks {
            prop_assert_eq!(n, distinct.len(), "{}", name);
        }
        // The kinds' own one-call builds, as a caller writes them.
        for f in [
            Box::new(Xor8::build(&hashes).unwrap()) as Box<dyn Filter>,
            Box::new(BinaryFuse8::build(&hashes).unwrap()),
            Box::new(Ribbon::build(&hashes, FilterSizing::Fpr(0.01)).unwrap()),
        ] {
            prop_assert!(hashes.iter().all(|&h| f.contains_hash(h)), "{:?}: false negative", f.kind());
        }
    }
}

/// A `ParquetBloom` holds Parquet hashes, which are not amq's: the same
/// value hashes to other bits. So nothing may probe it with a `KeyHash`
/// (every such answer could be a false negative); the type system keeps
/// `KeyHash` out of its API, and every run-time way in refuses its frame.
#[test]
fn a_parquet_bloom_is_never_probed_with_an_amq_hash() {
    // Why it matters: amq's hash of a value is not Parquet's.
    for v in [0u64, 1, 42, 1 << 40, u64::MAX] {
        assert_ne!(hash_u64(v).get(), v.parquet_hash().get(), "{v}");
    }
    let mut parquet = ParquetBloom::new(1_000, FilterSizing::Fpr(0.01)).unwrap();
    parquet.insert_values(&(0..1_000i64).collect::<Vec<_>>()).unwrap();
    let bytes = parquet.to_bytes();
    assert_eq!(ParquetBloom::from_bytes(&bytes).unwrap(), parquet);

    // AnyFilter holds filters of amq key hashes only.
    assert_eq!(
        AnyFilter::from_bytes(&bytes),
        Err(Error::WrongHashScheme {
            expected: HashScheme::Xxh3Seeded,
            found: HashScheme::ParquetXxh64,
        })
    );
    // Nor is there a view to probe with a key hash.
    assert!(FilterView::new(&bytes).is_err());
    assert!(FilterView::trusted(&bytes).is_err());
    assert!(!FilterView::supports(FilterKind::ParquetBloom));
    // Nor is one built (or made empty) from key hashes.
    let keys: Vec<KeyHash> = (0..1_000u64).map(hash_u64).collect();
    for sizing in [FilterSizing::Fpr(0.01), FilterSizing::BitsPerKey(10.0)] {
        for hashes in [&keys[..], &[]] {
            assert!(
                matches!(
                    AnyFilter::build(FilterKind::ParquetBloom, hashes, sizing),
                    Err(Error::WrongHashScheme {
                        expected: HashScheme::ParquetXxh64,
                        found: HashScheme::Xxh3Seeded,
                    })
                ),
                "{sizing:?}, {} hashes",
                hashes.len()
            );
        }
        assert!(matches!(
            AnyFilter::new(FilterKind::ParquetBloom, 1_000, sizing),
            Err(Error::WrongHashScheme { .. })
        ));
    }
    // A frame forged to claim amq's key hashes (checksum re-sealed) is
    // refused too, by both decoders.
    let mut forged = bytes.clone();
    forged[7] = HashScheme::Xxh3Seeded.id();
    common::reseal(&mut forged);
    let want = Error::WrongHashScheme {
        expected: HashScheme::ParquetXxh64,
        found: HashScheme::Xxh3Seeded,
    };
    assert_eq!(AnyFilter::from_bytes(&forged), Err(want.clone()));
    assert_eq!(ParquetBloom::from_bytes(&forged), Err(want));
    assert!(FilterView::new(&forged).is_err());
}
