//! Streamed builds: the filter built from a source read in passes, on one
//! or more threads, is the filter built from a slice (Ribbon) or by
//! inserting every key (blocked Bloom), byte for byte, for every layout,
//! key count, memory budget and thread count; a source that changes
//! between reads is an error.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};

use amq::ribbon::{LINE_SHARD_KEYS, SHARD_KEYS};
use amq::streamed::StreamedBuild;
use amq::xor::{FuseParams, FUSE_SHARD_KEYS};
use amq::{
    BinaryFuse8, BlockedBloom, Error, Filter, FilterSizing, FromBytes, Insert, KeyHash, Ribbon, RibbonParams,
};
use common::{assert_no_false_negatives, hashes};
use proptest::prelude::*;

/// Every Ribbon layout: fractional columns (1% and 0.1%), the two-line
/// layout, the blocked layout at r = 7, a bits-per-key target.
fn layouts() -> Vec<(&'static str, RibbonParams)> {
    vec![
        ("fpr 1%", RibbonParams::with_fpr(0.01).unwrap()),
        ("fpr 0.1%", RibbonParams::with_fpr(0.001).unwrap()),
        ("two-line", RibbonParams::with_result_bits(7).unwrap()),
        (
            "blocked r=7",
            RibbonParams::with_result_bits(7).unwrap().with_blocked_layout(),
        ),
        ("8.3 bits/key", RibbonParams::with_bits_per_key(8.3).unwrap()),
    ]
}

fn options(memory: usize, threads: usize) -> StreamedBuild {
    StreamedBuild::new()
        .with_memory(memory)
        .with_threads(threads)
        .unwrap()
}

/// Builds from `keys` as a stream and checks it is `build_with`'s filter.
fn assert_same(name: &str, keys: &[KeyHash], params: &RibbonParams, o: &StreamedBuild) -> Ribbon {
    let want = Ribbon::build_with(keys, params).unwrap();
    let got = Ribbon::build_streamed(|| keys.iter().copied(), params, o).unwrap();
    assert_eq!(
        got.to_bytes(),
        want.to_bytes(),
        "{name}: n = {}, memory {}, {} threads",
        keys.len(),
        o.memory(),
        o.threads()
    );
    got
}

#[test]
fn every_layout_budget_and_thread_count_gives_the_same_filter() {
    for n in [
        0,
        1,
        LINE_SHARD_KEYS - 1,
        3 * SHARD_KEYS + 17,
        20 * LINE_SHARD_KEYS,
    ] {
        let keys = hashes(n as u64, n);
        for (name, params) in layouts() {
            for (memory, threads) in [
                (0, 1),
                (8 * 5000, 2),
                (8 * 30_000, 3),
                (usize::MAX, 2),
                (8 * 9000, 1),
            ] {
                let f = assert_same(name, &keys, &params, &options(memory, threads));
                assert_no_false_negatives(&f, &keys);
            }
        }
    }
}

#[test]
fn duplicates_are_counted_once() {
    let mut keys = hashes(5, 30_000);
    keys.extend_from_within(..12_000);
    for (name, params) in layouts() {
        let f = Ribbon::build_streamed(|| keys.iter().copied(), &params, &options(8 * 7000, 2)).unwrap();
        assert_eq!(f.num_keys(), 30_000, "{name}");
        assert_no_false_negatives(&f, &keys);
        let want = Ribbon::build_with(&keys, &params).unwrap();
        assert_eq!(f.to_bytes(), want.to_bytes(), "{name}");
    }
}

/// With no slack, shards often need their room doubled: then a run solved
/// on another thread at the planned start is solved again where it
/// belongs (the blocked layout), or moved (the two-line one).
#[test]
fn shards_that_grow_do_not_change_the_filter() {
    let keys = hashes(9, 150 * SHARD_KEYS);
    for params in [
        RibbonParams::with_fpr(0.01).unwrap(),
        RibbonParams::with_result_bits(7).unwrap(),
    ] {
        let tight = params.with_slots_per_key(1.0).unwrap();
        for threads in [2, 5] {
            assert_same("tight", &keys, &tight, &options(8 * 60_000, threads));
        }
    }
}

#[test]
fn a_source_that_changes_is_an_error() {
    let keys = hashes(3, 50_000);
    for (name, params) in layouts() {
        // Each read yields one key fewer than the one before.
        let reads = AtomicUsize::new(0);
        let shrinking = || {
            let r = reads.fetch_add(1, Ordering::Relaxed);
            keys[r.min(keys.len())..].iter().copied()
        };
        let err = Ribbon::build_streamed(shrinking, &params, &options(8 * 10_000, 2)).unwrap_err();
        assert!(
            matches!(err, Error::InvalidParameter { name: "source", .. }),
            "{name}: {err:?}"
        );
    }
}

#[test]
fn zero_threads_is_an_error() {
    assert!(matches!(
        StreamedBuild::new().with_threads(0),
        Err(Error::InvalidParameter { name: "threads", .. })
    ));
}

#[test]
fn blocked_bloom_equals_inserting_every_key() {
    for n in [0usize, 1, 999, 50_000] {
        let mut keys = hashes(11, n);
        keys.extend_from_within(..n / 4);
        for sizing in [FilterSizing::Fpr(0.01), FilterSizing::BitsPerKey(7.5)] {
            let mut want = BlockedBloom::new(keys.len().max(1), sizing).unwrap();
            keys.iter().for_each(|&h| want.insert_hash(h).unwrap());
            for threads in [1, 2, 3, 7] {
                let o = options(0, threads);
                let f = BlockedBloom::build_streamed(|| keys.iter().copied(), sizing, &o).unwrap();
                assert_eq!(f.to_bytes(), want.to_bytes(), "n = {n}, {threads} threads");
                assert_eq!(f.num_keys(), want.num_keys());
                assert_no_false_negatives(&f, &keys);
            }
        }
    }
    assert!(
        BlockedBloom::build_streamed(|| hashes(1, 10), FilterSizing::Fpr(2.0), &StreamedBuild::new())
            .is_err()
    );
}

#[test]
fn binary_fuse_is_one_table_up_to_the_shard_size_and_shards_beyond() {
    let keys = hashes(2, 40_000);
    for params in [FuseParams::THREE_WISE, FuseParams::FOUR_WISE] {
        let f = BinaryFuse8::build_streamed(|| keys.iter().copied(), &params, &options(8 * 100, 2)).unwrap();
        assert_eq!(f, BinaryFuse8::build_with(&keys, &params).unwrap());
        assert_eq!(f.num_shards(), 1);
    }
    // Just past the shard size: two shards, built on two threads, from
    // keys never held in a vector.
    let n = FUSE_SHARD_KEYS as u64 + 1000;
    let source = || (0..n).map(|i| amq::hash_u64(2 * i));
    let f = BinaryFuse8::build_streamed(source, &FuseParams::THREE_WISE, &options(64 << 20, 2)).unwrap();
    assert_eq!((f.num_shards(), f.num_keys()), (2, n as usize));
    assert!(source().all(|h| f.contains_hash(h)));
    assert!(f.bits_per_key() < 9.1, "{}", f.bits_per_key());
    let fp = (0..400_000u64)
        .filter(|&i| f.contains_hash(amq::hash_u64(2 * i + 1)))
        .count();
    let fpr = fp as f64 / 400_000.0;
    assert!((fpr * 256.0 - 1.0).abs() < 0.1, "{fpr}");
    assert_eq!(BinaryFuse8::from_bytes(&f.to_bytes()).unwrap(), f);
}

proptest! {
    #![proptest_config(common::proptest_config(24))]

    /// Any key set from a small pool (so with duplicates), any budget and
    /// thread count: `build_with`'s filter.
    #[test]
    fn streamed_equals_in_memory(
        raw in prop::collection::vec(0u64..20_000, 0..12_000),
        memory_keys in 0usize..20_000,
        threads in 1usize..4,
        layout in 0usize..5,
    ) {
        let keys = common::well_mixed(&raw);
        let (name, params) = layouts().swap_remove(layout);
        assert_same(name, &keys, &params, &options(8 * memory_keys, threads));
    }
}
