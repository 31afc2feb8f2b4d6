//! `AMQ_KERNEL` caps the query kernels every filter picks, so
//! `AMQ_KERNEL=portable cargo test` (or `avx2`) runs the whole suite on those
//! kernels, as `.ci/run` does.

use std::process::Command;

use amq::hash::ParquetHash;
use amq::{
    hash_u64, AtomicBlockedBloom, BlockedBloom, Filter, FilterSizing, FromBytes, Insert, KeyHash,
    ParquetBloom, Ribbon, RibbonParams,
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
        }
        _ => {}
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

#[test]
fn insert_is_generic_over_every_dynamic_filter() {
    fn fill(f: &mut impl Insert, keys: &[KeyHash]) {
        keys.iter().for_each(|&h| f.insert_hash(h).unwrap());
    }
    let keys: Vec<KeyHash> = (0..100u64).map(hash_u64).collect();
    let mut a = AtomicBlockedBloom::new(100, FilterSizing::BitsPerKey(10.0)).unwrap();
    fill(&mut a, &keys);
    assert_eq!(a.num_keys(), 100);
}
