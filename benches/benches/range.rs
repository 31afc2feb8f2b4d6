//! The range filter: amq's `GrafiteRange` at 16 bits per key over 1M random
//! `u64` keys (10M with `AMQ_BENCH_LARGE=1`).
//!
//! * `range/empty/{len}`: batches of 1,000 empty ranges of 1, 16, 256 and
//!   4,096 keys, at random places (time per batch; throughput in queries).
//! * `range/point`: `may_contain` of absent keys, beside `BlockedBloom` and
//!   `Ribbon` built at the same 16 bits per key, each asked through
//!   `hash_u64` of the same `u64` (what a caller with integer keys does; the
//!   range filter hashes inside its query).
//! * `range/build`: building from the keys in random order.
//!
//! `cargo bench -p amq-bench --bench range`

use std::hint::black_box;

use amq::range::{GrafiteRange, RangeFilter, RangeSizing};
use amq::{hash_u64, BlockedBloom, Filter, FilterSizing, Insert, KeyHash, Ribbon};
use amq_bench::groups;
use amq_bench::keys::{bench_sizes, KeySet, BATCH, POOL};
use amq_bench::range::SortedKeys;
use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkGroup, Criterion, Throughput};

const BITS_PER_KEY: f64 = 16.0;

/// `POOL` empty ranges of `len` keys, at random places.
fn empty_ranges(sorted: &SortedKeys, absent: &[u64], len: u64) -> Vec<(u64, u64)> {
    absent
        .iter()
        .map(|&lo| (lo, lo.saturating_add(len - 1)))
        .filter(|&(lo, hi)| !sorted.any_in(lo, hi))
        .take(POOL / BATCH * BATCH)
        .collect()
}

/// Batches of `BATCH` point queries of `keys`, walking the pool.
fn point(group: &mut BenchmarkGroup<'_, WallTime>, name: &str, keys: &[u64], query: impl Fn(u64) -> bool) {
    let mut at = 0;
    group.bench_function(name, |b| {
        b.iter(|| {
            let batch = &keys[at..at + BATCH];
            at = (at + BATCH) % keys.len();
            batch.iter().filter(|&&k| query(black_box(k))).count()
        })
    });
}

fn range(c: &mut Criterion) {
    for n in bench_sizes() {
        let keys = KeySet::new(n, 2 * POOL);
        let sorted = SortedKeys::new(&keys.present);
        let f = GrafiteRange::build(&keys.present, RangeSizing::BitsPerKey(BITS_PER_KEY)).unwrap();

        let mut group = c.benchmark_group(format!("range/empty/n={n}"));
        group.throughput(Throughput::Elements(BATCH as u64));
        for len in [1u64, 16, 256, 4096] {
            let ranges = empty_ranges(&sorted, &keys.absent, len);
            let mut at = 0;
            group.bench_function(format!("GrafiteRange/{len}"), |b| {
                b.iter(|| {
                    let batch = &ranges[at..at + BATCH];
                    at = (at + BATCH) % ranges.len();
                    batch
                        .iter()
                        .filter(|&&(lo, hi)| f.may_contain_range(lo, hi))
                        .count()
                })
            });
        }
        group.finish();

        let mut group = c.benchmark_group(format!("range/point/n={n}"));
        group.throughput(Throughput::Elements(BATCH as u64));
        let absent = &keys.absent[..POOL];
        let hashes: Vec<KeyHash> = keys.present.iter().map(|&k| hash_u64(k)).collect();
        let mut bloom = BlockedBloom::new(n, FilterSizing::BitsPerKey(BITS_PER_KEY)).unwrap();
        bloom.insert_hashes(&hashes).unwrap();
        let ribbon = Ribbon::build(&hashes, FilterSizing::BitsPerKey(BITS_PER_KEY)).unwrap();
        eprintln!(
            "n = {n}: bits/key GrafiteRange {:.2}, BlockedBloom {:.2}, Ribbon {:.2}",
            f.bits_per_key(),
            bloom.bits_per_key(),
            ribbon.bits_per_key()
        );
        point(&mut group, "GrafiteRange", absent, |k| f.may_contain(k));
        point(&mut group, "BlockedBloom", absent, |k| {
            bloom.contains_hash(hash_u64(k))
        });
        point(&mut group, "Ribbon", absent, |k| {
            ribbon.contains_hash(hash_u64(k))
        });
        group.finish();

        let mut group = c.benchmark_group(format!("range/build/n={n}"));
        group.sample_size(10).throughput(Throughput::Elements(n as u64));
        group.bench_function("GrafiteRange", |b| {
            b.iter_batched(
                || (),
                |()| GrafiteRange::build(&keys.present, RangeSizing::BitsPerKey(BITS_PER_KEY)).unwrap(),
                BatchSize::PerIteration,
            )
        });
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = groups::config();
    targets = range
}
criterion_main!(benches);
