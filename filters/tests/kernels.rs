//! `AMQ_KERNEL` caps the query kernels every filter picks, so
//! `AMQ_KERNEL=portable cargo test` (or `avx2`) runs the whole suite on those
//! kernels, as `.ci/run` does.

use std::process::Command;

use amq::hash::ParquetHash;
use amq::{
    hash_u64, AnyFilter, AtomicBlockedBloom, BlockedBloom, CountingBloom, CuckooFilter, Filter, FilterKind,
    FilterSizing, FromBytes, Insert, KeyHash, ParquetBloom, Ribbon, RibbonParams, StandardBloom,
};

/// Set in a child: check the kernels against its `AMQ_KERNEL`.
const CHILD: &str = "AMQ_KERNELS_CHILD";

/// Checks the kernels the filters picked against this process's
/// `AMQ_KERNEL`, and that they answer like the filters always do.
fn check_kernels() {
    let keys: Vec<KeyHash> = (0..3000u64)
        .map(|i| KeyHash::from_well_mixed(amq::hash::remix(i, 4)))
        .collect();
    let mut b = BlockedBloom::new(keys.len(), FilterSizing::BitsPerKey(10.0)).unwrap();
    keys.iter().for_each(|&h| b.insert_hash(h).unwrap());
    let r = Ribbon::build_with(&keys, &RibbonParams::with_result_bits(7).unwrap()).unwrap();
    let decoded = <BlockedBloom as FromBytes>::from_bytes(&b.to_bytes()).unwrap();
    let parquet: Vec<ParquetHash> = keys.iter().map(|h| ParquetHash::from_xxh64(h.get())).collect();
    let mut p = ParquetBloom::new(parquet.len(), FilterSizing::BitsPerKey(10.0)).unwrap();
    p.insert_hashes(&parquet).unwrap();
    let p_decoded = ParquetBloom::from_parquet_bytes(&p.to_parquet_bytes()).unwrap();
    match std::env::var("AMQ_KERNEL").as_deref() {
        Ok("portable") => {
            assert_eq!(b.query_kernel(), "portable");
            assert_eq!(decoded.query_kernel(), "portable");
            assert_eq!(r.query_kernel(), "portable");
            assert_eq!(p.query_kernel(), "portable");
            assert_eq!(p_decoded.query_kernel(), "portable");
        }
        Ok("avx2") => {
            assert_ne!(b.query_kernel(), "avx512");
            assert_ne!(r.query_kernel(), "avx512");
            if simd_built() && std::is_x86_feature_detected!("avx2") {
                for k in [b.query_kernel(), r.query_kernel(), p.query_kernel()] {
                    assert_eq!(k, "avx2");
                }
            }
        }
        _ => {
            // No cap: a CPU with AVX2 gets a SIMD kernel in every family.
            if simd_built() && std::is_x86_feature_detected!("avx2") {
                for k in [b.query_kernel(), r.query_kernel(), p.query_kernel()] {
                    assert_ne!(k, "portable");
                }
            }
        }
    }
    for f in [&b as &dyn Filter, &r] {
        assert!(keys.iter().all(|&h| f.contains_hash(h)));
        let mut out = vec![false; keys.len()];
        f.contains_hashes(&keys, &mut out);
        assert!(out.iter().all(|&o| o));
    }
    // ParquetBloom is not a `Filter`: the same checks through its own API.
    for f in [&p, &p_decoded] {
        assert!(parquet.iter().all(|&h| f.contains_hash(h)));
        let mut out = vec![false; parquet.len()];
        f.contains_hashes(&parquet, &mut out);
        assert!(out.iter().all(|&o| o));
    }
    let a = AtomicBlockedBloom::from(b);
    assert!(keys.iter().all(|&h| a.contains_hash(h)));
}

/// Whether this build has the x86-64 kernels (`--cfg amq_portable` leaves
/// them out, as on other targets).
fn simd_built() -> bool {
    !cfg!(amq_portable)
}

#[test]
fn amq_kernel_caps_the_kernel_of_every_filter() {
    check_kernels();
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let exe = std::env::current_exe().expect("test binary path");
    for cap in ["portable", "avx2"] {
        let out = Command::new(&exe)
            .args([
                "--exact",
                "amq_kernel_caps_the_kernel_of_every_filter",
                "--test-threads=1",
            ])
            .env(CHILD, "1")
            .env("AMQ_KERNEL", cap)
            .output()
            .expect("run the test binary");
        assert!(
            out.status.success() && String::from_utf8_lossy(&out.stdout).contains("1 passed"),
            "AMQ_KERNEL={cap}:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Code generic over [`Insert`] fills every kind that takes inserts, and
/// each then holds every key and still answers "no" for most absent ones.
#[test]
fn insert_is_generic_over_every_dynamic_filter() {
    fn fill_and_check(mut f: impl Insert, keys: &[KeyHash]) -> FilterKind {
        for &h in &keys[..keys.len() / 2] {
            f.insert_hash(h).unwrap();
        }
        f.insert_hashes(&keys[keys.len() / 2..]).unwrap();
        assert_eq!(f.num_keys(), keys.len(), "{:?}", f.kind());
        assert!(keys.iter().all(|&h| f.contains_hash(h)), "{:?}", f.kind());
        let absent = (1u64 << 40..(1 << 40) + 10_000)
            .filter(|&i| f.contains_hash(hash_u64(i)))
            .count();
        assert!(
            absent < 1_000,
            "{:?}: {absent} of 10,000 absent keys found",
            f.kind()
        );
        f.kind()
    }
    let keys: Vec<KeyHash> = (0..1_000u64).map(hash_u64).collect();
    let n = keys.len();
    let sizing = FilterSizing::Fpr(0.01);
    let kinds = [
        fill_and_check(StandardBloom::new(n, sizing).unwrap(), &keys),
        fill_and_check(BlockedBloom::new(n, sizing).unwrap(), &keys),
        fill_and_check(AtomicBlockedBloom::new(n, sizing).unwrap(), &keys),
        fill_and_check(amq::SplitBlockBloom::new(n, sizing).unwrap(), &keys),
        fill_and_check(CountingBloom::new(n, sizing).unwrap(), &keys),
        fill_and_check(CuckooFilter::new(n, sizing).unwrap(), &keys),
        fill_and_check(amq::quotient::QuotientFilter::new(n, sizing).unwrap(), &keys),
        fill_and_check(
            amq::quotient::ExpandingQuotientFilter::new(amq::quotient::ExpandingOptions::new(0.01)).unwrap(),
            &keys,
        ),
        fill_and_check(
            AnyFilter::new(FilterKind::BlockedBloom, n, sizing).unwrap(),
            &keys,
        ),
    ];
    // Every kind that takes inserts was filled.
    for kind in FilterKind::ALL {
        let takes_inserts = AnyFilter::new(*kind, n, sizing).is_ok();
        assert_eq!(kinds.contains(kind), takes_inserts, "{kind:?}");
    }
}
